"""Shared pieces of the ERM algorithms: L2-regularised logistic and ridge losses.

Used by ``amin2019_erm`` (Amin et al. 2019, Algorithm 1, output perturbation) and
``epasto2020_erm`` (Epasto et al. 2020, Algorithm 2, noisy gradient descent).

Sources (cited at the line):

- [CMS11] K. Chaudhuri, C. Monteleoni, A. D. Sarwate, "Differentially private empirical
  risk minimization", JMLR 12:1069-1109, 2011 (arXiv:0912.0071). Objective
  J(f, D) = (1/n) sum_i l(f, z_i) + (Lambda/2) ||f||^2; Lemma 7 (a Lambda-strongly
  convex G and G + g have minimisers at distance <= max ||grad g|| / Lambda).
- [Nes04] Y. Nesterov, "Introductory Lectures on Convex Optimization", 2004, Thm 2.1.10
  (for a Lambda-strongly convex F, ||theta - theta*|| <= ||grad F(theta)|| / Lambda);
  we use it as the accuracy certificate of the minimiser below.

Losses, per record z_i = (x_i, y_i), with parameter theta in R^d:

- logistic: l(theta, z) = log(1 + exp(-y theta.x)), y in {-1, +1};
  grad = -y sigma(-y theta.x) x, so ||grad|| <= ||x|| <= R: L = R, smoothness R^2/4.
- ridge:    l(theta, z) = (1/2)(theta.x - y)^2, |y| <= Y;
  grad = (theta.x - y) x, so ||grad|| <= R (R ||theta|| + Y). This is bounded only on a
  bounded set of theta; see ``lipschitz``.

Data bounds are assumptions of the privacy proofs: features with ||x_i||_2 > R, or labels
outside their set, are refused (ValueError naming the record), never clipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ._checks import check_finite_array, check_int, check_positive
from .data import UserDataset, check_dataset
from .mechanisms import safe_norms

__all__ = [
    "LOSSES",
    "Minimiser",
    "check_erm_data",
    "features",
    "record_losses",
    "record_gradients",
    "weighted_gradient",
    "lipschitz",
    "smoothness",
    "ridge_theta_radius",
    "minimise",
]

LOSSES = ("logistic", "ridge")

# Relative slack used when comparing ||x_i|| with R: a feature vector normalised to norm R
# in floating point may have norm R (1 + 1e-16); we accept up to R (1 + 1e-12) and the
# Lipschitz constants below are multiplied by the same factor, so the proofs still hold.
_NORM_SLACK = 1e-12


def features(dataset: UserDataset) -> np.ndarray:
    """The (n, d) feature matrix (a scalar-valued dataset is one feature column)."""
    v = check_dataset(dataset).values
    return v[:, None] if v.ndim == 1 else v


def check_erm_data(dataset: UserDataset, loss: str, R, Y=1.0) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) after checking ||x_i||_2 <= R and the labels' domain; refuses, never clips.

    logistic: y_i in {-1, +1}; ridge: |y_i| <= Y.
    """
    loss = _loss_name(loss)
    R = check_positive(R, "R")
    check_dataset(dataset)
    if dataset.labels is None:
        raise ValueError("dataset.labels is None: ERM needs a label y_i for every record")
    X, y = features(dataset), dataset.labels
    norms = safe_norms(X)  # (n,), no overflow warning before the refusal below
    bad = norms > R * (1 + _NORM_SLACK)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"values must have ||x_i||_2 <= R = {R}; ||x_{i}||_2 = {norms[i]!r}")
    Y = check_positive(Y, "Y")  # checked for every loss: a bad Y is never silently ignored
    if loss == "logistic":
        bad = (y != 1.0) & (y != -1.0)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"labels must be -1 or +1 for logistic loss; labels[{i}] = {y[i]!r}")
    else:
        bad = np.abs(y) > Y
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"labels must lie in [-Y, Y] = [{-Y}, {Y}]; labels[{i}] = {y[i]!r}")
    return X, y


# ------------------------------------------------------------------------ losses, gradients
def _loss_name(loss: str) -> str:
    if not isinstance(loss, str) or loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    return loss


