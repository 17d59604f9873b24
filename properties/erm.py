"""Property suite for the ERM algorithms: Amin et al. 2019 Algorithm 1 and Epasto et al. 2020
Algorithm 2 (``reference/amin2019_erm.py``, ``reference/epasto2020_erm.py``).

Adapter stage call shapes: the suite passes the dataset positionally and every other
argument by keyword, exactly as here. Two algorithms, two adapters:

Amin Algorithm 1 (``ALL_PROPERTIES``, ``REFERENCE``; ``**params`` = dict(tau, Lambda, n_min,
loss, R, Y), an example's third element):
    weights(D, tau=tau, n_min=n_min) -> (n,) objective weights (0 for a dropped record)
    statistic(D, **params) -> theta-hat (d,), noise-free
    sensitivity(**params) -> Delta_2, the L2 sensitivity of theta-hat under add/remove-user
    noise_scale(D, epsilon=epsilon, **params) -> scale of exp(-||b|| / scale)   (D passed on
        purpose: the property checks that the scale does not depend on it)
    mechanism(D, rng=rng, size=size, epsilon=epsilon, **params) -> (d,) or (size, d)
Epasto Algorithm 2 (``EPASTO_PROPERTIES``, ``REFERENCE_EPASTO``; ``**params`` = dict(c, epsilon,
delta, T, loss, R, Y, radius)):
    statistic(D, theta=theta, **params) -> sum_i c_i grad l(theta, X_i) (d,)
    sensitivity(D, **params) -> Delta_2 of one step (L2, under replace-user)
    noise_scale(D, **params) -> sigma, the standard deviation of each step's Gaussian noise
    mechanism(D, rng=rng, size=size, **params) -> (d,) or (size, d)

Parameters:
    D: a ``UserDataset`` with features ``values`` (n, d), ||x_i||_2 <= R, and ``labels`` in
        {-1, +1} (logistic) or [-Y, Y] (ridge); the records of each user are S_l
    tau: the public number of records kept per user (Amin §5: min(s_l, tau) are kept), an int >= 1
    Lambda: the strong-convexity constant of the objective, sum_i w_i l + (Lambda/2) ||theta||^2 (> 0)
    n_min: the public floor of the normaliser n' = max(n_tau, n_min) (an int >= 1)
    loss: "logistic" or "ridge"; R: the bound on ||x_i||_2; Y: the bound on |y_i| (ridge)
    epsilon: Amin: the pure-DP budget; Epasto: with delta, the (epsilon, delta)-DP budget of the
        whole T-step run
    c: Epasto's record weights (n,), c_i >= 0, sum 1; T: the number of gradient steps (an int >= 1)
    radius: the radius of the L2 ball of parameters Algorithm 2 projects onto
    theta: (d,), the point at which one step's gradient is taken
    rng: a ``numpy.random.Generator``; size: None (one release) or the number of releases

Oracles (review finding 3). ``prop_noise_accounts_for_steps`` checks sigma against the
exact privacy profile of T composed Gaussian steps (``gaussian_log_delta``: Dong-Roth-Su
GDP and Balle-Wang, a closed form evaluated with ``scipy.special.log_ndtr``), not against
``epasto2020_erm.epsilon_spent``, which is what the reference's ``noise_scale`` inverts.
``amin_reference().noise_scale`` reads the scale back from a release of the reference
mechanism on the given D (``_released_scale``), so ``prop_noise_scale_is_public`` tests
what the mechanism does on D and D', not a formula that never sees the data.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import strategies as st
from scipy.special import log_ndtr

from userdp.reference import amin2019_erm as A
from userdp.reference import epasto2020_erm as E
from userdp.reference.data import UserDataset
from userdp.reference.mechanisms import l2_laplace_noise
from userdp.reference.neighbours import ADD_REMOVE_USER, REPLACE_USER

from .adapter import Adapter
from .strategies import user_size_profiles

__all__ = [
    "amin_reference", "epasto_reference", "replace_user_records", "add_user",
    "erm_datasets", "amin_params", "amin_pairs", "amin_worst_pairs", "amin_cases", "epasto_params", "epasto_pairs",
    "epasto_linearity_cases", "amin_brute_force_pairs", "epasto_brute_force_pairs",
    "prop_tau_bounds_records_per_user", "prop_minimiser_within_sensitivity",
    "prop_noise_scale_is_public", "prop_gradient_within_sensitivity",
    "prop_weights_enter_linearly", "prop_noise_accounts_for_steps", "gaussian_log_delta",
    "epasto_heavy_user_example",
    "ALL_PROPERTIES", "EPASTO_PROPERTIES", "STRATEGIES", "EXAMPLES", "MAX_EXAMPLES", "RELATION",
    "RELATION_EPASTO", "ADAPTER", "REFERENCE", "REFERENCE_EPASTO",
]

_finite = dict(allow_nan=False, allow_infinity=False)

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


def _only(f, *names):
    """f called with the keyword parameters it declares among ``names``: the suite passes one
    parameter dict to every stage, while the reference stages refuse unknown keywords."""
    return lambda *args, **p: f(*args, **{k: v for k, v in p.items() if k in names})


def epasto_reference() -> Adapter:
    """The reference of Epasto's weighted ERM (reference/epasto2020_erm.py) in the suite's adapter."""
    data = ("loss", "R", "Y")
    return Adapter(name="reference epasto2020_erm", weights=E.weights,
                   statistic=_only(E.statistic, "theta", "c", *data),
                   sensitivity=_only(E.sensitivity, "c", *data, "radius"),
                   noise_scale=_only(E.noise_scale, "c", "epsilon", "delta", "T", *data, "radius"),
                   mechanism=E.mechanism)


# ----------------------------------------------------------------------- neighbour builders
def replace_user_records(D: UserDataset, user_id: int, values, labels) -> UserDataset:
    """Epasto §2.2 neighbour: user ``user_id``'s records (S_l kept) get new features AND labels."""
    return REPLACE_USER.neighbour(D, user_id, values, labels=labels)


