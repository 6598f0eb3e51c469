#!/usr/bin/env bash
# Scale-out test (docs/guide.md "Scale-out"): a private single-node Slurm cluster on loopback (munge + slurmctld +
# slurmd as root, no systemd, every file in a private folder), a small sweep as a 2-task job array compared
# bit for bit with the same sweep run locally, then a preemption trial: scancel a task mid-point, resubmit,
# and check that the sweep completes with nothing lost, duplicated or corrupt; last, one run as a 2-rank job
# (xsa-train --submit slurm) against the same run as 2 local ranks (bit for bit) and as one process (1e-5).
#
# usage: slurm_test.sh SOURCE_DIR BUILD_DIR DATA_DIR
# Exit 77 (CTest skip) without Slurm packages or root -- except with CI=true, where Slurm is installed
# through scripts/setup.sh --slurm and anything missing is a failure. The data is the generated corpus of
# the small_data fixture (train.cmake), so missing data is always a failure.
# Stops only what it started, by pid (jobs first: slurmstepd outlives slurmd), also on failure.
set -euo pipefail
SRC=$(cd "$1" && pwd)
BUILD=$(cd "$2" && pwd)
DATA=$3
export PATH="$PATH:/usr/sbin:/sbin"
SKIP=77
say() { echo "slurm-test: $*"; }
fail() { echo "slurm-test: FAILED: $*" >&2; exit 1; }
skip_or_fail() {
  if [ "${CI:-}" = true ]; then fail "$* (CI=true: this test must run)"; fi
  echo "slurm-test: SKIPPED: $*"
  exit $SKIP
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

DAEMONS=(munged slurmctld slurmd sbatch squeue scancel scontrol sinfo)
slurm_missing() {
  local c
  for c in "${DAEMONS[@]}"; do command -v "$c" >/dev/null 2>&1 || { echo "$c"; return 0; }; done
  return 1
}
[ "$(id -u)" -eq 0 ] || skip_or_fail "needs root (the test cluster runs as SlurmUser=root)"
if missing=$(slurm_missing); then
  if [ "${CI:-}" = true ]; then
    say "Slurm not installed ($missing); CI=true: installing through scripts/setup.sh --slurm"
    t=$(now)
    bash "$SRC/scripts/setup.sh" --slurm
    say "TIMING install: $(since "$t") s"
    missing=$(slurm_missing) && fail "still missing after setup: $missing"
  else
    skip_or_fail "Slurm is not installed ('$missing' not found); scripts/setup.sh --slurm installs munge, slurmctld, slurmd and slurm-client"
  fi
fi
if [ ! -f "$DATA/meta.json" ]; then
  fail "no prepared test data at $DATA (CTest fixture train.prepare_small_data)"
fi
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

WORK="$BUILD/integration/slurm"          # sweeps and logs, kept for a look after a failure
rm -rf "$WORK"
mkdir -p "$WORK"
RUN=$(mktemp -d /tmp/xsa-slurm.XXXXXX)   # daemon state: short paths (socket names are limited to 107 bytes)
chmod 0755 "$RUN"
MUNGED_PID="" CTLD_PID="" SLURMD_PID=""

# Processes that carry our SLURM_CONF (job scripts, sweeps, trainers, slurmstepd), except this script.
our_processes() {
  local p
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" = $$ ] && continue
    [ "$p" = "$BASHPID" ] && continue
    { tr '\0' '\n' < "/proc/$p/environ"; } 2>/dev/null | grep -qx "SLURM_CONF=$RUN/slurm.conf" && echo "$p"
  done
  return 0
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  if [ -n "$CTLD_PID" ]; then
    scancel --full --signal=KILL --user=root >/dev/null 2>&1
    scancel --user=root >/dev/null 2>&1
    for _ in $(seq 100); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  for pid in $SLURMD_PID $CTLD_PID $MUNGED_PID; do kill -TERM "$pid" 2>/dev/null; done
  for pid in $SLURMD_PID $CTLD_PID $MUNGED_PID; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  # Anything still carrying our SLURM_CONF was started by this test: report it, end it by pid, fail.
  left=$(our_processes)
  if [ -n "$left" ]; then
    echo "slurm-test: FAILED: processes left behind: $(echo $left)" >&2
    for pid in $left; do ps -o pid=,args= -p "$pid" >&2; kill -KILL "$pid" 2>/dev/null; done
    [ $rc -eq 0 ] && rc=1
  fi
  if [ $rc -ne 0 ] && [ $rc -ne $SKIP ]; then
    for f in "$RUN"/log/*.log; do echo "---- $f (tail)"; tail -n 15 "$f"; done
    for f in "$WORK"/*/slurm/*.out; do [ -f "$f" ] && { echo "---- $f (tail)"; tail -n 8 "$f"; }; done
  fi
  rm -rf "$RUN"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- cluster ---------------------------------------------------------------------------------------
HOST=$(hostname -s)
read -r CTLD_PORT SLURMD_PORT < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
MEM_MB=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
mkdir -p "$RUN/munge" "$RUN/state" "$RUN/spool" "$RUN/log"
chmod 0755 "$RUN/munge"
dd if=/dev/urandom of="$RUN/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$RUN/munge/munge.key"
cat > "$RUN/slurm.conf" <<EOF
ClusterName=xsatest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$RUN/munge/munge.socket.2
StateSaveLocation=$RUN/state
SlurmdSpoolDir=$RUN/spool
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$RUN/log/slurmctld.log
SlurmdLogFile=$RUN/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=30
SchedulerParameters=sched_interval=1
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$MEM_MB State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$RUN/slurm.conf"
t_cluster=$(now)
munged --foreground --socket="$RUN/munge/munge.socket.2" --key-file="$RUN/munge/munge.key" \
  --pid-file="$RUN/munge/munged.pid" --log-file="$RUN/log/munged.log" --seed-file="$RUN/munge/munged.seed" \
  >"$RUN/log/munged.stdout" 2>&1 &
MUNGED_PID=$!
for _ in $(seq 50); do [ -S "$RUN/munge/munge.socket.2" ] && break; sleep 0.1; done
slurmctld -D -c -f "$SLURM_CONF" >"$RUN/log/slurmctld.stdout" 2>&1 &
CTLD_PID=$!
slurmd -D -f "$SLURM_CONF" -N "$HOST" >"$RUN/log/slurmd.stdout" 2>&1 &
SLURMD_PID=$!
state=""
for _ in $(seq 300); do
  state=$(sinfo -h -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.1
done
[ "$state" = idle ] || fail "the node did not become idle in 30 s (state '$state')"
say "TIMING cluster start (munged + slurmctld + slurmd to an idle node): $(since "$t_cluster") s"

# ---- the sweep ---------------------------------------------------------------------------------------
# 4 points (λ 0.5, 1 x seeds 1, 2), each a paired SA/XSA run of a tiny model; checkpoints every 50 steps.
cat > "$WORK/base.yaml" <<EOF
name: slurm_test
data: {dir: $DATA, seq_len: 32}
model: {n_layer: 2, d_model: 32, n_head: 2, d_head: 16}
train: {steps: 150, batch_size: 8, warmup_steps: 5, log_interval: 5, checkpoint_interval: 50}
eval: {interval: 50, batches: 2}
metrics: {bias_interval: 50, bias_batches: 1}
sample: {count: 1, tokens: 8}
runtime: {threads: 1, workers: 1}
EOF
cat > "$WORK/sweep.yaml" <<EOF
base: base.yaml
name: slurm_test
grid:
  attention.lambda: [0.5, 1]
  seed: [1, 2]
EOF
SWEEP="$BUILD/xsa-sweep"
POINTS="lambda=0.5_seed=1 lambda=0.5_seed=2 lambda=1_seed=1 lambda=1_seed=2"

wait_for_jobs() {  # job ids...; squeue until none is left (sacct needs accounting)
  local deadline=$(( $(date +%s) + 900 ))
  while [ -n "$(squeue -h -j "$(IFS=,; echo "$*")" 2>/dev/null)" ]; do
    [ "$(date +%s)" -lt $deadline ] || fail "jobs $* still in squeue after 900 s"
    sleep 0.5
  done
}
submit() {  # out dir -> job id
  local out
  out=$("$SWEEP" --config "$WORK/sweep.yaml" --out "$1" --submit slurm --tasks 2 --workers 1) || fail "submit: $out"
  echo "$out" | sed -n 's/^job_id=//p'
}
compare_with_local() {  # sweep dir: every point bit-identical to the local sweep
  "$PY" - "$WORK/local" "$1" $POINTS <<'EOF'
import json, sys
local, other, points = sys.argv[1], sys.argv[2], sys.argv[3:]
def numbers(path):
    r = json.load(open(path))
    return [{k: run[k] for k in ("variant", "init_checksum", "final", "eval", "train_loss", "bias", "samples")}
            for run in r["runs"]], r["comparisons"]
bad = [p for p in points if numbers(f"{local}/{p}/results.json") != numbers(f"{other}/{p}/results.json")]
if bad:
    sys.exit("differs from the local sweep: " + ", ".join(bad))
r = json.load(open(f"{other}/{points[0]}/results.json"))
print("bit-identical to the local sweep: %d points, e.g. %s final val loss %r / %r" % (
    len(points), points[0], r["runs"][0]["final"]["val_loss"], r["runs"][1]["final"]["val_loss"]))
EOF
}

# Local reference: 2 points at once, 1 thread each (the array below: 2 tasks x 1 CPU).
t=$(now)
"$SWEEP" --config "$WORK/sweep.yaml" --out "$WORK/local" --workers 2 > "$WORK/local.txt" 2>&1 \
  || fail "local sweep: $(tail -n 3 "$WORK/local.txt")"
LOCAL_S=$(since "$t")
say "TIMING local sweep (4 points, --workers 2): $LOCAL_S s"

# The same sweep as a 2-task job array.
t=$(now)
JOB=$(submit "$WORK/array")
wait_for_jobs "$JOB"
ARRAY_S=$(since "$t")
say "TIMING array sweep (4 points, 2 tasks x 1 CPU, submit to last task gone): $ARRAY_S s"
for k in 0 1; do
  grep -q "^summary: " "$WORK/array/slurm/${JOB}_$k.out" || fail "task $k did not finish: $(tail -n 3 "$WORK/array/slurm/${JOB}_$k.out")"
done
"$SWEEP" --status "$WORK/array" > "$WORK/array-status.txt" || fail "--status after the array: $(cat "$WORK/array-status.txt")"
for p in $POINTS; do
  grep -q "Slurm job ${JOB}_" <(grep "^$p " "$WORK/array-status.txt") || fail "$p was not run by job $JOB"
done
compare_with_local "$WORK/array" || fail "array results"

# ---- preemption trial ------------------------------------------------------------------------------
# Task 1 runs points 1 and 3 (lambda=0.5_seed=2, lambda=1_seed=2). Cancel it in the middle of point 1.
P="$WORK/preempt"
t=$(now)
JOB1=$(submit "$P")
victim="lambda=0.5_seed=2"
deadline=$(( $(date +%s) + 600 ))
until [ -f "$P/$victim/log.jsonl" ] && grep -q '"run":"sa","step":20}' "$P/$victim/log.jsonl"; do
  [ "$(date +%s)" -lt $deadline ] || fail "$victim did not reach step 20"
  [ -f "$P/$victim/results.json" ] && fail "$victim finished before it could be cancelled"
  sleep 0.05
done
t_cancel=$(now)
scancel "${JOB1}_1"
wait_for_jobs "${JOB1}_1"
say "TIMING scancel of task 1 to its end (trainer checkpoint + exit): $(since "$t_cancel") s"
[ -f "$P/$victim/results.json" ] && fail "$victim finished although cancelled"
grep -q '"status": "interrupted"' "$P/$victim/status.json" || fail "$victim not recorded as interrupted: $(cat "$P/$victim/status.json")"
[ -e "$P/$victim/claim.lock" ] && fail "$victim: claim not released by the cancelled task"
[ -d "$P/$victim/checkpoints" ] || fail "$victim: no checkpoints after SIGTERM"
stopped_at=$(grep -o '"run":"sa","step":[0-9]*' "$P/$victim/log.jsonl" | tail -n 1 | sed 's/.*://')
grep -q "interrupted $victim" "$P/slurm/${JOB1}_1.out" || fail "task 1 log does not report the interruption"
"$SWEEP" --status "$P" > "$WORK/preempt-status-1.txt" && fail "--status says complete after the cancel"
say "preemption: scancel at sa step ~$stopped_at of 150; $victim recorded as interrupted, checkpointed"
# Resubmit the whole sweep while task 0 of the first array may still run: points it holds or finished
# are skipped by the new tasks, the interrupted one is resumed.
JOB2=$(submit "$P")
wait_for_jobs "$JOB1" "$JOB2"
say "TIMING preemption trial (first submit to everything done): $(since "$t") s"
"$SWEEP" --status "$P" > "$WORK/preempt-status.txt" || fail "--status after resubmission: $(cat "$WORK/preempt-status.txt")"
grep -q "attempt 2" <(grep "^$victim " "$WORK/preempt-status.txt") || fail "$victim was not resumed in a second attempt"
grep -q "started $victim (resuming from its checkpoints)" "$P"/slurm/"${JOB2}"_*.out || fail "$victim was not resumed from its checkpoints"
compare_with_local "$P" || fail "preempted sweep results"
# Nothing lost, duplicated or corrupt: every point done exactly once, every logged step exactly once, no
# claim or temporary file left.
for p in $POINTS; do
  n=$(cat "$P"/slurm/*.out | grep -c "\] done $p in" || true)
  [ "$n" -eq 1 ] || fail "$p completed $n times"
  "$PY" - "$P/$p/log.jsonl" <<'EOF' || fail "$p: log.jsonl"
import json, sys
steps = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    steps.setdefault(j["run"], []).append(j["step"])
want = list(range(5, 151, 5))
for run, s in steps.items():
    if s != want:
        sys.exit(f"{run}: steps {s} != {want}")
if len(steps) != 2:
    sys.exit(f"runs {sorted(steps)}")
EOF
done
left=$(find "$P" \( -name 'claim.lock*' -o -name '.*tmp*' -o -name '*.tmp' \) | head -n 3)
[ -z "$left" ] || fail "left behind: $left"
say "preemption trial: the sweep completed, nothing lost, duplicated or corrupt"

# ---- one run as data-parallel ranks (xsa-train --submit slurm) ----------------------------------------
# 2 ranks under srun on the one node against the same run as 2 local ranks (xsa-train --ranks 2): bit for bit;
# and against one local process: the same training up to float summation order (docs/guide.md "Scale-out").
t=$(now)
"$BUILD/xsa-train" --quiet --config "$WORK/base.yaml" --out "$WORK/dp_local" || fail "local run for the ranks"
"$BUILD/xsa-train" --quiet --config "$WORK/base.yaml" --out "$WORK/dp_ranks" --ranks 2 || fail "2 local ranks"
out=$("$BUILD/xsa-train" --config "$WORK/base.yaml" --out "$WORK/dp_slurm" --submit slurm --nodes 1 \
  --tasks-per-node 2) || fail "xsa-train --submit slurm: $out"
JOB_DP=$(echo "$out" | sed -n 's/^job_id=//p')
wait_for_jobs "$JOB_DP"
[ -f "$WORK/dp_slurm/results.json" ] || fail "the 2-rank job wrote no results.json: $(cat "$WORK"/dp_slurm/slurm/*.out)"
"$PY" - "$WORK/dp_local/results.json" "$WORK/dp_slurm/results.json" <<'EOF' || fail "2 ranks under srun vs 1 process"
import json, sys
one, two = (json.load(open(p)) for p in sys.argv[1:3])
assert two["environment"]["world_size"] == 2 and two["environment"]["backend"] == "gloo", two["environment"]
worst = 0.0
for a, b in zip(one["runs"], two["runs"]):
    pairs = [(x["loss"], y["loss"]) for x, y in zip(a["train_loss"], b["train_loss"])]
    pairs.append((a["final"]["val_loss"], b["final"]["val_loss"]))
    worst = max([worst] + [abs(x - y) / abs(x) for x, y in pairs])
if worst > 1e-5:
    sys.exit(f"largest relative difference {worst:.3g} > 1e-5")
print(f"2 ranks under srun: largest relative difference from 1 process {worst:.3g}")
EOF
"$PY" - "$WORK/dp_ranks/results.json" "$WORK/dp_slurm/results.json" <<'EOF' || fail "2 ranks under srun vs 2 local ranks"
import json, sys
def numbers(r):  # what the training computed: not where, when or how fast (as e2e_util.h's deterministic_numbers)
    r.pop("environment"); r["config"].pop("runtime")
    for run in r["runs"]:
        run.pop("timing")
    return r
local, srun = (numbers(json.load(open(p))) for p in sys.argv[1:3])
if local != srun:
    sys.exit(f"the srun job's results differ from 2 local ranks' in {[k for k in local if local[k] != srun.get(k)]}")
print(f"2 ranks under srun: bit-identical to 2 local ranks ({len(srun['runs'])} runs, final val loss "
      f"{srun['runs'][0]['final']['val_loss']!r})")
EOF
say "TIMING data-parallel job (2 ranks) and its local run: $(since "$t") s"
say "ok"
