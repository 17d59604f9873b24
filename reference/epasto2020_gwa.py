"""A. Epasto, M. Mahdian, J. Mao, V. Mirrokni, L. Ren, "Smoothly Bounding User
Contributions in Differential Privacy", NeurIPS 2020 (our copy of the paper gives no
arXiv id). §5: linear regression with label privacy.

- Algorithm 3 ``GWA_C`` (generalized weighted averaging): beta_hat = C y with C X = I_d,
  plus i.i.d. Lap(b) on each of the d coordinates, b = B eps^-1 max_l sum_j sum_{i in S_l} |c_{j,i}|.
- Theorem 6: the total variance sigma^2 ||C||_F^2 + 2 d b^2, and the optimal C
  (``optimal_C``: the convex program solved with a duality-gap certificate).
- §5.2 sample-limited OLS: C^s = (U^T U)^-1 U^T on min(h, s_l) uniformly chosen records
  of each user, expanded to n columns with zeros, then the same Laplace noise.

Data: ``dataset.values`` is X, (n, d) (an (n,) array is read as d = 1); ``dataset.labels``
is y, (n,), and must lie in [0, B] (§5: "y_i in [0, B]"). Labels outside [0, B] are refused,
never clipped. Relation: ``REPLACE_USER_LABELS`` (X and every S_l public, one user's labels
change). Claim: ``PureDP(epsilon)``.

Why this is private (Theorem 6; the proof mirrors Lemma 1). C depends on X, the S_l and
the public (B, eps, sigma) only, never on y, so it is the same on D and D'. If user l
changes labels y_i -> y'_i (i in S_l), then with |y_i - y'_i| <= B (both in [0, B]):

    ||C y - C y'||_1 = sum_j |sum_{i in S_l} c_{j,i} (y_i - y'_i)|
                     <= B sum_j sum_{i in S_l} |c_{j,i}|  <= B max_l W_l,

W_l = sum_j sum_{i in S_l} |c_{j,i}| (``user_l1``). So Delta_1 = B max_l W_l
(``sensitivity``) and Lap(Delta_1 / eps) per coordinate is eps-DP (Definition 3,
Theorem 1; ``mechanisms.laplace_mechanism``). The bound holds for every C, whether or
not C X = I: C X = I gives unbiasedness, not privacy. Sample limiting is GWA with C^s,
whose selection T depends only on the public S_l and the rng, never on y.

Reading chosen (privacy before utility): the paper's b sums |c_{j,i}| over j and i.
The exact L1 sensitivity B max_l max_{sigma in {+-1}^{S_l}} sum_j |sum_i c_{j,i} sigma_i|
can be smaller; we calibrate to the paper's larger b. Dropping the absolute value inside
the sum over i (|sum_i c_{j,i}|, natural when copying Lemma 1 where c >= 0) under-counts
and is a planted bug; so are a single row j and a per-record max.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from ._checks import (
    check_epsilon,
    check_finite_array,
    check_generator,
    check_in_interval,
    check_int,
    check_nonnegative,
    check_positive,
    check_size,
)
from .claims import PureDP
from .data import UserDataset, check_dataset
from .mechanisms import laplace_mechanism
from .neighbours import REPLACE_USER_LABELS, NeighbourPair

__all__ = [
    "RELATION",
    "CX_ATOL",
    "MAX_CONDITION",
    "claim",
    "features",
    "check_labels",
    "check_C",
    "user_l1",
    "sensitivity",
    "noise_scale",
    "statistic",
    "mechanism",
    "total_variance",
    "ols_C",
    "OptimalC",
    "dual_bound",
    "optimal_C",
    "optimal_C_all_records",
    "weights",
    "sample_limit_selection",
    "sample_limited_C",
    "best_sample_limit_h",
    "best_sample_limit_hs",
    "sample_limited_ols_mechanism",
    "worst_case_pairs",
]

RELATION = REPLACE_USER_LABELS
# C X = I is checked to max |(C X - I)_{jk}| <= CX_ATOL. C X is dimensionless (rescaling X
# by k rescales C by 1/k), so an absolute tolerance is meaningful. Privacy does not depend
# on it (see module docstring); it guards unbiasedness. The solvers here reach ~1e-12.
CX_ATOL = 1e-8
# optimal_C's continuation: kappa grows by the first factor per warm-started stage; if that
# path ends above rtol (Newton stalls on a kink), the finer paths are tried in turn.
CONTINUATION = (3.0, 1.5, 1.2)
# optimal_C tries the sigma = 0 LP's C before the continuation when kappa / k0 >= LP_FIRST.
# Below it the continuation is cheaper: on the §6 instance at n = 10^5, eps = 1 (kappa / k0 =
# 5e8 on the working set) it took 19 stages and 171 Newton steps, less time than the LP on the
# same 1,320 records, which did not certify (measured: docs/performance.md,
# "reference/epasto2020_gwa.py"). The LP certifies only when
# sigma^2 ||C||_F^2 <= rtol P, far out in kappa. 1e20 (42 stages at x3, twice the §6 path)
# is a judgement of where the LP starts to pay, not a measured crossover; either path is
# certified, so the threshold moves time, never the result.
LP_FIRST = 1e20
# Stages per continuation path: kappa / k0 <= ~1e110 for inputs in the supported ranges
# (B, sigma in [1e-50, 1e50], eps >= 1e-50), i.e. at most log(1e110)/log(1.2) ~ 1400 stages.
_MAX_STAGES = 1500


def claim(epsilon) -> PureDP:
    """The claim of GWA and sample-limited OLS: pure epsilon-DP under ``RELATION`` (replace one
    user's labels, features public; Theorem 4)."""
    return PureDP(check_epsilon(epsilon))


# ------------------------------------------------------------------------- input checks
def features(dataset: UserDataset) -> np.ndarray:
    """X, (n, d): the public features (an (n,) values array is one feature)."""
    X = check_dataset(dataset).values
    return X[:, None] if X.ndim == 1 else X


def check_labels(dataset: UserDataset, B) -> np.ndarray:
    """y, (n,), refused unless every y_i lies in [0, B] (§5)."""
    B = check_positive(B, "B")
    if check_dataset(dataset).labels is None:
        raise ValueError("dataset.labels is None: GWA needs labels y in [0, B]")
    return check_in_interval(dataset.labels, 0.0, B, "labels")


def check_C(C, dataset: UserDataset, atol: float = CX_ATOL) -> np.ndarray:
    """C, (d, n), refused unless C X = I_d to max-abs ``atol`` (Algorithm 3's parameter)."""
    X = features(dataset)
    n, d = X.shape
    atol = check_positive(atol, "atol", hi=1e-2)  # C X = I to at most 1e-2 (a tolerance, not a switch)
    C = check_finite_array(C, "C", ndim=(2,))
    if C.shape != (d, n):
        raise ValueError(f"C must have shape (d, n) = ({d}, {n}), got {C.shape}")
    err = float(np.abs(C @ X - np.eye(d)).max())
    if not err <= atol:
        raise ValueError(f"C must satisfy C X = I_d (Algorithm 3); max |C X - I| = {err:.3g} > atol = {atol:g}")
    return C


# ------------------------------------------------------------------------ Algorithm 3
def user_l1(dataset: UserDataset, C) -> np.ndarray:
    """W_l = sum_j sum_{i in S_l} |c_{j,i}| for every user l, (m,)."""
    d, n = features(dataset).shape[1], dataset.n
    C = check_finite_array(C, "C", ndim=(2,))
    if C.shape != (d, n):
        raise ValueError(f"C must have shape (d, n) = ({d}, {n}), got {C.shape}")
    return dataset.user_sums(np.abs(C).sum(axis=0))


def sensitivity(dataset: UserDataset, C, B) -> float:
    """Delta_1 = B max_l sum_j sum_{i in S_l} |c_{j,i}|   (Theorem 6 proof; Lemma 1 for d = 1)."""
    return check_positive(B, "B") * float(user_l1(dataset, C).max())


def noise_scale(dataset: UserDataset, C, B, epsilon) -> float:
    """Algorithm 3 line 2: b = B eps^-1 max_l sum_j sum_{i in S_l} |c_{j,i}|."""
    return sensitivity(dataset, C, B) / check_epsilon(epsilon)


def statistic(dataset: UserDataset, C, B) -> np.ndarray:
    """Algorithm 3 line 1: beta_hat = C y, (d,). Noise-free."""
    return check_C(C, dataset) @ check_labels(dataset, B)


def mechanism(dataset: UserDataset, C, B, epsilon, rng, size=None) -> np.ndarray:
    """Algorithm 3: beta_hat + (W_1..W_d), W_j ~ Lap(b) i.i.d.; (d,) or (size, d)."""
    beta_hat = statistic(dataset, C, B)
    return laplace_mechanism(beta_hat, sensitivity(dataset, C, B), epsilon, rng, size)


def total_variance(dataset: UserDataset, C, B, epsilon, sigma) -> float:
    """Theorem 6: sigma^2 sum_j sum_i c_{j,i}^2 + 2 d (B eps^-1 max_l sum_j sum_{i in S_l} |c_{j,i}|)^2."""
    sigma = _check_sigma(sigma)
    C = check_C(C, dataset)
    return sigma**2 * float(np.sum(C * C)) + 2 * C.shape[0] * noise_scale(dataset, C, B, epsilon) ** 2


def ols_C(X) -> np.ndarray:
    """C = (X^T X)^-1 X^T, (d, n): the OLS estimator; refuses a rank-deficient X."""
    X = check_finite_array(X, "X", ndim=(2,))
    if X.shape[1] == 0 or X.shape[0] < X.shape[1]:
        raise ValueError(f"X must be (n, d) with n >= d >= 1, got shape {X.shape}")
    if np.linalg.matrix_rank(X) < X.shape[1]:
        raise ValueError(f"X must have full column rank d = {X.shape[1]} (C X = I_d needs it)")
    return np.linalg.solve(X.T @ X, X.T)


def _check_sigma(sigma) -> float:
    """sigma >= 0, the public standard deviation of the label noise (Theorem 6)."""
    return check_nonnegative(sigma, "sigma")


# ----------------------------------------------------------------- the optimal C (Thm 6)
@dataclass(frozen=True)
class OptimalC:
    """The solution of Theorem 6's program and its certificate.

    ``variance`` is the primal value P(C) (Theorem 6) of the returned, exactly feasible C;
    ``lower_bound`` is a weak-duality bound D <= P* computed from (Lambda, mu) by
    ``dual_bound``; ``gap = (variance - lower_bound) / variance`` bounds the relative
    suboptimality of C. ``working_set`` is the number of records the last solve used
    (``optimal_C``'s working set; n when it solved on every record).
    """

    C: np.ndarray
    variance: float
    lower_bound: float
    gap: float
    Lambda: np.ndarray
    mu: np.ndarray | None
    iterations: int
    working_set: int | None = None


def _kappa(B, epsilon, d) -> float:
    return 2 * d * (check_positive(B, "B") / check_epsilon(epsilon)) ** 2  # Theorem 6: 2 d (B/eps)^2


def _soft(A, thresholds):
    """Soft thresholding S(a, tau) = sign(a) max(|a| - tau, 0), entrywise."""
    return np.sign(A) * np.maximum(np.abs(A) - thresholds, 0.0)


def dual_bound(dataset: UserDataset, B, epsilon, sigma, Lambda, mu=None) -> float:
    """A lower bound on min_C Theorem-6 variance, valid for ANY Lambda (d, d), mu >= 0 (m,).

    With kappa = 2 d (B/eps)^2, write the program as min sigma^2 ||C||_F^2 + kappa t^2 over
    C X = I and W_l(C) <= t. Its Lagrange dual (multipliers Lambda for C X = I, mu_l for the
    user constraints) is, for sigma > 0, with a_i = Lambda x_i and l(i) the owner of i,

        D(Lambda, mu) = tr(Lambda) - sum_i ||S(a_i, mu_l(i))||^2 / (4 sigma^2) - (sum_l mu_l)^2 / (4 kappa).

    (Minimising sigma^2 ||c||^2 + mu ||c||_1 - a^T c over c gives c = S(a, mu)/(2 sigma^2).)
    For sigma = 0, Hoelder gives tr(Lambda) = <Lambda, C X> <= max_l W_l sum_l max_{i in S_l}
    ||a_i||_inf, so P* >= kappa (tr(Lambda)_+ / sum_l max_{i in S_l} ||a_i||_inf)^2.
    """
    sigma = _check_sigma(sigma)
    X = features(dataset)
    d = X.shape[1]
    kappa = _kappa(B, epsilon, d)
    Lambda = check_finite_array(Lambda, "Lambda", ndim=(2,))
    if Lambda.shape != (d, d):
        raise ValueError(f"Lambda must have shape (d, d) = ({d}, {d}), got {Lambda.shape}")
    A = X @ Lambda.T  # (n, d), rows a_i
    if sigma == 0:
        top = _user_max(dataset.user_index, dataset.m, np.abs(A).max(axis=1))
        return kappa * (max(float(np.trace(Lambda)), 0.0) / float(top.sum())) ** 2
    if mu is None:
        raise TypeError(f"mu (the user multipliers, shape (m,) = ({dataset.m},)) is required when sigma > 0")
    mu = check_finite_array(mu, "mu", ndim=(1,))
    if mu.shape != (dataset.m,) or (mu < 0).any():
        raise ValueError(f"mu must have shape (m,) = ({dataset.m},) and entries >= 0")
    return _dual_value(X, dataset.user_index, sigma, kappa, Lambda, mu)


def _feasible(C, X, pinv=None) -> np.ndarray:
    """C + (I - C X)(X^T X)^-1 X^T: the nearest (Frobenius) C' with C' X = I exactly
    (``pinv`` = (X^T X)^-1 X^T, if the caller has it)."""
    return C + (np.eye(X.shape[1]) - C @ X) @ (np.linalg.solve(X.T @ X, X.T) if pinv is None else pinv)


def _primal(dataset, C, sigma, kappa) -> float:
    """Theorem 6's P(C) = sigma^2 ||C||_F^2 + kappa max_l W_l^2 (C already checked: solver-internal)."""
    W = np.bincount(dataset.user_index, np.abs(C).sum(axis=0), dataset.m)  # user_l1, unchecked
    return sigma**2 * float(np.sum(C * C)) + kappa * float(W.max()) ** 2


# The dual Newton solver certifies rtol = 1e-6 on every design we tried up to cond(X) ~ 2e4
# and stalls on some near 1e5 (measured on random designs with one shrunken column); the
# domain is therefore cond(X) <= MAX_CONDITION, and X outside it is refused up front.
MAX_CONDITION = 1e4


def _check_conditioning(X: np.ndarray) -> None:
    sv = np.linalg.svd(X, compute_uv=False)
    cond = np.inf if sv[-1] == 0 else float(sv[0] / sv[-1])
    if cond > MAX_CONDITION:
        raise ValueError(
            f"features X have condition number {cond:.3g} > MAX_CONDITION = {MAX_CONDITION:g}: "
            f"the certified optimal-C solver is not reliable there; rescale or drop "
            f"near-degenerate columns"
        )


def optimal_C(dataset: UserDataset, B, epsilon, sigma, *, rtol: float = 1e-6, max_iter: int = 500) -> OptimalC:
    """The C minimising Theorem 6's total variance, with relative duality gap <= ``rtol``
    (else RuntimeError). D is a difference of terms that can exceed the optimum by orders
    of magnitude, so its rounding floor is about 1e-10..1e-8 relative; the default 1e-6
    stays clear of it. Newton stops at the first iterate below ``rtol``, so the gap can be
    anywhere below it: 3.7e-13 to 6.6e-7 on the benchmark's §6 and GWA instances.

    Solver choice. The program is convex but nonsmooth (a max of L1 norms) in d n
    variables (30,000 at n = 3000, d = 10), and scipy has no QP solver. Its dual (see
    ``dual_bound``) has only d^2 + m variables, is concave, piecewise quadratic and C^1,
    and its gradient is the primal residual (I - C X, W_l - t). ``optimal_C_all_records``
    maximises it on every record; this function solves the same program on a working set
    of records first (see below) and certifies the result on all of them.

    Working set (the fast path beside the reference; docs/performance.md). At the optimum almost every
    column c_i is zero: c_i = S(Lambda x_i, mu_l(i)) / (2 sigma^2) is non-zero only where
    |Lambda x_i|_j > mu_l(i), and on the §6 instance at n = 10^4 that is 186 of 10^4
    records (1-3 per user). The records outside a working set T contribute nothing to the
    dual, its gradient or its Hessian wherever they are below their user's threshold, so a
    solution of the program restricted to T (C zero outside T) is optimal for all records
    exactly when no record outside T has ||Lambda x_i||_inf > mu_l(i) (for the LP's
    multipliers: > its user's max over T, the sigma = 0 bound's term). T starts from the
    OLS multipliers, grows by the violators (and the records within 10% of violating) until
    there are none, and the restricted solve is the reference solver itself. Nothing rests
    on the working set being right: the returned C is certified by the weak-duality gap on
    ALL records (``dual_bound`` on ``dataset``), and if the loop has not settled within
    ``_MAX_ROUNDS`` rounds, or the restricted problem is degenerate, the solve runs on all
    records. A property test checks that the two agree.
    """
    sigma, X, kappa, C0, rtol, max_iter = _checked(dataset, B, epsilon, sigma, rtol, max_iter)
    uidx, its = dataset.user_index, 0
    T = _initial_working_set(dataset, C0)
    for _ in range(_MAX_ROUNDS):
        if T.all():
            break  # every record: the reference solve below
        sub = dataset.take(np.flatnonzero(T))  # every user keeps a record (see _initial_working_set)
        try:
            res = _solve(sub, features(sub), B, epsilon, sigma, kappa, rtol, max_iter)
        except (ValueError, RuntimeError, np.linalg.LinAlgError):
            break  # degenerate restricted problem: solve on all records
        its += res.iterations
        A = np.abs(X @ res.Lambda.T).max(axis=1)  # ||Lambda x_i||_inf for every record
        thr = res.mu if res.mu is not None else _user_max(sub.user_index, dataset.m, A[T])
        out = A > thr[uidx]
        if not (out & ~T).any():  # no record outside T would enter: optimal for all
            try:
                return _certify_full(dataset, X, res, T, sigma, kappa, B, epsilon, its, rtol)
            except RuntimeError:
                break  # not certified on all records: solve on all of them
        T |= A > (1 - WS_MARGIN) * thr[uidx]  # the violators and the records close to violating
    res = _solve(dataset, X, B, epsilon, sigma, kappa, rtol, max_iter, C0=C0)
    return replace(res, iterations=res.iterations + its, working_set=dataset.n)


# The working set (optimal_C). _MAX_ROUNDS: rounds of the loop before optimal_C solves on
# every record; each round adds at least one record. WS_START: a large user's records enter T
# when their OLS ||c_i||_inf is at least this share of the user's largest. WS_MARGIN: a round
# adds the records within this relative margin of their threshold, not only the violators.
# On the §6 instance at n = 10^5 (m = 62), eps = 1: WS_START 0.5 gave 16,013 records, one
# round; 0.7 gave 1,320 records, one round, the fastest; 0.9 gave 334 records growing to 580
# over three rounds (each re-runs the continuation). Measured: docs/performance.md,
# "reference/epasto2020_gwa.py".
_MAX_ROUNDS = 10
WS_START = 0.7
WS_MARGIN = 0.1


def optimal_C_all_records(
    dataset: UserDataset, B, epsilon, sigma, *, rtol: float = 1e-6, max_iter: int = 500
) -> OptimalC:
    """``optimal_C`` without the working set: the dual solved on every record (the reference
    the fast path is tested against; same checks, same certificate)."""
    sigma, X, kappa, C0, rtol, max_iter = _checked(dataset, B, epsilon, sigma, rtol, max_iter)
    return replace(_solve(dataset, X, B, epsilon, sigma, kappa, rtol, max_iter, C0=C0), working_set=dataset.n)


def _checked(dataset, B, epsilon, sigma, rtol, max_iter):
    """optimal_C's arguments checked: (sigma, X, kappa, C0 = OLS, rtol, max_iter)."""
    sigma = _check_sigma(sigma)
    X = features(dataset)
    kappa = _kappa(B, epsilon, X.shape[1])
    C0 = ols_C(X)  # refuses rank-deficient X
    _check_conditioning(X)
    rtol = check_positive(rtol, "rtol", lo=1e-12, hi=1e-2)
    max_iter = check_int(max_iter, "max_iter", lo=1, hi=100_000)
    return sigma, X, kappa, C0, rtol, max_iter


def _user_max(uidx, m, a) -> np.ndarray:
    """max_{i in S_l} a_i per user l, (m,) (0 for a user with no entry)."""
    top = np.zeros(m)
    np.maximum.at(top, uidx, a)
    return top


def _initial_working_set(dataset: UserDataset, C0) -> np.ndarray:
    """Boolean (n,): every record of a user with at most 4 d records, and the records of larger
    users whose OLS column has ||c0_i||_inf >= WS_START times their user's largest. Each
    user keeps its largest, so T meets every S_l: the restricted program has the same m
    users (and the same mu)."""
    a = np.abs(C0).max(axis=0)
    uidx = dataset.user_index
    return (a >= WS_START * _user_max(uidx, dataset.m, a)[uidx]) | (dataset.counts[uidx] <= 4 * C0.shape[0])


def _certify_full(dataset, X, res, T, sigma, kappa, B, epsilon, its, rtol) -> OptimalC:
    """The restricted solution on all records: C zero outside T, made exactly feasible on all
    of X, certified by the weak-duality gap on all records."""
    C = np.zeros((X.shape[1], X.shape[0]))
    C[:, T] = res.C
    C = _feasible(C, X)
    tol = 1e-6 if sigma == 0 else rtol  # sigma = 0: the LP's fixed certificate (_optimal_C_lp)
    return replace(
        _certify(dataset, C, sigma, kappa, B, epsilon, res.Lambda, res.mu, its, tol), working_set=int(T.sum())
    )


def _solve(dataset, X, B, epsilon, sigma, kappa, rtol, max_iter, C0=None) -> OptimalC:
    """The reference solver on ``dataset`` (all its records): the LP for sigma = 0; else the
    LP's C if it certifies, else the dual Newton continuation.

    We maximise the dual by a projected semismooth Newton method (generalised Hessian,
    Armijo backtracking, mu >= 0 by projection), with continuation in kappa (x3 per stage
    from where the two variance terms balance, each stage warm-started; x1.5 then x1.2 if
    that path stalls). L-BFGS-B on the same dual stalls at a 1e-3 gap when
    kappa / sigma^2 ~ 1e5, the regime of the §6 experiment. The primal C is read off the
    dual, made exactly feasible (``_feasible``) and certified by the weak-duality gap, which
    the caller can recompute with ``dual_bound``. For sigma = 0 (Example 1) the program is
    the LP min max_l W_l, solved by HiGHS (``linprog``) and certified the same way with
    Lambda from its equality marginals. When kappa >= k0 LP_FIRST (the noise term dominates
    by far), the LP's C is tried first and kept if weak duality certifies it for sigma too
    (``_lp_certified_for_sigma``); this is what makes tiny eps fast (the continuation would
    need hundreds of stages). Between k0 / rtol (below it the LP cannot certify) and
    k0 LP_FIRST, the LP is the fallback if the continuation paths stall. Every loop is
    bounded (``max_iter`` Newton steps per stage, ``_MAX_STAGES`` stages per path); if none
    reaches ``rtol``, RuntimeError.
    """
    if sigma == 0:
        return _optimal_C_lp(dataset, X, B, epsilon, kappa)  # rtol: HiGHS's own tolerances
    C0 = ols_C(X) if C0 is None else C0
    k0 = min(kappa, sigma**2 * float(np.sum(C0 * C0)) / float(user_l1(dataset, C0).max()) ** 2)
    if kappa >= k0 * LP_FIRST:  # the noise term dominates: try the LP's C first
        lp = _lp_certified_for_sigma(dataset, X, B, epsilon, sigma, kappa, rtol)
        if lp is not None:
            return lp
    its = 0
    for factor in CONTINUATION:  # a finer path if a coarser one stalls
        k, Lam, mu = k0, 2 * sigma**2 * np.linalg.inv(X.T @ X), np.zeros(dataset.m)
        for _ in range(_MAX_STAGES):  # log(kappa/k0)/log(factor) <= 1300 stages in range
            Lam, mu, it = _newton(dataset, X, sigma, k, Lam, mu, rtol if k == kappa else 1e-3, max_iter)
            its += it
            if k == kappa:
                break
            k = min(factor * k, kappa)
            Lam, mu = _rescale(X, dataset.user_index, sigma, k, Lam, mu)
        C = _feasible(_soft(X @ Lam.T, mu[dataset.user_index][:, None]).T / (2 * sigma**2), X)
        if _primal(dataset, C, sigma, kappa) - dual_bound(dataset, B, epsilon, sigma, Lam, mu) <= rtol * _primal(
            dataset, C, sigma, kappa
        ):
            break
        if k0 / rtol <= kappa < k0 * LP_FIRST:  # the LP's C may certify where the paths stall
            lp = _lp_certified_for_sigma(dataset, X, B, epsilon, sigma, kappa, rtol)
            if lp is not None:
                return replace(lp, iterations=lp.iterations + its)
    return _certify(dataset, C, sigma, kappa, B, epsilon, Lam, mu, its, rtol)


def _certify(dataset, C, sigma, kappa, B, epsilon, Lam, mu, its, rtol) -> OptimalC:
    """C with its weak-duality certificate, else RuntimeError. mu None: the LP's multipliers,
    certified by the sigma = 0 bound (valid for every sigma: P_sigma >= P_0 >= D_0)."""
    P = _primal(dataset, C, sigma, kappa)
    D = dual_bound(dataset, B, epsilon, sigma if mu is not None else 0.0, Lam, mu)
    gap = (P - D) / P
    if not gap <= rtol:
        raise RuntimeError(f"optimal_C did not reach rtol = {rtol:g}: relative duality gap {gap:.3g}")
    return OptimalC(C, P, D, gap, Lam, mu, its)


def _rescale(X, uidx, sigma, kappa, Lam, mu):
    """(s Lambda, s mu) with the s >= 0 that maximises D on that ray at this kappa.

    Soft thresholding is positively homogeneous (S(s a, s mu) = s S(a, mu)), so
    D(s Lambda, s mu) = s tr(Lambda) - s^2 Q with Q = sum_i ||S(a_i, mu_l(i))||^2 / (4 sigma^2)
    + (sum_l mu_l)^2 / (4 kappa), maximal at s = tr(Lambda) / (2 Q). Between continuation
    stages this moves the warm start to the new kappa's scale (once the noise term dominates,
    the optimum grows like kappa along a nearly fixed direction); s = 1 is on the ray, so D
    never decreases.
    """
    S = _soft(X @ Lam.T, mu[uidx][:, None])
    Q = np.sum(S * S) / (4 * sigma**2) + mu.sum() ** 2 / (4 * kappa)
    tr = float(np.trace(Lam))
    return (Lam, mu) if not (tr > 0 and Q > 0) else (tr / (2 * Q) * Lam, tr / (2 * Q) * mu)


def _dual_value(X, uidx, sigma, kappa, Lam, mu) -> float:
    """D(Lambda, mu) (``dual_bound``'s formula, without its checks: the line search's test)."""
    S = _soft(X @ Lam.T, mu[uidx][:, None])
    return float(np.trace(Lam) - np.sum(S * S) / (4 * sigma**2) - mu.sum() ** 2 / (4 * kappa))


def _dual_state(X, uidx, m, sigma, kappa, Lam, mu):
    """D(Lambda, mu), its gradient (I - C X, W - t), the active set, its signs and C^T (n, d)."""
    A = X @ Lam.T  # (n, d)
    th = mu[uidx][:, None]
    active = np.abs(A) > th
    S = np.where(active, A - np.sign(A) * th, 0.0)
    Ct = S / (2 * sigma**2)  # C^T, (n, d)
    M = mu.sum()
    D = np.trace(Lam) - np.sum(S * S) / (4 * sigma**2) - M * M / (4 * kappa)
    g_lam = np.eye(Lam.shape[0]) - Ct.T @ X  # dD/dLambda = I - C X
    g_mu = np.bincount(uidx, np.abs(Ct).sum(1), m) - M / (2 * kappa)  # dD/dmu_l = W_l - t
    return D, np.concatenate([g_lam.ravel(), g_mu]), active, np.sign(A) * active, Ct


def _newton_step(X, U, sigma, kappa, active, sgn, grad, free_mu, damping):
    """Solve H p = grad (H = -Hessian of D, generalised) by eliminating the mu block.

    H_LL = blockdiag_j sum_{i active in row j} x_i x_i^T / (2 sigma^2);
    H_Lmu[j, l] = -sum_{i in S_l active in row j} sgn_ji x_i / (2 sigma^2);
    H_mumu = diag(#active in S_l / (2 sigma^2)) + 11^T / (2 kappa).
    ``U`` is the (m, n) 0/1 matrix of record ownership (row l: S_l).
    ``damping`` (relative to the Hessian's scale) is added to the diagonal (Levenberg).
    """
    n, d = X.shape
    U = U[free_mu]
    H_LL = np.zeros((d * d, d * d))
    for j in range(d):
        Xa = X[active[:, j]]
        H_LL[j * d : (j + 1) * d, j * d : (j + 1) * d] = Xa.T @ Xa / (2 * sigma**2)
    # K[(j, k), l] = H_Lmu: the user sums of sgn_ji x_ik, all rows j in one sparse product
    K = -(U @ (sgn[:, :, None] * X[:, None, :]).reshape(n, d * d)).T / (2 * sigma**2)
    delta = (U @ active.sum(1)) / (2 * sigma**2)
    reg = damping * max(float(np.trace(H_LL)) / (d * d), float(delta.max(initial=0.0)), 1.0 / kappa)
    delta = delta + reg
    w, om = 1.0 / delta, 1.0 / (2 * kappa)

    def Minv(v):  # (diag(delta) + om 1 1^T)^-1 v, Sherman-Morrison
        wv = w[:, None] * v if v.ndim == 2 else w * v
        return wv - om * np.outer(w, w @ v).reshape(wv.shape) / (1 + om * w.sum())

    gL, gM = grad[: d * d], grad[d * d :][free_mu]
    S = H_LL + reg * np.eye(d * d) - K @ Minv(K.T)
    pL = np.linalg.solve(S, gL - K @ Minv(gM))
    pM = Minv(gM - K.T @ pL)
    return pL, pM


def _newton(dataset, X, sigma, kappa, Lam, mu, rtol, max_iter):
    """Projected semismooth Newton ascent on D with Levenberg damping; stops at relative gap
    <= rtol. A step is taken only if it passes the Armijo test; when backtracking fails,
    the damping grows (towards a projected gradient step) and the step is retried."""
    (n, d), m, uidx = X.shape, dataset.m, dataset.user_index
    U = sparse.csr_matrix((np.ones(n), (uidx, np.arange(n))), shape=(m, n))
    pinv = np.linalg.solve(X.T @ X, X.T)  # for _feasible, once
    damping = 1e-12
    for it in range(1, max_iter + 1):
        D, grad, active, sgn, Ct = _dual_state(X, uidx, m, sigma, kappa, Lam, mu)
        C = _feasible(Ct.T, X, pinv)
        P = _primal(dataset, C, sigma, kappa)
        if (P - D) / P <= rtol:
            return Lam, mu, it
        free_mu = ~((mu <= 0) & (grad[d * d :] < 0))  # bound active: stays at 0
        pL, pM = _newton_step(X, U, sigma, kappa, active, sgn, grad, free_mu, damping)
        step = np.zeros(d * d + m)
        step[: d * d], step[d * d :][free_mu] = pL, pM
        z = np.concatenate([Lam.ravel(), mu])
        for k in range(30):  # Armijo on the projected path
            zn = z + 0.5**k * step
            zn[d * d :] = np.maximum(zn[d * d :], 0.0)
            Dn = _dual_value(X, uidx, sigma, kappa, zn[: d * d].reshape(d, d), zn[d * d :])
            if Dn >= D + 1e-4 * grad @ (zn - z) and Dn >= D:
                Lam, mu = zn[: d * d].reshape(d, d), zn[d * d :]
                damping = max(damping / 10, 1e-12) if k == 0 else damping * 10 ** min(k, 4)
                break
        else:
            damping *= 1e4  # no ascent: damp harder, retry
            if damping > 1e8:  # stalled at rounding level: stop
                return Lam, mu, it
    return Lam, mu, max_iter


def _optimal_C_lp(dataset, X, B, epsilon, kappa) -> OptimalC:
    """sigma = 0: min t s.t. (C+ - C-) X = I, sum_{i in S_l} sum_j (C+ + C-)_{j,i} <= t, C+- >= 0."""
    n, d = X.shape
    m = dataset.m
    A_eq1 = sparse.kron(sparse.eye(d), sparse.csr_matrix(X.T))  # row (j,k): sum_i c_ji X_ik
    A_eq = sparse.hstack([A_eq1, -A_eq1, sparse.csr_matrix((d * d, 1))]).tocsr()
    U = sparse.csr_matrix((np.ones(n), (dataset.user_index, np.arange(n))), shape=(m, n))
    Ud = sparse.hstack([U] * d)  # (m, d n)
    A_ub = sparse.hstack([Ud, Ud, -np.ones((m, 1))]).tocsr()
    cost = np.r_[np.zeros(2 * d * n), 1.0]
    res = linprog(
        cost, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=np.eye(d).ravel(), bounds=(0, None), method="highs"
    )
    if res.status != 0:
        raise RuntimeError(f"optimal_C: HiGHS failed on the sigma = 0 LP: {res.message}")
    C = _feasible((res.x[: d * n] - res.x[d * n : 2 * d * n]).reshape(d, n), X)
    Lam = np.asarray(res.eqlin.marginals).reshape(d, d)
    return _certify(dataset, C, 0.0, kappa, B, epsilon, Lam, None, int(res.nit), 1e-6)


def _lp_certified_for_sigma(dataset, X, B, epsilon, sigma, kappa, rtol) -> OptimalC | None:
    """The sigma = 0 optimum, if it is certified for ``sigma`` too; else None.

    Weak duality: for every feasible C, P_sigma(C) = sigma^2 ||C||_F^2 + kappa t^2 >= P_0(C)
    >= D_0, the sigma = 0 dual bound of the LP's multipliers. So (P_sigma(C_lp) - D_0) / P_sigma(C_lp)
    bounds C_lp's relative suboptimality for ``sigma``. It is small exactly when kappa t^2
    dwarfs sigma^2 ||C||_F^2, where the continuation below would need hundreds of stages
    (kappa / k0 up to ~1e110 in the supported ranges).
    """
    lp = _optimal_C_lp(dataset, X, B, epsilon, kappa)
    P = _primal(dataset, lp.C, sigma, kappa)
    gap = (P - lp.lower_bound) / P
    return OptimalC(lp.C, P, lp.lower_bound, gap, lp.Lambda, None, lp.iterations) if gap <= rtol else None


def weights(dataset: UserDataset, B, epsilon, sigma) -> np.ndarray:
    """The weights stage: the certified optimal C, (d, n)."""
    return optimal_C(dataset, B, epsilon, sigma).C


# --------------------------------------------------------------- §5.2 sample limiting
def _check_h(dataset: UserDataset, h) -> int:
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)):
        raise TypeError(f"h must be an integer threshold (§5.2), got {type(h).__name__} {h!r}")
    s1, sm = int(check_dataset(dataset).counts.min()), int(dataset.counts.max())
    if not (h >= 1 and s1 <= h <= sm):
        raise ValueError(f"h must be an integer in [s_1, s_m] = [{s1}, {sm}] and >= 1, got {h!r}")
    return int(h)


