"""The op on the GPU against a float64 reference. Skipped without a CUDA GPU."""

import random

import pytest
import torch
import torch.nn.functional as F

from cases import conv_args, edge_case, make_tensors, random_case, reference, relative_error
from conftest import requires_cuda

pytestmark = requires_cuda

FLOAT32_BAR = 1e-5  # DEVELOPERS.md: ||out - ref|| / ||ref|| against float64


def poison_allocator(nbytes):
    """Fills freed allocator memory with NaN so an unwritten output element shows up."""
    torch.empty(nbytes // 4 + 1024, device="cuda").fill_(float("nan"))


def run_op(x, w, b, case):
    poison_allocator(8 << 20)
    return torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))


@pytest.mark.parametrize("index", range(200))
def test_random_sweep_float32(index):
    case = random_case(random.Random(7000 + index), max_spatial=9, max_channels=20)
    x, w, b = make_tensors(case, torch.float32, "cuda")
    out = run_op(x, w, b, case)
    assert out.is_cuda and out.dtype == torch.float32
    assert not out.isnan().any()
    assert relative_error(out, reference(x, w, b, case)) <= FLOAT32_BAR, case


@pytest.mark.parametrize("index", range(40))
def test_random_sweep_float64(index):
    case = random_case(random.Random(9000 + index))
    x, w, b = make_tensors(case, torch.float64, "cuda")
    assert relative_error(run_op(x, w, b, case), reference(x, w, b, case)) < 1e-12, case


@pytest.mark.parametrize("dtype,bar", [(torch.float16, 2e-3), (torch.bfloat16, 1.6e-2)])
def test_half_types_accumulate_in_float32(dtype, bar):
    for index in range(10):
        case = random_case(random.Random(11000 + index), max_channels=12)
        x, w, b = make_tensors(case, dtype, "cuda")
        out = run_op(x, w, b, case)
        assert out.dtype == dtype
        assert relative_error(out, reference(x, w, b, case)) <= bar, case


TILE_EDGE_CASES = [
    # (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation)
    (2, 40, 70, (5, 9, 13), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), 1, (1, 1, 1)),
    (1, 17, 9, (7, 11, 19), (2, 3, 4), (2, 3, 1), (0, 1, 2), (1, 2, 0), 1, (1, 1, 2)),
    (3, 24, 48, (4, 6, 33), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), 4, (1, 1, 1)),
    (2, 32, 64, (6, 7, 9), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), 1, (2, 2, 2)),
    (1, 6, 130, (3, 4, 5), (1, 2, 3), (3, 1, 2), (0, 0, 1), (2, 0, 1), 2, (1, 3, 1)),
    (2, 48, 24, (9, 10, 11), (3, 3, 3), (1, 1, 1), (2, 0, 1), (0, 0, 0), 3, (2, 1, 1)),
    (1, 8, 8, (1, 1, 1), (4, 4, 4), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    (5, 3, 5, (2, 30, 2), (33, 1, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    # Small groups, which the GEMM packs several to a tile (block-diagonal weights):
    (2, 32, 32, (4, 6, 9), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), 4, (1, 1, 1)),
    (2, 16, 16, (5, 6, 7), (3, 3, 3), (1, 2, 1), (1, 1, 1), (0, 1, 0), 16, (1, 1, 1)),
    (1, 15, 9, (4, 5, 6), (2, 3, 2), (1, 1, 2), (0, 1, 0), (0, 0, 1), 3, (1, 2, 1)),
    (1, 24, 120, (3, 4, 5), (2, 2, 2), (2, 1, 1), (0, 0, 0), (1, 0, 0), 6, (1, 1, 1)),
    (2, 12, 6, (6, 5, 7), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), 2, (1, 1, 1)),
]


