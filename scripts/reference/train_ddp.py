#!/usr/bin/python3
"""The PyTorch reference trained data-parallel with torch.nn.parallel.DistributedDataParallel (DDP) over Gloo: the
other side of the benchmark's data-parallel table (GitHub issue 59; scripts/perf/bench.py).

    train_ddp.py --ranks 2 [shape] [--bucket-cap-mb 25] [--gradient-as-bucket-view]   # DDP, 2 ranks here
    train_ddp.py [shape]                                  # one process, no DDP: the single-process baseline
    train_ddp.py --ranks 2 --search [--search-bucket-cap-mb 1,5,25,100] [shape]      # DDP's best configuration
    train_ddp.py --ranks 2 --allreduce-bytes 3676192,125880000 [--allreduce-repeats 20]  # Gloo's all-reduce alone
    torchrun.py --nproc_per_node 2 --master_addr HOST --master_port P train_ddp.py ...   # as one rank of torchrun's

(All under /usr/bin/python3 scripts/reference/.) The model, optimizer, schedule, data windows and step are the
reference's (training.py, shared with train_reference.py), one variant (--variant, default xsa), --batch-size the
global batch: every rank draws the same global batch and takes its contiguous slice of batch / world windows, as
xsa-train's ranks do. Without --ranks and outside torchrun it is one process with no process group and no DDP
wrapper, the very step train_reference.py times: the 1-rank baseline DDP's scaling efficiency divides by.
--ranks N starts N ranks on this machine under torchrun (torchrun.py, which works around Debian 12's torchrun on
Python 3.11) with the master on 127.0.0.1 at a free port; the inputs are checked once before, so a bad option, number
or data folder is one line "train_ddp.py: error: ..." and exit 2, and a rank that fails later is one line too (the
first a rank wrote; torchrun's own report is left out), exit 1. Under torchrun directly, RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT come from torchrun and only rank 0 says what is wrong with the input (torchrun adds its
report). Gloo's sockets use GLOO_SOCKET_IFNAME's interface where it is set, else, for a master on 127.0.0.0/8, the
loopback interface (as xsa-train's ranks), else the interface the host's name resolves to (torch's default).

Threads: --threads torch intra-op and --blas-threads OpenBLAS threads per rank (default 1 each), set before torch is
imported (options.pin_threads); the JSON reports the counts read back. Gloo's own threads are not limited.

DDP: bucket_cap_mb, gradient_as_bucket_view and static_graph as given (DDP's first bucket is always
dist._DEFAULT_FIRST_BUCKET_BYTES, 1 MiB, reported). With gradient_as_bucket_view the gradients are zeroed in place
(zero_grad(set_to_none=False)), so they stay views of the buckets and backward accumulates straight into them, the
copy that option exists to save; otherwise they are dropped (set_to_none=True) as the single-process step does.
--search trains, one after another in one launch, every bucket_cap_mb of --search-bucket-cap-mb with
gradient_as_bucket_view off and on, each from the same initial weights and batches for --steps steps (--warmup of
them untimed), and reports each configuration's median step time and the best (the fastest).

All-reduce time per step. DDP all-reduces gradient buckets *during* backward, each as soon as its gradients are
ready, so there is no single all-reduce to time; a comm hook (ddp.register_comm_hook) wraps DDP's default
allreduce_hook (its very all-reduce: divide by the world size, Gloo all-reduce of the bucket) and stamps, per bucket,
the time the hook launches it and the time its all-reduce completes (a callback on its future, on rank 0). Per step:
  allreduce_ms: from the first bucket's launch to the last bucket's completion: the span of the step in which
      gradients are being all-reduced, most of it overlapping backward's compute;
  allreduce_exposed_ms: from the last bucket's launch (all gradients computed: backward's compute is over) to the
      return of loss.backward(): what the step waits for the all-reduce after its own compute, DDP's finalisation
      (copying buckets back into .grad where they are not views) included.
xsa-train's all-reduce follows backward with nothing overlapping, so its timing.allreduce_ms_median is both at once.
Both include the wait for the slower rank. The hook costs a Python call and a callback per bucket.

Output: one JSON line from rank 0: tokens/s from the median step time of the timed steps (global batch x seq_len /
median), every timed step's ms, the all-reduce medians and samples, the DDP configuration, the torch version, the
threads in use, and per step the loss averaged over the ranks and the gradient's global norm before clipping (after
DDP's average), so a 2-rank run can be compared with one process step by step; progress goes to stderr.
--allreduce-bytes measures only torch.distributed's Gloo all-reduce of a float32 buffer of each size (rounded up to
whole floats), no model or data: per size, --warmup untimed and --allreduce-repeats timed all-reduces, each after a
barrier, rank 0's time; "gloo_allreduce": [{"bytes", "ms_median", "samples_ms", "MB_per_s" = bytes / 1e6 /
median seconds}] (with 2 ranks a ring all-reduce sends and receives the buffer's size once per rank).
"""

