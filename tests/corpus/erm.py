"""Corpus for the ERM algorithms: Amin et al. 2019 Algorithm 1 with CMS11 output perturbation
(``amin2019.erm-output-perturbation``, logistic; ``...-ridge``) and Epasto et al. 2020 Algorithm 2 by
noisy projected gradient descent (``epasto2020.weighted-erm``).

Written from the papers, independently of reference/amin2019_erm.py and epasto2020_erm.py: the
minimiser by Newton's method (logistic) or a linear solve (ridge), L2-Laplace noise as a Gamma(d)
radius times a uniform direction; noisy GD as a plain loop. Amin: keep the first tau records of
each user, w_i = 1 / max(n_tau, n_min) on them, J = sum w_i l_i + (Lambda/2) ||theta||^2,
Delta_2 = (L / Lambda) max(2 tau / (n_min + tau), tau / n_min), L = R = 1 (logistic) or
R (R Y / sqrt(Lambda) + Y) = 1 + 1/sqrt(Lambda) (ridge, R = Y = 1).

Logistic pairs realise at most sigma(R^2 / Lambda) (0.525 at Lambda = 10) of Delta_2, so a noise
bug shows there only when it is larger than that factor: the logistic bugs are large ones.
"""
from __future__ import annotations

import math

import numpy as np

from userdp.properties.adapter import Adapter

from . import CorpusEntry

LOGISTIC, RIDGE, EPASTO = ("amin2019.erm-output-perturbation", "amin2019.erm-output-perturbation-ridge",
                           "epasto2020.weighted-erm")


def _kept(dataset, tau: int) -> np.ndarray:
    seen: dict = {}
    keep = []
    for i, u in enumerate(dataset.user_ids.tolist()):
        seen[u] = seen.get(u, 0) + 1
        if seen[u] <= tau:
            keep.append(i)
    return np.array(keep)


def _data(dataset, loss: str, clip: bool = False):
    X = np.asarray(dataset.values, float)
    X = X[:, None] if X.ndim == 1 else X
    y = np.asarray(dataset.labels, float)
    if clip:
        X = X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
        y = np.clip(y, -1, 1) if loss == "ridge" else np.where(y >= 0, 1.0, -1.0)
    if (np.linalg.norm(X, axis=1) > 1 + 1e-9).any():
        raise ValueError("features must have norm <= 1")
    if loss == "logistic" and not np.all(np.abs(y) == 1):
        raise ValueError("labels must be -1 or +1")
    if loss == "ridge" and (np.abs(y) > 1).any():
        raise ValueError("labels must lie in [-1, 1]")
    return X, y


def _fit(X, y, w, Lambda, loss, half=True):
    """argmin sum w_i l_i(theta) + (Lambda/2) ||theta||^2 (``half``) or Lambda ||theta||^2, by Newton."""
    lam = Lambda if half else 2 * Lambda
    d = X.shape[1]
    if loss == "ridge":             # l = (theta.x - y)^2 / 2 per record (CMS11's squared loss, 1/2 included)
        return np.linalg.solve((X * w[:, None]).T @ X + lam * np.eye(d), X.T @ (w * y))
    theta = np.zeros(d)
    for _ in range(100):
        z = y * (X @ theta)
        s = 1.0 / (1.0 + np.exp(z))                      # sigma(-z)
        g = -(X * (w * y * s)[:, None]).sum(axis=0) + lam * theta
        H = (X * (w * s * (1 - s))[:, None]).T @ X + lam * np.eye(d)
        step = np.linalg.solve(H, g)
        theta -= step
        if np.linalg.norm(step) < 1e-15:
            break
    return theta


def _delta(tau, Lambda, n_min, loss, L=None):
    if L is None:
        L = 1.0 if loss == "logistic" else 1.0 + 1.0 / math.sqrt(Lambda)
    return (L / Lambda) * max(2.0 * tau / (n_min + tau), tau / n_min)


def _l2_noise(scale, d, rng, size):
    k = 1 if size is None else size
    g = rng.standard_normal((k, d))
    out = rng.gamma(d, scale, (k, 1)) * g / np.linalg.norm(g, axis=1, keepdims=True)
    return out[0] if size is None else out


