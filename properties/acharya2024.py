"""Property suite for Acharya et al. 2024 (PDP-OP, personalized-DP ridge regression).

Usable against any implementation wrapped as an ``Adapter``. The suite passes the dataset
positionally and the public parameters by keyword (``PDPExample.params``), exactly as here:

- ``weights(dataset, Lambda=Lambda)``        -> w, shape (n,);
- ``statistic(dataset, Lambda=Lambda)``      -> theta_bar, shape (d,), noise-free;
- ``sensitivity(dataset, Lambda=Lambda)``    -> Delta_i, shape (n,): the per-record L2 sensitivity;
- ``noise_scale(dataset, Lambda=Lambda)``    -> 1 / eta (the L2-Laplace scale);
- ``mechanism(dataset, rng=rng, size=size, Lambda=Lambda)`` -> releases theta_bar + Z, shape
  (d,) or (size, d) (the keywords of ``reference.acharya2024.mechanism``).

For the Jorgensen et al. 2015 baseline (``JORGENSEN_PROPERTIES``, ``REFERENCE_JORGENSEN``),
``weights(dataset, Lambda=Lambda, threshold=threshold)`` returns the sampling probabilities
p_i instead. The non-personalized baseline (``NONPERSONALIZED_PROPERTIES``,
``REFERENCE_NONPERSONALIZED``) has the stages of PDP-OP.

Parameters:

- ``dataset``: a ``UserDataset``, one record per unit: X = ``values`` (n, d) in [0, 1]^d,
  y = ``labels`` (n,) in [-1, 1], and the public privacy profile ``epsilons`` (n,): eps_i > 0
  is record i's own pure-DP level (Definition 2.2);
- ``Lambda``: the ridge penalty lambda > 0 of eq. 2, sum_i w_i (y_i - theta.x_i)^2 + lambda
  ||theta||^2 with sum_i w_i = 1 (no 1/n: dimensionless, not scaled by n);
- ``threshold``: Jorgensen's t, the privacy level (an epsilon) at which the inner estimator
  runs; records are kept with probability p_i = min(1, (e^eps_i - 1) / (e^t - 1));
- ``rng``: a ``numpy.random.Generator``; ``size``: None (one release) or the number of releases;
- returned ``sensitivity``: Delta_i, the L2 sensitivity of theta_bar to replacing record i
  (unit of theta); ``noise_scale``: 1 / eta, the scale of the noise density prop. to
  exp(-eta ||z||_2) (its radius is Gamma(d, scale 1/eta)); not a standard deviation.

Relation: replace-record (``RELATION``); claim eps_i for record i. ``pdp_examples`` draws
an i-neighbour by default; ``pdp_examples(neighbour=False)`` draws none, and the
sampled-neighbour property then has no usable example (``check_property`` raises
RuntimeError: a bug of the caller, never a verdict). Every property raises AssertionError.

Oracles, written out here and independent of ``reference/acharya2024.py``:
- theta_bar by least squares on the augmented system [sqrt(w) X; sqrt(lambda) I] theta ~
  [sqrt(w) y; 0] (``ridge_oracle``: lstsq, not the normal equations the reference solves);
- eta of Theorem 3.2, lambda sum eps / (2 sqrt(d)(1 + sqrt(d) B(lambda))) (``eta_oracle``);
- the exact privacy loss of a pair under L2-Laplace noise of rate eta:
  eta ||theta_bar(D) - theta_bar(D')||, which must be <= eps_i for record i;
- scipy's Gamma and Beta laws for the noise (Remark 3.1: radius Gamma(d, rate eta),
  direction uniform, so u_1^2 ~ Beta(1/2, (d - 1)/2) for u uniform on S^{d-1}).
Tolerance ``REL`` = 1e-9 relative (sums of at most a few dozen doubles).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from scipy import stats

from userdp.reference import acharya2024 as A
from userdp.reference.data import UserDataset

from .extremes import Domain
from .adapter import Adapter

__all__ = [
    "REL",
    "STAT_LEVEL",
    "PDPExample",
    "pdp_examples",
    "assumption_breaking_example",
    "uneven_profile_example",
    "HARD_EXAMPLES",
    "REFERENCE",
    "REFERENCE_NONPERSONALIZED",
    "REFERENCE_JORGENSEN",
    "ridge_oracle",
    "eta_oracle",
    "prop_weights_sum_to_one",
    "prop_eta_is_theorem32",
    "prop_eta_times_sensitivity_is_eps",
    "prop_noise_scale_is_public",
    "prop_loss_bounded_on_corner_neighbours",
    "prop_loss_bounded_on_sampled_neighbour",
    "prop_statistic_is_weighted_ridge",
    "prop_refuses_lambda_zero",
    "prop_refuses_out_of_domain",
    "prop_noise_is_gamma_radius_uniform_direction",
    "prop_nonpersonalized_is_constant_profile",
    "prop_jorgensen_levels_within_eps",
    "ALL_PROPERTIES",
    "STATISTICAL_PROPERTIES",
    "NONPERSONALIZED_PROPERTIES",
    "JORGENSEN_PROPERTIES",
    "STRATEGIES",
    "EXAMPLES",
    "MAX_EXAMPLES",
    "RELATION",
    "ADAPTER",
    "EXTREMES",
]

REL = 1e-9
STAT_LEVEL = 5e-5  # each of the two noise tests: together <= 1e-4 false failures per example
NOISE_DRAWS = 20_000
RELATION = A.RELATION  # Definition 2.1: i-neighbours differ in record i only (REPLACE_RECORD)


@dataclass(frozen=True)
class PDPExample:
    dataset: UserDataset
    Lambda: float
    threshold: float | None = None  # Jorgensen's t (JORGENSEN_PROPERTIES only)
    neighbour: UserDataset | None = None  # an i-neighbour under RELATION (pdp_examples() draws one)

    @property
    def params(self) -> dict:
        return {"Lambda": self.Lambda}


@st.composite
def pdp_examples(draw, max_n: int = 4, max_d: int = 2, neighbour: bool = True):
    """n <= max_n records, d <= max_d, x in [0, 1]^d, y in [-1, 1], eps in [0.01, 2],
    lambda in {0.01, 0.1, 1, 10, 100} or [0.01, 100]; t = max eps; and one i-neighbour under
    the suite's ``RELATION`` (``neighbour=False``: none, for the properties that need none)."""
    n, d = draw(st.integers(1, max_n)), draw(st.integers(1, max_d))
    unit = st.floats(0.0, 1.0)
    X = np.array(draw(st.lists(st.lists(unit, min_size=d, max_size=d), min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.floats(-1.0, 1.0), min_size=n, max_size=n)))
    eps = np.array(draw(st.lists(st.floats(0.01, 2.0), min_size=n, max_size=n)))
    lam = draw(st.one_of(st.sampled_from([0.01, 0.1, 1.0, 10.0, 100.0]), st.floats(0.01, 100.0)))
    D = UserDataset(X, np.arange(n), labels=y, epsilons=eps)
    D2 = None
    if neighbour:
        i = draw(st.integers(0, n - 1))
        x2 = np.array(draw(st.lists(unit, min_size=d, max_size=d)))
        D2 = RELATION.neighbour(D, i, x2, draw(st.floats(-1.0, 1.0)))
    return PDPExample(D, lam, float(eps.max()), D2)


