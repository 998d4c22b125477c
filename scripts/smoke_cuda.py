"""A quick CUDA check before the full suite: a few convolutions (forward and both
gradients) against float64, each in a fresh call, so a broken kernel shows up in
seconds instead of hanging a long test run. Run under `timeout`.

    timeout 120 python3 scripts/smoke_cuda.py
"""

import sys

import torch
import torch.nn.functional as F

import ct3d  # noqa: F401

CASES = [  # (N, C_in, C_out, spatial, kernel, stride, padding, output_padding, groups, dilation)
    (2, 32, 64, (6, 7, 9), 3, 1, 0, 0, 1, 1),
    (2, 48, 48, (5, 6, 7), 3, 1, 1, 0, 1, 1),
    (1, 32, 16, (4, 6, 9), (3, 5, 7), 1, 0, 0, 1, 1),
    (2, 32, 32, (4, 5, 6), 3, 2, 1, 1, 4, 1),
    (2, 32, 64, (4, 4, 5), 3, 2, 1, 0, 1, 2),
    (1, 48, 24, (5, 5, 5), 3, 1, 0, 0, 1, 1),
    (1, 16, 128, (4, 4, 4), 3, 1, 1, 0, 1, 1),
    (1, 16, 200, (3, 4, 5), 3, 2, 0, 1, 1, 1),
    (2, 40, 80, (4, 5, 6), 3, 1, 1, 0, 1, 1),
    (2, 96, 96, (4, 4, 4), 3, 2, 1, 1, 2, 1),
]


def relative_error(value, reference):
    return ((value.double() - reference).norm() / reference.norm()).item()


worst = 0.0
for n, cin, cout, spatial, k, s, p, op, g, d in CASES:
    x = torch.rand(n, cin, *spatial, device="cuda", requires_grad=True)
    w = torch.randn(cin, cout // g, *((k,) * 3 if isinstance(k, int) else k), device="cuda",
                    requires_grad=True)
    b = torch.randn(cout, device="cuda", requires_grad=True)
    args = (s, p, op, g, d)
    y = torch.ops.ct3d.conv_transpose3d(x, w, b, *[[v] for v in args[:3]], g, [d])
    gy = torch.randn_like(y)
    y.backward(gy)
    xd, wd, bd = (t.detach().double().requires_grad_() for t in (x, w, b))
    yd = F.conv_transpose3d(xd, wd, bd, s, p, op, g, d)
    yd.backward(gy.double())
    errors = [relative_error(y.detach(), yd.detach()), relative_error(x.grad, xd.grad),
              relative_error(w.grad, wd.grad), relative_error(b.grad, bd.grad)]
    worst = max(worst, *errors)
    print(f"{tuple(x.shape)} -> {cout} k{k} s{s} p{p} op{op} g{g} d{d}: "
          + " ".join(f"{e:.1e}" for e in errors), flush=True)
print(f"smoke: worst error {worst:.1e} ({'ok' if worst < 1e-5 else 'FAILED'})")
sys.exit(0 if worst < 1e-5 else 1)
