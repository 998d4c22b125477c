"""Small problems for the autograd, compile and training tests: every parameter
varied at least once, batched and unbatched, with and without bias."""

import torch
import torch.nn.functional as F

# (input shape, weight shape, bias?, stride, padding, output_padding, groups, dilation)
CASES = [
    ((2, 4, 3, 4, 3), (4, 3, 2, 3, 2), True, [1, 1, 1], [0, 0, 0], [0, 0, 0], 1, [1, 1, 1]),
    ((2, 4, 3, 4, 3), (4, 3, 2, 3, 2), False, [2, 1, 3], [1, 0, 1], [1, 0, 2], 2, [1, 2, 1]),
    ((4, 3, 4, 3), (4, 2, 3, 2, 2), True, [2, 2, 2], [1, 1, 1], [0, 1, 0], 1, [2, 1, 1]),
    ((1, 6, 2, 3, 2), (6, 1, 2, 2, 2), True, [1, 2, 1], [0, 1, 0], [0, 1, 0], 3, [1, 1, 2]),
]


def case_id(case):
    x_shape, w_shape, bias, stride, padding, output_padding, groups, dilation = case
    return (f"x{'x'.join(map(str, x_shape))}_s{''.join(map(str, stride))}"
            f"_g{groups}_d{''.join(map(str, dilation))}{'_bias' if bias else ''}")


def make_tensors(case, dtype, device, requires_grad=False):
    x_shape, w_shape, has_bias, *_ = case
    groups = case[6]
    def make(shape):
        return torch.randn(shape, dtype=dtype, device=device, requires_grad=requires_grad)
    x, w = make(x_shape), make(w_shape)
    b = make((w_shape[1] * groups,)) if has_bias else None
    return x, w, b


def params(case):
    return case[3:]


def ct3d_call(case):
    stride, padding, output_padding, groups, dilation = params(case)
    return lambda x, w, b: torch.ops.ct3d.conv_transpose3d(
        x, w, b, stride, padding, output_padding, groups, dilation)


def torch_call(case):
    stride, padding, output_padding, groups, dilation = params(case)
    return lambda x, w, b: F.conv_transpose3d(x, w, b, stride, padding, output_padding, groups,
                                              dilation)