def assumption_breaking_example() -> PDPExample:
    """A known hard case (Theorem 3.4): nine records at x = 0.1, y = 1 (eps 1) make
    ||theta_bar_0|| = 10, and record 0 (eps 1e-3, so w_0 << lambda) moves between x = 1 and
    x = 0 with y = -1. Under Theorem 3.2 the shift is 0.136 Delta_0; with Theorem 3.4's eta at
    B = 0.01 (violated on both sides) it is 1.48 x the Delta_0 that B promises."""
    X = np.full((10, 1), 0.1)
    X[0] = 1.0
    y, eps = np.ones(10), np.ones(10)
    y[0], eps[0] = -1.0, 1e-3
    return PDPExample(UserDataset(X, np.arange(10), labels=y, epsilons=eps), 0.01, 1.0)


def uneven_profile_example() -> PDPExample:
    """A known hard case: d = 1, lambda = 100, eps = (0.05, 2, 2), records at x = 0.5; its
    neighbour moves record 1 between the corners (1, -1) and (1, +1), which realises 0.99 of
    Delta_1. A calibration to one average record at the largest eps gives record 1 the loss
    n eps_max w_1 x 0.99 = 2.96 > eps_1 = 2."""
    D = UserDataset(np.full((3, 1), 0.5), np.arange(3), labels=np.zeros(3), epsilons=np.array([0.05, 2.0, 2.0]))
    a = A.RELATION.neighbour(D, 1, np.ones(1), -1.0)
    return PDPExample(a, 100.0, 2.0, A.RELATION.neighbour(a, 1, np.ones(1), 1.0))


