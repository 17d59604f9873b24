"""check_property grades a correct and a broken adapter differently and shrinks the counterexample."""

import numpy as np

from userdp.properties.adapter import Adapter, check_property, check_suite_property
from userdp.properties.strategies import user_datasets


def prop_mean_within_range(impl, D):
    impl.require("statistic")
    s = impl.statistic(D)
    assert 0.0 <= s <= 1.0, f"statistic {s} outside [0, 1]"


def test_pass_and_violation_and_not_applicable():
    good = Adapter("mean", statistic=lambda D: float(np.mean(D.values)))
    bad = Adapter("sum", statistic=lambda D: float(np.sum(D.values)))
    assert check_property(prop_mean_within_range, user_datasets(), good).verdict == "pass"
    f = check_property(prop_mean_within_range, user_datasets(), bad)
    assert f.verdict == "invariant violation" and "outside [0, 1]" in f.message
    assert f.counterexample is not None and "UserDataset" in f.counterexample
    assert check_property(prop_mean_within_range, user_datasets(), Adapter("none")).verdict == "not applicable"
    assert good.stages() == ("statistic",)


def prop_fails_in_two_places(impl, D):
    s = impl.statistic(D)
    if D.m > 2:
        assert s < 0, "first failure site"
    assert s < 0, "second failure site"


def test_property_failing_at_two_sites_gives_one_finding():
    # Without report_multiple_bugs=False Hypothesis raises an ExceptionGroup here.
    f = check_property(prop_fails_in_two_places, user_datasets(), Adapter("m", statistic=lambda D: 1.0))
    assert f.verdict == "invariant violation" and "failure site" in f.message


def test_explicit_examples_run_first_and_are_graded():
    # A case the strategy could miss: the one counterexample is passed explicitly.
    from userdp.reference.data import UserDataset

    hard = UserDataset(np.full(7, 0.9), np.arange(7))

    def prop_few_users(impl, D):
        assert D.m != 7, "seven users"

    f = check_property(prop_few_users, user_datasets(max_users=3), Adapter("x"), examples=[hard])
    assert f.verdict == "invariant violation" and f.message.startswith("seven users")
    assert check_property(prop_few_users, user_datasets(max_users=3), Adapter("x")).verdict == "pass"


# ------------------------------------------------ grading crashes (review finding 1)
def _raising(exc):
    def stage(*args, **kwargs):
        raise exc

    return stage


def _with(impl, **stages):
    """``impl`` with some stages replaced (the planted variant of a correct adapter)."""
    return Adapter(impl.name + " (planted)", **{s: stages.get(s, getattr(impl, s)) for s in Adapter.STAGES})


def test_stage_raising_key_error_is_a_finding_not_not_applicable():
    # The finding's exact scenario: Epasto §3 reference weights (correct), noise_scale raising
    # KeyError. A grader catching LookupError called every noise property "not applicable";
    # each property that calls noise_scale must now fail ("error", naming the stage).
    from userdp.properties import epasto2020 as E

    bad = _with(E.REFERENCE_WA, noise_scale=_raising(KeyError("sigma")))
    calls_noise_scale = {
        "prop_noise_scale_calibrated",
        "prop_noise_covers_user_weight",
        "prop_sensitivity_bounds_all_neighbours",
        "prop_sensitivity_bounds_sampled_neighbour",
    }
    for prop in E.ALL_PROPERTIES:
        f = check_property(prop, E.STRATEGIES[prop], bad, max_examples=10)  # the suite's own strategies
        if prop.__name__ in calls_noise_scale:
            assert f.verdict == "error" and f.failed, f
            assert f.message.startswith("stage noise_scale raised KeyError"), f
            assert f.counterexample and "WAExample" in f.counterexample, f
        else:  # weights and statistic are correct: these pass (lemma3/variance: Lemma 3 weights)
            assert f.verdict == "pass", f


def test_every_exception_from_a_stage_is_an_error():
    # IndexError is a LookupError too; AssertionError or StageMissing from inside a stage is the
    # implementation's, not the property's verdict.
    from userdp.properties.adapter import StageMissing

    for exc in (
        IndexError("0"),
        ValueError("sigma out of range"),
        ZeroDivisionError("n_h"),
        AssertionError("internal check"),
        StageMissing("other", ("weights",)),
    ):
        impl = Adapter("x", statistic=_raising(exc))
        f = check_property(prop_mean_within_range, user_datasets(), impl, max_examples=5)
        assert f.verdict == "error" and f.message.startswith(f"stage statistic raised {type(exc).__name__}"), f
        assert f.counterexample is not None


