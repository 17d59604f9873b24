"""Property suite for Epasto et al. 2020 Algorithm 2 (weighted user-level ERM by noisy projected
gradient descent, RDP accounting): ``reference/epasto2020_erm.py``.

Adapter stage call shapes: the suite passes the dataset positionally and every other
argument by keyword, exactly as here; ``**params`` = dict(c, epsilon, delta, T, loss, R, Y,
radius), an example's third element:
    statistic(D, theta=theta, **params) -> sum_i c_i grad l(theta, X_i) (d,)
    sensitivity(D, **params) -> Delta_2 of one step (L2, under replace-user)
    noise_scale(D, **params) -> sigma, the standard deviation of each step's Gaussian noise
    mechanism(D, rng=rng, size=size, **params) -> (d,) or (size, d)

Parameters:
    D: a ``UserDataset`` with features ``values`` (n, d), ||x_i||_2 <= R, and ``labels`` in
        {-1, +1} (logistic) or [-Y, Y] (ridge); the records of each user are S_l
    c: the record weights (n,), c_i >= 0, sum 1; T: the number of gradient steps (an int >= 1)
    epsilon, delta: the (epsilon, delta)-DP budget of the whole T-step run
    loss: "logistic" or "ridge"; R: the bound on ||x_i||_2; Y: the bound on |y_i| (ridge)
    radius: the radius of the L2 ball of parameters Algorithm 2 projects onto
    theta: (d,), the point at which one step's gradient is taken
    rng: a ``numpy.random.Generator``; size: None (one release) or the number of releases

Relation: replace-user, features and labels, S_l public (Epasto §2.2). Oracle (review finding
3): ``prop_noise_accounts_for_steps`` checks sigma against the exact privacy profile of T
composed Gaussian steps (``gaussian_log_delta``: Dong-Roth-Su GDP and Balle-Wang, a closed form
evaluated with ``scipy.special.log_ndtr``), not against ``epasto2020_erm.epsilon_spent``, which
is what the reference's ``noise_scale`` inverts. The record and dataset strategies shared with
the Amin suite are in ``properties/erm.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import strategies as st
from scipy.special import log_ndtr

from userdp.reference import epasto2020_erm as E
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import REPLACE_USER

from .extremes import Domain
from .adapter import Adapter
from .erm import _finite, _record_points, erm_datasets

__all__ = [
    "epasto_reference",
    "replace_user_records",
    "epasto_params",
    "epasto_pairs",
    "epasto_linearity_cases",
    "epasto_brute_force_pairs",
    "prop_gradient_within_sensitivity",
    "prop_weights_enter_linearly",
    "prop_noise_accounts_for_steps",
    "gaussian_log_delta",
    "epasto_heavy_user_example",
    "ALL_PROPERTIES",
    "STRATEGIES",
    "EXAMPLES",
    "MAX_EXAMPLES",
    "RELATION",
    "ADAPTER",
    "REFERENCE",
    "EXTREMES",
]


# ------------------------------------------------------------------------------ adapters
def _only(f, *names):
    """f called with the keyword parameters it declares among ``names``: the suite passes one
    parameter dict to every stage, while the reference stages refuse unknown keywords."""
    return lambda *args, **p: f(*args, **{k: v for k, v in p.items() if k in names})


def epasto_reference() -> Adapter:
    """The reference of Epasto's weighted ERM (reference/epasto2020_erm.py) in the suite's adapter."""
    data = ("loss", "R", "Y")
    return Adapter(
        name="reference epasto2020_erm",
        weights=E.weights,
        statistic=_only(E.statistic, "theta", "c", *data),
        sensitivity=_only(E.sensitivity, "c", *data, "radius"),
        noise_scale=_only(E.noise_scale, "c", "epsilon", "delta", "T", *data, "radius"),
        mechanism=E.mechanism,
    )


# ----------------------------------------------------------------------- neighbour builders
def replace_user_records(D: UserDataset, user_id: int, values, labels) -> UserDataset:
    """Epasto §2.2 neighbour: user ``user_id``'s records (S_l kept) get new features AND labels."""
    return REPLACE_USER.neighbour(D, user_id, values, labels=labels)


# ------------------------------------------------------------------------------ strategies
@st.composite
def epasto_params(draw, D: UserDataset, loss: str = "logistic") -> dict:
    """Public parameters of Epasto's weighted ERM on ``D``: record weights c summing to 1 (uniform
    half the time), epsilon, delta, the step count T and the radius."""
    raw = np.array(draw(st.lists(st.floats(0.0, 1.0, **_finite), min_size=D.n, max_size=D.n)))
    c = np.ones(D.n) if raw.sum() == 0 or draw(st.booleans()) else raw  # uniform c = 1/n half the time
    return dict(
        c=c / c.sum(),
        epsilon=draw(st.floats(0.1, 5.0)),
        delta=draw(st.sampled_from([1e-3, 1e-5, 1e-8])),
        T=draw(st.integers(1, 200)),
        loss=loss,
        R=1.0,
        Y=1.0,
        radius=draw(st.floats(0.5, 5.0)),
    )


