"""Property suite for Krichene et al. 2023 (multi-task user-level DP with task weights).

Usable against any implementation wrapped as a ``MultiTaskAdapter``. The suite passes the
dataset positionally and every other argument by keyword, exactly as here, where ``**params``
is ``MTExample.params`` (m, n_counts, n_users, beta, mu, Gamma_x, Gamma_star, Lambda, Gamma, T;
a stage takes what it needs and ignores the rest):

- ``weights(dataset, **params)``            -> w, (N,): one weight per record;
- ``statistic(dataset, **params)``          -> (A (m, d, d), b (m, d)): what Algorithm 1 adds noise to;
- ``sensitivity(**params)``                 -> (Delta_A, Delta_b) declared;
- ``noise_scale(**params)``                 -> (sigma_A, sigma_b) of the release;
- ``mechanism(dataset, rng=rng, size=size, **params)`` -> (A-hat, b-hat) releases, leading axis ``size``;
- ``gradient(dataset, theta=theta, **params)`` -> (m, d): Algorithm 2's noise-free step at theta;
- ``gd_noise_scale(**params)``              -> sigma of Algorithm 2's gradient noise;
- ``rdp(orders=orders, **params)``          -> the RDP charged for one run (Algorithm 1 or 2), (len(orders),);
- ``omega(n_counts=n_counts, n_users=n_users, beta_bar=beta_bar, mu=mu)`` -> task weights (m,)
  (eq. (11), §5);
- ``ratios(n_counts=n_counts)``             -> (R_0, R_1) of §4.

Parameters:

- ``dataset``: a ``UserDataset``, one record per (task i, user j) pair of Omega: ``task_ids``,
  ``user_ids``, features x_ij in ``values`` (N, d), labels y_ij in ``labels`` (N,);
- ``m``: the number of tasks; ``n_counts``: the public task sizes n_i, (m,), each >= 1
  (Assumption 4.1: declared, not read from the data); ``n_users``: n, the number of users;
- ``beta``: the per-user budget, sum_{i in Omega^j} w_ij^2 <= beta (Theorem 3.3: the run is
  (alpha, alpha beta)-RDP); ``beta_bar``: the budget in the weights' normalisation
  sum_i n_i omega_i^2 = n beta_bar (problem (10)); ``mu``: the exponent of the task weights
  omega_i prop. to n_i^-mu (§5; eq. (11) is mu = 1/4 or 1/2);
- ``Gamma_x``: the clipping norm of the features, ||x|| <= Gamma_x (line 2); ``Gamma_star``:
  the labels are clipped to |y| <= Gamma_x Gamma_star (so Gamma_star is a ratio, not a norm);
- ``Lambda``: the ridge penalty lambda of the loss (theta.x - y)^2 / 2 + lambda ||theta||^2 / 2;
- ``Gamma``: the clipping norm of each record's gradient (Algorithm 2); ``T``: its number of steps;
- ``theta``: (m, d), an iterate (one row per task) in the unit ball;
- ``orders``: the Renyi orders alpha > 1 at which ``rdp`` reports the RDP epsilon;
- ``rng``: a ``numpy.random.Generator``; ``size``: None (one release) or the number of releases;
- returned ``sensitivity``: L2 (Frobenius over the stacked tasks) sensitivities under
  add/remove-user; ``noise_scale``, ``gd_noise_scale``: standard deviations of the Gaussian
  noise (not variances).

Oracles, independent of ``reference/krichene2023*.py``:
- the budget sum_i w_ij^2 summed here per user, against beta (Theorem 3.3);
- the sensitivities sqrt(beta) Gamma_x^2 and sqrt(beta) Gamma_x^2 Gamma_* (Appendix A.1) and
  sqrt(beta) Gamma (Appendix A.3), checked by removing EVERY user of small graphs (brute force);
- problem (10) solved numerically by scipy (BFGS on a softmax parametrisation of the active
  constraint), against the closed form (11);
- R_0, R_1 >= 1 with equality iff all n_i are equal (Cauchy-Schwarz, §4), with the formulas
  written out here in exact rational arithmetic (``fractions``) for R_1 and R_0^2;
- the Gaussian RDP alpha Delta^2 / (2 sigma^2) [Mironov 2017, Cor. 3] of each release;
- scipy's normal law for the release noise (KS tests).
Tolerance ``REL`` = 1e-9 relative (sums of at most a few dozen doubles).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, ClassVar, Optional

import numpy as np
from hypothesis import strategies as st
from scipy import optimize, stats

from userdp.reference import krichene2023 as K
from userdp.reference import krichene2023_weights as W
from userdp.reference.data import UserDataset
from userdp.reference.mechanisms import DEFAULT_RDP_ORDERS

from .extremes import Domain
from .adapter import Adapter
from .strategies import task_user_graphs

__all__ = [
    "REL",
    "STAT_LEVEL",
    "MultiTaskAdapter",
    "MTExample",
    "mt_examples",
    "one_user_everywhere_example",
    "lone_user_small_task_example",
    "HARD_EXAMPLES",
    "REFERENCE",
    "solve_problem_10",
    "prop_budget_holds",
    "prop_sensitivity_every_user",
    "prop_declared_sensitivity_is_appendix_a1",
    "prop_public_inputs_only",
    "prop_noise_scales_are_the_papers",
    "prop_rdp_covers_the_releases",
    "prop_gradient_sensitivity_every_user",
    "prop_closed_form_solves_problem_10",
    "prop_ratios_at_least_one",
    "prop_estimated_weights_underestimate",
    "prop_release_noise_is_symmetric_gaussian",
    "ALL_PROPERTIES",
    "STATISTICAL_PROPERTIES",
    "STRATEGIES",
    "EXAMPLES",
    "MAX_EXAMPLES",
    "RELATION",
    "ADAPTER",
    "EXTREMES",
]

REL = 1e-9
STAT_LEVEL = 2.5e-5  # each of the 4 KS tests: together <= 1e-4 false failures per example
NOISE_DRAWS = 20_000
ORDERS = DEFAULT_RDP_ORDERS
RELATION = K.RELATION  # Theorems 3.3, 3.11: one user's records (all its tasks) appear or vanish (ADD_REMOVE_USER)


@dataclass(frozen=True)
class MultiTaskAdapter(Adapter):
    """An ``Adapter`` with Krichene et al.'s extra stages (module docstring)."""

    STAGES: ClassVar[tuple[str, ...]] = Adapter.STAGES + ("gradient", "gd_noise_scale", "rdp", "omega", "ratios")

    gradient: Optional[Callable[..., Any]] = None
    gd_noise_scale: Optional[Callable[..., Any]] = None
    rdp: Optional[Callable[..., Any]] = None
    omega: Optional[Callable[..., Any]] = None
    ratios: Optional[Callable[..., Any]] = None


