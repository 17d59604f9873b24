"""Registry entries for Epasto et al. 2020 §5-6: GWA_C and sample-limited OLS (label privacy).

- ``epasto2020.gwa``: Algorithm 3 with the certified optimal C of Theorem 6;
- ``epasto2020.sample-limited-ols``: §5.2 at the best integer h (selection T from a fixed
  public seed, so the audit sees one fixed C^s);
- reproduction ``epasto2020-claim3``: Example 1 / Claim 3 for g = 2..10;
- reproduction ``epasto2020-synthetic``: the §6 synthetic experiment (``SYNTH_REPS`` = 31
  random instances per (n, eps) cell, from a power computation; ``--quick``: 2, same claims,
  judged on the expected errors E_*).

Default audit data: d = 2, orthogonal features (every record is e1 or e2), users
e1: s = (4, 2, 1, 1, 1, 1), e2: s = (10, 3, 1, 1, 1, 1, 1, 1); labels 0.5; B = 1, eps = 1,
sigma = 4 (large enough that h* is interior and per-record weights differ). With
orthogonal features a user's records enter one row of C only, all with the same sign,
so labels 0 vs B on the argmax user move beta_hat by exactly Delta_1 = B max_l W_l, along
one axis: the audit's 1-D projection sees a Laplace shift of exactly eps
(``reference.epasto2020_gwa.worst_case_pairs`` builds the pair and states the realised shift).
"""

from __future__ import annotations

import math

import numpy as np

from userdp.reference import epasto2020_gwa as G
from userdp.reference.data import UserDataset

from userdp.audits.engine.ceiling import NoiseModel

from userdp.audits.engine.verdicts import ERROR, claim, decide, exact, median, median_replications

from userdp.audits.engine.registry import AuditSetup, Entry, register, register_reproduction
from userdp.audits.engine.plot import pyplot

__all__ = [
    "DEFAULTS",
    "E1_SIZES",
    "EX1",
    "SYNTH_REPS",
    "claim3",
    "example1",
    "orthogonal_dataset",
    "synthetic",
    "synthetic_instance",
    "zipf_user_ids",
]

PAPER = "Epasto et al. 2020"
E1_SIZES, E2_SIZES = (4, 2, 1, 1, 1, 1), (10, 3, 1, 1, 1, 1, 1, 1)
DEFAULTS = {"B": 1.0, "epsilon": 1.0, "sigma": 4.0}
DEFAULT_SAMPLES = 100_000
SL_SEED = 52


def orthogonal_dataset(e1=E1_SIZES, e2=E2_SIZES, label: float = 0.5) -> UserDataset:
    """Users whose records all have x = e1 (sizes e1) or all x = e2 (sizes e2)."""
    sizes = np.array([*e1, *e2])
    X = np.repeat(np.array([[1.0, 0.0]] * len(e1) + [[0.0, 1.0]] * len(e2)), sizes, axis=0)
    return UserDataset(X, np.repeat(np.arange(sizes.size), sizes), labels=np.full(sizes.sum(), label))


def build_gwa(B=1.0, epsilon=1.0, sigma=4.0) -> AuditSetup:
    D = orthogonal_dataset()
    C = G.optimal_C(D, B, epsilon, sigma).C  # depends on X and S_l only: fixed

    def mechanism(dataset, rng, size):
        return G.mechanism(dataset, C, B, epsilon, rng, size)

    return AuditSetup(
        mechanism=mechanism,
        pairs=G.worst_case_pairs(D, C, B),
        claim=G.claim(epsilon),
        output="vector",
        noise=_gwa_noise(C, B, epsilon),
    )


def _gwa_noise(C, B, epsilon) -> NoiseModel:
    """Algorithm 3: C y + Lap(b)^d i.i.d., b from C and the public S_l (``G.mechanism``)."""
    return NoiseModel("laplace", lambda D: G.statistic(D, C, B), lambda D: G.noise_scale(D, C, B, epsilon))


def build_sample_limited_ols(B=1.0, epsilon=1.0, sigma=4.0) -> AuditSetup:
    D = orthogonal_dataset()
    h, T = G.best_sample_limit_h(D, B, epsilon, sigma, np.random.default_rng(SL_SEED))

    def mechanism(dataset, rng, size):
        return G.sample_limited_ols_mechanism(dataset, h, B, epsilon, rng, size, T=T)

    pairs = G.worst_case_pairs(D, G.sample_limited_C(D, h, T), B)
    return AuditSetup(
        mechanism=mechanism,
        pairs=pairs,
        claim=G.claim(epsilon),
        output="vector",
        noise=_gwa_noise(G.sample_limited_C(D, h, T), B, epsilon),
    )


