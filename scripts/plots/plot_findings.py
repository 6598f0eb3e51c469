#!/usr/bin/python3
"""Figures for docs/findings.md, drawn from xsa-inspect's own JSON (the numbers of the tables, not a
second implementation of the statistics).

Usage: scripts/plots/plot_findings.py PATH... --out DIR [--baseline RUN] [--lambda 1,0.5] [--only NAME,...]
                                [--inspect build/xsa-inspect]

Runs `xsa-inspect PATH... --format json` (scripts/xsapy/results.py) and writes into DIR every figure whose section
has rows. What each figure shows is written once, in the docstring of the module that draws it
(scripts/xsapy/figures/improvement.py and bias.py); --help lists them from there.
--inspect: default build/xsa-inspect, or $XSA_BUILD/xsa-inspect. Exit code 2 with one line on bad input (xsa-inspect's
own exit code when it fails; DIR being, holding or lying inside a PATH included: an output never overwrites an
input), 1 with one line when a figure cannot be written (a full disk, a read-only folder). Uses Debian's
python3-matplotlib (/usr/bin/python3).
"""
import argparse
import os
import sys

try:
    import matplotlib  # noqa: F401
except ImportError:
    sys.exit(f"plot_findings: error: {sys.executable} has no matplotlib; run it with /usr/bin/python3 "
             "(Debian's python3-matplotlib: apt-get install python3-matplotlib)")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/: the xsapy package
from xsapy import user_input  # noqa: E402  (a user-named path checked, or one line and exit 2)
from xsapy import results  # noqa: E402  (the tool's outputs, read the one way)
from xsapy.figures import bias, common, improvement  # noqa: E402

FIGURES = (improvement.improvement_vs_budget, improvement.eval_delta_curve, improvement.delta_by_position,
           improvement.improvement_vs_lambda, improvement.improvement_vs_seq_len, bias.bias_init_vs_end,
           bias.bias_by_depth, improvement.improvement_vs_size, improvement.improvement_vs_lr,
           improvement.early_val_loss, improvement.dynamics_over_training, improvement.best_per_setup)


def fail(message, code=None):
    user_input.fail("plot_findings", message, code)


def main():
    ap = user_input.ArgumentParser("plot_findings", description=__doc__.split("\n")[0],
                                   epilog=common.figure_help(FIGURES),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", help="results.json files or folders, as for xsa-inspect")
    ap.add_argument("--out", required=True, help="folder for the PNG files (created if missing)")
    ap.add_argument("--only", help="only these figures, comma-separated names without .png (e.g. improvement_vs_lambda)")
    ap.add_argument("--lambda", dest="lambdas", help="only these variants, as xsa-inspect --lambda (e.g. 1,0.5)")
    ap.add_argument("--baseline", help="compare with this run instead of SA, as xsa-inspect --baseline (e.g. xsa)")
    ap.add_argument("--inspect", default=None,
                    help="xsa-inspect executable (default: build/xsa-inspect, or $XSA_BUILD/xsa-inspect)")
    args = ap.parse_args()
    try:
        user_input.refuse_overlap(args.out, args.paths)
        exe = results.executable("xsa-inspect", args.inspect)
    except user_input.InputError as e:
        fail(e)
    names = [f.__name__ for f in FIGURES]
    only = args.only.split(",") if args.only else names
    for name in only:
        if name not in names:
            fail(f"--only '{name}': not a figure, expected one of {', '.join(names)}")
    extra = (["--baseline", args.baseline] if args.baseline else []) + (["--lambda", args.lambdas] if args.lambdas else [])
    try:
        doc = results.inspect(args.paths, None, exe, extra)
        user_input.ensure_folder(args.out, "--out folder")
    except user_input.InputError as e:
        fail(e, getattr(e, "code", user_input.BAD_INPUT))
    for figure in FIGURES:
        if figure.__name__ in only:
            try:
                written = figure(doc, args.out)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError) as e:
                # The last line of defence: xsa-inspect checked the files, so this is a value no check foresaw
                # (ArithmeticError: a division by zero or an overflow). A figure that cannot be written is an
                # OutputError, which user_input.run prints as one line (exit 1).
                fail(f"{', '.join(args.paths)}: cannot draw {figure.__name__}.png from xsa-inspect's JSON "
                     f"({type(e).__name__}: {e})")
            if not isinstance(written, common.Skip):
                print(f"plot_findings: wrote {written}")
    return 0


if __name__ == "__main__":
    user_input.run("plot_findings", main)
