#!/usr/bin/env python3
"""check_findings.py's own variant and setup labels against hand-written expectations. Variant labels follow the
trainer's variant_label (docs/guide.md "Config": the shortest λ or the kind, "@<layers>" when only some layers,
" lr×S" for a variant with parameters at lambda_lr_scale S ≠ 1); setup labels follow the report's setup_label (each
choice that differs from the paper's, in a fixed order), which keeps setups, the document mask included, in groups
of their own. The committed results have no layer lists and no masked runs yet, so this is where the "@" path and
the "doc mask" label are checked."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_findings import lambda_label, setup_label  # noqa: E402


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

def config(data=None, **choices):
    """A results.json config: the paper's setup (no "data" section, as the oldest records) changed by `choices`."""
    c = {"model": {}, "attention": {}, "train": {}}
    sections = {"pos": "model", "embed_norm": "model", "qk_norm": "model", "output_gate": "attention",
                "warmup_steps": "train", "optimizer": "train"}
    for key, value in choices.items():
        c[sections[key]][key] = value
    if data is not None:
        c["data"] = data
    return c


SETUP_CASES = [  # (config, expected label)
    (config(), ""),
    (config(data={"doc_mask": False}), ""),
    (config(data={"doc_mask": True}), "doc mask"),
    (config(pos="learned", embed_norm=False), "learned pos, no emb norm"),
    (config(embed_norm=False, qk_norm=True, warmup_steps=150, data={"doc_mask": True}),
     "no emb norm, QK-norm, warmup 150, doc mask"),
    (config(output_gate="headwise", optimizer="muon"), "headwise gate, muon"),  # a later optimizer's name
]

failures = [(want, lambda_label(r, scale)) for r, scale, want in CASES if lambda_label(r, scale) != want]
failures += [(want, setup_label(c)) for c, want in SETUP_CASES if setup_label(c) != want]
for want, got in failures:
    print(f"FAIL expected {want!r}, check_findings.lambda_label gives {got!r}")
print(f"check_findings_labels: {len(CASES) + len(SETUP_CASES)} labels, {len(failures)} differ")
sys.exit(1 if failures else 0)
