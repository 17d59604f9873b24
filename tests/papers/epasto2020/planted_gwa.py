"""Planted bugs for Epasto et al. 2020 §5 (GWA_C and sample-limited OLS, label privacy).

Each bug is a separate implementation (an ``Adapter`` with the stage signatures of
``userdp.properties.epasto2020_gwa``) with one named defect, recorded Wycheproof-style:
name, bug type, effect, source. ``tests/papers/epasto2020/test_epasto2020_gwa.py`` asserts that a property
or the audit catches every one (``caught_by`` names which).
"""

from __future__ import annotations


import numpy as np

from userdp.properties.adapter import Adapter
from userdp.properties.epasto2020_gwa import _gwa_weights, _sl_weights
from userdp.reference import epasto2020_gwa as G
from userdp.reference._checks import check_in_interval
from userdp.reference.mechanisms import laplace_mechanism
from planted import PlantedBug


def _make(name, weights, sensitivity, symmetric=False, estimator=None) -> Adapter:
    """Stages from a (possibly buggy) C and sensitivity; the rest follows Algorithm 3.
    ``symmetric`` accepts labels in [-B, B] instead of the paper's [0, B]; ``estimator``,
    if given, is the C the statistic applies (instead of ``weights``)."""
    applied = estimator or weights

    def statistic(D, *, B, epsilon, sigma):
        y = check_in_interval(D.labels, -B if symmetric else 0.0, B, "labels")
        return applied(D, B=B, epsilon=epsilon, sigma=sigma) @ y

    def noise_scale(D, *, B, epsilon, sigma):
        return sensitivity(D, B=B, epsilon=epsilon, sigma=sigma) / epsilon

    def mechanism(D, rng, size=None, *, B, epsilon, sigma):
        sens = sensitivity(D, B=B, epsilon=epsilon, sigma=sigma)
        return laplace_mechanism(statistic(D, B=B, epsilon=epsilon, sigma=sigma), sens, epsilon, rng, size)

    return Adapter(name, weights, statistic, sensitivity, noise_scale, mechanism)


def _sens(weights, per_user):
    """B * max_l per_user(C restricted to S_l), a (d, s_l) block."""

    def sensitivity(D, *, B, epsilon, sigma):
        C = weights(D, B=B, epsilon=epsilon, sigma=sigma)
        return B * max(float(per_user(C[:, D.records_of(u)])) for u in D.users)

    return sensitivity


def _single_row(Cl):  # 1: row j = 0 only
    return np.abs(Cl[0]).sum()


def _per_record_max(Cl):  # 2: the heaviest record, not the user's sum
    return np.abs(Cl).sum(axis=0).max()


def _signed_sum(Cl):  # 3: |sum_i c_ji| instead of sum_i |c_ji|
    return np.abs(Cl.sum(axis=1)).sum()


def _paper(Cl):
    return np.abs(Cl).sum()


def _sl_one_dim_sensitivity(D, *, B, epsilon, sigma):
    """5: §3.2's B h / n_h (the 1-D sample-limiting scale) reused for regression."""
    C = _sl_weights(D, B=B, epsilon=epsilon, sigma=sigma)
    T = np.flatnonzero(np.abs(C).sum(axis=0) > 0)
    counts_T = np.bincount(D.user_index[T], minlength=D.m)
    h = int(counts_T.max())
    return B * h / T.size


def _label_blend_weights(D, *, B, epsilon, sigma):
    """6: C_opt blended towards OLS by the labels' mean: C X = I still, but C reads y."""
    public = D.with_fields(labels=None)  # X and S_l: C_opt is cached on them
    C_opt = _gwa_weights(public, B=B, epsilon=epsilon, sigma=sigma)
    a = float(np.mean(D.labels)) / B  # in [0, 1]: data-dependent
    return (1 - a) * C_opt + a * G.ols_C(G.features(D))


def _ols_weights(D, *, B, epsilon, sigma):
    """7: the OLS estimator C = (X^T X)^-1 X^T: C X = I and private, but not Theorem 6's optimum."""
    return G.ols_C(G.features(D))


def _ridge_weights(D, *, B, epsilon, sigma):
    """8: a ridge-regularised C = (X^T X + I)^-1 X^T: C X != I, so beta_hat is biased."""
    X = G.features(D)
    return np.linalg.solve(X.T @ X + np.eye(X.shape[1]), X.T)


