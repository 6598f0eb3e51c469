"""What the reference trainers (train_reference.py, train_ddp.py) share before torch: the command line, the thread
environment and the data folder.

Imports no torch (nor numpy, until read_data), on purpose: a trainer parses and checks its arguments and sets the
thread environment with these *before* it imports torch (and with it OpenBLAS, which sizes its pool from
OPENBLAS_NUM_THREADS when it loads), and train_ddp.py's launcher checks its inputs without loading torch at all.
The torch side of what they share is training.py.

    ap = options.Parser(prog="train_ddp.py", description=...)
    options.add_model_args(ap); options.add_training_args(ap)
    args = ap.parse_args(); options.check_args(ap, args); options.pin_threads(args)
    import torch ...
"""

import argparse
import json
import math
import os
import stat
import sys


SAYS_ERRORS = True  # False in the ranks after the first under torchrun: the first says it, once, for all


def fail(prog, message, code=2):
    """Prints "PROG: error: MESSAGE" as one line on stderr and exits with `code` (2: bad input)."""
    if SAYS_ERRORS:
        print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
    sys.exit(code)


class Parser(argparse.ArgumentParser):
    """argparse whose errors (an unknown option, an option missing its value, "--steps x") are one line
    "PROG: error: MESSAGE (see --help)" and exit 2: argparse's own print the usage first, several lines. The
    reference scripts' copy of xsapy.user_input.ArgumentParser (this folder imports nothing from xsapy)."""

    def error(self, message):
        fail(self.prog, f"{message} (see --help)")


def json_type(value):
    """The JSON name of a parsed value's type, for messages ("got array"); xsapy.user_input's, for this folder."""
    if isinstance(value, bool):
        return "boolean"
    return {type(None): "null", int: "number", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)


def add_model_args(ap):
    """The model's shape, as xsa's config names it (model.n_layer, ...); defaults: configs/default.yaml's."""
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--d-head", type=int, default=32)
    ap.add_argument("--mlp-ratio", type=int, default=4)
    ap.add_argument("--pos", choices=["rope", "learned"], default="rope")
    ap.add_argument("--no-embed-norm", action="store_true")
    ap.add_argument("--untied", action="store_true")


def add_training_args(ap, steps=50):
    """Data, threads, timing, batch, optimizer and schedule: xsa-train's defaults (configs/default.yaml)."""
    ap.add_argument("--data", default="data/tinystories", help="prepared data folder (train.bin, meta.json)")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--blas-threads", type=int, default=None, help="OpenBLAS threads (default: --threads)")
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps at the start of each run")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--min-lr", type=float, default=1e-4)
    ap.add_argument("--warmup-steps", type=int, default=30, help="LR warmup (schedule), not timing warmup")
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--beta1", type=float, default=0.9)
    ap.add_argument("--beta2", type=float, default=0.95)
    ap.add_argument("--grad-clip", type=float, default=1.0, help="global norm; 0: no clipping")
    ap.add_argument("--seed", type=int, default=1337)


# What check_args requires of the arguments above: at least 1, at least 0, finite.
AT_LEAST_1 = ("threads", "blas_threads", "steps", "batch_size", "seq_len", "d_model", "n_layer", "n_head", "d_head",
              "mlp_ratio")
AT_LEAST_0 = ("warmup", "warmup_steps", "grad_clip", "lr", "min_lr", "weight_decay")
FINITE = ("lr", "min_lr", "weight_decay", "beta1", "beta2", "grad_clip")


def check_args(ap, args):
    """The numbers of add_model_args and add_training_args that cannot train (0 threads, a negative step count,
    NaN lr, an odd d_head for RoPE): one line naming the option, exit 2. --blas-threads defaults to --threads."""
    if args.blas_threads is None:
        args.blas_threads = args.threads
    for key in FINITE:
        if not math.isfinite(getattr(args, key)):
            ap.error(f"--{key.replace('_', '-')}: expected a finite number, got {getattr(args, key)}")
    for key, low in [(k, 1) for k in AT_LEAST_1] + [(k, 0) for k in AT_LEAST_0]:
        value = getattr(args, key, None)
        if value is not None and value < low:
            ap.error(f"--{key.replace('_', '-')}: expected a number >= {low}, got {value}")
    if not (0 <= args.beta1 < 1 and 0 <= args.beta2 < 1):
        ap.error(f"--beta1 {args.beta1} / --beta2 {args.beta2}: expected numbers in [0, 1)")
    if args.pos == "rope" and args.d_head % 2:
        ap.error(f"--d-head {args.d_head}: RoPE rotates pairs of channels, so it must be even")
    if args.steps <= args.warmup:
        ap.error(f"--steps {args.steps} must exceed --warmup {args.warmup} (the untimed steps)")


def pin_threads(args):
    """Sets the thread environment for torch and OpenBLAS; call it before importing torch: OpenBLAS sizes its pool
    from OPENBLAS_NUM_THREADS when it loads. Nothing else of the environment is changed (OPENBLAS_CORETYPE, if
    set, is left as it is)."""
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.blas_threads)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)


def read_data(prog, folder, seq_len, batch_size):
    """(train.bin's tokens, meta.json's vocab_size) of a prepared data folder; a folder that is missing, unreadable,
    not prepared, or too short for one batch of distinct windows is one line "PROG: error: ...", exit 2."""
    import numpy as np  # here, not at the top: numpy loads OpenBLAS, which must see pin_threads' environment first

    meta = os.path.join(folder, "meta.json")
    try:  # a missing or unreadable data folder, or a meta.json that is not one: one line, not a traceback
        for name in ("meta.json", "train.bin"):  # a FIFO or a folder there: refused, never opened (a FIFO blocks)
            mode = os.stat(os.path.join(folder, name)).st_mode
            if not stat.S_ISREG(mode):
                fail(prog, f"{os.path.join(folder, name)}: not a regular file; --data names a prepared data folder "
                           "(scripts/prepare_data.sh)")
        with open(meta, encoding="utf-8") as f:
            doc = json.load(f)
        tokens = np.fromfile(os.path.join(folder, "train.bin"), dtype="<u2")
    except OSError as e:
        fail(prog, f"{e.filename or folder}: cannot read ({e.strerror or e}); --data names a prepared data folder "
                   "(scripts/prepare_data.sh)")
    except (ValueError, RecursionError) as e:
        fail(prog, f"{meta}: not a meta.json object (not JSON: {e}); --data names a prepared data folder "
                   "(scripts/prepare_data.sh)")
    if not isinstance(doc, dict):
        fail(prog, f"{meta}: expected a JSON object with vocab_size (xsa-prepare's meta.json), got {json_type(doc)}")
    vocab_size = doc.get("vocab_size")
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or not 0 < vocab_size < 1 << 31:
        fail(prog, f"{meta}: vocab_size: expected a positive integer, got {vocab_size!r:.40}")
    if tokens.size and int(tokens.max()) >= vocab_size:
        fail(prog, f"{folder}/train.bin has ids >= vocab_size {vocab_size}")
    windows = (tokens.size - 1) // seq_len if tokens.size else 0
    if windows < batch_size:
        fail(prog, f"{folder}/train.bin: {tokens.size} tokens make {windows} windows of {seq_len} + 1, fewer than "
                   f"one batch of {batch_size}")
    return tokens, vocab_size
