"""ct3d's CPU kernels against torch.nn.functional.conv_transpose3d (oneDNN) on the
same inputs, in one run: forward and a training step (forward + the grads of input,
weight and bias), median of --reps timings taken alternately with torch's after a
warm-up, float32 or float64.

    python bench/bench_cpu.py [--dtype float64] [--reps 5] [--out DIR]
"""

import argparse
import json
import math
import os
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F

import ct3d

# (label, input shape (batched or not), C_out, kernel, stride, padding, output_padding,
#  groups, dilation)
SHAPES = [
    ("N1 48-48 k3 8^3 s1", (1, 48, 8, 8, 8), 48, 3, 1, 0, 0, 1, 1),
    ("N2 32-32 k3 16^3 s2 p1", (2, 32, 16, 16, 16), 32, 3, 2, 1, 0, 1, 1),
    ("N1 16-64 k5 16^3 s1", (1, 16, 16, 16, 16), 64, 5, 1, 0, 0, 1, 1),
    ("N2 64-32 k4 12^3 s2 p1", (2, 64, 12, 12, 12), 32, 4, 2, 1, 0, 1, 1),
    ("N2 32-32 k3 10x12x14 s2 op1 g4", (2, 32, 10, 12, 14), 32, 3, 2, 1, 1, 4, 1),
    ("N1 32-16 k3 11x9x13 s1 d2", (1, 32, 11, 9, 13), 16, 3, 1, 2, 0, 1, 2),
    ("N4 16-16 (3,5,7) 8x12x16 s1", (4, 16, 8, 12, 16), 16, (3, 5, 7), 1, (1, 2, 3), 0, 1, 1),
    ("unbatched 24-48 k3 9^3 s2", (24, 9, 9, 9), 48, 3, 2, 1, 1, 1, 1),
    ("N2 64-64 k3 8^3 s1 p1 g2", (2, 64, 8, 8, 8), 64, 3, 1, 1, 0, 2, 1),
]


def median_ms(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def paired_median_ms(ours, theirs, reps):
    """Medians of `reps` timings of each, taken alternately, so that load from other
    work on the machine hits both alike."""
    ours(), theirs()
    times = ([], [])
    for _ in range(reps):
        for fn, out in ((ours, times[0]), (theirs, times[1])):
            start = time.perf_counter()
            fn()
            out.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times[0]), statistics.median(times[1])


def run_shape(shape, dtype, reps):
    label, in_shape, cout, k, s, p, op, groups, d = shape
    torch.manual_seed(0)
    cin = in_shape[0] if len(in_shape) == 4 else in_shape[1]
    kernel = (k,) * 3 if isinstance(k, int) else k
    x = torch.rand(in_shape, dtype=dtype)
    w = torch.randn(cin, cout // groups, *kernel, dtype=dtype) * 0.1
    b = torch.randn(cout, dtype=dtype)
    args = (s, p, op, groups, d)

    def ours(x, w, b):
        return ct3d.conv_transpose3d(x, w, b, *args)

    def theirs(x, w, b):
        return F.conv_transpose3d(x, w, b, *args)

    row = {"shape": label}
    with torch.no_grad():
        reference = F.conv_transpose3d(x.double(), w.double(), b.double(), *args)
        row["err"] = ((ours(x, w, b).double() - reference).norm() / reference.norm()).item()
        row["fwd_ct3d_ms"], row["fwd_torch_ms"] = paired_median_ms(
            lambda: ours(x, w, b), lambda: theirs(x, w, b), reps)
    gy = torch.randn_like(reference, dtype=dtype)
    leaves = [t.clone().requires_grad_() for t in (x, w, b)]

    def step(fn):
        for t in leaves:
            t.grad = None
        fn(*leaves).backward(gy)

    row["step_ct3d_ms"], row["step_torch_ms"] = paired_median_ms(
        lambda: step(ours), lambda: step(theirs), reps)
    row["fwd_ratio"] = row["fwd_torch_ms"] / row["fwd_ct3d_ms"]
    row["step_ratio"] = row["step_torch_ms"] / row["step_ct3d_ms"]
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", default=os.environ.get("OUT", "bench_out"))
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    env = {"torch": torch.__version__, "threads": torch.get_num_threads(), "dtype": args.dtype,
           "cpu": os.cpu_count()}
    print(f"# CPU, {env['threads']} threads, torch {env['torch']}, {args.dtype}", flush=True)
    rows = []
    for shape in SHAPES:
        row = run_shape(shape, dtype, args.reps)
        rows.append(row)
        print(f"[{row['shape']}] fwd {row['fwd_ct3d_ms']:.2f} / {row['fwd_torch_ms']:.2f} ms, "
              f"step {row['step_ct3d_ms']:.2f} / {row['step_torch_ms']:.2f} ms, "
              f"err {row['err']:.1e}", flush=True)
    geo = {key: math.exp(sum(math.log(r[key]) for r in rows) / len(rows))
           for key in ("fwd_ratio", "step_ratio")}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"bench_cpu_{args.dtype}.json").write_text(
        json.dumps({"env": env, "rows": rows, "geomean": geo}, indent=1))
    print()
    print("| shape | fwd ct3d ms | fwd torch ms | fwd ratio | step ct3d ms | step torch ms | step ratio | err |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['shape']} | {r['fwd_ct3d_ms']:.2f} | {r['fwd_torch_ms']:.2f} | "
              f"{r['fwd_ratio']:.2f}x | {r['step_ct3d_ms']:.2f} | {r['step_torch_ms']:.2f} | "
              f"{r['step_ratio']:.2f}x | {r['err']:.1e} |")
    print(f"geomean: forward {geo['fwd_ratio']:.2f}x, training step {geo['step_ratio']:.2f}x "
          "(ratio = torch time / ct3d time)")


if __name__ == "__main__":
    main()
