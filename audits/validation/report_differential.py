"""The findings of validate's differential check (``audits/validation/check_differential.py``), written
from what its tests found (``Tests``): one finding per test (finite, share of releases, mean, scale,
distribution, structure, stages agree), each the failing case with the fewest records (printed as a
runnable snippet) or, where nothing fails, the largest statistic; the under-noised privacy finding
with its implied bound; and the check's line in the report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from userdp.audits.validation.context import Context
from userdp.audits.validation.findings import Finding
from userdp.audits.validation.report import case_snippet, scale_parameter
from userdp.audits.validation.settings import ALPHAS, Z_KURT
from userdp.audits.validation.stats import ratio_interval, z_critical

__all__ = ["Tests", "report_differential"]


@dataclass
class Tests:
    """What the differential's tests found, for the report: the failures of each test, the largest
    statistic of each (its case and coordinate), the KS tests and the pair covers of the cases."""

    coords: int  # coordinates over all cases
    z_mean: float  # critical values (Bonferroni over ``coords``)
    z_scale: float
    skipped: dict = field(default_factory=lambda: {"mean": 0, "scale": 0})  # z tests skipped (Z_KURT)
    fails: dict = field(
        default_factory=lambda: {
            "mean": [],
            "scale": [],
            "dist": [],
            "structure": [],
            "finite": [],
            "own": [],
            "share": [],
        }
    )
    mean_worst: tuple | None = None  # (z, case index, coordinate, difference, se)
    scale_worst: tuple | None = None  # (z, case index, coordinate, ratio, log se)
    own_worst: tuple | None = None  # (z, case index, coordinate, difference, se)
    ks_tests: list = field(default_factory=list)  # (p, case index, what, distance, at)
    covers: dict = field(default_factory=dict)  # case index -> _pair_cover (under-noised candidates)


def report_differential(ctx: Context, T: Tests) -> None:
    """Add the differential's findings to ``ctx`` and its line to ``ctx.checks``."""
    _report_finite_and_share(ctx, T)
    _report_mean(ctx, T)
    if T.scale_worst is not None:
        _report_scale(ctx, T)
    _report_distribution(ctx, T)
    _report_structure_and_stages(ctx, T)
    _summary(ctx, T)


def _smallest(D: list, cis) -> int:
    """The failing case with the fewest records."""
    return min(dict.fromkeys(cis), key=lambda ci: (D[ci].case.dataset.n, ci))


def _report_finite_and_share(ctx: Context, T: Tests) -> None:
    """Non-finite releases (an invariant violation) and the share of releases where the spec declines."""
    spec, D, F = ctx.spec, ctx.draws, ctx.add
    fails = T.fails
    for ci in fails["finite"][:1]:
        d = D[ci]
        F(
            Finding(
                "differential",
                "invariant violation",
                f"releases non-finite values (inf or NaN): {d.non_finite or 'NaN or inf'}",
                {
                    "case": d.case.description,
                    "bad_releases": d.bad_rows,
                    "of": d.n,
                    "meaning": "a release must be a finite number in every coordinate"
                    + ("" if spec.declines else "; this algorithm always releases"),
                    **case_snippet(ctx, d.case),
                },
            )
        )
    if fails["share"]:
        ci = fails["share"][0]
        pt, pr = D[ci].released
        zc = z_critical(ALPHAS["release_share"], len(D))
        n = D[ci].n
        p = (pt + pr) / 2
        z = abs(pt - pr) / math.sqrt(max(p * (1 - p), 1e-300) * 2 / n)
        F(
            Finding(
                "differential",
                "deviation from reference" if z > zc else "pass",
                "share of releases " + ("differs from" if z > zc else "matches") + " the reference's",
                {
                    "z": round(z, 3),
                    "critical_z": round(zc, 3),
                    "case": D[ci].case.description,
                    "released_target": pt,
                    "released_reference": pr,
                },
            )
        )