def _check(epsilon, tau, Lambda, n_min):
    if not (epsilon > 0 and Lambda > 0 and tau >= 1 and n_min >= 1):
        raise ValueError("need epsilon > 0, Lambda > 0, tau >= 1, n_min >= 1")


def _amin(dataset, rng, size, loss, *, epsilon, tau, Lambda, n_min, clip=False, noise=1.0, L=None, half=True,
          ntau_scale=False):
    _check(epsilon, tau, Lambda, n_min)
    X, y = _data(dataset, loss, clip)
    keep = _kept(dataset, tau)
    n_tau = keep.size
    w = np.full(n_tau, 1.0 / max(n_tau, n_min))
    theta = _fit(X[keep], y[keep], w, Lambda, loss, half)
    delta = _delta(tau, Lambda, n_tau if ntau_scale else n_min, loss, L)
    return theta + _l2_noise(noise * delta / epsilon, X.shape[1], rng, size)


# ------------------------------------------------------------ Amin, logistic
def logistic_newton(dataset, rng, size=None, *, epsilon, tau, Lambda, n_min):
    """Correct (batched): Newton's method, L2-Laplace as a Gamma radius times a Gaussian direction."""
    return _amin(dataset, rng, size, "logistic", epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min)


def logistic_one_clipping(dataset, rng, *, eps, tau, lam, n_min):
    """Correct (one release per call): names eps and lam; features scaled into the unit ball and labels
    to their sign (policy clip)."""
    return _amin(dataset, rng, None, "logistic", epsilon=eps, tau=tau, Lambda=lam, n_min=n_min, clip=True)


logistic_adapter = Adapter("corpus/erm-logistic-adapter", mechanism=logistic_newton)


def logistic_quarter_noise(dataset, rng, size=None, *, epsilon, tau, Lambda, n_min):
    """BUG (noise scale): the noise for L = R/4 (a bound on the logistic gradient near theta = 0 taken for
    its global bound): 4 x less noise; true loss 4 x 0.49 eps = 1.95 eps on the registry's pairs."""
    return _amin(dataset, rng, size, "logistic", epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min, noise=0.25)


def logistic_data_dependent_ntau(dataset, rng, size=None, *, epsilon, tau, Lambda, n_min):
    """BUG (sensitivity): Delta_2 from the dataset's own n_tau instead of the public n_min (the literal
    reading the reference keeps as a planted bug): the noise scale moves with the data."""
    return _amin(dataset, rng, size, "logistic", epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min,
                 ntau_scale=True)


def logistic_no_half(dataset, rng, size=None, *, epsilon, tau, Lambda, n_min):
    """BUG (normalisation): the regulariser Lambda ||theta||^2 without the 1/2 (the noise still for
    Lambda): private (a stronger regulariser), a biased minimiser."""
    return _amin(dataset, rng, size, "logistic", epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min, half=False)


def logistic_noise_once_per_call(dataset, rng, size=None, *, epsilon, tau, Lambda, n_min):
    """BUG (independence): one noise vector per call."""
    one = _amin(dataset, rng, None, "logistic", epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min)
    return np.tile(one, (1 if size is None else size, 1))


# ------------------------------------------------------------ Amin, ridge
def ridge_solve(dataset, rng, size=None, *, epsilon, tau, Lambda, n_min):
    """Correct (batched): the normal equations."""
    return _amin(dataset, rng, size, "ridge", epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min)


def ridge_one_trusting(dataset, rng, *, epsilon, tau, Lambda, n_min):
    """Correct under its documented precondition (||x|| <= 1, |y| <= 1: declared --inputs trust), one
    release per call, the domain not checked."""
    _check(epsilon, tau, Lambda, n_min)
    X = np.asarray(dataset.values, float)
    X = X[:, None] if X.ndim == 1 else X
    keep = _kept(dataset, tau)
    w = np.full(keep.size, 1.0 / max(keep.size, n_min))
    theta = _fit(X[keep], np.asarray(dataset.labels, float)[keep], w, Lambda, "ridge")
    return theta + _l2_noise(_delta(tau, Lambda, n_min, "ridge") / epsilon, X.shape[1], rng, None)


ridge_adapter = Adapter("corpus/erm-ridge-adapter", mechanism=ridge_solve)


