"""What each kernel form gains where the planner chooses it (issue 50, point 3): for every
layer and op, the form ct3d.explain names, timed in one process against the planner's next
choice with that form turned off (the test hook's "no-<form>" entries; the wgmma gather
against the mma.sync one by max_capability=8.0; the wgmma weight gradient against
mma.sync; a half form against the widened float32 path). One bench/ab_switch.py run per
(dtype, op, form), then the table: each form's layers, its time, the next choice's, and
next / form (above 1: the form pays).

    python bench/forms_table.py [level1,wide,narrow,networks] [float32,float16] [rounds] [reps]
"""

import collections
import os
import subprocess
import sys

import torch
from torch.nn.modules.utils import _triple

import ct3d
from bench import ALL_PROBLEMS, problem_numbers

spec = sys.argv[1] if len(sys.argv) > 1 else "level1,wide,narrow,networks"
dtypes = (sys.argv[2] if len(sys.argv) > 2 else "float32,float16").split(",")
rounds = sys.argv[3] if len(sys.argv) > 3 else "3"
reps = sys.argv[4] if len(sys.argv) > 4 else "10"

OPS = {"forward": "fwd", "input gradient": "dgrad", "weight gradient": "wgrad"}


def next_choice(path: str, op: str, half: bool):
    """(form, option=value) for the form `path` names, or None for a baseline (the mma.sync
    gather and weight gradient, the direct kernels, widened paths)."""
    first = path.split(" (")[0].split(";")[0]
    if first.startswith("widened") or first.startswith("direct") or first.startswith("nothing"):
        return None
    if op == "wgrad":
        if first == "wgmma":
            return ("wgrad wgmma" + (" (half)" if half else ""),
                    "force_form=half-widened" if half else "force_form=wgrad-mma-sync")
        return None
    table = {
        "winograd": "force_form=no-winograd",
        "strided-lines": "force_form=no-strided-lines",
        "shifted-window": "force_form=no-shifted-window",
        "half shifted-window": "force_form=no-shifted-window",
        "tap-columns": "force_form=no-tap-columns",
        "tap-rows": "force_form=no-tap-rows",
        "half tap-rows": "force_form=no-tap-rows",
        "width-reuse": "force_form=no-width-reuse",
        "wgmma-gather": "max_capability=8.0",
        "half gather": "force_form=no-half-gather",
    }
    return (first, table[first]) if first in table else None


groups = collections.defaultdict(list)  # (dtype, op, form, setting) -> problem numbers
for dtype_name in dtypes:
    dtype = getattr(torch, dtype_name)
    for number in problem_numbers(spec):
        problem = ALL_PROBLEMS[number]
        c = problem.conv
        x = torch.empty(problem.input_shape(), device="cuda", dtype=dtype)
        w = torch.empty(c["in_channels"], c["out_channels"] // c.get("groups", 1),
                        *_triple(c["kernel_size"]), device="cuda", dtype=dtype)
        text = ct3d.explain(x, w, None, _triple(c.get("stride", 1)),
                            _triple(c.get("padding", 0)), _triple(c.get("output_padding", 0)),
                            c.get("groups", 1), _triple(c.get("dilation", 1)))
        for line in text.splitlines():
            name, path = line.split(": ", 1)
            op = OPS[name]
            choice = next_choice(path, op, dtype != torch.float32)
            if choice:
                groups[(dtype_name, op, *choice)].append(number)
        del x, w

here = os.path.dirname(os.path.abspath(__file__))
rows = []
for (dtype_name, op, form, setting), numbers in sorted(groups.items()):
    option, value = setting.split("=", 1)
    command = [sys.executable, os.path.join(here, "ab_switch.py"),
               ",".join(str(n) for n in numbers), dtype_name, f"{option}=/{value}", rounds, reps,
               f"ops={op}"]
    print(f"== {form}, {op}, {dtype_name}: against {setting}", flush=True)
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    print(result.stdout, end="", flush=True)
    if result.returncode != 0:
        print(result.stderr[-2000:], flush=True)
        continue
    for line in result.stdout.splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 5:
            layer, ms_form, ms_next = fields[0], float(fields[2]), float(fields[3])
            rows.append((form, op, dtype_name, layer, ms_form, ms_next))

print(f"\n{'form':24} {'op':6} {'dtype':8} {'layer':24} {'form ms':>9} {'next ms':>9} "
      f"{'next/form':>9}")
for form, op, dtype_name, layer, ms_form, ms_next in rows:
    print(f"{form:24} {op:6} {dtype_name:8} {layer:24} {ms_form:9.3f} {ms_next:9.3f} "
          f"{ms_next / ms_form:9.3f}")