def _report_mean(ctx: Context, T: Tests) -> None:
    """The mean test: its worst coordinate, or the failing one on the case with the fewest records."""
    D, F = ctx.draws, ctx.add
    fails = T.fails
    # mean
    if T.mean_worst is not None:
        z, ci, k, diff, se = T.mean_worst
        bad = bool(fails["mean"])
        if bad:
            ci = _smallest(D, [c for c, _ in fails["mean"]])
            k = next(kk for c, kk in fails["mean"] if c == ci)
            d = D[ci]
            t, r = d.Xt[:, k], d.Xr[:, k]
            sd_r = float(np.std(r, ddof=1))
            if d.exact:
                diff, se = float(np.mean(t)) - float(d.centre[k]), sd_r / math.sqrt(t.size)
            else:
                diff, se = float(np.mean(t)) - float(np.mean(r)), sd_r * math.sqrt(1 / t.size + 1 / r.size)
            z = abs(diff) / se if se > 0 else math.inf
        F(
            Finding(
                "differential",
                "deviation from reference" if bad else "pass",
                "mean release " + ("differs from" if bad else "matches") + " the reference's statistic",
                {
                    "largest_z" if not bad else "z": round(z, 3),
                    "critical_z": round(T.z_mean, 3),
                    "case": D[ci].case.description,
                    "coordinate": k,
                    "difference": diff,
                    "confidence_interval": [diff - T.z_mean * se, diff + T.z_mean * se],
                    "meaning": (
                        "target mean minus the reference's noise-free statistic"
                        if D[ci].exact
                        else "target mean minus the reference releases' mean"
                    )
                    + f"; the interval holds jointly for all {T.coords} coordinates with probability "
                    f">= 1 - {ALPHAS['mean']:g}",
                    **(case_snippet(ctx, D[ci].case) if bad else {}),
                },
            )
        )


def _report_distribution(ctx: Context, T: Tests) -> None:
    """The KS tests: the failing one on the case with the fewest records, or the smallest p-value."""
    D, F = ctx.draws, ctx.add
    fails = T.fails
    # distribution
    if T.ks_tests:
        if fails["dist"]:
            p, ci, what, dist, at = min(fails["dist"], key=lambda t: (D[t[1]].case.dataset.n, t[0]))
        else:
            p, ci, what, dist, at = min(T.ks_tests, key=lambda t: t[0])
        bad = bool(fails["dist"])
        F(
            Finding(
                "differential",
                "deviation from reference" if bad else "pass",
                "release distribution " + ("differs from" if bad else "matches") + " the reference's",
                {
                    "case": D[ci].case.description,
                    "in": what,
                    "ks_distance": round(dist, 5),
                    "at": at,
                    "p_value": p,
                    "tests": len(T.ks_tests),
                    "meaning": "two-sample Kolmogorov-Smirnov distance; distribution-free p-value (DKW); "
                    f"Holm's procedure over all {len(T.ks_tests)} tests at {ALPHAS['distribution']:g}",
                    **(case_snippet(ctx, D[ci].case) if bad else {}),
                },
            )
        )


def _report_structure_and_stages(ctx: Context, T: Tests) -> None:
    """Coordinates that should be equal and are not; the releases' mean against TARGET's own statistic."""
    D, F = ctx.draws, ctx.add
    fails = T.fails
    if fails["structure"]:
        ci, i, j, differ = fails["structure"][0]
        F(
            Finding(
                "differential",
                "deviation from reference",
                "release structure differs from the reference's",
                {
                    "case": D[ci].case.description,
                    "coordinates": [i, j],
                    "differing_releases": differ,
                    "meaning": f"coordinates {i} and {j} are equal in every reference release (e.g. the two "
                    "triangles of a symmetric matrix) but not in TARGET's: the whole release is "
                    "compared, not one triangle",
                },
            )
        )
    if T.own_worst is not None:
        z, ci, k, dz, se = T.own_worst
        zc = z_critical(ALPHAS["stages_agree"], T.coords)
        bad = z > zc
        F(
            Finding(
                "stages",
                "invariant violation" if bad else "pass",
                "TARGET's stages "
                + (
                    "disagree: its mechanism does not add noise to its statistic"
                    if bad
                    else "agree (mechanism centred on statistic)"
                ),
                {
                    "largest_z": round(z, 3),
                    "critical_z": round(zc, 3),
                    "case": D[ci].case.description,
                    "coordinate": k,
                    "mean_release_minus_own_statistic": dz,
                    "confidence_interval": [dz - zc * se, dz + zc * se],
                },
            )
        )


