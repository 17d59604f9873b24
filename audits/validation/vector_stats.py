"""Statistical test vectors: a release's noise law at a neighbouring pair, with tests any CI runs by counting.

A deterministic vector (``vectors.py``) pins the noise-free stages; nothing there checks a sampler, so an
implementation with the right stages and a wrong noise law (uniform instead of Laplace, half the scale, a
generator re-seeded per release) passes them all. A statistical vector closes that gap where the reference's
release has a closed-form law: one coordinate of the release is ``location + noise``, the noise Laplace of scale
b or Gaussian of deviation sigma, both read off the reference's stages on each side of a neighbouring pair
(``statistic`` at the tested coordinate, ``noise_scale``). Each vector prescribes, fully specified:

- ``n`` releases per side, drawn in one release call per side with the vector's ``seeds``;
- a **distribution test** per side: the Kolmogorov-Smirnov statistic D_n = sup_x |F_n(x) - F(x)| of the n
  releases against the side's law; reject when D_n > ``critical_value`` = sqrt(ln(2 / level) / (2 n)), whose
  false-alarm probability is at most ``level`` by the Dvoretzky-Kiefer-Wolfowitz inequality with Massart's
  constant (P[D_n > c] <= 2 exp(-2 n c^2), for every n and every continuous F); the exact probability
  (``scipy.stats.kstwo``) is stated beside it;
- a **privacy test**: the rejection set S = {release > ``above``}, with the closed-form P[M(D) in S] and
  P[M(D') in S] of the correct mechanism (their ratio is at most e^eps, plus delta for a Gaussian), and per side
  an acceptance range [lo, hi] for the count of releases in S; the false-alarm probability is the exact binomial
  tail P[count < lo] + P[count > hi] under the correct law (each tail at most level / 2).

A vector fails when any of its four tests rejects. Its ``false_alarm`` is the sum of the four tests' rates (a
union bound: at most 1e-4). Its ``power`` lists, for stated alternatives (the noise scale 0.5x and 0.8x, uniform
noise of the same variance, every release equal), a lower bound on the probability that it fails: the privacy
test's exact power, and for the distribution test the exact probability that |F_n(x0) - F(x0)| > c at the point
x0 where the two laws' CDFs differ most on a grid (D_n is at least that, so this bounds its power from below),
combined over the two independent sides as 1 - (1 - p_D)(1 - p_D'); the vector's power is the larger of the two
tests' bounds. Every figure is computed here from closed forms (scipy.stats) at export time, so a consumer only
counts. tests/test_vectors.py checks the binomial figures by direct summation, the rates and powers by simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
from scipy import special, stats

from userdp.audits.validation.protocol import decode_dataset, encode_dataset, encode_params

__all__ = [
    "FAMILIES",
    "LEVEL",
    "N_GRID",
    "POWER",
    "law_cdf",
    "ks_critical",
    "ks_statistic",
    "acceptance",
    "design_tests",
    "choose_n",
    "run_tests",
    "STAT_SEED",
    "build_statistical",
    "StatResult",
    "check_vector",
    "format_results",
]

FAMILIES = ("laplace", "gaussian")
LEVEL = 2.5e-5  # the false-alarm budget of each of a vector's four tests: 1e-4 in all (union bound)
N_GRID = (1000, 2000, 3000, 5000, 10000)  # releases per side: the first n of the grid with power >= POWER
POWER = 0.9  # ... against every stated alternative (Google's statistical tests ask 0.9 of each test too)


def law_cdf(family: str, x, location: float, scale: float):
    """The CDF of ``location + noise`` at ``x``: Laplace of scale b (``scale``), or Gaussian of deviation sigma."""
    z = (np.asarray(x, dtype=float) - location) / scale
    if family == "laplace":
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))
    if family == "gaussian":
        return 0.5 * special.erfc(-z / math.sqrt(2.0))
    if family == "uniform":  # an alternative only: ``scale`` is the half-width
        return np.clip((z + 1.0) / 2.0, 0.0, 1.0)
    raise ValueError(f"family must be one of {FAMILIES}, got {family!r:.80}")


def ks_critical(n: int, level: float = LEVEL) -> float:
    """DKW-Massart: P[D_n > c] <= 2 exp(-2 n c^2) = level at c = sqrt(ln(2 / level) / (2 n))."""
    return math.sqrt(math.log(2.0 / level) / (2.0 * n))


def ks_statistic(sample, family: str, location: float, scale: float) -> float:
    """D_n = max_i max(i/n - F(x_(i)), F(x_(i)) - (i-1)/n) of ``sample`` against the law."""
    x = np.sort(np.asarray(sample, dtype=float))
    n = x.size
    F = law_cdf(family, x, location, scale)
    i = np.arange(1, n + 1)
    return float(max(np.max(i / n - F), np.max(F - (i - 1) / n)))


def _cdf(k: int, n: int, p: float) -> float:
    """P[Bin(n, p) <= k] (0 for k < 0)."""
    return float(special.bdtr(k, n, p)) if k >= 0 else 0.0


def _sf(k: int, n: int, p: float) -> float:
    """P[Bin(n, p) > k] (1 for k < 0, 0 for k >= n)."""
    if k < 0:
        return 1.0
    return float(special.bdtrc(k, n, p)) if k < n else 0.0


def acceptance(n: int, p: float, level: float = LEVEL) -> tuple[int, int, float]:
    """The narrowest [lo, hi] (the most powerful) with P[Bin(n, p) < lo] <= level/2 and P[Bin(n, p) > hi] <=
    level/2, and the exact false-alarm probability P[X < lo] + P[X > hi]."""
    sd = math.sqrt(n * p * (1.0 - p))
    for a, b in ((max(0, math.floor(n * p - 10 * sd) - 5), min(n, math.ceil(n * p + 10 * sd) + 5)), (0, n)):
        k = np.arange(a, b + 1)  # first a window of 10 sd where both ends lie in practice, then all of [0, n]
        lo = a + int(np.argmax(special.bdtr(k, n, p) > level / 2))  # first k, P[X <= k] > level/2
        hi = a + int(np.argmax(special.bdtrc(k, n, p) <= level / 2))  # first k, P[X > k] <= level/2
        if _cdf(lo - 1, n, p) <= level / 2 < _cdf(lo, n, p) and _sf(hi, n, p) <= level / 2 < _sf(hi - 1, n, p):
            break
    return lo, hi, _cdf(lo - 1, n, p) + _sf(hi, n, p)


def _outside(n: int, q: float, lo: int, hi: int) -> float:
    """P[Bin(n, q) < lo or > hi]."""
    return min(1.0, _cdf(lo - 1, n, q) + _sf(hi, n, q))


def _alternatives(family: str) -> list[tuple[str, str, float]]:
    """(name, family, scale factor): the laws a wrong sampler draws instead, at the correct scale times factor
    (uniform: the half-width that gives the correct variance)."""
    same_var = math.sqrt(6.0) if family == "laplace" else math.sqrt(3.0)  # Var Lap(b) = 2 b^2; Var U(-a, a) = a^2/3
    return [
        ("noise scale 0.5x (half the noise)", family, 0.5),
        ("noise scale 0.8x", family, 0.8),
        ("uniform noise of the same variance", "uniform", same_var),
    ]


def _ks_power(n: int, c: float, family: str, side: Mapping, alt_family: str, factor: float) -> float:
    """A lower bound on P[D_n > c] when the releases follow the alternative: P[|F_n(x0) - F(x0)| > c] exactly
    (n F_n(x0) is binomial), at the grid point x0 where the CDFs differ most."""
    mu, b = side["location"], side["scale"]
    grid = mu + b * np.linspace(-8.0, 8.0, 3201)
    F0 = law_cdf(family, grid, mu, b)
    F1 = law_cdf(alt_family, grid, mu, b * factor)
    j = int(np.argmax(np.abs(F1 - F0)))
    f0, f1 = float(F0[j]), float(F1[j])
    lo = math.ceil(n * (f0 - c)) - 1  # |k/n - f0| > c  <=>  k < n (f0 - c) or k > n (f0 + c)
    while lo >= 0 and not (lo / n < f0 - c):
        lo -= 1
    hi = math.floor(n * (f0 + c)) + 1
    while hi <= n and not (hi / n > f0 + c):
        hi += 1
    return min(1.0, _cdf(lo, n, f1) + (_sf(hi - 1, n, f1) if hi <= n else 0.0))


def _either(p: float, q: float) -> float:
    return 1.0 - (1.0 - p) * (1.0 - q)


def _threshold(n: int, family: str, sides: Mapping) -> float:
    """S's threshold: above the larger location, at the multiple of its scale in [0, 5] where the privacy test
    is most powerful against the 0.8x alternative, on a grid of step 1/2 (any threshold fixed before the releases
    keeps the rates)."""
    hi_side = max(sides.values(), key=lambda s: s["location"])
    best = None
    for k in np.arange(0.0, 5.01, 0.5):
        t = hi_side["location"] + k * hi_side["scale"]
        power = 1.0
        for s in sides.values():
            p = 1.0 - float(law_cdf(family, t, s["location"], s["scale"]))
            q = 1.0 - float(law_cdf(family, t, s["location"], 0.8 * s["scale"]))
            lo, hi, _ = acceptance(n, p)
            power *= 1.0 - _outside(n, q, lo, hi)
        if best is None or 1.0 - power > best[0]:
            best = (1.0 - power, float(t))
    return best[1]


def choose_n(family: str, sides: Mapping, claim: Mapping) -> tuple[int, dict]:
    """The first n of ``N_GRID`` whose tests have power >= ``POWER`` against every stated alternative (the
    last one if none has), and those tests."""
    for n in N_GRID:
        tests = design_tests(family, sides, claim, n)
        if all(p["vector"] >= POWER for p in tests["power"]):
            break
    return n, tests


def design_tests(family: str, sides: Mapping, claim: Mapping, n: int) -> dict:
    """The tests of a statistical vector whose release coordinate follows ``family`` at ``sides`` ({"D":
    {location, scale}, "D_prime": ...}) under a claim {epsilon, delta}, for ``n`` releases per side: critical
    values and error rates."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r:.80}")
    c = ks_critical(n)
    exact_ks = float(stats.kstwo.sf(c, n))
    t = _threshold(n, family, sides)
    probs, accept, fa_set = {}, {}, 0.0
    for k, s in sides.items():
        p = 1.0 - float(law_cdf(family, t, s["location"], s["scale"]))
        lo, hi, fa = acceptance(n, p)
        probs[k], accept[k] = p, [lo, hi]
        fa_set += fa
    power = []
    for name, alt, factor in _alternatives(family):
        ks = _either(*(_ks_power(n, c, family, sides[k], alt, factor) for k in ("D", "D_prime")))
        st = _either(
            *(
                _outside(n, 1.0 - float(law_cdf(alt, t, sides[k]["location"], sides[k]["scale"] * factor)), *accept[k])
                for k in ("D", "D_prime")
            )
        )
        power.append({"alternative": name, "distribution": ks, "privacy": st, "vector": max(ks, st)})
    power.append(
        {
            "alternative": "every release equal (a generator re-seeded per release)",
            "distribution": 1.0,
            "privacy": None,
            "vector": 1.0,
            "why": "a point mass at x0 has D_n >= max(F(x0), 1 - F(x0)) >= 1/2 > critical_value",
        }
    )
    eps, delta = float(claim["epsilon"]), float(claim.get("delta", 0.0))
    lo_k, hi_k = sorted(sides, key=lambda k: sides[k]["location"])
    name = {"D": "D", "D_prime": "D'"}
    return {
        "distribution": {
            "statistic": "D_n = max over i of max(i/n - F(x_(i)), F(x_(i)) - (i-1)/n), x_(1) <= .. <= x_(n) the "
            "side's releases sorted, F the side's law",
            "reject": "D_n > critical_value",
            "critical_value": c,
            "level": LEVEL,
            "false_alarm_per_side": LEVEL,
            "false_alarm_source": "Dvoretzky-Kiefer-Wolfowitz with Massart's constant: P[D_n > c] <= 2 exp(-2 n c^2)",
            "false_alarm_exact_per_side": exact_ks,
        },
        "privacy": {
            "set": {"above": t},
            "probability": probs,
            "ratio": probs[hi_k] / probs[lo_k] if probs[lo_k] > 0 else None,
            "bound": f"P[M({name[hi_k]}) in S] <= e^epsilon P[M({name[lo_k]}) in S] + delta (ratio: the left side "
            f"over P[M({name[lo_k]}) in S])",
            "e_epsilon": math.exp(eps),
            "delta": delta,
            "reject": "the count of a side's releases above `above` lies outside that side's accept range",
            "accept": accept,
            "false_alarm": fa_set,
            "false_alarm_source": "exact binomial tails, P[count < lo] + P[count > hi] on each side",
        },
        "false_alarm": 2 * LEVEL + fa_set,
        "power": power,
    }


