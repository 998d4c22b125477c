"""The drop-in layer and the one-call converter.

``ct3d.nn.ConvTranspose3d`` is ``torch.nn.ConvTranspose3d`` (same constructor,
parameters, initialisation, ``state_dict`` and ``extra_repr``) whose forward runs
ct3d's op, ``output_size`` argument included. ``ct3d.convert(model)`` turns every
``nn.ConvTranspose3d`` inside a model into one, in place.
"""

from typing import Optional

import torch
from torch import nn


class ConvTranspose3d(nn.ConvTranspose3d):
    """``torch.nn.ConvTranspose3d`` with ct3d's forward (float32-accurate on GPUs)."""

    def forward(self, input: torch.Tensor, output_size: Optional[list] = None) -> torch.Tensor:
        if self.padding_mode != "zeros":
            raise ValueError("Only 'zeros' padding mode is supported for ConvTranspose3d")
        # nn.ConvTranspose3d's own rule for turning output_size into output_padding.
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, 3, self.dilation)
        return torch.ops.ct3d.conv_transpose3d(input, self.weight, self.bias, self.stride,
                                               self.padding, output_padding, self.groups,
                                               self.dilation)


def convert(model: nn.Module) -> nn.Module:
    """Makes every ``torch.nn.ConvTranspose3d`` in ``model`` (the model itself
    included) a ``ct3d.nn.ConvTranspose3d``, in place, and returns the model.

    The modules keep their identity, parameters (devices, dtypes, requires_grad),
    buffers and hooks: only their class changes, so an optimizer built before the
    call still holds the right parameters. Subclasses of nn.ConvTranspose3d with
    their own forward are left alone."""
    for module in model.modules():
        if type(module) is nn.ConvTranspose3d:
            module.__class__ = ConvTranspose3d
    return model
