#!/usr/bin/python3
"""Figures for docs/findings.md, drawn from xsa-inspect's own JSON (the numbers of the tables, not a
second implementation of the statistics).

Usage: scripts/plot_findings.py PATH... --out DIR [--baseline RUN] [--lambda 1,0.5] [--only NAME,...]
                                [--inspect build/xsa-inspect]

Runs `xsa-inspect PATH... --format json` and writes into DIR every figure whose section has rows:
  improvement_vs_budget.png  mean improvement % vs training steps (log axis) with 95% CI bars, per λ; the
                             legend gives each λ's trend (budget_trend: points per doubling of steps, 95% CI)
  eval_delta_curve.png       paired Δ val loss (variant − baseline) along training with its 95% CI band,
                             per λ and budget
  improvement_vs_lambda.png  mean improvement % per λ (numbers, then learned / gate) with 95% CI bars, per
                             budget (with --baseline xsa: the other variants against full XSA)
  improvement_vs_seq_len.png mean improvement % vs T with 95% CI bars, per λ and tokens per step; the legend
                             gives each line's trend (seq_len_trend: points per doubling of T, 95% CI)
  bias_init_vs_end.png       per layer: cos(y,v), cos(z,v), a_ii and value cosine of the baseline and the
                             variant, at initialisation and at the end (mean ± 95% CI over seeds)
  bias_by_depth.png          per model: SA's and the variant's final cos(y,v), cos(z,v), a_ii and value cosine
                             against relative depth (layer / (layers − 1)), mean ± 95% CI over seeds, at the
                             lr most models share (the paper's Fig. 1 asks whether cos(y,v) rises with depth)
  improvement_vs_size.png    mean improvement % vs non-embedding parameters (log axis) with 95% CI bars, one
                             line per size_trend row (λ, lr, budget); the legend gives its trend (points per
                             doubling of parameters, 95% CI)
  improvement_vs_lr.png      per learning rate (log axis): each arm's mean final val loss, its best lr marked
                             (lr_selection), and the mean improvement % with 95% CI bars, per λ, model and budget
Exit code 2 with one line on bad input. Uses Debian's python3-matplotlib (/usr/bin/python3).
"""
import argparse
import json
import os
import pathlib
import stat
import subprocess
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(f"plot_findings: error: {sys.executable} has no matplotlib; run it with /usr/bin/python3 "
             "(Debian's python3-matplotlib: apt-get install python3-matplotlib)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import user_input  # noqa: E402  (scripts/user_input.py: a user-named path checked, or one line and exit 2)


def fail(message, code=2):
    user_input.fail("plot_findings", message, code)


def check_paths(paths):
    """Each PATH exists and is a folder or a regular file, before xsa-inspect reads it (stat only: a FIFO is
    refused, never opened). What is inside is xsa-inspect's to check: it names the bad file in one line."""
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except OSError as e:
            fail(user_input.os_problem(path, e).replace("no such file", "no such file or folder"))
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            fail(f"{path}: is {user_input.kind_of(mode)}, expected a results.json or a folder")


def inspect_json(exe, paths, lambdas=None, baseline=None):
    extra = (["--baseline", baseline] if baseline else []) + (["--lambda", lambdas] if lambdas else [])
    try:
        proc = subprocess.run([exe, *paths, *extra, "--format", "json"], capture_output=True, text=True,
                              errors="replace")
    except OSError as e:
        fail(f"{exe}: cannot run xsa-inspect ({e.strerror or e})")
    if proc.returncode != 0:
        # xsa-inspect's own one-line error names the bad file (the last line, should it have printed more)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        last = lines[-1].strip().replace("xsa-inspect: error: ", "", 1) if lines else f"exit {proc.returncode}"
        fail(f"xsa-inspect: {last}",
             proc.returncode if proc.returncode > 0 else 2)
    try:
        doc = json.loads(proc.stdout)
    except ValueError as e:
        fail(f"{exe}: --format json printed no JSON ({e})")
    if not isinstance(doc, dict):
        fail(f"{exe}: --format json printed {user_input.json_type(doc)}, expected an object of sections")
    return doc


def lam_label(row):
    lam = row["lambda"]
    if "@" in lam:  # a variant on some layers only: "1@2-3"
        fixed, layers = lam.split("@", 1)
        return f"{lam_label({'lambda': fixed})} on layers {layers}"
    if lam == "0":
        return "SA (λ=0)"
    return ("XSA (λ=1)" if lam == "1" else f"λ={lam}") if lam[0].isdigit() else lam


def baseline_name(rows):
    """The runs the rows are compared with, as the axis labels say it: SA, XSA, or the run's name."""
    names = {r["baseline"] for r in rows}
    name = names.pop() if len(names) == 1 else "the baseline"
    return {"sa": "SA", "xsa": "XSA"}.get(name, name)


def improvement_axis(rows):
    return f"val-loss improvement over {baseline_name(rows)}, %"


def ci_bars(rows, key="mean_improvement_pct", low="improvement_ci_low", high="improvement_ci_high"):
    ys = [r[key] for r in rows]
    lo = [r[key] - r[low] if r[low] is not None else 0 for r in rows]
    hi = [r[high] - r[key] if r[high] is not None else 0 for r in rows]
    return ys, [lo, hi]


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.tight_layout()
    with user_input.replacing(path) as tmp:  # a reader never sees a half-written PNG
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    print(f"plot_findings: wrote {path}")


def finish(fig, ax, out, name, xlabel, ylabel, title, legend_size=None):
    """The common end of a single-axes figure: zero line, labels, legend, file."""
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=legend_size)
    save(fig, out, name)


