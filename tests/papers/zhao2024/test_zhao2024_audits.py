"""Audits of Zhao et al. 2024 (``audits/papers/zhao2024/audits.py``).

Oracles: the closed form of the Huber minimiser when every user but one sits in its
quadratic region (a weighted mean shifted by the outlier's bounded pull), and the
harness's guarantee (a correct mechanism is flagged with probability <= 1 - confidence).
"""

from __future__ import annotations

import numpy as np
import pytest

from userdp.audits import audit
from userdp.audits.engine.registry import get
from userdp.audits.papers.zhao2024 import audits as R
from userdp.reference import zhao2024 as Z


def test_extreme_pair_shift_closed_form():
    # User k at -100 R pulls with +w_k T_k (it is in its linear region), at +100 R with
    # -w_k T_k. If every other user is in its quadratic region on both sides, the first-order
    # condition sum_{i != k} w_i (s - y_i) +- w_k T_k = 0 gives
    # s = (sum_{i != k} w_i y_i -+ w_k T_k) / (1 - w_k): the pair moves s by 2 w_k T_k / (1 - w_k).
    D = R.audit_dataset(1)
    for pair in R.extreme_pairs(D, R.audit_users(D)):
        a = Z.release_plan(pair.first, **R._params())
        b = Z.release_plan(pair.second, **R._params())
        k = int(np.flatnonzero(pair.first.users == pair.unit)[0])
        others = np.arange(D.m) != k
        for p, ds in ((a, pair.first), (b, pair.second)):
            y = ds.local_averages()
            assert np.all(np.abs(p.mu0[0] - y[others]) <= p.T[others])  # the closed form's premise
        expected = 2 * a.w[k] * a.T[k] / (1 - a.w[k])
        assert abs(b.mu0[0] - a.mu0[0]) == pytest.approx(expected, rel=1e-6)
        assert R.realised_share(pair) == pytest.approx(expected / a.B, rel=1e-6)


def test_the_max_wT_user_realises_half_of_B():
    # B ~ 2 c / kappa0 with c = max w_k T_k, kappa0 = 1/2: on the imbalanced dataset the max-w_k T_k
    # user's pair moves mu0 by 2 c / (1 - w_k) (the closed form above), about half of B.
    D = R.audit_dataset(1)
    p = Z.release_plan(D, **R._params())
    k = int(np.argmax(p.w * p.T))
    pair = R.extreme_pairs(D, [k])[0]
    share = R.realised_share(pair)
    assert share == pytest.approx(2 * p.w[k] * p.T[k] / (1 - p.w[k]) / p.B, rel=1e-6)
    assert 0.49 < share < 0.51


@pytest.mark.parametrize("d", [1, 3])
def test_worst_case_pair_realises_kappa0_over_the_cluster_weight(d):
    # The far users' pulls cancel on the second side and leave two users' worth (2 w T) on the
    # first; every cluster user is quadratic on both sides, so mu0 moves by 2 w T / K along e1,
    # K = 1060 / 2000 (closed form): 0.943 of B = (2 c / kappa0)(1 + O(1e-6)), c = w T.
    pair = R.worst_case_pair(d)
    a, b = Z.release_plan(pair.first, **R._params()), Z.release_plan(pair.second, **R._params())
    w, T, K = 1 / 2000, 2.0, R.QUADRATIC / 2000
    np.testing.assert_allclose(b.mu0 - a.mu0, 2 * w * T / K * np.eye(d)[0], atol=1e-9)
    assert R.realised_share(pair) == pytest.approx(2 * w * T / K / a.B, rel=1e-6)
    assert R.realised_share(pair) == pytest.approx(0.5 / K, rel=1e-4)
    assert a.gamma == b.gamma == a.J  # the pure-Gaussian noise model holds


@pytest.mark.parametrize("name", ["zhao2024.hlm", "zhao2024.hlm-d3"])
def test_reference_entries_are_not_flagged(name):
    # A correct mechanism is flagged with probability <= 1 - confidence = 1e-5 (false failure).
    s = get(name).setup()
    r = audit(s.mechanism, s.pairs, s.claim, samples=20_000, confidence=1 - 1e-5, seed=3, output=s.output)
    assert r.verdict == "no violation found"


def test_noise_too_small_is_flagged():
    # Planted: HLM with its pass-branch noise at 1/8 of sigma_pass. The entries audit at eps = 3,
    # so sigma_pass = 1.859 B (analytic Gaussian at eps_r = 2.25, delta_r = 5e-6). On the
    # worst-case pair the shift is 0.943 B: the Gaussian loss has mu = 0.507 per release, and
    # 8 x 0.507 = 4.06 with the bug, which is (eps > 15, 1e-5)-DP: far above the claimed 3; a
    # miss at 10^5 per side would be a > 10-standard-error event.
    s = get("zhao2024.hlm").setup()

    def weak(D, rng, size):
        p = Z.release_plan(D, **R._params())
        return p.clipped[0] + p.sigma_pass / 8 * rng.standard_normal(size)

    r = audit(weak, s.pairs, s.claim, samples=100_000, seed=0, output="continuous")
    assert r.verdict == "violation"


@pytest.mark.parametrize("name", ["zhao2024.hlm", "zhao2024.hlm-d3"])
def test_entries_reach_their_tightness_at_the_default_samples(name):
    # userdp audit NAME at its defaults (10^6 per side, seed 0): eps_lb >= 0.40 x 3. The ceiling
    # on this pair (closed form) is 1.60; seeds 0-4 gave 1.45-1.67 in d = 1. Seed fixed: the
    # figure is reproducible, and 1.20 is 0.40 / 0.534 = 0.75 of the ceiling.
    s, e = get(name).setup(), get(name)
    r = audit(s.mechanism, s.pairs, s.claim, samples=e.samples, seed=0, output=s.output)
    assert r.epsilon_lower_bound >= 0.40 * 3.0
