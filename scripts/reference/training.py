"""The torch side of what the reference trainers share (train_reference.py, train_ddp.py): threads, data, model,
optimizer, schedule and one training step, as xsa-train does them (src/xsa/train/trainer.cpp).

Imports torch: import it after options.pin_threads has set the thread environment. nanoGPT init from a generator
seeded with --seed, AdamW (weight decay on >= 2-D parameters only, eps 1e-8, betas), linear warmup then cosine to
min_lr (src/xsa/train/schedule.h), gradient clipping by global norm, windows of seq_len+1 tokens starting at
multiples of seq_len drawn without replacement per epoch. The batch order is a numpy permutation, not xsa's
SplitMix64 sampler: same shapes, not the same batches.
"""

import ctypes
import math

import numpy as np
import torch

from model import GPT, use_builtin_ops

use_builtin_ops(True)  # fused LayerNorm/GELU/softmax/cross-entropy, as a notebook would use

_blas_limits = None  # threadpoolctl's limits stay in force while this object lives


def limit_threads(args):
    """torch's intra-op pool to --threads, and OpenBLAS's to --blas-threads through threadpoolctl where it is
    installed (the environment options.pin_threads set before the import does it otherwise). Returns the mechanism
    that set OpenBLAS's count, for the JSON."""
    global _blas_limits
    torch.set_num_threads(args.threads)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return "env OPENBLAS_NUM_THREADS before import"
    _blas_limits = threadpool_limits(limits=args.blas_threads, user_api="blas")
    return "threadpoolctl"


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


class Batches:
    """Windows of T+1 tokens starting at multiples of T, a fresh permutation each epoch. Every data-parallel rank
    draws the same global batch of B windows and takes its contiguous slice (as xsa-train's ranks do)."""

    def __init__(self, tokens, T, B, seed):
        self.tokens, self.T, self.B = tokens, T, B
        self.n_windows = (len(tokens) - 1) // T
        self.rng = np.random.default_rng(seed)
        self.order, self.pos = self.rng.permutation(self.n_windows), 0

    def next(self, rank=0, world=1):
        """Rank `rank` of `world`'s slice (B / world windows) of the next global batch: (inputs, targets)."""
        if self.pos + self.B > self.n_windows:
            self.order, self.pos = self.rng.permutation(self.n_windows), 0
        part = self.B // world
        starts = self.order[self.pos + rank * part:self.pos + (rank + 1) * part] * self.T
        self.pos += self.B
        window = np.stack([self.tokens[s:s + self.T + 1] for s in starts]).astype(np.int64)  # (B/world, T+1)
        window = torch.from_numpy(window)
        return window[:, :-1], window[:, 1:]  # inputs, targets: (B/world, T) each


def build_model(args, variant, vocab_size):
    """The reference GPT of the shape options (options.add_model_args), nanoGPT-initialised from --seed."""
    cfg = {"n_layer": args.n_layer, "d_model": args.d_model, "n_head": args.n_head, "d_head": args.d_head,
           "mlp_ratio": args.mlp_ratio, "pos": args.pos, "embed_norm": not args.no_embed_norm,
           "tie_embeddings": not args.untied}
    model = GPT(cfg, vocab_size, args.seq_len, variant=variant)
    model.init_weights(torch.Generator().manual_seed(args.seed))
    return model


def make_optimizer(model, args):
    """AdamW as xsa-train's: weight decay on the >= 2-D parameters only, eps 1e-8."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(args.beta1, args.beta2), eps=1e-8)


def train_step(net, model, optimizer, batch, lr, grad_clip, set_to_none=True, after_backward=None):
    """One step: forward through `net` (the model, or a DistributedDataParallel wrapping it, whose backward also
    averages the gradients over the ranks), the loss, backward, clipping by global norm (grad_clip 0: none) and
    AdamW at learning rate lr. set_to_none=False zeroes the gradients in place instead of dropping them (DDP's
    gradient_as_bucket_view keeps them as views of its buckets that way). after_backward: called when backward
    returns. Returns (the loss, the gradient's global norm before clipping), as 0-d tensors."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    x, y = batch
    optimizer.zero_grad(set_to_none=set_to_none)
    loss = model.loss(net(x), y)
    loss.backward()
    if after_backward is not None:
        after_backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip if grad_clip > 0 else float("inf"))
    optimizer.step()
    return loss.detach(), norm