def add_user(D: UserDataset, values, labels) -> UserDataset:
    """Amin Def. 1 neighbour: a new user (fresh id) with the given records."""
    return ADD_REMOVE_USER.neighbour(D, int(D.users.max()) + 1, np.asarray(values, dtype=float),
                                     labels=np.asarray(labels, dtype=float))


# ------------------------------------------------------------------------------ strategies
def _record_points(draw, k: int, d: int, R: float, loss: str):
    """k features with ||x|| <= R and k admissible labels.

    Each feature is either a corner +-R e_j (the extreme points where sensitivities are
    realised: aligned, maximal-norm records) or uniform in [-R/sqrt d, R/sqrt d]^d.
    """
    a = R / np.sqrt(d) * (1 - 1e-12)
    corners = [s * R * np.eye(d)[j] for j in range(d) for s in (1.0, -1.0)]
    rows = []
    for _ in range(k):
        if draw(st.booleans()):
            rows.append(corners[draw(st.integers(0, len(corners) - 1))])
        else:
            rows.append(np.array(draw(st.lists(st.floats(-a, a, **_finite), min_size=d, max_size=d))))
    x = np.array(rows).reshape(k, d)
    if loss == "logistic":
        y = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=k, max_size=k)))
    else:
        y = np.array(draw(st.lists(st.one_of(st.sampled_from([-1.0, 1.0]), st.floats(-1.0, 1.0, **_finite)),
                                   min_size=k, max_size=k)))
    return x, y


@st.composite
def erm_datasets(draw, loss: str = "logistic", d: int = 2, R: float = 1.0, max_users: int = 6,
                 max_records: int = 7) -> UserDataset:
    """Imbalanced users (1..max_records records each) with ||x_i|| <= R and labels in the loss's domain.

    Half of the time the dataset is "aligned": every x_i = R e_1 and each user has one
    label, the configuration where a user's records all push theta the same way (this is
    where the sensitivity bounds are nearly attained, see audits/registry/erm.py).
    """
    sizes = draw(user_size_profiles(1, max_users, max_records)).tolist()   # uniform, Zipf or heavy + singletons
    n = sum(sizes)
    if draw(st.booleans()):
        x = np.tile(R * np.eye(d)[0], (n, 1))
        y = np.repeat(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=len(sizes), max_size=len(sizes))), sizes)
    else:
        x, y = _record_points(draw, n, d, R, loss)
    return UserDataset(x, np.repeat(np.arange(len(sizes)), sizes), labels=y)


