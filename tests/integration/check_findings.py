#!/usr/bin/env python3
"""Recomputes the headline statistics of docs/findings.md from the committed results/ without xsa-inspect, and checks
that xsa-inspect agrees.

readme.tables_match_results proves that the tables of README.md and docs/ are what xsa-inspect prints; the unit tests prove
xsa-inspect right on small fixtures. This closes the loop on the real data: straight from each results.json
(runs' final validation losses, the config's steps, seq_len and batch), with its own pairing and Student t
quantiles (scipy.stats.t.ppf(0.975, dof), written down below), it recomputes per group the number of seeds,
the seeds favouring the variant, the mean improvement % and its 95% CI, the mean Δ val loss (and in the
per-budget tables each arm's mean final val loss), per seed the slope of the improvement over
log2 steps (budget) or log2 T (length), the change of the budget slope from the first interval to the last and
the paired change of every final bias metric between neighbouring budgets, the gain at each learning rate and
the learning-rate selection (each arm's best lr, whether a worse lr lies on both sides of it, the Δ at the two
best lrs in-sample and held out), the final
bias metrics per group and layer (each arm's mean and 95% half-width), the learned λ and gate values per
layer and head (mean and SD over seeds), the variants at S1 (against SA and against full XSA) and the length
trend at S1, the trend with model size (per seed over log2 non-embedding parameters), the trend of the
final bias metrics with depth (per seed over relative depth) and, for question 9's sweeps with lr_control, the
gain and the lr selection per baseline setup (positions, embedding norm, QK-norm, output gate, warmup), the
plateau escape, the attention dynamics per step and layer (max logit, entropy, sink; paper_dynamics's too) and,
over all of them, each arm's best setup and lr (setup_selection) and each setup's effect on each arm at its
best lr (setup_effect) and at each lr both trained (setup_effect_by_lr), and that qknorm_s1 runs at qknorm_lr's best lrs and gate_elementwise at gate_headwise_lr's; for
question 10's sweeps (the modern baseline and its partial setups) the same per sweep, beside baseline_choices' cells
without the embedding norm, and each arm's best setup and lr over every setup at S0; then compares with
`xsa-inspect --format json`.

usage: check_findings.py XSA_INSPECT RESULTS_DIR
"""

import functools
import json
import math
import os
import subprocess
import sys
from collections import defaultdict

# Two-sided 95% Student t quantiles, scipy.stats.t.ppf(0.975, dof).
T975 = {1: 12.706204736432, 2: 4.302652729911, 3: 3.182446305284, 4: 2.776445105198, 5: 2.570581836615,
        6: 2.446911848792, 7: 2.36462425101, 8: 2.306004135033, 9: 2.262157162741, 10: 2.228138851965,
        11: 2.200985160083, 12: 2.178812829663}

TOLERANCE = 1e-9  # relative to max(1, |value|); both sides compute in double from the same file values


LABEL_MISMATCHES = []  # load_pairs: results.json labels that differ from lambda_label's


@functools.lru_cache(maxsize=None)
def read_folder(folder):
    """(folder of a results.json, its document) for every results.json under `folder`, read once."""
    found = []
    for root, _, files in sorted(os.walk(folder)):
        if "results.json" in files:
            with open(os.path.join(root, "results.json")) as f:
                found.append((root, json.load(f)))
    return found


@functools.lru_cache(maxsize=None)
def load_pairs(folder):
    """One record per (results.json, variant other than SA): its seed, steps, seq_len, batch, lr, model,
    attention implementation, λ label and both final validation losses. Read once per folder (several checks
    use one folder), so a label mismatch is recorded once; callers do not modify the records."""
    pairs = []
    for root, data in read_folder(folder):
        train = data["config"]["train"]
        runs = {r["variant"]: r for r in data["runs"]}
        base = runs["sa"]
        lr_scale = data["config"]["attention"].get("lambda_lr_scale", 1.0)  # older results predate the key
        model = data["config"]["model"]
        impl = data["config"]["attention"].get("impl", "explicit")  # records before the key ran explicit
        setup = setup_label(data["config"])
        model_text = model_label(model) + (f" ({setup})" if setup else "")
        for run in data["runs"]:
            if run["variant"] == "sa":
                continue
            label = lambda_label(run, lr_scale)
            if "label" in run and run["label"] != label:  # newer files record the trainer's own label
                LABEL_MISMATCHES.append(f"{root}: run {run['variant']} is labelled {run['label']!r}, "
                                        f"expected {label!r}")
            pairs.append({"path": root, "seed": data["config"]["seed"], "steps": train["steps"],
                          "seq_len": data["config"]["data"]["seq_len"], "batch": train["batch_size"],
                          "lr": train["lr"], "model": model_text, "shape": model_label(model), "setup": setup,
                          "params": non_embedding(model),
                          "impl": impl,
                          "lambda": label, "base": base["final"]["val_loss"],
                          "variant": run["final"]["val_loss"], "base_bias": final_bias(base),
                          "var_bias": final_bias(run), "var_bias_step": final_step(run),
                          "var_lambda": final_lambda(run),
                          "base_dynamics": dynamics(base), "var_dynamics": dynamics(run),
                          "base_eval": {e["step"]: e["val_loss"] for e in base.get("eval", [])},
                          "var_eval": {e["step"]: e["val_loss"] for e in run.get("eval", [])}})
    return pairs


DYNAMICS = ("max_logit", "attn_entropy", "attn_sink")


def dynamics(run):
    """(step, layer) -> the attention dynamics metrics of a run that measured them at every bias measurement on
    every layer; None for a run without them or with them from some step on only (a resumed older run)."""
    points = run.get("bias", [])
    if not points or any(m not in layer for point in points for layer in point["layers"] for m in DYNAMICS):
        return None
    return {(point["step"], layer["layer"]): tuple(layer[m] for m in DYNAMICS)
            for point in points for layer in point["layers"]}


def model_label(m):
    return f"{m['n_layer']}L d{m['d_model']} {m['n_head']}×{m['d_head']}"


# The paper's baseline transformer, which every sweep before question 9 trains: RoPE, a LayerNorm after the
# embedding, no QK-norm, no output gate, 30 warmup steps. Records from before a key existed ran its default.
PAPER_SETUP = {"pos": "rope", "embed_norm": True, "qk_norm": False, "output_gate": "none", "warmup_steps": 30,
               "optimizer": "adamw", "doc_mask": False}


def setup_label(config):
    """How a run's baseline differs from the paper's, as the tables' model column says it in parentheses
    ("learned pos, no emb norm", "QK-norm", "headwise gate", "warmup 150"); "" when it does not."""
    model, attention, train = config["model"], config["attention"], config["train"]
    pos = model.get("pos", PAPER_SETUP["pos"])
    embed_norm = model.get("embed_norm", PAPER_SETUP["embed_norm"])
    qk_norm = model.get("qk_norm", PAPER_SETUP["qk_norm"])
    gate = attention.get("output_gate", PAPER_SETUP["output_gate"])
    warmup = train.get("warmup_steps", PAPER_SETUP["warmup_steps"])
    optimizer = train.get("optimizer", PAPER_SETUP["optimizer"])
    doc_mask = config.get("data", {}).get("doc_mask", PAPER_SETUP["doc_mask"])
    parts = []
    if pos != PAPER_SETUP["pos"]:
        parts.append(f"{pos} pos")
    if embed_norm != PAPER_SETUP["embed_norm"]:
        parts.append("emb norm" if embed_norm else "no emb norm")
    if qk_norm != PAPER_SETUP["qk_norm"]:
        parts.append("QK-norm" if qk_norm else "no QK-norm")
    if gate != PAPER_SETUP["output_gate"]:
        parts.append(f"{gate} gate")
    if warmup != PAPER_SETUP["warmup_steps"]:
        parts.append(f"warmup {warmup}")
    if optimizer != PAPER_SETUP["optimizer"]:
        parts.append(optimizer)
    if doc_mask != PAPER_SETUP["doc_mask"]:
        parts.append("doc mask" if doc_mask else "no doc mask")
    return ", ".join(parts)


