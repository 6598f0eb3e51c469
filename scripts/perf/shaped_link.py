#!/usr/bin/python3
"""Data-parallel ranks on a network that is not loopback (GitHub issue 59): every rank in its own Linux network
namespace, the namespaces joined by veth pairs to a bridge, every rank's link shaped by `tc` to a rate such as
1 or 10 Gbit/s, so the scale-out cost model meets a network slower than loopback (docs/performance.md "A shaped
network").

Topology: a hub namespace holds a Linux bridge (the switch); each rank's namespace holds one end of a veth pair
(`xsa-eth`, its "NIC", address 10.77.0.<rank+1>/24) whose other end (`xsa-r<rank>`) is a port of the bridge.
Like nodes on one switch, every rank reaches every other through the bridge, and each rank's link is shaped in
both directions: its egress on `xsa-eth` inside its namespace (what the node sends) and the bridge port's egress
towards it (what it receives), so a rank can neither send nor receive faster than the rate whatever the number
of peers -- a full-duplex NIC of that speed. Nothing is created in the caller's namespace: the veths are made
inside the namespaces, so deleting the namespaces removes every link.

Shaping: tbf (default) or htb on each of those egress points. The bucket is at least 1 ms of the rate and at
least 128 KiB: veth passes TCP's GSO packets of up to 64 KiB whole, a bucket smaller than two of them makes tbf
split them (and caps the rate), and a bucket of 1 ms means the timer that refills it need not fire more than
about once a millisecond, which a busy 2-core machine can keep up with at 10 Gbit/s. tbf's queue holds 10 ms of
the rate on top of the bucket (its `latency`); TCP's small-queue limit keeps a flow far below that, so the queue
never drops a segment of a single flow. No delay is added (this kernel's `tc` has no netem): the link is slower,
not longer. A veth pair is memory copies on the machine's own cores: how fast it can go unshaped is a property
of the machine (`--measure --rate unshaped` says), and a rate above that is not reached.

Every rank runs as `ip netns exec <its namespace> COMMAND` with RANK, WORLD_SIZE, LOCAL_RANK (0: one rank per
namespace, a node each), LOCAL_WORLD_SIZE (1), GROUP_RANK, MASTER_ADDR (rank 0's address), MASTER_PORT and
GLOO_SOCKET_IFNAME (`xsa-eth`) set -- what xsa-train and a torchrun-style DDP script read. The harness waits
with a timeout, collects every rank's exit code, stdout and stderr, stops the others when one fails, and always
tears everything down: on return, on an exception, on SIGINT, SIGTERM and SIGHUP (the ranks get SIGTERM, then
SIGKILL; processes left in a namespace are killed; the namespaces are deleted). A harness killed with SIGKILL
cannot clean up: its ranks get SIGTERM from the kernel (PR_SET_PDEATHSIG), and the next harness (or
`--cleanup`) deletes namespaces of this naming whose owner pid is gone.

Needs root, `ip` and `tc` (iproute2).

    scripts/perf/shaped_link.py --ranks 2 --rate 1gbit -- build/xsa-train --config configs/default.yaml --out /tmp/x
    scripts/perf/shaped_link.py --ranks 2 --rate 100mbit --measure          # TCP throughput rank 0 -> rank 1
    scripts/perf/shaped_link.py --ranks 3 --rate 100mbit --measure --fan-in # ranks 1, 2 -> rank 0 at once
    scripts/perf/shaped_link.py --cleanup                                   # stale namespaces of dead harnesses

From Python (scripts/perf/bench.py can import it: `import shaped_link` from scripts/perf):

    run = shaped_link.run_command(["python3", "scripts/reference/train_ddp.py", ...], ranks=2, rate="1gbit")
    r = shaped_link.train_xsa(out, ranks=2, rate="10gbit", overrides=["runtime.threads=1", ...])
    r["tokens_per_s"], r["allreduce_ms_median"], r["results"]            # results.json, parsed

Standard library only.
"""
import argparse
import contextlib
import ctypes
import ipaddress
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

PROG = "shaped_link"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository
BAD_INPUT = 2          # exit code of bad input (as the other scripts)
RANK_FAILED = 1        # a rank exited non-zero
TIMED_OUT = 124        # as timeout(1)

DEFAULT_BASE = "xsa"   # namespaces are <base>-<harness pid>-hub and <base>-<harness pid>-r<rank>
SUBNET = "10.77.0"     # private addresses, inside the namespaces only (nothing routes there from outside)
RANK_IF = "xsa-eth"    # the rank's end of its veth pair, inside its namespace (GLOO_SOCKET_IFNAME)
BRIDGE = "xsa-br"      # the switch, in the hub namespace
MASTER_PORT = 29500    # each namespace has its own ports: a fixed one is always free
MAX_RANKS = 250        # one /24

