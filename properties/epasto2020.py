"""Property suite for Epasto et al. 2020 §3 (weighted averaging, sample limiting).

Usable against any implementation wrapped as an ``Adapter``. The suite passes the dataset
positionally and the public parameters by keyword (``WAExample.params``), exactly as here:

- ``weights(dataset, B=B, epsilon=epsilon, sigma=sigma)``     -> c, shape (n,), aligned with records;
- ``statistic(dataset, B=B, epsilon=epsilon, sigma=sigma)``   -> beta_hat (float, noise-free);
- ``sensitivity(dataset, B=B, epsilon=epsilon, sigma=sigma)`` -> the L1 sensitivity it calibrates to;
- ``noise_scale(dataset, B=B, epsilon=epsilon, sigma=sigma)`` -> the Laplace scale b it uses;
- ``mechanism(dataset, rng=rng, size=size, B=B, epsilon=epsilon, sigma=sigma)`` -> releases,
  shape () or (size,) (audited, not here; the keywords of ``reference.epasto2020.optimal_wa_mechanism``).

Parameters:

- ``dataset``: a ``UserDataset``, one scalar y_i per record in ``values``; the records of
  each user (S_l, hence every s_l) are public, the values are private;
- ``B``: the bound on the values, y_i in [0, B] (public; the unit of y);
- ``epsilon``: the pure-DP budget of one release (dimensionless, > 0);
- ``sigma``: the standard deviation of the per-record noise xi_i in y_i = beta + xi_i (§3),
  in the unit of y, >= 0; a standard deviation, not a variance. It only chooses the
  weights (Lemma 2's variance trade-off), never the privacy;
- ``rng``: a ``numpy.random.Generator``; ``size``: None (one release) or the number of releases;
- returned ``sensitivity``: the L1 sensitivity of beta_hat under ``RELATION``, in the unit of y;
  ``noise_scale``: the Laplace scale b (density exp(-|z|/b)/(2b)), not a standard deviation.

Every property raises ``AssertionError`` with a message. Relation: replace-user with S_l
public (``RELATION`` = ``reference.epasto2020.RELATION``). ``wa_examples`` draws a
neighbour under it by default; ``wa_examples(relation=None)`` draws none, and the
neighbour property then has no usable example (``check_property`` raises RuntimeError:
a bug of the caller, never a verdict).

Oracles (review finding 3): written out here from the paper's §3, independent of
``reference/epasto2020.py`` - plain loops over users (``records_of``) summed with
``math.fsum``: W_l (``user_weights_oracle``), Lemma 2's variance (``lemma2_variance``),
n_h and Lemma 3's weights (``lemma3_weights_oracle``), Claim 1's v(h) (``claim1_v``),
and its minimum by brute force (``brute_force_min_v``). The reference is never its own
oracle. Tolerances: ``REL`` = 1e-9 relative. The
quantities compared are sums of at most a few hundred double-precision terms in [0, B],
whose rounding is below 1e-13 relative; 1e-9 leaves a wide margin yet is far below any
real defect (the planted bugs are off by 10% or more).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from userdp.reference import epasto2020 as E
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import REPLACE_USER

from .extremes import Domain
from .adapter import Adapter
from .strategies import neighbouring_pairs, user_datasets

__all__ = [
    "REL",
    "WAExample",
    "wa_examples",
    "REFERENCE_WA",
    "REFERENCE_SL",
    "prop_weights_nonnegative_sum_to_one",
    "prop_capped_per_user",
    "prop_noise_scale_calibrated",
    "prop_noise_covers_user_weight",
    "prop_statistic_is_weighted_average",
    "prop_sensitivity_bounds_all_neighbours",
    "prop_sensitivity_bounds_sampled_neighbour",
    "prop_lemma3_form",
    "prop_minimises_variance",
    "user_weights_oracle",
    "lemma2_variance",
    "n_h_oracle",
    "lemma3_weights_oracle",
    "claim1_v",
    "brute_force_min_v",
    "ALL_PROPERTIES",
    "SL_PROPERTIES",
    "STRATEGIES",
    "EXAMPLES",
    "MAX_EXAMPLES",
    "RELATION",
    "ADAPTER",
    "REFERENCE",
    "EXTREMES",
]

REL = 1e-9
RELATION = E.RELATION  # §2.2: replace one user's values, S_l public (REPLACE_USER)


@dataclass(frozen=True)
class WAExample:
    dataset: UserDataset
    B: float
    epsilon: float
    sigma: float
    neighbour: UserDataset | None = None  # drawn by wa_examples() under RELATION, unless relation=None

    @property
    def params(self) -> dict:
        return {"B": self.B, "epsilon": self.epsilon, "sigma": self.sigma}


@st.composite
def wa_examples(draw, max_users: int = 8, max_records_per_user: int = 6, relation=RELATION):
    """A dataset with y in [0, B], public eps and sigma in [0, B/2], and one neighbour under
    ``relation`` (the suite's ``RELATION`` by default; ``strategies.neighbouring_pairs``, new
    values in [0, B]). ``relation=None``: no neighbour (for the properties that need none)."""
    B = draw(st.sampled_from([1.0, 2.5]))
    datasets = user_datasets(max_users=max_users, max_records_per_user=max_records_per_user, value_range=(0.0, B))
    # Large eps and sigma = B/2 make h* > s_1 (unequal user weights) likely; small eps
    # gives h* = s_1 (one weight per user). Both regimes are drawn.
    eps = draw(st.one_of(st.sampled_from([1.0, 4.0, 16.0, 50.0]), st.floats(0.1, 50.0)))
    # sigma = 0 or a magnitude (the reference's supported range excludes 0 < sigma < 1e-50)
    sigma = draw(st.one_of(st.just(B / 2), st.just(0.0), st.floats(1e-6, B / 2)))
    if relation is None:
        return WAExample(draw(datasets), B, eps, sigma)
    pair = draw(neighbouring_pairs(relation, datasets=datasets, lo=0.0, hi=B))
    return WAExample(pair.first, B, eps, sigma, pair.second)


# ----------------------------------------------------------------------- reference adapters
def _ref_weights(dataset, *, B, epsilon, sigma):
    return E.optimal_weights(dataset, epsilon, B, sigma=sigma)[0]


def _sl_weights(dataset, *, B, epsilon, sigma):
    return E.sample_limiting_weights(dataset, E.best_integer_h(dataset.counts, sigma, B, epsilon))


def _adapter(name, weights_fn) -> Adapter:
    def statistic(D, *, B, epsilon, sigma):
        return E.wa_statistic(D, weights_fn(D, B=B, epsilon=epsilon, sigma=sigma), B)

    def sensitivity(D, *, B, epsilon, sigma):
        return E.wa_sensitivity(D, weights_fn(D, B=B, epsilon=epsilon, sigma=sigma), B)

    def noise_scale(D, *, B, epsilon, sigma):
        return E.wa_noise_scale(D, weights_fn(D, B=B, epsilon=epsilon, sigma=sigma), B, epsilon)

    def mechanism(D, rng, size=None, *, B, epsilon, sigma):
        c = weights_fn(D, B=B, epsilon=epsilon, sigma=sigma)
        return E.wa_mechanism(D, rng, size, c=c, B=B, epsilon=epsilon)

    return Adapter(name, weights_fn, statistic, sensitivity, noise_scale, mechanism)


REFERENCE_WA = _adapter("epasto2020.wa (reference, optimal weights)", _ref_weights)
REFERENCE_SL = _adapter("epasto2020.sample-limiting (reference, best integer h)", _sl_weights)


# ------------------------------------------------------------- oracles (paper §3, not the reference)
def user_weights_oracle(D: UserDataset, c) -> list[float]:
    """W_l = sum_{i in S_l} c_i for each user l (in ``D.users`` order), by a loop, exactly rounded."""
    c = np.asarray(c, dtype=float)
    return [math.fsum(c[D.records_of(int(u))].tolist()) for u in D.users]


def lemma2_variance(D: UserDataset, c, sigma: float, B: float, epsilon: float) -> float:
    """Lemma 2: Var(beta_tilde) = sigma^2 (c_1^2 + ... + c_n^2) + 2 (B max_l sum_{i in S_l} c_i / eps)^2."""
    c = np.asarray(c, dtype=float)
    b = B * max(user_weights_oracle(D, c)) / epsilon  # Algorithm 1's Laplace scale
    return sigma**2 * math.fsum((c * c).tolist()) + 2.0 * b**2  # Var(Lap(b)) = 2 b^2


def n_h_oracle(counts, h: float) -> float:
    """n_h = sum_{l=1}^m min(h, s_l) (defined after Lemma 3)."""
    return math.fsum(min(h, float(s)) for s in counts)


def lemma3_weights_oracle(D: UserDataset, h: float) -> np.ndarray:
    """Lemma 3: c_i = min(h, s_q) / (s_q sum_l min(h, s_l)) for each record i of user q, (n,)."""
    nh = n_h_oracle(D.counts.tolist(), h)
    c = np.empty(D.n)
    for u in D.users:
        rec = D.records_of(int(u))
        s_q = rec.size
        c[rec] = min(h, s_q) / (s_q * nh)
    return c


def claim1_v(counts, h, sigma: float, B: float, epsilon: float) -> np.ndarray:
    """Claim 1: v(h) = sigma^2 sum_l s_l (min(h, s_l) / (n_h s_l))^2 + 2 (B h / (eps n_h))^2.

    A loop over users; ``h`` may be an array (each user's term is evaluated on all of it)."""
    h = np.asarray(h, dtype=float)
    nh = np.zeros_like(h)
    for s in counts:  # n_h = sum_l min(h, s_l)
        nh = nh + np.minimum(h, float(s))
    var = np.zeros_like(h)
    for s in counts:  # sigma^2 sum_l s_l (min(h, s_l)/(n_h s_l))^2
        var = var + float(s) * (np.minimum(h, float(s)) / (nh * float(s))) ** 2
    return sigma**2 * var + 2.0 * (B * h / (epsilon * nh)) ** 2


# ------------------------------------------------------------------------------ properties
def _close_or_below(x: float, bound: float) -> bool:
    return x <= bound * (1 + REL) + 1e-300


def prop_weights_nonnegative_sum_to_one(impl: Adapter, ex: WAExample) -> None:
    """Algorithm 1's parameters: c_i >= 0 and sum_i c_i = 1."""
    impl.require("weights")
    c = np.asarray(impl.weights(ex.dataset, **ex.params), dtype=float)
    assert c.shape == (ex.dataset.n,), f"weights have shape {c.shape}, expected ({ex.dataset.n},)"
    assert (c >= 0).all(), f"negative weight c[{int(np.argmin(c))}] = {c.min()!r}"
    assert abs(c.sum() - 1.0) <= REL, f"weights sum to {c.sum()!r}, not 1"


def prop_capped_per_user(impl: Adapter, ex: WAExample) -> None:
    """Each user's TOTAL weight, not each record's, is within the declared cap:
    B * sum_{i in S_l} c_i <= sensitivity for every user l (Lemma 1)."""
    impl.require("weights", "sensitivity")
    c = np.asarray(impl.weights(ex.dataset, **ex.params), dtype=float)
    W = np.array(user_weights_oracle(ex.dataset, c))  # (m,)
    sens = float(impl.sensitivity(ex.dataset, **ex.params))
    l = int(np.argmax(W))
    assert _close_or_below(ex.B * W[l], sens), (
        f"user {ex.dataset.users[l]} (s={ex.dataset.counts[l]}) carries weight {W[l]!r}: "
        f"B*W = {ex.B * W[l]!r} exceeds the declared sensitivity {sens!r}"
    )


def prop_noise_scale_calibrated(impl: Adapter, ex: WAExample) -> None:
    """Algorithm 1 line 2: b >= sensitivity / eps."""
    impl.require("sensitivity", "noise_scale")
    sens = float(impl.sensitivity(ex.dataset, **ex.params))
    b = float(impl.noise_scale(ex.dataset, **ex.params))
    assert b * (1 + REL) >= sens / ex.epsilon, f"Laplace scale {b!r} < sensitivity/eps = {sens / ex.epsilon!r}"


def prop_noise_covers_user_weight(impl: Adapter, ex: WAExample) -> None:
    """Lemma 1 straight from the weights: b >= B max_l sum_{i in S_l} c_i / eps.

    Needs no declared sensitivity, so it also checks implementations that expose only
    their weights and their noise scale."""
    impl.require("weights", "noise_scale")
    c = np.asarray(impl.weights(ex.dataset, **ex.params), dtype=float)
    W = np.array(user_weights_oracle(ex.dataset, c))  # (m,)
    need = ex.B * float(W.max()) / ex.epsilon  # Lemma 1
    b = float(impl.noise_scale(ex.dataset, **ex.params))
    l = int(np.argmax(W))
    assert b * (1 + REL) >= need, (
        f"Laplace scale {b!r} < B max_l W_l / eps = {need!r} (user {ex.dataset.users[l]}, "
        f"s={ex.dataset.counts[l]}, W={W[l]!r})"
    )


def prop_statistic_is_weighted_average(impl: Adapter, ex: WAExample) -> None:
    """Algorithm 1 line 1: beta_hat = sum_i c_i y_i with the adapter's own weights."""
    impl.require("weights", "statistic")
    c = np.asarray(impl.weights(ex.dataset, **ex.params), dtype=float)
    want = float(c @ ex.dataset.values)
    got = float(impl.statistic(ex.dataset, **ex.params))
    assert abs(got - want) <= REL * ex.B, f"statistic {got!r} != sum c_i y_i = {want!r}"


def _check_pair(impl: Adapter, ex: WAExample, D: UserDataset, D2: UserDataset, what: str) -> None:
    sens = float(impl.sensitivity(D, **ex.params))
    diff = abs(float(impl.statistic(D, **ex.params)) - float(impl.statistic(D2, **ex.params)))
    assert _close_or_below(diff, sens), f"{what}: |f(D) - f(D')| = {diff!r} > sensitivity {sens!r}"
    if impl.noise_scale is not None:
        b, b2 = float(impl.noise_scale(D, **ex.params)), float(impl.noise_scale(D2, **ex.params))
        assert abs(b - b2) <= REL * max(b, b2), (
            f"{what}: the noise scale depends on the changed user's values ({b!r} vs {b2!r}); "
            "Lemma 1 needs weights fixed by public data"
        )


def prop_sensitivity_bounds_all_neighbours(impl: Adapter, ex: WAExample) -> None:
    """Brute force: every replace-user neighbour with new values on {0, B/2, B} (this grid
    holds the extremes, where a linear statistic changes most) moves the statistic by at
    most the declared sensitivity, and leaves the noise scale unchanged. Keep datasets
    tiny: 3^s_l neighbours per user."""
    impl.require("statistic", "sensitivity")
    for pair in REPLACE_USER.enumerate(ex.dataset, [0.0, ex.B / 2, ex.B]):
        _check_pair(impl, ex, pair.first, pair.second, pair.description)


def prop_sensitivity_bounds_sampled_neighbour(impl: Adapter, ex: WAExample) -> None:
    """The same bound on one Hypothesis-chosen neighbour of a larger dataset."""
    impl.require("statistic", "sensitivity")
    assume(ex.neighbour is not None)  # wa_examples(relation=None) has none: no usable example (a caller bug)
    _check_pair(impl, ex, ex.dataset, ex.neighbour, "sampled neighbour")


def prop_lemma3_form(impl: Adapter, ex: WAExample) -> None:
    """Lemma 3: c_i = min(h, s_q) / (s_q n_h) for one h in [s_1, s_m]. h is read back from
    the weights: a lightest user (s_1 <= h) has c_i = 1/n_h, the heaviest has h / n_h in total."""
    impl.require("weights")
    D = ex.dataset
    c = np.asarray(impl.weights(D, **ex.params), dtype=float)
    W = np.array(user_weights_oracle(D, c))
    lightest = int(np.argmin(D.counts))
    first = float(c[D.records_of(D.users[lightest])][0])
    assert first > 0, f"a record of the lightest user has weight {first!r}; Lemma 3's weights are all > 0"
    nh = 1.0 / first
    h = float(W.max()) * nh
    s1, sm = int(D.counts.min()), int(D.counts.max())
    assert s1 * (1 - REL) <= h <= sm * (1 + REL), f"read-back h = {h!r} outside [s_1, s_m] = [{s1}, {sm}]"
    want = lemma3_weights_oracle(D, min(max(h, s1), sm))
    err = float(np.max(np.abs(c - want)))
    assert err <= REL * float(want.max()), f"weights differ from Lemma 3's form at h = {h!r} by {err!r}"


def brute_force_min_v(counts, sigma, B, epsilon, grid_points: int = 2001) -> tuple[float, float]:
    """(h, v(h)): the best of a uniform grid on [s_1, s_m] and of scipy's bounded scalar
    minimiser on each piece between consecutive distinct sizes. It only evaluates Claim 1's
    definition (``claim1_v``, written here): independent of the reference's closed-form
    ``optimal_h`` and of its ``v``."""
    s = [int(x) for x in counts]
    u = sorted(set(s))
    grid = np.linspace(u[0], u[-1], grid_points)
    cand = [(float(h), float(val)) for h, val in zip(grid, claim1_v(s, grid, sigma, B, epsilon))]
    for lo, hi in zip(u[:-1], u[1:]):
        r = minimize_scalar(
            lambda h: float(claim1_v(s, h, sigma, B, epsilon)),
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-10 * hi},
        )
        cand.append((float(r.x), float(r.fun)))
    return min(cand, key=lambda t: t[1])


