#!/usr/bin/env python3
"""Keeps the README's result tables equal to what xsa-inspect prints from the committed results/.

A generated block in README.md is delimited by two HTML comments; the first names the tool and its arguments:

    <!-- xsa-inspect results/budget_300 results/budget_1200 --section by_budget -->
    | ... the markdown table xsa-inspect printed ... |
    <!-- /xsa-inspect -->

The tools: `xsa-inspect` (the built executable, with `--format markdown`), `science_compute`
(scripts/science_compute.py, the compute the science sweeps used) and `bench` (scripts/bench.py --show: the
length and size table of a committed bench.json). Arguments are relative to the repository.

`--check` (the CTest readme.tables_match_results) reruns every block's command and fails, showing a diff, when a
block differs; `--update` rewrites the blocks. Section headings ("## ...") of xsa-inspect's output are left out
so the README keeps its own headings. Standard library only: runs under any python3 from 3.8 on.

Exit codes: 0 every block matches (or --update done), 1 a block differs or a marker opens or closes no block, 2 bad
input (the README or the xsa-inspect executable unusable, or a block's command failing on its input), with one
line on stderr.
"""
import argparse
import difflib
import os
import pathlib
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import user_input  # noqa: E402  (scripts/user_input.py: a user-named file read, or one line and exit 2)


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


def tool_command(tool, args, exe, root):
    if tool == "science_compute":
        return [sys.executable, str(root / "scripts" / "science_compute.py")] + shlex.split(args)
    if tool == "bench":
        return [sys.executable, str(root / "scripts" / "bench.py"), "--show"] + shlex.split(args)
    return [str(exe)] + shlex.split(args) + ["--format", "markdown"]


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail if a block differs from its command's output")
    mode.add_argument("--update", action="store_true", help="rewrite the blocks from their commands' output")
    ap.add_argument("--readme", default=None, help="README path (default: the repository's README.md)")
    ap.add_argument("--inspect", default=None, help="xsa-inspect executable (default: build/xsa-inspect)")
    args = ap.parse_args()

    root = pathlib.Path(__file__).resolve().parent.parent
    readme = pathlib.Path(args.readme) if args.readme else root / "README.md"
    exe = pathlib.Path(args.inspect) if args.inspect else root / "build" / "xsa-inspect"
    if not exe.exists():
        fail(f"{exe}: xsa-inspect not built (run scripts/build.sh or pass --inspect)")
    if not user_input.is_regular_file(exe) or not os.access(exe, os.X_OK):
        fail(f"{exe}: not an executable file (expected the xsa-inspect executable)")
    try:
        text = user_input.read_text(readme, "a markdown README")
    except user_input.InputError as e:
        fail(e)
    if not text.strip():
        fail(f"{readme}: empty file, expected a markdown README")
    blocks = list(BLOCK.finditer(text))
    if not blocks:
        fail(f"{readme}: no <!-- xsa-inspect ... -->, <!-- science_compute ... --> or <!-- bench ... --> blocks found")
    validate_markers(text, blocks, readme)

    failures = []
    out, pos = [], 0
    for m in blocks:
        tool, tool_args = m.group("tool"), m.group("args") or ""
        want = block_output(tool_command(tool, tool_args, exe, root), root)
        if m.group("body") != want:
            failures.append((f"{tool} {tool_args}".strip(), m.group("body"), want))
        out.append(text[pos:m.start("body")] + want)
        pos = m.end("body")
    out.append(text[pos:])

    if args.update:
        new = "".join(out)
        if new != text:
            tmp = readme.with_suffix(".md.tmp")
            try:
                tmp.write_text(new, encoding="utf-8")
                tmp.replace(readme)
            except OSError as e:
                try:
                    tmp.unlink()
                except OSError:
                    pass
                fail(f"{readme}: cannot rewrite ({e.strerror or e})")
        print(f"readme_tables: {len(blocks)} blocks, {len(failures)} updated")
        return 0
    for cmd, have, want in failures:
        print(f"README block `{cmd}` differs from the command's output:")
        sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True), "README", "command"))
    print(f"readme_tables: {len(blocks)} blocks checked, {len(failures)} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
