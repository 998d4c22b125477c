"""A small 3-D decoder built from ct3d.Model layers trains like the same decoder
built from nn.ConvTranspose3d: same losses and gradients, step after step."""

import pytest
import torch
from torch import nn

from conftest import requires_cuda
from decoder_net import copy_parameters, decoder

@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_training_steps_match_nn(device):
    torch.manual_seed(0)
    reference = decoder(nn.ConvTranspose3d).to(device).double()
    ours = decoder("ct3d").to(device).double()
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
