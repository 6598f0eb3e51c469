#!/usr/bin/python3
"""Compare the C++ model against the independent PyTorch reference (GitHub issue 3).

    /usr/bin/python3 scripts/reference/check_against_cpp.py DUMP_DIR [--dtype float64|float32] [--tol 1e-5]

DUMP_DIR is written by the xsa-reference-export test executable (tests/reference_export.cpp): per case,
the C++ parameters, inputs, logits, loss, gradients and bias metrics, listed in DUMP_DIR/manifest.json.
Each case is loaded into scripts/reference/model.py (strict state_dict: the parameter names must match),
recomputed, and compared: logits, loss, every gradient, the bias metrics and the per-head lambda; and the
reference's own init_weights (same seed) against the C++ initial weights.

Tolerance: |cpp - ref| <= tol * max(1, |ref|) elementwise (tol 1e-5), i.e. absolute for values up to 1
in magnitude and relative above that. Gradients are 1e-5..1e-1 here, where an absolute 1e-5 says little,
so each gradient tensor must also agree normwise: ||cpp - ref|| <= grad_rtol * ||ref|| (grad_rtol 1e-4).
cos_z_v gets a documented extra allowance for positions where z is exactly 0 (model.bias_metrics).
The reference runs in float64 by default, so what is measured is the C++ float32 error plus any bug.

Prints one line per case, then 'N passed, M failed'; exits 1 on any mismatch (or missing torch). A bad option
(--tol not a finite number > 0, ...) or a manifest that cannot be read (missing, not JSON, not an object with a
non-empty array of cases, a case missing a key) is one line naming it, exit 2, before any case runs.
"""

import json
import math
import os
import stat
import sys

try:
    import numpy as np
    import torch
except ImportError as e:  # the test must fail loudly, not skip: python3-torch is a project requirement
    sys.exit(f"check_against_cpp.py: {sys.executable} cannot import {e.name}; install python3-torch and "
             f"python3-numpy (scripts/setup.sh does)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model as reference  # noqa: E402
import options  # noqa: E402  (the one-line argparse of the reference scripts)
from model import GPT  # noqa: E402

PROG = "check_against_cpp.py"

DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64}
METRICS = ["cos_y_v", "cos_z_v", "attn_diag", "value_cos", "lambda_per_head", "max_logit", "attn_entropy",
           "attn_sink"]


def load_tensors(case_dir, entries):
    out = {}
    for name, e in entries.items():
        raw = np.fromfile(os.path.join(case_dir, e["file"]), dtype=np.dtype(DTYPES[e["dtype"]]).newbyteorder("<"))
        out[name] = torch.from_numpy(raw.reshape(e["shape"]).astype(raw.dtype.newbyteorder("="))).clone()
    return out


def worst(cpp, ref, tol, allowance=None):
    """(max abs diff, max of |diff| / bound) with bound = tol * max(1, |ref|) (+ allowance): the second
    is <= 1 when within tolerance."""
    cpp, ref = cpp.double(), ref.double()
    if not torch.isfinite(cpp).all() or not torch.isfinite(ref).all():
        return float("inf"), float("inf")
    diff = (cpp - ref).abs()
    if diff.numel() == 0:
        return 0.0, 0.0
    bound = tol * ref.abs().clamp(min=1.0)
    if allowance is not None:
        bound = bound + allowance
    return diff.max().item(), (diff / bound).max().item()


