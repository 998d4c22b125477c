#!/usr/bin/env bash
# Builds libct3d.so here (no GPU needed) against the GPU machine's torch, so that a
# device call can skip its 65-100 s build: carry .device/prebuilt and run with
# CT3D_PREBUILT=1 (scripts/device_build.sh then uses this library instead of building).
# The device's torch is named by DEVICE_TORCH (default 2.11.0, a CUDA 13.0 wheel on
# PyPI, as the device has); its wheel is unpacked once into ~/.cache/ct3d (outside
# .device, which travels to the device: 64 MiB at most).
# Only the library is built (sm_90a unless TORCH_CUDA_ARCH_LIST says otherwise), not
# the Catch2 tests. Usage (repo root): bash scripts/build_for_device.sh
set -euo pipefail
cd "$(dirname "$0")/.."
version=${DEVICE_TORCH:-2.11.0}
wheels=${CT3D_TORCH_CACHE:-$HOME/.cache/ct3d}/torch-$version
if [ ! -d "$wheels/torch/share/cmake" ]; then
  mkdir -p "$wheels"
  python3 -m pip download --quiet --no-deps "torch==$version" -d "$wheels"
  # Headers, libraries and CMake files only: the C++ build needs nothing else.
  (cd "$wheels" && python3 -m zipfile -e torch-"$version"-*.whl . && rm -f torch-"$version"-*.whl)
fi
# The wheel's libraries find CUDA's through ../../nvidia (their RUNPATH); the linker
# needs them too: borrow the local torch's (the same CUDA major version).
local_nvidia=$(python3 -c "import os, torch; print(os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), 'nvidia'))")
ln -sfn "$local_nvidia" "$wheels/nvidia"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0a}
cmake -S . -B build-for-device -G Ninja -DCT3D_BUILD_TESTS=OFF \
  -DCMAKE_PREFIX_PATH="$wheels/torch/share/cmake"
cmake --build build-for-device
mkdir -p .device/prebuilt
cp build-for-device/libct3d.so .device/prebuilt/
echo "built against torch $version: .device/prebuilt/libct3d.so (carry .device, set CT3D_PREBUILT=1)"
