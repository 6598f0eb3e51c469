"""Figures of the per-layer bias metrics, from xsa-inspect's bias sections (results.inspect): one panel per
metric the rows carry (results.bias_metrics: the tool's keys, not a copied list), mean ± 95% CI over seeds.
  bias_init_vs_end.png  per layer: the metrics of the baseline and the variant, at initialisation (bias_init)
                        and at the end of each budget (bias)
  bias_by_depth.png     per model: SA's and the variant's final metrics against relative depth (layer / (layers
                        − 1)), at the setting most models share (the paper's Fig. 1 asks whether cos(y,v) rises
                        with depth)
"""
import os

from .. import results

from .common import Skip, baseline_name, lam_label, plt, save

# How the panels are titled, in the order they are drawn; a metric the tool adds later gets a panel after these,
# titled by its key.
TITLES = {"cos_y_v": "cos(y, v)", "cos_z_v": "cos(z, v)", "attn_diag": "a_ii", "value_cos": "value cosine"}


def panels(rows):
    """(metric key, panel title) of every bias metric the rows carry, in TITLES' order, then the others."""
    keys = set(results.bias_metrics(rows[0]))
    return [(k, TITLES[k]) for k in TITLES if k in keys] + [(k, k) for k in sorted(keys - set(TITLES))]


def bias_init_vs_end(doc, out):
    end_rows, init_rows = doc.get("bias", []), doc.get("bias_init", [])
    fixed = [r for r in end_rows if r["lambda"] == "1"] or end_rows
    if not fixed:
        return Skip("no bias metrics among the comparisons")
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
    metrics = panels(fixed)
    fig, axes = plt.subplots(1, len(metrics), figsize=(13, 3.8))
    width = 0.8 / len(bars)
    for ax, (m, title) in zip(axes, metrics):
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
    return save(fig, os.path.join(out, "bias_init_vs_end.png"),
                f"Bias metrics at init and at the end of training (T={seq_len}; mean ± 95% CI over seeds)")


def n_layers(model):
    """The layer count of a model label ("4L d192 6×32" -> 4)."""
    return int(model.split("L")[0])


def bias_by_depth(doc, out):
    rows = [r for r in doc.get("bias", []) if r["lambda"] == "1"] or doc.get("bias", [])
    models = sorted({r["model"] for r in rows}, key=lambda m: (n_layers(m), m))
    if len(models) < 2:
        return Skip("fewer than two model sizes with bias metrics")
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
        return Skip("fewer than two model sizes at one setting")
    metrics = panels(rows)
    fig, axes = plt.subplots(1, len(metrics), figsize=(14, 3.9))
    for ax, (m, title) in zip(axes, metrics):
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
    return save(fig, os.path.join(out, "bias_by_depth.png"),
                f"Bias metrics at the end of training by depth ({steps} steps, T={seq_len}, lr {lr:g}; "
                "mean ± 95% CI over seeds)")
