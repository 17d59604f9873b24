"""Three-valued verdicts for reproduced claims: holds, fails or undecided, with the interval.

The rule (every reproduction, ``userdp reproduce``). A claim is about a quantity theta of
the experiment the reproduction runs (an expected RMSE difference over releases on fixed
data, a median over random instances, a closed form) and a region the paper puts theta in
(theta > 0, theta <= 0, 0.85 < theta < 1.15, ...). Each comparison gives a confidence
interval [low, high] for theta, and

- **holds**: the interval lies inside the region;
- **fails**: the interval lies outside the region (disjoint from it);
- **undecided**: the interval straddles the region's boundary. The data cannot decide;
  the interval is reported, never "fails".

A claim made of several comparisons ("at every lambda": ``all_of``) fails if one of them
fails and holds if all hold; "for some mu" (``any_of``) holds if one holds and fails if all
fail; otherwise it is undecided. Groups nest ("at every eps, some mu"). ``userdp
reproduce`` exits 1 only when some claim fails (a decided failure), 0 when every claim
holds or is undecided.

Kinds of comparison (each states its interval's method):

- ``exact``: a closed form or a deterministic computation (an LP optimum, a seeded search,
  a measurement of the tool itself at its seed). The interval is the point [v, v] and the
  verdict is always decided: holds iff v is in the closed region [above, below] (or the
  open one with ``strict=True``), fails otherwise.
- ``mean``: a Student t interval for the mean of i.i.d. replications (releases on fixed
  data, or instances; each module states the unit). Exact for normal replications,
  otherwise approximate (the central limit theorem over the n replications).
- ``normal``: estimate +- z se for a mean over >= 1,000 i.i.d. draws (the central limit
  theorem; the reproductions' draws have all moments finite).
- ``ratio``: a ratio of two means, normal on the log scale (delta method:
  se(log a/b) = sqrt((se_a/a)^2 + (se_b/b)^2)), for means over >= 200 draws; for two means
  of paired draws whose errors are positively correlated this overstates the se (conservative).
- ``max_normal``: the largest of m normal estimates, [max low_c, max high_c] (m intervals).
- ``median``: a distribution-free interval for a median from order statistics: P(X_(j) >
  median) <= P(Binomial(n, 1/2) <= j - 1), for any distribution (equality when continuous).
- ``refutable``: a one-sided lower confidence bound (an audit's eps_lb): [lb, +inf). It
  can refute a claim "theta <= b" (fails when lb > b), never confirm it: otherwise the
  verdict is undecided. An audit's "no violation found" is never evidence of privacy.

Error control. ``decide`` builds every interval of one reproduction with each end at the
same one-sided level alpha = ERROR / k (Bonferroni). A decided verdict is wrong only if
theta lies beyond an end of the interval at a finite boundary of the region: a one-sided
region (theta > a) risks one end, alpha; a bounded one (a < theta < b) two, 2 alpha; the
largest of m estimates m times as many. k counts these units over the whole run, so with
probability >= 1 - ERROR = 1 - 1e-4 no decided verdict of the run is wrong: a reproduction
whose claims are all true exits 1 with probability <= 1e-4 (the suite's bound on a false
failure), and a false claim is reported to hold with probability <= 1e-4 (exactly so for
exact, order-statistic and lower-bound intervals; for t, normal and ratio intervals as far
as their normal approximations hold).

Power. A statistical claim states its design: the effect it must resolve (the paper's
effect size, where the paper gives one) and the replications that decide "holds" with
probability >= POWER = 0.9 at that effect (``t_power``, ``replications_for_power``;
``median_power``, ``median_replications`` for order statistics). When the effect measured
here is smaller than the design's, the claim may be undecided: the interval says by how much.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats

from userdp.reference._checks import check_finite_array, check_int, check_real

from userdp.audits.engine.report import fmt

__all__ = [
    "HOLDS",
    "FAILS",
    "UNDECIDED",
    "VERDICTS",
    "ERROR",
    "POWER",
    "Interval",
    "exact",
    "mean",
    "normal",
    "ratio",
    "max_normal",
    "median",
    "refutable",
    "all_of",
    "any_of",
    "claim",
    "decide",
    "check_claims",
    "t_power",
    "replications_for_power",
    "median_bounds_index",
    "median_power",
    "median_replications",
]

HOLDS, FAILS, UNDECIDED = "holds", "fails", "undecided"
VERDICTS = (HOLDS, FAILS, UNDECIDED)
ERROR = 1e-4  # per reproduction: Pr[some decided verdict is wrong] <= ERROR
POWER = 0.9  # the design's probability of deciding "holds" at the paper's effect
METHODS = ("exact", "t", "normal", "ratio (log, delta method)", "order statistics", "lower confidence bound")
MAX_N = 10**7  # replications: the supported range of the power searches
_INF = math.inf


# ------------------------------------------------------------------ argument checks
def _text(x, name: str) -> str:
    if not isinstance(x, str) or not x.strip():
        raise TypeError(f"{name} must be a non-empty string, got {type(x).__name__} {x!r}")
    return x


def _finite(x, name: str) -> float:
    v = check_real(x, name)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v!r}")
    return v


def _region(above, below) -> tuple[float, float]:
    """The claim's region (above, below); None for an unbounded side."""
    a = -_INF if above is None else check_real(above, "above")
    b = _INF if below is None else check_real(below, "below")
    if math.isnan(a) or a == _INF:
        raise ValueError(f"above must be None or a number < +inf, got {above!r}")
    if math.isnan(b) or b == -_INF:
        raise ValueError(f"below must be None or a number > -inf, got {below!r}")
    if not a < b:
        raise ValueError(f"the claim's region must be non-empty: above < below, got above = {a!r}, below = {b!r}")
    if a == -_INF and b == _INF:
        raise ValueError("a comparison needs a region: give above, below or both (both None says nothing)")
    return a, b


