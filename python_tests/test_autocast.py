"""ct3d under torch.autocast: PyTorch's policy for conv_transpose3d (floating-point
operands cast to the autocast dtype, the output in it), forward and backward, the
KernelBench Model and the drop-in layer, and a GradScaler training loop that follows
the nn version's losses. CPU here, CUDA on a GPU."""

import copy

import pytest
import torch
from torch import nn

import ct3d
from conftest import requires_cuda

SETTINGS = [
    ("cpu", torch.bfloat16),
    pytest.param("cuda", torch.float16, marks=requires_cuda),
    pytest.param("cuda", torch.bfloat16, marks=requires_cuda),
]
# Relative error against float64 of a result computed from operands rounded to the
# dtype (what cuDNN and PyTorch's CPU kernels reach too).
BAR = {torch.float16: 3e-3, torch.bfloat16: 2e-2}


def decoder(device):
    """A Conv3d feeding two transposed convolutions: the layer before a transposed
    convolution hands it a half-precision activation, as in a real decoder."""
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv3d(3, 8, 1),
        nn.ConvTranspose3d(8, 6, 3, stride=2, padding=1, output_padding=1),
        nn.ReLU(),
        nn.ConvTranspose3d(6, 4, (2, 3, 2), groups=2, bias=False),
    ).to(device)


def relative_error(ours, ref):
    ref = ref.double()
    return ((ours.double() - ref).norm() / ref.norm()).item()


@pytest.mark.parametrize("device,dtype", SETTINGS)
def test_output_dtype_and_gradients_follow_nn(device, dtype):
    original = decoder(device)
    converted = ct3d.convert(copy.deepcopy(original))
    x = torch.randn(2, 3, 4, 5, 4, device=device)
    results = []
    for model in (original, converted):
        with torch.autocast(device, dtype=dtype):
            y = model(x)
        y.float().square().mean().backward()
        results.append((y, [p.grad for p in model.parameters()]))
    (y_nn, grads_nn), (y_ours, grads_ours) = results
    assert y_ours.dtype == y_nn.dtype == dtype
    reference = copy.deepcopy(original).double()
    assert relative_error(y_ours, reference(x.double())) <= BAR[dtype]
    for ours, theirs, param in zip(grads_ours, grads_nn, converted.parameters()):
        assert ours.dtype == param.dtype == torch.float32 and ours.isfinite().all()
        assert relative_error(ours, theirs) <= 5 * BAR[dtype]


@pytest.mark.parametrize("device,dtype", SETTINGS)
def test_kernelbench_model_under_autocast(device, dtype):
    torch.manual_seed(1)
    model = ct3d.Model(4, 6, 3, stride=2, padding=1, bias=True).to(device)
    x = torch.randn(2, 4, 5, 6, 5, device=device)
    with torch.autocast(device, dtype=dtype):
        y = model(x)
        y_nn = model.conv_transpose3d(x)
    assert y.dtype == y_nn.dtype == dtype
    reference = model.conv_transpose3d.double()(x.double())
    assert relative_error(y, reference) <= BAR[dtype]


@pytest.mark.parametrize("device,dtype", SETTINGS)
def test_float64_is_not_cast(device, dtype):
    # PyTorch's policy leaves float64 operands alone; so does ct3d's.
    layer = ct3d.nn.ConvTranspose3d(2, 3, 2).double().to(device)
    x = torch.randn(1, 2, 3, 3, 3, dtype=torch.float64, device=device)
    with torch.autocast(device, dtype=dtype):
        assert layer(x).dtype == torch.float64


@pytest.mark.parametrize("device,dtype", SETTINGS)
def test_gradscaler_training_follows_nn(device, dtype):
    """Five steps of autocast + GradScaler from the same initialisation: the losses
    stay within 1e-2 of the nn version's, every gradient finite."""
    original = decoder(device)
    converted = ct3d.convert(copy.deepcopy(original))
    torch.manual_seed(2)
    batches = [(torch.randn(2, 3, 4, 5, 4, device=device),
                torch.randn(2, 4, 9, 12, 9, device=device)) for _ in range(5)]
    losses = []
    for model in (original, converted):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler(device)
        run = []
        for x, target in batches:
            optimizer.zero_grad()
            with torch.autocast(device, dtype=dtype):
                loss = (model(x).float() - target).square().mean()
            scaler.scale(loss).backward()
            assert all(p.grad.isfinite().all() for p in model.parameters())
            scaler.step(optimizer)
            scaler.update()
            run.append(loss.item())
        losses.append(run)
    for ours, theirs in zip(losses[1], losses[0]):
        assert abs(ours - theirs) <= 1e-2 * abs(theirs), losses
