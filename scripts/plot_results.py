#!/usr/bin/python3
"""Plots for xsa results (schema xsa.results/1): the same inputs as xsa-inspect.

Usage: scripts/plot_results.py PATH... --out DIR

PATH is a results.json file or a folder searched recursively for results.json (a sweep folder, shards
included). Writes into DIR:
  loss_curves.png            val loss (solid, from "eval") and train loss (dashed, from log.jsonl next to
                             results.json) per variant, averaged over experiments with the same seq_len
  improvement_vs_lambda.png  mean improvement % vs λ with 95% Student t CI bars over seeds, per seq_len
  improvement_vs_seq_len.png mean improvement % vs seq_len with 95% CI bars, per λ
The two improvement plots draw xsa-inspect's by_seq_len section (--format json; --inspect names the
executable, default build/xsa-inspect): the tables' own grouping, repeated-run handling and Student t CIs, so
a plot's bar is the table's interval. The curves come from results.json (and log.jsonl) directly.
  bias_over_training.png     cos(y,v) (solid) and cos(z,v) (dashed) vs step per layer and variant
A plot whose data is absent is skipped with a printed note. Exit code 2 with one line on bad input.

Uses Debian's python3-matplotlib (run with /usr/bin/python3; a pyenv python3 may lack matplotlib).
"""
import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict

try:
    import matplotlib
except ImportError:  # e.g. a pyenv python3 first on PATH: one line, not a traceback
    sys.exit("plot_results.py: error: %s has no matplotlib; run /usr/bin/python3 scripts/plot_results.py "
             "(Debian's python3-matplotlib; apt-get install python3-matplotlib)" % sys.executable)

matplotlib.use("Agg")  # headless: no display on compute nodes
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import user_input  # noqa: E402  (scripts/user_input.py: a user-named file read, or one line and exit 2)
from user_input import InputError, check, need  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = "xsa.results/1"
# The per-layer bias metrics of results.json (src/xsa/report/bias_metrics.h: kBiasMetrics), key and label.
BIAS_METRICS = (("cos_y_v", "cos(y,v)"), ("cos_z_v", "cos(z,v)"), ("attn_diag", "attn_diag"),
                ("value_cos", "value_cos"))


# ---- reading -----------------------------------------------------------------------------------------

def load_results(path):
    """A results.json, its fields the plots read checked (an InputError naming the file and the field)."""
    doc = user_input.load_json(path, "a results.json")
    if not isinstance(doc, dict):
        raise InputError("%s: expected a results.json (a JSON object), got %s" % (path, user_input.json_type(doc)))
    if doc.get("schema") != SCHEMA:
        raise InputError('%s: key schema: expected "%s"' % (path, SCHEMA))
    config = need(doc, "config", path, "object")
    seq_len = int(need(need(config, "data", path + ": config", "object"), "seq_len", path + ": config.data",
                       "number"))
    for i, run in enumerate(need(doc, "runs", path, "array")):
        check_run(run, "%s: runs[%d]" % (path, i))
    doc["_seq_len"] = seq_len
    doc["_path"] = path
    doc["_log"] = read_log(os.path.join(os.path.dirname(path), "log.jsonl"))
    return doc


def check_run(run, where):
    """The keys the plots read, each of the kind they use, so a renamed or mistyped field is one clear line
    instead of a KeyError or TypeError deep inside (with some plots already written)."""
    need(run, "variant", where, "string")
    need(need(run, "final", where, "object"), "val_loss", where + ".final")
    for i, point in enumerate(check(run.get("eval") or [], where + ".eval", "array")):
        for key in ("step", "val_loss"):
            need(point, key, "%s.eval[%d]" % (where, i), "number")
    for i, point in enumerate(check(run.get("bias") or [], where + ".bias", "array")):
        need(point, "step", "%s.bias[%d]" % (where, i), "number")
        for j, layer in enumerate(need(point, "layers", "%s.bias[%d]" % (where, i), "array")):
            need(layer, "layer", "%s.bias[%d].layers[%d]" % (where, i, j), "integer")
            for key, _ in BIAS_METRICS:
                need(layer, key, "%s.bias[%d].layers[%d]" % (where, i, j), "number")


def read_log(path):
    """{run: [(step, loss)]} from log.jsonl; a missing file or odd lines (not JSON, not UTF-8, nested too deeply,
    without a numeric step and loss) are skipped (the log is optional). A log.jsonl that is there but is no
    regular file (a FIFO would block the read) or cannot be read is bad input."""
    out = defaultdict(list)
    if not os.path.exists(path):  # missing, or a link to nothing
        return out
    for line in user_input.read_bytes(path).splitlines():
        try:
            rec = json.loads(line)
            step, loss = rec["step"], rec["loss"]
            check(step, path, "number")
            check(loss, path, "number")
            out[rec["run"]].append((step, loss))
        except (ValueError, KeyError, TypeError, RecursionError, InputError):
            continue
    return out


