"""validate's check c, **differential**: TARGET's releases against the reference's, on the spec's fixed
cases and the generated ones (over the parameter range, seeded by ``seed``), the whole release (every
coordinate the spec's flatten makes, both triangles of a matrix):

- *mean*: each coordinate's mean against the reference's exact statistic (one-sample z), or, for a
  nonlinear release without one, against the reference's releases (Welch z);
- *scale*: each coordinate's mean absolute deviation about its own median (each side's, so that a
  bias is not read as noise), target over reference, with a confidence interval on the ratio. Less
  spread than the reference on a case whose ``pair`` moves the reference's statistic by a share s of
  the sensitivity its noise is calibrated to is "under-noised" when TARGET's own move on that pair
  in its own noise units (drawn on the pair's other side), over the reference's, exceeds 1/s even at
  its lower confidence bound (``_pair_cover``): TARGET's loss on the pair is then at least the claim's
  parameter x s x that ratio for noise of the reference's family (unbounded when TARGET's noise scale
  differs between the two sides). The spread rule alone is a deviation, "a possible privacy
  violation" (a clamp or a projection of a private release shrinks the spread too); the coupled replay
  of the pair (``_replay``: both sides from generators of one seed, an exact shift or scaling where the
  noise is additive) is the witness that makes it a **privacy** finding. The bound is printed with the
  pair, which is then audited. More spread, or less that no pair here shows to matter, is a deviation;
- *distribution*: two-sample Kolmogorov-Smirnov distances on every coordinate, on the norm of the
  standardised release and on two fixed random projections of it, each with its distribution-free DKW
  p-value, Holm's procedure (the engine's ``holm``) over all of them and all cases;
- *structure*: coordinates equal in every reference release (the two triangles of a symmetric
  matrix) must be equal in every target release;
- *finite*: a release holding inf, or NaN (unless the algorithm may decline to release), is an
  invariant violation; where it may decline, the shares of no release are compared;
- *stages agree*: with a ``statistic`` stage, the releases' mean against it.

The failing case with the fewest records is printed as a runnable snippet. This module tests; the
findings are written by ``audits/validation/report_differential.py``.

Why each test is valid:
- KS: Dvoretzky-Kiefer-Wolfowitz with Massart's constant: P(sup |F_n - F| > a) <= 2 exp(-2 n a^2)
  for ANY F, so two empirical CDFs of one law (sizes n, m) differ by more than d with
  probability <= 4 exp(-2 d^2 n m / (sqrt n + sqrt m)^2) (the split of d that equalises the
  two terms). No asymptotics, no continuity (ties only make it conservative); Holm's procedure
  over these p-values holds under any dependence.
- mean and scale: z tests by the central limit theorem, their standard errors from the
  reference's releases (the same law under the null, from many releases, so that a target
  sample that misses a rare component of a mixture cannot shrink them). The one-term
  Edgeworth correction of a two-sided tail at z ~ 5 is, relative to the tail,
  (kappa_4 (z^3 - 3 z) / 24 + gamma^2 (z^5 - 10 z^3 + 15 z) / 72) / n ~ (5 kappa_4 + 32 gamma^2) / n
  (the odd terms cancel), kappa_4 the excess kurtosis of what is averaged (a release's
  coordinate for the mean, its absolute deviation for the scale) and gamma^2 <~ kappa_4 + 2.
  So the z tests run only on coordinates with n >= ``Z_KURT`` = 300 x max(1, kappa_4) (the
  reference's sample kurtosis), where the correction is under 15% of the stated level;
  elsewhere (a very slow target, or a release mixing in a rare component: a PTR fallback,
  a second histogram bin) they are skipped and said so, and the distribution-free KS test
  stands alone. Laplace noise (kappa_4 = 3, and 6 for its absolute deviation) needs n >= 1800.

Skipped only when TARGET has no mechanism stage (the release), and said so.
"""

from __future__ import annotations

import math
import time

import numpy as np