def slope_text(t, unit):
    """A trend row (seq_len_trend or budget_trend) as a legend note: slope, CI and n."""
    ci = f" [{t['slope_ci_low']:+.2f}, {t['slope_ci_high']:+.2f}]" if t["slope_ci_low"] is not None else ""
    # percentage points of improvement per doubling
    return f"\n  {t['slope']:+.2f} pp{ci} per doubling of {unit}, n={t['n']}"


def budget_trend_text(doc, row):
    """The legend's note of a λ's budget trend (xsa-inspect's budget_trend), or "" without one. by_budget pools
    over lengths, so a λ whose budgets span several lengths or batches (several trend rows) gets no note."""
    trends = [t for t in doc.get("budget_trend", []) if (t["baseline"], t["lambda"]) == (row["baseline"], row["lambda"])]
    return slope_text(trends[0], "steps") if len(trends) == 1 and trends[0]["slope"] is not None else ""


def improvement_vs_budget(doc, out):
    rows = doc.get("by_budget", [])
    if len({r["steps"] for r in rows}) < 2:
        return
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for lam in sorted({r["lambda"] for r in rows}):
        sel = sorted((r for r in rows if r["lambda"] == lam), key=lambda r: r["steps"])
        ys, err = ci_bars(sel)
        label = lam_label(sel[0]) + budget_trend_text(doc, sel[0])
        ax.errorbar([r["steps"] for r in sel], ys, yerr=err, marker="o", capsize=4, label=label)
    ax.set_xscale("log")
    budgets = sorted({r["steps"] for r in rows})
    ax.set_xticks(budgets)
    ax.set_xticklabels([f"{b:,}" for b in budgets])
    ax.minorticks_off()
    per_step = {r["tokens"] // r["steps"] for r in rows if r["tokens"]}
    xlabel = f"training steps ({per_step.pop():,} tokens each)" if len(per_step) == 1 else "training steps"
    finish(fig, ax, out, "improvement_vs_budget.png", xlabel, improvement_axis(rows),
           "Gain vs training budget (mean, 95% CI over seeds)", 8)


def eval_delta_curve(doc, out):
    rows = doc.get("eval_curve", [])
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(7.2, 4.4))
    for key in sorted({(r["lambda"], r["steps"]) for r in rows}):
        sel = sorted((r for r in rows if (r["lambda"], r["steps"]) == key), key=lambda r: r["step"])
        xs = [r["step"] for r in sel]
        line, = ax.plot(xs, [r["mean_delta"] for r in sel], label=f"{lam_label(sel[0])}, {key[1]} steps")
        lo = [r["delta_ci_low"] if r["delta_ci_low"] is not None else r["mean_delta"] for r in sel]
        hi = [r["delta_ci_high"] if r["delta_ci_high"] is not None else r["mean_delta"] for r in sel]
        ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.15)
    finish(fig, ax, out, "eval_delta_curve.png", "step", f"Δ val loss (variant − {baseline_name(rows)})",
           "Paired val-loss difference along training (95% CI band)", 8)


