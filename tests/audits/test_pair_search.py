"""validate's pair search (audits/validation/pair_search.py) and ``userdp audit --search``.

The space covers every direction (axes, diagonals, off-diagonals), interior points, users of several
sizes and every removal; coupled replay measures an additive target's move exactly; an atom (a value
of positive probability on one side only) is found where the private cap is released as an interval's
left end. Planted: with the search off, the pair-gap bugs of the corpus are graded only a deviation.
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest

from userdp.audits.cli import main as cli
from userdp.audits.validation import BadType, BadValue, get
from userdp.audits.validation.context import Context
from userdp.audits.validation.check_audits import _audit_one
from userdp.audits.validation.pair_search import (
    Domain,
    atom_indicator,
    candidates,
    domain_pairs,
    search_pairs,
    searched_design,
)
from userdp.audits.validation.run import validate
from userdp.audits.validation.target import load_target
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import ADD_REMOVE_RECORD, REPLACE_RECORD


def _ctx(algorithm: str, target: str) -> Context:
    return Context.start(
        get(algorithm),
        load_target(target),
        samples=None,
        audit_samples=None,
        examples=None,
        seed=0,
        quick=False,
        inputs=None,
        progress=None,
    )


def test_candidates_cover_directions_interior_points_sizes_and_removals():
    D = UserDataset(np.array([[0.5, 0.0], [0.2, 0.1], [0.0, 0.3]]), np.array([0, 0, 1]), labels=np.zeros(3))
    dom = Domain("add-remove-user", {}, (D,), (-1.0, 1.0), norm=1.0, labels=(-1.0, 1.0), records=(1, 3))
    cs = candidates(dom, 0)
    added = [c.second for c in cs if c.second.n > D.n]
    new = [np.asarray(A.values)[D.n :] for A in added]
    ks = {len(x) for x in new}
    assert ks == {1, 3}, ks
    v = np.array([x[0] for x in new])
    r = np.linalg.norm(v, axis=1)
    assert np.all(r <= 1.0 + 1e-12), "a candidate left the declared unit ball"
    diag = (np.abs(np.abs(v[:, 0]) - np.abs(v[:, 1])) < 1e-12) & (np.abs(v[:, 0]) > 0.5)
    assert diag.any(), "no diagonal direction"
    assert ((v[:, 0] * v[:, 1]) < -0.4).any(), "no off-diagonal direction e1 - e2"
    assert ((np.abs(v[:, 0]) == 1.0) & (v[:, 1] == 0.0)).any(), "no axis direction"
    assert ((r > 0.05) & (r < 0.9)).any(), "no interior point"
    removed = {c.unit for c in cs if c.second.n < D.n}
    assert removed == {0, 1}, "every user removed once"
    with pytest.raises(BadValue, match="records"):  # planted: a space without users
        Domain("add-remove-user", {}, (D,), (-1.0, 1.0), records=())
    with pytest.raises(BadValue, match="relation"):
        Domain("replace-users", {}, (D,), (-1.0, 1.0))


def test_coupled_replay_measures_an_additive_targets_move_exactly():
    """amin2019.capped-sum: the worst pair moves g_T by exactly T, the sensitivity, so its share of the
    claim is 1 (closed form; the reference's Laplace scale b is estimated from 4000 of its releases as
    mean |Z|, relative standard error 1/sqrt(4000) = 1.6%: the band +- 8% is 5 standard errors,
    false failure < 1e-6). Planted: a cap on each record, not each user's total, moves it by 4 T
    (a user of four records above T), share 4."""
    good = search_pairs(_ctx("amin2019.capped-sum", "papers.amin2019.corpus:loop_exponential_difference"), 30.0)
    assert good.how == "coupled replay, exact (additive noise)", good.how
    assert 0.92 <= good.scores[0] <= 1.08, good.summary()
    bad = search_pairs(_ctx("amin2019.capped-sum", "papers.amin2019.corpus:per_record_cap"), 30.0)
    assert 3.6 <= bad.scores[0] <= 4.4, bad.summary()
    assert "4 record(s)" in bad.pairs[0].description


def test_an_atom_is_found_where_the_private_cap_is_an_intervals_left_end():
    """The left end is 0 or a user's exact total: a user added inside (0, U) is a new value of T.
    A correct cap (uniform in the interval) has no atom: its search scores moments."""
    bad = search_pairs(_ctx("amin2019.capped-sum-private-cap", "papers.amin2019.corpus:private_cap_left_end"), 30.0)
    assert bad.atom is not None and bad.atom[0] == 0 and 0.0 < bad.atom[1] < 1.0, bad.summary()
    good = search_pairs(_ctx("amin2019.capped-sum-private-cap", "papers.amin2019.corpus:private_cap_batched"), 30.0)
    assert good.atom is None and "moments" in good.how, good.summary()


def test_the_searched_atom_pair_is_a_violation_where_the_specs_pairs_are_not():
    """The audit check's own audit (``check_audits._audit_one``, 10^4 outputs per side) of the left-end
    cap: on the searched pair, the atom's indicator shows the unbounded loss; on the spec's pairs (a user
    at U: no new endpoint; the cap's loss <= eps_cap and the sum's <= eps_sum given T) the claim holds,
    so a violation there has probability <= 1 - confidence (planted: the search is what finds it)."""
    ctx = _ctx("amin2019.capped-sum-private-cap", "papers.amin2019.corpus:private_cap_left_end")
    res = search_pairs(ctx, 30.0)
    post = atom_indicator(*res.atom, ctx.spec.flatten)
    confidence = 1.0 - 2e-5 / 3
    found = _audit_one(ctx, searched_design(ctx, res), 10_000, confidence, 0, post)
    assert found.verdict == "violation" and found.epsilon_lower_bound > 3.5, found.epsilon_lower_bound
    fixed = _audit_one(ctx, list(ctx.spec.designs())[0], 10_000, confidence, 1)
    assert fixed.verdict != "violation", fixed.epsilon_lower_bound


@pytest.mark.slow
def test_the_left_end_cap_is_a_privacy_violation_only_with_the_search():
    """Planted: with the search off, no pair of the spec reaches the excess (a deviation only)."""
    target = "papers.amin2019.corpus:private_cap_left_end"
    on = validate("amin2019.capped-sum-private-cap", target, seed=0, quick=True)
    assert on.verdict == "privacy violation"
    hits = [f for f in on.findings if f.check == "audit" and f.verdict == "privacy violation"]
    assert hits and all(f.title.startswith("searched (") for f in hits), [f.title for f in hits]
    off = validate("amin2019.capped-sum-private-cap", target, seed=0, quick=True, search=False)
    assert off.verdict == "deviation from reference"


def test_search_must_be_a_bool():
    with pytest.raises(BadType, match="search"):
        validate("amin2019.capped-sum-private-cap", "papers.amin2019.corpus:private_cap_left_end", search="yes")


@pytest.mark.slow
def test_the_per_coordinate_laplace_ridge_is_a_privacy_violation_only_with_the_search():
    """Planted: the spec's pairs are d = 1, where the L1 and L2 norms agree."""
    target = "papers.amin2019.corpus_erm:ridge_per_coordinate_laplace"
    on = validate("amin2019.erm-output-perturbation-ridge", target, seed=0)
    assert on.verdict == "privacy violation"
    off = validate("amin2019.erm-output-perturbation-ridge", target, seed=0, search=False)
    assert off.verdict == "deviation from reference"