def run_tests(vec: Mapping, releases: Mapping) -> tuple[str, list, dict]:
    """Apply ``vec``'s tests to ``releases`` ({"D": array, "D_prime": array} of the tested coordinate):
    (verdict "pass" | "fail", reasons, the figures measured)."""
    law, tests = vec["law"], vec["tests"]
    c = tests["distribution"]["critical_value"]
    t = tests["privacy"]["set"]["above"]
    reasons, measured = [], {}
    for side in ("D", "D_prime"):
        x = np.asarray(releases[side], dtype=float)
        if x.shape != (vec["n"],):
            reasons.append(f"{side}: {x.shape} releases of the tested coordinate, expected ({vec['n']},)")
            continue
        if not np.all(np.isfinite(x)):
            reasons.append(f"{side}: a release is not a finite number")
            continue
        d = ks_statistic(x, law["family"], law[side]["location"], law[side]["scale"])
        count = int(np.count_nonzero(x > t))
        lo, hi = tests["privacy"]["accept"][side]
        measured[side] = {"ks": d, "count": count}
        if d > c:
            reasons.append(
                f"{side}: distribution: D_n = {d:.4g} > critical value {c:.4g} (the releases do not follow "
                f"{law['family']}(location {law[side]['location']:.6g}, scale {law[side]['scale']:.6g}))"
            )
        if not lo <= count <= hi:
            reasons.append(
                f"{side}: privacy: {count} of {vec['n']} releases above {t:.6g}, outside [{lo}, {hi}] (the correct "
                f"mechanism's expected count is {vec['n'] * tests['privacy']['probability'][side]:.1f})"
            )
    return ("fail" if reasons else "pass"), reasons, measured


