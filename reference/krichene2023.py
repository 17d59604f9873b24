"""W. Krichene, P. Jain, S. Song, M. Sundararajan, A. Thakurta, L. Zhang, "Multi-Task
Differential Privacy Under Distribution Skew", ICML 2023 (arXiv:2302.07975v1): Algorithm 1
(task-weighted sufficient statistics perturbation, SSP) and Algorithm 2 (task-weighted noisy
gradient descent) with the step sizes and T of Theorem 3.12. The weights, private counts and
accounting are in ``krichene2023_weights``; Algorithm 3 (DPALS-style alternating
minimisation) in ``krichene2023_dpals``.

Data: a ``UserDataset`` with one record per pair (i, j) of the graph Omega: ``task_ids`` = i
in [0, m), ``user_ids`` = j, ``values`` = x_ij (N, d) (or (N,) for d = 1), ``labels`` = y_ij.
Weights w: one per record (``krichene2023_weights``). Relation: ``ADD_REMOVE_USER`` (§2.2).
Claim: (alpha, alpha beta)-RDP with beta = max_j sum_{i in Omega^j} w_ij^2 (Theorems 3.3,
3.11), i.e. the exact mu-GDP with mu = sqrt(2 beta) (``krichene2023_weights.claim``).

Algorithm 1 (SSP), every task at once, no loop over tasks:

    x_ij <- clip(x_ij, Gamma_x), y_ij <- clip(y_ij, Gamma_x Gamma_*)              (line 2)
    A-hat_i = sum_{j in Omega_i} w_ij x_ij x_ij^T + Gamma_x^2 Xi_i                 (line 5, without lambda)
    b-hat_i = sum_{j in Omega_i} w_ij y_ij x_ij + Gamma_x^2 Gamma_* xi_i           (line 6)
    theta-hat_i = (Pi_PSD(A-hat_i) + lambda_i I)^dagger b-hat_i                    (line 7, §2.1's A^dagger; ``solve``)

with Xi_i symmetric, its upper triangle (diagonal included) i.i.d. N(0, 1), and xi_i ~ N(0, I_d).

The regulariser: a decision. Line 5 puts w_ij lambda I INSIDE the data-dependent sum, but
the proof of Theorem 3.3 (Appendix A.1) bounds ||A-bar - A-bar'||_F^2 by sum_i ||w_ij x x^T||_F^2:
removing user j also removes sum_i w_ij lambda I, whose Frobenius norm w_ij lambda sqrt(d)
the proof does not count (at x = 0 the whole change is the regulariser). We add the
regulariser AFTER the noise, as post-processing of the released (A-hat, b-hat), with a
lambda_i that must be PUBLIC: a constant lambda, or lambda omega_i n_i computed from public
(or already privately released) counts, which is the paper's sum_j w_ij lambda when no user is
clipped. The authors' code does the same (regulariser outside the noisy statistic). The other
reading is a planted bug (tests/papers/krichene2023/planted.py) caught by the sensitivity property.

Why this is private (Theorem 3.3, Appendix A.1, re-derived). Let user j be removed; the
weights of the other users do not change (they read public values only, see
``krichene2023_weights``). A-hat is released through its upper triangles
u(A) = (A_kl)_{k <= l} (the lower ones are copies), with i.i.d. N(0, Gamma_x^4) noise on every
entry: a Gaussian mechanism on the vector u(A-bar). Its change is u(sum_{i in Omega^j} w_ij x x^T):

    ||u(w x x^T)||^2 = w^2 sum_{k <= l} x_k^2 x_l^2 = w^2 (||x||^4 + sum_k x_k^4) / 2
                    <= w^2 ||x||^4 = ||w x x^T||_F^2            (sum_k x_k^4 <= ||x||^4),

so the stacked change is <= sqrt(sum_i w_ij^2) Gamma_x^2 <= sqrt(beta) Gamma_x^2: the paper's
Frobenius bound is valid for symmetric noise (the off-diagonal entries are counted twice in
||.||_F but released once, which only helps), and it is attained exactly when x is along one
axis (sum_k x_k^4 = ||x||^4). Likewise ||b-bar - b-bar'|| <= sqrt(beta) Gamma_x^2 Gamma_*
(|y| <= Gamma_x Gamma_*, ||x|| <= Gamma_x after line 2). Each release is a Gaussian mechanism
with sensitivity / noise <= sqrt(beta): (alpha, alpha beta / 2)-RDP each [Mironov 2017,
Cor. 3], (alpha, alpha beta) together [Prop. 1]; as a pair, sqrt(2 beta)-GDP [DRS22, Thm 2.7:
the two blocks form one Gaussian vector with sensitivity sqrt(2 beta) in noise units]. The
regulariser and the PSD projection and pseudo-inverse are post-processing. Lines relied on:
``clip_data`` (line 2), ``noise_scale``, ``symmetric_noise``, and the weights' budget.

Algorithm 2 (noisy GD), every task at once: for t = 1..T,

    g_i^(t) = sum_{j in Omega_i} w_ij clip(grad l(theta_i^(t-1); x_ij, y_ij), Gamma)   (line 5, read below)
    theta_i^(t) = Pi_C[theta_i^(t-1) - eta_i^(t) (g_i^(t) + Gamma sqrt(T/2) xi_i^(t))]  (line 6)

with l(theta; x, y) = (theta.x - y)^2 / 2 + lambda ||theta||^2 / 2 (lambda-strongly convex,
Assumption 3.10 when lambda > 0) and C the ball of radius ``radius``.

Line 5 as printed clips the weighted SUM to Gamma. That does not give the sensitivity that
the proof of Theorem 3.11 uses (||w_ij grad l|| <= w_ij Gamma needs each gradient bounded by
Gamma: Assumptions 3.9/3.10), and it would cap a task's whole gradient at Gamma, against the
utility proof (E||g_i||^2 <= Gamma^2 omega_i^2 n_i^2, Appendix A.4). We clip EACH record's
gradient to Gamma (so the Lipschitz bound holds on any data, not only under the assumption)
and do not clip the sum. Clipping only the sum is a planted bug.

Why this is private (Theorem 3.11, Appendix A.3). Removing user j changes the stacked
gradient by sum_{i in Omega^j} w_ij clip(.) in norm <= sqrt(sum_i w_ij^2) Gamma <= sqrt(beta) Gamma;
the noise has standard deviation Gamma sqrt(T/2), so one step is (alpha, alpha beta / T)-RDP
(sqrt(2 beta / T)-GDP), and T adaptive steps compose to (alpha, alpha beta) (sqrt(2 beta)-GDP).

Theorem 3.12's schedules (``theorem312_schedule``):
(a) Lipschitz: T = (2/d) sum n_i^2 / sum 1/omega_i^2, eta_i^(t) = ||C|| / (Gamma sqrt(omega_i^2 n_i^2 + T d/2) sqrt(t));
(b) strongly convex: T = (2/d) |Omega| / sum 1/(omega_i^2 n_i), eta_i^(t) = 1 / (omega_i n_i lambda t).
The statement of (b) prints eta = 1/(omega_i^2 n_i lambda t); its proof (Appendix A.4) applies
Lemma A.3 to f = omega_i L_i, whose strong-convexity constant is omega_i n_i lambda, giving
1/(omega_i n_i lambda t): we follow the proof. T is rounded up to an integer >= 1; any T is
private (the noise grows with sqrt(T)); the schedules read only public n_i and omega_i.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ._checks import (
    check_finite_array,
    check_generator,
    check_int,
    check_noise_scale,
    check_nonnegative,
    check_positive,
    check_size,
)
from .data import UserDataset, check_dataset
from .krichene2023_weights import check_counts, graph
from .mechanisms import clip_l2, safe_norms
from .neighbours import ADD_REMOVE_USER

__all__ = [
    "RELATION",
    "check_data",
    "budget",
    "clip_data",
    "statistic",
    "sensitivity",
    "noise_scale",
    "symmetric_noise",
    "ssp_release",
    "solve",
    "ssp_mechanism",
    "gd_noise_scale",
    "weighted_gradient",
    "theorem312_schedule",
    "gd_mechanism",
]

RELATION = ADD_REMOVE_USER
_MAX_ELEMENTS = 10**9  # noise values drawn by one call
_CHUNK = 2**22  # outer-product entries formed at once in ``statistic`` (32 MB)


# ------------------------------------------------------------------------------ data
def check_data(dataset: UserDataset, m) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x (N, d), y (N,), task (N,), user position (N,)) of a multi-task regression dataset."""
    D = check_dataset(dataset)
    t, u, _ = graph(D, m)
    if D.labels is None:
        raise ValueError("dataset must have labels y_ij (multi-task regression)")
    return D.values.reshape(D.n, -1), np.asarray(D.labels, dtype=float), t, u


