#!/usr/bin/python3
"""The Python reference trainer for the benchmark (GitHub issue 5).

Trains scripts/reference/model.py on data/<name>/train.bin the way a notebook user would: one variant
after another, same model, optimizer and schedule as xsa-train, and reports training throughput.

    /usr/bin/python3 scripts/reference/train_reference.py --data data/tinystories --threads 1 --steps 20

Same as xsa-train (src/xsa/train/trainer.cpp): nanoGPT init from a generator seeded with --seed, AdamW
(weight decay on >= 2-D parameters only, eps 1e-8, betas), linear warmup then cosine to min_lr
(src/xsa/train/schedule.h), gradient clipping by global norm, windows of seq_len+1 tokens starting at
multiples of seq_len drawn without replacement per epoch. The batch order is a numpy permutation, not
xsa's SplitMix64 sampler: same shapes, not the same batches.

Threads: torch.set_num_threads(--threads) for LibTorch's intra-op pool (and OMP_NUM_THREADS), and
OpenBLAS's pool via OPENBLAS_NUM_THREADS=--blas-threads (default: --threads), which this script sets
*before importing torch* (OpenBLAS sizes its pool when it loads). If threadpoolctl is installed it is
applied as well; the JSON reports which mechanism was used and the OpenBLAS thread count read back from
the OpenBLAS library the process actually loaded (found in /proc/self/maps). Nothing else of the
environment is changed (OPENBLAS_CORETYPE, if set, is left as it is).

Timing: the first --warmup steps of each variant are not timed; tokens/s = batch*seq_len / median step
time. The output is one JSON line (plus progress on stderr).
"""

import argparse
import os
import sys


def parse_args():
    ap = argparse.ArgumentParser(description="PyTorch reference trainer: tokens/s per variant")
    ap.add_argument("--data", default="data/tinystories", help="prepared data folder (train.bin, meta.json)")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--blas-threads", type=int, default=None, help="OpenBLAS threads (default: --threads)")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps at the start of each variant")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--d-head", type=int, default=32)
    ap.add_argument("--mlp-ratio", type=int, default=4)
    ap.add_argument("--pos", choices=["rope", "learned"], default="rope")
    ap.add_argument("--no-embed-norm", action="store_true")
    ap.add_argument("--untied", action="store_true")
    ap.add_argument("--variants", default="sa,xsa", help="comma list: sa, xsa, a number lambda, learned, gate, tanh_gate")
    ap.add_argument("--learned-init", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--min-lr", type=float, default=1e-4)
    ap.add_argument("--warmup-steps", type=int, default=30, help="LR warmup (schedule), not timing warmup")
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--beta1", type=float, default=0.9)
    ap.add_argument("--beta2", type=float, default=0.95)
    ap.add_argument("--grad-clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1337)
    return ap.parse_args()


args = parse_args()
if args.blas_threads is None:
    args.blas_threads = args.threads
# Must happen before torch (and with it OpenBLAS) is loaded: OpenBLAS sizes its pool from these at load.
os.environ["OPENBLAS_NUM_THREADS"] = str(args.blas_threads)
os.environ["OMP_NUM_THREADS"] = str(args.threads)

import ctypes  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import GPT, has_sdpa, use_builtin_ops  # noqa: E402

use_builtin_ops(True)  # fused LayerNorm/GELU/softmax/cross-entropy, as a notebook would use

BLAS_MECHANISM = "env OPENBLAS_NUM_THREADS before import"
try:
    from threadpoolctl import threadpool_limits

    _limits = threadpool_limits(limits=args.blas_threads, user_api="blas")
    BLAS_MECHANISM = "threadpoolctl"
except ImportError:
    pass


def openblas_threads():
    """The thread count of the OpenBLAS torch loaded (-1 if none): dlopen of an already-loaded path
    returns that same copy, so this reads the pool torch's matmuls use."""
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "libopenblas" in line.split()[-1]})
    for path in paths:
        try:
            return ctypes.CDLL(path).openblas_get_num_threads()
        except (OSError, AttributeError):
            continue
    return -1


def learning_rate(step, total, warmup, lr, min_lr):
    """schedule.h: linear warmup to lr, then cosine to min_lr at the last step (step is 0-based)."""
    if step < warmup:
        return lr * (step + 1) / warmup
    decay_steps = total - warmup
    if decay_steps <= 1:
        return lr
    progress = (step - warmup) / (decay_steps - 1)
    return min_lr + 0.5 * (lr - min_lr) * (1.0 + math.cos(math.pi * progress))


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
        sys.exit(f"train_reference.py: --variants: {text!r} is not sa, xsa, learned, gate, tanh_gate or a finite number")
    return f"lambda={text}", ("fixed", lam)


