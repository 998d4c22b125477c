"""The backward ops on the GPU (float32: the implicit-GEMM engine) against float64.
Skipped without a CUDA GPU."""

import random

import pytest
import torch
import torch.nn.functional as F

from cases import ONE, TWO, ZERO, conv_args, edge_case, make_tensors, random_case, relative_error
from conftest import requires_cuda
from forms import force
from test_cuda_op import FLOAT32_BAR, TILE_EDGE_CASES, poison_allocator

pytestmark = requires_cuda


def float64_gradients(x, w, b, case, grad_output):
    """dL/dx, dL/dw, dL/db of PyTorch's own transposed convolution, float64 on the CPU."""
    leaves = [t.detach().double().cpu().requires_grad_() if t is not None else None
              for t in (x, w, b)]
    out = F.conv_transpose3d(*leaves, *conv_args(case))
    out.backward(grad_output.double().cpu())
    return [t.grad if t is not None else None for t in leaves]


def ct3d_gradients(x, w, b, case, grad_output):
    leaves = [t.detach().clone().requires_grad_() if t is not None else None for t in (x, w, b)]
    out = torch.ops.ct3d.conv_transpose3d(*leaves, *conv_args(case))
    poison_allocator(64 << 20)  # the gradients are allocated from NaN-filled memory
    out.backward(grad_output)
    return [t.grad if t is not None else None for t in leaves]


def check_gradients(case, dtype=torch.float32, bar=FLOAT32_BAR):
    x, w, b = make_tensors(case, dtype, "cuda")
    out_shape = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case)).shape
    grad_output = torch.randn(out_shape, dtype=dtype, device="cuda")
    ours = ct3d_gradients(x, w, b, case, grad_output)
    reference = float64_gradients(x, w, b, case, grad_output)
    for name, got, ref in zip(("input", "weight", "bias"), ours, reference):
        if ref is None:
            continue
        assert got.dtype == dtype and not got.isnan().any(), (name, case)
        assert relative_error(got, ref) <= bar, (name, relative_error(got, ref), case)


@pytest.mark.parametrize("index", range(160))
def test_random_sweep_float32_gradients(index):
    rng = random.Random(31000 + index)
    case = random_case(rng, max_spatial=9, max_channels=20)
    case["batch"] = rng.randint(1, 4)
    check_gradients(case)


