#!/usr/bin/python3
"""Every script that reads a file a user names fails on malformed input with ONE line (GitHub issue 40).

Usage: scripts_bad_input_test.py XSA_INSPECT [--python PY] [--only SUBSTRING]

For each script (bench.py --show, readme_tables.py, plot_results.py, plot_findings.py, science_compute.py,
profile_summary.py, check_notebook_html.py), each way a user hands it a file (argument, a folder it walks, a
README block naming one) and each kind of malformed input (a JSON document of the wrong shape: a list or null
where an object is expected, an object missing keys, a string where a number is expected, null where an object
is expected; a number a float cannot hold where a number is expected: NaN, Infinity, 1e999, a 401-digit integer
(not for plot_findings, whose files xsa-inspect reads); JSON nested 100,000 deep; a truncated file; bytes that
are not UTF-8; text that is not JSON; an empty file; a folder; a FIFO with no writer; a path that does not exist;
an unreadable file when not run as root), the case is made in a temporary folder and the script run on it, and it
must: exit 2, print exactly one non-empty line on stderr naming the file (or the folder given), no "Traceback",
nothing on stdout (no half table), write nothing into its --out folder, and finish within 60 s (a FIFO opened
for reading would block forever). Each document format also has a control case, its good document, which must
pass (exit 0): the bad documents are that good one with one thing broken.

scripts/corpora/build_corpus.sh's bad arguments (none, an unknown corpus, two corpora, an unknown option, a
--vocab-size without a number) end the same way (exit 2, one line naming the argument) before anything is fetched.

The command lines too. argparse's own errors (an unknown option, an option missing its value, a value of the wrong
type, a missing or extra argument) are one line "PROG: error: MESSAGE (see --help)", exit 2, no usage block, in
every script above and in scripts/reference/check_against_cpp.py. And the values each script checks itself, refused
the same way before anything runs: profile_summary.py's TOP not a positive integer; check_notebook_html.py's
--figures below 0; science_compute.py on a results.json with a negative steps, wall_s or tokens_per_s (named by
file and key); check_against_cpp.py on a manifest.json that is not an object with a non-empty array of whole cases;
shaped_link.py's --timeout / --seconds NaN or infinite and its private --_receive / --_send modes with missing or
garbage arguments; torchrun.py's --nproc_per_node or --nnodes that torch's agent would refuse with a traceback;
train_reference.py's meta.json not an object and --learned-init outside (0, 1); download_tinystories.py's --out a
folder that cannot be created. Each such case is built so that it starts no real work even on code
without the check (no namespace, no worker, no training, no download: see value_cases).

Then the outputs (every script that writes figures, a README, bench.json or a table): an output that is, holds or
lies inside an input (also through a link) is refused before anything is written (exit 2, one line naming it);
an output that cannot be written -- a full disk (RLIMIT_FSIZE: a write past it fails with EFBIG, root or not), a
folder where nothing can be created (/proc/self), a folder where the file goes, a stdout on /dev/full -- ends
with one line naming the file (or stdout) and the reason, exit 1, no traceback and nothing half-written. Standard library only; the plot scripts need matplotlib, so PY (default:
this python) should be Debian's /usr/bin/python3. Prints one line per failing case, then "N passed, M failed";
exit code 1 on any failure.
"""
import argparse
import copy
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
TIMEOUT_S = 60
BAD_INPUT = 2

# ---- the good documents, one per format --------------------------------------------------------------------

RESULTS = json.loads((ROOT / "tests/fixtures/report/single/tiny/results.json").read_text(encoding="utf-8"))
BENCH = json.loads((ROOT / "tests/fixtures/readme/bench.json").read_text(encoding="utf-8"))
TRACE = {"traceEvents": [{"ph": "X", "name": "aten::mm", "dur": 1500}, {"ph": "B", "name": "step"},
                         {"ph": "X", "name": "aten::add", "dur": 20.5}]}


def mutated(doc, change):
    doc = copy.deepcopy(doc)
    change(doc)
    return doc


def json_bytes(doc):
    return json.dumps(doc, indent=1).encode("utf-8")