# ------------------------------------------------------------------ building and checking
STAT_SEED = 20261128  # a statistical vector's seeds: STAT_SEED + 2 id (side D) and + 2 id + 1 (side D')


def _side_law(algorithm: str, stage, case, dataset) -> dict:
    """The law of the tested coordinate on one side: the reference's statistic there and its noise scale."""
    loc = np.asarray(stage("statistic", dataset, case.params), dtype=float)
    if (case.index is None) != (loc.ndim == 0):
        raise AssertionError(
            f"{algorithm}: statistical vector {case.comment!r}: index {case.index} for a statistic of shape {loc.shape}"
        )
    scale = float(stage("noise_scale", dataset, case.params))
    return {"location": float(loc if case.index is None else loc[case.index]), "scale": scale}


def build_statistical(design, stage) -> list:
    """The statistical vectors of ``design`` (a ``vector_cases.Design``), ``stage(name, dataset, params)`` the
    reference's noise-free stage: each pair's law and its tests' critical values and error rates."""
    if design.statistical is None:
        return []
    out = []
    for j, case in enumerate(design.statistical(), 1):
        sides = {"D": _side_law(design.algorithm, stage, case, case.D)}
        sides["D_prime"] = _side_law(design.algorithm, stage, case, case.D_prime)
        if sides["D"]["location"] == sides["D_prime"]["location"]:
            raise AssertionError(f"{design.algorithm}: statistical vector {case.comment!r}: the pair does not move it")
        n, tests = choose_n(case.family, sides, case.claim)
        out.append(
            {
                "id": j,
                "comment": case.comment,
                "flags": list(case.flags),
                "expected_verdict": "pass",
                "relation": design.relation,
                "pair": {"D": encode_dataset(case.D), "D_prime": encode_dataset(case.D_prime)},
                "params": encode_params(case.params),
                "claim": {"epsilon": float(case.claim["epsilon"]), "delta": float(case.claim.get("delta", 0.0))},
                "coordinate": case.index,
                "n": n,
                "seeds": {"D": STAT_SEED + 2 * j, "D_prime": STAT_SEED + 2 * j + 1},
                "law": {"family": case.family, **sides},
                "tests": tests,
            }
        )
    return out


