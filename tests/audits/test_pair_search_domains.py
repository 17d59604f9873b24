"""The pair search's declared domains for Zhao et al. 2024 (HLM, HLM-global, WME) and Acharya et al.
2024's baselines (``ValidationSpec.domain``; docs/validate.md, "The pair search").

A domain must reach the worst case the paper's analysis attains: over its candidates, the largest move
of the noise-free statistic (computed by the reference's own plan, not by the search) is the share of
the calibrated sensitivity that the spec's documented tight pair realises. Planted: the same domain with
its value range shrunk inside the thresholds or the support reaches a fraction of it. The replace-user-
items space moves every item of one user (the lightest, one of median count, the heaviest) and nothing
else. The corpus entry ``acharya2024/np-feature-bound-from-data`` (a noise scale read from the data's
largest feature norm) is caught only by a searched pair: every fixed pair puts the moved record at the
corner, where the data's norm is the bound.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from test_pair_search import _ctx  # tests/audits is on sys.path (rootdir conftest)
from userdp.audits.validation import get
from userdp.audits.validation.check_audits import _audit_one
from userdp.audits.validation.pair_search import candidates, search_pairs, searched_design
from userdp.audits.validation.run import validate
from userdp.reference import acharya2024 as A
from userdp.reference import zhao2024 as Z
from userdp.reference import zhao2024_calibration as C
from userdp.reference.neighbours import REPLACE_USER_ITEMS


def _best(dom, keep, move) -> float:
    return max(move(c, dom.params) for c in candidates(dom, 0) if keep(c))


def _hlm_move(c, p) -> float:
    a, b = Z.release_plan(c.first, **p), Z.release_plan(c.second, **p)
    return float(np.linalg.norm(a.clipped - b.clipped) / min(a.B, 2 * p["R_c"]))


def _global_move(c, p) -> float:
    a, b = C.global_plan(c.first, **p), C.global_plan(c.second, **p)
    return float(np.linalg.norm(a.clipped - b.clipped) / a.sensitivity)


def _flat_move(c, p) -> float:
    fa, fb = (D.with_fields(epsilons=A.nonpersonalized_epsilons(D)) for D in (c.first, c.second))
    move = np.linalg.norm(A.statistic(fa, p["Lambda"]) - A.statistic(fb, p["Lambda"]))
    return float(move / A.sensitivity(fa, p["Lambda"])[c.unit])


@pytest.mark.slow
def test_the_hlm_domain_reaches_096_of_b_on_the_realisation_dataset():
    """The realisation dataset's one-item user moves Clip(mu0) by 0.96 of the calibrated B between the
    far ends (specs.py, ``realisation_pair``: measured there with items at -+100 R; a user's pull
    saturates past its threshold T = 2 R, so +-4 R moves it as far). Planted: items in [-R/4, R/4]
    (inside every threshold) move it by 0.12 B."""
    dom = get("zhao2024.hlm").domain(0)

    def keep(c):
        return c.base.m == 2000

    assert 0.955 <= _best(dom, keep, _hlm_move) <= 0.97
    assert _best(dataclasses.replace(dom, values=(-0.25, 0.25)), keep, _hlm_move) < 0.5


@pytest.mark.slow
def test_the_hlm_global_domain_reaches_the_whole_sensitivity():
    """``curvature_pair``: a one-item user across the support moves Clip(x_K) by exactly Delta = S
    (specs.py: measured 0.99999994 at eps = 3). Planted: a support of half the radius reaches 0.5 S."""
    dom = get("zhao2024.hlm-global").domain(0)

    def keep(c):
        return c.base.m == 23 and "(1 items)" in c.description

    assert _best(dom, keep, _global_move) >= 0.9999
    assert _best(dataclasses.replace(dom, values=(-0.5, 0.5)), keep, _global_move) <= 0.51


def test_the_baselines_domain_reaches_the_stringent_records_sensitivity():
    """The non-personalized baseline at lambda = 100: the most stringent record at x = 1 with y = -1 vs +1
    realises 0.97 of Delta_i in d = 2 and 0.99 in d = 1 (the spec's corner pairs: 0.97 at lambda = 100);
    planted: labels only in [0, 1] halve every move (theta_bar is linear in y)."""
    dom = get("acharya2024.nonpersonalized").domain(0)
    assert {D.values.shape[1] for D in dom.bases} == {1, 2}
    for spec in ("acharya2024.jorgensen-max", "acharya2024.jorgensen-mean"):
        assert get(spec).domain is get("acharya2024.nonpersonalized").domain
    assert _best(dom, lambda c: True, _flat_move) >= 0.97
    assert _best(dataclasses.replace(dom, labels=(0.0, 1.0)), lambda c: True, _flat_move) < 0.5


def test_replace_user_items_moves_every_item_of_one_user():
    """Each candidate of HLM in d = 3 is a replace-user-items neighbour of one user (its count kept),
    the users moved are the lightest, one of median count and the heaviest, and the points include the
    box's diagonals and off-diagonal directions and interior points. Planted: two users moved at once
    are two units."""
    dom = get("zhao2024.hlm-d3").domain(0)
    cs = candidates(dom, 0)
    D = dom.bases[0]
    mine = [c for c in cs if c.base is D]
    for c in mine:
        assert REPLACE_USER_ITEMS.changed_units(c.first, c.second) <= {c.unit}
        assert np.array_equal(c.first.user_ids, D.user_ids) and np.array_equal(c.second.user_ids, D.user_ids)
    counts = dict(zip(D.users.tolist(), D.counts.tolist()))
    moved = {counts[c.unit] for c in mine}
    assert {min(counts.values()), max(counts.values())} <= moved and len(moved) == 3, moved
    pts = np.array([c.first.values[c.first.user_ids == c.unit][0] for c in mine])
    assert (np.abs(pts) == 4.0).all(axis=1).any(), "no diagonal (a corner of the box)"
    assert ((np.abs(pts) == 4.0).sum(axis=1) == 2).any(), "no off-diagonal direction e_k +- e_l"
    assert ((np.abs(pts) < 3.5).all(axis=1) & (np.abs(pts) > 0.1).any(axis=1)).any(), "no interior point"
    a, b = mine[0].first, mine[0].second
    other = int(next(u for u in D.users if u != mine[0].unit))
    b2 = REPLACE_USER_ITEMS.neighbour(b, other, np.full((counts[other], 3), 4.0))
    assert len(REPLACE_USER_ITEMS.changed_units(a, b2)) == 2


FEATURE_BOUND = "papers.acharya2024.corpus:np_feature_bound_from_data"


def test_the_searched_pair_of_a_data_read_noise_scale_is_a_violation_where_the_specs_pairs_are_not():
    """The audit check's own audit (10^4 releases per side) of np_feature_bound_from_data: the search's best
    pair moves a record off the corner, so max ||x_i|| and the noise scale (1.59 x on the audit dataset)
    differ between the two sides: an unbounded loss, far above record 0's eps 0.25. Planted: on the spec's
    first design (corner pairs: the data's max norm is the bound on both sides, the reference's noise)
    the claim holds, so a violation there has probability <= 1 - confidence."""
    ctx = _ctx("acharya2024.nonpersonalized", FEATURE_BOUND)
    res = search_pairs(ctx, 30.0)
    assert "label -1 vs 1" not in res.pairs[0].description, res.summary()  # a move of the features
    confidence = 1.0 - 2e-5 / 3
    found = _audit_one(ctx, searched_design(ctx, res), 10_000, confidence, 0)
    assert found.verdict == "violation" and found.epsilon_lower_bound > 0.5, found.epsilon_lower_bound
    fixed = _audit_one(ctx, list(ctx.spec.designs())[0], 10_000, confidence, 1)
    assert fixed.verdict != "violation", fixed.epsilon_lower_bound


@pytest.mark.slow
def test_the_data_read_noise_scale_is_a_privacy_violation_only_with_the_search():
    """Planted: with the search off, no pair of the spec leaves the corner, and validate passes the bug."""
    on = validate("acharya2024.nonpersonalized", FEATURE_BOUND, seed=0)
    assert on.verdict == "privacy violation"
    hits = [f for f in on.findings if f.check == "audit" and f.verdict == "privacy violation"]
    assert hits and all(f.title.startswith("searched (") for f in hits), [f.title for f in hits]
    assert validate("acharya2024.nonpersonalized", FEATURE_BOUND, seed=0, search=False).verdict == "pass"
