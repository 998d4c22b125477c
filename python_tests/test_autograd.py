"""Autograd of ct3d.conv_transpose3d: gradcheck and gradgradcheck in float64, the
gradients against PyTorch's in float64, masks that skip unneeded gradients, the
all-gradients op under every mask, and opcheck of the backward ops."""

import itertools

import pytest
import torch

from autograd_cases import CASES, case_id, ct3d_call, leaf_tensors, torch_call
from cases import conv_args, relative_error
from conftest import requires_cuda

DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gradcheck_and_gradgradcheck(case, device):
    inputs = leaf_tensors(case, torch.float64, device, requires_grad=True)
    inputs = tuple(t for t in inputs if t is not None)
    f = ct3d_call(case)
    fn = (lambda x, w, b: f(x, w, b)) if len(inputs) == 3 else (lambda x, w: f(x, w, None))
    assert torch.autograd.gradcheck(fn, inputs)
    assert torch.autograd.gradgradcheck(fn, inputs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gradients_match_float64_reference(case, dtype, device):
    inputs = leaf_tensors(case, dtype, device, requires_grad=True)
    grad = None
    out = ct3d_call(case)(*inputs)
    grad = torch.randn_like(out)
    out.backward(grad)
    reference = [t.detach().double().requires_grad_() if t is not None else None for t in inputs]
    torch_call(case)(*reference).backward(grad.double())
    for ours, ref in zip(inputs, reference):
        if ours is None:
            continue
        error = ((ours.grad.double() - ref.grad).norm() / ref.grad.norm()).item()
        assert error <= (1e-5 if dtype == torch.float32 else 1e-12), error


def backward_ops_called(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    return {e.name for e in prof.events() if "backward" in e.name and e.name.startswith("ct3d::")}


def test_only_needed_gradients_are_computed():
    """The backward is one call of the all-gradients op; on the CPU (its composite
    kernel) that calls only the backward ops whose gradient is needed."""
    case = CASES[0]
    x, w, b = leaf_tensors(case, torch.float64, "cpu")
    x.requires_grad_()
    called = backward_ops_called(lambda: ct3d_call(case)(x, w, b).sum().backward())
    assert called == {"ct3d::conv_transpose3d_backward", "ct3d::conv_transpose3d_input_backward"}
    assert w.grad is None and b.grad is None
    x, w, b = leaf_tensors(case, torch.float64, "cpu")
    w.requires_grad_()
    called = backward_ops_called(lambda: ct3d_call(case)(x, w, b).sum().backward())
    assert called == {"ct3d::conv_transpose3d_backward", "ct3d::conv_transpose3d_weight_backward"}
    assert x.grad is None and w.grad is not None


def batched_call_args(case, dtype, device):
    """x (5-D), w, grad_output and the backward ops' parameters of a case."""
    x, w, _ = leaf_tensors(case, dtype, device)
    x5 = x if x.dim() == 5 else x.unsqueeze(0)
    stride, padding, output_padding, groups, dilation = conv_args(case)
    grad_output = torch.randn_like(ct3d_call(case)(x5, w, None))
    return x5, w, grad_output, (stride, padding, groups, dilation)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_all_gradients_op_under_every_mask(case, device):
    dtype = torch.float64 if device == "cpu" else torch.float32
    x, w, grad_output, (stride, padding, groups, dilation) = batched_call_args(case, dtype, device)
    stride3, padding3, dilation3 = (list(torch.nn.modules.utils._triple(v))
                                    for v in (stride, padding, dilation))
    output_padding = [grad_output.shape[2 + i] - ((x.shape[2 + i] - 1) * stride3[i] -
                                                  2 * padding3[i] + dilation3[i] *
                                                  (w.shape[2 + i] - 1) + 1) for i in range(3)]
    reference = torch.ops.aten.convolution_backward(
        grad_output.double().cpu(), x.double().cpu(), w.double().cpu(), [w.shape[1] * groups],
        stride3, padding3, dilation3, True, output_padding, groups, [True, True, True])
    bar = 1e-5 if dtype == torch.float32 else 1e-12
    for mask in itertools.product([False, True], repeat=3):
        got = torch.ops.ct3d.conv_transpose3d_backward(grad_output, x, w, stride, padding, groups,
                                                      dilation, list(mask))
        for wanted, ours, ref in zip(mask, got, reference):
            if not wanted:
                assert ours is None
                continue
            assert ours.dtype == dtype and ours.shape == ref.shape
            assert relative_error(ours, ref) <= bar, (mask, relative_error(ours, ref))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_opcheck_backward_ops(case, device):
    dtype = torch.float64 if device == "cpu" else torch.float32
    x, w, _ = leaf_tensors(case, dtype, device, requires_grad=True)
    x5 = x if x.dim() == 5 else x.unsqueeze(0)
    stride, padding, output_padding, groups, dilation = conv_args(case)
    out = ct3d_call(case)(x5.detach(), w.detach(), None)
    g = torch.randn_like(out).requires_grad_()
    torch.library.opcheck(torch.ops.ct3d.conv_transpose3d_input_backward.default,
                          (g, w, list(x5.shape[2:]), stride, padding, groups, dilation))
    torch.library.opcheck(torch.ops.ct3d.conv_transpose3d_weight_backward.default,
                          (x5.detach().requires_grad_(), g, list(w.shape[2:]), stride, padding,
                           groups, dilation))
    for mask in ([True, True, True], [False, True, False], [True, False, True]):
        torch.library.opcheck(torch.ops.ct3d.conv_transpose3d_backward.default,
                              (g, x5.detach().requires_grad_(), w, stride, padding, groups,
                               dilation, mask))


def test_backward_op_rejects_bad_rank():
    g = torch.randn(2, 3, 4, 4)
    w = torch.randn(4, 3, 2, 2, 2)
    with pytest.raises(RuntimeError, match=r"grad_output must be a 5-D"):
        torch.ops.ct3d.conv_transpose3d_input_backward(g, w, [3, 3, 3], [1], [0], 1, [1])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_output_extent_of_zero_gives_empty_output_and_zero_gradients(device, dtype):
    # Depth: (2 - 1) * 1 - 2 * 1 + 1 = 0. A negative extent stays an error (test_errors).
    x = torch.randn(2, 4, 2, 3, 3, dtype=dtype, device=device, requires_grad=True)
    w = torch.randn(4, 2, 1, 3, 3, dtype=dtype, device=device, requires_grad=True)
    b = torch.randn(2, dtype=dtype, device=device, requires_grad=True)
    out = torch.ops.ct3d.conv_transpose3d(x, w, b, [1], [1, 0, 0], [0], 1, [1])
    assert out.shape == (2, 2, 0, 5, 5)
    out.sum().backward()
    for t in (x, w, b):
        assert t.grad.shape == t.shape and torch.equal(t.grad, torch.zeros_like(t))
    grads = torch.ops.ct3d.conv_transpose3d_backward(out.detach(), x.detach(), w.detach(), [1],
                                                     [1, 0, 0], 1, [1], [True, True, True])
    for got, t in zip(grads, (x, w, b)):
        assert torch.equal(got, torch.zeros_like(t))
