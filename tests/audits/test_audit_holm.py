"""Holm's procedure as the harness computes it (``harness.holm``), against statsmodels.

``holm`` writes out the arithmetic of ``multipletests(method="holm")`` because that function
runs ``gc.collect()`` on every call (~80 ms on a full heap); statsmodels is the oracle here.
The check has planted bugs (Bonferroni; no running maximum) that it must reject.
"""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from userdp.audits.engine.harness import holm as harness_holm


def check_holm(holm) -> None:
    """holm(pvals, alpha) -> (reject, adjusted) equals multipletests(method="holm") exactly, on
    hand-made cases (a single p-value, values at alpha / k, ties, ones) and seeded random vectors."""
    rng = np.random.default_rng(0)
    cases = [[0.01], [0.07], [0.05, 0.025], [0.02, 0.02, 0.9, 1.0], [0.0125, 0.0125, 0.05, 0.05]]
    cases += [list(rng.uniform(0, 0.2, k)) for k in (2, 3, 7, 20) for _ in range(5)]
    cases += [list(np.round(rng.uniform(0, 0.1, 9), 2)) for _ in range(5)]  # many ties
    for pv in cases:
        r, a = holm(pv, 0.05)
        r_ref, a_ref, _, _ = multipletests(pv, alpha=0.05, method="holm")
        assert np.array_equal(r, r_ref) and np.array_equal(a, a_ref), pv


def test_holm_matches_statsmodels():
    check_holm(harness_holm)


def _bonferroni(pv, alpha):
    a = np.minimum(np.asarray(pv, float) * len(pv), 1.0)
    return a <= alpha, a


def _no_running_max(pv, alpha):  # (m - j + 1) p_(j) without the step-down maximum
    p = np.asarray(pv, float)
    o = np.argsort(p, kind="stable")
    a = np.empty(p.size)
    a[o] = np.minimum(p[o] * np.arange(p.size, 0, -1), 1.0)
    return a <= alpha, a


@pytest.mark.parametrize("bug", [_bonferroni, _no_running_max])
def test_holm_check_catches_planted_bugs(bug):
    with pytest.raises(AssertionError):
        check_holm(bug)
