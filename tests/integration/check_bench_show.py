#!/usr/bin/python3
"""scripts/perf/bench.py --show on a hand-made bench.json: the machine line, the matmul peaks, every cell of the step
table (fp32 and bf16 rows) and of the fused kernel table (GFLOP/s of the causal half: 7·D·T² FLOPs, as
xsa::flash_kernel_flops), and every cell and ratio of the length and size table, against values worked out by hand
from the file's numbers; the data-parallel table and the scale-out plan (also alone, --part plan) against values
worked out by hand from the plan's formula; the same table with DDP's columns and search lines (GitHub issue 59)
where the rows hold a "ddp" object, "-" for a row without one, and a file without any printed exactly as before
(no DDP column); the shaped-link table (the plan's model before and after bench.py's fit) and the plan with the
overlap against hand-worked values, xsa's all-reduce beside Gloo's (its interval pooled in old files, by launch now:
the order-statistic ranks and coverage by hand) and where xsa's 2-rank efficiency goes (two half-batch processes at
once / the communication); a failed measurement shown as its error, and a bad file refused with a one-line error
naming it: also a number that is NaN, Infinity, 1e999 or an integer beyond a float's range (named
by its key), and finite numbers whose product overflows. Then what bench.py writes: --show to a full stdout
(/dev/full), bench.json onto a folder, into a folder where nothing can be created and on a full disk
(RLIMIT_FSIZE): one line, exit 1, nothing half-written; and an --out that is, holds or lies inside what a
measuring run reads: refused with one line, exit 2, before anything runs. Usage: check_bench_show.py BENCH_PY"""
import json
import os
import subprocess
import sys
import tempfile


def side(tok, mfu, rss_mib, xsa_sa, over):
    return {"tokens_per_s_per_run": tok, "mfu": mfu, "peak_rss_mib": rss_mib, "xsa_over_sa_step": xsa_sa,
            "over_reference": over}


def row(model, T, batch, fused, explicit, ref_tok=800.0):
    return {"model": model, "seq_len": T, "batch": batch, "flops_per_token": 1.0, "fused": fused,
            "explicit": explicit, "reference": {"tokens_per_s": ref_tok, "torch_threads": 1, "blas_threads": 2,
                                                "attention": "explicit", "torch": "1.13.0a0"}}


def step(variant, forward, backward, optimizer, step_ms, tok, mfu, **more):
    return dict({"variant": variant, "forward_ms": forward, "backward_ms": backward, "optimizer_ms": optimizer,
                 "step_ms": step_ms, "tokens_per_s": tok, "mfu": mfu}, **more)


def kernel(isa, T, d_head, forward, backward):
    return {"isa": isa, "seq_len": T, "d_head": d_head, "forward_ms": forward, "backward_ms": backward}


XSA_BENCH = {
    "cpu": {"model": "Test CPU", "cores": 4, "flags_present": ["avx2", "fma"], "flags_absent": ["amx_bf16"],
            "bf16_native": False},
    "torch": "9.9.0", "vocab": 512,
    "config": {"model": {"n_layer": 3, "d_model": 48, "n_head": 2, "d_head": 24}, "train": {"batch_size": 4},
               "data": {"seq_len": 64}, "attention": {"impl": "explicit"}},
    "gemm": {"1": {"peak_gflops": 61.26}, "2": {"peak_gflops": 123.45}},  # no gemm_bf16: not measured
    "flops_per_token": 2.5e6, "xsa_over_sa_step_ratio": 1.25,
    "steps": [step("sa", 10, 5, 1, 16, 2000, 0.25), step("xsa", 11, 5, 1, 20, 1600, 0.2)],
    "steps_bf16": [step("sa", 5, 2.5, 0.5, 8, 4000, 0.5, speedup_vs_fp32=2.0),
                   step("xsa", 7, 4, 1, 12, 2700, 0.34, speedup_vs_fp32=20 / 12)],
    # 7·D·T² = 700,000 FLOPs per slice at T = 100, D = 10: in 0.7 ms 1.0 GFLOP/s, in 0.35 ms 2.0
    "flash_kernels": [kernel("baseline", 100, 10, 0.3, 0.4), kernel("avx2", 100, 10, 0.1, 0.25)],
}

BENCH = {"steps": 8, "repeats": 3, "xsa_bench": XSA_BENCH, "lengths": [
    row("2 layers, d 128 (default)", 128, 32, side(1000.4, 0.40, 512, 1.01, 2.5), side(900, 0.36, 600, 0.99, 2.25)),
    row("2 layers, d 128", 2048, 2, side(12345.6, 0.50, 640, 1.0, 3.0), side(50, 0.10, 1536, 1.0, 0.6)),
    row("2 layers, d 128", 8192, 1, side(300, 0.62, 900, 1.0, 4.0), {"error": "failed: out of memory"}),
    row("6 layers, d 256, 8 heads", 128, 32, side(200, 0.60, 2048, 1.0, 1.5), side(190, 0.50, 2048, 1.0, 1.2)),
    row("6 layers, d 256, 8 heads", 1024, 4, side(150, 0.54, 2048, 1.0, 2.2), side(60, 0.20, 4096, 1.0, 0.8)),
]}

def dp_row(model, params, one_ms, one_tok, two_ms, two_tok, reduce_ms, efficiency):
    return {"model": model, "parameters": params, "flops_per_token": 6.0 * params, "steps": 8,
            "one_rank": {"step_ms": one_ms, "tokens_per_s": one_tok},
            "two_ranks": {"step_ms": two_ms, "tokens_per_s": two_tok, "allreduce_ms": reduce_ms},
            "efficiency": efficiency}


