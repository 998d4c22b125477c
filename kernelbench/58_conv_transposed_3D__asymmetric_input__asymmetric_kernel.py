import torch
import torch.nn as nn

import ct3d


class Model(nn.Module):
    """KernelBench level-1 problem 58: nn.ConvTranspose3d's parameters, ct3d's kernel."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1, 1), padding: tuple = (0, 0, 0), output_padding: tuple = (0, 0, 0), groups: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ct3d.conv_transpose3d_module(self.conv_transpose3d, x)
