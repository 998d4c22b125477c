"""Whole networks (issue 51, point 3): MONAI's DynUNet (nnU-Net's default 3-D
full-resolution plan), UNet and UNETR, each trained for some steps as built and as
`ct3d.convert` makes it, from the same initial weights, on the same batches; in float32
and under bf16 autocast. Prints per network and precision the median training-step time
of both (CUDA events after warm-up), their ratio, and the losses' largest relative
difference over the steps.

    python bench/networks.py [--networks nnunet,unet,unetr] [--steps 20] [--warmup 3]
                             [--precisions float32,bf16] [--device cuda] [--small]
                             [--out DIR]

MONAI (and einops, for UNETR) is a benchmark dependency only; on a machine without a
package index carry them as wheels (the device tool's README says how). --small builds
the test-sized networks of python_tests/test_network_layers.py (a CPU smoke run).
"""

import argparse
import copy
import json
import statistics
import time
from pathlib import Path

import torch

import ct3d
from network_layers import NETWORKS, SMALL_NETWORKS

def build(name, small):
    from monai.networks import nets

    builder, arguments, shape = NETWORKS[name]
    overrides, small_shape = SMALL_NETWORKS[name] if small else ({}, shape)
    return getattr(nets, builder)(**{**arguments, **overrides}), small_shape


def train(net, batches, targets, precision, warmup):
    """Losses of every step and the step times (ms) after `warmup` steps."""
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
    device = batches[0].device
    losses, times = [], []
    for index, (x, target) in enumerate(zip(batches, targets)):
        timing = device.type == "cuda" and index >= warmup
        if timing:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        began = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
            out = net(x)
        if isinstance(out, (list, tuple)):  # DynUNet with deep supervision returns several
            out = out[0]
        loss = torch.nn.functional.mse_loss(out.float(), target)
        loss.backward()
        optimizer.step()
        if timing:
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        elif index >= warmup:
            times.append((time.perf_counter() - began) * 1e3)
        losses.append(loss.item())
    return losses, times


def run(name, precision, steps, warmup, device, small):
    torch.manual_seed(0)
    reference, shape = build(name, small)
    reference = reference.to(device)
    converted = ct3d.convert(copy.deepcopy(reference))
    generator = torch.Generator().manual_seed(1)
    batches = [torch.randn(shape, generator=generator).to(device) for _ in range(steps)]
    with torch.no_grad():
        out = reference(batches[0])
    out = out[0] if isinstance(out, (list, tuple)) else out
    targets = [torch.randn(out.shape, generator=generator).to(device) for _ in range(steps)]
    result = {"network": name, "precision": precision}
    for label, net in (("pytorch", reference), ("ct3d", converted)):
        net.train()
        losses, times = train(net, batches, targets, precision, warmup)
        result[f"{label}_ms"] = statistics.median(times)
        result[f"{label}_losses"] = losses
    result["speedup"] = result["pytorch_ms"] / result["ct3d_ms"]
    result["loss_difference"] = max(abs(a - b) / abs(a) for a, b in
                                    zip(result["pytorch_losses"], result["ct3d_losses"]))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--networks", default="nnunet,unet,unetr")
    parser.add_argument("--precisions", default="float32,bf16")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--small", action="store_true", help="test-sized networks")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    rows = []
    for name in args.networks.split(","):
        for precision in args.precisions.split(","):
            row = run(name, precision, args.steps, args.warmup, torch.device(args.device),
                      args.small)
            rows.append(row)
            print(f"{name:8s} {precision:8s} step PyTorch {row['pytorch_ms']:9.2f} ms  ct3d "
                  f"{row['ct3d_ms']:9.2f} ms  {row['speedup']:5.2f}x  losses differ by "
                  f"{row['loss_difference']:.1e}", flush=True)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "networks.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
