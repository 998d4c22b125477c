"""One forward form forced against the gathering GEMM (--form: width-reuse, shifted-window,
tap-rows, tap-columns, strided-lines, ...: ops/options/forced_form.cpp's names; set between calls
through ct3d.set_option), in one process on the same inputs: ct3d's forward and input
gradient, with the best TF32 formulation of the forward beside them
(bench.expert_tf32_variants).

    python bench/ab_forward_mainloop.py [--form NAME] [--problems 58,61,...] [--out DIR]
"""

import json
import os

import torch
import torch.nn.functional as F
from torch import nn

import ct3d
from bench import (ab_arguments, cudnn_tf32, expert_tf32_variants, median_ms, relative_error,
                   timed_forms)


def run(problem, form, warmup, reps):
    torch.manual_seed(0)
    conv = nn.ConvTranspose3d(**problem.conv).cuda()
    inputs = [torch.rand(problem.input_shape(), device="cuda") for _ in range(2)]
    args = (conv.stride, conv.padding, conv.output_padding, conv.groups, conv.dilation)
    row = {"label": problem.label, "gflop": problem.flops() / 1e9}
    with torch.no_grad():
        forward = lambda x: ct3d.conv_transpose3d_module(conv, x)  # noqa: E731
        row["fwd_on"], row["fwd_off"] = timed_forms([form, "gather"], forward, inputs, warmup,
                                                    reps)
        reference = F.conv_transpose3d(inputs[0].double(), conv.weight.double(),
                                       None if conv.bias is None else conv.bias.double(), *args)
        row["fwd_err"] = relative_error(forward(inputs[0]), reference)
        gy = torch.randn_like(reference, dtype=torch.float32)
        in_size = list(inputs[0].shape[2:])
        dgrad = lambda x: torch.ops.ct3d.conv_transpose3d_input_backward(  # noqa: E731
            gy, conv.weight, in_size, conv.stride, conv.padding, conv.groups, conv.dilation)
        row["dgrad_on"], row["dgrad_off"] = timed_forms(
            [form, "gather"], dgrad, inputs[:1], warmup, reps)
        dgrad_ref = torch.ops.aten.convolution_backward(
            gy.double(), inputs[0].double(), conv.weight.double(), None, conv.stride, conv.padding,
            conv.dilation, True, conv.output_padding, conv.groups, [True, False, False])[0]
        row["dgrad_err"] = relative_error(dgrad(inputs[0]), dgrad_ref)
        expert = float("inf")
        with cudnn_tf32(True):
            for variant in [conv, *expert_tf32_variants(conv).values()]:
                expert = min(expert, median_ms(variant, inputs, warmup, reps)[0])
        row["expert"] = expert
    del reference, gy, inputs
    torch.cuda.empty_cache()
    return row


def main():
    args, chosen = ab_arguments(form="width-reuse")
    rows = [run(p, args.form, args.warmup, args.reps) for p in chosen]
    print(f"{'shape':18} {'fwd on':>8} {'fwd off':>8} {'gain':>6} {'TFLOP/s':>8} {'vs TF32':>8}"
          f" {'err':>8} {'dgrad on':>9} {'off':>8} {'gain':>6} {'err':>8}")
    for r in rows:
        print(f"{r['label']:18} {r['fwd_on']:8.3f} {r['fwd_off']:8.3f} "
              f"{r['fwd_off'] / r['fwd_on']:6.2f} {r['gflop'] / r['fwd_on']:8.1f} "
              f"{r['expert'] / r['fwd_on']:8.2f} {r['fwd_err']:8.1e} {r['dgrad_on']:9.3f} "
              f"{r['dgrad_off']:8.3f} {r['dgrad_off'] / r['dgrad_on']:6.2f} {r['dgrad_err']:8.1e}")
    if args.out:
        with open(os.path.join(args.out, f"ab_{args.form}.json"), "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
