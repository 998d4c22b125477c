"""The half gathering GEMM (float16 / bfloat16 as they are on sm_90a; elsewhere, and
with the form half-widened forced, these cases run widened): strided, dilated, padded and grouped
forwards and input gradients against float64, each within 5 % of the float64 result
rounded once. Shapes: 32 to 130 target channels per group (blocks of 32, 48, 64, 96,
128), odd chunk counts, outputs no tap reaches, phases with no positions. Skipped
without CUDA."""

import pytest
import torch

from cases import edge_case
from conftest import requires_cuda
from window_checks import check_half_forward, check_input_gradient

pytestmark = requires_cuda

# (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation)
CASES = [
    (2, 32, 32, (3, 6, 10), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), 1, (1, 1, 1)),
    (2, 32, 64, (4, 5, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), 1, (2, 2, 2)),
    (1, 48, 40, (3, 4, 9), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), 1, (1, 1, 1)),
    (2, 24, 96, (3, 3, 5), (3, 2, 3), (2, 1, 3), (1, 0, 1), (1, 0, 2), 1, (1, 1, 1)),
    (1, 20, 130, (2, 3, 4), (2, 3, 2), (3, 1, 2), (0, 1, 0), (2, 0, 1), 1, (1, 2, 1)),
    (2, 64, 72, (3, 4, 4), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), 2, (1, 1, 1)),
    (1, 16, 48, (5, 6, 7), (3, 5, 3), (1, 1, 1), (1, 2, 1), (0, 0, 0), 1, (1, 1, 1)),
    (1, 40, 24, (2, 3, 17), (1, 1, 7), (1, 1, 2), (0, 0, 3), (0, 0, 1), 1, (1, 1, 1)),
]


@pytest.mark.parametrize("forms", [["half-gather"], ["half-widened"]])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", CASES)
def test_forward(params, dtype, forms):
    check_half_forward(edge_case(params, bias=True), dtype, forms)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", CASES)
def test_input_gradient(params, dtype):
    check_input_gradient(params, ["half-gather"], dtype)


def test_forward_channels_last_output():
    check_half_forward(edge_case(CASES[1], bias=True), torch.float16, ["half-gather"],
                       torch.channels_last_3d)


def test_runs_on_hopper():
    """On sm_90 a strided half forward is the half gathering kernel, not a widened one."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the half gathering GEMM is sm_90a's")
    x = torch.randn(2, 32, 4, 5, 6, device="cuda", dtype=torch.half)
    w = torch.randn(32, 48, 3, 3, 3, device="cuda", dtype=torch.half)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        torch.ops.ct3d.conv_transpose3d(x, w, None, [2, 2, 2], [1, 1, 1], [0, 0, 0], 1, [1, 1, 1])
        torch.cuda.synchronize()
    names = [event.name for event in profile.events()]
    assert any("wgmma_half_gather_kernel" in name for name in names), set(names)


# Many tiles a block (the persistent grid walks tiles gridDim.x apart; the cases above
# have about one a block): 73's geometry at a few thousand positions a phase, groups
# with two channel blocks, six phases (3 x 1 x 2); a block per multiprocessor.
MANY_TILE_CASES = [
    (2, 32, 32, (8, 24, 40), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), 1, (1, 1, 1)),
    (2, 32, 512, (6, 10, 12), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), 2, (1, 1, 1)),
    (2, 24, 48, (6, 30, 40), (3, 2, 4), (3, 1, 2), (1, 0, 1), (0, 0, 1), 1, (1, 1, 1)),
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", MANY_TILE_CASES)
def test_forward_many_tiles(params, dtype):
    check_half_forward(edge_case(params, bias=True), dtype, ["half-gather"])


@pytest.mark.parametrize("params", MANY_TILE_CASES)
def test_input_gradient_many_tiles(params):
    check_input_gradient(params, ["half-gather"], torch.float16)
