"""Figures of the paired gain (variant vs its seed's baseline run) with xsa-inspect's 95% CIs, drawn from its
sections (results.inspect): the tables' own numbers, grouping and intervals, so a bar is the table's CI.
  improvement_vs_budget.png  mean improvement % vs training steps (log axis) with 95% CI bars, per λ; the
                             legend gives each λ's trend (budget_trend: points per doubling of steps, 95% CI)
  eval_delta_curve.png       paired Δ val loss (variant − baseline) along training with its 95% CI band,
                             per λ and budget (eval_curve)
  delta_by_position.png      paired Δ val loss (variant − baseline) per position bucket of the window
                             (1–16, 17–64, ..., up to T; log axis) with 95% CI bars, one line per comparison,
                             setup and T (loss_by_position): a gain that grows with position comes from context
  improvement_vs_lambda.png  mean improvement % per λ (numbers, then learned / gate) with 95% CI bars, per
                             budget (by_lambda; with --baseline xsa: the other variants against full XSA)
  improvement_vs_seq_len.png mean improvement % vs T with 95% CI bars, per λ and tokens per step (by_seq_len);
                             the legend gives each line's trend (seq_len_trend: points per doubling of T, 95% CI)
  improvement_vs_size.png    mean improvement % vs non-embedding parameters (log axis) with 95% CI bars, one
                             line per size_trend row (λ, lr, budget); the legend gives its trend (points per
                             doubling of parameters, 95% CI)
  improvement_vs_lr.png      per learning rate (log axis): each arm's mean final val loss, its best lr marked
                             (lr_selection), and the mean improvement % with 95% CI bars, per λ, model and budget
                             (one trained at a single lr beside those at two or more: a diamond)
  early_val_loss.png         per lr two or more models (or baseline setups) share: each arm's mean val loss over
                             the first half of training (eval_curve), the baseline dashed
  dynamics_over_training.png per such lr: the largest attention logit (log axis), the attention entropy and the
                             attention on the first position along training (dynamics), mean over layers and
                             seeds, the baseline dashed
  best_per_setup.png         per comparison trained with two or more baseline setups: each arm's final val loss at
                             its own best lr per setup and the Δ best vs best with its held-out CI (lr_selection)
"""
import os
import textwrap

from .common import Skip, baseline_name, ci_bars, finish, improvement_axis, lam_label, plt, save, slope_text


def budget_trend_text(doc, row):
    """The legend's note of a λ's budget trend (xsa-inspect's budget_trend), or "" without one. by_budget pools
    over lengths, so a λ whose budgets span several lengths or batches (several trend rows) gets no note."""
    trends = [t for t in doc.get("budget_trend", []) if (t["baseline"], t["lambda"]) == (row["baseline"], row["lambda"])]
    return slope_text(trends[0], "steps") if len(trends) == 1 and trends[0]["slope"] is not None else ""


def improvement_vs_budget(doc, out):
    rows = doc.get("by_budget", [])
    if len({r["steps"] for r in rows}) < 2:
        return Skip("fewer than two training budgets among the comparisons")
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
    return finish(fig, ax, os.path.join(out, "improvement_vs_budget.png"), xlabel, improvement_axis(rows),
                  "Gain vs training budget (mean, 95% CI over seeds)", 8)


def eval_delta_curve(doc, out):
    rows = doc.get("eval_curve", [])
    if not rows:
        return Skip("no evaluation points along training among the comparisons")
    fig, ax = plt.subplots(figsize=(7.2, 4.4))
    for key in sorted({(r["lambda"], r["steps"]) for r in rows}):
        sel = sorted((r for r in rows if (r["lambda"], r["steps"]) == key), key=lambda r: r["step"])
        xs = [r["step"] for r in sel]
        line, = ax.plot(xs, [r["mean_delta"] for r in sel], label=f"{lam_label(sel[0])}, {key[1]} steps")
        lo = [r["delta_ci_low"] if r["delta_ci_low"] is not None else r["mean_delta"] for r in sel]
        hi = [r["delta_ci_high"] if r["delta_ci_high"] is not None else r["mean_delta"] for r in sel]
        ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.15)
    return finish(fig, ax, os.path.join(out, "eval_delta_curve.png"), "step",
                  f"Δ val loss (variant − {baseline_name(rows)})",
                  "Paired val-loss difference along training (95% CI band)", 8)