BUGS = (
    PlantedBug(
        "gwa-b-single-row",
        "sensitivity under-estimate",
        "b = B eps^-1 max_l sum_{i in S_l} |c_{1,i}| (one row of C) instead of the sum "
        "over j = 1..d; the true loss is eps * max_l W_l / max_l W_l^(row 1)",
        "a project review (Algorithm 3 line 2 misread as Lemma 1 applied per coordinate)",
        # not the audit: on the orthogonal audit data the optimal C equalises the
        # row-wise user maxima, so one row happens to give the right b there
        ("prop_noise_scale_matches_b", "prop_sensitivity_bounds_all_neighbours"),
        _make("bug: b from a single row of C", _gwa_weights, _sens(_gwa_weights, _single_row)),
    ),
    PlantedBug(
        "gwa-b-per-record-max",
        "contribution bound per record",
        "b uses max_i sum_j |c_{j,i}| (one record) instead of the per-user sum over "
        "i in S_l; a user with s_l records gets up to s_l times too little noise",
        "a project review (record-level DP calibration in a user-level algorithm)",
        ("prop_noise_scale_matches_b", "prop_sensitivity_bounds_all_neighbours", "audit"),
        _make("bug: b per record", _gwa_weights, _sens(_gwa_weights, _per_record_max)),
    ),
    PlantedBug(
        "gwa-b-signed-sum",
        "sensitivity under-estimate",
        "b uses sum_j |sum_{i in S_l} c_{j,i}|: entries of opposite sign cancel, yet the "
        "labels of one user can move with the signs of C (y_i = B where c_{j,i} > 0)",
        "derived here: copying Lemma 1 (c >= 0, so sum c_i = sum |c_i|) to signed C",
        ("prop_noise_scale_matches_b", "prop_sensitivity_bounds_all_neighbours"),
        _make("bug: b with signed sums", _gwa_weights, _sens(_gwa_weights, _signed_sum)),
    ),
    PlantedBug(
        "gwa-labels-in-minus-B-B",
        "input range wider than calibrated",
        "labels accepted in [-B, B] while b is calibrated to the range [0, B] of §5: one "
        "user moving all labels -B -> +B shifts beta_hat by 2 Delta_1; true loss 2 eps",
        "a project review ('y in [-B, B] or [0, B]'); the paper assumes y_i in [0, B]",
        ("prop_refuses_labels_outside_range", "audit"),
        _make("bug: labels in [-B, B]", _gwa_weights, _sens(_gwa_weights, _paper), symmetric=True),
    ),
    PlantedBug(
        "sl-ols-one-dimensional-scale",
        "formula copied from the wrong section",
        "sample-limited OLS noised with §3.2's B h / (eps n_h) instead of §5.2's "
        "B eps^-1 max_l sum_j sum_{i in S_l^s} |c^s_{j,i}|; wrong whenever X is not all ones",
        "derived here: §5.2 'We generalize the sample limiting algorithm in Section 3.2 to higher dimensions'",
        (
            "prop_noise_scale_matches_b",
            "prop_sensitivity_bounds_all_neighbours",
            "prop_sensitivity_bounds_sampled_neighbour",
            "audit",
        ),
        _make("bug: sample-limited OLS with the 1-D scale", _sl_weights, _sl_one_dim_sensitivity),
    ),
    PlantedBug(
        "gwa-C-reads-labels",
        "data-dependent weights",
        "C = (1 - a) C_opt + a C_ols with a = mean(y) / B: still C X = I, but C and b change when one "
        "user's labels change, so Theorem 6's sensitivity argument (C fixed by public data) fails",
        "derived here: a data-adaptive shrinkage towards OLS, tuned on the labels it then averages",
        ("prop_weights_ignore_labels",),
        _make("bug: C blended by the labels' mean", _label_blend_weights, _sens(_label_blend_weights, _paper)),
    ),
    PlantedBug(
        "gwa-ols-C",
        "sub-optimal parameter",
        "GWA with the OLS C: unbiased and private (b from its own C), but its total variance exceeds "
        "Theorem 6's minimum whenever users are imbalanced",
        "derived here: OLS is the natural C with C X = I; §5 shows it is not the optimal one",
        ("prop_minimises_total_variance",),
        _make("bug: OLS C", _ols_weights, _sens(_ols_weights, _paper)),
    ),
    PlantedBug(
        "gwa-ridge-C",
        "biased estimator",
        "C = (X^T X + I)^-1 X^T (ridge): private with b from its own C, but C X != I, so beta_hat "
        "is biased and Theorem 6's variance is not its error",
        "derived here: regularising the normal equations, common in regression code, breaks "
        "Algorithm 3's constraint C X = I",
        ("prop_CX_identity", "prop_minimises_total_variance"),
        _make("bug: ridge C", _ridge_weights, _sens(_ridge_weights, _paper)),
    ),
    PlantedBug(
        "gwa-statistic-uses-ols",
        "parameter computed but not applied",
        "b is calibrated to the optimal C, but beta_hat = C_ols y: the release is not GWA_C, and a "
        "user with a larger OLS weight than optimal weight moves it by more than b covers",
        "derived here: the noise stage and the estimate stage built from different C",
        ("prop_statistic_is_C_y",),
        _make("bug: statistic with the OLS C", _gwa_weights, _sens(_gwa_weights, _paper), estimator=_ols_weights),
    ),
)