@dataclass
class StatResult:
    """A statistical vector's outcome: the verdict of its tests, why it failed, and what was measured."""

    id: int
    comment: str
    flags: list
    verdict: str  # "pass" | "fail"
    reasons: list = field(default_factory=list)
    measured: dict = field(default_factory=dict)  # side -> {ks, count}
    false_alarm: float = 0.0
    power: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "comment": self.comment,
            "flags": self.flags,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "measured": self.measured,
            "false_alarm": self.false_alarm,
            "power": self.power,
        }


def _releases(v: Mapping, mechanism, params: Mapping, side: str):
    """The tested coordinate of ``v["n"]`` releases on ``side``, or why there are none."""
    try:
        out = mechanism(
            decode_dataset(v["pair"][side]), rng=np.random.default_rng(v["seeds"][side]), size=v["n"], **params
        )
        x = np.asarray(out, dtype=float)
    except Exception as exc:  # a refusal or a crash of the target on a valid input: the vector fails
        kind = "refused" if isinstance(exc, (ValueError, TypeError)) else "raised"
        return None, f"{side}: the release {kind} a valid input: {type(exc).__name__}: {exc}"[:400]
    k = v["coordinate"]
    if k is None and x.shape == (v["n"],):
        return x, None
    if k is not None and x.ndim == 2 and x.shape[0] == v["n"] and k < x.shape[1]:
        return x[:, k], None
    want = f"({v['n']},)" if k is None else f"({v['n']}, K) with K > {k}"
    return None, f"{side}: the release has shape {x.shape}, expected {want}"