@dataclass(frozen=True)
class MTExample:
    dataset: UserDataset
    m: int
    n_counts: np.ndarray  # public task sizes (Assumption 4.1): the dataset's own, declared
    n_users: int
    beta: float
    mu: float
    Gamma_x: float
    Gamma_star: float
    Lambda: float
    Gamma: float
    T: int
    theta: np.ndarray  # (m, d): an iterate in C (the unit ball) for the GD properties
    skew: np.ndarray = field(default_factory=lambda: np.ones(2))  # arbitrary n_i >= 1 for the omega properties
    s: float = 0.0  # count accuracy
    count_error: np.ndarray = field(default_factory=lambda: np.zeros(2))  # in [-s, s], shape of skew

    @property
    def params(self) -> dict:
        return dict(
            m=self.m,
            n_counts=self.n_counts,
            n_users=self.n_users,
            beta=self.beta,
            mu=self.mu,
            Gamma_x=self.Gamma_x,
            Gamma_star=self.Gamma_star,
            Lambda=self.Lambda,
            Gamma=self.Gamma,
            T=self.T,
        )


def _example(D: UserDataset, m: int, **kw) -> MTExample:
    n = np.maximum(np.bincount(D.task_ids, minlength=m), 1).astype(float)  # declared public (>= 1)
    d = D.values.reshape(D.n, -1).shape[1]
    base = dict(
        n_users=max(D.m, 1),
        beta=0.5,
        mu=0.25,
        Gamma_x=1.0,
        Gamma_star=1.0,
        Lambda=1.0,
        Gamma=0.5,
        T=4,
        theta=np.zeros((m, d)),
    )
    base.update(kw)
    return MTExample(D, m, n, **base)


