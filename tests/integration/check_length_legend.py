#!/usr/bin/python3
"""The length figure's lines and legend (scripts/plot_findings.py) against hand-computed trends.

Usage: check_length_legend.py XSA_INSPECT FIXTURE_DIR (tests/fixtures/report/lengths)

plot_findings groups the by_seq_len rows into lines itself (length_series) and looks each line's trend up in
xsa-inspect's seq_len_trend section by its design string (trend_text); the two must group and spell designs the
same way, or a legend silently loses its trend. The fixture's improvements (make_fixtures.py) give, by hand:
  4,096 tokens/step (T 64, 128, 256): per-seed slopes −1 and −1.5 -> mean −1.25, sd 0.353553, SEM 0.25,
      t(0.975, 1) = 12.7062 -> CI [−4.4265, +1.9265]
  batch 32 (T 64, 128, 256):          per-seed slopes +1 and +1.25 -> mean +1.125, SEM 0.125 -> CI [−0.4633, +2.7133]
Exit code 0 when every check holds, 1 with the failed checks listed.
"""
import json
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
import plot_findings  # noqa: E402  (the module under test; it needs matplotlib: /usr/bin/python3)

EXPECTED = {  # design -> (T of the line, slope, CI low, CI high)
    "4096 tokens/step": ([64, 128, 256], -1.25, -4.4265, 1.9265),
    "batch 32": ([64, 128, 256], 1.125, -0.4633, 2.7133),
}


def main():
    inspect, fixture = sys.argv[1], sys.argv[2]
    doc = json.loads(subprocess.run([inspect, fixture, "--format", "json"], capture_output=True, text=True,
                                    check=True).stdout)
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    lines = plot_findings.length_series(doc["by_seq_len"])
    check(sorted(d for _, d, _ in lines) == sorted(EXPECTED), f"designs {[d for _, d, _ in lines]}")
    for label, design, rows in lines:
        if design not in EXPECTED:
            continue
        lengths, slope, low, high = EXPECTED[design]
        check([r["seq_len"] for r in rows] == lengths, f"{design}: lengths {[r['seq_len'] for r in rows]}")
        legend = label + plot_findings.trend_text(doc, rows[0], design)
        m = re.search(r"\n  ([+-]\d+\.\d\d)% \[([+-]\d+\.\d\d), ([+-]\d+\.\d\d)\] per doubling of T, n=2$", legend)
        check(m is not None, f"{design}: legend without its trend: {legend!r}")
        if m:
            got = [float(g) for g in m.groups()]
            # The legend prints two decimals: each number within half a unit of the last digit (+ float slack).
            for name, value, want in zip(("slope", "CI low", "CI high"), got, (slope, low, high)):
                check(abs(value - want) <= 0.0051, f"{design}: {name} {value} in the legend, {want} by hand")
        shown = {"4096 tokens/step": "4,096 tokens/step", "batch 32": "batch 32 fixed"}[design]
        check(label.startswith("XSA (λ=1), 300 steps, " + shown), f"{design}: label {label!r}")
    for f in failures:
        print(f"check_length_legend: {f}", file=sys.stderr)
    if not failures:
        print(f"check_length_legend: {len(lines)} lines, trends as computed by hand")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
