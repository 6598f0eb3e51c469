"""Reading a file or folder a user names, or failing with one line (GitHub issue 40); writing outputs the same way.

Every script that reads a path given on its command line (or found by walking a folder given there) goes through
here, so a malformed input ends the same way everywhere: one line on stderr naming the file and the problem, exit
code 2, no traceback, nothing half-written. A number must be finite (NaN, Infinity, 1e999 or an integer beyond a
float's range is bad input, named by its key). Outputs too: an output that is, holds or lies inside an input is
refused (exit 2, `refuse_overlap`), and a write that fails (a full disk, a read-only folder, a folder where the file
goes, a closed or full stdout) ends with one line naming the file and the reason, exit code 1 (`replacing`,
`write_atomically`, `run`). Standard library only (no torch, no matplotlib); runs under any python3 from 3.8 on.
The scripts import it from the xsapy package, with scripts/ (their folder's parent) on sys.path:

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/: the xsapy package
    from xsapy import user_input

Usage:
    doc = user_input.load_json(path, "a bench.json")    # raises InputError: "PATH: not JSON (line 3 column 5: ...)"
    rows = user_input.need(doc, "lengths", path, "array") # raises InputError: "PATH: key lengths: expected ..."
    except user_input.InputError as e: user_input.fail("bench", e)   # "bench: error: ...", exit 2
    user_input.run("bench", main)   # main() with any InputError / OutputError (stdout's too) as one line
    ap = user_input.ArgumentParser("bench", description=...)  # argparse whose errors are one line, exit 2
"""
import argparse
import contextlib
import json
import math
import os
import stat
import sys

BAD_INPUT = 2  # the exit code of bad input, as xsa-inspect's
WRITE_FAILED = 1  # the exit code of an output that could not be written (the machine's problem, not the input's)


class InputError(Exception):
    """A user-named input cannot be used; str(e) is the one line to print, starting with the path."""
    code = BAD_INPUT


class OutputError(InputError):
    """An output could not be written (a full disk, a read-only file system, a folder in the file's place, stdout
    closed); str(e) names the file and the reason. An InputError with exit code 1, so every script's existing
    `except InputError` ends it with one line too."""
    code = WRITE_FAILED


def fail(prog, message, code=None):
    """Prints "PROG: error: MESSAGE" as one line on stderr and exits with `code` (default: the code of `message`
    when it is an InputError or OutputError, else 2: bad input)."""
    print(f"{prog}: error: {one_line(message)}", file=sys.stderr)
    sys.exit(code if code is not None else getattr(message, "code", BAD_INPUT))


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors (an unknown option, an option missing its value, "--steps x", a missing argument)
    are one line "NAME: error: MESSAGE (see --help)" on stderr and exit 2, as every other refusal of the scripts:
    argparse's own print the usage first, several lines. `name` is what the script's other errors start with
    (default: prog); --help prints argparse's full help, exit 0."""

    def __init__(self, name=None, **kwargs):
        super().__init__(**kwargs)
        self.name = name or self.prog

    def error(self, message):
        fail(self.name, f"{message} (see --help)", BAD_INPUT)


def one_line(message):
    """The message with its line breaks folded into spaces (an error is one line however it was built)."""
    return " ".join(str(message).split("\n")).strip()


def kind_of(mode):
    """What a non-regular file is, as an error message says it."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def os_problem(path, e):
    """An OSError of opening or reading `path` as one message naming it."""
    if isinstance(e, FileNotFoundError):
        return f"{path}: no such file"
    if isinstance(e, PermissionError):
        return f"{path}: not readable (permission denied)"
    return f"{path}: cannot read ({e.strerror or e})"


def read_bytes(path):
    """The bytes of the regular file `path`. A folder, FIFO, socket or device is refused without blocking: the
    open is non-blocking and the opened file is checked (fstat) before any read, so a named pipe with no writer
    cannot hang the script and a file swapped between a check and the open is still caught."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise InputError(os_problem(path, e)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"{path}: is {kind_of(mode)}, expected a regular file")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as e:
        raise InputError(os_problem(path, e)) from None
    finally:
        os.close(fd)


def read_text(path, what="text"):
    """The UTF-8 text of the regular file `path` (see read_bytes), line ends made "\n" as open() in text mode
    makes them; bytes that are not UTF-8 are an InputError."""
    data = read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason}), expected {what}") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def load_json(path, what="a JSON file"):
    """The parsed JSON of the regular file `path`, or an InputError naming it: not a regular file, unreadable,
    empty, not UTF-8, not JSON (with line and column), or nested too deeply for Python's parser."""
    text = read_text(path, what)
    if not text.strip():
        raise InputError(f"{path}: empty file, expected {what}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON (line {e.lineno} column {e.colno}: {e.msg}), expected {what}") from None
    except RecursionError:
        raise InputError(f"{path}: not usable JSON (nested too deeply), expected {what}") from None
    except ValueError as e:
        raise InputError(f"{path}: not JSON ({e}), expected {what}") from None


