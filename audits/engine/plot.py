"""``--plot``: the two output distributions of the witness pair, with the witness set.

Draws fresh outputs (never the audit's own) of the witness pair, projects vectors on the
witness direction, and marks the rejection set S. The title states the verdict, the
claimed eps, the measured eps_lb and the witness; the legend names the two datasets by
the pair's description and sits below the axes, so it never hides S. Discrete outputs
appear in their natural (sorted) order. Needs the ``plot`` extra (matplotlib).
"""

from __future__ import annotations

import textwrap

import numpy as np

from userdp.audits.engine.model_sets import PooledModelSet
from userdp.audits.engine.thresholds import StatisticThreshold, Threshold
from userdp.audits.engine.report import fmt, pct
from userdp.audits.engine.sampling import NO_RELEASE_LABEL, as_outputs, encode, released_floats

__all__ = ["plot_audit", "pyplot", "side_labels"]

MAX_CATEGORIES = 40  # discrete outputs: the most frequent ones, shown in natural order
WRAP = 100  # title line width, characters


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend; a clear ImportError without the extra."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install 'userdp[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def side_labels(description: str) -> tuple[str, str]:
    """Legend labels of the two datasets from a pair description.

    "q = 0 vs q = 1.0" -> ("D: q = 0", "D': q = 1.0"); a shared "who: " prefix is kept on
    both sides ("user 0 (s=50): values all 0.0 vs all 1.0"); a description of a change
    ("add a record to bin 0") labels D' as that change applied to D.
    """
    left, sep, right = description.partition(" vs ")
    if not sep or " vs " in right:
        return "D: the first dataset", f'D\': D after "{description}"'
    right = right.split(";")[0].strip()
    prefix = left[: left.index(": ") + 2] if ": " in left else ""
    if right.startswith("+ "):
        right = "D " + right
    elif prefix and not right.startswith(prefix):
        right = prefix + right
    return f"D: {left.strip()}", f"D': {right}"


def plot_audit(mechanism, result, path: str, *, samples: int = 20_000, seed: int = 0, name: str | None = None) -> None:
    """Write the witness plot of ``result`` to ``path``: the release distributions of the witness
    pair, redrawn (``samples`` per side, ``seed``), with the rejection set shaded."""
    plt = pyplot()
    w = result.witness
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence([seed, 7]).spawn(2)]
    a = as_outputs(mechanism(w.pair.first, rngs[0], samples))  # masked rows: no release
    b = as_outputs(mechanism(w.pair.second, rngs[1], samples))
    first, second = side_labels(w.pair_description)
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    s = w.rejection_set.first if isinstance(w.rejection_set, PooledModelSet) else w.rejection_set  # its S
    if isinstance(s, (Threshold, StatisticThreshold)):
        _threshold_panel(ax, a, b, s, first, second, samples)
    else:
        _discrete_panel(ax, a, b, s, first, second, samples)
    ax.set_title(_title(result, name), fontsize=8.5, loc="left")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    fig.savefig(path, bbox_inches="tight", dpi=120)
    plt.close(fig)


