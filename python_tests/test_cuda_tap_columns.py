"""The tap-columns form of the tap-rows kernel (float32, sm_90a: the window's positions
on wgmma's M, 48, 64, 72, 80, 96, 112, 144 or 160 (width tap, target channel) rows on N;
elsewhere these cases run on the other mainloops) against float64, with
the form forced: each row count, channels that leave padding rows, groups, dilation
and output padding, long lines and tiny planes, many tiles per block, the input
gradient, exact operands (float16 widened) and the input's scale; each with the window
unsplit and split in registers, read by TMA from the source where it can (widths a
multiple of 4, channels of one group per box; as line tiles, the form tap-columns-lines,
where a block's positions are whole source lines, as flat tiles, tap-columns-flat, or as
window boxes, tap-columns-boxes) or from staged planes (tap-columns-staged). Skipped
without CUDA."""

import pytest
import torch

from cases import ONE, ZERO, conv_args, edge_case, make_tensors, reference, relative_error
from conftest import requires_cuda
from test_cuda_op import FLOAT32_BAR, poison_allocator
from window_checks import (check_forward, check_half_forward, check_input_gradient,
                           check_input_scales, force_engine_forms)

pytestmark = requires_cuda

# (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation)
CASES = [
    (1, 48, 24, (4, 7, 33), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),          # as L1-70
    (2, 20, 21, (3, 5, 30), (3, 3, 3), ONE, ZERO, ZERO, 1, ONE),         # 3 padding rows per tap
    (2, 40, 48, (3, 4, 18), (2, 3, 3), ONE, (1, 0, 2), ZERO, 2, ONE),    # 24 per group
    (2, 16, 24, (3, 5, 20), (3, 3, 3), ONE, (2, 1, 3), (1, 0, 1), 1, (2, 1, 2)),
    (1, 8, 24, (2, 3, 700), (1, 2, 3), ONE, ZERO, ZERO, 1, ONE),        # lines past a block
    (3, 24, 17, ONE, (2, 2, 3), ONE, ZERO, ZERO, 1, ONE),               # tiny planes
    (2, 32, 24, (8, 40, 90), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),        # many tiles per block
    (2, 32, 16, (3, 6, 48), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),         # 48 rows
    (2, 24, 13, (3, 5, 31), (2, 3, 3), ONE, (1, 1, 0), ZERO, 1, ONE),  # 48 rows, 3 padding
    (2, 32, 16, (3, 6, 40), (3, 5, 5), ONE, (1, 2, 2), ZERO, 1, ONE),  # 80 rows
    (2, 64, 32, (3, 5, 36), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),         # 96 rows
    (2, 32, 64, (2, 5, 21), (3, 3, 3), ONE, ZERO, (0, 0, 0), 2, (1, 1, 2)),  # 96, groups
    (2, 48, 48, (4, 6, 40), (3, 3, 3), ONE, ZERO, ZERO, 1, ONE),         # 144 rows, as L1-61
    (2, 20, 45, (3, 5, 150), (2, 3, 3), ONE, (1, 1, 1), (0, 0, 0), 1, ONE),  # 144, 3 padding
    (2, 32, 16, (3, 6, 40), (2, 3, 4), ONE, (1, 1, 1), ZERO, 1, ONE),  # 64 rows
    (2, 24, 26, (3, 4, 30), (2, 2, 4), ONE, ZERO, ZERO, 2, ONE),       # 64, groups, padding
    (2, 32, 16, (3, 6, 64), (3, 5, 7), ONE, ZERO, ZERO, 1, ONE),       # 112 rows, as L1-58
    (1, 16, 13, (2, 3, 200), (2, 2, 7), ONE, (0, 1, 3), ZERO, 1, ONE),  # 112, 3 padding
    (2, 32, 32, (3, 6, 40), (3, 3, 5), ONE, (1, 1, 2), ZERO, 1, ONE),  # 160 rows
    (2, 64, 60, (2, 4, 37), (2, 3, 5), ONE, ZERO, ZERO, 2, (1, 1, 2)),  # 160, groups, dilation
    # Widths a multiple of 4: the boxes (their sources' widths; the input gradient's is
    # the output's, 2 more for 3 taps without padding).
    (1, 48, 24, (4, 7, 32), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),          # 72 rows, boxes
    (2, 20, 21, (3, 5, 28), (3, 3, 3), ONE, ZERO, ZERO, 1, ONE),         # channels past the source
    (2, 32, 64, (2, 5, 20), (3, 3, 3), ONE, ZERO, ZERO, 2, (1, 1, 2)),  # 96, groups of 16
    (2, 64, 60, (2, 4, 36), (2, 3, 5), ONE, ZERO, ZERO, 2, (1, 1, 2)),  # 160, groups of 32
    (2, 32, 24, (8, 40, 88), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),        # many tiles per block
    (2, 48, 48, (3, 5, 4), (3, 3, 3), ONE, ZERO, ZERO, 1, ONE),          # lines of 4: 23 a box
    (2, 48, 48, (4, 6, 38), (3, 3, 3), ONE, ZERO, ZERO, 1, ONE),         # 144, gradient's 40
    (2, 32, 32, (3, 6, 38), (3, 3, 5), ONE, (1, 1, 1), ZERO, 1, ONE),   # 160, gradient's 40
    (2, 48, 48, (8, 40, 32), (3, 3, 3), ONE, ZERO, ZERO, 1, ONE),        # 144, 220 line tiles
]
FORMS = ["lines", "flat", "boxes", "staged"]


