"""Tests of reference/erm.py, the regularised ERM solver and losses shared by Amin 2019 Alg. 1
(tests/papers/amin2019/test_amin2019_erm.py) and Epasto 2020 Alg. 2 (tests/papers/epasto2020/test_epasto2020_erm.py).

Oracles: finite differences, scipy.optimize, least squares on the augmented system, the
Lipschitz bound attained in closed form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from userdp.reference import erm
from userdp.reference.data import UserDataset


def _data(seed=0, n=30, d=2, loss="logistic"):
    rng = np.random.default_rng(seed)
    X = erm.features(UserDataset(rng.uniform(-0.7, 0.7, (n, d)), np.zeros(n, dtype=int)))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0) if loss == "logistic" else rng.uniform(-1, 1, n)
    ids = np.repeat(np.arange(6), [10, 5, 5, 4, 3, 3])[:n]
    return UserDataset(X, ids, labels=y)


@pytest.mark.parametrize("loss", erm.LOSSES)
def test_gradients_match_central_differences(loss):
    D = _data(loss=loss)
    X, y = erm.check_erm_data(D, loss, 1.0)
    theta, h = np.array([0.3, -0.8]), 1e-6
    G = erm.record_gradients(theta, X, y, loss)  # (n, d)
    for j in range(2):
        e = np.eye(2)[j] * h
        fd = (erm.record_losses(theta + e, X, y, loss) - erm.record_losses(theta - e, X, y, loss)) / (2 * h)
        # central differences err by O(h^2 * third derivative) ~ 1e-12, plus rounding 1e-16/h ~ 1e-10
        np.testing.assert_allclose(G[:, j], fd, atol=1e-8)


@pytest.mark.parametrize("loss", erm.LOSSES)
def test_minimiser_matches_scipy_and_certificate(loss):
    D = _data(loss=loss)
    X, y = erm.check_erm_data(D, loss, 1.0)
    w, Lam = np.full(D.n, 1 / D.n), 0.3
    m = erm.minimise(X, y, w, Lam, loss)
    f = lambda t: w @ erm.record_losses(t, X, y, loss) + 0.5 * Lam * t @ t  # noqa: E731
    g = lambda t: erm.weighted_gradient(t, X, y, w, loss) + Lam * t  # noqa: E731
    ref = optimize.minimize(f, np.ones(2), jac=g, method="BFGS", options={"gtol": 1e-12})
    # scipy stops at ||grad|| <= 1e-12-ish, i.e. ||t - t*|| <= 1e-12 / Lambda ~ 3e-12 (strong convexity)
    np.testing.assert_allclose(m.theta, ref.x, atol=1e-9)
    assert m.error_bound <= 1e-12
    assert np.linalg.norm(g(m.theta)) / Lam == pytest.approx(m.error_bound, abs=1e-15)


def test_ridge_minimiser_is_the_normal_equations():
    D = _data(loss="ridge")
    X, y = erm.check_erm_data(D, "ridge", 1.0)
    Lam, w = 0.5, np.full(D.n, 1 / D.n)
    # Second method: least squares on the augmented system [sqrt(w) X; sqrt(Lam) I] t = [sqrt(w) y; 0].
    Xa = np.vstack([np.sqrt(w)[:, None] * X, math.sqrt(Lam) * np.eye(2)])
    ya = np.r_[np.sqrt(w) * y, 0, 0]
    np.testing.assert_allclose(
        erm.minimise(X, y, w, Lam, "ridge").theta, np.linalg.lstsq(Xa, ya, rcond=None)[0], atol=1e-12
    )


@pytest.mark.parametrize("loss", erm.LOSSES)
def test_lipschitz_bound_holds(loss):
    rng = np.random.default_rng(3)
    Lam, R, Y = 0.2, 1.0, 1.0
    X = rng.normal(size=(500, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # ||x|| = R: the worst case
    y = np.where(rng.random(500) < 0.5, -1.0, 1.0)
    L = erm.lipschitz(loss, R, Y, Lam)
    for _ in range(50):
        t = rng.normal(size=3)
        t *= (rng.uniform(0, 50) if loss == "logistic" else erm.ridge_theta_radius(Y, Lam)) / np.linalg.norm(t)
        assert np.linalg.norm(erm.record_gradients(t, X, y, loss), axis=1).max() <= L
    # ridge: attained at theta = -radius x, y = 1: |(-R r - Y)| R = R (R r + Y), r = Y/sqrt(Lambda)
    if loss == "ridge":
        r = erm.ridge_theta_radius(Y, Lam)
        g = erm.record_gradients(-r * X[0], X[:1], np.array([1.0]), "ridge")
        assert np.linalg.norm(g) == pytest.approx(L, rel=1e-11)


def test_bad_erm_data_is_refused():
    D = _data()
    with pytest.raises(ValueError, match="R = 0.5"):
        erm.check_erm_data(D, "logistic", 0.5)  # ||x|| up to 0.99 > 0.5
    with pytest.raises(ValueError, match=r"labels\[0\]"):
        erm.check_erm_data(D.with_fields(labels=np.r_[0.5, D.labels[1:]]), "logistic", 1.0)
    with pytest.raises(ValueError, match=r"\[-Y, Y\]"):
        erm.check_erm_data(D.with_fields(labels=np.r_[2.0, D.labels[1:]]), "ridge", 1.0, 1.0)
    with pytest.raises(ValueError, match="labels is None"):
        erm.check_erm_data(D.with_fields(labels=None), "logistic", 1.0)
    with pytest.raises(ValueError, match="loss must be one of"):
        erm.check_erm_data(D, "hinge", 1.0)
    with pytest.raises(ValueError, match="Lambda"):
        erm.minimise(np.eye(2), np.ones(2), np.ones(2) / 2, 0.0, "logistic")
