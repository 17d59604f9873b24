"""The shared argument checks name the argument, the value and the bound."""

import numpy as np
import pytest

from userdp.reference import _checks as C


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_epsilon_must_be_positive_and_finite(bad):
    with pytest.raises(ValueError, match=r"epsilon must be finite and > 0"):
        C.check_epsilon(bad)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 2.0, np.nan])
def test_delta_in_unit_interval(bad):
    with pytest.raises(ValueError, match=r"delta must lie in \[0, 1\)"):
        C.check_delta(bad)


@pytest.mark.parametrize("bad", [0.0, -2.0])
def test_sensitivity_positive(bad):
    with pytest.raises(
        ValueError, match=r"sensitivity must be finite and > 0, in \[1e-50, 1e\+50\] \(the supported range\), got"
    ):
        C.check_sensitivity(bad)


@pytest.mark.parametrize("bad", [None, "1", True, [1.0]])
def test_non_numbers_are_type_errors(bad):
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        C.check_epsilon(bad)


@pytest.mark.parametrize("bad", [np.random.RandomState(0), 0, None, np.random.default_rng(0).bit_generator])
def test_generator_type(bad):
    with pytest.raises(TypeError, match=r"rng must be a numpy.random.Generator"):
        C.check_generator(bad)


def test_size():
    assert C.check_size(None) is None and C.check_size(3) == 3
    with pytest.raises(ValueError, match=r"size must be None or an integer in \[1, 100000000\]"):
        C.check_size(0)
    with pytest.raises(TypeError):
        C.check_size(2.0)


def test_in_interval_names_first_violator():
    with pytest.raises(ValueError, match=r"y must lie in \[0.0, 1.0\]; y\[2\] = 1.5"):
        C.check_in_interval([0.0, 1.0, 1.5, -1.0], 0.0, 1.0, "y")