# Shaping parameters (see the module docstring for why).
MIN_BURST_BYTES = 128 * 1024
BURST_SECONDS = 1e-3
QUEUE_SECONDS = 10e-3

# Rates as tc writes them: a number and a unit of bits per second.
RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}
MIN_RATE, MAX_RATE = 1e5, 4e11  # 100 kbit/s .. 400 Gbit/s: outside, a typo (and tbf's limit near 2^32 bytes)


class HarnessError(Exception):
    """Something the harness cannot do; str(e) is the one line to print. code: the exit code."""

    def __init__(self, message, code=BAD_INPUT):
        super().__init__(message)
        self.code = code


class Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP arrived: unwinds through every `finally` so everything is torn down.
    A BaseException, so no `except Exception` on the way swallows it."""

    def __init__(self, signum):
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


# ---------------------------------------------------------------------------------------------------- input

def parse_rate(text):
    """bits per second of a rate written as tc writes it (`1gbit`, `100mbit`, `2.5Gbit`), or None for
    `unshaped` (namespaces and veths, no qdisc). Raises HarnessError."""
    t = str(text).strip().lower()
    if t in ("unshaped", "none"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(bit|kbit|mbit|gbit|tbit)", t)
    if not m:
        raise HarnessError(f"--rate {text!r}: not a rate (write it as tc does: 100mbit, 1gbit, 10gbit; "
                           "or 'unshaped')")
    bps = float(m.group(1)) * RATE_UNITS[m.group(2)]
    if not MIN_RATE <= bps <= MAX_RATE:
        raise HarnessError(f"--rate {text!r}: {format_rate(bps)} is outside {format_rate(MIN_RATE)} .. "
                           f"{format_rate(MAX_RATE)}")
    return int(bps)


def as_rate(rate):
    """A rate as the API takes it -- tc's text ('1gbit'), bits/s as a number, or None / 'unshaped' -- in bits/s
    (None: unshaped). Raises HarnessError."""
    if rate is None or isinstance(rate, str):
        return parse_rate(rate) if rate is not None else None
    if not MIN_RATE <= rate <= MAX_RATE:
        raise HarnessError(f"rate {rate:g} bit/s is outside {format_rate(MIN_RATE)} .. {format_rate(MAX_RATE)}")
    return int(rate)


def format_rate(bps):
    if bps is None:
        return "unshaped"
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= scale:
            return f"{bps / scale:.4g} {unit}"
    return f"{bps:g} bit/s"


def shaping(bps, qdisc="tbf"):
    """The tc arguments (after `tc qdisc replace dev DEV root`) that shape one egress at `bps` bits/s, as a list
    of argument lists (htb needs a qdisc and a class), with the bucket and queue sizes."""
    burst = max(MIN_BURST_BYTES, int(bps / 8 * BURST_SECONDS))
    if qdisc == "tbf":
        limit = burst + int(bps / 8 * QUEUE_SECONDS)
        return {"burst": burst, "limit": limit,
                "commands": [["qdisc", "replace", "dev", "{dev}", "root", "tbf", "rate", f"{bps}bit",
                              "burst", str(burst), "limit", str(limit)]]}
    if qdisc == "htb":
        # One class that every packet falls into (default 1); its leaf queue is the device's pfifo.
        return {"burst": burst, "limit": None,
                "commands": [["qdisc", "replace", "dev", "{dev}", "root", "handle", "1:", "htb", "default", "1"],
                             ["class", "replace", "dev", "{dev}", "parent", "1:", "classid", "1:1", "htb",
                              "rate", f"{bps}bit", "ceil", f"{bps}bit", "burst", str(burst), "cburst", str(burst)]]}
    raise HarnessError(f"--qdisc {qdisc!r}: expected tbf or htb")


def find_tool(name):
    return shutil.which(name)


def check_machine():
    """Root, ip and tc, and ip netns working; else HarnessError (one line). Returns {"ip": path, "tc": path}."""
    tools = {}
    for name in ("ip", "tc"):
        tools[name] = find_tool(name)
        if tools[name] is None:
            raise HarnessError(f"'{name}' not found on PATH (iproute2 installs it in /usr/sbin; apt-get install "
                               "iproute2)")
    if os.geteuid() != 0:
        raise HarnessError("needs root (it creates network namespaces, veth pairs and tc qdiscs)")
    r = subprocess.run([tools["ip"], "netns", "list"], capture_output=True, text=True)
    if r.returncode != 0:
        raise HarnessError(f"ip netns list failed: {first_line(r.stderr) or 'exit %d' % r.returncode}")
    return tools


def check_command(argv, cwd=None):
    """The program a rank runs must exist here (ip netns exec keeps the PATH and the working directory)."""
    if not argv:
        raise HarnessError("no command after -- (what every rank runs)")
    prog = argv[0]
    if "/" in prog:
        path = prog if os.path.isabs(prog) else os.path.join(cwd or os.getcwd(), prog)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise HarnessError(f"{prog}: command not found (no executable file there)")
    elif shutil.which(prog) is None:
        raise HarnessError(f"{prog}: command not found (not on PATH)")


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def last_line(text):
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()
    return ""


# ---------------------------------------------------------------------------------------------------- signals

@contextlib.contextmanager
def signals_unwind():
    """Inside: SIGINT, SIGTERM and SIGHUP raise Interrupted (so `finally` tears down); outside: as before. Only
    the main thread can set handlers; elsewhere the caller's own handling applies."""
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Interrupted(signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def signals_deferred():
    """Teardown must finish: a second Ctrl-C or SIGTERM during it is remembered and raised after it."""
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending = []
    old = {s: signal.signal(s, lambda signum, frame: pending.append(signum))
           for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if pending:
        raise Interrupted(pending[0])


# ---------------------------------------------------------------------------------------------------- network

def _run(argv, check=True):
    r = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if check and r.returncode != 0:
        raise HarnessError(f"{' '.join(argv)}: {first_line(r.stderr) or 'exit %d' % r.returncode}", code=1)
    return r


def list_namespaces(ip="ip"):
    r = _run([ip, "netns", "list"], check=False)
    # Lines are "NAME" or "NAME (id: N)".
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def delete_namespace(name, ip="ip"):
    """Kills what still runs in the namespace (only our ranks or their children can be there) and deletes it;
    its veth ends go with it, and with them their peers."""
    r = _run([ip, "netns", "pids", name], check=False)
    for pid in (int(p) for p in r.stdout.split() if p.isdigit()):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _run([ip, "netns", "delete", name], check=False)


def remove_stale(base=DEFAULT_BASE, ip="ip"):
    """Deletes the namespaces <base>-<pid>-... whose harness (pid) is gone, or is this very process (a namespace
    with our pid was left by an earlier harness that had it). Returns the names deleted."""
    pattern = re.compile(re.escape(base) + r"-(\d+)-(hub|r\d+)")
    gone = []
    for name in list_namespaces(ip):
        m = pattern.fullmatch(name)
        if m and (int(m.group(1)) == os.getpid() or not pid_alive(int(m.group(1)))):
            delete_namespace(name, ip)
            gone.append(name)
    return gone


class Network:
    """W rank namespaces on one bridge, shaped at `rate` (bits/s, or None: unshaped). A context manager:
    created on entry, deleted on exit whatever happens (also on SIGINT/SIGTERM/SIGHUP, which it turns into
    Interrupted while it exists)."""

    def __init__(self, ranks, rate=None, qdisc="tbf", base=DEFAULT_BASE, mtu=1500):
        if not isinstance(ranks, int) or ranks < 2:
            raise HarnessError(f"--ranks {ranks}: need at least 2 ranks")
        if ranks > MAX_RANKS:
            raise HarnessError(f"--ranks {ranks}: at most {MAX_RANKS}")
        if not re.fullmatch(r"[a-z][a-z0-9]{0,15}", base):
            raise HarnessError(f"--prefix {base!r}: lower-case letters and digits, starting with a letter")
        self.ranks = ranks
        self.rate = as_rate(rate)
        self.qdisc = qdisc
        self.shape = shaping(self.rate, qdisc) if self.rate is not None else None  # checks qdisc
        self.base = base
        self.mtu = mtu
        self.tag = f"{base}-{os.getpid()}"
        self.hub = f"{self.tag}-hub"
        self.namespaces = [f"{self.tag}-r{i}" for i in range(ranks)]
        self.addresses = [f"{SUBNET}.{i + 1}" for i in range(ranks)]
        self.ifname = RANK_IF
        self._made = []
        self._signals = None
        self.tools = None

    def describe(self):
        how = (f"{format_rate(self.rate)} ({self.qdisc}, bucket {self.shape['burst'] // 1024} KiB)"
               if self.rate is not None else "unshaped")
        return f"{self.ranks} ranks in network namespaces {self.tag}-r*, one bridge, every link {how}"

    def __enter__(self):
        self._signals = signals_unwind()
        self._signals.__enter__()
        try:
            self.create()
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, *exc):
        try:
            with signals_deferred():
                self.destroy()
        finally:
            if self._signals is not None:
                s, self._signals = self._signals, None
                s.__exit__(None, None, None)
        return False

    def _ip(self, *args):
        return _run([self.tools["ip"], *args])

    def _shape(self, ns, dev):
        for cmd in self.shape["commands"]:
            _run([self.tools["tc"], "-n", ns] + [a.format(dev=dev) for a in cmd])

    def create(self):
        self.tools = check_machine()
        remove_stale(self.base, self.tools["ip"])
        for ns in [self.hub] + self.namespaces:
            self._made.append(ns)  # before it exists: an interruption in `ip netns add` still deletes it
            self._ip("netns", "add", ns)
            self._ip("-n", ns, "link", "set", "lo", "up")
        self._ip("-n", self.hub, "link", "add", BRIDGE, "type", "bridge")
        self._ip("-n", self.hub, "link", "set", BRIDGE, "up")
        for i, ns in enumerate(self.namespaces):
            port = f"xsa-r{i}"
            # Made in the hub with its peer placed straight into the rank's namespace: nothing in ours.
            self._ip("-n", self.hub, "link", "add", port, "mtu", str(self.mtu), "type", "veth", "peer", "name",
                     self.ifname, "mtu", str(self.mtu), "netns", ns)
            self._ip("-n", self.hub, "link", "set", port, "master", BRIDGE)
            self._ip("-n", self.hub, "link", "set", port, "up")
            self._ip("-n", ns, "addr", "add", f"{self.addresses[i]}/24", "dev", self.ifname)
            self._ip("-n", ns, "link", "set", self.ifname, "up")
            if self.shape is not None:
                self._shape(ns, self.ifname)    # what the rank sends
                self._shape(self.hub, port)     # what it receives
        self._wait_reachable()

    def _wait_reachable(self, timeout=10.0):
        """Rank 0 reaches every other rank through the bridge (a TCP connect to a closed port answers with a
        reset once ARP and the bridge work): a broken setup is one line here, not a rank's timeout later."""
        deadline = time.monotonic() + timeout
        for i in range(1, self.ranks):
            code = ("import socket,sys,time\n"
                    "d=time.monotonic()+%f\n"
                    "while True:\n"
                    " s=socket.socket()\n"
                    " s.settimeout(1)\n"
                    " try: s.connect((%r,9)); sys.exit(0)\n"
                    " except ConnectionRefusedError: sys.exit(0)\n"
                    " except OSError:\n"
                    "  if time.monotonic()>d: sys.exit(1)\n"
                    "  time.sleep(0.05)\n") % (max(0.5, deadline - time.monotonic()), self.addresses[i])
            r = _run([self.tools["ip"], "netns", "exec", self.namespaces[0], sys.executable, "-c", code],
                     check=False)
            if r.returncode != 0:
                raise HarnessError(f"rank 0 cannot reach rank {i} ({self.addresses[i]}) through the bridge",
                                   code=1)

    def destroy(self):
        if not self._made:
            return
        ip = (self.tools or {}).get("ip") or find_tool("ip") or "ip"
        for ns in reversed(self._made):
            delete_namespace(ns, ip)
        self._made = []

    def exec_argv(self, rank, argv):
        return [self.tools["ip"], "netns", "exec", self.namespaces[rank]] + list(argv)

    def rank_env(self, rank, port=MASTER_PORT):
        return {"RANK": str(rank), "WORLD_SIZE": str(self.ranks), "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
                "GROUP_RANK": str(rank), "MASTER_ADDR": self.addresses[0], "MASTER_PORT": str(port),
                "GLOO_SOCKET_IFNAME": self.ifname}


# ---------------------------------------------------------------------------------------------------- ranks

_PR_SET_PDEATHSIG = 1


def _die_with_harness():
    """In the child before exec: SIGTERM when the harness dies, even by SIGKILL (kept across exec: ip is not
    set-uid). Ranks then stop instead of waiting for peers that will never come."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except Exception:  # noqa: BLE001  (not Linux glibc: the namespaces' cleanup still kills them)
        pass


class RankRun:
    """What W ranks did: exit codes (None: still running when stopped, negative: killed by that signal),
    stdout and stderr per rank, seconds, whether the timeout ended it, and the cause of a failure in one line."""

    def __init__(self, ranks):
        self.exit_codes = [None] * ranks
        self.stdout = [""] * ranks
        self.stderr = [""] * ranks
        self.seconds = 0.0
        self.timed_out = False
        self.cause = None

    @property
    def ok(self):
        return not self.timed_out and all(c == 0 for c in self.exit_codes)

    def as_dict(self):
        return {"exit_codes": self.exit_codes, "seconds": self.seconds, "timed_out": self.timed_out,
                "cause": self.cause, "stderr": self.stderr, "stdout": self.stdout}


def _stop(procs, grace_s):
    """SIGTERM to every rank's process group, SIGKILL to what is left after grace_s."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        live = [p for p in procs if p.poll() is None]
        for p in live:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, sig)
        deadline = time.monotonic() + wait_s
        while any(p.poll() is None for p in live) and time.monotonic() < deadline:
            time.sleep(0.05)