def non_embedding(m):
    """Per layer: q, k, v and the output projection (4 · C · H·D) and the MLP (2 · ratio · C²)."""
    c, hd = m["d_model"], m["n_head"] * m["d_head"]
    return m["n_layer"] * (4 * c * hd + 2 * m.get("mlp_ratio", 4) * c * c)


BIAS_METRICS = ("cos_y_v", "cos_z_v", "attn_diag", "value_cos")


def final_bias(run):
    """The run's last bias measurement (highest step): layer -> metric -> value."""
    if not run.get("bias"):
        return {}
    last = max(run["bias"], key=lambda b: b["step"])
    return {layer["layer"]: {m: layer[m] for m in BIAS_METRICS} for layer in last["layers"]}


def final_lambda(run):
    """The learned λ (gate value) per head at the run's last bias measurement: layer -> [per head], for the
    layers that learn one."""
    if not run.get("bias"):
        return {}
    last = max(run["bias"], key=lambda b: b["step"])
    return {layer["layer"]: layer["lambda_per_head"] for layer in last["layers"] if layer.get("lambda_per_head")}


def final_step(run):
    return max(b["step"] for b in run["bias"]) if run.get("bias") else None


def interval(values):
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return n, mean, None, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = T975[n - 1] * sd / math.sqrt(n)
    return n, mean, mean - half, mean + half


def improvement(p):
    return 100.0 * (p["base"] - p["variant"]) / p["base"]


