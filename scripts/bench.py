#!/usr/bin/python3
"""The performance benchmark (GitHub issue 5): one run, one machine, side-by-side ratios.

Measures
  1. xsa-bench: sgemm peak at the model's sizes (1 and 2 threads), step-time breakdown, XSA/SA ratio,
     scaling with sequence length and width, FLOPs per token;
  2. xsa-train throughput (training steps only, from results.json timing): SA alone, XSA alone
     (1 worker, 1 thread), and the paired SA+XSA run with the default runtime (2 workers x 1 thread);
  3. the PyTorch reference (scripts/reference/train_reference.py), variants one after another, at 1 and
     2 threads; its best is the baseline for the speed-up;
  4. xsa-sweep with --workers 1 vs 2 on configs/sweep_smoke.yaml;
then prints a table and writes bench/bench.json. Needs a build (scripts/build.sh) and data/tinystories.

Usage: scripts/bench.sh [--steps N] [--repeats R] [--quick]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
PY = "/usr/bin/python3"


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, cwd=ROOT, **kw)


def train_throughput(out_root, name, variants, workers, steps):
    """tokens/s of the training steps of one xsa-train run (sum over concurrent runs) and its peak RSS."""
    out = os.path.join(out_root, name)
    run([os.path.join(BUILD, "xsa-train"), "--config", "configs/default.yaml", "--out", out, "--quiet",
         "--set", f"attention.variants=[{','.join(variants)}]", "--set", f"runtime.workers={workers}",
         "--set", "runtime.threads=1", "--set", f"train.steps={steps}", "--set", "train.warmup_steps=2",
         "--set", "train.checkpoint_interval=0", "--set", f"eval.interval={steps}", "--set",
         f"metrics.bias_interval={steps}", "--set", "eval.batches=1", "--set", "metrics.bias_batches=1",
         "--set", "sample.count=0"])
    r = json.load(open(os.path.join(out, "results.json")))
    per_run = {x["variant"]: x["timing"]["tokens_per_s"] for x in r["runs"]}
    if workers > 1:
        total = sum(per_run.values())  # concurrent runs: their rates add up
    else:  # one after another: total tokens / total training time
        tokens = sum(x["timing"]["tokens_per_s"] * x["timing"]["train_s"] for x in r["runs"])
        total = tokens / sum(x["timing"]["train_s"] for x in r["runs"])
    return {"tokens_per_s": total, "per_run": per_run, "peak_rss_mib": r["environment"]["peak_rss_mib"]}


def reference_throughput(threads, steps):
    p = subprocess.run([PY, "scripts/reference/train_reference.py", "--threads", str(threads), "--steps",
                        str(steps), "--variants", "sa,xsa"], cwd=ROOT, check=True, capture_output=True, text=True)
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    return json.loads(line)["tokens_per_s"]


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
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=30, help="training steps per throughput measurement")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of each throughput measurement (median)")
    ap.add_argument("--quick", action="store_true", help="skip xsa-bench's scaling sweeps and the sweep timing")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench"), help="where bench.json goes")
    args = ap.parse_args()
    if not os.path.exists(os.path.join(ROOT, "data/tinystories/meta.json")):
        sys.exit("bench: error: data/tinystories is not prepared (see data/README.md or run scripts/demo.sh)")
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="xsa-bench-")
    result = {"steps": args.steps, "repeats": args.repeats}
    try:
        bench_json = os.path.join(work, "xsa_bench.json")
        run([os.path.join(BUILD, "xsa-bench"), "--json", bench_json] + (["--quick"] if args.quick else []))
        micro = json.load(open(bench_json))
        result["xsa_bench"] = micro

        def measure(name, variants, workers):
            counter = iter(range(1000))
            med, values = median_of(
                lambda: train_throughput(work, f"{name}{next(counter)}", variants, workers, args.steps)["tokens_per_s"],
                args.repeats)
            return med, values

        sa, sa_all = measure("sa", ["sa"], 1)
        xsa, xsa_all = measure("xsa", ["xsa"], 1)
        paired, paired_all = measure("paired", ["sa", "xsa"], 2)
        paired_seq, _ = measure("paired_seq", ["sa", "xsa"], 1)
        rss = train_throughput(work, "rss", ["sa", "xsa"], 2, args.steps)["peak_rss_mib"]
        ref1, ref1_all = median_of(lambda: reference_throughput(1, args.steps), args.repeats)
        ref2, ref2_all = median_of(lambda: reference_throughput(2, args.steps), args.repeats)
        ref_best = max(ref1, ref2)
        fpt = micro["flops_per_token"]
        peak2 = micro["gemm"]["2"]["peak_gflops"] * 1e9
        peak1 = micro["gemm"]["1"]["peak_gflops"] * 1e9
        result.update({
            "xsa_train": {"sa_tokens_per_s": sa, "xsa_tokens_per_s": xsa, "paired_tokens_per_s": paired,
                          "paired_sequential_tokens_per_s": paired_seq, "samples": {
                              "sa": sa_all, "xsa": xsa_all, "paired": paired_all}},
            "reference": {"threads_1": ref1, "threads_2": ref2, "samples": {"1": ref1_all, "2": ref2_all}},
            "paired_over_reference": paired / ref_best,
            "mfu_paired_vs_2core_peak": fpt * paired / peak2,
            "mfu_sa_vs_1core_peak": fpt * sa / peak1,
            "xsa_over_sa_step_ratio": micro["xsa_over_sa_step_ratio"],
            "xsa_over_sa_train_ratio": sa / xsa,
            "peak_rss_mib": rss,
        })
        if not args.quick:
            w1 = sweep_time(work, 1)
            w2 = sweep_time(work, 2)
            result["sweep_smoke_s"] = {"workers_1": w1, "workers_2": w2, "speedup": w1 / w2}
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def row(name, value, target=""):
        print(f"| {name} | {value} | {target} |")

    print("\n## xsa benchmark (default model: 2 layers, d_model 128, 4 heads, vocab 4096, batch 32 x 128)\n")
    print("| figure | measured | target |\n|---|---|---|")
    row("sgemm peak, 1 / 2 threads (GFLOP/s)",
        f"{micro['gemm']['1']['peak_gflops']:.1f} / {micro['gemm']['2']['peak_gflops']:.1f}")
    row("model FLOPs per token (6N + 12·L·H·Q·T)", f"{fpt / 1e6:.2f} M")
    row("xsa-train SA alone, 1 thread (tok/s)", f"{sa:.0f}")
    row("xsa-train XSA alone, 1 thread (tok/s)", f"{xsa:.0f}")
    row("xsa-train paired SA+XSA, 2 workers x 1 thread (tok/s)", f"{paired:.0f}")
    row("xsa-train paired, 1 worker (tok/s)", f"{paired_seq:.0f}")
    row("PyTorch reference, variants in sequence, 1 / 2 threads (tok/s)", f"{ref1:.0f} / {ref2:.0f}")
    row("paired xsa-train / best reference", f"{result['paired_over_reference']:.2f}x", ">= 2.0x")
    row("MFU, paired vs 2-core peak", f"{100 * result['mfu_paired_vs_2core_peak']:.1f}%", ">= 50%")
    row("MFU, SA alone vs 1-core peak", f"{100 * result['mfu_sa_vs_1core_peak']:.1f}%", "")
    row("XSA / SA step time (interleaved micro-benchmark)", f"{micro['xsa_over_sa_step_ratio']:.3f}", "<= 1.03")
    row("XSA / SA step time (separate xsa-train runs)", f"{result['xsa_over_sa_train_ratio']:.3f}", "")
    row("peak RSS, paired run (MiB)", f"{rss:.0f}", "< 1024")
    if "sweep_smoke_s" in result:
        s = result["sweep_smoke_s"]
        row("xsa-sweep smoke grid, workers 1 / 2 (s)", f"{s['workers_1']:.1f} / {s['workers_2']:.1f} "
            f"({s['speedup']:.2f}x)", ">= 1.8x")
    path = os.path.join(args.out, "bench.json")
    with open(path + ".tmp", "w") as f:
        json.dump(result, f, indent=1)
    os.replace(path + ".tmp", path)
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
