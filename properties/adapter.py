"""The implementation-adapter protocol (docs/design.md §5): one shape for every implementation.

A reference algorithm and an external implementation are both wrapped as an
``Adapter`` with optional stages. Property suites (``prop_*`` functions in the paper
modules of this package) take an adapter and one Hypothesis example, and raise
``AssertionError`` when an invariant fails; a suite checks only the stages that are
present. ``check_property`` runs one property under Hypothesis and grades the result
like Wycheproof (docs/design.md §5): "pass", "invariant violation" with the minimal
counterexample, or "error" (below). ("privacy violation" comes from the audit;
"deviation from reference" from differential tests.)

Grading (review finding 1). A property that needs a stage the adapter lacks calls
``impl.require(...)``, which raises ``StageMissing``; that, and only that, grades "not
applicable". Every other exception raised while the property runs is a finding:

- ``AssertionError`` raised by the property itself: "invariant violation";
- anything else (a stage raising ``KeyError``, ``IndexError``, ``ValueError``, even
  ``AssertionError`` or ``StageMissing``; or the property's own arithmetic failing on what
  a stage returned): "error", with the stage named when a stage raised it, and the minimal
  counterexample. A stage that fails and then succeeds on the same input (Hypothesis
  ``FlakyFailure``) is an "error" too.

Why a separate verdict "error" and not "invariant violation": "invariant violation"
says the invariant was evaluated and is false, and its message is read against the
paper. A crash says the invariant could not be evaluated: the implementation fails on a
valid input, or the example lies outside a range it supports. Both block a pass, but
they ask the reader for different work (a counterexample against the paper, or a
traceback), so they are graded apart. Neither is ever "pass" or "not applicable".

Stage signatures follow docs/design.md §4; each paper module documents the exact arguments:
``weights(dataset, ...)``, ``statistic(dataset, ...)``, ``sensitivity(...)`` or
``noise_scale(...)``, ``mechanism(dataset, rng, size=None)``. An adapter type may add
stages (``STAGES``; e.g. ``properties.amin2019.CapAdapter`` adds ``optimal_cap``); an
adapter of a type without that stage simply lacks it.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import numbers
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, ClassVar, Mapping, Optional

from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import errors as hypothesis_errors
from hypothesis.strategies import SearchStrategy
from hypothesis.errors import HypothesisException, Unsatisfiable

__all__ = ["Adapter", "Finding", "StageMissing", "check_property", "check_suite_property", "VERDICTS"]

VERDICTS = ("pass", "invariant violation", "error", "deviation from reference", "privacy violation")
NOT_APPLICABLE = "not applicable"  # not a verdict: the property did not run

# A failure that does not reproduce on the same example (Hypothesis >= 6.101 raises
# FlakyFailure; older versions raise its base class Flaky).
_FLAKY_FAILURE = getattr(hypothesis_errors, "FlakyFailure", hypothesis_errors.Flaky)

# Hypothesis's "explain" phase re-runs a failing example under a line tracer only to add
# notes that no finding reports; it dominated the time of a failing check (measured:
# docs/performance.md, "properties/adapter.py").
_PHASES = tuple(p for p in Phase if p.name != "explain")

# Stage names of every adapter type (``Adapter.STAGES`` and those its subclasses add):
# ``require`` refuses a name outside it, so a misspelt stage in a property is an error,
# not a silent "not applicable".
_KNOWN_STAGES: set[str] = set()


class _NotApplicable(BaseException):
    """Carries the property's own ``StageMissing`` out of Hypothesis at once. A
    ``BaseException`` that is not an ``Exception`` is not a test failure to Hypothesis, so
    it is neither shrunk nor replayed: a missing stage costs one example, not a search."""


class StageMissing(Exception):
    """The adapter lacks a stage the property needs: the property is "not applicable"."""

    def __init__(self, adapter: str, stages: tuple[str, ...]):
        self.adapter, self.stages = adapter, stages
        super().__init__(f"adapter {adapter!r} has no stage {', '.join(stages)}")


@dataclass(frozen=True)
class Adapter:
    """Stages of one implementation; any stage may be missing (``None``).

    ``mechanism`` is the randomized release, in either call shape: one release per call,
    ``mechanism(dataset, rng, **params)``, or batched, ``mechanism(dataset, rng, size, **params)``
    returning ``size`` independent releases (a parameter named ``size`` says which).
    ``param_map`` (keyword only) renames parameters: {the reference's name: yours}, e.g.
    ``{"epsilon": "eps"}``; every stage is then called with your names (``renamed``).
    """

    STAGES: ClassVar[tuple[str, ...]] = ("weights", "statistic", "sensitivity", "noise_scale", "mechanism")

    name: str
    weights: Optional[Callable[..., Any]] = None
    statistic: Optional[Callable[..., Any]] = None
    sensitivity: Optional[Callable[..., Any]] = None
    noise_scale: Optional[Callable[..., Any]] = None
    mechanism: Optional[Callable[..., Any]] = None
    param_map: Mapping[str, str] = field(default_factory=dict, kw_only=True, hash=False)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _KNOWN_STAGES.update(cls.STAGES)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"name must be a non-empty str (the implementation's name), got {self.name!r}")
        for s in self.STAGES:
            stage = getattr(self, s)
            if stage is not None and not callable(stage):
                raise TypeError(f"{s} must be a callable stage or None, got {type(stage).__name__} {stage!r}")
        pm = self.param_map
        if not isinstance(pm, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and k and v for k, v in pm.items()
        ):
            raise TypeError(
                f"param_map must be a mapping of str to str (the reference's name: yours), got "
                f"{type(pm).__name__} {pm!r:.80}"
            )
        if len(set(pm.values())) != len(pm):
            raise ValueError(f"param_map must not map two names to one, got {dict(pm)!r}")
        object.__setattr__(self, "param_map", MappingProxyType(dict(pm)))

    def renamed(self, extra: Mapping[str, str] | None = None) -> "Adapter":
        """A copy whose stages take the REFERENCE's parameter names and call yours: keywords
        renamed by ``param_map`` updated with ``extra`` (both {reference name: yours}). The copy's
        own ``param_map`` is empty. Without any renaming, ``self``."""
        if extra is not None and not (
            isinstance(extra, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items())
        ):
            raise TypeError(f"extra must be None or a mapping of str to str, got {type(extra).__name__} {extra!r:.80}")
        pm = {**self.param_map, **(extra or {})}
        if not pm:
            return self
        copy_ = copy.copy(self)
        for s in self.stages():
            object.__setattr__(copy_, s, _renaming(getattr(self, s), pm))
        object.__setattr__(copy_, "param_map", MappingProxyType({}))
        return copy_

    def stages(self) -> tuple[str, ...]:
        return tuple(s for s in self.STAGES if getattr(self, s) is not None)

    def require(self, *stages: str) -> None:
        """Raise ``StageMissing`` if a stage the property needs is missing (graded "not
        applicable"); a stage of another adapter type (``optimal_cap`` on a plain
        ``Adapter``) is missing too. An unknown stage name is a bug in the property: TypeError."""
        unknown = [s for s in stages if not isinstance(s, str) or s not in _KNOWN_STAGES]
        if unknown:
            raise TypeError(
                f"require: unknown stage {', '.join(map(repr, unknown))}; "
                f"known stages: {', '.join(sorted(_KNOWN_STAGES))}"
            )
        missing = tuple(s for s in stages if getattr(self, s, None) is None)
        if missing:
            raise StageMissing(self.name, missing)


_KNOWN_STAGES.update(Adapter.STAGES)


def _renaming(f: Callable, pm: Mapping[str, str]) -> Callable:
    @functools.wraps(f)
    def call(*args, **kwargs):
        return f(*args, **{pm.get(k, k): v for k, v in kwargs.items()})

    call.__wrapped_stage__ = f
    return call


@dataclass(frozen=True)
class Finding:
    verdict: str  # one of VERDICTS, or "not applicable"
    property: str
    implementation: str
    counterexample: str | None = None
    message: str | None = None

    @property
    def failed(self) -> bool:
        """A finding against the implementation: neither "pass" nor "not applicable"."""
        return self.verdict not in ("pass", NOT_APPLICABLE)


def _traced(impl: Adapter, log: list) -> Adapter:
    """A copy of ``impl`` whose stages append (stage, exception) to ``log`` when they raise,
    then re-raise it unchanged (so a property may still catch an expected ValueError)."""

    def wrap(stage: str, f: Callable) -> Callable:
        @functools.wraps(f)
        def call(*args, **kwargs):
            try:
                return f(*args, **kwargs)
            except Exception as exc:
                log.append((stage, exc))
                raise

        return call

    traced = copy.copy(impl)
    for s in impl.stages():
        object.__setattr__(traced, s, wrap(s, getattr(impl, s)))  # the copy only; impl is untouched
    return traced


@contextlib.contextmanager
def _without_local_constants():
    """Run Hypothesis without the constants it mines from local modules.

    Hypothesis (>= 6.131) sometimes draws constants found in the source of the non-test
    modules loaded so far (here: reference/, properties/, audits/). So a derandomized run
    drew different examples after any edit of those files, and even depending on which
    test files had run before in the same session: a finding (or a planted bug being
    caught) could not be reproduced in another process. Pinning the local constants to
    none makes the examples a function of the strategy and the Hypothesis version only.
    This uses Hypothesis internals; with a version that lacks them there is nothing to pin.
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants

        original, cache = providers._get_local_constants, providers.CONSTANTS_CACHE.cache
    except (ImportError, AttributeError):
        yield
        return
    none = Constants()
    providers._get_local_constants = lambda: none
    cache.clear()  # holds constants drawn for earlier tests
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.clear()


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


@contextlib.contextmanager
def _shrink_budget(seconds: float | None):
    """Hypothesis's shrinker stops after ``seconds`` of shrinking (its own limit is 300 s). A
    failure is found and graded the same either way; only how far its counterexample is
    minimised depends on the time. Uses a Hypothesis internal; without it, nothing is pinned."""
    if seconds is None:
        yield
        return
    try:
        from hypothesis.internal.conjecture import engine

        original = engine.MAX_SHRINKING_SECONDS
    except (ImportError, AttributeError):
        yield
        return
    engine.MAX_SHRINKING_SECONDS = seconds
    try:
        yield
    finally:
        engine.MAX_SHRINKING_SECONDS = original


def _check_arguments(prop, strategy, impl, max_examples, examples, shrink, shrink_seconds) -> None:
    """``check_property``'s arguments checked, in its order: the first bad one raises."""
    if not callable(prop):
        raise TypeError(f"prop must be a property function prop(impl, example), got {type(prop).__name__}")
    if not isinstance(strategy, SearchStrategy):
        raise TypeError(f"strategy must be a Hypothesis strategy, got {type(strategy).__name__}")
    if not isinstance(impl, Adapter):
        raise TypeError(f"impl must be an Adapter (userdp.properties.adapter.Adapter), got {type(impl).__name__}")
    if (
        isinstance(max_examples, bool)
        or not isinstance(max_examples, numbers.Integral)
        or not 1 <= max_examples <= 100_000
    ):
        raise ValueError(f"max_examples must be an int in [1, 100000], got {max_examples!r}")
    if isinstance(examples, (str, bytes, set, frozenset, dict)) or not hasattr(examples, "__iter__"):
        raise TypeError(f"examples must be a list of examples, got {type(examples).__name__}")
    if not isinstance(shrink, bool):
        raise TypeError(f"shrink must be a bool, got {type(shrink).__name__}")
    if shrink_seconds is not None and (
        isinstance(shrink_seconds, bool)
        or not isinstance(shrink_seconds, numbers.Real)
        or not 0 < shrink_seconds <= 3600
    ):
        raise ValueError(f"shrink_seconds must be None or a number of seconds in (0, 3600], got {shrink_seconds!r}")


def _hypothesis_test(prop, strategy, traced, max_examples: int, phases, shown: list, stage_log: list, raised: list):
    """The Hypothesis test of ``check_property``: ``prop(traced, example)`` on examples of
    ``strategy``, recording in ``shown``, ``stage_log`` and ``raised`` (``check_property``'s
    lists) the example run, the stages' exceptions and the one that left the property.

    Hypothesis derandomizes from a digest of ``run``'s source (decorators included), so it is
    kept as written: changing its text changes the examples drawn."""

    # report_multiple_bugs=False: a property failing at two places gives one finding (the
    # first), not an ExceptionGroup that would escape the handlers below. Hypothesis replays
    # the minimal failing example last and re-raises that run's exception object.
    @settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
    )
    @given(strategy)
    def run(ex):
        shown.clear()
        stage_log.clear()
        raised.clear()
        shown.append(repr(ex))
        try:
            prop(traced, ex)
        except StageMissing as exc:
            if not any(e is exc for _, e in stage_log):  # the property's own require(): stop now
                raise _NotApplicable(exc) from exc
            raised.append(exc)  # a stage raised it: an error, graded below
            raise
        except Exception as exc:
            raised.append(exc)
            raise

    return run


