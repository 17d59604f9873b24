"""Planted bugs for Zhao et al. 2024 (HLM); the WME baseline's are in ``zhao2024_wme.py``.

Each bug is a separate implementation with one named defect, recorded Wycheproof-style:
an ``HLMAdapter`` (stage signatures of ``userdp.properties.zhao2024``) for the bugs a
property catches, or a mechanism with its claim and pairs for the bugs the audit catches.
``tests/papers/zhao2024/test_zhao2024.py`` asserts that each is caught.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from userdp.properties import zhao2024 as P
from userdp.reference import neighbours as N
from userdp.reference import zhao2024 as Z
from userdp.reference import zhao2024_calibration as C
from userdp.reference.mechanisms import gaussian_sigma_analytic

from planted import PlantedBug

EPS, DELTA = 1.0, 1e-5


def _plan(D, **p):
    return Z.release_plan(D, **p)


def _adapter(
    name,
    *,
    weights=None,
    thresholds=None,
    statistic=None,
    sensitivity=None,
    noise_scale=None,
    ptr_distance=None,
    mechanism=None,
) -> P.HLMAdapter:
    """The reference's stages, with the given ones replaced."""
    ref = P.REFERENCE
    return P.HLMAdapter(
        name,
        weights=weights or ref.weights,
        statistic=statistic or ref.statistic,
        sensitivity=sensitivity or ref.sensitivity,
        noise_scale=noise_scale or ref.noise_scale,
        thresholds=thresholds or ref.thresholds,
        ptr_distance=ptr_distance or ref.ptr_distance,
        mechanism=mechanism or ref.mechanism,
    )


# ----------------------------------------------------------------- caught by properties
def _unnormalised_weights(D, **p):
    q = _plan(D, **p)
    return np.minimum(D.counts, q.cap)  # bug: min(m_i, cap), never divided by the sum


def _flat_T(D, **p):
    return np.full(D.m, Z.DEFAULT_TAU * p["R"])  # bug: T_i = tau R, not tau R / sqrt(m_i)


def _flat_T_statistic(D, **p):
    q = _plan(D, **p)
    y = P._y(D)
    T = _flat_T(D, **p)
    return Z.solve(y, q.w, T, e=q.e, rho=q.B).z


def _capped_newton(y, w, T, eta_target, steps=100):
    """The solver HLM shipped before its release was made total: damped Newton from the weighted
    mean with majorise-minimise fallback steps, at most 100 steps, an ABSOLUTE gradient target.
    Returns (s, ||grad F(s)||)."""
    s = w @ y / w.sum()
    F = lambda v: float(  # noqa: E731
        w
        @ np.where(
            np.linalg.norm(v - y, axis=1) <= T,
            0.5 * np.linalg.norm(v - y, axis=1) ** 2,  # noqa: E731
            T * np.linalg.norm(v - y, axis=1) - 0.5 * T * T,
        )
    )
    Fs = F(s)
    for _ in range(steps):
        u = s[None, :] - y
        r = np.linalg.norm(u, axis=1)
        a = w * T / np.maximum(r, T)
        g = a @ u
        if float(np.linalg.norm(g)) <= eta_target:
            return s, float(np.linalg.norm(g))
        lin = r > T
        ul = u[lin] / r[lin, None]
        H = a.sum() * np.eye(y.shape[1]) - (ul * a[lin, None]).T @ ul
        moved = False
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            step = None
        if step is not None and np.all(np.isfinite(step)):
            t = 1.0
            for _ in range(40):
                if F(s - t * step) <= Fs - 1e-4 * t * float(g @ step):
                    s, Fs, moved = s - t * step, F(s - t * step), True
                    break
                t *= 0.5
        if not moved:
            cand = a @ y / a.sum()
            if F(cand) >= Fs and np.array_equal(cand, s):
                break
            s, Fs = cand, min(Fs, F(cand))
    u = s[None, :] - y
    r = np.linalg.norm(u, axis=1)
    return s, float(np.linalg.norm((w * T / np.maximum(r, T)) @ u))


