"""Property suite for Epasto et al. 2020 §5 (GWA_C, label-private linear regression).

Usable against any implementation wrapped as an ``Adapter`` whose stages take the
dataset (X = ``values``, y = ``labels`` in [0, B]) and the public parameters as keywords
(``GWAExample.params``):

- ``weights(dataset, *, B, epsilon, sigma)``     -> C, shape (d, n);
- ``statistic(dataset, *, B, epsilon, sigma)``   -> beta_hat, shape (d,), noise-free;
- ``sensitivity(dataset, *, B, epsilon, sigma)`` -> the L1 sensitivity it calibrates to;
- ``noise_scale(dataset, *, B, epsilon, sigma)`` -> the per-coordinate Laplace scale b;
- ``mechanism(dataset, rng, size, *, B, epsilon, sigma)`` -> releases (audited, not here).

Relation: replace-user-labels (X and S_l public). Every property raises AssertionError.
Tolerances: ``REL`` = 1e-9 relative for quantities that are sums of at most a few hundred
doubles (rounding below 1e-13 relative); ``G.CX_ATOL`` = 1e-8 for C X = I (the reference
solver reaches about 1e-12); ``OPT_RTOL`` = 1e-6 for optimality: the reference optimum is
certified to a relative duality gap <= 1e-6, so an implementation passing this is within
2e-6 of the true optimum, and one below the certified lower bound is impossible. The planted bugs
are off by 10% or more.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from userdp.reference import epasto2020_gwa as G
from userdp.reference.data import UserDataset

from .adapter import Adapter
from .strategies import neighbouring_pairs, user_datasets

__all__ = [
    "REL", "OPT_RTOL", "GWAExample", "gwa_examples", "REFERENCE_GWA", "REFERENCE_SL_OLS",
    "prop_CX_identity", "prop_weights_ignore_labels", "prop_noise_scale_matches_b",
    "prop_statistic_is_C_y", "prop_sensitivity_bounds_all_neighbours",
    "prop_sensitivity_bounds_sampled_neighbour", "prop_minimises_total_variance",
    "prop_refuses_labels_outside_range", "ALL_PROPERTIES", "sign_cancelling_example", "HARD_EXAMPLES",
    "total_variance_oracle", "dual_bound_oracle",
]

REL = 1e-9
OPT_RTOL = 1e-6
SL_SEED = 52  # the public seed of the sample-limiting selection in the reference adapter


@dataclass(frozen=True)
class GWAExample:
    dataset: UserDataset
    B: float
    epsilon: float
    sigma: float
    neighbour: UserDataset | None = None  # set by gwa_examples(relation=...)

    @property
    def params(self) -> dict:
        return {"B": self.B, "epsilon": self.epsilon, "sigma": self.sigma}


def _well_posed(D: UserDataset) -> bool:
    """X has full column rank with condition number <= G.MAX_CONDITION (the reference's
    certified domain; ``optimal_C`` refuses worse X with a ValueError)."""
    X = G.features(D)
    sv = np.linalg.svd(X, compute_uv=False)
    return X.shape[0] >= X.shape[1] and sv[-1] > 0 and sv[0] <= G.MAX_CONDITION * sv[-1]


@st.composite
def gwa_examples(draw, max_users: int = 6, max_records_per_user: int = 4, dim: int = 2, relation=None):
    """X in [-1, 1]^(n x dim) of full rank, y in [0, B], eps in [0.1, 20], sigma in [0.05, B];
    with ``relation``, also one neighbour (labels redrawn in [0, B])."""
    B = draw(st.sampled_from([1.0, 3.0]))
    datasets = user_datasets(min_users=2, max_users=max_users, max_records_per_user=max_records_per_user,
                             dim=dim, value_range=(-1.0, 1.0), labels=True, label_range=(0.0, B))
    eps = draw(st.one_of(st.sampled_from([0.5, 1.0, 5.0]), st.floats(0.1, 20.0)))
    sigma = draw(st.one_of(st.just(B / 2), st.floats(0.05, B)))
    if relation is None:
        D = draw(datasets)
        assume(_well_posed(D))
        return GWAExample(D, B, eps, sigma)
    pair = draw(neighbouring_pairs(relation, datasets=datasets, lo=0.0, hi=B))
    assume(_well_posed(pair.first))
    return GWAExample(pair.first, B, eps, sigma, pair.second)


def sign_cancelling_example(t: float = 0.25) -> GWAExample:
    """A known hard case for ``check_property(..., examples=[...])``: three users, each with
    records (1, t) and (1, -t). The optimal C gives each user slope weights +-1/(6t) = +-2/3
    that cancel in sum_i c_{2,i} but not in sum_i |c_{2,i}|, so an implementation that sums
    signed weights under-states b (b = 5/3 B/eps by Algorithm 3, 1/3 with signed sums), and
    the label move (0.5, 0.5) -> (0, 1) of one user realises 2/3 B > 1/3."""
    X = np.array([[1.0, t], [1.0, -t]] * 3)
    return GWAExample(UserDataset(X, [0, 0, 1, 1, 2, 2], labels=np.full(6, 0.5)), 1.0, 1.0, 0.5)


HARD_EXAMPLES = (sign_cancelling_example(),)


# ----------------------------------------------------------------------- reference adapters
def _adapter(name, weights_fn) -> Adapter:
    def statistic(D, *, B, epsilon, sigma):
        return G.statistic(D, weights_fn(D, B=B, epsilon=epsilon, sigma=sigma), B)

    def sensitivity(D, *, B, epsilon, sigma):
        return G.sensitivity(D, weights_fn(D, B=B, epsilon=epsilon, sigma=sigma), B)

    def noise_scale(D, *, B, epsilon, sigma):
        return G.noise_scale(D, weights_fn(D, B=B, epsilon=epsilon, sigma=sigma), B, epsilon)

    def mechanism(D, rng, size=None, *, B, epsilon, sigma):
        return G.mechanism(D, weights_fn(D, B=B, epsilon=epsilon, sigma=sigma), B, epsilon, rng, size)

    return Adapter(name, weights_fn, statistic, sensitivity, noise_scale, mechanism)


def _key(D, B, epsilon, sigma):
    """The WHOLE dataset (labels included) and the parameters: a cache keyed on the public
    part only would hand a label neighbour the same C by construction, and
    prop_weights_ignore_labels could not fail on the reference (review finding of issue 7)."""
    X = G.features(D)
    y = None if D.labels is None else D.labels.tobytes()
    return (X.tobytes(), X.shape, D.user_ids.tobytes(), y, B, epsilon, sigma)


def _dataset(key) -> UserDataset:
    xb, shape, ib, yb = key[:4]
    return UserDataset(np.frombuffer(xb).reshape(shape), np.frombuffer(ib, dtype=np.int64),
                       labels=None if yb is None else np.frombuffer(yb))


@lru_cache(maxsize=256)
def _gwa_cached(key):
    return G.optimal_C(_dataset(key), *key[4:])


@lru_cache(maxsize=256)
def _sl_cached(key):
    D = _dataset(key)
    # h* and T from a fixed public seed: T depends on S_l only, never on the labels.
    h, T = G.best_sample_limit_h(D, *key[4:], np.random.default_rng(SL_SEED))
    return G.sample_limited_C(D, h, T)


def _gwa_weights(D, *, B, epsilon, sigma):
    return _gwa_cached(_key(D, B, epsilon, sigma)).C.copy()


def _sl_weights(D, *, B, epsilon, sigma):
    return _sl_cached(_key(D, B, epsilon, sigma)).copy()


REFERENCE_GWA = _adapter("epasto2020.gwa (reference, optimal C)", _gwa_weights)
REFERENCE_SL_OLS = _adapter("epasto2020.sample-limited-ols (reference, best h)", _sl_weights)


# ------------------------------------------------------------------------------ helpers
def _C(impl: Adapter, D: UserDataset, ex: GWAExample) -> np.ndarray:
    C = np.asarray(impl.weights(D, **ex.params), dtype=float)
    d, n = G.features(D).shape[1], D.n
    _require(C.shape == (d, n), f"weights have shape {C.shape}, expected (d, n) = ({d}, {n})")
    return C


def _paper_b(D: UserDataset, C: np.ndarray, B: float, eps: float) -> float:
    """Algorithm 3 line 2, written out with a loop over users (independent of G.user_l1)."""
    return B / eps * max(float(np.abs(C[:, D.records_of(u)]).sum()) for u in D.users)


def _below(x: float, bound: float) -> bool:
    return x <= bound * (1 + REL) + 1e-300


def _require(ok: bool, message: str) -> None:
    """The one place a property fails: Hypothesis then reports one bug, not an ExceptionGroup."""
    if not ok:
        raise AssertionError(message)


# ------------------------------------------------------------------------------ properties
def prop_CX_identity(impl: Adapter, ex: GWAExample) -> None:
    """Algorithm 3's parameter: C X = I_d (unbiasedness), to G.CX_ATOL."""
    impl.require("weights")
    C = _C(impl, ex.dataset, ex)
    err = float(np.abs(C @ G.features(ex.dataset) - np.eye(C.shape[0])).max())
    _require(err <= G.CX_ATOL, f"max |C X - I| = {err:.3g} > {G.CX_ATOL:g}")


