"""The tap-rows form of the shifted-window GEMM (stride 1, groups of few target
channels, sm_90a; elsewhere these cases run on the other mainloops) against float64,
on what its epilogue's width-tap sum and overlapping column blocks find hard: one and
two 64-row halves, channels not a multiple of 8, dilation with output padding, groups,
long lines, 16 width taps, tiny planes, more tiles than multiprocessors, the forward
and the stride-1 input gradient. Both settings (CT3D_TAP_ROWS=1 and =0) must meet the
bar. Skipped without CUDA."""

import pytest
import torch

from cases import conv_args, edge_case, make_tensors, reference, relative_error
from conftest import requires_cuda
from test_cuda_op import FLOAT32_BAR, poison_allocator

pytestmark = requires_cuda

# (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation)
ONE = (1, 1, 1)
ZERO = (0, 0, 0)
CASES = [
    (2, 32, 16, (3, 5, 40), (3, 5, 7), ONE, ZERO, ZERO, 1, ONE),       # 112 rows: 2 halves
    (2, 20, 16, (4, 6, 30), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),        # 48 rows: 1 half
    (1, 48, 24, (4, 7, 33), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),        # 72 rows, as L1-70
    (2, 37, 5, (3, 4, 50), (2, 3, 7), ONE, (0, 1, 2), ZERO, 1, ONE),   # 5 of 8 rows per tap
    (2, 24, 12, (3, 5, 20), (3, 3, 3), ONE, (2, 1, 3), (1, 0, 1), 1, (2, 1, 2)),
    (2, 32, 32, (3, 4, 18), (3, 3, 3), ONE, ZERO, ZERO, 2, ONE),       # 16 per group
    (1, 16, 8, (2, 3, 400), (2, 2, 3), ONE, ZERO, ZERO, 1, ONE),
    (1, 16, 8, (2, 3, 40), (1, 1, 16), ONE, ZERO, ZERO, 1, ONE),       # 128 rows, span 15
    (3, 8, 16, ONE, (2, 2, 2), ONE, ZERO, ZERO, 1, ONE),
    (1, 16, 32, (3, 4, 9), (2, 3, 4), ONE, (0, 2, 3), ZERO, 1, (1, 2, 1)),
    (4, 16, 16, (6, 30, 70), (3, 5, 7), ONE, (1, 2, 3), ZERO, 1, ONE),  # many tiles per block
]


def check_forward(case, monkeypatch, mode, memory_format=torch.contiguous_format):
    monkeypatch.setenv("CT3D_TAP_ROWS", mode)
    monkeypatch.setenv("CT3D_SHIFTED_WINDOW", "0")
    x, w, b = make_tensors(case, torch.float32, "cuda")
    x = x.contiguous(memory_format=memory_format)
    poison_allocator(64 << 20)
    got = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))
    expected = reference(x, w, b, case)
    assert got.shape == expected.shape and not got.isnan().any(), case
    assert relative_error(got, expected) <= FLOAT32_BAR, (relative_error(got, expected), case)


@pytest.mark.parametrize("mode", ["1", "0"])
@pytest.mark.parametrize("params", CASES)
def test_forward_cases(params, mode, monkeypatch):
    check_forward(edge_case(params, bias=True), monkeypatch, mode)


def test_forward_channels_last_output(monkeypatch):
    check_forward(edge_case(CASES[0], bias=True), monkeypatch, "1", torch.channels_last_3d)


@pytest.mark.parametrize("mode", ["1", "0"])
@pytest.mark.parametrize("params", [CASES[0], CASES[3], CASES[4], CASES[7]])
def test_input_gradient_cases(params, mode, monkeypatch):
    """The stride-1 input gradient has the input's channels as targets: swap cin and
    cout so that they are the narrow side."""
    batch, cin, cout, *rest = params
    case = edge_case((batch, cout, cin, *rest), bias=False)
    monkeypatch.setenv("CT3D_TAP_ROWS", mode)
    monkeypatch.setenv("CT3D_SHIFTED_WINDOW", "0")
    x, w, _ = make_tensors(case, torch.float32, "cuda")
    stride, padding, output_padding, groups, dilation = conv_args(case)
    grad_output = torch.randn(reference(x, w, None, case).shape, device="cuda")
    poison_allocator(64 << 20)
    got = torch.ops.ct3d.conv_transpose3d_input_backward(
        grad_output, w, list(x.shape[2:]), stride, padding, groups, dilation)
    expected = torch.ops.aten.convolution_backward(
        grad_output.double().cpu(), x.double().cpu(), w.double().cpu(), None, stride, padding,
        dilation, True, output_padding, groups, [True, False, False])[0]
    assert got.shape == expected.shape and not got.isnan().any(), case
    assert relative_error(got, expected) <= FLOAT32_BAR, (relative_error(got, expected), case)


def test_forward_keeps_the_scale_of_its_inputs(monkeypatch):
    """The split operands keep float32's exponent range: same error at 1e-18 and 1e18."""
    monkeypatch.setenv("CT3D_TAP_ROWS", "1")
    case = edge_case(CASES[0], bias=False)
    x, w, _ = make_tensors(case, torch.float32, "cuda")
    for scale in (1e-18, 1e18):
        got = torch.ops.ct3d.conv_transpose3d(x * scale, w, None, *conv_args(case))
        expected = reference(x * scale, w, None, case)
        assert relative_error(got, expected) <= FLOAT32_BAR, scale


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_forward_half_types_one_product(dtype, monkeypatch):
    """Widened half operands are exact in TF32 (one product each): within 5 % of the
    float64 result rounded once."""
    monkeypatch.setenv("CT3D_TAP_ROWS", "1")
    case = edge_case(CASES[1], bias=True)
    x, w, b = make_tensors(case, dtype, "cuda")
    got = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))
    expected = reference(x, w, b, case)
    assert got.dtype == dtype
    bound = 1.05 * relative_error(expected.to(dtype), expected)
    assert relative_error(got, expected) <= bound, (relative_error(got, expected), bound)