def _sides(a: float, b: float) -> int:
    return int(a > -_INF) + int(b < _INF)


def _alpha(alpha, name: str = "alpha", hi: float = 0.5) -> float:
    v = check_real(alpha, name)
    if not 0.0 < v < hi:
        raise ValueError(f"{name} must be in (0, {hi:g}), got {v!r}")
    return v


def _optional_n(n) -> int | None:
    return None if n is None else check_int(n, "n", lo=1, hi=MAX_N)


# ------------------------------------------------------------------ intervals
@dataclass(frozen=True)
class Interval:
    """A confidence interval [low, high] for theta, the claim's region (above, below) and
    the verdict the rule gives (module docstring). Built by the comparisons below."""

    what: str
    estimate: float
    low: float
    high: float
    above: float = -_INF  # the claim: above < theta < below (closed for exact and lower bounds)
    below: float = _INF
    method: str = "exact"
    level: float | None = None  # two-sided level 1 - 2 alpha (one-sided 1 - alpha for a lower bound)
    n: int | None = None  # replications behind the interval
    strict: bool = False  # exact only: the region is open

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if not self.above < self.below:
            raise ValueError(
                f"the claim's region must be non-empty: above = {self.above!r} < below = {self.below!r} is violated"
            )
        if math.isnan(self.low) or math.isnan(self.high) or self.low > self.high:
            raise ValueError(f"{self.what}: interval [{self.low!r}, {self.high!r}] must have low <= high, no NaN")

    @property
    def closed(self) -> bool:
        return (self.method == "exact" and not self.strict) or self.method == "lower confidence bound"

    @property
    def verdict(self) -> str:
        a, b, lo, hi = self.above, self.below, self.low, self.high
        if self.method == "exact":
            inside = (a <= lo <= b) if self.closed else (a < lo < b)
            return HOLDS if inside else FAILS
        if hi < a or lo > b:
            return FAILS
        if a < lo and hi < b:
            return HOLDS
        return UNDECIDED

    def region_text(self) -> str:
        a, b = self.above, self.below
        lt, gt = ("<=", ">=") if self.closed else ("<", ">")
        if a == -_INF:
            return f"{lt} {fmt(b)}"
        if b == _INF:
            return f"{gt} {fmt(a)}"
        return f"in [{fmt(a)}, {fmt(b)}]" if self.closed else f"in ({fmt(a)}, {fmt(b)})"

    def text(self) -> str:
        if self.method == "exact":
            where = f"= {fmt(self.estimate)} (exact)"
        else:
            how = self.method + (f", n = {self.n}" if self.n is not None else "")
            where = f"= {fmt(self.estimate)}, interval [{fmt(self.low)}, {fmt(self.high)}] ({how})"
        return f"{self.what} {where}; claim {self.region_text()}: {self.verdict}"

    def margin(self) -> float:
        """How far the interval is from the region's boundary, in widths of the interval (for
        a point: the plain distance); negative when it crosses; the CLI shows the closest first."""
        gap = min(self.low - self.above, self.below - self.high)
        width = self.high - self.low
        return gap / width if math.isfinite(width) and width > 0 else gap

    def to_dict(self) -> dict:
        return {
            "what": self.what,
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "region": {"above": self.above, "below": self.below, "closed": self.closed},
            "method": self.method,
            "level": self.level,
            "n": self.n,
            "verdict": self.verdict,
            "text": self.text(),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Interval":
        """The inverse of ``to_dict`` (an exact interval's openness is read from ``closed``)."""
        r = d["region"]
        return cls(
            d["what"],
            d["estimate"],
            d["low"],
            d["high"],
            r["above"],
            r["below"],
            d["method"],
            d["level"],
            d["n"],
            strict=d["method"] == "exact" and not r["closed"],
        )


@dataclass(frozen=True)
class _Comparison:
    """A comparison not yet built: ``build(alpha)`` gives its Interval with each end at
    one-sided level alpha; ``units``: how many such ends its verdict can rely on (0 when exact)."""

    units: int
    build: Callable[[float], Interval]


@dataclass(frozen=True)
class _Group:
    """Comparisons combined by "all" (every one must hold) or "any" (one suffices)."""

    combine: str
    parts: tuple

    @property
    def units(self) -> int:
        return sum(c.units for c in self.parts)


def _parts(parts, name: str) -> tuple:
    if isinstance(parts, (_Comparison, _Group)):
        return (parts,)
    if isinstance(parts, (str, bytes)) or not hasattr(parts, "__iter__"):
        raise TypeError(
            f"{name} must be a comparison (exact, mean, normal, ratio, max_normal, median, refutable), "
            f"a group (all_of, any_of) or a sequence of them, got {type(parts).__name__}"
        )
    out = tuple(parts)
    if not out or not all(isinstance(c, (_Comparison, _Group)) for c in out):
        raise TypeError(
            f"{name} must hold one or more comparisons or groups (exact, mean, normal, ratio, "
            f"max_normal, median, refutable, all_of, any_of), got {out!r:.200}"
        )
    return out


def all_of(parts) -> _Group:
    """Holds iff every part holds; fails iff some part fails."""
    return _Group("all", _parts(parts, "parts"))


def any_of(parts) -> _Group:
    """Holds iff some part holds; fails iff every part fails."""
    return _Group("any", _parts(parts, "parts"))


def exact(what: str, value, *, above=None, below=None, strict: bool = False) -> _Comparison:
    """A closed form or deterministic value v: holds iff above <= v <= below (``strict``: <)."""
    what = _text(what, "what")
    a, b = _region(above, below)
    v = check_real(value, "value")
    if math.isnan(v):
        raise ValueError(f"value must not be NaN ({what})")
    if not isinstance(strict, (bool, np.bool_)):
        raise TypeError(f"strict must be a bool, got {type(strict).__name__} {strict!r}")
    return _Comparison(0, lambda alpha: Interval(what, v, v, v, a, b, "exact", strict=bool(strict)))


def mean(what: str, samples, *, above=None, below=None) -> _Comparison:
    """Student t interval for the mean of n i.i.d. replications: mean +- t_{n-1}(alpha) s / sqrt(n)
    (one replication has no spread: the whole line, so undecided)."""
    what = _text(what, "what")
    a, b = _region(above, below)
    x = check_finite_array(samples, "samples", ndim=(1,))
    if x.size < 1:
        raise ValueError("samples must hold >= 1 replication, got none")

    def build(alpha):
        m = float(x.mean())
        if x.size == 1:
            return Interval(what, m, -_INF, _INF, a, b, "t", 1 - 2 * alpha, 1)
        h = float(stats.t.isf(alpha, x.size - 1)) * float(x.std(ddof=1) / math.sqrt(x.size))
        return Interval(what, m, m - h, m + h, a, b, "t", 1 - 2 * alpha, int(x.size))

    return _Comparison(_sides(a, b), build)


def normal(what: str, estimate, se, *, above=None, below=None, n=None) -> _Comparison:
    """estimate +- z(alpha) se, for a mean over >= 1,000 i.i.d. draws (central limit theorem)."""
    what = _text(what, "what")
    a, b = _region(above, below)
    m, s, n = _finite(estimate, "estimate"), _finite(se, "se"), _optional_n(n)
    if s < 0:
        raise ValueError(f"se must be >= 0, got {s!r}")

    def build(alpha):
        h = float(stats.norm.isf(alpha)) * s
        return Interval(what, m, m - h, m + h, a, b, "normal", 1 - 2 * alpha, n)

    return _Comparison(_sides(a, b), build)


def ratio(what: str, num, num_se, den, den_se, *, above=None, below=None, n=None) -> _Comparison:
    """E num / E den for two means > 0: exp(log(num/den) +- z(alpha) s), s = sqrt((num_se/num)^2 +
    (den_se/den)^2) (delta method on the log scale; conservative for positively correlated means)."""
    what = _text(what, "what")
    a, b = _region(above, below)
    p, q, n = _finite(num, "num"), _finite(den, "den"), _optional_n(n)
    sp, sq = _finite(num_se, "num_se"), _finite(den_se, "den_se")
    for v, name in ((p, "num"), (q, "den")):
        if v <= 0:
            raise ValueError(f"{name} must be > 0 (a mean of squared errors), got {v!r}")
    for v, name in ((sp, "num_se"), (sq, "den_se")):
        if v < 0:
            raise ValueError(f"{name} must be >= 0, got {v!r}")

    def build(alpha):
        r, s = p / q, math.hypot(sp / p, sq / q)
        z = float(stats.norm.isf(alpha))
        return Interval(
            what, r, r * math.exp(-z * s), r * math.exp(z * s), a, b, "ratio (log, delta method)", 1 - 2 * alpha, n
        )

    return _Comparison(_sides(a, b), build)


def max_normal(what: str, estimates, ses, *, above=None, below=None) -> _Comparison:
    """The largest of m quantities theta_c, each estimated as estimates[c] +- z(alpha) ses[c]
    (as ``normal``): [max_c low_c, max_c high_c], wrong only if some cell's interval is, so it
    spends m times the units of one interval."""
    what = _text(what, "what")
    a, b = _region(above, below)
    est = check_finite_array(estimates, "estimates", ndim=(1,))
    se = check_finite_array(ses, "ses", ndim=(1,))
    if est.size < 1:
        raise ValueError("estimates must hold >= 1 value")
    if se.shape != est.shape:
        raise ValueError(f"ses must have the shape of estimates {est.shape}, got {se.shape}")
    if np.any(se < 0):
        raise ValueError(f"ses must be >= 0, got {se.min()!r}")

    def build(alpha):
        h = float(stats.norm.isf(alpha)) * se
        return Interval(
            what,
            float(est.max()),
            float((est - h).max()),
            float((est + h).max()),
            a,
            b,
            "normal",
            1 - 2 * alpha,
            int(est.size),
        )

    return _Comparison(int(est.size) * _sides(a, b), build)


def median_bounds_index(n, alpha) -> int:
    """The largest j with P(Binomial(n, 1/2) <= j - 1) <= alpha (0 if none): X_(j) and
    X_(n+1-j) of n i.i.d. values bound their median, each side failing with probability
    <= alpha (at most j - 1 values <= the median happens with at most that probability,
    since each is <= it with probability >= 1/2)."""
    n, alpha = check_int(n, "n", lo=1, hi=MAX_N), _alpha(alpha)
    j = int(stats.binom.ppf(alpha, n, 0.5))  # smallest k with cdf(k) >= alpha
    while j >= 0 and stats.binom.cdf(j, n, 0.5) > alpha:
        j -= 1
    return j + 1


def median(what: str, samples, *, above=None, below=None) -> _Comparison:
    """Distribution-free interval for the median of n i.i.d. replications:
    [X_(j), X_(n+1-j)], j = ``median_bounds_index(n, alpha)`` (the whole line when j = 0)."""
    what = _text(what, "what")
    a, b = _region(above, below)
    x = np.sort(check_finite_array(samples, "samples", ndim=(1,)))
    if x.size < 1:
        raise ValueError("samples must hold >= 1 replication")

    def build(alpha):
        j = median_bounds_index(int(x.size), alpha)
        lo, hi = (float(x[j - 1]), float(x[x.size - j])) if j >= 1 else (-_INF, _INF)
        return Interval(what, float(np.median(x)), lo, hi, a, b, "order statistics", 1 - 2 * alpha, int(x.size))

    return _Comparison(_sides(a, b), build)


def refutable(what: str, lower_bound, *, below) -> _Comparison:
    """A claim theta <= below against a one-sided lower confidence bound at level 1 - alpha,
    ``lower_bound(alpha)`` (e.g. an audit's eps_lb): fails iff the bound exceeds ``below``,
    otherwise undecided (a lower bound can refute an upper claim, never confirm it)."""
    what = _text(what, "what")
    if not callable(lower_bound):
        raise TypeError(f"lower_bound must be a callable alpha -> bound, got {type(lower_bound).__name__}")
    if below is None:
        raise ValueError("below must be the claimed upper value (a number), got None")
    a, b = _region(None, below)

    def build(alpha):
        lb = float(lower_bound(alpha))
        if math.isnan(lb):
            raise ValueError(f"{what}: the lower bound is NaN")
        return Interval(what, lb, lb, _INF, a, b, "lower confidence bound", 1 - alpha)

    return _Comparison(1, build)


# ------------------------------------------------------------------ claims
@dataclass(frozen=True)
class _Claim:
    statement: str
    group: _Group
    evidence: str


def claim(statement: str, comparisons, *, combine: str = "all", evidence: str = "") -> _Claim:
    """A claim: its statement, its comparisons (one, a group, or a sequence of them combined
    by ``combine``: "all" = every one must hold, "any" = one suffices), and free text
    evidence (what the intervals do not show)."""
    statement = _text(statement, "statement")
    if combine not in ("all", "any"):
        raise ValueError(f"combine must be 'all' or 'any', got {combine!r}")
    if not isinstance(evidence, str):
        raise TypeError(f"evidence must be a string, got {type(evidence).__name__}")
    return _Claim(statement, _Group(combine, _parts(comparisons, "comparisons")), evidence)


def _combine(verdicts: list[str], combine: str) -> str:
    if combine == "all":
        return FAILS if FAILS in verdicts else HOLDS if all(v == HOLDS for v in verdicts) else UNDECIDED
    return HOLDS if HOLDS in verdicts else FAILS if all(v == FAILS for v in verdicts) else UNDECIDED


def _evaluate(node, alpha: float, out: list) -> str:
    """The verdict of a comparison or group; every Interval built is appended to ``out``."""
    if isinstance(node, _Comparison):
        i = node.build(alpha)
        out.append(i)
        return i.verdict
    return _combine([_evaluate(p, alpha, out) for p in node.parts], node.combine)


def _structure(node, numbers) -> str:
    if isinstance(node, _Comparison):
        return str(next(numbers))
    return f"{node.combine}({', '.join(_structure(p, numbers) for p in node.parts)})"


def decide(claims, *, error=ERROR) -> list[dict]:
    """Every claim's verdict, every interval's ends at one-sided level alpha = error / k
    (k = the units over all ``claims``: Bonferroni), as the dicts a reproduction returns:
    statement, verdict, holds (True / False / None when undecided), evidence, combine (how
    the intervals, numbered in order, combine), alpha, error, interval_ends (= k), intervals."""
    error = _alpha(error, "error", hi=1.0)
    if isinstance(claims, (str, bytes)) or not hasattr(claims, "__iter__"):
        raise TypeError(f"claims must be a sequence of verdicts.claim(...), got {type(claims).__name__}")
    claims = list(claims)
    if not all(isinstance(c, _Claim) for c in claims):
        raise TypeError("claims must be built with verdicts.claim(...)")
    k = sum(c.group.units for c in claims)
    alpha = error / k if k else error
    out = []
    for c in claims:
        intervals: list[Interval] = []
        verdict = _evaluate(c.group, alpha, intervals)
        out.append(
            {
                "statement": c.statement,
                "verdict": verdict,
                "holds": {HOLDS: True, FAILS: False, UNDECIDED: None}[verdict],
                "evidence": c.evidence,
                "combine": _structure(c.group, iter(range(len(intervals)))),
                "alpha": alpha if c.group.units else None,
                "error": error,
                "interval_ends": k,
                "intervals": [i.to_dict() for i in intervals],
            }
        )
    return out


def check_claims(claims, name: str = "reproduction") -> None:
    """Refuse claims without a verdict in VERDICTS and their intervals (build them with ``decide``)."""
    name = _text(name, "name")
    if not isinstance(claims, list):
        raise TypeError(f"claims of {name} must be a list, got {type(claims).__name__}")
    for i, c in enumerate(claims):
        if (
            not isinstance(c, dict)
            or c.get("verdict") not in VERDICTS
            or not isinstance(c.get("intervals"), list)
            or not c["intervals"]
        ):
            raise TypeError(
                f"claims of {name}: claim {i} must be a dict with a verdict in {VERDICTS} and its "
                f"intervals (build claims with userdp.audits.engine.verdicts.decide), got {c!r:.200}"
            )


# ------------------------------------------------------------------ power
def t_power(effect_over_sd, n, alpha) -> float:
    """Pr[the t interval's lower end > 0] when the replications' mean is ``effect_over_sd``
    standard deviations above 0 (n i.i.d. normal replications): the noncentral t, df n - 1,
    noncentrality effect sqrt(n), above t_{n-1}(alpha)."""
    d, n, alpha = _finite(effect_over_sd, "effect_over_sd"), check_int(n, "n", lo=2, hi=MAX_N), _alpha(alpha)
    return float(stats.nct.sf(stats.t.isf(alpha, n - 1), n - 1, d * math.sqrt(n)))


def replications_for_power(effect_over_sd, alpha, power=POWER, n_max=100_000) -> int:
    """The smallest n >= 2 with ``t_power(effect_over_sd, n, alpha) >= power``."""
    d, alpha = _finite(effect_over_sd, "effect_over_sd"), _alpha(alpha)
    if not d > 0:
        raise ValueError(f"effect_over_sd must be > 0, got {d!r}")
    power, n_max = _alpha(power, "power", hi=1.0), check_int(n_max, "n_max", lo=2, hi=MAX_N)
    lo = 2  # power increases with n: bisect on [2, n_max]
    if t_power(d, n_max, alpha) < power:
        raise ValueError(f"no n <= n_max = {n_max} reaches power {power} at effect_over_sd {d}")
    hi = n_max
    while lo < hi:
        mid = (lo + hi) // 2
        if t_power(d, mid, alpha) >= power:
            hi = mid
        else:
            lo = mid + 1
    return lo


def median_power(p_below, n, alpha) -> float:
    """Pr[the median's lower bound X_(j) exceeds t] when Pr[X < t] = ``p_below``: at most
    j - 1 of the n values below t, Pr[Binomial(n, p_below) <= j - 1] (0 when j = 0)."""
    p = check_real(p_below, "p_below")
    if not 0 <= p <= 1:
        raise ValueError(f"p_below must be in [0, 1], got {p!r}")
    j = median_bounds_index(n, alpha)
    return float(stats.binom.cdf(j - 1, int(n), p)) if j >= 1 else 0.0


def median_replications(p_below, alpha, power=POWER, n_max=200_000) -> int:
    """The smallest n with ``median_power(p_below, n, alpha) >= power`` (p_below < 1/2). The
    power is a sawtooth in n (binomial steps), so every n is scanned in order."""
    p, alpha = check_real(p_below, "p_below"), _alpha(alpha)
    if not 0 <= p < 0.5:
        raise ValueError(f"p_below must be in [0, 1/2) (the median above the threshold), got {p!r}")
    power, n_max = _alpha(power, "power", hi=1.0), check_int(n_max, "n_max", lo=1, hi=MAX_N)
    for start in range(1, n_max + 1, 4096):
        n = np.arange(start, min(start + 4096, n_max + 1))
        k = stats.binom.ppf(alpha, n, 0.5)  # smallest k with cdf(k) >= alpha
        k = np.where(stats.binom.cdf(k, n, 0.5) > alpha, k - 1, k)  # largest k with cdf(k) <= alpha: j - 1
        ok = np.flatnonzero(np.where(k >= 0, stats.binom.cdf(k, n, p), 0.0) >= power)
        if ok.size:
            return int(n[ok[0]])
    raise ValueError(f"no n <= n_max = {n_max} reaches power {power} at p_below {p}")