# The forward's tile-edge cases, and a few that only the backward GEMMs find hard.
BACKWARD_EDGE_CASES = TILE_EDGE_CASES + [
    # (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation)
    (2, 100, 36, (3, 5, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
    (2, 8, 8, (3, 4, 5), (3, 3, 3), (1, 1, 1), (2, 3, 3), (0, 0, 0), 1, (2, 3, 3)),
    (1, 2, 2, (2, 2, 2), (40, 2, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
]


@pytest.mark.parametrize("params", BACKWARD_EDGE_CASES)
def test_tile_edges_groups_dilation_output_padding_gradients(params):
    check_gradients(edge_case(params, bias=True))


def test_kernelbench_shapes_scaled_down_gradients():
    from problems import PROBLEMS
    for problem in PROBLEMS:
        conv = problem.conv
        case = dict(batch=2, cin=conv["in_channels"], cout=conv["out_channels"],
                    spatial=list(problem.input_shape(batch=2, spatial_scale=4)[2:]),
                    kernel=list(torch.nn.modules.utils._triple(conv["kernel_size"])),
                    stride=list(torch.nn.modules.utils._triple(conv.get("stride", 1))),
                    padding=list(torch.nn.modules.utils._triple(conv.get("padding", 0))),
                    output_padding=list(torch.nn.modules.utils._triple(conv.get("output_padding", 0))),
                    groups=conv.get("groups", 1),
                    dilation=list(torch.nn.modules.utils._triple(conv.get("dilation", 1))),
                    bias=True, batched=True)
        check_gradients(case)


def test_half_types_gradients_stay_correct():
    for dtype, bar in ((torch.float16, 3e-3), (torch.bfloat16, 2e-2)):
        for index in range(6):
            case = random_case(random.Random(32000 + index), max_channels=12)
            check_gradients(case, dtype, bar)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", BACKWARD_EDGE_CASES)
def test_half_types_gradients_are_rounded_once(params, dtype):
    """float16 and bfloat16 gradients: the engine on widened operands, each gradient
    within 5 % of its float64 reference rounded once."""
    case = edge_case(params, bias=True)
    x, w, b = make_tensors(case, dtype, "cuda")
    out_shape = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case)).shape
    grad_output = torch.randn(out_shape, dtype=dtype, device="cuda")
    ours = ct3d_gradients(x, w, b, case, grad_output)
    for name, got, ref in zip(("input", "weight", "bias"), ours,
                              float64_gradients(x, w, b, case, grad_output)):
        assert got.dtype == dtype
        bound = 1.05 * relative_error(ref.to(dtype), ref)
        assert relative_error(got, ref) <= bound, (name, relative_error(got, ref), bound, case)


def test_gradients_are_bitwise_deterministic():
    case = dict(batch=3, cin=24, cout=40, spatial=[7, 9, 11], kernel=[3, 3, 3], stride=[2, 1, 2],
                padding=[1, 1, 0], output_padding=[1, 0, 0], groups=1, dilation=[1, 1, 1],
                bias=True, batched=True)
    x, w, b = make_tensors(case, torch.float32, "cuda")
    out_shape = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case)).shape
    grad_output = torch.randn(out_shape, device="cuda")
    first = ct3d_gradients(x, w, b, case, grad_output)
    torch.use_deterministic_algorithms(True)
    try:
        for _ in range(3):
            again = ct3d_gradients(x, w, b, case, grad_output)
            for a, c in zip(first, again):
                assert torch.equal(a, c)
    finally:
        torch.use_deterministic_algorithms(False)


# (cin, cout, groups): grad_output staged once for both GEMMs (cout 16, 32, 64 per
# group), staged twice (48: the input gradient pads to 48, the weight gradient to
# 64), folded groups in the weight gradient (4 groups of 8).
STAGING_SHARE_CASES = [(8, 16, 1), (12, 32, 1), (20, 48, 1), (16, 64, 2), (16, 32, 4)]


@pytest.mark.parametrize("cin,cout,groups", STAGING_SHARE_CASES)
def test_all_gradients_op_every_mask(cin, cout, groups):
    torch.manual_seed(cin * cout + groups)
    x = torch.rand(3, cin, 5, 6, 7, device="cuda")
    w = torch.randn(cin, cout // groups, 3, 2, 3, device="cuda")
    args = ([2, 1, 2], [1, 0, 1], groups, [1, 2, 1])
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, [2, 1, 2], [1, 0, 1], [1, 0, 0], groups,
                                          [1, 2, 1])
    grad_output = torch.randn_like(out)
    reference = torch.ops.aten.convolution_backward(
        grad_output.double(), x.double(), w.double(), [cout], [2, 1, 2], [1, 0, 1], [1, 2, 1],
        True, [1, 0, 0], groups, [True, True, True])
    for mask in ([True, True, True], [True, True, False], [False, True, True], [True, False, True],
                 [False, False, True], [True, False, False]):
        poison_allocator(64 << 20)
        got = torch.ops.ct3d.conv_transpose3d_backward(grad_output, x, w, *args, mask)
        for name, wanted, ours, ref in zip(("input", "weight", "bias"), mask, got, reference):
            assert (ours is not None) == wanted, (name, mask)
            if wanted:
                assert relative_error(ours, ref) <= FLOAT32_BAR, (name, mask, relative_error(ours, ref))