# ------------------------------------------------- GWA_C for a given C (the GWAC sub-suite)
def _make_c(name, per_user=_paper, symmetric=False, check_CX=True, applied=None) -> Adapter:
    """GWA_C stages for a given C (``P.GWAC_PROPERTIES``' call shape), one defect each:
    ``per_user`` the user bound b is built from, ``symmetric`` labels in [-B, B],
    ``check_CX`` False accepts any C, ``applied`` the C the statistic uses instead of C."""

    def weights(D, *, C, B, epsilon):
        return G.check_C(C, D) if check_CX else np.asarray(C, dtype=float)

    def statistic(D, *, C, B, epsilon):
        y = check_in_interval(D.labels, -B if symmetric else 0.0, B, "labels")
        Cw = weights(D, C=C, B=B, epsilon=epsilon)
        return (Cw if applied is None else applied(D)) @ y

    def sensitivity(D, *, C, B, epsilon):
        Cw = weights(D, C=C, B=B, epsilon=epsilon)
        return B * max(float(per_user(Cw[:, D.records_of(u)])) for u in D.users)

    def noise_scale(D, *, C, B, epsilon):
        return sensitivity(D, C=C, B=B, epsilon=epsilon) / epsilon

    def mechanism(D, rng, size=None, *, C, B, epsilon):
        return laplace_mechanism(
            statistic(D, C=C, B=B, epsilon=epsilon), sensitivity(D, C=C, B=B, epsilon=epsilon), epsilon, rng, size
        )

    return Adapter(name, weights, statistic, sensitivity, noise_scale, mechanism)


GWAC_BUGS = (
    PlantedBug(
        "gwac-b-single-row",
        "sensitivity under-estimate",
        "b from row 1 of the given C only, not the sum over j = 1..d",
        "a project review (Algorithm 3 line 2 misread as Lemma 1 per coordinate); the release-only form",
        (
            "prop_gwac_noise_scale_matches_b",
            "prop_gwac_sensitivity_bounds_all_neighbours",
            "prop_gwac_sensitivity_bounds_sampled_neighbour",
        ),
        _make_c("bug: GWA_C, b from a single row", per_user=_single_row),
    ),
    PlantedBug(
        "gwac-labels-in-minus-B-B",
        "input range wider than calibrated",
        "labels accepted in [-B, B] with b calibrated to [0, B]: true loss 2 eps",
        "a project review ('y in [-B, B] or [0, B]'); the paper assumes y_i in [0, B]",
        ("prop_gwac_refuses_labels_outside_range",),
        _make_c("bug: GWA_C, labels in [-B, B]", symmetric=True),
    ),
    PlantedBug(
        "gwac-no-CX-check",
        "parameter outside the algorithm's domain",
        "any C accepted: a C with C X != I gives a biased beta_hat that nothing reports",
        "a project review (found in an independently written GWA_C)",
        ("prop_gwac_refuses_C_without_identity",),
        _make_c("bug: GWA_C without the C X = I check", check_CX=False),
    ),
    PlantedBug(
        "gwac-statistic-ignores-C",
        "parameter computed but not applied",
        "beta_hat = X^+ y whatever C is given, while b is calibrated to C",
        "derived here: a GWA_C that recomputes OLS inside",
        ("prop_gwac_statistic_is_C_y",),
        _make_c("bug: GWA_C applies X^+, not C", applied=lambda D: G.ols_C(G.features(D))),
    ),
)


def optimal_C_first_working_set_only(D, B, epsilon, sigma, rtol=1e-6) -> G.OptimalC:
    """Planted bug in optimal_C's working set: the first working set's solution, zero outside
    T, certified on T only (the violators outside T are never looked for). Its C is feasible
    and its gap on T is small; on all records it is not optimal. Source: derived here (the
    shortcut the loop in ``optimal_C`` exists to avoid). Caught by
    ``test_planted_working_set_without_growth_is_caught``."""
    X = G.features(D)
    T = G._initial_working_set(D, G.ols_C(X))
    sub = D.take(np.flatnonzero(T))
    res = G._solve(sub, G.features(sub), B, epsilon, sigma, G._kappa(B, epsilon, X.shape[1]), rtol, 500)
    C = np.zeros((X.shape[1], D.n))
    C[:, T] = res.C
    return G.OptimalC(G._feasible(C, X), res.variance, res.lower_bound, res.gap, res.Lambda, res.mu, res.iterations)
