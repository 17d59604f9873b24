"""Totality at the float extremes, for every mechanism ``userdp validate`` knows (properties/extremes.py).

Each mechanism runs on pairs of datasets drawn by ``strategies.extreme_pairs`` in the domain its
property suite declares (``EXTREMES``), with the public inputs (structure and parameters) of the
smallest fixed case of its validate spec: both sides must release finite values with no warning
and no exception, or refuse as they do on ordinary records. The issue's own datasets run first
(two records of 1.7e308 for one user of Amin's capped sum; ten users at 1e300 among twenty at 0,
and users near +-1e307..1.7e308, for HLM in d = 2), then large d (HLM and Krichene at d = 16 features;
d as a public parameter of HLM's calibrations and WME's padding).
The planted bugs show that the property fails on a warning on one side of a pair, and on a refusal
that reads the records.

The default run keeps this cheap: a few Hypothesis examples per mechanism (``Domain.examples``).
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings

from userdp.audits.validation import all_specs
from userdp.properties.extremes import check_total, prop_total_at_extremes, run_quietly
from userdp.properties.strategies import FLOAT_MAX, extreme_pairs
from userdp.reference import amin2019 as A
from userdp.reference import zhao2024_calibration as C
from userdp.reference import zhao2024_wme as WME
from userdp.reference.data import UserDataset
from planted import PlantedBug

SPECS = all_specs()
_QUICK = dict(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _domain(spec):
    return importlib.import_module(spec.suite).EXTREMES[spec.algorithm]


def _base(spec):
    """The smallest fixed case (by records) of at most 100 records whose users include one with two
    or more records (so that a user's total can overflow), else the smallest."""
    cases = sorted((c for c in spec.cases() if c.dataset is not None), key=lambda c: c.dataset.n)
    multi = [c for c in cases if int(c.dataset.counts.max()) >= 2 and c.dataset.n <= 100]
    return (multi or cases)[0]


def _release(spec, params):
    return lambda D: spec.reference(D, rng=np.random.default_rng(0), size=2, **params)


def test_every_mechanism_declares_its_domain():
    # every validate spec (every mechanism of reference/) has a domain in its suite, and no stale one
    declared = {}
    for spec in SPECS.values():
        suite = importlib.import_module(spec.suite)
        assert spec.algorithm in getattr(suite, "EXTREMES", {}), f"{spec.suite}.EXTREMES lacks {spec.algorithm}"
        declared.update(suite.EXTREMES)
    assert set(declared) == set(SPECS), set(declared) ^ set(SPECS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_total_at_extremes(name):
    spec = SPECS[name]
    case = _base(spec)
    dom = _domain(spec).at(case.params)
    twin = dom.ordinary(case.dataset)
    release = _release(spec, case.params)

    @settings(max_examples=dom.examples, **_QUICK)
    @given(extreme_pairs(case.dataset, dom.fields, dom.balls))
    def each(pair):
        prop_total_at_extremes(release, (pair, twin))

    each()


def _users(values, sizes, dim=None):
    values = np.asarray(values, float)
    ids = np.repeat(np.arange(len(sizes)), sizes)
    return UserDataset(values[ids], ids)


def test_the_issue_datasets():
    # Amin: one user holds two records of 1.7e308 (its total overflows to inf), inside x >= 0
    amin = SPECS["amin2019.capped-sum"]
    D = UserDataset(np.array([1.7e308, 1.7e308, 0.5, 0.25]), np.array([0, 0, 1, 2]))
    for params in ({"T": 1.0, "epsilon": 1.0}, {"T": 1e50, "epsilon": 0.1}):
        assert check_total(_release(amin, params), D, D.with_fields(values=np.zeros(4))) is None
    cap = SPECS["amin2019.capped-sum-private-cap"]
    params = {"epsilon_cap": 0.5, "epsilon_sum": 3.0, "U": 10.0}
    assert check_total(_release(cap, params), D, D.with_fields(values=np.zeros(4))) is None
    # HLM, d = 2: ten users at 1e300 among twenty at 0; users near +-1e307 .. 1.7e308
    hlm = SPECS["zhao2024.hlm-d3"]
    params = {"epsilon": 1.0, "delta": 1e-5, "R": 1.0, "R_c": 1.0}  # the scan's (below)
    rng = np.random.default_rng(0)
    sets = [
        np.r_[np.full((10, 2), 1e300), np.zeros((20, 2))],
        rng.choice([1e307, -1e307, 1.7e308, -1.7e308], (12, 2)) * rng.uniform(0.5, 1.0, (12, 2)),
        np.r_[np.full((6, 2), FLOAT_MAX), np.full((6, 2), -FLOAT_MAX), np.zeros((3, 2))],
    ]
    sets += [_scan_items(10), _scan_items(16)]  # the solver before its np.errstate warned on both
    for v in sets:
        D = _users(v, np.ones(len(v), int))
        assert check_total(_release(hlm, params), D, D.with_fields(values=np.zeros_like(v))) is None


def _scan_items(k: int) -> np.ndarray:
    """The k-th dataset of a scan of random extreme items (seed 1; n in [3, 30), d in {2, 3}; HLM at
    epsilon = 1, delta = 1e-5, R = R_c = 1). With warnings as errors, HLM's solver before it ran
    under np.errstate raised on k = 10 ("invalid value encountered in matmul", in the loss) and on
    k = 16 ("overflow encountered in subtract", in the Newton step)."""
    rng = np.random.default_rng(1)
    for _ in range(k + 1):
        n, d = int(rng.integers(3, 30)), int(rng.choice([2, 3]))
        v = rng.choice([1e307, -1e307, 1.7e308, -1.7e308, 1e300, 0.0, 1.0], (n, d)) * rng.uniform(0.5, 1, (n, d))
    return v


@pytest.mark.parametrize("name", ["zhao2024.hlm-d3", "krichene2023.ssp", "krichene2023.noisy-gd"])
def test_large_d(name):
    # d is a parameter of the data here: the same public case with 16 features per record
    spec = SPECS[name]
    case = _base(spec)
    base = case.dataset.with_fields(values=np.zeros((case.dataset.n, 16)))
    dom = _domain(spec).at(case.params)
    release = _release(spec, case.params)

    @settings(max_examples=2, **_QUICK)
    @given(extreme_pairs(base, dom.fields, dom.balls))
    def each(pair):
        prop_total_at_extremes(release, (pair, base))

    each()


@pytest.mark.parametrize("d", [1, 16, 2**20, 2**20 + 1, 10**18])
def test_large_d_as_a_public_parameter(d):
    # where d is a parameter (HLM's calibrations, WME's padding), a large d releases a calibration
    # with no warning or is refused with a ValueError: public inputs only, so any refusal is public
    m = np.array([1, 2, 3, 5, 8])
    calls = [
        lambda: C.global_constants(m, 1.0, 0.5, d=d, support=1.0),
        lambda: C.choose_theta(m, 1.0, 1.0, 1e-5, d=d, support=1.0, R_c=1.0),
        lambda: C.tune_ptr(m, 1.0, 1.0, 1e-5, d=d, R_c=1.0),
        lambda: C.calibrate(m, R=1.0, epsilon=1.0, delta=1e-5, R_c=1.0, d=d, support=1.0),
        lambda: WME.padded_dimension(d),
    ]
    for call in calls:
        try:
            run_quietly(lambda _: call(), None)
        except ValueError as exc:  # a warning or FloatingPointError is not caught here: the test fails
            assert str(exc), "a refusal must say what is wrong"


# ------------------------------------------------------------------------ planted bugs
def _capped_sum_summing_first(D, rng, size=None, *, T, epsilon):
    totals = np.array([np.sum(D.values[D.records_of(int(u))]) for u in D.users])  # BUG: may overflow
    return rng.laplace(float(np.sum(np.minimum(totals, T))), T / epsilon, size)


def _capped_sum_refusing_inf(D, rng, size=None, *, T, epsilon):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            totals = A.user_totals(D)
    if not np.all(np.isfinite(totals)):  # BUG: a refusal that reads the records
        raise ValueError("x must be finite")
    return rng.laplace(float(np.sum(np.minimum(totals, T))), T / epsilon, size)


PLANTED = (
    PlantedBug(
        name="sum-then-cap-warns",
        bug_type="data-dependent warning",
        effect="numpy warns 'overflow encountered in reduce' on the side of a pair where a user's total "
        "overflows, and releases on the other: with warnings as errors, an exception on one side",
        source="summing each user's records before capping them (Amin et al. §3 read literally in floats)",
        caught_by=("prop_total_at_extremes",),
        mechanism=_capped_sum_summing_first,
    ),
    PlantedBug(
        name="refuse-overflowing-total",
        bug_type="data-dependent refusal",
        effect="raises ValueError on a dataset whose user total overflows, not on its neighbour",
        source="this reference before the fix: 'x must be finite' on two records of 1.7e308",
        caught_by=("prop_total_at_extremes",),
        mechanism=_capped_sum_refusing_inf,
    ),
)


@pytest.mark.parametrize("bug", PLANTED, ids=lambda b: b.name)
def test_planted_bugs_are_caught(bug):
    # on a neighbouring pair (one user's two records at 1.7e308, or at 0.5) the bug fails one side only
    D = UserDataset(np.array([1.7e308, 1.7e308, 0.5]), np.array([0, 0, 1]))
    D2 = D.with_fields(values=np.array([0.5, 0.5, 0.5]))
    planted = lambda X: bug.mechanism(X, np.random.default_rng(0), 2, T=1.0, epsilon=1.0)  # noqa: E731
    assert check_total(planted, D, D2) is not None and check_total(planted, D2, D2) is None
    # and the strategy finds such a pair by itself, on which the reference is total
    spec = SPECS["amin2019.capped-sum"]
    case = _base(spec)
    dom = _domain(spec).at(case.params)
    twin = dom.ordinary(case.dataset)
    release = lambda D: bug.mechanism(D, np.random.default_rng(0), 2, **case.params)  # noqa: E731

    def fails(pair) -> bool:
        try:
            prop_total_at_extremes(release, (pair, twin))
        except AssertionError:
            return True
        return False

    D, D2 = find(
        extreme_pairs(case.dataset, dom.fields, dom.balls), fails, settings=settings(max_examples=200, **_QUICK)
    )
    assert not all(check_total(release, X, twin) is None for X in (D, D2))
    # and the property is not vacuous: the fixed reference is total on that very pair
    assert check_total(_release(spec, case.params), D, twin) is None
    assert check_total(_release(spec, case.params), D2, twin) is None
