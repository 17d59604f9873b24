"""Planted bugs for Zhao et al. 2024 (HLM and the WME baseline).

Each bug is a separate implementation with one named defect, recorded Wycheproof-style:
an ``HLMAdapter`` (stage signatures of ``userdp.properties.zhao2024``) for the bugs a
property catches, or a mechanism with its claim and pairs for the bugs the audit catches.
``tests/test_zhao2024.py`` asserts that each is caught.
"""
from __future__ import annotations

import numpy as np

from userdp.properties import zhao2024 as P
from userdp.reference import neighbours as N
from userdp.reference import zhao2024 as Z
from userdp.reference import zhao2024_wme as Wm
from userdp.reference.mechanisms import gaussian_sigma_analytic

from . import PlantedBug

EPS, DELTA = 1.0, 1e-5


def _plan(D, **p):
    return Z.release_plan(D, **p)


def _adapter(name, *, weights=None, thresholds=None, statistic=None, sensitivity=None, noise_scale=None,
             ptr_distance=None, mechanism=None) -> P.HLMAdapter:
    """The reference's stages, with the given ones replaced."""
    ref = P.REFERENCE
    return P.HLMAdapter(name, weights=weights or ref.weights, statistic=statistic or ref.statistic,
                        sensitivity=sensitivity or ref.sensitivity, noise_scale=noise_scale or ref.noise_scale,
                        thresholds=thresholds or ref.thresholds, ptr_distance=ptr_distance or ref.ptr_distance,
                        mechanism=mechanism or ref.mechanism)


# ----------------------------------------------------------------- caught by properties
def _unnormalised_weights(D, **p):
    q = _plan(D, **p)
    return np.minimum(D.counts, q.cap)                       # bug: min(m_i, cap), never divided by the sum


def _flat_T(D, **p):
    return np.full(D.m, Z.DEFAULT_TAU * p["R"])               # bug: T_i = tau R, not tau R / sqrt(m_i)


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
    F = lambda v: float(w @ np.where(np.linalg.norm(v - y, axis=1) <= T, 0.5 * np.linalg.norm(v - y, axis=1) ** 2,  # noqa: E731
                                     T * np.linalg.norm(v - y, axis=1) - 0.5 * T * T))
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
    out["delta_release"] = p["delta"]                        # bug: the release gets all of delta,
    return out                                               # the test's delta_t is not composed


def _gamma_without_movement(D, **p):
    q = _plan(D, **p)
    margins = q.T - np.linalg.norm(q.mu0[None, :] - P._y(D), axis=1)
    K = float(q.w[margins >= q.e].sum())                     # bug: no (j + 1) B shift of the margins
    j = np.arange(q.J)
    return int(np.sum(K - (j + 1) * q.w.max() > Z.DEFAULT_KAPPA0))


def _wme_delta_not_composed(D, *, epsilon, delta, R):
    """Bug: stage I (localisation) calibrated at the whole delta and not composed: both stages
    at (eps_k, delta), claim (eps, delta); the mechanism is (eps, 2 delta)-DP by composition."""
    e1, _, e2, _ = Wm.wme_budgets(epsilon, delta)
    D1, D2 = Wm.wme_sensitivities(D, R)
    return {"eps1": e1, "delta1": delta, "eps2": e2, "delta2": delta,
            "sigma1": gaussian_sigma_analytic(D1, e1, delta), "sigma2": gaussian_sigma_analytic(D2, e2, delta)}


# ----------------------------------------------------------------- caught by the audit
def two_cluster_pair() -> N.NeighbourPair:
    """3 users at +50 and 2 at -50 (4 items each, R = 1): mu0 is near +50; moving one user of
    the majority to -50 moves it near -50. gamma = 0 on both sides (the majority's weight
    0.6 minus w_max 0.2 is below kappa0 = 1/2), so the reference falls back to 2 R_c."""
    D = P.HARD_EXAMPLES[1].dataset
    D2 = P.replaced(D, 0, -50.0)
    return N.NeighbourPair(D, D2, N.REPLACE_USER_ITEMS.name, int(D.users[0]),
                           "a majority user of the +50 cluster moves to -50")


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