def ridge_seven_percent_less_noise(dataset, rng, size=None, *, epsilon, tau, Lambda, n_min):
    """BUG (noise scale, small): 0.93 x the noise: true loss 0.99 / 0.93 = 1.065 eps on the lambda = 10^4 pair."""
    return _amin(dataset, rng, size, "ridge", epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min, noise=0.93)


def ridge_lipschitz_one(dataset, rng, size=None, *, epsilon, tau, Lambda, n_min):
    """BUG (parameter regime): L = 1 (the logistic constant) for the ridge loss: right to 1% at lambda =
    10^4 (L = 1.01), 2.4 x too little noise at lambda = 0.5."""
    return _amin(dataset, rng, size, "ridge", epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min, L=1.0)


def ridge_all_records(dataset, rng, size=None, *, epsilon, tau, Lambda, n_min):
    """BUG (sensitivity): every record kept (tau ignored), the noise still for tau: a user of s records
    moves theta-hat by up to s / tau times Delta_2."""
    return _amin(dataset, rng, size, "ridge", epsilon=epsilon, tau=10**9, Lambda=Lambda, n_min=n_min,
                 noise=_delta(tau, Lambda, n_min, "ridge") / _delta(10**9, Lambda, n_min, "ridge"))


def ridge_noise_once_per_call(dataset, rng, size=None, *, epsilon, tau, Lambda, n_min):
    """BUG (independence): one noise vector per call."""
    one = _amin(dataset, rng, None, "ridge", epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min)
    return np.tile(one, (1 if size is None else size, 1))


# ------------------------------------------------------------ Epasto weighted ERM (noisy GD)
def _lemma3(dataset, epsilon, B=1.0, sigma=0.5):
    """Lemma 3's weights at Claim 1's h* (for B = 1, sigma = 1/2), h* by a fine grid then golden search."""
    counts: dict = {}
    for u in dataset.user_ids.tolist():
        counts[u] = counts.get(u, 0) + 1
    s = np.array(sorted(counts.values()), float)

    def v(h):
        m = np.minimum(h, s)
        nh = m.sum()
        return sigma ** 2 * np.sum(m * m / s) / nh ** 2 + 2 * (B * h / (epsilon * nh)) ** 2
    grid = np.unique(np.r_[s, np.linspace(s.min(), s.max(), 2001)])
    m = np.minimum(grid[:, None], s[None, :])                   # (grid, m), every candidate at once
    nh = m.sum(axis=1)
    vals = sigma ** 2 * (m * m / s).sum(axis=1) / nh ** 2 + 2 * (B * grid / (epsilon * nh)) ** 2
    h = grid[int(np.argmin(vals))]
    lo, hi = max(s.min(), h - (s.max() - s.min()) / 1000), min(s.max(), h + (s.max() - s.min()) / 1000)
    for _ in range(200):                                   # golden-section on [lo, hi]
        a, b = hi - 0.618 * (hi - lo), lo + 0.618 * (hi - lo)
        if v(a) <= v(b):
            hi = b
        else:
            lo = a
    h = (lo + hi) / 2 if v((lo + hi) / 2) <= v(h) else h
    nh = np.minimum(h, s).sum()
    return np.array([min(h, counts[u]) / (counts[u] * nh) for u in dataset.user_ids.tolist()])


def _sigma(epsilon, delta, T, Delta):
    """z Delta_2 with z the smallest multiplier whose T-fold Gaussian RDP converts to (eps, delta)
    (CKS20's conversion, orders 1.1..64), by bisection."""
    orders = np.r_[np.linspace(1.1, 10.9, 99), np.arange(11, 64)]

    def eps_of(z):
        r = T * orders / (2 * z * z)
        return float(np.min(r + np.log1p(-1 / orders) - np.log(delta * orders) / (orders - 1)))
    lo, hi = 1e-3, 1e3
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if eps_of(mid) > epsilon else (lo, mid)
    return hi * Delta


