"""validate's check a, **stages**: each noise-free stage TARGET has (``weights``, ``statistic``,
``sensitivity``, ``noise_scale``), against the suite's reference on every case (or the fixed ones,
as the spec says), within relative tolerance ``STAGE_RTOL``; a difference is a deviation from the
reference. (The differential adds "stages agree": the releases' mean against TARGET's own
``statistic`` stage.)

Skipped when TARGET has no noise-free stage the reference also has, and said so.
"""

from __future__ import annotations

import importlib
import math

import numpy as np

from userdp.audits.validation import ValidationSpec
from userdp.audits.validation.context import Context
from userdp.audits.validation.findings import Finding
from userdp.audits.validation.releases import call_target, nested_flat
from userdp.audits.validation.report import jsonable, short
from userdp.audits.validation.settings import STAGE_RTOL
from userdp.audits.validation.target import PythonTarget

__all__ = ["NAME", "NEEDS", "applies", "check"]

NAME = "stages"  # the check's name in the report
NEEDS = ()  # the checks that must run first


def _reference(spec: ValidationSpec):
    return getattr(importlib.import_module(spec.suite), spec.suite_reference, None) if spec.suite_reference else None


def _stages(spec: ValidationSpec, target: PythonTarget, ref) -> list:
    return [
        s
        for s in spec.stage_params
        if getattr(target.adapter, s, None) is not None and getattr(ref, s, None) is not None
    ]


def applies(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> str | None:
    """None if the check applies, else why it is skipped."""
    if not _stages(spec, target, _reference(spec)):
        return "TARGET has no noise-free stage to compare with the reference"
    return None


def _scaled_and_relative(got: np.ndarray, want: np.ndarray) -> tuple[float, float]:
    """(the largest |got - want| / max(1, |want|), the tolerance's measure; the relative difference
    |got - want| / max(|got|, |want|) at that entry, which reads the same at any size: a factor 2
    is 0.5). Non-finite results are inf."""
    if not want.size:
        return 0.0, 0.0
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        d = np.abs(got - want)
        scaled = np.where(got == want, 0.0, d / np.maximum(1.0, np.abs(want)))
        scaled = np.where(np.isnan(scaled), np.inf, scaled)
        i = int(np.argmax(scaled))
        g, w = float(got.flat[i]), float(want.flat[i])
        rel = 0.0 if g == w else abs(g - w) / max(abs(g), abs(w), np.finfo(float).tiny)
    err = float(scaled.flat[i])
    return (err if np.isfinite(err) else math.inf), (rel if np.isfinite(rel) else math.inf)


def check(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> None:
    """Compare each noise-free stage TARGET has with the suite's reference on every case (``STAGE_RTOL``)."""
    t = target
    ref = _reference(spec)
    stages = _stages(spec, target, ref)
    cases = ctx.cases if spec.stage_cases == "all" else [c for c in ctx.cases if c.origin == "fixed"]
    for s in stages:
        worst = None
        for case in cases:
            kw = {k: case.params[k] for k in spec.stage_params[s] if k in case.params}
            args = (case.dataset,) if s in spec.takes_dataset else ()
            want = nested_flat(getattr(ref, s)(*args, **kw))
            got = nested_flat(
                call_target(
                    f"TARGET {t.name}'s {s} stage on case {case.description!r}", getattr(t.adapter, s), *args, **kw
                )
            )
            if got is None or want is None or got.shape != want.shape:
                worst = (math.inf, case, want, got, math.inf)
                break
            err, rel = _scaled_and_relative(got, want)
            if worst is None or err > worst[0]:
                worst = (err, case, want, got, rel)
        err, case, want, got, rel = worst
        ok = err <= STAGE_RTOL
        ev = {
            "stage": s,
            "largest_scaled_difference": err,  # |target - reference| / max(1, |reference|): the rule's
            "relative_difference": rel,  # |target - reference| / max(|target|, |reference|) at that entry
            "tolerance": STAGE_RTOL,
            "rule": "|target - reference| <= tolerance * max(1, |reference|), entry by entry",
            "case": case.description,
        }
        if not ok:
            ev.update(reference=short(want), target=short(got), params=jsonable(case.params))
        ctx.add(
            Finding(
                "stages",
                "pass" if ok else "deviation from reference",
                f"stage {s} {'equals' if ok else 'differs from'} the reference's",
                ev,
            )
        )
    ctx.checks["stages"] = (
        f"ran: stages {', '.join(stages)} compared on {len(cases)} cases "
        f"(|difference| <= {STAGE_RTOL:g} max(1, |reference|))"
    )
