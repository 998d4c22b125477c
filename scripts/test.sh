#!/usr/bin/env bash
# Sets up, builds, and runs every test: Catch2 (through ctest), then pytest.
# GPU tests skip cleanly where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
(cd build && ctest --output-on-failure)
python3 -m pytest -q python_tests
