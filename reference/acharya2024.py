"""K. Acharya, F. Boenisch, R. Naidu, J. Ziani, "Personalized Differential Privacy for
Ridge Regression" (2024). PDP-OP (Algorithm 1) and its two noise calibrations
(Theorems 3.2 and 3.4), with the paper's baselines: non-personalized output perturbation
and the sampling mechanism of Jorgensen et al. 2015 (the comparison of §4).

Data: ``dataset.values`` is X, (n, d), every x_i in [0, 1]^d (d counts the intercept
column when there is one); ``dataset.labels`` is y, (n,), in [-1, 1]; ``dataset.epsilons``
is the public privacy profile eps_i > 0. Data outside the domain is refused, never
clipped. Relation: ``REPLACE_RECORD`` (Definition 2.1: i-neighbours differ in record i
only, n and the profile public). Claim: ``PersonalizedDP(epsilons)`` (Definition 2.2).

Algorithm 1 (PDP-OP). w_i = eps_i / sum_j eps_j (Theorem 3.2; no 1/n: sum w = 1), then

    theta_bar = argmin_theta sum_i w_i (y_i - theta.x_i)^2 + lambda ||theta||^2        (eq. 2)
              = (sum_i w_i x_i x_i^T + lambda I)^{-1} sum_i w_i y_i x_i,
    theta_hat = theta_bar + Z,   density of Z prop. to exp(-eta ||Z||_2),

Z sampled as in Remark 3.1: radius Gamma(shape d, rate eta), uniform direction
(``mechanisms.l2_laplace_noise``).

Why this is private (Appendix A.1, re-derived here). Bound on theta_bar: comparing with
theta = 0, lambda ||theta_bar||^2 <= L_w(theta_bar) <= L_w(0) = sum w_i y_i^2 <= 1, so
||theta_bar|| <= 1/sqrt(lambda) (Lemma A.1); from the closed form, ||theta_bar|| <=
||sum w_i y_i x_i|| / lambda <= sqrt(d) / lambda (Lemma A.2, ||x|| <= sqrt(d)). So
||theta_bar|| <= B(lambda) = min(1/sqrt(lambda), sqrt(d)/lambda) on EVERY dataset of the
domain. Sensitivity for record i: D and D' differ in (x_i, y_i) -> (x'_i, y'_i). Both
objectives are 2 lambda-strongly convex; with g(theta) = w_i (y_i - theta.x_i)^2 -
w_i (y'_i - theta.x'_i)^2 the difference of the objectives, the first-order conditions
and strong convexity give (Lemma A.3, a form of CMS11 Lemma 7)

    2 lambda ||theta_bar(D) - theta_bar(D')|| <= ||grad g(theta_bar(D))||,
    grad g(theta) = 2 w_i ((theta.x_i - y_i) x_i - (theta.x'_i - y'_i) x'_i),
    ||grad g(theta_bar(D))|| <= 2 w_i (2 d B + 2 sqrt(d))      (|theta.x| <= sqrt(d) B, |y| <= 1),

so Delta_i = 2 w_i sqrt(d) (sqrt(d) B + 1) / lambda (Theorem A.4). The release density
ratio is exp(eta (||o - theta_bar(D')|| - ||o - theta_bar(D)||)) <= exp(eta Delta_i)
(triangle inequality, Lemma A.5). Theorem 3.2 picks eta = lambda sum_j eps_j /
(2 sqrt(d) (1 + sqrt(d) B(lambda))), so that eta Delta_i = eps_i exactly for every i.

Theorem 3.4 (Assumption 3.3) replaces B(lambda) by a KNOWN constant B >= ||theta_bar_0||,
theta_bar_0 the unregularised weighted least-squares solution: ||theta_bar|| <=
||theta_bar_0|| (theta_bar_0 has the smaller unregularised loss, so theta_bar cannot have
the larger norm as well). The proof evaluates ||theta_bar|| on D (and on D' by symmetry),
so for the claim to hold for record i the bound must hold on EVERY i-neighbour of the
dataset, not only on the dataset at hand: a user of Theorem 3.4 must know B for all
datasets the mechanism could run on (for example from the design of the features), not
estimate it from the data. If some neighbour D' has ||theta_bar_0(D')|| > B, the
sensitivity can exceed Delta_i and the claim fails (``theorem34_sensitivity`` shows
how much; a planted bug uses it). When sum w x x^T is singular theta_bar_0 is not unique;
we take the minimum-norm solution (the smallest B the assumption can mean).

Reading chosen where the text is silent: lambda = 0 is refused (the authors' code then
sets eta = 0 and releases theta_bar with no noise: github krishnacharya/pp-ridge,
docs/papers/acharya2024.md). The baselines:

- non-personalized: PDP-OP with every eps_i := min_j eps_j (uniform weights 1/n);
- Jorgensen et al. 2015: keep record i independently with probability
  p_i = min(1, (e^{eps_i} - 1) / (e^t - 1)) and run the uniform (non-personalized)
  estimator at level t on the kept records; t = max eps or mean eps. The amplified level
  is ln(1 + p_i (e^t - 1)) <= eps_i. A draw that keeps no record releases theta = 0 (the
  ridge minimiser of the empty loss, lambda ||theta||^2), with no noise: the output is
  then a constant that reads no record, so it reveals nothing; it is a defined release,
  not a crash (the authors' code has no guard).
  Caveat, stated by us: the amplification bound ln(1 + p (e^t - 1)) is proved for
  Poisson sampling with the add/remove-one relation; under replace-record the inner
  estimator compares kept sets of different sizes. The registry audits the baselines at
  their per-record claim, which is the test of this reading.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import (
    check_finite_array,
    check_generator,
    check_in_interval,
    check_int,
    check_noise_scale,
    check_positive,
    check_size,
)
from .claims import PersonalizedDP
from .data import UserDataset, check_dataset
from .mechanisms import l2_laplace_noise
from .neighbours import REPLACE_RECORD

__all__ = [
    "RELATION",
    "claim",
    "check_data",
    "weights",
    "theta_bound",
    "eta",
    "sensitivity",
    "noise_scale",
    "statistic",
    "mechanism",
    "unregularised_norm",
    "theorem34_sensitivity",
    "nonpersonalized_epsilons",
    "nonpersonalized_mechanism",
    "jorgensen_threshold",
    "jorgensen_probabilities",
    "jorgensen_levels",
    "jorgensen_mechanism",
]

RELATION = REPLACE_RECORD


# ------------------------------------------------------------------------------ data
def check_data(dataset: UserDataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X (n, d), y (n,), eps (n,)): x in [0, 1]^d, y in [-1, 1], a profile eps_i > 0 (refused, never clipped)."""
    D = check_dataset(dataset)
    if D.labels is None:
        raise ValueError("dataset must have labels y in [-1, 1] (ridge regression)")
    if D.epsilons is None:
        raise ValueError("dataset must carry the privacy profile: epsilons (one eps_i > 0 per record)")
    X = check_in_interval(D.values, 0.0, 1.0, "values (x)")
    X = X.reshape(D.n, -1)
    if X.shape[1] == 0:
        raise ValueError("values (x) must have d >= 1 features, got d = 0")
    y = check_in_interval(D.labels, -1.0, 1.0, "labels (y)")
    return X, y, np.asarray(D.epsilons, dtype=float)


