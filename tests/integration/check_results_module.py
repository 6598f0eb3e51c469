#!/usr/bin/python3
"""scripts/xsapy/results.py (the one way Python reads xsa's outputs) against expectations worked out apart from it,
on the committed report fixtures (tests/fixtures/report, written by make_fixtures.py):
  - discovery: the number of results.json files per fixture folder, as make_fixtures.py writes them (single 1,
    sweep 6 = 2 variants x 3 seeds, budget 4, lengths 10), the same paths pathlib's rglob finds, sorted; a file
    of another name given directly is read; a folder named results.json is not a file; a file given twice
    (directly and through its folder) counts once; a link to a folder is not followed
  - values: a run's final val loss and the seq_len read with json by hand (single/tiny: xsa 2.45 at T=128)
  - bias metrics: the keys present in the fixture's layer records (every key but "layer" and
    "lambda_per_head"), equal to those of xsa-inspect's bias rows (base_<key> with base_<key>_ci)
  - inspect(): the same sections and rows as running `xsa-inspect --format json` here, with --section and
    --lambda, and the whole document without --section
  - read_log: log.jsonl parsed by hand; a line being written (cut short) skipped; a missing log empty
  - one-line errors: a wrong-schema file through xsa-inspect (its exit code 2, the file named), a results.json
    missing a key, a missing path, a FIFO log.jsonl, a folder as the executable
  - standard library only: importing it loads no matplotlib, numpy or torch
Usage: check_results_module.py XSA_INSPECT FIXTURES (tests/fixtures/report)
Prints one line per failed check and exits 1, or one summary line and exits 0.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
from xsapy import results  # noqa: E402  (the module under test)
from xsapy.user_input import InputError  # noqa: E402

# make_fixtures.py: how many results.json each folder holds
EXPECTED_FILES = {"single": 1, "sweep": 6, "budget": 4, "lengths": 10}
BIAS_KEYS = {"cos_y_v", "cos_z_v", "attn_diag", "value_cos"}  # docs/guide.md "results.json": a layer's metrics


def run_inspect(exe, args):
    """xsa-inspect run here, its JSON parsed, without the schema tag."""
    doc = json.loads(subprocess.run([exe, *args, "--format", "json"], capture_output=True, text=True,
                                    check=True).stdout)
    doc.pop("schema")
    return doc


def main():
    exe, fixtures = os.path.abspath(sys.argv[1]), pathlib.Path(sys.argv[2]).resolve()
    failures, checks = [], [0]

    def check(ok, what):
        checks[0] += 1
        if not ok:
            failures.append(what)

    def one_line_error(call, must_name, code=None):
        """call() raises an InputError whose text is one line naming `must_name` (and with exit code `code`)."""
        try:
            call()
        except InputError as e:
            text = str(e)
            check("\n" not in text and must_name in text, f"error not one line naming {must_name}: {text!r}")
            if code is not None:
                check(getattr(e, "code", None) == code, f"error code {getattr(e, 'code', None)}, expected {code}")
            return text
        check(False, f"no error where one naming {must_name} was expected")
        return ""

    # ---- discovery -----------------------------------------------------------------------------------------
    for folder, n in EXPECTED_FILES.items():
        found = results.results_files(str(fixtures / folder))
        check(len(found) == n, f"{folder}: {len(found)} results.json found, make_fixtures.py writes {n}")
        by_hand = sorted(str(p) for p in (fixtures / folder).rglob("results.json"))
        check(found == by_hand, f"{folder}: {found} != rglob's {by_hand}")
    every = [str(fixtures / f) for f in EXPECTED_FILES]
    exps = results.experiments(every)
    check(len(exps) == sum(EXPECTED_FILES.values()), f"{len(exps)} experiments, expected {sum(EXPECTED_FILES.values())}")

    tiny = fixtures / "single" / "tiny" / "results.json"
    with tempfile.TemporaryDirectory(prefix="xsa-results-module.") as tmp:
        tmp = pathlib.Path(tmp)
        other = tmp / "renamed.json"
        shutil.copy(tiny, other)
        check(results.results_files(str(other)) == [str(other)], "a file of another name given directly is not read")
        (tmp / "point" / "results.json").mkdir(parents=True)  # a folder of that name: not a results file
        shutil.copy(tiny, tmp / "point" / "real.json")
        one_line_error(lambda: results.results_files(str(tmp / "point")), "no results.json found")
        shutil.copytree(tiny.parent, tmp / "sweep" / "a")
        os.symlink(tmp / "sweep", tmp / "link_to_sweep")
        twice = results.results_files([str(tmp / "sweep"), str(tmp / "sweep" / "a" / "results.json")])
        check(twice == [str(tmp / "sweep" / "a" / "results.json")], f"a file given twice: {twice}")
        walked = results.results_files(str(tmp))  # the link to sweep/ is not followed: one file, not two
        check(walked == [str(tmp / "sweep" / "a" / "results.json")], f"folder links followed: {walked}")
        one_line_error(lambda: results.results_files(str(tmp / "nope")), str(tmp / "nope"))

        # ---- read_log ----------------------------------------------------------------------------------------
        log = tiny.parent / "log.jsonl"
        by_hand = {}
        for line in log.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            by_hand.setdefault(rec["run"], []).append((rec["step"], rec["loss"]))
        check(results.read_log(log) == by_hand, "read_log differs from log.jsonl read by hand")
        cut = tmp / "log.jsonl"
        cut.write_bytes(log.read_bytes() + b'{"run": "sa", "step": 99')  # a line being written
        check(results.read_log(cut) == by_hand, "read_log did not skip a line cut short")
        check(results.read_log(tmp / "missing.jsonl") == {}, "a missing log.jsonl is not empty")
        fifo = tmp / "fifo" / "log.jsonl"
        fifo.parent.mkdir()
        os.mkfifo(fifo)
        one_line_error(lambda: results.read_log(fifo), str(fifo))
        shutil.copy(tiny, fifo.parent / "results.json")
        one_line_error(lambda: results.experiments(str(fifo.parent), logs=True), str(fifo))
        one_line_error(lambda: results.executable("xsa-inspect", str(tmp)), str(tmp))

    # ---- values --------------------------------------------------------------------------------------------
    doc = json.loads(tiny.read_text(encoding="utf-8"))
    (single,) = results.experiments(str(fixtures / "single"), logs=True)
    final = {r["variant"]: r["final"]["val_loss"] for r in single.doc["runs"]}
    check(final == {r["variant"]: r["final"]["val_loss"] for r in doc["runs"]} and final["xsa"] == 2.45,
          f"final val losses {final}, by hand xsa 2.45")
    check(single.seq_len == doc["config"]["data"]["seq_len"] == 128, f"seq_len {single.seq_len}, by hand 128")
    check(single.log == results.read_log(tiny.parent / "log.jsonl"), "experiments(logs=True): not its log")

    # ---- bias metric keys --------------------------------------------------------------------------------
    present = {k for run in doc["runs"] for point in run["bias"] for layer in point["layers"] for k in layer
               if k not in ("layer", "lambda_per_head")}
    check(present == BIAS_KEYS, f"the fixture's layer keys {sorted(present)}")
    check(set(results.bias_metrics(doc)) == present, f"bias_metrics(results.json) {results.bias_metrics(doc)}")
    rows = run_inspect(exe, [str(fixtures / "sweep"), "--section", "bias"])["bias"]
    check(set(results.bias_metrics(rows[0])) == present,
          f"bias_metrics(an xsa-inspect bias row) {results.bias_metrics(rows[0])}, results.json {sorted(present)}")

    # ---- inspect() --------------------------------------------------------------------------------------------
    got = results.inspect(every, "by_seq_len,bias", exe, ["--lambda", "1"])
    want = run_inspect(exe, [*every, "--lambda", "1", "--section", "by_seq_len,bias"])
    check(got == want and set(got) == {"by_seq_len", "bias"}, "inspect(sections, --lambda) differs from xsa-inspect's own")
    check(len(got["by_seq_len"]) > 0, "inspect(): no by_seq_len rows on the fixtures")
    check(results.inspect(every, ["paired"], exe) == run_inspect(exe, [*every, "--section", "paired"]),
          "inspect(a list of sections) differs")
    check(results.inspect(every, None, exe) == run_inspect(exe, every), "inspect(all sections) differs")
    md = subprocess.run([exe, str(fixtures / "single"), "--section", "paired"], capture_output=True, text=True,
                        check=True).stdout
    check(results.inspect_text(str(fixtures / "single"), "paired", exe) == md, "inspect_text (markdown) differs")

    # ---- one-line errors --------------------------------------------------------------------------------------
    wrong = str(fixtures / "bad" / "wrong_schema.json")
    text = one_line_error(lambda: results.inspect(wrong, "paired", exe), wrong, code=2)
    check(text.startswith("xsa-inspect: "), f"an xsa-inspect failure not said as xsa-inspect's: {text!r}")
    missing = str(fixtures / "bad" / "missing_key" / "results.json")
    one_line_error(lambda: results.experiments(str(fixtures / "bad" / "missing_key")), missing)
    one_line_error(lambda: results.inspect(str(fixtures / "nope"), "paired", exe), str(fixtures / "nope"))

    # ---- standard library only --------------------------------------------------------------------------------
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); from xsapy import results; "
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'matplotlib', 'numpy', 'torch'}))")
    heavy = subprocess.run([sys.executable, "-c", probe, str(SCRIPTS)], capture_output=True, text=True).stdout.strip()
    check(heavy == "[]", f"importing xsapy.results loads {heavy}")

    for f in failures:
        print(f"check_results_module: {f}", file=sys.stderr)
    if not failures:
        print(f"check_results_module: {checks[0]} checks passed ({len(exps)} experiments, bias metrics "
              f"{', '.join(sorted(present))}, inspect() rows equal xsa-inspect's)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