def slope(points):
    """Least-squares slope of y over log2 x."""
    xs = [math.log2(x) for x, _ in points]
    ys = [y for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def lambda_label(run, lr_scale):
    """As the tables print it: the fixed λ (1, 0.5), else the kind; then "@<layers>" when the variant modified
    only some layers (runs of consecutive layers as "a-b", joined by "+"); then a λ learning-rate scale other
    than 1 for a variant with parameters."""
    spec = run["variant_spec"]
    fixed = spec["kind"] == "fixed"
    label = f"{spec['lambda']:g}" if fixed else spec["kind"]
    layers = run.get("layers", "all")  # older results predate the key: every layer
    if layers not in ("all", []):
        layers, spans, start = sorted(layers), [], None
        for i, layer in enumerate(layers):
            if start is None:
                start = layer
            if i + 1 == len(layers) or layers[i + 1] != layer + 1:
                spans.append(str(start) if start == layer else f"{start}-{layer}")
                start = None
        label += "@" + "+".join(spans)
    return label if fixed or lr_scale == 1 else f"{label} lr×{lr_scale:g}"


class Checker:
    def __init__(self, inspect):
        self.inspect = inspect
        self.checked = 0
        self.failures = []

    def rows(self, folders, section):
        out = subprocess.run([self.inspect, *folders, "--section", section, "--format", "json"],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out).get(section, [])

    def close(self, what, mine, theirs):
        self.checked += 1
        if mine is None or theirs is None:
            if mine is not None or theirs is not None:
                self.failures.append(f"{what}: expected {mine}, xsa-inspect has {theirs}")
            return
        if abs(mine - theirs) > TOLERANCE * max(1.0, abs(mine)):
            self.failures.append(f"{what}: expected {mine!r}, xsa-inspect has {theirs!r}")

    def compare_group(self, what, row, pairs):
        n, mean, low, high = interval([improvement(p) for p in pairs])
        self.close(f"{what} n", n, row["n"])
        self.close(f"{what} mean improvement %", mean, row["mean_improvement_pct"])
        self.close(f"{what} improvement CI low", low, row.get("improvement_ci_low"))
        self.close(f"{what} improvement CI high", high, row.get("improvement_ci_high"))
        _, delta, _, _ = interval([p["variant"] - p["base"] for p in pairs])
        self.close(f"{what} mean Δ", delta, row["mean_delta"])
        self.close(f"{what} seeds favouring variant", sum(p["variant"] < p["base"] for p in pairs),
                   row["favouring"])

    def compare_group_and_arms(self, what, row, pairs):
        """compare_group, and each arm's mean val loss (the by_budget and by_seq_len rows carry both)."""
        self.compare_group(what, row, pairs)
        for side, arm in (("base", "base"), ("var", "variant")):
            _, mean, _, _ = interval([p[arm] for p in pairs])
            self.close(f"{what} {side} val loss", mean, row[f"{side}_val_loss"])

    def compare_trend(self, what, row, per_seed):
        """per_seed: seed -> list of (x, improvement); only seeds with every x count."""
        xs = set(x for pts in per_seed.values() for x, _ in pts)
        slopes = [slope(pts) for pts in per_seed.values() if set(x for x, _ in pts) == xs]
        if not slopes:  # no seed has every x: nothing to compare but the count
            self.close(f"{what} n", 0, row["n"])
            return
        n, mean, low, high = interval(slopes)
        self.close(f"{what} n", n, row["n"])
        self.close(f"{what} slope", mean, row["slope"])
        self.close(f"{what} slope CI low", low, row.get("slope_ci_low"))
        self.close(f"{what} slope CI high", high, row.get("slope_ci_high"))
        self.close(f"{what} seeds falling", sum(s < 0 for s in slopes), row["falling"])


def check_by_budget(checker, folders):
    """The gain per budget table (by_budget): one group per λ, budget, lr, model and attention implementation,
    with both arms' mean final val loss."""
    tag = " ".join(os.path.basename(f) for f in folders)
    groups = defaultdict(list)
    for p in (p for f in folders for p in load_pairs(f)):
        groups[(p["lambda"], p["steps"], p["lr"], p["model"], p["impl"])].append(p)
    rows = {(r["lambda"], r["steps"], r["lr"], r["model"], r["attention_impl"]): r
            for r in checker.rows(folders, "by_budget")}
    if set(rows) != set(groups):
        checker.failures.append(f"[{tag}] by_budget groups: expected {sorted(groups)}, "
                                f"xsa-inspect has {sorted(rows)}")
    for key in sorted(set(rows) & set(groups)):
        what = f"[{tag}] by_budget λ={key[0]} steps={key[1]} lr={key[2]:g} {key[3]}"
        checker.compare_group_and_arms(what, rows[key], groups[key])


def check_budget(checker, folders):
    tag = " ".join(os.path.basename(f) for f in folders)
    pairs = [p for f in folders for p in load_pairs(f)]
    check_by_budget(checker, folders)

    trends = {r["lambda"]: r for r in checker.rows(folders, "budget_trend")}
    for lam in sorted(trends):
        per_seed = defaultdict(list)
        for p in pairs:
            if p["lambda"] == lam:
                per_seed[p["seed"]].append((p["steps"], improvement(p)))
        checker.compare_trend(f"[{tag}] budget_trend λ={lam}", trends[lam], per_seed)
    if "1" not in trends:
        checker.failures.append(f"[{tag}] budget_trend: no row for λ=1")

    # Change of the trend: per seed with every budget, the slope over the last interval minus the first's.
    for row in checker.rows(folders, "budget_trend_change"):
        lam = row["lambda"]
        per_seed = defaultdict(dict)
        for p in pairs:
            if p["lambda"] == lam:
                per_seed[p["seed"]][p["steps"]] = improvement(p)
        budgets = sorted(set(b for at in per_seed.values() for b in at))
        firsts, lasts = [], []
        for at in per_seed.values():
            if sorted(at) != budgets:
                continue
            u = [math.log2(b) for b in budgets]
            y = [at[b] for b in budgets]
            firsts.append((y[1] - y[0]) / (u[1] - u[0]))
            lasts.append((y[-1] - y[-2]) / (u[-1] - u[-2]))
        n, change, low, high = interval([b - a for a, b in zip(firsts, lasts)])
        what = f"[{tag}] budget_trend_change λ={lam}"
        checker.close(f"{what} n", n, row["n"])
        checker.close(f"{what} first slope", sum(firsts) / n, row["first_slope"])
        checker.close(f"{what} last slope", sum(lasts) / n, row["last_slope"])
        checker.close(f"{what} change", change, row["change"])
        checker.close(f"{what} change CI low", low, row.get("change_ci_low"))
        checker.close(f"{what} change CI high", high, row.get("change_ci_high"))

    # Bias metrics between neighbouring budgets, paired by seed: final at the longer minus at the shorter. The
    # expected rows come from the data (every series' neighbouring budgets × the layers measured by both runs of
    # a seed at both), so a row xsa-inspect leaves out fails as much as a wrong value.
    series = defaultdict(lambda: defaultdict(dict))  # (λ, seq_len, batch) -> seed -> steps -> pair
    for p in pairs:
        series[(p["lambda"], p["seq_len"], p["batch"])][p["seed"]][p["steps"]] = p
    expected = {}  # (λ, seq_len, batch, shorter, longer, layer) -> [seeds' pairs at (shorter, longer)]
    for (lam, seq_len, batch), seeds in series.items():
        budgets = sorted(set(b for at in seeds.values() for b in at))
        for short, long in zip(budgets, budgets[1:]):
            for at in seeds.values():
                if short not in at or long not in at:
                    continue
                ends = (at[short], at[long])
                layers = set.intersection(*(set(e[k]) for e in ends for k in ("base_bias", "var_bias")))
                for layer in layers:
                    expected.setdefault((lam, seq_len, batch, short, long, layer), []).append(ends)
    change_rows = {}
    for row in checker.rows(folders, "bias_budget_change"):
        short, long = (int(b) for b in row["budgets"].split())
        change_rows[(row["lambda"], row["seq_len"], row["batch"], short, long, row["layer"])] = row
    if set(change_rows) != set(expected):
        checker.failures.append(f"[{tag}] bias_budget_change rows: expected {sorted(expected)}, "
                                f"xsa-inspect has {sorted(change_rows)}")
    for key in sorted(set(change_rows) & set(expected)):
        row, both, layer = change_rows[key], expected[key], key[5]
        what = f"[{tag}] bias_budget_change λ={key[0]} T={key[1]} {key[3]}->{key[4]} layer {layer}"
        checker.close(f"{what} n", len(both), row["n"])
        for side, bias in (("base", "base_bias"), ("var", "var_bias")):
            for m in BIAS_METRICS:
                _, mean, low, high = interval([e[bias][layer][m] - s[bias][layer][m] for s, e in both])
                checker.close(f"{what} {side} Δ {m}", mean, row[f"{side}_{m}_change"])
                half = None if low is None else (high - low) / 2
                checker.close(f"{what} {side} Δ {m} CI ±", half, row[f"{side}_{m}_change_ci"])

def check_lengths(checker, folder):
    pairs = load_pairs(folder)
    groups = defaultdict(list)
    for p in pairs:
        groups[(p["seq_len"], p["batch"])].append(p)
    rows = {(r["seq_len"], r["batch_size"]): r for r in checker.rows([folder], "by_seq_len")}
    if set(rows) != set(groups):
        checker.failures.append(f"{folder} by_seq_len groups: expected {sorted(groups)}, has {sorted(rows)}")
    for key in sorted(set(rows) & set(groups)):
        what = f"{folder} by_seq_len T={key[0]} batch={key[1]}"
        checker.compare_group_and_arms(what, rows[key], groups[key])

    trends = checker.rows([folder], "seq_len_trend")
    expected = 1 if len(set(p["seq_len"] for p in pairs)) >= 2 else 0  # one length: no trend yet
    if len(trends) != expected:
        checker.failures.append(f"{folder} seq_len_trend: expected {expected} row(s), xsa-inspect has {len(trends)}")
    if not expected or len(trends) != 1:
        return
    per_seed = defaultdict(list)
    for p in pairs:
        per_seed[p["seed"]].append((p["seq_len"], improvement(p)))
    checker.compare_trend(f"{folder} seq_len_trend", trends[0], per_seed)


def check_lambda(checker, folder):
    pairs = load_pairs(folder)
    groups = defaultdict(list)
    for p in pairs:
        groups[p["lambda"]].append(p)
    rows = {r["lambda"]: r for r in checker.rows([folder], "by_lambda")}
    for lam in sorted(groups):
        if lam not in rows:
            checker.failures.append(f"{folder} by_lambda: no row for λ={lam}")
            continue
        checker.compare_group(f"{folder} by_lambda λ={lam}", rows[lam], groups[lam])


def check_against(checker, folder, baseline):
    """`xsa-inspect --baseline`: every other run of each experiment against the run named `baseline` (the
    variants of variants_s1 against full XSA), grouped by λ label like by_lambda."""
    groups = defaultdict(list)
    for _, data in read_folder(folder):
        runs = {r["variant"]: r for r in data["runs"]}
        if baseline not in runs:
            continue
        lr_scale = data["config"]["attention"].get("lambda_lr_scale", 1.0)
        for run in data["runs"]:
            if run["variant"] != baseline:
                groups[lambda_label(run, lr_scale)].append(
                    {"base": runs[baseline]["final"]["val_loss"], "variant": run["final"]["val_loss"]})
    rows = {r["lambda"]: r for r in checker.rows([folder, "--baseline", baseline], "by_lambda")}
    if set(rows) != set(groups):
        checker.failures.append(f"{folder} by_lambda against {baseline}: groups {sorted(groups)}, "
                                f"xsa-inspect has {sorted(rows)}")
    for lam in sorted(set(rows) & set(groups)):
        checker.compare_group(f"{folder} by_lambda λ={lam} against {baseline}", rows[lam], groups[lam])


def check_learning_rates(checker, folders):
    """The gain at each lr (by_lambda: one row per λ, lr and model setup) and the lr selection per λ and model
    setup: each arm's best lr by mean final val loss over the seeds with every lr, the paired Δ at the two best
    lrs, and the same with each seed's lrs chosen on the other seeds (held out)."""
    tag = " ".join(os.path.basename(f) for f in folders)
    pairs = [p for f in folders for p in load_pairs(f)]
    groups = defaultdict(list)
    for p in pairs:
        groups[(p["lambda"], p["lr"], p["model"])].append(p)
    rows = {(r["lambda"], r["lr"], r["model"]): r for r in checker.rows(folders, "by_lambda")}
    if set(rows) != set(groups):
        checker.failures.append(f"[{tag}] by_lambda groups: expected {sorted(groups)}, has {sorted(rows)}")
    for key in sorted(set(rows) & set(groups)):
        checker.compare_group(f"[{tag}] by_lambda λ={key[0]} lr={key[1]} {key[2]}", rows[key], groups[key])

    selections = {(r["lambda"], r["model"]): r for r in checker.rows(folders, "lr_selection")}
    for lam, model in sorted(set((p["lambda"], p["model"]) for p in pairs)):
        at = defaultdict(dict)  # seed -> lr -> (baseline loss, variant loss)
        for p in pairs:
            if (p["lambda"], p["model"]) == (lam, model):
                at[p["seed"]][p["lr"]] = (p["base"], p["variant"])
        lrs = sorted(set(lr for per_lr in at.values() for lr in per_lr))
        if len(lrs) < 2:
            continue
        what = f"[{tag}] lr_selection λ={lam} {model}"
        if (lam, model) not in selections:
            checker.failures.append(f"{what}: no row")
            continue
        row = selections[(lam, model)]
        chosen = check_selection(checker, what, arm_losses(at, 0), arm_losses(at, 1), row)
        if chosen is None:
            continue
        b, v = chosen
        checker.close(f"{what} best lr baseline", b, row["best_lr_baseline"])
        checker.close(f"{what} best lr variant", v, row["best_lr_variant"])
        inside = [0 < lrs.index(lr) < len(lrs) - 1 for lr in (b, v)]  # a worse lr on both sides
        bracketed = {(True, True): "both", (True, False): "baseline only", (False, True): "variant only",
                     (False, False): "neither"}[tuple(inside)]
        checker.checked += 1
        if row.get("bracketed") != bracketed:
            checker.failures.append(f"{what} best lr bracketed: expected {bracketed!r}, "
                                    f"xsa-inspect has {row.get('bracketed')!r}")
    check_lr_change(checker, folders, tag, pairs)


def check_lr_change(checker, folders, tag, pairs):
    """The change of the gain between neighbouring lrs (lr_change) per comparison (λ, budget, model setup,
    attention, length, batch): per seed with both lrs, its improvement % at the next lr minus at this one (each
    the mean over the seed's pairs); the mean change with its 95% CI and verdict, each lr's mean gain over the
    same seeds, and the seeds whose gain grows."""
    at = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))  # comparison -> lr -> seed -> gains
    for p in pairs:
        at[(p["lambda"], p["steps"], p["model"], p["impl"], p["seq_len"], p["batch"])][p["lr"]][p["seed"]].append(
            improvement(p))
    found = {(r["lambda"], r["steps"], r["model"], r["attention_impl"], r["seq_len"], r["batch"], r["lr"]): r
             for r in checker.rows(folders, "lr_change")}
    expected = set()
    for comparison, by_lr in sorted(at.items()):
        lrs = sorted(by_lr)
        for lower, higher in zip(lrs, lrs[1:]):
            seeds = sorted(set(by_lr[lower]) & set(by_lr[higher]))
            if not seeds:
                continue
            what = f"[{tag}] lr_change λ={comparison[0]} {comparison[2]} lr {lower:g} -> {higher:g}"
            key = next((k for k in found if k[:6] == comparison and math.isclose(k[6], lower, rel_tol=1e-9)), None)
            if key is None:
                checker.failures.append(f"{what}: no row")
                continue
            expected.add(key)
            row = found[key]
            lo = [sum(by_lr[lower][s]) / len(by_lr[lower][s]) for s in seeds]
            hi = [sum(by_lr[higher][s]) / len(by_lr[higher][s]) for s in seeds]
            checker.close(f"{what} next lr", higher, row["higher_lr"])
            checker.close(f"{what} gain", sum(lo) / len(lo), row["gain"])
            checker.close(f"{what} next gain", sum(hi) / len(hi), row["higher_gain"])
            checker.close(f"{what} seeds growing", sum(h > l for h, l in zip(hi, lo)), row["growing"])
            n, mean, low, high = interval([h - l for h, l in zip(hi, lo)])
            checker.close(f"{what} n", n, row["n"])
            checker.close(f"{what} change", mean, row["change"])
            checker.close(f"{what} change CI low", low, row.get("change_ci_low"))
            checker.close(f"{what} change CI high", high, row.get("change_ci_high"))
            verdict = (f"undefined (n={n})" if low is None else "grows" if low > 0 else "shrinks" if high < 0
                       else "within noise")
            checker.checked += 1
            if verdict != row["verdict"]:
                checker.failures.append(f"{what} verdict: expected {verdict}, xsa-inspect has {row['verdict']}")
    if set(found) != expected:
        checker.failures.append(f"[{tag}] lr_change rows: expected {sorted(expected)}, has {sorted(found)}")