def _summary(ctx: Context, T: Tests) -> None:
    """The differential's line in the report's "checks"."""
    D = ctx.draws
    how = "" if ctx.independent else " (one release per call: TARGET is not independent)"
    fixed = sum(d.case.origin == "fixed" for d in D)
    res = _resolution(ctx, T.z_scale)
    ctx.checks["differential"] = (
        f"ran: {len(D)} cases ({fixed} fixed, {len(D) - fixed} generated for seed {ctx.seed}) x {ctx.samples} "
        f"releases (reference: {D[0].Xr.shape[0] if D else 0}){how}; mean z (critical {T.z_mean:.2f}), scale "
        f"(critical {T.z_scale:.2f}), KS over {len(T.ks_tests)} series (Holm) on {T.coords} coordinates"
        + (f"; resolves a change of the noise scale by {res:.1%}" if res else "")
        + (
            f"; the z tests skipped {T.skipped['mean']} mean and {T.skipped['scale']} scale coordinate(s) with too few "
            f"releases for the normal approximation (n < {Z_KURT} x excess kurtosis)"
            if T.skipped["mean"] or T.skipped["scale"]
            else ""
        )
    )


def _report_scale(ctx: Context, T: Tests) -> None:
    """The scale test: a pass, an under-noised privacy finding (``_report_under_noised``), a deviation."""
    spec, D, fails, worst, z_scale = ctx.spec, ctx.draws, T.fails["scale"], T.scale_worst, T.z_scale
    bad = bool(fails)
    if not bad:
        zs, ci, k, ratio, lse = worst
        ctx.add(
            Finding(
                "differential",
                "pass",
                "noise scale matches the reference's",
                {
                    "largest_z": round(zs, 3),
                    "critical_z": round(z_scale, 3),
                    "case": D[ci].case.description,
                    "coordinate": k,
                    "spread_ratio": ratio,
                    "confidence_interval": ratio_interval(ratio, lse, z_scale),
                },
            )
        )
        return
    # under-noised: on a case with a pair whose spread is significantly below the reference's, the
    # target's own move on the pair, in its own noise units, against the reference's (``_pair_cover``,
    # computed by the test: ``T.covers``)
    privacy, covers = [], T.covers
    for ci in covers:
        if covers[ci]["rho_lower"] * D[ci].case.pair_share > 1.0:
            privacy += [f for f in fails if f[0] == ci]
    if privacy:
        _report_under_noised(ctx, T, privacy)
    rest = [f for f in fails if f not in privacy and not (privacy and f[2] < 1)]
    if rest:
        ci = _smallest(D, [f[0] for f in rest])
        ci, k, r, l = next(f for f in rest if f[0] == ci)
        lo, hi = ratio_interval(r, l, z_scale)
        less = r < 1
        why = (
            "less spread than the reference"
            + (
                ""
                if spec.noise is None
                else " (on no case where a pair's move would then exceed what the noise covers: graded a deviation)"
            )
            if less
            else "more noise than the reference"
        )
        ctx.add(
            Finding(
                "differential",
                "deviation from reference",
                f"noise scale differs from the reference's: {why}",
                {
                    "case": D[ci].case.description,
                    "coordinate": k,
                    "spread_ratio": r,
                    "confidence_interval": [lo, hi],
                    "critical_z": round(z_scale, 3),
                    "meaning": "mean absolute deviation about the median, TARGET over the "
                    "reference; the interval holds jointly for every case and "
                    f"coordinate with probability >= 1 - {ALPHAS['scale']:g}",
                    **case_snippet(ctx, D[ci].case),
                },
            )
        )


def _witnessed(cov: dict, claim, share: float) -> str | None:
    """The exact replay witness of an under-noised case (``check_differential._replay``), if any: "scale"
    (two noise scales, under a pure or personalized claim: an unbounded loss) or "move" (the exact move
    exceeds what the noise covers); None: the spread rule alone, no witness."""
    rp = cov.get("replay") or {}
    if not rp.get("exact"):
        return None
    if rp["scale_varies"]:
        return "scale" if claim is not None and claim.kind in ("pure", "personalized") else None
    return "move" if rp.get("rho_exact_lower", 0.0) * share > 1.0 else None


