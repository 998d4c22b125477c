"""The Winograd forward (ops/cuda/winograd: F(m, r) along height and width around the
engine) against float64, forced on (the form winograd) so that every case takes it: each
kernel size it transforms (2 to 7), paddings from 0 to past the kernel, depth stride,
dilation and output padding (the engine's part), groups, outputs smaller than one tile,
unbatched input; the input transform into the engine's staged source and into planes;
the engine under it on both mainloops (max_capability 8.0: mma.sync); the input's
scale; non-finite inputs and weights (the exact rerun); a channels-last output (not
taken: the engine alone); the stride-1 input gradient through it, alone and in a
training step's backward. Outputs are poisoned first. Skipped without CUDA."""

import pytest
import torch
import torch.nn.functional as F

from cases import ONE, ZERO, conv_args, edge_case, make_tensors, reference, relative_error
import ct3d
from conftest import requires_cuda
from forms import force
from test_cuda_op import FLOAT32_BAR
from window_checks import check_forward, check_input_gradient, check_input_scales

pytestmark = requires_cuda

# (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation)
CASES = [
    (2, 32, 64, (3, 8, 12), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),
    (1, 64, 64, (2, 9, 10), (3, 3, 3), ONE, ZERO, ZERO, 1, ONE),
    (1, 16, 48, (3, 7, 11), (3, 5, 5), ONE, (1, 2, 2), ZERO, 1, ONE),
    (2, 24, 40, (2, 6, 9), (1, 2, 4), ONE, (0, 0, 1), ZERO, 1, ONE),
    (1, 20, 36, (2, 5, 7), (2, 6, 7), ONE, (0, 1, 3), ZERO, 1, ONE),
    (1, 32, 32, (3, 6, 6), (3, 3, 3), ONE, (0, 2, 3), ZERO, 1, ONE),       # padding past the kernel
    (2, 16, 32, (4, 5, 6), (3, 3, 3), (2, 1, 1), (1, 1, 1), (1, 0, 0), 1, (2, 1, 1)),
    (2, 48, 96, (2, 6, 8), (3, 3, 3), ONE, ONE, ZERO, 3, ONE),
    (1, 16, 16, (2, 2, 1), (2, 3, 3), ONE, ZERO, ZERO, 1, ONE),            # smaller than a tile
    (1, 8, 24, (2, 3, 30), (1, 1, 3), ONE, ZERO, ZERO, 1, ONE),            # width only
]


WINOGRAD = ["winograd"]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("params", CASES)
def test_forward_cases(params, bias):
    """The input transform into the engine's staged source where both dimensions are
    transformed without a halo, else into planes that the engine stages again."""
    check_forward(edge_case(params, bias=bias), WINOGRAD)


@pytest.mark.parametrize("params", [CASES[0], CASES[2], CASES[7]])
def test_forward_on_the_mma_sync_engine(params):
    ct3d.set_option("max_capability", "8.0")
    check_forward(edge_case(params, bias=True), WINOGRAD)


def test_forward_channels_last_output():
    check_forward(edge_case(CASES[0], bias=True), WINOGRAD, torch.channels_last_3d)


def test_forward_unbatched():
    force("winograd")
    x = torch.randn(32, 3, 8, 12, device="cuda")
    w = torch.randn(32, 16, 3, 3, 3, device="cuda")
    got = torch.ops.ct3d.conv_transpose3d(x, w, None, [1], [1], [0], 1, [1])
    expected = F.conv_transpose3d(x.double().cpu(), w.double().cpu(), None, 1, 1)
    assert got.shape == expected.shape
    assert relative_error(got, expected) <= FLOAT32_BAR


def test_forward_keeps_the_scale_of_its_inputs():
    check_input_scales(edge_case(CASES[1], bias=False), WINOGRAD)


@pytest.mark.parametrize("where", ["input", "weight"])
@pytest.mark.parametrize("special", [float("nan"), float("inf")])
def test_non_finite_values_reach_only_their_outputs(where, special):
    """A transform mixes the values of a tile (and Inf - Inf is NaN): the exact rerun
    gives the outputs the convolution itself gives."""
    force("winograd")
    case = edge_case(CASES[0], bias=True)
    x, w, b = make_tensors(case, torch.float32, "cuda")
    if where == "input":
        x[1, 3, 1, 4, 5] = special
    else:
        w[3, 7, 1, 1, 2] = special
    got = torch.ops.ct3d.conv_transpose3d(x, w, b, [1], [1], [0], 1, [1])
    expected = reference(x, w, b, case)
    assert torch.equal(got.isnan().cpu(), expected.isnan())
    assert torch.equal(got.isinf().cpu(), expected.isinf())
    finite = expected.isfinite()
    assert relative_error(got.cpu()[finite], expected[finite]) <= FLOAT32_BAR


