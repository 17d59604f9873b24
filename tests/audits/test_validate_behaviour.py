"""validate's behaviour check (audits/validation/check_behaviour.py) and the witnesses a privacy violation
needs (audits/validation/findings.py, the under-noised grading of report_differential.py).

Each capability against a planted bug that proves it can fail, and a planted miss that it must not flag:
- a data-dependent refusal, warning, non-finite value or release shape is a privacy violation with its
  pair (neighbours under the spec's relation, as the runnable snippet rebuilds them), found in seconds;
  with the check turned off the refusal exits 3 (UserCodeError) and the warning passes;
- a refusal on every dataset, a warning on every call and a failure at random are not findings;
- the spread rule alone is a deviation ("a possible privacy violation"); an exact coupled replay of the
  pair is the witness that makes it a violation; a clamp is no replay witness;
- "clips" is inferred only where the clip test could tell clipped from unclipped data (planted: without
  its dataset further out, a trusting target is inferred to clip); the out-of-domain designs name the
  fields in which they leave the domain.
Every run is at validate's own settings with a fixed seed (false alarm <= 1e-4 per run).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

from userdp.audits.engine.usercode import UserCodeError
from userdp.audits import validation as VS
from userdp.audits.validation import check_behaviour, check_differential, check_inputs, get, report
from userdp.audits.validation import run as V
from userdp.audits.validation.findings import Finding
from userdp.audits.validation.target import load_target
from userdp.reference.neighbours import RELATIONS, is_neighbour

ALGO = "amin2019.capped-sum"
M = "papers.amin2019.corpus"


def _behaviour(target):
    """The behaviour check alone on ``target`` (module:object or a function): its findings and the context."""
    todo = {c.name: c for c in V.checks(ALGO, target, quick=True)}
    found = todo["behaviour"].run()
    return found, todo["behaviour"].ctx


def _module_target(fn, name):
    """``fn`` as a module:object target (validate loads targets by name)."""
    import types
    import sys

    mod = types.ModuleType(f"_behaviour_{name}")
    setattr(mod, name, fn)
    sys.modules[mod.__name__] = mod
    return f"{mod.__name__}:{name}"


def _totals(D):
    return np.bincount(np.unique(D.user_ids, return_inverse=True)[1], weights=D.values)


def test_a_data_dependent_refusal_is_a_privacy_violation_with_its_pair_in_seconds():
    t0 = time.process_time()
    r = V.validate(ALGO, f"{M}:refuses_total_above_cap", quick=True)
    cpu = time.process_time() - t0
    assert r.verdict == "privacy violation" and cpu < 30, cpu  # seconds, not minutes (measured: ~1.5 s)
    f = next(f for f in r.findings if f.check == "behaviour")
    assert "raised ValueError on 10 of 10 calls" in f.evidence["first_side"] + f.evidence["second_side"]
    assert "release number on 10 of 10 calls" in f.evidence["first_side"] + f.evidence["second_side"]
    assert "deterministic replay" in f.evidence["witness"]
    # the snippet rebuilds the pair: neighbours under add/remove user, one raising and one releasing
    ns: dict = {}
    exec(f.evidence["snippet"].split("for seed")[0], ns)
    first, second = ns["first"], ns["second"]
    assert is_neighbour(RELATIONS["add-remove-user"], first, second)
    assert (_totals(first).max() > 1.0) != (_totals(second).max() > 1.0)
    assert any(v.startswith("stopped") for v in r.checks.values())  # later checks raised, named, no exit 3
    text = report.format_report(r)  # the text report prints the replay witness as it is
    assert "[privacy violation] behaviour: data-dependent behaviour" in text and "witness: deterministic replay" in text


def test_a_data_dependent_warning_is_a_privacy_violation():
    r = V.validate(ALGO, f"{M}:warns_when_capping", quick=True)
    f = next(f for f in r.findings if f.check == "behaviour")
    assert r.verdict == "privacy violation" and "warned UserWarning" in f.title


def test_with_detection_off_the_refusal_exits_3_and_the_warning_passes(monkeypatch):
    # the planted proof that the behaviour check is what catches them
    monkeypatch.setattr(check_behaviour, "ENABLED", False)
    with pytest.raises(UserCodeError, match="exceeds the cap"):
        V.validate(ALGO, f"{M}:refuses_total_above_cap", quick=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert V.validate(ALGO, f"{M}:warns_when_capping", quick=True).verdict == "pass"


def test_non_finite_values_and_another_shape_on_some_datasets_are_privacy_violations():
    def inf_when_heavy(dataset, rng, *, T, epsilon):
        g = float(np.minimum(_totals(dataset), T).sum()) + rng.laplace(0.0, T / epsilon)
        return np.inf if _totals(dataset).max() > T else g

    def list_when_heavy(dataset, rng, *, T, epsilon):
        g = float(np.minimum(_totals(dataset), T).sum()) + rng.laplace(0.0, T / epsilon)
        return [g] if _totals(dataset).max() > T else g

    for fn, what in ((inf_when_heavy, "non-finite release"), (list_when_heavy, "release list(number)")):
        found, _ = _behaviour(_module_target(fn, fn.__name__))
        assert len(found) == 1 and found[0].verdict == "privacy violation", fn.__name__
        assert what in found[0].evidence["first_side"] + found[0].evidence["second_side"]


def test_behaviour_that_does_not_depend_on_the_data_is_not_a_finding():
    calls = {"n": 0}

    def always_raises(dataset, rng, *, T, epsilon):  # a refusal on every dataset: exit 3, not a verdict
        raise RuntimeError("not implemented")

    def always_warns(dataset, rng, *, T, epsilon):  # the same warning on every call
        warnings.warn("this function is deprecated", DeprecationWarning, stacklevel=2)
        return float(np.minimum(_totals(dataset), T).sum()) + rng.laplace(0.0, T / epsilon)

    def fails_at_random(dataset, rng, *, T, epsilon):  # a generator of its own, failing half the time
        calls["n"] += 1
        if np.random.default_rng(calls["n"]).random() < 0.5:
            raise RuntimeError("flaky")
        return float(np.minimum(_totals(dataset), T).sum()) + rng.laplace(0.0, T / epsilon)

    def fails_by_the_rng(dataset, rng, *, T, epsilon):  # the generator decides: the same on both sides
        if rng.random() < 0.5:
            raise RuntimeError("unlucky draw")
        return float(np.minimum(_totals(dataset), T).sum()) + rng.laplace(0.0, T / epsilon)

    for fn in (always_raises, always_warns, fails_at_random, fails_by_the_rng):
        found, ctx = _behaviour(_module_target(fn, fn.__name__))
        assert found == [], (fn.__name__, [f.evidence for f in found])
    with pytest.raises(UserCodeError, match="not implemented"):
        V.validate(ALGO, _module_target(always_raises, "always_raises"), quick=True)


def test_the_correct_alternatives_release_plainly_everywhere():
    for name in ("loop_exponential_difference", "staged_inverse_cdf"):
        found, ctx = _behaviour(f"{M}:{name}")
        assert found == [] and "every call released" in ctx.checks["behaviour"], ctx.checks["behaviour"]


def test_outcomes_compare_kinds_and_an_empty_release_where_the_algorithm_declines_is_a_release():
    O = check_behaviour.Outcome
    assert O("raised ValueError").differs(O("release number"))
    assert O("release array (1,)").differs(O("release number"))
    assert not O("release number").differs(O("release number"))
    assert not O("release (none: declines)").differs(O("release array (3,)"))
    assert O("release (none: declines)").differs(O("warned UserWarning"))


def test_a_privacy_violation_needs_its_witness():
    with pytest.raises(ValueError, match="needs its witness"):
        Finding("differential", "privacy violation", "under-noised", {"lower_bound": 2.0})
    with pytest.raises(ValueError, match="verdict"):
        Finding("audit", "violation", "t", {})
    assert Finding("audit", "privacy violation", "t", {"witness": {"pair": 1}}).verdict == "privacy violation"


def test_the_spread_rule_alone_is_a_deviation_and_an_exact_replay_makes_it_a_violation():
    # a clamp at 0 (post-processing, private) has less spread where g_T is near 0: a possible violation,
    # never a violation, since its coupled replay is not a shift
    r = V.validate(ALGO, f"{M}:clamped_at_zero", quick=True)
    under = [f for f in r.findings if f.title.startswith("under-noised")]
    assert r.verdict == "deviation from reference"
    assert all(f.verdict == "deviation from reference" and "possible privacy violation" in f.title for f in under)
    assert all("no exact replay witness: not affine" in f.evidence["replay"] for f in under)
    # half the noise: the replay is a shift by exactly the sensitivity, the witness of a violation
    r = V.validate(ALGO, f"{M}:half_scale", quick=True)
    under = next(f for f in r.findings if f.title.startswith("under-noised"))
    assert under.verdict == "privacy violation" and "shifted by exactly [1]" in under.evidence["witness"]
    assert 1.8 < under.evidence["lower_bound"] <= 2.0  # the true loss is 2 x the claim


def test_the_replay_is_no_witness_for_a_target_with_a_generator_of_its_own():
    own = np.random.default_rng(5)

    def half_scale_own_rng(dataset, rng, size=None, *, T, epsilon):  # under-noised, but ignores rng
        return float(np.minimum(_totals(dataset), T).sum()) + own.laplace(0.0, T / (2 * epsilon), size)

    target = load_target(_module_target(half_scale_own_rng, "half_scale_own_rng"))
    todo = {c.name: c for c in V.checks(ALGO, target, quick=True)}
    todo["independence"].run()
    ctx = todo["behaviour"].ctx
    check_differential.draw_cases(ctx)
    d = next(d for d in ctx.draws if d.case.pair is not None)
    cov = {"w": 1, "s_t": np.array([0.5]), "ref": 1.0, "p": 1}
    assert check_differential._replay(ctx, d, cov)["exact"] is False
    own_ok = load_target(f"{M}:half_scale")  # planted: the same noise from the rng it is given is a shift
    ctx.target = own_ok
    rp = check_differential._replay(ctx, d, cov)
    assert rp["exact"] and rp["move"] == pytest.approx([1.0]) and rp["scale_ratio"] == pytest.approx([1.0])


def test_spec_relations_are_found():
    assert check_behaviour._relation(get(ALGO)).name == "add-remove-user"


# ------------------------------------------------------------------ "clips" needs a test with power
def _inputs_of(spec, target, **kw):
    todo = {c.name: c for c in V.checks(spec, target, quick=True, **kw)}
    todo["inputs"].run()
    return todo["inputs"].ctx


def _tiny_excess_spec():
    """The capped sum whose one refused input is a record at -1e-6: read as it is or clipped to 0, g_T moves
    by 1e-6, far below what any release test resolves."""
    spec = get(ALGO)
    fields = {f: getattr(spec, f) for f in spec.__dataclass_fields__}
    base = spec.cases()[0]
    D = base.dataset
    tiny = D.with_fields(values=np.r_[D.values, -1e-6], user_ids=np.r_[D.user_ids, D.users.max() + 1])
    refusal = VS.Refusal(VS.Case(tiny, base.params, "one record at -1e-6"), "data", "every value >= 0")
    return VS.ValidationSpec(**{**fields, "refusals": lambda: [refusal]})


def test_clips_is_inferred_only_where_the_test_can_tell_clipped_from_unclipped(monkeypatch):
    spec = _tiny_excess_spec()
    trusting = _inputs_of(spec, load_target(f"{M}:one_release_trusting"))
    clipping = _inputs_of(spec, load_target(f"{M}:one_release_clipping", {"T": "cap", "epsilon": "eps"}))
    assert [e["behaviour"] for e in trusting.inputs] == ["not enforced"] and not trusting.clips
    assert [e["behaviour"] for e in clipping.inputs] == ["clips"] and clipping.clipped_fields == {"values"}
    assert "its power" in clipping.inputs[0]["clip_test"]
    # planted: without the dataset further out, the trusting target is inferred to clip (the test has no power)
    monkeypatch.setattr(check_inputs, "_further", lambda spec, D, params: D)
    assert _inputs_of(spec, load_target(f"{M}:one_release_trusting")).clips


def test_out_of_domain_designs_leave_the_domain_in_named_fields():
    spec = get("acharya2024.pdp-op")
    (design,) = list(spec.clip_designs())
    assert check_inputs.out_of_domain_fields(spec, design) == {"values", "labels"}
    amin = get(ALGO)
    assert all(check_inputs.out_of_domain_fields(amin, d) == {"values"} for d in amin.clip_designs())


def test_the_neighbours_screened_are_neighbours_under_each_spec_relation():
    from userdp.audits.validation import all_specs

    seen = set()
    for name, spec in all_specs().items():
        rel = check_behaviour._relation(spec)
        case = spec.cases()[0]
        nbs = check_behaviour._neighbours(rel, case.dataset, 4, 0)
        assert all(is_neighbour(rel, case.dataset, nb.second) for nb in nbs), name
        if nbs:
            seen.add(rel.name)
    assert seen >= {"add-remove-user", "replace-user", "replace-user-labels", "replace-user-items", "replace-record"}
