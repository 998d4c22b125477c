import torch
import torch.nn as nn

import ct3d


class Model(nn.Module):
    """KernelBench level-1 problem 70: nn.ConvTranspose3d's parameters, ct3d's kernel."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, output_padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(in_channels, out_channels, (kernel_size, kernel_size, kernel_size), stride=stride, padding=padding, output_padding=output_padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ct3d.conv_transpose3d_module(self.conv_transpose3d, x)