def check_case(dump_dir, case, dtype, tol, grad_rtol):
    """Returns (ok, {quantity: max abs diff}, [failure descriptions], [notes])."""
    t = load_tensors(os.path.join(dump_dir, case["dir"]), case["tensors"])
    cfg = case["config"]
    variant = case["variant"]
    model = GPT(cfg["model"], case["vocab_size"], case["max_len"],
                variant=(variant["kind"], variant["lambda"] if variant["kind"] == "fixed"
                         else cfg["attention"]["learned_init"]),
                layers=cfg["attention"]["layers"], output_gate=cfg["attention"].get("output_gate", "none"))
    model.doc_bos = case.get("doc_bos")  # data.doc_mask: the boundary token, or None
    params = {k[len("param/"):]: v for k, v in t.items() if k.startswith("param/")}

    # The init rules too: the reference's init_weights, from a generator with the case's seed, must
    # draw the same shared weights (same PyTorch generator, same registration order, same stds).
    model.init_weights(torch.Generator().manual_seed(cfg["seed"]))
    perturbed = ("attn.q_norm", "attn.k_norm", "attn.gate.weight", "attn.gate.bias")
    init = {name: p.detach().clone() for name, p in model.named_parameters() if "xsa_" not in name
            and not (case.get("stabilisers_perturbed") and name.endswith(perturbed))}
    for p in init.values():  # the exporter's scaling of >= 2-D weights after init (float32, like C++)
        if p.dim() >= 2:
            p.mul_(case.get("weight_scale", 1.0))
    model.load_state_dict(params, strict=True)  # names and shapes must equal the C++ ones
    model.to(dtype)

    probe = []
    logits = model(t["input/idx"], probe)
    loss = model.loss(logits, t["input/targets"])
    loss.backward()

    compared = {"logits": (t["output/logits"], logits.detach()), "loss": (t["output/loss"], loss.detach())}
    for name, p in init.items():
        compared["init/" + name] = (params[name], p)
    for name, p in model.named_parameters():
        compared["grad/" + name] = (t["grad/" + name], p.grad)
    for m in METRICS:
        ref = torch.tensor([layer[m] for layer in probe], dtype=torch.float64)
        compared["bias/" + m] = (t["bias/" + m], ref)

    # cos_z_v averages in positions where z is rounding noise (see model.bias_metrics); the bound
    # for it grows by exactly what those positions can contribute.
    allowances = {"bias/cos_z_v": torch.tensor([layer["cos_z_v_allowance"] for layer in probe])}

    diffs, failures = {}, []
    for name, (cpp, ref) in compared.items():
        if tuple(cpp.shape) != tuple(ref.shape):
            failures.append(f"{name}: shape {tuple(cpp.shape)} vs reference {tuple(ref.shape)}")
            continue
        abs_diff, scaled = worst(cpp, ref, tol, allowances.get(name))
        diffs[name] = abs_diff
        if not scaled <= 1.0:
            failures.append(f"{name}: max |diff| {abs_diff:.3g} exceeds {tol:g}*max(1,|ref|)")
        if name.startswith("grad/"):
            # Gradients here are 1e-5..1e-1 in size, so an absolute 1e-5 alone could pass a wrong
            # one: each gradient tensor must also agree normwise, ||cpp - ref|| <= grad_rtol ||ref||.
            rel = ((cpp.double() - ref.double()).norm() / ref.double().norm().clamp(min=1e-30)).item()
            diffs["relgrad/" + name[len("grad/"):]] = rel
            if not rel <= grad_rtol:
                failures.append(f"{name}: normwise relative error {rel:.3g} exceeds {grad_rtol:g}")
    notes = []
    if allowances["bias/cos_z_v"].max() > 0:
        notes.append(f"cos_z_v bound widened by up to {allowances['bias/cos_z_v'].max().item():.3g} "
                     f"for positions where z = 0 exactly")
    return not failures, diffs, failures, notes


# What every case of a manifest must hold for check_case to read it, by JSON kind (xsa-reference-export writes them).
CASE_KEYS = {"name": "string", "dir": "string", "config": "object", "variant": "object", "tensors": "object",
             "vocab_size": "number", "max_len": "number"}