def check_selection(checker, what, base, var, row):
    """Each side's best candidate (lowest mean final val loss over the seeds with every candidate of both sides;
    the first in sorted order on a tie) and the paired Δ var − base at the two bests, in-sample and with each
    seed's candidates chosen on the other seeds (held out), against `row`. base, var: seed -> candidate -> the
    side's loss. Returns the in-sample (base, var) bests, or None without a seed that has every candidate."""
    base_cands, var_cands, seeds = complete_seeds(base, var)
    checker.close(f"{what} n", len(seeds), row["n"])
    if not seeds:
        return None
    b, v = best(base, base_cands, seeds), best(var, var_cands, seeds)
    checker.close(f"{what} baseline loss at its best", sum(base[s][b] for s in seeds) / len(seeds),
                  row["baseline_loss"])
    checker.close(f"{what} variant loss at its best", sum(var[s][v] for s in seeds) / len(seeds),
                  row["variant_loss"])
    _, mean, low, high = interval([var[s][v] - base[s][b] for s in seeds])
    checker.close(f"{what} Δ in-sample", mean, row["best_delta"])
    checker.close(f"{what} Δ in-sample CI low", low, row.get("best_delta_ci_low"))
    checker.close(f"{what} Δ in-sample CI high", high, row.get("best_delta_ci_high"))
    held = []
    for s in seeds:
        others = [o for o in seeds if o != s]
        if others:
            held.append(var[s][best(var, var_cands, others)] - base[s][best(base, base_cands, others)])
    if held:
        _, mean, low, high = interval(held)
        checker.close(f"{what} Δ held out", mean, row["held_out_delta"])
        checker.close(f"{what} Δ held out CI low", low, row.get("held_out_ci_low"))
        checker.close(f"{what} Δ held out CI high", high, row.get("held_out_ci_high"))
    return b, v


def complete_seeds(base, var):
    """Each side's candidates and the seeds that have every candidate of both sides (base, var: seed ->
    candidate -> the side's loss)."""
    base_cands = sorted(set(c for per in base.values() for c in per))
    var_cands = sorted(set(c for per in var.values() for c in per))
    seeds = sorted(s for s in base if sorted(base[s]) == base_cands and sorted(var.get(s, {})) == var_cands)
    return base_cands, var_cands, seeds


def best(side, candidates, among):
    """The candidate with the lowest mean loss over the seeds `among` (the first in sorted order on a tie)."""
    means = [sum(side[s][c] for s in among) / len(among) for c in candidates]
    return candidates[means.index(min(means))]


def check_chosen_lrs(checker, source, folder, setup, lower_when_shared):
    """A sweep trained at an earlier sweep's best lrs (qknorm_s1 at qknorm_lr's, gate_elementwise at
    gate_headwise_lr's): the lrs of its grid (as its summary.json records it) are exactly the best lrs of the two
    arms of `setup` in `source` (lowest mean final val loss over the seeds with every lr; when both arms share
    one and `lower_when_shared`, it and the next lower lr of the grid, where a larger model's optimum moves), and
    every finished point is at one of them, so a sweep file written before its source finished cannot silently
    keep a stale choice."""
    at = defaultdict(dict)  # seed -> lr -> (baseline loss, variant loss)
    for p in load_pairs(source):
        if p["lambda"] == "1" and p["setup"] == setup:
            at[p["seed"]][p["lr"]] = (p["base"], p["variant"])
    base, var = arm_losses(at, 0), arm_losses(at, 1)
    base_cands, var_cands, seeds = complete_seeds(base, var)
    what = f"[{os.path.basename(folder)}] lrs = {os.path.basename(source)}'s best ({setup})"
    checker.checked += 1
    if not seeds:
        checker.failures.append(f"{what}: {source} has no seed with every lr")
        return
    expected = {best(base, base_cands, seeds), best(var, var_cands, seeds)}
    if lower_when_shared and len(expected) == 1 and base_cands.index(min(expected)) > 0:
        expected.add(base_cands[base_cands.index(min(expected)) - 1])
    trained = set(p["lr"] for p in load_pairs(folder))
    if not trained <= expected:
        checker.failures.append(f"{what}: trained at {sorted(trained)}, the best lrs are {sorted(expected)} "
                                f"(over {len(seeds)} seeds)")
    summary = os.path.join(folder, "summary.json")
    if os.path.isfile(summary):
        checker.checked += 1
        with open(summary) as f:
            grid = json.load(f)["grid"]
        lrs = [value[0] if isinstance(value, list) else value
               for key, values in grid.items() if key.split("+")[0] == "train.lr" for value in values]
        if set(lrs) != expected:
            checker.failures.append(f"{what}: its grid has lrs {sorted(lrs)}, the best lrs are "
                                    f"{sorted(expected)} (over {len(seeds)} seeds)")


