"""Planted bugs for Epasto et al. 2020 §3 (weighted averaging, sample limiting).

Each bug is a separate implementation (an ``Adapter`` with the stage signatures of
``userdp.properties.epasto2020``) with one named defect, recorded Wycheproof-style:
name, bug type, effect, source. ``tests/test_epasto2020.py`` asserts that a property
or the audit catches every one (``caught_by`` names which).
"""
from __future__ import annotations


import numpy as np

from userdp.properties.adapter import Adapter
from userdp.reference import epasto2020 as E
from userdp.reference.mechanisms import laplace_mechanism
from . import PlantedBug




def _h(D, B, epsilon, sigma):
    return E.optimal_h(D.counts, sigma, B, epsilon)


def _make(name, weights, sensitivity) -> Adapter:
    """Stages from a (possibly buggy) weights and sensitivity; the rest follows Algorithm 1."""
    def statistic(D, *, B, epsilon, sigma):
        return float(weights(D, B=B, epsilon=epsilon, sigma=sigma) @ D.values)

    def noise_scale(D, *, B, epsilon, sigma):
        return sensitivity(D, B=B, epsilon=epsilon, sigma=sigma) / epsilon

    def mechanism(D, rng, size=None, *, B, epsilon, sigma):
        sens = sensitivity(D, B=B, epsilon=epsilon, sigma=sigma)
        return laplace_mechanism(statistic(D, B=B, epsilon=epsilon, sigma=sigma), sens, epsilon, rng, size)

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
    s_i = D.counts[D.user_index]                         # s_q for each record, (n,)
    n_h_wrong = np.minimum(h, s_i).sum()                 # sums min(h, s_q) over RECORDS
    return np.minimum(h, s_i) / (s_i * n_h_wrong)


# 3 ------------------------------------------------------------------------------------
def _n_instead_of_nh_sensitivity(D, *, B, epsilon, sigma):
    return B * _h(D, B, epsilon, sigma) / D.n            # B h / n instead of B h / n_h


# 4 ------------------------------------------------------------------------------------
def _per_record_cap_weights(D, *, B, epsilon, sigma):
    h = _h(D, B, epsilon, sigma)
    per_record = np.minimum(h, 1.0) * np.ones(D.n)       # min(h, .) applied to each record
    return per_record / per_record.sum()


def _paper_formula_sensitivity(D, *, B, epsilon, sigma):
    h = _h(D, B, epsilon, sigma)
    return B * h / E.n_h(D.counts, h)                    # Lemma 3's cap h / n_h, assumed


# 5 ------------------------------------------------------------------------------------
def _sigma_from_data_weights(D, *, B, epsilon, sigma):
    sigma_hat = float(np.std(D.values))                  # data-dependent: leaks through h*
    return E.optimal_weights(D, epsilon, B, sigma=sigma_hat)[0]


# 6 ------------------------------------------------------------------------------------
def _sl_weights(D, *, B, epsilon, sigma):
    return E.sample_limiting_weights(D, E.best_integer_h(D.counts, sigma, B, epsilon))


def _sl_record_level_sensitivity(D, *, B, epsilon, sigma):
    h = E.best_integer_h(D.counts, sigma, B, epsilon)
    return B / E.n_h(D.counts, h)                        # one record's weight, not h records'


# 7 ------------------------------------------------------------------------------------
def _average_weights(D, *, B, epsilon, sigma):
    return np.full(D.n, 1.0 / D.n)                       # Lemma 3's form, but at h = s_m, not h*


# 8 ------------------------------------------------------------------------------------
def _sqrt_size_weights(D, *, B, epsilon, sigma):
    s_i = D.counts[D.user_index].astype(float)           # user q's total weight ~ sqrt(s_q)
    w = 1.0 / np.sqrt(s_i)
    return w / w.sum()


REFERENCE_UNDER_ADD_REMOVE = "reference optimal WA, claimed under add/remove-user"