@st.composite
def mt_examples(draw, max_tasks: int = 4, max_users: int = 5, dim: int = 2):
    """A skewed task-user graph (``strategies.task_user_graphs``), features scaled to exceed the
    clipping bounds, labels in [-4, 4]; beta in [0.05, 5] (beta > 1 matters for w vs w^2), mu in
    [0, 1], Gamma_x, Gamma_* in [0.3, 2], lambda in [0.1, 10], Gamma in [0.1, 2], T in [1, 10], an
    iterate theta in the unit ball, and a skewed count vector with s-accurate errors."""
    G = draw(task_user_graphs(max_tasks=max_tasks, max_users=max_users, dim=dim))
    f = draw(st.floats(0.5, 3.0))
    x = G.values * f - draw(st.floats(0.0, 1.0)) * f
    y = G.labels * draw(st.floats(0.5, 4.0))
    D = G.with_fields(values=x, labels=y)
    m = int(G.task_ids.max()) + 1 + draw(st.integers(0, 1))  # sometimes a task with no record
    th = np.array(draw(st.lists(st.floats(-1, 1), min_size=m * dim, max_size=m * dim))).reshape(m, dim)
    th /= np.maximum(np.linalg.norm(th, axis=1, keepdims=True), 1.0)
    k = draw(st.integers(1, 8))
    skew = np.array(draw(st.lists(st.integers(1, 1000), min_size=k, max_size=k)), dtype=float)
    s = draw(st.one_of(st.just(0.0), st.floats(0.01, 50.0)))
    err = np.array(draw(st.lists(st.floats(-1.0, 1.0), min_size=k, max_size=k))) * s
    return _example(
        D,
        m,
        beta=draw(st.floats(0.05, 5.0)),
        mu=draw(st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.floats(0.01, 1.0))),
        Gamma_x=draw(st.floats(0.3, 2.0)),
        Gamma_star=draw(st.floats(0.3, 2.0)),
        Lambda=draw(st.floats(0.1, 10.0)),
        Gamma=draw(st.floats(0.1, 2.0)),
        T=draw(st.integers(1, 10)),
        theta=th,
        skew=skew,
        s=s,
        count_error=err,
    )


def one_user_everywhere_example() -> MTExample:
    """A known hard case: user 0 touches all 4 tasks (at the clipping bound: x = (3, 0), y = 5),
    users 1-3 touch one task each (task 3 has only user 0: removing it empties the task). With
    beta = beta_bar = 2 and mu = 1/2 user 0's unclipped budget sum omega_i^2 = 2 sum n_i^-1 n /
    m = 5 > 2: eq. (12) clips it to exactly beta."""
    tasks = np.array([0, 1, 2, 3, 0, 0, 1])
    users = np.array([0, 0, 0, 0, 1, 2, 3])
    x = np.array([[3.0, 0.0]] * 4 + [[0.5, 0.2], [0.1, -0.4], [0.3, 0.3]])
    y = np.array([5.0] * 4 + [0.3, -0.2, 0.1])
    D = UserDataset(x, users, labels=y, task_ids=tasks)
    th = np.array([[1.0, 0.0], [0.0, -1.0], [0.6, 0.8], [-1.0, 0.0]])
    return _example(
        D,
        4,
        beta=2.0,
        mu=0.5,
        Gamma_x=1.0,
        Gamma_star=1.0,
        Lambda=1.0,
        Gamma=0.3,
        T=8,
        theta=th,
        skew=np.array([1.0, 10.0, 100.0]),
        s=5.0,
        count_error=np.array([-5.0, 5.0, 0.0]),
    )