def arm_losses(at, arm):
    """seed -> candidate -> (baseline, variant) loss as seed -> candidate -> one arm's loss (0 or 1)."""
    return {seed: {c: losses[arm] for c, losses in per.items()} for seed, per in at.items()}


def check_setup_selection(checker, folders):
    """Question 9's selection across baseline setups: per λ and model shape trained with two or more setups,
    every (setup, lr) is a candidate, and each arm gets its own best one (setup_selection)."""
    tag = " ".join(os.path.basename(f) for f in folders)
    pairs = [p for f in folders for p in load_pairs(f)]
    rows = {(r["lambda"], r["model"]): r for r in checker.rows(folders, "setup_selection")}
    expected = set()
    for lam, shape in sorted(set((p["lambda"], p["shape"]) for p in pairs)):
        at = defaultdict(dict)  # seed -> (setup, lr) -> (baseline loss, variant loss)
        for p in pairs:
            if (p["lambda"], p["shape"]) == (lam, shape):
                at[p["seed"]][(p["setup"], p["lr"])] = (p["base"], p["variant"])
        candidates = sorted(set(c for per in at.values() for c in per))
        if len(set(setup for setup, _ in candidates)) < 2:
            continue
        expected.add((lam, shape))
        what = f"[{tag}] setup_selection λ={lam} {shape}"
        if (lam, shape) not in rows:
            checker.failures.append(f"{what}: no row")
            continue
        row = rows[(lam, shape)]
        checker.close(f"{what} setups × lrs", len(candidates), row["candidates"])
        chosen = check_selection(checker, what, arm_losses(at, 0), arm_losses(at, 1), row)
        if chosen is None:
            continue
        for arm, (setup, lr) in zip(("baseline", "variant"), chosen):
            checker.close(f"{what} best lr {arm}", lr, row[f"best_lr_{arm}"])
            checker.checked += 1
            name = setup or "paper's setup"
            if row[f"best_setup_{arm}"] != name:
                checker.failures.append(f"{what} best setup {arm}: expected {name!r}, "
                                        f"xsa-inspect has {row[f'best_setup_{arm}']!r}")
    if set(rows) != expected:
        checker.failures.append(f"[{tag}] setup_selection rows: expected {sorted(expected)}, has {sorted(rows)}")


def setups_per_comparison(pairs):
    """Per λ and model shape trained in the paper's setup ("") and at least one other: (λ, shape, arms, at), with
    arms the (index, name) of each arm as the tables name it and at: setup -> seed -> lr -> (baseline loss,
    variant loss)."""
    for lam, shape in sorted(set((p["lambda"], p["shape"]) for p in pairs)):
        at = defaultdict(lambda: defaultdict(dict))
        for p in pairs:
            if (p["lambda"], p["shape"]) == (lam, shape):
                at[p["setup"]][p["seed"]][p["lr"]] = (p["base"], p["variant"])
        if "" in at and len(at) >= 2:
            yield lam, shape, ((0, "sa"), (1, f"λ={lam}" if is_number(lam) else lam)), at


def check_setup_effect(checker, folders):
    """Each setup's effect on each arm (setup_effect): per λ and model shape trained in the paper's setup and
    others, per other setup and arm, the arm in the setup at its best lr against the same arm in the paper's
    setup at its best, paired per seed, in-sample and held out."""
    tag = " ".join(os.path.basename(f) for f in folders)
    pairs = [p for f in folders for p in load_pairs(f)]
    rows = {(r["lambda"], r["model"], r["setup"], r["arm"]): r for r in checker.rows(folders, "setup_effect")}
    expected = set()
    for lam, shape, arms, at in setups_per_comparison(pairs):
        for setup in sorted(s for s in at if s):
            for arm, name in arms:
                key = (lam, shape, setup, name)
                expected.add(key)
                what = f"[{tag}] setup_effect λ={lam} {shape} {setup} {name}"
                if key not in rows:
                    checker.failures.append(f"{what}: no row")
                    continue
                chosen = check_selection(checker, what, arm_losses(at[""], arm), arm_losses(at[setup], arm),
                                         rows[key])
                if chosen is not None:
                    checker.close(f"{what} best lr paper's setup", chosen[0], rows[key]["best_lr_paper"])
                    checker.close(f"{what} best lr setup", chosen[1], rows[key]["best_lr_setup"])
    if set(rows) != expected:
        checker.failures.append(f"[{tag}] setup_effect rows: expected {sorted(expected)}, has {sorted(rows)}")


def check_setup_effect_by_lr(checker, folders):
    """Each setup's effect on each arm at each lr both it and the paper's setup trained (setup_effect_by_lr):
    the arm in the setup against itself in the paper's setup at that lr, paired per seed, with its verdict."""
    tag = " ".join(os.path.basename(f) for f in folders)
    pairs = [p for f in folders for p in load_pairs(f)]
    rows = {(r["lambda"], r["model"], r["setup"], r["lr"], r["arm"]): r
            for r in checker.rows(folders, "setup_effect_by_lr")}
    expected = set()
    for lam, shape, arms, at in setups_per_comparison(pairs):
        for setup in sorted(s for s in at if s):
            lrs_of = {side: set(lr for per in at[side].values() for lr in per) for side in ("", setup)}
            for lr in sorted(lrs_of[setup] & lrs_of[""]):
                seeds = sorted(s for s in at[setup] if lr in at[setup][s] and lr in at[""].get(s, {}))
                for arm, name in arms:
                    what = f"[{tag}] setup_effect_by_lr λ={lam} {shape} {setup} lr {lr:g} {name}"
                    key = next((k for k in rows if k[:3] == (lam, shape, setup) and k[4] == name
                                and math.isclose(k[3], lr, rel_tol=1e-9)), None)
                    if key is None:
                        checker.failures.append(f"{what}: no row")
                        continue
                    expected.add(key)
                    row = rows[key]
                    checker.close(f"{what} n", len(seeds), row["n"])
                    if not seeds:
                        continue
                    paper = [at[""][s][lr][arm] for s in seeds]
                    mine = [at[setup][s][lr][arm] for s in seeds]
                    checker.close(f"{what} paper's setup loss", sum(paper) / len(paper), row["paper_loss"])
                    checker.close(f"{what} setup loss", sum(mine) / len(mine), row["setup_loss"])
                    _, mean, low, high = interval([m - b for m, b in zip(mine, paper)])
                    checker.close(f"{what} Δ", mean, row["delta"])
                    checker.close(f"{what} Δ CI low", low, row.get("delta_ci_low"))
                    checker.close(f"{what} Δ CI high", high, row.get("delta_ci_high"))
                    verdict = (f"undefined (n={len(seeds)})" if low is None else "better" if high < 0 else "worse" if low > 0
                               else "within noise")
                    checker.checked += 1
                    if verdict != row["verdict"]:
                        checker.failures.append(f"{what} verdict: expected {verdict}, xsa-inspect has "
                                                f"{row['verdict']}")
    if set(rows) != expected:
        checker.failures.append(f"[{tag}] setup_effect_by_lr rows: expected {sorted(expected)}, has {sorted(rows)}")


def is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def group_of(p):
    """A pair's per-length group as xsa-inspect keys it (λ, budget, model setup, attention, lr, length, batch)."""
    return (p["lambda"], p["steps"], p["model"], p["impl"], p["lr"], p["seq_len"], p["batch"])


def row_group(r):
    """The same group read from an xsa-inspect row."""
    return (r["lambda"], r["steps"], r["model"], r["attention_impl"], r["lr"], r["seq_len"], r["batch"])


