#!/usr/bin/env python3
"""xsa-train's TensorBoard event files, read by an independent decoder.

The decoder is not xsa's code: the messages come from a .proto of just the fields xsa writes (the same field
numbers as tensorflow/core/util/event.proto and summary.proto), compiled here by Debian's protoc and read
with python3-protobuf; every record's two CRCs are checked with python3-crcmod's CRC-32C.

Checked on a real paired run (sa, xsa, learned; 16 steps, log every step): every file starts with
file_version "brain.Event:2"; every record's length and data CRCs; the exact set of tags and, for each,
exactly the steps log.jsonl / results.json have; every value equals the one there (as float32);
wall times increase and have sub-second precision. Then a run killed after step 10 (last checkpoint at 8)
and resumed with --resume: its first file holds points after the checkpoint (steps 9, 10), the resumed
file starts with SessionLog START at its checkpoint's step + 1, and the files read the way TensorBoard reads
them (drop earlier points at or after a START's step) give exactly the uninterrupted run's series (tokens/s
aside, a timing).

Usage: tensorboard_test.py XSA_TRAIN DATA_DIR WORK_DIR
"""
import glob
import importlib
import json
import os
import struct
import subprocess
import sys

import crcmod.predefined

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checklist import Checklist  # noqa: E402

TRAIN, DATA, WORK = sys.argv[1:4]
check = Checklist("tensorboard_test", WORK)

PROTO = """
syntax = "proto3";
package xsa_test;
message Summary {
  message Value {
    string tag = 1;
    oneof value { float simple_value = 2; }
  }
  repeated Value value = 1;
}
message SessionLog {
  enum SessionStatus { STATUS_UNSPECIFIED = 0; START = 1; STOP = 2; CHECKPOINT = 3; }
  SessionStatus status = 1;
}
message Event {
  double wall_time = 1;
  int64 step = 2;
  oneof what {
    string file_version = 3;
    Summary summary = 5;
    SessionLog session_log = 7;
  }
}
"""
with open(os.path.join(WORK, "tb_events.proto"), "w") as f:
    f.write(PROTO)
subprocess.run(["protoc", "--proto_path=" + WORK, "--python_out=" + WORK, os.path.join(WORK, "tb_events.proto")],
               check=True)