def check_vector(v: Mapping, mechanism, params: Mapping) -> StatResult:
    """Run statistical vector ``v`` on ``mechanism(dataset, rng=, size=, **params)``: ``v["n"]`` releases per
    side in one call, seeded with ``v["seeds"]``, the tested coordinate taken, and ``run_tests`` applied."""
    got, reasons = {}, []
    for side in ("D", "D_prime"):
        x, why = _releases(v, mechanism, params, side)
        if why is None:
            got[side] = x
        else:
            reasons.append(why)
    measured = {}
    if not reasons:
        _, reasons, measured = run_tests(v, got)
    t = v["tests"]
    return StatResult(
        v["id"],
        v["comment"],
        list(v["flags"]),
        "fail" if reasons else "pass",
        reasons,
        measured,
        t["false_alarm"],
        t["power"],
    )


def format_results(results: list) -> list:
    """The statistical vectors' lines of a check report."""
    if not results:
        return []
    failed = [v for v in results if v.verdict == "fail"]
    worst = max(v.false_alarm for v in results)
    lines = [
        f"statistical vectors: {len(results)}: {len(results) - len(failed)} passed, {len(failed)} failed (a "
        f"correct release fails each with probability at most {worst:.2g})"
    ]
    for v in failed:
        lines.append(f"  statistical #{v.id} [{', '.join(v.flags)}] {v.comment}")
        lines += [f"      {why}" for why in v.reasons]
        half = next((p["vector"] for p in v.power if p["alternative"].startswith("noise scale 0.5x")), None)
        lines.append(
            f"      a correct release fails this vector with probability <= {v.false_alarm:.2g}"
            + (f"; half the noise fails it with probability >= {min(half, 0.9999):.4g}" if half is not None else "")
        )
    return lines


# ------------------------------------------------------------------ the index (docs/vectors.md)
_HALF = "noise scale 0.5x (half the noise)"


def _power_of(v: Mapping, prefix: str) -> str:
    p = next(x["vector"] for x in v["tests"]["power"] if x["alternative"].startswith(prefix))
    return f">= {min(p, 0.9999):.4g}"