def _gd(dataset, rng, size, *, epsilon, delta, T, weights=None, sigma_factor=1.0, steps_T=None, clip=False):
    if not (epsilon > 0 and 0 < delta < 1 and T >= 1):
        raise ValueError("need epsilon > 0, 0 < delta < 1, T >= 1")
    X, y = _data(dataset, "logistic", clip)
    c = _lemma3(dataset, epsilon) if weights is None else weights(dataset)
    W: dict = {}
    for u, ci in zip(dataset.user_ids.tolist(), c.tolist()):
        W[u] = W.get(u, 0.0) + ci
    Delta = 2 * 1.0 * max(W.values())                   # 2 L max_l sum c_i, L = R = 1
    sigma = sigma_factor * _sigma(epsilon, delta, T if steps_T is None else steps_T, Delta)
    d = X.shape[1]
    eta = 1.0 / (math.sqrt(1.0 + d * sigma ** 2) * math.sqrt(T))
    k = 1 if size is None else size
    theta = np.zeros((k, d))
    total = np.zeros((k, d))
    for _ in range(T):
        z = (theta @ X.T) * y                                         # (k, n)
        g = -((c * y / (1 + np.exp(z)))[:, :, None] * X[None]).sum(axis=1)
        theta = theta - eta * (g + sigma * rng.standard_normal((k, d)))
        theta /= np.maximum(1.0, np.linalg.norm(theta, axis=1, keepdims=True))
        total += theta
    out = total / T
    return out[0] if size is None else out


def gd_loop(dataset, rng, size=None, *, epsilon, delta, T):
    """Correct (batched): noisy projected GD as a plain loop, its own RDP bisection and h* search."""
    return _gd(dataset, rng, size, epsilon=epsilon, delta=delta, T=T)


def gd_one_clipping(dataset, rng, *, epsilon, delta, T):
    """Correct (one release per call): features scaled into the unit ball, labels to their sign (clip)."""
    return _gd(dataset, rng, None, epsilon=epsilon, delta=delta, T=T, clip=True)


gd_adapter = Adapter("corpus/erm-gd-adapter", mechanism=gd_loop)


def gd_one_step_accounting(dataset, rng, size=None, *, epsilon, delta, T):
    """BUG (accounting): sigma calibrated for ONE step and used for T: the release is sqrt(T) x the
    claimed mu (2 x at T = 4); the averaged iterates and the logistic gradient realise about half of
    the worst case on the registry's pairs, so the audit cannot reach the claim; the spread shows."""
    return _gd(dataset, rng, size, epsilon=epsilon, delta=delta, T=T, steps_T=1)


def gd_uniform_weights(dataset, rng, size=None, *, epsilon, delta, T):
    """BUG (optimality): uniform record weights 1/n instead of Lemma 3's: private (Delta from them), not
    Algorithm 2's loss."""
    return _gd(dataset, rng, size, epsilon=epsilon, delta=delta, T=T,
               weights=lambda D: np.full(D.n, 1.0 / D.n))


def gd_sigma_halved(dataset, rng, size=None, *, epsilon, delta, T):
    """BUG (noise scale): half the noise: mu doubles."""
    return _gd(dataset, rng, size, epsilon=epsilon, delta=delta, T=T, sigma_factor=0.5)


def gd_once_per_call(dataset, rng, size=None, *, epsilon, delta, T):
    """BUG (independence): one run per call, repeated."""
    one = _gd(dataset, rng, None, epsilon=epsilon, delta=delta, T=T)
    return np.tile(one, (1 if size is None else size, 1))


