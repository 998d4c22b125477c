"""The differential harness: random valid calls from the whole legal parameter space,
run on every kernel form of every backend, forward and all three gradients checked
against PyTorch's float64 result.

A *form* is one of ct3d's kernel paths (FORMS below): the environment that forces it,
and a shaper that bends each draw towards what the form takes, so that a form the
default rule reaches only on large layers still meets thousands of small ones. Each
form runs in a process of its own (this file is also the runner: `python3
python_tests/test_differential.py --form NAME --seed S --count N`), so that the
environment is set before the library loads and nothing leaks between forms.

Unwritten output shows: on the CPU the runner makes glibc fill every allocation with
a byte pattern (mallopt's M_PERTURB, as MALLOC_PERTURB_ does, with mmap off so that
large blocks come from the heap too); on CUDA it fills the caching allocator's free
blocks with NaN before every call. The inputs are finite, so any NaN in a result is
memory no kernel wrote, and any pattern fails the error bar.

Bars (relative Frobenius error against float64): 1e-12 for float64, 1e-5 for float32,
and for float16 / bfloat16 1.05x the error of the float64 result rounded once to the
type. A result that cancels (a one-channel bias gradient whose sum is near zero, a
one-element input gradient whose 24 terms sum to 1/2000 of their magnitudes) is known
to its own type's arithmetic no better than a few ulps of the sum of its terms'
magnitudes, whichever order adds them (PyTorch's float32 missed 1e-5 by 6x on that
input gradient): there the bar is also met by an error within CONDITIONED[dtype] times
the norm of the same computation on the operands' absolute values. A bug is off by at
least one term, 1/K of those magnitudes for a sum of K terms (K <= 10^4 here), far past
either bar. The report counts the calls that passed on this clause alone.

CI runs the CPU forms with a fixed seed and with a fresh one, which the log prints
(the pytest summary's last lines); CT3D_DIFF_SEED replays one, CT3D_DIFF_CONFIGS sets
the draws per form and seed. On a GPU machine the CUDA forms run too (README, device
section); `--coverage K` profiles the first K calls of a form and counts those that
launched the form's own kernel.
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import json
import math
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import pytest

# ---------------------------------------------------------------------------------------
# The legal space

KERNEL, STRIDE, DILATION = (1, 5), (1, 3), (1, 3)
GROUPS, CHANNELS, POSITIONS, BATCH = (1, 4), (1, 64), (1, 12), (0, 3)
# Channel counts at the engine's tile edges (8, 16, 32, 48, 64 channel blocks).
EDGE_CHANNELS = (1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40, 47, 48, 49, 56,
                 63, 64)
INPUT_LAYOUTS = ("contiguous", "sliced", "channels_last", "overlapping", "expanded")
WEIGHT_LAYOUTS = ("contiguous", "contiguous", "channels_last", "transposed")
GRAD_LAYOUTS = ("contiguous", "contiguous", "sliced", "channels_last", "expanded")

BARS = {"float64": 1e-12, "float32": 1e-5}
# The bar on a result that cancels, times the norm of the computation on absolute values.
# float64 arithmetic's own error on a sum of n terms is about sqrt(n) * 1.1e-16 of the sum
# of their magnitudes (n up to about 1e5 here: 3.5e-14); PyTorch's and ct3d's float64
# results differed by 1.5e-12 of a bias gradient that cancelled (CI, seed 1368531036,
# 720 terms), 1e-15 of its magnitudes. float32: two ulps (2^-24) of the magnitudes; the
# CPU's input gradient of a one-element input (CI, cpu-default seed 1366272109, call
# 2375: 24 terms summing to 1/2100 of their magnitudes) was off by 3.4e-5 of itself,
# 0.27 ulps of the magnitudes, and PyTorch's own float32 result by 6.1e-5 (0.48 ulps);
# 3xTF32's products err by up to 3 * 2^-22 (12 ulps) of their size, at random, so a sum
# of K of them by a few / sqrt(K) ulps of their magnitudes. Where a result does not
# cancel, the norm of the magnitudes is about 0.64 sqrt(K) times the result's, so two
# ulps of it stay below 1e-5 for K up to 1.5e4 (the draws' sums have at most 64 x 125
# terms): the clause loosens nothing else.
CONDITIONED = {"float64": 1e-13, "float32": 2 * 2.0**-24}
HALF_MARGIN = 1.05  # float16 / bfloat16: this times the float64 result's own rounding
QUANTITIES = ("output", "grad_input", "grad_weight", "grad_bias")


@dataclass
class Call:
    """One call of ct3d::conv_transpose3d with a gradient request."""
    batch: Optional[int]  # None: unbatched (4-D) input
    groups: int
    cin_g: int
    cout_g: int
    spatial: list
    kernel: list
    stride: list
    padding: list
    output_padding: list
    dilation: list
    bias: bool
    dtype: str
    input_layout: str = "contiguous"
    weight_layout: str = "contiguous"
    grad_layout: str = "contiguous"
    # Which of input, weight, bias require grad (bias only where there is one).
    requires_grad: list = field(default_factory=lambda: [True, True, True])
    # Sizes a form's shaper set, which the work cap leaves alone ("cin_g", "cout_g",
    # "spatial0".."spatial2").
    pinned: list = field(default_factory=list)

    def output_extent(self, i: int) -> int:
        return ((self.spatial[i] - 1) * self.stride[i] - 2 * self.padding[i]
                + self.dilation[i] * (self.kernel[i] - 1) + self.output_padding[i] + 1)

    def products(self) -> int:
        """Multiply-adds of the forward: the cost of one pass, for the work cap."""
        return (max(self.batch or 1, 1) * self.groups * self.cin_g * self.cout_g
                * math.prod(self.spatial) * math.prod(self.kernel))

    def output_elements(self) -> int:
        return (max(self.batch or 1, 1) * self.groups * self.cout_g
                * math.prod(self.output_extent(i) for i in range(3)))

    def args(self):
        return (self.stride, self.padding, self.output_padding, self.groups, self.dilation)


def draw_channels(rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.45:
        return rng.randint(1, 8)
    if roll < 0.7:
        return rng.choice(EDGE_CHANNELS)
    return rng.randint(*CHANNELS)


def draw_positions(rng: random.Random) -> int:
    """Often 1 to 3: short extents are where taps miss the input and phases go empty."""
    return rng.randint(1, 3) if rng.random() < 0.35 else rng.randint(*POSITIONS)


def legal_padding(rng: random.Random, call: Call, i: int) -> int:
    """Padding in [0, dilation * (kernel - 1)] that leaves at least one output position."""
    reach = call.dilation[i] * (call.kernel[i] - 1)
    most = min(reach, ((call.spatial[i] - 1) * call.stride[i] + reach + call.output_padding[i]) // 2)
    return rng.randint(0, most)


def draw_call(rng: random.Random, dtypes) -> Call:
    """A valid call drawn from the whole legal space (before any form's shaping)."""
    kernel = [rng.randint(*KERNEL) for _ in range(3)]
    stride = [rng.randint(*STRIDE) for _ in range(3)]
    dilation = [rng.randint(*DILATION) for _ in range(3)]
    output_padding = [rng.randint(0, max(s, d) - 1) for s, d in zip(stride, dilation)]
    batch = rng.randint(*BATCH)
    call = Call(
        batch=None if rng.random() < 0.1 else batch,
        groups=rng.randint(*GROUPS) if rng.random() < 0.5 else 1,
        cin_g=draw_channels(rng), cout_g=draw_channels(rng),
        spatial=[draw_positions(rng) for _ in range(3)],
        kernel=kernel, stride=stride, padding=[0, 0, 0], output_padding=output_padding,
        dilation=dilation, bias=rng.random() < 0.6, dtype=rng.choice(dtypes),
        input_layout=rng.choice(INPUT_LAYOUTS), weight_layout=rng.choice(WEIGHT_LAYOUTS),
        grad_layout=rng.choice(GRAD_LAYOUTS),
        requires_grad=[rng.random() < 0.85 for _ in range(3)])
    return call


def settle(rng: random.Random, call: Call, work_cap: int, output_cap: int) -> Call:
    """Makes a shaped draw cheap enough and legal: the largest of its unpinned sizes
    shrinks until the forward's products and the output (at padding 0, its largest)
    fit the caps, so every parameter's edges stay reachable, a few at a time; then
    output_padding and padding are drawn within their bounds for the final sizes."""
    for i in range(3):
        call.output_padding[i] = min(call.output_padding[i],
                                     max(call.stride[i], call.dilation[i]) - 1)
        call.padding[i] = 0
    while call.products() > work_cap or call.output_elements() > output_cap:
        sizes = {"cin_g": call.cin_g, "cout_g": call.cout_g}
        sizes.update({f"spatial{i}": call.spatial[i] for i in range(3)})
        sizes = {name: size for name, size in sizes.items()
                 if size > 1 and name not in call.pinned}
        if not sizes:
            break
        name = max(sizes, key=lambda key: (sizes[key], rng.random()))
        smaller = max(1, sizes[name] * 2 // 3)
        if name.startswith("spatial"):
            call.spatial[int(name[-1])] = smaller
        else:
            setattr(call, name, smaller)
    for i in range(3):
        call.padding[i] = legal_padding(rng, call, i)
    if not call.bias:
        call.requires_grad[2] = False
    if not any(call.requires_grad):
        call.requires_grad[rng.randrange(2)] = True
    return call


# ---------------------------------------------------------------------------------------
# The forms

Shaper = Callable[[random.Random, Call], None]


def unshaped(rng: random.Random, call: Call) -> None:
    pass


def stride_one(rng: random.Random, call: Call) -> None:
    call.stride = [1, 1, 1]


def stride_one_mostly_dense(rng: random.Random, call: Call) -> None:
    """Stride 1; mostly dilation 1 and no output_padding, where every output is reached
    (the shifted-window forms take no outputs that no tap reaches)."""
    call.stride = [1, 1, 1]
    if rng.random() < 0.8:
        call.dilation = [1, 1, 1]
        call.output_padding = [0, 0, 0]


def some_stride(rng: random.Random, call: Call) -> None:
    if all(s == 1 for s in call.stride):
        call.stride[rng.randrange(3)] = rng.randint(2, 3)


def shifted_window(rng: random.Random, call: Call) -> None:
    """Blocks of 64 target channels of which at least 48 are used."""
    stride_one_mostly_dense(rng, call)
    call.cout_g = rng.randint(48, 64)
    call.pinned.append("cout_g")


def tap_rows(rng: random.Random, call: Call) -> None:
    """2 to 5 width taps, and at most 128 rows of (width tap, target channel rounded to 8)."""
    stride_one_mostly_dense(rng, call)
    call.kernel[2] = rng.randint(2, 5)
    call.cout_g = rng.randint(1, 128 // call.kernel[2] // 8 * 8)
    call.pinned.append("cout_g")


# The tap-columns form's (width taps, most target channels) shapes (its rows on N).
TAP_COLUMNS_SHAPES = ((3, 16), (3, 24), (3, 32), (3, 48), (4, 16), (5, 16), (5, 32))


def tap_columns(rng: random.Random, call: Call) -> None:
    stride_one_mostly_dense(rng, call)
    taps, channels = rng.choice(TAP_COLUMNS_SHAPES)
    call.kernel[2] = taps
    call.cout_g = rng.randint(max(1, channels - 7), channels)
    call.pinned.append("cout_g")


def tap_columns_from_source(rng: random.Random, call: Call) -> None:
    """The TMA-read tiles: the source's width a multiple of 4 floats."""
    tap_columns(rng, call)
    call.spatial[2] = rng.choice((4, 8, 12))
    call.pinned.append("spatial2")


def strided_lines(rng: random.Random, call: Call) -> None:
    """Width stride 2, dilation 1, 3 or 4 width taps, source lines a multiple of 4."""
    call.stride[2] = 2
    call.dilation[2] = 1
    call.kernel[2] = rng.choice((3, 4))
    call.spatial[2] = rng.choice((4, 8, 12))
    call.cout_g = rng.choice((rng.randint(1, 16), rng.randint(1, 64)))
    call.pinned.append("spatial2")


def winograd(rng: random.Random, call: Call) -> None:
    """Stride 1 and dilation 1 along height and width, kernels of 2 or more there."""
    for i in (1, 2):
        call.stride[i] = 1
        call.dilation[i] = 1
        call.output_padding[i] = 0
        call.kernel[i] = rng.randint(2, 5)


def wide_blocks(rng: random.Random, call: Call) -> None:
    """More than 32 target channels (the wgmma gathering mainloop's blocks)."""
    call.cout_g = rng.randint(33, 64)
    call.pinned.append("cout_g")


def width_reuse(rng: random.Random, call: Call) -> None:
    call.kernel[2] = rng.randint(3, 5)
    call.cout_g = rng.choice((rng.randint(9, 32), rng.randint(33, 64)))


def wgmma_weight_gradient(rng: random.Random, call: Call) -> None:
    """float32 with input lines a multiple of 4 (its 16-byte loads) and an even number
    of output channels per group (its 8-byte loads)."""
    call.dtype = "float32"
    call.spatial[2] = rng.choice((4, 8, 12))
    call.cout_g = max(2, call.cout_g // 2 * 2)
    call.pinned += ["spatial2", "cout_g"]


def half_weight_gradient(rng: random.Random, call: Call) -> None:
    """float16 / bfloat16 with input lines a multiple of 8 and output channels per group
    a multiple of 8 (the half form's 16-byte loads and ldmatrix rows)."""
    half_types(rng, call)
    call.spatial[2] = 8
    call.cout_g = max(8, call.cout_g // 8 * 8)
    call.pinned += ["spatial2", "cout_g"]


def half_types(rng: random.Random, call: Call) -> None:
    call.dtype = rng.choice(("float16", "bfloat16"))


def half_window(rng: random.Random, call: Call) -> None:
    half_types(rng, call)
    stride_one_mostly_dense(rng, call)
    call.cout_g = rng.choice((rng.randint(1, 40), rng.randint(32, 64)))


@dataclass(frozen=True)
class Form:
    name: str
    device: str  # "cpu" or "cuda"
    env: dict
    shaper: Shaper = unshaped
    dtypes: tuple = ("float32",)
    # CUDA: names of kernels (substrings) of which one launches when the form runs.
    kernels: tuple = ()
    needs_avx512: bool = False
    doc: str = ""


def force(form: str) -> dict:
    """The environment that forces one of the library's forms (ops/options/forced_form.cpp): a
    CUDA forward form with every other forward form off, so that the gathering GEMM
    takes the draws the form does not."""
    return {"CT3D_FORCE_FORM": form}


ALL_DTYPES = ("float32", "float32", "float32", "float64", "float16", "bfloat16")

FORMS = [
    # The CPU: the default rule, and each form forced.
    Form("cpu-default", "cpu", {}, dtypes=ALL_DTYPES, doc="the CPU's default rule"),
    Form("cpu-direct", "cpu", force("cpu-direct"), stride_one,
         ("float32", "float64"), needs_avx512=True,
         doc="the direct stride-1 correlation (forward and input gradient)"),
    Form("cpu-gather", "cpu", force("cpu-gather"),
         dtypes=("float32", "float64"), doc="the gathering GEMM forward, GEMM gradients"),
    Form("cpu-scatter", "cpu", force("cpu-scatter"),
         dtypes=("float32", "float64"), needs_avx512=True,
         doc="the input-stationary (scattering) GEMM forward"),
    Form("cpu-blas", "cpu", {"CT3D_CPU_ISA": "generic"}, dtypes=("float32", "float64"),
         doc="every CPU form on BLAS instead of ct3d's AVX-512 GEMM"),
    # CUDA: the default rule, then each form forced.
    Form("cuda-default", "cuda", {}, dtypes=ALL_DTYPES, doc="the GPU's default rule"),
    Form("cuda-float64", "cuda", {}, dtypes=("float64",),
         kernels=("direct_conv_transpose3d_kernel",), doc="the direct float64 kernels"),
    Form("cuda-mma-sync", "cuda", {"CT3D_MAX_CAPABILITY": "8.0"}, dtypes=ALL_DTYPES,
         kernels=("implicit_gemm_phase_kernel",),
         doc="the Ampere-class engine (mma.sync 3xTF32) and its weight gradient"),
    Form("cuda-wgmma-gather", "cuda", force("gather"), wide_blocks,
         kernels=("wgmma_phase_kernel",), doc="the wgmma gathering GEMM"),
    Form("cuda-width-reuse", "cuda", force("width-reuse"), width_reuse,
         kernels=("wgmma_reuse_phase_kernel",), doc="width-tap reuse"),
    Form("cuda-shifted-window", "cuda", force("shifted-window"),
         shifted_window, kernels=("wgmma_shifted_window_kernel",),
         doc="the shifted-window GEMM (forward and stride-1 input gradient)"),
    Form("cuda-tap-rows", "cuda",
         force("tap-rows"), tap_rows,
         kernels=("wgmma_tap_rows_kernel",), doc="the tap-rows form"),
    Form("cuda-tap-columns", "cuda",
         force("tap-columns"), tap_columns,
         kernels=("wgmma_tap_rows_kernel",), doc="the tap-columns form, its default tiles"),
    Form("cuda-tap-columns-staged", "cuda", force("tap-columns-staged"), tap_columns,
         kernels=("wgmma_tap_rows_kernel",), doc="the tap-columns form, its window from the "
         "staged planes"),
    Form("cuda-tap-columns-boxes", "cuda",
         force("tap-columns-boxes"), tap_columns_from_source,
         kernels=("wgmma_tap_rows_kernel",), doc="the tap-columns form, window boxes by TMA"),
    Form("cuda-tap-columns-lines", "cuda",
         force("tap-columns-lines"), tap_columns_from_source,
         kernels=("wgmma_tap_rows_kernel",), doc="the tap-columns form, line tiles by TMA"),
    Form("cuda-tap-columns-flat", "cuda",
         force("tap-columns-flat"), tap_columns_from_source,
         kernels=("wgmma_tap_rows_kernel",), doc="the tap-columns form, flat tiles by TMA"),
    Form("cuda-strided-lines", "cuda", force("strided-lines"),
         strided_lines, kernels=("wgmma_strided_lines_kernel",), doc="the strided-lines form"),
    Form("cuda-winograd", "cuda", force("winograd"), winograd,
         kernels=("winograd_output_kernel",),
         doc="Winograd F(m, r) around the engine (forward, stride-1 input gradient)"),
    Form("cuda-wgrad-mma-sync", "cuda", force("wgrad-mma-sync"),
         kernels=("weight_gradient_kernel",), doc="the mma.sync weight gradient on Hopper"),
    Form("cuda-wgrad-wgmma", "cuda", force("wgrad-wgmma"), wgmma_weight_gradient,
         kernels=("weight_gradient_wgmma_kernel",),
         doc="the wgmma weight gradient (stages of 16 positions on lines of 16 or fewer)"),
    Form("cuda-wgrad-wgmma-16", "cuda", force("wgrad-wgmma-16"), wgmma_weight_gradient,
         kernels=("weight_gradient_wgmma_kernel",),
         doc="the wgmma weight gradient on stages of 16 positions"),
    Form("cuda-wgrad-wgmma-32", "cuda", force("wgrad-wgmma-32"),
         wgmma_weight_gradient, kernels=("weight_gradient_wgmma_kernel",),
         doc="the wgmma weight gradient on stages of 32 positions"),
    Form("cuda-shared-staging", "cuda", force("shared-staging"), some_stride,
         doc="the all-gradients call's grad_output staged once for both gradients"),
    Form("cuda-half-window", "cuda", {}, half_window,
         kernels=("wgmma_shifted_window_kernel", "wgmma_tap_rows_kernel"),
         doc="float16 / bfloat16 on the shifted-window and tap-rows half forms"),
    Form("cuda-half-gather", "cuda", force("half-gather"), half_types,
         kernels=("wgmma_half_gather_kernel",), doc="float16 / bfloat16 gathering GEMM"),
    Form("cuda-half-wgrad", "cuda", force("half-wgrad"), half_weight_gradient,
         kernels=("weight_gradient_wgmma_kernel",),
         doc="float16 / bfloat16 weight gradient on wgmma"),
    Form("cuda-half-widened", "cuda",
         force("half-widened"), half_types,
         doc="float16 / bfloat16 widened to the float32 engine"),
]
FORMS_BY_NAME = {form.name: form for form in FORMS}

# Calls that once failed, run on every form before its draws (each in the form's first
# dtype where the form does not take its own).
REGRESSIONS = [
    # Issue 49: a width phase that no tap reaches (stride 2, dilation 2) wider than the
    # CPU gathering form's box: its tiles read past their end (garbage from run to run).
    Call(batch=3, groups=2, cin_g=1, cout_g=3, spatial=[2, 4, 1], kernel=[2, 1, 3],
         stride=[1, 1, 2], padding=[0, 0, 1], output_padding=[0, 1, 0], dilation=[2, 2, 2],
         bias=False, dtype="float64"),
    # Issue 49: no tap reaches any output position along the width (the answer is zeros).
    Call(batch=2, groups=4, cin_g=4, cout_g=4, spatial=[5, 2, 1], kernel=[4, 2, 4],
         stride=[1, 2, 1], padding=[2, 1, 4], output_padding=[0, 1, 0], dilation=[2, 1, 3],
         bias=False, dtype="float64"),
    # Found by the harness on CUDA (form cuda-wgrad-wgmma-32, seed 20261205, call 1802),
    # replayed as a regression call: every form whose forward took strided lines missed
    # it (0.56). Width dilation 3, padding 8 and an output of width 1 leave one width tap
    # in the phases, which looked like dilation 1 to the strided-lines plan; the kernel
    # then applied all four taps as neighbours. The plan now wants every tap present.
    Call(batch=1, groups=1, cin_g=7, cout_g=6, spatial=[1, 3, 4], kernel=[1, 2, 4],
         stride=[3, 3, 2], padding=[0, 0, 8], output_padding=[2, 2, 1], dilation=[2, 2, 3],
         bias=False, dtype="float32", input_layout="sliced", grad_layout="channels_last"),
    # The same (call 1841 of cuda-wgrad-wgmma-16, same seed: 1.82 off), with a bias.
    Call(batch=1, groups=1, cin_g=6, cout_g=2, spatial=[1, 1, 4], kernel=[3, 4, 4],
         stride=[2, 3, 2], padding=[3, 0, 8], output_padding=[2, 1, 1], dilation=[3, 1, 3],
         bias=True, dtype="float32", weight_layout="channels_last"),
    # Unbatched input with a channels_last_3d weight: a 4-D output was asked for in
    # channels_last_3d ("required rank 5 tensor"); PyTorch returns it contiguous.
    Call(batch=None, groups=1, cin_g=28, cout_g=36, spatial=[7, 10, 7], kernel=[1, 1, 3],
         stride=[1, 3, 2], padding=[0, 0, 2], output_padding=[0, 2, 1], dilation=[1, 3, 1],
         bias=True, dtype="float32", weight_layout="channels_last", grad_layout="sliced"),
    # One output channel: the bias gradient is one sum with heavy cancellation, which a
    # float32 running sum missed by up to 1.7e-4 (now accumulated in float64).
    Call(batch=None, groups=1, cin_g=2, cout_g=1, spatial=[4, 8, 1], kernel=[1, 1, 5],
         stride=[1, 3, 2], padding=[0, 0, 1], output_padding=[1, 1, 1], dilation=[3, 1, 2],
         bias=True, dtype="float32", input_layout="expanded"),
    Call(batch=3, groups=1, cin_g=4, cout_g=1, spatial=[12, 10, 7], kernel=[4, 5, 1],
         stride=[3, 2, 2], padding=[5, 0, 0], output_padding=[0, 1, 1], dilation=[3, 1, 1],
         bias=True, dtype="bfloat16", input_layout="overlapping", grad_layout="channels_last"),
    # Dilated width taps over a one- or two-column source: the taps that never reach it
    # are dropped, the halos are narrower than the target's overhang, and the
    # shifted-window forms' lines (width + halo) wrapped the last target columns onto
    # the next line (unwritten and misplaced outputs). Shifted window, tap rows, tap
    # columns, the half window form.
    Call(batch=2, groups=1, cin_g=5, cout_g=57, spatial=[3, 3, 1], kernel=[2, 1, 3],
         stride=[1, 1, 1], padding=[1, 0, 1], output_padding=[0, 0, 0], dilation=[3, 1, 3],
         bias=True, dtype="float32"),
    Call(batch=3, groups=1, cin_g=5, cout_g=64, spatial=[9, 3, 1], kernel=[5, 2, 5],
         stride=[1, 1, 1], padding=[5, 3, 2], output_padding=[2, 2, 0], dilation=[3, 3, 3],
         bias=True, dtype="float32", input_layout="overlapping"),
    Call(batch=1, groups=1, cin_g=4, cout_g=5, spatial=[1, 10, 2], kernel=[3, 1, 5],
         stride=[1, 1, 1], padding=[1, 0, 2], output_padding=[0, 0, 0], dilation=[3, 3, 3],
         bias=False, dtype="float32"),
    Call(batch=None, groups=1, cin_g=8, cout_g=14, spatial=[3, 3, 1], kernel=[1, 1, 4],
         stride=[1, 1, 1], padding=[0, 0, 1], output_padding=[1, 0, 0], dilation=[2, 2, 3],
         bias=False, dtype="float32"),
    Call(batch=2, groups=1, cin_g=6, cout_g=63, spatial=[11, 1, 1], kernel=[5, 1, 5],
         stride=[1, 1, 1], padding=[7, 0, 2], output_padding=[2, 0, 1], dilation=[3, 1, 3],
         bias=True, dtype="float16", input_layout="expanded"),
]


# Caps on one draw's size. The CPU's float64 reference is PyTorch's unfold-and-GEMM on
# two cores in CI; the GPU's runs there in float64 too.
# "tiny": for racecheck, whose cost follows the shared-memory accesses it tracks.
WORK_CAP = {"cpu": 2_000_000, "cuda": 40_000_000, "tiny": 200_000}
OUTPUT_CAP = {"cpu": 400_000, "cuda": 4_000_000, "tiny": 50_000}


def draw_for_form(form: Form, rng: random.Random, caps: str = "") -> Call:
    """A draw shaped to the form, within the caps of `caps` (a device; the form's own
    by default)."""
    call = draw_call(rng, form.dtypes)
    form.shaper(rng, call)
    caps = caps or form.device
    return settle(rng, call, WORK_CAP[caps], OUTPUT_CAP[caps])


# ---------------------------------------------------------------------------------------
# Tensors, poison and the checks (the runner's process only: they need torch)


def with_layout(torch, values, layout, generator):
    """`values` (contiguous, on its device, in its dtype) in another layout: the same
    values, except for "overlapping", whose lines share memory (other values)."""
    if layout == "sliced":
        spread = torch.zeros(*values.shape[:-1], 2 * values.shape[-1], dtype=values.dtype,
                             device=values.device)
        spread[..., ::2] = values
        return spread[..., ::2]
    if layout == "channels_last":
        if values.dim() == 5:
            return values.contiguous(memory_format=torch.channels_last_3d)
        return values.movedim(0, -1).contiguous().movedim(-1, 0)
    if layout == "transposed":
        return values.transpose(0, 1).contiguous().transpose(0, 1)
    if layout == "expanded":
        # Stride 0 along the last dimension: a line holds one value.
        return values[..., :1].expand(values.shape)
    if layout == "overlapping":
        # Line h starts one element after line h - 1: neighbouring lines overlap.
        *lead, height, width = values.shape
        line_block = height + width - 1
        storage = torch.randn(math.prod(lead) * line_block, dtype=torch.float64,
                              generator=generator).to(device=values.device, dtype=values.dtype)
        strides, step = [], line_block
        for size in reversed(lead):
            strides.insert(0, step)
            step *= size
        return storage.as_strided(values.shape, (*strides, 1, 1))
    return values


def make_operands(torch, call: Call, device: str, generator):
    """Input, weight, bias and grad_output of a call, in its dtype and layouts."""
    dtype = getattr(torch, call.dtype)

    def rand(*shape):
        # Drawn in float64 on the CPU (the same values on any device), then rounded.
        return torch.randn(shape, dtype=torch.float64, generator=generator).to(
            device=device, dtype=dtype)

    cin = call.groups * call.cin_g
    lead = [] if call.batch is None else [call.batch]
    x = with_layout(torch, rand(*lead, cin, *call.spatial), call.input_layout, generator)
    w = with_layout(torch, rand(cin, call.cout_g, *call.kernel), call.weight_layout, generator)
    b = rand(call.groups * call.cout_g) if call.bias else None
    out_shape = (*lead, call.groups * call.cout_g, *(call.output_extent(i) for i in range(3)))
    g = with_layout(torch, rand(*out_shape), call.grad_layout, generator)
    return x, w, b, g


def relative_error(torch, got, want) -> float:
    want = want.detach().double()
    got = got.detach().to(device=want.device, dtype=torch.float64)
    scale = want.norm().item()
    diff = (got - want).norm().item()
    if scale == 0.0:
        return 0.0 if diff == 0.0 else math.inf
    return diff / scale


def bar_for(torch, dtype: str, reference) -> float:
    if dtype in BARS:
        return BARS[dtype]
    rounded = reference.to(getattr(torch, dtype))
    return HALF_MARGIN * relative_error(torch, rounded, reference)


class Poison:
    """Makes memory that no kernel wrote visible in a result (see the module's doc)."""

    def __init__(self, torch, device: str):
        self.torch, self.device = torch, device
        # Under compute-sanitizer the runs go without PyTorch's caching allocator
        # (PYTORCH_NO_CUDA_MEMORY_CACHING=1: every block its own allocation, so that
        # memcheck sees reads past a block and initcheck reads of unwritten memory):
        # then there is no cache to poison.
        self.cached = os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING", "0") in ("", "0")
        self.active = True
        if device == "cpu":
            libc = ctypes.CDLL("libc.so.6")
            m_perturb, m_mmap_threshold, m_mmap_max = -6, -3, -4
            # A perturb byte: every malloc's block filled with its complement (0x5a5a..,
            # about 1.8e127 as float64, 1.5e16 as float32: far past any bar).
            ok = (libc.mallopt(m_perturb, 0xA5) == 1
                  and libc.mallopt(m_mmap_max, 0) == 1
                  and libc.mallopt(m_mmap_threshold, 1 << 25) == 1)
            probe = torch.empty(4096, dtype=torch.uint8)
            self.active = ok and bool((probe == 0x5A).all())

    def before_call(self):
        if self.device != "cuda" or not self.cached:
            return
        torch = self.torch
        # The caching allocator's small pool (blocks under 1 MiB, from 2 MiB segments)
        # and its large pool, both filled with 0xFF bytes (NaN in every float dtype) and
        # freed back to the cache, where the call's allocations find them.
        small = [torch.empty(256 << 10, dtype=torch.uint8, device="cuda") for _ in range(32)]
        large = torch.empty(192 << 20, dtype=torch.uint8, device="cuda")
        for block in small + [large]:
            block.fill_(0xFF)
        del small, large


def ct3d_call(torch, call: Call, x, w, b, g):
    """ct3d's output and the gradients the call asks for (None for the others)."""
    leaves = [x, w, b]
    wanted = [t is not None and flag for t, flag in zip(leaves, call.requires_grad)]
    leaves = [t.detach().requires_grad_(flag) if t is not None else None
              for t, flag in zip(leaves, wanted)]
    out = torch.ops.ct3d.conv_transpose3d(leaves[0], leaves[1], leaves[2], *call.args())
    targets = [t for t, flag in zip(leaves, wanted) if flag]
    grads = torch.autograd.grad(out, targets, g) if targets else ()
    it = iter(grads)
    return out.detach(), [next(it) if flag else None for flag in wanted]


def reference_call(torch, call: Call, x, w, b, g, device):
    """PyTorch's own transposed convolution in float64 (the same rounded operands)."""
    import torch.nn.functional as F
    leaves = [None if t is None else t.detach().to(device=device, dtype=torch.float64)
              .requires_grad_(flag) for t, flag in zip((x, w, b), call.requires_grad)]
    out = F.conv_transpose3d(*leaves, *call.args())
    targets = [t for t in leaves if t is not None and t.requires_grad]
    grads = torch.autograd.grad(out, targets, g.to(device=device, dtype=torch.float64))
    it = iter(grads)
    return out.detach(), [next(it) if (t is not None and t.requires_grad) else None
                          for t in leaves]


# Calls where ct3d missed PyTorch's GPU float64 result but met its CPU one.
REFERENCE_DISAGREEMENTS: list = []


def check_call(torch, form: Form, call: Call, generator, poison: Poison, reference_device: str):
    """Runs one call on the form; returns compare()'s results and problems. A GPU
    reference that ct3d misses is computed again on the CPU, which decides (a disagreement
    between PyTorch's own float64 paths is reported as such)."""
    x, w, b, g = make_operands(torch, call, form.device, generator)
    poison.before_call()
    out, grads = ct3d_call(torch, call, x, w, b, g)

    def magnitudes(device):
        """The same computation on the operands' absolute values (float64 only)."""
        return lambda: reference_call(torch, call, *(None if t is None else t.abs()
                                                    for t in (x, w, b, g)), device)

    reference = reference_call(torch, call, x, w, b, g, reference_device)
    results, problems = compare(torch, form, call, out, grads, reference, (x, w, b),
                                magnitudes(reference_device))
    if problems and reference_device != "cpu":
        cpu_results, cpu_problems = compare(torch, form, call, out, grads,
                                            reference_call(torch, call, x, w, b, g, "cpu"),
                                            (x, w, b), magnitudes("cpu"))
        if not cpu_problems:
            REFERENCE_DISAGREEMENTS.append({"call": dataclasses.asdict(call),
                                            "gpu_reference": problems})
            return cpu_results, []
        problems = [f"{p} (also against the CPU's float64)" for p in cpu_problems]
        results = cpu_results
    return results, problems


def compare(torch, form: Form, call: Call, out, grads, reference, operands, magnitudes):
    """{quantity: (error, bar, conditioned)} and the problems of ct3d's results against a
    reference. magnitudes() gives the reference on absolute values (CONDITIONED), computed
    only where a float64 or float32 result misses its plain bar; `conditioned` says the
    result met only that clause."""
    ref_out, ref_grads = reference
    x, w, b = operands
    results, problems = {}, []
    conditioned = {}
    for name, got, want, operand in zip(QUANTITIES, [out] + grads, [ref_out] + ref_grads,
                                        [out, x, w, b]):
        if want is None:
            continue
        if got is None:
            problems.append(f"{name}: missing")
            continue
        if tuple(got.shape) != tuple(want.shape) or got.dtype != operand.dtype:
            problems.append(f"{name}: shape {tuple(got.shape)} {got.dtype}, expected "
                            f"{tuple(want.shape)} {operand.dtype}")
            continue
        if got.device.type != form.device:
            problems.append(f"{name}: on {got.device}")
        error, bar = relative_error(torch, got, want), bar_for(torch, call.dtype, want)
        if call.dtype in CONDITIONED and not error <= bar:
            if not conditioned:
                mag_out, mag_grads = magnitudes()
                conditioned.update(zip(QUANTITIES, [mag_out] + mag_grads))
            scale = want.norm().item()
            if scale > 0:
                bar = max(bar, CONDITIONED[call.dtype] * conditioned[name].norm().item() / scale)
        if bool(torch.isnan(got).any()):
            problems.append(f"{name}: NaN (unwritten memory)")
        if not error <= bar:
            problems.append(f"{name}: error {error:.3g} over the bar {bar:.3g}")
        results[name] = (error, bar, error > bar_for(torch, call.dtype, want))
    return results, problems


# ---------------------------------------------------------------------------------------
# The runner (one form, one seed, in this process)


def launched_kernels(torch, run: Callable[[], None]) -> set:
    """The names of the CUDA kernels `run` launches (and of the ops it calls: none of
    those names holds a form's kernel name)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    return {event.name for event in prof.events()}


def run_form(form: Form, seed: int, count: int, coverage: int = 0, caps: str = "",
             deadline: float = 0.0) -> dict:
    """`count` draws (after the regressions) on `form` in this process, or as many as
    run before `deadline` (a time.time(); 0: none). caps: the size caps to draw within
    (WORK_CAP's keys; the form's device's by default); caps smaller than the form's own
    take the reference on the CPU (runs under compute-sanitizer)."""
    import torch  # noqa: PLC0415 (the runner's process only)
    import ct3d  # noqa: F401,PLC0415 (loads the library after the form's environment is set)

    poison = Poison(torch, form.device)
    reference_device = "cpu" if caps and caps != form.device else form.device
    caps = caps or form.device
    rng = random.Random(f"{form.name}:{seed}")
    generator = torch.Generator().manual_seed(seed)
    worst = {name: 0.0 for name in QUANTITIES}  # error / bar
    worst_calls = {}
    conditioned_calls = {name: 0 for name in QUANTITIES}  # met only CONDITIONED's bar
    failures, covered, profiled = [], 0, 0
    started = time.time()
    regressions = [dataclasses.replace(call, dtype=call.dtype if call.dtype in form.dtypes
                                       else form.dtypes[0]) for call in REGRESSIONS]
    ran = 0
    for index in range(-len(regressions), count):
        if deadline and index >= 0 and time.time() > deadline:
            break
        call = regressions[index] if index < 0 else draw_for_form(form, rng, caps)
        ran = max(ran, index + 1)
        try:
            if 0 <= index < coverage and form.kernels:
                box = {}

                def once():
                    box["result"] = check_call(torch, form, call, generator, poison,
                                               reference_device)

                names = launched_kernels(torch, once)
                results, problems = box["result"]
                profiled += 1
                covered += any(k in name for k in form.kernels for name in names)
            else:
                results, problems = check_call(torch, form, call, generator, poison,
                                               reference_device)
        except Exception as error:  # noqa: BLE001 - a valid call must not raise
            results, problems = {}, [f"raised {type(error).__name__}: {error}"[:600]]
        for name, (error, bar, on_conditioning) in results.items():
            conditioned_calls[name] += on_conditioning and error <= bar
            ratio = error / bar if bar > 0 else (0.0 if error == 0 else math.inf)
            if ratio > worst[name]:
                worst[name] = ratio
                worst_calls[name] = {"index": index, "error": error,
                                     "call": dataclasses.asdict(call)}
        if problems:
            failures.append({"index": index, "call": dataclasses.asdict(call),
                             "problems": problems})
    return {"form": form.name, "seed": seed, "configs": ran, "asked": count,
            "regressions": len(regressions), "failures": failures,
            "worst_error_over_bar": worst, "worst_calls": worst_calls,
            "conditioned_calls": conditioned_calls,
            "poison": poison.active, "covered": covered, "profiled": profiled,
            "reference_disagreements": REFERENCE_DISAGREEMENTS,
            "seconds": round(time.time() - started, 1)}


def form_environment(form: Form) -> dict:
    """The runner's environment for a form: no CT3D_ switch but the form's own."""
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("CT3D_") and name != "CT3D_LIBRARY":
            del env[name]
    env.update(form.env)
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    return env


# compute-sanitizer's summary lines (memcheck, initcheck: errors; racecheck: hazards).
SANITIZER_SUMMARIES = ("ERROR SUMMARY", "RACECHECK SUMMARY")


def start_runner(form: Form, seed: int, count: int, coverage: int, caps: str, wrap: list,
                 log_path: Optional[str], threads: int = 0, deadline: float = 0.0):
    command = [*wrap, sys.executable, os.path.abspath(__file__), "--form", form.name, "--seed",
               str(seed), "--count", str(count), "--coverage", str(coverage), "--deadline",
               str(deadline)]
    if caps:
        command += ["--caps", caps]
    log = open(log_path, "w") if log_path else subprocess.PIPE
    env = form_environment(form)
    if threads:
        # Runners side by side share the cores: OpenMP's spinning threads, one per core
        # in each, would slow them all many times over.
        env["OMP_NUM_THREADS"] = str(threads)
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True, env=env)
    process.stdout_file = log
    return process, log_path


def finish_runner(form: Form, process, log_path: Optional[str]) -> dict:
    output = process.communicate()[0]
    if log_path is not None:
        process.stdout_file.close()
        with open(log_path) as log:
            output = log.read()
    lines = output.splitlines()
    reports = [line for line in lines if line.startswith("{")]
    if not reports:
        return {"form": form.name, "configs": 0, "failures": [
            {"index": None, "problems": [f"the runner printed no report (rc "
                                         f"{process.returncode}): {output[-3000:]}"]}],
                "worst_error_over_bar": {}, "poison": True, "covered": 0, "profiled": 0,
                "seconds": 0, "sanitizer": []}
    report = json.loads(reports[-1])
    report["sanitizer"] = [line.strip("= ") for line in lines
                           if any(key in line for key in SANITIZER_SUMMARIES)]
    report["returncode"] = process.returncode
    return report


def sanitizer_clean(report: dict) -> bool:
    return all(line.split(":")[-1].strip().startswith("0 ") for line in report["sanitizer"])


def run_forms(forms, seed: int, count: int, coverage: int = 0, caps: str = "",
              wrap: Optional[list] = None, jobs: int = 1, logs: Optional[str] = None,
              deadline: float = 0.0) -> list:
    """Each form in a runner process of its own, `jobs` at a time (a form's runner
    is mostly one CPU core), under the `wrap` command (compute-sanitizer) if given."""
    wrap = wrap or []
    threads = max(1, (os.cpu_count() or 1) // jobs) if jobs > 1 else 0
    pending, running, reports = list(forms), [], []
    while pending or running:
        while pending and len(running) < jobs:
            form = pending.pop(0)
            log_path = os.path.join(logs, f"{form.name}.log") if logs else None
            running.append((form, *start_runner(form, seed, count, coverage, caps, wrap,
                                                 log_path, threads, deadline)))
        form, process, log_path = running.pop(0)
        reports.append(finish_runner(form, process, log_path))
    return reports


def print_table(reports: list, out=sys.stdout) -> None:
    print(f"{'form':32s} {'calls':>6s} {'fail':>5s} {'took':>6s} {'form ran':>9s} "
          f"{'worst error/bar (out, dx, dw, db)':>34s} {'cancelled':>9s}  sanitizer", file=out)
    for r in reports:
        worst = " ".join(f"{r['worst_error_over_bar'].get(q, 0):.2g}" for q in QUANTITIES)
        ran = f"{r['covered']}/{r['profiled']}" if r.get("profiled") else "-"
        sanitizer = "; ".join(r.get("sanitizer", [])) or "-"
        cancelled = sum(r.get("conditioned_calls", {}).values())
        print(f"{r['form']:32s} {r['configs']:6d} {len(r['failures']):5d} {r['seconds']:6.0f} "
              f"{ran:>9s} {worst:>34s} {cancelled:9d}  {sanitizer}", file=out)


def forms_named(names: list) -> list:
    chosen = []
    for name in names:
        if name in ("cpu", "cuda"):
            chosen += [form for form in FORMS if form.device == name]
        elif name in FORMS_BY_NAME:
            chosen.append(FORMS_BY_NAME[name])
        else:
            raise SystemExit(f"unknown form {name!r}; forms: cpu, cuda, "
                             + ", ".join(sorted(FORMS_BY_NAME)))
    return chosen


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--form", action="append", required=True,
                        help="a form's name, or cpu / cuda for all of a device's (repeatable)")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, required=True, help="random calls per form")
    parser.add_argument("--coverage", type=int, default=0,
                        help="profile the first K calls for the form's kernels (CUDA)")
    parser.add_argument("--caps", default="", choices=["", *WORK_CAP],
                        help="size caps to draw within (default: the form's device's); "
                        "smaller ones take a CPU reference (under a sanitizer)")
    parser.add_argument("--jobs", type=int, default=1, help="forms run at a time")
    parser.add_argument("--wrap", default="", help="command the runners run under, e.g. "
                        "'compute-sanitizer --tool memcheck'")
    parser.add_argument("--out", default="", help="folder for the reports and runner logs")
    parser.add_argument("--seconds", type=float, default=0,
                        help="draw no new call after this many seconds (0: no limit)")
    parser.add_argument("--deadline", type=float, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    deadline = args.deadline or (time.time() + args.seconds if args.seconds else 0.0)
    forms = forms_named(args.form)
    if len(forms) == 1 and not args.wrap and not args.out:
        report = run_form(forms[0], args.seed, args.count, args.coverage, args.caps, deadline)
        print(json.dumps(report))
        return 1 if report["failures"] else 0
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    reports = run_forms(forms, args.seed, args.count, args.coverage, args.caps,
                        args.wrap.split(), args.jobs, args.out or None, deadline)
    if args.out:
        with open(os.path.join(args.out, "reports.json"), "w") as file:
            json.dump(reports, file, indent=1)
    for report in reports:
        if report["failures"]:
            print(describe(report), file=sys.stderr)
    print_table(reports)
    failed = any(r["failures"] or not sanitizer_clean(r) for r in reports)
    return 1 if failed else 0


def run_in_subprocess(form: Form, seed: int, count: int) -> dict:
    process, log_path = start_runner(form, seed, count, 0, "", [], None)
    return finish_runner(form, process, log_path)


# ---------------------------------------------------------------------------------------
# pytest

FIXED_SEED = 20261205


def fresh_seed() -> int:
    replay = os.environ.get("CT3D_DIFF_SEED")
    return int(replay) if replay else random.SystemRandom().randrange(1 << 31)


SEEDS = {"fixed": FIXED_SEED, "fresh": fresh_seed()}
REPORTS: list = []  # read by conftest.py's summary


def configs_per_run(device: str) -> int:
    default = {"cpu": 4000, "cuda": 2000}[device]
    return int(os.environ.get("CT3D_DIFF_CONFIGS", default))


def cpu_has_avx512() -> bool:
    try:
        with open("/proc/cpuinfo") as info:
            return " avx512f" in info.read()
    except OSError:
        return False


def cuda_available() -> bool:
    import torch
    return torch.cuda.is_available()


def describe(report: dict, limit: int = 3) -> str:
    lines = [f"{report['form']} seed {report['seed']}: {len(report['failures'])} of "
             f"{report['configs']} calls failed (replay: python3 python_tests/"
             f"test_differential.py --form {report['form']} --seed {report['seed']} --count "
             f"{report['configs']})"]
    for failure in report["failures"][:limit]:
        lines.append(f"  call {failure['index']}: {failure['problems']}\n    {failure['call']}")
    return "\n".join(lines)


@pytest.mark.parametrize("seed_kind", sorted(SEEDS))
@pytest.mark.parametrize("form", [f for f in FORMS], ids=lambda f: f.name)
def test_form_matches_float64(form: Form, seed_kind: str):
    if form.device == "cuda" and not cuda_available():
        pytest.skip("needs a CUDA GPU")
    if form.needs_avx512 and not cpu_has_avx512():
        pytest.skip("this form needs an AVX-512 CPU")
    report = run_in_subprocess(form, SEEDS[seed_kind], configs_per_run(form.device))
    REPORTS.append(report)
    assert report["poison"], "the allocator's poison did not take effect"
    assert not report["failures"], describe(report)


def test_draws_cover_the_legal_space():
    """The draws reach every edge of the legal space (checked on the draws alone)."""
    rng = random.Random(FIXED_SEED)
    calls = [draw_for_form(FORMS_BY_NAME["cpu-default"], rng) for _ in range(3000)]
    seen = lambda values: set(values)  # noqa: E731
    assert seen(k for c in calls for k in c.kernel) == set(range(1, 6))
    assert seen(s for c in calls for s in c.stride) == {1, 2, 3}
    assert seen(d for c in calls for d in c.dilation) == {1, 2, 3}
    assert seen(c.groups for c in calls) == {1, 2, 3, 4}
    assert seen(c.batch for c in calls) == {None, 0, 1, 2, 3}
    assert max(c.cout_g for c in calls) == 64 and max(c.cin_g for c in calls) == 64
    assert max(p for c in calls for p in c.spatial) == 12
    assert {c.input_layout for c in calls} == set(INPUT_LAYOUTS)
    assert {c.dtype for c in calls} == set(ALL_DTYPES)
    # Padding up to dilation * (kernel - 1), output_padding up to max(stride, dilation) - 1.
    assert any(c.padding[i] == c.dilation[i] * (c.kernel[i] - 1) > 0 for c in calls for i in
               range(3))
    assert any(c.output_padding[i] == max(c.stride[i], c.dilation[i]) - 1 == 2 for c in calls
               for i in range(3))
    for c in calls:
        assert all(c.output_extent(i) >= 1 for i in range(3)), c
        assert all(0 <= c.padding[i] <= c.dilation[i] * (c.kernel[i] - 1) for i in range(3)), c
        assert all(0 <= c.output_padding[i] < max(c.stride[i], c.dilation[i]) for i in range(3))


def test_cancelling_sum_bar_still_fails_a_missing_term():
    """The float32 bar of a result that cancels (CONDITIONED) passes ct3d's sum of a
    one-element input gradient whose 24 terms cancel to 1/2000 of their magnitudes, and
    still fails that sum with its smallest term left out; where nothing cancels it adds
    nothing to the plain 1e-5."""
    import torch
    call = Call(batch=1, groups=1, cin_g=1, cout_g=6, spatial=[1, 1, 1], kernel=[1, 2, 2],
                stride=[2, 2, 2], padding=[0, 0, 0], output_padding=[0, 0, 0],
                dilation=[2, 1, 1], bias=False, dtype="float32", requires_grad=[True, False,
                                                                               False])
    generator = torch.Generator().manual_seed(FIXED_SEED)
    x, w, _, g = make_operands(torch, call, "cpu", generator)
    terms = (w.double() * g.double()[0]).flatten()
    # The last grad_output value chosen so that the 24 products nearly cancel.
    g = g.clone()
    g.view(-1)[-1] = float(-(terms[:-1].sum() - terms.abs().sum() / 2000) / w.view(-1)[-1])
    _, (dx, _, _) = ct3d_call(torch, call, x, w, None, g)
    reference = reference_call(torch, call, x, w, None, g, "cpu")
    magnitudes = lambda: reference_call(torch, call, x.abs(), w.abs(), None, g.abs(),  # noqa: E731
                                        "cpu")
    form = FORMS_BY_NAME["cpu-default"]

    def verdict(result):
        return compare(torch, form, call, reference[0].float(), [result, None, None],
                       reference, (x, w, None), magnitudes)

    results, problems = verdict(dx)
    assert not problems and results["grad_input"][1] > BARS["float32"]
    smallest = (w.double() * g.double()[0]).flatten().abs().min()
    results, problems = verdict((dx.double() - smallest).float())
    assert problems, results
    # Not cancelling (the operands as drawn): an error of 2e-5 fails.
    x, w, _, g = make_operands(torch, call, "cpu", generator)
    reference = reference_call(torch, call, x, w, None, g, "cpu")
    _, problems = verdict(reference[1][0].float() * (1 + 2e-5))
    assert problems

if __name__ == "__main__":
    sys.exit(main())
