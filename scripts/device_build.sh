# Sourced by the device scripts: builds the library and tests against the device's
# torch into build-device/ (log in $LOGS/build.log) and exports CT3D_LIBRARY; with
# CT3D_PREBUILT=1 it takes .device/prebuilt/libct3d.so instead (built here by
# scripts/build_for_device.sh; not yet tried on the device).
# Sets OUT (default ./device_out), LOGS (default $OUT) and BUILD; exits on a failed build.
OUT=${OUT:-$PWD/device_out}
LOGS=${LOGS:-$OUT}
mkdir -p "$OUT" "$LOGS"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0a} PYTHONUNBUFFERED=1
BUILD=build-device
catch_flag=()
[ -f .device/catch2/catch.hpp ] &&
  catch_flag=(-DCT3D_BUILD_TESTS=ON -DCT3D_CATCH2_SINGLE_HEADER_DIR="$PWD/.device")
if [ "${CT3D_PREBUILT:-0}" = 1 ]; then
  # Built here beforehand against this machine's torch (scripts/build_for_device.sh):
  # no build, no Catch2.
  [ -f .device/prebuilt/libct3d.so ] || { echo "CT3D_PREBUILT=1 but no .device/prebuilt/libct3d.so"; exit 1; }
  export CT3D_LIBRARY=$PWD/.device/prebuilt/libct3d.so
  # Its RUNPATH names the build machine's CUDA libraries (libnvrtc, libcudart): point
  # the loader at this machine's, those of its torch's wheels.
  wheel_libs=$(python3 -c "import glob, os, torch; print(':'.join(glob.glob(os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), 'nvidia', '*', 'lib'))))")
  export LD_LIBRARY_PATH=$wheel_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "build: none (prebuilt library)"
else
  build_start=$(date +%s)
  { cmake -S . -B $BUILD -G Ninja "${catch_flag[@]}" ${CT3D_CMAKE_ARGS:-} && cmake --build $BUILD -j16; } >"$LOGS/build.log" 2>&1 \
    || { tail -40 "$LOGS/build.log"; exit 1; }
  echo "build: $(( $(date +%s) - build_start )) s"
  export CT3D_LIBRARY=$PWD/$BUILD/libct3d.so
fi
# No pip install on the device (no network for the build backend): the source
# tree's package, loading the library named by CT3D_LIBRARY.
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
