#!/usr/bin/env bash
# ncu of the probe's GEMM on the device: bash bench/wgmma_probe/profile.sh
set -euo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp}
bash run.sh >/dev/null
ncu --clock-control none -k regex:wgmma_3xtf32 -s 1 -c 1 --section SpeedOfLight --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy \
  "$OUT/wgmma_probe" one >"$OUT/ncu_probe.txt" 2>&1 || true
grep -E "Duration|Throughput|Stall|Hit Rate|Issue Slots|Executed Ipc|Pipe|Achieved|Bank" "$OUT/ncu_probe.txt" | head -60
