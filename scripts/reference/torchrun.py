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
"""

import os
import re
import sys

from torch.distributed.elastic.multiprocessing.api import Std
from torch.distributed.run import main

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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from classic_store import use_classic_tcp_store  # noqa: E402

use_classic_tcp_store()

if __name__ == "__main__":
    sys.exit(main())
