"""ct3d: a float32-accurate 3-D transposed convolution for PyTorch.

Importing ct3d loads the op library, which registers ``torch.ops.ct3d.conv_transpose3d``.
The library is found at ``$CT3D_LIBRARY`` when that is set (a build made elsewhere,
e.g. on a GPU machine), else in the repository's ``build/`` folder.
"""

import os
from pathlib import Path

import torch

_REPO_ROOT = Path(__file__).resolve().parents[2]


def _find_library() -> Path:
    override = os.environ.get("CT3D_LIBRARY")
    if override:
        path = Path(override)
        if not path.is_file():
            raise ImportError(f"CT3D_LIBRARY points to {path}, which is not a file")
        return path
    path = _REPO_ROOT / "build" / "libct3d.so"
    if not path.is_file():
        raise ImportError(
            f"ct3d's op library was not found at {path}: build it first "
            "(see README.md) or set CT3D_LIBRARY to a built libct3d.so"
        )
    return path


library_path: Path = _find_library()
torch.ops.load_library(str(library_path))

from ct3d import nn  # noqa: E402
from ct3d.functional import conv_transpose3d  # noqa: E402
from ct3d.model import Model, conv_transpose3d_module  # noqa: E402
from ct3d.nn import convert  # noqa: E402

__all__ = ["Model", "conv_transpose3d", "conv_transpose3d_module", "convert", "library_path", "nn"]
