"""Fails when the C++/CUDA sources under ops/ include each other in a loop, counted by
unit: a header and its implementation are one unit (x.h with x.cpp, x.cu or x_launch.cu),
so that a launcher including a kernel that includes the launcher's own header is a loop
too. Prints each loop's units.

    python3 scripts/include_loops.py [root]     # exit status 1 on a loop
"""

import collections
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
os.chdir(root)


def unit_of(path):
    stem = os.path.splitext(path)[0]
    if stem.endswith("_launch") and os.path.exists(stem[: -len("_launch")] + ".h"):
        return stem[: -len("_launch")]
    return stem


edges = collections.defaultdict(set)
for folder, _, names in os.walk("ops"):
    for name in names:
        if not name.endswith((".h", ".cpp", ".cu", ".cuh")):
            continue
        path = os.path.join(folder, name)
        for included in re.findall(r'#include "([^"]+)"', open(path).read()):
            if included.startswith("ops/") and os.path.exists(included):
                if unit_of(path) != unit_of(included):
                    edges[unit_of(path)].add(unit_of(included))

# Tarjan's strongly connected components, iteratively.
index, low, on_stack, stack, loops = {}, {}, set(), [], []
for start in list(edges):
    if start in index:
        continue
    work = [(start, iter(sorted(edges[start])))]
    index[start] = low[start] = len(index)
    stack.append(start)
    on_stack.add(start)
    while work:
        node, children = work[-1]
        child = next(children, None)
        if child is None:
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    loops.append(sorted(component))
        elif child not in index:
            index[child] = low[child] = len(index)
            stack.append(child)
            on_stack.add(child)
            work.append((child, iter(sorted(edges.get(child, ())))))
        elif child in on_stack:
            low[node] = min(low[node], index[child])

for loop in loops:
    print("include loop:", " -> ".join(loop))
print(f"{len(edges)} units, {len(loops)} include loops")
sys.exit(1 if loops else 0)