def improvement_vs_lambda(doc, out):
    rows = doc.get("by_lambda", [])
    labels = []  # xsa-inspect's order: numeric λ ascending, then learned / gate
    for r in rows:
        if r["lambda"] not in labels:
            labels.append(r["lambda"])
    if len(labels) < 2:
        return
    budgets = sorted({r["steps"] for r in rows})
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, steps in enumerate(budgets):
        sel = [r for r in rows if r["steps"] == steps]
        ys, err = ci_bars(sel)
        offset = (i - (len(budgets) - 1) / 2) * 0.12
        ax.errorbar([labels.index(r["lambda"]) + offset for r in sel], ys, yerr=err, marker="o", capsize=4,
                    linestyle="none", label=f"{steps} steps")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([lam_label({"lambda": l}).replace(" on ", "\non ").replace(" lr×", "\nlr×") for l in labels],
                       fontsize=8)
    finish(fig, ax, out, "improvement_vs_lambda.png", f"variant (each vs its seed's {baseline_name(rows)} run)",
           improvement_axis(rows),
           "Gain per variant (mean, 95% CI over seeds)", 8)


def length_series(rows):
    """The lines of the length figure: (legend label, design, rows sorted by T). One line per baseline, λ, budget
    and design: tokens per step fixed (batch = tokens / T: a tokens/step value several lengths share) or batch
    fixed (then tokens per step grow with T: a batch size several lengths share). A length can be on both lines
    (T=128 at batch 32 is also 4,096 tokens/step); lengths on neither make one line per batch size. `design` is
    spelt as xsa-inspect's seq_len_trend section spells it (None: batch size unknown); both group the same way."""
    series = []
    ident = lambda r: (r["baseline"], r["lambda"], r["steps"], r.get("model"), r.get("lr"), r.get("attention_impl"))
    keys = sorted({ident(r) for r in rows}, key=str)
    several_baselines = len({k[0] for k in keys}) > 1
    several_models = len({k[3] for k in keys}) > 1
    several_lrs = len({k[4] for k in keys}) > 1
    several_impls = len({k[5] for k in keys}) > 1
    for key in keys:
        group = [r for r in rows if ident(r) == key]
        name = (f"{lam_label(group[0])}, {key[2]} steps" + (f", {key[3]}" if several_models else "")
                + (f", lr {key[4]:g}" if several_lrs else "") + (f", {key[5]} attention" if several_impls else "")
                + (f" (vs {key[0]})" if several_baselines else ""))
        by_tokens, by_batch = {}, {}
        for r in group:
            if r["batch_size"] is not None and r["tokens_per_step"] is not None:
                by_tokens.setdefault(r["tokens_per_step"], []).append(r)
                by_batch.setdefault(r["batch_size"], []).append(r)
        placed = set()
        for tokens, sel in sorted(by_tokens.items()):
            if len(sel) >= 2:
                series.append((f"{name}, {tokens:,} tokens/step", f"{tokens} tokens/step", sel))
                placed |= {id(r) for r in sel}
        for batch, sel in sorted(by_batch.items()):
            if len(sel) >= 2:
                series.append((f"{name}, batch {batch} fixed", f"batch {batch}", sel))
                placed |= {id(r) for r in sel}
        rest = {}
        for r in group:
            if id(r) not in placed:
                rest.setdefault(r["batch_size"], []).append(r)
        for batch, sel in sorted(rest.items(), key=lambda kv: (kv[0] is not None, kv[0] or 0)):
            if batch is not None:
                series.append((f"{name}, batch {batch} fixed", f"batch {batch}", sel))
            else:
                series.append((name, None, sel))
    return [(label, design, sorted(sel, key=lambda r: r["seq_len"])) for label, design, sel in series]


