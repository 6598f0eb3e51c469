#!/usr/bin/python3
"""scripts/reference/train_ddp.py, PyTorch's DistributedDataParallel side of the benchmark (GitHub issue 59), on a
tiny model and a tiny token file made here (no data/ needed), its ranks on 127.0.0.1 only (GLOO_SOCKET_IFNAME is
removed from their environment, so Gloo takes the loopback interface as the script does for a loopback master).

  equivalence   2 ranks x half the batch train what one process trains on the whole batch: DDP averages the ranks'
                gradients, so every step's loss (averaged over the ranks) and gradient norm equals the single
                process's within TOL relative (float summation order only), with DDP's default buckets and with
                gradient_as_bucket_view on 0.01 MB buckets (several buckets; gradients zeroed in place). The
                comparison can fail: the loss moves by far more than TOL over the 3 steps, and a process trained on
                one rank's half alone differs by more than TOL. The JSON's timings are checked for consistency
                (tokens/s from the median step, the all-reduce medians of their samples, span <= step).
  measurements  --search tries every bucket size x gradient_as_bucket_view and names the fastest;
                --allreduce-bytes times Gloo's all-reduce alone: sizes rounded up to whole floats, MB/s = bytes /
                median time.
  bad_input     each bad option, number or data folder: exit 2, one line "train_ddp.py: error: ..." naming the
                problem, nothing on stdout, no traceback; under torchrun, only rank 0 says it.

Usage: ddp_test.py CASE WORK_DIR   (Debian's python3 with torch, as scripts/reference needs)
"""
import array
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from checklist import Checklist  # noqa: E402

SCRIPT = os.path.join(HERE, "..", "..", "scripts", "reference", "train_ddp.py")
CASE, WORK = sys.argv[1:3]
check = Checklist(f"ddp_test {CASE}", WORK)

TOL = 1e-5  # relative; 2 ranks against 1 process differed by <= 2e-7 relative when this test was written
VOCAB, BATCH, SEQ, STEPS, WARMUP = 64, 8, 16, 3, 1
# d_model 128: 0.4M parameters, 1.6 MB of gradient, more than DDP's first bucket (1 MiB), so small bucket caps
# give several buckets. --warmup-steps 1 and lr 1e-2: the full learning rate from the first step, so the weights
# (and the losses of steps 2 and 3) depend on every step's averaged gradient.
SHAPE = ["--d-model", "128", "--n-layer", "2", "--n-head", "4", "--d-head", "32", "--seq-len", str(SEQ),
         "--steps", str(STEPS), "--warmup", str(WARMUP), "--warmup-steps", "1", "--lr", "1e-2"]


