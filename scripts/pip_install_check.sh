#!/usr/bin/env bash
# Installs ct3d as a user would, into fresh virtual environments that hold only
# torch (no Catch2 or other test framework needed): `pip install .` (build
# isolation: pip fetches the build requirements) and `pip install
# --no-build-isolation .`, then imports the package and runs the op on the CPU.
# Usage (repo root): bash scripts/pip_install_check.sh [work_dir]
# TORCH_CUDA_ARCH_LIST narrows the CUDA build (e.g. 9.0a); CMAKE_ARGS passes more.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
source_dir=$PWD
smoke='import torch, ct3d
x, w = torch.randn(2, 4, 3, 3, 3), torch.randn(4, 2, 3, 3, 3)
y = ct3d.conv_transpose3d(x, w, stride=2)
ref = torch.nn.functional.conv_transpose3d(x.double(), w.double(), stride=2)
print("ct3d", ct3d.library_path, "relative error", ((y.double() - ref).norm() / ref.norm()).item())'
for mode in isolated no-build-isolation; do
  venv=$work/venv-$mode
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q "torch==2.14.1"
  flags=()
  [ "$mode" = no-build-isolation ] && {
    "$venv/bin/python" -m pip install -q "scikit-build-core>=0.11,<0.12"
    flags=(--no-build-isolation)
  }
  echo "== pip install ${flags[*]} . ($mode)"
  (cd "$work" && "$venv/bin/python" -m pip install "${flags[@]}" "$source_dir") 2>&1 |
    tee "$work/$mode.log" | grep -v "^WARNING: Location" | tail -n 3
  (cd "$work" && "$venv/bin/python" -c "$smoke")
done
