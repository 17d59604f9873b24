"""Exceptions and warnings are outputs (``audits/engine/outcomes.py``, ``sampling.draw_outcomes``): a
mechanism that raises or warns on one side of a pair and not on the other is a violation, with the event
as its witness; one that raises at the same rate on both sides is not; errors that userdp raises about the
target, an exception on every call of both sides and a ``BaseException`` stay errors of the mechanism.
Each capability has its planted auditor bug (``tests/planted/auditor.py``, "exceptions-not-outputs").

Oracles. A set that holds on every one of n counted outputs of one side and on none of the other's has
the one-sided Clopper-Pearson bounds p_lo = (l / 2)^(1/n) and q_hi = 1 - (l / 2)^(1/n) at level l (the
Beta(k, n - k + 1) and Beta(k + 1, n - k) quantiles at k = n and k = 0 in closed form), so eps_lb =
ln(p_lo / q_hi). False alarms: a mechanism whose extended output (its value, and whether it raised) is
eps-DP is flagged with probability at most 1 - confidence = 1e-4 (the audit's guarantee).
"""

from __future__ import annotations

import json
import math
import sys
import warnings

import numpy as np
import pytest

from planted import auditor as planted  # tests/ is on sys.path (rootdir conftest)
from userdp.audits import NO_VIOLATION, VIOLATION, audit
from userdp.audits.cli.main import main
from userdp.audits.engine.outcomes import EventSet
from userdp.audits.engine.parallel import UserExitError
from userdp.audits.engine.sampling import BadOutputError, MechanismError
from userdp.reference.claims import PureDP

CONFIDENCE = 1 - 1e-4
PROGRAM = f"{sys.executable} -S tests/audits/protocol_program.py good"


def _all_versus_none(n: int, level: float) -> float:
    """eps_lb of a set counted n times of n on one side and 0 on the other (module docstring)."""
    p_lo = (level / 2) ** (1 / n)
    return math.log(p_lo / (1 - p_lo))


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


# ------------------------------------------------------------------ exceptions
def test_a_count_that_raises_on_one_side_is_a_violation_with_the_event_as_witness(capsys):
    # control.count-raises: ValueError on every call of D' (101 records), a release on every call of D.
    code = main(["audit", "control.count-raises", "--samples", "1000", "--json"])
    d = _json(capsys)
    assert code == 1 and d["verdict"] == VIOLATION and d["as_expected"] is True
    w = d["witness"]
    assert w["rejection_set"] == {"type": "event", "event": "raised", "description": "{the call raised}"}
    assert w["ordering"] == "second over first" and w["counts"] == {"first": 0, "second": 900, "n_per_side": 900}
    # one pair, one value set and one event set: the event set has half the pair's alpha (outcomes.EVENT_SHARE)
    assert d["epsilon_lower_bound"] == pytest.approx(_all_versus_none(900, 0.05 / 2), rel=1e-9)  # 5.33
    (ev,) = d["events"]
    assert ev["first"]["raised"] == 0.0 and ev["second"]["raised"] == 1.0
    assert ev["second"]["raised_by_class"] == {"ValueError": 1.0}
    assert "raised ValueError" in ev["drawn"] and "drawn again" in ev["drawn"]
    assert d["event_witness"] == (
        "the mechanism raised ValueError on 100% of the second dataset's calls and 0% of the first's: "
        "an exception is an output"
    )


def test_the_raising_control_is_an_error_of_the_target_when_exceptions_are_not_outputs(capsys):
    # The planted auditor: an exception is the mechanism's error (exit 3), as before this capability.
    with planted.REACH_BY_NAME["exceptions-not-outputs"].applied():
        code = main(["audit", "control.count-raises", "--samples", "200"])
    assert code == 3
    assert "raised ValueError" in capsys.readouterr().err


def _raises_above(limit):
    def mechanism(count, rng, size):
        if count > limit:
            raise ValueError("too many records")
        return count + rng.laplace(0.0, 1.0, size)

    return mechanism


