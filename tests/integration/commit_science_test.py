"""scripts/science/commit_science.sh against a made-up science checkout: what it copies and commits.

A sweep grown by an lr after its seeds were done keeps the new lr's points back until every seed has it (a
partial lr would cut the lr and setup selections' paired seeds); a sweep that runs seed by seed, with no cell
complete yet, commits its first seeds; a folder without a sweep summary commits every finished point. A second
process's summary goes in only when it lists a point the sweep's first summary does not.
Usage: commit_science_test.py SOURCE_DIR XSA_SWEEP
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

source, sweep_exe = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(cmd, cwd, code=0):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    check(p.returncode == code, f"{cmd}: exit {p.returncode}, expected {code}: {p.stderr.strip()}")
    return p


def point_id(seed, lr):
    return f"seed={seed}_lr={lr}"


def make_sweep(root, name, seeds, lrs, file="summary.json"):
    folder = root / "results" / name
    folder.mkdir(parents=True, exist_ok=True)
    points = [{"run_id": point_id(s, lr), "index": i, "status": "pending"}
              for i, (s, lr) in enumerate((s, lr) for s in seeds for lr in lrs)]
    (folder / file).write_text(json.dumps({"schema": "xsa.sweep/1", "name": name, "points": points}, indent=2))


def finish(root, name, seed, lr):
    d = root / "results" / name / (point_id(seed, lr) if seed else lr)
    d.mkdir(parents=True)
    (d / "results.json").write_text(json.dumps({"final": {}}))
    (d / "log.jsonl").write_text("{}\n")
    (d / "checkpoint.pt").write_text("never committed")


def committed(repo):
    out = run(["git", "ls-files", "results"], repo).stdout.split()
    return {p[len("results/"):-len("/results.json")] for p in out if p.endswith("/results.json")}


with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    repo, science = tmp / "main", tmp / "science"
    (repo / "scripts" / "science").mkdir(parents=True)
    for f in ("commit_science.sh", "cells.sh"):
        shutil.copy(source / "scripts" / "science" / f, repo / "scripts" / "science" / f)
    (repo / "scripts" / "lib").mkdir()
    shutil.copy(source / "scripts" / "lib" / "cli.sh", repo / "scripts" / "lib" / "cli.sh")
    (repo / "build").mkdir()
    (repo / "build" / "xsa-sweep").symlink_to(sweep_exe)
    run(["git", "init", "-q"], repo)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start"], repo)
    (science / "results").mkdir(parents=True)
    (science / "results" / "science_runs.jsonl").write_text("{}\n")

    # grown: lrs 1e-2 and 3e-2 done for both seeds, then lr 3e-3 added; seed 1 has it, seed 2 not yet.
    make_sweep(science, "grown", [1, 2], ["0.003", "0.01", "0.03"])
    for s in (1, 2):
        for lr in ("0.01", "0.03"):
            finish(science, "grown", s, lr)
    finish(science, "grown", 1, "0.003")
    # seedwise: seed 1 done at both lrs, seed 2 at one: no cell complete yet, so its first seed's points show.
    make_sweep(science, "seedwise", [1, 2], ["0.01", "0.03"])
    for lr in ("0.01", "0.03"):
        finish(science, "seedwise", 1, lr)
    # lanes: two processes ran it; the first one's summary predates lr 3e-2, a second live one's (summary.2.json)
    # lists it, and a gone process's (an older build's name) lists nothing new.
    make_sweep(science, "lanes", [1], ["0.01"])
    make_sweep(science, "lanes", [1], ["0.01", "0.03"], file="summary.2.json")
    make_sweep(science, "lanes", [1], ["0.01"], file="summary.vm-9.json")
    for lr in ("0.01", "0.03"):
        finish(science, "lanes", 1, lr)
    # sharded: a Slurm array's shard 0, and a second process on that shard that lists nothing new.
    make_sweep(science, "sharded", [1], ["0.01"], file="summary.shard-0-of-2.json")
    make_sweep(science, "sharded", [1], ["0.01"], file="summary.shard-0-of-2.2.json")
    finish(science, "sharded", 1, "0.01")
    # plain: no sweep summary (a single run's folder): every finished point.
    finish(science, "plain", None, "run")

    cmd = ["env", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
           "bash", "scripts/science/commit_science.sh", "--from", str(science)]
    p = run(cmd, repo)
    want = {f"grown/{point_id(s, lr)}" for s in (1, 2) for lr in ("0.01", "0.03")}
    want |= {f"seedwise/{point_id(1, lr)}" for lr in ("0.01", "0.03")} | {"plain/run"}
    want |= {f"lanes/{point_id(1, lr)}" for lr in ("0.01", "0.03")} | {f"sharded/{point_id(1, '0.01')}"}
    check(committed(repo) == want, f"first commit: {sorted(committed(repo))}, expected {sorted(want)}")
    check("grown: 1 finished point(s) wait" in p.stdout, f"the waiting point is not said: {p.stdout!r}")
    check(not (repo / "results" / "grown" / point_id(1, "0.003")).exists(), "a waiting point was copied")
    tracked = run(["git", "ls-files"], repo).stdout
    check("checkpoint.pt" not in tracked, "a checkpoint was committed")
    check("results/grown/summary.json" in tracked and "results/science_runs.jsonl" in tracked,
          "the summaries and science_runs.jsonl were not committed")
    check("results/lanes/summary.json" in tracked and "results/lanes/summary.2.json" in tracked,
          "a second process's summary that lists a new point was not committed")
    check("summary.vm-9.json" not in tracked, "a gone process's summary that lists nothing new was committed")
    check("results/sharded/summary.shard-0-of-2.json" in tracked
          and "results/sharded/summary.shard-0-of-2.2.json" not in tracked,
          "a shard's second summary was not weighed against that shard's first one")
    check(run(["git", "status", "--porcelain", "results"], repo).stdout == "", "results/ left uncommitted changes")
    check("10 finished points" in run(["git", "log", "-1", "--format=%s"], repo).stdout, "the count is not 10")

    # seed 2 finishes lr 3e-3 (grown's new cell is complete) and seedwise's 1e-2 (its first complete cell): both go
    # in; seedwise's seed 1 at 3e-2, committed while no cell was complete, stays.
    finish(science, "grown", 2, "0.003")
    finish(science, "seedwise", 2, "0.01")
    p = run(cmd, repo)
    want |= {f"grown/{point_id(s, '0.003')}" for s in (1, 2)} | {f"seedwise/{point_id(2, '0.01')}"}
    check(committed(repo) == want, f"second commit: {sorted(committed(repo))}, expected {sorted(want)}")

    # nothing new: says so, exit 0, no commit; a bad argument is one line and exit 2.
    before = run(["git", "rev-parse", "HEAD"], repo).stdout
    p = run(cmd, repo)
    check("nothing new" in p.stdout and run(["git", "rev-parse", "HEAD"], repo).stdout == before, "a rerun committed")
    p = run(["bash", "scripts/science/commit_science.sh", "--frm"], repo, code=2)
    check(p.stderr.count("\n") == 1 and "unknown argument '--frm'" in p.stderr, f"bad argument: {p.stderr!r}")
    p = run(["bash", "scripts/science/commit_science.sh", "--from", str(tmp / "nowhere")], repo, code=2)
    check("no such folder" in p.stderr and p.stderr.count("\n") == 1, f"missing folder: {p.stderr!r}")
    p = run(["bash", "scripts/science/commit_science.sh", "--from"], repo, code=2)
    check(p.stderr == "commit_science: error: --from needs a value (see --help)\n", f"--from last: {p.stderr!r}")

for f in failures:
    print("FAIL:", f)
print("commit_science:", "FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