HARD_EXAMPLES = (assumption_breaking_example(), uneven_profile_example())


# ----------------------------------------------------------------------- oracles
def ridge_oracle(X: np.ndarray, y: np.ndarray, w: np.ndarray, lam: float) -> np.ndarray:
    """argmin sum w_i (y_i - theta.x_i)^2 + lam ||theta||^2 by least squares on the
    augmented system (eq. 2), independent of the normal equations."""
    d = X.shape[1]
    sw = np.sqrt(w)
    M = np.vstack([X * sw[:, None], math.sqrt(lam) * np.eye(d)])
    return np.linalg.lstsq(M, np.concatenate([y * sw, np.zeros(d)]), rcond=None)[0]


def eta_oracle(eps: np.ndarray, d: int, lam: float) -> float:
    """Theorem 3.2: eta = lam sum eps / (2 sqrt(d) (1 + sqrt(d) B(lam))), B = min(lam^-1/2, sqrt(d)/lam)."""
    B = min(1.0 / math.sqrt(lam), math.sqrt(d) / lam)
    return lam * math.fsum(eps) / (2.0 * math.sqrt(d) * (1.0 + math.sqrt(d) * B))


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise AssertionError(message)


def _eta(impl: Adapter, D: UserDataset, ex: PDPExample) -> float:
    return 1.0 / float(impl.noise_scale(D, **ex.params))


def _check_loss(impl: Adapter, ex: PDPExample, D: UserDataset, D2: UserDataset, i: int, what: str) -> None:
    """The exact loss of the pair, eta ||theta_bar(D) - theta_bar(D')||, is <= eps_i."""
    eta = _eta(impl, D, ex)
    shift = float(
        np.linalg.norm(np.asarray(impl.statistic(D, **ex.params)) - np.asarray(impl.statistic(D2, **ex.params)))
    )
    eps_i = float(D.epsilons[i])
    _require(eta * shift <= eps_i * (1 + REL), f"{what}: loss eta ||shift|| = {eta * shift!r} > eps_{i} = {eps_i!r}")
    if impl.sensitivity is not None:
        sens = float(np.asarray(impl.sensitivity(D, **ex.params))[i])
        _require(shift <= sens * (1 + REL), f"{what}: ||shift|| = {shift!r} > declared Delta_{i} = {sens!r}")


# ---------------------------------------------------------------------- properties
def prop_weights_sum_to_one(impl: Adapter, ex: PDPExample) -> None:
    """Theorem 3.2: w_i = eps_i / sum_j eps_j: non-negative, sum 1, proportional to eps."""
    impl.require("weights")
    w = np.asarray(impl.weights(ex.dataset, **ex.params), dtype=float)
    eps = np.asarray(ex.dataset.epsilons)
    _require(w.shape == eps.shape and np.all(w >= 0), f"weights {w} must be (n,) and >= 0")
    _require(abs(math.fsum(w) - 1.0) <= REL, f"weights sum to {math.fsum(w)!r}, not 1")
    want = eps / math.fsum(eps)
    _require(np.allclose(w, want, rtol=REL, atol=0), f"weights {w} != eps / sum eps = {want}")


def prop_eta_is_theorem32(impl: Adapter, ex: PDPExample) -> None:
    """1 / noise_scale equals Theorem 3.2's eta (``eta_oracle``)."""
    impl.require("noise_scale")
    D = ex.dataset
    want = eta_oracle(np.asarray(D.epsilons), D.values.reshape(D.n, -1).shape[1], ex.Lambda)
    got = _eta(impl, D, ex)
    _require(abs(got - want) <= REL * want, f"eta = {got!r}, Theorem 3.2 gives {want!r}")


def prop_eta_times_sensitivity_is_eps(impl: Adapter, ex: PDPExample) -> None:
    """eta Delta_i = eps_i for every record (the calibration of Lemma A.5)."""
    impl.require("noise_scale", "sensitivity")
    eta = _eta(impl, ex.dataset, ex)
    sens = np.asarray(impl.sensitivity(ex.dataset, **ex.params), dtype=float)
    eps = np.asarray(ex.dataset.epsilons)
    _require(np.allclose(eta * sens, eps, rtol=REL, atol=0), f"eta * Delta = {eta * sens} != eps = {eps}")


