#!/usr/bin/python3
"""Checks the outputs of schema_e2e.sh against results.json read independently, key by key.

The keys below are the schema as docs/guide.md documents it ("results.json", "log.jsonl", sweep summaries);
they are spelled out here on purpose, apart from the C++ schema, so a field renamed in the writer fails.
Usage: check_schema_e2e.py WORK_DIR
"""
import csv
import io
import json
import math
import os
import sys

TOP = {"schema", "name", "config", "version", "environment", "data", "runs", "comparisons"}
ENVIRONMENT = {"threads", "blas", "blas_threads", "workers", "host_cores", "peak_rss_mib", "wall_s"}
DATA = {"dir", "vocab_size", "train_tokens", "val_tokens", "tokenizer_sha256"}
RUN = {"variant", "lambda", "variant_spec", "layers", "label", "seed", "init_checksum", "eval", "train_loss", "final",
       "bias", "samples", "timing"}
FINAL = {"val_loss", "val_loss_sem", "eval_tokens", "eval_windows", "train_loss", "loss_by_position"}
BUCKET = {"first", "last", "tokens", "loss"}
TIMING = {"wall_s", "train_s", "tokens_per_s", "step_ms_median"}
LAYER = {"layer", "cos_y_v", "cos_z_v", "attn_diag", "value_cos"}
COMPARISON = {"baseline", "variant", "delta_val_loss", "delta_val_loss_sem", "improvement_pct"}
LOG = {"run", "step", "loss", "lr", "grad_norm", "ms"}
PNGS = ("loss_curves", "improvement_vs_lambda", "improvement_vs_seq_len", "bias_over_training")

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def has_keys(obj, keys, where):
    missing = sorted(keys - set(obj))
    check(not missing, "%s: missing %s" % (where, ", ".join(missing)))


def close(a, b, rel=1e-12):
    return math.isclose(a, b, rel_tol=rel, abs_tol=rel)


def read_results(work):
    out = {}
    for root, _, names in os.walk(work):
        if "results.json" in names:
            path = os.path.join(root, "results.json")
            with open(path) as f:
                out[os.path.basename(root)] = (path, json.load(f))
    return out


def check_results(label, path, doc):
    has_keys(doc, TOP, path)
    check(doc["schema"] == "xsa.results/1", path + ": schema")
    has_keys(doc["environment"], ENVIRONMENT, path + " environment")
    has_keys(doc["data"], DATA, path + " data")
    for i, run in enumerate(doc["runs"]):
        where = "%s runs[%d]" % (path, i)
        has_keys(run, RUN, where)
        has_keys(run["final"], FINAL, where + ".final")
        for b in run["final"].get("loss_by_position", []):
            has_keys(b, BUCKET, where + ".final.loss_by_position")
        # The buckets tile positions 1..T (T = 16: 1-16; T = 32: 1-16, 17-32) over every final-eval window.
        T, windows = doc["config"]["data"]["seq_len"], run["final"]["eval_windows"]
        check([(b["first"], b["last"], b["tokens"]) for b in run["final"].get("loss_by_position", [])]
              == [(1, 16, windows * 16)] + ([(17, 32, windows * 16)] if T == 32 else []),
              where + ": loss_by_position buckets")
        has_keys(run["timing"], TIMING, where + ".timing")
        check(run["eval"] and {"step", "val_loss"} <= set(run["eval"][0]), where + ".eval")
        check(run["train_loss"] and {"step", "loss"} <= set(run["train_loss"][0]), where + ".train_loss")
        for point in run["bias"]:
            for layer in point["layers"]:
                has_keys(layer, LAYER, where + ".bias layer")
                if run["variant_spec"]["kind"] != "fixed":
                    check("lambda_per_head" in layer, where + ": learned/gate bias without lambda_per_head")
    for c in doc["comparisons"]:
        has_keys(c, COMPARISON, path + " comparison")
    with open(os.path.join(os.path.dirname(path), "log.jsonl")) as f:
        for line in f:
            has_keys(json.loads(line), LOG, path + " log.jsonl line")


