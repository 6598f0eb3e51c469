#!/usr/bin/python3
"""Plots for xsa results (schema xsa.results/1): the same inputs as xsa-inspect.

Usage: scripts/plots/plot_results.py PATH... --out DIR [--inspect build/xsa-inspect]

PATH is a results.json file or a folder searched recursively for results.json (a sweep folder, shards
included), as for xsa-inspect. Writes into DIR the figures --help lists (each described once, in the
docstring of the module that draws it).
A front-end of scripts/xsapy/figures/: the curves come from the results.json files and log.jsonl (figures/curves.py),
the improvement plots from xsa-inspect's JSON (figures/improvement.py, the same figures scripts/plots/plot_findings.py
draws: the tables' own grouping, repeated-run handling and Student t CIs, so a bar is the table's interval).
--inspect names the executable (default build/xsa-inspect, or $XSA_BUILD/xsa-inspect).
A plot whose data is absent is skipped with a printed note. Exit code 2 with one line on bad input (DIR being,
holding or lying inside a PATH included: an output never overwrites an input), 1 with one line when a figure
cannot be written (a full disk, a read-only folder).

Uses Debian's python3-matplotlib (run with /usr/bin/python3; a pyenv python3 may lack matplotlib).
"""
import argparse
import os
import sys

try:
    import matplotlib  # noqa: F401
except ImportError:  # e.g. a pyenv python3 first on PATH: one line, not a traceback
    sys.exit("plot_results.py: error: %s has no matplotlib; run /usr/bin/python3 scripts/plots/plot_results.py "
             "(Debian's python3-matplotlib; apt-get install python3-matplotlib)" % sys.executable)

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/: the xsapy package
from xsapy import user_input  # noqa: E402  (a user-named file read, or one line and exit 2)
from xsapy import results  # noqa: E402  (the tool's outputs, read the one way)
from xsapy.figures import common, curves, improvement  # noqa: E402

# (figure, what it draws from: "files" = the results.json files and logs, "inspect" = xsa-inspect's sections)
FIGURES = ((curves.loss_curves, "files"), (improvement.improvement_vs_lambda, "inspect"),
           (improvement.improvement_vs_seq_len, "inspect"), (curves.bias_over_training, "files"))


def error(message):
    print("plot_results.py: error: %s" % user_input.one_line(message), file=sys.stderr)


def main(argv):
    parser = user_input.ArgumentParser("plot_results.py", description=__doc__.split("\n")[0],
                                       epilog=common.figure_help([figure for figure, _ in FIGURES]),
                                       formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", help="results.json files or folders (searched recursively)")
    parser.add_argument("--out", required=True, help="folder for the PNG files (created if missing)")
    parser.add_argument("--inspect", default=None, help="the xsa-inspect executable whose JSON the improvement "
                        "plots draw (default: build/xsa-inspect, or $XSA_BUILD/xsa-inspect)")
    args = parser.parse_args(argv)
    try:
        user_input.refuse_overlap(args.out, args.paths)
        data = {"files": results.experiments(args.paths, logs=True)}
        curves.check(data["files"])
        data["inspect"] = results.inspect(args.paths, None, args.inspect)
        user_input.ensure_folder(args.out, "--out folder")
    except user_input.InputError as e:
        error(e)
        return getattr(e, "code", user_input.BAD_INPUT)
    for fn, source in FIGURES:
        name = fn.__name__ + ".png"
        try:
            written = fn(data[source], args.out)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError) as e:
            # The last line of defence: the inputs were checked field by field, so this is a value no check foresaw
            # (ArithmeticError: a division by zero, or a finite number whose square or sum overflows). A figure that
            # cannot be written is an OutputError, which user_input.run prints as one line (exit 1).
            error("%s: cannot draw %s (%s: %s)" % (", ".join(args.paths), name, type(e).__name__, e))
            return 2
        if isinstance(written, common.Skip):
            print("skipped %s: %s" % (name, written))
        else:
            print("wrote %s" % written)
    return 0


if __name__ == "__main__":
    user_input.run("plot_results.py", main, sys.argv[1:])
