"""check_property grades a correct and a broken adapter differently and shrinks the counterexample."""
import numpy as np

from userdp.properties.adapter import Adapter, check_property
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
