"""Where a call's time goes, ct3d (bias as bench.py passes it) against cuDNN's default
path: per call with the GPU idle at its start (bench.py's method), back to back (the
mean of 50 queued calls: what a training loop sees), the host time of one call (its
launches only), and the profiler's GPU time with its top kernels. A gap between per
call and back to back is host time the GPU waits for (KERNEL_LOG h7).

    python bench/call_overhead.py 109,104,73 [float16|bfloat16|float32]
"""

import statistics
import sys
import time

import torch
from torch import nn

import ct3d
from bench import ALL_PROBLEMS

numbers = [int(n) for n in sys.argv[1].split(",")]
dtype = getattr(torch, sys.argv[2]) if len(sys.argv) > 2 else torch.float16


def event_ms(fn, calls):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    host = time.perf_counter()
    for i in range(calls):
        fn(i)
    host = (time.perf_counter() - host) * 1e3
    end.record()
    end.synchronize()
    return start.elapsed_time(end), host


def report(label, name, fn):
    for i in range(5):
        fn(i)
    torch.cuda.synchronize()
    single = [event_ms(fn, 1) for _ in range(30)]
    queued_ms, _ = event_ms(fn, 50)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for i in range(3):
            fn(i)
        torch.cuda.synchronize()
    kernels = sorted(prof.key_averages(), key=lambda e: -e.device_time_total)
    gpu_ms = sum(e.device_time_total for e in kernels) / 3 / 1000
    print(f"{label:18} {name:6} per call {statistics.median(t for t, _ in single):.3f}  "
          f"back to back {queued_ms / 50:.3f}  host {statistics.median(h for _, h in single):.3f}  "
          f"GPU {gpu_ms:.3f} ms", flush=True)
    for e in kernels[:4]:
        print(f"      {e.device_time_total / 3 / 1000:8.3f} ms  {e.key[:90]}")


with torch.no_grad():
    for number in numbers:
        problem = ALL_PROBLEMS[number]
        torch.manual_seed(0)
        conv = nn.ConvTranspose3d(**problem.conv).cuda().to(dtype)
        xs = [torch.rand(problem.input_shape(), device="cuda", dtype=dtype) for _ in range(2)]
        report(problem.label, "ct3d", lambda i: ct3d.conv_transpose3d_module(conv, xs[i % 2]))
        report(problem.label, "cudnn", lambda i: conv(xs[i % 2]))
        del xs
        torch.cuda.empty_cache()