# The plan is projected from the last row: 25M parameters (S = 100 MB of fp32 gradient), 500 tok/s per rank, the
# 2-rank all-reduce of S in 500 ms (5e-9 s per byte, 200 MB/s); 4 cores per node (XSA_BENCH's CPU).
BENCH["data_parallel"] = [dp_row("small", 1e6, 100.0, 40960.0, 55.0, 74472.7, 5.5, 100 / 110),
                          dp_row("big", 25e6, 8192.0, 500.0, 4596.0, 891.2, 500.0, 8192 / 9192)]

# Worked out by hand: R = 4N ranks; compute = 65,536 / R / 500 s; all-reduce = 2(R-1)/R x 1e8 B x (5e-9 s/B +
# 8 / (G x 1e9) s/B) + 2(R-1) x 50 us; epoch = 470e6 / 65,536 = 7,171.6 steps x (compute + all-reduce).
PLAN_LINES = [
    "| 10 Gbit/s | 8 (32) | 4.10 | 1.13 | 0.78 | 10.4 |",     # 4.096; 0.96875 + 0.155 + 0.0031 = 1.1269
    "| 10 Gbit/s | 32 (128) | 1.02 | 1.16 | 0.47 | 4.4 |",    # 1.024; 0.99219 + 0.15875 + 0.0127 = 1.1636
    "| 10 Gbit/s | 128 (512) | 0.26 | 1.21 | 0.17 | 2.9 |",   # 0.256; 0.99805 + 0.15969 + 0.0511 = 1.2088
    "| 25 Gbit/s | 8 (32) | 4.10 | 1.03 | 0.80 | 10.2 |",     # 0.96875 + 0.062 + 0.0031 = 1.0339
    "| 25 Gbit/s | 32 (128) | 1.02 | 1.07 | 0.49 | 4.2 |",
    "| 25 Gbit/s | 128 (512) | 0.26 | 1.11 | 0.19 | 2.7 |",
    # half efficiency where 65,536 / (500 x 4) = 2 S (5e-9 + 8 / (G x 1e9)): 32.768 / 1.16 = 28, / 1.064 = 31
    "Measured here: 500 tok/s per rank (1 thread), the loopback all-reduce of the 100 MB gradient at 200 MB/s (",
    "at about 28 nodes at 10 Gbit/s and 31 nodes at 25 Gbit/s; the global batch caps it at 128 nodes",
]
DP_LINES = [
    "| small | 1.00 M | 40,960 | 74,473 | 5.5 (10%) | 4 | **0.91** (target >= 0.90) |",
    "| big | 25.00 M | 500 | 891 | 500.0 (11%) | 100 | **0.89** (target >= 0.90) |",
]

# A file written before GitHub issue 59 (no "ddp" in its rows) prints the table as it always did: this header, no
# DDP column and no DDP line anywhere.
DP_HEADER = ("| model | parameters | 1 rank tok/s | 2 ranks tok/s | all-reduce ms per step (share of the step) | "
             "gradient MB | scaling efficiency, tok/s(2) / (2 x tok/s(1)) |")


def ddp(torch, one_ms, one_tok, two_ms, two_tok, span, exposed, efficiency, best, search, gloo):
    return {"torch": torch, "threads": 1, "blas_threads": 1, "steps": 8, "warmup": 1, "parameters": 1e6,
            "config": dict(best, static_graph=False), "search_steps": 3,
            "search": [{"bucket_cap_mb": cap, "gradient_as_bucket_view": view, "step_ms_median": ms,
                        "tokens_per_s": 4096e3 / ms, "allreduce_ms_median": 1.0, "allreduce_exposed_ms_median": 0.5}
                       for cap, view, ms in search],
            "one_process": {"step_ms": one_ms, "tokens_per_s": one_tok},
            "two_ranks": {"step_ms": two_ms, "tokens_per_s": two_tok, "allreduce_ms": span,
                          "allreduce_exposed_ms": exposed, "buckets": 3},
            "efficiency": efficiency,
            "gloo_allreduce": dict(zip(("bytes", "ms_median", "MB_per_s", "samples_ms"), gloo))}


# The same rows with DDP beside them (a torch other than the length table's, so the machine line names both).
DDP_SMALL = ddp("2.6.0", 200.0, 20480.0, 110.0, 37236.36, 30.26, 4.54, 200 / 220, {"bucket_cap_mb": 25,
                "gradient_as_bucket_view": False}, [(1, False, 130), (1, True, 125.4), (25, False, 110.0),
                                                    (25, True, 118)], (4e6, 8.0, 500.0, [8.0, 7.5, 9.0]))
DDP_BIG = ddp("2.6.0", 16384.0, 250.0, 9000.0, 455.1, 812.34, 101.06, 16384 / 18000, {"bucket_cap_mb": 0.5,
              "gradient_as_bucket_view": True}, [(0.5, False, 9500), (0.5, True, 9000), (100, False, 9800),
                                                 (100, True, 9900)], (1e8, 250.0, 400.0, [250.0]))
BENCH_DDP = dict(BENCH, data_parallel=[dict(BENCH["data_parallel"][0], ddp=DDP_SMALL),
                                       dict(BENCH["data_parallel"][1], ddp=DDP_BIG)])
