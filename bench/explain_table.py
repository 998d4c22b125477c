"""The planner's path for every layer of the benchmark's tables (ct3d.explain): which form
the forward and the gradients take, in one dtype (default float32), on this GPU. Computes
nothing.

    python bench/explain_table.py [level1,wide,narrow,networks] [float32|float16|bfloat16]
"""

import sys

import torch
from torch.nn.modules.utils import _triple

import ct3d
from bench import ALL_PROBLEMS, problem_numbers

spec = sys.argv[1] if len(sys.argv) > 1 else "level1,wide,narrow,networks"
dtype = getattr(torch, sys.argv[2]) if len(sys.argv) > 2 else torch.float32
print(f"{'layer':22} {'op':15} path")
for number in problem_numbers(spec):
    problem = ALL_PROBLEMS[number]
    c = problem.conv
    # Meta-sized tensors would do for the plan, but explain checks devices as the op does.
    x = torch.empty(problem.input_shape(), device="cuda", dtype=dtype)
    w = torch.empty(c["in_channels"], c["out_channels"] // c.get("groups", 1),
                    *_triple(c["kernel_size"]), device="cuda", dtype=dtype)
    text = ct3d.explain(x, w, None, _triple(c.get("stride", 1)), _triple(c.get("padding", 0)),
                        _triple(c.get("output_padding", 0)), c.get("groups", 1),
                        _triple(c.get("dilation", 1)))
    for line in text.splitlines():
        op, path = line.split(": ", 1)
        print(f"{problem.label:22} {op:15} {path}")
    del x, w
