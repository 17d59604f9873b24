"""validate's check e, **audit**: ``harness.audit`` of TARGET's release on the spec's designs, on one
pair aimed by TARGET's behaviour (the under-noised case's pair, or else the case whose spread is
smallest against the reference's, among the cases with a sensitivity-attaining pair), on the pair a
white-box search of TARGET's OWN ``statistic`` and ``noise_scale`` stages finds worst (where the spec
has search spaces and TARGET those stages: ``_whitebox_design``), on the pairs the pair search of
TARGET's release finds worst (where the spec declares a neighbour ``domain`` and the search is on:
``pair_search.py``; the search draws on its own seeds, so choosing the pair spends none of the
audit's confidence), and, for a clipping target, on the spec's out-of-domain designs. Its share of
the false-alarm budget, ``ALPHAS["audit"]``, is split evenly over the planned audits (designs, the
aimed slot, the white-box slot where the spec has one, the searched slot where the spec has a domain
and the search is on, and the out-of-domain designs). Outputs per side: ``audit_samples`` if given, else as many as
``BUDGET["audit"]`` seconds of TARGET's time allow (``_audit_samples_for``).

Skipped only when TARGET has no mechanism stage (the release), and said so.
"""

from __future__ import annotations

import time

import numpy as np

from userdp.reference.neighbours import NeighbourPair

from userdp.audits.engine.ceiling import NoiseModel
from userdp.audits.engine.harness import audit
from userdp.audits.engine.sampling import OUTCOMES, MechanismError
from userdp.audits.engine.usercode import UsageError, UserCodeError
from userdp.audits.engine.whitebox import search
from userdp.audits.validation import AuditDesign, Case, ValidationSpec
from userdp.audits.validation.check_inputs import out_of_domain_fields
from userdp.audits.validation.context import Context
from userdp.audits.validation.findings import Finding
from userdp.audits.validation.pair_search import atom_indicator, search_pairs, searched_design
from userdp.audits.validation.releases import (
    call_target,
    finite_for_audit,
    first_release,
    flat_releases,
    nested_flat,
    rows_one,
    stack_releases,
    release_rows,
    stage_vector,
)
from userdp.audits.validation.report import claim_text, scale_parameter
from userdp.audits.validation.settings import (
    ALPHAS,
    DEFAULT_AUDIT_SAMPLES,
    FLOOR_SAMPLES,
    MIN_AUDIT_SAMPLES,
    MIN_SAMPLES,
    PROBE,
    QUICK,
)
from userdp.audits.validation.stats import quantised
from userdp.audits.validation.target import BATCHED, ONE, PythonTarget

__all__ = ["NAME", "NEEDS", "applies", "check"]

NAME = "audit"  # the check's name in the report
NEEDS = ("differential", "inputs")  # the checks that must run first (the aimed pair, whether TARGET clips)