import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import options  # noqa: E402  (no torch: the arguments and the thread environment come first)

PROG = "train_ddp.py"


def number_list(kind, text, name, low):
    """A comma list of numbers of `kind` (int or float), each finite and > low (float) or >= low (int), or one
    line and exit 2."""
    values = []
    for part in text.split(","):
        try:
            value = kind(part.strip())
        except ValueError:
            value = None
        if value is None or value != value or value in (float("inf"), float("-inf")) or \
                (value < low if kind is int else value <= low):
            options.fail(PROG, f"{name}: {part.strip()!r} is not a "
                               + (f"whole number >= {low}" if kind is int else f"finite number > {low}"))
        values.append(value)
    return values


def parse_args():
    ap = options.Parser(prog=PROG, description="DDP over Gloo on the reference model: tokens/s and all-reduce time")
    options.add_training_args(ap, steps=20)
    options.add_model_args(ap)
    ap.add_argument("--variant", choices=["sa", "xsa"], default="xsa")
    ap.add_argument("--ranks", type=int, default=None,
                    help="start this many ranks here under torchrun (master 127.0.0.1, a free port); without it: "
                         "one process without DDP, or, under torchrun, torchrun's rank")
    ap.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP's bucket size (its default: 25)")
    ap.add_argument("--gradient-as-bucket-view", action="store_true", help="DDP's option (its default: off)")
    ap.add_argument("--static-graph", action="store_true", help="DDP's option (its default: off)")
    ap.add_argument("--search", action="store_true",
                    help="time every --search-bucket-cap-mb x gradient_as_bucket_view off/on and report the best")
    ap.add_argument("--search-bucket-cap-mb", default="1,5,25,100")
    ap.add_argument("--allreduce-bytes", default=None,
                    help="comma list of byte counts: time only Gloo's all-reduce of float32 buffers of these sizes")
    ap.add_argument("--allreduce-repeats", type=int, default=20, help="timed all-reduces per size")
    ap.add_argument("--dist-timeout-s", type=float, default=120.0,
                    help="how long a rank waits for the others in a collective")
    args = ap.parse_args()
    options.check_args(ap, args)
    if not (0 < args.bucket_cap_mb < float("inf")):
        ap.error(f"--bucket-cap-mb: expected a positive number, got {args.bucket_cap_mb}")
    if not (0 < args.dist_timeout_s < float("inf")):
        ap.error(f"--dist-timeout-s: expected a positive number, got {args.dist_timeout_s}")
    if args.allreduce_repeats < 1:
        ap.error(f"--allreduce-repeats: expected a number >= 1, got {args.allreduce_repeats}")
    if args.ranks is not None and args.ranks < 1:
        ap.error(f"--ranks: expected a number >= 1, got {args.ranks}")
    args.search_caps = number_list(float, args.search_bucket_cap_mb, "--search-bucket-cap-mb", 0)
    args.allreduce_sizes = None if args.allreduce_bytes is None else \
        number_list(int, args.allreduce_bytes, "--allreduce-bytes", 4)
    if args.search and args.allreduce_sizes:
        ap.error("--search and --allreduce-bytes are two measurements: give one")
    return ap, args