@st.composite
def epasto_pairs(draw, loss: str = "logistic"):
    """(D, D', params, theta): D' replaces one user's features and labels (S_l kept).

    Adversarial choices, each drawn: the user's labels are flipped on the same features
    (the largest gradient move near theta = 0), and theta = 0.
    """
    D = draw(erm_datasets(loss))
    params = draw(epasto_params(D, loss))
    u = int(draw(st.sampled_from(D.users.tolist())))
    idx = D.records_of(u)
    if draw(st.booleans()):
        D2 = replace_user_records(D, u, D.values[idx], -D.labels[idx])
    else:
        D2 = replace_user_records(D, u, *_record_points(draw, idx.size, D.d, 1.0, loss))
    r = params["radius"] / np.sqrt(D.d)
    theta = np.array(draw(st.lists(st.floats(-r, r, **_finite), min_size=D.d, max_size=D.d)))
    if draw(st.booleans()):
        theta = np.zeros(D.d)
    return D, D2, params, theta


@st.composite
def epasto_linearity_cases(draw, loss: str = "logistic"):
    """(D, params, theta, c2, a): two weight vectors and a mixing coefficient a in [0, 1]."""
    D, _, params, theta = draw(epasto_pairs(loss))
    c2 = draw(epasto_params(D, loss))["c"]
    return D, params, theta, c2, draw(st.floats(0.0, 1.0))


# ---------------------------------------------------------------------- brute force on grids
def epasto_brute_force_pairs(D: UserDataset, points, labels):
    """Every replacement of one user's records (features and labels) by records on the grid."""
    recs = [(np.asarray(p, float), float(y)) for p in points for y in labels]
    for u in D.users:
        s = D.records_of(u).size
        for combo in itertools.product(range(len(recs)), repeat=s):
            yield replace_user_records(
                D, int(u), np.array([recs[j][0] for j in combo]), np.array([recs[j][1] for j in combo])
            )


# ------------------------------------------------------------------------------ properties
def prop_gradient_within_sensitivity(impl: Adapter, example) -> None:
    """||sum_i c_i (grad l(theta, X_i) - grad l(theta, X'_i))|| <= Delta_2 on a replace-user pair."""
    impl.require("statistic", "sensitivity")
    D, D2, p, theta = example
    gap = float(
        np.linalg.norm(
            np.asarray(impl.statistic(D, theta=theta, **p)) - np.asarray(impl.statistic(D2, theta=theta, **p))
        )
    )
    Delta = float(impl.sensitivity(D, **p))
    # Two sums of <= 5 x 5 terms of size <= 1: rounding < 1e-14, so 1e-12 is ample.
    if gap > Delta * (1 + 1e-12) + 1e-12:
        raise AssertionError(f"one step's gradient moved {gap!r} > claimed Delta_2 = {Delta!r} at theta = {theta}")


def prop_weights_enter_linearly(impl: Adapter, example) -> None:
    """statistic(a c1 + (1-a) c2) = a statistic(c1) + (1-a) statistic(c2) (Epasto §4: sum_i c_i l)."""
    impl.require("statistic")
    D, p, theta, c2, a = example
    q = {k: v for k, v in p.items() if k != "c"}
    c1 = p["c"]
    mix = a * c1 + (1 - a) * c2
    mix = mix / mix.sum()  # re-normalise the rounding (|sum - 1| < 1e-15)
    lhs = np.asarray(impl.statistic(D, theta=theta, c=mix, **q))
    rhs = a * np.asarray(impl.statistic(D, theta=theta, c=c1, **q)) + (1 - a) * np.asarray(
        impl.statistic(D, theta=theta, c=c2, **q)
    )
    # Terms are <= 1 in norm and sum to <= 1: rounding < 1e-14; 1e-12 leaves a 100x margin.
    if np.linalg.norm(lhs - rhs) > 1e-12:
        raise AssertionError(f"weights do not enter linearly: {lhs} vs {rhs} (a = {a})")


