#!/usr/bin/env python3
"""Compute the science sweeps have used so far, from the committed results (README "Findings").

Usage: scripts/science_compute.py [RESULTS_DIR]   (default: the repository's results/)

One row per sweep folder with finished points (folders holding results.json): points, training runs (one per
variant), training tokens (steps × batch × seq_len per run), the runs' summed wall time (each run's
timing.wall_s; a sweep runs one point per worker and one variant at a time, so this is the lane time) and the
median of the runs' training throughput. A total row follows. Standard library only.
"""
import argparse
import json
import pathlib
import statistics
import sys


def fail(message):
    print(f"science_compute: error: {message}", file=sys.stderr)
    sys.exit(2)


def run_tokens(config):
    try:
        return int(config["train"]["steps"]) * int(config["train"]["batch_size"]) * int(config["data"]["seq_len"])
    except (KeyError, TypeError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = pathlib.Path(__file__).resolve().parent.parent
    ap.add_argument("results", nargs="?", default=str(root / "results"), help="folder of sweep folders")
    args = ap.parse_args()
    top = pathlib.Path(args.results)
    if not top.is_dir():
        fail(f"{top}: no such folder")
    rows = []
    for sweep in sorted(p for p in top.iterdir() if p.is_dir()):
        files = sorted(sweep.glob("*/results.json"))
        if not files:
            continue
        runs, tokens, wall, speeds = 0, 0, 0.0, []
        for f in files:
            try:
                doc = json.loads(f.read_text(encoding="utf-8"))
                per_run = run_tokens(doc.get("config", {}))
                for run in doc["runs"]:
                    runs += 1
                    tokens += per_run or 0
                    timing = run.get("timing") or {}
                    wall += float(timing.get("wall_s", 0.0))
                    if timing.get("tokens_per_s"):
                        speeds.append(float(timing["tokens_per_s"]))
            except (OSError, ValueError, KeyError, TypeError) as e:
                fail(f"{f}: {e}")
        rows.append((sweep.name, len(files), runs, tokens, wall, statistics.median(speeds) if speeds else None))
    if not rows:
        fail(f"{top}: no finished points (no */results.json)")
    print("| sweep | points | runs | training tokens | run wall time (h) | median tokens/s per run |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, points, runs, tokens, wall, speed in rows:
        print(f"| {name} | {points} | {runs} | {tokens / 1e6:.1f}M | {wall / 3600:.2f} | "
              f"{'—' if speed is None else f'{speed:,.0f}'} |")
    total = [sum(r[i] for r in rows) for i in (1, 2, 3, 4)]
    print(f"| total | {total[0]} | {total[1]} | {total[2] / 1e6:.1f}M | {total[3] / 3600:.2f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