def sample_limit_selection(dataset: UserDataset, h, rng) -> np.ndarray:
    """T: for each user l, min(h, s_l) of its records chosen uniformly (§5.2), sorted indices.

    Depends only on the public S_l and rng (a uniform random rank within each user).
    """
    h = _check_h(dataset, h)
    return _nested_selection(dataset, h, check_generator(rng).random(dataset.n))


def sample_limited_C(dataset: UserDataset, h, T) -> np.ndarray:
    """C^s = (U^T U)^-1 U^T on the rows T, expanded to n columns with zeros (§5.2), (d, n)."""
    h = _check_h(dataset, h)
    T = _check_selection(dataset, h, T)
    X = features(dataset)
    C = np.zeros((X.shape[1], dataset.n))
    C[:, T] = ols_C(X[T])  # C^s = (U^T U)^-1 U^T
    return C


def _check_selection(dataset: UserDataset, h: int, T) -> np.ndarray:
    """T: distinct record indices in [0, n), exactly min(h, s_l) of every user l (§5.2)."""
    T = np.asarray(T)
    if T.dtype.kind not in "iu" or T.ndim != 1:
        raise TypeError(f"T must be a 1-D integer array of record indices, got dtype {T.dtype}, shape {T.shape}")
    bad = (T < 0) | (T >= dataset.n)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"T must hold record indices in [0, {dataset.n}); T[{i}] = {T[i].item()!r}")
    caps = np.minimum(dataset.counts, h)
    if np.unique(T).size != T.size or not np.array_equal(np.bincount(dataset.user_index[T], minlength=dataset.m), caps):
        raise ValueError(f"T must hold exactly min(h, s_l) distinct records of every user l (h = {h})")
    return T


