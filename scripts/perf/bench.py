#!/usr/bin/python3
"""The performance benchmark (GitHub issues 5 and 9): one run, one machine, side-by-side ratios.

Measures
  1. xsa-bench: the CPU (model, matmul flags, native bf16?), sgemm peak at the model's sizes (1 and 2
     threads) and the bf16 matmul peak where the CPU has native bf16, step-time breakdown, XSA/SA
     ratio, scaling with sequence length and width, FLOPs per token;
  2. xsa-train throughput (training steps only, from results.json timing): SA alone, XSA alone
     (1 worker, 1 thread), and the paired SA+XSA run with the default runtime (2 workers x 1 thread),
     in fp32 and, where the CPU has native bf16 (or with --bf16), in bf16 mixed precision;
  3. the PyTorch reference (scripts/reference/train_reference.py), variants one after another, in every
     sensible thread configuration: torch intra-op x OpenBLAS threads 1x1, 1x2, 2x1, 2x2 (OpenBLAS's
     count is read back from the loaded library and checked); the best is the baseline for the speed-up;
  4. xsa-sweep with --workers 1 vs 2 on configs/sweep_smoke.yaml;
then prints a table and writes bench/bench.json. Needs a build (scripts/build.sh) and data/tinystories.
The paired xsa-train run and the reference configurations are measured in rounds (one of each per
round), so slow drifts of a shared machine hit them alike.

  5. the length and size table (not with --quick): paired SA+XSA at T from 128 to 8,192 and at 6 layers x
     d 256, with attention.impl fused and explicit side by side (tok/s, MFU, peak RSS, XSA/SA).
  6. the data-parallel table (not with --quick): 1 rank x 1 thread against `xsa-train --ranks 2` x 1 thread on
     the same global batch, at three model sizes, with the all-reduce time per step, beside the PyTorch reference
     under DistributedDataParallel on Gloo (scripts/reference/train_ddp.py, 2 ranks x 1 torch x 1 OpenBLAS thread,
     at the best bucket configuration of a short search, against its own single process; and Gloo's all-reduce
     of the gradient's size alone, in turns with xsa's, --allreduce-launches times), two processes at half the
     batch with no communication (2 ranks without their all-reduce: the ceiling of their efficiency), and the
     scale-out plan projected from its largest row (the README's "Scale-out").
Usage: scripts/bench.sh [--steps N] [--repeats R] [--allreduce-launches L] [--quick] [--bf16] [--lengths-only]
                        [--data-parallel-only]
       scripts/perf/bench.py --show FILE [--part all|data-parallel|plan]
                                      reprints a saved bench.json: its machine (CPU, LibTorch), the matmul peaks,
                                      the step time at 1 thread, the fused kernel per instruction set, the
                                      length and size table and the data-parallel table and plan, those it holds
                                      (the tables of docs/performance.md and the README's plan are such blocks,
                                      checked by scripts/dev/readme_tables.py)
"""
import contextlib
import io
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/: the xsapy package
from xsapy import user_input  # noqa: E402  (a user-named file read, or one line and exit 2)
from xsapy.user_input import InputError, need  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository
BUILD = os.path.join(ROOT, "build")
PY = "/usr/bin/python3"


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, cwd=ROOT, **kw)


# torch intra-op threads x OpenBLAS threads: the configurations a user of the reference could pick.
REFERENCE_THREADS = [(1, 1), (1, 2), (2, 1), (2, 2)]


def timed_run_overrides(variants, workers, steps, precision="fp32"):
    """The --set overrides of a timed xsa-train run: 1 thread per run, no checkpoints, samples or periodic
    evaluation beyond the last step."""
    return [f"runtime.precision={precision}", f"attention.variants=[{','.join(variants)}]",
            f"runtime.workers={workers}", "runtime.threads=1", f"train.steps={steps}", "train.warmup_steps=2",
            "train.checkpoint_interval=0", f"eval.interval={steps}", f"metrics.bias_interval={steps}",
            "eval.batches=1", "metrics.bias_batches=1", "sample.count=0"]


def xsa_train_command(out, overrides, ranks=1):
    """The xsa-train command line of a timed run: configs/default.yaml with these --set overrides, into `out`."""
    return [os.path.join(BUILD, "xsa-train"), "--config", "configs/default.yaml", "--out", out, "--quiet"] + \
        [a for kv in overrides for a in ("--set", kv)] + (["--ranks", str(ranks)] if ranks > 1 else [])


def train_throughput(out_root, name, variants, workers, steps, precision="fp32", extra=(), ranks=1):
    """tokens/s of the training steps of one xsa-train run (sum over concurrent runs) and its peak RSS.
    extra: more --set overrides (model shape, sequence length, attention.impl); ranks: data-parallel ranks
    (--ranks; the global batch stays train.batch_size)."""
    out = os.path.join(out_root, name)
    run(xsa_train_command(out, timed_run_overrides(variants, workers, steps, precision) + list(extra), ranks))
    r = json.load(open(os.path.join(out, "results.json")))
    per_run = {x["variant"]: x["timing"]["tokens_per_s"] for x in r["runs"]}
    if workers > 1:
        total = sum(per_run.values())  # concurrent runs: their rates add up
    else:  # one after another: total tokens / total training time
        tokens = sum(x["timing"]["tokens_per_s"] * x["timing"]["train_s"] for x in r["runs"])
        total = tokens / sum(x["timing"]["train_s"] for x in r["runs"])
    timing = r["runs"][0]["timing"]
    return {"tokens_per_s": total, "per_run": per_run, "peak_rss_mib": r["environment"]["peak_rss_mib"],
            "precision": r["environment"].get("precision", "fp32"), "step_ms_median": timing["step_ms_median"],
            "allreduce_ms_median": timing.get("allreduce_ms_median", 0.0),
            "tokens_per_step": r["config"]["train"]["batch_size"] * r["config"]["data"]["seq_len"],
            "batch_size": r["config"]["train"]["batch_size"]}


def reference_throughput(threads, blas_threads, steps, shape=(), warmup=3, details=False):
    """tokens/s of the PyTorch reference (sa then xsa) and the thread counts it really ran with.
    shape: extra train_reference.py arguments (--seq-len, --batch-size, --n-layer, ...). details: return its
    whole JSON line (which attention it used: scaled_dot_product_attention where torch has it)."""
    cmd = [PY, "scripts/reference/train_reference.py", "--threads", str(threads), "--blas-threads",
           str(blas_threads), "--steps", str(steps), "--warmup", str(warmup), "--variants", "sa,xsa"] + list(shape)
    print("+ " + " ".join(cmd), flush=True)
    # The environment is passed on unchanged (OPENBLAS_CORETYPE etc. stay as the user set them); the
    # script sets OPENBLAS_NUM_THREADS / OMP_NUM_THREADS for itself before importing torch.
    p = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True)
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    r = json.loads(line)
    if r["threads"] != threads or r["blas_threads"] != blas_threads:
        sys.exit(f"bench: error: reference asked for {threads} torch x {blas_threads} OpenBLAS threads, "
                 f"ran with {r['threads']} x {r['blas_threads']} (via {r['blas_threads_via']})")
    return r if details else r["tokens_per_s"]


def reference_shape(overrides):
    """xsa config overrides of the model's shape ("model.n_layer=6") as the reference scripts' options ("--n-layer",
    "6")."""
    shape = []
    for kv in overrides:
        key, value = kv.split("=")
        shape += ["--" + key.split(".")[1].replace("_", "-"), value]
    return shape


# The length and size table (GitHub issue 20): model shape, T x batch (4,096 tokens per step up to T = 4,096).
S2 = ("model.n_layer=6", "model.d_model=256", "model.n_head=8", "model.d_head=32")
# The reference's best thread configurations at T = 128 (the main table searches all four; 1x1 and 2x2 were
# never the best here): each length row takes the better of these two, a few steps each (long rows are slow).
LENGTH_REFERENCE_THREADS = [(1, 2), (2, 1)]
LENGTH_ROWS = [
    ("2 layers, d 128 (default)", (), 128, 32),
    ("2 layers, d 128", (), 512, 8),
    ("2 layers, d 128", (), 2048, 2),
    ("2 layers, d 128", (), 4096, 1),
    ("2 layers, d 128", (), 8192, 1),
    ("6 layers, d 256, 8 heads", S2, 128, 32),
    ("6 layers, d 256, 8 heads", S2, 1024, 4),
]
IMPLS = ("fused", "explicit")


def model_size(overrides):
    """The model FLOPs per token xsa-bench counts (one formula: xsa::model_flops_per_token) and the parameter
    count (xsa::estimate_memory's), as {"flops_per_token", "parameters"}."""
    cmd = [os.path.join(BUILD, "xsa-bench"), "--flops-per-token"] + [a for kv in overrides for a in ("--set", kv)]
    return json.loads(subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout)


def flops_per_token(overrides):
    return model_size(overrides)["flops_per_token"]


# Rows up to this length are short and the two implementations close there: each is measured `repeats` times,
# fused and explicit interleaved, and the medians kept (single runs swung by +-20% on a shared machine).
REPEAT_UP_TO_T = 512