def prop_weights_ignore_labels(impl: Adapter, ex: GWAExample) -> None:
    """C may depend on X, S_l and the public parameters only: C(D) = C(D') for a label
    neighbour D' (else the sensitivity argument of Theorem 6 does not apply)."""
    impl.require("weights")
    _require(ex.neighbour is not None, "this property needs gwa_examples(relation=...)")
    C, C2 = _C(impl, ex.dataset, ex), _C(impl, ex.neighbour, ex)
    err = float(np.abs(C - C2).max())
    _require(err <= REL * float(np.abs(C).max()), f"C changes with the labels by {err!r}")


def prop_noise_scale_matches_b(impl: Adapter, ex: GWAExample) -> None:
    """Algorithm 3 line 2: b = B eps^-1 max_l sum_j sum_{i in S_l} |c_{j,i}| for the
    adapter's own C, and sensitivity = eps b."""
    impl.require("weights", "noise_scale")
    want = _paper_b(ex.dataset, _C(impl, ex.dataset, ex), ex.B, ex.epsilon)
    b = float(impl.noise_scale(ex.dataset, **ex.params))
    _require(abs(b - want) <= REL * want, f"Laplace scale b = {b!r}, Algorithm 3 gives {want!r}")
    if impl.sensitivity is not None:
        sens = float(impl.sensitivity(ex.dataset, **ex.params))
        _require(abs(sens - ex.epsilon * want) <= REL * ex.epsilon * want, (
            f"sensitivity {sens!r} != eps * b = {ex.epsilon * want!r}"))


