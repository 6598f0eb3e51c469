"""Reading a file or folder a user names, or failing with one line (GitHub issue 40).

Every script that reads a path given on its command line (or found by walking a folder given there) goes through
here, so a malformed input ends the same way everywhere: one line on stderr naming the file and the problem, exit
code 2, no traceback, nothing half-written. Standard library only (no torch, no matplotlib); runs under any
python3 from 3.8 on. The scripts import it from their own folder:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import user_input

Usage:
    doc = user_input.load_json(path, "a bench.json")    # raises InputError: "PATH: not JSON (line 3 column 5: ...)"
    rows = user_input.need(doc, "lengths", path, "array") # raises InputError: "PATH: key lengths: expected ..."
    except user_input.InputError as e: user_input.fail("bench", e)   # "bench: error: ...", exit 2
"""
import contextlib
import json
import os
import stat
import sys

BAD_INPUT = 2  # the exit code of bad input, as xsa-inspect's


class InputError(Exception):
    """A user-named input cannot be used; str(e) is the one line to print, starting with the path."""


def fail(prog, message, code=BAD_INPUT):
    """Prints "PROG: error: MESSAGE" as one line on stderr and exits with `code` (2: bad input)."""
    print(f"{prog}: error: {one_line(message)}", file=sys.stderr)
    sys.exit(code)


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


KINDS = {
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def check(value, where, kind, nullable=False):
    """`value` itself when it is of JSON `kind` ("number", "integer", "string", "array", "object"; or null when
    nullable), else an InputError "WHERE: expected a KIND, got TYPE"."""
    if (value is None and nullable) or KINDS[kind](value):
        return value
    article = "an" if kind[0] in "aeiou" else "a"
    raise InputError(f"{where}: expected {article} {kind}, got {json_type(value)}")


def inner(where, key):
    """Where a key of the object at `where` is: "results/x.json" + "runs" -> "results/x.json: runs",
    "results/x.json: runs[0]" + "final" -> "results/x.json: runs[0].final"."""
    return f"{where}.{key}" if ": " in str(where) else f"{where}: {key}"


def need(obj, key, where, kind=None, nullable=False):
    """obj[key] of a parsed JSON object, checked: `where` names the object (the file, then the path inside it:
    "results/x.json: runs[0]"); a non-object, a missing key or a value of another kind is an InputError."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected an object, got {json_type(obj)}")
    if key not in obj:
        raise InputError(f"{where}: missing key {key}")
    return obj[key] if kind is None else check(obj[key], inner(where, key), kind, nullable)


def ensure_folder(path, what="output folder"):
    """Creates the folder `path` if missing; an existing file there, or a folder that cannot be made, is an
    InputError naming it."""
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        raise InputError(f"{path}: exists and is not a folder ({what})") from None
    except OSError as e:
        raise InputError(f"{path}: cannot create the {what} ({e.strerror or e})") from None


@contextlib.contextmanager
def replacing(path):
    """Writes `path` atomically: yields a temporary name in the same folder (same extension, so writers that pick
    a format by it still do), renamed onto `path` when the block ends normally and removed when it raises, so a
    reader never sees a half-written file."""
    folder, name = os.path.split(path)
    stem, ext = os.path.splitext(name)
    tmp = os.path.join(folder, f".{stem}.tmp{os.getpid()}{ext}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)
