"""Figures along training, from the results.json files and their log.jsonl (results.experiments(paths,
logs=True)): no xsa-inspect section holds the per-step points (its eval_curve is the paired Δ, its bias sections
the first and last measurement), so these two read the files, found by xsa-inspect's own discovery rule.
  loss_curves.png         val loss (solid, from "eval") and train loss (dashed, from log.jsonl) per variant,
                          averaged over experiments with the same seq_len; one panel per seq_len
  bias_over_training.png  cos(y,v) (solid) and cos(z,v) (dashed) vs step per layer and variant
"""
import os
from collections import defaultdict

from ..user_input import need

from .common import Skip, plt, save

# The two bias metrics drawn, before and after the projection, with their legend labels (results.read_results
# checked that every layer has its file's metrics; check() below that these two are among them).
COSINES = (("cos_y_v", "cos(y,v)"), ("cos_z_v", "cos(z,v)"))


def check(experiments):
    """The fields these figures read beyond those results.read_results checks: the two cosines of every layer
    (an InputError naming the file and the field, before any figure is written)."""
    for e in experiments:
        for i, run in enumerate(e.doc["runs"]):
            for j, point in enumerate(run.get("bias") or []):
                for k, layer in enumerate(point["layers"]):
                    for key, _ in COSINES:
                        need(layer, key, f"{e.path}: runs[{i}].bias[{j}].layers[{k}]", "number")


def average_curves(curves):
    """Mean over curves of (step, value) pairs, step by step."""
    by_step = defaultdict(list)
    for curve in curves:
        for step, value in curve:
            by_step[step].append(value)
    steps = sorted(by_step)
    return steps, [sum(by_step[s]) / len(by_step[s]) for s in steps]


def series_label(variant, seq_len, many_seq_lens):
    return "%s, seq_len %d" % (variant, seq_len) if many_seq_lens else variant


def loss_curves(experiments, out):
    val, train = defaultdict(list), defaultdict(list)
    for e in experiments:
        log = e.log or {}
        for run in e.doc["runs"]:
            key = (e.seq_len, run["variant"])
            if run.get("eval"):
                val[key].append([(p["step"], p["val_loss"]) for p in run["eval"]])
            if log.get(run["variant"]):
                train[key].append(log[run["variant"]])
    if not val and not train:
        return Skip("no eval points in results.json and no log.jsonl")
    # One panel per sequence length: losses at different context lengths are not comparable on one axis.
    seq_lens = sorted({k[0] for k in list(val) + list(train)})
    fig, axes = plt.subplots(1, len(seq_lens), figsize=(7 * len(seq_lens), 4.8), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    variants = sorted({k[1] for k in list(val) + list(train)})
    for ax, seq_len in zip(axes[0], seq_lens):
        for i, variant in enumerate(variants):
            color, key = colors[i % len(colors)], (seq_len, variant)
            if key in train:
                ax.plot(*average_curves(train[key]), "--", color=color, alpha=0.7, label=variant + " (train)")
            if key in val:
                ax.plot(*average_curves(val[key]), "o-", color=color, label=variant + " (val)")
        ax.set_title("seq_len %d" % seq_len)
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.set_yscale("log")  # the early drop dwarfs the late differences between variants otherwise
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    return save(fig, os.path.join(out, "loss_curves.png"), "Train (dashed) and validation (solid) loss, mean over seeds")


def bias_over_training(experiments, out):
    cosines = [key for key, _ in COSINES]
    curves = defaultdict(lambda: defaultdict(list))  # (layer) -> (seq_len, variant, metric) -> [curve]
    for e in experiments:
        for run in e.doc["runs"]:
            per_layer = defaultdict(lambda: {m: [] for m in cosines})
            for point in run.get("bias") or []:
                for layer in point["layers"]:
                    for metric in cosines:
                        per_layer[layer["layer"]][metric].append((point["step"], layer[metric]))
            for layer, metrics in per_layer.items():
                for metric, curve in metrics.items():
                    curves[layer][(e.seq_len, run["variant"], metric)].append(curve)
    if not curves:
        return Skip("no bias metrics in the results")
    layers = sorted(curves)
    many = len({k[0] for layer in layers for k in curves[layer]}) > 1
    fig, axes = plt.subplots(1, len(layers), figsize=(5.5 * len(layers), 4.5), squeeze=False, sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    series = sorted({k[:2] for layer in layers for k in curves[layer]})
    for ax, layer in zip(axes[0], layers):
        for i, (seq_len, variant) in enumerate(series):
            color = colors[i % len(colors)]
            label = series_label(variant, seq_len, many)
            pre, post = (curves[layer].get((seq_len, variant, m)) for m in cosines)
            for (metric, name), style in zip(COSINES, ("o-", "x--")):
                key = (seq_len, variant, metric)
                # SA has z = y: its dashed line would only hide the solid one and double the legend.
                if metric == cosines[1] and post == pre:
                    continue
                if key in curves[layer]:
                    ax.plot(*average_curves(curves[layer][key]), style, color=color, label="%s %s" % (label, name))
        ax.set_title("layer %d" % layer)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("cosine (mean over heads, positions)")
    axes[0][-1].legend(fontsize=7)
    return save(fig, os.path.join(out, "bias_over_training.png"),
                "Attention similarity bias: cos(y,v) before (solid) and cos(z,v) after (dashed) the projection")
