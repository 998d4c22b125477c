"""Benchmark ct3d against PyTorch on the KernelBench ConvTranspose3d problems (GPU).

Builds nothing: it imports ct3d, which loads build/libct3d.so or $CT3D_LIBRARY.
For each problem it times ct3d, PyTorch's default path (cuDNN, TF32 allowed) and
strict-float32 cuDNN (allow_tf32=False) on the same inputs, as the median of many
CUDA-event timings after warm-up, rotating over several input sets so that not
everything sits in L2; it checks each result against a float64 reference.

    python bench/bench.py [--problems 58,61] [--reps 20] [--dtype float16] [--out DIR]

With --dtype float16 or bfloat16 every column runs in that dtype (the fp32 column is
then cuDNN's half path with TF32 off, which changes nothing for half inputs).

Prints a progress line per problem and a table; writes bench.json and
bench_speedups.png to --out.
"""

import argparse
import copy
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

import ct3d
from problems import PROBLEMS, BY_NUMBER
from network_layers import NETWORK_LAYERS
from wide_layers import NARROW_LAYERS, PROBE_LAYERS, WIDE_LAYERS

ALL_PROBLEMS = {**BY_NUMBER,
                **{p.number: p for p in WIDE_LAYERS + NARROW_LAYERS + PROBE_LAYERS + NETWORK_LAYERS}}


def median_ms(fn, inputs, warmup, reps):
    for i in range(warmup):
        fn(inputs[i % len(inputs)])
    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        x = inputs[i % len(inputs)]
        start.record()
        fn(x)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), times