def check_plateau_escape(checker, folders):
    """The plateau escape per group (λ, budget, model setup, lr, length, batch): per pair, on the evaluations both
    arms made, the level halfway between their mean first loss and the worse arm's final loss (pairs whose
    worse arm ends no lower than the start have no plateau and are left out), each arm's first evaluation at or
    below it (else its last); per seed the mean over its pairs; the mean level and escape steps over seeds and
    the paired Δ steps (variant − baseline) with its 95% CI."""
    tag = " ".join(os.path.basename(f) for f in folders)
    groups = defaultdict(lambda: defaultdict(list))  # group -> seed -> (level, base step, variant step)
    for p in (p for f in folders for p in load_pairs(f)):
        steps = sorted(set(p["base_eval"]) & set(p["var_eval"]))
        if len(steps) < 2:
            continue
        start = 0.5 * (p["base_eval"][steps[0]] + p["var_eval"][steps[0]])
        worse_end = max(p["base_eval"][steps[-1]], p["var_eval"][steps[-1]])
        if not worse_end < start:
            continue
        level = 0.5 * (start + worse_end)
        base = next((s for s in steps if p["base_eval"][s] <= level), steps[-1])
        var = next((s for s in steps if p["var_eval"][s] <= level), steps[-1])
        groups[group_of(p)][p["seed"]].append((level, base, var))
    rows = {row_group(r): r for r in checker.rows(folders, "plateau_escape")}
    if set(rows) != set(groups):
        checker.failures.append(f"[{tag}] plateau_escape groups: expected {sorted(groups)}, has {sorted(rows)}")
    for key in sorted(set(rows) & set(groups)):
        what = f"[{tag}] plateau_escape λ={key[0]} lr={key[4]:g} {key[2]}"
        per_seed = [[sum(x[i] for x in found) / len(found) for i in range(3)] for found in groups[key].values()]
        checker.close(f"{what} level", sum(x[0] for x in per_seed) / len(per_seed), rows[key]["level"])
        checker.close(f"{what} base step", sum(x[1] for x in per_seed) / len(per_seed), rows[key]["base_step"])
        checker.close(f"{what} variant step", sum(x[2] for x in per_seed) / len(per_seed), rows[key]["var_step"])
        n, mean, low, high = interval([x[2] - x[1] for x in per_seed])
        checker.close(f"{what} n", n, rows[key]["n"])
        checker.close(f"{what} mean Δ steps", mean, rows[key]["mean_delta_steps"])
        checker.close(f"{what} Δ CI low", low, rows[key].get("delta_ci_low"))
        checker.close(f"{what} Δ CI high", high, rows[key].get("delta_ci_high"))


def check_dynamics(checker, folders):
    """The attention dynamics per group (λ, budget, model setup, lr, length, batch), bias measurement step and
    layer: each metric of both arms, the mean over seeds of each seed's mean over its pairs, from the pairs whose
    two runs measured them at every bias measurement."""
    tag = " ".join(os.path.basename(f) for f in folders)
    values = defaultdict(lambda: defaultdict(list))  # (group, step, layer) -> seed -> (base, var) metrics
    for p in (p for f in folders for p in load_pairs(f)):
        if p["base_dynamics"] is None or p["var_dynamics"] is None:
            continue
        for at, var in p["var_dynamics"].items():
            if at in p["base_dynamics"]:
                values[group_of(p) + at][p["seed"]].append((p["base_dynamics"][at], var))
    rows = {row_group(r) + (r["step"], r["layer"]): r for r in checker.rows(folders, "dynamics")}
    if set(rows) != set(values):
        checker.failures.append(f"[{tag}] dynamics rows: expected {len(values)} "
                                f"({sorted(set(values) - set(rows))[:3]} missing), has {len(rows)} "
                                f"({sorted(set(rows) - set(values))[:3]} unexpected)")
    for key in sorted(set(rows) & set(values)):
        seeds = values[key]
        what = f"[{tag}] dynamics λ={key[0]} lr={key[4]:g} {key[2]} step {key[7]} layer {key[8]}"
        checker.close(f"{what} n", len(seeds), rows[key]["n"])
        for side, prefix in ((0, "base"), (1, "var")):
            for m, metric in enumerate(DYNAMICS):
                per_seed = [sum(pair[side][m] for pair in pairs) / len(pairs) for pairs in seeds.values()]
                checker.close(f"{what} {prefix} {metric}", sum(per_seed) / len(per_seed),
                              rows[key][f"{prefix}_{metric}"])
    check_dynamics_summary(checker, folders, tag, rows)


# The extreme of each dynamics metric the summary keeps: where it shows an unstable attention.
LOWEST_IS_EXTREME = {"max_logit": False, "attn_entropy": True, "attn_sink": False}


def check_dynamics_summary(checker, folders, tag, dynamics_rows):
    """dynamics_summary per group and layer: each metric's extreme over the steps of the dynamics table (largest
    logit, lowest entropy, largest first-position mass; the first step on a tie), its step, and its value at the
    last step, for both arms, from xsa-inspect's dynamics rows, which check_dynamics has just recomputed."""
    series = defaultdict(list)  # (group, layer) -> dynamics rows in step order
    for key in sorted(dynamics_rows, key=lambda k: (k[:7], k[8], k[7])):
        series[key[:7] + (key[8],)].append(dynamics_rows[key])
    rows = {row_group(r) + (r["layer"],): r for r in checker.rows(folders, "dynamics_summary")}
    if set(rows) != set(series):
        checker.failures.append(f"[{tag}] dynamics_summary rows: expected {len(series)}, has {len(rows)}")
    for key in sorted(set(rows) & set(series)):
        steps, row = series[key], rows[key]
        what = f"[{tag}] dynamics_summary λ={key[0]} lr={key[4]:g} {key[2]} layer {key[7]}"
        checker.close(f"{what} n", steps[-1]["n"], row["n"])
        checker.close(f"{what} last step", steps[-1]["step"], row["end_step"])
        for prefix in ("base", "var"):
            for metric in DYNAMICS:
                column = f"{prefix}_{metric}"
                pick = min if LOWEST_IS_EXTREME[metric] else max
                extreme = pick(steps, key=lambda r: r[column])  # the first of equal values, as xsa-inspect
                checker.close(f"{what} {column} extreme", extreme[column], row[f"{column}_extreme"])
                checker.close(f"{what} {column} extreme step", extreme["step"], row[f"{column}_extreme_step"])
                checker.close(f"{what} {column} end", steps[-1][column], row[f"{column}_end"])


def check_sizes(checker, folders):
    """The size trend: per variant, lr, budget, length and batch found at two or more model sizes, per seed the
    slope of the improvement over log2 non-embedding parameters (a seed pairs across sizes: it fixes the order
    of the batches at every size), from the seeds that have every size."""
    tag = " ".join(os.path.basename(f) for f in folders)
    series = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))  # key -> seed -> params -> gains
    for p in (p for f in folders for p in load_pairs(f)):
        key = (p["lambda"], p["lr"], p["steps"], p["seq_len"], p["batch"], p["impl"])  # never across impls
        series[key][p["seed"]][p["params"]].append(improvement(p))
    sizes = {key: set(x for at in seeds.values() for x in at) for key, seeds in series.items()}
    expected = {key for key in series if len(sizes[key]) >= 2}
    rows = {(r["lambda"], r["lr"], r["steps"], r["seq_len"], r["batch"], r["attention_impl"]): r
            for r in checker.rows(folders, "size_trend")}
    if set(rows) != expected:
        checker.failures.append(f"[{tag}] size_trend rows: expected {sorted(expected)}, has {sorted(rows)}")
    for key in sorted(set(rows) & expected):
        per_seed = {seed: [(x, sum(g) / len(g)) for x, g in at.items()] for seed, at in series[key].items()}
        what = f"[{tag}] size_trend λ={key[0]} lr={key[1]:g}"
        checker.close(f"{what} sizes", len(sizes[key]), len(rows[key]["params"].split()))
        checker.compare_trend(what, rows[key], per_seed)
    return len(expected)


