"""Planted bugs for Epasto et al. 2020 §3 (weighted averaging, sample limiting).

Each bug is a separate implementation (an ``Adapter`` with the stage signatures of
``userdp.properties.epasto2020``) with one named defect, recorded Wycheproof-style:
name, bug type, effect, source. ``tests/papers/epasto2020/test_epasto2020.py`` asserts that a property
or the audit catches every one (``caught_by`` names which).
"""

from __future__ import annotations


import numpy as np

from userdp.properties.adapter import Adapter
from userdp.reference import epasto2020 as E
from userdp.reference.mechanisms import laplace_mechanism
from planted import PlantedBug


def _h(D, B, epsilon, sigma):
    return E.optimal_h(D.counts, sigma, B, epsilon)


def _make(name, weights, sensitivity, statistic=None, noise_scale=None) -> Adapter:
    """Stages from a (possibly buggy) weights and sensitivity, and optionally a buggy
    statistic or noise scale; the rest follows Algorithm 1."""

    def weighted_average(D, *, B, epsilon, sigma):
        return float(weights(D, B=B, epsilon=epsilon, sigma=sigma) @ D.values)

    def laplace_scale(D, *, B, epsilon, sigma):
        return sensitivity(D, B=B, epsilon=epsilon, sigma=sigma) / epsilon

    own_scale = noise_scale
    statistic = statistic or weighted_average
    noise_scale = noise_scale or laplace_scale

    def mechanism(D, rng, size=None, *, B, epsilon, sigma):
        beta_hat = statistic(D, B=B, epsilon=epsilon, sigma=sigma)
        if own_scale is None:
            return laplace_mechanism(beta_hat, sensitivity(D, B=B, epsilon=epsilon, sigma=sigma), epsilon, rng, size)
        b = own_scale(D, B=B, epsilon=epsilon, sigma=sigma)  # Lap(b) = laplace_mechanism(., b eps, eps)
        return laplace_mechanism(beta_hat, b * epsilon, epsilon, rng, size)

    return Adapter(name, weights, statistic, sensitivity, noise_scale, mechanism)


def _opt_weights(D, *, B, epsilon, sigma):
    return E.optimal_weights(D, epsilon, B, sigma=sigma)[0]


def _lemma1_sensitivity(weights):
    def sensitivity(D, *, B, epsilon, sigma):
        return B * float(D.user_sums(weights(D, B=B, epsilon=epsilon, sigma=sigma)).max())

    return sensitivity


# 1 ------------------------------------------------------------------------------------
def _mean_sensitivity(D, *, B, epsilon, sigma):
    return B * float(D.user_sums(_opt_weights(D, B=B, epsilon=epsilon, sigma=sigma)).mean())


# 2 ------------------------------------------------------------------------------------
def _per_record_nh_weights(D, *, B, epsilon, sigma):
    h = _h(D, B, epsilon, sigma)
    s_i = D.counts[D.user_index]  # s_q for each record, (n,)
    n_h_wrong = np.minimum(h, s_i).sum()  # sums min(h, s_q) over RECORDS
    return np.minimum(h, s_i) / (s_i * n_h_wrong)


# 3 ------------------------------------------------------------------------------------
def _n_instead_of_nh_sensitivity(D, *, B, epsilon, sigma):
    return B * _h(D, B, epsilon, sigma) / D.n  # B h / n instead of B h / n_h


# 4 ------------------------------------------------------------------------------------
def _per_record_cap_weights(D, *, B, epsilon, sigma):
    h = _h(D, B, epsilon, sigma)
    per_record = np.minimum(h, 1.0) * np.ones(D.n)  # min(h, .) applied to each record
    return per_record / per_record.sum()


def _paper_formula_sensitivity(D, *, B, epsilon, sigma):
    h = _h(D, B, epsilon, sigma)
    return B * h / E.n_h(D.counts, h)  # Lemma 3's cap h / n_h, assumed


