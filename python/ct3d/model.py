"""The drop-in module: nn.ConvTranspose3d's parameters, ct3d's forward."""

import torch
from torch import nn


def conv_transpose3d_module(conv: nn.ConvTranspose3d, x: torch.Tensor) -> torch.Tensor:
    """Runs ``conv`` (an nn.ConvTranspose3d) through ct3d's op instead of its own forward."""
    return torch.ops.ct3d.conv_transpose3d(
        x, conv.weight, conv.bias, conv.stride, conv.padding, conv.output_padding, conv.groups,
        conv.dilation,
    )


class Model(nn.Module):
    """Same constructor, parameters, initialisation and state_dict as a module holding
    ``self.conv_transpose3d = nn.ConvTranspose3d(...)``; forward runs ct3d's kernel."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=False, dilation=1):
        super().__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding,
            output_padding=output_padding, groups=groups, bias=bias, dilation=dilation,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return conv_transpose3d_module(self.conv_transpose3d, x)
