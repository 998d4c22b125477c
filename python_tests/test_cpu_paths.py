"""The CPU kernels' two GEMM paths: ct3d's AVX-512 kernel (where the CPU has it,
as on the development machine) and BLAS (CT3D_CPU_NO_AVX512=1, and every CPU
without AVX-512) give float32 results within the accuracy bar on the same cases."""

import os
import subprocess
import sys

import pytest

SWEEP = r"""
import random
import torch, torch.nn.functional as F
import ct3d
from cases import conv_args, make_tensors, random_case, relative_error
worst = 0.0
for index in range(40):
    case = random_case(random.Random(5100 + index), max_spatial=7, max_channels=40)
    x, w, b = make_tensors(case, torch.float32, "cpu")
    args = conv_args(case)
    leaves = [t.clone().requires_grad_() for t in (x, w)]
    y = torch.ops.ct3d.conv_transpose3d(leaves[0], leaves[1], b, *args)
    gy = torch.randn_like(y)
    y.backward(gy)
    xd, wd = x.double().requires_grad_(), w.double().requires_grad_()
    yd = F.conv_transpose3d(xd, wd, None if b is None else b.double(), *args)
    yd.backward(gy.double())
    for got, want in ((y, yd), (leaves[0].grad, xd.grad), (leaves[1].grad, wd.grad)):
        if want.norm() > 0:
            worst = max(worst, relative_error(got.detach(), want.detach()))
print(worst)
"""


@pytest.mark.parametrize("forward", ["direct", "gather", "scatter"])
@pytest.mark.parametrize("blas", [False, True], ids=["own kernel", "blas"])
def test_both_gemm_paths_meet_the_bar(blas, forward):
    """Also every form of the forward: the direct stride-1 correlation
    (direct_correlation.h, also the stride-1 input gradient) and the two GEMM forms
    (scatter_forward.h). Without AVX-512 only the gather form runs, so the BLAS
    runs all test that one."""
    env = dict(os.environ)
    env.pop("CT3D_CPU_NO_AVX512", None)
    env["CT3D_CPU_DIRECT"] = "1" if forward == "direct" else "0"
    env["CT3D_CPU_FORWARD"] = "gather" if forward == "direct" else forward
    if blas:
        env["CT3D_CPU_NO_AVX512"] = "1"
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [tests_dir, env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", SWEEP], capture_output=True, text=True,
                            env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.strip().splitlines()[-1]) <= 1e-5