def prop_noise_scale_is_public(impl: Adapter, ex: PDPExample) -> None:
    """The noise scale reads only public parts (n, d, the profile, lambda): it is the same on
    every corner i-neighbour. A scale that moves with the data (for example Theorem 3.4's B
    estimated from the data) makes the loss unbounded, whatever the shift."""
    impl.require("noise_scale")
    D = ex.dataset
    d = D.values.reshape(D.n, -1).shape[1]
    s0 = float(impl.noise_scale(D, **ex.params))
    for i in range(D.n):
        for c in itertools.product([0.0, 1.0], repeat=d + 1):
            D2 = A.RELATION.neighbour(D, i, np.array(c[:d]), 2 * c[d] - 1)
            s = float(impl.noise_scale(D2, **ex.params))
            _require(abs(s - s0) <= REL * s0, f"noise scale {s0!r} on D but {s!r} on record {i} -> {c}")


def prop_loss_bounded_on_corner_neighbours(impl: Adapter, ex: PDPExample) -> None:
    """Brute force: record i moved between every pair of domain corners (x in {0, 1}^d,
    y in {-1, 1}); the exact loss eta ||shift|| <= eps_i and ||shift|| <= Delta_i. Keep n, d tiny."""
    impl.require("statistic", "noise_scale")
    D = ex.dataset
    d = D.values.reshape(D.n, -1).shape[1]
    corners = list(itertools.product([0.0, 1.0], repeat=d + 1))
    for i in range(D.n):
        sides = [A.RELATION.neighbour(D, i, np.array(c[:d]), 2 * c[d] - 1) for c in corners]
        for (a, ca), (b, cb) in itertools.combinations(zip(sides, corners), 2):
            _check_loss(impl, ex, a, b, i, f"record {i}: {ca} vs {cb}")
    for i in range(D.n):  # and from the dataset itself to each corner
        for b, cb in zip([A.RELATION.neighbour(D, i, np.array(c[:d]), 2 * c[d] - 1) for c in corners], corners):
            _check_loss(impl, ex, D, b, i, f"record {i}: as given vs {cb}")


def prop_loss_bounded_on_sampled_neighbour(impl: Adapter, ex: PDPExample) -> None:
    """The same bound on a Hypothesis neighbour (record i replaced anywhere in the domain)."""
    impl.require("statistic", "noise_scale")
    # An example without a neighbour cannot test this bound: rejected, never a silent pass
    # (pdp_examples(neighbour=False) alone gives no usable example: check_property raises).
    assume(ex.neighbour is not None)
    (i,) = A.RELATION.changed_units(ex.dataset, ex.neighbour) or {0}
    _check_loss(impl, ex, ex.dataset, ex.neighbour, i, f"sampled neighbour (record {i})")


def prop_statistic_is_weighted_ridge(impl: Adapter, ex: PDPExample) -> None:
    """eq. 2 with w_i = eps_i / sum eps, against ``ridge_oracle``."""
    impl.require("statistic")
    D = ex.dataset
    X = D.values.reshape(D.n, -1)
    eps = np.asarray(D.epsilons)
    want = ridge_oracle(X, np.asarray(D.labels), eps / math.fsum(eps), ex.Lambda)
    got = np.asarray(impl.statistic(D, **ex.params), dtype=float)
    err = float(np.linalg.norm(got - want))
    _require(err <= 1e-8 * max(1.0, float(np.linalg.norm(want))), f"theta_bar = {got}, eq. 2 gives {want}")


def prop_refuses_lambda_zero(impl: Adapter, ex: PDPExample) -> None:
    """lambda = 0 is refused (ValueError) by the noise stage and the mechanism: the authors'
    code then sets eta = 0 and releases theta_bar with no noise (docs/papers/acharya2024.md)."""
    impl.require("noise_scale")
    stages = [("noise_scale", lambda: impl.noise_scale(ex.dataset, Lambda=0.0))]
    if impl.mechanism is not None:
        stages.append(
            ("mechanism", lambda: impl.mechanism(ex.dataset, rng=np.random.default_rng(0), size=2, Lambda=0.0))
        )
    for name, call in stages:
        try:
            out = call()
        except ValueError:
            continue
        _require(False, f"{name} accepted lambda = 0 and returned {out!r}")