def lone_user_small_task_example() -> MTExample:
    """A known hard case for the budget's norm: user 0 is alone in task 0 (n_0 = 1), the three
    others share task 1. With beta = 2 and mu = 1/2, user 0's one weight is clipped to
    w = sqrt(beta) by eq. (12), spending sum w^2 = beta exactly; a budget read as sum w <= beta
    (the norm confused) lets w = beta through, spending beta^2 = 4 > 2. Found when a change of
    Hypothesis's derandomized seed stopped the random examples from reaching beta > 1 with a
    lone user (planted bug budget-w-not-w-squared): a suite must not rely on luck for it."""
    tasks = np.array([0, 1, 1, 1])
    users = np.array([0, 1, 2, 3])
    x = np.array([[1.0, 0.0], [0.5, 0.2], [0.1, -0.4], [0.3, 0.3]])
    y = np.array([1.0, 0.3, -0.2, 0.1])
    D = UserDataset(x, users, labels=y, task_ids=tasks)
    return _example(D, 2, beta=2.0, mu=0.5, theta=np.zeros((2, 2)))


HARD_EXAMPLES = (one_user_everywhere_example(), lone_user_small_task_example())


# ----------------------------------------------------------------------- oracles
def solve_problem_10(n_counts: np.ndarray, n_users: int, beta_bar: float, gamma: int) -> np.ndarray:
    """min sum_i 1/(omega_i^2 n_i^gamma) s.t. sum_i n_i omega_i^2 <= n beta_bar (problem (10),
    c(n) absorbed in beta_bar), solved by scipy: the objective decreases in every omega_i, so the
    constraint is active; with omega_i^2 = n beta_bar p_i / n_i, p on the simplex (p = softmax(z)),
    minimise sum_i n_i^(1 - gamma) / p_i over z (BFGS, gradient given)."""
    n = np.asarray(n_counts, dtype=float)
    c = n ** (1.0 - gamma)

    def f(z):
        z = z - z.max()
        p = np.exp(z) / np.exp(z).sum()
        val = float(np.sum(c / p))
        grad = -c / p + p * val  # d/dz_k sum c_i / p_i with dp_i/dz_k = p_i (delta_ik - p_k)
        return val, grad

    res = optimize.minimize(f, np.zeros(n.size), jac=True, method="BFGS", options={"gtol": 1e-13, "maxiter": 10_000})
    z = res.x - res.x.max()
    p = np.exp(z) / np.exp(z).sum()
    return np.sqrt(n_users * beta_bar * p / n)


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise AssertionError(message)


def _budgets(D: UserDataset, w: np.ndarray) -> dict:
    out: dict = {}
    for j, wj in zip(D.user_ids.tolist(), np.asarray(w, dtype=float).tolist()):
        out[j] = out.get(j, 0.0) + wj * wj
    return out


def _neighbours(D: UserDataset):
    """(user, D without the user) for every user, when at least one record remains."""
    if D.m < 2:
        return []
    return [(int(j), D.without_user(int(j))) for j in D.users]


# ---------------------------------------------------------------------- properties
def prop_budget_holds(impl: MultiTaskAdapter, ex: MTExample) -> None:
    """Theorem 3.3 / eq. (12): every user's sum_i w_ij^2 <= beta, on any graph (w >= 0, one per record)."""
    impl.require("weights")
    w = np.asarray(impl.weights(ex.dataset, **ex.params), dtype=float)
    _require(w.shape == (ex.dataset.n,) and np.all(w >= 0), f"weights {w} must be (N,) = ({ex.dataset.n},), >= 0")
    for j, b in _budgets(ex.dataset, w).items():
        _require(b <= ex.beta * (1 + REL), f"user {j} spends sum w^2 = {b!r} > beta = {ex.beta!r}")


