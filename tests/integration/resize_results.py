#!/usr/bin/env python3
"""Copies every results.json under SRC into DST as if a model of another shape had produced it (the config's
model n_layer, d_model, n_head set; the values kept), so a figure or table across model sizes can be tested
before the size sweeps have points.

usage: resize_results.py SRC DST N_LAYER D_MODEL N_HEAD
"""
import json
import os
import sys

if len(sys.argv) != 6:
    sys.exit(__doc__.strip().splitlines()[-1])
src, dst = sys.argv[1], sys.argv[2]
n_layer, d_model, n_head = (int(a) for a in sys.argv[3:])
copied = 0
for root, _, files in os.walk(src):
    if "results.json" not in files:
        continue
    with open(os.path.join(root, "results.json")) as f:
        data = json.load(f)
    data["config"]["model"].update(n_layer=n_layer, d_model=d_model, n_head=n_head)
    out = os.path.join(dst, os.path.relpath(root, src))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(data, f)
    copied += 1
if not copied:
    sys.exit(f"resize_results: {src}: no results.json")
