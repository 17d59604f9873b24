"""validate's check a, **properties**: the paper's property suite (``properties/<paper>.py``) on the
noise-free stages TARGET has (an ``Adapter``'s ``weights``, ``statistic``, ``sensitivity``,
``noise_scale``): a failing property is an invariant violation, printed with its minimal
counterexample as a runnable snippet. The suites are derandomized (their own statistical properties
state thresholds of 1e-5 or less), so this check spends none of the false-alarm budget.

Skipped when the spec names no suite, or TARGET has no noise-free stage, and said so.
"""

from __future__ import annotations

import importlib

from userdp.properties.adapter import check_suite_property

from userdp.audits.validation import ValidationSpec
from userdp.audits.validation.context import Context
from userdp.audits.validation.findings import Finding
from userdp.audits.validation.report import property_snippet
from userdp.audits.validation.settings import SHRINK_SECONDS
from userdp.audits.validation.target import PythonTarget

__all__ = ["NAME", "NEEDS", "applies", "check"]

NAME = "properties"  # the check's name in the report
NEEDS = ()  # the checks that must run first


def applies(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> str | None:
    """None if the check applies, else why it is skipped."""
    if not spec.suite_properties:
        return f"{spec.suite} has no property suite for {spec.algorithm}"
    if not target.stage_names():
        return (
            "TARGET has no noise-free stage (the suite checks "
            f"{', '.join(spec.stage_params) or 'stages this algorithm does not have'})"
        )
    return None


def check(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> None:
    """Run the paper's property suite on TARGET's noise-free stages; one finding per property that applies."""
    t = target
    suite = importlib.import_module(spec.suite)
    ran, failed = 0, 0
    props = getattr(suite, spec.suite_properties)
    for prop in props:
        # the first failing property's counterexample is shrunk (for at most SHRINK_SECONDS); the
        # later ones are reported as found: the grades are the same, the run stays short
        f = check_suite_property(
            suite, prop, t.adapter, max_examples=ctx.examples, shrink=failed == 0, shrink_seconds=SHRINK_SECONDS
        )
        failed += f.verdict not in ("pass", "not applicable")
        if f.verdict == "not applicable":
            continue
        ran += 1
        ctx.say(f"property {prop.__name__}: {f.verdict}")
        verdict = "pass" if f.verdict == "pass" else "invariant violation"
        ev = {"property": f.property, "paper_invariant": (prop.__doc__ or "").strip().split("\n")[0]}
        if f.verdict != "pass":
            ev.update(
                grade=f.verdict,
                message=f.message,
                counterexample=f.counterexample,
                snippet=property_snippet(spec, prop, f, ctx.target),
            )
        ctx.add(Finding("properties", verdict, f"{prop.__name__}: {f.verdict}", ev))
    ctx.checks["properties"] = (
        f"ran: {ran} of {len(props)} properties (the rest need stages TARGET lacks), "
        f"up to {ctx.examples} Hypothesis examples each"
    )
