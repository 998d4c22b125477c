"""The shared library: what it links, and how Python finds and loads it."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ct3d

ROOT = Path(__file__).resolve().parents[1]


def needed_libraries(path):
    tool = shutil.which("readelf")
    if tool is None:
        pytest.skip("readelf (binutils) is not installed")
    out = subprocess.run([tool, "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def test_links_libtorch_but_not_python_bindings():
    needed = needed_libraries(ct3d.library_path)
    assert any(name.startswith("libtorch") for name in needed), needed
    assert any(name.startswith("libc10") for name in needed), needed
    assert not any("torch_python" in name or "pybind" in name or "libpython" in name for name in needed), needed


def test_plain_python_process_loads_it_with_torch_ops():
    code = ("import sys, torch; torch.ops.load_library(sys.argv[1]); "
            "x = torch.randn(1, 2, 3, 3, 3, dtype=torch.float64); w = torch.randn(2, 2, 2, 2, 2, dtype=torch.float64); "
            "y = torch.ops.ct3d.conv_transpose3d(x, w); "
            "assert torch.allclose(y, torch.nn.functional.conv_transpose3d(x, w)); print('ok')")
    result = subprocess.run([sys.executable, "-c", code, str(ct3d.library_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def run_import(env_library):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    env.pop("CT3D_LIBRARY", None)
    if env_library is not None:
        env["CT3D_LIBRARY"] = env_library
    return subprocess.run([sys.executable, "-c", "import ct3d; print(ct3d.library_path)"],
                          capture_output=True, text=True, env=env, timeout=300)


def test_import_reports_the_library_path():
    result = run_import(str(ct3d.library_path))
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()) == Path(ct3d.library_path)


def test_environment_variable_pointing_nowhere_is_a_clear_error():
    result = run_import("/nonexistent/libct3d.so")
    assert result.returncode != 0
    assert "CT3D_LIBRARY points to /nonexistent/libct3d.so" in result.stderr
