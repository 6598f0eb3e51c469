#!/usr/bin/env python3
"""check_findings.py's own variant labels against hand-written expectations (the rules of the trainer's
variant_label, docs/guide.md "Config": the shortest λ or the kind, "@<layers>" when only some layers, " lr×S" for a
variant with parameters at lambda_lr_scale S ≠ 1). The committed results have no layer lists yet, so this is
where the "@" path is checked."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_findings import lambda_label  # noqa: E402


def run(kind, lam=None, layers="all"):
    r = {"variant_spec": {"kind": kind, "lambda": lam}}
    if layers is not None:
        r["layers"] = layers
    return r


CASES = [  # (run, lambda_lr_scale, expected label)
    (run("fixed", 1.0), 1.0, "1"),
    (run("fixed", 0.5), 30.0, "0.5"),  # a fixed λ has no parameters: the scale does not apply
    (run("fixed", 0.25, layers=None), 1.0, "0.25"),  # files before the layers key: every layer
    (run("fixed", 1.0, layers=[]), 1.0, "1"),  # an empty list: every layer too
    (run("fixed", 1.0, layers=[3, 2]), 1.0, "1@2-3"),
    (run("fixed", 1.0, layers=[0, 1]), 1.0, "1@0-1"),
    (run("fixed", 0.5, layers=[2, 0]), 1.0, "0.5@0+2"),
    (run("fixed", 1.0, layers=[5, 0, 1, 2, 7]), 1.0, "1@0-2+5+7"),
    (run("learned"), 30.0, "learned lr×30"),
    (run("gate", layers=[1]), 1.0 / 3, "gate@1 lr×0.333333"),
    (run("tanh_gate"), 1.0, "tanh_gate"),
]

failures = [(want, lambda_label(r, scale)) for r, scale, want in CASES if lambda_label(r, scale) != want]
for want, got in failures:
    print(f"FAIL expected {want!r}, check_findings.lambda_label gives {got!r}")
print(f"check_findings_labels: {len(CASES)} labels, {len(failures)} differ")
sys.exit(1 if failures else 0)