def prop_refuses_out_of_domain(impl: Adapter, ex: PDPExample) -> None:
    """x outside [0, 1]^d or y outside [-1, 1] is refused (ValueError), never clipped."""
    impl.require("statistic")
    D = ex.dataset
    for field, value in (("values", 1.5), ("values", -0.5), ("labels", 2.0), ("labels", -1.5)):
        arr = np.array(getattr(D, field), dtype=float)
        arr.reshape(D.n, -1)[0, 0] = value
        try:
            impl.statistic(D.with_fields(**{field: arr}), **ex.params)
        except ValueError:
            continue
        _require(False, f"{field} entry {value!r} outside the domain was accepted")


def prop_noise_is_gamma_radius_uniform_direction(impl: Adapter, ex: PDPExample) -> None:
    """Remark 3.1: Z = release - theta_bar has ||Z|| ~ Gamma(d, rate eta_oracle) and a uniform
    direction: KS of the radii against scipy's Gamma, and (d >= 2) of u_1^2 against
    Beta(1/2, (d-1)/2), or (d = 1) a binomial test of the sign. Fixed seed; each test at
    STAT_LEVEL, so a correct mechanism fails with probability <= 1e-4 per example."""
    impl.require("statistic", "mechanism")
    D = ex.dataset
    d = D.values.reshape(D.n, -1).shape[1]
    eta = eta_oracle(np.asarray(D.epsilons), d, ex.Lambda)
    z = np.asarray(impl.mechanism(D, rng=np.random.default_rng(2024), size=NOISE_DRAWS, **ex.params)).reshape(
        NOISE_DRAWS, d
    )
    z = z - np.asarray(impl.statistic(D, **ex.params))
    r = np.linalg.norm(z, axis=1)
    p_r = stats.kstest(r, stats.gamma(d, scale=1.0 / eta).cdf).pvalue
    _require(p_r >= STAT_LEVEL, f"radii are not Gamma({d}, rate {eta:.6g}): KS p = {p_r:.3g}")
    if d == 1:
        p_u = stats.binomtest(int(np.count_nonzero(z[:, 0] > 0)), NOISE_DRAWS, 0.5).pvalue
    else:
        p_u = stats.kstest((z[:, 0] / r) ** 2, stats.beta(0.5, (d - 1) / 2).cdf).pvalue
    _require(p_u >= STAT_LEVEL, f"direction not uniform: p = {p_u:.3g}")


def prop_nonpersonalized_is_constant_profile(impl: Adapter, ex: PDPExample) -> None:
    """§4's baseline: PDP-OP with every eps_i := min eps. Its statistic is the ridge with
    uniform weights and its eta is Theorem 3.2's at the constant profile."""
    impl.require("statistic", "noise_scale")
    D = ex.dataset
    X = D.values.reshape(D.n, -1)
    flat = np.full(D.n, float(np.min(D.epsilons)))
    want = ridge_oracle(X, np.asarray(D.labels), np.full(D.n, 1.0 / D.n), ex.Lambda)
    got = np.asarray(impl.statistic(D, **ex.params), dtype=float)
    _require(
        np.linalg.norm(got - want) <= 1e-8 * max(1.0, float(np.linalg.norm(want))),
        f"statistic {got} != uniform-weight ridge {want}",
    )
    e_want, e_got = eta_oracle(flat, X.shape[1], ex.Lambda), _eta(impl, D, ex)
    _require(abs(e_got - e_want) <= REL * e_want, f"eta {e_got!r} != constant-profile eta {e_want!r}")


def prop_jorgensen_levels_within_eps(impl: Adapter, ex: PDPExample) -> None:
    """Jorgensen et al. 2015: p_i in (0, 1] and the amplified level ln(1 + p_i (e^t - 1)) <= eps_i."""
    impl.require("weights")
    t = ex.threshold
    p = np.asarray(impl.weights(ex.dataset, Lambda=ex.Lambda, threshold=t), dtype=float)
    eps = np.asarray(ex.dataset.epsilons)
    _require(np.all(p > 0) and np.all(p <= 1), f"probabilities {p} must lie in (0, 1]")
    level = np.log1p(p * math.expm1(t))
    _require(np.all(level <= eps * (1 + REL)), f"amplified levels {level} exceed eps {eps}")


