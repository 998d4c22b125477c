"""The weight gradient's wgmma mainloop (sm_90a; elsewhere these cases run on
mma.sync) against float64, on the shapes its tiling finds hard: width tails of the
32-position tiles, strided and dilated widths, (tap, channel) rows that cross depth
and height taps, folded groups, blocks of input channels, several chunks of samples.
Both mainloops (CT3D_WGRAD_WGMMA=1 and =0) must meet the bar. Skipped without CUDA."""

import random

import pytest
import torch

from cases import conv_args, edge_case, make_tensors, random_case, relative_error
from conftest import requires_cuda
from test_cuda_op import FLOAT32_BAR, poison_allocator

pytestmark = requires_cuda

# (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation);
# every width a multiple of 4 (the wgmma mainloop's 16-byte input loads).
CASES = [
    (2, 32, 64, (3, 5, 36), (3, 5, 5), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    (2, 48, 24, (4, 6, 68), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), 1, (1, 1, 1)),
    (1, 32, 16, (3, 4, 8), (3, 5, 7), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    (2, 32, 32, (3, 4, 40), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), 1, (1, 1, 1)),
    (2, 16, 64, (3, 3, 12), (3, 3, 3), (2, 2, 3), (1, 1, 1), (0, 0, 2), 1, (2, 2, 2)),
    (2, 32, 32, (3, 4, 48), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), 4, (1, 1, 1)),
    (1, 100, 20, (2, 3, 16), (2, 2, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    (2, 64, 100, (2, 3, 4), (3, 2, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    (3, 24, 3, (2, 9, 20), (1, 7, 5), (1, 1, 1), (0, 3, 0), (0, 0, 0), 1, (1, 1, 2)),
    (2, 8, 8, (2, 2, 4), (2, 2, 9), (1, 1, 4), (0, 0, 0), (0, 0, 3), 1, (1, 1, 1)),
]


def check_weight_gradient(case, mode, monkeypatch):
    monkeypatch.setenv("CT3D_WGRAD_WGMMA", mode)
    x, w, _ = make_tensors(case, torch.float32, "cuda")
    stride, padding, output_padding, groups, dilation = conv_args(case)
    out_shape = torch.ops.ct3d.conv_transpose3d(x, w, None, *conv_args(case)).shape
    grad_output = torch.randn(out_shape, device="cuda")
    poison_allocator(64 << 20)
    got = torch.ops.ct3d.conv_transpose3d_weight_backward(
        x, grad_output, list(w.shape[2:]), stride, padding, groups, dilation)
    reference = torch.ops.aten.convolution_backward(
        grad_output.double().cpu(), x.double().cpu(), w.double().cpu(), None, stride, padding,
        dilation, True, output_padding, groups, [False, True, False])[1]
    assert got.shape == w.shape and not got.isnan().any(), case
    assert relative_error(got, reference) <= FLOAT32_BAR, (relative_error(got, reference), case)


@pytest.mark.parametrize("mode", ["1", "0"])
@pytest.mark.parametrize("params", CASES)
def test_weight_gradient_cases(params, mode, monkeypatch):
    check_weight_gradient(edge_case(params, bias=False), mode, monkeypatch)


@pytest.mark.parametrize("index", range(40))
def test_weight_gradient_random_widths_multiple_of_four(index, monkeypatch):
    rng = random.Random(52000 + index)
    case = random_case(rng, max_spatial=9, max_channels=40)
    case["batch"] = rng.randint(1, 3)
    case["batched"] = True  # the weight-gradient op takes 5-D input
    case["spatial"][2] = 4 * rng.randint(1, 12)
    check_weight_gradient(case, "1", monkeypatch)


def test_weight_gradient_keeps_the_scale_of_its_inputs(monkeypatch):
    """3xTF32 keeps float32's exponent range: tiny and huge inputs, same error."""
    case = edge_case(CASES[0], bias=False)
    monkeypatch.setenv("CT3D_WGRAD_WGMMA", "1")
    x, w, _ = make_tensors(case, torch.float32, "cuda")
    stride, padding, output_padding, groups, dilation = conv_args(case)
    grad_output = torch.randn(
        torch.ops.ct3d.conv_transpose3d(x, w, None, *conv_args(case)).shape, device="cuda")
    for scale in (1e-18, 1e18):
        xs, gs = x * scale, grad_output / scale * 1e-3
        got = torch.ops.ct3d.conv_transpose3d_weight_backward(
            xs, gs, list(w.shape[2:]), stride, padding, groups, dilation)
        reference = torch.ops.aten.convolution_backward(
            gs.double().cpu(), xs.double().cpu(), w.double().cpu(), None, stride, padding,
            dilation, True, output_padding, groups, [False, True, False])[1]
        assert relative_error(got, reference) <= FLOAT32_BAR, scale


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", CASES[:4])
def test_weight_gradient_half_types_one_product(params, dtype, monkeypatch):
    """Widened float16 and bfloat16 operands are exact in TF32: one product each. The
    result must be within 5 % of the float64 gradient rounded once (as
    test_cuda_backward's half test)."""
    monkeypatch.setenv("CT3D_WGRAD_WGMMA", "1")
    case = edge_case(params, bias=False)
    x, w, _ = make_tensors(case, dtype, "cuda")
    stride, padding, output_padding, groups, dilation = conv_args(case)
    grad_output = torch.randn(
        torch.ops.ct3d.conv_transpose3d(x, w, None, *conv_args(case)).shape, device="cuda",
        dtype=dtype)
    got = torch.ops.ct3d.conv_transpose3d_weight_backward(
        x, grad_output, list(w.shape[2:]), stride, padding, groups, dilation)
    reference = torch.ops.aten.convolution_backward(
        grad_output.double().cpu(), x.double().cpu(), w.double().cpu(), None, stride, padding,
        dilation, True, output_padding, groups, [False, True, False])[1]
    assert got.dtype == dtype
    bound = 1.05 * relative_error(reference.to(dtype), reference)
    assert relative_error(got, reference) <= bound, (relative_error(got, reference), bound, case)
