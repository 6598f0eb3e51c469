#!/usr/bin/python3
"""Sums a LibTorch chrome trace (xsa-bench --profile) by operator: self time is not separated, so
nested ops (e.g. aten::linear -> aten::matmul -> aten::mm) each show their inclusive time.

Usage: scripts/perf/profile_summary.py TRACE.json [TOP]   (the TOP operators by time: a positive integer, default 30)
Exit code 2 with one line on bad input."""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/: the xsapy package
from xsapy import user_input  # noqa: E402  (a user-named file read, or one line and exit 2)
from xsapy.user_input import InputError, check, need  # noqa: E402

WHAT = "a chrome trace (xsa-bench --profile)"


def summarise(path):
    """{name: inclusive ms}, {name: calls} of the trace's complete events ("ph": "X")."""
    events = user_input.load_json(path, WHAT)
    prefix = "traceEvents" if isinstance(events, dict) else ""
    if isinstance(events, dict):
        events = need(events, "traceEvents", path, "array")
    elif not isinstance(events, list):
        raise InputError(f"{path}: expected {WHAT}: an array of events or an object with traceEvents, "
                         f"got {user_input.json_type(events)}")
    total = defaultdict(float)
    count = defaultdict(int)
    for i, e in enumerate(events):
        where = f"{path}: {prefix}[{i}]"
        if check(e, where, "object").get("ph") == "X":
            name = need(e, "name", where, "string")
            total[name] += check(e.get("dur", 0), where + ".dur", "number") / 1000.0
            count[name] += 1
    if not all(user_input.is_finite(ms) for ms in total.values()):  # finite durations whose sum is not
        raise InputError(f"{path}: the durations of an operator sum beyond a float's range (implausibly large dur)")
    return total, count


def main():
    ap = user_input.ArgumentParser("profile_summary", description=__doc__.split("\n")[0])
    ap.add_argument("trace", help="the chrome trace JSON file")
    ap.add_argument("top", nargs="?", type=int, default=30, help="how many operators to list (default 30)")
    args = ap.parse_args()
    if args.top < 1:  # a negative TOP would drop the last operators, 0 print an empty table
        ap.error(f"top {args.top}: expected a positive integer (how many operators to list)")
    try:
        total, count = summarise(args.trace)
    except InputError as e:
        user_input.fail("profile_summary", e)
    top = sorted(total.items(), key=lambda kv: -kv[1])[: args.top]
    print("| op | calls | inclusive ms |\n|---|---|---|")
    for name, ms in top:
        print(f"| {name} | {count[name]} | {ms:.1f} |")
    return 0


if __name__ == "__main__":
    user_input.run("profile_summary", main)
