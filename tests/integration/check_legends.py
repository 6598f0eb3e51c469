#!/usr/bin/python3
"""The trend notes in the legends of the length and budget figures (scripts/xsapy/figures/improvement.py, drawn by
scripts/plots/plot_findings.py and scripts/plots/plot_results.py) against hand-computed trends, the lines of two
attention implementations kept apart, and how the lr and early-loss figures' legends tell comparisons apart.

Usage: check_legends.py XSA_INSPECT FIXTURES (tests/fixtures/report: its lengths/ and budget/)

figures/improvement.py groups the by_seq_len rows into lines itself (length_series) and looks each line's trend
up in xsa-inspect's seq_len_trend section by its design string (trend_text); the two must group and spell designs the
same way, or a legend silently loses its trend. The fixtures' improvements (make_fixtures.py) give, by hand:
  lengths, 4,096 tokens/step (T 64, 128, 256): per-seed slopes −1 and −1.5 -> mean −1.25, sd 0.353553,
      SEM 0.25, t(0.975, 1) = 12.7062 -> CI [−4.4265, +1.9265]
  lengths, batch 32 (T 64, 128, 256): per-seed slopes +1 and +1.25 -> mean +1.125, SEM 0.125
      -> CI [−0.4633, +2.7133]
  budget, XSA at 100 and 400 steps (log2 apart by 2): seed 1: 100 (2.00 − 1.95) / 2.00 = 2.5% -> 1.25%, slope
      −0.625; seed 2: 2.857143% -> 0.609756%, slope −1.123693; mean −0.874347, SEM 0.249347 -> CI [−4.0426, +2.2939]
Exit code 0 when every check holds, 1 with the failed checks listed.
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
from xsapy.figures import improvement  # noqa: E402  (the module under test; it needs matplotlib: /usr/bin/python3)

EXPECTED = {  # design -> (T of the line, slope, CI low, CI high)
    "4096 tokens/step": ([64, 128, 256], -1.25, -4.4265, 1.9265),
    "batch 32": ([64, 128, 256], 1.125, -0.4633, 2.7133),
}


def inspect_json(inspect, folder):
    return json.loads(subprocess.run([inspect, folder, "--format", "json"], capture_output=True, text=True,
                                     check=True).stdout)


def check_note(check, what, legend, unit, want):
    """The legend ends with '<slope> pp [<low>, <high>] per doubling of <unit>, n=2' near the hand values."""
    m = re.search(r"\n  ([+-]\d+\.\d\d) pp \[([+-]\d+\.\d\d), ([+-]\d+\.\d\d)\] per doubling of " + unit + ", n=2$",
                  legend)
    check(m is not None, f"{what}: legend without its trend: {legend!r}")
    if m:
        # The legend prints two decimals: each number within half a unit of the last digit (+ float slack).
        for name, value, expected in zip(("slope", "CI low", "CI high"), map(float, m.groups()), want):
            check(abs(value - expected) <= 0.0051, f"{what}: {name} {value} in the legend, {expected} by hand")


def main():
    inspect, fixtures = sys.argv[1], pathlib.Path(sys.argv[2])
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    doc = inspect_json(inspect, str(fixtures / "lengths"))
    lines = improvement.length_series(doc["by_seq_len"])
    check(sorted(d for _, d, _ in lines) == sorted(EXPECTED), f"designs {[d for _, d, _ in lines]}")
    for label, design, rows in lines:
        if design not in EXPECTED:
            continue
        lengths, slope, low, high = EXPECTED[design]
        check([r["seq_len"] for r in rows] == lengths, f"{design}: lengths {[r['seq_len'] for r in rows]}")
        check_note(check, design, label + improvement.trend_text(doc, rows[0], design), "T", (slope, low, high))
        shown = {"4096 tokens/step": "4,096 tokens/step", "batch 32": "batch 32 fixed"}[design]
        check(label.startswith("XSA (λ=1), 300 steps, " + shown), f"{design}: label {label!r}")

    # The same rows under a second attention implementation: their own lines, each labelled with its
    # implementation, and a legend takes the trend of its own implementation only (here none for "fused").
    fused = [dict(r, attention_impl="fused") for r in doc["by_seq_len"]]
    mixed = improvement.length_series(doc["by_seq_len"] + fused)
    check(len(mixed) == 2 * len(lines), f"mixed implementations: {len(mixed)} lines, expected {2 * len(lines)}")
    for label, design, rows in mixed:
        impl = rows[0]["attention_impl"]
        check(all(r["attention_impl"] == impl for r in rows), f"{label!r}: a line mixes implementations")
        check(f"{impl} attention" in label, f"{label!r}: the label does not name {impl} attention")
        note = improvement.trend_text(doc, rows[0], design)
        check((note != "") == (impl == "explicit" and design in EXPECTED),
              f"{label!r}: trend note {note!r} from another implementation's trend")

    budget = inspect_json(inspect, str(fixtures / "budget"))
    xsa = [r for r in budget["by_budget"] if r["lambda"] == "1"]
    check(len(xsa) == 2, f"budget: {len(xsa)} by_budget rows for λ=1, expected 100 and 400 steps")
    if xsa:
        check_note(check, "budget", improvement.budget_trend_text(budget, xsa[0]), "steps",
                   (-0.874347, -4.0426, 2.2939))
    # Comparisons told apart in a legend (improvement_vs_lr, early_val_loss): by the setup alone when the models
    # differ only in it, by the whole model otherwise, by the budget only when budgets differ.
    setups = [("sa", "1", "2L d128 4×32", 600), ("sa", "1", "2L d128 4×32 (learned pos, no emb norm)", 600)]
    check([improvement.key_suffix(setups, k) for k in setups] == [", paper's setup", ", learned pos, no emb norm"],
          f"setup labels {[improvement.key_suffix(setups, k) for k in setups]}")
    sizes = [("sa", "1", "2L d128 4×32", 600), ("sa", "1", "6L d256 8×32 (QK-norm)", 300)]
    check([improvement.key_suffix(sizes, k) for k in sizes] ==
          [", 2L d128 4×32, 600 steps", ", 6L d256 8×32 (QK-norm), 300 steps"],
          f"model labels {[improvement.key_suffix(sizes, k) for k in sizes]}")
    check(improvement.key_suffix(setups[:1], setups[0]) == "", "one comparison: no suffix")
    # The setup of a model column (best_per_setup's categories), as xsa-inspect writes it.
    check(improvement.split_setup("2L d128 4×32 (learned pos, no emb norm)") == ("2L d128 4×32", "learned pos, no emb norm"),
          "split_setup with a setup")
    check(improvement.split_setup("4L d192 6×32") == ("4L d192 6×32", "paper's setup"), "split_setup of the paper's")
    # best_per_setup with a setup whose selection has one seed (no held-out Δ, no CI; a sweep's first points)
    # beside one with three: drawn, the one-seed setup without a Δ point.
    def selection(model, n, delta):
        return {"baseline": "sa", "lambda": "1", "model": model, "steps": 600, "seq_len": 128, "n": n,
                "bracketed": "both", "best_lr_baseline": 0.003, "best_lr_variant": 0.01, "baseline_loss": 3.3,
                "variant_loss": 3.1, "held_out_delta": delta, "held_out_ci_low": delta and delta - 0.02,
                "held_out_ci_high": delta and delta + 0.02}
    doc = {"lr_selection": [selection("2L d128 4×32", 3, -0.2), selection("2L d128 4×32 (QK-norm)", 1, None)]}
    with tempfile.TemporaryDirectory() as out:
        try:
            path = improvement.best_per_setup(doc, out)
            check(pathlib.Path(path).is_file(), f"best_per_setup wrote no file: {path}")
        except TypeError as e:
            check(False, f"best_per_setup with a one-seed selection: {e}")
    for f in failures:
        print(f"check_legends: {f}", file=sys.stderr)
    if not failures:
        print(f"check_legends: {len(lines)} length lines and the budget line, trends as computed by hand")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
