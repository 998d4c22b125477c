"""The weight gradient alone, median ms per problem: ct3d's (its half form, and with
the form half-widened forced the widened float32 path) against cuDNN's in the same dtype, and each
one's error against float64 (a quick check, not the benchmark's tables).

    python bench/time_weight_gradient.py 58,68,73 [float16|bfloat16|float32] [reps]
"""

import sys

import torch
from torch import nn

import ct3d
from bench import ALL_PROBLEMS, median_ms, relative_error

numbers = [int(n) for n in sys.argv[1].split(",")]
dtype = getattr(torch, sys.argv[2]) if len(sys.argv) > 2 else torch.float16
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
print(f"{'problem':18} {'dtype':9} {'half form':>10} {'widened':>10} {'cuDNN':>10}  "
      f"err ct3d / cuDNN")
for number in numbers:
    problem = ALL_PROBLEMS[number]
    torch.manual_seed(0)
    conv = nn.ConvTranspose3d(**problem.conv).cuda().to(dtype)
    c = problem.conv
    triple = nn.modules.utils._triple
    args = (triple(c.get("stride", 1)), triple(c.get("padding", 0)), c.get("groups", 1),
            triple(c.get("dilation", 1)))
    out_padding = triple(c.get("output_padding", 0))
    x = torch.rand(problem.input_shape(), device="cuda", dtype=dtype)
    with torch.no_grad():
        out_shape = conv(x).shape
    grads = [torch.randn(out_shape, device="cuda", dtype=dtype) for _ in range(2)]
    kernel = list(conv.weight.shape[2:])

    def ours(g):
        return torch.ops.ct3d.conv_transpose3d_weight_backward(x, g, kernel, *args)

    def cudnn(g):
        return torch.ops.aten.convolution_backward(
            g, x, conv.weight, None, args[0], args[1], args[3], True, out_padding, args[2],
            [False, True, False])[1]

    row = {}
    for label, form, fn in (("half", "", ours), ("widened", "half-widened", ours),
                            ("cudnn", "", cudnn)):
        ct3d.set_option("force_form", form)
        row[label], _ = median_ms(fn, grads, 2, reps)
    ct3d.set_option("force_form", "")
    reference = torch.ops.aten.convolution_backward(
        grads[0].double(), x.double(), conv.weight.double(), None, args[0], args[1], args[3],
        True, out_padding, args[2], [False, True, False])[1]
    errors = [relative_error(fn(grads[0]), reference) for fn in (ours, cudnn)]
    print(f"{problem.label:18} {str(dtype)[6:]:9} {row['half']:10.3f} {row['widened']:10.3f} "
          f"{row['cudnn']:10.3f}  {errors[0]:.1e} / {errors[1]:.1e}", flush=True)
    del x, grads, reference
    torch.cuda.empty_cache()