@pytest.mark.parametrize("sharing", ["unshared-staging", "shared-staging", ""])
@pytest.mark.parametrize("cin,cout,stride", [(64, 32, 2), (128, 16, 1), (32, 24, 2)])
def test_all_gradients_with_and_without_a_shared_copy(cin, cout, stride, sharing):
    """grad_output staged once for both gradients (the form shared-staging), by each for
    itself (unshared-staging), and by the rule (shared only on strided layers below 64
    input channels; elsewhere the wgmma weight gradient reads its own copy at its
    segments' pitch; KERNEL_LOG wp2).
    Widths a multiple of 4, so that the wgmma weight gradient takes them on sm_90a."""
    force(*([sharing] if sharing else []))
    torch.manual_seed(cin + cout + stride)
    x = torch.rand(2, cin, 3, 5, 8, device="cuda")
    w = torch.randn(cin, cout, 3, 3, 3, device="cuda")
    args = ([stride] * 3, [1, 1, 1], 1, [1, 1, 1])
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, [stride] * 3, [1, 1, 1], [0, 0, 0], 1,
                                          [1, 1, 1])
    grad_output = torch.randn_like(out)
    reference = torch.ops.aten.convolution_backward(
        grad_output.double(), x.double(), w.double(), [cout], [stride] * 3, [1, 1, 1], [1, 1, 1],
        True, [0, 0, 0], 1, [True, True, True])
    poison_allocator(64 << 20)
    got = torch.ops.ct3d.conv_transpose3d_backward(grad_output, x, w, *args, [True] * 3)
    for name, ours, ref in zip(("input", "weight", "bias"), got, reference):
        assert relative_error(ours, ref) <= FLOAT32_BAR, (name, relative_error(ours, ref))


# The float32 staging tile sizes (KERNEL_LOG "wider float32 staging tiles": 256 x 32 where
# the padded channels are whole 32-channel tiles or one, else 128 x 64): staged copies whose
# tiles end mid-line and mid-channel-tile (24 channels; 66 and the weight gradient's pitched rows
# take 128 x 64), and the bias gradient's partial sums, one row per tile. Through
# autograd (the fused op: grad_output staged once), then the two separate ops (each
# stages its own operands).
@pytest.mark.parametrize("stride", [TWO, ONE])
@pytest.mark.parametrize("cout", [24, 64, 66])
def test_staging_tile_sizes_gradients(stride, cout):
    case = edge_case((2, 70, cout, (5, 7, 9), (3, 3, 3), stride, ONE, ZERO, 1, ONE), bias=True)
    check_gradients(case)
    x, w, b = make_tensors(case, torch.float32, "cuda")
    out = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))
    grad_output = torch.randn_like(out)
    reference = float64_gradients(x, w, b, case, grad_output)
    args = (case["stride"], case["padding"], case["groups"], case["dilation"])
    poison_allocator(64 << 20)
    separate = (
        torch.ops.ct3d.conv_transpose3d_input_backward(grad_output, w, case["spatial"], *args),
        torch.ops.ct3d.conv_transpose3d_weight_backward(x, grad_output, case["kernel"], *args),
    )
    for name, got, ref in zip(("input", "weight"), separate, reference):
        assert relative_error(got, ref) <= FLOAT32_BAR, (name, cout)


# The width-reuse mainloop (forced) over many tiles: input gradients of stride-2
# layers with 24, 32 and 40 source channels and 288 tiles of 256 rows whose lines
# start mid-tile.
@pytest.mark.parametrize("cin,kernel", [(32, 3), (40, 4), (24, 3)])
def test_width_reuse_input_gradient_over_many_tiles(cin, kernel):
    force("width-reuse")
    case = edge_case((2, cin, 20, (16, 32, 72), (kernel,) * 3, TWO, ONE, ZERO, 1, ONE),
                     bias=False)
    x, w, _ = make_tensors(case, torch.float32, "cuda")
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, *conv_args(case))
    grad_output = torch.randn_like(out)
    args = (case["stride"], case["padding"], case["groups"], case["dilation"])
    poison_allocator(256 << 20)
    grad_input = torch.ops.ct3d.conv_transpose3d_input_backward(grad_output, w, case["spatial"],
                                                                *args)
    reference = float64_gradients(x, w, None, case, grad_output)[0]
    assert relative_error(grad_input, reference) <= FLOAT32_BAR