@st.composite
def amin_params(draw, loss: str = "logistic") -> dict:
    """Public parameters of Amin's ERM: tau, Lambda and epsilon in the ranges the properties use."""
    return dict(tau=draw(st.integers(1, 6)), Lambda=draw(st.floats(0.05, 2.0)),
                n_min=draw(st.integers(1, 8)), loss=loss, R=1.0, Y=1.0)


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
    ratio we found, audits/registry/erm.py). n_min is the tight floor k half of the time.
    """
    s0, k = draw(st.integers(1, 10)), draw(st.integers(1, 10))
    y0 = draw(st.sampled_from([-1.0, 1.0]))
    x = np.tile([1.0, 0.0], (s0 + k, 1))
    y = np.r_[np.full(s0, y0), np.full(k, -y0)]
    if loss == "ridge":
        y = y * draw(st.floats(0.1, 1.0))
    D = UserDataset(x, np.r_[np.zeros(s0, dtype=np.int64), np.arange(1, k + 1)], labels=y)
    params = dict(tau=draw(st.integers(1, 8)), Lambda=draw(st.floats(0.05, 50.0)),
                  n_min=k if draw(st.booleans()) else draw(st.integers(1, 12)), loss=loss, R=1.0, Y=1.0)
    return D, ADD_REMOVE_USER.neighbour(D, 0), params


@st.composite
def amin_cases(draw, loss: str = "logistic"):
    """(D, params) for the per-user bound."""
    return draw(erm_datasets(loss, max_users=6, max_records=8)), draw(amin_params(loss))


@st.composite
def epasto_params(draw, D: UserDataset, loss: str = "logistic") -> dict:
    """Public parameters of Epasto's weighted ERM on ``D``: per-record weights c and the budget."""
    raw = np.array(draw(st.lists(st.floats(0.0, 1.0, **_finite), min_size=D.n, max_size=D.n)))
    c = np.ones(D.n) if raw.sum() == 0 or draw(st.booleans()) else raw     # uniform c = 1/n half the time
    return dict(c=c / c.sum(), epsilon=draw(st.floats(0.1, 5.0)), delta=draw(st.sampled_from([1e-3, 1e-5, 1e-8])),
                T=draw(st.integers(1, 200)), loss=loss, R=1.0, Y=1.0, radius=draw(st.floats(0.5, 5.0)))


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


def epasto_brute_force_pairs(D: UserDataset, points, labels):
    """Every replacement of one user's records (features and labels) by records on the grid."""
    recs = [(np.asarray(p, float), float(y)) for p in points for y in labels]
    for u in D.users:
        s = D.records_of(u).size
        for combo in itertools.product(range(len(recs)), repeat=s):
            yield replace_user_records(D, int(u), np.array([recs[j][0] for j in combo]),
                                       np.array([recs[j][1] for j in combo]))


# ------------------------------------------------------------------------ Amin properties
def prop_tau_bounds_records_per_user(impl: Adapter, example) -> None:
    """Each user l keeps exactly min(s_l, tau) records (n_{l tau}, Amin §5), all with the same weight."""
    impl.require("weights")
    D, p = example
    w = np.asarray(impl.weights(D, tau=p["tau"], n_min=p["n_min"]), dtype=float)
    kept = np.bincount(D.user_index, weights=(w > 0).astype(float), minlength=D.m).astype(int)
    want = np.minimum(D.counts, p["tau"])
    if not np.array_equal(kept, want):
        l = int(np.argmax(kept != want))
        raise AssertionError(f"user {D.users[l]} (s_l = {D.counts[l]}) keeps {kept[l]} records, "
                             f"expected min(s_l, tau = {p['tau']}) = {want[l]}")
    if (w < 0).any() or np.ptp(w[w > 0]) > 1e-15 * w.max():   # equal weights up to one rounding
        raise AssertionError(f"kept records must share one non-negative weight, got {np.unique(w)}")


def prop_minimiser_within_sensitivity(impl: Adapter, example) -> None:
    """||theta-hat(D) - theta-hat(D')||_2 <= Delta_2 on an add/remove-user pair."""
    impl.require("statistic", "sensitivity")
    D, D2, p = example
    gap = float(np.linalg.norm(np.asarray(impl.statistic(D, **p)) - np.asarray(impl.statistic(D2, **p))))
    Delta = float(impl.sensitivity(**p))
    if gap > Delta * (1 + _REL_TOL) + _ABS_TOL:
        raise AssertionError(f"minimiser moved {gap!r} > claimed Delta_2 = {Delta!r} "
                             f"(n = {D.n} -> {D2.n}, params {p})")


