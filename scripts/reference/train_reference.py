#!/usr/bin/python3
"""The Python reference trainer for the benchmark (GitHub issue 5).

Trains scripts/reference/model.py on data/<name>/train.bin the way a notebook user would: one variant
after another, same model, optimizer and schedule as xsa-train, and reports training throughput.

    /usr/bin/python3 scripts/reference/train_reference.py --data data/tinystories --threads 1 --steps 20

Same model, optimizer, schedule, data windows and step as xsa-train: training.py (shared with train_ddp.py, the
data-parallel side of the benchmark) says how. The command line is options.py's; a bad option or number, or a data
folder that is missing or not prepared, is one line "train_reference.py: error: ..." and exit 2.

Threads: torch.set_num_threads(--threads) for LibTorch's intra-op pool (and OMP_NUM_THREADS), and
OpenBLAS's pool via OPENBLAS_NUM_THREADS=--blas-threads (default: --threads), which this script sets
*before importing torch* (OpenBLAS sizes its pool when it loads). If threadpoolctl is installed it is
applied as well; the JSON reports which mechanism was used and the OpenBLAS thread count read back from
the OpenBLAS library the process actually loaded (found in /proc/self/maps). Nothing else of the
environment is changed (OPENBLAS_CORETYPE, if set, is left as it is).

Timing: the first --warmup steps of each variant are not timed; tokens/s = batch*seq_len / median step
time. The output is one JSON line (plus progress on stderr).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options  # noqa: E402  (no torch: the arguments and the thread environment come first)


def parse_args():
    ap = options.Parser(prog="train_reference.py", description="PyTorch reference trainer: tokens/s per variant")
    options.add_training_args(ap)
    options.add_model_args(ap)
    ap.add_argument("--variants", default="sa,xsa", help="comma list: sa, xsa, a number lambda, learned, gate, tanh_gate")
    ap.add_argument("--learned-init", type=float, default=0.5,
                    help="the learned variant's initial lambda, in (0, 1) (xsa's attention.learned_init)")
    args = ap.parse_args()
    options.check_args(ap, args)
    if not 0 < args.learned_init < 1:  # NaN too: sigmoid(theta) starts there, so 0, 1 and beyond have no theta
        ap.error(f"--learned-init {args.learned_init}: expected a number in (0, 1), as attention.learned_init")
    return args


args = parse_args()
# Must happen before torch (and with it OpenBLAS) is loaded: OpenBLAS sizes its pool from these at load.
options.pin_threads(args)

import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

from model import has_sdpa  # noqa: E402
from training import Batches, build_model, learning_rate, limit_threads, make_optimizer  # noqa: E402
from training import openblas_threads, train_step  # noqa: E402


def parse_variant(text):
    """-> (name, (kind, lambda)) in model.GPT's terms."""
    if text == "sa":
        return "sa", ("fixed", 0.0)
    if text == "xsa":
        return "xsa", ("fixed", 1.0)
    if text == "learned":
        return "learned", ("learned", args.learned_init)
    if text in ("gate", "tanh_gate"):
        return text, (text, None)
    try:
        lam = float(text)
    except ValueError:
        lam = math.nan
    if not math.isfinite(lam):  # "abc", "nan", "inf", "1e999": one line, not a traceback or a NaN model
        options.fail("train_reference.py",
                     f"--variants: {text!r} is not sa, xsa, learned, gate, tanh_gate or a finite number")
    return f"lambda={text}", ("fixed", lam)


def train_variant(name, variant, tokens, vocab_size):
    T, B = args.seq_len, args.batch_size
    model = build_model(args, variant, vocab_size)
    optimizer = make_optimizer(model, args)
    batches = Batches(tokens, T, B, args.seed)  # same order for every variant, like xsa-train
    step_s, losses = [], []
    for step in range(args.steps):
        t0 = time.perf_counter()
        lr = learning_rate(step, args.steps, args.warmup_steps, args.lr, args.min_lr)
        loss, _ = train_step(model, model, optimizer, batches.next(), lr, args.grad_clip)
        losses.append(loss.item())
        if step >= args.warmup:
            step_s.append(time.perf_counter() - t0)
        if (step + 1) % 10 == 0 or step + 1 == args.steps:
            print(f"[{name}] step {step + 1}/{args.steps} loss {losses[-1]:.4f}", file=sys.stderr)
    median = statistics.median(step_s) if step_s else float("nan")
    return {"variant": name, "tokens_per_s": B * T / median, "step_ms_median": 1e3 * median,
            "timed_steps": len(step_s), "first_loss": losses[0], "final_loss": losses[-1]}, step_s


def main():
    blas_mechanism = limit_threads(args)
    tokens, vocab_size = options.read_data("train_reference.py", args.data, args.seq_len, args.batch_size)

    variants = [parse_variant(text.strip()) for text in args.variants.split(",")]  # all checked before training
    runs, all_steps = [], []
    for name, variant in variants:
        result, step_s = train_variant(name, variant, tokens, vocab_size)
        runs.append(result)
        all_steps += step_s
    overall = args.batch_size * args.seq_len / statistics.median(all_steps)
    print(json.dumps({
        "implementation": "pytorch-reference", "torch": torch.__version__,
        "threads": torch.get_num_threads(), "blas_threads": openblas_threads(), "blas_threads_via": blas_mechanism,
        "blas_threads_requested": args.blas_threads,
        "steps": args.steps, "warmup": args.warmup, "batch_size": args.batch_size, "seq_len": args.seq_len,
        "model": {"n_layer": args.n_layer, "d_model": args.d_model, "n_head": args.n_head, "d_head": args.d_head},
        "attention": "scaled_dot_product_attention" if has_sdpa() else "explicit",
        "runs": runs, "tokens_per_s": overall}))


if __name__ == "__main__":
    main()