def delta_by_position(doc, out):
    rows = doc.get("loss_by_position", [])
    if not rows:
        return Skip("no loss by position among the comparisons (results.json's final.loss_by_position)")
    fields = ("baseline", "lambda", "steps", "model", "lr", "attention_impl", "seq_len", "batch")
    keys = sorted({tuple(r[f] for f in fields) for r in rows}, key=lambda k: [str(v) for v in k[:6]] + list(k[6:]))
    varies = {f: len({k[i] for k in keys}) > 1 for i, f in enumerate(fields)}
    fig, ax = plt.subplots(figsize=(7.2, 4.4))
    ticks = {}
    for i, key in enumerate(keys):
        sel = sorted((r for r in rows if tuple(r[f] for f in fields) == key), key=lambda r: r["first"])
        # Each bucket is drawn at its last position (the last, cut at T, at T itself); lines are set slightly apart
        # on the log axis so their CI bars do not hide each other.
        shift = 2 ** (0.05 * (i - (len(keys) - 1) / 2))
        ys, err = ci_bars(sel, "mean_delta", "delta_ci_low", "delta_ci_high")
        label = (f"{lam_label(sel[0])}, T={key[6]}" + (f", batch {key[7]}" if varies["batch"] else "")
                 + (f", {key[2]} steps" if varies["steps"] else "") + (f", {key[3]}" if varies["model"] else "")
                 + (f", lr {key[4]:g}" if varies["lr"] else "")
                 + (f", {key[5]} attention" if varies["attention_impl"] else "")
                 + (f" (vs {key[0]})" if varies["baseline"] else ""))
        ax.errorbar([r["last"] * shift for r in sel], ys, yerr=err, marker="o", capsize=3, label=label)
        ticks.update({r["last"]: f"{r['first']:,}–{r['last']:,}" for r in sel})
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(ticks))
    ax.set_xticklabels([ticks[x] for x in sorted(ticks)], fontsize=8)
    ax.minorticks_off()
    return finish(fig, ax, os.path.join(out, "delta_by_position.png"), "position in the window (bucket)",
                  f"Δ val loss (variant − {baseline_name(rows)})",
                  "Paired val-loss difference by position (mean, 95% CI over seeds)", 8)