def claim(dataset: UserDataset) -> PersonalizedDP:
    """eps_i-DP with respect to record i (Definition 2.2), the dataset's public profile."""
    return PersonalizedDP(tuple(check_data(dataset)[2]))


def weights(dataset: UserDataset) -> np.ndarray:
    """w_i = eps_i / sum_j eps_j (Theorem 3.2), shape (n,); sums to 1."""
    eps = check_data(dataset)[2]
    return eps / eps.sum()


def _lambda(Lambda) -> float:
    return check_positive(Lambda, "Lambda (lambda > 0: at lambda = 0 the authors' code adds no noise)")


def theta_bound(Lambda, d, B=None) -> float:
    """B(lambda) = min(1/sqrt(lambda), sqrt(d)/lambda) (Theorem 3.2), or the known B of
    Assumption 3.3 (Theorem 3.4): a bound on ||theta_bar|| over every dataset considered."""
    lam, d = _lambda(Lambda), check_int(d, "d")
    if B is not None:
        return check_positive(B, "B (Assumption 3.3)")
    return min(1.0 / math.sqrt(lam), math.sqrt(d) / lam)


def eta(dataset: UserDataset, Lambda, B=None) -> float:
    """eta = lambda sum_j eps_j / (2 sqrt(d) (1 + sqrt(d) B)), B = B(lambda) (Thm 3.2) or the
    Assumption 3.3 constant (Thm 3.4); then eta * Delta_i = eps_i for every record."""
    X, _, eps = check_data(dataset)
    d = X.shape[1]
    b = theta_bound(Lambda, d, B)
    return check_positive(_lambda(Lambda) * float(eps.sum()) / (2.0 * math.sqrt(d) * (1.0 + math.sqrt(d) * b)), "eta")


