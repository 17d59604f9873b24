"""The implementation-adapter protocol (DESIGN §5): one shape for every implementation.

A reference algorithm and an external implementation are both wrapped as an
``Adapter`` with optional stages. Property suites (``prop_*`` functions in the paper
modules of this package) take an adapter and one Hypothesis example, and raise
``AssertionError`` when an invariant fails; a suite checks only the stages that are
present. ``check_property`` runs one property under Hypothesis and grades the result
like Wycheproof (DESIGN §5): "pass" or "invariant violation" with the minimal
counterexample. ("privacy violation" comes from the audit; "deviation from reference"
from differential tests.)

Stage signatures follow DESIGN §4; each paper module documents the exact arguments:
``weights(dataset, ...)``, ``statistic(dataset, ...)``, ``sensitivity(...)`` or
``noise_scale(...)``, ``mechanism(dataset, rng, size=None)``.

Grading (review finding of issue 7): only ``StageMissing`` (raised by ``Adapter.require``)
makes a property "not applicable". Any other exception raised while the property runs (a
stage raising ``KeyError``, ``IndexError``, ``ValueError``, ... or the property's own
arithmetic failing on the stage's output) is a finding, graded "invariant violation" with
the exception in the message: an implementation that crashes on a valid example does not
satisfy the invariant, and nothing must hide that.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, fields
from typing import Any, Callable, Optional

from hypothesis import HealthCheck, example, given, settings
from hypothesis.errors import Unsatisfiable
from hypothesis.strategies import SearchStrategy

__all__ = ["Adapter", "Finding", "StageMissing", "check_property", "VERDICTS"]

VERDICTS = ("pass", "invariant violation", "deviation from reference", "privacy violation")


class StageMissing(Exception):
    """A property needs a stage the adapter does not have: the property is "not applicable".

    Deliberately not a ``LookupError``: a stage raising ``KeyError`` or ``IndexError`` is a
    finding, never a missing stage.
    """


def _stage_names(cls=None) -> set[str]:
    """Every stage name of Adapter and its subclasses (e.g. CapAdapter's optimal_cap)."""
    cls = cls or Adapter
    names = {f.name for f in fields(cls)} - {"name"}
    for sub in cls.__subclasses__():
        names |= _stage_names(sub)
    return names


@dataclass(frozen=True)
class Adapter:
    """Stages of one implementation; any stage may be missing (``None``)."""

    name: str
    weights: Optional[Callable[..., Any]] = None
    statistic: Optional[Callable[..., Any]] = None
    sensitivity: Optional[Callable[..., Any]] = None
    noise_scale: Optional[Callable[..., Any]] = None
    mechanism: Optional[Callable[..., Any]] = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"name must be a non-empty str (the implementation's name), got {self.name!r}")
        for f in fields(self):
            stage = getattr(self, f.name)
            if f.name != "name" and stage is not None and not callable(stage):
                raise TypeError(f"{f.name} must be a callable stage or None, got {type(stage).__name__} {stage!r}")

    def stages(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self) if f.name != "name" and getattr(self, f.name) is not None)

    def require(self, *stages: str) -> None:
        """Raise ``StageMissing`` if a stage the property needs is missing (the property is then
        "not applicable"); a name that is no adapter's stage is a bug in the property (ValueError)."""
        known = _stage_names()
        unknown = [s for s in stages if not isinstance(s, str) or s not in known]
        if unknown:
            raise ValueError(f"stages must be stage names among {sorted(known)}, got {unknown!r}")
        missing = [s for s in stages if getattr(self, s, None) is None]
        if missing:
            raise StageMissing(f"adapter {self.name!r} has no stage {', '.join(missing)}")


@dataclass(frozen=True)
class Finding:
    verdict: str                      # one of VERDICTS, or "not applicable"
    property: str
    implementation: str
    counterexample: str | None = None
    message: str | None = None


def check_property(prop: Callable[[Adapter, Any], None], strategy, impl: Adapter, *,
                   max_examples: int = 100, examples=()) -> Finding:
    """Run ``prop(impl, example)`` on Hypothesis examples; return the graded finding.

    Derandomized and without an example database, so a finding reproduces exactly.
    ``examples`` are known hard cases run first on every call (Hypothesis ``@example``):
    which examples a derandomized run draws still depends on the code loaded (Hypothesis
    mines constants from local modules), so a suite must not rely on luck to reach a
    worst case it knows. A property that needs a stage the adapter lacks yields
    "not applicable" (``StageMissing``, and nothing else; see the module docstring).
    """
    if not callable(prop):
        raise TypeError(f"prop must be a property function prop(impl, example), got {type(prop).__name__}")
    if not isinstance(strategy, SearchStrategy):
        raise TypeError(f"strategy must be a Hypothesis strategy, got {type(strategy).__name__}")
    if not isinstance(impl, Adapter):
        raise TypeError(f"impl must be an Adapter (userdp.properties.adapter.Adapter), got {type(impl).__name__}")
    if isinstance(max_examples, bool) or not isinstance(max_examples, numbers.Integral) \
            or not 1 <= max_examples <= 100_000:
        raise ValueError(f"max_examples must be an int in [1, 100000], got {max_examples!r}")
    if isinstance(examples, (str, bytes)) or not hasattr(examples, "__iter__"):
        raise TypeError(f"examples must be an iterable of examples, got {type(examples).__name__}")
    shown: list[str] = []
    missing: list[StageMissing] = []

    # report_multiple_bugs=False: a property failing at two places gives one finding (the
    # first), not an ExceptionGroup that would escape the AssertionError handler below.
    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), print_blob=False, report_multiple_bugs=False)
    @given(strategy)
    def run(ex):
        shown.clear()
        shown.append(repr(ex))
        try:
            prop(impl, ex)
        except StageMissing as exc:      # recorded, not raised: nothing to shrink
            missing.append(exc)

    for e in reversed(list(examples)):
        run = example(e)(run)

    name = getattr(prop, "__name__", repr(prop))
    try:
        run()
    except AssertionError as exc:
        return Finding("invariant violation", name, impl.name, shown[-1] if shown else None, str(exc))
    except Unsatisfiable as exc:  # a strategy that never produces a usable example is a test bug
        raise RuntimeError(f"property {name}: strategy produced no usable example") from exc
    except Exception as exc:      # a stage (or the property on its output) raised: a finding
        return Finding("invariant violation", name, impl.name, shown[-1] if shown else None,
                       f"the implementation raised {type(exc).__name__}: {exc}")
    if missing:
        return Finding("not applicable", name, impl.name, message=str(missing[0]))
    return Finding("pass", name, impl.name)
