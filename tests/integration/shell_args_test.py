#!/usr/bin/python3
"""Every shell script's command line: a bad argument is one line on stderr and exit 2, before any work starts, and
--help prints the script's usage and exits 0 (scripts/lib/cli.sh, docs/development.md "Scripts").

Each script runs from a copy of scripts/ in a temporary folder (the scripts cd to the folder above theirs), so
nothing it would do (install, build, download, prepare, commit) can reach this checkout; with no build and no data
there, a script that started work instead of refusing would fail loudly or take long. Each case must: exit 2, print
exactly one non-empty line on stderr that contains the expected words and no shell diagnostics ("line N:",
"unbound variable", "command not found"), print nothing on stdout, and finish within 20 s (the hang this test was
written for: a value-taking flag given last looped forever). Standard library only.
Usage: shell_args_test.py SOURCE_DIR
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = pathlib.Path(sys.argv[1]).resolve()
TIMEOUT_S = 20

# (script, arguments, words the one error line holds); environment additions in a fourth item.
BAD = [
    ("test.sh", ["--bogus"], "unknown argument '--bogus'"),
    ("build.sh", ["--bogus"], "unknown argument '--bogus'"),
    ("setup.sh", ["--bogus"], "unknown argument '--bogus'"),
    ("prepare_data.sh", ["--bogus"], "unknown argument '--bogus'"),
    ("prepare_data.sh", ["--full"], "TINYSTORIES_DIR=/nonexistent/xsa: no such folder",
     {"TINYSTORIES_DIR": "/nonexistent/xsa"}),
    ("notebook.sh", ["--bogus"], "unknown argument '--bogus'"),
    ("notebook.sh", ["--screenshot"], "--screenshot needs a value"),
    ("notebook.sh", ["--screenshot", "/proc/xsa/tour.png"], "folder /proc/xsa does not exist or is not writable"),
    ("debian13.sh", ["--root"], "--root needs a value"),
    ("debian13.sh", ["--run"], "--run needs a value"),
    ("debian13.sh", ["--bogus"], "unknown argument '--bogus'"),
    ("science/run_science.sh", ["--lanes"], "--lanes needs a value"),
    ("science/run_science.sh", ["--round"], "--round needs a value"),
    ("science/run_science.sh", ["--only"], "--only needs a value"),
    ("science/run_science.sh", ["--lanes", "3"], "--lanes '3', expected 1 or 2"),
    ("science/run_science.sh", ["--only", "no_such_sweep"], "no sweep file configs/science/no_such_sweep.yaml"),
    ("science/commit_science.sh", ["--from"], "--from needs a value"),
    ("science/findings_figures.sh", ["--bogus"], "unknown argument '--bogus'"),
    ("dev/fuzz.sh", ["--seconds"], "--seconds needs a value"),
    ("dev/fuzz.sh", ["--seconds", "0"], "--seconds '0': expected a whole number from 1"),
    ("dev/fuzz.sh", ["--minutes", "abc"], "--minutes 'abc': expected a whole number from 1"),
    ("dev/fuzz.sh", ["--minutes", "08"], "--minutes '08': expected a whole number from 1"),  # bash: octal
    ("dev/fuzz.sh", ["--seconds", "1234567890"], "--seconds '1234567890': expected a whole number from 1"),
    ("dev/fuzz.sh", ["no_such_target"], "no target 'no_such_target'"),
    ("dev/build_time.sh", ["--generator"], "--generator needs a value"),
    ("dev/build_time.sh", ["--bogus"], "unknown option '--bogus'"),
    ("dev/sanitize.sh", ["--bogus"], "unknown argument '--bogus'"),
    ("dev/sanitize_build.sh", [], "no target given"),
    ("dev/sanitize_build.sh", ["--bogus"], "unknown option '--bogus'"),
    ("perf/profile_step.sh", ["fused", "abc"], "T 'abc': expected a whole number from 1"),
    ("perf/profile_step.sh", ["explicit", "128", "0"], "batch '0': expected a whole number from 1"),
    ("perf/profile_step.sh", ["flash"], "implementation 'flash', expected fused or explicit"),
    ("corpora/build_corpus.sh", ["kjv", "--vocab-size", "0"], "--vocab-size '0': expected a whole number from 260"),
]


def vocab_limits():
    """kMinVocabSize and kMaxVocabSize of src/xsa/tokenizer/tokenizer.h: build_corpus.sh checks xsa-prepare's range
    before its download, so its copy of the bounds is checked against these (sums of integers in the header)."""
    text = (SOURCE / "src" / "xsa" / "tokenizer" / "tokenizer.h").read_text(encoding="utf-8")
    value = {}
    for name in ("kMinVocabSize", "kMaxVocabSize"):
        match = re.search(name + r"\s*=\s*([0-9+ ]+);", text)
        if not match:
            sys.exit(f"shell_args: {name} not found in src/xsa/tokenizer/tokenizer.h")
        value[name] = sum(int(term) for term in match.group(1).split("+"))
    return value["kMinVocabSize"], value["kMaxVocabSize"]


LOW, HIGH = vocab_limits()
BAD += [("corpora/build_corpus.sh", ["kjv", "--vocab-size", str(n)], f"expected a whole number from {LOW} to {HIGH}")
        for n in (LOW - 1, HIGH + 1)]
# In range, the vocabulary passes the script's check (the copy then stops on the missing build, another line).
IN_RANGE = [("corpora/build_corpus.sh", ["kjv", "--vocab-size", str(n)]) for n in (LOW, HIGH)]
# (script, the line its --help starts with): usage only, no work.
HELP = [
    ("test.sh", "The test command"),
    ("build.sh", "Configures and builds into build/"),
    ("demo.sh", "The main job"),
    ("setup.sh", "Installs every Debian package"),
    ("prepare_data.sh", "Prepares the demo's data"),
    ("notebook.sh", "Executes notebooks/tour.ipynb"),
    ("debian13.sh", "The test command on Debian 13"),
    ("science/run_science.sh", "Runs the science sweeps"),
    ("science/commit_science.sh", "Commits the science results"),
    ("science/findings_figures.sh", "Redraws the figures"),
    ("dev/fuzz.sh", None),
    ("dev/build_time.sh", "Times a fresh build"),
    ("dev/sanitize.sh", "Builds xsa with AddressSanitizer"),
    ("dev/sanitize_build.sh", "Configures and builds the sanitizer build"),
    ("perf/profile_step.sh", "Where a training step's time goes"),
]
SHELL_NOISE = ("line ", "unbound variable", "command not found", "syntax error")

failures = []
with tempfile.TemporaryDirectory() as tmp:
    root = pathlib.Path(tmp) / "checkout"
    shutil.copytree(SOURCE / "scripts", root / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(SOURCE / "configs", root / "configs")
    shutil.copytree(SOURCE / "fuzz" / "corpus", root / "fuzz" / "corpus")
    env = {k: v for k, v in os.environ.items() if k != "TINYSTORIES_DIR"}

    def run(script, args, extra_env=None):
        try:
            return subprocess.run(["bash", str(root / "scripts" / script)] + args, cwd=tmp, capture_output=True,
                                  text=True, timeout=TIMEOUT_S, env={**env, **(extra_env or {})})
        except subprocess.TimeoutExpired:
            return None

    for case in BAD:
        script, args, words = case[:3]
        p = run(script, args, case[3] if len(case) > 3 else None)
        name = f"{script} {' '.join(args)}".strip()
        if p is None:
            failures.append(f"{name}: still running after {TIMEOUT_S} s")
            continue
        lines = p.stderr.splitlines()
        if p.returncode != 2 or len(lines) != 1 or words not in lines[0] or p.stdout \
                or any(noise in lines[0] for noise in SHELL_NOISE):
            failures.append(f"{name}: exit {p.returncode}, stderr {p.stderr!r}, stdout {p.stdout[:200]!r}; "
                            f"want exit 2 and one line with {words!r}")
    for script, args in IN_RANGE:
        p = run(script, args)
        if p is None or "--vocab-size" in p.stderr:
            failures.append(f"{script} {' '.join(args)}: refused a size xsa-prepare takes: "
                            f"{'timeout' if p is None else p.stderr!r}")
    for script, first in HELP:
        p = run(script, ["--help"])
        if p is None or p.returncode != 0 or not p.stdout.strip() or p.stderr \
                or (first is not None and not p.stdout.startswith(first)):
            failures.append(f"{script} --help: {'timeout' if p is None else (p.returncode, p.stdout[:80], p.stderr)}")
    leftovers = sorted(str(path.relative_to(root)) for path in root.iterdir() if path.name not in
                       ("scripts", "configs", "fuzz"))
    if leftovers:
        failures.append(f"the scripts wrote {leftovers} into the checkout")

for f in failures:
    print("FAIL:", f)
print(f"shell_args: {len(BAD) + len(IN_RANGE) + len(HELP)} cases, {len(failures)} failed")
sys.exit(1 if failures else 0)
