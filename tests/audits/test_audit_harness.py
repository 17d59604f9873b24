"""The audit engine: result fields, output kinds, neighbour search, bad input."""

from dataclasses import dataclass

import numpy as np
import pytest

from planted import auditor as planted  # tests/ is on sys.path (rootdir conftest)

from userdp.audits import MechanismError, StatisticThreshold, Threshold, ValueSet, audit
from userdp.reference.claims import ApproxDP, PersonalizedDP, PureDP, RenyiDP
from userdp.reference.mechanisms import gaussian_sigma_analytic


def lap(D, rng, size):
    return D + rng.laplace(0.0, 1.0, size)


@dataclass(frozen=True)
class P:
    first: object
    second: object
    description: str
    unit: int | None = None


def test_result_fields_and_reproducibility():
    r = audit(lap, (0.0, 1.0), PureDP(1.0), samples=20_000, seed=3)
    assert r.verdict == "no violation found"
    assert r.samples == 20_000 and r.confidence == 0.95
    assert r.tightness == pytest.approx(r.epsilon_lower_bound / 1.0)
    assert isinstance(r.witness.rejection_set, Threshold)
    assert r.witness.counts["n_per_side"] == 18_000  # 10% selection share never counted
    assert r.termination_reason and r.elapsed_seconds > 0
    d = r.to_dict()
    assert set(d) == {
        "claim",
        "epsilon_lower_bound",
        "confidence",
        "samples",
        "verdict",
        "finding",
        "tightness",
        "witness",
        "termination_reason",
        "elapsed_seconds",
        "floating_point",
    }
    assert d["finding"] is None and d["floating_point"] is None  # no violation: no finding class
    r2 = audit(lap, (0.0, 1.0), PureDP(1.0), samples=20_000, seed=3)
    assert r2.epsilon_lower_bound == r.epsilon_lower_bound


def test_violation_detected_and_verdict_matches_bound():
    # Laplace with scale 1/2 claimed eps = 1 has true eps 2; at 2e4 samples eps_lb ~ 1.9
    # (selection picks t >= 1); a miss needs a >15 sd error, probability << 1e-4.
    r = audit(lambda D, rng, n: D + rng.laplace(0, 0.5, n), (0.0, 1.0), PureDP(1.0), samples=20_000, seed=0)
    assert r.verdict == "violation" and r.epsilon_lower_bound > 1.5
    assert r.witness.adjusted_p_value <= 0.05


def test_vector_outputs_use_a_projection():
    def mech(D, rng, size):
        return np.asarray(D) + rng.laplace(0.0, 0.5, (size, 3))  # true eps 2 on pair below

    r = audit(mech, (np.zeros(3), np.eye(3)[1]), PureDP(1.0), samples=20_000, seed=1)
    s = r.witness.rejection_set
    # a projection, or the classifier score, whichever scored best on the
    # selection share; either way its weight sits on the changed axis
    w = np.asarray(s.projection) if isinstance(s, Threshold) else np.asarray(s.params[2][:3])
    assert isinstance(s, (Threshold, StatisticThreshold))
    assert abs(w[1]) > 0.9 * np.linalg.norm(w)  # found the changed axis
    assert r.verdict == "violation"  # >10 sd margin, as above


def test_discrete_outputs_use_value_sets():
    def rr(D, rng, size):
        return np.where(rng.random(size) < 0.9, D, 1 - D)  # true eps ln 9 = 2.2

    r = audit(rr, (0, 1), PureDP(1.0), samples=5000, seed=0)
    assert isinstance(r.witness.rejection_set, ValueSet)
    assert r.verdict == "violation"  # eps_lb ~ 2.0 at 4500 counted; a miss is a >10 sd event


def test_approx_and_renyi_claims():
    # N(0, 1) on a shift of 1 has delta(eps=1) = Phi(-1/2) - e Phi(-3/2) = 0.127 [BW18, Thm 8]:
    # it is not (1, 1e-3)-DP, and at 1e4 samples eps_lb ~ 1.8 (a miss is a >10 sd event).
    gauss = lambda D, rng, n: D + rng.normal(0, 1.0, n)  # noqa: E731
    r = audit(gauss, (0.0, 1.0), ApproxDP(1.0, 1e-3), samples=10_000, seed=0)
    assert r.claim.delta == 1e-3 and r.verdict == "violation"
    # With the analytic sigma it is (1, 1e-3)-DP: Pr[flag] <= 1e-4 at confidence 1 - 1e-4.
    sigma = gaussian_sigma_analytic(1.0, 1.0, 1e-3)
    ok = lambda D, rng, n: D + rng.normal(0, sigma, n)  # noqa: E731
    r = audit(ok, (0.0, 1.0), ApproxDP(1.0, 1e-3), samples=10_000, seed=0, confidence=1 - 1e-4)
    assert r.verdict == "no violation found"
    r = audit(gauss, (0.0, 1.0), RenyiDP(2.0, 1.0, 1e-3), samples=10_000, seed=0)
    assert r.witness.claim_epsilon == pytest.approx(RenyiDP(2.0, 1.0, 1e-3).as_eps_delta()[0])


