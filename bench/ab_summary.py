"""The two libraries' A/B of scripts/device_ab_commits.sh in one table: per (problem,
op) the median over rounds of each library's time, and tree / base. Reads the lines
"[base 1] L1-58  fwd  0.637 ..." that the script prints (bench/ab_switch.py's rows,
first time column), from standard input or the files named.

    bash scripts/device_ab_commits.sh | tee ab.log; python3 bench/ab_summary.py ab.log
"""

import fileinput
import re
import statistics

ROW = re.compile(r"^\[(base|tree) \d+\]\s+(\S+)\s+(fwd|dgrad|wgrad|grads)\s+([\d.]+)")


def summarize(lines):
    times = {}
    for line in lines:
        match = ROW.match(line)
        if match:
            which, label, op, ms = match.groups()
            times.setdefault((label, op), {}).setdefault(which, []).append(float(ms))
    rows = []
    for (label, op), by_library in times.items():
        if "base" in by_library and "tree" in by_library:
            base = statistics.median(by_library["base"])
            tree = statistics.median(by_library["tree"])
            rows.append((label, op, base, tree, tree / base, len(by_library["tree"])))
    return rows


def main():
    rows = summarize(fileinput.input())
    print(f"{'problem':18} {'op':6} {'base ms':>9} {'tree ms':>9} {'tree/base':>9} {'rounds':>6}")
    for label, op, base, tree, ratio, rounds in rows:
        print(f"{label:18} {op:6} {base:9.3f} {tree:9.3f} {ratio:9.3f} {rounds:6d}")


if __name__ == "__main__":
    main()
