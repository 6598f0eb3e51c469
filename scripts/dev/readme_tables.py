#!/usr/bin/env python3
"""Keeps the result tables of README.md and docs/*.md equal to what xsa-inspect prints from the committed results/.

A generated block in a markdown file is delimited by two HTML comments; the first names the tool and its arguments:

    <!-- xsa-inspect results/budget_300 results/budget_1200 --section by_budget -->
    | ... the markdown table xsa-inspect printed ... |
    <!-- /xsa-inspect -->

The tools: `xsa-inspect` (the built executable, with `--format markdown`), `science_compute`
(scripts/science/science_compute.py, the compute the science sweeps used) and `bench` (scripts/perf/bench.py --show: a
committed bench.json's machine, matmul peaks, step time, fused kernel and length and size tables). Arguments are
relative to the repository; one with a wildcard (`*`, `?`, `[`) stands for the paths it matches there, sorted, as
the shell would expand it (`results/length_s1/*seq_len=128_*`: a subset of a sweep's points), and one that
matches nothing is bad input.

The files: every `--readme FILE` and every `*.md` of every `--docs DIR` (both may be repeated); with neither, the
repository's README.md and docs/*.md. A file without blocks is fine as long as one of the files has some.

`--check` (the CTest readme.tables_match_results) reruns every block's command and fails, showing a diff, when a
block differs; `--update` rewrites the blocks. Section headings ("## ...") of xsa-inspect's output are left out
so each file keeps its own headings. Standard library only: runs under any python3 from 3.8 on.

Exit codes: 0 every block matches (or --update done), 1 a block differs or a marker opens or closes no block (or,
with one line on stderr, a file cannot be rewritten: a full disk, a read-only folder), 2 bad input (a markdown file
or the xsa-inspect executable unusable, no block in any file, a block's command failing on its input, or with
--update a file to rewrite that is or lies inside a path a block's command reads), with one line on stderr.
"""
import difflib
import glob
import os
import pathlib
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/: the xsapy package
from xsapy import user_input  # noqa: E402  (a user-named file read, or one line and exit 2)
from xsapy import results  # noqa: E402  (where xsa-inspect is and how it is called)


def fail(message):
    user_input.fail("readme_tables", message)

TOOLS = r"xsa-inspect|science_compute|bench"
# A block's body never holds another marker, so a missing or mistyped closing marker cannot swallow the next
# block: the opening marker is then left unmatched, which validate_markers reports.
BLOCK = re.compile(r"<!-- (?P<tool>" + TOOLS + r")(?: (?P<args>[^\n]*?))? -->\n"
                   r"(?P<body>(?:(?!<!--).)*?)(?P<close><!-- /(?P=tool) -->)", re.S)
MARKER = re.compile(r"<!-- /?(?:" + TOOLS + r")(?: [^\n]*?)? -->")


def validate_markers(text, blocks, readme):
    """Every opening and closing marker must belong to a block: a stray one is a typo that would leave a table
    unchecked."""
    in_blocks = {m.start() for m in blocks} | {m.start("close") for m in blocks}
    for marker in MARKER.finditer(text):
        if marker.start() not in in_blocks:
            line = text.count("\n", 0, marker.start()) + 1
            sys.exit(f"readme_tables: error: {readme}:{line}: `{marker.group(0)}` opens or closes no block "
                     "(each opening marker needs its own closing marker, with only the table between)")


def block_args(text, m, readme, root):
    """A block's arguments as its command gets them (shell words, wildcards expanded in the repository), or one line
    naming the README and its line."""
    line = text.count("\n", 0, m.start()) + 1
    try:
        words = shlex.split(m.group("args") or "")
    except ValueError as e:  # e.g. an unclosed quote
        fail(f"{readme}:{line}: `{m.group(0).splitlines()[0]}`: arguments not readable as shell words ({e})")
    args = []
    for word in words:
        if word.startswith("-") or not any(c in word for c in "*?["):
            args.append(word)
            continue
        matches = sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(str(root), word)))
        if not matches:
            fail(f"{readme}:{line}: `{m.group(0).splitlines()[0]}`: '{word}' matches no path in {root}")
        args += matches
    return args


def tool_command(tool, args, exe, root):
    if tool == "science_compute":
        return [sys.executable, str(root / "scripts" / "science" / "science_compute.py")] + args
    if tool == "bench":
        return [sys.executable, str(root / "scripts" / "perf" / "bench.py"), "--show"] + args
    return results.command(args, "markdown", exe)


def block_inputs(tool, args, root):
    """What a block's command reads: its arguments that name an existing path (relative to the repository, where
    the commands run), and results/ for a science_compute block without one (its default)."""
    paths = [root / a for a in args if not a.startswith("-") and os.path.lexists(root / a)]
    if tool == "science_compute" and not [a for a in args if not a.startswith("-")]:
        paths.append(root / "results")
    return paths


