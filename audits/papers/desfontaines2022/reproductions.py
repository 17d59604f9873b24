"""Reproduction ``desfontaines2022-selection``: the optimality of the partition-selection mechanism over the
thresholding baselines (Desfontaines et al. 2022, Theorem 1 and the comparison of its evaluation).

On a grid of (eps, delta), with kappa = 1, the optimal keep probability pi(n) is compared with Laplace
thresholding p_L(n) and Gaussian thresholding p_G(n) (reference/desfontaines2022.py), three ways:

- pointwise: pi(n) >= max(p_L(n), p_G(n)) for n = 0..N (the theorem: both baselines are DP selections);
- the smallest user count kept with probability >= 1/2, for each mechanism (the crossovers table of
  docs/papers/desfontaines2022.md is one claim: its numbers come from the paper's formulas, evaluated separately);
- the expected number of partitions kept on a synthetic dataset whose partition sizes follow a power law
  (sum_p pi(n_p), a closed form), and a Monte Carlo check of that closed form with the reference mechanism.

The paper reports its gain on real datasets; this reproduction does not copy those figures (synthetic data
here, so the claims are the theorem's and the shape of the gain: largest at small eps).
"""

from __future__ import annotations

import math

import numpy as np

from userdp.reference import desfontaines2022 as R

from userdp.audits.engine.plot import pyplot
from userdp.audits.papers.desfontaines2022.audits import partition_dataset
from userdp.audits.engine.registry import register_reproduction
from userdp.audits.engine.verdicts import claim, decide, exact, normal

__all__ = ["GRID", "NOTE_TABLE", "power_law_sizes", "reproduce_selection"]

GRID = tuple((e, d) for e in (0.1, 0.5, 1.0, math.log(3), 2.0) for d in (1e-10, 1e-5))
N_MAX = 2000  # past n2 at every grid point (the largest, 401, at eps = 0.1, delta = 1e-10: `crossovers`)
# (eps, delta) -> (n1, n for pi >= 1/2, n for p_L >= 1/2, n for pi = 1):
# the crossovers table of docs/papers/desfontaines2022.md
NOTE_TABLE = {
    (1.0, 1e-5): (11, 12, 12, 23),
    (0.1, 1e-5): (86, 86, 110, 172),
    (1.0, 1e-10): (23, 23, 24, 46),
    (math.log(3), 1e-6): (12, 13, 13, 25),
}
PARTITIONS, ALPHA, SEED = 2000, 1.2, 2022
RUNS = 1000  # releases per grid point: the kept count's relative se is <= 0.3% here (measured), against a 5% band


def power_law_sizes(k: int = PARTITIONS, seed: int = SEED) -> np.ndarray:
    """Distinct users per partition: ceil(Pareto(1.2)) (many partitions of 1-3 users, a heavy tail), (k,)."""
    return np.ceil(np.random.default_rng(seed).pareto(ALPHA, k) + 1e-12).astype(np.int64)


def _first(p: np.ndarray, level: float) -> int:
    return int(np.argmax(p >= level)) if (p >= level).any() else -1


def _row(eps: float, delta: float, sizes: np.ndarray, rng) -> dict:
    n = np.arange(N_MAX + 1)
    pi, pl, pg = (R.keep_probabilities(n, eps, delta, strategy=s) for s in ("optimal", "laplace", "gaussian"))
    n1, n2 = R.crossovers(eps, delta)
    kept = {s: float(R.keep_probabilities(sizes, eps, delta, strategy=s).sum()) for s in R.STRATEGIES}
    D = partition_dataset(sizes)
    mc = R.mechanism(D, eps, delta, rng, size=RUNS, partitions=np.arange(sizes.size)).sum(axis=1)
    return {
        "epsilon": eps,
        "delta": delta,
        "n1": n1,
        "n2": n2,
        "min_gap": float(np.min(pi - np.maximum(pl, pg))),
        "half_optimal": _first(pi, 0.5),
        "half_laplace": _first(pl, 0.5),
        "half_gaussian": _first(pg, 0.5),
        "kept_optimal": kept["optimal"],
        "kept_laplace": kept["laplace"],
        "kept_gaussian": kept["gaussian"],
        "mc_kept_optimal": float(mc.mean()),
        "mc_kept_optimal_se": float(mc.std(ddof=1) / math.sqrt(RUNS)),
    }


