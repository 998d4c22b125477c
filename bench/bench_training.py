"""Benchmark a training step through ct3d against PyTorch (GPU).

For each KernelBench problem (bias on, torch.rand input, random grad_output) it
times, on the same inputs in one run: the whole step (forward + grads of input,
weight and bias) through ct3d and through F.conv_transpose3d with PyTorch's
default flags (cuDNN, TF32 allowed) and with strict float32 (allow_tf32=False);
and each backward op alone against torch.ops.aten.convolution_backward with the
matching output mask. Median of many CUDA-event timings after warm-up, rotating
over several input sets. Also the peak memory of one step, and each gradient's
error against a float64 reference.

    python bench/bench_training.py [--problems 58,61] [--reps 15] [--dtype float16] [--out DIR]

Writes training.json and training_speedups.png to --out; prints a table last.
"""


import torch
import torch.nn.functional as F
from torch import nn

from bench import (bench_arguments, cudnn_tf32, geomean, median_ms, relative_error,
                   run_all, save_results)
import ct3d  # noqa: F401  (loads the op library)


def conv_params(conv):
    return conv.stride, conv.padding, conv.output_padding, conv.groups, conv.dilation


def step(op, conv, w, b, gy):
    """One training step's convolution work: forward, then the three gradients."""
    def run(x):
        x.grad = w.grad = b.grad = None
        op(x, w, b, *conv_params(conv)).backward(gy)
    return run


def ct3d_op(x, w, b, stride, padding, output_padding, groups, dilation):
    return torch.ops.ct3d.conv_transpose3d(x, w, b, stride, padding, output_padding, groups,
                                           dilation)


def peak_step_mib(fn, x):
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn(x)
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - base) / 2**20


def run_problem(problem, reps, warmup, input_sets, dtype=torch.float32):
    torch.manual_seed(0)
    conv = nn.ConvTranspose3d(**dict(problem.conv, bias=True)).cuda().to(dtype)
    w = conv.weight.detach().clone().requires_grad_()
    b = conv.bias.detach().clone().requires_grad_()
    inputs = [torch.rand(problem.input_shape(), device="cuda", dtype=dtype).requires_grad_()
              for _ in range(input_sets)]
    with torch.no_grad():
        out_shape = ct3d_op(inputs[0], w, b, *conv_params(conv)).shape
    gy = torch.randn(out_shape, device="cuda", dtype=dtype)
    stride, padding, output_padding, groups, dilation = conv_params(conv)
    row = {"problem": problem.number, "label": problem.label, "gflop_step": 3 * problem.flops() / 1e9}

    ours, theirs = step(ct3d_op, conv, w, b, gy), step(F.conv_transpose3d, conv, w, b, gy)
    row["ct3d_ms"], _ = median_ms(ours, inputs, warmup, reps)
    row["ct3d_peak_mib"] = peak_step_mib(ours, inputs[0])
    ct3d_grads = [t.grad.clone() for t in (inputs[0], w, b)]
    with cudnn_tf32(True):
        row["default_ms"], _ = median_ms(theirs, inputs, warmup, reps)
        row["default_peak_mib"] = peak_step_mib(theirs, inputs[0])
    with cudnn_tf32(False):
        row["fp32_ms"], _ = median_ms(theirs, inputs, warmup, reps)

    # Each backward op alone, against aten's convolution_backward with the same mask.
    detached = [x.detach() for x in inputs]
    in_size = list(inputs[0].shape[2:])
    kernel = list(w.shape[2:])

    def aten_backward(mask):
        return lambda x: torch.ops.aten.convolution_backward(
            gy, x, w.detach(), [gy.shape[1]] if mask[2] else None, stride, padding, dilation, True,
            output_padding, groups, mask)

    ops = {
        "dgrad": (lambda x: torch.ops.ct3d.conv_transpose3d_input_backward(
            gy, w.detach(), in_size, stride, padding, groups, dilation), [True, False, False]),
        "wgrad": (lambda x: torch.ops.ct3d.conv_transpose3d_weight_backward(
            x, gy, kernel, stride, padding, groups, dilation), [False, True, False]),
        # The whole backward: the one op autograd calls.
        "allgrad": (lambda x: torch.ops.ct3d.conv_transpose3d_backward(
            gy, x, w.detach(), stride, padding, groups, dilation, [True, True, True]),
            [True, True, True]),
    }
    with torch.no_grad():
        row["forward_ms"], _ = median_ms(lambda x: ct3d_op(x, w, b, *conv_params(conv)), detached,
                                         warmup, reps)
        with cudnn_tf32(True):
            row["forward_default_ms"], _ = median_ms(
                lambda x: F.conv_transpose3d(x, w, b, *conv_params(conv)), detached, warmup, reps)
        for name, (fn, mask) in ops.items():
            row[f"{name}_ms"], _ = median_ms(fn, detached, warmup, reps)
            with cudnn_tf32(True):
                row[f"{name}_default_ms"], _ = median_ms(aten_backward(mask), detached, warmup, reps)
            with cudnn_tf32(False):
                row[f"{name}_fp32_ms"], _ = median_ms(aten_backward(mask), detached, warmup, reps)

    # float64 reference gradients of the first input set.
    leaves = [t.detach().double().requires_grad_() for t in (inputs[0], w, b)]
    F.conv_transpose3d(*leaves, *conv_params(conv)).backward(gy.double())
    for name, ours_grad, leaf in zip(("input", "weight", "bias"), ct3d_grads, leaves):
        row[f"err_{name}"] = relative_error(ours_grad, leaf.grad)
    row["vs_default"] = row["default_ms"] / row["ct3d_ms"]
    row["vs_fp32"] = row["fp32_ms"] / row["ct3d_ms"]
    del leaves, inputs, detached
    torch.cuda.empty_cache()
    return row


