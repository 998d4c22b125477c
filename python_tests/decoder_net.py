"""A small 3-D decoder, built from ct3d.Model layers or from nn.ConvTranspose3d
with the same parameters, for the training and DistributedDataParallel tests."""

from torch import nn

import ct3d

LAYERS = [
    dict(in_channels=8, out_channels=6, kernel_size=3, stride=2, padding=1, output_padding=1,
         bias=True),
    dict(in_channels=6, out_channels=4, kernel_size=(3, 2, 3), stride=(1, 2, 1), groups=2,
         bias=True),
    dict(in_channels=4, out_channels=1, kernel_size=2, dilation=2, bias=False),
]


def decoder(layer_type):
    """layer_type: nn.ConvTranspose3d, or anything else for ct3d.Model."""
    layers = []
    for i, kwargs in enumerate(LAYERS):
        kwargs = dict(kwargs)
        if layer_type is nn.ConvTranspose3d:
            layers.append(nn.ConvTranspose3d(**kwargs))
        else:
            layers.append(ct3d.Model(**kwargs))
        if i + 1 < len(LAYERS):
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def copy_parameters(ours, reference):
    ours_convs = [m.conv_transpose3d for m in ours if isinstance(m, ct3d.Model)]
    ref_convs = [m for m in reference if isinstance(m, nn.ConvTranspose3d)]
    for a, b in zip(ours_convs, ref_convs):
        a.load_state_dict(b.state_dict())
