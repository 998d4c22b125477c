"""Small problems for the autograd tests, in the case format of cases.py: every
parameter varied at least once, batched and unbatched, with and without bias."""

import torch
import torch.nn.functional as F

from cases import conv_args, make_tensors


def _case(x_shape, cout, kernel, bias, stride, padding, output_padding, groups, dilation):
    batched = len(x_shape) == 5
    return dict(batch=x_shape[0] if batched else 1, cin=x_shape[-4], cout=cout,
                spatial=list(x_shape[-3:]), kernel=kernel, stride=stride, padding=padding,
                output_padding=output_padding, groups=groups, dilation=dilation, bias=bias,
                batched=batched)


CASES = [
    _case((2, 4, 3, 4, 3), 3, [2, 3, 2], True, [1, 1, 1], [0, 0, 0], [0, 0, 0], 1, [1, 1, 1]),
    _case((2, 4, 3, 4, 3), 6, [2, 3, 2], False, [2, 1, 3], [1, 0, 1], [1, 0, 2], 2, [1, 2, 1]),
    _case((4, 3, 4, 3), 2, [3, 2, 2], True, [2, 2, 2], [1, 1, 1], [0, 1, 0], 1, [2, 1, 1]),
    _case((1, 6, 2, 3, 2), 3, [2, 2, 2], True, [1, 2, 1], [0, 1, 0], [0, 1, 0], 3, [1, 1, 2]),
]


def case_id(case):
    x_shape = ([case["batch"]] if case["batched"] else []) + [case["cin"], *case["spatial"]]
    return (f"x{'x'.join(map(str, x_shape))}_s{''.join(map(str, case['stride']))}"
            f"_g{case['groups']}_d{''.join(map(str, case['dilation']))}"
            f"{'_bias' if case['bias'] else ''}")


def leaf_tensors(case, dtype, device, requires_grad=False):
    """cases.make_tensors, as leaves that may require grad (bias None without bias)."""
    return tuple(None if t is None else t.requires_grad_(requires_grad)
                 for t in make_tensors(case, dtype, device))


def ct3d_call(case):
    return lambda x, w, b: torch.ops.ct3d.conv_transpose3d(x, w, b, *conv_args(case))


def torch_call(case):
    return lambda x, w, b: F.conv_transpose3d(x, w, b, *conv_args(case))