@pytest.mark.parametrize("params", TILE_EDGE_CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_tile_edges_groups_dilation_output_padding(params, bias):
    case = edge_case(params, bias)
    x, w, b = make_tensors(case, torch.float32, "cuda")
    out = run_op(x, w, b, case)
    assert relative_error(out, reference(x, w, b, case)) <= FLOAT32_BAR


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", TILE_EDGE_CASES)
def test_half_types_are_rounded_once(params, dtype):
    """float16 and bfloat16 run the engine on operands widened to float32 (every one
    exact in TF32, so one TF32 product each is exact: mma.sync and wgmma tiles, folded
    groups): the result is within 5 % of the float64 reference rounded once."""
    case = edge_case(params, bias=True)
    x, w, b = make_tensors(case, dtype, "cuda")
    out = run_op(x, w, b, case)
    ref = reference(x, w, b, case)
    assert out.dtype == dtype
    assert relative_error(out, ref) <= 1.05 * relative_error(ref.to(dtype), ref), case


def test_kernelbench_shapes_scaled_down():
    from problems import PROBLEMS
    for problem in PROBLEMS:
        torch.manual_seed(problem.number)
        conv = torch.nn.ConvTranspose3d(**dict(problem.conv, bias=True)).cuda()
        x = torch.rand(problem.input_shape(batch=2, spatial_scale=4), device="cuda")
        poison_allocator(64 << 20)
        out = torch.ops.ct3d.conv_transpose3d(x, conv.weight, conv.bias, conv.stride, conv.padding,
                                              conv.output_padding, conv.groups, conv.dilation)
        ref = F.conv_transpose3d(x.double(), conv.weight.double(), conv.bias.double(), conv.stride,
                                 conv.padding, conv.output_padding, conv.groups, conv.dilation)
        assert relative_error(out, ref) <= FLOAT32_BAR, problem.label


@pytest.mark.parametrize("memory_format", [torch.contiguous_format, torch.channels_last_3d])
@pytest.mark.parametrize("with_bias", [False, True])
def test_outputs_no_tap_reaches_are_the_bias(memory_format, with_bias):
    # Stride 2 with dilation 2, and stride 3 over a kernel of 2: some output phases get
    # no tap at all; the op fills them with the bias and runs the GEMM on the rest.
    # The depth index no tap reaches: 0 in the first case, 1 in the second.
    for stride, dilation, kernel, empty_depth in (([2, 2, 2], [2, 2, 2], 3, 0),
                                                  ([3, 1, 3], [1, 1, 1], 2, 1)):
        case = dict(stride=stride, padding=[1], output_padding=[0], groups=1, dilation=dilation)
        x = torch.randn(2, 12, 5, 6, 7, device="cuda").to(memory_format=memory_format)
        w = torch.randn(12, 20, kernel, kernel, kernel, device="cuda")
        b = torch.randn(20, device="cuda") if with_bias else None
        out = run_op(x, w, b, case)
        ref = reference(x, w, b, case)
        assert relative_error(out, ref) <= FLOAT32_BAR
        uncovered = out[:, :, empty_depth]
        expected = b.view(1, -1, 1, 1).expand_as(uncovered) if with_bias else torch.zeros_like(uncovered)
        assert torch.equal(uncovered, expected)


def test_non_contiguous_and_channels_last_inputs():
    x = torch.randn(2, 16, 6, 7, 8, device="cuda")
    w = torch.randn(16, 8, 3, 3, 3, device="cuda")
    case = dict(stride=[2], padding=[1], output_padding=[1], groups=1, dilation=[1])
    ref = reference(x, w, None, case)
    for variant in (x.to(memory_format=torch.channels_last_3d), x.transpose(3, 4).contiguous().transpose(3, 4),
                    torch.randn(2, 16, 6, 7, 16, device="cuda")[..., ::2].copy_(x)):
        out = torch.ops.ct3d.conv_transpose3d(variant, w, None, *conv_args(case))
        assert relative_error(out, ref) <= FLOAT32_BAR
    w_t = w.transpose(0, 1).contiguous().transpose(0, 1)
    assert relative_error(torch.ops.ct3d.conv_transpose3d(x, w_t, None, *conv_args(case)), ref) <= FLOAT32_BAR


def test_unbatched_input():
    x = torch.randn(8, 5, 6, 7, device="cuda")
    w = torch.randn(8, 4, 3, 2, 3, device="cuda")
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, [2], [0], [1], 1, [1])
    ref = F.conv_transpose3d(x.double().cpu(), w.double().cpu(), None, 2, 0, 1)
    assert out.shape == ref.shape and relative_error(out, ref) <= FLOAT32_BAR


def test_empty_batch_on_gpu():
    out = torch.ops.ct3d.conv_transpose3d(torch.randn(0, 4, 3, 3, 3, device="cuda"),
                                          torch.randn(4, 2, 3, 3, 3, device="cuda"))
    assert out.shape == (0, 2, 5, 5, 5) and out.is_cuda