# ---------------------------------------------------------------------- adapters
def _ref_weights(D, *, Lambda):
    return A.weights(D)


REFERENCE = Adapter(
    "acharya2024.pdp-op (reference)",
    _ref_weights,
    lambda D, *, Lambda: A.statistic(D, Lambda),
    lambda D, *, Lambda: A.sensitivity(D, Lambda),
    lambda D, *, Lambda: A.noise_scale(D, Lambda),
    lambda D, rng, size=None, *, Lambda: A.mechanism(D, rng, size, Lambda=Lambda),
)


def _flat(D):
    return D.with_fields(epsilons=A.nonpersonalized_epsilons(D))


REFERENCE_NONPERSONALIZED = Adapter(
    "acharya2024.nonpersonalized (reference)",
    None,
    lambda D, *, Lambda: A.statistic(_flat(D), Lambda),
    None,
    lambda D, *, Lambda: A.noise_scale(_flat(D), Lambda),
    lambda D, rng, size=None, *, Lambda: A.nonpersonalized_mechanism(D, rng, size, Lambda=Lambda),
)

REFERENCE_JORGENSEN = Adapter(
    "acharya2024.jorgensen (reference)",
    lambda D, *, Lambda, threshold: A.jorgensen_probabilities(D.epsilons, threshold),
)

# ---------------------------------------------------------------------- the suite
# ALL_PROPERTIES: every property of PDP-OP (REFERENCE), its statistical one included; the
# baselines' own properties are in NONPERSONALIZED_PROPERTIES and JORGENSEN_PROPERTIES.
STATISTICAL_PROPERTIES = (prop_noise_is_gamma_radius_uniform_direction,)  # run on one fixed example
ALL_PROPERTIES = (
    prop_weights_sum_to_one,
    prop_eta_is_theorem32,
    prop_eta_times_sensitivity_is_eps,
    prop_noise_scale_is_public,
    prop_loss_bounded_on_corner_neighbours,
    prop_loss_bounded_on_sampled_neighbour,
    prop_statistic_is_weighted_ridge,
    prop_refuses_lambda_zero,
    prop_refuses_out_of_domain,
) + STATISTICAL_PROPERTIES
NONPERSONALIZED_PROPERTIES = (prop_nonpersonalized_is_constant_profile,)
JORGENSEN_PROPERTIES = (prop_jorgensen_levels_within_eps,)

_EVERY = ALL_PROPERTIES + NONPERSONALIZED_PROPERTIES + JORGENSEN_PROPERTIES
# SMALL: brute force over corners (2^(d+1) per record, pairs of them), so n <= 3, d <= 2.
_SMALL = pdp_examples(max_n=3, max_d=2, neighbour=False)
STRATEGIES = {p: _SMALL for p in _EVERY}
STRATEGIES[prop_loss_bounded_on_sampled_neighbour] = pdp_examples(max_n=6, max_d=3, neighbour=True)
# The statistical property runs on ONE fixed example (20,000 draws, two tests at STAT_LEVEL):
# a correct mechanism fails it with probability <= 2 STAT_LEVEL = 1e-4; more examples would
# multiply that.
STRATEGIES[prop_noise_is_gamma_radius_uniform_direction] = st.just(uneven_profile_example())
EXAMPLES = {p: list(HARD_EXAMPLES) for p in _EVERY if p not in STATISTICAL_PROPERTIES}
MAX_EXAMPLES = {p: 25 for p in _EVERY}
MAX_EXAMPLES.update({p: 1 for p in STATISTICAL_PROPERTIES})
ADAPTER = Adapter


# Totality at the float extremes (properties/extremes.py): the records' declared domain of each
# mechanism, by its validate name. §3: features in [0, 1]^d, labels in [-1, 1]; eps_i are public.
_ACHARYA_DOMAIN = Domain({"values": (0.0, 1.0), "labels": (-1.0, 1.0)})
EXTREMES = {
    name: _ACHARYA_DOMAIN
    for name in (
        "acharya2024.pdp-op",
        "acharya2024.pdp-op-d2",
        "acharya2024.nonpersonalized",
        "acharya2024.jorgensen-max",
        "acharya2024.jorgensen-mean",
    )
}
