#!/usr/bin/env bash
# Builds and runs the wgmma probe on the device (sm_90a).
set -euo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp}
nvcc -O3 -std=c++17 -I../.. -gencode=arch=compute_90a,code=sm_90a -Xptxas -v wgmma_probe.cu -o "$OUT/wgmma_probe" 2>"$OUT/wgmma_probe_build.log" \
  || { cat "$OUT/wgmma_probe_build.log"; exit 1; }
grep -E "registers|spill" "$OUT/wgmma_probe_build.log" | head -6
"$OUT/wgmma_probe"
