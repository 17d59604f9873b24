"""Tests for Epasto et al. 2020 §3: reference/epasto2020.py, its property suite, planted bugs,
audits and the Theorem 2 reproduction.

Tolerances: closed forms below are exact rationals evaluated in double precision, so
they are compared with rel=1e-12 (a few ulps of rounding, far below any real error).
"""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, strategies as st

from userdp.audits.engine.harness import audit
from userdp.properties import epasto2020 as P
from userdp.properties.adapter import check_property, check_suite_property
from userdp.properties.strategies import user_size_profiles, weights_summing_to
from userdp.reference import epasto2020 as E
from userdp.reference.claims import PureDP
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import ADD_REMOVE_USER, REPLACE_USER

from papers.epasto2020.planted import BUGS  # tests/ is on sys.path (rootdir conftest, no tests/__init__.py)

TIGHT = 1e-12


def ds(per_user):
    return UserDataset.from_user_lists(per_user)


# ------------------------------------------------------------------ closed-form examples
def test_lemma3_weights_by_hand():
    # counts (1, 2, 5), h = 2: n_h = 1 + 2 + 2 = 5; c = 1/5, 2/(2*5), 2/(5*5) per record.
    c = E.lemma3_weights(np.array([1, 2, 5]), 2)
    want = np.r_[0.2, 0.2, 0.2, np.full(5, 0.08)]
    np.testing.assert_allclose(c, want, rtol=TIGHT)
    assert E.n_h(np.array([1, 2, 5]), 2) == pytest.approx(5.0, rel=TIGHT)


def test_wa_stages_by_hand():
    # Users [0.1], [0.3, 0.5], [1, 1, 1, 1, 0] at h = 2 (weights above), B = 1, eps = 2:
    # beta_hat = 0.2*0.1 + 0.2*(0.3+0.5) + 0.08*4 = 0.02 + 0.16 + 0.32 = 0.5;
    # Lemma 1: Delta = B * max_l W_l = max(0.2, 0.4, 0.4) = 0.4; b = 0.4 / 2 = 0.2.
    D = ds([[0.1], [0.3, 0.5], [1, 1, 1, 1, 0]])
    c = E.lemma3_weights(D, 2)
    assert E.wa_statistic(D, c, 1.0) == pytest.approx(0.5, rel=TIGHT)
    assert E.wa_sensitivity(D, c, 1.0) == pytest.approx(0.4, rel=TIGHT)
    assert E.wa_noise_scale(D, c, 1.0, 2.0) == pytest.approx(0.2, rel=TIGHT)
    # Lemma 2 with sigma = 0.5: 0.25 * (0.04 + 2*0.04 + 5*0.0064) + 2 * 0.2^2 = 0.038 + 0.08.
    assert E.wa_variance(D, c, 0.5, 1.0, 2.0) == pytest.approx(0.118, rel=TIGHT)


def test_v_matches_lemma2_by_hand():
    # Claim 1 at counts (1, 2, 5), h = 2, sigma = 0.5, B = 1, eps = 1:
    # sigma^2 (1 + 2 + 4/5) / 5^2 + 2 (2/5)^2 = 0.038 + 0.32 = 0.358.
    assert E.v(np.array([1, 2, 5]), 2.0, 0.5, 1.0, 1.0) == pytest.approx(0.358, rel=TIGHT)


def test_optimal_h_by_hand():
    # counts (1, 3): on [1, 3], v(h) = (sigma^2 (1 + h^2/3) + K h^2) / (1 + h)^2 with
    # K = 2 B^2 / eps^2; dv/dh = 0 at h = sigma^2 / (sigma^2/3 + K). sigma = 1/2, B = 1,
    # eps = 10: K = 1/50, h* = (1/4) / (1/12 + 1/50) = 75/31 (calculus by hand).
    assert E.optimal_h(np.array([1, 3]), 0.5, 1.0, 10.0) == pytest.approx(75 / 31, rel=TIGHT)
    # eps = 2: K = 1/2 and the stationary point 3/7 < s_1 = 1, so h* = s_1.
    assert E.optimal_h(np.array([1, 3]), 0.5, 1.0, 2.0) == pytest.approx(1.0, rel=TIGHT)
    # all users equal: the only admissible h is s_1 = s_m.
    assert E.optimal_h(np.array([4, 4, 4]), 0.5, 1.0, 1.0) == 4.0


