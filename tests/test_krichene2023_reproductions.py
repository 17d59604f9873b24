"""Reproductions of Krichene et al. 2023 (``audits/registry/krichene2023_reproductions.py``).

Oracles: Appendix C's stated construction (20 tasks per user in expectation, m = 100, d = 5,
an 80/20 split), the RDP accounting against its target (every method spends the same
(eps, 1e-5)), and the claims of the quick runs (slow: about a minute together).
"""
from __future__ import annotations

import numpy as np
import pytest

from userdp.audits.registry import all_reproductions
from userdp.audits.registry import krichene2023_reproductions as R
from userdp.reference import krichene2023_weights as W


def test_registered_with_a_first_line_each():
    reps = all_reproductions()
    for name in ("krichene2023-synthetic", "krichene2023-head-tail"):
        assert reps[name].__doc__.split("\n\n")[0].startswith("Krichene et al. 2023")


def test_synthetic_data_is_appendix_c():
    train, test, theta = R.synthetic_data(1.0)
    n = train.n + test.n
    assert theta.shape == (100, 5) and np.all(np.linalg.norm(theta, axis=1) <= 1 + 1e-12)
    assert np.all(np.linalg.norm(train.values, axis=1) <= 1 + 1e-12)            # u_j in the unit ball
    # 20 tasks per user in expectation (q rescaled to sum 20, none above 1 at this seed): the mean
    # over 10^4 users has sd <= sqrt(20 / 10^4) = 0.045, so 0.2 is > 4 sd (the data is seeded: fixed).
    assert abs(n / 10_000 - 20) < 0.2
    assert abs(test.n / n - 0.2) < 0.005                                        # sd sqrt(0.16 / 2e5) = 0.0009
    # sigma_F = 1e-3: the labels are <u_j, theta_i> + noise of sd 1e-3
    resid = train.labels - np.einsum("nd,nd->n", train.values, theta[train.task_ids])
    assert abs(resid.std() / 1e-3 - 1) < 0.01


def test_head_tail_methods_spend_the_same_budget():
    for eps in (2.0, 10.0):
        b = R.budgets(eps)
        with_counts = W.epsilon(b["beta_counts"], R.DELTA, runs=R.HT_STEPS, count_k=R.HT_K, count_sigma=b["count_sigma"])
        without = W.epsilon(b["beta_uniform"], R.DELTA, runs=R.HT_STEPS)
        for spent in (with_counts, without):
            assert eps * (1 - 1e-5) <= spent <= eps
        # the counts take COUNT_SHARE of the RDP coefficient: k / (2 sigma^2) = 0.15 c
        assert R.HT_K / (2 * b["count_sigma"] ** 2) == pytest.approx(R.COUNT_SHARE * b["c"], rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["krichene2023-synthetic", "krichene2023-head-tail"])
def test_quick_reproduction_claims_hold(name):
    out = all_reproductions()[name](quick=True)
    assert out["claims"] and all(c["holds"] for c in out["claims"]), out["claims"]
