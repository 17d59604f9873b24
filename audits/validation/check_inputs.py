"""validate's check d, **inputs**: the inputs the reference refuses (``Refusal``), under the declared
input policy or, when none is declared, the policy each case shows (``POLICIES``):

- a release at a budget the reference refuses (eps = 0, no noise) or a non-finite one is always an
  invariant violation;
- "refuse": releasing on any refused input is an invariant violation;
- "clip": releases on out-of-domain data must be the reference's on the projected data
  (``ValidationSpec.project``; KS and mean tests, ``ALPHAS["clip"]``), and the spec's out-of-domain
  pairs are audited (``check_audits.py``); a mismatch is an invariant violation;
- "trust": out-of-domain cases are listed in a non-failing section, "inputs not enforced: the
  caller must guarantee ...";
- inferred: a refusal is "refuse", a release matching the projection is "clip", any other release
  is "trust". The inferred policy draws no finding, so it spends nothing of the false-alarm budget.

A refusal is a ``ValueError`` or ``TypeError`` (``REFUSALS``; from a program, an error of kind
"refused"). Anything else TARGET raises on a refused input (a ``ZeroDivisionError``, a program's
"failed", which the protocol calls "never a refusal") is its error, exit 3; a program's answer that
cannot be read (a release of 400 digits) is a ``protocol.TargetError``, exit 3, never a refusal.

"Clips" needs a test that can tell clipped from unclipped data (``_clips``): the release on the case must
match the reference's on the projected data, and so must the release on the case with its out-of-domain
entries moved ``FURTHER`` = 100 times as far from the domain, and at least 100 times the data's own scale
(1 + the largest projected entry) from it (projected, both are the same data; read as they are, they
are far apart, so a release that reads them as they are moves between the two). Where that second
dataset cannot be built (a projection that is not a move of the values or labels), or TARGET refuses
it, the policy is "undetermined", treated as trust. The out-of-domain audit pairs (``check_audits.py``)
are then only those that leave the domain in fields found clipped (``out_of_domain_fields``), unless
``--inputs clip`` is declared.

Skipped when TARGET has no mechanism stage, or the reference refuses no input the spec tries, and
said so.
"""

from __future__ import annotations

import math

import numpy as np

from userdp.audits.engine.usercode import UserCodeError
from userdp.audits.validation import Case, Refusal, ValidationSpec
from userdp.audits.validation.context import Context
from userdp.audits.validation.findings import Finding
from userdp.audits.validation.protocol import ProgramFailed
from userdp.audits.validation.releases import flat_releases, reference_rows, release_rows, rows_one
from userdp.audits.validation.report import jsonable, short
from userdp.audits.validation.settings import ALPHAS, CLIP_SAMPLES, Z_KURT
from userdp.audits.validation.stats import excess_kurtosis, ks_distance, ks_threshold, z_critical
from userdp.audits.validation.target import BATCHED, PythonTarget

__all__ = ["NAME", "NEEDS", "REFUSALS", "applies", "check", "out_of_domain_fields", "FURTHER"]

FURTHER = 100.0  # the power test moves the out-of-domain entries this many times further from the domain
# (and at least this many times the data's own scale, 1 + max |projected entry|)

NAME = "inputs"  # the check's name in the report
NEEDS = ("differential",)  # the checks that must run first (the clip test draws as many as a case)