def check_inspect(work, results):
    with open(os.path.join(work, "inspect.json")) as f:
        tables = json.load(f)
    check(tables.get("schema") == "xsa.inspect/1", "inspect json schema")
    paired = {(r["experiment"], r["variant"]): r for r in tables["paired"]}
    check(len(paired) == sum(len(d["runs"]) for _, d in results.values()), "inspect paired: one row per run")
    for label, (path, doc) in results.items():
        comps = {c["variant"]: c for c in doc["comparisons"]}
        for run in doc["runs"]:
            row = paired.get((label, run["variant"]))
            check(row is not None, "inspect paired: no row for %s %s" % (label, run["variant"]))
            if row is None:
                continue
            check(close(row["val_loss"], run["final"]["val_loss"]), "val_loss of %s %s" % (label, run["variant"]))
            check(close(row["val_loss_sem"], run["final"]["val_loss_sem"]), "val_loss_sem %s" % label)
            check(row["seq_len"] == doc["config"]["data"]["seq_len"], "seq_len %s" % label)
            if run["variant"] in comps:
                c = comps[run["variant"]]
                check(close(row["delta_val_loss"], c["delta_val_loss"]), "delta %s %s" % (label, run["variant"]))
                check(close(row["improvement_pct"], c["improvement_pct"]), "improvement %s" % label)
    # Bias table: the variant's final cos(y,v) per layer, mean over the experiments of its group.
    for row in tables["bias"]:
        values = []
        for label, (path, doc) in results.items():
            if doc["config"]["data"]["seq_len"] != row["seq_len"]:
                continue
            for run in doc["runs"][1:]:
                if run["label"] == row["lambda"]:  # the label xsa-train wrote is what the tables group by
                    values += [l["cos_y_v"] for l in run["bias"][-1]["layers"] if l["layer"] == row["layer"]]
        check(values and close(row["var_cos_y_v"], sum(values) / len(values)),
              "bias table var_cos_y_v for %s" % row)
    # Loss by position: per length, λ and bucket, the variant − sa difference of each seed (one pair per seed
    # here), averaged over seeds.
    check(len(tables["loss_by_position"]) == 3 * 2 + 2 * 1,  # T=32: xsa, 0.5, learned × 2 buckets; T=16: xsa, 0.5
          "loss_by_position: %d rows" % len(tables["loss_by_position"]))
    for row in tables["loss_by_position"]:
        deltas = []
        for label, (path, doc) in results.items():
            if doc["config"]["data"]["seq_len"] != row["seq_len"]:
                continue
            base = {(b["first"], b["last"]): b["loss"] for b in doc["runs"][0]["final"]["loss_by_position"]}
            for run in doc["runs"][1:]:
                if run["label"] == row["lambda"]:
                    deltas += [b["loss"] - base[(b["first"], b["last"])] for b in run["final"]["loss_by_position"]
                               if (b["first"], b["last"]) == (row["first"], row["last"])]
        check(deltas and row["n"] == len(deltas) and close(row["mean_delta"], sum(deltas) / len(deltas), 1e-9),
              "loss_by_position mean_delta for %s" % row)
    # CSV carries the same paired numbers; markdown names every experiment.
    with open(os.path.join(work, "inspect.csv")) as f:
        text = f.read()
    block = text.split("\n\n")[0]
    rows = [r for r in csv.DictReader(io.StringIO(block)) if r.get("section") == "paired"]
    check(len(rows) == len(paired), "inspect csv: paired rows")
    for r in rows:
        # CSV keeps 10 significant digits.
        check(close(float(r["val_loss"]), paired[(r["experiment"], r["variant"])]["val_loss"], 1e-9), "csv val_loss")
    with open(os.path.join(work, "inspect.markdown")) as f:
        md = f.read()
    for label in results:
        check(label in md, "inspect markdown lacks " + label)


def main(work):
    results = read_results(work)
    check(len(results) == 5, "expected 5 results.json (1 run + 4 sweep points), found %d" % len(results))
    for label, (path, doc) in results.items():
        check_results(label, path, doc)
    with open(os.path.join(work, "sweeps/grid/summary.json")) as f:
        summary = json.load(f)
    check(summary["schema"] == "xsa.sweep/1" and summary["counts"]["done"] == 4, "sweep summary")
    check_inspect(work, results)
    for name in PNGS:
        with open(os.path.join(work, "figs", name + ".png"), "rb") as f:
            check(f.read(4)[1:] == b"PNG", name + ".png is not a PNG")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