def prop_statistic_is_C_y(impl: Adapter, ex: GWAExample) -> None:
    """Algorithm 3 line 1: beta_hat = C y with the adapter's own C."""
    impl.require("weights", "statistic")
    want = _C(impl, ex.dataset, ex) @ ex.dataset.labels
    got = np.asarray(impl.statistic(ex.dataset, **ex.params), dtype=float)
    err = float(np.abs(got - want).max())
    _require(err <= REL * ex.B * max(1.0, float(np.abs(want).max())), f"statistic {got} != C y = {want}")


def _check_pair(impl, ex, D, D2, what) -> None:
    sens = float(impl.sensitivity(D, **ex.params))
    diff = float(np.abs(np.asarray(impl.statistic(D, **ex.params)) - np.asarray(impl.statistic(D2, **ex.params))).sum())
    _require(_below(diff, sens), f"{what}: ||f(D) - f(D')||_1 = {diff!r} > sensitivity {sens!r}")


def prop_sensitivity_bounds_all_neighbours(impl: Adapter, ex: GWAExample) -> None:
    """Brute force over every label neighbour with new labels on {0, B}. This grid is
    exhaustive for the maximum: ||C (y - y')||_1 is convex in y', so its maximum over the
    box [0, B]^{S_l} is at a vertex. Keep datasets tiny (2^s_l neighbours per user)."""
    impl.require("statistic", "sensitivity")
    for pair in G.RELATION.enumerate(ex.dataset, [0.0, ex.B]):
        _check_pair(impl, ex, pair.first, pair.second, pair.description)


def prop_sensitivity_bounds_sampled_neighbour(impl: Adapter, ex: GWAExample) -> None:
    """The bound on one Hypothesis neighbour of a larger dataset, and on the adversarial
    neighbours G.worst_case_pairs builds from the adapter's C (sign-aligned labels)."""
    impl.require("statistic", "sensitivity")
    _require(ex.neighbour is not None, "this property needs gwa_examples(relation=...)")
    _check_pair(impl, ex, ex.dataset, ex.neighbour, "sampled neighbour")
    if impl.weights is not None:
        for pair in G.worst_case_pairs(ex.dataset, _C(impl, ex.dataset, ex), ex.B):
            _check_pair(impl, ex, pair.first, pair.second, pair.description)


def total_variance_oracle(D: UserDataset, C: np.ndarray, B: float, eps: float, sigma: float) -> float:
    """Theorem 6 written out: sigma^2 sum_j sum_i c_{j,i}^2 + 2 d (b)^2 with Algorithm 3's b
    (``_paper_b``, a loop over users); independent of ``G.total_variance``."""
    d = C.shape[0]
    return sigma**2 * math.fsum((C * C).ravel().tolist()) + 2 * d * _paper_b(D, C, B, eps) ** 2