def reproduce_selection(plot=None, quick: bool = False, progress=None) -> dict:
    """The optimal curve against the thresholding baselines on ``GRID`` (kappa = 1); ``quick`` runs the same."""
    sizes = power_law_sizes()
    rng = np.random.default_rng(SEED)
    rows = []
    for i, (eps, delta) in enumerate(GRID, 1):
        rows.append(_row(eps, delta, sizes, rng))
        if progress is not None:
            progress(i, len(GRID), f"eps = {eps:g}, delta = {delta:g}")
    note = []
    for (eps, delta), want in NOTE_TABLE.items():
        n = np.arange(N_MAX + 1)
        pi, pl = R.keep_probability(n, eps, delta), R.laplace_keep_probability(n, eps, delta)
        got = (R.crossovers(eps, delta)[0], _first(pi, 0.5), _first(pl, 0.5), _first(pi, 1.0))
        note.append(
            exact(
                f"eps = {eps:.4g}, delta = {delta:g}: table row mismatches",
                sum(map(int, np.array(got) != want)),
                below=0,
            )
        )
    if plot:
        _plot(rows, plot)
    return {
        "table": rows,
        "claims": _claims(rows, note),
        "setup": f"kappa = 1; {PARTITIONS} partitions of ceil(Pareto({ALPHA})) distinct users (seed {SEED}); "
        f"kept_* = sum of keep probabilities (closed form), mc_kept_optimal = mean over {RUNS} releases"
        + ("; --quick is the full run" if quick else ""),
    }


def _claims(rows, note) -> list[dict]:
    gain = lambda r, s: r["kept_optimal"] / r[f"kept_{s}"]  # noqa: E731
    small = [r for r in rows if r["epsilon"] == 0.1]
    large = [r for r in rows if r["epsilon"] == 2.0]
    return decide(
        [
            claim(
                "the optimal keep probability is pointwise >= Laplace and Gaussian thresholding (Theorem 1)",
                exact(
                    "min over the grid and n <= 2000 of pi(n) - max(p_L(n), p_G(n))",
                    min(r["min_gap"] for r in rows),
                    above=-1e-12,
                ),
            ),
            claim(
                "it keeps more partitions in expectation than either baseline, at every (eps, delta)",
                [
                    exact(
                        f"eps = {r['epsilon']:.3g}, delta = {r['delta']:g}: E[kept] optimal / {s}",
                        gain(r, s),
                        above=1.0,
                    )
                    for r in rows
                    for s in ("laplace", "gaussian")
                ],
            ),
            claim(
                "the gain over Laplace thresholding is largest at small eps (eps = 0.1 vs eps = 2, each delta)",
                [
                    exact(
                        f"delta = {a['delta']:g}: gain at eps 0.1 / gain at eps 2",
                        gain(a, "laplace") / gain(b, "laplace"),
                        above=1.0,
                        strict=True,
                    )
                    for a, b in zip(small, large)
                ],
            ),
            claim(
                "the crossovers and the users needed for a 50% keep probability match the crossovers table of "
                "docs/papers/desfontaines2022.md",
                note,
            ),
            claim(
                f"the closed-form expected count matches {RUNS} releases of the mechanism (within 5%)",
                [
                    normal(
                        f"eps = {r['epsilon']:.3g}, delta = {r['delta']:g}: mc / closed form",
                        r["mc_kept_optimal"] / r["kept_optimal"],
                        r["mc_kept_optimal_se"] / r["kept_optimal"],
                        above=0.95,
                        below=1.05,
                        n=RUNS,
                    )
                    for r in rows
                ],
            ),
        ]
    )


def _plot(rows, path) -> None:
    plt = pyplot()
    n = np.arange(0, 200)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for s, ls in (("optimal", "-"), ("laplace", "--"), ("gaussian", ":")):
        ax.plot(n, R.keep_probabilities(n, 0.1, 1e-5, strategy=s), ls=ls, label=s)
    ax.set_xlabel("distinct users n"), ax.set_ylabel("keep probability"), ax.legend(fontsize=8)
    ax.set_title("Desfontaines et al. 2022: eps = 0.1, delta = 1e-5", fontsize=9)
    fig.tight_layout(), fig.savefig(path, bbox_inches="tight"), plt.close(fig)


register_reproduction("desfontaines2022-selection", reproduce_selection)