def block_output(cmd, cwd):
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace")
    except OSError as e:
        fail(f"{cmd[0]}: cannot run ({e.strerror or e})")
    if proc.returncode != 0:
        # the command's own one-line error (the last line, should it have printed more) names the bad input
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        fail(f"`{shlex.join(cmd)}` exited {proc.returncode}: {lines[-1].strip() if lines else '(no message)'}")
    lines = [l for l in proc.stdout.splitlines() if not l.startswith("## ")]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    text = "\n".join(lines)
    text = re.sub(r"\n\n+", "\n\n", text)
    return text + "\n"


def read_markdown(path):
    """The text of one markdown file, or one line and exit 2."""
    try:
        text = user_input.read_text(path, "a markdown README")
    except user_input.InputError as e:
        fail(e)
    if not text.strip():
        fail(f"{path}: empty file, expected a markdown README")
    return text


def markdown_files(args, root):
    """The files to check, in order, each once: --readme files, then each --docs folder's *.md, sorted."""
    files = [pathlib.Path(f) for f in args.readme or []]
    folders = [pathlib.Path(d) for d in args.docs or []]
    if not files and not folders:
        files, folders = [root / "README.md"], [root / "docs"]
    for folder in folders:
        if not folder.is_dir():
            fail(f"{folder}: not a folder (--docs names a folder of markdown files)")
        files += sorted(folder.glob("*.md"))
    return user_input.each_file_once(files)


def write_atomically(path, text):
    try:  # all of it or nothing; a full disk or a read-only folder: one line, exit 1
        user_input.write_atomically(path, text)
    except user_input.OutputError as e:
        fail(e)


def main():
    ap = user_input.ArgumentParser("readme_tables", description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail if a block differs from its command's output")
    mode.add_argument("--update", action="store_true", help="rewrite the blocks from their commands' output")
    ap.add_argument("--readme", action="append", metavar="FILE",
                    help="a markdown file holding blocks; repeatable (default: README.md and docs/*.md)")
    ap.add_argument("--docs", action="append", metavar="DIR", help="check every *.md in DIR too; repeatable")
    ap.add_argument("--inspect", default=None,
                    help="xsa-inspect executable (default: build/xsa-inspect, or $XSA_BUILD/xsa-inspect)")
    args = ap.parse_args()

    root = pathlib.Path(__file__).resolve().parents[2]  # the repository, two folders up
    try:
        exe = results.executable("xsa-inspect", args.inspect)
    except user_input.InputError as e:
        fail(e)
    files = markdown_files(args, root)
    documents = []  # (path, text, blocks), every marker validated before any command runs
    for path in files:
        text = read_markdown(path)
        blocks = list(BLOCK.finditer(text))
        validate_markers(text, blocks, path)
        documents.append((path, text, [(m, block_args(text, m, path, root)) for m in blocks]))
    total = sum(len(blocks) for _, _, blocks in documents)
    if not total:
        names = ", ".join(str(path) for path, _, _ in documents) or "(no markdown files)"
        fail(f"{names}: no <!-- xsa-inspect ... -->, <!-- science_compute ... --> or <!-- bench ... --> blocks found")
    if args.update:  # a file --update rewrites may not be, or lie inside, what any block's command reads
        inputs = [p for _, _, blocks in documents for m, a in blocks for p in block_inputs(m.group("tool"), a, root)]
        for path, _, blocks in documents:
            if blocks:
                try:
                    user_input.refuse_overlap(path, inputs, "the file --update rewrites")
                except user_input.InputError as e:
                    fail(e)

    failures = []
    outputs = {}  # the same command in two blocks runs once
    for path, text, blocks in documents:
        out, pos = [], 0
        for m, words in blocks:
            tool, tool_args = m.group("tool"), m.group("args") or ""
            cmd = tool_command(tool, words, exe, root)
            if tuple(cmd) not in outputs:
                outputs[tuple(cmd)] = block_output(cmd, root)
            want = outputs[tuple(cmd)]
            if m.group("body") != want:
                line = text.count("\n", 0, m.start()) + 1
                failures.append((f"{tool} {tool_args}".strip(), f"{path}:{line}", m.group("body"), want))
            out.append(text[pos:m.start("body")] + want)
            pos = m.end("body")
        out.append(text[pos:])
        new = "".join(out)
        if args.update and new != text:
            write_atomically(path, new)

    if args.update:
        print(f"readme_tables: {total} blocks, {len(failures)} updated")
        return 0
    for cmd, where, have, want in failures:
        print(f"README block `{cmd}` differs from the command's output ({where}):")
        sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True), where, "command"))
    print(f"readme_tables: {total} blocks checked, {len(failures)} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    user_input.run("readme_tables", main)
