"""Validation spec for the WME baseline of Zhao et al. 2024 (Levy et al. 2021's two-stage
winsorized mean, ``reference/zhao2024_wme.py``): ``zhao2024.wme``, d = 1. See the comment above
``WME_M`` for what is compared and why only d = 1.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from userdp.reference import zhao2024_wme as W
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import REPLACE_USER_ITEMS, NeighbourPair

from userdp.audits.papers.zhao2024.audits import R

from userdp.audits.validation import AuditDesign, Case, Param, Refusal, ValidationSpec, register
from userdp.audits.validation._data import seeded
from userdp.audits.validation.pair_search import Domain
from userdp.audits.papers.zhao2024.specs import V_DELTA, V_EPS

__all__: list[str] = []  # registers its entries at import; nothing else is imported from it

# The reference (``W.wme_mechanism``) always releases. In d = 1 its release is
# means[j] + N(0, sigma_2^2), j the noisy argmax of the histogram (stage I) and means[j] the
# mean of the local averages clipped to the interval of bin j: a MIXTURE over j, so the
# noise-free point is not one statistic. ``_wme_statistic`` is the exact mean of the release,
# sum_j P(j) means[j], with P(j) = int phi(z) prod_{k != j} Phi((c_j - c_k) / sigma_1 + z) dz (the
# argmax of independent Gaussians) by the trapezoid rule on [-12, 12] (10^4 steps: error far
# below 1e-9, the tails beyond 12 carry < 1e-32): validate then tests mean releases against it
# with its one-sample z test. Only d = 1 is validated: in d > 1 each release draws its own
# rotation, so its law has no closed form (and the registry audits d = 1 only, for time).
WME_M = 50  # items per user: tau = R sqrt(2 ln 40 / 50) = 0.384 R, K = 6 bins, 3 tau = 1.15 R < 2 R


def _wme_users(values, m: int = WME_M) -> UserDataset:
    """One user per value, each holding m items all equal to it (its local average)."""
    values = np.asarray(values, float)
    return UserDataset(np.repeat(values, m), np.repeat(np.arange(values.size), m))


def localisation_pair() -> NeighbourPair:
    """11 users at -0.9 R and 10 at +0.9 R (50 items each) vs one of the first moved to +0.9 R:
    the histogram's top bin flips between the two ends (counts 11:10 vs 10:11). The two
    intervals [-1.38, -0.23] R and [0.54, 1.69] R clip the other cluster, so the two possible
    releases are 1.3 R apart, 9 sigma_2 (eps = 3); the reference picks either with
    probabilities that differ by the Gaussian noise on one count (sigma_1 = 3.8)."""
    D = _wme_users(np.r_[np.full(11, -0.9), np.full(10, 0.9)] * R)
    v = np.array(D.values)
    v[D.user_ids == 0] = 0.9 * R
    return NeighbourPair(
        D,
        D.with_fields(values=v),
        REPLACE_USER_ITEMS.name,
        0,
        "11 users at -0.9 R, 10 at +0.9 R vs one moved across (the top bin flips)",
    )


def width_pair(n: int = 30) -> NeighbourPair:
    """n users at 0 (50 items each: all in bin 2, interval [-0.62, 0.54] R of width 3 tau) with
    user 0 at -R vs +R: clipped to either end, the mean moves by 3 tau / n = Delta_2 exactly; the
    histogram moves one count between two empty bins (the argmax stays put)."""
    v = np.zeros(n)
    v[0] = -R
    D = _wme_users(v)
    w = np.array(D.values)
    w[D.user_ids == 0] = R
    return NeighbourPair(
        D,
        D.with_fields(values=w),
        REPLACE_USER_ITEMS.name,
        0,
        f"{n} users at 0, user 0 at -R vs +R (the interval's full width)",
    )


def _wme_generated(n: int = 200, seed: int = 11) -> UserDataset:
    """n users with m_l = 20 + ceil(200 / l) items (220 down to 21), items uniform on [-R, R]
    around a user-level offset in [-0.3, 0.3] R, clamped to [-R, R]."""
    rng = np.random.default_rng(seed)
    m = 20 + np.ceil(200 / np.arange(1, n + 1)).astype(np.int64)
    ids = np.repeat(np.arange(n), m)
    x = np.clip(rng.uniform(-0.3, 0.3, n)[ids] + rng.uniform(-0.7, 0.7, ids.size), -1, 1)
    return UserDataset(x * R, ids)


def _wme_cases() -> list:
    """Differential cases (eps = 3, delta = 1e-5, R = 1):

    0. ``localisation_pair``'s first: the noisy argmax picks either end (a release mixture
       1.3 R wide): an argmax without noise, or one shared by the releases of a call, shows.
    1. 200 imbalanced users (m >= 21: tau = 0.59 R, K = 4, 3 tau < 2 R): the chosen bin's
       interval clips the upper tail; sigma_2 = 0.024 resolves a change of the clipping
       interval (the bin alone instead of bin +- tau) and a sigma_2 off by a factor.
    2. ``width_pair``'s second: 29 users at 0 and one at +R (clipped to the interval's top)."""
    p = {"epsilon": V_EPS, "delta": V_DELTA, "R": R}
    w = width_pair()
    pair = NeighbourPair(
        w.second,
        w.first,
        w.relation,
        w.unit,
        "user 0 from +R to -R: the mean moves by 3 tau / n = Delta_2 (the bin is fixed)",
    )
    move = abs(float(_wme_statistic(w.first, **p)[0] - _wme_statistic(w.second, **p)[0]))
    d2 = min(3 * W.wme_radius(w.first.counts, R), 2 * R) / w.first.m
    return [
        Case(localisation_pair().first, p, "11 users at -0.9 R, 10 at +0.9 R (the top bin is a coin toss)"),
        Case(_wme_generated(), p, "200 imbalanced users (m >= 21), items uniform around user offsets"),
        Case(w.second, p, "29 users at 0, one at +R (clipped)", pair=pair, pair_share=min(1.0, move / d2)),
    ]


def _wme_designs() -> list:
    """Audit designs, claim ``wme_claim(3, 1e-5)``: (3, 1e-5)-DP and mu-GDP with
    mu = sqrt(mu_1^2 + mu_2^2) = 0.527 (the trade-off audit of the GDP claim is what gives the
    power here: an (eps, 1e-5) test at 10^5 samples reaches only eps_lb ~ 5 at mu ~ 2).

    - "localisation": ``localisation_pair``. The reference's two stages are each Gaussian
      calibrated; the top bin's choice is mu_1-GDP. An argmax of the EXACT counts flips
      deterministically between the two ends, so the releases are N(-0.58, 0.14^2) vs
      N(0.71, 0.14^2): mu = 9, far above 0.527.
    - "interval width": ``width_pair``. The move 3 tau / n is exactly Delta_2, so stage II is
      mu_2 = 0.373-GDP; noise scaled to the bin width tau instead of the interval's 3 tau
      makes it 1.12-GDP (eps 5.0 at delta 1e-5), above the claimed mu = 0.527.
    """
    claim = W.wme_claim(V_EPS, V_DELTA)
    p = {"epsilon": V_EPS, "delta": V_DELTA, "R": R}
    return [
        AuditDesign([localisation_pair()], p, claim, "localisation: the top bin flips between the two ends"),
        AuditDesign([width_pair()], p, claim, "interval width: a user from one end of the interval to the other"),
    ]


def _wme_statistic(dataset, *, epsilon, delta, R) -> np.ndarray:
    """The exact mean of the d = 1 release: sum_j P(j) means[j] (see the comment above ``WME_M``)."""
    y = dataset.local_averages()
    tau = W.wme_radius(dataset.counts, R)
    K = max(1, math.ceil(2 * R / tau))
    counts = W.wme_histogram(dataset, R)  # (1, K) for d = 1
    sigma1, _ = W.wme_noise_scales(dataset, epsilon, delta, R)
    c = np.asarray(counts, float).reshape(-1)
    z = np.linspace(-12.0, 12.0, 10_001)
    phi = stats.norm.pdf(z)
    means = np.empty(K)
    P = np.empty(K)
    for j in range(K):
        lo, hi = -R + (j - 1) * tau, -R + (j + 2) * tau
        means[j] = float(np.mean(np.clip(y, lo, hi)))
        others = np.delete(c, j)
        f = phi * np.prod(stats.norm.cdf((c[j] - others)[:, None] / sigma1 + z[None, :]), axis=0)
        P[j] = np.trapezoid(f, z) if hasattr(np, "trapezoid") else np.trapz(f, z)
    return np.array([float(P @ means / P.sum())])


def _wme_generate(seed: int) -> list:
    """Two cases per seed: few users (12) of many items, and many users (150) of skewed counts (>= 21)."""
    out = []
    for k, (n, shape) in enumerate(((12, "balanced"), (150, "skewed"))):
        g = seeded("zhao2024.wme", seed, k)
        m = np.full(n, 60) if shape == "balanced" else 20 + np.ceil(150 / np.arange(1, n + 1)).astype(np.int64)
        ids = np.repeat(np.arange(n), m)
        x = np.clip(g.uniform(-0.4, 0.4, n)[ids] + g.uniform(-0.6, 0.6, ids.size), -1, 1)
        out.append(
            Case(
                UserDataset(np.round(x, 4) * R, ids),
                {"epsilon": V_EPS, "delta": V_DELTA, "R": R},
                f"{n} users, {shape} item counts, items around user offsets",
                origin="generated",
            )
        )
    return out


def _wme_domain(seed: int) -> Domain:
    """The pair search's space (replace-user-items, eps = 3, R = 1): one user's items (the lightest, one
    of median count, the heaviest) all moved between two points of the support [-R, R] (its ends,
    centre, interior points and seeded ones: every pair). Bases: the localisation dataset (the top
    bin a coin toss), the width dataset (30 users at 0, user 0 at -R: the interval's full width)
    and 40 imbalanced users (m = 20 + ceil(200 / l)): 275 candidates (under load a batched target
    replayed 197 of them within the budget, one release per call 47)."""
    return Domain(
        "replace-user-items",
        {"epsilon": V_EPS, "delta": V_DELTA, "R": R},
        (localisation_pair().first, width_pair().first, _wme_generated(40, 11)),
        (-R, R),
    )


def _wme_refusals() -> list:
    D = _wme_users([0.0, 0.5])
    p = {"epsilon": V_EPS, "delta": V_DELTA, "R": R}
    return [
        Refusal(Case(D, {**p, "epsilon": 0.0}, "epsilon = 0"), "budget", "epsilon > 0"),
        Refusal(Case(D, {**p, "R": -1.0}, "R = -1"), "parameter", "R > 0"),
        Refusal(
            Case(_wme_users([0.0, 2.0]), p, "an item at 2 R, outside the declared support [-R, R]"),
            "data",
            "every item in [-R, R]",
        ),
    ]


def _wme_project(dataset: UserDataset, params) -> UserDataset:
    """every item clipped to [-R, R]"""
    return dataset.with_fields(values=np.clip(dataset.values, -params["R"], params["R"]))


register(
    ValidationSpec(
        algorithm="zhao2024.wme",
        reference=lambda dataset, rng, size=None, *, epsilon, delta, R: W.wme_mechanism(
            dataset, epsilon, delta, R, rng, size
        ),
        statistic=_wme_statistic,
        noise="gaussian",
        claim=lambda D, p: W.wme_claim(p["epsilon"], p["delta"]),
        cases=_wme_cases,
        generate=_wme_generate,
        designs=_wme_designs,
        domain=_wme_domain,
        refusals=_wme_refusals,
        project=_wme_project,
        suite="userdp.properties.zhao2024_wme",
        suite_properties="",
        suite_reference="",
        parameters=(
            Param(
                "epsilon",
                "the privacy level of the (epsilon, delta)-DP claim (split evenly between the two stages); > 0",
            ),
            Param("delta", "the delta of the claim, in (0, 1)"),
            Param("R", "the declared support: every item in [-R, R]; > 0"),
        ),
        reads={"values": "(n,) the items, each in [-R, R]", "user_ids": "(n,) the user of each item"},
        relation="replace-user-items; (epsilon, delta)-DP and mu-GDP of the two composed Gaussian stages",
        release="a float: the mean of the users' local averages clipped to the interval [bin - tau, bin + 2 tau] of "
        "the noisy argmax bin of their histogram, plus N(0, sigma_2^2)",
        why="WME (Levy et al. 2021) in d = 1: the release is a mixture over the noisy argmax; the statistic is "
        "its exact "
        "mean",
    )
)
