"""The pair search under the replace-user relations (audits/validation/pair_search.py, docs/validate.md
"The pair search"): Epasto et al.'s replace-user (values, or features and labels) and replace-user-labels
(labels only, features public), and the searched pair of Krichene et al.'s noisy GD.

The space: one user of each size, its records moved together between two points or labels, or split
record by record between the two ends. Under replace-user-labels the L1 move of C y is convex in the
labels, so its maximum over the box [0, B]^k is at a vertex: the splits reach the brute-force worst case
of every user. Planted: without the splits, a user whose records enter C's rows with both signs falls
short; with the search off, noisy GD with coordinate-wise gradient clipping is graded a deviation only.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from test_pair_search import _ctx  # tests/audits is on sys.path (rootdir conftest)
from userdp.audits.validation import BadValue, get
from userdp.audits.validation.pair_search import Domain, candidates, search_pairs
from userdp.audits.validation.run import validate
from userdp.reference.neighbours import REPLACE_USER, REPLACE_USER_LABELS, is_neighbour


def _l1_move(C, pair_first, pair_second) -> float:
    return float(np.abs(C @ (pair_first.labels - pair_second.labels)).sum())


def test_label_splits_reach_every_users_brute_force_worst_case():
    """epasto2020.gwa's domain (C = X^+ on a design whose users hold 1 to 4 records): for every user
    searched, the largest L1 move of C y over its candidates equals the maximum over all 2^k label
    vectors in {0, B}^k against their complements (brute force, C = numpy's pinv, not the reference's).
    Planted: without the record-by-record splits, user 8 (records (1, 1), (1, -1), (0, 1)) reaches 0.227
    of its worst 0.320."""
    dom = get("epasto2020.gwa").domain(0)
    D = dom.bases[0]
    C = np.linalg.pinv(D.values)
    cs = candidates(dom, 0)
    searched = sorted({c.unit for c in cs})
    sizes = [int(np.sum(D.user_ids == u)) for u in searched]
    assert sorted(sizes) == [1, 2, 3, 4], sizes  # one user of each size
    short = {}
    for u in searched:
        idx = np.flatnonzero(D.user_ids == u)
        worst = max(
            np.abs(C[:, idx] @ (2.0 * np.array(s) - 1.0)).sum() for s in itertools.product((0, 1), repeat=idx.size)
        )
        mine = [c for c in cs if c.unit == u]
        assert max(_l1_move(C, c.first, c.second) for c in mine) == pytest.approx(worst, rel=1e-12), u
        uniform = max(_l1_move(C, c.first, c.second) for c in mine if "split" not in c.description)
        short[u] = uniform / worst
    assert min(short.values()) < 0.75, short  # planted: the splits are what reach user 8's worst case
    for c in cs:
        assert is_neighbour(REPLACE_USER_LABELS, c.first, c.second), c.description
        assert np.array_equal(c.first.values, D.values) and np.array_equal(c.second.values, D.values)
        assert np.all((c.first.labels >= 0.0) & (c.second.labels <= 1.0))


def test_replace_user_values_cover_each_size_interior_points_and_splits():
    """epasto2020.wa's domain: one user of each size (1, 4, 8, 16 records), values in [0, B] with interior
    points, every candidate a replace-user neighbour (S_l kept), and the 16-record user split too."""
    dom = get("epasto2020.wa").domain(0)
    D = dom.bases[0]
    cs = candidates(dom, 0)
    assert sorted(int(np.sum(D.user_ids == u)) for u in {c.unit for c in cs}) == [1, 4, 8, 16]
    moved = np.concatenate([c.second.values[c.second.user_ids == c.unit] for c in cs])
    assert moved.min() == 0.0 and moved.max() == 1.0
    assert ((moved > 0.05) & (moved < 0.95)).any(), "no interior point"
    assert any("split" in c.description and np.sum(D.user_ids == c.unit) == 16 for c in cs)
    for c in cs:
        assert is_neighbour(REPLACE_USER, c.first, c.second), c.description
    with pytest.raises(BadValue, match="relation"):  # planted: an unknown relation is refused
        Domain("replace-users", {}, (D,), (0.0, 1.0))


def test_coupled_replay_of_gwa_realises_the_claim_on_the_worst_split():
    """The correct GWA_C's best searched pair realises its sensitivity: share 1 (the brute force above: the
    worst user's move is Delta_1 on this design), the reference's Laplace scale estimated from 4000 of its
    releases (relative standard error 1/sqrt(4000) per coordinate: the band +- 8% is 5 standard errors,
    false failure < 1e-6). Planted: a domain whose labels stop at the centre B/2 realises half."""
    ctx = _ctx("epasto2020.gwa", "papers.epasto2020.corpus_gwa:loop_exp_difference")
    res = search_pairs(ctx, 30.0)
    assert res.how == "coupled replay, exact (additive noise)", res.how
    assert 0.92 <= res.scores[0] <= 1.08, res.summary()
    full = ctx.spec.domain
    ctx.spec = dataclasses.replace(ctx.spec, domain=lambda seed: dataclasses.replace(full(seed), labels=(0.0, 0.5)))
    half = search_pairs(ctx, 30.0)
    assert 0.46 <= half.scores[0] <= 0.54, half.summary()


@pytest.mark.slow
def test_coordinate_clipped_noisy_gd_is_a_privacy_violation_only_with_the_search():
    """Planted: the spec's pairs are d = 1, where clipping each coordinate and clipping the L2 norm agree."""
    target = "papers.krichene2023.corpus:gd_coordinate_clipping"
    on = validate("krichene2023.noisy-gd", target, seed=0)
    assert on.verdict == "privacy violation"
    hits = [f for f in on.findings if f.check == "audit" and f.verdict == "privacy violation"]
    assert hits and all(f.title.startswith("searched (") for f in hits), [f.title for f in hits]
    off = validate("krichene2023.noisy-gd", target, seed=0, search=False)
    assert off.verdict == "deviation from reference"