# 5 ------------------------------------------------------------------------------------
def _sigma_from_data_weights(D, *, B, epsilon, sigma):
    sigma_hat = float(np.std(D.values))  # data-dependent: leaks through h*
    if sigma_hat < 1e-50:  # the reference refuses 0 < sigma < 1e-50 (its
        sigma_hat = 0.0  # supported range): keep the bug the leak alone
    return E.optimal_weights(D, epsilon, B, sigma=sigma_hat)[0]


# 6 ------------------------------------------------------------------------------------
def _sl_weights(D, *, B, epsilon, sigma):
    return E.sample_limiting_weights(D, E.best_integer_h(D.counts, sigma, B, epsilon))


def _sl_record_level_sensitivity(D, *, B, epsilon, sigma):
    h = E.best_integer_h(D.counts, sigma, B, epsilon)
    return B / E.n_h(D.counts, h)  # one record's weight, not h records'


# 7 ------------------------------------------------------------------------------------
def _scale_times_eps(D, *, B, epsilon, sigma):
    return _lemma1_sensitivity(_opt_weights)(D, B=B, epsilon=epsilon, sigma=sigma) * epsilon  # Delta * eps


# 8 ------------------------------------------------------------------------------------
def _plain_mean_statistic(D, *, B, epsilon, sigma):
    return float(np.mean(D.values))  # the weights are computed, then not used


# 9 ------------------------------------------------------------------------------------
def _unsplit_lemma3_weights(D, *, B, epsilon, sigma):
    h = _h(D, B, epsilon, sigma)
    s_i = D.counts[D.user_index]  # s_q for each record, (n,)
    w = np.minimum(h, s_i)  # min(h, s_q) on EVERY record of user q
    return w / w.sum()


# 10 -----------------------------------------------------------------------------------
def _equal_user_weights(D, *, B, epsilon, sigma):
    return E.lemma3_weights(D, int(D.counts.min()))  # h = s_1: c_i = 1 / (m s_q), whatever h* is


REFERENCE_UNDER_ADD_REMOVE = "reference optimal WA, claimed under add/remove-user"