def _check_shift(impl, ex, D, D2, j):
    A, b = (np.asarray(a, dtype=float) for a in impl.statistic(D, **ex.params))
    A2, b2 = (np.asarray(a, dtype=float) for a in impl.statistic(D2, **ex.params))
    dA, db = float(np.linalg.norm(A - A2)), float(np.linalg.norm(b - b2))  # Frobenius over the stack
    gx2 = ex.Gamma_x**2
    lim_A, lim_b = math.sqrt(ex.beta) * gx2, math.sqrt(ex.beta) * gx2 * ex.Gamma_star
    _require(dA <= lim_A * (1 + REL), f"removing user {j}: ||A - A'||_F = {dA!r} > sqrt(beta) Gamma_x^2 = {lim_A!r}")
    _require(
        db <= lim_b * (1 + REL), f"removing user {j}: ||b - b'|| = {db!r} > sqrt(beta) Gamma_x^2 Gamma_* = {lim_b!r}"
    )


def prop_sensitivity_every_user(impl: MultiTaskAdapter, ex: MTExample) -> None:
    """Appendix A.1, by brute force: removing ANY user moves the stacked A by <= sqrt(beta) Gamma_x^2
    (Frobenius) and the stacked b by <= sqrt(beta) Gamma_x^2 Gamma_*. Keep graphs small."""
    impl.require("statistic")
    for j, D2 in _neighbours(ex.dataset):
        _check_shift(impl, ex, ex.dataset, D2, j)


def prop_declared_sensitivity_is_appendix_a1(impl: MultiTaskAdapter, ex: MTExample) -> None:
    """The declared sensitivities are Appendix A.1's, sqrt(beta) Gamma_x^2 and sqrt(beta) Gamma_x^2 Gamma_*."""
    impl.require("sensitivity")
    sA, sb = (float(v) for v in impl.sensitivity(**ex.params))
    want = (math.sqrt(ex.beta) * ex.Gamma_x**2, math.sqrt(ex.beta) * ex.Gamma_x**2 * ex.Gamma_star)
    _require(
        abs(sA - want[0]) <= REL * want[0] and abs(sb - want[1]) <= REL * want[1],
        f"declared sensitivities ({sA!r}, {sb!r}), Appendix A.1 gives {want}",
    )


def prop_public_inputs_only(impl: MultiTaskAdapter, ex: MTExample) -> None:
    """Removing user j leaves every OTHER user's weights unchanged: the weights read only public
    inputs and the user's own tasks (the premise of Appendix A.1's argument). Fails for task sizes
    n_i read from the data (removing j changes n_i for i in Omega^j)."""
    impl.require("weights")
    D = ex.dataset
    w = np.asarray(impl.weights(D, **ex.params), dtype=float)
    for j, D2 in _neighbours(D):
        w2 = np.asarray(impl.weights(D2, **ex.params), dtype=float)
        keep = D.user_ids != j
        diff = np.abs(w[keep] - w2)
        _require(
            bool(np.all(diff <= REL * np.maximum(np.abs(w[keep]), 1e-300))),
            f"removing user {j} changed other users' weights: {w[keep]} -> {w2}",
        )


def prop_noise_scales_are_the_papers(impl: MultiTaskAdapter, ex: MTExample) -> None:
    """Lines 5-6: sigma_A = Gamma_x^2, sigma_b = Gamma_x^2 Gamma_*; Algorithm 2 line 6: Gamma sqrt(T/2)."""
    checks = []
    if impl.noise_scale is not None:
        sA, sb = (float(v) for v in impl.noise_scale(**ex.params))
        checks += [("sigma_A", sA, ex.Gamma_x**2), ("sigma_b", sb, ex.Gamma_x**2 * ex.Gamma_star)]
    if impl.gd_noise_scale is not None:
        checks.append(("sigma_GD", float(impl.gd_noise_scale(**ex.params)), ex.Gamma * math.sqrt(ex.T / 2)))
    if not checks:
        impl.require("noise_scale")
    for name, got, want in checks:
        _require(abs(got - want) <= REL * want, f"{name} = {got!r}, the paper gives {want!r}")