# Worked out by hand: DDP efficiency 200 / (2 x 110) = 0.91 and 16,384 / 18,000 = 0.91; xsa / DDP at 2 ranks
# 74,472.7 / 37,236.36 = 2.00 and 891.2 / 455.1 = 1.96; the fastest configuration of each search in bold.
DDP_LINES = [
    "CPU: Test CPU, 4 cores; flags: avx2 fma; absent: amx_bf16; native bf16: no; LibTorch 9.9.0 "
    "(PyTorch reference: torch 1.13.0a0, 2.6.0)",
    "| model | parameters | xsa 1 rank tok/s | xsa 2 ranks tok/s | xsa all-reduce ms per step (share of the step) | "
    "gradient MB | xsa scaling efficiency, tok/s(2) / (2 x tok/s(1)) | DDP 1 process tok/s | DDP 2 ranks tok/s | "
    "DDP all-reduce ms per step: span (exposed wait) | DDP scaling efficiency | xsa / DDP tok/s, 2 ranks |",
    "| small | 1.00 M | 40,960 | 74,473 | 5.5 (10%) | 4 | **0.91** (target >= 0.90) | 20,480 | 37,236 | 30.3 (4.5) "
    "| **0.91** | 2.00x |",
    "| big | 25.00 M | 500 | 891 | 500.0 (11%) | 100 | **0.89** (target >= 0.90) | 250 | 455 | 812.3 (101.1) | "
    "**0.91** | 1.96x |",
    "| small | 1 MB off: 130, 1 MB on: 125, **25 MB off: 110**, 25 MB on: 118 (3 steps each) | 4.0 MB in 8.0 ms: "
    "500 MB/s |",
    "| big | 0.5 MB off: 9,500, **0.5 MB on: 9,000**, 100 MB off: 9,800, 100 MB on: 9,900 (3 steps each) | 100.0 MB "
    "in 250.0 ms: 400 MB/s |",
]
# A row without DDP in a file that has it elsewhere: its DDP cells are "-" and it has no search line.
MIXED = dict(BENCH, data_parallel=[dict(BENCH["data_parallel"][0], ddp=DDP_SMALL), BENCH["data_parallel"][1]])
MIXED_LINES = ["| big | 25.00 M | 500 | 891 | 500.0 (11%) | 100 | **0.89** (target >= 0.90) | - | - | - | - | - |"]

EXPECTED_LINES = DP_LINES + PLAN_LINES + [
    "CPU: Test CPU, 4 cores; flags: avx2 fma; absent: amx_bf16; native bf16: no; LibTorch 9.9.0 "
    "(PyTorch reference: torch 1.13.0a0)",
    "| fp32 (sgemm) | 61.3 | 123.5 |",
    "| bf16 | not measured | not measured |",
    "Step time at 1 thread, medians of interleaved steps (xsa-bench: 3 layers, d_model 48, 2 heads × 24, vocab 512, "
    "batch 4 × 64 tokens, attention explicit):",
    "| sa | fp32 | 10.0 | 5.0 | 1.0 | 16.0 | 1.000 | 2000 | 25.0 | - |",
    "| xsa | fp32 | 11.0 | 5.0 | 1.0 | 20.0 | 1.250 | 1600 | 20.0 | - |",   # 20 / 16
    "| sa | bf16 | 5.0 | 2.5 | 0.5 | 8.0 | 1.000 | 4000 | 50.0 | 2.00 |",
    "| xsa | bf16 | 7.0 | 4.0 | 1.0 | 12.0 | 1.500 | 2700 | 34.0 | 1.67 |",  # 12 / 8 against bf16 SA
    "XSA / SA step time (fp32, interleaved): 1.250; model FLOPs per token: 2.50 M",
    "| 100 | 10 | baseline | 0.30 | 0.40 | 1.0 | 1.00 |",
    "| 100 | 10 | avx2 | 0.10 | 0.25 | 2.0 | 2.00 |",
    "sgemm peak through LibTorch, 2 cores: 123.5 GFLOP/s; 8 steps per run",
    "| 2 layers, d 128 (default) | 128 x 32 | 1,000 | 40% | 0.50 GB | 1.010 | 900 | 36% | 0.59 GB | 0.990 | "
    "2.50x (reference 800 tok/s, torch 1 x OpenBLAS 2, explicit) |",
    "| 2 layers, d 128 | 2,048 x 2 | 12,346 | 50% | 0.62 GB | 1.000 | 50 | 10% | 1.50 GB | 1.000 | 3.00x (reference",
    "| 2 layers, d 128 | 8,192 x 1 | 300 | 62% | 0.88 GB | 1.000 | failed: out of memory |  |  |  | 4.00x",
    "| MFU at T = 2,048 / at T = 128 (2 layers) | 1.25 | 0.28 | >= 0.85 |",     # 0.50/0.40, 0.10/0.36
    "| MFU at T = 1,024 / at T = 128 (6 layers x d 256) | 0.90 | 0.40 | >= 0.80 |",  # 0.54/0.60, 0.20/0.50
    "| peak RSS at 2,048 x 2 / at 128 x 32 | 1.25 | 2.56 | <= 1.3 |",   # 640/512, 1536/600
    "| paired xsa-train / best reference, the lowest row | 1.50x | 0.60x | >= 2.0 |",  # the failed cell is skipped
]