register(
    Entry(
        name="epasto2020.gwa",
        kind="reference",
        paper=PAPER,
        algorithm="Algorithm 3 (GWA_C), optimal C of Theorem 6 (certified by duality gap)",
        relation=G.RELATION.name,
        function="userdp.reference.epasto2020_gwa.mechanism",
        expected="no violation found",
        build=build_gwa,
        params=dict(DEFAULTS),
        true_epsilon=1.0,
        samples=DEFAULT_SAMPLES,
    )
)
register(
    Entry(
        name="epasto2020.sample-limited-ols",
        kind="reference",
        paper=PAPER,
        algorithm="§5.2 sample-limited OLS, best integer h (Theorem 6 variance of C^s)",
        relation=G.RELATION.name,
        function="userdp.reference.epasto2020_gwa.sample_limited_ols_mechanism",
        expected="no violation found",
        build=build_sample_limited_ols,
        params=dict(DEFAULTS),
        true_epsilon=1.0,
        samples=DEFAULT_SAMPLES,
    )
)


# --------------------------------------------------------------------------- Claim 3
def example1(g: int) -> UserDataset:
    """Example 1: d = 2, m = 2g^2 + 2 users (labels are irrelevant at sigma = 0; set to 0)."""
    X = [[g, 0.0]] + [[1.0, 0.0]] * (g**3) + [[0.0, 1.0]] * g + [[0.0, 1.0]] * (g**2)
    ids = [0] + list(np.repeat(np.arange(1, g * g + 1), g)) + [g * g + 1] * g + list(range(g * g + 2, 2 * g * g + 2))
    return UserDataset(np.array(X), np.array(ids), labels=np.zeros(len(ids)))


# sigma = 0 and 2 d (B/eps)^2 = 1 (Example 1): d = 2, B = 1, eps = 2.
EX1 = {"B": 1.0, "epsilon": 2.0, "sigma": 0.0}


def min_sample_limited_variance(D: UserDataset) -> tuple[float, int]:
    """min over integer h in [s_1, s_m] of Theorem 6's variance of C^s. In Example 1 the
    records of a user are identical, so the choice of T within a user does not matter."""
    out = []
    for h in range(int(D.counts.min()), int(D.counts.max()) + 1):
        T = G.sample_limit_selection(D, h, np.random.default_rng(h))
        out.append((G.total_variance(D, G.sample_limited_C(D, h, T), **EX1), h))
    return min(out)


def claim3(plot=None, quick: bool = False, progress=None) -> dict:
    """Example 1 / Claim 3: sample limiting can be unboundedly worse than GWA, g = 2..10.

    Exact optima (LP and integer search); ``quick`` runs the same computation (it takes seconds)."""
    rows = []
    for g in range(2, 11):
        D = example1(g)
        sl, h = min_sample_limited_variance(D)
        opt = G.optimal_C(D, **EX1)
        rows.append(
            {
                "g": g,
                "min_sl": sl,
                "h_best": h,
                "sl_bound_1/(4g^3)": 1 / (4 * g**3),
                "opt_gwa": opt.variance,
                "gwa_bound_1/g^4": 1 / g**4,
                "gwa_rel_gap": opt.gap,
                "ratio_sl/gwa": sl / opt.variance,
            }
        )
        if progress is not None:
            progress(g - 1, 9, f"g = {g}")
    ratios = [r["ratio_sl/gwa"] for r in rows]
    if plot:
        _plot_xy(
            plot,
            [r["g"] for r in rows],
            {"ratio min SL / min GWA": ratios},
            "g",
            "variance ratio (min sample limiting / min GWA)",
            "Epasto et al. 2020, Claim 3 (Example 1)",
        )
    gaps = max(r["gwa_rel_gap"] for r in rows)
    return {
        "table": rows,
        "claims": decide(
            [
                claim(
                    "Claim 3: min sample-limiting variance >= 1/(4 g^3) for g = 2..10",
                    exact("min over g of min_sl x 4 g^3", min(r["min_sl"] * 4 * r["g"] ** 3 for r in rows), above=1.0),
                    evidence="exact minimum over integer h of Theorem 6's variance of C^s",
                ),
                claim(
                    "Claim 3: min GWA variance <= 1/g^4 for g = 2..10",
                    exact("max over g of opt_gwa x g^4", max(r["opt_gwa"] * r["g"] ** 4 for r in rows), below=1.0),
                    evidence=f"LP optimum (HiGHS; a feasible C, so its variance bounds the minimum from above), "
                    f"relative "
                    f"duality gaps <= {gaps:.1e}",
                ),
                claim(
                    "the gap is unbounded (ratio grows with g)",
                    exact("min over g of ratio(g+1) - ratio(g)", float(np.diff(ratios).min()), above=0.0, strict=True),
                    evidence=f"ratio {ratios[0]:.2f} at g=2 -> {ratios[-1]:.2f} at g=10",
                ),
            ]
        ),
    }


