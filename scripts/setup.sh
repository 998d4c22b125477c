#!/usr/bin/env bash
# Installs what ct3d needs on a fresh Debian 12 or 13 machine and builds it.
# Idempotent: a second run installs nothing new and rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  # Catch2 is 2.13 on Debian 12 and 3.x on Debian 13; the tests build with either.
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake ninja-build catch2 binutils >/dev/null
fi

# A CUDA 13 build of PyTorch (taken from local disk where this image has it).
# pip is capped at 2.14.1 on these machines; keep the cap.
if ! python3 -c "import torch" >/dev/null 2>&1; then
  python3 -m pip install -q "torch==2.14.1" || python3 -m pip install -q "torch>=2.4,<=2.14.1"
fi
# MONAI and einops: test and benchmark dependencies only (the real networks' layers,
# python_tests/test_network_layers.py, bench/networks.py); the package needs torch alone.
python3 -m pip install -q pytest numpy hypothesis "scikit-build-core>=0.11,<0.12" \
  "monai>=1.4,<1.7" einops

# The CUDA code is built for every architecture in CMakeLists.txt's
# CT3D_CUDA_ARCH_LIST (sm_80 to sm_120 and PTX), so a compile error on any of them
# fails CI; set TORCH_CUDA_ARCH_LIST to build fewer.
# pip builds the CMake project in build/ (pyproject.toml: scikit-build-core) and
# installs the package ct3d with libct3d.so inside it; the Catch2 tests are built in
# the same tree. --no-build-isolation: build against the torch installed above.
export CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)"
python3 -m pip install -q --no-build-isolation -Ccmake.define.CT3D_BUILD_TESTS=ON .
