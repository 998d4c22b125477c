"""ct3d.explain: the path each op takes for a layer, one line each, computing nothing; on
CUDA the planner's form (ops/cuda/engine/planner/gemm_plan.h), the one the call runs."""

import pytest
import torch

import ct3d
from forms import force

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a GPU")


def lines(text):
    return dict(line.split(": ", 1) for line in text.splitlines())


def test_explain_names_the_cpu_forms():
    x = torch.randn(2, 8, 5, 6, 7)
    w = torch.randn(8, 4, 3, 3, 3)
    paths = lines(ct3d.explain(x, w, None, stride=2, padding=1))
    assert set(paths) == {"forward", "input gradient", "weight gradient"}
    assert "GEMM" in paths["forward"] or "direct" in paths["forward"]
    force("cpu-scatter")
    assert "scatter" in lines(ct3d.explain(x, w, None, stride=2, padding=1))["forward"]
    force("cpu-gather")
    assert "gather" in lines(ct3d.explain(x, w, None, stride=2, padding=1))["forward"]


def test_explain_checks_its_arguments_as_the_op_does():
    x = torch.randn(2, 8, 5, 6, 7)
    w = torch.randn(8, 4, 3, 3, 3)
    with pytest.raises(RuntimeError, match="output_padding"):
        ct3d.explain(x, w, None, stride=2, output_padding=2)
    with pytest.raises(RuntimeError, match="groups"):
        ct3d.explain(x, w, None, groups=3)


def test_explain_takes_unbatched_input():
    x = torch.randn(8, 5, 6, 7)
    w = torch.randn(8, 4, 2, 2, 2)
    assert len(lines(ct3d.explain(x, w, torch.randn(4), 2))) == 3


@needs_cuda
@pytest.mark.parametrize("form, shape", [
    # (forced form, (C_in, C_out, kernel, stride, spatial)) where the form applies.
    ("tap-columns", (48, 24, 3, 1, 12)),
    ("shifted-window", (64, 64, 5, 1, 12)),
    ("strided-lines", (32, 32, 3, 2, 12)),
    ("width-reuse", (32, 48, 3, 1, 12)),
    ("gather", (32, 48, 3, 1, 12)),
])
def test_explain_shows_the_form_a_call_takes(form, shape):
    cin, cout, kernel, stride, size = shape
    x = torch.randn(2, cin, size, size, size, device="cuda")
    w = torch.randn(cin, cout, kernel, kernel, kernel, device="cuda")
    force(form, winograd="off")
    forward = lines(ct3d.explain(x, w, None, stride))["forward"]
    expected = {"gather": "gather", "width-reuse": "width-reuse"}.get(form, form)
    assert expected in forward


@needs_cuda
def test_explain_on_cuda_names_every_op():
    x = torch.randn(2, 48, 10, 10, 10, device="cuda")
    w = torch.randn(48, 24, 3, 3, 3, device="cuda")
    paths = lines(ct3d.explain(x, w, None, 1))
    assert set(paths) == {"forward", "input gradient", "weight gradient"}
    capability = torch.cuda.get_device_capability()
    if capability >= (9, 0):
        assert paths["forward"].startswith("tap-columns")
    elif capability >= (8, 0):
        assert paths["forward"].startswith("mma-gather")
    if capability >= (8, 0):
        # The plan's workspace: the backward ops stage within half their sources, at
        # least 16 Mi values (64 MiB); the forward stages whole.
        assert paths["input gradient"].endswith("; staged within 16 Mi values a chunk")
        assert "; staged within 16 Mi values a chunk" in paths["weight gradient"]
        assert "staged within" not in paths["forward"]
    assert "direct kernel" in lines(ct3d.explain(x.double(), w.double(), None, 1))["forward"]
    half = lines(ct3d.explain(x.half(), w.half(), None, 1))
    if capability >= (9, 0):
        # Stride 1, 24 target channels: the half tap-rows form (plan_half_gemm).
        assert half["forward"].startswith("half tap-rows")
    else:
        assert half["forward"].startswith("widened to float32: mma-gather")
    # A channels-last half input: the weight gradient reads its contiguous copy, so it
    # takes the half wgmma mainloop as a contiguous one does (lines of 16 values: 16-byte
    # multiples).
    x16 = torch.randn(2, 48, 4, 4, 16, device="cuda", dtype=torch.half)
    contiguous = lines(ct3d.explain(x16, w.half(), None, 1))["weight gradient"]
    channels_last = x16.to(memory_format=torch.channels_last_3d)
    assert lines(ct3d.explain(channels_last, w.half(), None, 1))["weight gradient"] == contiguous
    if capability >= (9, 0):
        assert contiguous.startswith("wgmma")
