"""The shifted-window GEMM (stride 1, blocks of 64 target channels, sm_90a; elsewhere
these cases run on the other mainloops) against float64, on the shapes its column
tiling finds hard: lines longer than a block, blocks that end inside a line, padded
channel blocks (48 of 64 used), several channel blocks, dilation with output padding,
long width kernels, tiny planes, the half form's blocks of 128 channels; the forward and
the stride-1 input gradient.
Forced on (the form shifted-window) and off (the gathering GEMM), both must meet the bar.
Skipped without CUDA."""

import pytest
import torch

from cases import ONE, ZERO, edge_case
from conftest import requires_cuda
from window_checks import (check_forward, check_half_forward, check_input_gradient,
                           check_input_scales)

pytestmark = requires_cuda

# (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation)
CASES = [
    (2, 32, 64, (3, 5, 36), (3, 5, 5), ONE, ZERO, ZERO, 1, ONE),
    (2, 20, 48, (4, 6, 30), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),
    (1, 37, 128, (3, 4, 50), (2, 3, 4), ONE, (0, 1, 2), ZERO, 1, ONE),
    (2, 16, 112, (2, 5, 9), ONE, ONE, ZERO, ZERO, 1, ONE),
    (2, 24, 64, (3, 5, 20), (3, 3, 3), ONE, (2, 1, 3), (1, 0, 1), 1, (2, 1, 2)),
    (2, 32, 128, (3, 4, 18), (3, 3, 3), ONE, ZERO, ZERO, 2, ONE),
    (1, 16, 64, (2, 3, 400), (2, 2, 3), ONE, ZERO, ZERO, 1, ONE),
    (1, 16, 64, (2, 3, 40), (1, 1, 11), ONE, ZERO, ZERO, 1, ONE),
    (1, 64, 64, (6, 3, 10), (5, 1, 1), ONE, ZERO, ZERO, 1, ONE),
    (3, 8, 64, ONE, (2, 2, 2), ONE, ZERO, ZERO, 1, ONE),
    (1, 16, 192, (5, 6, 21), (3, 3, 5), ONE, (1, 1, 2), ZERO, 1, ONE),
    (2, 24, 32, (3, 5, 20), (3, 5, 5), ONE, ONE, ZERO, 1, ONE),      # half form: 32 of 64 used
]


def forms(mode):
    return ["shifted-window"] if mode == "1" else ["gather"]


@pytest.mark.parametrize("mode", ["1", "0"])
@pytest.mark.parametrize("params", CASES)
def test_forward_cases(params, mode):
    check_forward(edge_case(params, bias=True), forms(mode))


def test_forward_channels_last_output():
    check_forward(edge_case(CASES[0], bias=True), forms("1"),
                  torch.channels_last_3d)


@pytest.mark.parametrize("mode", ["1", "0"])
@pytest.mark.parametrize("params", [CASES[0], CASES[2], CASES[4], CASES[8]])
def test_input_gradient_cases(params, mode):
    """cin and cout swapped, so that the input gradient's targets are the wide side."""
    check_input_gradient(params, forms(mode))


def test_forward_keeps_the_scale_of_its_inputs():
    check_input_scales(edge_case(CASES[0], bias=False), forms("1"))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", CASES)
def test_forward_half_types(params, dtype):
    """The kernel's float16 / bfloat16 form (window_operands.cuh)."""
    check_half_forward(edge_case(params, bias=True), dtype, forms("1"))


def test_forward_half_channels_last_output():
    check_half_forward(edge_case(CASES[0], bias=True), torch.float16, forms("1"),
                       torch.channels_last_3d)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", [CASES[0], CASES[2], CASES[4], CASES[8]])
def test_input_gradient_half_types(params, dtype):
    check_input_gradient(params, forms("1"), dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_forward_half_types_widened(dtype):
    """half-widened: the float32 kernel on widened operands, one TF32 product each."""
    check_half_forward(edge_case(CASES[2], bias=True), dtype, forms("1") + ["half-widened"])


# The half form's blocks of 128 target channels (two m-tiles a compute warpgroup): two
# blocks, 120 of 128 used (blocks of 64), 128 per group of two, a k5 dilated width (its
# lines unaligned: the epilogue from the accumulators, not parked).
HALF_WIDE_CASES = [
    (2, 40, 256, (3, 4, 30), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),
    (2, 32, 120, (3, 4, 26), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),
    (1, 24, 256, (3, 5, 20), (3, 3, 3), ONE, ZERO, ZERO, 2, ONE),
    (1, 16, 128, (2, 6, 37), (2, 3, 5), ONE, (0, 1, 2), ZERO, 1, (1, 2, 1)),
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", HALF_WIDE_CASES)
def test_forward_half_wide_blocks(params, dtype):
    check_half_forward(edge_case(params, bias=True), dtype, forms("1"))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", HALF_WIDE_CASES[:3])
def test_input_gradient_half_wide_blocks(params, dtype):
    check_input_gradient(params, forms("1"), dtype)
