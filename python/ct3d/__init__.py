"""ct3d: a float32-accurate 3-D transposed convolution for PyTorch.

Importing ct3d loads the op library, which registers ``torch.ops.ct3d.conv_transpose3d``.
The library is ``$CT3D_LIBRARY`` when that is set (a build made elsewhere, e.g. on
a GPU machine), else the one installed inside this package (``pip install``), else
the one in a source checkout's ``build/`` folder.
"""

import os
from pathlib import Path

import torch

_PACKAGE_DIR = Path(__file__).resolve().parent
_LIBRARY_NAME = "libct3d.so"


def _find_library() -> Path:
    override = os.environ.get("CT3D_LIBRARY")
    if override:
        path = Path(override)
        if not path.is_file():
            raise ImportError(f"CT3D_LIBRARY points to {path}, which is not a file")
        return path
    candidates = [_PACKAGE_DIR / _LIBRARY_NAME, _PACKAGE_DIR.parents[1] / "build" / _LIBRARY_NAME]
    for path in candidates:
        if path.is_file():
            return path
    raise ImportError(
        "ct3d's op library was not found (looked at "
        + ", ".join(str(p) for p in candidates)
        + "): install ct3d with `pip install --no-build-isolation .`, build it (README.md), "
        "or set CT3D_LIBRARY to a built libct3d.so"
    )


def _check_torch_version():
    """An installed ct3d knows the torch it was built against; another one would
    load a library with a different C++ ABI."""
    try:
        from ct3d._build_info import TORCH_VERSION
    except ImportError:  # a source checkout: built by hand, nothing recorded
        return
    if os.environ.get("CT3D_LIBRARY"):
        return
    if torch.__version__ != TORCH_VERSION:
        raise ImportError(
            f"ct3d was built against torch {TORCH_VERSION}, but torch {torch.__version__} is "
            "imported: reinstall ct3d against this torch "
            "(pip install --no-build-isolation --force-reinstall <ct3d source>)"
        )


def _warn_without_cuda_kernels():
    """A library built without its CUDA kernels (no CUDA toolkit at build time) in a
    process that has a GPU: say so once, at import, not at the first CUDA call."""
    try:
        from ct3d._build_info import CUDA_KERNELS
    except ImportError:  # a source checkout, or a build from before the flag
        return
    if not CUDA_KERNELS and not os.environ.get("CT3D_LIBRARY") and torch.cuda.is_available():
        import warnings

        warnings.warn(
            "ct3d was built without its CUDA kernels (its build found no CUDA toolkit or a CPU "
            "build of torch): it runs on CPU tensors only. Reinstall it where nvcc is on PATH "
            "(pip install --no-build-isolation --force-reinstall <ct3d source>).",
            RuntimeWarning, stacklevel=2)


_check_torch_version()
_warn_without_cuda_kernels()
library_path: Path = _find_library()
torch.ops.load_library(str(library_path))

from ct3d import nn  # noqa: E402
from ct3d.functional import conv_transpose3d, explain  # noqa: E402
from ct3d.model import Model, conv_transpose3d_module  # noqa: E402
from ct3d.nn import convert  # noqa: E402
from ct3d.options import options, set_option  # noqa: E402

__all__ = ["Model", "conv_transpose3d", "conv_transpose3d_module", "convert", "explain",
           "library_path", "nn", "options", "set_option"]
