#!/usr/bin/python3
"""Sums a LibTorch chrome trace (xsa-bench --profile) by operator: self time is not separated, so
nested ops (e.g. aten::linear -> aten::matmul -> aten::mm) each show their inclusive time."""
import json
import sys
from collections import defaultdict

events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
total = defaultdict(float)
count = defaultdict(int)
for e in events:
    if e.get("ph") == "X":
        total[e["name"]] += e.get("dur", 0) / 1000.0
        count[e["name"]] += 1
top = sorted(total.items(), key=lambda kv: -kv[1])[: int(sys.argv[2]) if len(sys.argv) > 2 else 30]
print("| op | calls | inclusive ms |\n|---|---|---|")
for name, ms in top:
    print(f"| {name} | {count[name]} | {ms:.1f} |")
