"""The weight gradient on wgmma and on mma.sync (CT3D_WGRAD_WGMMA, read by the library
on every call), in one process on the same inputs, beside PyTorch's default (TF32
cuDNN) weight gradient. Errors against float64. --switch names another variable to turn
on and off instead (the columns keep their names: "wgmma" is on, "mma.sync" off), e.g.
grad_output's segments by bulk copies against cp.async pieces:

    python bench/ab_wgrad_wgmma.py [--problems level1,wide,61] [--out DIR]
    python bench/ab_wgrad_wgmma.py --problems level1,narrow --switch CT3D_WGRAD_BULK
"""

import json
import os

import torch
from torch import nn

from bench import ab_arguments, cudnn_tf32, median_ms, relative_error, timed_on_and_off


def run(problem, warmup, reps, switch):
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
        row["wgmma_ms"], row["mma_sync_ms"] = timed_on_and_off(switch, wgrad, inputs,
                                                                warmup, reps)
        reference = torch.ops.aten.convolution_backward(
            gy.double(), inputs[0].double(), w.double(), None, stride, padding, dilation, True,
            conv.output_padding, groups, [False, True, False])[1]
        for mode, key in (("1", "wgmma_err"), ("0", "mma_sync_err")):
            os.environ[switch] = mode
            row[key] = relative_error(wgrad(inputs[0]), reference)
        os.environ.pop(switch)
        default = lambda x: torch.ops.aten.convolution_backward(  # noqa: E731
            gy, x, w, None, stride, padding, dilation, True, conv.output_padding, groups,
            [False, True, False])
        with cudnn_tf32(True):
            row["default_ms"], _ = median_ms(default, inputs, warmup, reps)
    del reference, gy, inputs
    torch.cuda.empty_cache()
    return row


def main():
    args, chosen = ab_arguments("CT3D_WGRAD_WGMMA")
    rows = []
    for p in chosen:
        rows.append(run(p, args.warmup, args.reps, args.switch))
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
