"""torch.compile and torch.export of ct3d.Model: no graph break, same results as
eager, forward and backward, with static and dynamic batch sizes."""

import pytest
import torch

import ct3d
from conftest import requires_cuda

DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]
KWARGS = dict(in_channels=4, out_channels=6, kernel_size=(2, 3, 2), stride=(2, 1, 2),
              padding=(1, 0, 1), output_padding=(1, 0, 0), groups=2, bias=True)


def make_model(device):
    torch.manual_seed(0)
    return ct3d.Model(**KWARGS).to(device).double()


def forward_backward(model, x):
    x = x.detach().requires_grad_()
    out = model(x)
    out.pow(2).sum().backward()
    grads = [x.grad] + [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    return out.detach(), grads


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph_matches_eager(device, dynamic):
    torch._dynamo.reset()
    model = make_model(device)
    compiled = torch.compile(model, fullgraph=True, dynamic=dynamic)
    for batch in (2, 3):
        x = torch.randn(batch, 4, 3, 4, 3, dtype=torch.float64, device=device)
        out, grads = forward_backward(model, x)
        out_c, grads_c = forward_backward(compiled, x)
        torch.testing.assert_close(out_c, out)
        for g_c, g in zip(grads_c, grads):
            torch.testing.assert_close(g_c, g)


def test_dynamic_compile_does_not_recompile_for_a_new_batch():
    torch._dynamo.reset()
    frames = []
    def backend(gm, example_inputs):
        frames.append(gm)
        return gm.forward
    compiled = torch.compile(make_model("cpu"), fullgraph=True, dynamic=True, backend=backend)
    for batch in (2, 3, 5):
        compiled(torch.randn(batch, 4, 3, 4, 3, dtype=torch.float64))
    assert len(frames) == 1


@pytest.mark.parametrize("device", DEVICES)
def test_export_runs_and_matches(device):
    model = make_model(device)
    x = torch.randn(2, 4, 3, 4, 3, dtype=torch.float64, device=device)
    batch = torch.export.Dim("batch", min=1, max=64)
    program = torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})
    assert any("ct3d.conv_transpose3d" in str(node.target) for node in program.graph.nodes)
    for n in (2, 5):
        x = torch.randn(n, 4, 3, 4, 3, dtype=torch.float64, device=device)
        torch.testing.assert_close(program.module()(x), model(x))