from userdp.audits.engine.harness import holm
from userdp.audits.engine.usercode import UserCodeError
from userdp.audits.validation import Case, ValidationSpec
from userdp.audits.validation.context import CaseDraw, Context
from userdp.audits.validation.releases import call_target, reference_rows, stage_vector
from userdp.audits.validation.report_differential import Tests, report_differential
from userdp.audits.validation.settings import (
    ALPHAS,
    CENTRE_SAMPLES,
    DEFAULT_SAMPLES,
    FLOOR_SAMPLES,
    KS_MAX,
    MIN_SAMPLES,
    PROBE,
    QUICK,
    REFERENCE_FACTOR,
    REFERENCE_MIN,
    Z_KURT,
)
from userdp.audits.validation.stats import (
    close,
    equal_pairs,
    excess_kurtosis,
    ks_distance,
    ks_pvalue,
    projections,
    quantised,
    z_critical,
)
from userdp.audits.validation.target import BATCHED, ONE, PythonTarget

__all__ = ["NAME", "NEEDS", "applies", "check", "draw_cases"]

NAME = "differential"  # the check's name in the report
REPLAY_ROWS = 64  # releases per side in the coupled replay of an under-noised candidate's pair
REPLAY_RTOL = 1e-9  # affine to rounding: residual <= this x the largest |release|
REPLAY_SCALE_TOL = 1e-6  # |a - 1| above this: two noise scales
NEEDS = ("independence",)  # the checks that must run first