def _report_under_noised(ctx: Context, T: Tests, privacy: list) -> None:
    """The under-noised finding on the case whose pair shows the largest loss (a witnessed one first): a privacy
    violation with an exact replay witness, else a deviation, "a possible privacy violation", which the
    aimed audit then tests. Sets the aimed audit's pair."""
    spec, D, covers, z_scale = ctx.spec, ctx.draws, T.covers, T.z_scale
    seen = {f[0]: _witnessed(covers[f[0]], ctx.claim(D[f[0]].case), D[f[0]].case.pair_share) for f in privacy}
    ci = max(seen, key=lambda c: (seen[c] is not None, covers[c]["rho_lower"] * D[c].case.pair_share))
    k, r, l = next((f[1], f[2], f[3]) for f in privacy if f[0] == ci)
    lo, hi = ratio_interval(r, l, z_scale)
    case, cov, how = D[ci].case, covers[ci], seen[ci]
    share = case.pair_share
    rp = cov.get("replay") or {}
    lower = rp["rho_exact_lower"] if how == "move" else cov["rho_lower"]
    factor = lower * share
    claim = ctx.claim(case)
    par = scale_parameter(claim, getattr(case.pair, "unit", None)) if claim is not None else None
    ev = {
        "case": case.description,
        "coordinate": k,
        "spread_ratio": r,
        "confidence_interval": [lo, hi],
        "critical_z": round(z_scale, 3),
        "pair": getattr(case.pair, "description", "the case's sensitivity pair"),
        "pair_share": share,
        "move_in_noise_units_vs_reference": cov["rho"],
        "lower_bound": lower,
        "meaning": f"TARGET's noise is {r:.4g} x the reference's (at most {hi:.4g} with confidence 1 - "
        f"{ALPHAS['scale']:g}); on the pair, which moves the reference by {share:.4g} of its "
        f"calibrated sensitivity, TARGET moves {cov['rho']:.4g} x as many of its own noise units "
        f"as the reference (at least {lower:.4g}): its noise covers less than the relation allows",
    }
    if how is not None:
        ev["witness"] = (
            f"exact replay: {rp['rows']} releases a side from generators of one seed; the second side's are "
            "the first side's "
            + (
                f"scaled by {_short(rp['scale_ratio'])} (a noise scale read from the data)"
                if how == "scale"
                else f"shifted by exactly {_short(rp['move'])} (additive noise; its spread is the noise model's scale)"
            )
        )
    elif rp:
        why = (
            rp.get("why", "")
            if not rp.get("exact")
            else "the exact move is within what the noise covers, or two scales under a claim that is not pure"
        )
        ev["replay"] = f"no exact replay witness: {why}"
    if cov["scale_varies"] or how == "scale":
        ev["meaning"] = (
            f"TARGET's noise is {r:.4g} x the reference's (at most {hi:.4g}) on this case, and "
            "its spread differs between the two sides of the pair (mean absolute deviation "
            f"{cov['spread_on_the_pair'][0]:.4g} vs {cov['spread_on_the_pair'][1]:.4g}) where the "
            "reference's is the same: a noise scale read from the data; two scales of one noise "
            "family have an unbounded likelihood ratio in the tails"
        )
        ev["implied"] = "unbounded privacy loss on the pair (a data-dependent noise scale); audited below ('aimed')"
    elif par is not None and par[0] == "eps" and spec.noise == "gaussian":
        # an (eps, delta) claim of Gaussian noise: eps is not linear in the noise; its mu is
        ev["implied"] = (
            f"the release's Gaussian-DP mu on the pair is at least share x (TARGET's move / "
            f"TARGET's noise) / (the reference's) = {factor:.4g} x the reference's there, which "
            "its (eps, delta) claim is calibrated to; audited below ('aimed')"
        )
    elif par is not None:
        name, val = par
        ev["implied_loss_lower_bound"] = val * factor
        ev["implied"] = (
            f"{name} >= {name}_claimed x share x (TARGET's move / TARGET's noise) / (the "
            f"reference's) >= {val:g} x {share:.4g} x {lower:.4g} = {val * factor:.4g} "
            f"on the pair, for noise of the reference's family ({spec.noise}); audited below "
            "('aimed')"
        )
    if how is None and "implied" in ev:
        ev["implied"] = "if the noise is additive, of the reference's family: " + ev["implied"]
    ev.update(case_snippet(ctx, case))
    ctx.add(
        Finding(
            "differential",
            "privacy violation" if how is not None else "deviation from reference",
            "under-noised: less noise than the reference where its sensitivity is attained"
            + (
                " (exact replay witness)"
                if how is not None
                else ": a possible privacy violation (the spread rule alone; the aimed audit tests it)"
            ),
            ev,
        )
    )
    ctx.aim = (case, "the under-noised case's sensitivity pair")


def _short(xs: list) -> str:
    """A few numbers for the report."""
    return "[" + ", ".join(f"{x:.6g}" for x in xs[:6]) + (", ...]" if len(xs) > 6 else "]")


def _resolution(ctx: Context, z_scale) -> float | None:
    """The smallest relative change of the noise scale detected with probability >= 1/2: z_crit x the
    largest standard error of the log spread ratio over the cases."""
    lses = [l for d in ctx.draws for _, r, l in d.scale if l > 0]
    return math.expm1(z_scale * max(lses)) if lses else None
