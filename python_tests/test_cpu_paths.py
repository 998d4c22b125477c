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


@pytest.mark.parametrize("forward", ["gather", "scatter"])
@pytest.mark.parametrize("blas", [False, True], ids=["own kernel", "blas"])
def test_both_gemm_paths_meet_the_bar(blas, forward):
    """Also both forms of the forward (scatter_forward.h; without AVX-512 the scatter
    form is not taken, so the BLAS runs both test the gather form)."""
    env = dict(os.environ)
    env.pop("CT3D_CPU_NO_AVX512", None)
    env["CT3D_CPU_FORWARD"] = forward
    if blas:
        env["CT3D_CPU_NO_AVX512"] = "1"
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [tests_dir, env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", SWEEP], capture_output=True, text=True,
                            env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.strip().splitlines()[-1]) <= 1e-5
