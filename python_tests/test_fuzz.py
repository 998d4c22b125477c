"""Property-based fuzzing of ct3d.conv_transpose3d against
torch.nn.functional.conv_transpose3d: hundreds of drawn calls, valid and invalid
(bad sizes, zero channels, groups, ranks, dtypes, padding; empty batches; overlapping and
non-contiguous views; NaN and Inf). Each must either match PyTorch or raise a
RuntimeError that names the op, whenever PyTorch raises too."""

import math

import pytest
import torch
import torch.nn.functional as F

from conftest import requires_cuda

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings, strategies as st  # noqa: E402

EXAMPLES = 400


MUTATIONS = ["groups 0", "indivisible channels", "zero channels", "stride 0", "negative padding",
             "huge padding", "output_padding too large", "zero spatial", "rank 3", "int32",
             "bias size"]


@st.composite
def calls(draw):
    """A valid call, then (one time in three) exactly one thing made invalid."""
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cin_g = draw(st.integers(1, 3))
    cout_g = draw(st.integers(1, 3))
    kernel = draw(st.lists(st.integers(1, 3), min_size=3, max_size=3))
    stride = draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=3, max_size=3))
    dilation = draw(st.lists(st.sampled_from([1, 1, 2]), min_size=3, max_size=3))
    padding = [draw(st.integers(0, d * (k - 1) // 2)) for k, d in zip(kernel, dilation)]
    output_padding = [draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation)]
    c = dict(groups=groups, cin=groups * cin_g, cout_g=cout_g, kernel=kernel, stride=stride,
             padding=padding, dilation=dilation, output_padding=output_padding,
             batch=draw(st.sampled_from([1, 2, 2, 0])),
             spatial=draw(st.lists(st.integers(1, 4), min_size=3, max_size=3)),
             rank=draw(st.sampled_from([5, 5, 4])),
             dtype=draw(st.sampled_from([torch.float32, torch.float64])),
             layout=draw(st.sampled_from(["contiguous", "sliced", "permuted", "overlapping",
                                          "channels_last"])),
             special=draw(st.sampled_from([None, None, None, "nan", "inf"])),
             has_bias=draw(st.booleans()), bias_size=groups * cout_g, mutation=None)
    if draw(st.integers(0, 2)) == 0:
        mutation = draw(st.sampled_from(MUTATIONS))
        c["mutation"] = mutation
        dim = draw(st.integers(0, 2))
        if mutation == "groups 0":
            c["groups"] = 0
        elif mutation == "indivisible channels":
            c["cin"] += 1 if groups > 1 else 0
            c["groups"] = max(groups, 2)
        elif mutation == "zero channels":
            c["cin"] = 0
        elif mutation == "stride 0":
            c["stride"][dim] = 0
        elif mutation == "negative padding":
            c["padding"][dim] = -1
        elif mutation == "huge padding":
            c["padding"][dim] = 50
        elif mutation == "output_padding too large":
            c["output_padding"][dim] = max(stride[dim], dilation[dim])
        elif mutation == "zero spatial":
            c["spatial"][dim] = 0
        elif mutation == "rank 3":
            c["rank"] = 3
        elif mutation == "int32":
            c["dtype"] = torch.int32
        elif mutation == "bias size":
            c["has_bias"], c["bias_size"] = True, groups * cout_g + 1
    return c


def make_input(c, device, seed):
    generator = torch.Generator().manual_seed(seed)
    shape = [c["batch"], c["cin"], *c["spatial"]][5 - c["rank"]:]
    def rand(*size):
        values = torch.randn(*size, generator=generator, dtype=torch.float64)
        return (values * 4).round() if c["dtype"] == torch.int32 else values
    # A contiguous base (with any NaN/Inf planted in it), then the view under test.
    if c["layout"] == "sliced":
        base = rand(*shape[:-1], 2 * shape[-1])
        view = lambda t: t[..., ::2]
    elif c["layout"] == "permuted":
        base = rand(*reversed(shape))
        view = lambda t: t.permute(*reversed(range(len(shape))))
    elif c["layout"] == "overlapping" and shape[-1] > 0:
        base = rand(*shape[:-1], 1)
        view = lambda t: t.expand(*shape)
    elif c["layout"] == "channels_last" and len(shape) == 5:
        base = rand(*shape)
        view = lambda t: t.contiguous(memory_format=torch.channels_last_3d)
    else:
        base = rand(*shape)
        view = lambda t: t
    if c["special"] and base.numel() > 0:
        base.view(-1)[torch.randint(base.numel(), (1,), generator=generator)] = (
            math.nan if c["special"] == "nan" else math.inf)
    base = base.to(device=device, dtype=c["dtype"])
    return view(base)


def run_case(c, device, seed):
    event(f"mutation: {c['mutation']}")
    x = make_input(c, device, seed)
    generator = torch.Generator().manual_seed(seed + 1)
    w = torch.randn(c["cin"], c["cout_g"], *c["kernel"], generator=generator,
                    dtype=torch.float64).to(device=device, dtype=c["dtype"])
    b = (torch.randn(c["bias_size"], generator=generator, dtype=torch.float64)
         .to(device=device, dtype=c["dtype"]) if c["has_bias"] else None)
    args = (c["stride"], c["padding"], c["output_padding"], c["groups"], c["dilation"])
    ref_error = None
    try:
        # float64 reference on the same device (CPU reference for CUDA float32).
        ref = F.conv_transpose3d(x.double() if x.is_floating_point() else x,
                                 w.double() if w.is_floating_point() else w,
                                 None if b is None else (b.double() if b.is_floating_point() else b),
                                 *args)
    except Exception as error:  # noqa: BLE001 - any rejection by PyTorch counts
        ref_error = error
    try:
        out = torch.ops.ct3d.conv_transpose3d(x, w, b, *args)
    except RuntimeError as error:
        assert "conv_transpose3d" in str(error), str(error)
        if ref_error is None:
            # The only calls ct3d may reject that PyTorch accepts: dtypes it does not
            # implement (integer tensors), with a message saying so.
            assert c["dtype"] == torch.int32 and "dtype" in str(error), (c, str(error))
            event("ct3d rejects a dtype PyTorch accepts")
        else:
            event("both raise")
        return
    if ref_error is not None and out.numel() == 0 and 0 in out.shape[-3:]:
        # An output extent of exactly 0: ct3d returns the empty output on every device;
        # PyTorch's CPU path raises "Output size is too small" there.
        event("ct3d returns an empty output PyTorch rejects")
        return
    assert ref_error is None, (c, f"PyTorch raised {ref_error!r}, ct3d did not")
    event("both compute" + (" (empty)" if out.numel() == 0 else "") +
          (" with NaN/Inf" if c["special"] else "") +
          (f" despite mutation {c['mutation']}" if c["mutation"] else ""))
    assert out.shape == ref.shape and out.dtype == x.dtype and out.device == x.device
    finite = torch.isfinite(ref)
    # Non-finite references stay non-finite (3xTF32 on CUDA turns +-Inf into NaN).
    assert not torch.isfinite(out.double()[~finite]).any()
    if device == "cpu":
        assert torch.equal(torch.isnan(out.double()), torch.isnan(ref))
    if finite.any():
        ours, theirs = out.double()[finite], ref[finite]
        scale = theirs.norm().clamp_min(1e-30)
        tolerance = 1e-5 if c["dtype"] == torch.float32 else 1e-10
        assert ((ours - theirs).norm() / scale).item() <= tolerance


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(calls(), st.integers(0, 2**31))
def test_fuzz_cpu(c, seed):
    run_case(c, "cpu", seed)


@requires_cuda
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(calls(), st.integers(0, 2**31))
def test_fuzz_cuda(c, seed):
    run_case(c, "cuda", seed)
