"""Property suite for Amin et al. 2019 Algorithm 1 (first tau records per user, CMS11 output
perturbation): ``reference/amin2019_erm.py``.

Adapter stage call shapes: the suite passes the dataset positionally and every other
argument by keyword, exactly as here; ``**params`` = dict(tau, Lambda, n_min, loss, R, Y), an
example's third element:
    weights(D, tau=tau, n_min=n_min) -> (n,) objective weights (0 for a dropped record)
    statistic(D, **params) -> theta-hat (d,), noise-free
    sensitivity(**params) -> Delta_2, the L2 sensitivity of theta-hat under add/remove-user
    noise_scale(D, epsilon=epsilon, **params) -> scale of exp(-||b|| / scale)   (D passed on
        purpose: the property checks that the scale does not depend on it)
    mechanism(D, rng=rng, size=size, epsilon=epsilon, **params) -> (d,) or (size, d)

Parameters:
    D: a ``UserDataset`` with features ``values`` (n, d), ||x_i||_2 <= R, and ``labels`` in
        {-1, +1} (logistic) or [-Y, Y] (ridge); the records of each user are S_l
    tau: the public number of records kept per user (Amin §5: min(s_l, tau) are kept), an int >= 1
    Lambda: the strong-convexity constant of the objective, sum_i w_i l + (Lambda/2) ||theta||^2 (> 0)
    n_min: the public floor of the normaliser n' = max(n_tau, n_min) (an int >= 1)
    loss: "logistic" or "ridge"; R: the bound on ||x_i||_2; Y: the bound on |y_i| (ridge)
    epsilon: the pure-DP budget
    rng: a ``numpy.random.Generator``; size: None (one release) or the number of releases

Relation: add/remove-user (Amin Def. 1). Oracle (review finding 3): ``amin_reference().noise_scale``
reads the scale back from a release of the reference mechanism on the given D
(``_released_scale``), so ``prop_noise_scale_is_public`` tests what the mechanism does on D
and D', not a formula that never sees the data. The record and dataset strategies shared with
the Epasto suite are in ``properties/erm.py``.
"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import strategies as st

from userdp.reference import amin2019_erm as A
from userdp.reference.data import UserDataset
from userdp.reference.mechanisms import l2_laplace_noise
from userdp.reference.neighbours import ADD_REMOVE_USER

from .extremes import Domain
from .adapter import Adapter
from .erm import _record_points, erm_datasets

__all__ = [
    "amin_reference",
    "add_user",
    "amin_params",
    "amin_pairs",
    "amin_worst_pairs",
    "amin_cases",
    "amin_brute_force_pairs",
    "prop_tau_bounds_records_per_user",
    "prop_minimiser_within_sensitivity",
    "prop_noise_scale_is_public",
    "ALL_PROPERTIES",
    "STRATEGIES",
    "EXAMPLES",
    "MAX_EXAMPLES",
    "RELATION",
    "ADAPTER",
    "REFERENCE",
    "EXTREMES",
]

# Tolerance for "moves by at most Delta": the reference minimiser is certified to
# ||theta - theta*|| <= 1e-12 / Lambda (erm.minimise; tests/test_erm.py checks the
# certificate), and Lambda >= 0.05 here, so 1e-9 absolute + 1e-9 relative covers twice
# the optimisation error with a 50x margin while staying far below any real excess.
_ABS_TOL, _REL_TOL = 1e-9, 1e-9


# ------------------------------------------------------------------------------ adapters
READBACK_SEED = 20190  # the public seed of the one release ``_released_scale`` reads


def _released_scale(D: UserDataset, *, epsilon, **params) -> float:
    """The scale of the noise the reference mechanism adds to D, read back from one release.

    The mechanism releases theta-hat + z, z = r u with r ~ Gamma(d, scale) and u uniform on
    the sphere (``mechanisms.l2_laplace_noise``): z is ``scale`` times the unit-scale draw of
    the same generator state. So with one seed, ||release - theta-hat|| / ||unit draw|| is the
    scale used on D (to rounding, 1e-15 relative here: |theta-hat| <= L / Lambda and the
    scale >= 2 L / (9 Lambda) for n_min <= 8). A scale that depended on D would show here.
    """
    theta = np.asarray(A.statistic(D, **params), dtype=float)
    out = A.mechanism(D, np.random.default_rng(READBACK_SEED), epsilon=epsilon, **params)
    unit = l2_laplace_noise(1.0, theta.size, np.random.default_rng(READBACK_SEED))
    return float(np.linalg.norm(out - theta) / np.linalg.norm(unit))


def amin_reference() -> Adapter:
    """The reference of Amin's ERM (reference/amin2019_erm.py) in the suite's adapter."""
    return Adapter(
        name="reference amin2019_erm",
        weights=lambda D, tau, n_min, **_: A.weights(D, tau, n_min),
        statistic=A.statistic,
        sensitivity=lambda **p: A.sensitivity(**p),
        noise_scale=_released_scale,
        mechanism=A.mechanism,
    )


# ----------------------------------------------------------------------- neighbour builders
def add_user(D: UserDataset, values, labels) -> UserDataset:
    """Amin Def. 1 neighbour: a new user (fresh id) with the given records."""
    return ADD_REMOVE_USER.neighbour(
        D, int(D.users.max()) + 1, np.asarray(values, dtype=float), labels=np.asarray(labels, dtype=float)
    )


# ------------------------------------------------------------------------------ strategies
@st.composite
def amin_params(draw, loss: str = "logistic") -> dict:
    """Public parameters of Amin's ERM: tau, Lambda, n_min (and the loss's bounds R = Y = 1)."""
    return dict(
        tau=draw(st.integers(1, 6)),
        Lambda=draw(st.floats(0.05, 2.0)),
        n_min=draw(st.integers(1, 8)),
        loss=loss,
        R=1.0,
        Y=1.0,
    )


@st.composite
def amin_pairs(draw, loss: str = "logistic"):
    """(D, D', params): D' is D with one user removed or one user (1..7 records) added.

    Adversarial choices, each drawn: the added user copies one corner and one label for all
    its records, and n_min is set to the smaller n_tau of the pair (the tightest floor).
    """
    D = draw(erm_datasets(loss))
    params = draw(amin_params(loss))
    if D.m >= 2 and draw(st.booleans()):
        D2 = ADD_REMOVE_USER.neighbour(D, int(draw(st.sampled_from(D.users.tolist()))))
    else:
        k = draw(st.integers(1, 7))
        x, y = _record_points(draw, k, D.d, 1.0, loss)
        if draw(st.booleans()):
            x, y = np.tile(x[0], (k, 1)), np.full(k, y[0])
        D2 = add_user(D, x, y)
    if draw(st.booleans()):
        params["n_min"] = min(A.effective_sample_size(D, params["tau"]), A.effective_sample_size(D2, params["tau"]))
    return D, D2, params


@st.composite
def amin_worst_pairs(draw, loss: str = "logistic"):
    """(D, D', params) from the worst-case family: a heavy user first (s_0 records at x = e_1,
    label y_0) and k single-record users at e_1 with label -y_0; D' removes the heavy user.

    Near theta = 0 every record pushes theta-hat by sigma(0) = 1/2 of its Lipschitz bound,
    all in one direction, so for large Lambda the move tends to half of Delta_2 (the largest
    ratio we found, audits/papers/amin2019/audits_erm.py). n_min is the tight floor k half of the time.
    """
    s0, k = draw(st.integers(1, 10)), draw(st.integers(1, 10))
    y0 = draw(st.sampled_from([-1.0, 1.0]))
    x = np.tile([1.0, 0.0], (s0 + k, 1))
    y = np.r_[np.full(s0, y0), np.full(k, -y0)]
    if loss == "ridge":
        y = y * draw(st.floats(0.1, 1.0))
    D = UserDataset(x, np.r_[np.zeros(s0, dtype=np.int64), np.arange(1, k + 1)], labels=y)
    params = dict(
        tau=draw(st.integers(1, 8)),
        Lambda=draw(st.floats(0.05, 50.0)),
        n_min=k if draw(st.booleans()) else draw(st.integers(1, 12)),
        loss=loss,
        R=1.0,
        Y=1.0,
    )
    return D, ADD_REMOVE_USER.neighbour(D, 0), params


@st.composite
def amin_cases(draw, loss: str = "logistic"):
    """(D, params) for the per-user bound."""
    return draw(erm_datasets(loss, max_users=6, max_records=8)), draw(amin_params(loss))


# ---------------------------------------------------------------------- brute force on grids
def _grid_records(points, labels, k: int):
    """Every multiset of k records drawn from points x labels."""
    recs = [(np.asarray(p, float), float(y)) for p in points for y in labels]
    for combo in itertools.combinations_with_replacement(range(len(recs)), k):
        yield np.array([recs[j][0] for j in combo]), np.array([recs[j][1] for j in combo])


def amin_brute_force_pairs(D: UserDataset, points, labels, max_records: int):
    """Every removal of one user, and every added user with 1..max_records records on the grid."""
    for u in D.users:
        if D.m >= 2:
            yield ADD_REMOVE_USER.neighbour(D, int(u))
    for k in range(1, max_records + 1):
        for x, y in _grid_records(points, labels, k):
            yield add_user(D, x, y)


# ------------------------------------------------------------------------------ properties
def prop_tau_bounds_records_per_user(impl: Adapter, example) -> None:
    """Each user l keeps exactly min(s_l, tau) records (n_{l tau}, Amin §5), all with the same weight."""
    impl.require("weights")
    D, p = example
    w = np.asarray(impl.weights(D, tau=p["tau"], n_min=p["n_min"]), dtype=float)
    kept = np.bincount(D.user_index, weights=(w > 0).astype(float), minlength=D.m).astype(int)
    want = np.minimum(D.counts, p["tau"])
    if not np.array_equal(kept, want):
        l = int(np.argmax(kept != want))
        raise AssertionError(
            f"user {D.users[l]} (s_l = {D.counts[l]}) keeps {kept[l]} records, "
            f"expected min(s_l, tau = {p['tau']}) = {want[l]}"
        )
    if (w < 0).any() or np.ptp(w[w > 0]) > 1e-15 * w.max():  # equal weights up to one rounding
        raise AssertionError(f"kept records must share one non-negative weight, got {np.unique(w)}")


def prop_minimiser_within_sensitivity(impl: Adapter, example) -> None:
    """||theta-hat(D) - theta-hat(D')||_2 <= Delta_2 on an add/remove-user pair."""
    impl.require("statistic", "sensitivity")
    D, D2, p = example
    gap = float(np.linalg.norm(np.asarray(impl.statistic(D, **p)) - np.asarray(impl.statistic(D2, **p))))
    Delta = float(impl.sensitivity(**p))
    if gap > Delta * (1 + _REL_TOL) + _ABS_TOL:
        raise AssertionError(f"minimiser moved {gap!r} > claimed Delta_2 = {Delta!r} (n = {D.n} -> {D2.n}, params {p})")


def prop_noise_scale_is_public(impl: Adapter, example) -> None:
    """The noise scale is the same on D and D': a data-dependent scale is not eps-DP."""
    impl.require("noise_scale")
    D, D2, p = example
    a, b = float(impl.noise_scale(D, epsilon=1.0, **p)), float(impl.noise_scale(D2, epsilon=1.0, **p))
    if abs(a - b) > 1e-12 * max(a, b):  # the same formula on the same public inputs: equal up to rounding
        raise AssertionError(f"noise scale depends on the data: {a!r} on D (n = {D.n}) vs {b!r} on D' (n = {D2.n})")


# ------------------------------------------------------------------------------ the suite
ALL_PROPERTIES = (prop_tau_bounds_records_per_user, prop_minimiser_within_sensitivity, prop_noise_scale_is_public)
# One strategy per property, the best default for an external implementation; the tests run
# the others too (ridge, the random pairs for the minimiser bound).
STRATEGIES = {
    prop_tau_bounds_records_per_user: amin_cases(),
    prop_minimiser_within_sensitivity: amin_worst_pairs(),  # the family where Delta_2 is nearly attained
    prop_noise_scale_is_public: amin_pairs(),  # removals and additions: n_tau changes
}


def _floor_example():
    """A known hard case for the public noise scale: two one-record users (n_tau = 2) and the
    same with a third user added (n_tau = 3), both below the public floor n_min = 4. A scale
    read from n_tau (the literal reading of Algorithm 1, 2 tau L / (n_tau Lambda eps)) differs
    across the pair; the floor's max(n_tau, n_min) = 4 does not."""
    D = UserDataset(np.array([[0.5, 0.0], [0.0, 0.5]]), [0, 1], labels=np.array([1.0, -1.0]))
    D2 = add_user(D, [[0.3, 0.3]], [1.0])
    return D, D2, dict(tau=1, Lambda=1.0, n_min=4, loss="logistic", R=1.0, Y=1.0)


EXAMPLES: dict = {prop_noise_scale_is_public: [_floor_example()]}  # beyond the strategies' worst-case families
MAX_EXAMPLES: dict = {}  # every property: check_property's default, 100
RELATION = A.RELATION  # Amin Def. 1: all records of one user appear or vanish (ADD_REMOVE_USER)
ADAPTER = Adapter
REFERENCE = amin_reference()


# Totality at the float extremes (properties/extremes.py): the records' declared domain of each
# mechanism, by its validate name: ||x_i||_2 <= 1; logistic labels are +-1 (kept), ridge labels in [-1, 1].
EXTREMES = {
    "amin2019.erm-output-perturbation": Domain({"values": (-1.0, 1.0)}, balls={"values": 1.0}),
    "amin2019.erm-output-perturbation-ridge": Domain(
        {"values": (-1.0, 1.0), "labels": (-1.0, 1.0)}, balls={"values": 1.0}
    ),
}
