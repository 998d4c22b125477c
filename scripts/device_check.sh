#!/usr/bin/env bash
# One call on the GPU machine: build against its torch, run the tests, benchmark.
# Usage (from the repo root, on the device): bash scripts/device_check.sh [pytest args]
# Prints a short table last. $OUT (or ./device_out) gets the benchmarks' JSON files and
# every log and chart packed into logs.tar.gz: the device tool brings back 8 files.
# CT3D_MMA_SYNC_TESTS=1 reruns the CUDA accuracy suites on the Ampere-class paths
# (CT3D_MAX_CAPABILITY=8.0: mma.sync, no wgmma).
# CT3D_PTX_CHECK=1 also builds a library holding compute_80 PTX and sm_80 code, which
# an sm_90 GPU cannot run, so the driver compiles the PTX at load; the smoke check and
# the forward sweep run on it. (CUDA_FORCE_PTX_JIT=1 cannot be used: it also applies
# to torch's own kernels, which ship no PTX.)
# CT3D_SANITIZE=1 adds compute-sanitizer memcheck and racecheck (scripts/sanitize.sh).
# CT3D_BENCH="forward training" picks the benchmarks (default: both; also "wide",
# "narrow", "half", "reuse", "window", "taprows", "wgrad", "none"). $OUT brings back only a few files: the tables print last.
set -uo pipefail
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
LOGS=$(mktemp -d)
trap 'cp "$LOGS"/*.json "$OUT"/ 2>/dev/null; tar -czf "$OUT/logs.tar.gz" -C "$LOGS" .' EXIT
source scripts/device_build.sh
if [ -x $BUILD/tests/ct3d_unit_tests ]; then
  $BUILD/tests/ct3d_unit_tests >"$LOGS/catch2.log" 2>&1; echo "catch2 rc=$? $(tail -2 "$LOGS/catch2.log" | tr '\n' ' ')"
fi
# A quick check first: a broken kernel fails (or hangs) here in seconds, not in the suite.
for mainloop in default mma_sync; do
  cap=; [ $mainloop = mma_sync ] && cap=8.0
  CT3D_MAX_CAPABILITY=$cap timeout 180 python3 scripts/smoke_cuda.py >"$LOGS/smoke_$mainloop.log" 2>&1
  rc=$?; echo "smoke ($mainloop) rc=$rc $(tail -1 "$LOGS/smoke_$mainloop.log")"
  [ $rc = 0 ] || { tail -20 "$LOGS/smoke_$mainloop.log"; exit 1; }
done
python3 -m pytest -q -x python_tests "$@" >"$LOGS/pytest.log" 2>&1; echo "pytest rc=$? $(tail -1 "$LOGS/pytest.log")"
# CT3D_MMA_SYNC_TESTS=1: the CUDA accuracy suites again on the mma.sync mainloop.
if [ "${CT3D_MMA_SYNC_TESTS:-0}" = 1 ]; then
  CT3D_MAX_CAPABILITY=8.0 python3 -m pytest -q -x python_tests/test_cuda_op.py python_tests/test_cuda_backward.py \
    >"$LOGS/pytest_mma_sync.log" 2>&1; echo "pytest (capability cap 8.0) rc=$? $(tail -1 "$LOGS/pytest_mma_sync.log")"
fi
if [ "${CT3D_PTX_CHECK:-0}" = 1 ]; then
  { TORCH_CUDA_ARCH_LIST="8.0+PTX" cmake -S . -B build-ptx -G Ninja -DCT3D_BUILD_TESTS=OFF \
      && cmake --build build-ptx -j16; } >"$LOGS/build_ptx.log" 2>&1 || tail -20 "$LOGS/build_ptx.log"
  CT3D_LIBRARY=$PWD/build-ptx/libct3d.so timeout 300 python3 scripts/smoke_cuda.py \
    >"$LOGS/smoke_ptx.log" 2>&1; echo "smoke (compute_80 PTX, JIT) rc=$? $(tail -1 "$LOGS/smoke_ptx.log")"
  CT3D_LIBRARY=$PWD/build-ptx/libct3d.so timeout 300 python3 -m pytest -q -x \
    python_tests/test_cuda_op.py >"$LOGS/pytest_ptx.log" 2>&1
  echo "pytest (compute_80 PTX, JIT) rc=$? $(tail -1 "$LOGS/pytest_ptx.log")"
fi
grep -E "FAILED|Error" "$LOGS/pytest.log" | head -20
for bench in ${CT3D_BENCH:-forward training}; do
  case $bench in
    forward) python3 bench/bench.py --out "$LOGS" 2>&1 | tee "$LOGS/bench.log" ;;
    training) python3 bench/bench_training.py --out "$LOGS" 2>&1 | tee "$LOGS/training.log" ;;
    wide) python3 bench/bench.py --problems wide --name wide --out "$LOGS" 2>&1 | tee "$LOGS/wide.log" ;;
    narrow) python3 bench/bench.py --problems narrow --name narrow --out "$LOGS" 2>&1 | tee "$LOGS/narrow.log" ;;
    # Width-tap reuse / the shifted-window GEMM on and off, forward and input gradient
    # (bench/ab_forward_mainloop.py).
    reuse) python3 bench/ab_forward_mainloop.py --out "$LOGS" 2>&1 | tee "$LOGS/ab_width_reuse.log" ;;
    window) python3 bench/ab_forward_mainloop.py --form shifted-window --out "$LOGS" 2>&1 \
      | tee "$LOGS/ab_shifted_window.log" ;;
    taprows) python3 bench/ab_forward_mainloop.py --form tap-rows --problems 58,70,narrow \
      --out "$LOGS" 2>&1 | tee "$LOGS/ab_tap_rows.log" ;;
    # The weight gradient on wgmma and on mma.sync (bench/ab_wgrad_wgmma.py).
    wgrad) python3 bench/ab_wgrad_wgmma.py --out "$LOGS" 2>&1 | tee "$LOGS/ab_wgrad_wgmma.log" ;;
    # float16 and bfloat16 forward, float16 step (few repetitions: the tables, not the noise).
    half)
      for dtype in float16 bfloat16; do
        problems=level1; [ $dtype = float16 ] && problems=level1,narrow,wide
        python3 bench/bench.py --dtype $dtype --problems $problems --reps 5 --warmup 1 \
          --input-sets 1 --name half_$dtype --out "$LOGS" 2>&1 | grep -E "^\[|geomean"
      done
      python3 bench/bench_training.py --dtype float16 --reps 3 --warmup 1 --input-sets 1 \
        --name training_float16 --out "$LOGS" 2>&1 | tail -10 ;;
  esac
done
# Hardware counters of the main kernel on the problems named in $CT3D_PROFILE.
for p in ${CT3D_PROFILE:-}; do
  ncu --clock-control none -k regex:phase_kernel -s 2 -c 1 --section SpeedOfLight \
    --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis \
    python3 bench/profile_one.py "$p" >"$LOGS/ncu_$p.txt" 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Stall|L1/TEX Hit|L2 Hit" "$LOGS/ncu_$p.txt" | head -12 | sed "s/^/[ncu $p] /"
done
if [ "${CT3D_SANITIZE:-0}" = 1 ]; then
  bash scripts/sanitize.sh "$LOGS/sanitize"
fi
