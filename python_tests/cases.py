"""Randomized parameter combinations and the float64 reference shared by the tests."""

import random

import torch
import torch.nn.functional as F

# Per-dimension triples the GPU forms' case tables are written with.
ONE = (1, 1, 1)
ZERO = (0, 0, 0)
TWO = (2, 2, 2)


def random_case(rng: random.Random, max_spatial=6, max_channels=6):
    """One valid combination of every argument of conv_transpose3d, small sizes."""
    groups = rng.choice([1, 1, 2, 3])
    cin = groups * rng.randint(1, max_channels // 2 + 1)
    cout = groups * rng.randint(1, max_channels // 2 + 1)
    kernel = [rng.randint(1, 4) for _ in range(3)]
    stride = [rng.randint(1, 3) for _ in range(3)]
    dilation = [rng.randint(1, 3) for _ in range(3)]
    padding = [rng.randint(0, 2) for _ in range(3)]
    output_padding = [rng.randint(0, max(s, d) - 1) for s, d in zip(stride, dilation)]
    spatial = [rng.randint(1, max_spatial) for _ in range(3)]
    case = dict(batch=rng.randint(1, 3), cin=cin, cout=cout, spatial=spatial, kernel=kernel,
                stride=stride, padding=padding, output_padding=output_padding, groups=groups,
                dilation=dilation, bias=rng.random() < 0.5, batched=rng.random() < 0.85)
    # Keep only combinations whose output is non-empty, as PyTorch requires.
    for i in range(3):
        out = ((spatial[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1)
               + output_padding[i] + 1)
        if out <= 0:
            padding[i] = 0
    return case


def edge_case(params, bias):
    """A case from a (batch, cin, cout, spatial, kernel, stride, padding,
    output_padding, groups, dilation) tuple, batched."""
    batch, cin, cout, spatial, kernel, stride, padding, out_pad, groups, dilation = params
    return dict(batch=batch, cin=cin, cout=cout, spatial=list(spatial), kernel=list(kernel),
                stride=list(stride), padding=list(padding), output_padding=list(out_pad),
                groups=groups, dilation=list(dilation), bias=bias, batched=True)


def make_tensors(case, dtype, device, generator=None):
    shape = [case["batch"], case["cin"], *case["spatial"]] if case["batched"] else \
        [case["cin"], *case["spatial"]]
    x = torch.randn(shape, dtype=dtype, generator=generator).to(device)
    w = torch.randn(case["cin"], case["cout"] // case["groups"], *case["kernel"], dtype=dtype,
                    generator=generator).to(device)
    b = torch.randn(case["cout"], dtype=dtype, generator=generator).to(device) if case["bias"] else None
    return x, w, b


def conv_args(case):
    return (case["stride"], case["padding"], case["output_padding"], case["groups"], case["dilation"])


def reference(x, w, b, case):
    """float64 result of PyTorch's own transposed convolution, on the CPU."""
    return F.conv_transpose3d(x.double().cpu(), w.double().cpu(),
                              None if b is None else b.double().cpu(), *conv_args(case))


def relative_error(out, ref):
    ref = ref.double().cpu()
    return ((out.double().cpu() - ref).norm() / ref.norm().clamp_min(1e-300)).item()
