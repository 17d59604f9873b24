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
             ptr_distance=None) -> P.HLMAdapter:
    """The reference's stages, with the given ones replaced."""
    ref = P.REFERENCE
    return P.HLMAdapter(name, weights=weights or ref.weights, statistic=statistic or ref.statistic,
                        sensitivity=sensitivity or ref.sensitivity, noise_scale=noise_scale or ref.noise_scale,
                        thresholds=thresholds or ref.thresholds, ptr_distance=ptr_distance or ref.ptr_distance)


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
    return Z.solve(y, q.w, T, eta_target=q.e * Z.DEFAULT_KAPPA0 / 2)[0]


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
