"""torch.library.opcheck: schema, autograd registration, fake (Meta) kernel and
dynamic-shape AOT dispatch, with and without inputs that require grad."""

import pytest
import torch

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])

SAMPLES = [
    # (input shape, weight shape, bias?, stride, padding, output_padding, groups, dilation)
    ((2, 4, 3, 4, 5), (4, 3, 2, 3, 2), True, [1], [0], [0], 1, [1]),
    ((1, 6, 3, 3, 3), (6, 2, 3, 3, 3), False, [2, 1, 2], [1, 0, 1], [1, 0, 0], 3, [1, 2, 1]),
    ((4, 3, 3, 3), (4, 2, 2, 2, 2), True, [2], [0], [1], 1, [1]),
]


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sample", SAMPLES)
def test_opcheck(device, sample, requires_grad):
    x_shape, w_shape, has_bias, stride, padding, output_padding, groups, dilation = sample
    dtype = torch.float64 if device == "cpu" else torch.float32
    x = torch.randn(x_shape, dtype=dtype, device=device)
    w = torch.randn(w_shape, dtype=dtype, device=device)
    b = torch.randn(w_shape[1] * groups, dtype=dtype, device=device) if has_bias else None
    for t in (x, w, b):
        if t is not None:
            t.requires_grad_(requires_grad)
    torch.library.opcheck(torch.ops.ct3d.conv_transpose3d.default,
                          (x, w, b, stride, padding, output_padding, groups, dilation))