def forms(form):
    return [f"tap-columns-{form}"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("params", CASES)
def test_forward_cases(params, form):
    check_forward(edge_case(params, bias=True), forms(form))


@pytest.mark.parametrize("form", FORMS)
def test_forward_channels_last(form):
    check_forward(edge_case(CASES[0], bias=True), forms(form),
                  torch.channels_last_3d)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("params", [CASES[0], CASES[3], CASES[7], CASES[9], CASES[10],
                                    CASES[12], CASES[14], CASES[16], CASES[18], CASES[20],
                                    CASES[26], CASES[27]])
def test_input_gradient_cases(params, form):
    """cin and cout swapped, so that the input gradient's targets are the narrow side."""
    check_input_gradient(params, forms(form))


@pytest.mark.parametrize("form", FORMS)
def test_forward_keeps_the_scale_of_its_inputs(form):
    check_input_scales(edge_case(CASES[1], bias=False), forms(form))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("params", [CASES[0], CASES[2], CASES[9], CASES[12], CASES[16]])
def test_forward_exact_operands(params, form):
    """float16 widened to float32 (half-widened): exact in TF32."""
    check_half_forward(edge_case(params, bias=True), torch.float16,
                       forms(form) + ["half-widened"])


@pytest.mark.parametrize("cin,kernel", [(32, (3, 3, 5)), (48, (3, 3, 3)), (16, (2, 3, 3))])
def test_all_gradients_op_with_the_tap_columns_input_gradient(cin, kernel):
    """The default rules: the fused backward leaves the stride-1 input gradient (160, 144
    and 48 rows) to the tap-columns form instead of the GEMM on its shared staged copy
    of grad_output; every mask against float64."""
    torch.manual_seed(cin)
    x = torch.rand(2, cin, 3, 5, 37, device="cuda")
    w = torch.randn(cin, 16, *kernel, device="cuda")
    args = ([1, 1, 1], [1, 1, 1], 1, [1, 1, 1])
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, *args[:2], [0, 0, 0], *args[2:])
    grad_output = torch.randn_like(out)
    reference = torch.ops.aten.convolution_backward(
        grad_output.double(), x.double(), w.double(), [16], *args[:2], [1, 1, 1], True,
        [0, 0, 0], 1, [True, True, True])
    for mask in ([True, True, True], [True, True, False], [True, False, False]):
        poison_allocator(64 << 20)
        got = torch.ops.ct3d.conv_transpose3d_backward(grad_output, x, w, *args, mask)
        for name, wanted, ours, ref in zip(("input", "weight", "bias"), mask, got, reference):
            assert (ours is not None) == wanted, (name, mask)
            if wanted:
                error = relative_error(ours, ref)
                assert error <= FLOAT32_BAR, (name, mask, error)


@pytest.mark.parametrize("form", ["lines", "flat", "boxes", "staged"])
def test_the_boxes_take_the_place_of_the_staging_pass(form):
    """L1-61's geometry (64 wide): with boxes no staging kernel runs."""
    case = edge_case((2, 48, 48, (4, 6, 64), (3, 3, 3), ONE, ZERO, ZERO, 1, ONE), bias=True)
    force_engine_forms(forms(form))
    x, w, b = make_tensors(case, torch.float32, "cuda")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        got = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))
        torch.cuda.synchronize()
    kernels = [event.name for event in profile.events() if event.device_type.name == "CUDA"]
    assert any("wgmma_tap_rows_kernel" in name for name in kernels), kernels
    assert any("stage_quads" in name for name in kernels) == (form == "staged"), kernels
    assert relative_error(got, reference(x, w, b, case)) <= FLOAT32_BAR


@pytest.mark.parametrize("offset", [1, 4])
def test_a_source_off_16_bytes_or_strided_takes_the_staged_planes(offset):
    """TMA needs a 16-byte aligned base: one 4 floats in is boxed, one float in is staged;
    either is right. A view with a step along the width is staged too."""
    case = edge_case((2, 48, 48, (4, 6, 40), (3, 3, 3), ONE, ZERO, ZERO, 1, ONE), bias=True)
    force_engine_forms(forms("boxes"))
    x, w, b = make_tensors(case, torch.float32, "cuda")
    storage = torch.full((x.numel() + offset,), float("nan"), device="cuda")
    shifted = storage[offset:].view(x.shape)
    shifted.copy_(x)
    strided = torch.full((*x.shape[:4], 2 * x.shape[4]), float("nan"), device="cuda")
    strided[..., ::2] = x
    expected = reference(x, w, b, case)
    for source in (shifted, strided[..., ::2]):
        poison_allocator(64 << 20)
        got = torch.ops.ct3d.conv_transpose3d(source, w, b, *conv_args(case))
        assert relative_error(got, expected) <= FLOAT32_BAR