WME_BUGS = (
    PlantedBug("wme-localisation-delta-not-composed", "accounting",
               "WME's stage I (the private histogram) is calibrated at the whole delta and its delta left "
               "out of the claim: (eps, 2 delta)-DP by composition, claimed (eps, delta)",
               "issue 11 (the localisation stage treated as free of delta)",
               ("prop_wme_noise_calibrated",),
               P.Adapter("bug: WME localisation delta not composed", noise_scale=_wme_delta_not_composed,
                         sensitivity=P.REFERENCE_WME.sensitivity)),
)

BUGS = (
    PlantedBug("capped-solver-refuses", "data-dependent refusal",
               "the release raises RuntimeError when a Newton solver capped at 100 steps, with an absolute "
               "gradient target, stops above its certificate; whether it does depends on the data, so one "
               "dataset raises where its neighbour releases (probability 1 against 0)",
               "userdp's own HLM before its release was made total (an expert review found 41 raising "
               "datasets in 32,749 small ones)",
               ("prop_refusal_reads_only_public_inputs",),
               _adapter("bug: capped solver refuses", statistic=lambda D, **p: _capped_check(D, **p).mu0,
                        mechanism=_capped_mechanism)),
    PlantedBug("weights-not-normalised", "wrong weights",
               "w_i = min(m_i, cap) without dividing by the sum: the minimiser is unchanged but "
               "c = max w_i T_i, hence B, and the PTR weights no longer mean shares of the total",
               "issue 11 (the poster's w_i are not said to sum to 1)",
               ("prop_weights_normalised_monotone",),
               _adapter("bug: unnormalised weights", weights=_unnormalised_weights)),
    PlantedBug("threshold-not-scaled-with-m", "sensitivity under-estimate",
               "T_i = tau R for every user while the sensitivity assumes T_i = tau R / sqrt(m_i): a "
               "heavy user's gradient is sqrt(m_i) times larger than the bound",
               "issue 11 (adaptive thresholds dropped in the estimator, kept in the calibration)",
               ("prop_sensitivity_bound_brute_force",),
               _adapter("bug: T_i not scaled with m_i", statistic=_flat_T_statistic)),
    PlantedBug("ptr-delta-not-composed", "accounting",
               "the release is calibrated at the whole delta and the test's delta_t is not "
               "composed: the mechanism is (epsilon, 1.5 delta)-DP, not (epsilon, delta)",
               "issue 11 (the propose-test-release failure probability left out of the claim)",
               ("prop_noise_calibrated",),
               _adapter("bug: PTR delta not composed", noise_scale=_delta_not_composed)),
    PlantedBug("ptr-distance-without-movement", "PTR distance of sensitivity > 1",
               "gamma counts steps j by K(e) - (j + 1) w_max without shifting the margins by "
               "(j + 1) B: one replaced user can move gamma from 0 to its cap",
               "derived here (the distance to instability read as 'how many users can be lost', "
               "forgetting that the minimiser moves too)",
               ("prop_ptr_distance_sensitivity_one",),
               _adapter("bug: PTR distance without movement", ptr_distance=_gamma_without_movement)),
    PlantedBug("typical-sensitivity-without-ptr", "data-dependent sensitivity used as global",
               "noise calibrated to B = 2c / kappa0 on every dataset, without the test: on the "
               "two-cluster pair mu0 moves by ~100 while sigma ~ 0.03",
               "issue 11 (the poster's W of eq. (4) calibrated to the typical sensitivity)",
               ("audit",), mechanism=_no_ptr, claim=Z.claim(EPS, DELTA), pairs=(two_cluster_pair(),)),
    PlantedBug("clip-after-noise", "post-processing order",
               "Clip(mu0 + W, R_c): on the two-cluster pair with R_c = 1 the releases are ~+1 and "
               "~-1, whatever the noise",
               "issue 11 (poster eq. (4) read as Clip applied to the noisy estimate)",
               ("audit",), mechanism=_clip_after_noise, claim=Z.claim(EPS, DELTA), pairs=(two_cluster_pair(),)),
)
