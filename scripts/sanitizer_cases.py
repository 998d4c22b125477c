"""Calls that reach every CUDA kernel path of ct3d once, small enough for
compute-sanitizer (memcheck, racecheck). Run by scripts/sanitize.sh on a GPU.

Paths: the implicit GEMM with 1, 2, 3 and 4 channel tiles (C_out per group 8, 24,
40, 64) and several channel blocks (100), stride phases with empty phases, groups,
dilation, padding wider than the kernel, odd sizes at every tile edge, channels-last
output, unbatched input, a kernel of 40 (a wide halo); the direct kernel (float64,
float16, bfloat16, and a stride too large for the GEMM); the staging and packing
passes; both backward ops. On sm_90a also the tap-columns form (the 13-channel case:
48 rows with padding rows, its input gradient 96; the (3, 5, 5) case's input gradient
160), its window read by TMA from the source (the two cases after it) and from staged
planes (the others); and the strided-lines form (the last three: widths 32 and 20,
flushed chains); the wgmma weight gradient with 2 m-tiles a
warpgroup, a last row block and a width tail (the last), with 16-position stages (the
16-wide cases: 48 channels, and 144 in three channel blocks on its own staged copy);
the Winograd forward and input gradient (the two after it).
"""

import torch
import torch.nn.functional as F

import ct3d  # noqa: F401

CASES = [
    # (N, C_in, C_out/group, groups, input DHW, kernel, stride, padding, out_pad, dilation, dtype)
    (2, 16, 8, 1, (3, 5, 7), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), torch.float32),
    (1, 48, 24, 1, (4, 6, 9), (3, 2, 3), (2, 2, 2), (1, 0, 1), (1, 1, 0), (1, 1, 1), torch.float32),
    (1, 20, 40, 1, (3, 4, 5), (2, 3, 2), (3, 1, 2), (0, 1, 0), (2, 0, 1), (1, 2, 1), torch.float32),
    (2, 32, 64, 1, (2, 5, 6), (3, 5, 5), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), torch.float32),
    (1, 8, 100, 1, (2, 3, 4), (2, 2, 2), (2, 1, 2), (0, 0, 0), (0, 0, 1), (1, 1, 1), torch.float32),
    (2, 12, 6, 3, (3, 4, 5), (3, 3, 3), (2, 2, 2), (3, 1, 2), (1, 0, 1), (2, 1, 1), torch.float32),
    (1, 4, 3, 1, (2, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), torch.float64),
    (1, 4, 3, 1, (2, 3, 3), (2, 2, 2), (2, 1, 1), (0, 0, 0), (1, 0, 0), (1, 1, 1), torch.float16),
    (1, 4, 3, 1, (2, 3, 3), (2, 2, 2), (1, 2, 1), (0, 0, 0), (0, 1, 0), (1, 1, 1), torch.bfloat16),
    (1, 2, 2, 1, (2, 2, 2), (40, 2, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), torch.float32),
    (1, 3, 5, 1, (2, 3, 2), (2, 2, 2), (9, 1, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), torch.float32),
    (2, 32, 13, 1, (3, 4, 70), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), torch.float32),
    # Widths a multiple of 4: the tap-columns form's window boxes read by TMA (144 rows;
    # then the input gradient's 160 rows on a 16-wide grad_output).
    (2, 48, 48, 1, (3, 4, 16), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), torch.float32),
    (2, 32, 32, 1, (2, 4, 14), (3, 3, 5), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), torch.float32),
    # Width stride 2: the strided-lines form (widths a multiple of 16: staged stores; 576
    # reductions: flushed chains; width 20).
    (1, 32, 32, 1, (2, 3, 32), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), torch.float32),
    (1, 144, 16, 1, (2, 3, 16), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), torch.float32),
    (1, 16, 12, 1, (2, 3, 20), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), torch.float32),
    # The wgmma weight gradient: 432 rows (2 blocks of 2 m-tiles a warpgroup, KERNEL_LOG
    # "weight-gradient stages of 16 positions") and a width tail of 12 positions (KERNEL_LOG
    # "leaves out empty m-tiles").
    (2, 32, 16, 1, (3, 4, 44), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), torch.float32),
    # The Winograd forward and input gradient (KERNEL_LOG "Winograd F(m, r)"): F(4, 3) in
    # both dimensions into the staged source (then into planes, below); F(4, 5) with groups and padding
    # short of the kernel's reach.
    (1, 64, 64, 1, (3, 9, 10), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), torch.float32),
    (2, 128, 64, 2, (2, 6, 11), (3, 5, 5), (1, 1, 1), (0, 2, 1), (0, 0, 0), (1, 1, 1), torch.float32),
]


def run(case, channels_last, unbatched):
    n, cin, cout_g, groups, size, kernel, stride, padding, out_pad, dilation, dtype = case
    x = torch.randn(n, cin, *size, device="cuda", dtype=dtype)
    w = torch.randn(cin, cout_g, *kernel, device="cuda", dtype=dtype, requires_grad=True)
    b = torch.randn(cout_g * groups, device="cuda", dtype=dtype)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last_3d)
    if unbatched:
        x = x[0]
    x.requires_grad_()
    args = (list(stride), list(padding), list(out_pad), groups, list(dilation))
    out = torch.ops.ct3d.conv_transpose3d(x, w, b, *args)
    out.sum().backward()
    # The reference runs on the CPU: only ct3d's kernels go through the sanitizer's
    # checks on the GPU (plus PyTorch's own small elementwise ones).
    ref = F.conv_transpose3d(x.detach().double().cpu(), w.detach().double().cpu(),
                             b.double().cpu(), stride, padding, out_pad, groups, dilation)
    error = ((out.detach().double().cpu() - ref).norm() / ref.norm()).item()
    limit = {torch.float32: 1e-5, torch.float64: 1e-12}.get(dtype, 2e-2)
    assert error <= limit, (case, error)


for case in CASES:
    run(case, channels_last=False, unbatched=False)
run(CASES[1], channels_last=True, unbatched=False)
run(CASES[5], channels_last=False, unbatched=True)
torch.cuda.synchronize()
print(f"sanitizer cases: {len(CASES) + 2} calls, forward and backward, all correct")
