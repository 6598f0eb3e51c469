"""What the figure families share: matplotlib set up headless, the one way a figure is saved, and the labels of
variants and baselines as the figures spell them."""
import sys

import matplotlib

matplotlib.use("Agg")  # headless: no display on compute nodes
import matplotlib.pyplot as plt  # noqa: E402

from .. import user_input  # noqa: E402  (xsapy/user_input.py)

DPI = 110


def figure_help(figures):
    """--help's list of the given figure functions and what each draws, taken from the docstrings of the modules
    that draw them (each figure is described once, there): the entry "  NAME.png ..." and its indented lines."""
    lines = []
    for figure in figures:
        entry = None
        for line in sys.modules[figure.__module__].__doc__.splitlines():
            if line.startswith(f"  {figure.__name__}.png "):
                entry = [line]
            elif entry is not None and line.startswith("   "):  # a continuation (an entry has two spaces)
                entry.append(line)
            elif entry is not None:
                break
        if entry is None:
            raise ValueError(f"{figure.__module__}'s docstring does not describe {figure.__name__}.png")
        lines += entry
    return "figures:\n" + "\n".join(lines)


class Skip(str):
    """A figure function's answer when it had nothing to draw: why (e.g. "fewer than two budgets")."""


def save(fig, path, suptitle=None):
    """Title, layout and the PNG file, written atomically (a reader never sees a half-written PNG); the figure's
    memory back. Returns the path; a PNG that cannot be written (a full disk, a read-only folder, a folder at its
    path) is a user_input.OutputError naming it, which the front-ends print as one line (exit 1)."""
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    with user_input.replacing(path) as tmp:
        fig.savefig(tmp, dpi=DPI)
    plt.close(fig)
    return path


def finish(fig, ax, path, xlabel, ylabel, title, legend_size=None):
    """The common end of a single-axes figure: zero line, labels, legend, file."""
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=legend_size)
    return save(fig, path)


def lam_label(row):
    """A variant as the figures name it: "SA (λ=0)", "XSA (λ=1)", "λ=0.5", "XSA (λ=1) on layers 2-3", "learned"."""
    lam = row["lambda"]
    if "@" in lam:  # a variant on some layers only: "1@2-3"
        fixed, layers = lam.split("@", 1)
        return f"{lam_label({'lambda': fixed})} on layers {layers}"
    if lam == "0":
        return "SA (λ=0)"
    return ("XSA (λ=1)" if lam == "1" else f"λ={lam}") if lam[0].isdigit() else lam


def baseline_name(rows):
    """The runs the rows are compared with, as the axis labels say it: SA, XSA, or the run's name."""
    names = {r["baseline"] for r in rows}
    name = names.pop() if len(names) == 1 else "the baseline"
    return {"sa": "SA", "xsa": "XSA"}.get(name, name)


def improvement_axis(rows):
    return f"val-loss improvement over {baseline_name(rows)}, %"


def ci_bars(rows, key="mean_improvement_pct", low="improvement_ci_low", high="improvement_ci_high"):
    """The means of the rows and their error bars from xsa-inspect's CI bounds (none below two seeds)."""
    ys = [r[key] for r in rows]
    lo = [r[key] - r[low] if r[low] is not None else 0 for r in rows]
    hi = [r[high] - r[key] if r[high] is not None else 0 for r in rows]
    return ys, [lo, hi]


def slope_text(t, unit):
    """A trend row (seq_len_trend, budget_trend or size_trend) as a legend note: slope, CI and n."""
    ci = f" [{t['slope_ci_low']:+.2f}, {t['slope_ci_high']:+.2f}]" if t["slope_ci_low"] is not None else ""
    # percentage points of improvement per doubling
    return f"\n  {t['slope']:+.2f} pp{ci} per doubling of {unit}, n={t['n']}"
