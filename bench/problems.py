"""The KernelBench level-1 ConvTranspose3d problems: one table for the tests, the
benchmark and the demo.

``init_inputs`` is what each problem's ``get_init_inputs()`` returns, passed
positionally to its ``Model``; ``conv`` is the nn.ConvTranspose3d that its Model
builds from them (problem 73 passes its groups value into ``output_padding``,
which it never forwards, so its convolution has groups=1 and output_padding=0).
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Problem:
    number: int
    file_stem: str
    batch: int
    input_size: tuple          # (C_in, D, H, W)
    init_inputs: tuple
    conv: dict = field(default_factory=dict)
    name: str = ""  # a label for problems outside level 1

    @property
    def label(self) -> str:
        return self.name or f"L1-{self.number}"

    def input_shape(self, batch=None, spatial_scale=1):
        """Input shape, optionally with a smaller batch and spatial sizes divided by
        spatial_scale (kept at least 2) for quick tests."""
        c, *spatial = self.input_size
        spatial = [max(2, s // spatial_scale) for s in spatial]
        return (self.batch if batch is None else batch, c, *spatial)

    def flops(self) -> float:
        """2 * N * C_in * D * H * W * (C_out / groups) * kD * kH * kW, as in ANCHORS.md."""
        c_in, d, h, w = self.input_size
        kd, kh, kw = _triple(self.conv["kernel_size"])
        cout_g = self.conv["out_channels"] // self.conv.get("groups", 1)
        return 2.0 * self.batch * c_in * d * h * w * cout_g * kd * kh * kw


def _triple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v, v)


PROBLEMS = [
    Problem(58, "58_conv_transposed_3D__asymmetric_input__asymmetric_kernel", 16, (32, 16, 32, 64),
            (32, 16, (3, 5, 7)),
            dict(bias=False, in_channels=32, out_channels=16, kernel_size=(3, 5, 7))),
    Problem(61, "61_conv_transposed_3D__square_input__square_kernel", 8, (48, 64, 64, 64),
            (48, 48, 3),
            dict(bias=False, in_channels=48, out_channels=48, kernel_size=(3, 3, 3))),
    Problem(68, "68_conv_transposed_3D__square_input__asymmetric_kernel", 16, (32, 64, 64, 64),
            (32, 64, (3, 5, 5)),
            dict(bias=False, in_channels=32, out_channels=64, kernel_size=(3, 5, 5))),
    Problem(70, "70_conv_transposed_3D__asymmetric_input__square_kernel", 8, (48, 96, 96, 96),
            (48, 24, 3),
            dict(bias=False, in_channels=48, out_channels=24, kernel_size=(3, 3, 3))),
    Problem(72, "72_conv_transposed_3D_asymmetric_input_asymmetric_kernel___strided_padded_grouped_",
            8, (32, 12, 24, 48),
            (32, 32, (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), 4),
            dict(bias=False, in_channels=32, out_channels=32, kernel_size=(3, 5, 7), stride=(2, 2, 2),
                 padding=(1, 2, 3), output_padding=(1, 1, 1), groups=4)),
    Problem(73, "73_conv_transposed_3D_asymmetric_input_square_kernel__strided_padded__grouped",
            4, (32, 32, 64, 128),
            (32, 32, 3, 2, 1, 4),
            dict(bias=False, in_channels=32, out_channels=32, kernel_size=(3, 3, 3), stride=2, padding=1)),
    Problem(77, "77_conv_transposed_3D_square_input_square_kernel___padded____dilated____strided__",
            16, (32, 16, 32, 32),
            (32, 64, 3, 2, 1, 2),
            dict(bias=False, in_channels=32, out_channels=64, kernel_size=(3, 3, 3), stride=2, padding=1,
                 dilation=2)),
]

BY_NUMBER = {p.number: p for p in PROBLEMS}
