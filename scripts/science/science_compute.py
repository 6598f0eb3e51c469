#!/usr/bin/env python3
"""Compute the science sweeps have used so far, from the committed results (docs/findings.md).

Usage: scripts/science/science_compute.py [RESULTS_DIR]   (default: the repository's results/)

One row per sweep folder with finished points (folders holding results.json): points, training runs (one per
variant), training tokens (steps × batch × seq_len per run), the runs' summed wall time (each run's
timing.wall_s; a sweep runs one point per worker and one variant at a time, so this is the lane time) and the
median of the runs' training throughput. A total row follows. Standard library only.
"""
import os
import pathlib
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/: the xsapy package
from xsapy import user_input  # noqa: E402  (a user-named file read, or one line and exit 2)
from xsapy.user_input import InputError, check, load_json, need  # noqa: E402


def fail(message):
    user_input.fail("science_compute", message)


def run_tokens(config, where):
    """steps × batch × seq_len of one run, or None when the config lacks one of them; a value of another kind
    (a string, null, NaN), a negative one or a product beyond a float's range is bad input."""
    product = 1
    for section, key in (("train", "steps"), ("train", "batch_size"), ("data", "seq_len")):
        part = check(config, f"{where}: config", "object").get(section)
        if part is None or key not in check(part, f"{where}: config.{section}", "object"):
            return None
        product *= int(check(part[key], f"{where}: config.{section}.{key}", "number", at_least=0))
    if not user_input.is_finite(product):  # finite factors, but the table divides the sum by 1e6 as a float
        raise InputError(f"{where}: config: train.steps × train.batch_size × data.seq_len is beyond a float's range")
    return product


def read_point(f):
    """(runs, tokens, wall seconds, [tokens/s]) of one results.json, or an InputError naming it and the key (a
    negative wall time or rate too: the totals would go negative)."""
    doc = load_json(str(f), "a results.json")
    if not isinstance(doc, dict):
        raise InputError(f"{f}: expected a results.json (a JSON object), got {user_input.json_type(doc)}")
    per_run = run_tokens(doc.get("config", {}), f)
    runs, tokens, wall, speeds = 0, 0, 0.0, []
    for i, run in enumerate(need(doc, "runs", str(f), "array")):
        where = f"{f}: runs[{i}]"
        timing = check(check(run, where, "object").get("timing") or {}, where + ".timing", "object")
        runs += 1
        tokens += per_run or 0
        wall += float(check(timing.get("wall_s", 0.0), where + ".timing.wall_s", "number", at_least=0))
        if check(timing.get("tokens_per_s"), where + ".timing.tokens_per_s", "number", nullable=True, at_least=0):
            speeds.append(float(timing["tokens_per_s"]))
    return runs, tokens, wall, speeds


def main():
    ap = user_input.ArgumentParser("science_compute", description=__doc__.split("\n")[0])
    root = pathlib.Path(__file__).resolve().parents[2]  # the repository, two folders up
    ap.add_argument("results", nargs="?", default=str(root / "results"), help="folder of sweep folders")
    args = ap.parse_args()
    top = pathlib.Path(args.results)
    if not top.exists():
        fail(f"{top}: no such folder")
    if not top.is_dir():
        fail(f"{top}: not a folder (expected a folder of sweep folders)")
    rows = []
    try:
        sweeps = sorted(p for p in top.iterdir() if p.is_dir())
    except OSError as e:
        fail(f"{top}: cannot list folder ({e.strerror or e})")
    for sweep in sweeps:
        try:
            files = sorted(sweep.glob("*/results.json"))
        except OSError as e:
            fail(f"{sweep}: cannot list folder ({e.strerror or e})")
        if not files:
            continue
        runs, tokens, wall, speeds = 0, 0, 0.0, []
        for f in files:
            try:
                r, t, w, s = read_point(f)
            except InputError as e:
                fail(e)
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:  # the last line of defence
                fail(f"{f}: not a results.json ({type(e).__name__} {e})")
            runs, tokens, wall = runs + r, tokens + t, wall + w
            speeds += s
        rows.append((sweep.name, len(files), runs, tokens, wall, statistics.median(speeds) if speeds else None))
    if not rows:
        fail(f"{top}: no finished points (no */results.json)")
    total = [sum(r[i] for r in rows) for i in (1, 2, 3, 4)]
    printed = total + [x for r in rows for x in r[3:] if x is not None]
    if not all(user_input.is_finite(x) for x in printed):
        # every value was finite, but their sums (or a median of huge rates) are not: no table of "inf"
        fail(f"{top}: the tokens, wall times or rates sum beyond a float's range (implausibly large values)")
    print("| sweep | points | runs | training tokens | run wall time (h) | median tokens/s per run |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, points, runs, tokens, wall, speed in rows:
        print(f"| {name} | {points} | {runs} | {tokens / 1e6:.1f}M | {wall / 3600:.2f} | "
              f"{'—' if speed is None else f'{speed:,.0f}'} |")
    print(f"| total | {total[0]} | {total[1]} | {total[2] / 1e6:.1f}M | {total[3] / 3600:.2f} | |")
    return 0


if __name__ == "__main__":
    user_input.run("science_compute", main)
