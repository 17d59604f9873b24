"""The settings of ``userdp validate``: its constants (the false-alarm budget, sample sizes, time budgets)
and ``check_settings``, the one place where a run's settings are checked, with one copy of the bounds.

``ALPHA`` is the false-alarm budget of a run and ``ALPHAS`` its split over the tests
(``audits/validation/run.py`` says why each share is valid); ``POLICIES`` are the input policies a
target may declare (``--inputs``); ``QUICK`` the smaller sizes of ``--quick``; ``BUDGET`` the seconds
of the target's own time the differential and the audits may take; ``PROBE`` the releases of the
first, timed batch of a case, by call shape; ``NOISE_FREE_STAGES`` the stages an Adapter may have
besides its mechanism.
"""

from __future__ import annotations

import numbers

import numpy as np

from userdp.audits.validation import BadType, BadValue
from userdp.audits.validation.target import BATCHED, ONE

__all__ = [
    "ALPHA",
    "ALPHAS",
    "STAGE_RTOL",
    "CALLS",
    "PER_CALL",
    "FEW_CALLS",
    "SLOW_CALL",
    "DEFAULT_SAMPLES",
    "REFERENCE_FACTOR",
    "REFERENCE_MIN",
    "CENTRE_SAMPLES",
    "DEFAULT_AUDIT_SAMPLES",
    "MIN_SAMPLES",
    "MIN_AUDIT_SAMPLES",
    "FLOOR_SAMPLES",
    "Z_KURT",
    "MAX_SECONDS",
    "BUDGET",
    "QUICK",
    "DEFAULT_EXAMPLES",
    "SHRINK_SECONDS",
    "CLIP_SAMPLES",
    "KS_MAX",
    "POLICIES",
    "NOISE_FREE_STAGES",
    "PROBE",
    "MAX_COUNT",
    "MAX_EXAMPLES",
    "MIN_GIVEN_AUDIT_SAMPLES",
    "check_settings",
]

ALPHA = 1e-4
ALPHAS = {
    "mean": 2e-5,
    "scale": 2e-5,
    "distribution": 2e-5,
    "audit": 2e-5,
    "independence": 5e-6,
    "stages_agree": 5e-6,
    "release_share": 5e-6,
    "clip": 5e-6,
}
STAGE_RTOL = 1e-9  # noise-free stages, |target - reference| / max(1, |reference|)
CALLS, PER_CALL = 40, 250  # the independence check: 10^4 releases in 40 calls
FEW_CALLS, SLOW_CALL = 12, 0.05  # ... or 12 calls where one call takes more than 0.05 s of CPU
DEFAULT_SAMPLES = 100_000  # target releases per case (a fast target)
REFERENCE_FACTOR = 2  # reference releases per target release ...
REFERENCE_MIN = 200_000  # ... and at least this many (the spec's max_samples permitting): the reference is
# cheap, and a rare component of its law (a PTR fallback) must show in its kurtosis
CENTRE_SAMPLES = 20_000  # the separate reference batch whose median centres a release without a statistic
DEFAULT_AUDIT_SAMPLES = 100_000
MIN_SAMPLES, MIN_AUDIT_SAMPLES = 2_000, 2_000
FLOOR_SAMPLES = 250  # the least a very slow target gets, per case and per audited pair
Z_KURT = 300  # z tests only where n >= 300 x max(1, the reference's excess kurtosis) (run.py's docstring)
MAX_SECONDS = 30.0  # the target's own CPU time above which the floors above give way (to FLOOR_SAMPLES)
BUDGET = {"differential": 3.5, "audit": 2.5}  # seconds of the target's own time, at most, by default
QUICK = {"samples": 20_000, "audit_samples": 20_000, "examples": 10, "budget": 0.4}
DEFAULT_EXAMPLES = 50
SHRINK_SECONDS = 5.0  # Hypothesis's shrinking of the first failing property's counterexample, at most
CLIP_SAMPLES = 20_000
KS_MAX = 50_000  # rows of each side in a KS test (the first ones: the rows are i.i.d.)
POLICIES = ("refuse", "clip", "trust")
NOISE_FREE_STAGES = ("weights", "statistic", "sensitivity", "noise_scale")
PROBE = {BATCHED: 500, ONE: 200}  # releases in the first, timed batch of a case
MAX_COUNT = 10_000_000  # the most samples or audit_samples a caller may ask for
MAX_EXAMPLES = 100_000  # the most Hypothesis examples per property a caller may ask for
MIN_GIVEN_AUDIT_SAMPLES = 1_000  # the least audit_samples a caller may ask for

assert abs(sum(ALPHAS.values()) - ALPHA) < 1e-15


def _check_count(value, name: str, lo: int, hi: int) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
        raise BadType(f"{name} must be an int, got {type(value).__name__} {value!r:.80}")
    if not lo <= value <= hi:
        raise BadValue(f"{name} must be an int in [{lo}, {hi}], got {value!r}")
    return int(value)


def check_settings(
    *,
    samples=None,
    audit_samples=None,
    examples=None,
    seed=0,
    quick=False,
    inputs=None,
    progress=None,
) -> None:
    """Refuse (BadType / BadValue naming the setting) a setting of a run out of its bounds: the counts
    (None: chosen by the target's speed), the seed, ``quick``, the input policy and ``progress``."""
    for name, value, lo, hi in (
        ("samples", samples, MIN_SAMPLES, MAX_COUNT),
        ("audit_samples", audit_samples, MIN_GIVEN_AUDIT_SAMPLES, MAX_COUNT),
        ("examples", examples, 1, MAX_EXAMPLES),
    ):
        if value is not None:
            _check_count(value, name, lo, hi)
    _check_count(seed, "seed", 0, 2**63 - 1)
    if not isinstance(quick, bool):
        raise BadType(f"quick must be a bool, got {type(quick).__name__}")
    if inputs is not None and inputs not in POLICIES:
        raise BadValue(f"inputs must be one of {POLICIES} or None (inferred per case), got {inputs!r}")
    if progress is not None and not callable(progress):
        raise BadType(f"progress must be None or a callable taking one message, got {type(progress).__name__}")