def _weights(w, N: int) -> np.ndarray:
    w = check_finite_array(w, "w", ndim=(1,))
    if w.shape != (N,):
        raise ValueError(f"w must hold one weight per record, shape ({N},), got {w.shape}")
    if np.any(w < 0):
        i = int(np.argmax(w < 0))
        raise ValueError(f"w must be >= 0; w[{i}] = {w[i]!r}")
    return w


def budget(dataset: UserDataset, w, m) -> float:
    """beta = max_j sum_{i in Omega^j} w_ij^2 (Theorem 3.3): the RDP budget the weights spend."""
    _, _, _, u = check_data(dataset, m)
    w = _weights(w, u.size)
    return float(np.bincount(u, weights=w * w).max())


def _gammas(Gamma_x, Gamma_star) -> tuple[float, float]:
    return check_positive(Gamma_x, "Gamma_x"), check_positive(Gamma_star, "Gamma_star")


def clip_data(x, y, Gamma_x, Gamma_star) -> tuple[np.ndarray, np.ndarray]:
    """Line 2: x <- x min(1, Gamma_x / ||x||), y <- clip(y, Gamma_x Gamma_*) (the algorithm's own,
    visible clipping; Assumption 3.6's bounds hold after it on any data)."""
    gx, gs = _gammas(Gamma_x, Gamma_star)
    x = clip_l2(check_finite_array(x, "x", ndim=(2,)), gx)
    y = check_finite_array(y, "y", ndim=(1,))
    return x, np.clip(y, -gx * gs, gx * gs)


