"""validate's check b, **independence** (batched targets): ``CALLS`` calls of ``PER_CALL`` releases
(``FEW_CALLS`` for a target whose calls are slow); Kruskal-Wallis per coordinate on "the call a
release came from", on the releases and on their distance to the pooled median. A dependent target
(randomness drawn once per call and shared) is "not independent", and is then drawn one release per
call by the later checks (``Context.independent``).

Why it is valid: under independence the releases of all calls are exchangeable; the statistic is
chi-square with (calls - 1) degrees of freedom, accurate in the 1e-6 tail for groups of
PER_CALL = 250. Its share of the false-alarm budget is ``ALPHAS["independence"]`` (Bonferroni
over the coordinates and the two tests).

Skipped for a target making one release per call (no releases share a call), and said so.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import stats

from userdp.audits.validation import BadType, Case, ValidationSpec
from userdp.audits.validation.context import Context
from userdp.audits.validation.findings import Finding
from userdp.audits.validation.releases import release_rows
from userdp.audits.validation.settings import ALPHAS, CALLS, FEW_CALLS, PER_CALL, SLOW_CALL
from userdp.audits.validation.target import BATCHED, PythonTarget

__all__ = ["NAME", "NEEDS", "applies", "check"]

NAME = "independence"  # the check's name in the report
NEEDS = ()  # the checks that must run first


def applies(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> str | None:
    """None if the check applies, else why it is skipped."""
    if target.mechanism is None:
        return "TARGET has no mechanism stage (the release)"
    if target.shape != BATCHED:
        return "one release per call (no releases share a call)"
    return None


def check(spec: ValidationSpec, target: PythonTarget, ctx: Context, case: Case | None = None) -> Finding | None:
    """Kruskal-Wallis on releases grouped by the call that made them, on ``case`` (default: the spec's
    ``independence_on`` case); the finding, or None when nothing varies."""
    t = target
    if case is not None and not isinstance(case, Case):
        raise BadType(f"case must be None or a validation Case, got {type(case).__name__}")
    case = case or spec.independence_on(ctx.cases)
    rng = np.random.default_rng([ctx.seed, 2])
    t0 = time.process_time()
    first = release_rows(spec, t, case.dataset, rng, PER_CALL, case.params, f"case {case.description!r}")
    calls = CALLS if time.process_time() - t0 < SLOW_CALL else FEW_CALLS  # a slow call: fewer groups
    X = np.stack(
        [first]
        + [
            release_rows(spec, t, case.dataset, rng, PER_CALL, case.params, f"case {case.description!r}")
            for _ in range(calls - 1)
        ]
    )
    ctx.cost = (time.process_time() - t0) / (calls * PER_CALL)
    k = X.shape[2]
    pmin, where = 1.0, None
    for j in range(k):
        groups = [g[np.isfinite(g)] for g in X[:, :, j]]
        flat = np.concatenate(groups)
        if flat.size == 0 or np.all(flat == flat[0]):
            continue
        med = float(np.median(flat))
        for what, gs in (("location", groups), ("spread", [np.abs(g - med) for g in groups])):
            gs = [g for g in gs if g.size]
            allv = np.concatenate(gs)
            if len(gs) < 2 or np.all(allv == allv[0]):
                continue
            h, p = stats.kruskal(*gs)
            if p < pmin:
                within = float(np.mean([np.var(g) for g in groups if g.size > 1]))
                pmin, where = p, (j, what, float(h), within, float(np.var(flat)))
    crit = ALPHAS["independence"] / max(1, 2 * k)
    text = (
        f"ran: {calls} calls x {PER_CALL} releases on case {case.description!r}, Kruskal-Wallis per "
        "coordinate on location and spread"
    )
    if where is None:
        ctx.checks["independence"] = text + " (nothing varies: not determined)"
        return None
    j, what, h, within, total = where
    bad = pmin < crit
    f = Finding(
        "independence",
        "not independent" if bad else "pass",
        "releases of one call " + ("share randomness" if bad else "look independent"),
        {
            "smallest_p": pmin,
            "critical_p": crit,
            "coordinate": j,
            "in": what,
            "kruskal_h": round(h, 2),
            "within_call_variance": within,
            "overall_variance": total,
            "meaning": "releases grouped by the call that made them; a small p says they cluster by call "
            "(randomness drawn once per call and shared)",
        },
    )
    ctx.checks["independence"] = text
    ctx.add(f)
    ctx.independent = not bad
    return f