def sensitivity(dataset: UserDataset, Lambda, B=None) -> np.ndarray:
    """Delta_i = 2 w_i sqrt(d) (sqrt(d) B + 1) / lambda (Theorem A.4), shape (n,): the L2
    sensitivity of theta_bar to replacing record i anywhere in the domain."""
    X, _, eps = check_data(dataset)
    d = X.shape[1]
    b = theta_bound(Lambda, d, B)
    return 2.0 * (eps / eps.sum()) * math.sqrt(d) * (math.sqrt(d) * b + 1.0) / _lambda(Lambda)


def noise_scale(dataset: UserDataset, Lambda, B=None) -> float:
    """1 / eta: the scale of the L2-Laplace noise (density prop. to exp(-||z|| / scale))."""
    return 1.0 / eta(dataset, Lambda, B)


def _solve(X: np.ndarray, y: np.ndarray, w: np.ndarray, lam: float) -> np.ndarray:
    A = (X * w[:, None]).T @ X
    A[np.diag_indices_from(A)] += lam
    return np.linalg.solve(A, X.T @ (w * y))


def statistic(dataset: UserDataset, Lambda) -> np.ndarray:
    """theta_bar = (sum w_i x_i x_i^T + lambda I)^{-1} sum w_i y_i x_i (eq. 2), shape (d,)."""
    X, y, eps = check_data(dataset)
    return _solve(X, y, eps / eps.sum(), _lambda(Lambda))


def mechanism(dataset: UserDataset, rng, size=None, *, Lambda, B=None) -> np.ndarray:
    """Algorithm 1 (PDP-OP): theta_bar + Z, Z ~ exp(-eta ||z||_2); shape (d,) or (size, d).
    B=None: Theorem 3.2; B given: Theorem 3.4 (Assumption 3.3 must hold on every neighbour)."""
    rng, size = check_generator(rng), check_size(size)
    theta = statistic(dataset, Lambda)
    e = eta(dataset, Lambda, B)
    check_noise_scale(1.0 / e, theta, "1/eta (the L2-Laplace scale)")
    z = l2_laplace_noise(e, theta.shape[0], rng, size)
    z += theta
    return z


# ------------------------------------------------------- Assumption 3.3 (Theorem 3.4)
def unregularised_norm(dataset: UserDataset) -> float:
    """||theta_bar_0||, theta_bar_0 = argmin sum w_i (y_i - theta.x_i)^2 (minimum-norm solution)."""
    X, y, eps = check_data(dataset)
    sw = np.sqrt(eps / eps.sum())
    return float(np.linalg.norm(np.linalg.lstsq(X * sw[:, None], y * sw, rcond=None)[0]))


def theorem34_sensitivity(dataset: UserDataset, neighbour: UserDataset, Lambda, B) -> dict:
    """What Theorem 3.4's calibration promises for the record that differs, and what the
    pair realises: {"record", "B", "norm_first", "norm_second", "assumption_holds",
    "declared", "realised"} (declared = Delta_i with B; realised = ||theta_bar(D) - theta_bar(D')||)."""
    changed = RELATION.changed_units(check_dataset(dataset), check_dataset(neighbour, "neighbour"))
    if len(changed) != 1:
        raise ValueError(f"neighbour must differ from dataset in exactly one record, got {sorted(changed)}")
    i = changed.pop()
    B = check_positive(B, "B (Assumption 3.3)")
    n1, n2 = unregularised_norm(dataset), unregularised_norm(neighbour)
    shift = float(np.linalg.norm(statistic(dataset, Lambda) - statistic(neighbour, Lambda)))
    return {
        "record": i,
        "B": B,
        "norm_first": n1,
        "norm_second": n2,
        "assumption_holds": bool(n1 <= B and n2 <= B),
        "declared": float(sensitivity(dataset, Lambda, B)[i]),
        "realised": shift,
    }