def main():
    bench_py = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        good = f"{d}/bench.json"
        with open(good, "w") as f:
            json.dump(BENCH, f)
        out = subprocess.run([sys.executable, bench_py, "--show", good], capture_output=True, text=True)
        if out.returncode != 0:
            failures.append(f"--show exited {out.returncode}: {out.stderr.strip()}")
        lines = out.stdout.splitlines()
        for want in EXPECTED_LINES:
            if not any(line.startswith(want) or (want.startswith("at about") and want in line) for line in lines):
                failures.append(f"no line starts with: {want}")
        # --part plan: the plan alone (what the README's block shows)
        out = subprocess.run([sys.executable, bench_py, "--show", good, "--part", "plan"], capture_output=True,
                             text=True)
        if out.returncode != 0:
            failures.append(f"--show --part plan exited {out.returncode}: {out.stderr.strip()}")
        plan = out.stdout.splitlines()
        for want in PLAN_LINES:
            if not any(line.startswith(want) or (want.startswith("at about") and want in line) for line in plan):
                failures.append(f"--part plan: no line starts with: {want}")
        if any(line.startswith("CPU:") or line.startswith("| small") for line in plan):
            failures.append("--part plan printed more than the plan")
        if DP_HEADER not in lines or any("DDP" in line for line in lines):
            failures.append("a file without DDP: the data-parallel table's header changed or DDP is mentioned")
        extra_ddp = check_ddp(bench_py, d, failures) + check_shaped(bench_py, d, failures)
        bad = {"no lengths": {"steps": 8, "xsa_bench": XSA_BENCH},  # and no data_parallel
               "a row without its reference": dict(BENCH, lengths=[{"model": "x"}]),
               "no CPU": dict(BENCH, xsa_bench={k: v for k, v in XSA_BENCH.items() if k != "cpu"}),
               "a kernel without its backward time": dict(BENCH, xsa_bench=dict(
                   XSA_BENCH, flash_kernels=[{k: v for k, v in kernel("avx2", 1, 1, 1, 1).items()
                                              if k != "backward_ms"}])),
               "a bf16 step without its speed-up": dict(BENCH, xsa_bench=dict(
                   XSA_BENCH, steps_bf16=[step("sa", 1, 1, 1, 3, 1, 0.1)])),
               "no step timings": dict(BENCH, xsa_bench=dict(XSA_BENCH, steps=[])),
               "a data-parallel row with no all-reduce time": dict(BENCH, data_parallel=[
                   dict(dp_row("x", 1e6, 1, 1, 1, 1, 1, 1), two_ranks={"step_ms": 1, "tokens_per_s": 1,
                                                                       "allreduce_ms": 0})]),
               "no tables at all": {k: v for k, v in BENCH.items() if k not in ("lengths", "data_parallel")}}
        for name, doc in bad.items():
            path = f"{d}/bad.json"
            with open(path, "w") as f:
                json.dump(doc, f)
            out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
            err = out.stderr.strip()
            if (out.returncode == 0 or len(err.splitlines()) != 1 or not err.startswith(f"bench: error: {path}: ")
                    or out.stdout):
                failures.append(f"{name}: want exit != 0, one line 'bench: error: {path}: ...' and no table, "
                                f"got exit {out.returncode}, stderr {err!r}, stdout {out.stdout[:80]!r}")
        extra = check_extremes(bench_py, d, failures) + check_writes(bench_py, d, good, failures)
    for f in failures:
        print("FAIL " + f)
    print(f"check_bench_show: {len(EXPECTED_LINES) + len(PLAN_LINES) + 2 + len(bad) + extra + extra_ddp} checks, "
          f"{len(failures)} failed")
    return 1 if failures else 0


