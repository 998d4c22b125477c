"""Each kernelbench/ drop-in file matches its problem's reference Model: the same
constructor behaviour (positional arguments as get_init_inputs passes them), the
same initialisation under the same seed, and the same output."""

from pathlib import Path

import pytest
import torch
from torch import nn

from problems import PROBLEMS

KERNELBENCH = Path(__file__).resolve().parents[1] / "kernelbench"


def load_solution(problem):
    """Executes the file as source text, as the harness does."""
    namespace = {}
    source = (KERNELBENCH / f"{problem.file_stem}.py").read_text()
    exec(compile(source, problem.file_stem, "exec"), namespace)
    return namespace["Model"]


def test_one_file_per_problem_and_nothing_else():
    assert sorted(p.name for p in KERNELBENCH.glob("*.py")) == sorted(f"{p.file_stem}.py" for p in PROBLEMS)


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.label)
def test_solution_file_holds_imports_and_model_only(problem):
    import ast
    tree = ast.parse((KERNELBENCH / f"{problem.file_stem}.py").read_text())
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"Import", "ImportFrom", "ClassDef"}
    assert [n.name for n in tree.body if isinstance(n, ast.ClassDef)] == ["Model"]


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.label)
def test_matches_reference_model(problem):
    Model = load_solution(problem)
    torch.manual_seed(problem.number)
    ours = Model(*problem.init_inputs)
    torch.manual_seed(problem.number)
    reference = nn.ConvTranspose3d(**problem.conv)
    conv = ours.conv_transpose3d
    for attr in ("stride", "padding", "output_padding", "groups", "dilation", "kernel_size"):
        assert getattr(conv, attr) == getattr(reference, attr), attr
    assert (conv.bias is None) == (reference.bias is None)
    assert list(ours.state_dict()) == ["conv_transpose3d.weight"]
    torch.testing.assert_close(conv.weight, reference.weight, rtol=0, atol=0)

    x = torch.rand(problem.input_shape(batch=1, spatial_scale=8), dtype=torch.float64)
    with torch.no_grad():
        out = ours.double()(x)
        ref = reference.double()(x)
    torch.testing.assert_close(out, ref, rtol=1e-10, atol=1e-10)
