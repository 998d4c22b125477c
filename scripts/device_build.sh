# Sourced by the device scripts: builds the library and tests against the device's
# torch into build-device/ (log in $LOGS/build.log) and exports CT3D_LIBRARY.
# Sets OUT (default ./device_out), LOGS (default $OUT) and BUILD; exits on a failed build.
OUT=${OUT:-$PWD/device_out}
LOGS=${LOGS:-$OUT}
mkdir -p "$OUT" "$LOGS"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0a} PYTHONUNBUFFERED=1
BUILD=build-device
catch_flag=()
[ -f .device/catch2/catch.hpp ] && catch_flag=(-DCT3D_CATCH2_SINGLE_HEADER_DIR="$PWD/.device")
build_start=$(date +%s)
{ cmake -S . -B $BUILD -G Ninja "${catch_flag[@]}" ${CT3D_CMAKE_ARGS:-} && cmake --build $BUILD -j16; } >"$LOGS/build.log" 2>&1 \
  || { tail -40 "$LOGS/build.log"; exit 1; }
echo "build: $(( $(date +%s) - build_start )) s"
export CT3D_LIBRARY=$PWD/$BUILD/libct3d.so
# No pip install on the device (no network for the build backend): the source
# tree's package, loading the library named by CT3D_LIBRARY.
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
