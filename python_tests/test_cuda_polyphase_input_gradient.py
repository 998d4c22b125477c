"""The polyphase form of the input gradient (KERNEL_LOG dg1, drafted): a strided input
gradient as one stride-1 forward of ct3d's on grad_output split by stride phase, with
CT3D_POLYPHASE_INPUT_GRADIENT=1, against float64 with the result poisoned first: k3 and
k4 stride 2 (L1-73's and the k4 layers' geometry), groups with mixed kernels (L1-72's),
mixed and odd strides, kernels below the stride, output padding. Skipped without CUDA."""

import pytest

from cases import ONE, ZERO, TWO
from conftest import requires_cuda
from window_checks import check_input_gradient

pytestmark = requires_cuda

# (batch, cin, cout, spatial, kernel, stride, padding, output_padding, groups, dilation):
# the forward case whose input gradient is taken (check_input_gradient swaps cin, cout).
CASES = [
    (2, 32, 32, (4, 6, 16), (3, 3, 3), TWO, ONE, ZERO, 1, ONE),           # as L1-73
    (2, 64, 32, (3, 5, 16), (4, 4, 4), TWO, ONE, ZERO, 1, ONE),           # as N-64-32-k4-s2
    (1, 32, 32, (3, 4, 6), (3, 5, 7), TWO, (1, 2, 3), ONE, 4, ONE),       # as L1-72
    (2, 12, 18, (3, 4, 5), (3, 2, 4), (1, 3, 2), (0, 1, 2), (0, 2, 1), 2, ONE),
    (1, 9, 15, (2, 3, 2), (2, 2, 2), (3, 3, 3), ZERO, (0, 2, 1), 1, ONE),
    (1, 6, 6, (3, 3, 3), ONE, TWO, ZERO, ONE, 1, ONE),                    # taps < stride
]


@pytest.mark.parametrize("params", CASES)
def test_input_gradient_cases(params, monkeypatch):
    check_input_gradient(params, monkeypatch, {"CT3D_POLYPHASE_INPUT_GRADIENT": "1"})