def check_bias(checker, folder):
    """The final bias table: per group and layer, each arm's mean of every metric over the seeds and the 95% t
    half-width, from each pair's last measurement (the variant's layers; the baseline's where it has them)."""
    cells = defaultdict(lambda: ([], [], set()))  # (T, batch, steps, λ, model, lr, layer) -> base, var, steps
    for p in load_pairs(folder):
        for layer, values in p["var_bias"].items():
            key = (p["seq_len"], p["batch"], p["steps"], p["lambda"], p["model"], p["lr"], layer)
            cells[key][1].append(values)
            cells[key][2].add(p["var_bias_step"])
            if layer in p["base_bias"]:
                cells[key][0].append(p["base_bias"][layer])
    rows = {}
    for r in checker.rows([folder], "bias"):
        key = (r["seq_len"], r["batch"], r["steps"], r["lambda"], r["model"], r["lr"], r["layer"])
        if key in rows:
            checker.failures.append(f"{folder} bias: two rows read {key}")
        rows[key] = r
    if set(rows) != set(cells):
        checker.failures.append(f"{folder} bias rows: expected {sorted(cells)}, has {sorted(rows)}")
    for key in sorted(set(rows) & set(cells)):
        row, what = rows[key], f"{folder} bias {key[4]} lr={key[5]:g} λ={key[3]} T={key[0]} layer {key[6]}"
        checker.close(f"{what} n", len(cells[key][1]), row["n"])
        steps = cells[key][2]  # the measurement step, shown when every pair measured last at the same one
        checker.close(f"{what} step", next(iter(steps)) if len(steps) == 1 else None, row["step"])
        for side, finals in (("base", cells[key][0]), ("var", cells[key][1])):
            for m in BIAS_METRICS:
                _, mean, low, high = interval([f[m] for f in finals])
                checker.close(f"{what} {side} {m}", mean, row[f"{side}_{m}"])
                checker.close(f"{what} {side} {m} CI ±", None if low is None else (high - low) / 2,
                              row[f"{side}_{m}_ci"])


BIAS_LABELS = {"cos_y_v": "cos(y,v)", "cos_z_v": "cos(z,v)", "attn_diag": "attn_diag", "value_cos": "value_cos"}


def check_bias_depth(checker, folders):
    """The trend of the final bias metrics with depth: per group (T, batch, steps, λ, model, lr, attention) with
    two or more layers measured, per seed whose two runs have every one of those layers, the least-squares slope
    of each metric over relative depth (layer − first) / (last − first), i.e. the fitted change from the first
    layer to the last; each arm's mean with a 95% t CI over seeds and the seeds whose slope is positive."""
    tag = " ".join(os.path.basename(f) for f in folders)
    groups = defaultdict(list)
    for p in (p for f in folders for p in load_pairs(f)):
        groups[(p["seq_len"], p["batch"], p["steps"], p["lambda"], p["model"], p["lr"], p["impl"])].append(p)
    expected = {}  # (group key..., metric label) -> (layers, {side: [per-seed slope]})
    for key, pairs in groups.items():
        layers = sorted(set(l for p in pairs for bias in ("base_bias", "var_bias") for l in p[bias]))
        if len(layers) < 2:
            continue
        depth = [(l - layers[0]) / (layers[-1] - layers[0]) for l in layers]
        md = sum(depth) / len(depth)

        def depth_slope(values):
            mv = sum(values) / len(values)
            return (sum((d - md) * (v - mv) for d, v in zip(depth, values))
                    / sum((d - md) ** 2 for d in depth))

        complete = [p for p in pairs if all(set(layers) <= set(p[b]) for b in ("base_bias", "var_bias"))]
        for m in BIAS_METRICS:
            expected[key + (BIAS_LABELS[m],)] = (
                len(layers), {side: [depth_slope([p[bias][l][m] for l in layers]) for p in complete]
                              for side, bias in (("base", "base_bias"), ("var", "var_bias"))})
    rows = {}
    for r in checker.rows(folders, "bias_depth"):
        key = (r["seq_len"], r["batch"], r["steps"], r["lambda"], r["model"], r["lr"], r["attention_impl"],
               r["metric"])
        if key in rows:
            checker.failures.append(f"[{tag}] bias_depth: two rows read {key}")
        rows[key] = r
    if set(rows) != set(expected):
        checker.failures.append(f"[{tag}] bias_depth rows: expected {sorted(expected)}, has {sorted(rows)}")
    for key in sorted(set(rows) & set(expected)):
        row, (layers, slopes) = rows[key], expected[key]
        what = f"[{tag}] bias_depth {key[4]} lr={key[5]:g} λ={key[3]} T={key[0]} {key[7]}"
        checker.close(f"{what} layers", layers, row["layers"])
        checker.close(f"{what} n", len(slopes["base"]), row["n"])
        for side in ("base", "var"):
            if not slopes[side]:
                checker.close(f"{what} {side} change", None, row.get(f"{side}_depth_change"))
                continue
            _, mean, low, high = interval(slopes[side])
            checker.close(f"{what} {side} change", mean, row.get(f"{side}_depth_change"))
            checker.close(f"{what} {side} change CI low", low, row.get(f"{side}_depth_ci_low"))
            checker.close(f"{what} {side} change CI high", high, row.get(f"{side}_depth_ci_high"))
            checker.close(f"{what} {side} seeds rising", sum(s > 0 for s in slopes[side]), row[f"{side}_rising"])
    return len(expected)


def check_learned_lambda(checker, folders):
    """The learned λ / gate table: per group and layer of a variant that learns one, each head's mean and sample
    SD over seeds of its value at the last measurement, and the same for the layer's mean over heads."""
    tag = " ".join(os.path.basename(f) for f in folders)
    cells = defaultdict(lambda: ([], set()))  # (T, batch, steps, λ, model, lr, impl, layer) -> per seed, steps
    for p in (p for f in folders for p in load_pairs(f)):
        for layer, heads in p["var_lambda"].items():
            key = (p["seq_len"], p["batch"], p["steps"], p["lambda"], p["model"], p["lr"], p["impl"], layer)
            cells[key][0].append(heads)
            cells[key][1].add(p["var_bias_step"])
    rows = {(r["seq_len"], r["batch"], r["steps"], r["variant"], r["model"], r["lr"], r["attention_impl"],
             r["layer"]): r for r in checker.rows(folders, "learned_lambda")}
    if set(rows) != set(cells):
        checker.failures.append(f"[{tag}] learned_lambda rows: expected {sorted(cells)}, has {sorted(rows)}")

    def sd(values):
        if len(values) < 2:
            return None
        m = sum(values) / len(values)
        return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))

    for key in sorted(set(rows) & set(cells)):
        row, (seeds, steps) = rows[key], cells[key]
        what = f"[{tag}] learned_lambda {key[3]} {key[4]} lr={key[5]:g} T={key[0]} steps={key[2]} layer {key[7]}"
        checker.close(f"{what} n", len(seeds), row["n"])
        checker.close(f"{what} step", next(iter(steps)) if len(steps) == 1 else None, row["step"])
        for h in range(max(len(heads) for heads in seeds)):
            values = [heads[h] for heads in seeds if h < len(heads)]
            checker.close(f"{what} head {h}", sum(values) / len(values), row[f"head_{h}"])
            checker.close(f"{what} head {h} SD", sd(values), row[f"head_{h}_sd"])
        layer_means = [sum(heads) / len(heads) for heads in seeds]
        checker.close(f"{what} layer mean", sum(layer_means) / len(layer_means), row["layer_mean"])
        checker.close(f"{what} layer mean SD", sd(layer_means), row["layer_mean_sd"])


def check_setup_sweep(checker, folders):
    """A question-9 sweep (the last of `folders`), with lr_control before it when the sweep trains the default
    model (its cells are the sweep's arms without the change): the gain per lr and setup, the lr selection per
    setup, the plateau escape; the sweep's own attention dynamics and bias metrics."""
    check_by_budget(checker, folders)
    check_learning_rates(checker, folders)
    check_plateau_escape(checker, folders)
    check_dynamics(checker, folders[-1:])
    check_bias(checker, folders[-1])