BUGS = (
    PlantedBug(
        "mean-user-weight-sensitivity",
        "sensitivity under-estimate",
        "noise calibrated to B * mean_l W_l = B/m instead of B * max_l W_l; the true loss is eps * m * max_l W_l",
        "a project review (Lemma 1 misread: average user instead of worst user)",
        (
            "prop_capped_per_user",
            "prop_noise_covers_user_weight",
        ),  # audit: m max W_l = 1.01 on its default data (h* ~ s_1)
        _make("bug: mean user weight", _opt_weights, _mean_sensitivity),
    ),
    PlantedBug(
        "weights-not-normalised",
        "wrong normaliser",
        "n_h summed over records (sum_i min(h, s_q(i))) instead of users, so sum c_i < 1: "
        "a biased estimate (private, but not WA_c)",
        "a project review; a vectorization slip",
        ("prop_weights_nonnegative_sum_to_one", "prop_minimises_variance"),
        _make("bug: weights not normalised", _per_record_nh_weights, _lemma1_sensitivity(_per_record_nh_weights)),
    ),
    PlantedBug(
        "laplace-scale-uses-n",
        "sensitivity under-estimate",
        "Laplace scale B h / (eps n) instead of B h / (eps n_h); n >= n_h, so the true loss is eps * n / n_h",
        "a project review (n_h misread as the number of records)",
        ("prop_capped_per_user", "prop_noise_covers_user_weight", "audit"),
        _make("bug: n instead of n_h", _opt_weights, _n_instead_of_nh_sensitivity),
    ),
    PlantedBug(
        "cap-per-record",
        "contribution bound per record",
        "min(h, .) applied to each record's weight, so heavy users are not capped; noise "
        "still assumes a user total of h / n_h",
        "a project review; the Amin/Epasto cap is per user",
        ("prop_capped_per_user", "prop_noise_covers_user_weight", "audit"),
        _make("bug: cap per record", _per_record_cap_weights, _paper_formula_sensitivity),
    ),
    PlantedBug(
        "sigma-from-data",
        "data-dependent weights",
        "h* chosen with sigma estimated from the values, so the weights and the noise scale "
        "depend on the changed user's values and Lemma 1 no longer applies",
        "derived here: Claim 1 needs sigma, and estimating it from D is the tempting shortcut",
        (
            "prop_sensitivity_bounds_all_neighbours",
            "prop_sensitivity_bounds_sampled_neighbour",
            "prop_minimises_variance",
        ),
        _make("bug: sigma from data", _sigma_from_data_weights, _lemma1_sensitivity(_sigma_from_data_weights)),
    ),
    PlantedBug(
        "sample-limiting-record-sensitivity",
        "record-level instead of user-level",
        "sample limiting with noise B / (eps n_h) (one record) instead of B h / (eps n_h) "
        "(a user's h records); true loss eps * h",
        "a project review / Amin 2019 (tau counted per record)",
        ("prop_capped_per_user", "prop_noise_covers_user_weight", "audit"),
        _make("bug: sample limiting, record-level noise", _sl_weights, _sl_record_level_sensitivity),
    ),
    PlantedBug(
        "laplace-scale-times-eps",
        "scale and rate confused",
        "Laplace scale Delta * eps instead of Delta / eps: the release is (1/eps)-DP, so it "
        "has too little noise whenever eps < 1",
        "derived here: numpy's laplace(loc, scale) takes a scale, Lap(1/eps) a rate is read as eps",
        ("prop_noise_scale_calibrated", "prop_noise_covers_user_weight"),
        _make("bug: scale Delta * eps", _opt_weights, _lemma1_sensitivity(_opt_weights), noise_scale=_scale_times_eps),
    ),
    PlantedBug(
        "statistic-ignores-weights",
        "parameter computed but not applied",
        "beta_hat = mean(y) while the weights and noise are those of Lemma 3: the release is not WA_c, "
        "and a heavy user moves it by B s_l / n, more than the B max_l W_l the noise covers",
        "derived here: a refactor that keeps the weights for the noise scale only",
        ("prop_statistic_is_weighted_average",),
        _make("bug: plain mean", _opt_weights, _lemma1_sensitivity(_opt_weights), statistic=_plain_mean_statistic),
    ),
    PlantedBug(
        "lemma3-weight-not-split",
        "wrong weight formula",
        "c_i proportional to min(h, s_q) on every record of user q (the 1/s_q split dropped): a heavy "
        "user's total grows with s_q, the weights are not Lemma 3's and not optimal (private: Lemma 1)",
        "derived here: Lemma 3's per-user weight min(h, s_q)/n_h read as a per-record weight",
        ("prop_lemma3_form", "prop_minimises_variance"),
        _make(
            "bug: Lemma 3 weight not split over the user's records",
            _unsplit_lemma3_weights,
            _lemma1_sensitivity(_unsplit_lemma3_weights),
        ),
    ),
    PlantedBug(
        "equal-user-weights",
        "sub-optimal parameter",
        "every user gets total weight 1/m (Lemma 3 at h = s_1, the average of user means) whatever h* "
        "is: private and unbiased, but its variance exceeds Claim 1's minimum when h* > s_1",
        "derived here: the usual user-level default 'one vote per user' in place of Claim 1's h*",
        ("prop_minimises_variance",),
        _make("bug: equal user weights", _equal_user_weights, _lemma1_sensitivity(_equal_user_weights)),
    ),
)
"""A seventh, reading-ambiguity bug needs no new code: the reference optimal WA mechanism
claimed under add/remove-user (``REFERENCE_UNDER_ADD_REMOVE``); the audit on add/remove
pairs catches it (tests/papers/epasto2020/test_epasto2020.py)."""