def best_sample_limit_h(dataset: UserDataset, B, epsilon, sigma, rng) -> tuple[int, np.ndarray]:
    """h* = the integer h in [s_1, s_m] minimising Theorem 6's variance of C^s, and its T.

    One uniform order per user is drawn once, and T(h) takes its first min(h, s_l)
    records, so the candidates are nested. h whose U is rank-deficient (or so ill-conditioned
    that C^s X = I fails to CX_ATOL) is skipped.
    """
    return best_sample_limit_hs(dataset, B, (check_epsilon(epsilon),), sigma, rng)[0]


def best_sample_limit_hs(dataset: UserDataset, B, epsilons, sigma, rng) -> list[tuple[int, np.ndarray]]:
    """``best_sample_limit_h`` for several eps at once, sharing one selection order and one
    C^s per h: [(h*, T) for each eps]."""
    features(dataset)
    if isinstance(epsilons, (str, bytes, set, frozenset, dict)) or not hasattr(epsilons, "__iter__"):
        raise TypeError(f"epsilons must be a sequence of privacy levels, got {type(epsilons).__name__}")
    epsilons = [check_epsilon(e, f"epsilons[{j}]") for j, e in enumerate(epsilons)]
    if not epsilons:
        raise ValueError("epsilons must hold at least one privacy level")
    sigma, B = _check_sigma(sigma), check_positive(B, "B")
    key = check_generator(rng).random(dataset.n)
    cands = []  # (h, T, ||C||_F^2, max_l W_l)
    for h in range(int(dataset.counts.min()), int(dataset.counts.max()) + 1):
        T = _nested_selection(dataset, h, key)
        try:  # U rank-deficient or so ill-
            C = check_C(sample_limited_C(dataset, h, T), dataset)  # conditioned that C^s X != I
        except ValueError:
            continue
        cands.append((h, T, float(np.sum(C * C)), float(user_l1(dataset, C).max())))
    if not cands:
        raise ValueError("no h in [s_1, s_m] gives a full-rank sample: sample limiting is undefined here")
    d = features(dataset).shape[1]
    out = []
    for eps in epsilons:
        # Theorem 6 for C^s: sigma^2 ||C^s||_F^2 + 2 d (B eps^-1 max_l W_l)^2
        v = [sigma**2 * f2 + _kappa(B, eps, d) * w**2 for _, _, f2, w in cands]
        h, T = cands[int(np.argmin(v))][:2]
        out.append((h, T))
    return out