def test_sample_limiting_weights_by_hand():
    # ids [5, 7, 5, 5, 7], h = 2: user 5 keeps records 0, 2 (first two in record order),
    # user 7 keeps 1, 4; n_h = 2 + 2 = 4, so c = 1/4 on kept records.
    D = UserDataset(values=np.zeros(5), user_ids=np.array([5, 7, 5, 5, 7]))
    np.testing.assert_allclose(E.sample_limiting_weights(D, 2), [0.25, 0.25, 0.25, 0.0, 0.25], rtol=TIGHT)


def test_v_prime_by_hand():
    # Claim 2 at counts (1, 2, 5), h = 2, sigma = 0.5, B = 1, eps = 1: 0.25/5 + 2 (2/5)^2 = 0.37.
    assert E.v_prime(np.array([1, 2, 5]), 2, 0.5, 1.0, 1.0) == pytest.approx(0.37, rel=TIGHT)


def test_theorem2_instance_meets_both_bounds():
    # Closed forms from theorem2_instance's docstring: v'(g) / sigma^2 = 3/(4g) and
    # v(g) / sigma^2 = (2g + g^2/(g^2+1)) / (4 g^2) < (2g+1)/(4g^2).
    for g in (1, 2, 7, 50):
        I = E.theorem2_instance(g)
        s, sig, B, eps = I["counts"], I["sigma"], I["B"], I["epsilon"]
        sl = E.v_prime(s, E.best_integer_h(s, sig, B, eps), sig, B, eps) / sig**2
        assert sl == pytest.approx(3 / (4 * g), rel=TIGHT)
        wa = E.v(s, E.optimal_h(s, sig, B, eps), sig, B, eps) / sig**2
        assert wa <= (2 * g + g * g / (g * g + 1)) / (4 * g * g) * (1 + TIGHT)
        assert wa < (2 * g + 1) / (4 * g * g)


# ------------------------------------------------------------------------- bad input
BAD = [
    (lambda: E.wa_statistic(ds([[0.5, 1.5]]), [0.5, 0.5], 1.0), "dataset.values"),
    (lambda: E.wa_statistic(ds([[-0.1, 0.5]]), [0.5, 0.5], 1.0), "dataset.values"),
    (lambda: E.wa_statistic(ds([[0.5, 0.5]]), [1.5, -0.5], 1.0), "non-negative"),
    (lambda: E.wa_statistic(ds([[0.5, 0.5]]), [0.5, 0.6], 1.0), "sum to 1"),
    (lambda: E.wa_statistic(ds([[0.5, 0.5]]), [1.0], 1.0), "shape"),
    (lambda: E.wa_noise_scale(ds([[0.5]]), [1.0], 1.0, 0.0), "epsilon"),
    (lambda: E.wa_noise_scale(ds([[0.5]]), [1.0], 1.0, -1.0), "epsilon"),
    (lambda: E.wa_sensitivity(ds([[0.5]]), [1.0], 0.0), "B"),
    (lambda: E.lemma3_weights(np.array([2, 5]), 1), "h must lie in"),
    (lambda: E.lemma3_weights(np.array([2, 5]), 6), "h must lie in"),
    (lambda: E.sample_limiting_weights(np.array([2, 5]), 6), "h must lie in"),
    (lambda: E.optimal_weights(np.array([2, 0, 5]), 1.0, 1.0), "empty user"),
    (lambda: E.optimal_weights(np.array([], dtype=int), 1.0, 1.0), "counts"),
    (lambda: E.optimal_weights(np.array([2, 5]), 1.0, 1.0, sigma=-0.1), "sigma"),
    (lambda: E.optimal_h(np.array([2, 5]), 0.5, 1.0, 0.0), "epsilon"),
    (lambda: E.theorem2_instance(0), "g must be"),
    (lambda: E.wa_statistic(UserDataset(np.zeros((2, 2)), np.array([0, 1])), [0.5, 0.5], 1.0), "scalar"),
]