def _task_matrix(t: np.ndarray, w: np.ndarray, m: int) -> sp.csr_matrix:
    """S (m, N) with S[t_r, r] = w_r: S @ v sums w_r v_r within each task."""
    return sp.csr_matrix((w, (t, np.arange(t.size))), shape=(m, t.size))


# ------------------------------------------------------------------------------ Algorithm 1
def statistic(dataset: UserDataset, w, *, m, Gamma_x, Gamma_star) -> tuple[np.ndarray, np.ndarray]:
    """Noise-free (A-bar (m, d, d), b-bar (m, d)): A-bar_i = sum_j w_ij x x^T, b-bar_i = sum_j w_ij y x
    on the clipped data (lines 2, 5, 6; no regulariser: it is post-processing, module docstring)."""
    x, y, t, _ = check_data(dataset, m)
    w = _weights(w, t.size)
    x, y = clip_data(x, y, Gamma_x, Gamma_star)
    d = x.shape[1]
    A = np.zeros((m, d * d))
    chunk = max(1, _CHUNK // (d * d))  # records per chunk: bounded memory
    for s in range(0, t.size, chunk):  # a loop over record chunks, not tasks
        sl = slice(s, s + chunk)
        outer = (x[sl, :, None] * x[sl, None, :]).reshape(-1, d * d)  # (chunk, d*d)
        A += _task_matrix(t[sl], w[sl], m) @ outer  # line 5: sum_j w_ij x x^T
    b = np.asarray(_task_matrix(t, w, m) @ (y[:, None] * x))  # line 6: sum_j w_ij y x
    return A.reshape(m, d, d), b


def sensitivity(beta, Gamma_x, Gamma_star) -> tuple[float, float]:
    """(sqrt(beta) Gamma_x^2, sqrt(beta) Gamma_x^2 Gamma_*): the L2 sensitivity of the stacked A
    (Frobenius) and b to removing one user with budget <= beta (Appendix A.1)."""
    beta = check_positive(beta, "beta")
    gx, gs = _gammas(Gamma_x, Gamma_star)
    return math.sqrt(beta) * gx * gx, math.sqrt(beta) * gx * gx * gs


def noise_scale(Gamma_x, Gamma_star) -> tuple[float, float]:
    """(Gamma_x^2, Gamma_x^2 Gamma_*): the standard deviations of Xi_i's entries and of xi_i (lines 5-6)."""
    gx, gs = _gammas(Gamma_x, Gamma_star)
    return gx * gx, gx * gx * gs


def symmetric_noise(rng, shape, d) -> np.ndarray:
    """Xi ~ N^{d x d} (§2.1): symmetric, upper triangle (diagonal included) i.i.d. N(0, 1);
    shape (*shape, d, d)."""
    rng = check_generator(rng)
    d = check_int(d, "d")
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"shape must be a tuple of ints (the leading axes), got {shape!r}")
    shape = tuple(check_int(s, "shape", lo=1) for s in shape)
    if math.prod(shape) * d * d > _MAX_ELEMENTS:
        raise ValueError(
            f"prod(shape) * d^2 must be <= {_MAX_ELEMENTS:g} (one call's noise), got shape {shape}, d = {d}"
        )
    Z = rng.standard_normal((*shape, d, d))
    upper = np.triu(Z)
    return upper + np.swapaxes(np.triu(Z, 1), -1, -2)


