"""Where one forward's time goes: the device time of each kernel ct3d's forward launches
(torch.profiler), per call, for the named problems. ct3d's options come from the
environment (e.g. CT3D_FORCE_FORM=winograd), so that a kernel change's parts can be
weighed against each other without hardware counters.

    CT3D_FORCE_FORM=winograd python bench/kernel_breakdown.py 102,109 [calls]
"""

import sys
from collections import defaultdict

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

import ct3d
from bench import ALL_PROBLEMS

numbers = [int(n) for n in sys.argv[1].split(",")]
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 5
with torch.no_grad():
    for number in numbers:
        problem = ALL_PROBLEMS[number]
        conv = nn.ConvTranspose3d(**problem.conv).cuda()
        x = torch.rand(problem.input_shape(), device="cuda")
        for _ in range(2):
            ct3d.conv_transpose3d_module(conv, x)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as trace:
            for _ in range(calls):
                ct3d.conv_transpose3d_module(conv, x)
            torch.cuda.synchronize()
        per_kernel = defaultdict(float)
        for event in trace.events():
            if event.device_type == torch.autograd.DeviceType.CUDA:
                per_kernel[event.name] += event.device_time / calls / 1000.0
        total = sum(per_kernel.values())
        print(f"[{problem.label}] {total:.3f} ms of kernels per forward")
        for name, ms in sorted(per_kernel.items(), key=lambda item: -item[1]):
            print(f"[{problem.label}]   {ms:8.3f} ms  {name[:110]}")
