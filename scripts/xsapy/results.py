"""The one way Python reads xsa's outputs: xsa-inspect's tables as JSON, results.json files and log.jsonl.

Every script, test and the notebook that needs the tool's numbers comes through here: `inspect` runs
`xsa-inspect --format json` (the tables' own grouping, statistics and CIs: no second statistics in Python) and
returns its sections; `experiments` reads the results.json files themselves for what no section gives (the eval
and bias points along training), found by xsa-inspect's own discovery rule (`results_files`); `read_log` reads a
run's log.jsonl (the train loss per logged step); `bias_metrics` names the per-layer bias metrics as the tool's
output carries them (no copied list). Bad input is an `InputError` whose text is one line naming the file;
scripts print it with `user_input.fail`. Standard library only (with xsapy/user_input.py); python3 >= 3.8.

    from xsapy import results                   # with scripts/ on sys.path
    rows = results.inspect(["results/budget_300"], "by_lambda")["by_lambda"]
    print([(r["lambda"], r["mean_improvement_pct"]) for r in rows])

The executables are build/<name> of this repository, or $XSA_BUILD/<name> when XSA_BUILD is set, or the path a
caller passes (`exe`, a script's --inspect).
"""
import json
import os
import stat
import subprocess
from typing import NamedTuple, Optional

from . import user_input
from .user_input import InputError, check, need

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository
SCHEMA = "xsa.results/1"
# The fields of a layer's bias record that are not metrics (src/xsa/records/results.cpp writes "layer", then every
# metric of kBiasMetrics, then "lambda_per_head" for learned and gate variants).
NOT_METRICS = ("layer", "lambda_per_head", "max_logit", "attn_entropy", "attn_sink")  # the last three: attention dynamics
KIND_NUMBER = user_input.KINDS["number"]


class InspectError(InputError):
    """xsa-inspect could not be run or failed; str(e) is one line, `code` the exit code to end with (xsa-inspect's
    own when it failed: 2 for bad input, 1 for a runtime failure)."""

    def __init__(self, message, code=user_input.BAD_INPUT):
        super().__init__(message)
        self.code = code


def _paths(paths):
    """A path or a list of paths, as strings."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return [os.fspath(p) for p in paths]


def _sections(sections):
    """None (every section), "a,b" or ["a", "b"] -> None or ["a", "b"]."""
    if sections is None:
        return None
    if isinstance(sections, str):
        sections = sections.split(",")
    return [s.strip() for s in sections if s.strip()]


# ---- the executables -----------------------------------------------------------------------------------------

def build_folder():
    """$XSA_BUILD, else this repository's build/."""
    return os.environ.get("XSA_BUILD") or os.path.join(ROOT, "build")


def executable(name="xsa-inspect", exe=None):
    """The path of a built tool (`exe` when given, else build_folder()/name), checked to be an executable regular
    file, or an InspectError naming it."""
    path = os.fspath(exe) if exe else os.path.join(build_folder(), name)
    if not os.path.exists(path):
        raise InspectError(f"{path}: {name} not built (run scripts/build.sh, or name another build: XSA_BUILD, "
                           "a script's --inspect)")
    if not user_input.is_regular_file(path) or not os.access(path, os.X_OK):
        raise InspectError(f"{path}: not an executable file (expected the {name} executable)")
    return path


# ---- xsa-inspect -------------------------------------------------------------------------------------------

def check_paths(paths):
    """Each path exists and is a folder or a regular file (stat only: a FIFO is refused, never opened). What is
    inside is xsa-inspect's to check: it names the bad file in one line."""
    for path in _paths(paths):
        try:
            mode = os.stat(path).st_mode
        except OSError as e:
            raise InputError(user_input.os_problem(path, e).replace("no such file", "no such file or folder")) from None
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            raise InputError(f"{path}: is {user_input.kind_of(mode)}, expected a results.json or a folder")