def check_property(
    prop: Callable[[Adapter, Any], None],
    strategy,
    impl: Adapter,
    *,
    max_examples: int = 100,
    examples=(),
    shrink: bool = True,
    shrink_seconds: float | None = None,
) -> Finding:
    """Run ``prop(impl, example)`` on Hypothesis examples; return the graded finding.

    Derandomized, without an example database and without constants mined from local
    modules (``_without_local_constants``), so a finding reproduces exactly in any process.
    ``examples`` are known hard cases run first on every call (Hypothesis ``@example``):
    the examples drawn still change with the strategy and the Hypothesis version, so a
    suite must not rely on luck to reach a worst case it knows.

    ``shrink=False`` reports the first failing example as found (no shrinking);
    ``shrink_seconds`` caps the time spent shrinking (the grade never depends on it, only how
    small the reported counterexample is).

    Grading: module docstring. An exception raised while drawing an example (a broken
    strategy) or by Hypothesis itself is a bug of the suite, not a finding: it propagates
    (``Unsatisfiable``, no usable example at all, as RuntimeError).
    """
    _check_arguments(prop, strategy, impl, max_examples, examples, shrink, shrink_seconds)
    phases = _PHASES if shrink else tuple(p for p in _PHASES if p.name != "shrink")
    shown: list[str] = []  # repr of the example being run (the minimal one, last)
    stage_log: list = []  # (stage, exception) raised by a stage during that example
    raised: list = []  # the exception that left the property during that example
    traced = _traced(impl, stage_log)

    run = _hypothesis_test(prop, strategy, traced, max_examples, phases, shown, stage_log, raised)
    for e in reversed(list(examples)):
        run = example(e)(run)

    name = getattr(prop, "__name__", repr(prop))

    def finding(verdict, message=None, with_example=True):
        return Finding(verdict, name, impl.name, shown[-1] if shown and with_example else None, message)

    try:
        with _without_local_constants(), _shrink_budget(shrink_seconds):
            run()
    except _NotApplicable as stop:
        return finding(NOT_APPLICABLE, str(stop.__cause__), with_example=False)
    except _FLAKY_FAILURE as exc:
        return finding(
            "error",
            f"not reproducible: the property failed on an example, then passed on "
            f"the same example (a non-deterministic stage?): {_describe(exc)}",
        )
    except (Unsatisfiable, HypothesisException) as exc:
        if isinstance(exc, Unsatisfiable):  # a strategy that never produces a usable example
            raise RuntimeError(f"property {name}: strategy produced no usable example") from exc
        raise  # Hypothesis misused by the suite: not a finding
    except Exception as exc:
        if not (raised and raised[-1] is exc):
            raise  # raised while drawing the example: a suite bug
        stage = next((s for s, e in stage_log if e is exc), None)
        if stage is not None:
            return finding("error", f"stage {stage} raised {_describe(exc)}")
        if isinstance(exc, AssertionError):
            return finding("invariant violation", str(exc))
        return finding("error", f"property raised {_describe(exc)}")
    return finding("pass", with_example=False)