def test_property_arithmetic_failing_on_a_stage_output_is_an_error():
    impl = Adapter("string statistic", statistic=lambda D: "0.5")  # not a number
    f = check_property(prop_mean_within_range, user_datasets(), impl, max_examples=5)
    assert f.verdict == "error" and f.message.startswith("property raised TypeError"), f

    def prop_float(impl, D):
        impl.require("statistic")
        assert 0.0 <= float(impl.statistic(D)) <= 1.0

    f = check_property(prop_float, user_datasets(), Adapter("text", statistic=lambda D: "half"), max_examples=5)
    assert f.verdict == "error" and f.message.startswith("property raised ValueError"), f


def test_expected_value_error_caught_by_the_property_is_not_a_finding():
    # A property may call a stage expecting a ValueError (input refusal): the stage's exception
    # is logged, but it does not escape the property, so the grade is the property's own.
    def refuses(D):
        raise ValueError("refused")

    def prop_refuses(impl, D):
        impl.require("statistic")
        try:
            impl.statistic(D)
        except ValueError:
            return
        raise AssertionError("accepted")

    assert (
        check_property(prop_refuses, user_datasets(), Adapter("r", statistic=refuses), max_examples=5).verdict == "pass"
    )
    f = check_property(prop_refuses, user_datasets(), Adapter("a", statistic=lambda D: 0.5), max_examples=5)
    assert f.verdict == "invariant violation" and f.message == "accepted", f


def test_non_deterministic_stage_is_an_error():
    calls = []

    def flaky(D):  # fails on its first call only
        calls.append(1)
        return 5.0 if len(calls) == 1 else 0.5

    f = check_property(prop_mean_within_range, user_datasets(), Adapter("flaky", statistic=flaky), max_examples=5)
    assert f.verdict == "error" and f.message.startswith("not reproducible"), f


def test_misspelt_stage_in_a_property_is_an_error_not_not_applicable():
    def prop_typo(impl, D):
        impl.require("noise_scal")

    f = check_property(prop_typo, user_datasets(), Adapter("x"), max_examples=5)
    assert f.verdict == "error" and "unknown stage 'noise_scal'" in f.message, f


def test_broken_strategy_is_a_suite_bug_not_a_finding():
    import pytest
    from hypothesis import strategies as st

    def boom(_):
        raise KeyError("strategy")

    with pytest.raises(KeyError, match="strategy"):
        check_property(prop_mean_within_range, st.integers().map(boom), Adapter("x", statistic=lambda D: 0.5))


def test_stage_of_another_adapter_type_is_not_applicable():
    # a plain Adapter has no optimal_cap (CapAdapter's extra stage); the Amin cap
    # properties used to crash with AttributeError. A CapAdapter without it: not applicable too.
    from userdp.properties import amin2019 as A
    from userdp.reference import amin2019 as R

    for impl in (Adapter("plain", statistic=R.statistic), A.CapAdapter("no cap", statistic=R.statistic)):
        for prop in (A.prop_optimal_cap_is_kth_largest, A.prop_optimal_cap_minimises_eq5):
            f = check_property(prop, A.cap_cases(), impl, max_examples=5)
            assert f.verdict == "not applicable" and not f.failed and "optimal_cap" in f.message, f
    assert A.CapAdapter("c", optimal_cap=R.optimal_cap_nonprivate).stages() == ("optimal_cap",)


_MINING_SCRIPT = """
import importlib, json, sys
from hypothesis import HealthCheck, given, settings, strategies as st
from userdp.properties.adapter import Adapter, check_property, check_suite_property

def draws_of_check_property():
    seen = []
    def prop_record(impl, x):
        seen.append(x)
    check_property(prop_record, st.floats(0.0, 1.0), Adapter("x"), max_examples=200)
    return seen

def draws_of_plain_given():
    seen = []
    @settings(max_examples=200, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.floats(0.0, 1.0))
    def t(x):
        seen.append(x)
    t()
    return seen

before, plain_before = draws_of_check_property(), draws_of_plain_given()
sys.path.insert(0, sys.argv[1])
mod = importlib.import_module("userdp_mined_constants")
mined = [getattr(mod, f"C{i}") for i in range(200)]
print(json.dumps(dict(before=before, plain_before=plain_before, mined=mined,
                      after=draws_of_check_property(), plain_after=draws_of_plain_given())))
"""


