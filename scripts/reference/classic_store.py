"""The classic TCPStore wherever torch would build one, for torchrun's agent and for its workers.

torch 2.4 and later default TCPStore to its libuv backend, and Debian 13's torch is built without libuv, so any
store built with the default stops with "use_libuv was requested but PyTorch was build without libuv support".
USE_LIBUV=0 reaches only the stores whose caller reads it: torchrun's static rendezvous (the agent, with
--master_addr) and the worker's client of the agent's store (torch.distributed.rendezvous, TORCHELASTIC_USE_AGENT_STORE)
build theirs with the default. Where TCPStore has the option, those two modules get a TCPStore that asks for the
classic backend unless told otherwise; a torch without the option (Debian 12's 1.13) is left untouched. xsa-train's
own store is the classic one too (src/xsa/train/distributed.cpp).
"""

import importlib
import os


def use_classic_tcp_store():
    os.environ.setdefault("USE_LIBUV", "0")
    from torch.distributed import TCPStore
    if "use_libuv" not in (TCPStore.__init__.__doc__ or ""):
        return
    # By module name: `import torch.distributed.rendezvous as m` binds torch.distributed's attribute of that name,
    # which is the function rendezvous(), not the module.
    static_rendezvous = importlib.import_module("torch.distributed.elastic.rendezvous.static_tcp_rendezvous")
    env_rendezvous = importlib.import_module("torch.distributed.rendezvous")

    def classic_tcp_store(*args, **kwargs):
        kwargs.setdefault("use_libuv", False)
        return TCPStore(*args, **kwargs)

    static_rendezvous.TCPStore = classic_tcp_store
    env_rendezvous.TCPStore = classic_tcp_store