def test_personalized_claim_compares_record_epsilon():
    # Record 1 changes by 1 under Lap(1) noise: true eps 1 > its claimed 0.5.
    claim = PersonalizedDP((2.0, 0.5))
    pairs = [P(0.0, 1.0, "record 0 changed", 0), P(0.0, 1.0, "record 1 changed", 1)]
    r = audit(lap, pairs, claim, samples=20_000, seed=0)
    assert r.verdict == "violation" and r.witness.unit == 1 and r.witness.claim_epsilon == 0.5
    with pytest.raises(ValueError, match="unit"):
        audit(lap, (0.0, 1.0), claim, samples=1000, seed=0)


def test_neighbour_search_finds_the_bad_pair():
    # 8 harmless pairs and 1 that leaks (shift 3 => eps 3); pilot must put it in the top 3.
    pairs = [P(0.0, 0.1, f"small {i}") for i in range(8)] + [P(0.0, 3.0, "big")]
    r = audit(lap, pairs, PureDP(1.0), samples=20_000, seed=0)
    assert r.witness.pair_description == "big" and r.verdict == "violation"
    assert "pilot" in r.termination_reason


def test_generator_of_pairs():
    r = audit(lap, ((0.0, s) for s in (0.5, 1.0)), PureDP(1.0), samples=5000, seed=0)
    assert r.witness.candidates_tested == 2


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("samples", [0, 10, 99])
def test_too_few_samples(samples):
    with pytest.raises(ValueError, match="samples"):
        audit(lap, (0.0, 1.0), PureDP(1.0), samples=samples, seed=0)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5, -0.1])
def test_confidence_outside_unit_interval(confidence):
    with pytest.raises(ValueError, match="confidence"):
        audit(lap, (0.0, 1.0), PureDP(1.0), samples=1000, seed=0, confidence=confidence)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ApproxDP(1.0, 1.0),
        lambda: ApproxDP(1.0, 2.0),
        lambda: PureDP(0.0),
        lambda: PureDP(-1.0),
        lambda: RenyiDP(1.0, 0.5, 1e-5),
        lambda: RenyiDP(0.5, 0.5, 1e-5),
    ],
)
def test_bad_claims(make):
    with pytest.raises(ValueError):
        audit(lap, (0.0, 1.0), make(), samples=1000, seed=0)


def test_missing_seed():
    with pytest.raises(ValueError, match="seed"):
        audit(lap, (0.0, 1.0), PureDP(1.0), samples=1000, seed=None)


def wrong_count(D, rng, size):
    return rng.laplace(size=size - 1)


def with_nan(D, rng, size):
    x = rng.laplace(size=size)
    x[5] = np.nan
    return x


def shape_by_side(D, rng, size):
    return rng.laplace(size=(size, 2)) if D else rng.laplace(size=size)


@pytest.mark.parametrize(
    "mech,match",
    [
        (wrong_count, "wrong_count.*expected 1000 outputs"),
        (with_nan, "with_nan.*NaN"),
        (shape_by_side, "shape_by_side.*different shapes"),
    ],
)
def test_bad_mechanism_outputs(mech, match):
    with pytest.raises(ValueError, match=match):
        audit(mech, (0, 1), PureDP(1.0), samples=1000, seed=0)


def test_raising_mechanism_is_reported_with_its_pair():
    # An exception on every call of both sides is an error of the mechanism, named with its pair (an
    # exception on one side only is an output: tests/audits/test_audit_outcomes.py).
    def boom(D, rng, size):
        if D >= 7:
            raise ZeroDivisionError("bad record")
        return rng.laplace(size=size)

    with pytest.raises(MechanismError, match="the-bad-pair.*ZeroDivisionError: bad record"):
        audit(boom, [P(0, 1, "fine"), P(7, 8, "the-bad-pair")], PureDP(1.0), samples=1000, seed=0)
    # Where exceptions are not outputs (the planted auditor), one raising side fails the pair, with its cause.
    with planted.REACH_BY_NAME["exceptions-not-outputs"].applied():
        with pytest.raises(MechanismError, match="the-bad-pair") as info:
            audit(boom, [P(0, 1, "fine"), P(0, 7, "the-bad-pair")], PureDP(1.0), samples=1000, seed=0)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