def _check_problem(theta, X, y, c=None, *, batch: bool = True, c_name: str = "c"):
    """The public wrappers' checks: theta (d,) (or (k, d) if ``batch``), X (n, d), y (n,), c (n,)."""
    X = check_finite_array(X, "X", ndim=(2,))
    n, d = X.shape
    t = check_finite_array(theta, "theta", ndim=(1, 2) if batch else (1,))
    if t.shape[-1] != d:
        raise ValueError(f"theta must have {d} coordinates (X is {n} x {d}), got shape {t.shape}")
    y = check_finite_array(y, "y", ndim=(1,))
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},) like X's rows, got {y.shape}")
    if c is not None:
        c = check_finite_array(c, c_name, ndim=(1,))
        if c.shape != (n,):
            raise ValueError(f"{c_name} must have shape ({n},) like X's rows, got {c.shape}")
    return t, X, y, c


def _margins(theta: np.ndarray, X: np.ndarray) -> np.ndarray:
    """theta.x_i for one theta (d,) -> (n,), or a batch (k, d) -> (k, n)."""
    return theta @ X.T


def _record_losses(t, X, y, loss: str) -> np.ndarray:
    z = _margins(t, X)
    if loss == "logistic":
        return np.logaddexp(0.0, -y * z)  # log(1 + exp(-y theta.x)), stable
    return 0.5 * (z - y) ** 2


def record_losses(theta, X, y, loss: str) -> np.ndarray:
    """l(theta, z_i) for every record: (n,) for theta (d,), (k, n) for a batch (k, d)."""
    loss = _loss_name(loss)
    t, X, y, _ = _check_problem(theta, X, y)
    return _record_losses(t, X, y, loss)


def _dloss(z: np.ndarray, y: np.ndarray, loss: str) -> np.ndarray:
    """d l / d(theta.x) at margin z: the gradient is this scalar times x."""
    if loss == "logistic":
        return -y * expit(-y * z)  # -y sigma(-y theta.x)
    return z - y


def record_gradients(theta, X, y, loss: str) -> np.ndarray:
    """grad_theta l(theta, z_i) for every record, (n, d); theta must be one (d,) vector."""
    loss = _loss_name(loss)
    t, X, y, _ = _check_problem(theta, X, y, batch=False)
    return _dloss(_margins(t, X), y, loss)[:, None] * X


def _weighted_gradient(t, X, y, c, loss: str) -> np.ndarray:
    g = _dloss(_margins(t, X), y, loss)  # (n,) or (k, n)
    return (g * c) @ X  # (d,) or (k, d)


def weighted_gradient(theta, X, y, c, loss: str) -> np.ndarray:
    """sum_i c_i grad l(theta, z_i): (d,) for theta (d,), (k, d) for a batch (k, d).

    The weights enter linearly (Epasto et al. 2020 §4: L-hat(theta, c, D) = sum_i c_i l).
    """
    loss = _loss_name(loss)
    t, X, y, c = _check_problem(theta, X, y, c)
    return _weighted_gradient(t, X, y, c, loss)


# ----------------------------------------------------------------------------- constants
def ridge_theta_radius(Y, Lambda) -> float:
    """||theta*|| <= Y / sqrt(Lambda) for sum_i w_i (1/2)(theta.x_i - y_i)^2 + (Lambda/2)||theta||^2,
    sum_i w_i <= 1, |y_i| <= Y: J(theta*) <= J(0) <= Y^2/2 and J(theta*) >= (Lambda/2)||theta*||^2.
    """
    return check_positive(Y, "Y") / math.sqrt(check_positive(Lambda, "Lambda"))


def lipschitz(loss: str, R, Y=1.0, Lambda=None) -> float:
    """L with ||grad_theta l(theta, z)||_2 <= L for every admissible record z.

    logistic: L = R (|y sigma(.)| <= 1). ridge: L = R (R Y / sqrt(Lambda) + Y), valid for
    ||theta|| <= Y / sqrt(Lambda) (``ridge_theta_radius``), the ball that holds every
    minimiser of an average-normalised objective; that is the only place the
    output-perturbation proof evaluates the gradient (CMS11 Lemma 7, see amin2019_erm).
    """
    R = check_positive(R, "R") * (1 + _NORM_SLACK)
    Y = check_positive(Y, "Y")  # checked for every loss
    if _loss_name(loss) == "logistic":
        return R
    if Lambda is None:
        raise ValueError("Lambda is required for the ridge Lipschitz constant (theta is bounded by Y/sqrt(Lambda))")
    Y = check_positive(Y, "Y")
    return R * (R * ridge_theta_radius(Y, Lambda) + Y)


