"""The tap-rows form of the shifted-window GEMM (stride 1, groups of few target
channels, sm_90a; elsewhere these cases run on the other mainloops) against float64,
on what its epilogue's width-tap sum and overlapping column blocks find hard: one and
two 64-row halves, channels not a multiple of 8, dilation with output padding, groups,
long lines, 16 width taps, tiny planes, more tiles than multiprocessors, the forward
and the stride-1 input gradient. Forced on (the form tap-rows) and off (the gathering
GEMM), both must meet the bar. Skipped without CUDA."""

import pytest
import torch

from cases import ONE, ZERO, edge_case
from conftest import requires_cuda
from window_checks import (check_forward, check_half_forward, check_input_gradient,
                           check_input_scales)

pytestmark = requires_cuda

# (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation)
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


def forms(mode):
    # Forcing a forward form turns the others off (the shifted-window GEMM would take the
    # cases with 48-64 channels first, the tap-columns form those of its row counts).
    return ["tap-rows"] if mode == "1" else ["gather"]


@pytest.mark.parametrize("mode", ["1", "0"])
@pytest.mark.parametrize("params", CASES)
def test_forward_cases(params, mode):
    check_forward(edge_case(params, bias=True), forms(mode))


def test_forward_channels_last_output():
    check_forward(edge_case(CASES[0], bias=True), forms("1"),
                  torch.channels_last_3d)


@pytest.mark.parametrize("mode", ["1", "0"])
@pytest.mark.parametrize("params", [CASES[0], CASES[3], CASES[4], CASES[7]])
def test_input_gradient_cases(params, mode):
    """cin and cout swapped, so that the input gradient's targets are the narrow side."""
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
@pytest.mark.parametrize("params", [CASES[0], CASES[3], CASES[4], CASES[7]])
def test_input_gradient_half_types(params, dtype):
    check_input_gradient(params, forms("1"), dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_forward_half_types_widened(dtype):
    """half-widened: the float32 kernel on widened operands, one TF32 product each."""
    check_half_forward(edge_case(CASES[1], bias=True), dtype, forms("1") + ["half-widened"])