def check_suite_property(
    suite,
    prop: Callable[[Adapter, Any], None],
    impl: Adapter,
    *,
    max_examples: int | None = None,
    shrink: bool = True,
    shrink_seconds: float | None = None,
) -> Finding:
    """``check_property`` as the suite module ``suite`` says to run ``prop``: its strategy
    ``suite.STRATEGIES[prop]``, its known hard cases ``suite.EXAMPLES``, and its effort
    ``suite.MAX_EXAMPLES`` (100 where it names none), capped at ``max_examples`` if given.
    This is how ``userdp validate``, its pytest plugin and the paper tests run a property."""
    strategies = getattr(suite, "STRATEGIES", None)
    if not isinstance(strategies, dict):
        raise TypeError(
            f"suite must be a property-suite module with a STRATEGIES dict, got "
            f"{type(suite).__name__} {getattr(suite, '__name__', suite)!r:.80}"
        )
    if prop not in strategies:
        raise ValueError(
            f"prop {getattr(prop, '__name__', prop)!r} has no strategy in suite "
            f"{getattr(suite, '__name__', suite)!r} (suite.STRATEGIES)"
        )
    n = getattr(suite, "MAX_EXAMPLES", {}).get(prop, 100)
    if max_examples is not None:
        if isinstance(max_examples, bool) or not isinstance(max_examples, numbers.Integral) or max_examples < 1:
            raise ValueError(f"max_examples must be None or an int >= 1, got {max_examples!r}")
        n = min(n, int(max_examples))
    return check_property(
        prop,
        strategies[prop],
        impl,
        max_examples=n,
        examples=getattr(suite, "EXAMPLES", {}).get(prop, ()),
        shrink=shrink,
        shrink_seconds=shrink_seconds,
    )