def applies(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> str | None:
    """None if the check applies, else why it is skipped."""
    if target.mechanism is None:
        return "TARGET has no mechanism stage (the release)"
    if not list(spec.refusals()):
        return "the reference refuses no input this spec tries"
    return None


def check(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> None:
    """Call TARGET on each input the reference refuses and grade what it does under the input policy."""
    t = target
    refusals = list(spec.refusals())
    data = [r for r in refusals if r.kind == "data"]
    zc = z_critical(ALPHAS["clip"], max(1, len(data)) * 8)  # two comparisons per data case (``_clips``)
    for j, r in enumerate(refusals):
        case = r.case
        rng = np.random.default_rng([ctx.seed, 3, j])
        try:
            out = t.release(case.dataset, rng, 4, case.params, f"case {case.description!r}")
        except UserCodeError as exc:
            _check_refusal(t, case, exc)
            ctx.inputs.append(
                {
                    "case": case.description,
                    "kind": r.kind,
                    "behaviour": "refuses",
                    "raised": str(exc.__cause__ or exc)[:200],
                }
            )
            ctx.add(
                Finding("inputs", "pass", f"refuses {case.description}", {"raised": str(exc.__cause__ or exc)[:200]})
            )
            continue
        try:
            rows = (
                flat_releases(out, 4, spec.flatten, "TARGET")
                if t.shape == BATCHED
                else rows_one(out, spec.flatten, "TARGET")
            )
        except UserCodeError:  # a release of another shape: still a release on an excluded input,
            rows = None  # graded below by the input's kind (it is not read as numbers)
        ctx.inputs.append(_graded(ctx, r, j, out, rows, zc))
    declared = f"declared --inputs {ctx.policy}" if ctx.policy else "inferred per case"
    ctx.checks["inputs"] = f"ran: {len(refusals)} input(s) the reference refuses ({declared}): " + ", ".join(
        f"{e['behaviour']}" for e in ctx.inputs
    )


REFUSALS = (ValueError, TypeError)  # what a refusal is: docs/validate.md, "The inputs every reference function refuses"


def _check_refusal(target: PythonTarget, case: Case, exc: UserCodeError) -> None:
    """A refusal is a ``ValueError`` or ``TypeError`` (over the protocol: an error of kind "refused",
    ``ProgramRefused``); anything else TARGET raised on a refused input (a ``ZeroDivisionError``,
    a program's "failed", ``ProgramFailed``) is its error, not a refusal: ``UserCodeError``, exit 3."""
    cause = exc.__cause__
    if cause is None or isinstance(cause, REFUSALS):
        return
    what = (
        'an error of kind "failed" (the protocol\'s "never a refusal")'
        if isinstance(cause, ProgramFailed)
        else f"{type(cause).__name__}"
    )
    raise UserCodeError(
        f"TARGET {target.who} answered {what} on case {case.description!r}, which is not a refusal: a refusal "
        "is a ValueError or TypeError raised on the public inputs (docs/validate.md), or from a program an "
        f'error of kind "refused" (docs/protocol.md). It said: {str(cause)[:300]}'
    ) from cause


def _graded(ctx: Context, r: Refusal, j: int, out, rows, zc: float) -> dict:
    """Grade TARGET's release ``out`` (``rows``: read as numbers, or None) on refused input ``r``: add the
    finding, if any, and return the entry of the report's inputs table."""
    spec, case = ctx.spec, r.case
    finite = rows is not None and bool(np.all(np.isfinite(rows)))
    entry = {"case": case.description, "kind": r.kind, "requires": r.requires, "output": short(out)}
    if rows is not None and not finite:
        ctx.add(
            Finding(
                "inputs",
                "invariant violation",
                f"releases non-finite values on an input the paper excludes: {case.description}",
                {"params": jsonable(case.params), **entry},
            )
        )
        entry["behaviour"] = "releases non-finite values"
    elif r.kind == "budget":
        ctx.add(
            Finding(
                "inputs",
                "invariant violation",
                f"releases on an input the paper excludes: {case.description}",
                {
                    "params": jsonable(case.params),
                    **entry,
                    "meaning": "a release at this budget is never private, whatever the input policy",
                },
            )
        )
        entry["behaviour"] = "releases"
    elif ctx.policy == "refuse":
        ctx.add(
            Finding(
                "inputs",
                "invariant violation",
                f"releases on an input the paper excludes: {case.description}",
                {
                    "params": jsonable(case.params),
                    **entry,
                    "meaning": "--inputs refuse: every input the reference refuses must be refused",
                },
            )
        )
        entry["behaviour"] = "releases"
    elif r.kind == "data" and spec.project is not None and ctx.policy in (None, "clip"):
        ok, ev = _clips(ctx, case, j, zc)
        entry.update(ev)
        if ok is None:
            entry["behaviour"] = "undetermined (treated as trust)"
        elif ok:
            entry["behaviour"] = "clips"
            ctx.clips = True
            ctx.clipped_fields |= _fields(spec, case.dataset, case.params)
            ctx.add(Finding("inputs", "pass", f"clips {case.description}", {"clip_test": ev.get("clip_test")}))
        elif ctx.policy == "clip":
            ctx.add(
                Finding(
                    "inputs",
                    "invariant violation",
                    f"--inputs clip, but the release on {case.description} is not the "
                    "reference's on the projected data",
                    {**entry},
                )
            )
            entry["behaviour"] = "releases, not clipped"
        else:
            entry["behaviour"] = "not enforced"
    else:
        entry["behaviour"] = "not enforced"
    return entry


def _fields(spec, D, params) -> set:
    """The dataset fields (values, labels) in which D leaves the domain: those the projection changes."""
    P = spec.project(D, params)
    return {
        f
        for f in ("values", "labels")
        if getattr(D, f, None) is not None and not np.array_equal(np.asarray(getattr(D, f)), np.asarray(getattr(P, f)))
    }


def out_of_domain_fields(spec, design) -> set:
    """The fields in which the pairs of an out-of-domain audit design leave the domain."""
    return set().union(*(_fields(spec, D, design.params) for p in design.pairs for D in (p.first, p.second)))


def _further(spec, D, params):
    """D with its out-of-domain entries FURTHER times as far from the domain, and at least FURTHER x (1 + the
    largest projected entry) from it (the same projected data); None where the projection is not a move of
    the values or labels."""
    P = spec.project(D, params)
    try:
        changes = {}
        for f in _fields(spec, D, params):
            p = np.asarray(getattr(P, f), dtype=float)
            e = np.asarray(getattr(D, f), dtype=float) - p
            k = FURTHER * max(1.0, (1.0 + float(np.max(np.abs(p)))) / float(np.max(np.abs(e))))
            changes[f] = p + k * e
        if not changes:
            return None
        F = D.with_fields(**changes)
        same = spec.project(F, params)
        ok = all(np.allclose(np.asarray(getattr(same, f)), np.asarray(getattr(P, f))) for f in changes)
    except (TypeError, ValueError):
        return None
    return F if ok else None


def _clips(ctx: Context, case: Case, j: int, zc: float) -> tuple[bool | None, dict]:
    """Does TARGET release on ``case``, and on ``case`` moved FURTHER out, what the reference releases on the
    projected data? None (undetermined) where the second dataset cannot be built or TARGET refuses it."""
    spec = ctx.spec
    n = min([CLIP_SAMPLES] + [d.n for d in ctx.draws])
    projected = spec.project(case.dataset, case.params)
    ss = np.random.SeedSequence([ctx.seed, 4, j]).spawn(3)
    Xr = reference_rows(spec, projected, np.random.default_rng(ss[1]), n, case.params)
    ok, ev = _matches(ctx, case.dataset, case, Xr, np.random.default_rng(ss[0]), zc, "")
    if not ok:
        return False, ev
    far = _further(spec, case.dataset, case.params)
    if far is None:
        return None, {"clip_test": ev["clip_test"] + "; undetermined: no dataset further out to tell clipped from not"}
    try:
        ok2, ev2 = _matches(ctx, far, case, Xr, np.random.default_rng(ss[2]), zc, f" {FURTHER:g}x further out")
    except UserCodeError as exc:
        return None, {"clip_test": ev["clip_test"] + f"; undetermined: TARGET refused the data further out ({exc})"}
    if not ok2:
        return False, ev2
    return True, {
        "clip_test": ev["clip_test"] + "; " + ev2["clip_test"] + " (its power: a release that read the out-of-domain "
        f"entries as they are would move between the two, >= {FURTHER:g}x the excess and the data's scale apart)"
    }


def _matches(ctx: Context, D, case: Case, Xr, rng, zc: float, what: str) -> tuple[bool, dict]:
    """TARGET's releases on D against the reference's on the projected case, ``Xr`` (KS and mean tests)."""
    spec, t = ctx.spec, ctx.target
    n = Xr.shape[0]
    Xt = release_rows(
        spec, t, D, rng, n, case.params, f"case {case.description!r}{what}", one_per_call=not ctx.independent
    )
    if Xt.shape[1] != Xr.shape[1] or not np.all(np.isfinite(Xt)):
        return False, {"clip_test": "release shape or values unlike the reference's"}
    worst = 0.0  # two comparisons per case (as it is, and further out): half the level each
    crit = ks_threshold(n, ALPHAS["clip"] / (4 * max(1, Xt.shape[1]) * max(1, len(list(spec.refusals())))))
    for k in range(Xt.shape[1]):
        dist, _ = ks_distance(Xt[:, k], Xr[:, k])
        worst = max(worst, dist)
        diff = float(np.mean(Xt[:, k]) - np.mean(Xr[:, k]))
        se = math.sqrt(2.0 * float(np.var(Xr[:, k])) / n)  # the reference's spread (as the mean test)
        z_ok = n >= Z_KURT * max(1.0, excess_kurtosis(Xr[:, k]))
        if dist > crit or (z_ok and se > 0 and abs(diff) / se > zc) or (se == 0 and diff != 0):
            return False, {
                "clip_test": f"differs{what} from the reference on the projected data (coordinate {k}: "
                f"KS {dist:.4f}, critical {crit:.4f})"
            }
    return True, {
        "clip_test": f"matches{what} the reference on the projected data (largest KS {worst:.4f}, critical {crit:.4f})"
    }
