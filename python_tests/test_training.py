"""A small 3-D decoder built from ct3d.Model layers trains like the same decoder
built from nn.ConvTranspose3d: same losses and gradients, step after step."""

import pytest
import torch
from torch import nn

import ct3d
from conftest import requires_cuda

LAYERS = [
    dict(in_channels=8, out_channels=6, kernel_size=3, stride=2, padding=1, output_padding=1,
         bias=True),
    dict(in_channels=6, out_channels=4, kernel_size=(3, 2, 3), stride=(1, 2, 1), groups=2,
         bias=True),
    dict(in_channels=4, out_channels=1, kernel_size=2, dilation=2, bias=False),
]


def decoder(layer_type):
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


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_training_steps_match_nn(device):
    torch.manual_seed(0)
    reference = decoder(nn.ConvTranspose3d).to(device).double()
    ours = decoder(ct3d.Model).to(device).double()
    copy_parameters(ours, reference)
    opt_ref = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9)
    opt_ours = torch.optim.SGD(ours.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(3, 8, 3, 4, 3, dtype=torch.float64, device=device)
    with torch.no_grad():
        target = torch.randn_like(reference(x))
    losses = []
    for _ in range(4):
        step_losses = []
        for model, opt in ((reference, opt_ref), (ours, opt_ours)):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), target)
            loss.backward()
            opt.step()
            step_losses.append(loss.item())
        losses.append(step_losses)
        grads_ref = [p.grad for p in reference.parameters()]
        grads_ours = [p.grad for p in ours.parameters()]
        for a, b in zip(grads_ours, grads_ref):
            torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)
    for ref_loss, our_loss in losses:
        assert our_loss == pytest.approx(ref_loss, rel=1e-9)
    assert losses[-1][1] < losses[0][1]  # it trains
