#!/usr/bin/env bash
# Sets up, builds, then runs ct3d.Model against nn.ConvTranspose3d on a real shape
# (the GPU when there is one, else a small CPU run), printing error and time.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 bench/demo.py "$@"