def trend_text(doc, row, design):
    """The legend's note of the length trend (xsa-inspect's seq_len_trend row of that line), or "" without one."""
    for t in doc.get("seq_len_trend", []):
        key = (t["baseline"], t["lambda"], t["steps"], t.get("model"), t.get("lr"), t.get("attention_impl"),
               t["design"])
        mine = (row["baseline"], row["lambda"], row["steps"], row.get("model"), row.get("lr"),
                row.get("attention_impl"), design)
        if key == mine and t["slope"] is not None:
            return slope_text(t, "T")
    return ""


def improvement_vs_seq_len(doc, out):
    rows = doc.get("by_seq_len", [])
    if len({r["seq_len"] for r in rows}) < 2:
        return
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for label, design, sel in length_series(rows):
        ys, err = ci_bars(sel)
        label += trend_text(doc, sel[0], design)
        ax.errorbar([r["seq_len"] for r in sel], ys, yerr=err, marker="o", capsize=4, label=label)
    ax.set_xscale("log", base=2)
    lengths = sorted({r["seq_len"] for r in rows})
    ax.set_xticks(lengths)
    ax.set_xticklabels([str(t) for t in lengths])
    ax.minorticks_off()
    finish(fig, ax, out, "improvement_vs_seq_len.png", "sequence length T", improvement_axis(rows),
           "Gain vs context length (mean, 95% CI over seeds)", 8)


METRICS = [("cos_y_v", "cos(y, v)"), ("cos_z_v", "cos(z, v)"), ("attn_diag", "a_ii"), ("value_cos", "value cosine")]


def bias_init_vs_end(doc, out):
    end_rows, init_rows = doc.get("bias", []), doc.get("bias_init", [])
    fixed = [r for r in end_rows if r["lambda"] == "1"] or end_rows
    if not fixed:
        return
    seq_len, lam = fixed[0]["seq_len"], fixed[0]["lambda"]
    budgets = sorted({r["steps"] for r in fixed if (r["seq_len"], r["lambda"]) == (seq_len, lam)})
    pick = lambda rows, steps: sorted((r for r in rows if (r["seq_len"], r["steps"], r["lambda"]) == (seq_len, steps, lam)),
                                      key=lambda r: r["layer"])
    # Every budget starts from the same initial weights per seed, so one "init" bar per side; then one "end"
    # bar per training budget, to show how the metrics move with longer training.
    init = pick(init_rows, budgets[0])
    name = lam_label(fixed[0])
    base = baseline_name(fixed)
    bars = [(f"{base} init", init, "base")] + [(f"{base} {b} steps", pick(end_rows, b), "base") for b in budgets]
    bars += [(f"{name} init", init, "var")] + [(f"{name} {b} steps", pick(end_rows, b), "var") for b in budgets]
    bars = [b for b in bars if b[1]]
    layers = sorted({r["layer"] for _, rows, _ in bars for r in rows})
    fig, axes = plt.subplots(1, len(METRICS), figsize=(13, 3.8))
    width = 0.8 / len(bars)
    for ax, (m, title) in zip(axes, METRICS):
        for i, (label, rows, side) in enumerate(bars):
            ys = [r[f"{side}_{m}"] for r in rows]
            err = [r[f"{side}_{m}_ci"] or 0 for r in rows]
            ax.bar([r["layer"] + (i - (len(bars) - 1) / 2) * width for r in rows], ys, width, yerr=err, capsize=2,
                   label=label)
        ax.set_xticks(layers)
        ax.set_xticklabels([f"layer {l}" for l in layers])
        ax.set_title(title)
        ax.axhline(0, color="grey", lw=0.8)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Bias metrics at init and at the end of training (T={seq_len}; mean ± 95% CI over seeds)")
    save(fig, out, "bias_init_vs_end.png")


