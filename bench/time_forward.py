"""ct3d's forward alone, median ms per problem (no PyTorch baselines): the quick timing
for scripts/device_ab_commits.sh, which runs it once per library.

    python bench/time_forward.py 58,70,204 [float32|float16|bfloat16] [reps]
"""

import sys

import torch
from torch import nn

import ct3d
from bench import ALL_PROBLEMS, median_ms

numbers = [int(n) for n in sys.argv[1].split(",")]
dtype = getattr(torch, sys.argv[2]) if len(sys.argv) > 2 else torch.float32
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 20
for number in numbers:
    problem = ALL_PROBLEMS[number]
    torch.manual_seed(0)
    conv = nn.ConvTranspose3d(**problem.conv).cuda().to(dtype)
    inputs = [torch.rand(problem.input_shape(), device="cuda", dtype=dtype) for _ in range(2)]
    with torch.no_grad():
        ms, _ = median_ms(lambda x: ct3d.conv_transpose3d_module(conv, x), inputs, 3, reps)
    print(f"{problem.label:18} {str(dtype)[6:]:9} {ms:8.3f} ms", flush=True)
    del inputs
    torch.cuda.empty_cache()