def discover(paths):
    files = []
    for p in paths:
        if not os.path.exists(p):
            raise InputError("%s: no such file or folder" % p)
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                if "results.json" in names:
                    files.append(os.path.join(root, "results.json"))
        else:
            files.append(p)
    unique = sorted({os.path.realpath(f): f for f in files}.values())
    if not unique:
        raise InputError("%s: no results.json found" % ", ".join(paths))
    return [load_results(f) for f in unique]


# ---- plots -------------------------------------------------------------------------------------------

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


def plot_loss_curves(experiments, out):
    val, train = defaultdict(list), defaultdict(list)
    for e in experiments:
        for run in e["runs"]:
            key = (e["_seq_len"], run["variant"])
            if run.get("eval"):
                val[key].append([(p["step"], p["val_loss"]) for p in run["eval"]])
            if e["_log"].get(run["variant"]):
                train[key].append(e["_log"][run["variant"]])
    if not val and not train:
        return "no eval points in results.json and no log.jsonl"
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
    return save_figure(fig, os.path.join(out, "loss_curves.png"),
                       "Train (dashed) and validation (solid) loss, mean over seeds")


def inspect_rows(exe, paths, section):
    """The rows of one xsa-inspect section (--format json): the tables' own numbers, grouping and CIs."""
    try:
        proc = subprocess.run([exe, *paths, "--format", "json", "--section", section], capture_output=True,
                              text=True, errors="replace")
    except OSError as e:
        raise InputError("%s: cannot run xsa-inspect (%s); build it (scripts/build.sh) or pass --inspect" % (exe, e))
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
        raise InputError("xsa-inspect: " + last.replace("xsa-inspect: error: ", "", 1))
    try:
        return check(json.loads(proc.stdout)[section], section, "array")
    except (ValueError, KeyError, TypeError, InputError) as e:
        raise InputError("%s: unexpected output of --format json --section %s (%s)" % (exe, section, e))


def is_number(label):
    try:
        float(label)
        return True
    except ValueError:
        return False


def errorbar_rows(ax, rows, x, label, shift):
    """Mean improvement ± its 95% CI (xsa-inspect's) per row, in x order; n = 1 has no interval and gets no bar."""
    rows = sorted(rows, key=x)
    means = [r["mean_improvement_pct"] for r in rows]
    low = [r["mean_improvement_pct"] - r["improvement_ci_low"] if r["improvement_ci_low"] is not None else 0.0
           for r in rows]
    high = [r["improvement_ci_high"] - r["mean_improvement_pct"] if r["improvement_ci_high"] is not None else 0.0
            for r in rows]
    ax.errorbar([shift(x(r)) for r in rows], means, yerr=[low, high], fmt="o-", capsize=4, label=label)


def series(rows, key, x):
    """Rows grouped into plot lines by key(row); where a line would hold two rows at one x (another batch size
    or budget at the same length), the batch size and steps join the key."""
    lines = defaultdict(list)
    for r in rows:
        lines[key(r)].append(r)
    if any(len({x(r) for r in rs}) < len(rs) for rs in lines.values()):
        lines = defaultdict(list)
        for r in rows:
            lines[key(r) + ("batch %d, %d steps" % (r["batch_size"], r["steps"]),)].append(r)
    return lines


def plot_improvement_vs_lambda(rows, out):
    rows = [r for r in rows if is_number(r["lambda"])]
    lambdas = sorted({float(r["lambda"]) for r in rows})
    if len(lambdas) < 2:
        return "fewer than two fixed λ values among the comparisons"
    x = lambda r: float(r["lambda"])  # noqa: E731
    lines = series(rows, lambda r: ("seq_len %d" % r["seq_len"],), x)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    step = 0.015 * (lambdas[-1] - lambdas[0])
    for i, key in enumerate(sorted(lines)):
        dodge = (i - (len(lines) - 1) / 2) * step
        errorbar_rows(ax, lines[key], x, ", ".join(key), lambda v, d=dodge: v + d)
    ax.axhline(0, color="gray", lw=0.8)
    return save_improvement_plot(fig, ax, "λ", "Improvement vs λ", os.path.join(out, "improvement_vs_lambda.png"))


def save_improvement_plot(fig, ax, xlabel, title, path):
    """Labels, legend and file for the improvement-with-CI plots (vs λ, vs sequence length)."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel("improvement over baseline (%)")
    ax.set_title(title + " (mean, 95% t CI over seeds)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def save_figure(fig, path, suptitle=None):
    """Title, layout, PNG file, and the figure's memory back; None = "written" for main()."""
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    with user_input.replacing(path) as tmp:  # a reader never sees a half-written PNG
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    return None


