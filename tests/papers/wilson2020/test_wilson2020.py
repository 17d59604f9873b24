"""Tests of reference/wilson2020.py (Wilson et al. 2020, bounded user contribution over public
partitions): examples by hand, the exact expectation over the sampling by enumeration, the property
suite against the reference and every planted bug, the sampler's uniformity, and audits. "spec §N" is
a point of docs/papers/wilson2020.md, "The specification, by section".

Oracles: hand computations (in comments), brute-force enumeration of every sampling outcome, the
independent oracles of properties/wilson2020.py, scipy.stats (chi-square, Laplace).

Statistical tests (fixed seeds; false-failure probability stated at each):
- chi-square tests reject at p < 1e-5: a correct sampler fails with probability 1e-5 <= 1e-4;
- mean tests use 6 standard errors: two-sided normal tail 2e-9 per coordinate (<= 1e-4 in all);
- "no violation found" audits run at confidence 1 - 1e-4 (audits/engine/harness.py, Holm);
- "violation" audits of planted bugs: the exact loss of the bug is far above the claim (stated at
  each), so a miss at 100k samples per side is below 1e-4 (the margin is > 8 standard errors).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from userdp.audits.engine.harness import audit
from userdp.properties import wilson2020 as P
from userdp.properties.adapter import check_suite_property
from userdp.reference import wilson2020 as W
from userdp.reference.claims import ApproxDP, GaussianDP, PureDP
from userdp.reference.data import EMPTY, UserDataset

from papers.wilson2020 import planted  # tests/ is on sys.path (rootdir conftest)

SEED = 20200402
P_REJECT = 1e-5


def rng(seed=SEED):
    return np.random.default_rng(seed)


def D_small():
    # user 0: partition 0 {1, 2}, partition 1 {3}; user 1: partition 1 {4}, partition 2 {5};
    # user 2: partition 0 {-2}, partition 3 {0.5} (3 is never public below)
    return UserDataset.from_arrays(
        [1.0, 2.0, 3.0, 4.0, 5.0, -2.0, 0.5], [0, 0, 0, 1, 1, 2, 2], partition_ids=[0, 0, 1, 1, 2, 0, 3]
    )


PUB = [0, 1, 2]


# ------------------------------------------------------------------ examples
def test_statistic_by_hand_without_bounding():
    D = D_small()
    B = D.take(np.flatnonzero(np.isin(D.partition_ids, PUB)))
    np.testing.assert_array_equal(W.statistic(B, PUB, "count"), [3.0, 2.0, 1.0])
    # clamp to [0, 2.5]: p0 = 1 + 2 + 0, p1 = 2.5 + 2.5, p2 = 2.5
    np.testing.assert_allclose(W.statistic(B, PUB, "sum", 0.0, 2.5), [3.0, 5.0, 2.5], rtol=1e-15)
    # per-user sum clamped to [-1, 2.5]: p0 = min(3, 2.5) + max(-2, -1) = 1.5; p1 = 2.5 + 2.5; p2 = 2.5
    np.testing.assert_allclose(W.statistic(B, PUB, "sum", -1.0, 2.5, "sum"), [1.5, 5.0, 2.5], rtol=1e-15)
    # mean: mid 1.25; p0 records clamped {1, 2, 0} -> mean 1; p1 {2.5, 2.5} -> 2.5
    np.testing.assert_allclose(W.statistic(B, PUB, "mean", 0.0, 2.5), [1.0, 2.5, 2.5], rtol=1e-15)
    np.testing.assert_array_equal(W.statistic(EMPTY, PUB, "mean", 0.0, 2.5), [1.25] * 3)  # empty: mid


def test_sensitivities_of_the_note_table():
    assert W.sensitivity("count", 3, 2) == 6.0  # L0 Linf
    assert W.sensitivity("count", 4, 2, norm="l2") == pytest.approx(4.0, rel=1e-15)  # sqrt(4) 2
    assert W.sensitivity("sum", 2, 3, -5.0, 1.0) == 30.0  # 2 * 3 * max(5, 1)
    assert W.sensitivity("sum", 2, None, -5.0, 1.0, "sum") == 10.0  # 2 * max(5, 1), no Linf
    assert W.partition_sensitivity("mean", 2, 2.0, 3.0) == 1.0  # 2 * (3 - 2) / 2 (spec §4.1: 0.5 per record)
    assert W.noise_scale("sum", 2, 2, 1.0, 0.0, 1.0) == 4.0  # spec §4's example: b = 4, std 5.657
    b_count, b_nsum = W.noise_scale("mean", 2, 2, 1.0, 0.0, 1.0)
    assert (b_count, b_nsum) == (8.0, 4.0)  # 2*2/(1/2), 2*2*0.5/(1/2)
    assert W.claim(1.0) == PureDP(1.0) and W.claim(1.0, 1e-5, "gaussian") == ApproxDP(1.0, 1e-5)


def test_bounding_keeps_at_most_the_bounds_and_mechanism_shares_its_draws():
    D = D_small()
    for s in range(20):
        B = W.bound(D, PUB, 1, 1, rng(s))
        # users 0 and 1: one record of one partition each; user 2: its one public record (partition 0)
        assert B.n == 3 and sorted(B.user_ids.tolist()) == [0, 1, 2] and -2.0 in B.values.tolist()
    # the mechanism with size=None draws the bounding first, then the noise
    a = W.mechanism(D, PUB, "count", 1, 1, 1.0, rng(5))
    s = W.statistic(W.bound(D, PUB, 1, 1, rng(5)), PUB, "count")
    assert np.all(np.abs(a - s) < 60)  # Laplace(1): |noise| < 60 with probability 1 - 3e-26 per coordinate


def _outcomes(D, L0, Linf):
    """Every bounding outcome with its probability, by enumeration (users' choices independent)."""
    pub = np.flatnonzero(np.isin(D.partition_ids, PUB))
    per_user = []
    for u in np.unique(D.user_ids[pub]):
        mine = pub[D.user_ids[pub] == u]
        parts = sorted(set(D.partition_ids[mine].tolist()))
        choices = []
        for ps in itertools.combinations(parts, min(L0, len(parts))):
            cells = [mine[D.partition_ids[mine] == p] for p in ps]
            subsets = [list(itertools.combinations(c, min(Linf, c.size))) for c in cells]
            combos = list(itertools.product(*subsets))
            w = 1 / math.comb(len(parts), len(ps)) / len(combos)
            choices += [(w, [i for c in combo for i in c]) for combo in combos]
        per_user.append(choices)
    for pick in itertools.product(*per_user):
        yield math.prod(w for w, _ in pick), sorted(i for _, idx in pick for i in idx)


@pytest.mark.parametrize("L0,Linf", [(1, 1), (2, 1), (1, 2)])
def test_expected_statistic_by_enumeration(L0, Linf):
    D = D_small()
    for metric, lo, hi in (("count", None, None), ("sum", -1.0, 2.5)):
        want = sum(
            w
            * np.asarray(
                P.statistic_oracle(D.take(np.array(idx)), P.Query(tuple(PUB), metric, L0, Linf, lo, hi, "records"))
            )
            for w, idx in _outcomes(D, L0, Linf)
        )
        np.testing.assert_allclose(W.expected_statistic(D, PUB, metric, L0, Linf, lo, hi), want, rtol=1e-12)


def test_sampling_is_uniform_over_partitions_and_records():
    # user 0 of D_small has partitions {0, 1}; with L0 = 1 each is kept with probability 1/2; in
    # partition 0 its records {1, 2} each with probability 1/2 (Linf = 1). Chi-square at p < 1e-5.
    D, n = D_small(), 1600
    g = rng(11)
    seen = {(1.0,): 0, (2.0,): 0, (3.0,): 0}
    for _ in range(n):
        B = W.bound(D, PUB, 1, 1, g)
        seen[tuple(B.values[B.user_ids == 0].tolist())] += 1
    p = stats.chisquare(list(seen.values()), [n / 4, n / 4, n / 2]).pvalue
    assert p > P_REJECT, seen


def test_release_mean_matches_the_exact_expectation():
    # 20000 releases of SUM (L0 = 1, Linf = 1, [0, 2.5], eps = 1): mean within 6 standard errors
    D, n = D_small(), 20_000
    out = W.mechanism(D, PUB, "sum", 1, 1, 1.0, rng(3), size=n, lower=0.0, upper=2.5)
    want = W.expected_statistic(D, PUB, "sum", 1, 1, 0.0, 2.5)
    se = out.std(axis=0) / math.sqrt(n)
    assert np.all(np.abs(out.mean(axis=0) - want) < 6 * se), (out.mean(axis=0), want, se)
    assert W.release_map(out[0], PUB).keys() == {0, 1, 2}


# ------------------------------------------------------------------ properties and planted bugs
def _check(prop, impl):
    return check_suite_property(P, prop, impl)


@pytest.mark.parametrize("prop", P.ALL_PROPERTIES, ids=lambda p: p.__name__)
def test_reference_passes_property(prop):
    f = _check(prop, P.REFERENCE)
    assert f.verdict == "pass", f


CAUGHT_BY_PROPERTY = {
    "l0-off-by-one": [P.prop_contribution_budget, P.prop_sensitivity_brute_force],
    "no-linf-sampling": [P.prop_contribution_budget],
    "largest-partitions-kept": [P.prop_sampling_ignores_values],
    "bound-before-public-filter": [P.prop_contribution_budget],
    "clamp-after-aggregate": [P.prop_statistic_clamps],
    "sum-clamp-per-record": [P.prop_statistic_clamps, P.prop_sensitivity_brute_force],
    "sensitivity-max-without-abs": [P.prop_sensitivity_formula, P.prop_noise_scale_calibrated],
    "replace-one-sensitivity": [P.prop_sensitivity_formula],
    "l2-without-sqrt-l0": [P.prop_sensitivity_formula],
    "classical-gaussian-sigma": [P.prop_noise_scale_calibrated],
    "mean-sum-over-count": [P.prop_noise_scale_calibrated],
}


@pytest.mark.parametrize(
    "bug,prop", [(b, p) for b, ps in CAUGHT_BY_PROPERTY.items() for p in ps], ids=lambda v: getattr(v, "__name__", v)
)
def test_planted_bug_caught_by_property(bug, prop):
    f = _check(prop, planted.BY_NAME[bug].adapter)
    assert f.verdict == "invariant violation", f


def test_every_property_fails_on_some_planted_bug():
    caught = {p for ps in CAUGHT_BY_PROPERTY.values() for p in ps}
    assert set(P.ALL_PROPERTIES) <= caught, {p.__name__ for p in set(P.ALL_PROPERTIES) - caught}


CAUGHT_BY_AUDIT = ["l0-off-by-one", "no-linf-sampling", "sensitivity-max-without-abs", "l2-without-sqrt-l0"]


def test_every_planted_bug_has_a_catcher_and_a_record():
    for b in planted.BUGS:
        assert b.name and b.bug_type and b.effect and b.source
        assert b.name in CAUGHT_BY_PROPERTY or b.name in CAUGHT_BY_AUDIT, b.name


def _claim(b):
    # l2-without-sqrt-l0: sigma calibrated to L2 = 1 where the added user moves 3 partitions by 1
    # (L2 = sqrt 3). The bug believes its release is (1/sigma)-GDP (Dong-Roth-Su Thm 2.7 with L2 = 1);
    # in truth it is (sqrt(3)/sigma)-GDP, so the trade-off audit sees mu sqrt(3) against mu.
    if b.claim is not None:
        return b.claim
    sigma = W.noise_scale("count", 3, 1, 1.0, None, None, 1e-5, "gaussian") / math.sqrt(3)
    return GaussianDP(1.0 / sigma)


@pytest.mark.slow
@pytest.mark.parametrize("name", CAUGHT_BY_AUDIT)
def test_planted_bug_caught_by_audit(name):
    # exact losses: l0-off-by-one: 2 partitions moved by 1 at b = 1: 2 eps; no-linf-sampling: COUNT moved
    # by 4 at b = 1: 4 eps; max-without-abs: SUM moved by 10 at b = 1: 10 eps (claim 1, > 8 se above)
    b = planted.BY_NAME[name]
    out = "vector"
    res = audit(b.mechanism, b.pairs, _claim(b), samples=100_000, confidence=0.95, seed=SEED, output=out)
    assert res.verdict == "violation", res


def test_planted_bug_caught_by_audit_quick():
    # the cheapest of the four in the default run: the under-noised SUM (exact loss 10 eps against 1)
    b = planted.BY_NAME["sensitivity-max-without-abs"]
    res = audit(b.mechanism, b.pairs, b.claim, samples=20_000, confidence=0.95, seed=SEED, output="vector")
    assert res.verdict == "violation" and res.epsilon_lower_bound > 1.0, res


# ------------------------------------------------------------------ registry, specs, reproduction
def test_registry_lists_the_entries_and_every_spec_has_one():
    from userdp.audits.engine import registry as R
    from userdp.audits.papers.wilson2020.specs import SPECS
    from userdp.audits.validation import all_specs

    names = {e.name for e in R.all_entries()}
    assert set(SPECS) <= names and set(SPECS) <= set(all_specs())
    assert R.get("wilson2020.l0-off-by-one").expected == "violation"
    assert "wilson2020-bound" in R.all_reproductions()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["wilson2020.count", "wilson2020.sum", "wilson2020.sum-per-user", "wilson2020.mean"])