def prop_minimises_variance(impl: Adapter, ex: WAExample) -> None:
    """Claim 1: the weights' Lemma 2 variance is the minimum of v over [s_1, s_m] (brute force).

    The minimum is over Algorithm 1's parameters (c >= 0, sum 1: beta_tilde unbiased);
    weights outside that set are refused first (c = 0 would have variance 2 (0/eps)^2 = 0)."""
    impl.require("weights")
    c = np.asarray(impl.weights(ex.dataset, **ex.params), dtype=float)
    assert c.shape == (ex.dataset.n,), f"weights have shape {c.shape}, expected ({ex.dataset.n},)"
    total = math.fsum(c.tolist())
    assert (c >= 0).all() and abs(total - 1.0) <= REL, (
        f"weights are not Algorithm 1's parameters (min c = {c.min()!r}, sum c = {total!r}): "
        "Claim 1 minimises over c >= 0 with sum 1"
    )
    got = lemma2_variance(ex.dataset, c, ex.sigma, ex.B, ex.epsilon)
    h, best = brute_force_min_v(ex.dataset.counts, ex.sigma, ex.B, ex.epsilon)
    assert got <= best * (1 + REL), (
        f"variance {got!r} exceeds the brute-force minimum {best!r} (at h = {h!r}) by {got / best - 1:.3g} relative"
    )