def ssp_release(dataset: UserDataset, w, rng, size=None, *, m, Gamma_x, Gamma_star) -> tuple[np.ndarray, np.ndarray]:
    """The released noisy statistics (A-hat, b-hat): shapes (m, d, d), (m, d), or with a leading
    ``size`` axis. Everything the algorithm outputs is post-processing of this (module docstring)."""
    rng, size = check_generator(rng), check_size(size)
    A, b = statistic(dataset, w, m=m, Gamma_x=Gamma_x, Gamma_star=Gamma_star)
    sA, sb = noise_scale(Gamma_x, Gamma_star)
    check_noise_scale(sA, A, "Gamma_x^2 (the A noise)")
    check_noise_scale(sb, b, "Gamma_x^2 Gamma_star (the b noise)")
    reps = 1 if size is None else size
    d = b.shape[1]
    if reps * m * d * (d + 1) > _MAX_ELEMENTS:
        raise ValueError(f"size * m * d (d + 1) must be <= {_MAX_ELEMENTS:g} (one call's noise), got size={size!r}")
    A_hat = A + sA * symmetric_noise(rng, (reps, m), d)  # line 5
    b_hat = b + sb * rng.standard_normal((reps, m, d))  # line 6
    return (A_hat[0], b_hat[0]) if size is None else (A_hat, b_hat)


def solve(A_hat, b_hat, Lambda) -> np.ndarray:
    """Line 7 with the regulariser after the noise: theta_i = (Pi_PSD(A-hat_i) + lambda_i I)^dagger b-hat_i,
    batched over any leading axes. ``Lambda``: a public lambda >= 0, or (m,) public lambda_i.

    The order is a decision (post-processing either way, so privacy is unaffected): project
    the noisy A-hat_i onto the PSD cone FIRST, then add lambda_i I, so that every eigenvalue is
    >= lambda_i and the solve is as well conditioned as the regularised problem. Projecting
    Pi_PSD(A-hat_i + lambda_i I) instead lets the noise push an eigenvalue of A-hat_i + lambda_i I
    to just above 0, where the pseudo-inverse explodes (one release in eight at eps = 2 in the
    head-tail reproduction, measured before this change). With lambda = 0 both are the
    pseudo-inverse of the PSD projection (§2.1's A^dagger)."""
    A = check_finite_array(A_hat, "A_hat")
    b = check_finite_array(b_hat, "b_hat")
    if A.ndim < 3 or A.shape[-1] != A.shape[-2] or b.shape != A.shape[:-1]:
        raise ValueError(f"A_hat must be (..., m, d, d) and b_hat (..., m, d), got {A.shape} and {b.shape}")
    lam = check_finite_array(Lambda, "Lambda", ndim=(0, 1))
    if np.any(lam < 0) or (lam.ndim == 1 and lam.shape != (A.shape[-3],)):
        raise ValueError(f"Lambda must be >= 0, a scalar or (m,) public values, got {lam!r:.60}")
    d = A.shape[-1]
    vals, vecs = np.linalg.eigh(A)  # symmetric: (..., d), (..., d, d)
    vals = np.maximum(vals, 0.0) + (lam[..., None] if lam.ndim else lam)  # Pi_PSD, then + lambda_i
    tol = d * np.finfo(float).eps * np.max(np.abs(vals), axis=-1, keepdims=True)
    inv = np.where(vals > tol, 1.0 / np.where(vals > tol, vals, 1.0), 0.0)  # pseudo-inverse
    coef = np.einsum("...kl,...k->...l", vecs, b) * inv  # V^T b / lambda_+
    return np.einsum("...kl,...l->...k", vecs, coef)


