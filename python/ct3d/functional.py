"""torch.nn.functional-style entry point.

``torch.ops.ct3d.conv_transpose3d`` takes its size arguments as lists, exactly like
``torch.ops.aten.conv_transpose3d``; this wrapper also takes a single int for them,
as ``torch.nn.functional.conv_transpose3d`` does.
"""

import torch


def _as_list(value):
    return [value] if isinstance(value, int) else list(value)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return torch.ops.ct3d.conv_transpose3d(
        input, weight, bias, _as_list(stride), _as_list(padding), _as_list(output_padding),
        groups, _as_list(dilation),
    )


def explain(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
            dilation=1):
    """Which path ct3d takes for these arguments, one line for the forward and one for each
    gradient (the planner's form and tiles on CUDA, the CPU's form there), without
    computing anything. Takes conv_transpose3d's arguments; returns the text.

        print(ct3d.explain(x, conv.weight, conv.bias, stride=2))
    """
    return torch.ops.ct3d.explain(
        input, weight, bias, _as_list(stride), _as_list(padding), _as_list(output_padding),
        groups, _as_list(dilation),
    )