# ------------------------------------------------------------------------------ the suite
ALL_PROPERTIES = (
    prop_weights_nonnegative_sum_to_one,
    prop_capped_per_user,
    prop_noise_scale_calibrated,
    prop_noise_covers_user_weight,
    prop_statistic_is_weighted_average,
    prop_sensitivity_bounds_all_neighbours,
    prop_sensitivity_bounds_sampled_neighbour,
    prop_lemma3_form,
    prop_minimises_variance,
)
# §3.2 sample limiting (``REFERENCE_SL``) is WA_c with c_i = 1[i in T] / n_h: every property
# but Lemma 3's form and the variance optimum holds for it (``userdp validate
# epasto2020.sample-limiting`` runs these).
SL_PROPERTIES = tuple(p for p in ALL_PROPERTIES if p not in (prop_lemma3_form, prop_minimises_variance))
_PLAIN = wa_examples(relation=None)  # the properties that need no neighbour
STRATEGIES = {
    prop_weights_nonnegative_sum_to_one: _PLAIN,
    prop_capped_per_user: _PLAIN,
    prop_noise_scale_calibrated: _PLAIN,
    prop_noise_covers_user_weight: _PLAIN,
    prop_statistic_is_weighted_average: _PLAIN,
    # brute force over every neighbour: 3^s_l per user, so tiny datasets
    prop_sensitivity_bounds_all_neighbours: wa_examples(max_users=3, max_records_per_user=3, relation=None),
    prop_sensitivity_bounds_sampled_neighbour: wa_examples(max_users=30, max_records_per_user=20, relation=RELATION),
    prop_lemma3_form: _PLAIN,
    prop_minimises_variance: _PLAIN,
}
EXAMPLES: dict = {}  # no known hard case beyond what the strategies draw
MAX_EXAMPLES: dict = {}  # every property: check_property's default, 100
ADAPTER = Adapter
REFERENCE = REFERENCE_WA  # the main algorithm: Algorithm 1 with Lemma 3's optimal weights


# Totality at the float extremes (properties/extremes.py): the records' declared domain of each
# mechanism, by its validate name: y_i in [0, B] (B public).
EXTREMES = {
    "epasto2020.wa": Domain({"values": (0.0, "B")}),
    "epasto2020.sample-limiting": Domain({"values": (0.0, "B")}),
}