M = "corpus.erm"
CORPUS = [
    CorpusEntry("erm/logistic-newton", LOGISTIC, f"{M}:logistic_newton", "none", "pass",
                "none: Newton's method, Gamma radius x Gaussian direction", "correct alternative"),
    CorpusEntry("erm/logistic-one-clipping", LOGISTIC, f"{M}:logistic_one_clipping", "none", "pass",
                "none: one release per call, names eps and lam, data projected onto the domain (policy clip)",
                "correct alternative", param_map=(("epsilon", "eps"), ("Lambda", "lam"))),
    CorpusEntry("erm/logistic-adapter", LOGISTIC, f"{M}:logistic_adapter", "none", "pass",
                "none: an Adapter holding the mechanism", "correct alternative", exposes="stages"),
    CorpusEntry("erm/logistic-quarter-noise", LOGISTIC, f"{M}:logistic_quarter_noise", "noise scale",
                "privacy violation", "noise for L = R/4: true loss ~1.95 eps on the registry's pairs", "planted"),
    CorpusEntry("erm/logistic-data-dependent-ntau", LOGISTIC, f"{M}:logistic_data_dependent_ntau", "sensitivity",
                "privacy violation", "Delta_2 from the data's n_tau: the noise scale moves with the data "
                "(unbounded loss)", "planted"),
    CorpusEntry("erm/logistic-no-half", LOGISTIC, f"{M}:logistic_no_half", "normalisation",
                "deviation from reference", "Lambda ||theta||^2 without the 1/2: private, another minimiser",
                "planted"),
    CorpusEntry("erm/logistic-noise-once-per-call", LOGISTIC, f"{M}:logistic_noise_once_per_call", "independence",
                "not independent", "one noise vector per call", "planted"),
    CorpusEntry("erm/ridge-solve", RIDGE, f"{M}:ridge_solve", "none", "pass", "none: the normal equations",
                "correct alternative"),
    CorpusEntry("erm/ridge-one-trusting", RIDGE, f"{M}:ridge_one_trusting", "none", "pass",
                "none: one release per call, the domain a documented precondition (declared --inputs trust)",
                "correct alternative", inputs="trust"),
    CorpusEntry("erm/ridge-adapter", RIDGE, f"{M}:ridge_adapter", "none", "pass",
                "none: an Adapter holding the mechanism", "correct alternative", exposes="stages"),
    CorpusEntry("erm/ridge-seven-percent-less-noise", RIDGE, f"{M}:ridge_seven_percent_less_noise", "noise scale",
                "privacy violation", "0.93 x the noise: true loss 1.065 eps on the pair at lambda = 10^4", "planted",
                small=True),
    CorpusEntry("erm/ridge-lipschitz-one", RIDGE, f"{M}:ridge_lipschitz_one", "parameter regime",
                "deviation from reference", "L = 1 for the ridge loss: 1% too little noise at lambda = 10^4, 2.4 x "
                "at lambda = 0.5, where the case pairs realise only 0.14 of Delta_2: graded a deviation", "planted"),
    CorpusEntry("erm/ridge-all-records", RIDGE, f"{M}:ridge_all_records", "sensitivity", "privacy violation",
                "tau ignored, the noise for tau: adding a user of tau + 2 records moves theta-hat by ~2 x Delta_2 "
                "on the registry's pair", "planted"),
    CorpusEntry("erm/ridge-noise-once-per-call", RIDGE, f"{M}:ridge_noise_once_per_call", "independence",
                "not independent", "one noise vector per call", "planted"),
    CorpusEntry("erm/gd-loop", EPASTO, f"{M}:gd_loop", "none", "pass",
                "none: a plain loop, its own RDP bisection and h* search", "correct alternative"),
    CorpusEntry("erm/gd-one-clipping", EPASTO, f"{M}:gd_one_clipping", "none", "pass",
                "none: one release per call, data projected onto the domain (policy clip)", "correct alternative"),
    CorpusEntry("erm/gd-adapter", EPASTO, f"{M}:gd_adapter", "none", "pass", "none: an Adapter holding the mechanism",
                "correct alternative", exposes="stages"),
    CorpusEntry("erm/gd-one-step-accounting", EPASTO, f"{M}:gd_one_step_accounting", "accounting",
                "deviation from reference", "sigma for one step used for T = 4: 2 x the claimed mu; the audit "
                "cannot reach the claim on these pairs, the release distribution differs", "planted"),
    CorpusEntry("erm/gd-uniform-weights", EPASTO, f"{M}:gd_uniform_weights", "optimality",
                "deviation from reference", "uniform weights: private, not Lemma 3's loss", "planted"),
    CorpusEntry("erm/gd-sigma-halved", EPASTO, f"{M}:gd_sigma_halved", "noise scale", "deviation from reference",
                "half the noise: mu doubles; the pairs realise too little of Delta_2 for the audit to reach the "
                "claim, the distribution differs", "planted"),
    CorpusEntry("erm/gd-once-per-call", EPASTO, f"{M}:gd_once_per_call", "independence", "not independent",
                "one run per call", "planted"),
]
