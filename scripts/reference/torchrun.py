#!/usr/bin/python3
"""torchrun, also where Debian 12's is broken: the same command line as torchrun (torch.distributed.run).

    /usr/bin/python3 scripts/reference/torchrun.py --nproc_per_node 2 --master_addr 127.0.0.1 --master_port 29500 \
        scripts/reference/train_ddp.py ...

torch 1.13's torchrun on Python 3.11 (Debian 12's python3-torch) stops before starting any worker with
"AttributeError: 'NoneType' object has no attribute 'get'" (torch/distributed/elastic/multiprocessing/api.py,
to_map): Std.from_str("0"), the default of --redirects and --tee, finds the flag by iterating the IntFlag Std, and
Python 3.11 no longer yields a flag of value 0 when iterating one (the same failure is reported against torch 1.13
by every project that launches with it on 3.11, e.g. meta-llama/llama issue 86). Where that is so, Std.from_str is
replaced by one that looks each value up by number (Std(0) works on every Python); a torch whose from_str works is
run untouched. Options are spelled with underscores (--nproc_per_node), which every torchrun accepts; 1.13 knows no
dashed spellings.

What torchrun would only find later, with a traceback of its agent (--nproc_per_node abc, --nnodes 2:1, a script
that does not exist), is checked before handing over, as are torchrun's own argparse errors: one line
"torchrun.py: error: ...", exit 2.
"""

import math
import os
import re
import shutil
import sys
import types

from torch.distributed.elastic.multiprocessing.api import Std
from torch.distributed.run import get_args_parser, main

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options  # noqa: E402  (one line and exit 2; no torch)

PROG = "torchrun.py"

if Std.from_str("0") is None:
    _VALUE = r"[0123]"  # the patterns of torch's own from_str: "3", or a local rank map "0:3,1:0"
    _MAPPING = r"(\d:[0123],)*(\d:[0123])"

    def _from_str(vm):
        if re.fullmatch(_VALUE, vm):
            return Std(int(vm))
        if re.fullmatch(_MAPPING, vm):
            return {int(rank): Std(int(value)) for rank, value in (pair.split(":") for pair in vm.split(","))}
        raise ValueError(f"{vm} does not match {_VALUE} or {_MAPPING}")  # as torch's own

    Std.from_str = staticmethod(_from_str)

# The classic TCPStore for the agent's rendezvous (classic_store.py: Debian 13's torch has no libuv); the workers
# (train_ddp.py) ask for it in their own process.
from classic_store import use_classic_tcp_store  # noqa: E402

use_classic_tcp_store()


def count(option, text, least=1):
    """The integer `text` of `option`, at least `least`, or one line and exit 2."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < least:
        options.fail(PROG, f"{option} {text!r}: expected an integer >= {least}")
    return value


def check_args(argv):
    """torchrun's command line parsed by torchrun's own parser (its errors one line, exit 2), then what its agent
    would refuse only later with a traceback, checked: the numbers, --redirects / --tee, and the script."""
    parser = get_args_parser()
    parser.prog = PROG
    parser.error = types.MethodType(options.Parser.error, parser)  # one line, as every reference script's
    args = parser.parse_args(argv)
    if args.nproc_per_node not in ("auto", "cpu", "gpu"):
        count("--nproc_per_node", args.nproc_per_node)  # or auto, cpu, gpu: torchrun's words
    elif args.nproc_per_node == "gpu":
        import torch
        if not torch.cuda.is_available():
            options.fail(PROG, "--nproc_per_node gpu: this torch sees no CUDA device (use a number, or cpu)")
    nodes = args.nnodes.split(":")
    if len(nodes) > 2:
        options.fail(PROG, f"--nnodes {args.nnodes!r}: expected N or MIN:MAX")
    low, high = (count("--nnodes", n) for n in (nodes * 2)[:2])
    if low > high:
        options.fail(PROG, f"--nnodes {args.nnodes!r}: the minimum is above the maximum")
    if not 0 <= args.node_rank < high:
        options.fail(PROG, f"--node_rank {args.node_rank}: expected an integer in [0, {high}) (--nnodes {args.nnodes})")
    if not 1 <= args.master_port <= 65535:
        options.fail(PROG, f"--master_port {args.master_port}: expected a port in [1, 65535]")
    if args.max_restarts < 0:
        options.fail(PROG, f"--max_restarts {args.max_restarts}: expected an integer >= 0")
    if not (math.isfinite(args.monitor_interval) and args.monitor_interval > 0):
        options.fail(PROG, f"--monitor_interval {args.monitor_interval}: expected a finite number of seconds > 0")
    for option, value in (("--redirects", args.redirects), ("--tee", args.tee)):
        try:
            Std.from_str(value)
        except ValueError:
            options.fail(PROG, f"{option} {value!r}: expected 0..3, or a local rank map such as 0:3,1:0")
    script = args.training_script
    if args.module:
        return
    if args.no_python:
        if shutil.which(script) is None:
            options.fail(PROG, f"{script}: command not found (--no_python runs it as a program)")
    elif not os.path.isfile(script):
        options.fail(PROG, f"{script}: no such file (the training script every worker runs)")


if __name__ == "__main__":
    check_args(sys.argv[1:])
    sys.exit(main())