def test_runs_on_the_current_stream():
    x = torch.randn(4, 32, 16, 16, 16, device="cuda")
    w = torch.randn(32, 32, 3, 3, 3, device="cuda")
    expected = torch.ops.ct3d.conv_transpose3d(x, w)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    # Work queued on the side stream right before the op must be ordered before it.
    with torch.cuda.stream(stream):
        torch.cuda._sleep(10_000_000)
        x_side = x * 1.0
        out = torch.ops.ct3d.conv_transpose3d(x_side, w)
        done = torch.cuda.Event()
        done.record(stream)
    done.synchronize()
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@pytest.mark.skipif(torch.cuda.is_available() and torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_second_device():
    x = torch.randn(2, 8, 5, 5, 5, device="cuda:1")
    w = torch.randn(8, 4, 3, 3, 3, device="cuda:1")
    out = torch.ops.ct3d.conv_transpose3d(x, w)
    assert out.device == x.device
    assert relative_error(out, F.conv_transpose3d(x.double().cpu(), w.double().cpu())) <= FLOAT32_BAR


def test_output_larger_than_2_pow_31_elements():
    free, _ = torch.cuda.mem_get_info()
    if free < 40 << 30:
        pytest.skip("needs 40 GiB of free GPU memory")
    # kernel 2, stride 2: every output element gets exactly one tap of every input
    # channel, so an einsum gives an exact-enough reference slice by slice.
    x = torch.rand(1, 4, 256, 256, 256, device="cuda")
    w = torch.rand(4, 17, 2, 2, 2, device="cuda")
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, [2], [0], [0], 1, [1])
    assert out.numel() > 2**31
    for c in (0, 16):
        expected = torch.einsum("idhw,iabc->dahbwc", x[0].double(), w[:, c].double())
        got = out[0, c].view(256, 2, 256, 2, 256, 2)
        assert relative_error(got, expected) <= FLOAT32_BAR
        del expected


@pytest.mark.parametrize("special", [float("nan"), float("inf")])
def test_non_finite_input_stays_in_its_group(special):
    # 4 groups of 8 channels: the GEMM packs 2 groups per tile (block-diagonal
    # weights), where NaN x 0 would leak across groups without the exactness guard.
    x = torch.randn(2, 32, 5, 6, 7, device="cuda")
    x[1, 3, 2, 2, 2] = special  # group 0 of sample 1
    w = torch.randn(32, 8, 3, 3, 3, device="cuda")
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, [2], [1], [1], 4, [1])
    ref = F.conv_transpose3d(x.double(), w.double(), None, 2, 1, 1, 4, 1)
    assert torch.equal(out.isnan(), ref.isnan())
    assert torch.equal(out.isinf(), ref.isinf())
    finite = ref.isfinite()
    assert finite[:, 8:].all()  # other groups untouched
    assert relative_error(out[finite], ref[finite]) <= FLOAT32_BAR


# Issue 11, point 1: 3xTF32 keeps float32's exponent range, so the relative error
# does not depend on the input's scale (the wgmma path on 64 output channels, the
# mma.sync path on 16).
@pytest.mark.parametrize("scale", [1e-30, 1.0, 1e30])
@pytest.mark.parametrize("cout", [16, 64])
def test_error_is_independent_of_the_input_scale(scale, cout):
    case = edge_case((2, 32, cout, (6, 7, 8), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), 1,
                      (1, 1, 1)), bias=False)
    x, w, b = make_tensors(case, torch.float32, "cuda")
    x = x * scale
    out = run_op(x, w, b, case)
    assert torch.isfinite(out).all()
    assert relative_error(out, reference(x, w, b, case)) <= FLOAT32_BAR, scale
    # And the gradients, through autograd.
    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
    y = torch.ops.ct3d.conv_transpose3d(xg, wg, None, *conv_args(case))
    gy = torch.randn_like(y)
    y.backward(gy)
    xd, wd = x.double().requires_grad_(), w.double().requires_grad_()
    F.conv_transpose3d(xd, wd, None, *conv_args(case)).backward(gy.double())
    assert relative_error(xg.grad, xd.grad) <= FLOAT32_BAR
    assert relative_error(wg.grad, wd.grad) <= FLOAT32_BAR