def _nested_selection(dataset, h, key):
    """Records whose rank by ``key`` within their user is < h (uniform if key is i.i.d.)."""
    order = np.lexsort((key, dataset.user_index))  # grouped by user, random within
    starts = np.r_[0, np.cumsum(dataset.counts)[:-1]]
    rank = np.arange(dataset.n) - np.repeat(starts, dataset.counts)  # rank within its user
    return np.sort(order[rank < h])


def sample_limited_ols_mechanism(dataset: UserDataset, h, B, epsilon, rng, size=None, T=None) -> np.ndarray:
    """§5.2: C^s y + Lap(b)^d with b = B eps^-1 max_l sum_j sum_{i in S_l^s} |c^s_{j,i}|.

    Each release is GWA_{C^s} given T, hence eps-DP (T depends on S_l and rng, never on y).
    With T = None the selection T is drawn from rng and one release is made: several
    releases would share that draw, and ``size`` releases must be independent (the audit
    assumes it), so ``size`` > 1 needs a given T (``sample_limit_selection``), whose
    releases are then independent GWA_{C^s} draws.
    """
    size = check_size(size)
    if T is None:
        if size not in (None, 1):
            raise ValueError(
                f"size must be None or 1 when T is None (each call draws one selection T; "
                f"{size} releases would share it): pass T = sample_limit_selection(dataset, h, rng) "
                f"to release {size} times with one selection"
            )
        T = sample_limit_selection(dataset, h, rng)
    return mechanism(dataset, sample_limited_C(dataset, h, T), B, epsilon, rng, size)