def main():
    args = bench_arguments(__doc__.split("\n")[0], default_reps=15, default_name="training")
    env, rows = run_all(args, run_problem, lambda row: (
        f"[{row['label']}] step ct3d {row['ct3d_ms']:.2f} ms, default {row['default_ms']:.2f}, "
        f"fp32 {row['fp32_ms']:.2f}; dgrad {row['dgrad_ms']:.2f}/{row['dgrad_default_ms']:.2f}, "
        f"wgrad {row['wgrad_ms']:.2f}/{row['wgrad_default_ms']:.2f}, "
        f"all gradients {row['allgrad_ms']:.2f}/{row['allgrad_default_ms']:.2f}"))
    summary = {"geomean_vs_default": geomean(rows, "vs_default"),
               "geomean_vs_fp32": geomean(rows, "vs_fp32"),
               "max_err": max(max(r["err_input"], r["err_weight"], r["err_bias"]) for r in rows)}
    save_results(args.out, args.name, env, rows, summary,
                 f"ct3d training step (forward + 3 gradients), {env['dtype']}")
    print()
    print("| problem | step ct3d ms | default ms | fp32 ms | vs default | vs fp32 | fwd ms (def) | "
          "dgrad ms (def / fp32) | wgrad ms (def / fp32) | all gradients ms (def / fp32) | "
          "peak MiB ct3d / def | err dx / dw / db |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['label']} | {r['ct3d_ms']:.2f} | {r['default_ms']:.2f} | {r['fp32_ms']:.2f} | "
              f"{r['vs_default']:.2f}x | {r['vs_fp32']:.2f}x | {r['forward_ms']:.2f} "
              f"({r['forward_default_ms']:.2f}) | {r['dgrad_ms']:.2f} ({r['dgrad_default_ms']:.2f} / "
              f"{r['dgrad_fp32_ms']:.2f}) | {r['wgrad_ms']:.2f} ({r['wgrad_default_ms']:.2f} / "
              f"{r['wgrad_fp32_ms']:.2f}) | {r['allgrad_ms']:.2f} ({r['allgrad_default_ms']:.2f} / "
              f"{r['allgrad_fp32_ms']:.2f}) | {r['ct3d_peak_mib']:.0f} / {r['default_peak_mib']:.0f} | "
              f"{r['err_input']:.1e} / {r['err_weight']:.1e} / {r['err_bias']:.1e} |")
    print(f"geomean: {summary['geomean_vs_default']:.2f}x vs default, "
          f"{summary['geomean_vs_fp32']:.2f}x vs strict fp32; max err {summary['max_err']:.1e}")


if __name__ == "__main__":
    main()
