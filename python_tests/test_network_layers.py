"""The real-network layer table (bench/network_layers.py) is what the networks build,
and ct3d.convert swaps those networks' transposed convolutions without changing what
they compute: outputs and one optimiser step against the unconverted network, on the
CPU. MONAI is a test and benchmark dependency (scripts/setup.sh installs it); without
it these tests skip."""

import copy

import pytest
import torch

import ct3d

monai_nets = pytest.importorskip("monai.networks.nets")
pytest.importorskip("einops")  # UNETR's attention blocks

from network_layers import NETWORK_LAYERS, NETWORKS, SMALL_NETWORKS  # noqa: E402


def build(name, **overrides):
    builder, arguments, _ = NETWORKS[name]
    return getattr(monai_nets, builder)(**{**arguments, **overrides})


def transposed_convolutions(net, input_shape):
    """(in, out, input extent, kernel, stride, padding, output_padding, bias) of every
    nn.ConvTranspose3d call, traced on the meta device (no memory, no arithmetic)."""
    found = []

    def record(module, inputs, output):
        found.append((module.in_channels, module.out_channels, inputs[0].shape[2],
                      module.kernel_size[0], module.stride[0], module.padding[0],
                      module.output_padding[0], module.bias is not None))

    net = net.to("meta")
    hooks = [m.register_forward_hook(record) for m in net.modules()
             if isinstance(m, torch.nn.ConvTranspose3d)]
    with torch.no_grad():
        net(torch.zeros(input_shape, device="meta"))
    for hook in hooks:
        hook.remove()
    return found


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_table_holds_every_transposed_convolution_of_the_network(name):
    table = {(p.conv["in_channels"], p.conv["out_channels"], p.input_size[1],
              p.conv["kernel_size"], p.conv["stride"], p.conv["padding"],
              p.conv["output_padding"], p.conv["bias"])
             for p in NETWORK_LAYERS if p.name.startswith(f"R-{name}-")}
    traced = set(transposed_convolutions(build(name), NETWORKS[name][2]))
    assert traced == table


@pytest.mark.parametrize("name", sorted(SMALL_NETWORKS))
def test_converted_network_matches_and_trains_like_the_original(name):
    torch.manual_seed(0)
    overrides, shape = SMALL_NETWORKS[name]
    reference = build(name, **overrides).double()
    converted = ct3d.convert(copy.deepcopy(reference))
    swapped = [m for m in converted.modules() if isinstance(m, ct3d.nn.ConvTranspose3d)]
    assert swapped and not any(type(m) is torch.nn.ConvTranspose3d for m in converted.modules())
    x = torch.randn(shape, dtype=torch.float64)
    target = torch.randn_like(reference(x))
    for net in (reference, converted):
        net.train()
    optimizers = [torch.optim.SGD(net.parameters(), lr=0.1) for net in (reference, converted)]
    losses = []
    for net, optimizer in zip((reference, converted), optimizers):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[1] == pytest.approx(losses[0], rel=1e-10)
    for (key, a), (_, b) in zip(reference.state_dict().items(), converted.state_dict().items()):
        if a.is_floating_point():
            assert torch.allclose(a, b, rtol=1e-9, atol=1e-12), key
    with torch.no_grad():
        after = [net(x) for net in (reference, converted)]
    assert torch.allclose(after[0], after[1], rtol=1e-9, atol=1e-12)
