"""The weight gradient on wgmma and on mma.sync (the forms wgrad-wgmma and wgrad-mma-sync,
forced between calls through ct3d.set_option), in one process on the same inputs,
beside PyTorch's default (TF32 cuDNN) weight gradient. Errors against float64. --form
names another form to time against mma.sync (the columns keep their names), e.g.
wgrad-wgmma-32:

    python bench/ab_wgrad_wgmma.py [--problems level1,wide,61] [--out DIR]
    python bench/ab_wgrad_wgmma.py --problems level1,narrow --form wgrad-wgmma-32
"""

import json
import os

import torch
from torch import nn

import ct3d
from bench import ab_arguments, cudnn_tf32, median_ms, relative_error, timed_forms


def run(problem, warmup, reps, form):
    torch.manual_seed(0)
    conv = nn.ConvTranspose3d(**problem.conv).cuda()
    inputs = [torch.rand(problem.input_shape(), device="cuda") for _ in range(2)]
    w = conv.weight.detach()
    stride, padding, groups, dilation = conv.stride, conv.padding, conv.groups, conv.dilation
    row = {"label": problem.label, "gflop": problem.flops() / 1e9}
    with torch.no_grad():
        out_shape = torch.ops.ct3d.conv_transpose3d(inputs[0], w, None, stride, padding,
                                                    conv.output_padding, groups, dilation).shape
        gy = torch.randn(out_shape, device="cuda")
        kernel = list(w.shape[2:])
        wgrad = lambda x: torch.ops.ct3d.conv_transpose3d_weight_backward(  # noqa: E731
            x, gy, kernel, stride, padding, groups, dilation)
        forms = [form, "wgrad-mma-sync"]
        row["wgmma_ms"], row["mma_sync_ms"] = timed_forms(forms, wgrad, inputs, warmup, reps)
        reference = torch.ops.aten.convolution_backward(
            gy.double(), inputs[0].double(), w.double(), None, stride, padding, dilation, True,
            conv.output_padding, groups, [False, True, False])[1]
        for forced, key in zip(forms, ("wgmma_err", "mma_sync_err")):
            ct3d.set_option("force_form", forced)
            row[key] = relative_error(wgrad(inputs[0]), reference)
        ct3d.set_option("force_form", "")
        default = lambda x: torch.ops.aten.convolution_backward(  # noqa: E731
            gy, x, w, None, stride, padding, dilation, True, conv.output_padding, groups,
            [False, True, False])
        with cudnn_tf32(True):
            row["default_ms"], _ = median_ms(default, inputs, warmup, reps)
    del reference, gy, inputs
    torch.cuda.empty_cache()
    return row


def main():
    args, chosen = ab_arguments("wgrad-wgmma")
    rows = []
    for p in chosen:
        rows.append(run(p, args.warmup, args.reps, args.form))
        r = rows[-1]
        print(f"# {r['label']}: wgmma {r['wgmma_ms']:.3f} mma.sync {r['mma_sync_ms']:.3f} "
              f"default {r['default_ms']:.3f}", flush=True)
    print(f"{'shape':18} {'wgmma ms':>9} {'mma.sync':>9} {'gain':>6} {'TFLOP/s':>8} "
          f"{'default':>8} {'vs def':>7} {'err wgmma':>10} {'err old':>9}")
    for r in rows:
        print(f"{r['label']:18} {r['wgmma_ms']:9.3f} {r['mma_sync_ms']:9.3f} "
              f"{r['mma_sync_ms'] / r['wgmma_ms']:6.2f} {r['gflop'] / r['wgmma_ms']:8.1f} "
              f"{r['default_ms']:8.3f} {r['default_ms'] / r['wgmma_ms']:7.2f} "
              f"{r['wgmma_err']:10.1e} {r['mma_sync_err']:9.1e}")
    if args.out:
        with open(os.path.join(args.out, "ab_wgrad_wgmma.json"), "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