# ------------------------------------------------------------------------ baselines
def nonpersonalized_epsilons(dataset: UserDataset) -> np.ndarray:
    """Every eps_i := min_j eps_j: standard DP at the most stringent level (§4)."""
    eps = check_data(dataset)[2]
    return np.full(eps.shape, eps.min())


def nonpersonalized_mechanism(dataset: UserDataset, rng, size=None, *, Lambda) -> np.ndarray:
    """Output perturbation at min eps for every record: PDP-OP on the constant profile
    (uniform weights 1/n, eta = lambda n min eps / (2 sqrt(d)(1 + sqrt(d) B(lambda))))."""
    flat = check_dataset(dataset).with_fields(epsilons=nonpersonalized_epsilons(dataset))
    return mechanism(flat, rng, size, Lambda=Lambda)


def jorgensen_threshold(dataset: UserDataset, threshold="max") -> float:
    """t = max eps ("Jorgensen max") or mean eps ("Jorgensen mean"), or a given t > 0."""
    eps = check_data(dataset)[2]
    if isinstance(threshold, str):
        if threshold not in ("max", "mean"):
            raise ValueError(f"threshold must be 'max', 'mean' or a positive number, got {threshold!r}")
        return float(eps.max() if threshold == "max" else eps.mean())
    return check_positive(threshold, "threshold (t)")


def jorgensen_probabilities(epsilons, t) -> np.ndarray:
    """p_i = min(1, (e^{eps_i} - 1) / (e^t - 1)) (Jorgensen et al. 2015)."""
    e = check_finite_array(epsilons, "epsilons", ndim=(1,))
    if e.size == 0 or np.any(e <= 0):
        raise ValueError("epsilons must be a non-empty array of values > 0")
    t = check_positive(t, "t (threshold)")
    return np.minimum(1.0, np.expm1(e) / math.expm1(t))


def jorgensen_levels(epsilons, t) -> np.ndarray:
    """The amplified level of each record, ln(1 + p_i (e^t - 1)) = min(eps_i, t)."""
    p = jorgensen_probabilities(epsilons, t)
    return np.log1p(p * math.expm1(check_positive(t, "t (threshold)")))


def jorgensen_mechanism(dataset: UserDataset, rng, size=None, *, Lambda, threshold="max") -> np.ndarray:
    """Jorgensen et al. 2015 sampling + non-personalized output perturbation at level t on
    the kept records; one independent sample of records per release. A release that keeps
    no record is theta = 0, noise-free (module docstring). Shape (d,) or (size, d)."""
    rng, size = check_generator(rng), check_size(size)
    X, y, eps = check_data(dataset)
    lam = _lambda(Lambda)
    t = jorgensen_threshold(dataset, threshold)
    p = jorgensen_probabilities(eps, t)
    d = X.shape[1]
    denom = 2.0 * math.sqrt(d) * (1.0 + math.sqrt(d) * theta_bound(lam, d))
    m = 1 if size is None else size
    keep = rng.random((m, eps.size)) < p  # (m, n): one Poisson sample per release
    masks, which = np.unique(keep, axis=0, return_inverse=True)  # the same kept set: one solve
    which = which.reshape(-1)
    theta = np.zeros((masks.shape[0], d))
    e = np.full(masks.shape[0], np.inf)  # inf: no record kept, no noise
    for u, mask in enumerate(masks):
        k = int(mask.sum())
        if k == 0:
            continue  # theta = 0: reads no record
        theta[u] = _solve(X[mask], y[mask], np.full(k, 1.0 / k), lam)
        e[u] = lam * k * t / denom  # eta at level t on k records
        check_noise_scale(1.0 / e[u], theta[u], "1/eta (the L2-Laplace scale)")
    # Z / eta has density prop. to exp(-eta ||z||) when Z has exp(-||z||) (change of variables)
    out = l2_laplace_noise(1.0, d, rng, m) / e[which][:, None]
    out += theta[which]
    return out[0] if size is None else out
