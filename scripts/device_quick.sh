#!/usr/bin/env bash
# A shorter device call than device_check.sh, for kernel iterations: build, Catch2,
# the smoke check on both mainloops, the CUDA accuracy suites, and the forward
# benchmark with the wgmma mainloop and without. Logs and results under $OUT.
set -uo pipefail
source scripts/device_build.sh
$BUILD/tests/ct3d_unit_tests >"$OUT/catch2.log" 2>&1; echo "catch2 rc=$? $(tail -2 "$OUT/catch2.log" | tr '\n' ' ')"
for cap in none 8.0; do
  CT3D_MAX_CAPABILITY=${cap/none/} timeout 180 python3 scripts/smoke_cuda.py >"$OUT/smoke_$cap.log" 2>&1
  rc=$?; echo "smoke (capability cap $cap) rc=$rc $(tail -1 "$OUT/smoke_$cap.log")"
  [ $rc = 0 ] || { tail -20 "$OUT/smoke_$cap.log"; exit 1; }
done
timeout 300 python3 -m pytest -q -x python_tests/test_cuda_op.py python_tests/test_cuda_backward.py >"$OUT/pytest.log" 2>&1
echo "pytest (cuda suites) rc=$? $(tail -1 "$OUT/pytest.log")"
python3 bench/bench.py --out "$OUT" >"$OUT/bench_wgmma.log" 2>&1
CT3D_MAX_CAPABILITY=8.0 python3 bench/bench.py --out "$OUT/mma_sync" >"$OUT/bench_mma_sync.log" 2>&1
echo "== wgmma"; grep "^\[L1" "$OUT/bench_wgmma.log"; tail -1 "$OUT/bench_wgmma.log"
echo "== mma.sync"; grep "^\[L1" "$OUT/bench_mma_sync.log"; tail -1 "$OUT/bench_mma_sync.log"
