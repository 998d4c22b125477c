"""Runs ct3d on one KernelBench problem a few times, for a profiler (ncu) to attach.

    ncu --clock-control none -k regex:implicit_gemm -s 2 -c 1 python bench/profile_one.py 58
"""

import sys

import torch
from torch import nn

import ct3d
from problems import BY_NUMBER

problem = BY_NUMBER[int(sys.argv[1])]
conv = nn.ConvTranspose3d(**problem.conv).cuda()
x = torch.rand(problem.input_shape(), device="cuda")
with torch.no_grad():
    for _ in range(3):
        ct3d.conv_transpose3d_module(conv, x)
torch.cuda.synchronize()