def test_large_values_that_overflow_a_transform():
    """Inputs near float32's top: the transformed tile overflows where the convolution
    does not; the exact rerun gives the finite result."""
    force("winograd")
    case = edge_case(CASES[1], bias=False)
    x, w, _ = make_tensors(case, torch.float32, "cuda")
    x = x.sign() * 3e37
    w = w * 1e-3
    got = torch.ops.ct3d.conv_transpose3d(x, w, None, [1], [0], [0], 1, [1])
    expected = reference(x, w, None, case)
    assert expected.isfinite().all()
    assert got.isfinite().all()
    assert relative_error(got, expected) <= FLOAT32_BAR


# The stride-1 input gradient: the Winograd forward of grad_output with the weights
# flipped and their channels swapped (check_input_gradient swaps the case's channels).
@pytest.mark.parametrize("params", [CASES[0], CASES[1], CASES[2], CASES[3], CASES[4], CASES[7]])
def test_input_gradient_cases(params):
    check_input_gradient(params, WINOGRAD)


def test_all_gradients_through_autograd():
    """The training step's backward (all gradients in one call) on a wide stride-1 layer."""
    force("winograd")
    case = edge_case((2, 64, 64, (3, 8, 8), (3, 3, 3), ONE, ONE, ZERO, 1, ONE), bias=True)
    x, w, b = make_tensors(case, torch.float32, "cuda")
    xg, wg, bg = (t.clone().requires_grad_() for t in (x, w, b))
    y = torch.ops.ct3d.conv_transpose3d(xg, wg, bg, [1], [1], [0], 1, [1])
    gy = torch.randn_like(y)
    y.backward(gy)
    xd, wd, bd = (t.double().cpu().requires_grad_() for t in (x, w, b))
    F.conv_transpose3d(xd, wd, bd, 1, 1).backward(gy.double().cpu())
    for got, expected in ((xg.grad, xd.grad), (wg.grad, wd.grad), (bg.grad, bd.grad)):
        assert relative_error(got, expected) <= FLOAT32_BAR


@pytest.mark.parametrize("padding", [ONE, ZERO])
def test_forward_in_chunks_of_samples(padding):
    """A workspace of 1 MiB, less than one sample takes: one sample a chunk (each chunk's
    products land at its samples' offset), with two paddings (the input transform into
    the staged source or into planes)."""
    ct3d.set_option("winograd_workspace_mib", 1)
    check_forward(edge_case((3, 32, 64, (3, 16, 24), (3, 3, 3), ONE, padding, ZERO, 1, ONE),
                            bias=True), WINOGRAD)


def winograd_kernels(case):
    """The Winograd input-transform kernels a forward of the case launches (its output
    checked against float64)."""
    x, w, b = make_tensors(case, torch.float32, "cuda")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as trace:
        got = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))
        torch.cuda.synchronize()
    assert relative_error(got, reference(x, w, b, case)) <= FLOAT32_BAR
    return {e.name.split("(")[0].replace("void ct3d::cuda::", "") for e in trace.events()
            if "winograd_" in e.name and "input_kernel" in e.name}


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() < (9, 0),
                    reason="the default rule takes Winograd on sm_90 only")
@pytest.mark.parametrize("params,expected", [
    ((1, 64, 64, (3, 8, 12), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),
     {"winograd_staged_input_kernel<6, 6>"}),
    ((1, 32, 64, (3, 8, 12), (3, 5, 5), ONE, (1, 2, 2), ZERO, 1, ONE),
     {"winograd_input_kernel<8, 1>"}),                 # 32 x 3 reductions: height alone
    ((1, 48, 48, (3, 8, 12), (3, 3, 3), ONE, ONE, ZERO, 1, ONE), set()),   # the engine
    # Not measured faster, so the engine: a 3-tap height alone (32 x 3 reductions), and
    # kernels of 4 taps.
    ((1, 32, 64, (3, 8, 12), (3, 3, 3), ONE, ONE, ZERO, 1, ONE), set()),
    ((1, 64, 64, (3, 8, 12), (3, 4, 4), ONE, ONE, ZERO, 1, ONE), set()),
    # A 4-tap width beside a 3-tap height: the engine; beside a 5-tap one, that height alone.
    ((1, 64, 64, (3, 8, 12), (3, 3, 4), ONE, ONE, ZERO, 1, ONE), set()),
    ((1, 64, 64, (3, 8, 12), (3, 5, 4), ONE, (1, 2, 1), ZERO, 1, ONE),
     {"winograd_input_kernel<8, 1>"}),
])
def test_default_rule(params, expected):
    assert winograd_kernels(edge_case(params, bias=True)) == expected
