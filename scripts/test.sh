#!/usr/bin/env bash
# Sets up, builds, and runs every test: the include-loop check, Catch2 (through ctest),
# then pytest.
# GPU tests skip cleanly where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 scripts/include_loops.py
bash scripts/setup.sh
(cd build && ctest --output-on-failure)
python3 -m pytest -q python_tests