def improvement_vs_size(doc, out):
    trends = doc.get("size_trend", [])
    if not trends:
        return
    gains = doc.get("by_seq_len", [])  # per length and batch, as size_trend's rows are
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ticks = {}
    for t in trends:
        params = dict(zip(t["models"].split(", "), (int(p) for p in t["params"].split())))
        key = lambda r, batch: (r["baseline"], r["lambda"], r["lr"], r["steps"], r["seq_len"], r[batch],
                                r.get("attention_impl"))
        sel = sorted((r for r in gains if key(r, "batch_size") == key(t, "batch") and r["model"] in params),
                     key=lambda r: params[r["model"]])
        ys, err = ci_bars(sel)
        xs = [params[r["model"]] for r in sel]
        ticks.update({params[r["model"]]: r["model"] for r in sel})
        label = f"{lam_label(t)}, lr {t['lr']:g}, {t['steps']} steps, T={t['seq_len']}" + slope_text(t, "parameters")
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=4, label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(ticks))
    ax.set_xticklabels([f"{ticks[x]}\n{x / 1e6:.2f}M" for x in sorted(ticks)], fontsize=8)
    ax.minorticks_off()
    finish(fig, ax, out, "improvement_vs_size.png", "model (non-embedding parameters)", improvement_axis(trends),
           "Gain vs model size (mean, 95% CI over seeds)", 8)


def n_layers(model):
    """The layer count of a model label ("4L d192 6×32" -> 4)."""
    return int(model.split("L")[0])


def bias_by_depth(doc, out):
    rows = [r for r in doc.get("bias", []) if r["lambda"] == "1"] or doc.get("bias", [])
    models = sorted({r["model"] for r in rows}, key=lambda m: (n_layers(m), m))
    if len(models) < 2:
        return
    # One setting for every model, so the lines differ in size alone: the (budget, length, batch, lr, attention)
    # most models have (ties: the smaller).
    setting = lambda r: (r["baseline"], r["lambda"], r["steps"], r["seq_len"], r["batch"], r["lr"],
                         r.get("attention_impl") or "")
    settings = sorted({setting(r) for r in rows},
                      key=lambda k: (-len({r["model"] for r in rows if setting(r) == k}), k[2:], k[:2]))
    chosen = settings[0]
    _, lam, steps, seq_len, _, lr, _ = chosen
    rows = [r for r in rows if setting(r) == chosen]
    models = [m for m in models if any(r["model"] == m for r in rows)]
    if len(models) < 2:
        return
    fig, axes = plt.subplots(1, len(METRICS), figsize=(14, 3.9))
    for ax, (m, title) in zip(axes, METRICS):
        for i, model in enumerate(models):
            sel = sorted((r for r in rows if r["model"] == model), key=lambda r: r["layer"])
            depth = [r["layer"] / max(1, n_layers(model) - 1) for r in sel]
            color = f"C{i}"
            for side, style, who in (("base", "--", sel[0]["baseline"].upper()), ("var", "-", lam_label(sel[0]))):
                ax.errorbar(depth, [r[f"{side}_{m}"] for r in sel], yerr=[r[f"{side}_{m}_ci"] or 0 for r in sel],
                            linestyle=style, marker="o", ms=4, capsize=2, color=color, label=f"{who}, {model}")
        ax.set_title(title)
        ax.set_xlabel("relative depth (layer / (layers − 1))")
        ax.axhline(0, color="grey", lw=0.8)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Bias metrics at the end of training by depth ({steps} steps, T={seq_len}, lr {lr:g}; "
                 "mean ± 95% CI over seeds)")
    save(fig, out, "bias_by_depth.png")