def test_domain_pairs_are_neighbours_and_bad_domains_are_refused():
    for rel, relation in (("add-remove-record", ADD_REMOVE_RECORD), ("replace-record", REPLACE_RECORD)):
        pairs = domain_pairs({"values": [0, 1], "sizes": [1, 3], "relation": rel})
        assert 10 <= len(pairs) <= 100
        for a, b in pairs:
            assert len(relation.changed_positions(np.array(a), np.array(b))) == 1, (rel, a, b)
        assert any(0.0 < x < 1.0 for a, b in pairs for x in a + b), "no interior point"
    with pytest.raises(BadValue, match="values"):
        domain_pairs({"values": [1, 0], "sizes": [2], "relation": "replace-record"})
    with pytest.raises(BadValue, match="sizes"):
        domain_pairs({"values": [0, 1], "sizes": [0], "relation": "replace-record"})
    with pytest.raises(BadValue, match="relation"):
        domain_pairs({"values": [0, 1], "sizes": [2], "relation": "replace-user"})
    with pytest.raises(BadValue, match="partitions"):  # a user over partitions needs the keys
        domain_pairs({"values": [0, 1], "sizes": [2], "relation": "add-remove-user"})
    with pytest.raises(BadValue, match="add-remove-user"):
        domain_pairs({"values": [0, 1], "sizes": [2], "relation": "replace-record", "partitions": [0]})
    with pytest.raises(BadValue, match="unknown key"):
        domain_pairs({"values": [0, 1], "sizes": [2], "relation": "replace-record", "n": 3})