def read_manifest(dump_dir):
    """DUMP_DIR/manifest.json's cases; a manifest that is missing, not a regular file, not JSON, not an object with
    a non-empty array "cases" of objects each holding CASE_KEYS is one line naming it and what is wrong, exit 2."""
    path = os.path.join(dump_dir, "manifest.json")
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the read: refused, never opened
            options.fail(PROG, f"{path}: not a regular file, expected xsa-reference-export's manifest")
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except OSError as e:
        options.fail(PROG, f"{path}: cannot read ({e.strerror or e}); DUMP_DIR is xsa-reference-export's output")
    except (ValueError, RecursionError) as e:
        options.fail(PROG, f"{path}: not JSON ({e})")
    if not isinstance(manifest, dict):
        options.fail(PROG, f"{path}: expected a JSON object with cases, got {options.json_type(manifest)}")
    if "cases" not in manifest:
        options.fail(PROG, f"{path}: missing key cases (the array of cases)")
    cases = manifest["cases"]
    if not isinstance(cases, list) or not cases:
        got = "an empty array" if cases == [] else options.json_type(cases)
        options.fail(PROG, f"{path}: cases: expected a non-empty array of cases, got {got}")
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            options.fail(PROG, f"{path}: cases[{i}]: expected an object, got {options.json_type(case)}")
        for key, kind in CASE_KEYS.items():
            if key not in case:
                options.fail(PROG, f"{path}: cases[{i}]: missing key {key}")
            if options.json_type(case[key]) != kind:
                options.fail(PROG, f"{path}: cases[{i}].{key}: expected {'an' if kind == 'object' else 'a'} {kind}, "
                                   f"got {options.json_type(case[key])}")
    return cases


def main():
    ap = options.Parser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("dump_dir")
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                    help="precision of the reference computation (default float64)")
    ap.add_argument("--builtin-ops", action="store_true",
                    help="use PyTorch's fused layer_norm/gelu/softmax/cross_entropy (as the reference "
                         "trainer does) instead of the written-out versions")
    ap.add_argument("--tol", type=float, default=1e-5, help="elementwise: |diff| <= tol * max(1, |ref|)")
    ap.add_argument("--grad-rtol", type=float, default=1e-4,
                    help="per gradient tensor: ||diff|| <= grad_rtol * ||ref||")
    args = ap.parse_args()
    for option, value in (("--tol", args.tol), ("--grad-rtol", args.grad_rtol)):
        if not (math.isfinite(value) and value > 0):  # NaN or a negative bound would fail every case
            ap.error(f"{option} {value}: expected a finite number > 0")

    cases = read_manifest(args.dump_dir)
    torch.set_num_threads(1)
    reference.use_builtin_ops(args.builtin_ops)
    dtype = getattr(torch, args.dtype)

    passed = failed = 0
    overall = {}  # quantity kind -> max abs diff over all cases
    for case in cases:
        try:
            ok, diffs, failures, notes = check_case(args.dump_dir, case, dtype, args.tol, args.grad_rtol)
        except Exception as e:  # a load or shape error is a failed case, not a crash
            ok, diffs, failures, notes = False, {}, [f"{type(e).__name__}: {e}"], []
        for name, d in diffs.items():
            kind = name.split("/")[0] if name.startswith(("grad/", "init/", "relgrad/")) else name
            overall[kind] = max(overall.get(kind, 0.0), d)
        abs_diffs = {k: v for k, v in diffs.items() if not k.startswith("relgrad/")}
        worst_name = max(abs_diffs, key=abs_diffs.get) if abs_diffs else "-"
        worst_rel = max((v for k, v in diffs.items() if k.startswith("relgrad/")), default=0.0)
        status = "ok  " if ok else "FAIL"
        print(f"{status} {case['name']:32s} {len(abs_diffs)} quantities, max |diff| {diffs.get(worst_name, 0):.2e} "
              f"({worst_name}), grads normwise rel {worst_rel:.1e}" + "".join(" :: " + m for m in failures[:4] + notes))
        passed += ok
        failed += not ok
    print("max |diff| by quantity: " + ", ".join(f"{k} {v:.2e}" for k, v in sorted(overall.items())))
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
