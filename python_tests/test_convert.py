"""ct3d.nn.ConvTranspose3d and ct3d.convert: a model converted in place gives the
outputs and gradients of the original, keeps its state_dict format both ways, still
trains, and compiles with fullgraph=True."""

import copy

import pytest
import torch
from torch import nn

import ct3d
from conftest import requires_cuda


class Decoder(nn.Module):
    """Several transposed convolutions at different strides, groups and dilations,
    plus layers convert() must leave alone."""

    def __init__(self):
        super().__init__()
        self.up1 = nn.ConvTranspose3d(8, 6, 3, stride=2, padding=1, output_padding=1)
        self.norm = nn.GroupNorm(2, 6)
        self.blocks = nn.Sequential(
            nn.ConvTranspose3d(6, 4, (3, 2, 3), stride=(1, 2, 1), groups=2),
            nn.ReLU(),
            nn.ConvTranspose3d(4, 2, 2, dilation=2, bias=False),
        )
        self.conv = nn.Conv3d(2, 2, 1)

    def forward(self, x):
        return self.conv(self.blocks(torch.relu(self.norm(self.up1(x)))))


def make_pair(device, dtype):
    torch.manual_seed(0)
    original = Decoder().to(device, dtype)
    converted = ct3d.convert(copy.deepcopy(original))
    return original, converted


def transposed_convs(model):
    return [m for m in model.modules() if isinstance(m, nn.ConvTranspose3d)]


def test_convert_swaps_every_transposed_convolution_in_place():
    model = Decoder()
    params_before = {name: p for name, p in model.named_parameters()}
    model.blocks[2].weight.requires_grad_(False)
    assert ct3d.convert(model) is model
    assert all(type(m) is ct3d.nn.ConvTranspose3d for m in transposed_convs(model))
    assert len(transposed_convs(model)) == 3
    assert type(model.conv) is nn.Conv3d
    for name, p in model.named_parameters():
        assert p is params_before[name]  # the same Parameter objects: optimizers still hold them
    assert not model.blocks[2].weight.requires_grad
    # A bare layer converts too, and converting twice changes nothing.
    layer = nn.ConvTranspose3d(2, 2, 3)
    assert type(ct3d.convert(ct3d.convert(layer))) is ct3d.nn.ConvTranspose3d


def test_layer_matches_nn_module_construction():
    torch.manual_seed(0)
    ours = ct3d.nn.ConvTranspose3d(4, 6, (2, 3, 1), stride=2, padding=1, groups=2, bias=True)
    torch.manual_seed(0)
    ref = nn.ConvTranspose3d(4, 6, (2, 3, 1), stride=2, padding=1, groups=2, bias=True)
    assert ours.extra_repr() == ref.extra_repr()
    assert ours.state_dict().keys() == ref.state_dict().keys()
    for key, value in ref.state_dict().items():
        assert torch.equal(ours.state_dict()[key], value)


DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]


@pytest.mark.parametrize("device", DEVICES)
def test_converted_model_gives_the_same_outputs_and_gradients(device):
    """The converted model in float32 against the original in float64. The layers
    convert() leaves alone (the Conv3d) run cuDNN, with TF32 off: at its default
    (TF32 on) its weight gradient alone is 7e-4 off."""
    original, converted = make_pair(device, torch.float32)
    original = original.double()
    x = torch.randn(2, 8, 3, 4, 3, device=device)
    outputs = []
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        for model, x_in in ((original, x.double()), (converted, x)):
            y = model(x_in)
            y.square().sum().backward()
            outputs.append((y.detach(), [p.grad for p in model.parameters()]))
    (y_ref, g_ref), (y_ours, g_ours) = outputs
    assert ((y_ours.double() - y_ref).norm() / y_ref.norm()).item() <= 1e-5
    for a, b in zip(g_ours, g_ref):
        assert ((a.double() - b).norm() / b.norm()).item() <= 1e-5


def test_output_size_argument():
    torch.manual_seed(0)
    layer = ct3d.nn.ConvTranspose3d(3, 2, 3, stride=2, padding=1).double()
    ref = nn.ConvTranspose3d(3, 2, 3, stride=2, padding=1).double()
    ref.load_state_dict(layer.state_dict())
    x = torch.randn(1, 3, 4, 5, 6, dtype=torch.float64)
    for size in ([8, 10, 12], [7, 9, 11]):
        y = layer(x, output_size=size)
        assert y.shape[2:] == tuple(size)
        torch.testing.assert_close(y, ref(x, output_size=size))
    with pytest.raises(ValueError):
        layer(x, output_size=[20, 20, 20])


def test_state_dict_loads_both_ways():
    original, converted = make_pair("cpu", torch.float32)
    fresh_nn, fresh_ct3d = Decoder(), ct3d.convert(Decoder())
    fresh_nn.load_state_dict(converted.state_dict())
    fresh_ct3d.load_state_dict(original.state_dict())
    for a, b in zip(fresh_nn.state_dict().values(), fresh_ct3d.state_dict().values()):
        assert torch.equal(a, b)


def test_converted_model_trains():
    _, model = make_pair("cpu", torch.float64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    torch.manual_seed(1)
    x = torch.randn(2, 8, 3, 4, 3, dtype=torch.float64)
    target = torch.randn_like(model(x))
    losses = []
    for _ in range(5):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_converted_model_compiles_fullgraph():
    _, model = make_pair("cpu", torch.float32)
    x = torch.randn(2, 8, 3, 4, 3)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)


def ddp_worker(rank, world, init_file, result_file):
    import json
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world)
    original, converted = make_pair("cpu", torch.float64)
    generator = torch.Generator().manual_seed(100 + rank)  # each rank its own batch
    x = torch.randn(2, 8, 3, 4, 3, generator=generator, dtype=torch.float64)
    grads = []
    for model in (original, converted):
        DistributedDataParallel(model)(x).square().sum().backward()
        grads.append([p.grad for p in model.parameters()])
    errors = [((a - b).norm() / b.norm()).item() for a, b in zip(grads[1], grads[0])]
    if rank == 0:
        with open(result_file, "w") as f:
            json.dump(errors, f)
    dist.destroy_process_group()


def test_converted_model_runs_under_ddp(tmp_path):
    import json
    import torch.multiprocessing as mp

    result_file = tmp_path / "errors.json"
    mp.spawn(ddp_worker, args=(2, str(tmp_path / "init"), str(result_file)), nprocs=2)
    assert max(json.loads(result_file.read_text())) <= 1e-12