def torchrun_rank():
    """(rank, world) from torchrun's environment, or None outside torchrun."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return None
    try:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    except ValueError:
        options.fail(PROG, f"RANK {os.environ['RANK']!r} / WORLD_SIZE {os.environ['WORLD_SIZE']!r}: expected whole "
                           "numbers (torchrun sets them)")
    if not 0 <= rank < world:
        options.fail(PROG, f"RANK {rank} is not one of WORLD_SIZE {world} ranks")
    return rank, world


def free_port():
    """A TCP port free on 127.0.0.1 now (the kernel's pick), for torchrun's master."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(ranks):
    """Runs this command line again as `ranks` ranks under torchrun (each sees WORLD_SIZE = --ranks and trains),
    passing the ranks' stdout and stderr on, except their error lines: a failure is one line, the first error a
    rank wrote (the failing rank writes its own first), and torchrun's report after it is left out."""
    cmd = [sys.executable, os.path.join(HERE, "torchrun.py"), "--nproc_per_node", str(ranks), "--master_addr",
           "127.0.0.1", "--master_port", str(free_port()), os.path.abspath(__file__)] + sys.argv[1:]
    errors, report = [], False
    with subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, errors="replace") as proc:
        for line in proc.stderr:
            if line.startswith(f"{PROG}: error:"):
                errors.append(line.strip())
            elif line.startswith(("ERROR:torch.distributed.elastic", "WARNING:torch.distributed.elastic")) or report:
                report = True  # torchrun's account of a failed rank (it stops the others), from here to the end
            else:
                sys.stderr.write(line)
    if proc.returncode != 0:
        print(errors[0] if errors else f"{PROG}: error: torchrun exited {proc.returncode} (a rank failed)",
              file=sys.stderr)
        return 1
    return 0


place = torchrun_rank()
options.SAYS_ERRORS = place is None or place[0] == 0  # under torchrun the others fail with the same code, silently
ap, args = parse_args()
if place is not None and args.ranks not in (None, place[1]):
    ap.error(f"--ranks {args.ranks} under torchrun's WORLD_SIZE {place[1]}: leave --ranks out under torchrun")
RANK, WORLD = place if place is not None else (0, args.ranks or 1)
if WORLD == 1 and (args.search or args.allreduce_sizes):
    ap.error(f"--{'search' if args.search else 'allreduce-bytes'} measures DDP's ranks: give --ranks 2 or more")
if args.batch_size % WORLD:
    ap.error(f"--batch-size {args.batch_size} must divide by the {WORLD} ranks (each takes an equal slice)")
# Must happen before torch (and with it OpenBLAS) is loaded: OpenBLAS sizes its pool from these at load.
options.pin_threads(args)
TOKENS, VOCAB = (None, None) if args.allreduce_sizes else \
    options.read_data(PROG, args.data, args.seq_len, args.batch_size)
if place is None and WORLD > 1:  # the launcher: everything it could check is checked; the ranks do the work
    sys.exit(launch(WORLD))

import datetime  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

from classic_store import use_classic_tcp_store  # noqa: E402
from model import has_sdpa  # noqa: E402
from training import Batches, build_model, learning_rate, limit_threads, make_optimizer  # noqa: E402
from training import openblas_threads, train_step  # noqa: E402

VARIANTS = {"sa": ("fixed", 0.0), "xsa": ("fixed", 1.0)}


def loopback_interface():
    """The name of this machine's loopback interface (IFF_LOOPBACK in /sys/class/net/NAME/flags), "lo" if none
    says so."""
    for _, name in socket.if_nameindex():
        try:
            with open(f"/sys/class/net/{name}/flags") as f:
                if int(f.read(), 16) & 0x8:
                    return name
        except (OSError, ValueError):
            continue
    return "lo"


def join_ranks():
    """The Gloo process group of torchrun's ranks (env://). GLOO_SOCKET_IFNAME is honoured; unset, a master on
    127.0.0.0/8 (or localhost) puts Gloo's sockets on loopback, as xsa-train does, where torch would take the
    interface the host's name resolves to."""
    master = os.environ.get("MASTER_ADDR", "")
    if not os.environ.get("GLOO_SOCKET_IFNAME") and (master == "localhost" or master.startswith("127.")):
        os.environ["GLOO_SOCKET_IFNAME"] = loopback_interface()
    use_classic_tcp_store()  # Debian 13's torch has no libuv (classic_store.py)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.dist_timeout_s))