def dual_bound_oracle(D: UserDataset, B: float, eps: float, sigma: float, Lam, mu) -> float:
    """Weak-duality lower bound on min_C Theorem 6 (derived in ``G.dual_bound``'s docstring),
    written out here with a loop over records; valid for ANY Lambda and mu >= 0.

    sigma > 0 and mu given: tr(Lam) - sum_i ||S(Lam x_i, mu_l(i))||^2 / (4 sigma^2) - (sum mu)^2 / (4 kappa),
    S the soft threshold. mu None (the LP's multipliers): kappa (tr(Lam)_+ / sum_l max_{i in S_l}
    ||Lam x_i||_inf)^2, the sigma = 0 bound, which also bounds every sigma > 0 problem from below.
    """
    X = G.features(D)
    d = X.shape[1]
    kappa = 2 * d * (B / eps) ** 2
    Lam = np.asarray(Lam, dtype=float)
    if mu is None:
        top = {}
        for i, u in enumerate(D.user_ids.tolist()):
            top[u] = max(top.get(u, 0.0), float(np.abs(Lam @ X[i]).max()))
        return kappa * (max(float(np.trace(Lam)), 0.0) / math.fsum(top.values())) ** 2
    pos = {u: l for l, u in enumerate(D.users.tolist())}
    total = 0.0
    for i, u in enumerate(D.user_ids.tolist()):
        a, t = Lam @ X[i], float(mu[pos[u]])
        s = np.sign(a) * np.maximum(np.abs(a) - t, 0.0)
        total += float(s @ s)
    return float(np.trace(Lam)) - total / (4 * sigma**2) - float(np.sum(mu)) ** 2 / (4 * kappa)


def prop_minimises_total_variance(impl: Adapter, ex: GWAExample) -> None:
    """Theorem 6: the adapter's C is optimal. Oracles independent of the adapter and of
    ``G.total_variance``/``G.dual_bound``: the variance written out (``total_variance_oracle``)
    and the weak-duality bound recomputed from the reference's multipliers
    (``dual_bound_oracle``). No C with C X = I can go below that bound, and the adapter's
    variance must be within OPT_RTOL of it (the reference optimum is certified to 1e-6 of
    the same bound, so 2 OPT_RTOL leaves room for both). Moving C along a feasible
    direction N P (N X = 0 after the projection P) must not lower the variance either."""
    impl.require("weights")
    D = ex.dataset
    C = _C(impl, D, ex)
    ref = _gwa_cached(_key(D, ex.B, ex.epsilon, ex.sigma))
    V = total_variance_oracle(D, C, ex.B, ex.epsilon, ex.sigma)
    lb = dual_bound_oracle(D, ex.B, ex.epsilon, ex.sigma, ref.Lambda, ref.mu)
    _require(V >= lb * (1 - REL), f"variance {V!r} below the weak-duality bound {lb!r}: impossible for C X = I")
    _require(V <= lb * (1 + 2 * OPT_RTOL) + 1e-300,
             f"variance {V!r} exceeds the certified lower bound {lb!r} by {V / lb - 1:.3g} relative "
             f"(> 2 OPT_RTOL = {2 * OPT_RTOL:g}): C is not optimal")
    X = G.features(D)
    P = np.eye(D.n) - X @ np.linalg.solve(X.T @ X, X.T)              # onto {N : N X = 0}
    rng = np.random.default_rng(0)
    for t in (1e-3, 1e-1):
        Cp = C + t * float(np.abs(C).max()) * rng.standard_normal(C.shape) @ P
        Vp = total_variance_oracle(D, Cp, ex.B, ex.epsilon, ex.sigma)
        _require(Vp >= V * (1 - 2 * OPT_RTOL), f"a feasible perturbation lowers the variance: {Vp!r} < {V!r}")


def prop_refuses_labels_outside_range(impl: Adapter, ex: GWAExample) -> None:
    """§5 assumes y in [0, B]: a label of -B/2 or 3B/2 is refused (ValueError), not used or clipped."""
    impl.require("statistic")
    for bad in (-ex.B / 2, 1.5 * ex.B):
        y = ex.dataset.labels.copy()
        y[0] = bad
        try:
            impl.statistic(ex.dataset.with_fields(labels=y), **ex.params)
        except ValueError:
            continue
        _require(False, f"label {bad!r} outside [0, B = {ex.B}] was accepted")


ALL_PROPERTIES = (prop_CX_identity, prop_weights_ignore_labels, prop_noise_scale_matches_b,
                  prop_statistic_is_C_y, prop_sensitivity_bounds_all_neighbours,
                  prop_sensitivity_bounds_sampled_neighbour, prop_minimises_total_variance,
                  prop_refuses_labels_outside_range)