def shapes(good, list_instead, missing_key, string_for_number, null_for_object, number_at):
    """The wrong-shape JSON documents of a format, by kind (number_at: the key path of a number, for EXTREMES)."""

    def number(text):  # the good document with the JSON text `text` as the number at number_at
        return json_bytes(mutated(good, setitem(number_at, "@number@"))).replace(b'"@number@"', text)

    return {
        "good (control)": json_bytes(good),
        "list where an object is expected": json_bytes(list_instead),
        "null document": b"null",
        "object without any key": b"{}",
        "object missing a key": json_bytes(mutated(good, missing_key)),
        "string where a number is expected": json_bytes(mutated(good, string_for_number)),
        "null where an object is expected": json_bytes(mutated(good, null_for_object)),
        "truncated JSON": json_bytes(good)[: len(json_bytes(good)) // 2],
        # Python's json reads these as nan, inf and an int float() cannot take (OverflowError): refused by key
        "NaN where a number is expected": number(b"NaN"),
        "Infinity where a number is expected": number(b"-Infinity"),
        "1e999 where a number is expected": number(b"1e999"),
        "a 401-digit integer where a number is expected": number(b"1" + b"0" * 400),
    }


# The kinds above that xsa-inspect, not Python, reads for plot_findings (its C++ side is checked elsewhere).
EXTREMES = ("NaN where a number is expected", "Infinity where a number is expected", "1e999 where a number is expected",
            "a 401-digit integer where a number is expected")


def setitem(path, value):
    def change(doc):
        for key in path[:-1]:
            doc = doc[key]
        doc[path[-1]] = value
    return change


def delitem(path):
    def change(doc):
        for key in path[:-1]:
            doc = doc[key]
        del doc[path[-1]]
    return change


FORMATS = {
    "results.json": shapes(RESULTS, [RESULTS], delitem(["runs", 0, "final"]),
                           setitem(["runs", 0, "eval", 1, "val_loss"], "low"), setitem(["config"], None),
                           ["runs", 0, "eval", 1, "val_loss"]),
    # science_compute reads other fields of a results.json (runs, their timing, the config's sizes): broken there
    "results.json (compute)": shapes(RESULTS, [RESULTS], delitem(["runs"]),
                                     setitem(["runs", 0, "timing", "wall_s"], "long"), setitem(["config"], None),
                                     ["runs", 0, "timing", "wall_s"]),
    "bench.json": shapes(BENCH, [BENCH], delitem(["lengths", 0, "reference"]),
                         setitem(["lengths", 0, "fused", "mfu"], "high"), setitem(["xsa_bench"], None),
                         ["lengths", 0, "fused", "mfu"]),
    "trace.json": shapes(TRACE, [["X", "aten::mm", 1500]], delitem(["traceEvents", 0, "name"]),
                         setitem(["traceEvents", 0, "dur"], "long"), setitem(["traceEvents"], None),
                         ["traceEvents", 0, "dur"]),
}
# Not JSON at all, or JSON Python's parser cannot take, whatever the format.
ANY_FORMAT = {
    "JSON nested 100,000 deep (unclosed)": b"[" * 100000,
    "JSON nested 100,000 deep (closed)": b"[" * 100000 + b"]" * 100000,
    "binary bytes, not UTF-8": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\xfd\x80",
    "text that is not JSON": b"this is not JSON\n",
    "empty file": b"",
}
SPECIAL = ("a folder", "a FIFO (no writer)", "a path that does not exist", "an unreadable file")
for fmt in FORMATS.values():
    fmt.update(ANY_FORMAT)
FORMATS["html"] = {"binary bytes, not UTF-8": ANY_FORMAT["binary bytes, not UTF-8"],
                   "text that is not HTML (a JSON document)": json_bytes(RESULTS), "empty file": b""}
FORMATS["readme"] = {"binary bytes, not UTF-8": ANY_FORMAT["binary bytes, not UTF-8"], "empty file": b"",
                     "markdown without table blocks": b"# A README\n\nNo generated tables here.\n"}


def make(path, kind, content):
    """Puts the malformed input of `kind` at `path` (content: the bytes of a file kind)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "a folder":
        path.mkdir()
    elif kind == "a FIFO (no writer)":
        os.mkfifo(path)
    elif kind == "a path that does not exist":
        pass
    elif kind == "an unreadable file":
        path.write_bytes(json_bytes(RESULTS))
        path.chmod(0)
    else:
        path.write_bytes(content)


# ---- how a user hands each script a file ---------------------------------------------------------------------

class Case:
    """A command to run on a malformed input, the strings of which its error line must hold one (the file, or the
    folder given), the --out folder it must leave empty (or None) and the exit code it must end with."""

    def __init__(self, name, cmd, names, out=None, expect=BAD_INPUT):
        self.name, self.cmd, self.names, self.out, self.expect = name, cmd, names, out, expect


# The folder of scripts/ each script lives in (docs/development.md, "Scripts").
SCRIPT_FOLDERS = {"plot_results.py": "plots", "plot_findings.py": "plots", "science_compute.py": "science",
                  "bench.py": "perf", "profile_summary.py": "perf", "readme_tables.py": "dev",
                  "check_notebook_html.py": "dev", "shaped_link.py": "perf", "check_against_cpp.py": "reference",
                  "torchrun.py": "reference", "train_reference.py": "reference", "download_tinystories.py": "."}


def script(py, name):
    return [py, str(SCRIPTS / SCRIPT_FOLDERS[name] / name)]


def runners(py, inspect):
    """(label, format, how: "file" (the argument) | "walk" (in a folder given), build(bad, top, work) -> (cmd,
    out folder or None)); in a walk the bad file is TOP/sweep/point/results.json (a sweep's layout)."""
    return [
        ("bench.py --show FILE", "bench.json", "file",
         lambda bad, top, work: (script(py, "bench.py") + ["--show", str(bad)], None)),
        ("readme_tables.py --readme FILE", "readme", "file",
         lambda bad, top, work: (script(py, "readme_tables.py") + ["--check", "--readme", str(bad), "--inspect",
                                                                     inspect], None)),
        ("readme_tables.py, a bench block naming FILE", "bench.json", "file",
         lambda bad, top, work: (script(py, "readme_tables.py") + ["--check", "--readme", readme(work, "bench", bad),
                                                                     "--inspect", inspect], None)),
        ("readme_tables.py, a science_compute block naming a folder holding FILE", "results.json (compute)", "walk",
         lambda bad, top, work: (script(py, "readme_tables.py") + [
             "--check", "--readme", readme(work, "science_compute", top), "--inspect", inspect], None)),
        ("plot_results.py FILE", "results.json", "file",
         lambda bad, top, work: (script(py, "plot_results.py") + [str(bad), "--out", str(work / "out"), "--inspect",
                                                                    inspect], work / "out")),
        ("plot_results.py FOLDER (walked)", "results.json", "walk",
         lambda bad, top, work: (script(py, "plot_results.py") + [str(top), "--out", str(work / "out"), "--inspect",
                                                                    inspect], work / "out")),
        ("plot_findings.py FILE", "results.json", "file",
         lambda bad, top, work: (script(py, "plot_findings.py") + [str(bad), "--out", str(work / "out"), "--inspect",
                                                                     inspect], work / "out")),
        ("plot_findings.py FOLDER (walked)", "results.json", "walk",
         lambda bad, top, work: (script(py, "plot_findings.py") + [str(top), "--out", str(work / "out"), "--inspect",
                                                                     inspect], work / "out")),
        ("science_compute.py FOLDER (walked)", "results.json (compute)", "walk",
         lambda bad, top, work: (script(py, "science_compute.py") + [str(top)], None)),
        ("profile_summary.py FILE", "trace.json", "file",
         lambda bad, top, work: (script(py, "profile_summary.py") + [str(bad)], None)),
        ("check_notebook_html.py FILE", "html", "file",
         lambda bad, top, work: (script(py, "check_notebook_html.py") + [str(bad), "--figures", "1"], None)),
    ]


def readme(work, tool, target):
    """A README with one block whose command names `target` (its body empty: the command fails before any diff)."""
    path = work / "README.md"
    path.write_text(f"# Fixture\n\n<!-- {tool} {target} -->\n<!-- /{tool} -->\n", encoding="utf-8")
    return str(path)


def cases(py, inspect, work_root):
    """Every (runner, kind) case, each in its own folder, plus the cases a single runner has."""
    out = []
    n = 0
    for label, fmt, how, build in runners(py, inspect):
        kinds = list(FORMATS[fmt].items()) + [(k, None) for k in SPECIAL]
        for kind, content in kinds:
            if kind == "an unreadable file" and os.geteuid() == 0:
                continue  # root reads it anyway
            if kind == "good (control)" and (label.startswith("readme_tables") or fmt == "html"):
                continue  # a block's expected body / Chromium: not this test's business
            if kind in EXTREMES and label.startswith("plot_findings"):
                continue  # xsa-inspect reads its files (the C++ side's checks)
            n += 1
            work = work_root / f"c{n:03d}"
            work.mkdir()
            top = work / "runs"
            if how == "file":
                bad = work / ("input." + ("html" if fmt == "html" else "md" if fmt == "readme" else "json"))
            else:  # a results folder of sweep folders of points, the bad results.json in a point
                bad = top / "sweep" / "point" / "results.json"
            make(bad, kind, content)
            top.mkdir(exist_ok=True)
            cmd, out_dir = build(bad, top, work)
            names = [str(bad)] if how == "file" else [str(bad), str(top)]
            expect = 0 if kind == "good (control)" else BAD_INPUT
            out.append(Case(f"{label} / {kind}", cmd, names, out_dir, expect))

    def extra(name, setup, cmd_of, names_of, out_of=None, expect=BAD_INPUT):
        nonlocal n
        n += 1
        work = work_root / f"c{n:03d}"
        work.mkdir()
        setup(work)
        out.append(Case(name, cmd_of(work), names_of(work), out_of(work) if out_of else None, expect))

    def good_results(work):
        make(work / "runs" / "tiny" / "results.json", "file", json_bytes(RESULTS))

    # Paths given beside the input: the folder argument itself, the log next to results.json, --out, --inspect.
    for kind in ("a FIFO (no writer)", "a path that does not exist"):
        extra(f"science_compute.py FOLDER / the folder argument is {kind}", lambda w, k=kind: make(w / "top", k, b""),
              lambda w: script(py, "science_compute.py") + [str(w / "top")], lambda w: [str(w / "top")])
    extra("science_compute.py FOLDER / the folder argument is a regular file",
          lambda w: make(w / "top", "file", b"{}"),
          lambda w: script(py, "science_compute.py") + [str(w / "top")], lambda w: [str(w / "top")])
    for kind in ("a FIFO (no writer)", "a folder"):
        extra(f"plot_results.py FOLDER / log.jsonl next to results.json is {kind}",
              lambda w, k=kind: (good_results(w), make(w / "runs" / "tiny" / "log.jsonl", k, b"")),
              lambda w: script(py, "plot_results.py") + [str(w / "runs"), "--out", str(w / "out"), "--inspect",
                                                         inspect],
              lambda w: [str(w / "runs" / "tiny" / "log.jsonl")], lambda w: w / "out")
    for tool in ("plot_results.py", "plot_findings.py"):
        extra(f"{tool} / --out is an existing file",
              lambda w: (good_results(w), make(w / "out", "file", b"not a folder")),
              lambda w, t=tool: script(py, t) + [str(w / "runs"), "--out", str(w / "out"), "--inspect", inspect],
              lambda w: [str(w / "out")])
    extra("plot_findings.py / --inspect is a folder", lambda w: (good_results(w), (w / "exe").mkdir()),
          lambda w: script(py, "plot_findings.py") + [str(w / "runs"), "--out", str(w / "out"), "--inspect",
                                                      str(w / "exe")],
          lambda w: [str(w / "exe")], lambda w: w / "out")
    extra("readme_tables.py / --inspect is a folder", lambda w: (w / "exe").mkdir(),
          lambda w: script(py, "readme_tables.py") + ["--check", "--readme", str(ROOT / "README.md"), "--inspect",
                                                      str(w / "exe")],
          lambda w: [str(w / "exe")])
    # bench.py --show reads more of a bench.json than the length table: the machine, the steps, the kernels.
    for name, change in (
            ("cpu.bf16_native is not true or false", setitem(["xsa_bench", "cpu", "bf16_native"], "yes")),
            ("a kernel time is a string", setitem(["xsa_bench", "flash_kernels", 0, "forward_ms"], "fast")),
            ("a bf16 step without its speed-up", delitem(["xsa_bench", "steps_bf16", 0, "speedup_vs_fp32"])),
            ("no step timings", setitem(["xsa_bench", "steps"], [])),
            ("the config without its model", delitem(["xsa_bench", "config", "model"]))):
        extra(f"bench.py --show FILE / {name}",
              lambda w, c=change: make(w / "bench.json", "file", json_bytes(mutated(BENCH, c))),
              lambda w: script(py, "bench.py") + ["--show", str(w / "bench.json")], lambda w: [str(w / "bench.json")])
    extra("profile_summary.py FILE / an event that is not an object",
          lambda w: make(w / "t.json", "file", json_bytes({"traceEvents": [17]})),
          lambda w: script(py, "profile_summary.py") + [str(w / "t.json")], lambda w: [str(w / "t.json")])
    output_cases(py, inspect, extra, good_results)
    usage_cases(py, extra)
    value_cases(py, extra)

    # scripts/corpora/build_corpus.sh: a bad argument is one line naming it, exit 2, before anything is fetched.
    corpus_script = ["bash", str(SCRIPTS / "corpora" / "build_corpus.sh")]
    for args, named in (([], "no corpus named"), (["bible"], "'bible'"), (["kjv", "python-stdlib"], "'python-stdlib'"),
                        (["kjv", "--bogus"], "'--bogus'"), (["kjv", "--vocab-size"], "--vocab-size needs"),
                        (["kjv", "--vocab-size", "many"], "'many'")):
        extra(f"build_corpus.sh {' '.join(args) or '(no arguments)'}", lambda w: None,
              lambda w, a=args: corpus_script + a, lambda w, n=named: [n])
    return out


# ---- the command line: argparse's errors, and the values each script checks itself -----------------------------

def usage_cases(py, extra):
    """An unknown option, an option missing its value, a value of the wrong type: argparse's error as one line
    "PROG: error: MESSAGE (see --help)" (xsapy.user_input.ArgumentParser; scripts/reference/options.Parser), exit 2,
    for every script with a command line. The other arguments are good enough for argparse, so the line names the
    bad one, and nothing runs: argparse stops first."""
    unknown = "unrecognized arguments: --bogus (see --help)"

    def missing(flag):
        return f"argument {flag}: expected one argument (see --help)"

    def bad_type(flag, kind, value):
        return f"argument {flag}: invalid {kind} value: '{value}' (see --help)"

    for tool, args, named in (
            ("bench.py", ["--bogus"], unknown), ("bench.py", ["--steps"], missing("--steps")),
            ("bench.py", ["--steps", "x"], bad_type("--steps", "int", "x")),
            ("plot_findings.py", ["runs", "--out", "o", "--bogus"], unknown),
            ("plot_findings.py", ["runs", "--out"], missing("--out")),
            ("plot_results.py", ["runs", "--out", "o", "--bogus"], unknown),
            ("plot_results.py", ["runs", "--out"], missing("--out")),
            ("check_against_cpp.py", ["dump", "--bogus"], unknown),
            ("check_against_cpp.py", ["dump", "--tol"], missing("--tol")),
            ("check_against_cpp.py", ["dump", "--tol", "small"], bad_type("--tol", "float", "small")),
            ("check_notebook_html.py", ["page.html", "--figures", "1", "--bogus"], unknown),
            ("check_notebook_html.py", ["page.html", "--figures"], missing("--figures")),
            ("check_notebook_html.py", ["page.html", "--figures", "x"], bad_type("--figures", "int", "x")),
            ("readme_tables.py", ["--check", "--bogus"], unknown),
            ("readme_tables.py", ["--check", "--readme"], missing("--readme")),
            ("profile_summary.py", ["t.json", "--bogus"], unknown),
            ("profile_summary.py", [], "the following arguments are required: trace (see --help)"),
            ("profile_summary.py", ["t.json", "x"], bad_type("top", "int", "x")),
            ("science_compute.py", ["--bogus"], unknown),
            ("science_compute.py", ["results", "more"], "unrecognized arguments: more (see --help)")):
        extra(f"{tool} {' '.join(args) or '(no arguments)'} / argparse's error is one line", lambda w: None,
              lambda w, t=tool, a=args: script(py, t) + a, lambda w, n=named: [n])


def value_cases(py, extra):
    """A value argparse takes but the script cannot use (a count out of range, NaN, a malformed manifest or
    results.json): one line naming it, exit 2, before anything runs. Each case is built so that the code before
    these checks failed on something else, or not at all, and never started real work: shaped_link.py gets
    --ranks 1 (refused before any namespace is made, whatever the order of the checks), torchrun.py a value its
    agent refuses before starting a worker, train_reference.py a data folder it cannot train on,
    check_notebook_html.py a --screenshot over its input (refused before Chromium), download_tinystories.py a
    mirror that refuses connections."""
    # profile_summary.py TRACE TOP: TOP a positive integer (-1 dropped the last operator, 0 printed an empty table)
    for top in ("-1", "0"):
        extra(f"profile_summary.py TRACE {top}", lambda w: make(w / "t.json", "file", json_bytes(TRACE)),
              lambda w, t=top: script(py, "profile_summary.py") + [str(w / "t.json"), t], lambda w, t=top: [f"top {t}"])
    # check_notebook_html.py --figures N: at least N figures, so N >= 0
    extra("check_notebook_html.py --figures -1",
          lambda w: make(w / "page.html", "file", b"<html><body></body></html>\n"),
          lambda w: script(py, "check_notebook_html.py") + [str(w / "page.html"), "--figures", "-1", "--screenshot",
                                                            str(w / "page.html")],
          lambda w: ["--figures -1"])
    # science_compute.py: a negative step count, wall time or rate would make negative totals
    for key, change in (("config.train.steps", setitem(["config", "train", "steps"], -100)),
                        ("runs[0].timing.wall_s", setitem(["runs", 0, "timing", "wall_s"], -1.5)),
                        ("runs[0].timing.tokens_per_s", setitem(["runs", 0, "timing", "tokens_per_s"], -1000.0))):
        bad = pathlib.Path("runs") / "sweep" / "point" / "results.json"
        extra(f"science_compute.py FOLDER / results.json with a negative {key}",
              lambda w, c=change: make(w / bad, "file", json_bytes(mutated(RESULTS, c))),
              lambda w: script(py, "science_compute.py") + [str(w / "runs")],
              lambda w, k=key: [f"{w / bad}: {k}: expected a number >= 0"])
    # check_against_cpp.py DUMP_DIR: a manifest.json that is not an object with a non-empty array of whole cases
    for name, doc in (("an array", b"[1]"), ("an object without cases", b"{}"), ("cases a number", b'{"cases": 5}'),
                      ("an empty case list", b'{"cases": []}'), ("a case without its keys", b'{"cases": [{}]}'),
                      ("a case that is not an object", b'{"cases": [null]}')):
        extra(f"check_against_cpp.py DUMP_DIR / manifest.json is {name}",
              lambda w, d=doc: make(w / "dump" / "manifest.json", "file", d),
              lambda w: script(py, "check_against_cpp.py") + [str(w / "dump")],
              lambda w: [str(w / "dump" / "manifest.json")])
    # shaped_link.py: NaN and inf pass a `<= 0` check; its private modes with missing or garbage arguments
    for args, named in ((["--timeout", "nan", "--", "/bin/true"], "--timeout nan"),
                        (["--timeout", "inf", "--", "/bin/true"], "--timeout inf"),
                        (["--measure", "--seconds", "inf"], "--seconds inf"),
                        (["--measure", "--seconds", "nan"], "--seconds nan")):
        extra(f"shaped_link.py {' '.join(args)}", lambda w: None,
              lambda w, a=args: script(py, "shaped_link.py") + ["--ranks", "1", "--rate", "1gbit"] + a,
              lambda w, n=named: [n])
    for args, named in ((["--_receive"], "--_receive HOST PORT SECONDS"), (["--_send", "10.77.0.1", "x", "1"],
                                                                           "--_send PORT 'x'"),
                        (["--_receive", "10.77.0.1", "5201", "nan"], "--_receive SECONDS nan")):
        extra(f"shaped_link.py {' '.join(args)}", lambda w: None, lambda w, a=args: script(py, "shaped_link.py") + a,
              lambda w, n=named: [n])
    # torchrun.py: what torch's agent refuses with a traceback, refused before handing over
    for args, named in ((["--nproc_per_node", "abc", "x.py"], "--nproc_per_node 'abc'"),
                        (["--nnodes", "2:1", "x.py"], "--nnodes '2:1'")):
        extra(f"torchrun.py {' '.join(args)}", lambda w: None, lambda w, a=args: script(py, "torchrun.py") + a,
              lambda w, n=named: [n])
    # train_reference.py: a meta.json that is not an object; --learned-init outside (0, 1), as xsa's config
    extra("train_reference.py --data DIR / meta.json is an array",
          lambda w: (make(w / "data" / "meta.json", "file", b"[1, 2]"), make(w / "data" / "train.bin", "file", b"")),
          lambda w: script(py, "train_reference.py") + ["--data", str(w / "data")],
          lambda w: [f"{w / 'data' / 'meta.json'}: expected a JSON object"])
    for value in ("nan", "0", "1.5"):
        extra(f"train_reference.py --learned-init {value}", lambda w: None,
              lambda w, v=value: script(py, "train_reference.py") + ["--learned-init", v, "--data", str(w / "none")],
              lambda w, v=value: [f"--learned-init {float(v)}"])
    # download_tinystories.py --out: a folder that cannot be created is bad input (before any download)
    no_mirror = ["env", "HF_ENDPOINT=http://127.0.0.1:9"]  # were it to try anyway: refused at once, no network
    extra("download_tinystories.py --out /proc/x (cannot be created)", lambda w: None,
          lambda w: no_mirror + script(py, "download_tinystories.py") + ["--out", "/proc/x"], lambda w: ["/proc/x"])


# ---- outputs ---------------------------------------------------------------------------------------------------

SINGLE = ROOT / "tests/fixtures/report/single"  # a results folder every plot script draws figures from
FIGURE_NAMES = ("loss_curves improvement_vs_lambda improvement_vs_seq_len bias_over_training improvement_vs_budget "
                "eval_delta_curve bias_init_vs_end bias_by_depth improvement_vs_size improvement_vs_lr early_val_loss "
                "dynamics_over_training best_per_setup").split()


def full_disk(cmd, max_bytes=1000):
    """`cmd` with RLIMIT_FSIZE at max_bytes: a write past it fails with EFBIG, as on a full disk (root too; Python
    ignores SIGXFSZ). A PNG, bench.json or README is larger, so its first write fails."""
    return [cmd[0], "-c", "import os, resource, sys; n = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_FSIZE, "
            "(n, n)); os.execv(sys.argv[2], sys.argv[2:])", str(max_bytes)] + cmd


def full_stdout(cmd):
    """`cmd` with its stdout on /dev/full (every write: ENOSPC)."""
    return ["sh", "-c", 'exec "$@" > /dev/full', "sh"] + cmd


def output_cases(py, inspect, extra, good_results):
    """An output over an input (exit 2) and an output that cannot be written (exit 1), for every script that writes."""
    def plot(tool, paths, out):
        return script(py, tool) + [str(p) for p in paths] + ["--out", str(out), "--inspect", inspect]

    for tool in ("plot_results.py", "plot_findings.py"):
        # --out is the input, lies inside it, holds it, or is a link to it: refused before any figure is drawn
        for name, out_of, made in (("the input folder", lambda w: w / "runs", None),
                                   ("inside the input folder", lambda w: w / "runs" / "tiny" / "figs", None),
                                   ("the folder holding the input", lambda w: w, None),
                                   ("a link to the input folder", lambda w: w / "link", "link")):
            extra(f"{tool} / --out is {name}",
                  lambda w, m=made: (good_results(w), m and (w / "link").symlink_to(w / "runs")),
                  lambda w, t=tool, o=out_of: plot(t, [w / "runs"], o(w)),
                  lambda w, o=out_of: [str(o(w))],
                  lambda w, o=out_of, n=name: o(w) if n.startswith("inside") else None)  # must stay uncreated
        extra(f"{tool} / --out is the input results.json's folder, named through its file",
              good_results, lambda w, t=tool: plot(t, [w / "runs" / "tiny" / "results.json"], w / "runs" / "tiny"),
              lambda w: [str(w / "runs" / "tiny")])
        # a figure that cannot be written: one line naming it, exit 1, nothing half-written
        extra(f"{tool} / --out is a folder where nothing can be created (/proc/self)", lambda w: None,
              lambda w, t=tool: plot(t, [SINGLE], "/proc/self"), lambda w: ["/proc/self/"], expect=1)
        extra(f"{tool} / a folder stands where each figure goes",
              lambda w: [(w / "out" / f"{f}.png").mkdir(parents=True) for f in FIGURE_NAMES],
              lambda w, t=tool: plot(t, [SINGLE], w / "out"), lambda w: [str(w / "out")], expect=1)
        extra(f"{tool} / a full disk (RLIMIT_FSIZE)", lambda w: None,
              lambda w, t=tool: full_disk(plot(t, [SINGLE], w / "out")), lambda w: [str(w / "out")],
              lambda w: w / "out", expect=1)
    extra("plot_results.py / stdout on /dev/full", lambda w: None,
          lambda w: full_stdout(plot("plot_results.py", [SINGLE], w / "out")), lambda w: ["stdout"], expect=1)
    # the scripts whose output is a table on stdout
    for name, cmd in (("science_compute.py", script(py, "science_compute.py") + [str(ROOT / "tests/fixtures/report")]),
                      ("profile_summary.py", None),
                      ("bench.py --show", script(py, "bench.py") + ["--show", str(ROOT / "tests/fixtures/readme/bench.json")]),
                      ("readme_tables.py --check", script(py, "readme_tables.py") + [
                          "--check", "--readme", str(ROOT / "tests/fixtures/readme/README.md"), "--inspect", inspect])):
        extra(f"{name} / stdout on /dev/full",
              lambda w, c=cmd: c is None and make(w / "t.json", "file", json_bytes(TRACE)),
              lambda w, c=cmd: full_stdout(c or script(py, "profile_summary.py") + [str(w / "t.json")]),
              lambda w: ["stdout"], expect=1)
    # readme_tables --update: a README that is, or lies inside, what a block reads; a README it cannot rewrite
    bench_json = ROOT / "tests/fixtures/readme/bench.json"
    for name, block in (("lies inside a science_compute block's folder", lambda w: f"science_compute {w}"),
                        ("is a bench block's file", lambda w: f"bench {w / 'README.md'}")):
        extra(f"readme_tables.py --update / the README {name}",
              lambda w, b=block: (w / "README.md").write_text(f"# x\n\n<!-- {b(w)} -->\n<!-- /{b(w).split()[0]} -->\n"),
              lambda w: script(py, "readme_tables.py") + ["--update", "--readme", str(w / "README.md"), "--inspect",
                                                          inspect],
              lambda w: [str(w / "README.md")])
    extra("readme_tables.py --update / a full disk (RLIMIT_FSIZE)",
          lambda w: (w / "README.md").write_text(f"# x\n\n<!-- bench {bench_json} -->\n<!-- /bench -->\n"),
          lambda w: full_disk(script(py, "readme_tables.py") + ["--update", "--readme", str(w / "README.md"),
                                                                "--inspect", inspect]),
          lambda w: [str(w / "README.md")], expect=1)
    # check_notebook_html --screenshot: the page it reads, a link to it, a folder (checked before Chromium runs)
    page = b"<html><body><p>no figures</p></body></html>\n"
    for name, target in (("the HTML it reads", lambda w: w / "page.html"), ("a link to that HTML", lambda w: w / "link"),
                         ("a folder", lambda w: w / "folder")):
        extra(f"check_notebook_html.py --screenshot is {name}",
              lambda w: (make(w / "page.html", "file", page), (w / "link").symlink_to(w / "page.html"),
                         (w / "folder").mkdir()),
              lambda w, t=target: script(py, "check_notebook_html.py") + [str(w / "page.html"), "--figures", "0",
                                                                         "--screenshot", str(t(w))],
              lambda w, t=target: [str(t(w))])

    # scripts/dev/build_time.sh: every argument is checked before anything is cloned or built.
    build_time = ["bash", str(SCRIPTS / "dev" / "build_time.sh")]
    # A copy of the tree without .git (scripts/debian13.sh's) has no commits: there the line names the folder.
    for name, args, named in (("an unknown generator", ["--generator", "msbuild", "HEAD"], ["msbuild"]),
                              ("a commit that does not exist", ["no-such-commit-xyz"],
                               ["'no-such-commit-xyz' is not a commit", "is not a git repository"]),
                              ("no commit", [], ["no commit given"])):
        extra(f"build_time.sh / {name}", lambda w: None, lambda w, a=args: build_time + a, lambda w, n=named: n)


# ---- running -------------------------------------------------------------------------------------------------

def run_case(case, verbose=False):
    """"" when the case holds, else what went wrong (one line)."""
    start = time.monotonic()
    # Its own process group: on a timeout the script and whatever it started (readme_tables.py runs bench.py) go.
    p = subprocess.Popen(case.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         cwd=ROOT, start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return f"no exit within {TIMEOUT_S} s (blocked, e.g. reading a FIFO)"
    took = time.monotonic() - start
    err = stderr.decode("utf-8", "replace")
    if verbose:
        print(f"ran {case.name}: exit {p.returncode} [{took:.1f} s] {err.strip()[:400]}")
    if case.expect == 0:
        return "" if p.returncode == 0 else f"good input: exit {p.returncode}, stderr {err.strip()[-300:]!r}"
    problems = []
    if p.returncode != case.expect:
        problems.append(f"exit {p.returncode}, expected {case.expect}")
    lines = err.rstrip("\n").split("\n")
    if len(lines) != 1 or not lines[0].strip():
        problems.append(f"{len([l for l in lines if l.strip()])} stderr lines, expected 1")
    if "Traceback" in err:
        problems.append("a traceback")
    if not any(name in err for name in case.names):
        problems.append("the file is not named")
    if stdout.strip():
        problems.append(f"stdout not empty ({stdout[:60]!r})")
    if case.out is not None and case.out.is_dir() and any(case.out.iterdir()):
        problems.append(f"wrote into --out: {sorted(x.name for x in case.out.iterdir())}")
    if problems:
        return "; ".join(problems) + f" [{took:.1f} s] stderr: {err.strip()[:300]!r}"
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inspect", help="the xsa-inspect executable")
    ap.add_argument("--python", default=sys.executable, help="python for the scripts (needs matplotlib)")
    ap.add_argument("--only", help="only cases whose name contains this")
    ap.add_argument("--verbose", action="store_true", help="print every case with the line it got")
    args = ap.parse_args()
    work_root = pathlib.Path(tempfile.mkdtemp(prefix="xsa-bad-input."))
    failures, passed = [], 0
    try:
        todo = [c for c in cases(args.python, os.path.abspath(args.inspect), work_root)
                if not args.only or args.only in c.name]
        for case in todo:
            problem = run_case(case, args.verbose)
            if problem:
                failures.append(f"FAIL {case.name}: {problem}")
                print(failures[-1], flush=True)
            else:
                passed += 1
    finally:
        for p in work_root.rglob("*"):  # an unreadable file made for a case: readable again to be removed
            if p.is_file() and not p.is_symlink():
                p.chmod(0o644)
        shutil.rmtree(work_root, ignore_errors=True)
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