def _capped_check(D, **p):
    """Bug: refuse (RuntimeError) when the capped solver stops above its certificate e kappa0 / 2."""
    q = _plan(D, **p)
    target = q.e * Z.DEFAULT_KAPPA0 / 2
    _, eta = _capped_newton(P._y(D), q.w, q.T, target)
    if not eta <= target:
        raise RuntimeError(f"solve stopped at gradient norm {eta:.3g} > {target:.3g}; refusing to release")
    return q


def _capped_mechanism(D, rng, size=None, **p):
    _capped_check(D, **p)
    return Z.mechanism(D, rng, size, **p)


def _delta_not_composed(D, **p):
    q = _plan(D, **p)
    out = {"sigma_pass": q.sigma_pass, "sigma_fallback": q.sigma_fallback, "threshold": q.threshold, **q.budget}
    out["delta_release"] = p["delta"]  # bug: the release gets all of delta,
    return out  # the test's delta_t is not composed


def _gamma_without_movement(D, **p):
    q = _plan(D, **p)
    margins = q.T - np.linalg.norm(q.mu0[None, :] - P._y(D), axis=1)
    K = float(q.w[margins >= q.e].sum())  # bug: no (j + 1) B shift of the margins
    j = np.arange(q.J)
    return int(np.sum(K - (j + 1) * q.w.max() > Z.DEFAULT_KAPPA0))


def _kappa0_from_data(D, **p):
    """Bug: kappa0 'tuned' on the dataset: the largest of TUNED_KAPPAS below the weight with a
    non-negative margin at mu0 minus w_max (what the test would certify at j = 0)."""
    q = _plan(D, **p)
    margins = q.T - np.linalg.norm(q.mu0[None, :] - P._y(D), axis=1)
    K0 = float(q.w[margins >= 0].sum()) - float(q.w.max())
    kappa0 = max([k for k in C.TUNED_KAPPAS if k < K0], default=Z.DEFAULT_KAPPA0)
    return P._ref_noise(D, **p, kappa0=kappa0)


def _global_bug(mutate):
    """An adapter of calibration "global" whose public constants pass through ``mutate``
    (the reference's solver and release otherwise)."""

    def plan(D, **p):
        d = 1 if D.values.ndim == 1 else D.values.shape[1]
        k = mutate(C.global_constants(D.counts, p["R"], p["theta"], d=d, support=p["support"]))
        y = C._project(Z.local_averages(D)[0], k.rho)
        s = C._global_solve(y, k)
        S = min(k.Delta + 2 * k.e, 2 * p["R_c"])
        return s, S, gaussian_sigma_analytic(S, p["epsilon"], p["delta"]), k

    def noise(D, **p):
        _, _, sigma, k = plan(D, **p)
        return {
            "sigma": sigma,
            "epsilon": p["epsilon"],
            "delta": p["delta"],
            "Delta": k.Delta,
            "e": k.e,
            "kappa_G": k.kappa_G,
            "rho_G": k.rho_G,
        }

    ref = P.REFERENCE_GLOBAL
    return P.HLMAdapter(
        "bug: global calibration",
        weights=ref.weights,
        thresholds=ref.thresholds,
        statistic=lambda D, **p: plan(D, **p)[0],
        sensitivity=lambda D, **p: plan(D, **p)[1],
        noise_scale=noise,
    )


def _curvature_from_radius(k):
    """Bug: G = {T_i >= rho} (the support's radius): such a user can sit in its linear region."""
    in_G = k.T >= k.rho_G
    kappa = math.fsum(k.w[in_G])
    return dataclasses.replace(k, in_G=in_G, kappa_G=kappa, Delta=2 * k.c / kappa)


def _no_sign_flip(k):
    """Bug: Delta = c / kappa_G: a user's pull can flip sign (a change of 2c), bounded as a change of c."""
    return dataclasses.replace(k, Delta=k.c / k.kappa_G)


def _one_step(k):
    """Bug: one solver step, whatever the contraction factor; the claimed e kept."""
    return dataclasses.replace(k, steps=1)