class AllreduceTimer:
    """A DDP comm hook: DDP's default allreduce_hook, its launch and its completion stamped (see the docstring at
    the top: allreduce_ms and allreduce_exposed_ms). reset() before a step, step_times(backward_end) after it."""

    def __init__(self):
        self.launched, self.completed = [], []

    def reset(self):
        self.launched, self.completed = [], []

    def hook(self, state, bucket):
        self.launched.append(time.perf_counter())
        future = default_hooks.allreduce_hook(state, bucket)

        def completed(done):
            self.completed.append(time.perf_counter())  # in Gloo's thread, when the bucket's all-reduce is done
            return done.value()

        return future.then(completed)

    def step_times(self, backward_end):
        """(allreduce_ms, allreduce_exposed_ms, buckets) of the step just taken."""
        if not self.launched or len(self.completed) != len(self.launched):
            raise RuntimeError(f"the timing hook saw {len(self.launched)} buckets launched and "
                               f"{len(self.completed)} completed in one step")
        return (1e3 * (max(self.completed) - min(self.launched)), 1e3 * (backward_end - max(self.launched)),
                len(self.launched))


def median(values):
    return statistics.median(values) if values else None


def train(config):
    """--steps steps of the reference model on this rank's slices (DDP with `config` when WORLD > 1, else the plain
    model); a dict of timings and, per step, the rank-averaged loss and the gradient norm."""
    model = build_model(args, VARIANTS[args.variant], VOCAB)
    optimizer = make_optimizer(model, args)
    net, timer = model, None
    if WORLD > 1:
        net = DistributedDataParallel(model, bucket_cap_mb=config["bucket_cap_mb"],
                                      gradient_as_bucket_view=config["gradient_as_bucket_view"],
                                      static_graph=config["static_graph"])
        timer = AllreduceTimer()
        net.register_comm_hook(None, timer.hook)  # state None: the default process group, as DDP's own hook
    set_to_none = not config["gradient_as_bucket_view"]  # views of the buckets are zeroed in place, not dropped
    batches = Batches(TOKENS, args.seq_len, args.batch_size, args.seed)
    step_ms, span_ms, exposed_ms, buckets, losses, norms = [], [], [], [], [], []
    for step in range(args.steps):
        marks = {}
        if timer is not None:
            timer.reset()
        t0 = time.perf_counter()
        lr = learning_rate(step, args.steps, args.warmup_steps, args.lr, args.min_lr)
        loss, norm = train_step(net, model, optimizer, batches.next(RANK, WORLD), lr, args.grad_clip, set_to_none,
                                after_backward=lambda: marks.setdefault("backward", time.perf_counter()))
        t1 = time.perf_counter()
        losses.append(loss)
        norms.append(norm.detach().reshape(()))
        if step >= args.warmup:
            step_ms.append(1e3 * (t1 - t0))
            if timer is not None:
                span, exposed, count = timer.step_times(marks["backward"])
                span_ms.append(span)
                exposed_ms.append(exposed)
                buckets.append(count)
        if RANK == 0 and ((step + 1) % 10 == 0 or step + 1 == args.steps):
            print(f"[{args.variant}, {WORLD} rank{'s' if WORLD > 1 else ''}] step {step + 1}/{args.steps} "
                  f"{1e3 * (t1 - t0):.0f} ms", file=sys.stderr)
    losses = torch.stack(losses)
    if WORLD > 1:  # each rank's loss is its slice's mean; the slices are equal, so the mean of the means is the batch's
        dist.all_reduce(losses)
        losses /= WORLD
    tokens_per_step = args.batch_size * args.seq_len
    out = {"step_ms_median": median(step_ms), "tokens_per_s": 1e3 * tokens_per_step / median(step_ms),
           "step_ms": step_ms, "losses": losses.tolist(), "grad_norms": torch.stack(norms).tolist(),
           "parameters": sum(p.numel() for p in model.parameters())}
    if timer is not None:
        out.update({"allreduce_ms_median": median(span_ms), "allreduce_ms": span_ms,
                    "allreduce_exposed_ms_median": median(exposed_ms), "allreduce_exposed_ms": exposed_ms,
                    "buckets": buckets})
    del net, model, optimizer  # before the next configuration of a search is built
    gc.collect()
    return out