# ------------------------------------------------------------------- audit pairs
def worst_case_pairs(dataset: UserDataset, C, B, *, max_brute: int = 14) -> list[NeighbourPair]:
    """Label pairs that realise the most of b: for the user(s) attaining max_l W_l, labels
    y_i = B [sigma_i = +1] vs B [sigma_i = -1], sigma maximising ||C_{S_l} sigma||_1 (brute
    force over {+-1}^{s_l} when s_l <= ``max_brute``, else sign(row j) for each j)."""
    B = check_positive(B, "B")
    max_brute = check_int(max_brute, "max_brute", lo=0, hi=20)  # 2^20 sign vectors at most
    W = user_l1(dataset, C)
    C = np.asarray(C, dtype=float)
    pairs = []
    for l in np.flatnonzero(W >= W.max() * (1 - 1e-12))[:2]:
        u = int(dataset.users[l])
        Cl = C[:, dataset.records_of(u)]  # (d, s_l)
        sig = _best_signs(Cl, max_brute)
        real = float(np.abs(Cl @ sig).sum()) * B
        a = RELATION.neighbour(dataset, u, B * (sig > 0))
        b = RELATION.neighbour(dataset, u, B * (sig < 0))
        pairs.append(
            NeighbourPair(
                a,
                b,
                RELATION.name,
                u,
                f"user {u} (s={Cl.shape[1]}): labels B*[sign>0] vs B*[sign<0]; "
                f"||beta(D)-beta(D')||_1 = {real:.6g} of Delta_1 = {B * W[l]:.6g}",
            )
        )
    return pairs


def _best_signs(Cl, max_brute) -> np.ndarray:
    s = Cl.shape[1]
    if s <= max_brute:
        grid = 1.0 - 2.0 * ((np.arange(2**s)[:, None] >> np.arange(s)) & 1)  # (2^s, s) in {+-1}
        cands = grid
    else:
        cands = np.where(Cl >= 0, 1.0, -1.0)  # (d, s)
    return cands[int(np.argmax(np.abs(cands @ Cl.T).sum(axis=1)))]
