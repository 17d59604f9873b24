"""The three-valued verdict of reproduced claims (``audits/engine/verdicts.py``).

Oracles: closed forms (Student t with 1 degree of freedom is Cauchy, so t_1(alpha) =
tan(pi (1/2 - alpha)); the normal quantile z(0.025) = 1.959963984540054; binomial tails
summed with math.comb), hand-computed intervals, and simulations with fixed seeds whose
false-failure probabilities are stated at the line (each <= 1e-5). Every rule has a
planted counterpart: data that contradicts a claim must give "fails", data that straddles
its boundary "undecided", never "fails".
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from userdp.audits.engine import verdicts as V


def _one(comparison, error=0.05):
    """The single interval of a one-comparison claim, decided at ``error``."""
    (c,) = V.decide([V.claim("c", comparison)], error=error)
    assert len(c["intervals"]) == 1
    return c, c["intervals"][0]


# ------------------------------------------------------------------ the rule
def test_exact_is_always_decided_closed_unless_strict():
    assert _one(V.exact("v", 1.0, above=0.0))[0]["verdict"] == V.HOLDS
    assert _one(V.exact("v", -1.0, above=0.0))[0]["verdict"] == V.FAILS  # planted: contradicts
    assert _one(V.exact("v", 0.0, above=0.0))[0]["verdict"] == V.HOLDS  # closed region [0, inf)
    assert _one(V.exact("v", 0.0, above=0.0, strict=True))[0]["verdict"] == V.FAILS
    c, i = _one(V.exact("v", 2.0, above=0.0, below=1.0))
    assert (c["verdict"], c["holds"], i["low"], i["high"], c["alpha"]) == (V.FAILS, False, 2.0, 2.0, None)


def test_holds_fails_undecided_on_planted_replications():
    # one comparison at error 0.05: t_3(0.05) = 2.3534; mean 1, s = 0.0913, se 0.0456: [0.89, 1.11]
    c, i = _one(V.mean("d", [1.0, 1.1, 0.9, 1.0], above=0.0))
    assert c["verdict"] == V.HOLDS and c["holds"] is True and 0.85 < i["low"] < i["high"] < 1.15
    c, _ = _one(V.mean("d", [-1.0, -1.1, -0.9, -1.0], above=0.0))  # planted: clearly contradicts
    assert c["verdict"] == V.FAILS and c["holds"] is False
    c, i = _one(V.mean("d", [-1.0, 1.0, -1.0, 1.2], above=0.0))  # planted: straddles 0
    assert c["verdict"] == V.UNDECIDED and c["holds"] is None and i["low"] < 0 < i["high"]
    c, _ = _one(V.mean("d", [5.0], above=0.0))  # one replication: no spread
    assert c["verdict"] == V.UNDECIDED


def test_bounded_region_decides_both_ways():
    assert _one(V.normal("r", 1.0, 0.01, above=0.85, below=1.15))[0]["verdict"] == V.HOLDS
    assert _one(V.normal("r", 1.5, 0.01, above=0.85, below=1.15))[0]["verdict"] == V.FAILS
    assert _one(V.normal("r", 0.5, 0.01, above=0.85, below=1.15))[0]["verdict"] == V.FAILS
    assert _one(V.normal("r", 1.14, 0.01, above=0.85, below=1.15))[0]["verdict"] == V.UNDECIDED


def test_refutable_never_holds():
    assert _one(V.refutable("eps", lambda a: 1.3, below=1.0))[0]["verdict"] == V.FAILS  # refuted
    c, i = _one(V.refutable("eps", lambda a: 0.99, below=1.0))
    assert c["verdict"] == V.UNDECIDED and i["high"] == math.inf
    assert _one(V.refutable("eps", lambda a: 1.0, below=1.0))[0]["verdict"] == V.UNDECIDED  # closed: <= 1
    seen = []
    V.decide([V.claim("c", V.refutable("eps", lambda a: seen.append(a) or 0.0, below=1.0))], error=0.01)
    assert seen == [0.01]  # the bound is asked at the run's alpha


def test_groups_combine():
    h, f, u = V.exact("h", 1.0, above=0.0), V.exact("f", -1.0, above=0.0), V.mean("u", [-1.0, 1.0], above=0.0)

    def verdict(*parts, combine="all"):
        return V.decide([V.claim("c", list(parts), combine=combine)])[0]["verdict"]

    assert verdict(h, h) == V.HOLDS and verdict(h, u) == V.UNDECIDED and verdict(h, u, f) == V.FAILS
    assert verdict(f, u, combine="any") == V.UNDECIDED and verdict(f, h, combine="any") == V.HOLDS
    assert verdict(f, f, combine="any") == V.FAILS
    out = V.decide([V.claim("c", [V.any_of([f, h]), V.all_of([h, u])])])[0]
    assert out["verdict"] == V.UNDECIDED and out["combine"] == "all(any(0, 1), all(2, 3))"
    assert [i["verdict"] for i in out["intervals"]] == [V.FAILS, V.HOLDS, V.HOLDS, V.UNDECIDED]


def test_decide_spends_the_error_over_every_interval_end():
    # units: one-sided mean 1, bounded normal 2, max of 3 one-sided 3, exact 0: alpha = 0.06 / 6
    claims = [
        V.claim("a", [V.mean("m", [1.0, 2.0, 3.0], above=0.0), V.exact("e", 1.0, above=0.0)]),
        V.claim("b", V.normal("n", 1.0, 0.1, above=0.5, below=1.5)),
        V.claim("c", V.max_normal("x", [1.0, 2.0, 3.0], [0.1, 0.1, 0.1], above=0.0)),
    ]
    out = V.decide(claims, error=0.06)
    assert {c["alpha"] for c in out} == {0.01} and {c["interval_ends"] for c in out} == {6}
    i = out[1]["intervals"][0]
    assert i["high"] - 1.0 == pytest.approx(0.1 * stats.norm.isf(0.01), rel=1e-12) and i["level"] == pytest.approx(0.98)
    assert V.decide([V.claim("e", V.exact("e", 1.0, above=0.0))])[0]["alpha"] is None  # nothing to spend


# ------------------------------------------------------------------ the intervals, against closed forms
def test_t_interval_with_two_replications_is_cauchy():
    # n = 2: t_1(alpha) = tan(pi (1/2 - alpha)); mean 2, s = sqrt(2), se = 1
    alpha = 0.05
    _, i = _one(V.mean("m", [1.0, 3.0], above=0.0), error=alpha)
    h = math.tan(math.pi * (0.5 - alpha))
    assert (i["low"], i["high"]) == pytest.approx((2 - h, 2 + h), rel=1e-12) and i["n"] == 2 and i["method"] == "t"


def test_normal_and_ratio_intervals_by_hand():
    z = 1.959963984540054  # z(0.025)
    _, i = _one(V.normal("n", 3.0, 0.5, above=0.0), error=0.025)
    assert (i["low"], i["high"]) == pytest.approx((3 - 0.5 * z, 3 + 0.5 * z), rel=1e-12)
    # ratio 4 / 2 = 2; log-scale se sqrt((0.4/4)^2 + (0.1/2)^2) = sqrt(0.0125)
    _, i = _one(V.ratio("r", 4.0, 0.4, 2.0, 0.1, above=1.0), error=0.025)
    s = math.sqrt(0.0125)
    assert (i["estimate"], i["low"], i["high"]) == pytest.approx(
        (2.0, 2 * math.exp(-z * s), 2 * math.exp(z * s)), rel=1e-12
    )


def test_max_normal_by_hand():
    z = 1.959963984540054
    # cells (1 +- z), (3 +- 2z), (2 +- 0): [max lows, max highs] = [max(1 - z, 3 - 2z, 2), max(1 + z, 3 + 2z, 2)]
    (c,) = V.decide([V.claim("c", V.max_normal("x", [1.0, 3.0, 2.0], [1.0, 2.0, 0.0], above=2.5))], error=0.075)
    i = c["intervals"][0]  # 3 units: alpha = 0.025
    assert (i["estimate"], i["low"], i["high"]) == pytest.approx((3.0, 2.0, 3 + 2 * z), rel=1e-12)
    assert c["verdict"] == V.UNDECIDED  # 2.0 < 2.5 < 6.9


def _binom_half_cdf(k: int, n: int) -> float:
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


@pytest.mark.parametrize("n", [1, 2, 5, 9, 10, 20, 37, 60])
@pytest.mark.parametrize("alpha", [0.1, 0.025, 1e-3, 1e-5])
def test_median_bounds_index_by_brute_force(n, alpha):
    j = V.median_bounds_index(n, alpha)
    ok = [jj for jj in range(1, n + 1) if _binom_half_cdf(jj - 1, n) <= alpha]
    assert j == (max(ok) if ok else 0)


def test_median_interval_is_the_order_statistics():
    x = np.arange(1.0, 21.0)[::-1]  # 20 values, unsorted
    j = V.median_bounds_index(20, 0.025)  # 6: P(Bin(20, 1/2) <= 5) = 0.0207
    assert j == 6
    _, i = _one(V.median("m", x, above=3.0), error=0.025)
    assert (i["estimate"], i["low"], i["high"], i["verdict"]) == (10.5, 6.0, 15.0, V.HOLDS)
    assert _one(V.median("m", x, above=8.0), error=0.025)[0]["verdict"] == V.UNDECIDED
    assert _one(V.median("m", x, above=16.0), error=0.025)[0]["verdict"] == V.FAILS
    _, i = _one(V.median("m", [1.0, 2.0], above=0.0), error=0.1)  # too few: the whole line
    assert (i["low"], i["high"]) == (-math.inf, math.inf)


# ------------------------------------------------------------------ error rates, simulated
def test_t_rule_decides_wrongly_at_exactly_alpha():
    # theta = 0 on the boundary of the claim theta > 0 (so "holds" is wrong), normal
    # replications of n = 3: Pr["holds"] = alpha exactly for the t interval. 4,000 runs at
    # alpha = 0.1: count ~ Binomial(4000, 0.1), sd 19; |count - 400| <= 95 (5 sd) fails
    # falsely with probability 5.7e-7. Planted: a z interval in its place holds with
    # probability Pr[T_2 > 1.2816] = 0.184, ~737 times (17 sd beyond the tolerance).
    rng = np.random.default_rng(20240)
    x = rng.standard_normal((4000, 3))
    holds = sum(_one(V.mean("d", row, above=0.0), error=0.1)[0]["verdict"] == V.HOLDS for row in x)
    assert abs(holds - 400) <= 95
    z_holds = np.sum(x.mean(1) - stats.norm.isf(0.1) * x.std(1, ddof=1) / math.sqrt(3) > 0)
    assert z_holds - 400 > 95  # the planted z interval is caught


def test_t_power_matches_simulation():
    # Pr[lower end > 0] for n = 8 replications N(0.8, 1) at alpha = 0.01, simulated 2 x 10^4
    # times with the t quantile (not the noncentral t): binomial sd <= 0.0036; tolerance
    # 0.02 (5.6 sd, false failure < 3e-8). Planted: the power at n - 1 is off by > 0.05.
    rng = np.random.default_rng(7)
    x = rng.normal(0.8, 1.0, (20_000, 8))
    sim = np.mean(x.mean(1) - stats.t.isf(0.01, 7) * x.std(1, ddof=1) / math.sqrt(8) > 0)
    assert abs(V.t_power(0.8, 8, 0.01) - sim) <= 0.02
    assert abs(V.t_power(0.8, 7, 0.01) - sim) > 0.05


def test_replications_for_power_is_the_smallest():
    for d, alpha in ((1.5, 1e-4 / 12), (0.5, 0.01), (3.0, 1e-6)):
        n = V.replications_for_power(d, alpha)
        assert V.t_power(d, n, alpha) >= V.POWER > V.t_power(d, n - 1, alpha) if n > 2 else True
    # normal approximation as a sanity bound: n ~ ((z_a + z_0.1) / d)^2, slightly more for t
    n = V.replications_for_power(0.5, 0.01)
    assert ((stats.norm.isf(0.01) + stats.norm.isf(0.1)) / 0.5) ** 2 <= n <= 1.1 * ((2.326 + 1.282) / 0.5) ** 2 + 3


def test_median_power_matches_binomial_and_simulation():
    # n = 101, alpha = 0.01: j by brute force; power = Pr[Binomial(101, 0.3) <= j - 1] summed by hand
    n, alpha, p = 101, 0.01, 0.3
    j = max(jj for jj in range(1, n + 1) if _binom_half_cdf(jj - 1, n) <= alpha)
    by_hand = sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(j))
    assert V.median_power(p, n, alpha) == pytest.approx(by_hand, rel=1e-9)
    # simulated: X ~ N(0.5244, 1) has Pr[X < 0] = 0.3; 2 x 10^4 runs of "X_(j) > 0"; sd <= 0.0036, tol 0.02
    rng = np.random.default_rng(11)
    x = np.sort(rng.normal(stats.norm.isf(0.3), 1.0, (20_000, n)), axis=1)
    assert abs(np.mean(x[:, j - 1] > 0) - by_hand) <= 0.02
    m = V.median_replications(0.3, alpha)
    assert V.median_power(0.3, m, alpha) >= V.POWER
    assert all(V.median_power(0.3, k, alpha) < V.POWER for k in range(1, m))


# ------------------------------------------------------------------ refusals
def test_claims_must_carry_a_verdict():
    with pytest.raises(TypeError, match="verdict"):
        V.check_claims([{"statement": "s", "holds": True, "evidence": ""}], "demo")  # the old form
    with pytest.raises(TypeError, match="verdict"):
        V.check_claims([{"statement": "s", "verdict": "maybe", "intervals": []}], "demo")
    V.check_claims(V.decide([V.claim("s", V.exact("v", 1.0, above=0.0))]), "demo")
    with pytest.raises(ValueError, match="region"):
        V.exact("v", 1.0)  # a comparison needs a claim
    with pytest.raises(ValueError, match="above < below"):
        V.normal("n", 1.0, 0.1, above=2.0, below=1.0)
    with pytest.raises(TypeError, match="comparisons"):
        V.claim("s", [])