def gaussian_log_delta(mu: float, epsilon: float) -> float:
    """log delta(eps) of mu-GDP, the exact privacy profile of a Gaussian mechanism whose
    sensitivity-to-noise ratio is mu [Dong, Roth, Su 2022, Cor. 2.13; Balle, Wang 2018, Thm 8]:

        delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    In logs (scipy.special.log_ndtr) so that tiny deltas keep their digits:
    log delta = l_a + log(1 - exp(eps + l_b - l_a)), with eps + l_b - l_a < 0.
    """
    la = float(log_ndtr(-epsilon / mu + mu / 2))
    lb = float(log_ndtr(-epsilon / mu - mu / 2))
    x = epsilon + lb - la  # log of the ratio of the two terms, < 0
    if not x < 0:  # only when both terms underflow alike
        return -math.inf
    log1mexp = math.log(-math.expm1(x)) if x > -math.log(2) else math.log1p(-math.exp(x))
    return la + log1mexp


def epasto_heavy_user_example():
    """A known hard case for ``prop_gradient_within_sensitivity``: four users at x = e_1, one
    with 5 of the 8 records, uniform c, theta = 0; D' flips the heavy user's labels. A flip moves
    each logistic gradient by exactly ||x|| = L (sigma(-a) + sigma(a) = 1), so the step moves by
    L W_0 = 5/8, above a sensitivity from the mean user weight, 2 L / m = 1/2."""
    ids = np.r_[np.zeros(5, dtype=np.int64), 1, 2, 3]
    D = UserDataset(np.tile([1.0, 0.0], (8, 1)), ids, labels=np.ones(8))
    D2 = replace_user_records(D, 0, D.values[:5], -np.ones(5))
    params = dict(c=np.full(8, 1 / 8), epsilon=1.0, delta=1e-5, T=10, loss="logistic", R=1.0, Y=1.0, radius=1.0)
    return D, D2, params, np.zeros(2)


def prop_noise_accounts_for_steps(impl: Adapter, example) -> None:
    """sigma is large enough that T composed Gaussian steps are (eps, delta)-DP.

    Oracle (independent of the reference's RDP accountant): each step adds N(0, sigma^2 I)
    to a statistic of L2 sensitivity Delta_2, a (Delta_2 / sigma)-GDP release [DRS22, Thm 2.7];
    T adaptive steps compose EXACTLY to mu-GDP with mu = sqrt(T) Delta_2 / sigma [DRS22,
    Cor. 3.3]; mu-GDP is (eps, delta(eps))-DP with the tight delta of ``gaussian_log_delta``.
    It is tight (a worst-case pair attains it), so delta(eps) > delta means the claimed
    (eps, delta) fails for some pair whose steps move by Delta_2. An RDP calibration
    [M17; CKS20] is an upper bound, so a correct sigma passes with room to spare.
    Tolerance: delta may exceed the claim by 1e-6 relative (calibration rounding, 1e-9).
    """
    impl.require("noise_scale", "sensitivity")
    D, _, p, _ = example
    sigma, Delta = float(impl.noise_scale(D, **p)), float(impl.sensitivity(D, **p))
    mu = math.sqrt(p["T"]) * Delta / sigma  # T steps: sqrt(T) Delta / sigma
    log_delta = gaussian_log_delta(mu, p["epsilon"])
    if log_delta > math.log(p["delta"]) + 1e-6:
        raise AssertionError(
            f"T = {p['T']} steps with sigma = {sigma!r} and Delta_2 = {Delta!r} are "
            f"{mu:.4g}-GDP: delta({p['epsilon']!r}) = {math.exp(log_delta):.4g} > claimed "
            f"delta = {p['delta']}"
        )


# ------------------------------------------------------------------------------ the suite
ALL_PROPERTIES = (prop_gradient_within_sensitivity, prop_weights_enter_linearly, prop_noise_accounts_for_steps)
# One strategy per property, the best default for an external implementation; the tests run
# ridge too.
STRATEGIES = {
    prop_gradient_within_sensitivity: epasto_pairs(),
    prop_weights_enter_linearly: epasto_linearity_cases(),
    prop_noise_accounts_for_steps: epasto_pairs(),
}
EXAMPLES = {
    prop_gradient_within_sensitivity: [epasto_heavy_user_example()],
    prop_noise_accounts_for_steps: [epasto_heavy_user_example()],
}
MAX_EXAMPLES: dict = {}  # every property: check_property's default, 100
RELATION = E.RELATION  # Epasto §2.2: one user's features and labels change, S_l public (REPLACE_USER)
ADAPTER = Adapter
REFERENCE = epasto_reference()


# Totality at the float extremes (properties/extremes.py): the records' declared domain of each
# mechanism, by its validate name: ||x_i||_2 <= 1, logistic labels +-1 (kept).
EXTREMES = {"epasto2020.weighted-erm": Domain({"values": (-1.0, 1.0)}, balls={"values": 1.0})}
