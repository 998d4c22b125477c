"""The weight gradient's wgmma mainloop (sm_90a; elsewhere these cases run on
mma.sync) against float64, on the shapes its tiling finds hard: width tails of the
32-position tiles, strided and dilated widths, (tap, channel) rows that cross depth
and height taps, folded groups, blocks of input channels, several chunks of samples.
Both mainloops (the forms wgrad-wgmma and wgrad-mma-sync) must meet the bar, and the
wgmma one with stages of 16 and of 32 positions (wgrad-wgmma-16, wgrad-wgmma-32).
Skipped without CUDA."""

import random

import pytest
import torch

from cases import conv_args, edge_case, make_tensors, random_case, relative_error
from conftest import requires_cuda
from forms import force
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
    # 432 rows (a last block of 48) with a 12-position width tail; 780 rows (a last
    # block of 12) with a 4-position tail; 216 rows in one block (KERNEL_LOG "leaves out empty
    # m-tiles").
    (2, 32, 16, (3, 4, 44), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), 1, (1, 1, 1)),
    (2, 64, 13, (2, 3, 36), (3, 4, 5), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    # Float32 takes wgmma only for an even count of output channels (its A rows come in
    # adjacent pairs, KERNEL_LOG "A rows loaded in pairs"); 13 runs on mma.sync, 14 has a last
    # block of 72.
    (2, 64, 14, (2, 3, 36), (3, 4, 5), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    (2, 16, 8, (3, 5, 48), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), 1, (1, 1, 1)),
    # 200 output channels at stride 2: 32-position stages leave one slot, so float32
    # takes 16-position ones (KERNEL_LOG "weight-gradient stages of 16 positions").
    (1, 64, 200, (2, 3, 20), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), 1, (1, 1, 1)),
]


MAINLOOPS = {"1": "wgrad-wgmma", "0": "wgrad-mma-sync"}


def check_weight_gradient(case, mode, form=None):
    """mode "1": the wgmma mainloop, "0": mma.sync; form: a form to force instead."""
    force(form or MAINLOOPS[mode])
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
def test_weight_gradient_cases(params, mode):
    check_weight_gradient(edge_case(params, bias=False), mode)


@pytest.mark.parametrize("form", ["wgrad-wgmma-16", "wgrad-wgmma-32"])
@pytest.mark.parametrize("params", CASES)
def test_weight_gradient_stage_positions(params, form):
    """float32 stages of 16 positions (the rule's where a line is at most 16 wide) and
    of 32, each forced on every case (blocks of at most 32 input channels take 2 m-tiles
    a warpgroup where that needs no more row blocks, else 3)."""
    check_weight_gradient(edge_case(params, bias=False), "1", form)


def has_tail_launch(params):
    """A width of at least one 32-position tile and a rest of 1 to 16 positions, one
    group, width stride 1: float32 takes the rest in a second launch of 16-position
    stages (KERNEL_LOG wt1)."""
    width, width_stride, groups = params[3][2], params[5][2], params[8]
    return width > 32 and 0 < width % 32 <= 16 and width_stride == 1 and groups == 1


@pytest.mark.parametrize("params", [c for c in CASES if has_tail_launch(c)])
def test_weight_gradient_tail_launch(params):
    """Lines' last positions in their own launch."""
    check_weight_gradient(edge_case(params, bias=False), "1")


@pytest.mark.parametrize("width, stride, kernels", [(48, 1, 2), (64, 1, 1), (48, 2, 1)])
def test_tail_launch_runs_where_a_line_ends_in_a_short_tile(width, stride, kernels):
    """On sm_90 a 48-wide line at stride 1 runs as one 32-position stage in one kernel
    and one of 16 in a second (two weight-gradient kernels); a 64-wide one, or one at
    stride 2, in one kernel."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the wgmma form is sm_90a's")
    case = edge_case((2, 32, 16, (3, 4, width), (3, 3, 3), (stride,) * 3, (1, 1, 1),
                      (stride - 1,) * 3, 1, (1, 1, 1)), bias=False)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        check_weight_gradient(case, "1")
        torch.cuda.synchronize()
    names = {event.name for event in profile.events() if "weight_gradient_wgmma" in event.name}
    assert len(names) == kernels, names


@pytest.mark.parametrize("index", range(40))
def test_weight_gradient_random_widths_multiple_of_four(index):
    rng = random.Random(52000 + index)
    case = random_case(rng, max_spatial=9, max_channels=40)
    case["batch"] = rng.randint(1, 3)
    case["batched"] = True  # the weight-gradient op takes 5-D input
    case["spatial"][2] = 4 * rng.randint(1, 12)
    check_weight_gradient(case, "1")


def test_weight_gradient_keeps_the_scale_of_its_inputs():
    """3xTF32 keeps float32's exponent range: tiny and huge inputs, same error."""
    case = edge_case(CASES[0], bias=False)
    force("wgrad-wgmma")
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
def test_weight_gradient_half_types_one_product(params, dtype):
    """Widened float16 and bfloat16 operands (half-widened) are exact in TF32: one
    product each. The result must be within 5 % of the float64 gradient rounded once
    (as test_cuda_backward's half test)."""
    force("wgrad-wgmma", "half-widened")
    check_half_weight_gradient(edge_case(params, bias=False), dtype)


