import pytest
import torch

import ct3d  # noqa: F401  (loads the op library once for every test)

requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture(autouse=True)
def _default_options():
    """Every test ends with the options the environment gave (a test that forces a form,
    forms.force, leaves nothing behind)."""
    from forms import restore_environment_options

    yield
    restore_environment_options()


def pytest_terminal_summary(terminalreporter):
    """The differential harness's seeds and counts (test_differential.py): the fresh
    seed changes every run, so the log must say which one ran (CT3D_DIFF_SEED replays it)."""
    import sys

    harness = sys.modules.get("test_differential")
    if harness is None:
        return
    terminalreporter.section("differential harness")
    terminalreporter.write_line(f"seeds: {harness.SEEDS} (CT3D_DIFF_SEED=<seed> replays "
                                "the fresh one)")
    for report in harness.REPORTS:
        worst = ", ".join(f"{name} {ratio:.2g}" for name, ratio in
                          report["worst_error_over_bar"].items())
        cancelled = sum(report.get("conditioned_calls", {}).values())
        terminalreporter.write_line(
            f"{report['form']:32s} seed {report['seed']:>10}: {report['configs']} calls, "
            f"{len(report['failures'])} failed, {report['seconds']} s; worst error/bar: {worst}"
            f"; within the bar of a cancelling sum only: {cancelled}")