def check_ddp(bench_py, d, failures):
    """DDP's columns and search lines (GitHub issue 59) against hand-worked values, --part data-parallel and plan on
    such a file, a row without DDP among rows with it, and malformed "ddp" objects refused with one line naming the
    key."""
    checks = 0
    for name, doc, part, wanted in (("DDP beside xsa", BENCH_DDP, "all", DDP_LINES + PLAN_LINES),
                                    ("DDP, --part data-parallel", BENCH_DDP, "data-parallel", DDP_LINES + PLAN_LINES),
                                    ("DDP, --part plan", BENCH_DDP, "plan", PLAN_LINES),
                                    ("DDP on one row of two", MIXED, "all", DDP_LINES[2:3] + MIXED_LINES)):
        path = f"{d}/ddp.json"
        with open(path, "w") as f:
            json.dump(doc, f)
        out = subprocess.run([sys.executable, bench_py, "--show", path, "--part", part], capture_output=True, text=True)
        lines = out.stdout.splitlines()
        for want in wanted:
            checks += 1
            if out.returncode != 0 or not any(line.startswith(want) or (want.startswith("at about") and want in line)
                                              for line in lines):
                failures.append(f"{name}: exit {out.returncode} {out.stderr.strip()!r}, no line starts with: {want}")
        checks += 1
        if name == "DDP on one row of two" and any(line.startswith("| big | 0.5 MB") for line in lines):
            failures.append(f"{name}: a search line for the row without DDP")
    row = BENCH_DDP["data_parallel"][0]
    bad = {  # name: (the row's ddp object, the key the line must name)
        "a DDP row without its Gloo all-reduce": ({k: v for k, v in DDP_SMALL.items() if k != "gloo_allreduce"},
                                                  "data_parallel[0].ddp: missing key gloo_allreduce"),
        "gradient_as_bucket_view a string": (dict(DDP_SMALL, config={"bucket_cap_mb": 25,
                                                                     "gradient_as_bucket_view": "no"}),
                                             "data_parallel[0].ddp.config.gradient_as_bucket_view"),
        "an empty search": (dict(DDP_SMALL, search=[]), "data_parallel[0].ddp.search"),
        "a negative exposed wait": (dict(DDP_SMALL, two_ranks=dict(DDP_SMALL["two_ranks"], allreduce_exposed_ms=-1)),
                                    "data_parallel[0].ddp.two_ranks.allreduce_exposed_ms"),
        "a search step time of 0": (dict(DDP_SMALL, search=[dict(DDP_SMALL["search"][0], step_ms_median=0)]),
                                    "data_parallel[0].ddp.search[0].step_ms_median"),
        "a Gloo sample that is a string": (dict(DDP_SMALL, gloo_allreduce=dict(DDP_SMALL["gloo_allreduce"],
                                                                               samples_ms=[1, "fast"])),
                                           "data_parallel[0].ddp.gloo_allreduce.samples_ms[1]"),
        "ddp not an object": ([], "data_parallel[0].ddp: expected an object"),
    }
    for name, (value, key) in bad.items():
        path = f"{d}/bad_ddp.json"
        with open(path, "w") as f:
            json.dump(dict(BENCH_DDP, data_parallel=[dict(row, ddp=value)]), f)
        checks += 1
        out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
        problem = one_line_error(out, path, 2)
        if problem or key not in out.stderr:
            failures.append(f"{name}: {problem or f'the line does not name {key}: {out.stderr.strip()!r}'}")
    # NaN where DDP's efficiency goes: not finite, named by its key
    path = f"{d}/nan_ddp.json"
    with open(path, "w") as f:
        f.write(json.dumps(BENCH_DDP).replace('"efficiency": 0.9090909090909091, "gloo_allreduce"',
                                              '"efficiency": NaN, "gloo_allreduce"', 1))
    out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
    checks += 1
    problem = one_line_error(out, path, 2)
    if problem or "data_parallel[0].ddp.efficiency" not in out.stderr or "finite" not in out.stderr:
        failures.append(f"DDP efficiency NaN: {problem or out.stderr.strip()!r}")
    return checks


# The shaped network (GitHub issue 59) on the "big" row's model: S = 1e8 bytes; 2 ranks at 1 Gbit/s put
# 2(R-1)/R x S x 1514/1448 x 8 / 1e9 = 0.836464 s on the wire. Before the fit: 8.0 + 0.836464 = 8.84 s, +8% of the
# bucketed step (8.196464 s) and -9% of the unbucketed one (9.70 s). The fit over the one bucketed run: 8 +
# 0.836464 - 8h = 8.196464 at h = 0.080 exactly. xsa's all-reduce alone at 200 MB/s is the plan's 5e-9 s per byte,
# so its rows change only by the hidden share: 10 Gbit/s, 8 nodes: compute 4.096, all-reduce 1.1269, step 4.096 +
# 1.1269 - 0.08 x 4.096 = 4.8952, efficiency 0.84, 7,171.6 steps x 4.8952 s = 9.8 h; half efficiency at
# 28.25 x 1.08 = 31 and 30.80 x 1.08 = 33 nodes.
SHAPED = {"model": "big", "overrides": [], "parameters": 25e6, "steps": 5, "runs": [
    {"ranks": 2, "rate": "unshaped", "rate_bits_per_s": None, "dist_bucket_mb": 25, "step_ms": 8000.0,
     "allreduce_ms": 10.0, "tokens_per_s": 512.0},
    {"ranks": 2, "rate": "1gbit", "rate_bits_per_s": 1e9, "dist_bucket_mb": 25, "step_ms": 8196.464,
     "allreduce_ms": 50.0, "tokens_per_s": 500.0},
    {"ranks": 2, "rate": "1gbit", "rate_bits_per_s": 1e9, "dist_bucket_mb": 0, "step_ms": 9700.0,
     "allreduce_ms": 900.0, "tokens_per_s": 422.0}]}
SHAPED_LINES = [
    "| 2 | unshaped | 25 MiB | 8.00 | - | - | - |",
    "| 2 | 1gbit | 25 MiB | 8.20 | 0.84 | 8.84 (+8%) | 8.20 (+0%) |",
    "| 2 | 1gbit | none (after backward) | 9.70 | 0.84 | 8.84 (-9%) | 8.84 (-9%) |",
    "| 10 Gbit/s | 8 (32) | 4.10 | 1.13 | 0.84 | 9.8 |",
    "at about 31 nodes at 10 Gbit/s and 33 nodes at 25 Gbit/s (without the overlap: 28 and 31 nodes, x1.08)",
]