BUGS = (
    PlantedBug("mean-user-weight-sensitivity", "sensitivity under-estimate",
               "noise calibrated to B * mean_l W_l = B/m instead of B * max_l W_l; the true "
               "loss is eps * m * max_l W_l", "issue 4 (Lemma 1 misread: average user instead of worst user)",
               ("prop_capped_per_user", "prop_noise_covers_user_weight"),  # audit: m max W_l = 1.01 on its default data (h* ~ s_1)
               _make("bug: mean user weight", _opt_weights, _mean_sensitivity)),
    PlantedBug("weights-not-normalised", "wrong normaliser",
               "n_h summed over records (sum_i min(h, s_q(i))) instead of users, so sum c_i < 1: "
               "a biased estimate (private, but not WA_c)", "issue 4; a vectorization slip",
               ("prop_weights_nonnegative_sum_to_one",),
               _make("bug: weights not normalised", _per_record_nh_weights,
                     _lemma1_sensitivity(_per_record_nh_weights))),
    PlantedBug("laplace-scale-uses-n", "sensitivity under-estimate",
               "Laplace scale B h / (eps n) instead of B h / (eps n_h); n >= n_h, so the "
               "true loss is eps * n / n_h", "issue 4 (n_h misread as the number of records)",
               ("prop_capped_per_user", "prop_noise_covers_user_weight", "audit"),
               _make("bug: n instead of n_h", _opt_weights, _n_instead_of_nh_sensitivity)),
    PlantedBug("cap-per-record", "contribution bound per record",
               "min(h, .) applied to each record's weight, so heavy users are not capped; noise "
               "still assumes a user total of h / n_h", "issue 4; the Amin/Epasto cap is per user",
               ("prop_capped_per_user", "prop_noise_covers_user_weight", "audit"),
               _make("bug: cap per record", _per_record_cap_weights, _paper_formula_sensitivity)),
    PlantedBug("sigma-from-data", "data-dependent weights",
               "h* chosen with sigma estimated from the values, so the weights and the noise scale "
               "depend on the changed user's values and Lemma 1 no longer applies",
               "derived here: Claim 1 needs sigma, and estimating it from D is the tempting shortcut",
               ("prop_sensitivity_bounds_all_neighbours",),
               _make("bug: sigma from data", _sigma_from_data_weights,
                     _lemma1_sensitivity(_sigma_from_data_weights))),
    PlantedBug("sample-limiting-record-sensitivity", "record-level instead of user-level",
               "sample limiting with noise B / (eps n_h) (one record) instead of B h / (eps n_h) "
               "(a user's h records); true loss eps * h", "issue 4 / Amin 2019 (tau counted per record)",
               ("prop_capped_per_user", "prop_noise_covers_user_weight", "audit"),
               _make("bug: sample limiting, record-level noise", _sl_weights, _sl_record_level_sensitivity)),
    PlantedBug("plain-average-not-optimal", "private but not the paper's algorithm",
               "c_i = 1/n (the plain mean, Lemma 3 at h = s_m) with its correct Lemma 1 noise: private, "
               "but its Lemma 2 variance is above Claim 1's minimum whenever one user is heavy",
               "review finding of issue 7 (the optimality property's oracle was the reference's own v)",
               ("prop_minimises_variance",),
               _make("bug: plain average", _average_weights, _lemma1_sensitivity(_average_weights))),
    PlantedBug("sqrt-size-weights", "weights not of Lemma 3's form",
               "user totals proportional to sqrt(s_l) (a heuristic between per-record and per-user "
               "averaging): private with its Lemma 1 noise, but not c_i = min(h, s_q)/(s_q n_h) for any h",
               "review finding of issue 7 (the form property's oracle was the reference's lemma3_weights)",
               ("prop_lemma3_form", "prop_minimises_variance"),
               _make("bug: sqrt-size weights", _sqrt_size_weights, _lemma1_sensitivity(_sqrt_size_weights))),
)
"""A seventh, reading-ambiguity bug needs no new code: the reference optimal WA mechanism
claimed under add/remove-user (``REFERENCE_UNDER_ADD_REMOVE``); the audit on add/remove
pairs catches it (tests/test_epasto2020.py)."""