def improvement_vs_lambda(doc, out):
    rows = doc.get("by_lambda", [])
    labels = []  # xsa-inspect's order: numeric λ ascending, then learned / gate
    for r in rows:
        if r["lambda"] not in labels:
            labels.append(r["lambda"])
    if len(labels) < 2:
        return Skip("fewer than two variants among the comparisons")
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
    return finish(fig, ax, os.path.join(out, "improvement_vs_lambda.png"),
                  f"variant (each vs its seed's {baseline_name(rows)} run)", improvement_axis(rows),
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
        return Skip("fewer than two sequence lengths among the comparisons")
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
    return finish(fig, ax, os.path.join(out, "improvement_vs_seq_len.png"), "sequence length T",
                  improvement_axis(rows), "Gain vs context length (mean, 95% CI over seeds)", 8)


def improvement_vs_size(doc, out):
    trends = doc.get("size_trend", [])
    if not trends:
        return Skip("no size trend (fewer than two model sizes in a comparison)")
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
    return finish(fig, ax, os.path.join(out, "improvement_vs_size.png"), "model (non-embedding parameters)",
                  improvement_axis(trends), "Gain vs model size (mean, 95% CI over seeds)", 8)


def improvement_vs_lr(doc, out):
    gains, losses = doc.get("by_lambda", []), doc.get("by_budget", [])
    ident = comparison
    lrs_of = {}
    for r in gains:
        lrs_of.setdefault(ident(r), set()).add(r["lr"])
    if all(len(lrs) < 2 for lrs in lrs_of.values()):
        return Skip("no comparison at two or more learning rates")
    # A comparison trained at one lr beside them (the elementwise gate at the headwise one's best) is a point.
    keys = sorted(lrs_of, key=str)
    fig, (ax_loss, ax_gain) = plt.subplots(1, 2, figsize=(11, 4.2 + 0.25 * max(0, len(keys) - 2)))
    for index, key in enumerate(keys):
        color = f"C{index % 10}"  # one colour per comparison: its baseline dashed, its variant solid
        suffix = key_suffix(keys, key)
        name = lam_label({"lambda": key[1]}) + suffix
        marker, z = ("D", 3) if len(lrs_of[key]) == 1 else ("o", 2)  # a single point drawn over the lines
        sel = sorted((r for r in losses if ident(r) == key), key=lambda r: r["lr"])
        # by_budget and by_lambda pool over lengths, lr_selection does not: a star only when one length is pooled
        seq_lens = {t for r in gains if ident(r) == key for t in str(r["seq_lens"]).split()}
        pick = [r for r in doc.get("lr_selection", [])
                if (r["baseline"], r["lambda"], r["model"], r["steps"]) == key and str(r["seq_len"]) in seq_lens]
        pick = pick if len(pick) == 1 else []
        for arm, who, best, style in (("base", key[0].upper() + suffix, "best_lr_baseline", "--"),
                                      ("var", name, "best_lr_variant", "-")):
            ax_loss.plot([r["lr"] for r in sel], [r[f"{arm}_val_loss"] for r in sel], marker=marker, label=who,
                         color=color, linestyle=style, zorder=z)
            if pick and pick[0][best] is not None:
                at = [r for r in sel if r["lr"] == pick[0][best]]
                ax_loss.plot([at[0]["lr"]], [at[0][f"{arm}_val_loss"]], marker="*", ms=16, color=color,
                             linestyle="none")
        sel = sorted((r for r in gains if ident(r) == key), key=lambda r: r["lr"])
        ys, err = ci_bars(sel)
        ax_gain.errorbar([r["lr"] for r in sel], ys, yerr=err, marker=marker, capsize=4, label=name, color=color,
                         zorder=z)
    for ax in (ax_loss, ax_gain):
        lr_axis(ax, sorted({r["lr"] for r in gains}))
    ax_loss.set_ylabel("final val loss (mean over seeds)")
    ax_loss.set_title("Each arm's final val loss (★ its best lr; baseline dashed)")
    ax_loss.legend(fontsize=7)
    return finish(fig, ax_gain, os.path.join(out, "improvement_vs_lr.png"), "peak learning rate (min_lr = lr/10)",
                  improvement_axis(gains), "Gain at each lr (mean, 95% CI over seeds)", 7)


def key_suffix(keys, key):
    """What tells comparison `key` (baseline, λ, model, steps) apart from the others in `keys`: ", <model>"
    and ", <steps> steps" where those differ among them, else "". Models that differ only in their baseline
    setup (the model column's parentheses: "2L d128 4×32 (learned pos)") are told apart by the setup alone,
    the paper's setup (RoPE, embedding norm, no QK-norm, no gate, warmup 30) by "paper's setup"."""
    models, budgets = {k[2] for k in keys}, {k[3] for k in keys}
    if len(models) == 1:
        text = ""
    elif len({split_setup(m)[0] for m in models}) == 1:
        text = ", " + split_setup(key[2])[1]
    else:
        text = f", {key[2]}"
    return text + (f", {key[3]} steps" if len(budgets) > 1 else "")


def split_setup(model):
    """The model column's text as (shape, setup): "2L d128 4×32 (learned pos)" -> ("2L d128 4×32", "learned pos");
    the paper's setup (RoPE, embedding norm, no QK-norm, no gate, warmup 30; no parentheses) is "paper's setup"."""
    shape, _, setup = model.partition(" (")
    return shape, setup[:-1] if setup else "paper's setup"


def best_per_setup(doc, out):
    """Per comparison trained with two or more baseline setups (question 9): each arm's mean final val loss at its
    own best lr in each setup (lr_selection; hollow where that lr is the grid's edge, so its optimum may lie
    beyond), and the variant's Δ best vs best with its held-out 95% CI: does XSA still help each setup at tuned
    lrs, and which setup is best for each arm."""
    comparisons = {}
    for r in doc.get("lr_selection", []):
        if r["n"]:
            shape, setup = split_setup(r["model"])
            comparisons.setdefault((r["baseline"], r["lambda"], shape, r["steps"], r["seq_len"]), []).append((setup, r))
    comparisons = {k: v for k, v in comparisons.items() if len(v) >= 2}
    if not comparisons:
        return Skip("no comparison with two or more baseline setups")
    fig, (ax_loss, ax_delta) = plt.subplots(1, 2, figsize=(12, 4.8))
    setups = sorted({setup for rows in comparisons.values() for setup, _ in rows},
                    key=lambda s: (s != "paper's setup", s))
    x_of = {setup: i for i, setup in enumerate(setups)}
    width = 0.8 / len(comparisons)
    for index, (key, rows) in enumerate(sorted(comparisons.items(), key=str)):
        color, offset = f"C{index % 10}", (index - (len(comparisons) - 1) / 2) * width
        suffix = "" if len(comparisons) == 1 else f", {key[2]}, {key[3]} steps"
        name = lam_label({"lambda": key[1]})
        for arm, who, marker, edge, side in (("baseline", key[0].upper(), "s", ("both", "baseline only"), -1),
                                             ("variant", name, "o", ("both", "variant only"), 1)):
            for setup, r in rows:
                x = x_of[setup] + offset + side * width / 5  # the two arms side by side
                inside = r["bracketed"] in edge
                ax_loss.plot([x], [r[f"{arm}_loss"]], marker=marker, ms=8, color=color,
                             markerfacecolor=color if inside else "none", linestyle="none",
                             label=f"{who}{suffix}" if setup == rows[0][0] else None)
                ax_loss.annotate(f"{r[f'best_lr_{arm}']:g}", (x, r[f"{arm}_loss"]), textcoords="offset points",
                                 xytext=(7, -3), fontsize=7)
        held = [(setup, r) for setup, r in rows if r["held_out_delta"] is not None]  # one seed: nothing held out
        ys, err = ci_bars([r for _, r in held], "held_out_delta", "held_out_ci_low", "held_out_ci_high")
        ax_delta.errorbar([x_of[setup] + offset for setup, _ in held], ys, yerr=err, marker="o", capsize=4,
                          linestyle="none", color=color, label=f"{name} − {key[0].upper()}{suffix}")
    seeds = {}  # setup -> the seeds each comparison's selection used there
    for rows in comparisons.values():
        for setup, r in rows:
            seeds.setdefault(setup, set()).add(r["n"])
    for ax in (ax_loss, ax_delta):
        ax.set_xticks(range(len(setups)))
        # One line per word group, so seven or more setups' labels do not run into each other.
        ax.set_xticklabels([",\n".join(textwrap.fill(part, 8) for part in s.split(", ")) + "\nn=" + "/".join(map(str, sorted(seeds[s])))
                            for s in setups], fontsize=8)
        ax.set_xlim(-0.6, len(setups) - 0.4)
    ax_loss.set_ylabel("final val loss at the arm's best lr (mean over seeds)")
    ax_loss.set_title("Each arm at its own best lr (number: that lr; hollow: at the grid's edge)", fontsize=9)
    ax_loss.legend(fontsize=7)
    ax_delta.axhline(0, color="grey", lw=0.8)
    ax_delta.set_ylabel("Δ val loss, best vs best (held out)")
    ax_delta.set_title("Variant − baseline at their best lrs (95% CI over seeds)", fontsize=9)
    ax_delta.legend(fontsize=7)
    return save(fig, os.path.join(out, "best_per_setup.png"), "Each baseline setup at tuned learning rates")


def legend_of_all(axes, ax):
    """One legend on `ax` for the lines of every panel (a comparison missing from that panel's lr included)."""
    handles = {}
    for panel in (a for row in axes for a in row):
        for handle, label in zip(*panel.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    ax.legend(list(handles.values()), list(handles), fontsize=7)


def lr_axis(ax, lrs):
    ax.set_xscale("log")
    ax.set_xticks(lrs)
    ax.set_xticklabels([f"{lr:g}" for lr in lrs])
    ax.minorticks_off()
    ax.set_xlabel("peak learning rate (min_lr = lr/10)")


def comparison(row):
    """A row's comparison, as the lr figures tell them apart: (baseline, λ, model with its setup, steps)."""
    return row["baseline"], row["lambda"], row["model"], row["steps"]


def comparisons_at_shared_lrs(rows):
    """The comparisons among `rows` (sorted) and the lrs at which two or more of them have rows (increasing)."""
    at_lr = {}
    for r in rows:
        at_lr.setdefault(r["lr"], set()).add(comparison(r))
    return sorted({comparison(r) for r in rows}, key=str), sorted(lr for lr, found in at_lr.items() if len(found) >= 2)


def early_val_loss(doc, out):
    """Per lr that two or more models (or baseline setups) share: each arm's mean val loss over the first half of
    training, one colour per model, the baseline dashed: where an arm sits on a plateau, and for how long."""
    rows = doc.get("eval_curve", [])
    keys, lrs = comparisons_at_shared_lrs(rows)
    if not lrs:
        return Skip("no learning rate with two or more models or setups")
    fig, axes = plt.subplots(1, len(lrs), figsize=(4.2 * len(lrs), 4.6), sharey=True, squeeze=False)
    for ax, lr in zip(axes[0], lrs):
        for index, key in enumerate(keys):
            color = f"C{index % 10}"
            sel = sorted((r for r in rows if comparison(r) == key and r["lr"] == lr and 2 * r["step"] <= key[3]),
                         key=lambda r: r["step"])
            if not sel:
                continue
            suffix = key_suffix(keys, key)
            ax.plot([r["step"] for r in sel], [r["base_val_loss"] for r in sel], color=color, linestyle="--",
                    marker=".", label=key[0].upper() + suffix)
            ax.plot([r["step"] for r in sel], [r["var_val_loss"] for r in sel], color=color, marker=".",
                    label=lam_label({"lambda": key[1]}) + suffix)
        ax.set_title(f"lr {lr:g}")
        ax.set_xlabel("step")
    axes[0][0].set_ylabel("val loss (mean over seeds)")
    legend_of_all(axes, axes[0][-1])
    return save(fig, os.path.join(out, "early_val_loss.png"),
                "Val loss over the first half of training (baseline dashed)")


# (metric, axis label, log axis): the largest logit spans orders of magnitude between setups (about 10 with
# QK-norm, thousands where attention collapses), so a linear axis would flatten every bounded curve to zero.
DYNAMICS = (("max_logit", "largest attention logit (log)", True), ("attn_entropy", "attention entropy (nats)", False),
            ("attn_sink", "attention on the first position", False))


def dynamics_over_training(doc, out):
    """Per lr two or more models (or baseline setups) share: each dynamics metric (xsa-inspect's dynamics section)
    along training, the mean over layers and seeds, one colour per model, the baseline dashed."""
    rows = doc.get("dynamics", [])
    keys, lrs = comparisons_at_shared_lrs(rows)
    if not lrs:
        return Skip("no learning rate at which two or more models or setups measured the attention dynamics")
    fig, axes = plt.subplots(len(DYNAMICS), len(lrs), figsize=(4.2 * len(lrs), 3.0 * len(DYNAMICS)),
                             sharex=True, squeeze=False)
    for column, lr in enumerate(lrs):
        for row, (metric, title, log_axis) in enumerate(DYNAMICS):
            ax = axes[row][column]
            if log_axis:
                ax.set_yscale("log")
            for index, key in enumerate(keys):
                at = {}  # step -> (baseline values, variant values) over layers
                for r in rows:
                    if comparison(r) == key and r["lr"] == lr:
                        base, var = at.setdefault(r["step"], ([], []))
                        base.append(r[f"base_{metric}"])
                        var.append(r[f"var_{metric}"])
                if not at:
                    continue
                steps = sorted(at)
                suffix = key_suffix(keys, key)
                for side, style, name in ((0, "--", key[0].upper()), (1, "-", lam_label({"lambda": key[1]}))):
                    ax.plot(steps, [sum(at[s][side]) / len(at[s][side]) for s in steps], color=f"C{index % 10}",
                            linestyle=style, marker=".", label=name + suffix)
            if row == 0:
                ax.set_title(f"lr {lr:g}")
            if column == 0:
                ax.set_ylabel(title)
            if row == len(DYNAMICS) - 1:
                ax.set_xlabel("step")
    legend_of_all(axes, axes[0][-1])
    return save(fig, os.path.join(out, "dynamics_over_training.png"),
                "Attention dynamics along training, mean over layers and seeds (baseline dashed)")