LEAKY = '''
import numpy as np

_rng = np.random.default_rng()


def leaky_mean(data):
    """BUG: the mean of records in [0, 1] with Laplace noise of scale max(data) / n, read from the data
    (the sensitivity 1 / n is right only where some record is 1)."""
    x = np.asarray(data, dtype=float)
    return float(x.mean() + _rng.laplace(0.0, max(float(x.max()), 1e-3) / x.size))
'''


def test_audit_search_finds_the_pair_the_end_points_miss(tmp_path, monkeypatch, capsys):
    """``userdp audit --mechanism ... --search DOMAIN``: an interior point is the witness (the scale moves
    with the data); planted: the usual pair at the bounds, [1, 1, 1] vs [1, 1, 0], keeps max = 1 on both
    sides (loss exactly the claim), so the audit finds nothing there (false alarm <= 1 - 0.99999)."""
    (tmp_path / "leaky.py").write_text(LEAKY)
    monkeypatch.chdir(tmp_path)
    common = ["audit", "--mechanism", "leaky:leaky_mean", "--claim", "pure:epsilon=1", "--samples", "2000"]
    common += ["--confidence", "0.99999", "--workers", "1", "--json"]
    domain = '{"values": [0, 1], "sizes": [3], "relation": "replace-record"}'
    assert cli.main(common + ["--search", domain]) == 1
    res = json.loads(capsys.readouterr().out)
    assert res["verdict"] == "violation" and res["relation"] == "replace-record"
    assert cli.main(common + ["--relation", "replace-record", "--pair", "[1, 1, 1]", "[1, 1, 0]"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "no violation found"
    assert cli.main(common + ["--search", domain, "--pair", "[1]", "[0]"]) == 2  # --search replaces --pair
    assert "--search goes with --mechanism" in capsys.readouterr().err
    assert cli.main(common + ["--search", '{"values": [0, 1], "sizes": [3], "relation": "replace-user"}']) == 2
    assert "relation must be one of" in capsys.readouterr().err


OWN_GENERATOR = """
import numpy as np

from userdp.properties.amin2019 import CapAdapter

_own = np.random.default_rng(5)


def _statistic(dataset, T):
    _, inverse = np.unique(dataset.user_ids, return_inverse=True)
    return float(np.minimum(np.bincount(inverse, weights=dataset.values), T).sum())


def _mechanism(dataset, rng, size=None, *, T, epsilon):
    return _statistic(dataset, T) + _own.laplace(0.0, T / epsilon, size)  # its own generator: no replay


target = CapAdapter(
    "own-generator", statistic=_statistic, sensitivity=lambda T: T,
    noise_scale=lambda T, epsilon: T / epsilon, mechanism=_mechanism,
)
"""


def test_a_target_that_does_not_replay_is_scored_by_its_statistic_stage(tmp_path, monkeypatch):
    """Its releases differ on every row, so its own noise-free stage measures each move exactly: the
    worst pair's share is 1 (closed form; the band as in the coupled-replay test)."""
    (tmp_path / "own_generator.py").write_text(OWN_GENERATOR)
    monkeypatch.syspath_prepend(str(tmp_path))
    res = search_pairs(_ctx("amin2019.capped-sum", "own_generator:target"), 30.0)
    assert res.how.startswith("TARGET's statistic stage, exact"), res.how
    assert 0.92 <= res.scores[0] <= 1.08, res.summary()


def test_the_searched_pairs_share_one_base_and_release_shape():
    """The ridge domain has a d = 1 and a d = 2 base; the best pairs under the four norms may come from
    both, but one audit design takes one release shape (planted: a mixed design made the auditor refuse
    a (n, 2) release as 'continuous')."""
    res = search_pairs(_ctx("amin2019.erm-output-perturbation-ridge", "papers.amin2019.corpus_erm:ridge_solve"), 30.0)
    dims = {np.asarray(p.first.values).reshape(p.first.n, -1).shape[1] for p in res.pairs}
    assert len(dims) == 1 and res.width == dims.pop(), (dims, res.width)


def test_a_non_finite_release_scores_without_a_warning():
    """inf - inf in a replayed difference is no move, and raises no RuntimeWarning (the command line turns
    warnings into internal errors: planted, a target with inf in its upper tail made validate exit 3)."""
    from userdp.audits.validation.pair_search import _replayed_shift

    a = np.array([[1.0, np.inf], [2.0, np.inf]])
    b = np.array([[0.5, np.inf], [1.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        det, shift = _replayed_shift(a, b)
    assert not det and np.all(np.isfinite(shift)) and shift[0] == 0.75


# ------------------------------------------------------------------ releases over partitions
def _partitioned(values, users, parts) -> UserDataset:
    return UserDataset.from_arrays(values, users, partition_ids=parts)


def test_candidates_span_partitions_records_and_values():
    """The relation across partitions: an added user in 1 .. all of the keys at once (existing and new, in
    two record orders), 1 .. several records in each, at one value (interior and beyond a clamp) or unequal
    values across its partitions, or several records in one partition and one in each other."""
    D = _partitioned([0.5, 1.0, 0.25], [0, 1, 1], [0, 1, 2])
    dom = Domain(
        "add-remove-user", {}, (D,), (-3.0, 4.0), records=(1, 3), partitions=(0, 1, 2, 3), spread=(1, 2, 4),
        points=(-3.0, 0.5, 4.0),
    )  # fmt: skip
    cs = candidates(dom, 0)
    added = [c for c in cs if c.second.n > D.n]
    assert {c.unit for c in cs if c.second.n < D.n} == {0, 1}, "every user removed once"
    shapes = set()
    for c in added:
        new = c.second.partition_ids[D.n :]
        assert np.all(c.second.user_ids[D.n :] == 2) and np.array_equal(c.second.values[: D.n], D.values)
        keys, per = np.unique(new, return_counts=True)
        shapes.add((keys.size, int(per.max()), int(per.min())))
    assert {(1, 1, 1), (1, 3, 3), (2, 1, 1), (2, 3, 3), (4, 1, 1), (4, 3, 3), (2, 3, 1), (4, 3, 1)} <= shapes, shapes
    parts = [tuple(c.second.partition_ids[D.n :].tolist()) for c in added]
    assert (3,) in parts and (0,) in parts, "a new partition and an existing one"
    assert (0, 1) in parts and (3, 2) in parts, "the keys in both orders"
    vals = {float(v) for c in added for v in c.second.values[D.n :]}
    assert {-3.0, 0.5, 4.0} <= vals
    unequal = [c for c in added if np.unique(c.second.values[D.n :]).size > 1]
    assert unequal and all("rising" in c.description or "falling" in c.description for c in unequal)
    with pytest.raises(BadValue, match="spread"):  # planted: more partitions than the keys
        Domain("add-remove-user", {}, (D,), (0.0, 1.0), partitions=(0, 1), spread=(3,))
    with pytest.raises(BadValue, match="spread"):
        Domain("add-remove-user", {}, (D,), (0.0, 1.0), spread=(2,))
    with pytest.raises(BadValue, match="points"):
        Domain("add-remove-user", {}, (D,), (0.0, 1.0), points=(2.0,))
    with pytest.raises(BadValue, match="partitions"):
        Domain("add-remove-user", {}, (D,), (0.0, 1.0), partitions=(0, 0))


def test_a_selection_is_scored_by_presence_and_an_always_absent_partition_is_an_atom():
    """0/1 rows (absent = 0): a key kept on 48 of 64 rows against 12 of 64 is an event of log ratio
    ln((48.5 / 65) / (12.5 / 65)) = ln(3.88) (smoothed frequencies, closed form); an event whose larger
    frequency is below delta is delta's part and counts 0 (key 1: only its "absent" event counts); a key on
    every row of one side and none of the other is an atom. A value release with NaN for absent keys is
    read the same way."""
    from userdp.audits.validation.pair_search import _selection

    a = np.zeros((64, 3))
    b = np.zeros((64, 3))
    a[:48, 0], b[:12, 0] = 1, 1
    a[:1, 1] = 1  # 1/64 < delta = 0.05: no eps part
    per, atom = _selection(a, b, 0.0, 0.05)
    assert per[0] == pytest.approx(np.log(48.5 / 12.5)) and per[2] == 0.0
    assert per[1] == pytest.approx(np.log(64.5 / 63.5))  # only "absent", whose frequency exceeds delta
    assert atom is None
    b[:, 2] = 1  # planted: key 2 always kept on one side only
    per, atom = _selection(a, b, 0.0, 0.05)
    assert atom == (2, 1.0), atom
    v = np.where(a == 1, 3.5, np.nan)
    w = np.where(b == 1, 3.5, np.nan)
    per2, atom2 = _selection(v, w, float("nan"), 0.05)
    assert np.allclose(per2, per) and atom2 == (2, 3.5)


def test_the_search_finds_a_user_of_several_rows_in_one_partition():
    """desfontaines2022/count-rows counts rows, not distinct users: a user of r rows in a partition of
    n1' - 1 users raises its count by r (the correct code: by 1). Each added distinct user raises the keep
    probability at most e^(eps') there (eps' = 1/2), so the correct code's best pair realises about one
    claim; the rows bug's best holds several rows in one partition and realises more than twice it. The
    scores are seeded (the search's own stream); the margin is the closed form's e^(r eps') against e^1."""
    good = search_pairs(_ctx("desfontaines2022.optimal", "papers.desfontaines2022.corpus:recursion_bernoulli"), 30.0)
    bad = search_pairs(_ctx("desfontaines2022.optimal", "papers.desfontaines2022.corpus:count_rows"), 30.0)
    assert "presence" in bad.how and bad.atom is None, bad.summary()
    assert bad.scores[0] > 2.0 > 1.5 > good.scores[0], (good.summary(), bad.summary())
    assert not bad.pairs[0].description.split(": ", 1)[1].startswith("1 record"), bad.summary()


def test_the_search_finds_a_user_below_a_one_sided_clamp():
    """wilson2020/upper-clamp-only clamps by min(v, upper): a user of Linf = 2 records at -7 in the L0 = 3
    public partitions moves each by 14 where the bound allows 2 x max(|-1|, |2|) = 4 per partition: a share
    3 x 14 / 12 = 3.5 of the claim (closed form). At the scoring eps = 32 the Laplace scale is 12 / 32, so
    8 rows a side give each coordinate's move within 1.2 (4 standard errors) of the truth; the bound 2.5
    leaves more. Planted: the spec's own pairs add users at 2, where the bug moves nothing extra."""
    bad = search_pairs(_ctx("wilson2020.sum", "papers.wilson2020.corpus:upper_clamp_only"), 30.0)
    assert bad.scores[0] > 2.5, bad.summary()
    assert "at -7 in each of" in bad.pairs[0].description, bad.summary()


@pytest.mark.slow
def test_the_one_sided_clamp_is_a_privacy_violation_only_with_the_search():
    """Planted: with the search off, no pair of the spec reaches the excess (a deviation only)."""
    target = "papers.wilson2020.corpus:upper_clamp_only"
    on = validate("wilson2020.sum", target, seed=0)
    assert on.verdict == "privacy violation"
    hits = [f for f in on.findings if f.check == "audit" and f.verdict == "privacy violation"]
    assert hits and any(f.title.startswith("searched (") for f in hits), [f.title for f in hits]
    off = validate("wilson2020.sum", target, seed=0, search=False)
    assert off.verdict == "deviation from reference"


def test_domain_pairs_over_partitions_add_or_remove_one_user():
    """``--search`` with ``"relation": "add-remove-user"``: rows [user, partition, value]; each pair differs
    by exactly one user's rows (all of them), the added user holds 1 .. all of the keys with 1 or several
    records in each, existing keys and new ones, at the ends and inside the range."""
    pairs = domain_pairs(
        {"values": [0, 1], "sizes": [3], "relation": "add-remove-user", "partitions": [0, 1, 2, 3], "records": [1, 3]}
    )
    assert 20 <= len(pairs) <= 100
    spreads, per_key, keys, values = set(), set(), set(), set()
    for a, b in pairs:
        ua, ub = ({(r[0], r[1], r[2]) for r in x} for x in (a, b))
        diff = ua ^ ub
        users = {r[0] for r in diff}
        assert len(users) == 1, (a, b)
        (u,) = users
        mine = [r for r in (b if len(b) > len(a) else a) if r[0] == u]
        assert len(mine) == abs(len(b) - len(a)), "every row of the user appears or vanishes"
        ks = [r[1] for r in mine]
        spreads.add(len(set(ks)))
        per_key.add(max(ks.count(k) for k in ks))
        keys |= set(ks)
        values |= {r[2] for r in mine}
    assert spreads >= {1, 2, 4} and per_key >= {1, 3} and keys == {0, 1, 2, 3}
    assert any(0.0 < v < 1.0 for v in values) and {0.0, 1.0} <= values


PARTITION_COUNT = """
import numpy as np

_rng = np.random.default_rng()
KEYS = [0, 1, 2, 3]


def count_unbounded(rows):
    \"\"\"BUG: COUNT per key with Laplace noise for L0 = 2 partitions of one record per user (scale 2 at
    eps = 1), but no contribution bounding at all.\"\"\"
    c = np.zeros(len(KEYS))
    for u, p, v in rows:
        c[KEYS.index(int(p))] += 1
    return c + _rng.laplace(0.0, 2.0, len(KEYS))
"""


@pytest.mark.slow
def test_audit_search_over_partitions_finds_an_unbounded_user(tmp_path, monkeypatch, capsys):
    """``userdp audit --search`` on a black-box partition mechanism: the searched user holds 3 records in all
    4 keys, a move of L1 12 against the noise's 2 (true loss 6 eps); the confirmed eps_lb exceeds the claim
    (false alarm <= 1 - 0.99999). Planted: a pair that removes a one-record user moves L1 1 (loss 1/2)."""
    (tmp_path / "leaky_parts.py").write_text(PARTITION_COUNT)
    monkeypatch.chdir(tmp_path)
    common = ["audit", "--mechanism", "leaky_parts:count_unbounded", "--claim", "pure:epsilon=1"]
    common += ["--samples", "2000", "--confidence", "0.99999", "--workers", "1", "--json"]
    domain = {"values": [0, 1], "sizes": [3], "relation": "add-remove-user", "partitions": [0, 1, 2, 3]}
    assert cli.main(common + ["--search", json.dumps({**domain, "records": [1, 3]})]) == 1
    res = json.loads(capsys.readouterr().out)
    assert res["verdict"] == "violation" and res["epsilon_lower_bound"] > 1.0, res["epsilon_lower_bound"]
    one = ["--relation", "add-remove-user", "--pair", "[[0, 0, 0], [1, 1, 0]]", "[[1, 1, 0]]"]
    assert cli.main(common + one) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "no violation found"


def test_every_validatable_spec_declares_a_pair_search_domain():
    # docs/validate.md says so; a spec registered without one would be validated on its fixed pairs
    # only (planted: a spec whose domain is removed is listed).
    from userdp.audits.validation import all_specs

    def missing(specs) -> list:
        return sorted(name for name, spec in specs.items() if spec.domain is None)

    specs = all_specs()
    assert missing(specs) == []
    name = sorted(specs)[0]
    assert missing({name: dataclasses.replace(specs[name], domain=None)}) == [name]
