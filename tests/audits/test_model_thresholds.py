"""Thresholds chosen with a declared noise family's predicted counts (``thresholds._model_counts``).

Gaussian noise at delta = 1e-5 puts the best (eps, delta) set deep in a tail, where the
selection share holds a handful of points: scoring thresholds by those counts made the
choice chase luck (efficiency 0.77-0.99 on ``control.gaussian`` over seeds 0-3 at its default
samples). With a declared family the counts are the fitted family's predictions.
Oracles: scipy.stats' Gaussian and Laplace laws; the harness's validity guarantee.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from userdp.audits import audit
from userdp.audits.engine.harness import efficiency_report
from userdp.audits.engine.registry import get
from userdp.audits.engine.thresholds import _model_counts, choose_scalar


def test_gaussian_model_counts_match_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.0, 2.0, 5000), rng.normal(1.0, 2.0, 5000)
    grid = np.linspace(-8, 9, 50)
    ge_a, ge_b, le_a, le_b = _model_counts(a, b, grid, "gaussian")
    s = np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    np.testing.assert_allclose(ge_a, 5000 * stats.norm.sf(grid, a.mean(), s), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(le_b, 5000 * stats.norm.cdf(grid, b.mean(), s), rtol=1e-9, atol=1e-9)


def test_laplace_model_counts_match_scipy():
    rng = np.random.default_rng(1)
    a, b = rng.laplace(0.0, 1.0, 5000), rng.laplace(0.5, 1.0, 5000)
    grid = np.linspace(-6, 7, 50)
    ge_a, ge_b, le_a, le_b = _model_counts(a, b, grid, "laplace")
    la, lb = np.median(a), np.median(b)
    s = (np.mean(np.abs(a - la)) + np.mean(np.abs(b - lb))) / 2
    np.testing.assert_allclose(ge_b, 5000 * stats.laplace.sf(grid, lb, s), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(le_a, 5000 * stats.laplace.cdf(grid, la, s), rtol=1e-9, atol=1e-9)


def test_reported_selection_counts_are_the_observed_ones():
    rng = np.random.default_rng(2)
    a, b = rng.normal(0.0, 1.0, 2000), rng.normal(1.0, 1.0, 2000)
    c = choose_scalar(a, b, 20_000, 0.05, 1e-5, noise_family="gaussian")[0]
    t = c.rejection_set
    first, second = (a, b) if c.first_over_second else (b, a)
    hit = (lambda x: x >= t.t) if t.tail == "upper" else (lambda x: x <= t.t)
    assert c.selection_counts == (int(hit(first).sum()), int(hit(second).sum()))


def test_a_wrong_declaration_keeps_the_audit_valid():
    # Laplace noise audited as if Gaussian: the sets are chosen from a misfitted model, but
    # they are counted on fresh samples, so a correct mechanism is still flagged with
    # probability <= 1 - confidence = 1e-5 (the false failure of this test). The misfit costs
    # power, not validity: eps_lb 0.72 at 10^5 per side (measured), against ~0.98 with the
    # right declaration.
    s = get("control.laplace").setup()
    r = audit(
        s.mechanism,
        s.pairs,
        s.claim,
        samples=100_000,
        seed=0,
        confidence=1 - 1e-5,
        output="continuous",
        noise_family="gaussian",
    )
    assert r.verdict == "no violation found"


def test_a_planted_too_small_gaussian_is_flagged_through_the_model():
    # Planted: control.gaussian's noise at 0.7 of its sigma, claimed at eps = 1, delta = 1e-5:
    # true eps at delta 1e-5 is ~1.6 (mu = 0.268 / 0.7 = 0.383); at 2 x 10^5 per side the
    # model-chosen set reaches ~1.1, above 1 by many standard errors.
    s = get("control.gaussian").setup()

    def weak(D, rng, size):
        centre = s.noise.locate(D)[0][0]
        return centre + (s.mechanism(D, rng, size) - centre) * 0.7

    r = audit(weak, s.pairs, s.claim, samples=200_000, seed=0, output="continuous", noise_family="gaussian")
    assert r.verdict == "violation"


@pytest.mark.slow
def test_figure_gaussian_efficiency_over_seeds():
    # The figure: control.gaussian at its default samples, seeds 0-9 (deterministic runs).
    # With the model the median efficiency is >= 0.95 (measured 1.01; the worst seed 0.84:
    # the counting share's own tail counts still scatter around the expected ones the
    # ceiling assumes); the empirical scores (noise_family=None, the planted "old auditor")
    # have a median below 0.95 (measured 0.85).
    s = get("control.gaussian").setup()
    eff = {}
    for family in ("gaussian", None):
        eff[family] = []
        for seed in range(10):
            r = audit(
                s.mechanism, s.pairs, s.claim, samples=200_000, seed=seed, output="continuous", noise_family=family
            )
            eff[family].append(efficiency_report(s.noise, s.pairs, r, ())["efficiency"])
    assert np.median(eff["gaussian"]) >= 0.95, eff
    assert np.median(eff[None]) < 0.95, eff
