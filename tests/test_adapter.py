"""check_property grades a correct and a broken adapter differently and shrinks the counterexample."""
import numpy as np
import pytest

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


# ------------------------------------------------------ grading of crashing stages (issue 7)
def _crashing_noise_epasto_adapter():
    """Planted bug from the review: correct Epasto §3 weights, a noise_scale that raises KeyError."""
    from userdp.properties import epasto2020 as P
    ref = P.REFERENCE_WA

    def noise_scale(D, **params):
        return {"b": 1.0}["scale"]                       # KeyError, as in the review finding

    return Adapter("crashing-noise", weights=ref.weights, statistic=ref.statistic,
                   sensitivity=ref.sensitivity, noise_scale=noise_scale)


def test_a_stage_that_raises_key_error_is_a_finding_not_not_applicable():
    # Before the fix, check_property caught LookupError (KeyError, IndexError ...) as
    # "not applicable", and every noise property of this adapter was silently skipped.
    from userdp.properties import epasto2020 as P
    impl = _crashing_noise_epasto_adapter()
    f = check_property(P.prop_noise_covers_user_weight, P.wa_examples(), impl, max_examples=5)
    assert f.verdict == "invariant violation" and "KeyError" in f.message, f
    assert f.counterexample is not None
    g = check_property(P.prop_noise_scale_calibrated, P.wa_examples(), impl, max_examples=5)
    assert g.verdict == "invariant violation"
    # the stages that work still pass
    assert check_property(P.prop_weights_nonnegative_sum_to_one, P.wa_examples(), impl,
                          max_examples=5).verdict == "pass"


def test_value_error_inside_a_property_is_a_finding():
    def prop(impl, D):
        impl.require("statistic")
        impl.statistic(D)

    def refuses(D):
        raise ValueError("refused a valid dataset")

    f = check_property(prop, user_datasets(), Adapter("v", statistic=refuses), max_examples=3)
    assert f.verdict == "invariant violation" and "ValueError: refused a valid dataset" in f.message


def test_stage_missing_is_only_for_missing_stages():
    from userdp.properties.adapter import StageMissing
    assert not issubclass(StageMissing, LookupError)
    with pytest.raises(StageMissing, match="no stage weights"):
        Adapter("x").require("weights")
    with pytest.raises(ValueError, match="stages must be stage names"):
        Adapter("x").require("wieghts")                 # a typo in a property is a bug, not "missing"


def test_plain_adapter_on_amin_cap_properties_is_not_applicable():
    # issue 13: a plain Adapter crashed the Amin cap properties with AttributeError.
    from userdp.properties import amin2019 as P
    f = check_property(P.prop_optimal_cap_is_kth_largest, P.cap_cases(), Adapter("plain"), max_examples=3)
    assert f.verdict == "not applicable" and "optimal_cap" in f.message