def command(args, fmt="json", exe=None):
    """The argument list of `xsa-inspect ARGS --format FMT` (ARGS: paths and options, as the command line has
    them)."""
    return [executable("xsa-inspect", exe), *(os.fspath(a) for a in args), "--format", fmt]


def inspect_text(paths, sections=None, exe=None, extra_args=(), fmt="markdown"):
    """What `xsa-inspect PATHS EXTRA_ARGS --format FMT [--section S,...]` prints (markdown, csv or json), or an
    InspectError: "xsa-inspect: <its one-line error>" (naming the bad file) with its exit code."""
    paths, sections = _paths(paths), _sections(sections)
    check_paths(paths)
    cmd = command([*paths, *extra_args], fmt, exe)
    if sections:
        cmd += ["--section", ",".join(sections)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", stdin=subprocess.DEVNULL)
    except OSError as e:
        raise InspectError(f"{cmd[0]}: cannot run xsa-inspect ({e.strerror or e})") from None
    if proc.returncode != 0:
        # xsa-inspect's own one-line error names the bad file (the last line, should it have printed more)
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        last = lines[-1].strip().replace("xsa-inspect: error: ", "", 1) if lines else f"exit {proc.returncode}"
        raise InspectError(f"xsa-inspect: {last}", proc.returncode if proc.returncode > 0 else user_input.BAD_INPUT)
    return proc.stdout


def inspect(paths, sections=None, exe=None, extra_args=()):
    """xsa-inspect's tables as data: {section: [row, ...]} of `xsa-inspect PATHS EXTRA_ARGS --format json
    [--section S,...]` (sections: "a,b", a list, or None for all), each row a dict of the table's columns.
    An InspectError (one line) when it cannot run, fails, or prints something else than those sections."""
    sections = _sections(sections)
    text = inspect_text(paths, sections, exe, extra_args, fmt="json")
    exe = exe or executable("xsa-inspect")
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise InspectError(f"{exe}: --format json printed no JSON ({e})") from None
    if not isinstance(doc, dict):
        raise InspectError(f"{exe}: --format json printed {user_input.json_type(doc)}, expected an object of sections")
    doc.pop("schema", None)
    for section in sections or doc:
        if not isinstance(doc.get(section), list):
            raise InspectError(f"{exe}: --format json printed no {section} section (an array of rows)")
    return doc


# ---- results.json and log.jsonl -----------------------------------------------------------------------------

def results_files(paths):
    """The results.json files under `paths`, by xsa-inspect's rule (src/xsa/report/discovery.cpp): a path that is
    not a folder is read as a results.json whatever its name; a folder is searched recursively (folder links not
    followed, unreadable folders skipped) for regular files named results.json; a file reached twice counts once;
    sorted by path. An InputError for a missing path, or when no file is found."""
    paths = _paths(paths)
    found = []
    for path in paths:
        if not os.path.exists(path):  # missing, or a link to nothing
            raise InputError(f"{path}: no such file or folder")
        if not os.path.isdir(path):
            found.append(path)
            continue
        for folder, _, names in os.walk(path):
            if "results.json" in names and user_input.is_regular_file(os.path.join(folder, "results.json")):
                found.append(os.path.join(folder, "results.json"))
    unique = user_input.each_file_once(found)
    if not unique:
        raise InputError(f"{', '.join(paths)}: no results.json found")
    return sorted(unique, key=lambda f: _path_parts(f))


def _path_parts(path):
    """A path's components, as std::filesystem::path compares them (component by component)."""
    drive, rest = os.path.splitdrive(path)
    parts = [p for p in rest.split(os.sep) if p]
    return (drive, rest.startswith(os.sep), parts)


def bias_metrics(source):
    """The per-layer bias metric keys (sorted), as the tool's output carries them: from a row of xsa-inspect's
    bias or bias_init section (its base_<key> columns with a base_<key>_ci beside them), from a layer record of
    results.json (its numeric fields other than "layer"), or from a whole results.json (every layer of every run)."""
    if "runs" in source:
        keys = set()
        for run in source["runs"]:
            for point in run.get("bias") or []:
                for layer in point["layers"]:
                    keys |= set(bias_metrics(layer))
        return tuple(sorted(keys))
    if any(k.startswith("base_") and k.endswith("_ci") for k in source):
        return tuple(sorted(k[len("base_"):-len("_ci")] for k in source
                            if k.startswith("base_") and k.endswith("_ci") and k[:-len("_ci")] in source))
    return tuple(sorted(k for k, v in source.items() if k not in NOT_METRICS and KIND_NUMBER(v)))


def read_results(path):
    """One results.json (schema xsa.results/1), parsed, with the fields the readers use checked (the schema, the
    config's data.seq_len, every run's variant and final.val_loss, the eval points' step and val_loss, the bias
    points' step and layers, each layer's number and the metrics of the file's first layer): an InputError
    naming the file and the field rather than a KeyError later."""
    doc = user_input.load_json(path, "a results.json")
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a results.json (a JSON object), got {user_input.json_type(doc)}")
    if doc.get("schema") != SCHEMA:
        raise InputError(f'{path}: key schema: expected "{SCHEMA}"')
    config = need(doc, "config", path, "object")
    need(need(config, "data", path + ": config", "object"), "seq_len", path + ": config.data", "number")
    metrics = None  # the first layer's, which every layer of the file must have
    for i, run in enumerate(need(doc, "runs", path, "array")):
        where = f"{path}: runs[{i}]"
        need(run, "variant", where, "string")
        need(need(run, "final", where, "object"), "val_loss", where + ".final")
        for j, point in enumerate(check(run.get("eval") or [], where + ".eval", "array")):
            for key in ("step", "val_loss"):
                need(point, key, f"{where}.eval[{j}]", "number")
        for j, point in enumerate(check(run.get("bias") or [], where + ".bias", "array")):
            need(point, "step", f"{where}.bias[{j}]", "number")
            for k, layer in enumerate(need(point, "layers", f"{where}.bias[{j}]", "array")):
                at = f"{where}.bias[{j}].layers[{k}]"
                need(layer, "layer", at, "integer")
                if metrics is None:
                    metrics = bias_metrics(layer)
                for key in metrics:
                    need(layer, key, at, "number")
    return doc


class Experiment(NamedTuple):
    """One results.json: its path, its parsed document, and (when asked for) the log.jsonl beside it."""
    path: str
    doc: dict
    log: Optional[dict] = None

    @property
    def seq_len(self):
        return int(self.doc["config"]["data"]["seq_len"])


def experiments(paths, logs=False):
    """The results.json files under `paths` (results_files), each read and checked (read_results); with logs=True
    each with the log.jsonl of its folder (read_log: {} when there is none)."""
    out = []
    for f in results_files(paths):
        doc = read_results(f)
        out.append(Experiment(f, doc, read_log(os.path.join(os.path.dirname(f), "log.jsonl")) if logs else None))
    return out


def read_log(path):
    """{run: [(step, loss), ...]} from a log.jsonl, in file order. A missing file is an empty log; lines that are
    not JSON (one being written, say), not UTF-8, nested too deeply or without a run and a finite numeric step and
    loss (a diverged run's NaN cannot be drawn) are skipped. A log.jsonl that is there but is no regular file (a
    FIFO would block the read) or cannot be read is an InputError naming it."""
    out = {}
    if not os.path.exists(path):  # missing, or a link to nothing
        return out
    for line in user_input.read_bytes(os.fspath(path)).splitlines():
        try:
            rec = json.loads(line)
            step, loss, run = rec["step"], rec["loss"], rec["run"]
            if not (KIND_NUMBER(step) and KIND_NUMBER(loss)):
                continue
            out.setdefault(run, []).append((step, loss))
        except (ValueError, KeyError, TypeError, RecursionError):
            continue
    return out