def prop_rdp_covers_the_releases(impl: MultiTaskAdapter, ex: MTExample) -> None:
    """The RDP charged for one run is at least the Gaussian RDP of what is released [Mironov 2017,
    Cor. 3 and Prop. 1]: alpha (Delta_A^2 / (2 sigma_A^2) + Delta_b^2 / (2 sigma_b^2)) for Algorithm 1,
    T alpha beta Gamma^2 / (2 sigma_GD^2) for Algorithm 2, with the Appendix A sensitivities and the
    implementation's own noise scales."""
    impl.require("rdp")
    charged = np.asarray(impl.rdp(orders=ORDERS, **ex.params), dtype=float)
    needs = []
    if impl.noise_scale is not None:
        sA, sb = (float(v) for v in impl.noise_scale(**ex.params))
        gx2 = ex.Gamma_x**2
        needs.append(
            (
                "Algorithm 1",
                ORDERS * (ex.beta * gx2**2 / (2 * sA**2) + ex.beta * (gx2 * ex.Gamma_star) ** 2 / (2 * sb**2)),
            )
        )
    if impl.gd_noise_scale is not None:
        s = float(impl.gd_noise_scale(**ex.params))
        needs.append(("Algorithm 2", ORDERS * ex.T * ex.beta * ex.Gamma**2 / (2 * s**2)))
    if not needs:
        impl.require("noise_scale")
    for name, need in needs:
        i = int(np.argmax(need - charged))
        _require(
            bool(np.all(charged >= need * (1 - REL))),
            f"{name}: charged RDP {charged[i]!r} < {need[i]!r} released at alpha = {ORDERS[i]:g}",
        )


def prop_gradient_sensitivity_every_user(impl: MultiTaskAdapter, ex: MTExample) -> None:
    """Appendix A.3, by brute force: removing any user moves Algorithm 2's stacked noise-free step
    at theta by <= sqrt(beta) Gamma."""
    impl.require("gradient")
    g = np.asarray(impl.gradient(ex.dataset, theta=ex.theta, **ex.params), dtype=float)
    lim = math.sqrt(ex.beta) * ex.Gamma
    for j, D2 in _neighbours(ex.dataset):
        g2 = np.asarray(impl.gradient(D2, theta=ex.theta, **ex.params), dtype=float)
        shift = float(np.linalg.norm(g - g2))
        _require(shift <= lim * (1 + REL), f"removing user {j}: gradient moves {shift!r} > sqrt(beta) Gamma = {lim!r}")


def prop_closed_form_solves_problem_10(impl: MultiTaskAdapter, ex: MTExample) -> None:
    """eq. (11) (mu = 1/4: gamma = 0; mu = 1/2: gamma = 1) equals scipy's solution of problem (10)
    to 1e-6 relative, on the example's skewed counts."""
    impl.require("omega")
    for gamma, mu in ((0, 0.25), (1, 0.5)):
        got = np.asarray(impl.omega(n_counts=ex.skew, n_users=1000, beta_bar=ex.beta, mu=mu), dtype=float)
        want = solve_problem_10(ex.skew, 1000, ex.beta, gamma)
        err = float(np.max(np.abs(got - want) / want))
        _require(err <= 1e-6, f"gamma = {gamma}: omega = {got}, problem (10) gives {want} (rel. error {err:.2g})")


def _exact_ratios(n: np.ndarray) -> tuple[Fraction, Fraction]:
    """(R_0^2, R_1) in exact rational arithmetic where possible: R_1 = (sum 1/n)(sum n) / m^2 exactly;
    R_0^2 = m sum n / (sum sqrt n)^2 with the square roots as floats (the only rounding)."""
    q = [Fraction(int(v)) for v in n]
    m = len(q)
    R1 = sum(1 / v for v in q) * sum(q) / m**2
    R0sq = Fraction(m) * sum(q) / Fraction(math.fsum(math.sqrt(v) for v in n)) ** 2
    return R0sq, R1


