"""Every command that moved out of scripts/'s top level (docs/development.md "Scripts") still answers at its old
path: run there, with any arguments, it prints one line on stderr naming the new path, which exists and is the
same kind of file, and exits 2 without doing anything else (nothing on stdout, no file written)."""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
MARK = 'Moved: this path only says where the command is now (docs/development.md "Scripts").'


def main():
    stubs = sorted(p for p in SCRIPTS.iterdir() if p.is_file() and MARK in p.read_text(errors="replace"))
    failures = []
    if not stubs:
        failures.append("no moved-command stubs found in scripts/")
    for stub in stubs:
        with tempfile.TemporaryDirectory() as cwd:
            cmd = (["bash", str(stub)] if stub.suffix == ".sh" else [sys.executable, str(stub)]) + ["--help", "x"]
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=30)
            written = os.listdir(cwd)
        lines = [line for line in p.stderr.splitlines() if line.strip()]
        m = re.fullmatch(rf"scripts/{re.escape(stub.name)} moved to (scripts/[a-z]+/{re.escape(stub.name)}): .*",
                         lines[0]) if len(lines) == 1 else None
        if p.returncode != 2 or m is None or p.stdout or written:
            failures.append(f"{stub.name}: exit {p.returncode}, stderr {p.stderr!r}, stdout {p.stdout!r}, wrote {written}")
            continue
        target = ROOT / m.group(1)
        if not target.is_file() or MARK in target.read_text(errors="replace"):
            failures.append(f"{stub.name}: names {m.group(1)}, which is not the moved command")
    for f in failures:
        print("FAIL", f)
    print(f"check_moved_scripts: {len(stubs)} moved commands, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