def improvement_vs_lr(doc, out):
    gains, losses = doc.get("by_lambda", []), doc.get("by_budget", [])
    ident = lambda r: (r["baseline"], r["lambda"], r["model"], r["steps"])
    keys = sorted({ident(r) for r in gains if len({g["lr"] for g in gains if ident(g) == ident(r)}) >= 2}, key=str)
    if not keys:
        return
    fig, (ax_loss, ax_gain) = plt.subplots(1, 2, figsize=(11, 4.2))
    several = len(keys) > 1
    for key in keys:
        suffix = f", {key[2]}, {key[3]} steps" if several else ""
        name = lam_label({"lambda": key[1]}) + suffix
        sel = sorted((r for r in losses if ident(r) == key), key=lambda r: r["lr"])
        # by_budget and by_lambda pool over lengths, lr_selection does not: a star only when one length is pooled
        seq_lens = {t for r in gains if ident(r) == key for t in str(r["seq_lens"]).split()}
        pick = [r for r in doc.get("lr_selection", [])
                if (r["baseline"], r["lambda"], r["model"], r["steps"]) == key and str(r["seq_len"]) in seq_lens]
        pick = pick if len(pick) == 1 else []
        for arm, who, best in (("base", key[0].upper() + suffix, "best_lr_baseline"), ("var", name, "best_lr_variant")):
            line, = ax_loss.plot([r["lr"] for r in sel], [r[f"{arm}_val_loss"] for r in sel], marker="o", label=who)
            if pick and pick[0][best] is not None:
                at = [r for r in sel if r["lr"] == pick[0][best]]
                ax_loss.plot([at[0]["lr"]], [at[0][f"{arm}_val_loss"]], marker="*", ms=16, color=line.get_color(),
                             linestyle="none")
        sel = sorted((r for r in gains if ident(r) == key), key=lambda r: r["lr"])
        ys, err = ci_bars(sel)
        ax_gain.errorbar([r["lr"] for r in sel], ys, yerr=err, marker="o", capsize=4, label=name)
    for ax in (ax_loss, ax_gain):
        ax.set_xscale("log")
        lrs = sorted({r["lr"] for r in gains})
        ax.set_xticks(lrs)
        ax.set_xticklabels([f"{lr:g}" for lr in lrs])
        ax.minorticks_off()
        ax.set_xlabel("peak learning rate (min_lr = lr/10)")
    ax_loss.set_ylabel("final val loss (mean over seeds)")
    ax_loss.set_title("Each arm's final val loss (★ its best lr)")
    ax_loss.legend(fontsize=8)
    finish(fig, ax_gain, out, "improvement_vs_lr.png", "peak learning rate (min_lr = lr/10)", improvement_axis(gains),
           "Gain at each lr (mean, 95% CI over seeds)", 8)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", help="results.json files or folders, as for xsa-inspect")
    ap.add_argument("--out", required=True, help="folder for the PNG files (created if missing)")
    ap.add_argument("--only", help="only these figures, comma-separated names without .png (e.g. improvement_vs_lambda)")
    ap.add_argument("--lambda", dest="lambdas", help="only these variants, as xsa-inspect --lambda (e.g. 1,0.5)")
    ap.add_argument("--baseline", help="compare with this run instead of SA, as xsa-inspect --baseline (e.g. xsa)")
    root = pathlib.Path(__file__).resolve().parent.parent
    ap.add_argument("--inspect", default=str(root / "build" / "xsa-inspect"), help="xsa-inspect executable")
    args = ap.parse_args()
    if not user_input.is_regular_file(args.inspect) or not os.access(args.inspect, os.X_OK):
        fail(f"{args.inspect}: xsa-inspect not built (scripts/build.sh) or not executable")
    plots = (improvement_vs_budget, eval_delta_curve, improvement_vs_lambda, improvement_vs_seq_len,
             bias_init_vs_end, bias_by_depth, improvement_vs_size, improvement_vs_lr)
    names = [p.__name__ for p in plots]
    only = args.only.split(",") if args.only else names
    for name in only:
        if name not in names:
            fail(f"--only '{name}': not a figure, expected one of {', '.join(names)}")
    check_paths(args.paths)
    doc = inspect_json(args.inspect, args.paths, args.lambdas, args.baseline)
    try:
        user_input.ensure_folder(args.out, "--out folder")
    except user_input.InputError as e:
        fail(e)
    for plot in plots:
        if plot.__name__ in only:
            try:
                plot(doc, args.out)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError) as e:
                # The last line of defence: xsa-inspect checked the files, so this is a value no check foresaw.
                fail(f"{', '.join(args.paths)}: cannot draw {plot.__name__}.png from xsa-inspect's JSON "
                     f"({type(e).__name__}: {e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
