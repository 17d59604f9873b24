"""``--plot``: the two output distributions of the witness pair, with the witness set.

Draws fresh outputs (never the audit's own) of the witness pair, projects vectors on the
witness direction, and shades the rejection set. Needs the ``plot`` extra (matplotlib).
"""
from __future__ import annotations

import numpy as np

from .rejection import Threshold
from .sampling import encode

__all__ = ["plot_audit", "pyplot"]


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend; a clear ImportError without the extra."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install 'userdp[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_audit(setup, result, path: str, *, samples: int = 20_000, seed: int = 0) -> None:
    plt = pyplot()
    w = result.witness
    pair = w.pair
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence([seed, 7]).spawn(2)]
    a = np.asarray(setup.mechanism(pair.first, rngs[0], samples))
    b = np.asarray(setup.mechanism(pair.second, rngs[1], samples))
    s = w.rejection_set
    fig, ax = plt.subplots(figsize=(7, 4))
    if isinstance(s, Threshold):
        xa, xb = s.project(a), s.project(b)
        lo, hi = np.percentile(np.r_[xa, xb], [0.5, 99.5])
        bins = np.linspace(min(lo, s.t), max(hi, s.t), 80)
        ax.hist(xa, bins=bins, alpha=0.5, density=True, label="M(first)")
        ax.hist(xb, bins=bins, alpha=0.5, density=True, label="M(second)")
        ax.axvspan(s.t, bins[-1], color="red", alpha=0.12) if s.tail == "upper" else \
            ax.axvspan(bins[0], s.t, color="red", alpha=0.12)
        ax.axvline(s.t, color="red", label=f"witness S = {s.describe()}")
        ax.set_xlabel("output" if s.projection is None else "projected output <w, x>")
    else:
        ca, cb, values = encode(a, b, "discrete")
        fa = np.bincount(ca, minlength=len(values)) / samples
        fb = np.bincount(cb, minlength=len(values)) / samples
        top = np.argsort(-(fa + fb))[:40]                       # the 40 most frequent outputs
        fa, fb = fa[top], fb[top]
        idx = np.arange(top.size)
        witness = set(s.values)
        inset = np.array([values[c] in witness for c in top], dtype=bool)
        values = [values[c] for c in top]
        ax.bar(idx - 0.2, fa, 0.4, label="M(first)")
        ax.bar(idx + 0.2, fb, 0.4, label="M(second)")
        ax.scatter(idx[inset], np.maximum(fa, fb)[inset] * 1.05, color="red", marker="v", label="in witness S")
        ax.set_xticks(idx, [str(v) for v in values], rotation=90, fontsize=6)
    ax.set_title(f"{w.pair_description}: eps_lb = {result.epsilon_lower_bound:.3f} ({result.verdict})",
                 fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