def test_some_pairs_raising_is_no_longer_an_incomplete_audit():
    # Two pairs, one of which raises on one side: before, IncompleteAudit (exit 3); now a violation.
    pairs = [(50, 51, "50 vs 51"), (100, 101, "100 vs 101")]
    r = audit(_raises_above(100), pairs, PureDP(1.0), samples=2000, seed=0, confidence=CONFIDENCE)
    assert r.verdict == VIOLATION and r.witness.pair_description == "100 vs 101"
    assert isinstance(r.witness.rejection_set, EventSet) and not r.failed_pairs
    with planted.REACH_BY_NAME["exceptions-not-outputs"].applied():
        with pytest.raises(MechanismError, match="raised on 1 pair"):
            audit(_raises_above(100), pairs, PureDP(1.0), samples=2000, seed=0, confidence=CONFIDENCE)


def test_the_pilot_sees_a_raising_pair():
    # Four pairs, one confirmed: the pilot's draws code a raised call as "no release", so the pair that
    # raises ranks first and is confirmed (the others are Laplace(1) on counts 1 apart: loss 1 = claim).
    pairs = [(c, c + 1, f"{c} vs {c + 1}") for c in (40, 60, 80, 100)]
    r = audit(_raises_above(100), pairs, PureDP(1.0), samples=2000, seed=0, confirm_pairs=1, confidence=CONFIDENCE)
    assert r.verdict == VIOLATION and r.witness.pair_description == "100 vs 101"


def _random_refusal(count, rng):
    """Laplace(1) on the count (1-DP), and a RuntimeError with probability 0.1 whatever the data."""
    if rng.random() < 0.1:
        raise RuntimeError("service unavailable")
    return count + rng.laplace(0.0, 1.0)


def test_an_exception_at_the_same_rate_on_both_sides_is_no_violation():
    # The extended output (raised with probability 0.1, else count + Lap(1)) is 1-DP: flagged with
    # probability <= 1e-4. The rates: 10,000 calls per side at p = 0.1 have sd 0.003; |rate - 0.1| < 0.015
    # (5 sd) fails with probability < 1e-6 per side.
    r = audit(_random_refusal, (100, 101), PureDP(1.0), samples=10_000, seed=0, confidence=CONFIDENCE, workers=1)
    assert r.verdict == NO_VIOLATION
    (ev,) = r.events
    for side in ("first", "second"):
        assert abs(ev[side]["raised"] - 0.1) < 0.015
        assert ev[side]["raised_by_class"].keys() == {"RuntimeError"}
    assert ev["drawn"] == "one release per call"


def test_an_exception_on_every_call_of_both_sides_is_an_error_of_the_target():
    def broken(count, rng, size):
        raise ValueError("epsilon must be > 0")  # a refusal of public inputs

    with pytest.raises(MechanismError, match="raised on every call of both sides"):
        audit(broken, (100, 101), PureDP(1.0), samples=200, seed=0)


def _exits_above(count, rng):
    if count > 100:
        sys.exit(2)
    return count + rng.laplace()


def test_system_exit_and_bad_outputs_stay_errors_of_the_target():
    with pytest.raises(UserExitError, match="sys.exit"):
        audit(_exits_above, (100, 101), PureDP(1.0), samples=200, seed=0, workers=1)

    def nan_above(count, rng, size):  # userdp's own check (BadOutputError), not the mechanism's exception
        return np.full(size, np.nan) if count > 100 else count + rng.laplace(0.0, 1.0, size)

    with pytest.raises(BadOutputError, match="returned NaN"):
        audit(nan_above, (100, 101), PureDP(1.0), samples=200, seed=0)


