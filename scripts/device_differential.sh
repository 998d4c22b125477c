#!/usr/bin/env bash
# The differential harness's GPU share in one call on the GPU machine: build (or reuse
# the build a previous call left), then every CUDA form of python_tests/test_differential.py
# with CT3D_DIFF_CONFIGS random calls each (default 2000; the first 64 profiled for the
# form's own kernels), then compute-sanitizer over CT3D_DIFF_SANITIZE_CONFIGS calls per
# form (default 200; racecheck's at the harness's "tiny" caps) for each tool in
# CT3D_DIFF_TOOLS (default "memcheck initcheck racecheck"; "none" skips them), without
# PyTorch's caching allocator so that the tools see every allocation's bounds and which
# memory was written.
# Usage (repo root, on the device): bash scripts/device_differential.sh
# CT3D_DIFF_SEED sets the seed (default: the date); CT3D_DIFF_FORMS the forms (default
# cuda); CT3D_DIFF_JOBS the runners side by side (default 8); CT3D_DIFF_SECONDS and
# CT3D_DIFF_SANITIZE_SECONDS stop drawing new calls after that long (default 300 and
# 400: a device command has 600 s); CT3D_DIFF_PYTEST=1 runs the whole pytest suite
# first (CT3D_DIFF_PYTEST_SECONDS caps it, default 900). Tables print last; the reports and logs go to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/device_out}
LOGS=$(mktemp -d)
trap 'tar -czf "$OUT/differential_logs.tar.gz" -C "$LOGS" .' EXIT
source scripts/device_build.sh
seed=${CT3D_DIFF_SEED:-$(date +%Y%m%d)}
forms=${CT3D_DIFF_FORMS:-cuda}
jobs=${CT3D_DIFF_JOBS:-8}
form_args=()
for form in $forms; do form_args+=(--form "$form"); done
echo "seed $seed"
if [ "${CT3D_DIFF_PYTEST:-0}" = 1 ]; then
  timeout "${CT3D_DIFF_PYTEST_SECONDS:-900}" \
    python3 -m pytest -q -x python_tests --ignore=python_tests/test_differential.py \
    >"$LOGS/pytest.log" 2>&1
  echo "pytest rc=$? $(tail -1 "$LOGS/pytest.log")"
  grep -E "FAILED|Error" "$LOGS/pytest.log" | head -20
fi
if [ "${CT3D_DIFF_CONFIGS:-2000}" != 0 ]; then
  start=$(date +%s)
  python3 python_tests/test_differential.py "${form_args[@]}" --seed "$seed" \
    --count "${CT3D_DIFF_CONFIGS:-2000}" --coverage 64 --jobs "$jobs" --out "$LOGS/harness" \
    --seconds "${CT3D_DIFF_SECONDS:-300}" \
    >"$LOGS/harness.txt" 2>"$LOGS/harness_failures.txt"
  echo "harness rc=$? in $(( $(date +%s) - start )) s"
  cp "$LOGS/harness/reports.json" "$OUT/differential_reports.json" 2>/dev/null
fi
tools=${CT3D_DIFF_TOOLS:-memcheck initcheck racecheck}
[ "$tools" = none ] && tools=
for tool in $tools; do
  start=$(date +%s)
  extra=() caps=cpu
  [ "$tool" = memcheck ] && extra=(--leak-check no)
  # racecheck's cost follows the shared-memory accesses it tracks: smaller calls.
  [ "$tool" = racecheck ] && caps=tiny
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 python3 python_tests/test_differential.py "${form_args[@]}" \
    --seed "$seed" --count "${CT3D_DIFF_SANITIZE_CONFIGS:-200}" --caps "$caps" \
    --jobs "${CT3D_DIFF_SANITIZE_JOBS:-16}" \
    --wrap "compute-sanitizer --tool $tool ${extra[*]}" --out "$LOGS/$tool" \
    --seconds "${CT3D_DIFF_SANITIZE_SECONDS:-400}" \
    >"$LOGS/$tool.txt" 2>"$LOGS/${tool}_failures.txt"
  echo "$tool rc=$? in $(( $(date +%s) - start )) s"
  cp "$LOGS/$tool/reports.json" "$OUT/${tool}_reports.json" 2>/dev/null
done
head -c 3000 "$LOGS/harness_failures.txt" 2>/dev/null
for table in harness $tools; do
  echo "== $table"
  cat "$LOGS/$table.txt" 2>/dev/null
done
