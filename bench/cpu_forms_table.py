"""Every CPU form against the others on the CPU table's layers (bench_cpu.py's SHAPES), in
one process: for each layer, the forward as the planner runs it (cpu_plan.h, printed by
ct3d.explain) and as each other form (the tests' forced forms: cpu-direct, cpu-scatter,
cpu-gather), and the input gradient in the direct correlation and the shifted GEMM.
Medians of --reps timings a round, the forms alternating in order from round to round,
the median over --rounds; float32, the machine's threads.

    python bench/cpu_forms_table.py [--rounds 5] [--reps 5]
"""

import argparse
import statistics

import torch

import ct3d
from bench_cpu import SHAPES, median_ms

# The forced form that runs each op's form (forced_form.h); "" is the planner's rule.
FORWARD_FORMS = {"direct": "cpu-direct", "scatter": "cpu-scatter", "gather": "cpu-gather"}
INPUT_GRADIENT_FORMS = {"direct": "cpu-direct", "shifted GEMM": "cpu-gather"}
NAMES = {"direct correlation": "direct", "input-stationary (scatter) GEMM": "scatter",
         "output-stationary (gather) GEMM": "gather", "shifted GEMM": "shifted GEMM"}


def planned_forms(x, w, args):
    """{op: form name} as ct3d.explain prints the planner's choice."""
    forms = {}
    for line in ct3d.explain(x, w, None, *args).splitlines():
        op, text = line.split(": ", 1)
        forms[op] = NAMES[text.split(" on ")[0]]
    return forms


def time_forms(calls, forms, rounds, reps):
    """{form: median ms} of calls() under each form's forced setting, alternating."""
    times = {form: [] for form in forms}
    order = list(forms)
    for round_index in range(rounds):
        for form in (order if round_index % 2 == 0 else order[::-1]):
            ct3d.set_option("force_form", forms[form])
            times[form].append(median_ms(calls, reps))  # after one call of warm-up
    ct3d.set_option("force_form", "")
    return {form: statistics.median(values) for form, values in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=5)
    options = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'layer':34s} {'op':6s} {'planned':13s} {'planned ms':>10s}  others (ms, others/planned)")
    for label, in_shape, cout, k, s, p, op, groups, d in SHAPES:
        torch.manual_seed(0)
        cin = in_shape[0] if len(in_shape) == 4 else in_shape[1]
        kernel = (k,) * 3 if isinstance(k, int) else k
        x = torch.randn(in_shape)
        w = torch.randn(cin, cout // groups, *kernel)
        args = (s, p, op, groups, d)
        planned = planned_forms(x, w, args)
        y = ct3d.conv_transpose3d(x, w, None, *args)
        gy = torch.randn_like(y)
        if gy.dim() == 4:  # the backward ops take batched tensors
            gy = gy.unsqueeze(0)
        size = list(x.shape[-3:])
        triple = torch.nn.modules.utils._triple
        stride, padding, dilation = triple(s), triple(p), triple(d)
        ops = {
            "fwd": (lambda: ct3d.conv_transpose3d(x, w, None, *args), FORWARD_FORMS,
                    planned["forward"]),
            "dgrad": (lambda: torch.ops.ct3d.conv_transpose3d_input_backward(
                gy, w, size, list(stride), list(padding), groups, list(dilation)),
                INPUT_GRADIENT_FORMS, planned["input gradient"]),
        }
        for op_name, (calls, forms, form) in ops.items():
            if any(t != 1 for t in stride):
                forms = {f: v for f, v in forms.items() if f != "direct"}  # stride 1 only
            if len(forms) < 2:
                continue  # one form: nothing to time it against
            ms = time_forms(calls, {**{form: ""}, **{f: v for f, v in forms.items() if f != form}},
                            options.rounds, options.reps)
            others = "  ".join(f"{f} {t:.3f} ({t / ms[form]:.2f}x)" for f, t in ms.items()
                               if f != form)
            print(f"{label:34s} {op_name:6s} {form:13s} {ms[form]:10.3f}  {others}", flush=True)


if __name__ == "__main__":
    main()