def run_ranks(net, argv, timeout=600.0, port=MASTER_PORT, env=None, cwd=None, log_dir=None, fail_grace_s=3.0,
              stop_grace_s=10.0):
    """Runs argv once per rank inside net's namespaces, waits for all (at most `timeout` s), and returns a
    RankRun. When a rank fails the others get fail_grace_s to fail on their own (their message is often the
    better cause), then SIGTERM, and SIGKILL stop_grace_s later. Output goes to files (log_dir, kept, or a
    temporary folder), never pipes, so a chatty rank cannot block."""
    check_command(argv, cwd)
    run = RankRun(net.ranks)
    first_failure = None  # (time, rank)
    own_logs = log_dir is None
    logs = tempfile.mkdtemp(prefix="shaped_link-") if own_logs else log_dir
    os.makedirs(logs, exist_ok=True)
    procs, files = [], []
    start = time.monotonic()
    try:
        for rank in range(net.ranks):
            e = dict(os.environ)
            e.update(env or {})
            e.update(net.rank_env(rank, port))
            out = open(os.path.join(logs, f"rank{rank}.stdout"), "wb")
            err = open(os.path.join(logs, f"rank{rank}.stderr"), "wb")
            files += [out, err]
            procs.append(subprocess.Popen(net.exec_argv(rank, argv), env=e, cwd=cwd, stdin=subprocess.DEVNULL,
                                          stdout=out, stderr=err, start_new_session=True,
                                          preexec_fn=_die_with_harness))
        while True:
            codes = [p.poll() for p in procs]
            now = time.monotonic()
            failed = [r for r, c in enumerate(codes) if c not in (None, 0)]
            if failed and first_failure is None:
                first_failure = (now, failed[0])
            if all(c is not None for c in codes):
                break
            if first_failure is not None and now - first_failure[0] > fail_grace_s:
                _stop(procs, stop_grace_s)
                break
            if now - start > timeout:
                run.timed_out = True
                _stop(procs, stop_grace_s)
                break
            time.sleep(0.05)
    finally:
        # Also on Interrupted: no rank outlives the harness (the namespaces' deletion kills any straggler).
        with signals_deferred():
            _stop(procs, stop_grace_s)
            for f in files:
                f.close()
            run.seconds = time.monotonic() - start
            for rank, p in enumerate(procs):
                run.exit_codes[rank] = p.poll()
                run.stdout[rank] = _read(os.path.join(logs, f"rank{rank}.stdout"))
                run.stderr[rank] = _read(os.path.join(logs, f"rank{rank}.stderr"))
            if own_logs:
                shutil.rmtree(logs, ignore_errors=True)
    run.cause = _cause(run, first_failure)
    return run


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _cause(run, first_failure):
    """The one line that says why a run failed: the first failing rank's signal or last stderr line (the
    others' complaints about a vanished peer come after it), or the timeout."""
    W = len(run.exit_codes)
    if first_failure is not None:
        rank = first_failure[1]
        code = run.exit_codes[rank]
        if code is not None and code < 0:
            return f"rank {rank} of {W} was killed by signal {-code}"
        line = last_line(run.stderr[rank])
        return f"rank {rank} of {W} exited with {code}" + (f": {line}" if line else "")
    if run.timed_out:
        return f"timed out after {run.seconds:.0f} s (ranks stopped)"
    return None


