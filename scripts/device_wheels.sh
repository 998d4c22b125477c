#!/usr/bin/env bash
# Downloads here the wheels the GPU machine lacks for bench/networks.py and the
# networks' tests (MONAI, einops; the device has no package index), into .whl/ (ignored
# by git; carry it: `carry: [".whl"]`). On the device, before the command:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH
# The device's Python is 3.12 (the device tool's KINDS.md); both packages are pure Python.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx "/.whl/" .git/info/exclude 2>/dev/null || echo "/.whl/" >> .git/info/exclude
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp -d .whl "monai>=1.4,<1.7" einops
ls -la .whl