def applies(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> str | None:
    """None if the check applies, else why it is skipped."""
    if target.mechanism is None:
        return "TARGET has no mechanism stage (the release)"
    return None


def check(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> None:
    """Draw the cases (unless drawn), test, and report the findings (``report_differential``)."""
    if not ctx.draws:
        draw_cases(ctx)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # degenerate coordinates: handled
        tests = _test(ctx)
        report_differential(ctx, tests)


def _test(ctx: Context) -> Tests:
    spec = ctx.spec
    coords = sum(d.Xr.shape[1] for d in ctx.draws)
    T = Tests(coords, z_critical(ALPHAS["mean"], coords), z_critical(ALPHAS["scale"], coords))
    for ci, d in enumerate(ctx.draws):
        if d.bad_rows:
            T.fails["finite"].append(ci)
        if spec.declines and (d.released[0] < 1 or d.released[1] < 1):
            T.fails["share"].append(ci)
        if d.Xt.shape[0] < 2 or d.Xr.shape[0] < 2:
            continue
        for k in range(d.Xr.shape[1]):
            _test_coordinate(T, ci, d, k)
        _test_structure_and_distribution(T, ci, d)
    ks_reject = holm([p for p, *_ in T.ks_tests], ALPHAS["distribution"])[0] if T.ks_tests else []
    T.fails["dist"] = [t for t, bad in zip(T.ks_tests, ks_reject) if bad]
    # the under-noised candidates: a case with a sensitivity pair whose spread is significantly below the
    # reference's; TARGET's own move on the pair, in its own noise units, against the reference's
    if T.fails["scale"]:
        cand = list(
            dict.fromkeys(
                ci
                for ci, k, r, l in T.fails["scale"]
                if r < 1
                and spec.noise is not None
                and spec.statistic is not None
                and ctx.draws[ci].case.pair is not None
            )
        )
        for ci in cand:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
                cov = T.covers[ci] = _pair_cover(ctx, ctx.draws[ci], T.z_scale)
                if cov.get("s_t") is not None and (
                    cov["scale_varies"] or cov["rho_lower"] * ctx.draws[ci].case.pair_share > 1.0
                ):
                    cov["replay"] = _replay(ctx, ctx.draws[ci], cov)
    return T


def _test_coordinate(T: Tests, ci: int, d: CaseDraw, k: int) -> None:
    nt, nr = d.Xt.shape[0], d.Xr.shape[0]
    t, r = d.Xt[:, k], d.Xr[:, k]
    # mean: the standard error from the REFERENCE's spread (the same law under the null, and
    # estimated from many releases: a target sample that happens to miss a rare component of
    # a mixture cannot shrink it), and only where the normal approximation holds (Z_KURT)
    sd_r = float(np.std(r, ddof=1))
    if nt >= Z_KURT * max(1.0, excess_kurtosis(r)):
        if d.exact and d.centre.size == d.Xr.shape[1]:
            diff, se = float(np.mean(t)) - float(d.centre[k]), sd_r / math.sqrt(nt)
        else:
            diff = float(np.mean(t)) - float(np.mean(r))
            se = sd_r * math.sqrt(1.0 / nt + 1.0 / nr)
        z = abs(diff) / se if se > 0 else (0.0 if diff == 0 else math.inf)
        if T.mean_worst is None or z > T.mean_worst[0]:
            T.mean_worst = (z, ci, k, diff, se)
        if z > T.z_mean:
            T.fails["mean"].append((ci, k))
    else:
        T.skipped["mean"] += 1
    # scale: each side's mean absolute deviation about its own median, so that a shifted
    # centre (the mean test's business) is not read as more noise. d/dm E|X - m| = 2 F(m) - 1
    # vanishes at the median, so estimating m changes the estimator's variance by o(1/n)
    at, ar = np.abs(t - np.median(t)), np.abs(r - np.median(r))
    st, sr = float(np.mean(at)), float(np.mean(ar))
    if sr > 0 and nt >= Z_KURT * max(1.0, excess_kurtosis(ar)):
        rel = float(np.var(ar)) / (sr * sr)  # the reference's, for both sides (as above)
        lse = math.sqrt(rel * (1.0 / nt + 1.0 / nr))
        ratio = st / sr
        d.scale.append((k, ratio, lse))
        zs = abs(math.log(ratio)) / lse if ratio > 0 else math.inf
        if T.scale_worst is None or zs > T.scale_worst[0]:
            T.scale_worst = (zs, ci, k, ratio, lse)
        if zs > T.z_scale:
            T.fails["scale"].append((ci, k, ratio, lse))
    elif sr > 0:
        T.skipped["scale"] += 1
    # stages agree (the same standard error and condition as the mean test)
    if d.own is not None and d.own.size == d.Xr.shape[1] and nt >= Z_KURT * max(1.0, excess_kurtosis(r)):
        se_o = sd_r / math.sqrt(nt)
        dz = float(np.mean(t)) - float(d.own[k])
        zo = abs(dz) / se_o if se_o > 0 else (0.0 if dz == 0 else math.inf)
        if T.own_worst is None or zo > T.own_worst[0]:
            T.own_worst = (zo, ci, k, dz, se_o)


def _test_structure_and_distribution(T: Tests, ci: int, d: CaseDraw) -> None:
    # structure: coordinates equal in every reference release
    same = equal_pairs(d.Xr)
    dup = set()
    for i, j in same:
        differ = int(np.sum(~close(d.Xt[:, i], d.Xt[:, j])))
        if differ:
            T.fails["structure"].append((ci, i, j, differ))
        else:
            dup.add(j)  # a mirror of coordinate i in both: tested once
    # distribution: coordinates, the standardised norm, two projections (KS_MAX rows of each)
    Xt, Xr = d.Xt[:KS_MAX], d.Xr[:KS_MAX]
    sd = np.std(Xr, axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    Zt, Zr = (Xt - d.centre) / sd, (Xr - d.centre) / sd
    series = [(f"coordinate {k}", Xt[:, k], Xr[:, k]) for k in range(Xr.shape[1]) if k not in dup]
    if Xr.shape[1] > 1:
        P = projections(Xr.shape[1])
        series.append(("norm of the standardised release", np.linalg.norm(Zt, axis=1), np.linalg.norm(Zr, axis=1)))
        series += [(f"random projection {i}", Zt @ P[:, i], Zr @ P[:, i]) for i in range(2)]
    for what, a, b in series:
        dist, at = ks_distance(a, b)
        T.ks_tests.append((ks_pvalue(dist, a.size, b.size), ci, what, dist, at))


def _adaptive_rows(ctx: Context, case: Case, rng, budget: float, default: int, where: str) -> np.ndarray:
    """TARGET's releases on ``case``: ``samples`` if given, else as many as ``budget`` seconds of
    its time allow on this case (timed on a first batch; between MIN_SAMPLES and ``default``).
    The count depends on timings only, never on the releases, so every test keeps its level."""
    if ctx.samples_given is not None:
        return ctx.rows(case, rng, ctx.samples_given, where)
    one = ctx.target.shape == ONE or not ctx.independent
    p = PROBE[ONE] if one else PROBE[BATCHED]
    t0 = time.process_time()  # CPU time: less sensitive to the machine's load
    parts = [ctx.rows(case, rng, p, where)]
    t1 = time.process_time() - t0
    if one:
        cost, overhead = t1 / p, 0.0
    else:  # two sizes: per-call overhead and per-release cost
        t0 = time.process_time()
        parts.append(ctx.rows(case, rng, 4 * p, where))
        t2 = time.process_time() - t0
        cost = max((t2 - t1) / (3 * p), 1e-9)
        overhead = max(t1 - cost * p, 0.0)
    ctx.cost = max(ctx.cost or 0.0, cost)
    drawn = sum(x.shape[0] for x in parts)
    floor = MIN_SAMPLES
    if cost * MIN_SAMPLES * len(ctx.cases) > 0.5 * ctx.max_seconds:  # a very slow target
        floor = quantised(int(0.5 * ctx.max_seconds / (cost * len(ctx.cases))), FLOOR_SAMPLES, MIN_SAMPLES)
        ctx.slow = True
    n = quantised(
        int((budget - overhead) / cost) if budget > overhead else 0, floor, min(default, ctx.spec.max_samples)
    )
    if n < drawn:  # keep the count on the quantised grid
        parts = [np.concatenate(parts)[:n]]
        drawn = n
    if n > drawn:
        parts.append(ctx.rows(case, rng, n - drawn, where))
    return np.concatenate(parts)


def draw_cases(ctx: Context) -> None:
    """Draw TARGET's and the reference's releases on every case (``ctx.draws``), with their centres."""
    spec, t = ctx.spec, ctx.target
    default = QUICK["samples"] if ctx.quick else DEFAULT_SAMPLES
    budget = ctx.budget["differential"] / max(1, len(ctx.cases))
    own_stage = t.adapter.statistic if "statistic" in spec.stage_params else None
    for j, case in enumerate(ctx.cases):
        ss = np.random.SeedSequence([ctx.seed, 1, j]).spawn(3)
        where = f"case {case.description!r}"
        Xt = _adaptive_rows(ctx, case, np.random.default_rng(ss[0]), budget, default, where)
        n = Xt.shape[0]
        nr = min(spec.max_samples, max(REFERENCE_FACTOR * n, REFERENCE_MIN))
        Xr = reference_rows(spec, case.dataset, np.random.default_rng(ss[1]), nr, case.params)
        if Xt.shape[1] != Xr.shape[1]:
            raise UserCodeError(
                f"TARGET {t.who} returned releases of {Xt.shape[1]} values on {where}; the "
                f"reference's have {Xr.shape[1]} ({spec.release}; `userdp validate "
                f"{spec.algorithm} --signature`)"
            )
        centre = None
        if spec.statistic is not None:
            centre, exact = np.asarray(spec.statistic(case.dataset, **case.params), dtype=float).ravel(), True
            if centre.size != Xr.shape[1]:  # a statistic not flattened like the releases: unused
                centre = None
        if centre is None:
            C = reference_rows(spec, case.dataset, np.random.default_rng(ss[2]), min(CENTRE_SAMPLES, nr), case.params)
            centre, exact = np.nanmedian(C, axis=0), False
        empty = np.all(np.isnan(Xt), axis=1)
        finite = np.all(np.isfinite(Xt), axis=1)
        bad_rows = int(np.sum(~finite & ~(empty if spec.declines else False)))
        released = (float(np.mean(~empty)), float(np.mean(~np.all(np.isnan(Xr), axis=1))))
        own = None
        if own_stage is not None:
            kw = {k: case.params[k] for k in spec.stage_params["statistic"] if k in case.params}
            out = call_target(f"TARGET {t.name}'s statistic stage", own_stage, case.dataset, **kw)
            own = stage_vector(spec, out)
        Xr_finite = Xr[np.all(np.isfinite(Xr), axis=1)]
        draw = CaseDraw(case, Xt[finite], Xr_finite, centre, exact, bad_rows, released, own, n)
        if bad_rows:
            counts = {"NaN": np.isnan(Xt).any(axis=1), "+inf": (Xt == np.inf).any(axis=1)}
            counts["-inf"] = (Xt == -np.inf).any(axis=1)
            draw.non_finite = ", ".join(f"{k} in {int(v.sum())} release(s)" for k, v in counts.items() if v.any())
        ctx.draws.append(draw)
        ctx.say(f"differential: case {j + 1} of {len(ctx.cases)} drawn ({n} releases)")
    ns = [d.n for d in ctx.draws]
    ctx.samples = ns[0] if min(ns) == max(ns) else f"{min(ns)}-{max(ns)}"


def _pair_cover(ctx: Context, d: CaseDraw, z: float) -> dict:
    """rho = ||TARGET's move on the case's pair in its own noise units|| / ||the reference's||, with a
    lower bound: each coordinate's move |mean(D') - mean(D)| less z standard errors, over the larger
    of TARGET's two spreads (upper bounds), against the reference's exact move over its spread (lower
    bound): conservative at every step. Noise units: the mean absolute deviation from the centre.
    For noise of one family (the spec's), the loss of a pair is its move in noise units (L1 for
    Laplace, L2 otherwise; with two scales, at least the move over the larger: ``report_differential.py``),
    so TARGET's loss on the pair is at least rho x the reference's, which is pair_share x the claim."""
    spec, case = ctx.spec, d.case
    w = d.Xr.shape[1] if spec.noise_width is None else spec.noise_width(d.Xr.shape[1])
    rng = np.random.default_rng(np.random.SeedSequence([ctx.seed, 6, ctx.cases.index(case)]))
    second = Case(case.pair.second, case.params, f"{case.description} (the pair's second dataset)")
    Y = ctx.rows(second, rng, d.Xt.shape[0], f"the pair of case {case.description!r}")
    Y = Y[np.all(np.isfinite(Y), axis=1)][:, :w]
    X, R = d.Xt[:, :w], d.Xr[:, :w]
    if min(X.shape[0], Y.shape[0], R.shape[0]) < 2:  # no finite releases to compare (already a finding)
        return {"rho": 0.0, "rho_lower": 0.0, "scale_varies": False}
    p = 1 if spec.noise == "laplace" else 2
    s2 = np.asarray(spec.statistic(case.pair.second, **case.params), dtype=float).ravel()[:w]
    c1 = d.centre[:w]
    if s2.shape != c1.shape or not d.exact:  # no exact statistic to measure the move with
        return {"rho": 0.0, "rho_lower": 0.0, "scale_varies": False}

    def spread(A):  # mean |A - median(A)| per coordinate, with a z upper bound
        a = np.abs(A - np.median(A, axis=0))
        m = a.mean(axis=0)
        return m, m + z * a.std(axis=0) / math.sqrt(max(1, A.shape[0]))

    (m1, hi1), (m2, hi2) = spread(X), spread(Y)
    s_t = np.maximum(hi1, hi2)
    sr = np.abs(R - np.median(R, axis=0))
    s_r_lo = np.maximum(sr.mean(axis=0) - z * sr.std(axis=0) / math.sqrt(R.shape[0]), 1e-300)
    move = Y.mean(axis=0) - X.mean(axis=0)
    v = np.maximum(np.maximum(Y.var(axis=0), X.var(axis=0)), R.var(axis=0))  # the largest: conservative
    se = np.sqrt(v / max(1, Y.shape[0]) + v / max(1, X.shape[0]))
    # the target's own spread on the two sides (about its own medians): the reference's is public (the
    # same on both); two different scales of one family make the likelihood ratio unbounded in the tails
    a1, a2 = np.abs(X - np.median(X, axis=0)), np.abs(Y - np.median(Y, axis=0))
    both = (m1 > 0) & (m2 > 0)
    lse = np.sqrt(
        a1.var(axis=0) / (X.shape[0] * np.maximum(m1 * m1, 1e-300))
        + a2.var(axis=0) / (Y.shape[0] * np.maximum(m2 * m2, 1e-300))
    )
    gap = np.abs(np.log(np.where(both, m2, 1.0) / np.where(both, m1, 1.0)))
    varies = bool(np.any(both & (gap > z * lse)) or np.any((m1 > 0) != (m2 > 0)))
    if varies:  # only where the reference's own spread is the same on both sides
        R2 = reference_rows(spec, case.pair.second, rng, R.shape[0], case.params)[:, :w]
        b1, b2 = np.abs(R - np.median(R, axis=0)), np.abs(R2 - np.median(R2, axis=0))
        r1, r2 = b1.mean(axis=0), b2.mean(axis=0)
        rboth = (r1 > 0) & (r2 > 0)
        rse = np.sqrt(
            b1.var(axis=0) / (R.shape[0] * np.maximum(r1 * r1, 1e-300))
            + b2.var(axis=0) / (R2.shape[0] * np.maximum(r2 * r2, 1e-300))
        )
        rgap = np.abs(np.log(np.where(rboth, r2, 1.0) / np.where(rboth, r1, 1.0)))
        varies = not bool(np.any(rboth & (rgap > z * rse)) or np.any((r1 > 0) != (r2 > 0)))
    ref = np.linalg.norm((s2 - c1) / s_r_lo, ord=p)
    if ref <= 0:
        return {
            "rho": 0.0,
            "rho_lower": math.inf if varies else 0.0,
            "scale_varies": varies,
            "spread_on_the_pair": [float(np.max(m1)), float(np.max(m2))],
            "s_t": s_t,
            "ref": 0.0,
            "p": p,
            "w": w,
        }
    rho = float(
        np.linalg.norm(move / np.maximum(m1, 1e-300), ord=p)
        / np.linalg.norm((s2 - c1) / np.maximum(sr.mean(axis=0), 1e-300), ord=p)
    )
    lower = float(np.linalg.norm(np.maximum(np.abs(move) - z * se, 0.0) / np.maximum(s_t, 1e-300), ord=p) / ref)
    return {
        "rho": rho,
        "rho_lower": math.inf if varies else lower,
        "scale_varies": varies,
        "spread_on_the_pair": [float(np.max(m1)), float(np.max(m2))],
        "s_t": s_t,  # TARGET's spread, upper bounds per coordinate (for ``_replay``)
        "ref": float(ref),  # the reference's move in its noise units, a lower bound
        "p": p,
        "w": w,
    }


def _replay(ctx: Context, d: CaseDraw, cov: dict) -> dict:
    """The coupled replay of the case's pair: ``REPLAY_ROWS`` releases on each side drawn from generators of
    one seed. Where TARGET's noise is additive and follows the rng, the second side's releases are an
    affine function of the first's, coordinate by coordinate and exactly (to rounding): Y = a X + c for
    every seed. Then a != 1 is a noise scale read from the data (two scales of one family: an unbounded
    likelihood ratio in the tails), and a = 1 makes c TARGET's exact move on the pair, so its loss there
    is at least the claim x share x ||c / TARGET's spread (upper bound)|| / (the reference's move in its
    noise units, lower bound): the bound of ``_pair_cover`` with the exact move for the estimated one.
    Anything else (a clamp, a projection, a generator of its own) is no replay witness: ``exact`` False."""
    case = d.case
    ci = ctx.cases.index(case)
    second = Case(case.pair.second, case.params, f"{case.description} (the pair's second dataset)")
    seed = np.random.SeedSequence([ctx.seed, 13, ci])
    where = f"the coupled replay of the pair of case {case.description!r}"
    w = cov["w"]
    X = ctx.rows(case, np.random.default_rng(seed), REPLAY_ROWS, where)[:, :w]
    Y = ctx.rows(second, np.random.default_rng(seed), REPLAY_ROWS, where)[:, :w]
    if X.shape != Y.shape or not (np.all(np.isfinite(X)) and np.all(np.isfinite(Y))):
        return {"exact": False, "why": "non-finite or unequal releases"}
    dx = X - X.mean(axis=0)
    vx = np.sum(dx * dx, axis=0)
    a = np.where(vx > 0, np.sum(dx * (Y - Y.mean(axis=0)), axis=0) / np.where(vx > 0, vx, 1.0), 1.0)
    c = Y.mean(axis=0) - a * X.mean(axis=0)
    resid = np.abs(Y - a * X - c)
    tol = REPLAY_RTOL * max(1.0, float(np.max(np.abs(X))), float(np.max(np.abs(Y))))
    if not bool(np.all(resid <= tol)):
        return {"exact": False, "why": f"not affine: largest residual {float(np.max(resid)):.3g} (tolerance {tol:.3g})"}
    scaled = bool(np.any(np.abs(a - 1.0) > REPLAY_SCALE_TOL))
    out = {
        "exact": True,
        "rows": REPLAY_ROWS,
        "scale_ratio": [float(x) for x in a],
        "move": [float(x) for x in c],
        "scale_varies": scaled,
    }
    if not scaled and cov["ref"] > 0:
        out["rho_exact_lower"] = float(np.linalg.norm(c / np.maximum(cov["s_t"], 1e-300), ord=cov["p"]) / cov["ref"])
    return out
