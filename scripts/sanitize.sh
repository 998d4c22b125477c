#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck over every CUDA kernel path of ct3d
# (scripts/sanitizer_cases.py). Run on a GPU machine after building:
#   CT3D_LIBRARY=build/libct3d.so bash scripts/sanitize.sh [out_dir]
# Prints one summary line per tool; full reports go to out_dir (default ./sanitize).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-sanitize}
mkdir -p "$OUT"
for tool in memcheck racecheck; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check no)
  compute-sanitizer --tool "$tool" "${extra[@]}" \
    python3 scripts/sanitizer_cases.py >"$OUT/$tool.log" 2>&1
  rc=$?
  echo "$tool rc=$rc: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|sanitizer cases" "$OUT/$tool.log" | tr '\n' ' ')"
done