# ------------------------------------------------------------------------ §6 synthetic
def make_regression(n: int, d: int, noise: float, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sklearn.datasets.make_regression's model, in numpy: X ~ N(0, I_d), all d features
    informative, coef = 100 U(0, 1)^d, bias 0, y = X coef + noise N(0, 1)."""
    X = rng.standard_normal((n, d))
    coef = 100.0 * rng.uniform(size=d)
    return X, X @ coef + noise * rng.standard_normal(n), coef


def zipf_user_ids(n: int, alpha: float, rng) -> np.ndarray:
    """Users' sizes drawn i.i.d. Zipf(alpha) until they cover n records (the last truncated)."""
    sizes, total = [], 0
    while total < n:
        s = int(min(rng.zipf(alpha), n - total))
        sizes.append(s)
        total += s
    return rng.permutation(np.repeat(np.arange(len(sizes)), sizes))


def synthetic_instance(n: int, rng, alpha: float = 1.5, d: int = 10, noise: float = 20.0):
    """A §6 instance, shifted so labels lie in [0, B] as §5 requires: y' = y - min(y),
    B = max(y) - min(y), and an intercept column (true intercept -min(y)), so the model is
    still linear. B and sigma^2 (OLS residual variance, as §6 does) are read from the data
    and treated as public: an experimental simplification of the paper, not a private step."""
    X, y, coef = make_regression(n, d, noise, rng)
    lo = float(y.min())
    Xi = np.c_[X, np.ones(n)]
    beta = np.r_[coef, -lo]
    D = UserDataset(Xi, zipf_user_ids(n, alpha, rng), labels=y - lo)
    resid = D.labels - Xi @ (G.ols_C(Xi) @ D.labels)  # (n,): C y first, never the n x n hat matrix
    sigma = float(np.sqrt(resid @ resid / (n - d - 1)))
    return D, beta, float(y.max() - lo), sigma


def _pred_error(X, beta_tilde, beta) -> float:
    """Average squared error of the prediction against the noise-free X beta."""
    return float(np.mean((X @ (beta_tilde - beta)) ** 2))


def _expected_pred_error(D, X, C, B, epsilon, beta) -> float:
    """E over the Laplace noise of ``_pred_error`` for GWA_C on this instance (closed form):
    beta~ = C y + W with W_j ~ Lap(b) i.i.d. (Algorithm 3), E[W W^T] = 2 b^2 I_d, so
    E (1/n)||X(beta~ - beta)||^2 = (1/n)||X(C y - beta)||^2 + 2 b^2 tr(X^T X) / n."""
    b = G.noise_scale(D, C, B, epsilon)
    bias = X @ (G.statistic(D, C, B) - beta)
    return float((bias @ bias + 2.0 * b * b * np.sum(X * X)) / X.shape[0])


METHODS = ("ours", "h*", "h_max")
SYNTH_NS, SYNTH_EPSILONS, SYNTH_SEED = (600, 1800, 3000), (1.0, 2.0, 3.0), 2020
# The design (power computation). A claim is read per cell on a typical instance: the median
# over the cell's random instances of log(E_b / E_a) > 0 (order statistics, distribution-free:
# the instances' log ratios spread over several units, which a t interval cannot bound at this
# error level). The paper says "always": the design asks power 0.9 when at most 5% of
# instances go against the claim, at the run's alpha = 1e-4 / 36 (36 cell comparisons).
SYNTH_DESIGN_AGAINST = 0.05
SYNTH_REPS = median_replications(SYNTH_DESIGN_AGAINST, ERROR / (2 * 2 * len(SYNTH_NS) * len(SYNTH_EPSILONS)))
QUICK_REPS = 2


def _synthetic_repetition(n, epsilons, rng) -> dict:
    """One §6 instance: {eps: {method: (realised error, expected error)}}."""
    D, beta, B, sigma = synthetic_instance(n, rng)
    X = G.features(D)
    Cmax = G.ols_C(X)  # h = s_m: every record, OLS
    best_h = G.best_sample_limit_hs(D, B, epsilons, sigma, rng)
    out = {}
    for e, (h, T) in zip(epsilons, best_h):
        C = G.optimal_C(D, B, e, sigma).C
        out[e] = {
            k: (_pred_error(X, G.mechanism(D, Ck, B, e, rng), beta), _expected_pred_error(D, X, Ck, B, e, beta))
            for k, Ck in zip(METHODS, (C, G.sample_limited_C(D, h, T), Cmax))
        }
    return out


def synthetic(
    plot=None,
    quick: bool = False,
    progress=None,
    ns=SYNTH_NS,
    epsilons=SYNTH_EPSILONS,
    reps: int | None = None,
    seed: int = SYNTH_SEED,
) -> dict:
    """§6 synthetic regression: GWA with the optimal C ('ours') against sample-limited OLS at
    the best h (h*) and plain OLS (h_max), mean squared prediction error.

    Columns ``ours``, ``h*``, ``h_max``: the mean over repetitions of one release's error
    (the paper's Monte Carlo). ``E_ours``, ``E_h*``, ``E_h_max``: the mean over the same
    instances of the error's exact expectation over the Laplace noise
    (``_expected_pred_error``), which removes the noise's share of the spread."""
    reps = reps or (QUICK_REPS if quick else SYNTH_REPS)
    streams = np.random.SeedSequence(seed).spawn(len(ns) * reps)
    per_rep = {}  # (n, eps) -> list of {method: (realised, expected)}
    for a, n in enumerate(ns):
        for r in range(reps):
            one = _synthetic_repetition(n, epsilons, np.random.default_rng(streams[a * reps + r]))
            for e in epsilons:
                per_rep.setdefault((n, e), []).append(one[e])
            if progress is not None:
                progress(a * reps + r + 1, len(ns) * reps, f"n = {n}, repetition {r + 1}/{reps}")
    rows = [
        {
            "n": n,
            "eps": e,
            **{k: float(np.mean([x[k][0] for x in v])) for k in METHODS},
            **{f"E_{k}": float(np.mean([x[k][1] for x in v])) for k in METHODS},
        }
        for (n, e), v in per_rep.items()
    ]
    if plot:
        sel = [r for r in rows if r["eps"] == 1.0]
        _plot_xy(
            plot,
            [r["n"] for r in sel],
            {k: [r[f"E_{k}"] for r in sel] for k in METHODS},
            "n (records)",
            "expected squared prediction error",
            f"Epasto et al. 2020 §6 synthetic, Zipf alpha = 1.5, eps = 1,\n"
            f"mean over {reps} instances{' (--quick)' if quick else ''}",
            logy=True,
        )
    return {
        "table": rows,
        "claims": _synthetic_claims(rows, per_rep, reps, quick),
        "setup": f"{len(ns)} n x {len(epsilons)} eps x {reps} repetitions, seed {seed}"
        + (" (--quick)" if quick else ""),
    }


def _synthetic_claims(rows, per_rep, reps, quick) -> list[dict]:
    """The §6 orderings, judged on the expected errors E_* (exact over the Laplace noise) of
    the random instances: per cell, the median over its instances of log(E_b / E_a), claimed
    > 0 (order-statistic interval; the design above ``SYNTH_REPS``). One release per cell is
    too noisy to order the methods (single-release ratios h*/ours went down to 0.78 and
    h_max/h* to 0.59 in a 10-instance run); the Monte Carlo columns are reported beside the
    expectations, as the paper measured."""
    ratio = lambda a, b, pre="E_": min(r[pre + b] / r[pre + a] for r in rows)  # noqa: E731
    mc = lambda a, b: ratio(a, b, "")  # noqa: E731
    n_inst = f"{reps} instance(s) per cell" + (
        f" (--quick: the full run has {SYNTH_REPS}; with 2 the median's interval decides nothing at this error level)"
        if quick
        else ""
    )

    def log_ratio(a, b):
        return [
            median(
                f"n = {n}, eps = {e:g}: median over instances of log(E_{b} / E_{a})",
                [math.log(x[b][1] / x[a][1]) for x in v],
                above=0.0,
            )
            for (n, e), v in per_rep.items()
        ]

    return decide(
        [
            claim(
                "§6: 'in every setting our method has always significantly lower squared error' "
                "(E_ours < E_h* and E_ours < E_h_max at every n and eps, on a typical instance)",
                log_ratio("ours", "h*") + log_ratio("ours", "h_max"),
                evidence=f"{n_inst}; min over cells of E_h*/E_ours = {ratio('ours', 'h*'):.3g}, E_h_max/E_ours = "
                f"{ratio('ours', 'h_max'):.3g} (Monte Carlo means: {mc('ours', 'h*'):.3g}, "
                f"{mc('ours', 'h_max'):.3g})",
            ),
            claim(
                "ours < h* < h_max at every n and eps (on E_*, on a typical instance)",
                log_ratio("ours", "h*") + log_ratio("h*", "h_max"),
                evidence=f"{n_inst}; min over cells of E_h_max/E_h* = {ratio('h*', 'h_max'):.3g} "
                f"(Monte Carlo means: {mc('h*', 'h_max'):.3g})",
            ),
        ]
    )


def _plot_xy(path, x, series: dict, xlabel: str, ylabel: str, title: str, logy: bool = False) -> None:
    plt = pyplot()  # the plot extra; a clear ImportError without it
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name, ys in series.items():
        ax.plot(x, ys, marker="o", label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    if logy:
        ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)


register_reproduction("epasto2020-claim3", claim3)
register_reproduction("epasto2020-synthetic", synthetic)
