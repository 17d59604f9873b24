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
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from hypothesis import HealthCheck, example, given, settings
from hypothesis.errors import Unsatisfiable

__all__ = ["Adapter", "Finding", "check_property", "VERDICTS"]

VERDICTS = ("pass", "invariant violation", "deviation from reference", "privacy violation")


@dataclass(frozen=True)
class Adapter:
    """Stages of one implementation; any stage may be missing (``None``)."""

    name: str
    weights: Optional[Callable[..., Any]] = None
    statistic: Optional[Callable[..., Any]] = None
    sensitivity: Optional[Callable[..., Any]] = None
    noise_scale: Optional[Callable[..., Any]] = None
    mechanism: Optional[Callable[..., Any]] = None

    def stages(self) -> tuple[str, ...]:
        return tuple(s for s in ("weights", "statistic", "sensitivity", "noise_scale", "mechanism")
                     if getattr(self, s) is not None)

    def require(self, *stages: str) -> None:
        """Raise ``LookupError`` if a stage the property needs is missing (the caller skips it)."""
        missing = [s for s in stages if getattr(self, s) is None]
        if missing:
            raise LookupError(f"adapter {self.name!r} has no stage {', '.join(missing)}")


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
    "not applicable".
    """
    shown: list[str] = []

    # report_multiple_bugs=False: a property failing at two places gives one finding (the
    # first), not an ExceptionGroup that would escape the AssertionError handler below.
    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), print_blob=False, report_multiple_bugs=False)
    @given(strategy)
    def run(ex):
        shown.clear()
        shown.append(repr(ex))
        prop(impl, ex)

    for e in reversed(list(examples)):
        run = example(e)(run)

    name = getattr(prop, "__name__", repr(prop))
    try:
        run()
    except LookupError as exc:
        return Finding("not applicable", name, impl.name, message=str(exc))
    except AssertionError as exc:
        return Finding("invariant violation", name, impl.name, shown[-1] if shown else None, str(exc))
    except Unsatisfiable as exc:  # a strategy that never produces a usable example is a test bug
        raise RuntimeError(f"property {name}: strategy produced no usable example") from exc
    return Finding("pass", name, impl.name)