def is_regular_file(path):
    """True for a regular file (or a link to one); a FIFO, folder, socket or device is False (never opened)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def each_file_once(paths):
    """`paths` in their order, a file reached twice (the same path, or through a link) kept at its first."""
    seen, unique = set(), []
    for path in paths:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def json_type(value):
    """The JSON name of a parsed value's type, for messages ("got string")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_finite(value):
    """True for a number a float holds finitely: NaN, +-Infinity (Python's json reads NaN, Infinity and 1e999
    as such) and integers beyond a float's range (a 400-digit integer: float() of it raises OverflowError) are
    not, so a formatted or divided value can never raise or print "inf"."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


KINDS = {
    "number": lambda v: _is_number(v) and is_finite(v),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool) and is_finite(v),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def check(value, where, kind, nullable=False, at_least=None):
    """`value` itself when it is of JSON `kind` ("number", "integer", "string", "array", "object"; or null when
    nullable) and, for a number with `at_least`, not below it; else an InputError "WHERE: expected a KIND, got
    TYPE" or "WHERE: expected a KIND >= AT_LEAST, got VALUE" (a negative step count or wall time)."""
    if (value is None and nullable) or KINDS[kind](value):
        if value is not None and at_least is not None and value < at_least:
            raise InputError(f"{where}: expected a {kind} >= {at_least}, got {value!r}")
        return value
    if kind in ("number", "integer") and _is_number(value) and not is_finite(value):
        got = "an integer beyond a float's range" if isinstance(value, int) else repr(value)  # nan, inf, -inf
        raise InputError(f"{where}: expected a finite {kind}, got {got}")
    article = "an" if kind[0] in "aeiou" else "a"
    raise InputError(f"{where}: expected {article} {kind}, got {json_type(value)}")


def inner(where, key):
    """Where a key of the object at `where` is: "results/x.json" + "runs" -> "results/x.json: runs",
    "results/x.json: runs[0]" + "final" -> "results/x.json: runs[0].final"."""
    return f"{where}.{key}" if ": " in str(where) else f"{where}: {key}"


def need(obj, key, where, kind=None, nullable=False, at_least=None):
    """obj[key] of a parsed JSON object, checked: `where` names the object (the file, then the path inside it:
    "results/x.json: runs[0]"); a non-object, a missing key or a value of another kind (or, with at_least, a
    number below it) is an InputError."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected an object, got {json_type(obj)}")
    if key not in obj:
        raise InputError(f"{where}: missing key {key}")
    return obj[key] if kind is None else check(obj[key], inner(where, key), kind, nullable, at_least)


def ensure_folder(path, what="output folder"):
    """Creates the folder `path` if missing; an existing file there, or a folder that cannot be made, is an
    InputError naming it."""
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        raise InputError(f"{path}: exists and is not a folder ({what})") from None
    except OSError as e:
        raise InputError(f"{path}: cannot create the {what} ({e.strerror or e})") from None


def _real(path):
    return os.path.realpath(os.fspath(path))


def _within(path, folder):
    """True when the real path `path` lies strictly inside the real path `folder`."""
    return path != folder and os.path.commonpath([path, folder]) == folder


def refuse_overlap(output, inputs, what="--out"):
    """An InputError (exit 2) when the output `output` is one of `inputs`, lies inside one or holds one, compared
    as real paths (links resolved, so a link to an input is that input): writing it could replace or mix with
    what is being read. Nothing is created or read."""
    out = _real(output)
    for given in inputs:
        source = _real(given)
        relation = ("is" if out == source else "lies inside" if _within(out, source)
                    else "holds" if _within(source, out) else None)
        if relation:
            raise InputError(f"{output}: {what} {relation} the input {given}; an output never overwrites an input "
                             "(name another path)")


def write_problem(path, e):
    """An OSError of writing `path` as one message naming it (a full disk, a read-only folder, ...)."""
    return f"{path}: cannot write ({e.strerror or e})"


@contextlib.contextmanager
def replacing(path):
    """Writes `path` atomically: yields a temporary name in the same folder (same extension, so writers that pick
    a format by it still do), renamed onto `path` when the block ends normally and removed when it raises, so a
    reader never sees a half-written file. An OSError of the block or of the rename (a full disk, a read-only
    folder, a folder at `path`) is an OutputError naming `path`."""
    folder, name = os.path.split(path)
    stem, ext = os.path.splitext(name)
    tmp = os.path.join(folder, f".{stem}.tmp{os.getpid()}{ext}")
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as e:
        raise OutputError(write_problem(path, e)) from None
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)


def write_atomically(path, text):
    """Writes the text `text` (UTF-8) to `path` through `replacing`: all of it or, with an OutputError, nothing."""
    with replacing(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)


class _Stdout:
    """sys.stdout whose failed write or flush (a full disk: > /dev/full; a reader gone: | head) is an OutputError
    naming stdout, not an OSError traceback."""

    def __init__(self, stream):
        self._stream = stream

    def _guarded(self, call, *args):
        try:
            return call(*args)
        except OSError as e:
            raise OutputError(write_problem("stdout", e)) from None

    def write(self, text):
        return self._guarded(self._stream.write, text)

    def flush(self):
        return self._guarded(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _drop_stdout():
    """Points fd 1 at /dev/null, so the interpreter's last flush of a broken stdout adds no second message."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.__stdout__.fileno())
        os.close(null)
    sys.stdout = sys.__stdout__


def run(prog, main, *args):
    """Runs a script's main(*args) and exits with its return value; an InputError or OutputError that reaches here
    (stdout's included: what is printed is flushed before the exit) ends as one line "PROG: error: ...", exit 2
    or 1 (the error's code), never a traceback."""
    if sys.stdout is not None:  # None: started with stdout closed, where print() writes nothing
        sys.stdout = _Stdout(sys.stdout)
    code = None
    said = False  # whether the script already printed its one line on stderr (fail() ends with SystemExit)
    try:
        try:
            code = main(*args)
        except SystemExit as e:  # a script's own fail(): its line is printed; stdout is still flushed below
            code = e.code
            said = code not in (None, 0)
        if sys.stdout is not None:
            sys.stdout.flush()
    except InputError as e:
        _drop_stdout()
        if said:  # the script failed already and said why on stderr; stdout failing too adds nothing
            sys.exit(code)
        # What the script printed (its result, or why it failed with a non-zero return) went nowhere: say so.
        print(f"{prog}: error: {one_line(e)}", file=sys.stderr)
        sys.exit(code if code not in (None, 0) else e.code)
    sys.exit(code)