def ddp_config(bucket_cap_mb, gradient_as_bucket_view):
    return {"bucket_cap_mb": bucket_cap_mb, "gradient_as_bucket_view": gradient_as_bucket_view,
            "static_graph": args.static_graph}


def search():
    """Every --search-bucket-cap-mb x gradient_as_bucket_view off/on, one after another: each configuration's
    timings (no per-step losses) and the fastest by median step time."""
    tried = []
    for cap in args.search_caps:
        for view in (False, True):
            config = ddp_config(cap, view)
            result = train(config)
            tried.append(dict(config, **{k: result[k] for k in (
                "step_ms_median", "tokens_per_s", "step_ms", "allreduce_ms_median", "allreduce_exposed_ms_median")}))
    best = min(tried, key=lambda r: r["step_ms_median"])
    return {"search": tried, "best": ddp_config(best["bucket_cap_mb"], best["gradient_as_bucket_view"])}


def gloo_allreduce():
    """torch.distributed's Gloo all-reduce (sum) of a float32 buffer of each --allreduce-bytes size."""
    sizes = []
    for size in args.allreduce_sizes:
        buffer = torch.empty((size + 3) // 4, dtype=torch.float32)
        samples = []
        for i in range(args.warmup + args.allreduce_repeats):
            buffer.fill_(1.0)  # the same values every time (sums of ones would grow towards inf)
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(buffer)
            t1 = time.perf_counter()
            if i >= args.warmup:
                samples.append(1e3 * (t1 - t0))
        ms = statistics.median(samples)
        nbytes = 4 * buffer.numel()
        sizes.append({"bytes": nbytes, "ms_median": ms, "samples_ms": samples, "MB_per_s": nbytes / 1e6 / (ms / 1e3)})
        del buffer
    return {"gloo_allreduce": sizes}


def main():
    blas_mechanism = limit_threads(args)
    if WORLD > 1:
        join_ranks()
    out = {"implementation": "pytorch-ddp" if WORLD > 1 else "pytorch-reference", "torch": torch.__version__,
           "world_size": WORLD, "backend": "gloo" if WORLD > 1 else None, "threads": torch.get_num_threads(),
           "blas_threads": openblas_threads(), "blas_threads_via": blas_mechanism,
           "blas_threads_requested": args.blas_threads}
    if args.allreduce_sizes:
        out.update(gloo_allreduce())
    else:
        out.update({"variant": args.variant, "steps": args.steps, "warmup": args.warmup,
                    "batch_size": args.batch_size, "batch_per_rank": args.batch_size // WORLD,
                    "seq_len": args.seq_len, "model": {"n_layer": args.n_layer, "d_model": args.d_model,
                                                       "n_head": args.n_head, "d_head": args.d_head},
                    "attention": "scaled_dot_product_attention" if has_sdpa() else "explicit"})
        if args.search:
            out.update(search())
        else:
            config = ddp_config(args.bucket_cap_mb, args.gradient_as_bucket_view) if WORLD > 1 else None
            if config is not None:
                config.update(first_bucket_mb=dist._DEFAULT_FIRST_BUCKET_BYTES / 2**20,
                              comm_hook="default allreduce_hook, timed")
            out["ddp"] = config
            out.update(train(config or ddp_config(None, False)))
    if WORLD > 1:
        dist.barrier()  # every rank done before any leaves
    if RANK == 0:
        print(json.dumps(out), flush=True)
    if WORLD > 1:
        # The group is neither destroyed nor left to the interpreter's teardown: on Debian 13's torch 2.6 a rank hung
        # in destroy_process_group now and then once its peer had left, and without it the group's destructor at
        # exit aborted a rank (SIGABRT) now and then. Nothing is left to flush, so the process ends here.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:  # a collective that failed (a rank gone, the timeout): one line naming this rank
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"{PROG}: error: rank {RANK} of {WORLD}: {first}", file=sys.stderr)
        sys.exit(1)
