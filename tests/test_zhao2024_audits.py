"""Audits of Zhao et al. 2024 (``audits/registry/zhao2024.py``).

Oracles: the closed form of the Huber minimiser when every user but one sits in its
quadratic region (a weighted mean shifted by the outlier's bounded pull), and the
harness's guarantee (a correct mechanism is flagged with probability <= 1 - confidence).
"""
from __future__ import annotations

import numpy as np
import pytest

from userdp.audits import audit
from userdp.audits.registry import get
from userdp.audits.registry import zhao2024 as R
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
            assert np.all(np.abs(p.mu0[0] - y[others]) <= p.T[others])     # the closed form's premise
        expected = 2 * a.w[k] * a.T[k] / (1 - a.w[k])
        assert abs(b.mu0[0] - a.mu0[0]) == pytest.approx(expected, rel=1e-6)
        assert R.realised_share(pair) == pytest.approx(expected / a.B, rel=1e-6)


def test_the_max_wT_user_realises_half_of_B():
    # B = 2 c / kappa0 + 2e with c = max w_k T_k, kappa0 = 1/2: the max-w_k T_k user's pair
    # realises 2 c / (1 - w_k) / B = kappa0 / (1 - w_k) / (1 + 2 SOLVER_SLACK) ~ 0.5.
    D = R.audit_dataset(1)
    p = Z.release_plan(D, **R._params())
    k = int(np.argmax(p.w * p.T))
    pair = R.extreme_pairs(D, [k])[0]
    assert R.realised_share(pair) == pytest.approx(0.5 / (1 - p.w[k]) / (1 + 2 * Z.SOLVER_SLACK), rel=1e-6)


def test_audit_dataset_passes_ptr_with_certainty():
    # gamma = J on every audited dataset: the test fails w.p. <= 1e-12 (the cap J's design),
    # which is why the entries may declare a pure Gaussian noise model for the ceiling.
    for d in (1, 3):
        s = R.build_hlm(d)
        assert s.noise is not None
        for pair in s.pairs:
            for ds in (pair.first, pair.second):
                p = Z.release_plan(ds, **R._params())
                assert p.gamma == p.J


@pytest.mark.parametrize("name", ["zhao2024.hlm", "zhao2024.hlm-d3"])
def test_reference_entries_are_not_flagged(name):
    # A correct mechanism is flagged with probability <= 1 - confidence = 1e-5 (false failure).
    s = get(name).setup()
    r = audit(s.mechanism, s.pairs, s.claim, samples=20_000, confidence=1 - 1e-5, seed=3, output=s.output)
    assert r.verdict == "no violation found"


def test_noise_too_small_is_flagged():
    # Planted: HLM with its pass-branch noise at 1/8 of sigma_pass. The entries audit at
    # eps = 3, so sigma_pass = 1.859 B (analytic Gaussian at eps_r = 2.25, delta_r = 5e-6). On the
    # max-w T pair the shift is ~0.5 B: the Gaussian loss has mu = 0.269 per release, and
    # 8 x 0.269 = 2.15 with the bug, which is (eps = 10.9, 1e-5)-DP (GaussianDP.epsilon_at):
    # far above the claimed 3, a miss at 10^5 per side is a > 10-standard-error event.
    s = get("zhao2024.hlm").setup()

    def weak(D, rng, size):
        p = Z.release_plan(D, **R._params())
        return p.clipped[0] + p.sigma_pass / 8 * rng.standard_normal(size)

    r = audit(weak, s.pairs, s.claim, samples=100_000, seed=0, output="continuous")
    assert r.verdict == "violation"