def make_data(folder, tokens, meta=None):
    """A prepared data folder of the given token ids (uint16, as xsa-prepare writes) and a meta.json."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "train.bin"), "wb") as f:
        array.array("H", tokens).tofile(f)
    with open(os.path.join(folder, "meta.json"), "w") as f:
        f.write(json.dumps({"vocab_size": VOCAB}) if meta is None else meta)
    return folder


def tokens(n):
    """Runs of a counting pattern (+3 mod VOCAB) with a pseudo-random jump every 13 tokens: learnable in a few
    steps, so the loss moves."""
    x, out = 12345, []
    for i in range(n):
        x = (1103515245 * x + 12345) % 2**31
        out.append((out[-1] + 3) % VOCAB if out and i % 13 else (x >> 16) % VOCAB)
    return out


def run(args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("GLOO_SOCKET_IFNAME", "RANK", "WORLD_SIZE",
                                                           "MASTER_ADDR", "MASTER_PORT")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True, env=env, timeout=240)


def result(args, what):
    """The JSON line of a run that must succeed (None, and a failed check, otherwise)."""
    p = run(args)
    check(p.returncode == 0, f"{what}: exit 0 (got {p.returncode}: {p.stderr.strip()[-300:]!r})")
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        check(False, f"{what}: one JSON line on stdout (got {p.stdout[-200:]!r})")
        return None


def close(a, b):
    return abs(a - b) <= TOL * max(1.0, abs(b))


def same_steps(two, one, what):
    for key, name in (("losses", "loss"), ("grad_norms", "gradient norm")):
        pairs = list(zip(two[key], one[key]))
        check(len(two[key]) == len(one[key]) == STEPS and all(close(a, b) for a, b in pairs),
              f"{what}: every step's {name} equals one process's within {TOL} relative "
              f"(2 ranks {two[key]}, 1 process {one[key]})")


def timings_consistent(r, what):
    timed = STEPS - WARMUP
    steps = r["step_ms"]
    check(len(steps) == timed and all(ms > 0 for ms in steps), f"{what}: {timed} timed steps, each > 0 ms")
    check(abs(r["step_ms_median"] - statistics.median(steps)) < 1e-9, f"{what}: step_ms_median is their median")
    want = 1e3 * BATCH * SEQ / statistics.median(steps)
    check(abs(r["tokens_per_s"] - want) <= 1e-9 * want, f"{what}: tokens/s = {BATCH} x {SEQ} / median step")
    if r["world_size"] == 1:
        check(r["ddp"] is None and "allreduce_ms" not in r, f"{what}: one process has no DDP and no all-reduce")
        return
    span, exposed = r["allreduce_ms"], r["allreduce_exposed_ms"]
    check(len(span) == len(exposed) == len(r["buckets"]) == timed, f"{what}: an all-reduce time per timed step")
    check(all(0 < s <= ms for s, ms in zip(span, steps)) and all(0 <= e <= ms for e, ms in zip(exposed, steps)),
          f"{what}: all-reduce span in (0, step] and exposed wait in [0, step] (span {span}, exposed {exposed}, "
          f"steps {steps})")
    check(r["allreduce_ms_median"] == statistics.median(span)
          and r["allreduce_exposed_ms_median"] == statistics.median(exposed), f"{what}: medians of their samples")


def equivalence():
    data = make_data(os.path.join(WORK, "data"), tokens(6000))
    common = ["--data", data, "--batch-size", str(BATCH)] + SHAPE
    one = result(common, "1 process")
    two = result(["--ranks", "2"] + common, "2 ranks, DDP's defaults")
    view = result(["--ranks", "2", "--gradient-as-bucket-view", "--bucket-cap-mb", "0.01"] + common,
                  "2 ranks, gradient_as_bucket_view, 0.01 MB buckets")
    half = result(["--data", data, "--batch-size", str(BATCH // 2)] + SHAPE, "1 process on half the batch")
    if None in (one, two, view, half):
        return
    check(one["world_size"] == 1 and one["batch_per_rank"] == BATCH, "1 process: world 1, the whole batch")
    check(two["world_size"] == 2 and two["batch_per_rank"] == BATCH // 2 and two["backend"] == "gloo",
          "2 ranks: world 2 on Gloo, half the batch each")
    check(two["ddp"]["bucket_cap_mb"] == 25 and two["ddp"]["gradient_as_bucket_view"] is False
          and view["ddp"]["bucket_cap_mb"] == 0.01 and view["ddp"]["gradient_as_bucket_view"] is True,
          "the JSON names the DDP configuration each run used")
    check(min(view["buckets"]) > 1, f"0.01 MB buckets: several per step (got {view['buckets']})")
    for r, what in ((one, "1 process"), (two, "2 ranks"), (view, "2 ranks, bucket views")):
        # -1: no OpenBLAS in the process (a torch built without it); otherwise the count read back must be 1
        check(r["threads"] == 1 and r["blas_threads"] in (1, -1), f"{what}: 1 torch thread and 1 OpenBLAS thread")
        timings_consistent(r, what)
    same_steps(two, one, "2 ranks, DDP's defaults")
    same_steps(view, one, "2 ranks, gradient_as_bucket_view")
    moved = abs(one["losses"][-1] - one["losses"][0])
    check(moved > 1000 * TOL, f"the comparison can fail: the loss moves by {moved:.4f} over {STEPS} steps")
    check(not all(close(a, b) for a, b in zip(two["losses"], half["losses"])),
          f"the comparison can fail: one rank's half batch alone trains differently ({half['losses']})")


def measurements():
    data = make_data(os.path.join(WORK, "data"), tokens(6000))
    caps = [0.01, 25.0]
    s = result(["--ranks", "2", "--search", "--search-bucket-cap-mb", ",".join(map(str, caps)), "--data", data,
                "--batch-size", str(BATCH)] + SHAPE, "--search")
    if s is not None:
        tried = [(r["bucket_cap_mb"], r["gradient_as_bucket_view"]) for r in s["search"]]
        check(sorted(tried) == sorted((c, v) for c in caps for v in (False, True)),
              f"--search tried every bucket size x gradient_as_bucket_view once (got {tried})")
        fastest = min(s["search"], key=lambda r: r["step_ms_median"])
        check((s["best"]["bucket_cap_mb"], s["best"]["gradient_as_bucket_view"])
              == (fastest["bucket_cap_mb"], fastest["gradient_as_bucket_view"]),
              f"--search's best is the configuration of the lowest median step time ({s['best']})")
        check(all(len(r["step_ms"]) == STEPS - WARMUP and r["allreduce_ms_median"] > 0 for r in s["search"]),
              "--search: each configuration's timed steps and all-reduce time")
    sizes = [4, 4001, 40000]
    a = result(["--ranks", "2", "--allreduce-bytes", ",".join(map(str, sizes)), "--allreduce-repeats", "3",
                "--warmup", "1", "--steps", "2"], "--allreduce-bytes")
    if a is not None:
        got = a["gloo_allreduce"]
        check([g["bytes"] for g in got] == [4, 4004, 40000], "--allreduce-bytes: sizes rounded up to whole floats")
        for g in got:
            check(len(g["samples_ms"]) == 3 and g["ms_median"] == statistics.median(g["samples_ms"])
                  and g["ms_median"] > 0, f"{g['bytes']} bytes: the median of 3 timed all-reduces")
            want = g["bytes"] / 1e6 / (g["ms_median"] / 1e3)
            check(abs(g["MB_per_s"] - want) <= 1e-9 * want, f"{g['bytes']} bytes: MB/s = bytes / median time")


def bad_input():
    good = make_data(os.path.join(WORK, "good"), tokens(2000))
    short = make_data(os.path.join(WORK, "short"), tokens(40))  # 2 windows of 16 + 1: fewer than a batch of 8
    high = make_data(os.path.join(WORK, "high"), tokens(2000) + [VOCAB])  # an id past the vocabulary
    broken = make_data(os.path.join(WORK, "broken"), tokens(2000), meta="{not json")
    base = ["--batch-size", str(BATCH)] + SHAPE
    cases = [  # (what, arguments, what the line must say)
        ("a missing data folder", ["--ranks", "2", "--data", os.path.join(WORK, "nothing")] + base, "cannot read"),
        ("meta.json not JSON", ["--data", broken] + base, "not a meta.json object"),
        ("token ids past vocab_size", ["--ranks", "2", "--data", high] + base, "ids >= vocab_size"),
        ("fewer windows than a batch", ["--data", short] + base, "fewer than one batch"),
        ("a batch that does not divide by the ranks", ["--ranks", "3", "--data", good] + base, "must divide"),
        ("--steps not a number", ["--data", good, "--steps", "3x"], "invalid int value"),
        ("--lr NaN", ["--data", good, "--lr", "nan"], "finite"),
        ("--threads 0", ["--data", good, "--threads", "0"], "--threads"),
        ("--steps not above --warmup", ["--data", good, "--steps", "2", "--warmup", "2"], "must exceed"),
        ("an odd d_head with RoPE", ["--data", good, "--d-head", "31"], "even"),
        ("--bucket-cap-mb -1", ["--ranks", "2", "--data", good, "--bucket-cap-mb", "-1"], "positive"),
        ("--search on one process", ["--data", good, "--search"], "--ranks 2"),
        ("--search-bucket-cap-mb with a word", ["--ranks", "2", "--data", good, "--search",
                                                "--search-bucket-cap-mb", "1,big"], "'big'"),
        ("--allreduce-bytes 3", ["--ranks", "2", "--allreduce-bytes", "3"], "whole number >= 4"),
        ("--ranks 0", ["--ranks", "0", "--data", good], "--ranks"),
        ("an unknown option", ["--data", good, "--buckets", "3"], "unrecognized"),
    ]
    for what, args, says in cases:
        p = run(args)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("train_ddp.py: error: ")
              and says in lines[0] and not p.stdout and "Traceback" not in p.stderr,
              f"{what}: exit 2, one line saying {says!r} (got exit {p.returncode}, stderr {p.stderr[-300:]!r}, "
              f"stdout {p.stdout[:80]!r})")
    # Under torchrun every rank checks its input; only rank 0 says what is wrong, the others exit as silently.
    for rank, lines_wanted in (("0", 1), ("1", 0)):
        p = run(["--data", good, "--lr", "nan"], {"RANK": rank, "WORLD_SIZE": "2"})
        check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == lines_wanted and not p.stdout,
              f"under torchrun, rank {rank} of 2 with bad input: exit 2, {lines_wanted} line(s) "
              f"(got exit {p.returncode}, stderr {p.stderr[-200:]!r})")


{"equivalence": equivalence, "measurements": measurements, "bad_input": bad_input}[CASE]()
check.finish()