# ----------------------------------------------------------------- caught by the audit
def two_cluster_pair() -> N.NeighbourPair:
    """3 users at +50 and 2 at -50 (4 items each, R = 1): mu0 is near +50; moving one user of
    the majority to -50 moves it near -50. gamma = 0 on both sides (the majority's weight
    0.6 minus w_max 0.2 is below kappa0 = 1/2), so the reference falls back to 2 R_c."""
    D = P.HARD_EXAMPLES[1].dataset
    D2 = P.replaced(D, 0, -50.0)
    return N.NeighbourPair(
        D, D2, N.REPLACE_USER_ITEMS.name, int(D.users[0]), "a majority user of the +50 cluster moves to -50"
    )


def _no_ptr(D, rng, size=None, *, R=1.0, R_c=100.0):
    """Bug: noise calibrated to the typical sensitivity B on every dataset (no test)."""
    q = _plan(D, epsilon=EPS, delta=DELTA, R=R, R_c=R_c)
    k = 1 if size is None else size
    out = q.clipped[None, :] + q.sigma_pass * rng.standard_normal((k, q.clipped.size))
    out = out[:, 0] if D.values.ndim == 1 else out
    return out[0] if size is None else out


def _clip_after_noise(D, rng, size=None, *, R=1.0, R_c=1.0):
    """Bug: Clip(mu0 + W, R_c) instead of Clip(mu0, R_c) + W: the fallback's 2 R_c bound on
    the shift of the clipped point no longer bounds anything the noise hides."""
    q = _plan(D, epsilon=EPS, delta=DELTA, R=R, R_c=R_c)
    k = 1 if size is None else size
    Zt = rng.laplace(0.0, 1.0 / q.budget["eps_test"], k)
    sigma = np.where(q.gamma + Zt > q.threshold, q.sigma_pass, q.sigma_fallback)
    raw = q.mu0[None, :] + sigma[:, None] * rng.standard_normal((k, q.mu0.size))
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    out = raw * np.minimum(1.0, R_c / np.maximum(norms, np.finfo(float).tiny))
    out = out[:, 0] if D.values.ndim == 1 else out
    return out[0] if size is None else out