def _threshold_panel(ax, a, b, s, first: str, second: str, samples: int) -> None:
    scalar = isinstance(s, Threshold) and s.projection is None
    xa, xb = (released_floats(a), released_floats(b)) if scalar else (s.project(a), s.project(b))
    ra, rb = xa[~np.isnan(xa)], xb[~np.isnan(xb)]  # released (NaN: no release)
    both = np.r_[ra, rb] if ra.size + rb.size else np.zeros(1)
    lo, hi = np.percentile(both, [0.5, 99.5])
    if np.isfinite(s.t):
        lo, hi = min(lo, s.t), max(hi, s.t)
    pad = 0.03 * (hi - lo) or 1.0  # S stays visible when t is an end of the range
    bins = np.linspace(lo - pad, hi + pad, 80)
    width = bins[1] - bins[0]
    none = ""
    if ra.size < xa.size or rb.size < xb.size:  # heights are fractions of all outputs, so the bars
        none = (
            f"; {NO_RELEASE_LABEL}: {1 - ra.size / xa.size:.3g} of M(D), "  # and "no release" add to 1
            f"{1 - rb.size / xb.size:.3g} of M(D')"
        )
    for x, label in ((ra, f"M(D), {first}"), (rb, f"M(D'), {second}")):
        ax.hist(
            np.clip(x, bins[0], bins[-1]),
            bins=bins,
            alpha=0.5,
            weights=np.full(x.size, 1 / (samples * width)),
            label=_wrap(label),
        )
    t = min(max(s.t, bins[0]), bins[-1])  # an infinite t ({released}, {no release}) at the range's end
    lo_s, hi_s = (t, bins[-1]) if s.tail == "upper" else (bins[0], t)
    ax.axvspan(lo_s, hi_s, color="red", alpha=0.12, zorder=0, label=_wrap(f"witness set S = {s.describe()}"))
    if np.isfinite(s.t):
        ax.axvline(s.t, color="red", lw=1)
    if isinstance(s, StatisticThreshold):
        what = f"learned statistic {s.formula()} ({s.statistic})"
    else:
        what = (
            "output"
            if s.projection is None
            else "projected output <w, x>, w = (" + ", ".join(fmt(v, 3) for v in s.projection) + ")"
        )
    ax.set_xlabel(f"{what}  (0.5%-99.5% range; tails clipped into the end bins{none})")
    ax.set_ylabel(f"density ({samples} fresh outputs per side)")


def _discrete_panel(ax, a, b, s, first: str, second: str, samples: int) -> None:
    ca, cb, values = encode(a, b, "discrete")
    fa = np.bincount(ca, minlength=len(values)) / samples
    fb = np.bincount(cb, minlength=len(values)) / samples
    keep = np.sort(np.argsort(-(fa + fb), kind="stable")[:MAX_CATEGORIES])  # values are sorted: natural order
    idx = np.arange(keep.size)
    witness = set(s.values)
    ax.bar(idx - 0.2, fa[keep], 0.4, zorder=2, label=_wrap(f"M(D), {first}"))
    ax.bar(idx + 0.2, fb[keep], 0.4, zorder=2, label=_wrap(f"M(D'), {second}"))
    marked = [j for j, c in enumerate(keep) if values[c] in witness]
    for k, j in enumerate(marked):
        ax.axvspan(
            j - 0.5,
            j + 0.5,
            color="red",
            alpha=0.12,
            lw=0,
            zorder=0,
            label=_wrap(f"witness set S = {s.describe(limit=6)}") if k == 0 else None,
        )
    labels = [_category(values[c]) for c in keep]
    ax.set_xticks(idx, labels, rotation=90 if max(map(len, labels)) > 3 else 0, fontsize=7)
    ax.set_xlim(-0.6, keep.size - 0.4)
    shown = "" if keep.size == len(values) else f"; the {keep.size} most frequent of {len(values)}"
    ax.set_xlabel(f"output value, in sorted order{shown}")
    ax.set_ylabel(f"fraction of {samples} fresh outputs")


def _wrap(text: str, width: int = 40) -> str:
    return textwrap.fill(text, width, subsequent_indent="  ")


def _category(v) -> str:
    if v is None:
        return NO_RELEASE_LABEL
    return "(" + ",".join(str(x) for x in v) + ")" if isinstance(v, tuple) else str(v)


def _title(r, name: str | None) -> str:
    w = r.witness
    c = r.claim
    claim = c.kind + " " + ", ".join(f"{k} = {fmt(v)}" for k, v in c.params().items() if k != "epsilons")
    if "epsilons" in c.params():
        claim = f"{c.kind}, eps_i = {fmt(w.claim_epsilon)} for this record"
    lines = [
        f"{name + ': ' if name else ''}{r.verdict}",
        f"claimed: {claim}.  Measured: eps_lb = {r.epsilon_lower_bound:.3f} at {pct(r.confidence)} confidence "
        f"(tightness {fmt(r.tightness, 3)}).",
        f"witness pair: {w.pair_description}",
        f"witness set S = {w.rejection_set.describe()}, {w.ordering}: counting share "
        f"{w.counts['first']} (D) vs {w.counts['second']} (D') of {w.counts['n_per_side']} per side. "
        "The plot uses fresh outputs.",
    ]
    return "\n".join(textwrap.fill(line, WRAP, subsequent_indent="    ") for line in lines)
