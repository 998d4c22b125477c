"""ct3d.Model is a drop-in for a module holding nn.ConvTranspose3d."""

import pytest
import torch
from torch import nn

import ct3d

CONFIGS = [
    dict(in_channels=4, out_channels=6, kernel_size=3),
    dict(in_channels=6, out_channels=4, kernel_size=(2, 3, 1), stride=(2, 1, 3), padding=(1, 0, 0),
         output_padding=(1, 0, 2), groups=2, bias=True, dilation=(1, 2, 1)),
    dict(in_channels=3, out_channels=3, kernel_size=2, stride=2, groups=3, bias=True),
]


class Reference(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=False, dilation=1):
        super().__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding,
            output_padding=output_padding, groups=groups, bias=bias, dilation=dilation)

    def forward(self, x):
        return self.conv_transpose3d(x)


@pytest.mark.parametrize("config", CONFIGS)
def test_same_initialisation_and_output(config):
    torch.manual_seed(3)
    ours = ct3d.Model(**config).double()
    torch.manual_seed(3)
    ref = Reference(**config).double()
    assert ours.state_dict().keys() == ref.state_dict().keys()
    for key, value in ref.state_dict().items():
        torch.testing.assert_close(ours.state_dict()[key], value, rtol=0, atol=0)
    x = torch.randn(2, config["in_channels"], 4, 3, 5, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), ref(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("config", CONFIGS)
def test_state_dict_loads_both_ways(config):
    ours, ref = ct3d.Model(**config), Reference(**config)
    ours.load_state_dict(ref.state_dict())
    ref2 = Reference(**config)
    ref2.load_state_dict(ours.state_dict())
    x = torch.randn(1, config["in_channels"], 3, 3, 3)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), ref(x), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(ref2(x), ref(x), rtol=0, atol=0)


def test_model_forward_uses_the_ct3d_op(monkeypatch):
    calls = []
    real = torch.ops.ct3d.conv_transpose3d

    class Spy:
        def __getattr__(self, name):
            return getattr(real, name)

        def __call__(self, *args):
            calls.append(args)
            return real(*args)

    monkeypatch.setattr(torch.ops.ct3d, "conv_transpose3d", Spy())
    ct3d.Model(2, 2, 3)(torch.randn(1, 2, 3, 3, 3))
    assert len(calls) == 1