BUGS = (
    PlantedBug(
        "capped-solver-refuses",
        "data-dependent refusal",
        "the release raises RuntimeError when a Newton solver capped at 100 steps, with an absolute "
        "gradient target, stops above its certificate; whether it does depends on the data, so one "
        "dataset raises where its neighbour releases (probability 1 against 0)",
        "userdp's own HLM before its release was made total (an expert review found 41 raising "
        "datasets in 32,749 small ones)",
        ("prop_refusal_reads_only_public_inputs",),
        _adapter(
            "bug: capped solver refuses",
            statistic=lambda D, **p: _capped_check(D, **p).mu0,
            mechanism=_capped_mechanism,
        ),
    ),
    PlantedBug(
        "weights-not-normalised",
        "wrong weights",
        "w_i = min(m_i, cap) without dividing by the sum: the minimiser is unchanged but "
        "c = max w_i T_i, hence B, and the PTR weights no longer mean shares of the total",
        "a project review (the poster's w_i are not said to sum to 1)",
        ("prop_weights_normalised_monotone",),
        _adapter("bug: unnormalised weights", weights=_unnormalised_weights),
    ),
    PlantedBug(
        "threshold-not-scaled-with-m",
        "sensitivity under-estimate",
        "T_i = tau R for every user while the sensitivity assumes T_i = tau R / sqrt(m_i): a "
        "heavy user's gradient is sqrt(m_i) times larger than the bound",
        "a project review (adaptive thresholds dropped in the estimator, kept in the calibration)",
        ("prop_sensitivity_bound_brute_force",),
        _adapter("bug: T_i not scaled with m_i", statistic=_flat_T_statistic),
    ),
    PlantedBug(
        "ptr-delta-not-composed",
        "accounting",
        "the release is calibrated at the whole delta and the test's delta_t is not "
        "composed: the mechanism is (epsilon, 1.5 delta)-DP, not (epsilon, delta)",
        "a project review (the propose-test-release failure probability left out of the claim)",
        ("prop_noise_calibrated",),
        _adapter("bug: PTR delta not composed", noise_scale=_delta_not_composed),
    ),
    PlantedBug(
        "ptr-distance-without-movement",
        "PTR distance of sensitivity > 1",
        "gamma counts steps j by K(e) - (j + 1) w_max without shifting the margins by "
        "(j + 1) B: one replaced user can move gamma from 0 to its cap",
        "derived here (the distance to instability read as 'how many users can be lost', "
        "forgetting that the minimiser moves too)",
        ("prop_ptr_distance_sensitivity_one",),
        _adapter("bug: PTR distance without movement", ptr_distance=_gamma_without_movement),
    ),
    PlantedBug(
        "typical-sensitivity-without-ptr",
        "data-dependent sensitivity used as global",
        "noise calibrated to B = 2c / kappa0 on every dataset, without the test: on the "
        "two-cluster pair mu0 moves by ~100 while sigma ~ 0.03",
        "a project review (the poster's W of eq. (4) calibrated to the typical sensitivity)",
        ("audit",),
        mechanism=_no_ptr,
        claim=Z.claim(EPS, DELTA),
        pairs=(two_cluster_pair(),),
    ),
    PlantedBug(
        "clip-after-noise",
        "post-processing order",
        "Clip(mu0 + W, R_c): on the two-cluster pair with R_c = 1 the releases are ~+1 and ~-1, whatever the noise",
        "a project review (poster eq. (4) read as Clip applied to the noisy estimate)",
        ("audit",),
        mechanism=_clip_after_noise,
        claim=Z.claim(EPS, DELTA),
        pairs=(two_cluster_pair(),),
    ),
    PlantedBug(
        "ptr-kappa0-from-data",
        "data-dependent calibration",
        "kappa0 chosen on the dataset (the weight it already holds in the quadratic region): "
        "sigma_pass = B s(eps_r, delta_r) with B = 2c / kappa0 then moves with one user's items, "
        "so the noise scale itself tells neighbours apart",
        "derived here (tune_ptr's choice made on the records instead of the public counts)",
        ("prop_noise_scales_public",),
        _adapter("bug: kappa0 tuned on the data", noise_scale=_kappa0_from_data),
    ),
)

# Calibration "global" (reference/zhao2024_calibration.py, G1-G5): each caught by a property of
# properties.zhao2024.GLOBAL_PROPERTIES (tests/papers/zhao2024/test_zhao2024_calibration.py asserts it).
GLOBAL_BUGS = (
    PlantedBug(
        "global-curvature-from-radius",
        "sensitivity under-estimate",
        "users with T_i >= rho (the support's radius, not its diameter) counted as always "
        "quadratic: on the lost-curvature example the minimiser moves by rho / 10 against "
        "Delta = 2 rho / 23",
        "derived here (G1 read with ||s - y_i|| <= rho instead of <= 2 rho)",
        ("prop_global_constants", "prop_global_sensitivity_brute_force"),
        _global_bug(_curvature_from_radius),
    ),
    PlantedBug(
        "global-no-sign-flip",
        "sensitivity under-estimate",
        "Delta = c / kappa_G: a user's pull can flip from +w_k t_k to -w_k t_k, a change of 2c",
        "derived here (G3's gradient change bounded by one pull instead of two)",
        ("prop_global_constants", "prop_global_sensitivity_brute_force"),
        _global_bug(_no_sign_flip),
    ),
    PlantedBug(
        "global-one-solver-step",
        "solver error not covered",
        "one projected-gradient step: x_1 can lie (1 - kappa_G) 2 rho from s*, far beyond the "
        "declared e, so neighbours move by more than Delta + 2e",
        "derived here (G4's iteration count ignored)",
        ("prop_global_minimiser_certified",),
        _global_bug(_one_step),
    ),
)