sys.path.insert(0, WORK)
pb = importlib.import_module("tb_events_pb2")
crc32c = crcmod.predefined.mkCrcFun("crc-32c")


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def read_events(path):
    data = open(path, "rb").read()
    events, at, bad = [], 0, 0
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        payload = data[at + 12:at + 12 + length]
        (data_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        if masked(crc32c(header)) != length_crc or masked(crc32c(payload)) != data_crc:
            bad += 1
        event = pb.Event()
        event.ParseFromString(payload)
        events.append(event)
        at += 16 + length
    return events, bad, at == len(data)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def series_of(files):
    """{tag: {step: value}} as TensorBoard reads the files in order: a SessionLog START at step s drops
    every point read before it whose step is >= s."""
    out, raw, starts = {}, [], []
    for path in files:
        events, bad, whole = read_events(path)
        check(bad == 0 and whole, "%s: every record's two CRCs match and the records fill the file"
              % os.path.relpath(path, WORK))
        check(events and events[0].WhichOneof("what") == "file_version"
              and events[0].file_version == "brain.Event:2", "%s starts with file_version brain.Event:2"
              % os.path.relpath(path, WORK))
        for e in events[1:]:
            kind = e.WhichOneof("what")
            if kind == "session_log" and e.session_log.status == pb.SessionLog.START:
                starts.append(e.step)
                for tag in out:
                    out[tag] = [(s, v) for s, v in out[tag] if s < e.step]
            elif kind == "summary":
                for v in e.summary.value:
                    raw.append((v.tag, e.step))
                    out.setdefault(v.tag, []).append((e.step, v.simple_value))
    doubled = sorted({tag for tag, points in out.items() if len({s for s, _ in points}) != len(points)})
    check(not doubled, "%s: no step shown twice in any series (%s)" % (os.path.relpath(os.path.dirname(files[0]), WORK), doubled))
    return {tag: dict(points) for tag, points in out.items()}, raw, starts


def expected_series(run_dir, variant):
    result = json.load(open(os.path.join(run_dir, "results.json")))
    run = next(r for r in result["runs"] if r["variant"] == variant)
    out = {}
    B, T = result["config"]["train"]["batch_size"], result["config"]["data"]["seq_len"]
    for line in open(os.path.join(run_dir, "log.jsonl")):
        j = json.loads(line)
        if j["run"] != variant:
            continue
        for tag, value in (("train/loss", j["loss"]), ("train/lr", j["lr"]), ("train/grad_norm", j["grad_norm"]),
                           ("train/tokens_per_s", 1e3 * B * T / j["ms"])):
            out.setdefault(tag, {})[j["step"]] = f32(value)
    for e in run["eval"]:
        out.setdefault("val/loss", {})[e["step"]] = f32(e["val_loss"])
    for b in run["bias"]:
        for layer in b["layers"]:
            for metric in ("cos_y_v", "cos_z_v", "attn_diag", "value_cos"):
                out.setdefault("bias/%s/layer%d" % (metric, layer["layer"]), {})[b["step"]] = f32(layer[metric])
            for metric in ("max_logit", "attn_entropy", "attn_sink"):
                out.setdefault("dynamics/%s/layer%d" % (metric, layer["layer"]), {})[b["step"]] = f32(layer[metric])
            if layer.get("lambda_per_head"):
                heads = layer["lambda_per_head"]
                out.setdefault("attention/lambda/layer%d" % layer["layer"], {})[b["step"]] = f32(sum(heads) / len(heads))
    return out


data_dir = DATA
config = os.path.join(WORK, "config.yaml")
with open(config, "w") as f:
    f.write("name: tb\nseed: 5\ndata: {dir: %s, seq_len: 32}\n" % data_dir
            + "model: {n_layer: 2, d_model: 32, n_head: 2, d_head: 16}\n"
            + "attention: {variants: [sa, xsa, learned]}\n"
            + "train: {steps: 16, batch_size: 8, warmup_steps: 2, log_interval: 1, checkpoint_interval: 4}\n"
            + "eval: {interval: 4, batches: 2}\nmetrics: {bias_interval: 8, bias_batches: 1}\n"
            + "sample: {count: 1, tokens: 8}\nruntime: {threads: 1, workers: 2}\n")


def train(out, *extra, env=None):
    return subprocess.run([TRAIN, "--quiet", "--config", config, "--out", out, *extra], capture_output=True,
                          text=True, env=dict(os.environ, **(env or {})), timeout=600)


# 1. An uninterrupted run.
full = os.path.join(WORK, "full")
r = train(full)
check(r.returncode == 0, "uninterrupted run exits 0 (%s)" % r.stderr.strip())
reference = {}
for variant in ("sa", "xsa", "learned"):
    files = sorted(glob.glob(os.path.join(full, "tensorboard", variant, "events.out.tfevents.*")))
    check(len(files) == 1, "%s: one event file (%s)" % (variant, files))
    got, raw, starts = series_of(files)
    want = expected_series(full, variant)
    check(sorted(got) == sorted(want), "%s: tags are exactly %s (got %s)" % (variant, sorted(want), sorted(got)))
    check(len(raw) == sum(len(v) for v in got.values()), "%s: no point written twice" % variant)
    check(starts == [], "%s: a fresh run writes no SessionLog START" % variant)
    for tag in sorted(want):
        check(got.get(tag) == want[tag], "%s %s: steps %s and values equal log.jsonl / results.json"
              % (variant, tag, sorted(want[tag])))
    reference[variant] = got
    walls = [e.wall_time for e in read_events(files[0])[0]]
    check(walls == sorted(walls) and any(w != int(w) for w in walls) and walls[0] > 1.6e9,
          "%s: wall times increase, in seconds since the epoch with sub-second precision" % variant)
check("attention/lambda/layer0" in reference["learned"] and "attention/lambda/layer0" not in reference["sa"],
      "the learned variant logs its λ per layer, a fixed one does not")

# 2. Killed after step 10 (no checkpoint there: the last is at 8), then --resume.
killed = os.path.join(WORK, "killed")
r = train(killed, env={"XSA_FAULT_EXIT_AFTER_STEP": "10"})
check(r.returncode == 86, "the fault-injected run dies after step 10 (exit %d)" % r.returncode)
r = train(killed, "--resume")
check(r.returncode == 0, "--resume exits 0 (%s)" % r.stderr.strip())
stale_seen = False
for variant in ("sa", "xsa", "learned"):
    files = sorted(glob.glob(os.path.join(killed, "tensorboard", variant, "events.out.tfevents.*")))
    got, raw, starts = series_of(files)
    check(len(starts) == 1 and starts[0] in (0, 1, 5, 9, 13, 17),
          "%s: the resumed file marks one restart at a checkpoint's step + 1 (%s)" % (variant, starts))
    if starts and starts[0] > 0:
        first, _, _ = series_of(files[:1])
        if max(first["train/loss"]) >= starts[0]:
            stale_seen = True  # points after the checkpoint were on disk, and were dropped
    check(got == expected_series(killed, variant), "%s: read as TensorBoard does, the resumed run's series "
          "equal its log.jsonl and results.json" % variant)
    timeless = lambda series: {tag: v for tag, v in series.items() if tag != "train/tokens_per_s"}
    check(timeless(got) == timeless(reference[variant]), "%s: and every series but tokens/s (a timing) equals "
          "the uninterrupted run's, point for point" % variant)
check(stale_seen, "some run had written points after its last checkpoint before the kill (the purge was tested)")

# 3. log.tensorboard: false writes no event file.
off = os.path.join(WORK, "off")
r = train(off, "--set", "log.tensorboard=false")
check(r.returncode == 0 and not os.path.exists(os.path.join(off, "tensorboard")),
      "log.tensorboard=false writes no tensorboard folder")

check.finish()
