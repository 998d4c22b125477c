"""The CPU backward ops (shifted GEMMs over grad_output split by stride residue)
against float64 autograd through torch.nn.functional.conv_transpose3d, on random
cases of every argument, in float32 and float64; gradients allocated from poisoned
memory would show as NaN."""

import random

import pytest
import torch
import torch.nn.functional as F

from cases import conv_args, make_tensors, random_case, relative_error


def gradients(fn, x, w, b, gy):
    leaves = [t.detach().clone().requires_grad_() for t in (x, w)] + (
        [b.detach().clone().requires_grad_()] if b is not None else [])
    fn(leaves[0], leaves[1], leaves[2] if b is not None else None).backward(gy)
    return [t.grad for t in leaves]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("index", range(60))
def test_random_backward_matches_float64(index, dtype):
    case = random_case(random.Random(9100 + index), max_spatial=7, max_channels=8)
    x, w, b = make_tensors(case, dtype, "cpu")
    args = conv_args(case)
    torch.manual_seed(index)
    gy = torch.randn_like(F.conv_transpose3d(x, w, b, *args))
    ours = gradients(lambda x, w, b: torch.ops.ct3d.conv_transpose3d(x, w, b, *args), x, w, b, gy)
    ref = gradients(lambda x, w, b: F.conv_transpose3d(x, w, b, *args), x.double(), w.double(),
                    None if b is None else b.double(), gy.double())
    bar = 1e-5 if dtype == torch.float32 else 1e-12
    for got, want in zip(ours, ref):
        assert torch.isfinite(got).all()
        if want.norm() > 0:
            assert relative_error(got, want) <= bar


def test_same_gradients_on_every_run_and_thread_count():
    case = random_case(random.Random(4242), max_spatial=8, max_channels=8)
    x, w, b = make_tensors(case, torch.float32, "cpu")
    args = conv_args(case)
    gy = torch.randn_like(F.conv_transpose3d(x, w, b, *args))
    run = lambda: gradients(lambda x, w, b: torch.ops.ct3d.conv_transpose3d(x, w, b, *args),  # noqa: E731
                            x, w, b, gy)
    first, second = run(), run()
    for a, c in zip(first, second):
        assert torch.equal(a, c)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        single = run()
    finally:
        torch.set_num_threads(threads)
    for a, c in zip(first, single):
        assert relative_error(a, c.double()) <= 1e-5 if c.norm() > 0 else True


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_weight_gradient_over_many_positions(dtype):
    """A reduction over 2.6 * 10^5 positions of positive products (the hard case for
    a float32 running sum: one such sum over 5 * 10^5 erred by 4e-5)."""
    torch.manual_seed(0)
    x = torch.rand(8, 4, 32, 32, 32, dtype=dtype)
    w = torch.randn(4, 4, 3, 3, 3, dtype=dtype)
    gy = torch.rand_like(F.conv_transpose3d(x, w))
    got = torch.ops.ct3d.conv_transpose3d_weight_backward(x, gy, [3, 3, 3], [1], [0], 1, [1])
    wd = w.double().requires_grad_()
    F.conv_transpose3d(x.double(), wd).backward(gy.double())
    assert relative_error(got, wd.grad) <= (1e-5 if dtype == torch.float32 else 1e-12)


@pytest.mark.parametrize("case_seed", [11, 12, 13])
def test_forward_is_the_same_on_every_run_and_agrees_across_thread_counts(case_seed):
    case = random_case(random.Random(case_seed), max_spatial=9, max_channels=24)
    x, w, b = make_tensors(case, torch.float32, "cpu")
    args = conv_args(case)
    first = torch.ops.ct3d.conv_transpose3d(x, w, b, *args)
    assert torch.equal(first, torch.ops.ct3d.conv_transpose3d(x, w, b, *args))
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        single = torch.ops.ct3d.conv_transpose3d(x, w, b, *args)
    finally:
        torch.set_num_threads(threads)
    assert relative_error(single, first.double()) <= 1e-5
