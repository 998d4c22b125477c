"""Runs ct3d on one problem (a KernelBench number, or a wide or narrow layer's number) a
few times, for a profiler (ncu) to attach: the forward, or with --wgrad the weight
gradient, with --dgrad the input gradient; float32, or the dtype after --dtype (float16,
bfloat16).

    ncu --clock-control none -k regex:implicit_gemm -s 2 -c 1 python bench/profile_one.py 58
    ncu --clock-control none -k regex:weight_gradient -s 2 -c 1 python bench/profile_one.py 68 --wgrad
    ncu --clock-control none -k regex:stage_input -s 4 -c 1 python bench/profile_one.py 73 --dgrad
"""

import sys

import torch
from torch import nn

import ct3d
from bench import ALL_PROBLEMS

problem = ALL_PROBLEMS[int(sys.argv[1])]
dtype = getattr(torch, sys.argv[sys.argv.index("--dtype") + 1]) if "--dtype" in sys.argv else torch.float32
conv = nn.ConvTranspose3d(**problem.conv).cuda().to(dtype)
x = torch.rand(problem.input_shape(), device="cuda", dtype=dtype)
with torch.no_grad():
    y = ct3d.conv_transpose3d_module(conv, x)
    gy = torch.randn_like(y)
    for _ in range(3):
        if "--wgrad" in sys.argv:
            torch.ops.ct3d.conv_transpose3d_weight_backward(
                x, gy, list(conv.kernel_size), conv.stride, conv.padding, conv.groups,
                conv.dilation)
        elif "--dgrad" in sys.argv:
            torch.ops.ct3d.conv_transpose3d_input_backward(
                gy, conv.weight, list(x.shape[2:]), conv.stride, conv.padding, conv.groups,
                conv.dilation)
        else:
            ct3d.conv_transpose3d_module(conv, x)
torch.cuda.synchronize()
