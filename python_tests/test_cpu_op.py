"""The op on the CPU against torch.nn.functional.conv_transpose3d in float64."""

import random

import pytest
import torch
import torch.nn.functional as F

from cases import conv_args, make_tensors, random_case, reference, relative_error

SWEEP_SEED = 20261130
SWEEP_SIZE = 240


@pytest.mark.parametrize("index", range(SWEEP_SIZE))
def test_random_sweep_float64(index):
    case = random_case(random.Random(SWEEP_SEED + index))
    x, w, b = make_tensors(case, torch.float64, "cpu")
    out = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))
    ref = F.conv_transpose3d(x, w, b, *conv_args(case))
    assert out.shape == ref.shape
    assert relative_error(out, ref) < 1e-12, case


@pytest.mark.parametrize("index", range(0, SWEEP_SIZE, 4))
def test_random_sweep_float32(index):
    case = random_case(random.Random(SWEEP_SEED + index))
    x, w, b = make_tensors(case, torch.float32, "cpu")
    out = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))
    assert out.dtype == torch.float32
    assert relative_error(out, reference(x, w, b, case)) <= 1e-6, case


@pytest.mark.parametrize("dtype,bar", [(torch.float16, 3e-3), (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("index", range(0, SWEEP_SIZE, 24))
def test_half_types_forward_and_gradients(index, dtype, bar):
    """float16 and bfloat16 (what CPU autocast hands over) against float64 of the
    same rounded operands: computed in float32, rounded once."""
    case = random_case(random.Random(SWEEP_SEED + index))
    x, w, b = (None if t is None else t.to(dtype).requires_grad_()
               for t in make_tensors(case, torch.float32, "cpu"))
    out = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))
    assert out.dtype == dtype
    assert relative_error(out, reference(x.detach(), w.detach(), None if b is None else b.detach(),
                                         case)) <= bar, case
    grad = torch.randn_like(out)
    out.backward(grad)
    leaves = [None if t is None else t.detach().double().requires_grad_() for t in (x, w, b)]
    F.conv_transpose3d(*leaves, *conv_args(case)).backward(grad.double())
    for ours, ref in zip((x, w, b), leaves):
        if ours is not None:
            assert ours.grad.dtype == dtype
            assert relative_error(ours.grad, ref.grad) <= bar, case


def test_unbatched_matches_batched():
    x = torch.randn(3, 4, 5, 6, dtype=torch.float64)
    w = torch.randn(3, 2, 2, 3, 2, dtype=torch.float64)
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, [2], [1], [1], 1, [1])
    batched = torch.ops.ct3d.conv_transpose3d(x.unsqueeze(0), w, None, [2], [1], [1], 1, [1])
    assert out.shape == batched.shape[1:]
    torch.testing.assert_close(out, batched[0], rtol=0, atol=0)


def test_empty_batch_gives_empty_output():
    x = torch.randn(0, 4, 3, 3, 3)
    w = torch.randn(4, 2, 3, 3, 3)
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, [1], [0], [0], 1, [1])
    assert out.shape == F.conv_transpose3d(x, w).shape == (0, 2, 5, 5, 5)


def test_non_contiguous_input_and_weight():
    x = torch.randn(2, 5, 6, 7, 8, dtype=torch.float64).transpose(2, 4)
    w = torch.randn(2, 5, 3, 3, 3, dtype=torch.float64).transpose(0, 1)
    assert not x.is_contiguous() and not w.is_contiguous()
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, [1, 2, 1], [1], [0], 1, [1])
    ref = F.conv_transpose3d(x, w, None, (1, 2, 1), 1)
    assert relative_error(out, ref) < 1e-12


def test_defaults_match_functional():
    x = torch.randn(1, 2, 3, 4, 5, dtype=torch.float64)
    w = torch.randn(2, 3, 2, 2, 2, dtype=torch.float64)
    assert relative_error(torch.ops.ct3d.conv_transpose3d(x, w), F.conv_transpose3d(x, w)) < 1e-12


def test_functional_wrapper_takes_ints():
    import ct3d
    x = torch.randn(1, 4, 3, 4, 5, dtype=torch.float64)
    w = torch.randn(4, 1, 3, 3, 3, dtype=torch.float64)
    b = torch.randn(2, dtype=torch.float64)
    out = ct3d.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1, groups=2, dilation=1)
    ref = F.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1, groups=2, dilation=1)
    assert relative_error(out, ref) < 1e-12