def check_shaped(bench_py, d, failures):
    """The shaped-link table and the plan with the overlap, from bench.py's own fit, against the hand-worked values
    above; xsa's all-reduce beside Gloo's; a shaped table without its unshaped reference refused with one line."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(bench_py)))
    import bench  # the fit is bench.py's (what a measuring run stores); the checks are by hand
    doc = dict(BENCH_DDP, data_parallel=[BENCH_DDP["data_parallel"][0], dict(
        BENCH_DDP["data_parallel"][1], xsa_allreduce={"bytes": 1e8, "ms_median": 500.0, "MB_per_s": 200.0,
                                                      "samples_ms": [500.0], "world_size": 2})],
               shaped_link=dict(SHAPED, fit=bench.shaped_fit(SHAPED["runs"], SHAPED["parameters"])))
    path = f"{d}/shaped.json"
    with open(path, "w") as f:
        json.dump(doc, f)
    out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
    checks = 0
    for want in SHAPED_LINES + ["| big | 0.5 MB off: 9,500"]:
        checks += 1
        if out.returncode != 0 or not any(line.startswith(want) or (want.startswith("at about") and want in line)
                                          for line in out.stdout.splitlines()):
            failures.append(f"shaped: exit {out.returncode} {out.stderr.strip()!r}, no line starts with: {want}")
    for want in ("h = 0.080 ", "100.0 MB in 500.0 ms: 200 MB/s (0.50x Gloo's)"):
        checks += 1
        if want not in out.stdout:
            failures.append(f"shaped: {want!r} not printed")
    checks += check_efficiency_split(bench_py, d, doc, failures)
    runs = [r for r in SHAPED["runs"] if r["rate"] != "unshaped"]
    with open(path, "w") as f:
        json.dump(dict(doc, shaped_link=dict(doc["shaped_link"], runs=runs)), f)
    out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
    checks += 1
    problem = one_line_error(out, path, 2)
    if problem or "no unshaped run" not in out.stderr:
        failures.append(f"shaped without its reference: {problem or out.stderr.strip()!r}")
    return checks


# The big row with a no-communication pair (two processes at half the batch, nothing shared) and xsa's all-reduce
# measured in turns with Gloo's. By hand: ideal step 8,192 / 2 = 4,096.0 ms; the pair's 4,300 ms is efficiency
# 8,192 / 8,600 = 0.95; 2 ranks 4,596 ms, 0.89; lost to the shared machine (4,300 - 4,096) / 4,096 = +5.0%, to
# communication (4,596 - 4,300) / 4,096 = +7.2%. The small row has no pair: no line.
SPLIT_LINES = ["| big | 4,096.0 | 4,300.0 (0.95) | 4,596.0 (0.89) | +5.0% / +7.2% |"]


def check_efficiency_split(bench_py, d, doc, failures):
    """The table of where xsa's 2-rank efficiency goes and the all-reduce's interval against Gloo's, by hand; a
    malformed interval refused with one line naming it; bench.py's bootstrap interval on samples whose answer is
    known (constant samples: the ratio itself; otherwise an interval around the ratio)."""
    import bench
    rows = doc["data_parallel"]
    big = dict(rows[1], no_communication={"step_ms": 4300.0, "samples_step_ms": [4300.0], "efficiency": 8192 / 8600},
               xsa_allreduce=dict(rows[1]["xsa_allreduce"], over_gloo={"ratio": 0.5, "ci95": [0.4, 0.6]}))
    path = f"{d}/split.json"
    with open(path, "w") as f:
        json.dump(dict(doc, data_parallel=[rows[0], big]), f)
    out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
    lines = out.stdout.splitlines()
    checks = 0
    for want in SPLIT_LINES + ["100.0 MB in 500.0 ms: 200 MB/s (0.50x Gloo's, 95% CI [0.40, 0.60] over 1 and 1 "
                               "samples)"]:
        checks += 1
        if out.returncode != 0 or not any(want in line for line in lines):
            failures.append(f"efficiency split: exit {out.returncode} {out.stderr.strip()!r}, not printed: {want}")
    checks += 1
    if any(line.startswith("| small | 50.0 |") for line in lines):
        failures.append("efficiency split: a row without a no-communication pair has a line")
    # Half the batch can run more than twice as fast: the pair below the ideal, a negative cost. By hand: ideal
    # 100 / 2 = 50.0; the pair 45 ms, efficiency 100 / 90 = 1.11; 2 ranks 55 ms, 0.91; (45 - 50) / 50 = -10.0%,
    # (55 - 45) / 50 = +20.0%.
    faster = dict(rows[0], no_communication={"step_ms": 45.0, "samples_step_ms": [45.0], "efficiency": 100 / 90})
    with open(path, "w") as f:
        json.dump(dict(doc, data_parallel=[faster, big]), f)
    out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
    checks += 1
    want = "| small | 50.0 | 45.0 (1.11) | 55.0 (0.91) | -10.0% / +20.0% |"
    if out.returncode != 0 or want not in out.stdout.splitlines():
        failures.append(f"efficiency split: exit {out.returncode} {out.stderr.strip()!r}, not printed: {want}")
    with open(path, "w") as f:
        json.dump(dict(doc, data_parallel=[rows[0], dict(big, xsa_allreduce=dict(
            big["xsa_allreduce"], over_gloo={"ratio": 0.5, "ci95": [0.4]}))]), f)
    out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
    checks += 1
    problem = one_line_error(out, path, 2)
    if problem or "data_parallel[1].xsa_allreduce.over_gloo.ci95" not in out.stderr:
        failures.append(f"efficiency split, a one-number interval: {problem or out.stderr.strip()!r}")
    checks += check_launch_interval(bench, bench_py, path, doc, rows, big, failures)
    return checks


def check_launch_interval(bench, bench_py, path, doc, rows, big, failures):
    """xsa's all-reduce over Gloo's with the launch as the unit, by hand: the order-statistic ranks and coverage of
    a median's 95% interval (binomial sums), the paired ratios' median and interval, the table's cell, a malformed
    ratio refused with one line naming it, and too few launches refused before anything runs."""
    checks = 0
    # n = 15: P(Bin(15, 1/2) <= 3) = (1 + 15 + 105 + 455) / 32768 = 576 / 32768, coverage 1 - 1152 / 32768; k = 5
    # would cover 1 - 2 (576 + 1365) / 32768 = 0.88 < 0.95. n = 10: 1 - 2 * 11 / 1024 with k = 2 (k = 3: 0.89).
    # n = 6: only the extremes, 1 - 2 / 64.
    for n, want in ((15, (4, 12, 1 - 1152 / 32768)), (10, (2, 9, 1 - 22 / 1024)), (6, (1, 6, 1 - 2 / 64))):
        checks += 1
        got = bench.median_interval_ranks(n)
        if got[:2] != want[:2] or abs(got[2] - want[2]) > 1e-15:
            failures.append(f"order-statistic ranks of {n} values: {got}, expected {want}")
    for too_few in (5, 0):
        checks += 1
        try:
            got = bench.median_interval_ranks(too_few)
            failures.append(f"order-statistic ranks of {too_few} values: {got}, expected a refusal")
        except ValueError:
            pass
    # Ratios Gloo ms / xsa ms per round: 2, 1, 0.5, 1.25, 0.8, 2.5, 4; sorted 0.5 0.8 1 1.25 2 2.5 4, median 1.25;
    # n = 7: k = 1 covers 1 - 2 / 128 (k = 2: 1 - 2 * 8 / 128 = 0.875), so the interval is the extremes.
    gloo, xsa = [10.0] * 7, [5.0, 10.0, 20.0, 8.0, 12.5, 4.0, 2.5]
    over = bench.paired_launch_ratio(gloo, xsa)
    checks += 1
    if not (abs(over["ratio"] - 1.25) < 1e-12 and over["ci95"] == [0.5, 4.0]
            and abs(over["coverage"] - (1 - 2 / 128)) < 1e-15 and over["unit"] == "launch"
            and over["launch_ratios"] == [2.0, 1.0, 0.5, 1.25, 0.8, 2.5, 4.0]):
        failures.append(f"paired launch ratio: {over}")
    checks += 1
    if bench.paired_launch_ratio([2.0 * k for k in range(1, 7)], [float(k) for k in range(1, 7)])["ci95"] != [2.0, 2.0]:
        failures.append("paired launch ratio of rounds all at 2: not [2, 2]")
    checks += 1
    try:
        bench.paired_launch_ratio([1.0] * 7, [1.0] * 6)
        failures.append("paired launch ratio: 7 Gloo launches against 6 of xsa's accepted")
    except ValueError:
        pass
    launched = dict(big, xsa_allreduce=dict(big["xsa_allreduce"], over_gloo=over))
    with open(path, "w") as f:
        json.dump(dict(doc, data_parallel=[rows[0], launched]), f)
    out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
    checks += 1
    want = ("100.0 MB in 500.0 ms: 200 MB/s (1.25x Gloo's, the median of 7 paired launches' ratios, 98.4% CI "
            "[0.50, 4.00])")
    if out.returncode != 0 or not any(want in line for line in out.stdout.splitlines()):
        failures.append(f"launch interval: exit {out.returncode} {out.stderr.strip()!r}, not printed: {want}")
    bad = dict(over, launch_ratios=[2.0, -1.0])
    with open(path, "w") as f:
        json.dump(dict(doc, data_parallel=[rows[0], dict(big, xsa_allreduce=dict(
            big["xsa_allreduce"], over_gloo=bad))]), f)
    out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
    checks += 1
    problem = one_line_error(out, path, 2)
    if problem or "data_parallel[1].xsa_allreduce.over_gloo.launch_ratios[1]" not in out.stderr:
        failures.append(f"launch interval, a negative ratio: {problem or out.stderr.strip()!r}")
    out = subprocess.run([sys.executable, bench_py, "--allreduce-launches", "5", "--out", f"{path}.never"],
                         capture_output=True, text=True)
    checks += 1
    err = out.stderr.strip()
    if out.returncode != 2 or err != "bench: error: --allreduce-launches 5: expected an integer >= 6" or \
            out.stdout or os.path.exists(f"{path}.never"):
        failures.append(f"--allreduce-launches 5: exit {out.returncode}, {err!r}, stdout {out.stdout[:80]!r}")
    return checks


def one_line_error(out, path, code):
    """"" when `out` (a finished run) exited `code` with one stderr line "bench: error: PATH..." and no traceback;
    else what it did instead."""
    err = out.stderr.strip()
    if out.returncode == code and len(err.splitlines()) == 1 and err.startswith(f"bench: error: {path}") \
            and "Traceback" not in out.stderr and not out.stdout:
        return ""
    return f"want exit {code} and one line 'bench: error: {path}...', got exit {out.returncode}, stderr {err[-300:]!r}, " \
           f"stdout {out.stdout[:80]!r}"


def check_extremes(bench_py, d, failures):
    """Numbers a float cannot hold where a number is expected: one line naming the file and the key, exit 2."""
    huge = "1" + "0" * 400  # an integer of 401 digits: valid JSON, float() of it raises OverflowError
    text = json.dumps(BENCH)
    mfu = '"mfu": 0.4'  # lengths[0].fused.mfu, the first "mfu" in the file
    assert mfu in text
    cases = {  # name: (the file's text, the key the line must name)
        "mfu is 1e999 (inf once parsed)": (text.replace(mfu, '"mfu": 1e999', 1), "lengths[0].fused.mfu"),
        "mfu is NaN": (text.replace(mfu, '"mfu": NaN', 1), "lengths[0].fused.mfu"),
        "mfu is -Infinity": (text.replace(mfu, '"mfu": -Infinity', 1), "lengths[0].fused.mfu"),
        "mfu is a 401-digit integer": (text.replace(mfu, f'"mfu": {huge}', 1), "lengths[0].fused.mfu"),
        "cores is a 401-digit integer": (text.replace('"cores": 4', f'"cores": {huge}', 1), "xsa_bench.cpu.cores"),
        "a data-parallel time is 1e999": (json.dumps(dict(BENCH, data_parallel=[
            dict(dp_row("x", 1e6, 1, 1, 1, 1, 1, 1), two_ranks={"step_ms": 1, "tokens_per_s": 1,
                                                               "allreduce_ms": "HUGE"})])).replace('"HUGE"', "1e999"),
                                          "data_parallel[0].two_ranks.allreduce_ms"),
    }
    for name, (doc, key) in cases.items():
        path = f"{d}/extreme.json"
        with open(path, "w") as f:
            f.write(doc)
        out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
        problem = one_line_error(out, path, 2)
        if problem or key not in out.stderr or "finite" not in out.stderr:
            failures.append(f"{name}: {problem or f'the line does not name the key {key} as not finite'}")
    # Finite numbers whose product overflows (the plan's 2(R-1) x latency with R = 128 nodes x 1e307 cores): still
    # one line naming the file, never an OverflowError traceback.
    path = f"{d}/overflow.json"
    with open(path, "w") as f:
        f.write(json.dumps(BENCH).replace('"cores": 4', '"cores": 1' + "0" * 307, 1))
    out = subprocess.run([sys.executable, bench_py, "--show", path], capture_output=True, text=True)
    problem = one_line_error(out, path, 2)
    if problem:
        failures.append(f"finite numbers whose product overflows a float: {problem}")
    return len(cases) + 1


WRITE_RESULT = ("import os, resource, sys; sys.path.insert(0, os.path.dirname(sys.argv[1])); import bench; "
                "user_input = bench.user_input; "
                "n = int(sys.argv[3]); n and resource.setrlimit(resource.RLIMIT_FSIZE, (n, n)); "
                "user_input.run('bench', bench.write_result, {'steps': 8, 'filler': 'x' * 100000}, sys.argv[2])")


def check_writes(bench_py, d, good, failures):
    """What bench.py writes, when it cannot: one line naming the file and the reason, exit 1, nothing half-written;
    and an --out over what a measuring run reads: one line, exit 2, nothing created."""
    checks = 0
    with open("/dev/full", "w") as full:  # --show's tables to a full device
        out = subprocess.run([sys.executable, bench_py, "--show", good], stdout=full, stderr=subprocess.PIPE, text=True)
    out.stdout = ""
    checks += 1
    problem = one_line_error(out, "stdout", 1)
    if problem or "No space left" not in out.stderr:
        failures.append(f"--show to a full stdout: {problem or out.stderr!r}")
    # write_result (the end of every measuring run), called as bench.py's main calls it, through user_input.run.
    folder_at = f"{d}/folder-at-bench-json"
    os.makedirs(f"{folder_at}/bench.json")  # a folder where bench.json goes
    full_disk = f"{d}/full-disk"
    os.makedirs(full_disk)
    with open(f"{full_disk}/bench.json", "w") as f:
        f.write('{"steps": 1}')  # the previous bench.json: a failed write must leave it whole
    for name, folder, limit, reason in (("bench.json is a folder", folder_at, 0, "Is a directory"),
                                        ("a folder where nothing can be created (/proc/self)", "/proc/self", 0, ""),
                                        ("a full disk (RLIMIT_FSIZE 4096 bytes)", full_disk, 4096, "File too large")):
        out = subprocess.run([sys.executable, "-c", WRITE_RESULT, bench_py, folder, str(limit)], capture_output=True,
                             text=True)
        checks += 1
        path = os.path.join(folder, "bench.json")
        problem = one_line_error(out, path, 1)
        if problem or reason not in out.stderr or "cannot write" not in out.stderr:
            failures.append(f"bench.json, {name}: {problem or out.stderr!r}")
        if folder != "/proc/self" and sorted(os.listdir(folder)) != ["bench.json"]:
            failures.append(f"bench.json, {name}: files left beside it: {sorted(os.listdir(folder))}")
    with open(f"{full_disk}/bench.json") as f:
        if f.read() != '{"steps": 1}':
            failures.append("bench.json, a full disk: the previous bench.json was not left whole")
    # --out that is, holds or lies inside an input of a measuring run (refused before the data check and any run).
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(bench_py))))  # scripts/perf/bench.py's
    link = f"{d}/link-to-data"  # a link into the data folder is that folder (real paths compared)
    os.symlink(os.path.join(root, "data", "tinystories"), link)
    for out_dir, relation in ((os.path.join(root, "configs"), "holds"), (root, "holds"),
                              (os.path.join(root, "configs", "default.yaml"), "is"),
                              (os.path.join(root, "data", "tinystories", "bench-out"), "lies inside"),
                              (os.path.join(link, "bench-out"), "lies inside")):
        existed = os.path.lexists(out_dir)
        out = subprocess.run([sys.executable, bench_py, "--out", out_dir], capture_output=True, text=True)
        checks += 1
        problem = one_line_error(out, out_dir, 2)
        if problem or f"--out {relation} the input" not in out.stderr:
            failures.append(f"--out {out_dir}: {problem or out.stderr!r}")
        if not existed and os.path.lexists(out_dir):
            failures.append(f"--out {out_dir}: created although refused")
    return checks


if __name__ == "__main__":
    sys.exit(main())
