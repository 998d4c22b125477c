"""ct3d.Model against nn.ConvTranspose3d on a KernelBench shape: error vs float64, time."""

import argparse
import time

import torch
import torch.nn.functional as F
from torch import nn

import ct3d
from problems import BY_NUMBER


def elapsed_ms(fn, x, device, reps):
    fn(x)
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        fn(x)
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / reps * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problem", type=int, default=61)
    args = parser.parse_args()
    problem = BY_NUMBER[args.problem]
    device = "cuda" if torch.cuda.is_available() else "cpu"
    # The GPU runs the real size; the CPU a scaled-down one that finishes in seconds.
    shape = problem.input_shape() if device == "cuda" else problem.input_shape(batch=1, spatial_scale=8)

    torch.manual_seed(0)
    ours = ct3d.Model(**problem.conv).to(device)
    reference = nn.ConvTranspose3d(**problem.conv).to(device)
    reference.load_state_dict(ours.conv_transpose3d.state_dict())
    x = torch.rand(shape, device=device)
    with torch.no_grad():
        exact = F.conv_transpose3d(x.double(), reference.weight.double(), None, reference.stride,
                                   reference.padding, reference.output_padding, reference.groups,
                                   reference.dilation)
        err = lambda out: ((out.double() - exact).norm() / exact.norm()).item()  # noqa: E731
        reps = 10 if device == "cuda" else 2
        ours_ms = elapsed_ms(ours, x, device, reps)
        ref_ms = elapsed_ms(reference, x, device, reps)
        print(f"ct3d {ct3d.library_path}")
        print(f"{problem.label} on {device}: input {tuple(shape)}, conv {problem.conv}")
        print(f"  ct3d.Model           {ours_ms:9.3f} ms   error vs float64 {err(ours(x)):.1e}")
        print(f"  nn.ConvTranspose3d   {ref_ms:9.3f} ms   error vs float64 {err(reference(x)):.1e}")


if __name__ == "__main__":
    main()