def test_weight_gradient_over_ten_million_positions():
    # Batch 64 at 64^3: the reduction of every weight element runs over 16.8 M
    # positions, split across blocks and summed in order.
    torch.manual_seed(5)
    x = torch.rand(64, 8, 64, 64, 64, device="cuda")
    w = torch.randn(8, 16, 3, 3, 3, device="cuda")
    args = ([1, 1, 1], [1, 1, 1], 1, [1, 1, 1])
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, [1], [1], [0], 1, [1])
    grad_output = torch.randn_like(out)
    poison_allocator(64 << 20)
    grad_weight = torch.ops.ct3d.conv_transpose3d_weight_backward(x, grad_output, [3, 3, 3], *args)
    reference = torch.ops.aten.convolution_backward(
        grad_output.double(), x.double(), w.double(), [16], [1, 1, 1], [1, 1, 1], [1, 1, 1], True,
        [0, 0, 0], 1, [True, True, True])
    assert relative_error(grad_weight, reference[1]) <= FLOAT32_BAR
    del grad_weight
    grad_input = torch.ops.ct3d.conv_transpose3d_input_backward(grad_output, w, [64, 64, 64], *args)
    assert relative_error(grad_input, reference[0]) <= FLOAT32_BAR
    # All three at once: grad_output staged in chunks of samples, once for both
    # GEMMs, the bias gradient summed from the staging pass over 16.8 M positions.
    del grad_input
    poison_allocator(64 << 20)
    fused = torch.ops.ct3d.conv_transpose3d_backward(grad_output, x, w, *args, [True, True, True])
    assert relative_error(fused[0], reference[0]) <= FLOAT32_BAR
    assert relative_error(fused[1], reference[1]) <= FLOAT32_BAR
    assert relative_error(fused[2], reference[2]) <= FLOAT32_BAR


def test_gradients_with_more_than_2_31_elements():
    # 32 x 256 x 512 x 513 = 2.15e9 elements per tensor, past 32-bit offsets.
    free, _ = torch.cuda.mem_get_info()
    if free < 80 << 30:
        pytest.skip("needs 80 GiB of free GPU memory")
    torch.manual_seed(6)
    shape = (1, 32, 256, 512, 513)
    assert torch.Size(shape).numel() > 2**31
    x = torch.rand(shape, device="cuda")
    grad_output = torch.randn(shape, device="cuda")
    w = torch.randn(32, 32, 1, 1, 1, device="cuda")
    args = ([1], [0], 1, [1])
    grad_input = torch.ops.ct3d.conv_transpose3d_input_backward(grad_output, w, list(shape[2:]),
                                                                *args)
    # Kernel 1: grad_input[ci, p] = sum over co of w[ci, co] grad_output[co, p]. Check
    # the first and the last planes (the last lie past 2^31 floats).
    w64 = w.double().view(32, 32)
    for plane in (0, shape[2] - 1):
        ref = torch.einsum("ic,chw->ihw", w64, grad_output[0, :, plane].double())
        assert relative_error(grad_input[0, :, plane], ref) <= FLOAT32_BAR
    del grad_input
    grad_weight = torch.ops.ct3d.conv_transpose3d_weight_backward(x, grad_output, [1, 1, 1], *args)
    ref = torch.zeros(32, 32, dtype=torch.float64, device="cuda")
    for plane in range(0, shape[2], 32):
        xs = x[0, :, plane:plane + 32].reshape(32, -1).double()
        gs = grad_output[0, :, plane:plane + 32].reshape(32, -1).double()
        ref += xs @ gs.T
    assert relative_error(grad_weight.view(32, 32), ref) <= FLOAT32_BAR
