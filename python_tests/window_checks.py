"""The checks the engine's form suites (test_cuda_shifted_window.py, test_cuda_tap_rows.py,
test_cuda_tap_columns.py, test_cuda_strided_lines.py) run, each with its own forms
forced (`forms`: names of ops/options/forced_form.cpp's forms, in order): the forward and the
stride-1 input gradient against float64 with outputs poisoned first, the bar at 1e-18
and 1e18 input scales, and the half types (their own form, and widened)."""

import torch

from cases import conv_args, edge_case, make_tensors, reference, relative_error
from forms import force
from test_cuda_op import FLOAT32_BAR, poison_allocator


def force_engine_forms(forms):
    """The form suites test the engine's own forms: the Winograd forward (which would
    take their wide stride-1 cases) stays off; it has its own suite
    (test_cuda_winograd.py)."""
    force(*forms, winograd="off")


def check_forward(case, forms, memory_format=torch.contiguous_format):
    force_engine_forms(forms)
    x, w, b = make_tensors(case, torch.float32, "cuda")
    x = x.contiguous(memory_format=memory_format)
    poison_allocator(64 << 20)
    got = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))
    expected = reference(x, w, b, case)
    assert got.shape == expected.shape and not got.isnan().any(), case
    assert relative_error(got, expected) <= FLOAT32_BAR, (relative_error(got, expected), case)


def check_input_gradient(params, forms, dtype=torch.float32):
    """The stride-1 input gradient of the case with cin and cout swapped: its targets are
    the forward case's output channels. float16 / bfloat16: within 5 % of the float64
    result rounded once."""
    batch, cin, cout, *rest = params
    case = edge_case((batch, cout, cin, *rest), bias=False)
    force_engine_forms(forms)
    x, w, _ = make_tensors(case, dtype, "cuda")
    stride, padding, output_padding, groups, dilation = conv_args(case)
    grad_output = torch.randn(reference(x, w, None, case).shape, device="cuda").to(dtype)
    poison_allocator(64 << 20)
    got = torch.ops.ct3d.conv_transpose3d_input_backward(
        grad_output, w, list(x.shape[2:]), stride, padding, groups, dilation)
    expected = torch.ops.aten.convolution_backward(
        grad_output.double().cpu(), x.double().cpu(), w.double().cpu(), None, stride, padding,
        dilation, True, output_padding, groups, [True, False, False])[0]
    assert got.dtype == dtype and got.shape == expected.shape and not got.isnan().any(), case
    bar = (FLOAT32_BAR if dtype == torch.float32
           else 1.05 * relative_error(expected.to(dtype), expected))
    assert relative_error(got, expected) <= bar, (relative_error(got, expected), bar, case)


def check_input_scales(case, forms):
    """The split staged input keeps float32's exponent range: same error at 1e-18 and 1e18."""
    force_engine_forms(forms)
    x, w, _ = make_tensors(case, torch.float32, "cuda")
    for scale in (1e-18, 1e18):
        got = torch.ops.ct3d.conv_transpose3d(x * scale, w, None, *conv_args(case))
        expected = reference(x * scale, w, None, case)
        assert relative_error(got, expected) <= FLOAT32_BAR, scale


def check_half_forward(case, dtype, forms, memory_format=torch.contiguous_format):
    """float16 and bfloat16: on the kernel's half form (one float16 or bfloat16 product
    per multiply-add, float32 sums), or with half-widened on widened operands (one
    TF32 product each, exact): within 5 % of the float64 result rounded once."""
    force_engine_forms(forms)
    x, w, b = make_tensors(case, dtype, "cuda")
    x = x.contiguous(memory_format=memory_format)
    poison_allocator(64 << 20)
    got = torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))
    expected = reference(x, w, b, case)
    assert got.dtype == dtype and got.shape == expected.shape and not got.isnan().any(), case
    assert got.is_contiguous(memory_format=memory_format), case
    bound = 1.05 * relative_error(expected.to(dtype), expected)
    assert relative_error(got, expected) <= bound, (relative_error(got, expected), bound, case)