def applies(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> str | None:
    """None if the check applies, else why it is skipped."""
    if target.mechanism is None:
        return "TARGET has no mechanism stage (the release)"
    return None


def check(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> None:
    """Audit TARGET's release on the planned designs; one finding per audit, and the run's notes."""
    t = target
    designs = [("design", d) for d in spec.designs()]
    clip = list(spec.clip_designs())
    searching = ctx.search and spec.domain is not None
    slots = len(designs) + 1 + len(clip) + (spec.spaces is not None) + searching
    aimed = _aimed_design(ctx)
    if aimed is not None:
        designs.append(("aimed", aimed))
    wb = _whitebox_design(ctx)
    if wb is not None:
        designs.append(("white-box", wb))
    posts = {}
    if searching:
        res = search_pairs(ctx, ctx.budget["audit"])
        if res is not None:
            ctx.search_summary = res.summary()
            ctx.say(f"pair search: {ctx.search_summary} ({res.seconds:.2g} s)")
            designs.append(("searched", searched_design(ctx, res)))
            if res.atom is not None:
                posts[len(designs) - 1] = atom_indicator(*res.atom, spec.flatten)
    if ctx.policy == "clip":
        designs += [("out of domain", d) for d in clip]
    elif ctx.clips:  # inferred: only the designs that leave the domain in fields found clipped
        designs += [("out of domain", d) for d in clip if out_of_domain_fields(spec, d) <= ctx.clipped_fields]
    confidence = 1.0 - ALPHAS["audit"] / slots
    used = []
    for j, (kind, d) in enumerate(designs):
        n = _audit_samples_for(ctx, d, ctx.budget["audit"] / len(designs), len(designs))
        used.append(n)
        r = _audit_one(ctx, d, n, confidence, j, posts.get(j))
        if r.reproducible is False:
            ctx.reproducible = False
        elif r.reproducible is True and ctx.reproducible is None:
            ctx.reproducible = True
        ctx.add(_audit_finding(d, r, n, confidence))
        ctx.say(f"audit {j + 1} of {len(designs)}: {r.verdict} (eps_lb {r.epsilon_lower_bound:.3f})")
    how = "one release per call" if (t.shape == ONE or not ctx.independent) else "batched"
    kinds = ", ".join(
        f"{sum(k == x for k, _ in designs)} {x}"
        for x in ("design", "aimed", "white-box", "searched", "out of domain")
        if any(k == x for k, _ in designs)
    )
    ctx.audit_samples = used[0] if min(used) == max(used) else f"{min(used)}-{max(used)}"
    ctx.checks["audit"] = (
        f"ran: {len(designs)} audit(s) ({kinds}), {ctx.audit_samples} samples per side, "
        f"confidence "
        f"{confidence:.7f} each ({slots} planned), {how}"
        + (f"; pair search: {ctx.search_summary}" if ctx.search_summary else "")
    )
    _notes(ctx)


def _audit_finding(d: AuditDesign, r, n: int, confidence: float) -> Finding:
    """The finding of one audit: its bound, the claim, the witness; a violation if the audit found one."""
    bad = r.verdict == "violation"
    w = r.witness.to_dict()
    ev = {
        "design": d.description,
        "epsilon_lower_bound": r.epsilon_lower_bound,
        "claim": claim_text(d.claim),
        "confidence": confidence,
        "samples_per_side": n,
        "witness": w,
    }
    if r.gdp is not None:
        ev["mu_lower_bound"] = r.gdp.mu_lower_bound
    return Finding(
        "audit",
        "privacy violation" if bad else "pass",
        f"{d.description}: eps_lb {r.epsilon_lower_bound:.3f}"
        + (
            f" exceeds the claim's {w['claim_epsilon']:g} on its witness pair"
            if bad
            else f" within the claim's {w['claim_epsilon']:g}"
        ),
        ev,
    )


def _notes(ctx: Context) -> None:
    """The notes on a slow target and on one that ignores the rng."""
    if ctx.slow:
        ctx.notes.append(
            f"TARGET is slow ({1e3 * ctx.cost:.3g} ms of CPU per release): to stay near "
            f"{ctx.max_seconds:g} s this run drew as few as {FLOOR_SAMPLES}-{MIN_SAMPLES} releases per "
            "case or pair, so it resolves only large effects (see 'resolves' above); "
            "--samples and --audit-samples make it longer and stronger"
        )
    if ctx.reproducible is False:
        ctx.notes.append(
            "TARGET ignores the rng: two calls with generators from one seed gave different "
            "releases, so it draws from a generator of its own and --seed does not reproduce this "
            "run (the checks stay valid: its releases are still independent draws)"
        )


def _audit_samples_for(ctx: Context, d: AuditDesign, share: float, n_designs: int = 1) -> int:
    """Outputs per side for design ``d``: given, or as many as ``share`` seconds of TARGET's time
    allow (one release per call: timed on the design's first dataset), within
    [MIN_AUDIT_SAMPLES, the default]."""
    if ctx.audit_samples_given is not None:
        return ctx.audit_samples_given
    default = QUICK["audit_samples"] if ctx.quick else DEFAULT_AUDIT_SAMPLES
    sides = 2 * min(3, len(d.pairs)) + (0.2 * len(d.pairs) if len(d.pairs) > 3 else 0)
    if ctx.target.shape == BATCHED and ctx.independent:
        cost = ctx.cost or 0.0
    else:
        case = Case(d.pairs[0].first, d.params, "timing")
        p = PROBE[ONE]
        t0 = time.process_time()
        ctx.rows(case, np.random.default_rng([ctx.seed, 8]), p, f"audit {d.description!r}")
        cost = (time.process_time() - t0) / p
        ctx.cost = max(ctx.cost or 0.0, cost)
    n = int(share / (cost * sides)) if cost > 0 else default
    floor = MIN_AUDIT_SAMPLES
    if cost * MIN_AUDIT_SAMPLES * sides * n_designs > 0.35 * ctx.max_seconds:
        floor = quantised(int(0.35 * ctx.max_seconds / (cost * sides * n_designs)), FLOOR_SAMPLES, MIN_AUDIT_SAMPLES)
        ctx.slow = True
    return quantised(n, floor, default)


def _aimed_design(ctx: Context) -> AuditDesign | None:
    """The aimed audit: the under-noised case's pair, or else the case whose spread is smallest against the
    reference's, among the cases with a sensitivity-attaining pair."""
    if ctx.aim is None:
        best = None
        for d in ctx.draws:
            if d.case.pair is None or not d.scale:
                continue
            r = min(r for _, r, _ in d.scale)
            if best is None or r < best[0]:
                best = (r, d.case)
        if best is None:
            return None
        ctx.aim = (best[1], f"the case whose spread is smallest against the reference's (ratio {best[0]:.4g})")
    case, why = ctx.aim
    claim = ctx.claim(case)
    if claim is None:
        return None
    d = next((d for d in ctx.draws if d.case is case), None)
    out = "continuous" if d is not None and d.Xr.shape[1] == 1 and ctx.spec.audit_flatten is None else "vector"
    return AuditDesign([case.pair], case.params, claim, f"aimed: {why}: {case.pair.description}", output=out)


def _whitebox_design(ctx: Context) -> AuditDesign | None:
    """A pair aimed by the white-box search (``audits/engine/whitebox.py``) of TARGET's OWN ``statistic`` and
    ``noise_scale`` stages over the spec's spaces: the pair where TARGET's stages say its statistic
    moves most in units of its own noise. Its realised ratio (above 1: TARGET's own stages admit a
    loss above the claim) is in the title; the pair is audited on TARGET's releases either way."""
    spec, t = ctx.spec, ctx.target
    if spec.spaces is None or spec.noise is None or t.adapter.statistic is None or t.adapter.noise_scale is None:
        return None
    p = dict(spec.whitebox_params or next(iter(spec.designs())).params)

    def stage(name):
        kw = {k: p[k] for k in spec.stage_params.get(name, ()) if k in p}
        f = getattr(t.adapter, name)
        if name in spec.takes_dataset:
            return lambda D: call_target(f"TARGET {t.name}'s {name} stage (white-box search)", f, D, **kw)
        return lambda D: call_target(f"TARGET {t.name}'s {name} stage (white-box search)", f, **kw)

    stat, scale = stage("statistic"), stage("noise_scale")

    def flat_stat(D):
        return stage_vector(spec, stat(D))

    claim = ctx.claim(Case(next(iter(spec.designs())).pairs[0].first, p, "white-box"))
    par = scale_parameter(claim, None)
    try:
        res = search(
            NoiseModel(spec.noise, flat_stat, lambda D: float(nested_flat(scale(D)).max())),
            spec.spaces(p),
            par[1] if par else 1.0,
            random_starts=2,
            seed=ctx.seed % 2**32,
            maxiter=100,
        )
    except (ValueError, TypeError) as exc:  # TARGET's stages return what the search cannot read
        ctx.notes.append(f"white-box search of TARGET's stages skipped: {exc}")
        return None
    first, second = res.pair
    pair = NeighbourPair(first, second, spec.relation.split(" ")[0], 0, f"white-box: {res.description}")
    return AuditDesign(
        [pair],
        p,
        claim,
        f"white-box aimed (TARGET's stages put this pair at {res.ratio:.4g} of its claim)",
        output="continuous" if np.ndim(flat_stat(first)) == 0 or np.size(flat_stat(first)) == 1 else "vector",
    )


def _audit_one(ctx: Context, d: AuditDesign, n: int, confidence: float, j: int, post=None):
    """``harness.audit`` of TARGET's release on design ``d``, ``n`` outputs per side (the j-th audit's seed);
    ``post``: None, or a fixed post-processing of the release rows (the pair search's atom indicator)."""
    spec, t = ctx.spec, ctx.target
    params = dict(d.params)
    flat = spec.audit_flatten
    one = t.shape == ONE or not ctx.independent

    def m(dataset, rng, size):
        if post is not None:
            rows = release_rows(spec, t, dataset, rng, size, params, f"audit {d.description!r}", not ctx.independent)
            return post(rows)
        if not one:
            out = t.release(dataset, rng, size, params, f"audit {d.description!r}")
            return finite_for_audit(out if flat is None else flat_releases(out, size, flat, f"TARGET {t.who}"))
        if t.shape == BATCHED:
            outs = [first_release(t.release(dataset, rng, 1, params, f"audit {d.description!r}")) for _ in range(size)]
        else:
            outs = t.release(dataset, rng, size, params, f"audit {d.description!r}")
        if flat is not None:
            return finite_for_audit(rows_one(outs, flat, f"TARGET {t.who}"))
        return finite_for_audit(stack_releases(outs, f"TARGET {t.who}"))

    setattr(m, OUTCOMES, False)  # the behaviour check decided refusals and warnings first, by replay
    try:
        return audit(
            m,
            d.pairs,
            d.claim,
            samples=n,
            confidence=confidence,
            seed=np.random.SeedSequence([ctx.seed, 5, j]),
            output=d.output,
            workers=1,
        )
    except MechanismError as exc:
        cause = exc.__cause__
        if isinstance(cause, (UserCodeError, UsageError)):
            raise cause from None
        raise UserCodeError(
            f"TARGET {t.who} failed in the audit of {d.description!r}: "
            f"{type(cause).__name__ if cause else 'error'}: {cause or exc}"
        ) from exc