# ---------------------------------------------------------------------------------------------------- measure

def _receiver(host, port, warmup_s):
    """In rank 1's namespace: accepts one connection, counts bytes, prints JSON: the rate between warmup_s
    after the first byte (past TCP's slow start and tbf's initial full bucket) and the last byte."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, port))
    srv.listen(1)
    print("ready", flush=True)
    conn, _ = srv.accept()
    mss = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)  # payload bytes per full segment
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    total, t0, mark_bytes, mark_t, last_t = 0, None, None, None, None
    while True:
        n = conn.recv_into(view)
        if n == 0:
            break
        now = time.monotonic()
        total += n
        last_t = now
        if t0 is None:
            t0 = now
        if mark_t is None and now - t0 >= warmup_s:
            mark_t, mark_bytes = now, total
    if mark_t is None or last_t <= mark_t:
        print(json.dumps({"error": "the transfer ended within the warm-up"}))
        return
    print(json.dumps({"bytes": total - mark_bytes, "seconds": last_t - mark_t,
                      "bits_per_s": 8 * (total - mark_bytes) / (last_t - mark_t), "total_bytes": total,
                      "mss": mss}))


def _sender(host, port, seconds):
    s = socket.create_connection((host, port), timeout=10)
    buf = b"\0" * (1 << 20)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        s.sendall(buf)
    s.close()


def measure(net, seconds=4.0, warmup_s=1.0, flows=((0, 1),), port=5201, timeout=60.0):
    """TCP throughput over the bridge: one TCP flow per (src, dst) rank pair, all at once (a pair of Gloo ranks
    uses one connection). Returns {"flows": [{"src", "dst", "goodput_bits_per_s", "wire_bits_per_s", "mss",
    "seconds"}], "goodput_bits_per_s", "wire_bits_per_s": the sums over the flows}. Goodput is the payload the
    receiver counted after the warm-up.

    The shaper counts whole Ethernet frames: a full segment of `mss` payload bytes is MTU + 14 bytes on the
    link (IP and TCP headers with timestamps, the Ethernet header), so the goodput of a link shaped at R is
    R x mss / (MTU + 14), 95.6% of R at MTU 1500 -- the wire rate is what to compare with R. Several flows into
    one rank (fan-in) share that rank's shaped receive side: their sum is R, not R per sender."""
    me = os.path.abspath(__file__)
    receivers, senders = [], []

    def spawn(rank, args, **kw):
        return subprocess.Popen(net.exec_argv(rank, [sys.executable, me] + args), text=True,
                                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_harness, **kw)

    try:
        for k, (src, dst) in enumerate(flows):
            rx = spawn(dst, ["--_receive", net.addresses[dst], str(port + k), str(warmup_s)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            receivers.append(rx)
            if rx.stdout.readline().strip() != "ready":
                raise HarnessError(f"the receiver in rank {dst}'s namespace did not start: "
                                   f"{last_line(rx.stderr.read())}", code=1)
        for k, (src, dst) in enumerate(flows):
            senders.append(spawn(src, ["--_send", net.addresses[dst], str(port + k), str(seconds)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        results = []
        for k, (src, dst) in enumerate(flows):
            try:
                _, err = senders[k].communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise HarnessError(f"the sender in rank {src}'s namespace did not finish in {timeout:g} s",
                                   code=1) from None
            if senders[k].returncode != 0:
                raise HarnessError(f"the sender in rank {src}'s namespace failed: {last_line(err)}", code=1)
        for k, (src, dst) in enumerate(flows):
            try:
                out, err = receivers[k].communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise HarnessError(f"the receiver in rank {dst}'s namespace did not finish in {timeout:g} s",
                                   code=1) from None
            try:
                r = json.loads(last_line(out))
            except ValueError:
                raise HarnessError(f"the receiver in rank {dst}'s namespace printed no result: {last_line(err)}",
                                   code=1) from None
            if "error" in r:
                raise HarnessError(f"measure: {r['error']} (raise --seconds)", code=1)
            results.append({"src": src, "dst": dst, "goodput_bits_per_s": r["bits_per_s"],
                            "wire_bits_per_s": r["bits_per_s"] * (net.mtu + 14) / r["mss"], "mss": r["mss"],
                            "seconds": r["seconds"]})
    finally:
        for p in receivers + senders:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    return {"flows": results, "goodput_bits_per_s": sum(f["goodput_bits_per_s"] for f in results),
            "wire_bits_per_s": sum(f["wire_bits_per_s"] for f in results)}


# ---------------------------------------------------------------------------------------------------- for bench.py

def run_command(argv, ranks, rate, qdisc="tbf", timeout=1800.0, env=None, cwd=ROOT, log_dir=None,
                port=MASTER_PORT, base=DEFAULT_BASE):
    """Any command (a torchrun-style DDP script, e.g. scripts/reference/train_ddp.py) as `ranks` ranks in
    namespaces at `rate` ('1gbit', bits/s as a number, or None / 'unshaped'); returns the RankRun (exit codes,
    stdout, stderr, cause). Raises HarnessError on what cannot be set up; everything is torn down on return."""
    check_command(argv, cwd)
    with Network(ranks, rate, qdisc=qdisc, base=base) as net:
        return run_ranks(net, argv, timeout=timeout, port=port, env=env, cwd=cwd, log_dir=log_dir)


def summarize_results(results):
    """What bench.py's train_throughput reads from a results.json, for its first run: tokens/s from the median
    step time (start-up excluded), the median step and all-reduce times, the global tokens per step."""
    timing = results["runs"][0]["timing"]
    tokens_per_step = results["config"]["train"]["batch_size"] * results["config"]["data"]["seq_len"]
    return {"tokens_per_s": 1e3 * tokens_per_step / timing["step_ms_median"],
            "step_ms_median": timing["step_ms_median"],
            "allreduce_ms_median": timing.get("allreduce_ms_median", 0.0),
            "tokens_per_step": tokens_per_step,
            "world_size": results["environment"].get("world_size", 1),
            "backend": results["environment"].get("backend"),
            "peak_rss_mib": results["environment"].get("peak_rss_mib")}


def train_xsa(out, ranks, rate, overrides=(), config="configs/default.yaml", qdisc="tbf", timeout=1800.0,
              xsa_train=None, extra_args=("--quiet",), cwd=ROOT, log_dir=None, base=DEFAULT_BASE):
    """One xsa-train data-parallel run of `config` (+ --set overrides) as `ranks` ranks in namespaces at `rate`;
    returns summarize_results(results.json) with "results" (the parsed file) and "run" (the RankRun's dict).
    Raises HarnessError when a rank fails (its cause in the message) or results.json is missing."""
    xsa_train = xsa_train or os.path.join(ROOT, "build", "xsa-train")
    argv = [xsa_train, "--config", config, "--out", out] + list(extra_args)
    for kv in overrides:
        argv += ["--set", kv]
    run = run_command(argv, ranks, rate, qdisc=qdisc, timeout=timeout, cwd=cwd, log_dir=log_dir, base=base)
    if not run.ok:
        raise HarnessError(f"xsa-train over {ranks} ranks at {format_rate(as_rate(rate))}: {run.cause}", code=1)
    path = os.path.join(cwd, out) if not os.path.isabs(out) else out
    try:
        with open(os.path.join(path, "results.json")) as f:
            results = json.load(f)
    except (OSError, ValueError) as e:
        raise HarnessError(f"{path}/results.json: {e}", code=1) from None
    summary = summarize_results(results)
    summary.update({"results": results, "run": run.as_dict(), "rate_bits_per_s": as_rate(rate), "qdisc": qdisc})
    return summary


# ---------------------------------------------------------------------------------------------------- CLI

class OneLineParser(argparse.ArgumentParser):
    """argparse's errors as one line and exit 2, like every other refusal here."""

    def error(self, message):
        raise HarnessError(message)


def _private(argv):
    """(host, port, seconds) of the private modes `--_receive HOST PORT WARMUP_S` and `--_send HOST PORT SECONDS`
    (measure() starts them in the namespaces); anything else is a HarnessError (one line, exit 2)."""
    usage = f"{argv[0]} HOST PORT SECONDS (a mode measure() starts in a namespace)"
    if len(argv) != 4:
        raise HarnessError(f"{usage}: got {len(argv) - 1} arguments")
    host, port, seconds = argv[1:]
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        raise HarnessError(f"{argv[0]} HOST {host!r}: not an IPv4 address") from None
    if not re.fullmatch(r"\d{1,5}", port) or not 1 <= int(port) <= 65535:
        raise HarnessError(f"{argv[0]} PORT {port!r}: not a port (1..65535)")
    return host, int(port), finite(f"{argv[0]} SECONDS", seconds, low=0.0)


def finite(option, value, low=None, above=None, why=""):
    """`value` (a float, or its text) when it is a finite number >= low / > above, else a HarnessError naming
    `option` (and `why`): NaN passes no comparison and inf every upper one, so neither may reach a deadline."""
    try:
        number = float(value)
    except ValueError:
        raise HarnessError(f"{option} {value!r}: not a number") from None
    if not math.isfinite(number) or (low is not None and number < low) or (above is not None and number <= above):
        bound = f" >= {low:g}" if low is not None else f" > {above:g}" if above is not None else ""
        raise HarnessError(f"{option} {value}: expected a finite number{bound}{why}")
    return number


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["--_receive"], ["--_send"]):
        host, port, seconds = _private(argv)
        try:
            return (_receiver if argv[0] == "--_receive" else _sender)(host, port, seconds)
        except OSError as e:  # the address not in this namespace, the port taken, the peer gone
            raise HarnessError(f"{argv[0]} {host}:{port}: {e.strerror or e}", code=1) from None
    command = []
    if "--" in argv:
        at = argv.index("--")
        argv, command = argv[:at], argv[at + 1:]
    ap = OneLineParser(prog="shaped_link.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, help="ranks (namespaces), at least 2")
    ap.add_argument("--rate", help="every link's rate as tc writes it (100mbit, 1gbit, 10gbit) or 'unshaped'")
    ap.add_argument("--qdisc", default="tbf", choices=("tbf", "htb"))
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds before the ranks are stopped")
    ap.add_argument("--port", type=int, default=MASTER_PORT, help="MASTER_PORT")
    ap.add_argument("--logs", help="keep every rank's stdout and stderr in this folder")
    ap.add_argument("--prefix", default=DEFAULT_BASE, help="namespace names: PREFIX-<pid>-r<rank> (default xsa)")
    ap.add_argument("--measure", action="store_true", help="measure TCP throughput rank 0 -> rank 1, no command")
    ap.add_argument("--fan-in", action="store_true",
                    help="--measure: every other rank sends to rank 0 at once (their sum: rank 0's receive rate)")
    ap.add_argument("--seconds", type=float, default=4.0, help="--measure: how long to send")
    ap.add_argument("--json", action="store_true", help="--measure: one JSON line")
    ap.add_argument("--cleanup", action="store_true", help="delete stale namespaces of dead harnesses, and exit")
    args = ap.parse_args(argv)
    if args.cleanup:
        check_machine()
        for name in remove_stale(args.prefix, find_tool("ip")):
            print(f"{PROG}: deleted stale namespace {name}", file=sys.stderr)
        return 0
    if args.ranks is None:
        raise HarnessError("--ranks is required (at least 2)")
    if args.rate is None:
        raise HarnessError("--rate is required (100mbit, 1gbit, 10gbit, or unshaped)")
    rate = parse_rate(args.rate)
    if args.measure and command:
        raise HarnessError("--measure takes no command")
    if args.fan_in and (not args.measure or args.ranks < 3):
        raise HarnessError("--fan-in is a --measure of at least 3 ranks")
    if not args.measure:
        check_command(command)
    if not 1 <= args.port <= 65535:
        raise HarnessError(f"--port {args.port}: not a port")
    finite("--timeout", args.timeout, above=0)  # before any namespace is made
    finite("--seconds", args.seconds, above=1.5, why=" (1 s of it is warm-up)")
    with Network(args.ranks, rate, qdisc=args.qdisc, base=args.prefix) as net:
        print(f"{PROG}: {net.describe()}", file=sys.stderr)
        if args.measure:
            flows = [(i, 0) for i in range(1, args.ranks)] if args.fan_in else [(0, 1)]
            m = measure(net, seconds=args.seconds, flows=flows)
            if args.json:
                print(json.dumps(dict(m, ranks=args.ranks, rate_bits_per_s=rate, qdisc=args.qdisc if rate else None,
                                      burst_bytes=net.shape["burst"] if net.shape else None, mtu=net.mtu)))
            else:
                share = f", {100 * m['wire_bits_per_s'] / rate:.1f}% of the rate" if rate else ""
                who = f"ranks 1..{args.ranks - 1} -> rank 0 at once" if args.fan_in else "rank 0 -> rank 1"
                print(f"{who}: TCP goodput {format_rate(m['goodput_bits_per_s'])}, on the wire "
                      f"{format_rate(m['wire_bits_per_s'])} (MSS {m['flows'][0]['mss']}, MTU {net.mtu}{share})")
            return 0
        run = run_ranks(net, command, timeout=args.timeout, port=args.port, log_dir=args.logs)
    sys.stdout.write(run.stdout[0])  # rank 0's output, as if it had run here
    if run.timed_out:
        print(f"{PROG}: error: {run.cause}", file=sys.stderr)
        return TIMED_OUT
    if not run.ok:
        print(f"{PROG}: error: {run.cause}", file=sys.stderr)
        return RANK_FAILED
    print(f"{PROG}: {args.ranks} ranks finished in {run.seconds:.1f} s", file=sys.stderr)
    return 0


def cli():
    try:
        code = main()
    except HarnessError as e:
        print(f"{PROG}: error: {' '.join(str(e).split())}", file=sys.stderr)
        code = e.code
    except Interrupted as e:
        print(f"{PROG}: {e}; ranks stopped, namespaces deleted", file=sys.stderr)
        code = 128 + e.signum
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; ranks stopped, namespaces deleted", file=sys.stderr)
        code = 130
    sys.exit(code or 0)


if __name__ == "__main__":
    cli()