def length_table(work, steps, peak2, repeats=3):
    """Paired SA+XSA (2 workers x 1 thread) for every row and both attention implementations, side by side:
    tok/s per run, MFU of the pair against the 2-core sgemm peak, peak RSS, XSA/SA step time."""
    rows = []
    for label, model, T, batch in LENGTH_ROWS:
        overrides = list(model) + [f"data.seq_len={T}", f"train.batch_size={batch}"]
        fpt = flops_per_token(overrides)
        row = {"model": label, "seq_len": T, "batch": batch, "flops_per_token": fpt}
        shape = ["--seq-len", str(T), "--batch-size", str(batch)] + reference_shape(model)
        refs = [reference_throughput(t, b, 3, shape, warmup=1, details=True) for t, b in LENGTH_REFERENCE_THREADS]
        best = max(refs, key=lambda r: r["tokens_per_s"])
        row["reference"] = {"tokens_per_s": best["tokens_per_s"], "torch_threads": best["threads"],
                            "blas_threads": best["blas_threads"], "attention": best["attention"],
                            "torch": best["torch"]}
        samples = {impl: [] for impl in IMPLS}
        for r in range(repeats if T <= REPEAT_UP_TO_T else 1):
            for impl in IMPLS:
                if "error" in row.get(impl, {}):
                    continue
                try:
                    samples[impl].append(train_throughput(work, f"len_{impl}_{T}_{len(model)}_{r}", ["sa", "xsa"], 2,
                                                          steps, extra=overrides + [f"attention.impl={impl}"]))
                except subprocess.CalledProcessError as e:  # e.g. exit 2: the memory estimate does not fit
                    row[impl] = {"error": f"xsa-train exit {e.returncode}"}
        for impl in IMPLS:
            if "error" in row.get(impl, {}):
                continue
            total = statistics.median(m["tokens_per_s"] for m in samples[impl])
            row[impl] = {"tokens_per_s_per_run": total / 2, "mfu": fpt * total / peak2,
                         "over_reference": total / row["reference"]["tokens_per_s"],
                         "peak_rss_mib": max(m["peak_rss_mib"] for m in samples[impl]),
                         "xsa_over_sa_step": statistics.median(m["per_run"]["sa"] / m["per_run"]["xsa"]
                                                               for m in samples[impl]),
                         "samples": [m["tokens_per_s"] for m in samples[impl]]}
        rows.append(row)
    return rows


def print_length_table(rows):
    print("\nLength and size, paired SA+XSA (2 workers x 1 thread), both attention implementations in one run "
          f"(T <= {REPEAT_UP_TO_T}: medians of repeats, fused and explicit interleaved):\n")
    print("| model | T x batch | " + " | ".join(f"{impl} tok/s per run | {impl} MFU | {impl} peak RSS | {impl} XSA/SA"
                                            for impl in IMPLS) + " | paired fused / best reference |")
    print("|---|---|" + "---|---|---|---|" * len(IMPLS) + "---|")
    for r in rows:
        cells = []
        for impl in IMPLS:
            m = r[impl]
            if "error" in m:
                cells += [m["error"], "", "", ""]
            else:
                cells += [f"{m['tokens_per_s_per_run']:,.0f}", f"{100 * m['mfu']:.0f}%",
                          f"{m['peak_rss_mib'] / 1024:.2f} GB", f"{m['xsa_over_sa_step']:.3f}"]
        ref = r["reference"]
        vs = f"{r['fused']['over_reference']:.2f}x" if "over_reference" in r["fused"] else "-"
        cells.append(f"{vs} (reference {ref['tokens_per_s']:,.0f} tok/s, torch {ref['torch_threads']} x OpenBLAS "
                     f"{ref['blas_threads']}, {ref['attention']})")
        print(f"| {r['model']} | {r['seq_len']:,} x {r['batch']} | " + " | ".join(cells) + " |")

    def find(model_prefix, T):
        return next(r for r in rows if r["model"].startswith(model_prefix) and r["seq_len"] == T)

    print("\n| ratio (targets: GitHub issue 20) | " + " | ".join(IMPLS) + " | target |\n|---|" + "---|" * len(IMPLS) + "---|")
    ratios = [("MFU at T = 2,048 / at T = 128 (2 layers)", find("2 layers", 2048), find("2 layers", 128), "mfu", ">= 0.85"),
              ("MFU at T = 1,024 / at T = 128 (6 layers x d 256)", find("6 layers", 1024), find("6 layers", 128), "mfu",
               ">= 0.80"),
              ("peak RSS at 2,048 x 2 / at 128 x 32", find("2 layers", 2048), find("2 layers", 128), "peak_rss_mib",
               "<= 1.3")]
    for name, a, b, key, target in ratios:
        cells = [f"{a[i][key] / b[i][key]:.2f}" if key in a[i] and key in b[i] else "-" for i in IMPLS]
        print(f"| {name} | " + " | ".join(cells) + f" | {target} |")
    worst = [min((r[i]["over_reference"] for r in rows if "over_reference" in r[i]), default=None) for i in IMPLS]
    print("| paired xsa-train / best reference, the lowest row | " +
          " | ".join("-" if w is None else f"{w:.2f}x" for w in worst) + " | >= 2.0 |")


def print_lengths_result(result):
    """The sgemm peak the MFU columns divide by, then the length and size table: what a --lengths-only run
    prints, and the last part of what --show reprints from its bench.json."""
    peak2 = result["xsa_bench"]["gemm"]["2"]["peak_gflops"]
    print(f"\nsgemm peak through LibTorch, 2 cores: {peak2:.1f} GFLOP/s; {result['steps']} steps per run")
    print_length_table(result["lengths"])


# The data-parallel table (GitHub issue 42): one rank x 1 thread against `xsa-train --ranks 2` x 1 thread on the
# same global batch (train.batch_size stays global: each rank takes half), one variant (xsa), so the ranks are
# the only parallelism. The last row has the shape of TinyStories-33M (4 layers, d 768) with this tool's
# vocabulary, the size the scale-out plan projects; it takes few steps (each is seconds long).
S33 = ("model.n_layer=4", "model.d_model=768", "model.n_head=12", "model.d_head=64")
DP_ROWS = [("2 layers, d 128 (default)", (), 1), ("6 layers, d 256, 8 heads", S2, 1),
           ("4 layers, d 768, 12 heads (TinyStories-33M's shape)", S33, 5)]


# DDP's configurations tried per model (bucket_cap_mb, each with gradient_as_bucket_view off and on; 25 is DDP's
# default), and the timed all-reduces of the Gloo measurement.
DDP_BUCKET_CAP_MB = (1, 5, 25, 100)
GLOO_REPEATS = 10


def train_ddp(args):
    """The JSON line of one scripts/reference/train_ddp.py run (1 torch x 1 OpenBLAS thread per rank, checked as
    reference_throughput checks its threads): DistributedDataParallel's side of the data-parallel table."""
    cmd = [PY, "scripts/reference/train_ddp.py", "--threads", "1", "--blas-threads", "1"] + list(args)
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True)
    r = json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])
    if r["threads"] != 1 or r["blas_threads"] != 1:
        sys.exit(f"bench: error: train_ddp.py asked for 1 torch x 1 OpenBLAS thread per rank, ran with "
                 f"{r['threads']} x {r['blas_threads']} (via {r['blas_threads_via']})")
    return r