def finished(folder):
    return any("results.json" in files for _, _, files in os.walk(folder))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    inspect, results = sys.argv[1], sys.argv[2]
    budgets = [os.path.join(results, f) for f in ("budget_300", "budget_1200", "budget_2400")]
    others = ("seqlen_tokens", "seqlen_fixed_batch", "lambda_lr", "lr_control")
    for folder in budgets + [os.path.join(results, f) for f in others]:
        if not os.path.isdir(folder):
            sys.exit(f"check_findings: {folder}: no such folder")
    # The second round's sweeps that are still running: each is checked once it has a finished point, and the
    # summary line names those without one, so an unchecked table is never silent.
    second = {name: os.path.join(results, name)
              for name in ("variants_s1", "size_s2", "length_s1", "gate_lr_s1")}
    # The third round (question 9): each sweep's cells without a stabiliser are lr_control's, so each is checked
    # together with lr_control: the gain per lr and setup, the lr selection per setup, the plateau escape.
    third = {name: os.path.join(results, name)
             for name in ("baseline_choices", "qknorm_lr", "gate_headwise_lr", "warmup_150")}
    # Sweeps at lrs chosen by a third-round sweep: qknorm_s1 at qknorm_lr's two best (experiment 4, one size up:
    # the shared best and the next lower lr), gate_elementwise at gate_headwise_lr's best only (experiment 3).
    fourth = {"qknorm_s1": os.path.join(results, "qknorm_s1"),
              "gate_elementwise": os.path.join(results, "gate_elementwise")}
    # lr_control's cells trained again with the dynamics measured: read for the dynamics only (never pooled with
    # lr_control in a loss table, configs/science/paper_dynamics.yaml says why).
    dynamics_only = {"paper_dynamics": os.path.join(results, "paper_dynamics")}
    # The fourth round (question 10): the modern baseline (no embedding norm, QK-norm, warmup 150) at S0 and S1
    # and the two partial setups at S0; every arm is in its own sweep (no cell of lr_control).
    modern = {name: os.path.join(results, name)
              for name in ("modern_s0", "nonorm_warmup150", "nonorm_qknorm", "modern_s1")}
    pending = [name for name, folder in {**second, **third, **fourth, **dynamics_only, **modern}.items()
               if not finished(folder)]
    checker = Checker(inspect)
    check_budget(checker, budgets)
    check_budget(checker, budgets[:2])  # the findings' trend over each interval alone
    check_budget(checker, budgets[1:])
    check_lengths(checker, os.path.join(results, "seqlen_tokens"))
    check_lengths(checker, os.path.join(results, "seqlen_fixed_batch"))
    check_lambda(checker, os.path.join(results, "budget_300"))
    check_lambda(checker, os.path.join(results, "lambda_lr"))
    check_learning_rates(checker, [os.path.join(results, "lr_control")])
    check_by_budget(checker, [os.path.join(results, "lr_control")])
    check_learned_lambda(checker, [budgets[0], budgets[1], os.path.join(results, "lambda_lr")])
    for folder in budgets + [os.path.join(results, f) for f in others]:
        check_bias(checker, folder)
    if "variants_s1" not in pending:
        check_lambda(checker, second["variants_s1"])
        check_against(checker, second["variants_s1"], "xsa")
        check_against(checker, second["variants_s1"], "xsa@2-3")  # the two halves against each other
        check_bias(checker, second["variants_s1"])
        check_learned_lambda(checker, [second["variants_s1"]])
    if "size_s2" not in pending:
        check_by_budget(checker, [second["size_s2"]])
        check_bias(checker, second["size_s2"])
    if "length_s1" not in pending:
        check_lengths(checker, second["length_s1"])
    if "gate_lr_s1" not in pending:
        check_lambda(checker, second["gate_lr_s1"])
        check_against(checker, second["gate_lr_s1"], "xsa")
        check_bias(checker, second["gate_lr_s1"])
        check_learned_lambda(checker, [second["gate_lr_s1"]])
    # S0 = lr_control's cells, S1 = variants_s1's sa and xsa, S2 = size_s2.
    sizes = [os.path.join(results, "lr_control"), second["variants_s1"], second["size_s2"]]
    trends = check_sizes(checker, sizes)
    check_by_budget(checker, [f for f in sizes if finished(f)])  # the gain at each size and lr, in one table
    depth_rows = check_bias_depth(checker, budgets)
    depth_rows += check_bias_depth(checker, [f for f in sizes if finished(f)])
    if "length_s1" not in pending:
        depth_rows += check_bias_depth(checker, [second["length_s1"]])
    if "gate_lr_s1" not in pending:
        depth_rows += check_bias_depth(checker, [second["gate_lr_s1"]])
    for name, folder in third.items():
        if name not in pending:
            check_setup_sweep(checker, [os.path.join(results, "lr_control"), folder])
    if "paper_dynamics" not in pending:
        check_dynamics(checker, [dynamics_only["paper_dynamics"]])
    # Experiment 4: QK-norm at S1, at qknorm_lr's two best lrs (its own group: another model shape).
    if "qknorm_s1" not in pending:
        check_chosen_lrs(checker, third["qknorm_lr"], fourth["qknorm_s1"], "QK-norm", lower_when_shared=True)
        check_setup_sweep(checker, [fourth["qknorm_s1"]])
        # One size up with QK-norm at both of its lrs: S0 = qknorm_lr's cells at them (question 6 re-read).
        trends += check_sizes(checker, [third["qknorm_lr"], fourth["qknorm_s1"]])
    # Experiment 3's elementwise gate: the default model like the third round's sweeps, so checked with
    # lr_control as they are (its one or two lrs make a short lr_selection row) and pooled with them below.
    if "gate_elementwise" not in pending:
        check_chosen_lrs(checker, third["gate_headwise_lr"], fourth["gate_elementwise"], "headwise gate",
                         lower_when_shared=False)
        check_setup_sweep(checker, [os.path.join(results, "lr_control"), fourth["gate_elementwise"]])
    # Every sweep of the default model with a changed baseline together: each arm at its best setup and lr.
    finished_third = [folder for name, folder in third.items() if name not in pending]
    if "gate_elementwise" not in pending:
        finished_third.append(fourth["gate_elementwise"])
    if finished_third:
        check_setup_selection(checker, [os.path.join(results, "lr_control")] + finished_third)
        check_setup_effect(checker, [os.path.join(results, "lr_control")] + finished_third)
        check_setup_effect_by_lr(checker, [os.path.join(results, "lr_control")] + finished_third)
    # Question 10: each modern sweep alone (the gain per lr, the lr selection, plateau, dynamics, bias), the three
    # S0 setups with no embedding norm beside baseline_choices' no-norm cells in one table (by_budget and
    # lr_selection per setup), and experiment 4: each arm at its best setup and lr over every setup trained at S0.
    for name, folder in modern.items():
        if name not in pending:
            check_setup_sweep(checker, [folder])
    finished_modern_s0 = [modern[name] for name in ("modern_s0", "nonorm_warmup150", "nonorm_qknorm")
                          if name not in pending]
    if finished_modern_s0:
        check_by_budget(checker, [third["baseline_choices"]] + finished_modern_s0)
        check_learning_rates(checker, [third["baseline_choices"]] + finished_modern_s0)
        check_setup_selection(checker, [os.path.join(results, "lr_control")] + finished_third + finished_modern_s0)
    checker.failures += LABEL_MISMATCHES
    for failure in checker.failures:
        print("FAIL", failure)
    print(f"check_findings: {checker.checked} values recomputed from {results} ({trends} size trend(s), "
          f"{depth_rows} depth trend(s); "
          f"no finished point yet: {', '.join(pending) or 'none'}), {len(checker.failures)} differ")
    sys.exit(1 if checker.failures else 0)


if __name__ == "__main__":
    main()