def index_lines(docs: list) -> list:
    """The statistical vectors' section of docs/vectors.md: the rules, the error rates, who has none and why."""
    have = [d["algorithm"] for d in docs if d.get("statistical")]
    lines = [
        "## Statistical vectors",
        "",
        "A file's `statistical` vectors test the release itself, so that a sampler is checked too: an implementation "
        "with the right stages and the wrong noise (uniform instead of Laplace, half the scale, a generator re-seeded "
        "for every release) passes every deterministic vector and fails these. Each holds a neighbouring pair "
        "(`pair`: `D` and `D_prime` under `relation`), the public `params`, the `claim` (epsilon, delta), the "
        "`expected_verdict` of a correct implementation, the tested release `coordinate` (null: a scalar "
        "release), and the `law` of that coordinate on each side: `location` plus Laplace noise of scale `scale` "
        "(or Gaussian of standard deviation `scale`), the reference's statistic and noise scale there. A checker:",
        "",
        "1. draws `n` releases per side, in one release call per side seeded with `seeds` (any seeds fixed before "
        "the run give the stated rates; these make a run reproducible), and takes the coordinate;",
        "2. computes, per side, the Kolmogorov-Smirnov statistic D_n = max over i of max(i/n - F(x_(i)), F(x_(i)) - "
        "(i-1)/n) against the side's law F, and fails if D_n > `tests.distribution.critical_value`;",
        "3. counts, per side, the releases above `tests.privacy.set.above` (the rejection set S), and fails if the "
        "count lies outside `tests.privacy.accept` of that side.",
        "",
        "Error rates, all computed by the generator from closed forms (audits/validation/vector_stats.py), so a "
        "consumer only counts:",
        "",
        "- the critical value is sqrt(ln(2 / level) / (2 n)) at level 2.5e-5 per side: by the "
        "Dvoretzky-Kiefer-Wolfowitz inequality with Massart's constant, a correct release exceeds it with "
        "probability at most the level, whatever n (the exact probability, `false_alarm_exact_per_side`, is from "
        "scipy's `kstwo`);",
        "- the accept ranges are the narrowest whose binomial tails below and above are each at most 1.25e-5 under "
        "the correct mechanism's P[M(D) in S] and P[M(D') in S] (`probability`); `privacy.false_alarm` is their "
        "exact sum; `ratio` is the larger side's probability over the other's, at most e^epsilon (plus delta), "
        "e^epsilon itself where the pair moves the release by the sensitivity;",
        "- `tests.false_alarm`, the probability that a correct implementation fails the vector, is the sum of the four "
        "tests' rates (a union bound), at most 1e-4;",
        "- `tests.power` states, for each alternative (the noise scale 0.5x and 0.8x, uniform noise of the same "
        "variance, every release equal), a lower bound on the probability of failing: the privacy test's exact "
        "binomial power, and for the distribution test the exact probability that |F_n(x0) - F(x0)| exceeds the "
        "critical value at the point x0 where the two laws differ most (D_n is at least that), both over the two "
        "independent sides; `n` is the first of 1000, 2000, 3000, 5000, 10000 with every power at least 0.9.",
        "",
        "tests/test_vectors.py checks the binomial figures by direct summation, the false-alarm rates and the "
        "powers by simulation (fixed seeds), and that the reference passes every statistical vector while planted "
        "samplers (half the scale, uniform noise, every release equal, no noise) fail them and no deterministic "
        "vector. `userdp vectors check` runs them "
        "(`--no-statistical` skips them), and so does examples/js/check_vectors.js; on the capped sum of examples/js "
        "whose sampler draws half the scale, which passes every deterministic vector:",
        "",
        "```sh",
        "node examples/js/check_vectors.js vectors/amin2019.capped-sum.json examples/js/capped_sum_half_scale.js",
        "```",
        "",
        "ends with",
        "",
        "```text",
        "amin2019.capped-sum: capped_sum_half_scale.js: FAIL (9 passed, 0 failed, 0 skipped of 9; statistical: 0 "
        "passed, 2 failed)",
        "```",
        "",
        f"Algorithms with statistical vectors: {', '.join(f'`{a}`' for a in have)}. The others have none, and "
        "their file's `statisticalNote` says why:",
        "",
    ]
    lines += [f"- `{d['algorithm']}`: {d['statisticalNote']}." for d in docs if not d.get("statistical")]
    return [*lines, ""]


def algorithm_lines(doc: Mapping) -> list:
    """An algorithm's statistical vectors in docs/vectors.md (nothing if it has none)."""
    if not doc.get("statistical"):
        return []
    lines = [
        "| statistical | n | law on D / D' | false alarm | power: scale 0.5x, 0.8x, uniform | comment |",
        "|---|---|---|---|---|---|",
    ]
    for v in doc["statistical"]:
        law = v["law"]
        sides = " / ".join(
            f"{law[k]['location']:.6g} + {law['family']}({law[k]['scale']:.6g})" for k in ("D", "D_prime")
        )
        powers = ", ".join(_power_of(v, p) for p in (_HALF, "noise scale 0.8x", "uniform"))
        lines.append(
            f"| {v['id']} | {v['n']} | {sides} | {v['tests']['false_alarm']:.2g} | {powers} | {v['comment']} |"
        )
    return [*lines, ""]