def prop_ratios_at_least_one(impl: MultiTaskAdapter, ex: MTExample) -> None:
    """§4: R_0, R_1 >= 1 (Cauchy-Schwarz), = 1 iff every n_i is equal; values match the formulas
    (relative 1e-12; integer counts <= 1000, so unequal counts give R_1 - 1 >= ~1e-8)."""
    impl.require("ratios")
    R0, R1 = (float(v) for v in impl.ratios(n_counts=ex.skew))
    R0sq, R1x = _exact_ratios(ex.skew)
    _require(abs(R1 - float(R1x)) <= 1e-12 * float(R1x), f"R_1 = {R1!r}, the formula gives {float(R1x)!r}")
    _require(abs(R0 - math.sqrt(float(R0sq))) <= 1e-12, f"R_0 = {R0!r}, the formula gives {math.sqrt(float(R0sq))!r}")
    equal = bool(np.all(ex.skew == ex.skew[0]))
    if equal:
        _require(abs(R0 - 1) <= 1e-12 and abs(R1 - 1) <= 1e-12, f"equal counts: R_0 = {R0!r}, R_1 = {R1!r}, not 1")
    else:
        _require(R1 > 1 and R0 > 1, f"unequal counts {ex.skew}: R_0 = {R0!r}, R_1 = {R1!r} must exceed 1")


def prop_estimated_weights_underestimate(impl: MultiTaskAdapter, ex: MTExample) -> None:
    """Appendix B (Theorem B.2's proof): with s-accurate counts (|n-hat_i - n_i| <= s), the weights
    at n-hat + s are <= those at the exact n_i, for gamma in {0, 1} (mu = 1/4, 1/2; see
    ``krichene2023_weights`` for mu > 1/2)."""
    impl.require("omega")
    n_hat = ex.skew + ex.count_error
    for mu in (0.25, 0.5):
        exact = np.asarray(impl.omega(n_counts=ex.skew, n_users=1000, beta_bar=ex.beta, mu=mu), dtype=float)
        est = np.asarray(
            impl.omega(n_counts=np.maximum(n_hat + ex.s, 1.0), n_users=1000, beta_bar=ex.beta, mu=mu), dtype=float
        )
        _require(bool(np.all(est <= exact * (1 + REL))), f"mu = {mu}: estimated weights {est} exceed exact {exact}")


def prop_release_noise_is_symmetric_gaussian(impl: MultiTaskAdapter, ex: MTExample) -> None:
    """Lines 5-6: A-hat - A is symmetric, its diagonal and upper entries N(0, Gamma_x^4), b-hat - b
    N(0, Gamma_x^4 Gamma_*^2): KS tests of one diagonal entry, one off-diagonal entry, one b entry,
    and the lower-minus-upper difference exactly 0. Fixed seed; 3 KS tests at STAT_LEVEL each."""
    impl.require("statistic", "mechanism")
    D = ex.dataset
    A, b = (np.asarray(a, dtype=float) for a in impl.statistic(D, **ex.params))
    Ah, bh = (
        np.asarray(a, dtype=float)
        for a in impl.mechanism(D, rng=np.random.default_rng(2023), size=NOISE_DRAWS, **ex.params)
    )
    ZA, Zb = Ah - A, bh - b
    _require(
        bool(np.allclose(ZA, np.swapaxes(ZA, -1, -2), rtol=0, atol=1e-12 * max(1.0, float(np.abs(A).max())))),
        "A-hat - A is not symmetric",
    )
    sA, sb = ex.Gamma_x**2, ex.Gamma_x**2 * ex.Gamma_star
    for name, z in (
        ("A[0, 0, 0]", ZA[:, 0, 0, 0] / sA),
        ("A[0, 0, 1]", ZA[:, 0, 0, 1] / sA),
        ("b[0, 0]", Zb[:, 0, 0] / sb),
    ):
        p = stats.kstest(z, stats.norm.cdf).pvalue
        _require(p >= STAT_LEVEL, f"{name} noise is not N(0, sigma^2) at the paper's sigma: KS p = {p:.3g}")


