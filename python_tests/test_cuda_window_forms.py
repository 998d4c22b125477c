"""The stride-1 window family's two GEMMs against float64 (sm_90a; elsewhere these cases
run on the other mainloops), each forced on its own cases and forced off (the gathering
GEMM) on the same ones, both held to the bar; the forward and the stride-1 input
gradient, float32 and the half types, outputs poisoned first (window_checks.py).

- The shifted-window GEMM (blocks of 64 target channels), on the shapes its column
  tiling finds hard: lines longer than a block, blocks that end inside a line, padded
  channel blocks (48 of 64 used), several channel blocks, dilation with output padding,
  long width kernels, tiny planes, the half form's blocks of 128 channels.
- Its tap-rows form (groups of few target channels), on what its epilogue's width-tap
  sum and overlapping column blocks find hard: one and two 64-row halves, channels not a
  multiple of 8, dilation with output padding, groups, long lines, 16 width taps, tiny
  planes, more tiles than multiprocessors.

Skipped without CUDA."""

from dataclasses import dataclass

import pytest
import torch

from cases import ONE, ZERO, edge_case
from conftest import requires_cuda
from window_checks import (check_forward, check_half_forward, check_input_gradient,
                           check_input_scales)

pytestmark = requires_cuda

# (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation)
SHIFTED_WINDOW_CASES = [
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
TAP_ROWS_CASES = [
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


@dataclass(frozen=True)
class Suite:
    cases: list
    gradient_cases: tuple  # indices whose input gradient runs (cin and cout swapped)
    widened_case: int      # the case run on the float32 kernel with widened half operands


# Forcing a forward form turns the others off (the shifted-window GEMM would take the
# tap-rows cases with 48-64 channels first, the tap-columns form those of its row counts).
SUITES = {
    "shifted-window": Suite(SHIFTED_WINDOW_CASES, (0, 2, 4, 8), 2),
    "tap-rows": Suite(TAP_ROWS_CASES, (0, 3, 4, 7), 1),
}


def every_case():
    return [(form, case) for form, suite in SUITES.items() for case in suite.cases]


def gradient_cases():
    return [(form, suite.cases[i]) for form, suite in SUITES.items()
            for i in suite.gradient_cases]


def first_cases():
    return [(form, suite.cases[0]) for form, suite in SUITES.items()]


@pytest.mark.parametrize("forced", [True, False], ids=["form", "gather"])
@pytest.mark.parametrize("form,params", every_case())
def test_forward_cases(form, params, forced):
    check_forward(edge_case(params, bias=True), [form] if forced else ["gather"])


@pytest.mark.parametrize("form,params", first_cases())
def test_forward_channels_last_output(form, params):
    check_forward(edge_case(params, bias=True), [form], torch.channels_last_3d)


@pytest.mark.parametrize("forced", [True, False], ids=["form", "gather"])
@pytest.mark.parametrize("form,params", gradient_cases())
def test_input_gradient_cases(form, params, forced):
    """cin and cout swapped, so that the input gradient's targets are the forward case's
    output channels."""
    check_input_gradient(params, [form] if forced else ["gather"])


@pytest.mark.parametrize("form,params", first_cases())
def test_forward_keeps_the_scale_of_its_inputs(form, params):
    check_input_scales(edge_case(params, bias=False), [form])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("form,params", every_case())
def test_forward_half_types(form, params, dtype):
    """The kernel's float16 / bfloat16 form (window_operands.cuh)."""
    check_half_forward(edge_case(params, bias=True), dtype, [form])


@pytest.mark.parametrize("form,params", first_cases())
def test_forward_half_channels_last_output(form, params):
    check_half_forward(edge_case(params, bias=True), torch.float16, [form],
                       torch.channels_last_3d)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("form,params", gradient_cases())
def test_input_gradient_half_types(form, params, dtype):
    check_input_gradient(params, [form], dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("form", list(SUITES))
def test_forward_half_types_widened(form, dtype):
    """half-widened: the float32 kernel on widened operands, one TF32 product each."""
    case = SUITES[form].cases[SUITES[form].widened_case]
    check_half_forward(edge_case(case, bias=True), dtype, [form, "half-widened"])


# The half shifted-window form's blocks of 128 target channels (two m-tiles a compute
# warpgroup): two blocks, 120 of 128 used (blocks of 64), 128 per group of two, a k5
# dilated width (its lines unaligned: the epilogue from the accumulators, not parked).
HALF_WIDE_CASES = [
    (2, 40, 256, (3, 4, 30), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),
    (2, 32, 120, (3, 4, 26), (3, 3, 3), ONE, ONE, ZERO, 1, ONE),
    (1, 24, 256, (3, 5, 20), (3, 3, 3), ONE, ZERO, ZERO, 2, ONE),
    (1, 16, 128, (2, 6, 37), (2, 3, 5), ONE, (0, 1, 2), ZERO, 1, (1, 2, 1)),
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", HALF_WIDE_CASES)
def test_forward_half_wide_blocks(params, dtype):
    check_half_forward(edge_case(params, bias=True), dtype, ["shifted-window"])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", HALF_WIDE_CASES[:3])
def test_input_gradient_half_wide_blocks(params, dtype):
    check_input_gradient(params, ["shifted-window"], dtype)