# ------------------------------------------------------------------ warnings
def clipping_sum(data, rng, size):
    """The sum of records clipped to [0, 1] plus Laplace(1) (1-DP under replace-record), which warns
    when it clips: the warning, not the value, reveals a record above 1."""
    x = np.asarray(data, dtype=float)
    if (x > 1).any():
        warnings.warn(f"{int((x > 1).sum())} record(s) clipped to 1", UserWarning)
    return np.clip(x, 0.0, 1.0).sum() + rng.laplace(0.0, 1.0, size)


def test_a_warning_on_one_side_is_a_violation():
    # D = [0.5, 0.5], D' = [0.5, 3]: the values' loss is 0.5 (sums 1 vs 1.5, Laplace(1)), under the claim;
    # the warning on every call of D' and no call of D is an infinite one.
    r = audit(clipping_sum, ([0.5, 0.5], [0.5, 3.0]), PureDP(1.0), samples=2000, seed=0, confidence=CONFIDENCE)
    assert r.verdict == VIOLATION and r.witness.rejection_set == EventSet("warned")
    assert r.epsilon_lower_bound == pytest.approx(_all_versus_none(1800, 1e-4 / 2), rel=1e-9)  # 5.14
    assert r.events[0]["second"]["warning_categories"] == ["UserWarning"]
    assert r.report_dict()["event_witness"].startswith("the mechanism warned (UserWarning) on 100% of the second")
    with planted.REACH_BY_NAME["exceptions-not-outputs"].applied(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a user's session: the warning is printed once, and forgotten
        missed = audit(clipping_sum, ([0.5, 0.5], [0.5, 3.0]), PureDP(1.0), samples=2000, seed=0)
    assert missed.verdict == NO_VIOLATION  # the values alone: eps_lb <= 0.5 + chance, at alpha 0.05


# ------------------------------------------------------------------ programs
def test_a_program_that_refuses_on_some_data_is_a_violation(capsys):
    # protocol_program.py "good" with refuse_above = 2: a "refused" answer on 3 records, releases on 2.
    args = ["audit", "--command", PROGRAM, "--claim", "pure:epsilon=1", "--pair", "[0.5, 0.5]", "[0.5, 0.5, 0.5]"]
    code = main([*args, "--kwargs", '{"T": 10, "epsilon": 1, "refuse_above": 2}', "--samples", "100", "--json"])
    d = _json(capsys)
    assert code == 1 and d["witness"]["rejection_set"]["event"] == "raised"
    assert d["events"][0]["second"]["raised_by_class"] == {"ProgramRefused": 1.0}
    assert d["epsilon_lower_bound"] == pytest.approx(_all_versus_none(90, 0.05 / 2), rel=1e-9)  # 3.02
    code = main([*args, "--kwargs", '{"T": 10, "epsilon": 1, "fail": true}', "--samples", "100"])
    assert code == 3  # "failed" on every request of both sides: an error of the target
    assert "raised on every call of both sides" in capsys.readouterr().err


# ------------------------------------------------------------------ processes
def warns_sometimes(count, rng):
    """Laplace(1) on the count, a warning with probability 0.3 when the count exceeds 100, and a
    RuntimeError with probability 0.1 whatever the count (one release per call, module level: the
    workers import it)."""
    if rng.random() < 0.1:
        raise RuntimeError("service unavailable")
    if count > 100 and rng.random() < 0.3:
        warnings.warn("large count", UserWarning)
    return count + rng.laplace(0.0, 1.0)


@pytest.mark.slow
def test_outcomes_do_not_depend_on_the_workers():
    # The same seed gives the same audit on 1 and 2 processes (each shard's calls are recorded where
    # they run); 2 processes start a fork server (seconds), hence slow.
    results = [
        audit(warns_sometimes, (100, 101), PureDP(1.0), samples=12_000, seed=0, workers=w, confidence=CONFIDENCE)
        for w in (1, 2)
    ]
    assert results[0].verdict == results[1].verdict == VIOLATION
    assert results[0].epsilon_lower_bound == results[1].epsilon_lower_bound
    assert results[0].events == results[1].events