class Batches:
    """Windows of T+1 tokens starting at multiples of T, a fresh permutation each epoch."""

    def __init__(self, tokens, T, B, seed):
        self.tokens, self.T, self.B = tokens, T, B
        self.n_windows = (len(tokens) - 1) // T
        self.rng = np.random.default_rng(seed)
        self.order, self.pos = self.rng.permutation(self.n_windows), 0

    def next(self):
        if self.pos + self.B > self.n_windows:
            self.order, self.pos = self.rng.permutation(self.n_windows), 0
        starts = self.order[self.pos:self.pos + self.B] * self.T
        self.pos += self.B
        window = np.stack([self.tokens[s:s + self.T + 1] for s in starts]).astype(np.int64)  # (B, T+1)
        window = torch.from_numpy(window)
        return window[:, :-1], window[:, 1:]  # inputs, targets: (B, T) each


def train_variant(name, variant, tokens, vocab_size):
    T, B = args.seq_len, args.batch_size
    cfg = {"n_layer": args.n_layer, "d_model": args.d_model, "n_head": args.n_head, "d_head": args.d_head,
           "mlp_ratio": args.mlp_ratio, "pos": args.pos, "embed_norm": not args.no_embed_norm,
           "tie_embeddings": not args.untied}
    model = GPT(cfg, vocab_size, T, variant=variant)
    model.init_weights(torch.Generator().manual_seed(args.seed))

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(args.beta1, args.beta2), eps=1e-8)
    clip = args.grad_clip if args.grad_clip > 0 else float("inf")

    batches = Batches(tokens, T, B, args.seed)  # same order for every variant, like xsa-train
    step_s, losses = [], []
    for step in range(args.steps):
        t0 = time.perf_counter()
        lr = learning_rate(step, args.steps, args.warmup_steps, args.lr, args.min_lr)
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y = batches.next()
        optimizer.zero_grad(set_to_none=True)
        loss = model.loss(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        losses.append(loss.item())
        if step >= args.warmup:
            step_s.append(time.perf_counter() - t0)
        if (step + 1) % 10 == 0 or step + 1 == args.steps:
            print(f"[{name}] step {step + 1}/{args.steps} loss {losses[-1]:.4f}", file=sys.stderr)
    median = statistics.median(step_s) if step_s else float("nan")
    return {"variant": name, "tokens_per_s": B * T / median, "step_ms_median": 1e3 * median,
            "timed_steps": len(step_s), "first_loss": losses[0], "final_loss": losses[-1]}, step_s


def main():
    if args.steps <= args.warmup:
        sys.exit(f"train_reference.py: --steps {args.steps} must exceed --warmup {args.warmup}")
    torch.set_num_threads(args.threads)
    meta = os.path.join(args.data, "meta.json")
    try:  # a missing or unreadable data folder, or a meta.json that is not one: one line, not a traceback
        with open(meta, encoding="utf-8") as f:
            vocab_size = json.load(f).get("vocab_size")
        tokens = np.fromfile(os.path.join(args.data, "train.bin"), dtype="<u2")
    except OSError as e:
        sys.exit(f"train_reference.py: {e.filename or args.data}: cannot read ({e.strerror or e}); --data names a "
                 "prepared data folder (scripts/prepare_data.sh)")
    except (ValueError, RecursionError, AttributeError) as e:
        sys.exit(f"train_reference.py: {meta}: not a meta.json object ({e})")
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or not 0 < vocab_size < 1 << 31:
        sys.exit(f"train_reference.py: {meta}: vocab_size: expected a positive integer, got {vocab_size!r:.40}")
    if tokens.size and int(tokens.max()) >= vocab_size:
        sys.exit(f"train_reference.py: {args.data}/train.bin has ids >= vocab_size {vocab_size}")

    runs, all_steps = [], []
    for text in args.variants.split(","):
        name, variant = parse_variant(text.strip())
        result, step_s = train_variant(name, variant, tokens, vocab_size)
        runs.append(result)
        all_steps += step_s
    overall = args.batch_size * args.seq_len / statistics.median(all_steps)
    print(json.dumps({
        "implementation": "pytorch-reference", "torch": torch.__version__,
        "threads": torch.get_num_threads(), "blas_threads": openblas_threads(), "blas_threads_via": BLAS_MECHANISM,
        "blas_threads_requested": args.blas_threads,
        "steps": args.steps, "warmup": args.warmup, "batch_size": args.batch_size, "seq_len": args.seq_len,
        "model": {"n_layer": args.n_layer, "d_model": args.d_model, "n_head": args.n_head, "d_head": args.d_head},
        "attention": "scaled_dot_product_attention" if has_sdpa() else "explicit",
        "runs": runs, "tokens_per_s": overall}))


if __name__ == "__main__":
    main()