def smoothness(loss: str, R) -> float:
    """beta with ||grad l(theta) - grad l(theta')|| <= beta ||theta - theta'||: R^2/4 (logistic), R^2 (ridge)."""
    R = check_positive(R, "R") * (1 + _NORM_SLACK)
    return R * R / 4.0 if _loss_name(loss) == "logistic" else R * R


# ----------------------------------------------------------------------- exact minimiser
@dataclass(frozen=True)
class Minimiser:
    """theta minimising sum_i w_i l(theta, z_i) + (Lambda/2)||theta||^2, with a certificate.

    ``error_bound`` = ||grad F(theta)||_2 / Lambda >= ||theta - theta*||_2 [Nes04, Thm 2.1.10].
    """

    theta: np.ndarray
    error_bound: float
    iterations: int


def _objective_grad(theta, X, y, w, Lambda, loss):
    return _weighted_gradient(theta, X, y, w, loss) + Lambda * theta


def _objective(theta, X, y, w, Lambda, loss) -> float:
    return float(w @ _record_losses(theta, X, y, loss) + 0.5 * Lambda * theta @ theta)


def minimise(X, y, w, Lambda, loss: str, *, tol: float = 1e-12, max_iter: int = 100) -> Minimiser:
    """Deterministic exact minimiser of F(theta) = sum_i w_i l(theta, z_i) + (Lambda/2)||theta||^2.

    ridge: solve (sum_i w_i x_i x_i^T + Lambda I) theta = sum_i w_i y_i x_i.
    logistic: Newton's method with backtracking from theta = 0, until the certificate
    ||grad F|| / Lambda <= tol (F is Lambda-strongly convex and smooth: Newton converges
    quadratically). It also stops when the Newton step is below rounding (1e-15 relative)
    or the objective is flat to rounding along it: the returned certificate is then
    whatever float arithmetic reached, stated honestly (callers check it).
    Raises RuntimeError if ``max_iter`` steps do not reach either. Inputs: X (n, d), y (n,)
    and w (n,) finite with n >= 1 and w >= 0, tol in [1e-50, 1], max_iter in [1, 10^4].
    """
    Lambda = check_positive(Lambda, "Lambda")
    loss = _loss_name(loss)
    X = check_finite_array(X, "X", ndim=(2,))
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must hold at least one record and one feature, got shape {X.shape}")
    _, X, y, w = _check_problem(np.zeros(X.shape[1]), X, y, w, c_name="w")
    if (w < 0).any():
        i = int(np.argmax(w < 0))
        raise ValueError(f"w must be >= 0 (weights of a convex objective); w[{i}] = {w[i]!r}")
    tol = check_positive(tol, "tol", hi=1.0)
    max_iter = check_int(max_iter, "max_iter", lo=1, hi=10_000)
    d = X.shape[1]
    if loss == "ridge":
        A = (X * w[:, None]).T @ X + Lambda * np.eye(d)  # (d, d)
        theta = np.linalg.solve(A, (w * y) @ X)  # (d,)
        err = float(np.linalg.norm(_objective_grad(theta, X, y, w, Lambda, loss))) / Lambda
        return Minimiser(theta, err, 1)
    theta, err = np.zeros(d), math.inf
    for it in range(max_iter):
        g = _objective_grad(theta, X, y, w, Lambda, loss)  # (d,)
        err = float(np.linalg.norm(g)) / Lambda
        if err <= tol:
            return Minimiser(theta, err, it)
        p = expit(theta @ X.T)  # (n,)
        H = (X * (w * p * (1 - p))[:, None]).T @ X + Lambda * np.eye(d)  # Hessian, (d, d)
        step = np.linalg.solve(H, g)
        if np.linalg.norm(step) <= 1e-15 * (1.0 + np.linalg.norm(theta)):
            return Minimiser(theta, err, it)  # at rounding level
        grad_norm = lambda th: np.linalg.norm(_objective_grad(th, X, y, w, Lambda, loss))  # noqa: E731
        if grad_norm(theta - step) < err * Lambda:
            theta = theta - step  # full Newton step helps
            continue
        f0, t = _objective(theta, X, y, w, Lambda, loss), 1.0
        while _objective(theta - t * step, X, y, w, Lambda, loss) > f0 - 0.25 * t * (g @ step):
            t *= 0.5  # Armijo backtracking
            if t < 1e-10:  # f flat to rounding:
                return Minimiser(theta, err, it)  # certificate as reached
        theta = theta - t * step
    raise RuntimeError(f"logistic minimiser did not reach tol={tol} in {max_iter} Newton steps (err={err!r})")