@pytest.mark.parametrize("call,needle", BAD, ids=[b[1] + str(i) for i, b in enumerate(BAD)])
def test_bad_input_refused(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


def test_values_are_not_clipped_silently():
    D = ds([[0.2, 1.0000001]])
    with pytest.raises(ValueError, match=r"dataset.values\[1\]"):
        E.optimal_wa_mechanism(D, np.random.default_rng(0), 10, epsilon=1.0, B=1.0)


def test_mechanism_needs_a_generator():
    with pytest.raises(TypeError, match="rng"):
        E.optimal_wa_mechanism(ds([[0.5]]), 0, 10, epsilon=1.0, B=1.0)


# ---------------------------------------------------- exact optimisers against brute force
profiles = user_size_profiles(max_users=12, max_size=40)
# sigma: 0 or a magnitude in [1e-6, 2] (the reference refuses 0 < sigma < 1e-50, _checks.MAGNITUDE)
publics = st.tuples(
    st.one_of(st.just(0.0), st.floats(1e-6, 2.0)), st.sampled_from([0.5, 1.0, 3.0]), st.floats(0.05, 20.0)
)


@given(profiles, publics)
def test_optimal_h_matches_brute_force(s, pub):
    sigma, B, eps = pub
    h = E.optimal_h(s, sigma, B, eps)
    assert s.min() <= h <= s.max()
    got = float(E.v(s, h, sigma, B, eps))
    _, best = P.brute_force_min_v(s, sigma, B, eps)
    # The brute force only evaluates v, so best >= true min; rel 1e-9 covers rounding of both.
    assert got <= best * (1 + 1e-9)


@given(profiles, publics)
def test_best_integer_h_matches_exhaustive_search(s, pub):
    sigma, B, eps = pub
    ints = np.arange(s.min(), s.max() + 1)
    vals = E.v_prime(s, ints, sigma, B, eps)  # every admissible integer h
    got = E.best_integer_h(s, sigma, B, eps)
    assert float(E.v_prime(s, got, sigma, B, eps)) <= vals.min() * (1 + 1e-12)


@given(profiles, publics)
def test_theorem3_ratio_between_1_and_4(s, pub):
    sigma, B, eps = pub
    r = E.variance_ratio(s, sigma, B, eps)
    # ratio >= 1: sample limiting is WA_c with other weights (Lemma 3 optimality); rel 1e-12 rounding.
    assert 1 - 1e-12 <= r <= 4 * (1 + 1e-12), f"ratio {r!r} outside [1, 4] (Theorem 3)"


@given(st.data())
def test_no_weights_beat_lemma3(data):
    # Lemma 3 / Claim 1: no c >= 0 with sum 1 has a smaller Lemma 2 variance than v(h*).
    D = data.draw(P.wa_examples(max_users=6, max_records_per_user=5, relation=None))
    c = data.draw(weights_summing_to(1.0, D.dataset.n))
    best = float(E.v(D.dataset.counts, E.optimal_h(D.dataset.counts, D.sigma, D.B, D.epsilon), D.sigma, D.B, D.epsilon))
    assert E.wa_variance(D.dataset, c, D.sigma, D.B, D.epsilon) >= best * (1 - 1e-9)


@given(profiles, publics)
def test_optimal_weights_variance_equals_v(s, pub):
    # Claim 1's proof: the Lemma 2 variance of Lemma 3's weights is v(h) (two formulas).
    sigma, B, eps = pub
    c, h = E.optimal_weights(s, eps, B, sigma=sigma)
    D = UserDataset(values=np.zeros(int(s.sum())), user_ids=np.repeat(np.arange(s.size), s))
    assert E.wa_variance(D, c, sigma, B, eps) == pytest.approx(float(E.v(s, h, sigma, B, eps)), rel=1e-9)


def test_theorem2_ratio_increases_towards_three_halves():
    rows = [E.variance_ratio(**E.theorem2_instance(g)) for g in range(1, 51)]
    assert np.all(np.diff(rows) > 0)
    # Theorem 2's bounds give ratio > 3g/(2g+1), which is 150/101 = 1.4851 at g = 50.
    assert 150 / 101 < rows[-1] < 1.5


# --------------------------------------------------------------- the property suite


def _check(prop, impl, max_examples=None):
    """One property run as a validator runs it: the suite's strategy, hard examples and effort."""
    return check_suite_property(P, prop, impl, max_examples=max_examples)


WA_ONLY = {"prop_lemma3_form", "prop_minimises_variance"}  # sample limiting is not Lemma 3's optimum


@pytest.mark.parametrize("prop", P.ALL_PROPERTIES, ids=lambda p: p.__name__)
@pytest.mark.parametrize("impl", [P.REFERENCE_WA, P.REFERENCE_SL], ids=["wa", "sample-limiting"])
def test_reference_passes(prop, impl):
    if impl is P.REFERENCE_SL and prop.__name__ in WA_ONLY:
        finding = _check(prop, impl, max_examples=50)
        assert finding.verdict == "invariant violation"  # positive control: SL is not optimal
        return
    finding = _check(prop, impl)
    assert finding.verdict == "pass", finding


CATCHERS = [(bug, name) for bug in BUGS for name in bug.caught_by if name != "audit"]


@pytest.mark.parametrize("bug,prop_name", CATCHERS, ids=[f"{b.name}-{n}" for b, n in CATCHERS])
def test_planted_bug_caught_by_property(bug, prop_name):
    finding = _check(getattr(P, prop_name), bug.adapter)
    assert finding.verdict == "invariant violation", finding
    assert finding.counterexample


def test_add_remove_reading_caught_by_property():
    # Reading ambiguity: the optimal weights depend on every s_l, so under add/remove-user
    # the noise scale changes with the added/removed user; the property sees it.
    finding = check_property(
        P.prop_sensitivity_bounds_sampled_neighbour, P.wa_examples(relation=ADD_REMOVE_USER), P.REFERENCE_WA
    )
    assert finding.verdict == "invariant violation", finding
    assert "noise scale" in finding.message or "sensitivity" in finding.message


def test_neighbour_property_without_neighbours_is_a_suite_error():
    # wa_examples(relation=None) gives no usable example: a bug of the test, never a
    # verdict against the implementation (it used to be an "invariant violation").
    with pytest.raises(RuntimeError, match="no usable example"):
        check_property(
            P.prop_sensitivity_bounds_sampled_neighbour, P.wa_examples(relation=None), P.REFERENCE_WA, max_examples=5
        )


def test_wa_examples_draw_a_neighbour_under_the_suite_relation_by_default():
    # The default of the strategy is the suite's relation: a caller who
    # writes wa_examples() for the neighbour property gets usable examples, not a suite error.
    assert P.RELATION is E.RELATION is REPLACE_USER
    assert (
        check_property(
            P.prop_sensitivity_bounds_sampled_neighbour, P.wa_examples(), P.REFERENCE_WA, max_examples=20
        ).verdict
        == "pass"
    )


def test_every_bug_has_a_catcher_and_provenance():
    assert len(BUGS) >= 4
    for bug in BUGS:
        assert bug.caught_by and bug.bug_type and bug.effect and bug.source


def test_every_property_fails_on_some_planted_bug():
    # No property that cannot fail: each one is shown failing on a planted bug (review finding 3).
    caught = {name for bug in BUGS for name in bug.caught_by}
    assert {p.__name__ for p in P.ALL_PROPERTIES} <= caught, {p.__name__ for p in P.ALL_PROPERTIES} - caught
    assert set(P.STRATEGIES) == set(P.ALL_PROPERTIES)  # and the tests above run them all


def test_oracles_by_hand():
    # The suite's own oracles (written from the paper, not the reference), on the examples
    # above: counts (1, 2, 5), h = 2, sigma = 0.5, B = 1, eps = 1 (Claim 1: 0.358) and the
    # Lemma 3 weights (0.2; 0.2, 0.2; 0.08 x 5) with Lemma 2 at eps = 2 (0.118).
    D = ds([[0.1], [0.3, 0.5], [1, 1, 1, 1, 0]])
    c = P.lemma3_weights_oracle(D, 2)
    np.testing.assert_allclose(c, np.r_[0.2, 0.2, 0.2, np.full(5, 0.08)], rtol=TIGHT)
    assert P.n_h_oracle([1, 2, 5], 2) == 5.0
    np.testing.assert_allclose(P.user_weights_oracle(D, c), [0.2, 0.4, 0.4], rtol=TIGHT)
    assert P.lemma2_variance(D, c, 0.5, 1.0, 2.0) == pytest.approx(0.118, rel=TIGHT)
    assert float(P.claim1_v([1, 2, 5], 2.0, 0.5, 1.0, 1.0)) == pytest.approx(0.358, rel=TIGHT)
    # counts (1, 3), sigma = 1/2, B = 1, eps = 10: the minimiser 75/31 derived by hand above
    h, best = P.brute_force_min_v([1, 3], 0.5, 1.0, 10.0)
    assert h == pytest.approx(75 / 31, rel=1e-6)
    assert best == pytest.approx(float(P.claim1_v([1, 3], 75 / 31, 0.5, 1.0, 10.0)), rel=1e-12)


# --------------------------------------------------------------------------- audits
def _default_pairs():
    from userdp.audits.papers.epasto2020.audits import default_dataset

    return REPLACE_USER.worst_case_pairs(default_dataset(), 0.0, 1.0)


@pytest.mark.parametrize(
    "mech", [E.optimal_wa_mechanism, E.best_sample_limiting_mechanism], ids=["wa", "sample-limiting"]
)
def test_reference_audit_is_tight_and_passes(mech):
    pairs = _default_pairs()

    def m(dataset, rng, size):
        return mech(dataset, rng, size, epsilon=1.0, B=1.0)

    res = audit(m, pairs, PureDP(1.0), samples=1_000_000, confidence=1 - 1e-4, seed=20200)
    # False failure: the harness flags a correct mechanism with probability <= 1 - confidence
    # = 1e-4. Tightness: at 9e5 counting samples the witness counts are ~1e5 or more per side,
    # so ln(k2/k1) has sd ~ sqrt(1/k1 + 1/k2) < 0.005; falling from the ~0.986 ceiling (docs/design.md §6) below
    # 0.9 is > 15 sd away: probability < 1e-40.
    assert res.verdict == "no violation found", res
    assert res.tightness >= 0.9, res
    # The witness user realises Delta exactly: its weight is the maximal W_l (here the two
    # heaviest users, s = 50 and 25, are both capped at h* ~ 1.91, so either can be the witness).
    D = res.witness.pair.first
    c = (
        E.optimal_weights(D, 1.0, 1.0)[0]
        if mech is E.optimal_wa_mechanism
        else E.sample_limiting_weights(D, E.best_integer_h(D.counts, None, 1.0, 1.0))
    )
    W = D.user_sums(c)
    assert W[D.position_of(res.witness.unit)] == pytest.approx(W.max(), rel=TIGHT)


AUDIT_BUGS = [b for b in BUGS if "audit" in b.caught_by]


@pytest.mark.parametrize("bug", AUDIT_BUGS, ids=[b.name for b in AUDIT_BUGS])
def test_planted_bug_caught_by_audit(bug):
    pairs = _default_pairs()

    def m(dataset, rng, size):
        return bug.adapter.mechanism(dataset, rng, size, B=1.0, epsilon=1.0, sigma=0.5)

    res = audit(m, pairs, PureDP(1.0), samples=100_000, confidence=1 - 1e-4, seed=20201)
    # Each bug's true loss on this dataset is >= 2.6 eps (n/n_h = 2.65, s_m n_h/(n h*) = 9.9,
    # h = 3 for sample limiting); measured eps_lb at this seed: 2.55, 8.24, 2.89. Missing it
    # needs ln(k2/k1) off by > 1 where its sd is < 0.03 (counts >= 2000 per side for the two
    # mild bugs): > 30 sd, probability < 1e-100.
    assert res.verdict == "violation", res
    assert res.epsilon_lower_bound > 1.5, res


# ------------------------------------------------------------------ registry and reproduction
def test_registry_entries_and_reproduction():
    from userdp.audits.engine import registry

    for name in ("epasto2020.wa", "epasto2020.sample-limiting"):
        entry = registry.get(name)
        assert entry.kind == "reference" and entry.expected == "no violation found"
        setup = entry.setup()
        assert setup.claim == PureDP(1.0) and len(setup.pairs) == 3
    out = registry.get_reproduction("epasto2020-theorem2")()
    assert len(out["table"]) == 50
    assert all(c["holds"] for c in out["claims"]), out["claims"]


def test_registered_planted_entry_is_flagged():
    from userdp.audits.engine import registry

    entry = registry.get("epasto2020.planted.add-remove-user")
    setup = entry.setup()
    res = audit(setup.mechanism, setup.pairs, setup.claim, samples=entry.samples, confidence=1 - 1e-4, seed=20202)
    # Reading ambiguity (add/remove-user instead of §2.2's replace-user): removing user 1
    # halves the noise scale (n_h: 2 -> 1 at h* = s_1), so the true loss is unbounded in the
    # tails. Measured eps_lb = 2.88 at this seed (witness counts 16 vs 819 of 9e4). A miss
    # needs the Clopper-Pearson bound at level 1e-4 to fall by 1.9, i.e. ln(k2/k1) ~ 3.9 to
    # drop to ~2 (k1 ~ 16 -> ~ 110 at k2 ~ 819): P[Poisson(16) >= 100] < 1e-9.
    assert entry.expected == res.verdict == "violation", res
    assert res.epsilon_lower_bound > 1.5, res


def test_reproduction_plot(tmp_path):
    pytest.importorskip("matplotlib", reason="plot extra (matplotlib) not installed")
    from userdp.audits.papers.epasto2020 import audits as R

    f = tmp_path / "theorem2.png"
    R.reproduce_theorem2(plot=str(f))
    assert f.stat().st_size > 1000