def ssp_mechanism(dataset: UserDataset, w, rng, size=None, *, m, Gamma_x, Gamma_star, Lambda) -> np.ndarray:
    """Algorithm 1: theta-hat, shape (m, d) or (size, m, d)."""
    A_hat, b_hat = ssp_release(dataset, w, rng, size, m=m, Gamma_x=Gamma_x, Gamma_star=Gamma_star)
    return solve(A_hat, b_hat, Lambda)


# ------------------------------------------------------------------------------ Algorithm 2
def gd_noise_scale(Gamma, T) -> float:
    """Line 6: the gradient noise standard deviation Gamma sqrt(T / 2)."""
    return check_positive(Gamma, "Gamma") * math.sqrt(check_int(T, "T (steps)") / 2.0)


def weighted_gradient(dataset: UserDataset, w, theta, *, m, Gamma, Lambda) -> np.ndarray:
    """g_i = sum_{j in Omega_i} w_ij clip(grad l(theta_i; x_ij, y_ij), Gamma) (line 5 as read in the
    module docstring), grad l = (theta.x - y) x + lambda theta; theta (m, d) or (s, m, d), same shape out."""
    x, y, t, _ = check_data(dataset, m)
    w = _weights(w, t.size)
    G = check_positive(Gamma, "Gamma")
    lam = check_nonnegative(Lambda, "Lambda")
    th = check_finite_array(theta, "theta", ndim=(2, 3))
    single = th.ndim == 2
    th = th[None] if single else th
    d = x.shape[1]
    if th.shape[1:] != (m, d):
        raise ValueError(f"theta must be (m, d) = ({m}, {d}) or (s, m, d), got {np.shape(theta)}")
    s = th.shape[0]
    at = th[:, t, :]  # (s, N, d): theta_{task of record}
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):  # overflow handled below
        resid = np.einsum("snd,nd->sn", at, x) - y  # theta.x - y
        g = resid[:, :, None] * x[None] + lam * at  # (s, N, d)
        norms = safe_norms(np.where(np.isfinite(g), g, 0.0), keepdims=True)  # overflowed rows: redone below
        g *= G / np.maximum(norms, G)  # clip each record's gradient to Gamma
    far = ~np.all(np.isfinite(g), axis=-1)  # (s, N): the gradient overflowed (records near the float max)
    if far.any():
        si, ni = np.nonzero(far)
        g[si, ni] = _clipped_far_gradients(at[si, ni], x[ni], y[ni], lam, G)
    S = _task_matrix(t, w, m)
    out = np.asarray(S @ np.moveaxis(g, 1, 0).reshape(t.size, s * d)).reshape(m, s, d)
    out = np.moveaxis(out, 1, 0)
    return out[0] if single else out


