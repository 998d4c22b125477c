"""The host side of one ct3d forward call, event by event: torch.profiler's CPU
events (aten ops: allocations, views, casts; CUDA runtime calls: launches, attribute
sets) inside the op, with their start offsets, to see where a call's host time goes
(KERNEL_LOG h7). Profiled times run high; compare their shares.

    python bench/host_trace.py 104,73 [float16|bfloat16|float32]
"""

import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

import ct3d
from bench import ALL_PROBLEMS

numbers = [int(n) for n in sys.argv[1].split(",")]
dtype = getattr(torch, sys.argv[2]) if len(sys.argv) > 2 else torch.float16
for number in numbers:
    problem = ALL_PROBLEMS[number]
    conv = nn.ConvTranspose3d(**problem.conv).cuda().to(dtype)
    x = torch.rand(problem.input_shape(), device="cuda", dtype=dtype)
    with torch.no_grad():
        for _ in range(5):
            ct3d.conv_transpose3d_module(conv, x)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                ct3d.conv_transpose3d_module(conv, x)
                torch.cuda.synchronize()
    events = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CPU),
                    key=lambda e: e.time_range.start)
    op = [e for e in events if e.name.startswith("ct3d::")][-1]  # the last call
    start, end = op.time_range.start, op.time_range.end
    print(f"== {problem.label} {dtype}: the op {op.time_range.elapsed_us():.1f} us on the host")
    for e in events:
        if e.time_range.start >= start and e.time_range.end <= end:
            print(f"  +{e.time_range.start - start:7.1f} us  {e.time_range.elapsed_us():7.1f} us"
                  f"  {e.name[:80]}")
