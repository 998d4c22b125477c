#!/usr/bin/env bash
# Same-machine A/B of two commits in one GPU call: the working tree's library against a
# base commit's, timed in alternating rounds, so that the machine-to-machine spread (up
# to 3.5 %, docs/PERFORMANCE.md) does not enter the comparison (KERNEL_LOG: the tap-rows entries'
# A/Bs).
# Here, before the call:  git archive <base commit> > .device/base.tar
# On the device (repo root, carry .device):
#   AB_COMMAND="python3 bench/ab_forward_mainloop.py --form tap-rows --problems 58,70" \
#     bash scripts/device_ab_commits.sh
# or, for a table of medians (bench/ab_summary.py), one ab_switch.py setting a round:
#   AB_ROUNDS=4 AB_COMMAND="python3 bench/ab_switch.py 58,61,68,70 float32 force_form= 1 10" ...
# AB_ROUNDS (default 2) rounds, base first in odd rounds; AB_COMMAND's output is printed
# with its library's label. The working tree's build also gets Catch2.
set -uo pipefail
[ -f .device/base.tar ] || { echo "no .device/base.tar: git archive <commit> > .device/base.tar"; exit 1; }
source scripts/device_build.sh
base=$(mktemp -d)
tar -xf .device/base.tar -C "$base"
{ cmake -S "$base" -B "$base/build" -G Ninja -DCT3D_BUILD_TESTS=OFF &&
  cmake --build "$base/build" -j16; } >"$LOGS/build_base.log" 2>&1 || { tail -30 "$LOGS/build_base.log"; exit 1; }
declare -A library=([base]="$base/build/libct3d.so" [tree]="$PWD/$BUILD/libct3d.so")
command=${AB_COMMAND:-python3 bench/ab_forward_mainloop.py --form tap-rows --problems 58,70 --out /tmp}
# The order alternates between rounds, so that whatever favours the first (or second)
# run of a round, such as a cooler GPU, falls on both libraries alike.
for round in $(seq "${AB_ROUNDS:-2}"); do
  order="base tree"; [ $((round % 2)) = 0 ] && order="tree base"
  for which in $order; do
    CT3D_LIBRARY=${library[$which]} bash -c "$command" 2>&1 | sed "s/^/[$which $round] /"
  done
done | tee "$LOGS/ab_commits.log"
# bench/ab_switch.py's rows (one setting): medians per library and tree / base.
python3 bench/ab_summary.py "$LOGS/ab_commits.log"
