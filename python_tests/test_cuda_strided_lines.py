"""The strided-lines form of the forward (float32, sm_90a: width stride 2, dilation 1, 3
or 4 width taps, whole source lines of at most 128 columns; elsewhere these cases run
on the other mainloops) against float64 with outputs poisoned first, with
the form forced (strided-lines): L1-73's and the narrow stride-2 layers' geometry, 16 and 32
channel blocks with padding channels, several channel blocks, groups, source channels
past a k-step, columns past the source (output padding), depth and height strides and
dilations with uncovered residues, lines of 4 to 128 columns (and of 2, which TMA's
16-byte rule leaves to the other mainloops), many tiles per block, chains flushed,
channels-last output, exact operands (float16 widened) and the input's scale; and where
the default takes it. Skipped without CUDA."""

import pytest
import torch

from cases import ONE, ZERO, TWO, conv_args, edge_case, make_tensors, reference, relative_error
from conftest import requires_cuda
from test_cuda_op import FLOAT32_BAR
from window_checks import (check_forward, check_half_forward, check_input_scales,
                           force_engine_forms)

pytestmark = requires_cuda

# (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation)
CASES = [
    (1, 32, 32, (4, 6, 128), (3, 3, 3), TWO, ONE, ZERO, 1, ONE),          # as L1-73
    (2, 64, 32, (3, 5, 32), (4, 4, 4), TWO, ONE, ZERO, 1, ONE),           # as N-64-32-k4-s2
    (2, 32, 16, (3, 5, 32), (3, 3, 3), TWO, ONE, ONE, 1, ONE),            # as N-32-16-k3-s2
    (1, 16, 8, (2, 3, 20), (3, 4, 4), TWO, (0, 1, 0), ONE, 1, ONE),       # bias past the source
    (2, 16, 24, (3, 5, 24), (3, 3, 3), (1, 3, 2), (1, 2, 1), (0, 1, 1), 1, (2, 1, 1)),
    (2, 32, 48, (2, 4, 16), (3, 3, 3), TWO, ONE, ZERO, 2, ONE),           # groups, 24 each
    (1, 16, 40, (2, 3, 24), (2, 3, 3), TWO, ZERO, ZERO, 1, ONE),          # two channel blocks
    (1, 12, 13, (2, 3, 44), (3, 2, 3), TWO, (1, 0, 2), ONE, 1, ONE),      # channels past a step
    (1, 8, 8, (2, 4, 4), (3, 3, 3), TWO, ZERO, ZERO, 1, ONE),             # lines of 4 columns
    (1, 8, 8, (2, 4, 2), (3, 3, 3), TWO, ZERO, ZERO, 1, ONE),             # 2: another mainloop
    (1, 8, 8, (3, 4, 8), (3, 3, 3), (2, 1, 2), ZERO, ZERO, 1, (2, 1, 1)),  # uncovered planes
    (3, 16, 16, (5, 40, 48), (3, 3, 4), TWO, ONE, ONE, 1, ONE),          # many tiles per block
    (1, 16, 16, (2, 9, 128), (2, 2, 3), TWO, ZERO, ONE, 1, ONE),          # 128 columns, 9 lines
    (1, 64, 32, (2, 3, 16), (4, 4, 4), TWO, (1, 2, 3), ZERO, 1, ONE),     # width padding 3
    # Chains over 512 reductions, flushed every 256 (one m-tile per warpgroup):
    (2, 144, 40, (3, 4, 16), (3, 3, 3), TWO, ONE, ONE, 1, ONE),           # k3, 2 blocks
    (1, 160, 16, (2, 3, 20), (4, 4, 4), TWO, ONE, ZERO, 1, ONE),          # k4, 16 channels
    (1, 176, 32, (2, 3, 64), (4, 4, 4), TWO, ONE, ZERO, 1, ONE),          # k4, N 128
]
FORMS = ["strided-lines"]


@pytest.mark.parametrize("params", CASES)
def test_forward_cases(params):
    check_forward(edge_case(params, bias=True), FORMS)


@pytest.mark.parametrize("params", [CASES[0], CASES[5]])
def test_forward_without_bias(params):
    check_forward(edge_case(params, bias=False), FORMS)


def test_forward_channels_last():
    check_forward(edge_case(CASES[1], bias=True), FORMS, torch.channels_last_3d)


@pytest.mark.parametrize("params", [CASES[0], CASES[14]])
def test_forward_keeps_the_scale_of_its_inputs(params):
    check_input_scales(edge_case(params, bias=False), FORMS)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("params", [CASES[0], CASES[2], CASES[3], CASES[14]])
def test_forward_exact_operands(params, dtype):
    """float16 and bfloat16 widened to float32 (half-widened; groups of at most 16 target
    channels are widened anyway): exact in TF32, one product each."""
    check_half_forward(edge_case(params, bias=True), dtype, FORMS + ["half-widened"])


def strided_lines_ran(case):
    """Whether ct3d's forward of `case` ran the strided-lines kernel; checks its result."""
    x, w, b = make_tensors(case, torch.float32, "cuda")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        got = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))
        torch.cuda.synchronize()
    assert relative_error(got, reference(x, w, b, case)) <= FLOAT32_BAR
    return any("wgmma_strided_lines_kernel" in event.name for event in profile.events()
               if event.device_type.name == "CUDA")


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
                    reason="the form is built for sm_90a")
def test_the_default_takes_the_form_where_it_paid():
    """Every plan but flushed chains of more than 2 channel blocks: L1-73's geometry, k4
    stride 2, 16 target channels, flushed chains of 2 blocks, and 32 channels with a mean
    reduction of 72 at width 36; flushed chains of 4 channel blocks (as W-256-128-k3-s2)
    keep the other mainloop."""
    width36 = (1, 32, 32, (4, 6, 36), (3, 3, 3), TWO, ONE, ZERO, 1, ONE)
    four_blocks = (1, 144, 128, (2, 3, 16), (3, 3, 3), TWO, ONE, ONE, 1, ONE)
    for case in (CASES[0], CASES[1], CASES[2], CASES[7], CASES[14], width36):
        assert strided_lines_ran(edge_case(case, bias=True)), case
    assert not strided_lines_ran(edge_case(four_blocks, bias=True))


def test_switch_off_runs_another_mainloop():
    """The gathering GEMM forced: the same case right on the mainloop it replaced."""
    force_engine_forms(["gather"])
    assert not strided_lines_ran(edge_case(CASES[1], bias=True))