# The half form (float16 / bfloat16 as they are, sm_90a): widths a multiple of 8 (its
# 16-byte input loads), output channels per folded group a multiple of 8 (ldmatrix
# reads 8 rows of one tap). Width tails and widths under one 32-position tile, strided
# and dilated widths, rows crossing (depth, height) pairs, folded groups, two blocks of
# input channels (forced), and a layer it does not take (12 output channels: widened).
HALF_CASES = [
    (2, 32, 64, (3, 5, 40), (3, 5, 5), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    (2, 48, 24, (4, 6, 64), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), 1, (1, 1, 1)),
    (1, 32, 16, (3, 4, 8), (3, 5, 7), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    (2, 32, 32, (3, 4, 40), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), 1, (1, 1, 1)),
    (2, 16, 64, (3, 3, 16), (3, 3, 3), (2, 2, 3), (1, 1, 1), (0, 0, 2), 1, (2, 2, 2)),
    (2, 32, 32, (3, 4, 48), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), 4, (1, 1, 1)),
    (1, 100, 24, (2, 3, 16), (2, 2, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    (2, 64, 96, (2, 3, 8), (3, 2, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    (3, 24, 8, (2, 9, 24), (1, 7, 5), (1, 1, 1), (0, 3, 0), (0, 0, 0), 1, (1, 1, 2)),
    (2, 8, 12, (2, 2, 8), (2, 2, 9), (1, 1, 4), (0, 0, 0), (0, 0, 3), 1, (1, 1, 1)),
]


def half_gradients(case, dtype):
    """ct3d's three gradients of the case through the all-gradients op (the bias
    gradient from the weight gradient's staging pass), and float64's."""
    x, w, b = make_tensors(case, dtype, "cuda")
    stride, padding, output_padding, groups, dilation = conv_args(case)
    grad_output = torch.randn(
        torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case)).shape, device="cuda",
        dtype=dtype)
    poison_allocator(64 << 20)
    got = torch.ops.ct3d.conv_transpose3d_backward(
        grad_output, x, w, stride, padding, groups, dilation, [True, True, True])
    reference = torch.ops.aten.convolution_backward(
        grad_output.double().cpu(), x.double().cpu(), w.double().cpu(), [b.shape[0]], stride,
        padding, dilation, True, output_padding, groups, [True, True, True])
    return got, reference


@pytest.mark.parametrize("forms", [["wgrad-wgmma"], []])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", HALF_CASES)
def test_half_form_gradients(params, dtype, forms):
    """Each gradient within 5 % of its float64 reference rounded once, and for the
    weight gradient the same alone (the weight-backward op) and widened
    (half-widened)."""
    force(*forms)
    case = edge_case(params, bias=True)
    got, reference = half_gradients(case, dtype)
    for name, ours, ref in zip(("input", "weight", "bias"), got, reference):
        assert ours.dtype == dtype and ours.shape == ref.shape, (name, case)
        bound = 1.05 * relative_error(ref.to(dtype), ref)
        assert relative_error(ours, ref) <= bound, (name, relative_error(ours, ref), bound, case)
    for widened in ([], ["half-widened"]):
        force(*forms, *widened)
        check_half_weight_gradient(case, dtype)


def check_half_weight_gradient(case, dtype):
    """The weight-backward op alone: within 5 % of the float64 gradient rounded once."""
    x, w, _ = make_tensors(case, dtype, "cuda")
    stride, padding, output_padding, groups, dilation = conv_args(case)
    grad_output = torch.randn(
        torch.ops.ct3d.conv_transpose3d(x, w, None, *conv_args(case)).shape, device="cuda",
        dtype=dtype)
    poison_allocator(64 << 20)
    got = torch.ops.ct3d.conv_transpose3d_weight_backward(
        x, grad_output, list(w.shape[2:]), stride, padding, groups, dilation)
    reference = torch.ops.aten.convolution_backward(
        grad_output.double().cpu(), x.double().cpu(), w.double().cpu(), None, stride, padding,
        dilation, True, output_padding, groups, [False, True, False])[1]
    bound = 1.05 * relative_error(reference.to(dtype), reference)
    assert got.dtype == dtype and relative_error(got, reference) <= bound, case


def test_half_form_runs_on_hopper():
    """On sm_90 the half weight gradient is its own kernel (not the widened float32
    one): the profiler sees WgradHalfOperands."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the half form is sm_90a's")
    case = edge_case(HALF_CASES[0], bias=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        half_gradients(case, torch.float16)
        torch.cuda.synchronize()
    names = [event.name for event in profile.events()]
    assert any("WgradHalfOperands" in name for name in names), set(names)


@pytest.mark.parametrize("cout, wgmma", [(14, True), (13, False)])
def test_float32_form_takes_even_output_channels(cout, wgmma):
    """On sm_90 the float32 wgmma weight gradient (WgradTf32Operands) runs, forced, for
    an even count of output channels, and leaves an odd one to mma.sync."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the wgmma form is sm_90a's")
    case = edge_case((2, 64, cout, (2, 3, 36), (3, 4, 5), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1,
                      (1, 1, 1)), bias=False)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        check_weight_gradient(case, "1")
        torch.cuda.synchronize()
    names = [event.name for event in profile.events()]
    assert any("WgradTf32Operands" in name for name in names) == wgmma, set(names)