def test_examples_do_not_depend_on_the_local_modules_loaded(tmp_path):
    # Hypothesis mines constants from the source of local (non-test) modules as they load, so
    # a derandomized run used to draw other examples after an edit, or after another test file
    # had run. Positive control: a plain @given run does change once a module of new constants
    # is loaded; check_property's run does not. In a subprocess: mined constants cannot be
    # unloaded, and they would change the examples of later tests in this session.
    import json
    import subprocess
    import sys

    src = "\n".join(f"C{i} = {0.1234567 + i / 1000:.7f}" for i in range(200))
    (tmp_path / "userdp_mined_constants.py").write_text(src + "\n")
    out = subprocess.run(
        [sys.executable, "-c", _MINING_SCRIPT, str(tmp_path)], capture_output=True, text=True, check=True, timeout=600
    )
    r = json.loads(out.stdout)
    assert r["plain_after"] != r["plain_before"] and set(r["mined"]) & set(r["plain_after"]), (
        "control: Hypothesis did not mine the new module's constants"
    )
    assert r["after"] == r["before"]


def test_missing_stage_is_not_applicable_at_once(monkeypatch):
    # a missing stage ends the check on the first example; no search, no
    # shrinking. Counted by the property's own calls: 1. Planted: the old grading, where
    # StageMissing was an ordinary failure, makes Hypothesis shrink and replay (> 1 calls).
    import userdp.properties.adapter as adapter_module

    calls = []

    def prop_needs_statistic(impl, D):
        calls.append(D)
        impl.require("statistic")

    f = check_property(prop_needs_statistic, user_datasets(), Adapter("none"), max_examples=100)
    assert f.verdict == "not applicable" and f.counterexample is None and len(calls) == 1

    # a stage that itself raises StageMissing is still the stage's error, not "not applicable"
    def stage_raising(D):
        raise adapter_module.StageMissing("inner", ("weights",))

    g = check_property(prop_mean_within_range, user_datasets(), Adapter("s", statistic=stage_raising), max_examples=5)
    assert g.verdict == "error" and "stage statistic raised StageMissing" in g.message

    class _Planted(Exception):  # the planted bug: a missing stage is an ordinary failure
        pass

    monkeypatch.setattr(adapter_module, "_NotApplicable", _Planted)
    calls.clear()
    check_property(prop_needs_statistic, user_datasets(), Adapter("none"), max_examples=100)
    assert len(calls) > 1


def test_check_suite_property_uses_the_suites_strategy_examples_and_effort():
    # The helper validate, its plugin and the paper tests share: the suite's STRATEGIES,
    # EXAMPLES (run first) and MAX_EXAMPLES, capped by max_examples.
    import types
    from hypothesis import strategies as st

    seen = []

    def prop_small(impl, x):
        seen.append(x)
        assert x < 1000, f"{x} too large"

    suite = types.ModuleType("planted_suite")
    suite.STRATEGIES = {prop_small: st.integers(0, 999)}
    suite.EXAMPLES, suite.MAX_EXAMPLES = {}, {prop_small: 7}
    impl = Adapter("x", statistic=lambda D: 0.0)
    assert check_suite_property(suite, prop_small, impl).verdict == "pass"
    assert 1 <= len(seen) <= 7  # the suite's effort
    seen.clear()
    assert check_suite_property(suite, prop_small, impl, max_examples=2).verdict == "pass"
    assert 1 <= len(seen) <= 2  # capped
    suite.EXAMPLES = {prop_small: [5000]}  # a known hard case the strategy never draws
    f = check_suite_property(suite, prop_small, impl)
    assert f.verdict == "invariant violation" and "5000" in f.counterexample
    # planted: the same run without the suite's EXAMPLES misses it
    assert check_property(prop_small, suite.STRATEGIES[prop_small], impl, max_examples=7).verdict == "pass"