def ddp_side(shape, n_steps, gloo):
    """What the data-parallel table needs of DDP before its measured runs, for one model: the search of DDP's best
    configuration (every DDP_BUCKET_CAP_MB x gradient_as_bucket_view off/on, 2 ranks, max(3, n_steps / 3) steps each,
    the first untimed); `gloo`, Gloo's all-reduce alone (allreduce_side_by_side), goes into the object as it is.
    Returns (the row's "ddp" object so far, the train_ddp.py options of the best configuration)."""
    search_steps = max(3, n_steps // 3)
    found = train_ddp(["--ranks", "2", "--search", "--search-bucket-cap-mb", ",".join(map(str, DDP_BUCKET_CAP_MB)),
                       "--steps", str(search_steps), "--warmup", "1"] + shape)
    best = found["best"]
    side = {"torch": found["torch"], "threads": found["threads"], "blas_threads": found["blas_threads"],
            "steps": n_steps, "warmup": 1, "config": best, "search_steps": search_steps,
            "search": [{k: r[k] for k in ("bucket_cap_mb", "gradient_as_bucket_view", "step_ms_median",
                                          "tokens_per_s", "allreduce_ms_median", "allreduce_exposed_ms_median")}
                       for r in found["search"]],
            "gloo_allreduce": gloo}
    chosen = ["--bucket-cap-mb", str(best["bucket_cap_mb"])] + \
        (["--gradient-as-bucket-view"] if best["gradient_as_bucket_view"] else [])
    return side, chosen


def data_parallel_table(work, steps, repeats, allreduce_launches):
    """For every DP_ROWS model: tokens/s of 1 rank and of 2 ranks (from each run's median step time, so the first
    step's start-up does not count), the all-reduce time per step, the scaling efficiency tok/s(2) / (2 tok/s(1));
    and the same for the PyTorch reference under DistributedDataParallel at its best configuration (ddp_side), against
    its own single process (train_ddp.py without --ranks); xsa 1 and 2 ranks, DDP 1 and 2 interleaved, medians of
    `repeats`; the all-reduces alone (allreduce_side_by_side) `allreduce_launches` times each."""
    rows = []
    for index, (label, model, steps_divisor) in enumerate(DP_ROWS):
        n_steps = max(4, steps // steps_divisor)
        size = model_size(model)
        gloo, xsa_allreduce = allreduce_side_by_side(4 * int(size["parameters"]), allreduce_launches)
        ddp, best = ddp_side(reference_shape(model), n_steps, gloo)
        shape = reference_shape(model) + ["--steps", str(n_steps), "--warmup", "1"]  # DDP's first step builds buckets
        samples = {1: [], 2: []}
        apart = []  # the 2-rank step without its communication (independent_pair)
        ddp_samples = {1: [], 2: []}
        for r in range(repeats):
            for ranks in (1, 2):
                m = train_throughput(work, f"dp{index}_{ranks}_{r}", ["xsa"], 1, n_steps, extra=model,
                                     ranks=ranks)
                samples[ranks].append(m)
            apart.append(independent_pair(work, f"dp{index}_apart_{r}", model, n_steps,
                                          samples[1][0]["batch_size"] // 2))
            ddp_samples[1].append(train_ddp(shape))
            ddp_samples[2].append(train_ddp(["--ranks", "2"] + best + shape))
        tokens_per_step = samples[1][0]["tokens_per_step"]  # the global batch: the same for 1 and 2 ranks
        if any(m["tokens_per_step"] != tokens_per_step for m in samples[1] + samples[2]):
            sys.exit(f"bench: error: {label}: the runs' global batches differ")
        one = statistics.median(m["step_ms_median"] for m in samples[1])
        two = statistics.median(m["step_ms_median"] for m in samples[2])
        reduce_ms = statistics.median(m["allreduce_ms_median"] for m in samples[2])
        apart_ms = statistics.median(apart)
        rows.append({"model": label, "overrides": list(model), "steps": n_steps, "parameters": size["parameters"],
                     "flops_per_token": size["flops_per_token"], "tokens_per_step": tokens_per_step,
                     "one_rank": {"step_ms": one, "tokens_per_s": 1e3 * tokens_per_step / one,
                                  "samples_step_ms": [m["step_ms_median"] for m in samples[1]]},
                     "two_ranks": {"step_ms": two, "tokens_per_s": 1e3 * tokens_per_step / two,
                                   "allreduce_ms": reduce_ms,
                                   "samples_step_ms": [m["step_ms_median"] for m in samples[2]],
                                   "samples_allreduce_ms": [m["allreduce_ms_median"] for m in samples[2]]},
                     "efficiency": one / (2 * two),
                     "no_communication": {"step_ms": apart_ms, "samples_step_ms": apart,
                                          "efficiency": one / (2 * apart_ms)},
                     "ddp": ddp_row(ddp, ddp_samples, tokens_per_step),
                     "xsa_allreduce": xsa_allreduce})
    return rows


def independent_pair(out_root, name, model, n_steps, batch_size):
    """A 2-rank step with its communication taken out: two xsa-train processes at once, each 1 thread on
    `batch_size` sequences (a rank's half of the global batch) and nothing shared, so they differ from one process
    alone only by the machine they share (cores, caches, memory bandwidth) and by the half batch, not by any
    all-reduce. Returns the slower one's median step ms (a synchronous step waits for the slower rank)."""
    procs = []
    for k in range(2):
        out = os.path.join(out_root, f"{name}_{k}")
        cmd = xsa_train_command(out, timed_run_overrides(["xsa"], 1, n_steps) + list(model)
                                + [f"train.batch_size={batch_size}"])
        print("+ " + " ".join(cmd) + " &", flush=True)
        procs.append((subprocess.Popen(cmd, cwd=ROOT), out))
    failed = [p.args for p, _ in procs if p.wait() != 0]
    if failed:
        sys.exit(f"bench: error: a process of the no-communication pair failed: {' '.join(failed[0])}")
    return max(json.load(open(os.path.join(out, "results.json")))["runs"][0]["timing"]["step_ms_median"]
               for _, out in procs)


def allreduce_side_by_side(nbytes, launches):
    """Gloo's all-reduce through torch.distributed (train_ddp.py --allreduce-bytes) and xsa's (xsa-bench
    --allreduce-mb: RankGroup::start_sum, the path of training's buckets) of a float32 buffer of `nbytes`, 2 local
    ranks, rank 0's times after a barrier: GLOO_REPEATS timed per launch, the two launched in turn `launches` times,
    so a slow spell of the machine hits both. Returns (gloo, xsa), each with every sample, every launch's median
    and the median of all samples, and xsa's bandwidth over Gloo's with the launch as the unit
    (paired_launch_ratio): the samples of one launch share its process, connection and placement on the cores,
    and the spread between launches is as large as the gap measured (pooling them as independent samples
    understated that spread)."""
    buffer_bytes = 4 * ((nbytes + 3) // 4)  # train_ddp.py's float32s (rounded up; xsa-bench rounds down: checked)
    gloo, xsa = [], []  # one list of samples per launch
    for _ in range(launches):
        gloo.append(train_ddp(["--ranks", "2", "--allreduce-bytes", str(nbytes), "--allreduce-repeats",
                               str(GLOO_REPEATS), "--warmup", "2"])["gloo_allreduce"][0]["samples_ms"])
        cmd = [os.path.join(BUILD, "xsa-bench"), "--allreduce-mb", f"{nbytes / 1e6:.6f}", "--ranks", "2",
               "--repeats", str(GLOO_REPEATS)]
        print("+ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True)
        mine = json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])
        if mine["bytes"] != buffer_bytes:
            sys.exit(f"bench: error: xsa-bench timed {mine['bytes']} bytes, Gloo {buffer_bytes}")
        xsa.append(mine["samples_ms"])

    def timing(per_launch):
        samples = [ms for launch in per_launch for ms in launch]
        ms = statistics.median(samples)
        return {"bytes": buffer_bytes, "ms_median": ms, "samples_ms": samples,
                "launch_ms_median": [statistics.median(launch) for launch in per_launch],
                "MB_per_s": buffer_bytes / 1e6 / (ms / 1e3), "rounds": launches}

    gloo_timing, xsa_timing = timing(gloo), timing(xsa)
    return gloo_timing, dict(xsa_timing, over_gloo=paired_launch_ratio(gloo_timing["launch_ms_median"],
                                                                       xsa_timing["launch_ms_median"]))


# The fewest launches whose order-statistic interval of the median reaches 95% coverage (n = 6: the extremes,
# 1 - 2 / 2^6 = 0.969).
MIN_ALLREDUCE_LAUNCHES = 6


def median_interval_ranks(n, level=0.95):
    """The 1-based ranks (k, n + 1 - k) of the distribution-free interval of a median from n independent values:
    [x_(k), x_(n+1-k)] covers the population median with probability 1 - 2 P(Binomial(n, 1/2) <= k - 1), the
    largest k whose coverage is still >= level (the narrowest such interval), and that coverage."""
    if n < MIN_ALLREDUCE_LAUNCHES:
        raise ValueError(f"{n} values: an order-statistic 95% interval of a median needs at least "
                         f"{MIN_ALLREDUCE_LAUNCHES}")
    below, k = 0, 0  # below = P(Binomial(n, 1/2) <= k - 1) * 2^n
    while 1 - 2 * (below + math.comb(n, k)) / 2 ** n >= level:
        below += math.comb(n, k)
        k += 1
    return k, n + 1 - k, 1 - 2 * below / 2 ** n


def paired_launch_ratio(gloo_launch_ms, xsa_launch_ms):
    """xsa's all-reduce bandwidth over Gloo's with the launch as the unit: Gloo and xsa are launched in turn, so
    round i pairs Gloo's launch i with xsa's (a slow spell of the machine hits both); each round's ratio is Gloo's
    median ms over xsa's (> 1: xsa faster), the estimate their median, its 95% interval the order-statistic one
    (median_interval_ranks): no assumption on the ratios' distribution, only that rounds are independent."""
    ratios = [g / x for g, x in zip(gloo_launch_ms, xsa_launch_ms, strict=True)]
    low, high, coverage = median_interval_ranks(len(ratios))
    ordered = sorted(ratios)
    return {"ratio": statistics.median(ratios), "ci95": [ordered[low - 1], ordered[high - 1]],
            "coverage": coverage, "unit": "launch", "launch_ratios": ratios}


def ddp_row(side, samples, tokens_per_step):
    """The row's "ddp" object: ddp_side's search and Gloo measurement, and the medians of the measured runs."""
    if any(r["batch_size"] * r["seq_len"] != tokens_per_step for r in samples[1] + samples[2]):
        sys.exit("bench: error: the DDP runs' global batch differs from xsa-train's")

    def med(runs, key):
        return statistics.median(r[key] for r in runs)

    one, two = med(samples[1], "step_ms_median"), med(samples[2], "step_ms_median")
    return dict(side, parameters=samples[1][0]["parameters"],
                one_process={"step_ms": one, "tokens_per_s": 1e3 * tokens_per_step / one,
                             "samples_step_ms": [r["step_ms_median"] for r in samples[1]]},
                two_ranks={"step_ms": two, "tokens_per_s": 1e3 * tokens_per_step / two,
                           "allreduce_ms": med(samples[2], "allreduce_ms_median"),
                           "allreduce_exposed_ms": med(samples[2], "allreduce_exposed_ms_median"),
                           "buckets": samples[2][0]["buckets"][-1],
                           "samples_step_ms": [r["step_ms_median"] for r in samples[2]],
                           "samples_allreduce_ms": [r["allreduce_ms_median"] for r in samples[2]],
                           "samples_allreduce_exposed_ms": [r["allreduce_exposed_ms_median"] for r in samples[2]]},
                efficiency=one / (2 * two))


def print_data_parallel_table(rows):
    """The data-parallel table; with DDP's columns where the rows hold a "ddp" object (bench.json files written
    before GitHub issue 59 have none and print as they always did)."""
    intro = ("\nData-parallel ranks on one machine: `xsa-train --ranks 2` (2 ranks x 1 thread, c10d/Gloo on 127.0.0.1) "
             "against 1 rank x 1 thread, the same global batch of 32 x 128 tokens, XSA alone; medians of interleaved "
             "repeats")
    if not any("ddp" in r for r in rows):
        print(intro + ":\n")
        print("| model | parameters | 1 rank tok/s | 2 ranks tok/s | all-reduce ms per step (share of the step) | "
              "gradient MB | scaling efficiency, tok/s(2) / (2 x tok/s(1)) |\n|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['model']} | {r['parameters'] / 1e6:.2f} M | " + " | ".join(xsa_cells(r)) + " |")
        return
    print(intro + "; beside it the PyTorch reference (scripts/reference/train_ddp.py) under DistributedDataParallel "
          "(torchrun, 2 ranks x 1 torch thread x 1 OpenBLAS thread, Gloo on 127.0.0.1) at its best configuration "
          "(below) against its own single process, the same batch and variant:\n")
    print("| model | parameters | xsa 1 rank tok/s | xsa 2 ranks tok/s | xsa all-reduce ms per step (share of the step) | "
          "gradient MB | xsa scaling efficiency, tok/s(2) / (2 x tok/s(1)) | DDP 1 process tok/s | DDP 2 ranks tok/s | "
          "DDP all-reduce ms per step: span (exposed wait) | DDP scaling efficiency | xsa / DDP tok/s, 2 ranks |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = xsa_cells(r)
        d = r.get("ddp")
        if d is None:
            cells += ["-"] * 5
        else:
            two = d["two_ranks"]
            cells += [f"{d['one_process']['tokens_per_s']:,.0f}", f"{two['tokens_per_s']:,.0f}",
                      f"{two['allreduce_ms']:.1f} ({two['allreduce_exposed_ms']:.1f})", f"**{d['efficiency']:.2f}**",
                      f"{r['two_ranks']['tokens_per_s'] / two['tokens_per_s']:.2f}x"]
        print(f"| {r['model']} | {r['parameters'] / 1e6:.2f} M | " + " | ".join(cells) + " |")
    print("\nDDP's configuration per model: the median step ms at 2 ranks of every bucket_cap_mb x "
          "gradient_as_bucket_view tried (one launch, one after another; the fastest, in bold, is the one measured "
          "above), and Gloo's all-reduce alone (torch.distributed, 2 ranks, a float32 buffer of the gradient's size, "
          "rank 0's median after a barrier):\n")
    print("| model | DDP search: step ms per bucket MB, gradient_as_bucket_view off / on | Gloo all-reduce of the "
          "gradient (torch.distributed) | xsa's all-reduce of the gradient (xsa-bench --allreduce-mb) |\n|---|---|---|---|")
    for r in rows:
        d = r.get("ddp")
        if d is None:
            continue
        best = (d["config"]["bucket_cap_mb"], d["config"]["gradient_as_bucket_view"])
        tried = []
        for t in d["search"]:
            cell = f"{t['bucket_cap_mb']:g} MB {'on' if t['gradient_as_bucket_view'] else 'off'}: {t['step_ms_median']:,.0f}"
            tried.append(f"**{cell}**" if (t["bucket_cap_mb"], t["gradient_as_bucket_view"]) == best else cell)
        g = d["gloo_allreduce"]
        x = r.get("xsa_allreduce")
        mine = "-"
        if x:
            over = x.get("over_gloo")  # measured in turns with Gloo's (files before have one launch of each)
            mine = f"{x['bytes'] / 1e6:.1f} MB in {x['ms_median']:.1f} ms: {x['MB_per_s']:,.0f} MB/s ("
            if over and over.get("unit") == "launch":
                low, high = over["ci95"]
                mine += (f"{over['ratio']:.2f}x Gloo's, the median of {len(over['launch_ratios'])} paired launches' "
                         f"ratios, {100 * over['coverage']:.1f}% CI [{low:.2f}, {high:.2f}])")
            else:  # files before: the ratio of the pooled medians, with an interval that pooled the launches' samples
                mine += f"{x['MB_per_s'] / g['MB_per_s']:.2f}x Gloo's"
                if over:
                    low, high = over["ci95"]
                    mine += (f", 95% CI [{low:.2f}, {high:.2f}] over {len(x['samples_ms'])} and "
                             f"{len(g['samples_ms'])} samples")
                mine += ")"
        print(f"| {r['model']} | {', '.join(tried)} ({d['search_steps']} steps each) | {g['bytes'] / 1e6:.1f} MB in "
              f"{g['ms_median']:.1f} ms: {g['MB_per_s']:,.0f} MB/s | {mine} |")
    print_efficiency_split(rows)


def print_efficiency_split(rows):
    """Where xsa's 2-rank efficiency goes, for rows with a no-communication pair (independent_pair): the ideal
    step (1 rank's / 2), two processes at half the batch with nothing shared, and the 2-rank step; from ideal to
    the pair is what two half-batch processes at once cost (the shared machine, the half batch: negative where
    the half batch runs more than twice as fast), from the pair to 2 ranks the communication's."""
    split = [r for r in rows if "no_communication" in r]
    if not split:
        return
    print("\nWhere xsa's 2-rank efficiency goes: the ideal step is 1 rank's over 2; two xsa-train processes at once, "
          "each 1 thread on half the global batch with nothing shared, are 2 ranks without their communication: "
          "they differ from the ideal only by sharing the machine and by the half batch (a smaller step can be "
          "more than twice as fast, its activations in cache), so their efficiency is the ceiling of any "
          "all-reduce; 2 ranks add the communication (the slower process's median step; medians of the same "
          "interleaved repeats):\n")
    print("| model | ideal 2-rank step ms | 2 processes, no communication: step ms (efficiency ceiling) | 2 ranks: "
          "step ms (efficiency) | cost of two half-batch processes at once / of communication, share of the ideal "
          "step |\n|---|---|---|---|---|")
    for r in split:
        ideal = r["one_rank"]["step_ms"] / 2
        apart, two = r["no_communication"]["step_ms"], r["two_ranks"]["step_ms"]
        print(f"| {r['model']} | {ideal:,.1f} | {apart:,.1f} ({r['no_communication']['efficiency']:.2f}) | "
              f"{two:,.1f} ({r['efficiency']:.2f}) | {100 * (apart - ideal) / ideal:+.1f}% / "
              f"{100 * (two - apart) / ideal:+.1f}% |")


def xsa_cells(r):
    """xsa-train's cells of a data-parallel row, from "1 rank tok/s" to the scaling efficiency."""
    two = r["two_ranks"]
    return [f"{r['one_rank']['tokens_per_s']:,.0f}", f"{two['tokens_per_s']:,.0f}",
            f"{two['allreduce_ms']:.1f} ({100 * two['allreduce_ms'] / two['step_ms']:.0f}%)",
            f"{4 * r['parameters'] / 1e6:.0f}", f"**{r['efficiency']:.2f}** (target >= 0.90)"]


# The scale-out plan (README "Scale-out"): one epoch of the full TinyStories on N nodes of this machine's kind,
# from the largest data-parallel row's measurements. The choices are here, once, and printed with the table.
PLAN_TOKENS = 470e6            # ~ one epoch of TinyStories (the issue's figure; the dataset's train split)
PLAN_NODES = (8, 32, 128)
PLAN_GBITS = (10, 25)
PLAN_SEQUENCES = 512           # the global batch in sequences of 128 tokens (65,536 tokens per step)
PLAN_HOP_LATENCY_S = 50e-6     # an assumption: one TCP message between nodes on Ethernet; not measured here


# A shaped network (GitHub issue 59): xsa-train's ranks of the largest data-parallel row's model in network
# namespaces joined by tc-shaped links (scripts/perf/shaped_link.py); "unshaped" is the same namespaces without tc,
# the reference step each rate's prediction adds the wire time to. At 1 Gbit/s also without buckets
# (runtime.dist_bucket_mb=0: nothing overlapped), the plan's old model as it was written.
SHAPED_RANKS = (2, 4)
SHAPED_RATES = ("unshaped", "10gbit", "1gbit")
SHAPED_STEPS = 5
FRAME_BYTES_PER_PAYLOAD = 1514 / 1448  # a shaper counts whole Ethernet frames (MTU 1500, TCP timestamps)


def shaped_link_table(work):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import shaped_link  # scripts/perf/shaped_link.py: needs root and iproute2
    label, model, _ = DP_ROWS[-1]
    runs = []
    for ranks in SHAPED_RANKS:
        for rate in SHAPED_RATES:
            for mib in ((25, 0) if rate == "1gbit" else (25,)):
                out = os.path.join(work, f"shaped_{ranks}_{rate}_{mib}")
                overrides = timed_run_overrides(["xsa"], 1, SHAPED_STEPS) + list(model) + [
                    f"runtime.dist_bucket_mb={mib}"]
                print(f"+ shaped_link: {ranks} ranks at {rate}, dist_bucket_mb {mib}", flush=True)
                m = shaped_link.train_xsa(out, ranks, rate, overrides=overrides)
                runs.append({"ranks": ranks, "rate": rate, "rate_bits_per_s": m["rate_bits_per_s"],
                             "dist_bucket_mb": mib, "step_ms": m["step_ms_median"],
                             "allreduce_ms": m["allreduce_ms_median"], "tokens_per_s": m["tokens_per_s"]})
    parameters = model_size(model)["parameters"]
    return {"model": label, "overrides": list(model), "parameters": parameters, "steps": SHAPED_STEPS,
            "runs": runs, "fit": shaped_fit(runs, parameters)}


def wire_s(ranks, nbytes, bits_per_s):
    """A ring all-reduce's time on the wire: each rank sends and receives 2(R-1)/R x S bytes (plus frame headers)."""
    return 2.0 * (ranks - 1) / ranks * nbytes * FRAME_BYTES_PER_PAYLOAD * 8 / bits_per_s


def shaped_fit(runs, parameters):
    """The plan's cost model against the shaped runs. Before the fit (the model as the plan had it, nothing
    overlapped): step(rate) = step(unshaped) + wire time. With overlap: step = step(unshaped) + max(0, wire -
    h x step(unshaped)), h the share of a step that hides communication (the backward pass after the first bucket),
    fitted by least squares on the relative errors of the bucketed runs (grid of 0.001)."""
    S = 4.0 * parameters
    base = {r["ranks"]: r["step_ms"] / 1e3 for r in runs if r["rate"] == "unshaped"}
    shaped = [r for r in runs if r["rate"] != "unshaped"]

    def predict(r, h):
        b = base[r["ranks"]]
        return b + max(0.0, wire_s(r["ranks"], S, r["rate_bits_per_s"]) - h * b)

    bucketed = [r for r in shaped if r["dist_bucket_mb"] > 0]
    h = min((k / 1000 for k in range(1001)),
            key=lambda h: sum((predict(r, h) / (r["step_ms"] / 1e3) - 1) ** 2 for r in bucketed))
    points = [{"ranks": r["ranks"], "rate": r["rate"], "dist_bucket_mb": r["dist_bucket_mb"],
               "measured_s": r["step_ms"] / 1e3, "wire_s": wire_s(r["ranks"], S, r["rate_bits_per_s"]),
               "before_fit_s": predict(r, 0.0),
               "fitted_s": predict(r, h if r["dist_bucket_mb"] > 0 else 0.0)} for r in shaped]
    for p in points:
        p["before_fit_error"] = p["before_fit_s"] / p["measured_s"] - 1
        p["fitted_error"] = p["fitted_s"] / p["measured_s"] - 1
    return {"hidden_fraction": h, "points": points}


def print_shaped_link_table(shaped):
    fit = shaped["fit"]
    print(f"\nA shaped network: `xsa-train` ranks of {shaped['model']} ({shaped['parameters'] / 1e6:.1f}M parameters, "
          f"{4 * shaped['parameters'] / 1e6:.0f} MB of gradient) in network namespaces on a bridge, every link shaped "
          f"by tc tbf (scripts/perf/shaped_link.py), 1 thread per rank on this machine's cores, {shaped['steps']} steps "
          f"per run (median step); predicted = the step unshaped + the ring all-reduce's wire time 2(R-1)/R x S x "
          f"1514/1448 x 8 / rate, before the fit with nothing hidden, fitted with max(0, wire - h x step unshaped), "
          f"h = {fit['hidden_fraction']:.3f} (least squares over the bucketed runs):\n")
    print("| ranks | link | buckets | step s measured | wire s | predicted before the fit (error) | fitted (error) |\n"
          "|---|---|---|---|---|---|---|")
    base = {r["ranks"]: r for r in shaped["runs"] if r["rate"] == "unshaped"}
    for ranks, b in sorted(base.items()):
        print(f"| {ranks} | unshaped | {b['dist_bucket_mb']:g} MiB | {b['step_ms'] / 1e3:.2f} | - | - | - |")
    for p in fit["points"]:
        buckets = f"{p['dist_bucket_mb']:g} MiB" if p["dist_bucket_mb"] > 0 else "none (after backward)"
        print(f"| {p['ranks']} | {p['rate']} | {buckets} | {p['measured_s']:.2f} | {p['wire_s']:.2f} | "
              f"{p['before_fit_s']:.2f} ({100 * p['before_fit_error']:+.0f}%) | {p['fitted_s']:.2f} "
              f"({100 * p['fitted_error']:+.0f}%) |")


def scaleout_plan(row, cores, hidden=0.0):
    """Per (nodes, Gbit/s): ranks R = nodes x cores (one rank per core, as measured), and per step
    t_compute = tokens per rank / (1-rank tok/s), t_copy = 2(R-1)/R x S x (measured loopback all-reduce ms per
    byte), t_wire = 2(R-1)/R x S / bandwidth, t_latency = 2(R-1) x hop latency (a ring all-reduce: 2(R-1) steps);
    t_comm = their sum; step = t_compute + max(0, t_comm - hidden x t_compute), `hidden` the share of a step that
    hides communication (the shaped-link fit; 0 = nothing overlaps). The loopback cost per byte is xsa's all-reduce
    alone (xsa-bench --allreduce-mb) where the row has it, else (files before the buckets) the step's all-reduce
    time, when that was the whole all-reduce."""
    S = 4.0 * row["parameters"]  # fp32 gradient bytes
    rate = row["one_rank"]["tokens_per_s"]
    if "xsa_allreduce" in row:
        copy_s_per_byte = 1.0 / (row["xsa_allreduce"]["MB_per_s"] * 1e6)  # 2 ranks: each moves S bytes
    else:
        copy_s_per_byte = row["two_ranks"]["allreduce_ms"] / 1e3 / S
    tokens_per_step = PLAN_SEQUENCES * 128
    steps = PLAN_TOKENS / tokens_per_step
    out = []
    for gbits in PLAN_GBITS:
        for nodes in PLAN_NODES:
            R = nodes * cores
            moved = 2.0 * (R - 1) / R * S
            t_compute = tokens_per_step / R / rate
            t_comm = moved * copy_s_per_byte + moved / (gbits * 1e9 / 8) + 2 * (R - 1) * PLAN_HOP_LATENCY_S
            step = t_compute + max(0.0, t_comm - hidden * t_compute)
            out.append({"gbits": gbits, "nodes": nodes, "ranks": R, "compute_s": t_compute, "comm_s": t_comm,
                        "efficiency": t_compute / step, "epoch_h": steps * step / 3600})
    return {"bytes": S, "rate": rate, "copy_s_per_byte": copy_s_per_byte, "steps": steps, "rows": out,
            "hidden": hidden}


def print_scaleout_plan(rows, cores, shaped=None):
    row = rows[-1]
    hidden = shaped["fit"]["hidden_fraction"] if shaped else 0.0
    plan = scaleout_plan(row, cores, hidden)
    print(f"\nOne epoch of TinyStories ({PLAN_TOKENS / 1e6:.0f}M tokens) for {row['model']}, "
          f"{row['parameters'] / 1e6:.1f}M parameters, on N nodes of {cores} cores like this one, one rank per core; "
          f"global batch {PLAN_SEQUENCES} x 128 = {PLAN_SEQUENCES * 128:,} tokens, {plan['steps']:,.0f} steps:\n")
    print("| network | nodes (ranks) | compute s per step | all-reduce s per step | efficiency | epoch hours |\n"
          "|---|---|---|---|---|---|")
    for p in plan["rows"]:
        print(f"| {p['gbits']} Gbit/s | {p['nodes']} ({p['ranks']}) | {p['compute_s']:.2f} | {p['comm_s']:.2f} | "
              f"{p['efficiency']:.2f} | {p['epoch_h']:.1f} |")
    S = plan["bytes"]
    # Where it stops scaling: compute per step falls as 1/N, the all-reduce does not (2S/bandwidth for large R).
    # With overlap, efficiency 0.5 where t_compute = t_comm - hidden x t_compute: (1 + hidden) times more nodes.
    halves, before = [], []
    for gbits in PLAN_GBITS:
        comm = 2 * S * plan["copy_s_per_byte"] + 2 * S / (gbits * 1e9 / 8)
        nodes = PLAN_SEQUENCES * 128 / (plan['rate'] * cores * comm)
        halves.append(f"{nodes * (1 + hidden):,.0f} nodes at {gbits} Gbit/s")
        before.append(f"{nodes:,.0f}")
    loopback = ("xsa's all-reduce alone: xsa-bench --allreduce-mb, 2 ranks, rank 0's median after a barrier, what "
                "copying and summing cost" if "xsa_allreduce" in row else
                "rank 0's time in it, the wait for the slower rank included: an upper bound on what copying and "
                "summing cost")
    print(f"\nMeasured here: {plan['rate']:,.0f} tok/s per rank (1 thread), the loopback all-reduce of the "
          f"{S / 1e6:.0f} MB gradient at {1e-6 / plan['copy_s_per_byte']:,.0f} MB/s ({loopback}). Per step: compute = tokens per "
          f"rank / {plan['rate']:,.0f}; all-reduce = 2(R-1)/R x {S / 1e6:.0f} MB x (1/{1e-6 / plan['copy_s_per_byte']:,.0f}"
          f" MB/s + 1/network) + 2(R-1) x {PLAN_HOP_LATENCY_S * 1e6:.0f} us (assumed hop latency)" +
          (f"; a step = compute + max(0, all-reduce - {hidden:.3f} x compute), the share of a step that hides the "
           f"all-reduce fitted on the shaped links above. Efficiency falls to 0.5 at about {' and '.join(halves)} "
           f"(without the overlap: {' and '.join(before)} nodes, x{1 + hidden:.2f})" if shaped else
           f". Efficiency falls to 0.5 where compute = all-reduce: at about {' and '.join(halves)}") +
          f"; the global batch caps it at {PLAN_SEQUENCES // cores} nodes (one sequence per rank).")


def machine_line(micro, reference_torch=None):
    """The machine a bench ran on, as xsa-bench prints it (CPU, cores, matmul flags, native bf16), and the LibTorch
    xsa-bench was built with (plus the torch the PyTorch reference ran, where it is known)."""
    cpu = micro["cpu"]
    line = (f"CPU: {cpu['model']}, {cpu['cores']} cores; flags: {' '.join(cpu['flags_present']) or '-'}; "
            f"absent: {' '.join(cpu['flags_absent']) or '-'}; native bf16: {'yes' if cpu['bf16_native'] else 'no'}; "
            f"LibTorch {micro['torch']}")
    return line + (f" (PyTorch reference: torch {reference_torch})" if reference_torch else "")


def model_line(micro):
    """The measured model, batch and attention, as xsa-bench's first line names them."""
    c = micro["config"]
    m = c["model"]
    return (f"{m['n_layer']} layers, d_model {m['d_model']}, {m['n_head']} heads × {m['d_head']}, vocab "
            f"{micro['vocab']}, batch {c['train']['batch_size']} × {c['data']['seq_len']} tokens, attention "
            f"{c['attention']['impl']}")


def print_peaks(micro):
    """The matmul peaks (the best of the model's shapes, as xsa-bench's matmul table's peak row): fp32 and, where
    measured, bf16, at 1 and 2 threads."""
    print("\n| matmul peak through LibTorch (GFLOP/s, best of the model's shapes) | 1 thread | 2 threads |\n"
          "|---|---|---|")
    for name, key in (("fp32 (sgemm)", "gemm"), ("bf16", "gemm_bf16")):
        if key in micro:
            g = micro[key]
            print(f"| {name} | {g['1']['peak_gflops']:.1f} | {g['2']['peak_gflops']:.1f} |")
        else:
            print(f"| {name} | not measured | not measured |")


def print_steps_table(micro):
    """xsa-bench's step tables at 1 thread (xsa/report/bench_tables.h: steps_table and steps_bf16_table) as one:
    the fp32 rows, then the bf16 rows with their speed-up over fp32 (the fp32 step time over the bf16 one). MFU is
    xsa-bench's (one formula), against the 1-thread fp32 peak for both precisions."""
    print(f"\nStep time at 1 thread, medians of interleaved steps (xsa-bench: {model_line(micro)}):\n")
    print("| variant | precision | forward+loss ms | backward ms | optimizer ms | step ms | step / SA's | tokens/s | "
          "MFU % (1-core fp32 peak) | bf16 speed-up (fp32 step / bf16 step) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for prec, steps in (("fp32", micro["steps"]), ("bf16", micro.get("steps_bf16", []))):
        for st in steps:
            over_sa = st["step_ms"] / steps[0]["step_ms"] if steps[0]["step_ms"] > 0 else 0.0  # bench_ratio
            speedup = f"{st['speedup_vs_fp32']:.2f}" if "speedup_vs_fp32" in st else "-"
            print(f"| {st['variant']} | {prec} | {st['forward_ms']:.1f} | {st['backward_ms']:.1f} | "
                  f"{st['optimizer_ms']:.1f} | {st['step_ms']:.1f} | {over_sa:.3f} | {st['tokens_per_s']:.0f} | "
                  f"{100 * st['mfu']:.1f} | {speedup} |")
    print(f"\nXSA / SA step time (fp32, interleaved): {micro['xsa_over_sa_step_ratio']:.3f}; "
          f"model FLOPs per token: {micro['flops_per_token'] / 1e6:.2f} M")


def flash_kernel_flops(seq_len, d_head):
    """FLOPs of the fused kernel's matmuls on one (T, D) slice, the causal half of each T x T product: forward
    2·D·T², backward 5·D·T². The formula of xsa::flash_kernel_flops (src/xsa/records/bench.h), which xsa-bench's
    kernel table divides by the time."""
    return 7.0 * d_head * float(seq_len) * float(seq_len)


def print_kernels_table(micro):
    """xsa-bench's "fused attention kernel per instruction set" table (xsa/report/bench_tables.h:
    flash_kernels_table), the same columns and numbers, from the bench.json."""
    kernels = micro.get("flash_kernels")
    print("\nFused attention kernel per instruction set (one slice, 1 thread; GFLOP/s of the causal half):\n")
    if not kernels:
        print("not measured in this run")
        return
    print("| T | d_head | instruction set | forward ms | backward ms | GFLOP/s | speed-up over baseline |\n"
          "|---|---|---|---|---|---|---|")
    for k in kernels:
        ms = k["forward_ms"] + k["backward_ms"]
        baseline_ms = 0.0
        for b in kernels:
            if b["isa"] == "baseline" and b["seq_len"] == k["seq_len"] and b["d_head"] == k["d_head"]:
                baseline_ms = b["forward_ms"] + b["backward_ms"]
        gflops = flash_kernel_flops(k["seq_len"], k["d_head"]) / (ms * 1e6) if ms > 0 else 0.0
        speedup = baseline_ms / ms if ms > 0 else 0.0
        print(f"| {k['seq_len']} | {k['d_head']} | {k['isa']} | {k['forward_ms']:.2f} | {k['backward_ms']:.2f} | "
              f"{gflops:.1f} | {speedup:.2f} |")


SHOW_PARTS = ("all", "data-parallel", "plan")


def print_show(result, part="all"):
    """What --show reprints from a bench.json, in order: the machine, the matmul peaks, the step time at 1 thread,
    the fused kernel per instruction set, the length and size table (where measured), the data-parallel table and
    the scale-out plan (where measured). part "data-parallel": the machine line and the last two; "plan": the plan."""
    micro = result["xsa_bench"]
    cores = micro["cpu"]["cores"]
    if part == "plan":
        print_scaleout_plan(result["data_parallel"], cores, result.get("shaped_link"))
        return
    torches = sorted({str(r["reference"]["torch"]) for r in result.get("lengths", []) if "torch" in r["reference"]}
                     | {str(r["ddp"]["torch"]) for r in result.get("data_parallel", []) if "ddp" in r})
    print(machine_line(micro, ", ".join(torches)))
    if part == "all":
        print_peaks(micro)
        print_steps_table(micro)
        print_kernels_table(micro)
        if "lengths" in result:
            print_lengths_result(result)
    if "data_parallel" in result:
        print_data_parallel_table(result["data_parallel"])
        if "shaped_link" in result:
            print_shaped_link_table(result["shaped_link"])
        print_scaleout_plan(result["data_parallel"], cores, result.get("shaped_link"))


def check_show_result(result, path, part="all"):
    """The fields print_show reads, each of the kind it formats, so a malformed bench.json is one line naming the
    file and the field (the catch in show() is only the last line of defence)."""
    if not isinstance(result, dict):
        raise InputError(f"{path}: expected a bench.json (a JSON object), got {user_input.json_type(result)}")
    if not result.get("lengths") and not result.get("data_parallel"):
        raise InputError(f"{path}: no length and size table and no data-parallel table (keys 'lengths' and "
                         "'data_parallel'; written by --lengths-only, --data-parallel-only or a full run)")
    if part != "all" and not result.get("data_parallel"):
        raise InputError(f"{path}: no data-parallel table (key 'data_parallel'; written by --data-parallel-only "
                         "or a full run)")
    need(result, "steps", path)
    micro = need(result, "xsa_bench", path, "object")
    where = f"{path}: xsa_bench"
    cpu = need(micro, "cpu", where, "object")
    need(cpu, "model", f"{where}.cpu", "string")
    need(cpu, "cores", f"{where}.cpu", "integer")
    for key in ("flags_present", "flags_absent"):
        for i, flag in enumerate(need(cpu, key, f"{where}.cpu", "array")):
            user_input.check(flag, f"{where}.cpu.{key}[{i}]", "string")
    boolean(cpu, "bf16_native", f"{where}.cpu")
    need(micro, "torch", where, "string")
    need(micro, "vocab", where, "integer")
    config = need(micro, "config", where, "object")
    for section, keys in (("model", ("n_layer", "d_model", "n_head", "d_head")), ("train", ("batch_size",)),
                          ("data", ("seq_len",))):
        part = need(config, section, f"{where}.config", "object")
        for key in keys:
            need(part, key, f"{where}.config.{section}", "integer")
    need(need(config, "attention", f"{where}.config", "object"), "impl", f"{where}.config.attention", "string")
    for key in ("gemm", "gemm_bf16"):
        if key == "gemm_bf16" and key not in micro:
            continue
        gemm = need(micro, key, where, "object")
        for threads in ("1", "2"):
            need(need(gemm, threads, f"{where}.{key}", "object"), "peak_gflops", f"{where}.{key}.{threads}", "number")
    need(micro, "xsa_over_sa_step_ratio", where, "number")
    need(micro, "flops_per_token", where, "number")
    for key in ("steps", "steps_bf16"):
        if key == "steps_bf16" and key not in micro:
            continue
        steps = need(micro, key, where, "array")
        if not steps:
            raise InputError(f"{where}.{key}: no step timings")
        fields = ("forward_ms", "backward_ms", "optimizer_ms", "step_ms", "tokens_per_s", "mfu") + (
            ("speedup_vs_fp32",) if key == "steps_bf16" else ())
        for i, st in enumerate(steps):
            need(st, "variant", f"{where}.{key}[{i}]", "string")
            for field in fields:
                need(st, field, f"{where}.{key}[{i}]", "number")
    if "flash_kernels" in micro:
        for i, k in enumerate(need(micro, "flash_kernels", where, "array")):
            need(k, "isa", f"{where}.flash_kernels[{i}]", "string")
            for field in ("seq_len", "d_head"):
                need(k, field, f"{where}.flash_kernels[{i}]", "integer")
            for field in ("forward_ms", "backward_ms"):
                need(k, field, f"{where}.flash_kernels[{i}]", "number")
    for i, row in enumerate(user_input.check(result.get("data_parallel", []), f"{path}: data_parallel", "array")):
        where = f"{path}: data_parallel[{i}]"
        need(row, "model", where, "string")
        for key in ("parameters", "flops_per_token", "efficiency"):
            positive(row, key, where)
        for key, fields in (("one_rank", ("step_ms", "tokens_per_s")),
                            ("two_ranks", ("step_ms", "tokens_per_s", "allreduce_ms"))):
            side = need(row, key, where, "object")
            for field in fields:
                positive(side, field, f"{where}.{key}")
        if "ddp" in row:  # GitHub issue 59; files written before have none
            check_ddp(need(row, "ddp", where, "object"), f"{where}.ddp")
        if "xsa_allreduce" in row:
            x = need(row, "xsa_allreduce", where, "object")
            for key in ("bytes", "ms_median", "MB_per_s"):
                positive(x, key, f"{where}.xsa_allreduce")
            if "over_gloo" in x:
                over = need(x, "over_gloo", f"{where}.xsa_allreduce", "object")
                interval = need(over, "ci95", f"{where}.xsa_allreduce.over_gloo", "array")
                if over.get("unit") == "launch":
                    positive(over, "coverage", f"{where}.xsa_allreduce.over_gloo")
                    for j, ratio in enumerate(need(over, "launch_ratios", f"{where}.xsa_allreduce.over_gloo",
                                                   "array")):
                        if user_input.check(ratio, f"{where}.xsa_allreduce.over_gloo.launch_ratios[{j}]",
                                            "number") <= 0:
                            raise InputError(f"{where}.xsa_allreduce.over_gloo.launch_ratios[{j}]: expected a "
                                             f"positive number, got {ratio}")
                if len(interval) != 2:
                    raise InputError(f"{where}.xsa_allreduce.over_gloo.ci95: expected [low, high], got "
                                     f"{len(interval)} number(s)")
                for j, bound in enumerate(interval):
                    if user_input.check(bound, f"{where}.xsa_allreduce.over_gloo.ci95[{j}]", "number") <= 0:
                        raise InputError(f"{where}.xsa_allreduce.over_gloo.ci95[{j}]: expected a positive number, "
                                         f"got {bound}")
                for j, ms in enumerate(need(x, "samples_ms", f"{where}.xsa_allreduce", "array")):
                    user_input.check(ms, f"{where}.xsa_allreduce.samples_ms[{j}]", "number")
        if "no_communication" in row:
            apart = need(row, "no_communication", where, "object")
            for key in ("step_ms", "efficiency"):
                positive(apart, key, f"{where}.no_communication")
    if "shaped_link" in result:
        where = f"{path}: shaped_link"
        shaped = need(result, "shaped_link", path, "object")
        need(shaped, "model", where, "string")
        positive(shaped, "parameters", where)
        positive(shaped, "steps", where)
        runs = need(shaped, "runs", where, "array")
        for i, r in enumerate(runs):
            need(r, "rate", f"{where}.runs[{i}]", "string")
            need(r, "dist_bucket_mb", f"{where}.runs[{i}]", "number")
            for key in ("ranks", "step_ms"):
                positive(r, key, f"{where}.runs[{i}]")
        if not any(r["rate"] == "unshaped" for r in runs):
            raise InputError(f"{where}.runs: no unshaped run (the reference step of every prediction)")
        fit = need(shaped, "fit", where, "object")
        need(fit, "hidden_fraction", f"{where}.fit", "number")
        for i, p in enumerate(need(fit, "points", f"{where}.fit", "array")):
            for key in ("ranks", "measured_s", "wire_s", "before_fit_s", "fitted_s", "before_fit_error",
                        "fitted_error", "dist_bucket_mb"):
                need(p, key, f"{where}.fit.points[{i}]", "number")
            need(p, "rate", f"{where}.fit.points[{i}]", "string")
    for i, row in enumerate(user_input.check(result.get("lengths", []), f"{path}: lengths", "array")):
        where = f"{path}: lengths[{i}]"
        need(row, "model", where, "string")
        need(row, "seq_len", where, "number")
        need(row, "batch", where)
        ref = need(row, "reference", where, "object")
        need(ref, "tokens_per_s", f"{where}.reference", "number")
        for key in ("torch_threads", "blas_threads", "attention"):
            need(ref, key, f"{where}.reference")
        for impl in IMPLS:
            m = need(row, impl, where, "object")
            if "error" in m:
                continue
            for key in ("tokens_per_s_per_run", "mfu", "peak_rss_mib", "xsa_over_sa_step"):
                need(m, key, f"{where}.{impl}", "number")
            if "over_reference" in m:
                need(m, "over_reference", f"{where}.{impl}", "number")


def positive(obj, key, where):
    """obj[key], a positive finite number, or an InputError naming it."""
    value = need(obj, key, where, "number")
    if value <= 0:
        raise InputError(f"{user_input.inner(where, key)}: expected a positive number, got {value}")
    return value


def boolean(obj, key, where):
    """obj[key], true or false, or an InputError naming it."""
    value = need(obj, key, where)
    if not isinstance(value, bool):
        raise InputError(f"{user_input.inner(where, key)}: expected true or false, got {user_input.json_type(value)}")
    return value


def check_ddp(ddp, where):
    """A data-parallel row's "ddp" object (ddp_row), the fields print_data_parallel_table reads."""
    need(ddp, "torch", where, "string")
    positive(ddp, "efficiency", where)
    positive(ddp, "search_steps", where)
    for key, fields in (("one_process", ("step_ms", "tokens_per_s")),
                        ("two_ranks", ("step_ms", "tokens_per_s", "allreduce_ms"))):
        side = need(ddp, key, where, "object")
        for field in fields:
            positive(side, field, f"{where}.{key}")
    if need(ddp["two_ranks"], "allreduce_exposed_ms", f"{where}.two_ranks", "number") < 0:
        raise InputError(f"{where}.two_ranks.allreduce_exposed_ms: expected a number >= 0, got "
                         f"{ddp['two_ranks']['allreduce_exposed_ms']}")
    config = need(ddp, "config", where, "object")
    positive(config, "bucket_cap_mb", f"{where}.config")
    boolean(config, "gradient_as_bucket_view", f"{where}.config")
    tried = need(ddp, "search", where, "array")
    if not tried:
        raise InputError(f"{where}.search: no configurations")
    for j, t in enumerate(tried):
        positive(t, "bucket_cap_mb", f"{where}.search[{j}]")
        boolean(t, "gradient_as_bucket_view", f"{where}.search[{j}]")
        positive(t, "step_ms_median", f"{where}.search[{j}]")
    gloo = need(ddp, "gloo_allreduce", where, "object")
    for key in ("bytes", "ms_median", "MB_per_s"):
        positive(gloo, key, f"{where}.gloo_allreduce")
    for j, ms in enumerate(need(gloo, "samples_ms", f"{where}.gloo_allreduce", "array")):
        user_input.check(ms, f"{where}.gloo_allreduce.samples_ms[{j}]", "number")


def show(path, part="all"):
    """Renders everything before printing it, so a bad file prints its one-line error and no part table."""
    try:
        result = user_input.load_json(path, "a bench.json")
        check_show_result(result, path, part)
        table = io.StringIO()
        with contextlib.redirect_stdout(table):
            print_show(result, part)
        sys.stdout.write(table.getvalue())
    except InputError as e:  # stdout's OutputError too (exit 1)
        user_input.fail("bench", e)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, StopIteration, ArithmeticError) as e:
        # e.g. a ratio row without its rows (StopIteration), a zero to divide by or finite numbers whose product
        # overflows a float (ArithmeticError)
        user_input.fail("bench", f"{path}: not a bench.json with a length table (missing or bad field: "
                                 f"{type(e).__name__} {e})")


def sweep_time(out_root, workers):
    out = os.path.join(out_root, f"sweep_w{workers}")
    t0 = time.time()
    run([os.path.join(BUILD, "xsa-sweep"), "--config", "configs/sweep_smoke.yaml", "--workers", str(workers),
         "--out", out], stdout=subprocess.DEVNULL)
    return time.time() - t0


def median_of(fn, repeats):
    values = [fn() for _ in range(repeats)]
    return statistics.median(values), values


def main():
    ap = user_input.ArgumentParser("bench", description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=30, help="training steps per throughput measurement")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of each throughput measurement (median)")
    ap.add_argument("--allreduce-launches", type=int, default=15,
                    help="launches of each all-reduce alone, Gloo's and xsa's in turn (the unit of their ratio's "
                         f"interval; at least {MIN_ALLREDUCE_LAUNCHES})")
    ap.add_argument("--quick", action="store_true", help="skip xsa-bench's scaling sweeps and the sweep timing")
    ap.add_argument("--bf16", action="store_true",
                    help="measure bf16 even if the CPU has no native bf16 (emulated there: very slow)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench"), help="where bench.json goes")
    ap.add_argument("--lengths-only", action="store_true",
                    help="only the sgemm peak and the length and size table (both attention implementations)")
    ap.add_argument("--data-parallel-only", action="store_true",
                    help="only the data-parallel table (1 rank against --ranks 2, xsa-train and PyTorch's DDP) and "
                         "the scale-out plan")
    ap.add_argument("--show", metavar="FILE", help="print the tables of this bench.json and stop")
    ap.add_argument("--part", choices=SHOW_PARTS, default="all",
                    help="with --show: everything, the data-parallel table and plan, or the plan alone")
    args = ap.parse_args()
    if args.show:
        show(args.show, args.part)
        return
    for option, value, least in (("--steps", args.steps, 1), ("--repeats", args.repeats, 1),
                                 ("--allreduce-launches", args.allreduce_launches, MIN_ALLREDUCE_LAUNCHES)):
        if value < least:  # before anything runs
            user_input.fail("bench", f"{option} {value}: expected an integer >= {least}")
    try:  # before anything runs: bench.json never goes over (or into, or around) what the benchmark reads
        user_input.refuse_overlap(args.out, BENCH_INPUTS)
    except InputError as e:
        user_input.fail("bench", e)
    if not os.path.exists(os.path.join(ROOT, "data/tinystories/meta.json")):
        sys.exit("bench: error: data/tinystories is not prepared (see data/README.md or run scripts/demo.sh)")
    try:
        user_input.ensure_folder(args.out, "--out folder")
    except InputError as e:
        user_input.fail("bench", e)
    try:
        measure_and_report(args)
    except subprocess.CalledProcessError as e:  # the tool's own message is above (or, captured, its last line here)
        last = [l for l in e.stderr.splitlines() if l.strip()][-1:] if isinstance(e.stderr, str) else []
        user_input.fail("bench", f"`{' '.join(map(str, e.cmd))}` exited {e.returncode}"
                        + (f": {last[0].strip()}" if last else ""), 1)
    except OSError as e:  # e.g. an executable not built, or the temporary folder's disk full
        user_input.fail("bench", f"{e.filename or 'bench'}: {e.strerror or e}", 1)


# What a measuring run reads: --out may not be, hold or lie inside any of them.
BENCH_INPUTS = [os.path.join(ROOT, p) for p in ("data/tinystories", "configs/default.yaml", "configs/sweep_smoke.yaml",
                                                "scripts/reference")] + \
               [os.path.join(BUILD, exe) for exe in ("xsa-train", "xsa-bench", "xsa-sweep")]


def measure_and_report(args):
    """Everything a measuring run does: the measurements, the tables, bench.json."""
    work = tempfile.mkdtemp(prefix="xsa-bench-")
    result = {"steps": args.steps, "repeats": args.repeats, "allreduce_launches": args.allreduce_launches}
    try:
        bench_json = os.path.join(work, "xsa_bench.json")
        quick_micro = args.quick or args.lengths_only or args.data_parallel_only
        run([os.path.join(BUILD, "xsa-bench"), "--json", bench_json]
            + (["--quick"] if quick_micro else []) + (["--bf16"] if args.bf16 else []))
        micro = json.load(open(bench_json))
        result["xsa_bench"] = micro
        cpu = micro["cpu"]
        peak2 = micro["gemm"]["2"]["peak_gflops"] * 1e9
        if args.data_parallel_only:
            result["data_parallel"] = data_parallel_table(work, args.steps, args.repeats, args.allreduce_launches)
            if os.geteuid() == 0:
                result["shaped_link"] = shaped_link_table(work)
            else:
                print("bench: the shaped-link table needs root (network namespaces): left out", flush=True)
            print(machine_line(micro))
            print_data_parallel_table(result["data_parallel"])
            if "shaped_link" in result:
                print_shaped_link_table(result["shaped_link"])
            print_scaleout_plan(result["data_parallel"], cpu["cores"], result.get("shaped_link"))
            write_result(result, args.out)
            return
        if args.lengths_only:
            result["lengths"] = length_table(work, args.steps, peak2, args.repeats)
            print_lengths_result(result)
            write_result(result, args.out)
            return
        measure_bf16 = cpu["bf16_native"] or args.bf16

        def measure(name, variants, workers, precision="fp32", repeats=args.repeats, steps=args.steps):
            counter = iter(range(1000))
            return median_of(lambda: train_throughput(work, f"{name}{next(counter)}", variants, workers, steps,
                                                      precision)["tokens_per_s"], repeats)

        sa, sa_all = measure("sa", ["sa"], 1)
        xsa, xsa_all = measure("xsa", ["xsa"], 1)
        paired_seq, _ = measure("paired_seq", ["sa", "xsa"], 1)
        rss = train_throughput(work, "rss", ["sa", "xsa"], 2, args.steps)["peak_rss_mib"]
        # The headline comparison, in rounds: paired xsa-train, then every reference configuration.
        paired_all, ref_all = [], {cfg: [] for cfg in REFERENCE_THREADS}
        for r in range(args.repeats):
            paired_all.append(train_throughput(work, f"paired{r}", ["sa", "xsa"], 2, args.steps)["tokens_per_s"])
            for threads, blas in REFERENCE_THREADS:
                ref_all[(threads, blas)].append(reference_throughput(threads, blas, args.steps))
        paired = statistics.median(paired_all)
        ref = {cfg: statistics.median(v) for cfg, v in ref_all.items()}
        best_cfg = max(ref, key=ref.get)
        ref_best = ref[best_cfg]
        bf16 = None
        if measure_bf16:
            # Emulated bf16 (no native support) is ~100x slower: a few steps, once, just to show it runs.
            steps16 = args.steps if cpu["bf16_native"] else 4
            reps16 = args.repeats if cpu["bf16_native"] else 1
            paired16, paired16_all = measure("paired_bf16", ["sa", "xsa"], 2, "bf16", reps16, steps16)
            bf16 = {"paired_tokens_per_s": paired16, "samples": paired16_all, "steps": steps16,
                    "emulated": not cpu["bf16_native"], "over_fp32_paired": paired16 / paired,
                    "over_best_fp32_reference": paired16 / ref_best}
        fpt = micro["flops_per_token"]
        peak1 = micro["gemm"]["1"]["peak_gflops"] * 1e9
        result.update({
            "cpu": cpu,
            "xsa_train": {"sa_tokens_per_s": sa, "xsa_tokens_per_s": xsa, "paired_tokens_per_s": paired,
                          "paired_sequential_tokens_per_s": paired_seq, "samples": {
                              "sa": sa_all, "xsa": xsa_all, "paired": paired_all}},
            "reference": {"configs": [{"torch_threads": t, "blas_threads": b, "tokens_per_s": ref[(t, b)],
                                       "samples": ref_all[(t, b)]} for t, b in REFERENCE_THREADS],
                          "best": {"torch_threads": best_cfg[0], "blas_threads": best_cfg[1],
                                   "tokens_per_s": ref_best}},
            "paired_over_reference": paired / ref_best,
            "mfu_paired_vs_2core_peak": fpt * paired / peak2,
            "mfu_sa_vs_1core_peak": fpt * sa / peak1,
            "xsa_over_sa_step_ratio": micro["xsa_over_sa_step_ratio"],
            "xsa_over_sa_train_ratio": sa / xsa,
            "peak_rss_mib": rss,
            "bf16": bf16,
        })
        if not args.quick:
            w1 = sweep_time(work, 1)
            w2 = sweep_time(work, 2)
            result["sweep_smoke_s"] = {"workers_1": w1, "workers_2": w2, "speedup": w1 / w2}
            result["lengths"] = length_table(work, args.steps, peak2, args.repeats)
            result["data_parallel"] = data_parallel_table(work, args.steps, args.repeats, args.allreduce_launches)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def row(name, value, target=""):
        print(f"| {name} | {value} | {target} |")

    def check(ok):
        return " ✓" if ok else " ✗"

    g1, g2 = micro["gemm"]["1"]["peak_gflops"], micro["gemm"]["2"]["peak_gflops"]
    print("\n## xsa benchmark (default model: 2 layers, d_model 128, 4 heads, vocab 4096, batch 32 x 128)\n")
    print(machine_line(micro) + "\n")
    print("| figure | measured | target |\n|---|---|---|")
    row("sgemm peak through LibTorch, 1 / 2 cores (GFLOP/s; OpenBLAS threads = cores, best torch count)",
        f"{g1:.1f} / {g2:.1f}")
    if "gemm_bf16" in micro:
        b1, b2 = micro["gemm_bf16"]["1"]["peak_gflops"], micro["gemm_bf16"]["2"]["peak_gflops"]
        row("bf16 matmul peak through LibTorch, 1 / 2 threads (GFLOP/s)",
            f"{b1:.1f} / {b2:.1f}" + ("" if cpu["bf16_native"] else " (emulated: no native bf16)"))
    else:
        row("bf16 matmul peak", "not measured: no native bf16 on this CPU")
    row("model FLOPs per token (6N + 12·L·H·Q·T)", f"{fpt / 1e6:.2f} M")
    row("xsa-train SA alone, 1 thread (tok/s)", f"{sa:.0f}")
    row("xsa-train XSA alone, 1 thread (tok/s)", f"{xsa:.0f}")
    row("**xsa-train paired SA+XSA**, 2 workers x 1 thread (tok/s)", f"**{paired:.0f}**")
    row("xsa-train paired, 1 worker x 1 thread (tok/s)", f"{paired_seq:.0f}")
    for t, b in REFERENCE_THREADS:
        best = " (best)" if (t, b) == best_cfg else ""
        row(f"PyTorch reference, sa then xsa, torch {t} x OpenBLAS {b} threads (tok/s)", f"{ref[(t, b)]:.0f}{best}")
    ratio = result["paired_over_reference"]
    row("paired xsa-train / best reference", f"**{ratio:.2f}x**", ">= 2.0x" + check(ratio >= 2.0))
    mfu = result["mfu_paired_vs_2core_peak"]
    row("MFU, paired vs 2-core sgemm peak", f"**{100 * mfu:.1f}%**", ">= 60%" + check(mfu >= 0.60))
    row("MFU, SA alone vs 1-core sgemm peak", f"{100 * result['mfu_sa_vs_1core_peak']:.1f}%", "")
    xr = micro["xsa_over_sa_step_ratio"]
    row("XSA / SA step time (interleaved micro-benchmark)", f"{xr:.3f}", "<= 1.02" + check(xr <= 1.02))
    row("XSA / SA step time (separate xsa-train runs)", f"{result['xsa_over_sa_train_ratio']:.3f}", "")
    if bf16 is not None:
        note = f" (emulated, {bf16['steps']} steps)" if bf16["emulated"] else ""
        row("xsa-train paired SA+XSA in bf16, 2 workers x 1 thread (tok/s)", f"{bf16['paired_tokens_per_s']:.0f}{note}")
        target = "" if bf16["emulated"] else check(bf16["over_fp32_paired"] >= 1.6)
        row("bf16 paired / fp32 paired", f"{bf16['over_fp32_paired']:.2f}x", ">= 1.6x (native bf16)" + target)
        target = "" if bf16["emulated"] else check(bf16["over_best_fp32_reference"] >= 3.0)
        row("bf16 paired / best fp32 reference", f"{bf16['over_best_fp32_reference']:.2f}x",
            ">= 3x (native bf16)" + target)
    else:
        row("xsa-train paired in bf16", "not measured: no native bf16 on this CPU (--bf16 forces it)",
            ">= 1.6x fp32 where native")
    row("peak RSS, paired run (MiB)", f"{rss:.0f}", "< 1024" + check(rss < 1024))
    if "sweep_smoke_s" in result:
        s = result["sweep_smoke_s"]
        row("xsa-sweep smoke grid, workers 1 / 2 (s)", f"{s['workers_1']:.1f} / {s['workers_2']:.1f} "
            f"({s['speedup']:.2f}x)", ">= 1.8x" + check(s["speedup"] >= 1.8))

    print_steps_table(micro)
    if "lengths" in result:
        print_length_table(result["lengths"])
    if "data_parallel" in result:
        print_data_parallel_table(result["data_parallel"])
        print_scaleout_plan(result["data_parallel"], cpu["cores"], result.get("shaped_link"))
    write_result(result, args.out)


def write_result(result, out_dir):
    """bench.json in out_dir, written atomically: a full disk or a read-only folder is an OutputError naming it
    (one line, exit 1, through user_input.run), never a half-written file."""
    path = os.path.join(out_dir, "bench.json")
    user_input.write_atomically(path, json.dumps(result, indent=1))
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    user_input.run("bench", main)