def relative_error(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


class cudnn_tf32:
    """Sets torch.backends.cudnn.allow_tf32 for a block (benchmark only, never the library)."""

    def __init__(self, allowed):
        self.allowed = allowed

    def __enter__(self):
        self.saved = torch.backends.cudnn.allow_tf32
        torch.backends.cudnn.allow_tf32 = self.allowed

    def __exit__(self, *exc):
        torch.backends.cudnn.allow_tf32 = self.saved


def expert_tf32_variants(conv):
    """The TF32 formulations an expert would try for this layer, as callables:
    PyTorch's transposed convolution on channels_last_3d tensors, and for stride 1
    the equivalent conv3d (weight flipped and transposed per group, padding
    dilation * (kernel - 1) - padding), in both memory formats."""
    variants = {}
    conv_cl = copy.deepcopy(conv).to(memory_format=torch.channels_last_3d)
    variants["transposed, channels_last"] = (
        lambda x: conv_cl(x.contiguous(memory_format=torch.channels_last_3d)))
    stride_one = all(s == 1 for s in conv.stride) and all(o == 0 for o in conv.output_padding)
    reach = [d * (k - 1) - p for d, k, p in zip(conv.dilation, conv.kernel_size, conv.padding)]
    if stride_one and all(r >= 0 for r in reach):
        g = conv.groups
        c_in, cout_g = conv.weight.shape[:2]
        w = conv.weight.detach().flip(2, 3, 4)
        w = w.view(g, c_in // g, cout_g, *w.shape[2:]).transpose(1, 2)
        w = w.reshape(g * cout_g, c_in // g, *w.shape[3:]).contiguous()
        w_cl = w.contiguous(memory_format=torch.channels_last_3d)
        b = None if conv.bias is None else conv.bias.detach()
        variants["conv3d"] = lambda x: F.conv3d(x, w, b, 1, reach, conv.dilation, g)
        variants["conv3d, channels_last"] = lambda x: F.conv3d(
            x.contiguous(memory_format=torch.channels_last_3d), w_cl, b, 1, reach, conv.dilation, g)
    return variants


def run_problem(problem, reps, warmup, input_sets, dtype=torch.float32):
    torch.manual_seed(0)
    conv = nn.ConvTranspose3d(**problem.conv).cuda().to(dtype)
    inputs = [torch.rand(problem.input_shape(), device="cuda", dtype=dtype)
              for _ in range(input_sets)]
    row = {"problem": problem.number, "label": problem.label, "gflop": problem.flops() / 1e9,
           "shape": f"N={problem.batch} {problem.input_size} {problem.conv}"}

    with torch.no_grad():
        reference = F.conv_transpose3d(
            inputs[0].double(), conv.weight.double(),
            None if conv.bias is None else conv.bias.double(), conv.stride, conv.padding,
            conv.output_padding, conv.groups, conv.dilation)
        ours = lambda x: ct3d.conv_transpose3d_module(conv, x)  # noqa: E731
        row["ct3d_ms"], row["ct3d_times"] = median_ms(ours, inputs, warmup, reps)
        row["ct3d_err"] = relative_error(ours(inputs[0]), reference)
        with cudnn_tf32(True):
            row["default_ms"], _ = median_ms(conv, inputs, warmup, reps)
            row["default_err"] = relative_error(conv(inputs[0]), reference)
        with cudnn_tf32(False):
            row["fp32_ms"], _ = median_ms(conv, inputs, warmup, reps)
            row["fp32_err"] = relative_error(conv(inputs[0]), reference)
        # The best TF32 formulation (the default path is one of the candidates).
        row["expert_ms"], row["expert_variant"] = row["default_ms"], "default"
        with cudnn_tf32(True):
            for name, variant in expert_tf32_variants(conv).items():
                ms, _ = median_ms(variant, inputs, warmup, reps)
                err = relative_error(variant(inputs[0]), reference)
                if ms < row["expert_ms"] and err < 1e-2:
                    row["expert_ms"], row["expert_variant"] = ms, name
    row["vs_expert"] = row["expert_ms"] / row["ct3d_ms"]
    row["vs_default"] = row["default_ms"] / row["ct3d_ms"]
    row["vs_fp32"] = row["fp32_ms"] / row["ct3d_ms"]
    row["tflops"] = problem.flops() / row["ct3d_ms"] / 1e9
    del reference, inputs
    torch.cuda.empty_cache()
    return row


def environment():
    props = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        driver = "unknown"
    return {"gpu": props.name, "sms": props.multi_processor_count, "driver": driver,
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "library": str(ct3d.library_path)}


def write_chart(rows, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [r["label"] for r in rows]
    xs = range(len(rows))
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar([x - 0.2 for x in xs], [r["vs_default"] for r in rows], 0.4, label="vs PyTorch default (TF32)")
    ax.bar([x + 0.2 for x in xs], [r["vs_fp32"] for r in rows], 0.4, label="vs strict float32 cuDNN")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(list(xs), labels)
    ax.set_yscale("log")
    ax.set_ylabel("speedup (x)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def bench_arguments(description, default_reps, default_name="bench"):
    """The command line every benchmark takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--problems", default="level1",
                        help="level1, wide, narrow (bench/wide_layers.py), networks "
                        "(bench/network_layers.py) and problem numbers, comma-separated")
    parser.add_argument("--name", default=default_name, help="result file stem in --out")
    parser.add_argument("--reps", type=int, default=default_reps)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--input-sets", type=int, default=3)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--out", default=os.environ.get("OUT", "bench_out"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("the benchmarks need a CUDA GPU")
    args.dtype = getattr(torch, args.dtype)
    return args


def run_all(args, run_problem_fn, progress):
    """Prints the environment, runs every problem (a progress line each), returns
    (env, rows)."""
    env = environment()
    env["dtype"] = str(args.dtype)
    print(f"# {env['gpu']}, driver {env['driver']}, torch {env['torch']}, CUDA {env['cuda']}, "
          f"cuDNN {env['cudnn']}, {env['dtype']}", flush=True)
    rows = []
    for number in problem_numbers(args.problems):
        row = run_problem_fn(ALL_PROBLEMS[number], args.reps, args.warmup, args.input_sets,
                             args.dtype)
        rows.append(row)
        print(progress(row), flush=True)
    return env, rows


def problem_numbers(spec):
    """A comma-separated list of 'level1', 'wide', 'narrow', 'networks' and problem numbers."""
    sets = {"level1": PROBLEMS, "wide": WIDE_LAYERS, "narrow": NARROW_LAYERS,
            "networks": NETWORK_LAYERS}
    numbers = []
    for part in spec.split(","):
        numbers += [p.number for p in sets[part]] if part in sets else [int(part)]
    return numbers


def timed_forms(forms, fn, inputs, warmup, reps):
    """Median ms of fn with each of the forced forms in turn (ct3d's option force_form,
    set between calls; one after the other, as interleaved runs would share the warm-up)."""
    result = []
    for form in forms:
        ct3d.set_option("force_form", form)
        result.append(median_ms(fn, inputs, warmup, reps)[0])
    ct3d.set_option("force_form", "")
    return result


def ab_arguments(form=None):
    """The on/off benchmarks' arguments (ab_*.py) and the problems they name: 'level1',
    'wide', 'narrow' and problem numbers, comma-separated. With `form`, a --form option
    (the form to force against the family's baseline) defaulting to it."""
    parser = argparse.ArgumentParser()
    if form:
        parser.add_argument("--form", default=form)
    parser.add_argument("--problems", default="level1,wide")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    return args, [ALL_PROBLEMS[number] for number in problem_numbers(args.problems)]


def geomean(rows, key):
    return math.exp(sum(math.log(r[key]) for r in rows) / len(rows))


def save_results(out, name, env, rows, summary, chart_title):
    """Writes name.json and name_speedups.png (when matplotlib is there) to out."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps({"env": env, "rows": rows, "summary": summary},
                                                 indent=1))
    try:
        write_chart(rows, out / f"{name}_speedups.png", chart_title)
    except ImportError:
        print("# matplotlib missing: no chart")


def main():
    args = bench_arguments(__doc__.split("\n")[0], default_reps=20)
    env, rows = run_all(args, run_problem, lambda row: (
        f"[{row['label']}] ct3d {row['ct3d_ms']:.3f} ms, default {row['default_ms']:.3f} ms, "
        f"fp32 {row['fp32_ms']:.3f} ms, err {row['ct3d_err']:.1e}"))
    summary = {"geomean_vs_default": geomean(rows, "vs_default"),
               "geomean_vs_fp32": geomean(rows, "vs_fp32"),
               "geomean_vs_expert": geomean(rows, "vs_expert"),
               "max_err": max(r["ct3d_err"] for r in rows)}
    save_results(args.out, args.name, env, rows, summary,
                 f"ct3d conv_transpose3d speedup, {env['dtype']}")

    print()
    print("| problem | GFLOP | ct3d ms | default ms | fp32 ms | best TF32 ms (how) | vs default | vs fp32 | vs best TF32 | TFLOP/s | ct3d err | default err |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['label']} | {r['gflop']:.1f} | {r['ct3d_ms']:.3f} | {r['default_ms']:.3f} | "
              f"{r['fp32_ms']:.3f} | {r['expert_ms']:.3f} ({r['expert_variant']}) | "
              f"{r['vs_default']:.2f}x | {r['vs_fp32']:.2f}x | {r['vs_expert']:.2f}x | "
              f"{r['tflops']:.1f} | {r['ct3d_err']:.1e} | {r['default_err']:.1e} |")
    print(f"geomean: {summary['geomean_vs_default']:.2f}x vs default, "
          f"{summary['geomean_vs_fp32']:.2f}x vs strict fp32, "
          f"{summary['geomean_vs_expert']:.2f}x vs the best TF32 formulation; "
          f"max err {summary['max_err']:.1e}")


if __name__ == "__main__":
    main()
