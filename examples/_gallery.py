"""What the gallery modules share: the ``Entry`` record and input checks. (The fork guard for
python-dp's random buffer is userdp's own now, applied in every forked worker:
``userdp.audits.engine.parallel.discard_inherited_pydp_buffer``.)

An ``Entry`` names one audit target (``module:factory``), the neighbouring relation its
pairs are checked under (``--relation``), its expected verdict, and two sample counts: the
default test run's (sized so that the whole gallery runs in a few minutes on 2 cores) and
the README figure's (``tests/gallery`` marks that run slow). ``why`` says why the verdict
is expected, and for a violation why a miss is improbable at the test's sample count.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

VIOLATION, NO_VIOLATION = "violation", "no violation found"


@dataclass(frozen=True)
class Entry:
    target: str  # "examples.gallery_opendp:clamp_sum_laplace"
    library: str  # the distribution name, e.g. "opendp"
    version: str  # the pinned version (pyproject's gallery extra)
    mechanism: str  # what is released, in a few words
    relation: str  # a name of userdp.reference.neighbours.RELATIONS
    expected: str  # VIOLATION or NO_VIOLATION
    samples: int  # outputs per side in the default test run
    figure_samples: int  # outputs per side for the README table (the slow test)
    why: str

    def __post_init__(self):
        if self.expected not in (VIOLATION, NO_VIOLATION):
            raise ValueError(f"expected must be {VIOLATION!r} or {NO_VIOLATION!r}, got {self.expected!r}")

    @property
    def name(self) -> str:
        return self.target.partition(":")[2]


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """A finite epsilon > 0 (a bool is refused)."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(epsilon).__name__} {epsilon!r}")
    e = float(epsilon)
    if not (math.isfinite(e) and e > 0):
        raise ValueError(f"{name} must be finite and > 0, got {epsilon!r}")
    return e


def check_bounds(lower, upper) -> tuple[float, float]:
    """Finite record bounds with lower < upper."""
    for v, name in ((lower, "lower"), (upper, "upper")):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {type(v).__name__} {v!r}")
    lo, hi = float(lower), float(upper)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be finite with lower < upper, got lower={lower!r}, upper={upper!r}")
    return lo, hi


def check_records(records, lower: float, upper: float, name: str) -> list[float]:
    """A pair's side: a 1-D sequence of numbers in [lower, upper]. The worst-case argument
    of each pair assumes its records respect the declared bounds, so a record outside them
    is refused (never clipped here: the library's own clipping is what is audited)."""
    x = np.asarray(records, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of records, got shape {x.shape}")
    bad = ~np.isfinite(x) | (x < lower) | (x > upper)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name}[{i}] = {x[i]!r} lies outside the record bounds [{lower}, {upper}]")
    return x.tolist()