def test_reference_entries_show_no_violation(name):
    # confidence 1 - 1e-4: a correct mechanism is flagged with probability <= 1e-4 (Holm over all sets)
    from userdp.audits.engine import registry as R

    s = R.get(name).setup()
    res = audit(s.mechanism, s.pairs, s.claim, samples=100_000, confidence=1 - 1e-4, seed=SEED, output=s.output)
    assert res.verdict == "no violation found", res


@pytest.mark.slow
def test_planted_entry_l0_off_by_one_is_flagged():
    # exact loss 3/2 eps on its pair (the added user moves 3 partitions by 1 at scale 2): > 8 se above 1
    from userdp.audits.engine import registry as R

    s = R.get("wilson2020.l0-off-by-one").setup()
    res = audit(s.mechanism, s.pairs, s.claim, samples=300_000, confidence=0.95, seed=SEED, output=s.output)
    assert res.verdict == "violation", res


def test_exact_mse_by_hand():
    # two users: user 0 in partitions {0, 1}, user 1 in {0}; L0 = 1: q_0 = 1/2, q_1 = 1.
    # bias: p0 = -1/2, p1 = -1/2 -> 1/2; sampling: 2 records x 1/4 = 1/2; noise 20 x 2 x 1 = 40
    from userdp.audits.papers.wilson2020 import reproductions as RP

    D = UserDataset.from_arrays([1.0, 1.0, 1.0], [0, 0, 1], partition_ids=[0, 1, 0])
    got = RP.exact_mse(D, 1)
    assert got == pytest.approx({"bias2": 0.5, "sampling": 0.5, "noise": 40.0, "mse": 41.0}, rel=1e-12)


def test_release_follows_the_order_of_the_public_list():
    # the list [2, 9, 0]: partition 9 has no record (released from noise alone), the order is the list's
    D = D_small()
    np.testing.assert_array_equal(W.statistic(D, [2, 9, 0], "count"), [1.0, 0.0, 3.0])
    a = W.mechanism(D, [2, 9, 0], "count", 3, 3, 1.0, rng(1), size=2)
    b = W.mechanism(D, [0, 2, 9], "count", 3, 3, 1.0, rng(1), size=2)
    assert a.shape == b.shape == (2, 3)
    # no sampling here (L0 = Linf = 3): the same noise draws land on the listed positions
    np.testing.assert_allclose(a - W.statistic(D, [2, 9, 0], "count"), b - W.statistic(D, [0, 2, 9], "count"))