# ---------------------------------------------------------------------- the reference
def _ref_weights(D, *, m, n_counts, n_users, beta, mu, **_):
    return W.adaptive_weights(D, m=m, beta=beta, mu=mu, n_counts=n_counts, n_users=n_users)


def _ref_statistic(D, **p):
    return K.statistic(D, _ref_weights(D, **p), m=p["m"], Gamma_x=p["Gamma_x"], Gamma_star=p["Gamma_star"])


def _ref_mechanism(D, rng, size=None, **p):
    return K.ssp_release(D, _ref_weights(D, **p), rng, size, m=p["m"], Gamma_x=p["Gamma_x"], Gamma_star=p["Gamma_star"])


def _ref_gradient(D, theta, **p):
    return K.weighted_gradient(D, _ref_weights(D, **p), theta, m=p["m"], Gamma=p["Gamma"], Lambda=p["Lambda"])


REFERENCE = MultiTaskAdapter(
    "krichene2023 (reference: mu-family weights + eq. (12), Algorithms 1 and 2)",
    weights=_ref_weights,
    statistic=_ref_statistic,
    sensitivity=lambda *, beta, Gamma_x, Gamma_star, **_: K.sensitivity(beta, Gamma_x, Gamma_star),
    noise_scale=lambda *, Gamma_x, Gamma_star, **_: K.noise_scale(Gamma_x, Gamma_star),
    mechanism=_ref_mechanism,
    gradient=_ref_gradient,
    gd_noise_scale=lambda *, Gamma, T, **_: K.gd_noise_scale(Gamma, T),
    rdp=lambda orders, *, beta, **_: W.rdp(orders, beta),
    omega=lambda n_counts, *, n_users, beta_bar, mu: W.omega_mu(n_counts, n_users, beta_bar, mu),
    ratios=W.improvement_ratios,
)

# ---------------------------------------------------------------------- the suite
STATISTICAL_PROPERTIES = (prop_release_noise_is_symmetric_gaussian,)  # run on one fixed example
ALL_PROPERTIES = (
    prop_budget_holds,
    prop_sensitivity_every_user,
    prop_declared_sensitivity_is_appendix_a1,
    prop_public_inputs_only,
    prop_noise_scales_are_the_papers,
    prop_rdp_covers_the_releases,
    prop_gradient_sensitivity_every_user,
    prop_closed_form_solves_problem_10,
    prop_ratios_at_least_one,
    prop_estimated_weights_underestimate,
) + STATISTICAL_PROPERTIES
# Small graphs: the sensitivity properties remove every user (brute force).
_SMALL = mt_examples(max_tasks=3, max_users=4)
STRATEGIES = {p: _SMALL for p in ALL_PROPERTIES}
# The statistical property runs on ONE fixed example (3 KS tests at STAT_LEVEL: a correct
# mechanism fails with probability <= 1e-4; more examples would multiply that). Gamma_* != 1
# there, so noise on b that forgets Gamma_* shows.
STRATEGIES[prop_release_noise_is_symmetric_gaussian] = st.just(
    dataclasses.replace(one_user_everywhere_example(), Gamma_star=2.0)
)
EXAMPLES = {p: list(HARD_EXAMPLES) for p in ALL_PROPERTIES if p not in STATISTICAL_PROPERTIES}
MAX_EXAMPLES = {p: 25 for p in ALL_PROPERTIES}
MAX_EXAMPLES.update({p: 1 for p in STATISTICAL_PROPERTIES})
ADAPTER = MultiTaskAdapter


# Totality at the float extremes (properties/extremes.py): the records' declared domain of each
# mechanism, by its validate name: any finite features and labels (Algorithms 1-2 clip them).
EXTREMES = {
    "krichene2023.ssp": Domain({"values": (-math.inf, math.inf), "labels": (-math.inf, math.inf)}),
    "krichene2023.noisy-gd": Domain({"values": (-math.inf, math.inf), "labels": (-math.inf, math.inf)}),
}