def prop_noise_scale_is_public(impl: Adapter, example) -> None:
    """The noise scale is the same on D and D': a data-dependent scale is not eps-DP."""
    impl.require("noise_scale")
    D, D2, p = example
    a, b = float(impl.noise_scale(D, epsilon=1.0, **p)), float(impl.noise_scale(D2, epsilon=1.0, **p))
    if abs(a - b) > 1e-12 * max(a, b):   # the same formula on the same public inputs: equal up to rounding
        raise AssertionError(f"noise scale depends on the data: {a!r} on D (n = {D.n}) vs {b!r} on D' (n = {D2.n})")


# ------------------------------------------------------------------------ Epasto properties
def prop_gradient_within_sensitivity(impl: Adapter, example) -> None:
    """||sum_i c_i (grad l(theta, X_i) - grad l(theta, X'_i))|| <= Delta_2 on a replace-user pair."""
    impl.require("statistic", "sensitivity")
    D, D2, p, theta = example
    gap = float(np.linalg.norm(np.asarray(impl.statistic(D, theta=theta, **p)) -
                               np.asarray(impl.statistic(D2, theta=theta, **p))))
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
    mix = mix / mix.sum()                      # re-normalise the rounding (|sum - 1| < 1e-15)
    lhs = np.asarray(impl.statistic(D, theta=theta, c=mix, **q))
    rhs = (a * np.asarray(impl.statistic(D, theta=theta, c=c1, **q))
           + (1 - a) * np.asarray(impl.statistic(D, theta=theta, c=c2, **q)))
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
    x = epsilon + lb - la                                   # log of the ratio of the two terms, < 0
    if not x < 0:                                           # only when both terms underflow alike
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
    mu = math.sqrt(p["T"]) * Delta / sigma                          # T steps: sqrt(T) Delta / sigma
    log_delta = gaussian_log_delta(mu, p["epsilon"])
    if log_delta > math.log(p["delta"]) + 1e-6:
        raise AssertionError(f"T = {p['T']} steps with sigma = {sigma!r} and Delta_2 = {Delta!r} are "
                             f"{mu:.4g}-GDP: delta({p['epsilon']!r}) = {math.exp(log_delta):.4g} > claimed "
                             f"delta = {p['delta']}")


# ------------------------------------------------------------------------------ the suite
# Two algorithms: Amin Algorithm 1 is the module's main suite (ALL_PROPERTIES, REFERENCE,
# RELATION); Epasto Algorithm 2 has its own (EPASTO_PROPERTIES, REFERENCE_EPASTO, RELATION_EPASTO).
ALL_PROPERTIES = (prop_tau_bounds_records_per_user, prop_minimiser_within_sensitivity, prop_noise_scale_is_public)
EPASTO_PROPERTIES = (prop_gradient_within_sensitivity, prop_weights_enter_linearly, prop_noise_accounts_for_steps)
# One strategy per property, the best default for an external implementation; the tests run
# the others too (ridge, the random pairs for the minimiser bound).
STRATEGIES = {
    prop_tau_bounds_records_per_user: amin_cases(),
    prop_minimiser_within_sensitivity: amin_worst_pairs(),    # the family where Delta_2 is nearly attained
    prop_noise_scale_is_public: amin_pairs(),                 # removals and additions: n_tau changes
    prop_gradient_within_sensitivity: epasto_pairs(),
    prop_weights_enter_linearly: epasto_linearity_cases(),
    prop_noise_accounts_for_steps: epasto_pairs(),
}
EXAMPLES = {prop_gradient_within_sensitivity: [epasto_heavy_user_example()],
            prop_noise_accounts_for_steps: [epasto_heavy_user_example()]}
MAX_EXAMPLES: dict = {}         # every property: check_property's default, 100
RELATION = A.RELATION           # Amin Def. 1: all records of one user appear or vanish (ADD_REMOVE_USER)
RELATION_EPASTO = E.RELATION    # Epasto §2.2: one user's features and labels change, S_l public (REPLACE_USER)
ADAPTER = Adapter
REFERENCE = amin_reference()
REFERENCE_EPASTO = epasto_reference()
