"""One option's settings against each other in one process, the quick A/B of a kernel
form: ct3d's forward, input gradient and weight gradient per problem, median ms per
setting over alternating rounds, with cuDNN's default path in the same dtype. The
settings (separated by "/"; "" for the default) are set between calls through
ct3d.set_option, so they share the inputs and the GPU.

    python bench/ab_switch.py 101,102,109 float16 force_form=shifted-window/gather
        [rounds] [reps] [ops=...] [errors]
    python bench/ab_switch.py 61,68 float32 winograd=auto/off
    python bench/ab_switch.py level1,wide,narrow float32 = 1 10 ops=fwd,grads

With no option ("="), it sets none: the one setting is whatever the library does by
default, so that it also runs against a library without ct3d.set_option (an earlier
commit's, in scripts/device_ab_commits.sh).

With "errors" last, it also prints each setting's forward error against float64 (for a
switch that changes the arithmetic, such as a chain flush interval: KERNEL_LOG tc12).
With "ops=wgrad" (or "ops=fwd,dgrad") after rounds and reps, it times only those ops;
"grads" (all three gradients in one backward call, as a training step asks for them)
is timed only when named.
"""

import statistics
import sys

import torch
from torch import nn
from torch.nn.modules.utils import _triple

import ct3d
from bench import ALL_PROBLEMS, median_ms, problem_numbers

numbers = problem_numbers(sys.argv[1])
dtype = getattr(torch, sys.argv[2])
option, values = sys.argv[3].split("=", 1)
values = values.split("/")
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
reps = int(sys.argv[5]) if len(sys.argv) > 5 else 10
with_errors = sys.argv[-1] == "errors"
chosen_ops = next((a[4:].split(",") for a in sys.argv if a.startswith("ops=")),
                  ["fwd", "dgrad", "wgrad"])
# Rows of other dtypes than float32 carry it in their label (bench/ab_summary.py keys on it).
SUFFIX = "" if dtype == torch.float32 else "/" + sys.argv[2]
OP_COUNT = 4  # fwd, dgrad, wgrad, grads: ct3d's, then cuDNN's in the same order


def set_option(value):
    if option:
        ct3d.set_option(option, value)


def operations(problem):
    """(label, fn, inputs) for ct3d's forward, gradients and all gradients in one call,
    cuDNN's (default flags) in the same order, then float64's forward."""
    torch.manual_seed(0)
    conv = nn.ConvTranspose3d(**problem.conv).cuda().to(dtype)
    c = problem.conv
    stride, padding = _triple(c.get("stride", 1)), _triple(c.get("padding", 0))
    dilation, groups = _triple(c.get("dilation", 1)), c.get("groups", 1)
    inputs = [torch.rand(problem.input_shape(), device="cuda", dtype=dtype) for _ in range(2)]
    with torch.no_grad():
        out_shape = conv(inputs[0]).shape
    grads = [torch.randn(out_shape, device="cuda", dtype=dtype) for _ in range(2)]
    size = list(inputs[0].shape[2:])
    w = conv.weight.detach()
    # The problem's bias, as bench/bench.py times it.
    b = conv.bias.detach() if conv.bias is not None else None
    return [
        ("fwd", lambda x: torch.ops.ct3d.conv_transpose3d(x, w, b, stride, padding,
                                                           _triple(c.get("output_padding", 0)),
                                                           groups, dilation), inputs),
        ("dgrad", lambda g: torch.ops.ct3d.conv_transpose3d_input_backward(
            g, w, size, stride, padding, groups, dilation), grads),
        ("wgrad", lambda g: torch.ops.ct3d.conv_transpose3d_weight_backward(
            inputs[0], g, list(w.shape[2:]), stride, padding, groups, dilation), grads),
        ("grads", lambda g: torch.ops.ct3d.conv_transpose3d_backward(
            g, inputs[0], w, stride, padding, groups, dilation, [True, True, b is not None]),
         grads),
        ("cudnn fwd", lambda x: conv(x), inputs),
        ("cudnn dgrad", lambda g: torch.ops.aten.convolution_backward(
            g, inputs[0], w, None, stride, padding, dilation, True,
            _triple(c.get("output_padding", 0)), groups, [True, False, False])[0], grads),
        ("cudnn wgrad", lambda g: torch.ops.aten.convolution_backward(
            g, inputs[0], w, None, stride, padding, dilation, True,
            _triple(c.get("output_padding", 0)), groups, [False, True, False])[1], grads),
        ("cudnn grads", lambda g: torch.ops.aten.convolution_backward(
            g, inputs[0], w, None if b is None else [b.shape[0]], stride, padding, dilation,
            True, _triple(c.get("output_padding", 0)), groups, [True, True, b is not None]),
         grads),
        ("float64", lambda x: torch.nn.functional.conv_transpose3d(
            x.double(), w.double(), None if b is None else b.double(), stride, padding,
            _triple(c.get("output_padding", 0)), groups, dilation), inputs),
    ]


print(f"{'problem':18} {'op':9} " + " ".join(f"{v or 'default':>16}" for v in values)
      + f" {'cuDNN':>9}")
with torch.no_grad():
    for number in numbers:
        problem = ALL_PROBLEMS[number]
        ops = operations(problem)
        for index, (label, fn, inputs) in enumerate(ops[:OP_COUNT]):
            if label not in chosen_ops:
                continue
            cudnn_ms, _ = median_ms(ops[OP_COUNT + index][1], ops[OP_COUNT + index][2], 2, reps)
            times = {v: [] for v in values}
            for _ in range(rounds):
                for v in values:
                    set_option(v)
                    times[v].append(median_ms(fn, inputs, 2, reps)[0])
            set_option("")
            row = " ".join(f"{statistics.median(times[v]):16.4f}" for v in values)
            print(f"{problem.label + SUFFIX:18} {label:9} {row} {cudnn_ms:9.4f}", flush=True)
            if with_errors and label == "fwd":
                reference = ops[2 * OP_COUNT][1](inputs[0])
                errors = []
                for v in values:
                    set_option(v)
                    out = fn(inputs[0]).double()
                    errors.append(((out - reference).norm() / reference.norm()).item())
                set_option("")
                print(f"{problem.label + SUFFIX:18} {'fwd err':9} " +
                      " ".join(f"{e:16.2e}" for e in errors), flush=True)
                del reference
        del ops
        torch.cuda.empty_cache()
