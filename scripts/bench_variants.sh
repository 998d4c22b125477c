#!/usr/bin/env bash
# A/B benchmark of kernel variants in one GPU session: builds the library as it is
# and once per variant (extra CUDA flags, e.g. a -D switch the experiment adds),
# runs Catch2 and the CUDA op tests on the default build, then the benchmark on each.
# Usage (repo root, on the device):
#   VARIANTS="-DEXPERIMENT_A -DEXPERIMENT_B,-DOTHER" VARIANT_BENCH_ARGS="--problems 58,68" \
#     bash scripts/bench_variants.sh
# Variants are space-separated; commas inside one become spaces. Output in $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
export TORCH_CUDA_ARCH_LIST=9.0a PYTHONUNBUFFERED=1
catch_flag=()
[ -f .device/catch2/catch.hpp ] && catch_flag=(-DCT3D_CATCH2_SINGLE_HEADER_DIR="$PWD/.device")
build() {  # build <dir> <log> [cmake args]
  local dir=$1 log=$2
  shift 2
  { cmake -S . -B "$dir" -G Ninja "$@" && cmake --build "$dir" -j16; } >"$log" 2>&1 ||
    { tail -30 "$log"; exit 1; }
}
start=$(date +%s)
build build-device "$OUT/build.log" "${catch_flag[@]}"
i=0
for flags in ${VARIANTS:-}; do
  i=$((i + 1))
  build "build-variant$i" "$OUT/build_variant$i.log" -DCT3D_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_FLAGS="${flags//,/ }"
done
echo "build $(($(date +%s) - start)) s"
export CT3D_LIBRARY=$PWD/build-device/libct3d.so
if [ -x build-device/tests/ct3d_unit_tests ]; then
  build-device/tests/ct3d_unit_tests >"$OUT/catch2.log" 2>&1
  echo "catch2 rc=$? $(tail -2 "$OUT/catch2.log" | tr '\n' ' ')"
fi
python3 -m pytest -q -x ${PYTESTS:-python_tests/test_cuda_op.py} >"$OUT/pytest.log" 2>&1
echo "pytest rc=$? $(tail -1 "$OUT/pytest.log")"
python3 bench/bench.py --out "$OUT" ${BENCH_ARGS:-} 2>&1 | grep -E "^\| L1|geomean"
i=0
for flags in ${VARIANTS:-}; do
  i=$((i + 1))
  mkdir -p "$OUT/variant$i"
  CT3D_LIBRARY=$PWD/build-variant$i/libct3d.so python3 bench/bench.py --out "$OUT/variant$i" \
    ${VARIANT_BENCH_ARGS:-} 2>&1 | grep -E "^\| L1|geomean" | sed "s/^/[$flags] /"
done
