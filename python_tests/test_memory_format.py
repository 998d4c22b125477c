"""Memory formats and views: results equal those on contiguous copies, and the
output's memory format is the one nn.functional.conv_transpose3d returns."""

import pytest
import torch
import torch.nn.functional as F

from conftest import requires_cuda

DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]
CL = torch.channels_last_3d


def run(x, w, b):
    return torch.ops.ct3d.conv_transpose3d(x, w, b, [2, 1, 2], [1, 0, 1], [1, 0, 0], 2, [1, 2, 1])


def reference(x, w, b):
    return F.conv_transpose3d(x.double(), w.double(), b.double(), (2, 1, 2), (1, 0, 1),
                              (1, 0, 0), 2, (1, 2, 1))


def inputs(device):
    torch.manual_seed(0)
    x = torch.randn(2, 8, 5, 6, 7, device=device)
    w = torch.randn(8, 3, 3, 2, 3, device=device)
    b = torch.randn(6, device=device)
    return x, w, b


VARIANTS = {
    "contiguous": lambda x, w: (x, w),
    "input channels_last": lambda x, w: (x.to(memory_format=CL), w),
    "weight channels_last": lambda x, w: (x, w.to(memory_format=CL)),
    "both channels_last": lambda x, w: (x.to(memory_format=CL), w.to(memory_format=CL)),
    "sliced input": lambda x, w: (torch.cat([x, x], dim=4)[..., ::2], w),
    "sliced weight": lambda x, w: (x, torch.cat([w, w], dim=2)[:, :, ::2]),
    "permuted input": lambda x, w: (x.permute(0, 1, 4, 3, 2).contiguous().permute(0, 1, 4, 3, 2), w),
    "permuted weight": lambda x, w: (x, w.permute(1, 0, 2, 3, 4).contiguous().permute(1, 0, 2, 3, 4)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_layout_gives_same_values_and_nn_memory_format(device, variant):
    x, w, b = inputs(device)
    xv, wv = VARIANTS[variant](x, w)
    out = run(xv, wv, b)
    expected = reference(xv, wv, b)
    error = ((out.double() - expected).norm() / expected.norm()).item()
    assert error <= 1e-5
    nn_out = F.conv_transpose3d(xv, wv, b, (2, 1, 2), (1, 0, 1), (1, 0, 0), 2, (1, 2, 1))
    for fmt in (torch.contiguous_format, CL):
        assert out.is_contiguous(memory_format=fmt) == nn_out.is_contiguous(memory_format=fmt), fmt
