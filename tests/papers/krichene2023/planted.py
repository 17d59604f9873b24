"""Planted bugs for Krichene et al. 2023 (task-weighted SSP and noisy GD, adaptive weights).

Each bug is a separate implementation (a ``MultiTaskAdapter`` with the stage signatures of
``userdp.properties.krichene2023``) with one named defect, recorded Wycheproof-style.
``tests/papers/krichene2023/test_krichene2023.py`` asserts that the properties in ``caught_by`` catch each one;
bugs marked "audit" are caught by the audits in ``tests/papers/krichene2023/test_krichene2023_audits.py`` (their
``mechanism``, ``claim`` and ``pairs`` come from ``audits/papers/krichene2023/audits.py``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from userdp.properties import krichene2023 as P
from userdp.reference import krichene2023 as K
from userdp.reference import krichene2023_weights as W

from planted import PlantedBug

REF = P.REFERENCE


def _variant(name: str, **stages) -> P.MultiTaskAdapter:
    """The reference with some stages replaced; a replaced ``weights`` feeds the statistic, the
    release and the gradient too (one implementation, one set of weights)."""
    wfn = stages.get("weights")
    if wfn is not None:

        def statistic(D, **p):
            return K.statistic(D, wfn(D, **p), m=p["m"], Gamma_x=p["Gamma_x"], Gamma_star=p["Gamma_star"])

        def mechanism(D, rng, size=None, **p):
            return K.ssp_release(D, wfn(D, **p), rng, size, m=p["m"], Gamma_x=p["Gamma_x"], Gamma_star=p["Gamma_star"])

        def gradient(D, theta, **p):
            return K.weighted_gradient(D, wfn(D, **p), theta, m=p["m"], Gamma=p["Gamma"], Lambda=p["Lambda"])

        stages = {"statistic": statistic, "mechanism": mechanism, "gradient": gradient, **stages}
    return dataclasses.replace(REF, name=name, **stages)


def _omega(p):
    return W.omega_mu(p["n_counts"], p["n_users"], p["beta"], p["mu"])


def _by_user_sum(D, v):
    return np.bincount(D.user_index, weights=v)


# 1. eq. (12) skipped: w_ij = omega_i
def _weights_unclipped(D, **p):
    return _omega(p)[D.task_ids]  # BUG: no per-user clipping


# 2. the budget with w instead of w^2: clip when sum_i omega_i > beta, scale by beta / sum omega
def _weights_linear_budget(D, **p):
    om = _omega(p)[D.task_ids]
    B = _by_user_sum(D, om)  # BUG: sum omega, not sum omega^2
    return om * np.minimum(1.0, p["beta"] / B)[D.user_index]


# 3. exact n_i read from the data, no charge
def _weights_exact_counts(D, **p):
    n = np.maximum(np.bincount(D.task_ids, minlength=p["m"]), 1).astype(float)  # BUG: private n_i
    return W.adaptive_weights(D, m=p["m"], beta=p["beta"], mu=p["mu"], n_counts=n, n_users=p["n_users"])


# 4. lambda inside the data-dependent sum (line 5 as printed), noise as Theorem 3.3
def _statistic_lambda_inside(D, **p):
    w = REF.weights(D, **p)
    A, b = K.statistic(D, w, m=p["m"], Gamma_x=p["Gamma_x"], Gamma_star=p["Gamma_star"])
    d = A.shape[-1]
    lam_sum = np.bincount(D.task_ids, weights=w, minlength=p["m"]) * p["Lambda"]  # BUG: sum_j w_ij lambda I
    return A + lam_sum[:, None, None] * np.eye(d), b


# 5. labels not clipped, b noise as if |y| <= Gamma_x Gamma_* (the authors' |y| <= 1)
def _statistic_unclipped_labels(D, **p):
    w = REF.weights(D, **p)
    x = K.clip_data(D.values.reshape(D.n, -1), D.labels, p["Gamma_x"], p["Gamma_star"])[0]
    A, b = K.statistic(D, w, m=p["m"], Gamma_x=p["Gamma_x"], Gamma_star=p["Gamma_star"])
    S = np.zeros((p["m"], x.shape[1]))
    np.add.at(S, D.task_ids, (w * D.labels)[:, None] * x)  # BUG: raw y
    return A, S


# 6. Algorithm 2 noise sigma = Gamma instead of Gamma sqrt(T/2)
def _gd_sigma_gamma(*, Gamma, **_):
    return Gamma  # BUG: no sqrt(T/2)


# 7. alpha beta / 2 charged for the PAIR (A-hat, b-hat)
def _rdp_half(orders, *, beta, **_):
    return np.asarray(orders) * beta / 2  # BUG: one release's RDP


# 8. Algorithm 2 line 5 as printed: the weighted SUM clipped to Gamma, record gradients not clipped
def _gradient_sum_clip(D, theta, **p):
    w = REF.weights(D, **p)
    x, y, t, _ = K.check_data(D, p["m"])
    th = np.asarray(theta, dtype=float)
    g = ((np.einsum("nd,nd->n", th[t], x) - y)[:, None] * x + p["Lambda"] * th[t]) * w[:, None]
    S = np.zeros_like(th)
    np.add.at(S, t, g)
    norms = np.linalg.norm(S, axis=1, keepdims=True)
    return S * (p["Gamma"] / np.maximum(norms, p["Gamma"]))  # BUG: only the sum clipped


# 9. b noise without the Gamma_* factor (line 6's Gamma_x^2 Gamma_* read as Gamma_x^2)
def _mechanism_b_noise_no_gamma_star(D, rng, size=None, **p):
    A, b = REF.statistic(D, **p)
    reps = 1 if size is None else size
    d = b.shape[1]
    Ah = A + p["Gamma_x"] ** 2 * K.symmetric_noise(rng, (reps, p["m"]), d)
    bh = b + p["Gamma_x"] ** 2 * rng.standard_normal((reps, p["m"], d))  # BUG: no Gamma_*
    return (Ah[0], bh[0]) if size is None else (Ah, bh)


BUGS = (
    PlantedBug(
        "eq12-clipping-skipped",
        "missing clipping",
        "w_ij = omega_i* without eq. (12): a user with many (or small) tasks spends sum omega_i^2 > beta "
        "(the concentration of Lemma A.4 holds only w.h.p.)",
        "derived here (Theorem 4.2 argues clipping 'does not occur w.h.p.'; dropping it breaks the "
        "probability-1 guarantee)",
        ("prop_budget_holds", "prop_sensitivity_every_user"),
        _variant("bug: eq. (12) skipped", weights=_weights_unclipped),
    ),
    PlantedBug(
        "budget-w-not-w-squared",
        "wrong norm",
        "the per-user budget checked as sum_i omega_i <= beta and scaled by beta / sum omega: for beta > 1 "
        "or few tasks the RDP budget sum w^2 exceeds beta",
        "a project review (Theorem 3.3's sum w_ij^2 read as sum w_ij)",
        ("prop_budget_holds",),
        _variant("bug: budget with w", weights=_weights_linear_budget),
    ),
    PlantedBug(
        "exact-counts-no-charge",
        "private input used as public",
        "n_i read from the data for eq. (11): removing one user moves every other user's weights, so "
        "Appendix A.1's sensitivity argument does not apply and nothing pays for n_i",
        "a project review (Assumption 4.1's public n_i replaced by the data's counts; Appendix C runs with exact "
        "n_i 'instead of estimating them privately')",
        ("prop_public_inputs_only",),
        _variant("bug: exact n_i from the data", weights=_weights_exact_counts),
    ),
    PlantedBug(
        "lambda-inside-the-sum",
        "sensitivity not counted",
        "line 5 as printed: sum_j w_ij (x x^T + lambda I) + noise, calibrated by Theorem 3.3, whose proof "
        "bounds only w_ij x x^T: removing user j also removes w_ij lambda I (Frobenius w_ij lambda sqrt(d))",
        "the paper, Algorithm 1 line 5 vs Appendix A.1",
        ("prop_sensitivity_every_user",),
        _variant("bug: lambda inside the sum", statistic=_statistic_lambda_inside),
    ),
    PlantedBug(
        "unclipped-labels-unit-bound",
        "sensitivity under-estimate",
        "labels not clipped to Gamma_x Gamma_*, b noise calibrated as if they were: a label y moves b-bar "
        "by |y| / (Gamma_x Gamma_*) times the declared sensitivity (3x for centred ratings near -3)",
        "found in the authors' public code (docs/papers/krichene2023.md: google-research dp_alternating_minimization, "
        "noise on b assumes |y| <= 1 on unclipped centred ratings)",
        ("prop_sensitivity_every_user", "audit"),
        _variant("bug: labels unclipped", statistic=_statistic_unclipped_labels),
    ),
    PlantedBug(
        "counts-used-twice-charged-once",
        "accounting",
        "the noisy counts released twice (two independent draws, one for the weights and one for the "
        "sampling) and charged once: the true mu is sqrt(2) times the charged one",
        "found in the authors' public code (docs/papers/krichene2023.md: 'Noisy counts are computed twice and "
        "charged once')",
        ("audit",),
    ),
    PlantedBug(
        "gd-sigma-gamma",
        "noise too small",
        "Algorithm 2 with sigma = Gamma instead of Gamma sqrt(T/2): each step is (alpha, alpha beta/2)-RDP, "
        "T steps (alpha, alpha T beta / 2), T/2 times the claim",
        "a project review (line 6's sqrt(T/2) dropped, i.e. the per-step budget of Theorem 3.11 not split over T)",
        ("prop_noise_scales_are_the_papers", "prop_rdp_covers_the_releases", "audit"),
        _variant("bug: GD sigma = Gamma", gd_noise_scale=_gd_sigma_gamma),
    ),
    PlantedBug(
        "rdp-half-for-the-pair",
        "accounting",
        "(alpha, alpha beta / 2) charged for releasing both A-hat and b-hat: that is one release's RDP; "
        "the pair composes to alpha beta (Appendix A.1), so the claimed mu is sqrt(2) too small",
        "a project review (Appendix A.1's per-release (alpha, alpha beta/2) taken for the total)",
        ("prop_rdp_covers_the_releases", "audit"),
        _variant("bug: alpha beta / 2", rdp=_rdp_half),
    ),
    PlantedBug(
        "gd-sum-clip-only",
        "clipping at the wrong place",
        "Algorithm 2 line 5 as printed: only the weighted sum sum_j w_ij grad l is clipped to Gamma; a user "
        "with a large gradient moves each of its tasks by up to 2 Gamma, not w_ij Gamma",
        "the paper, Algorithm 2 line 5 vs Appendix A.3 (derived here)",
        ("prop_gradient_sensitivity_every_user",),
        _variant("bug: GD sum clipped only", gradient=_gradient_sum_clip),
    ),
    PlantedBug(
        "b-noise-without-gamma-star",
        "formula transcription",
        "b-hat's noise Gamma_x^2 instead of Gamma_x^2 Gamma_* (line 6): for Gamma_* > 1 the b release is "
        "Gamma_* times less noisy than declared",
        "derived here (Appendix A.1 writes Gamma_x Gamma_y with Gamma_y = Gamma_x Gamma_*; line 6 "
        "Gamma_x^2 Gamma_*: one factor is easily lost)",
        ("prop_release_noise_is_symmetric_gaussian",),
        _variant("bug: b noise without Gamma_*", mechanism=_mechanism_b_noise_no_gamma_star),
    ),
)