def _clipped_far_gradients(th: np.ndarray, x: np.ndarray, y: np.ndarray, lam: float, G: float) -> np.ndarray:
    """clip((theta.x - y) x + lambda theta, Gamma) for records whose gradient overflows, (k, d).

    Each record is scaled by 2^-p (exact), 2^p > max(|x|, |y|): h = (theta.x' - y') x' + lambda theta 4^-p
    is finite and the gradient is 4^p h, so its clip is h min(4^p, Gamma / ||h||), the comparison
    made on logarithms (4^p may overflow). Why this is private: the clipped gradient is a function
    of the record and the public iterate alone, of norm <= Gamma, as for every other record, so
    Theorem 3.3's per-user bound holds unchanged; the ordinary records never come here (their
    gradients are finite), so their releases are unchanged to the bit."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        top = np.maximum(np.max(np.abs(x), axis=1), np.abs(y))  # (k,) > 0: the gradient overflowed
        p = np.frexp(top)[1]  # top < 2^p
        xs, ys = np.ldexp(x, -p[:, None]), np.ldexp(y, -p)
        h = (np.einsum("kd,kd->k", th, xs) - ys)[:, None] * xs + lam * np.ldexp(th, -2 * p[:, None])
        hn = safe_norms(h)  # (k,)
        clipped = np.log2(np.where(hn > 0, hn, 1.0)) + 2.0 * p >= math.log2(G)
        factor = np.where(clipped, G / np.where(hn > 0, hn, 1.0), np.ldexp(1.0, np.minimum(2 * p, 1023)))
        out = h * factor[:, None]
    return np.where((hn > 0)[:, None], out, 0.0)


def theorem312_schedule(n_counts, omega, d, *, case, Gamma, radius=None, Lambda=None, T=None):
    """(T, eta (T, m)) of Theorem 3.12: case "a" (Lipschitz, ||C|| = 2 radius) or "b" (strongly
    convex, lambda > 0; eta from the proof, module docstring). A given T overrides the theorem's."""
    n = check_counts(n_counts, np.size(n_counts))
    om = check_finite_array(omega, "omega", ndim=(1,))
    if om.shape != n.shape or np.any(om <= 0):
        raise ValueError(f"omega must be task weights > 0 of the shape of n_counts ({n.size},), got shape {om.shape}")
    d = check_int(d, "d")
    G = check_positive(Gamma, "Gamma")
    if case == "a":
        diam = 2.0 * check_positive(radius, "radius")
        T_thm = 2.0 / d * math.fsum(n**2) / math.fsum(om**-2.0)  # Theorem 3.12 (a)
    elif case == "b":
        lam = check_positive(Lambda, "Lambda")
        T_thm = 2.0 / d * math.fsum(n) / math.fsum(1.0 / (om**2 * n))  # Theorem 3.12 (b), |Omega| = sum n_i
    else:
        raise ValueError(f"case must be 'a' (Assumption 3.9) or 'b' (Assumption 3.10), got {case!r}")
    T = max(1, math.ceil(T_thm)) if T is None else check_int(T, "T (steps)")
    t = np.arange(1, T + 1, dtype=float)[:, None]  # (T, 1)
    if case == "a":
        eta = diam / (G * np.sqrt(om**2 * n**2 + T * d / 2.0)) / np.sqrt(t)  # Theorem 3.12 (a)
    else:
        eta = 1.0 / (om * n * lam * t)  # Appendix A.4 (b)
    return T, eta


def gd_mechanism(dataset: UserDataset, w, rng, size=None, *, m, Gamma, Lambda, eta, radius, theta0=None) -> np.ndarray:
    """Algorithm 2: theta^(T), shape (m, d) or (size, m, d); T = eta.shape[0] steps, eta (T, m) public."""
    rng, size = check_generator(rng), check_size(size)
    x, _, t, _ = check_data(dataset, m)
    d = x.shape[1]
    steps = check_finite_array(eta, "eta", ndim=(2,))
    if steps.shape[1] != m or np.any(steps <= 0):
        raise ValueError(f"eta must be (T, m) = (T, {m}) step sizes > 0, got shape {steps.shape}")
    T = steps.shape[0]
    R = check_positive(radius, "radius")
    sigma = gd_noise_scale(Gamma, T)
    reps = 1 if size is None else size
    if reps * m * d * T > _MAX_ELEMENTS:
        raise ValueError(f"size * m * d * T must be <= {_MAX_ELEMENTS:g}, got size={size!r}, T={T}")
    if theta0 is None:
        theta = np.zeros((reps, m, d))
    else:
        th0 = check_finite_array(theta0, "theta0", ndim=(2,))
        if th0.shape != (m, d):
            raise ValueError(f"theta0 must be (m, d) = ({m}, {d}), got {th0.shape}")
        theta = np.broadcast_to(th0, (reps, m, d)).copy()
    for k in range(T):  # T steps; tasks batched
        g = weighted_gradient(dataset, w, theta, m=m, Gamma=Gamma, Lambda=Lambda)
        g += sigma * rng.standard_normal(g.shape)  # line 6: + Gamma sqrt(T/2) xi
        theta -= steps[k][None, :, None] * g
        norms = safe_norms(theta, keepdims=True)
        theta *= R / np.maximum(norms, R)  # Pi_C, C = ball of radius R
    return theta[0] if size is None else theta