def plot_improvement_vs_seq_len(rows, out):
    seq_lens = sorted({r["seq_len"] for r in rows})
    if len(seq_lens) < 2:
        return "fewer than two sequence lengths among the comparisons"
    x = lambda r: r["seq_len"]  # noqa: E731
    lines = series(rows, lambda r: ("λ=" + r["lambda"] if is_number(r["lambda"]) else r["lambda"],), x)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    keys = sorted(lines, key=lambda k: (not k[0].startswith("λ="), k))
    for i, key in enumerate(keys):
        factor = 2 ** ((i - (len(keys) - 1) / 2) * 0.03)  # multiplicative dodge on the log axis
        errorbar_rows(ax, lines[key], x, ", ".join(key), lambda v, f=factor: v * f)
    ax.axhline(0, color="gray", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xticks(seq_lens)
    ax.set_xticklabels([str(n) for n in seq_lens])
    ax.minorticks_off()
    return save_improvement_plot(fig, ax, "sequence length", "Improvement vs sequence length",
                                 os.path.join(out, "improvement_vs_seq_len.png"))


COSINES = ("cos_y_v", "cos_z_v")  # the two of BIAS_METRICS plotted: before and after the projection


def plot_bias(experiments, out):
    curves = defaultdict(lambda: defaultdict(list))  # (layer) -> (seq_len, variant, metric) -> [curve]
    for e in experiments:
        for run in e["runs"]:
            per_layer = defaultdict(lambda: {m: [] for m in COSINES})
            for point in run.get("bias") or []:
                for layer in point["layers"]:
                    for metric in COSINES:
                        per_layer[layer["layer"]][metric].append((point["step"], layer[metric]))
            for layer, metrics in per_layer.items():
                for metric, curve in metrics.items():
                    curves[layer][(e["_seq_len"], run["variant"], metric)].append(curve)
    if not curves:
        return "no bias metrics in the results"
    layers = sorted(curves)
    many = len({k[0] for layer in layers for k in curves[layer]}) > 1
    fig, axes = plt.subplots(1, len(layers), figsize=(5.5 * len(layers), 4.5), squeeze=False, sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    series = sorted({k[:2] for layer in layers for k in curves[layer]})
    for ax, layer in zip(axes[0], layers):
        for i, (seq_len, variant) in enumerate(series):
            color = colors[i % len(colors)]
            label = series_label(variant, seq_len, many)
            pre, post = (curves[layer].get((seq_len, variant, m)) for m in COSINES)
            for metric, style in zip(COSINES, ("o-", "x--")):
                key = (seq_len, variant, metric)
                # SA has z = y: its dashed line would only hide the solid one and double the legend.
                if metric == COSINES[1] and post == pre:
                    continue
                if key in curves[layer]:
                    ax.plot(*average_curves(curves[layer][key]), style, color=color,
                            label="%s %s" % (label, dict(BIAS_METRICS)[metric]))
        ax.set_title("layer %d" % layer)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("cosine (mean over heads, positions)")
    axes[0][-1].legend(fontsize=7)
    return save_figure(fig, os.path.join(out, "bias_over_training.png"),
                       "Attention similarity bias: cos(y,v) before (solid) and cos(z,v) after (dashed) the projection")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", help="results.json files or folders (searched recursively)")
    parser.add_argument("--out", required=True, help="folder for the PNG files (created if missing)")
    parser.add_argument("--inspect", default=os.path.join(ROOT, "build", "xsa-inspect"),
                        help="the xsa-inspect executable whose by_seq_len section the improvement plots draw")
    args = parser.parse_args(argv)
    try:
        experiments = discover(args.paths)
        comparison_rows = inspect_rows(args.inspect, args.paths, "by_seq_len")
        user_input.ensure_folder(args.out, "--out folder")
    except InputError as e:
        print("plot_results.py: error: %s" % user_input.one_line(e), file=sys.stderr)
        return 2
    plots = (("loss_curves.png", plot_loss_curves), ("improvement_vs_lambda.png", plot_improvement_vs_lambda),
             ("improvement_vs_seq_len.png", plot_improvement_vs_seq_len), ("bias_over_training.png", plot_bias))
    for name, fn in plots:
        data = comparison_rows if fn in (plot_improvement_vs_lambda, plot_improvement_vs_seq_len) else experiments
        try:
            skipped = fn(data, args.out)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError) as e:
            # The last line of defence: the inputs were checked field by field, so this is a value no check foresaw.
            print("plot_results.py: error: %s: cannot draw %s (%s: %s)" % (
                ", ".join(args.paths), name, type(e).__name__, user_input.one_line(e)), file=sys.stderr)
            return 2
        if skipped:
            print("skipped %s: %s" % (name, skipped))
        else:
            print("wrote %s" % os.path.join(args.out, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
