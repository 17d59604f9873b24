"""Privacy claims: what a mechanism promises, under its neighbouring relation.

A claim is plain data. The audit compares an empirical lower bound with it; the
property suites compare sensitivities with the noise the claim implies.

- ``PureDP(epsilon)``: Pr[M(D) in S] <= e^eps Pr[M(D') in S].
- ``ApproxDP(epsilon, delta)``: Pr[M(D) in S] <= e^eps Pr[M(D') in S] + delta.
- ``RenyiDP(alpha, rho, delta)``: D_alpha(M(D) || M(D')) <= rho; audited as the
  (eps, delta) guarantee it implies at the stated ``delta`` (Canonne, Kamath, Steinke
  2020, Prop. 12; see ``mechanisms.rdp_to_dp``).
- ``PersonalizedDP(epsilons)``: record i is protected at level epsilons[i] under the
  replace-record relation (Acharya et al. 2024, Def. 2.1); an audit of record i's
  neighbours compares with ``for_record(i)``.
- ``GaussianDP(mu, delta)``: mu-GDP [DRS22, Def. 2.6]; audited through its trade-off
  curve, and, at the stated ``delta``, through the exact (eps, delta) it implies.
- ``Claims(primary, gdp)``: a paper's own claim (pure, approx or Renyi) together with the
  exact mu-GDP the mechanism also satisfies (``gdp``); an audit checks both.

[DRS22] J. Dong, A. Roth, W. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B
84(1), 2022, arXiv:1905.02383v3: Def. 2.1 (trade-off function), Def. 2.6 (mu-GDP),
Thm 2.7 (Gaussian mechanism), Cor. 2.13 (the (eps, delta) profile), Cor. 3.3 (composition).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import erf, erfcx, ndtr, ndtri

from ._checks import (
    MAGNITUDE,
    check_delta,
    check_epsilon,
    check_finite_array,
    check_int,
    check_nonnegative,
    check_positive,
    check_real,
)

__all__ = ["Claim", "PureDP", "ApproxDP", "RenyiDP", "PersonalizedDP", "GaussianDP", "Claims", "DEFAULT_GDP_DELTA"]


@dataclass(frozen=True)
class PureDP:
    epsilon: float
    kind: str = field(default="pure", init=False)

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    def as_eps_delta(self) -> tuple[float, float]:
        return self.epsilon, 0.0

    def params(self) -> dict:
        return {"epsilon": self.epsilon}


@dataclass(frozen=True)
class ApproxDP:
    epsilon: float
    delta: float
    kind: str = field(default="approx", init=False)

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))

    def as_eps_delta(self) -> tuple[float, float]:
        return self.epsilon, self.delta

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True)
class RenyiDP:
    alpha: float
    rho: float
    delta: float
    kind: str = field(default="renyi", init=False)

    def __post_init__(self):
        a = check_positive(self.alpha, "alpha")
        if a <= 1.0:
            raise ValueError(f"alpha (Renyi order) must be > 1, got {a!r}")
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "rho", check_positive(self.rho, "rho"))
        d = check_delta(self.delta)
        if d == 0.0:
            raise ValueError("delta must be > 0 to convert a Renyi claim to (eps, delta), got 0.0")
        object.__setattr__(self, "delta", d)

    def as_eps_delta(self) -> tuple[float, float]:
        from .mechanisms import rdp_to_dp  # Canonne-Kamath-Steinke 2020, Prop. 12

        return rdp_to_dp([self.alpha], [self.rho], self.delta), self.delta

    def params(self) -> dict:
        return {"alpha": self.alpha, "rho": self.rho, "delta": self.delta}


@dataclass(frozen=True)
class PersonalizedDP:
    epsilons: tuple[float, ...]
    kind: str = field(default="personalized", init=False)

    def __post_init__(self):
        e = check_finite_array(self.epsilons, "epsilons", ndim=(1,))
        if e.size == 0:
            raise ValueError("epsilons must be non-empty")
        for i in (int(np.argmin(e)), int(np.argmax(e))):  # a range: the extremes decide
            check_epsilon(float(e[i]), f"epsilons[{i}]")
        object.__setattr__(self, "epsilons", tuple(float(v) for v in e))

    def for_record(self, i: int) -> PureDP:
        return PureDP(self.epsilons[check_int(i, "i (record index)", lo=0, hi=len(self.epsilons) - 1)])

    def as_eps_delta(self) -> tuple[float, float]:
        # The weakest record's guarantee bounds every record's.
        return max(self.epsilons), 0.0

    def params(self) -> dict:
        return {"epsilons": list(self.epsilons)}


# ------------------------------------------------------------------ Gaussian DP
DEFAULT_GDP_DELTA = 1e-5  # the delta of the reference's (eps, delta) claims (control.gaussian, Epasto ERM)

_U = 2.0**-52  # unit roundoff of a double
_SQRT_HALF = math.sqrt(0.5)
_BRACKET_STEPS = 400  # doublings when bracketing a: 2^400 spans any mu in [1e-50, 1e50]
MAX_ACCOUNTING_EPSILON = 1e300  # delta_at accepts any eps up to this (an accounting query, not a claim)


_LOG_UNDERFLOW = 800.0  # e^-800 is below the smallest positive double (4.9e-324 = e^-744.4)
_CANCELLATION = 1e-4  # _profile integrates E1 - E2 when it is below this share of E1 + E2


def _erfcx_gap(x: float, h: float) -> tuple[float, float]:
    """erfcx(x) - erfcx(x + h) for x >= 0, h > 0, and quad's relative error estimate.

    erfcx(x) = (2/sqrt pi) int_0^inf e^{-t^2 - 2xt} dt, so the gap is the integral of the
    positive e^{-t^2 - 2xt} (1 - e^{-2ht}): no cancellation, however small h is. The
    substitution t = c s, c = 1/(1 + 2x), keeps the integrand's width near 1 for every x.
    """
    c = 1.0 / (1.0 + 2.0 * x)

    def f(s: float) -> float:
        t = c * s
        return math.exp(-t * t - 2.0 * x * t) * -math.expm1(-2.0 * h * t)

    v, err = quad(f, 0.0, math.inf, epsabs=0.0, epsrel=1e-13, limit=200)
    scale = 2.0 / math.sqrt(math.pi) * c
    return scale * v, (err / v if v > 0 else math.inf)


def _profile(a: float, mu: float) -> tuple[float, float]:
    """(log delta, log of an upper bound on delta) of mu-GDP at eps = mu (mu/2 - a), a <= mu/2.

    [DRS22, Cor. 2.13]: delta(eps) = Phi(a) - e^eps Phi(b), a = mu/2 - eps/mu, b = a - mu.
    Parametrising by a rather than eps is what keeps large mu exact: eps = mu^2/2 - mu a is
    never subtracted back. Two forms, each free of overflow and of catastrophic cancellation:

    a < 0 (eps > mu^2/2, the tail). With erfcx(x) = e^{x^2} erfc(x), Phi(x) =
    erfcx(-x/sqrt 2) e^{-x^2/2} / 2 and eps - b^2/2 = -a^2/2 (expand eps = mu^2/2 - mu a),
    both terms share the factor e^{-a^2/2}, so no e^eps overflows and no mu^2 cancels:

        e^eps Phi(b) = erfcx((mu - a)/sqrt 2) e^{-a^2/2} / 2           (E2 below)
        Phi(a)       = erfcx(-a/sqrt 2) e^{-a^2/2} / 2                   (E1 below)

    0 <= a <= mu/2 and eps <= 1 (eps <= mu^2/2, so b <= -mu/2 < 0 <= a). Split e^eps = 1 + expm1(eps):

        delta = [Phi(a) - Phi(b)] - expm1(eps) Phi(b),
        Phi(a) - Phi(b) = (erf(a/sqrt 2) + erf(-b/sqrt 2)) / 2           (T1 below, a sum)

    Both erf arguments are >= 0, so T1 has no cancellation even for tiny mu (where Phi(a) and
    e^eps Phi(b) agree to every digit); T2 = expm1(eps) Phi(b) <= (e - 1) eps Phi(b).

    0 <= a and eps > 1: delta = Phi(a) - E2 as above, with Phi(a) >= 1/2 and, by Mills' ratio
    Phi(-x) < phi(x)/x at x = mu - a = mu/2 + eps/mu >= sqrt(2 eps) > sqrt 2 (AM-GM),
    e^eps Phi(b) < e^{-a^2/2} / (x sqrt(2 pi)) < 1/(2 sqrt pi) = 0.28: the terms differ by a
    factor > 1.7, so the difference keeps its digits (total/diff < 3.6).

    When E1 - E2 would lose more than 4 digits (E1 - E2 <= 1e-4 (E1 + E2): mu small), it
    is computed as an integral of a positive function instead (``_erfcx_gap``).

    The upper bound covers rounding: the difference of two terms each accurate to a few
    ulps has relative error <= 64 u (1 + a^2 + total/diff) (u = 2^-52; a^2 for e^{-a^2/2},
    whose argument carries a relative error u). When that exceeds 1, the bound falls back on
    delta <= Phi(a), true because e^eps Phi(b) >= 0. For a^2/2 > 800 (a may be -inf when
    eps/mu overflows) delta <= Phi(a) <= e^{-a^2/2}/2 is below the smallest double: delta = 0.
    """
    if a < 0.0 and 0.5 * a * a > _LOG_UNDERFLOW:  # delta < e^-800: 0 in doubles
        return -math.inf, -0.5 * a * a  # Phi(a) <= e^{-a^2/2} / 2
    if a < 0.0:
        e1 = float(erfcx(-a * _SQRT_HALF))  # E1 > E2: erfcx decreases
        e2 = float(erfcx((mu - a) * _SQRT_HALF))
        log_t1 = math.log(0.5 * e1) - 0.5 * a * a
        diff, total = e1 - e2, e1 + e2
        if not diff > _CANCELLATION * total:  # small mu: integrate instead
            diff, rel_err = _erfcx_gap(-a * _SQRT_HALF, mu * _SQRT_HALF)
            r = 64.0 * _U * (1.0 + a * a) + 10.0 * rel_err
            log_d = math.log(0.5 * diff) - 0.5 * a * a
            return log_d, (min(log_t1, log_d + math.log1p(r)) if r < 1.0 else log_t1)
        log_d = math.log(0.5 * diff) - 0.5 * a * a if diff > 0 else -math.inf
    elif mu * (0.5 * mu - a) <= 1.0:  # eps <= 1
        b = a - mu
        t1 = 0.5 * (float(erf(a * _SQRT_HALF)) + float(erf(-b * _SQRT_HALF)))
        t2 = math.expm1(mu * (0.5 * mu - a)) * float(ndtr(b))
        log_t1 = math.log(float(ndtr(a)))
        diff, total = t1 - t2, t1 + t2
        log_d = math.log(diff) if diff > 0 else -math.inf
    else:  # eps > 1: Phi(a) >= 1/2 > 1.7 e^eps Phi(b) (above)
        t1, t2 = float(ndtr(a)), 0.5 * float(erfcx((mu - a) * _SQRT_HALF)) * math.exp(-0.5 * a * a)
        log_t1 = math.log(t1)
        diff, total = t1 - t2, t1 + t2
        log_d = math.log(diff) if diff > 0 else -math.inf
    r = 64.0 * _U * (1.0 + a * a + (total / diff if diff > 0 else math.inf))
    log_up = min(log_t1, log_d + math.log1p(r)) if r < 1.0 else log_t1
    return log_d, log_up


@dataclass(frozen=True)
class GaussianDP:
    """mu-GDP [DRS22, Def. 2.6]: for all neighbours D, D' and every test of M(D) against M(D'),
    beta >= G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (alpha, beta: its two error rates).

    ``delta`` (default ``DEFAULT_GDP_DELTA`` = 1e-5) is not part of the GDP claim: it is the
    delta at which ``as_eps_delta`` reports the (eps, delta) guarantee that mu-GDP implies
    (``epsilon_at(delta)``), the form an (eps, delta) audit and a reader compare with.
    mu in [1e-50, 1e50] (the supported range, ``_checks.MAGNITUDE``).
    """

    mu: float
    delta: float = DEFAULT_GDP_DELTA
    kind: str = field(default="gdp", init=False)

    def __post_init__(self):
        object.__setattr__(self, "mu", check_positive(self.mu, "mu"))
        d = check_delta(self.delta)
        if d == 0.0:
            raise ValueError(
                "delta must lie in (0, 1): mu-GDP with mu > 0 is (eps, delta)-DP only for "
                "delta > 0 (DRS22, Cor. 2.13: delta(eps) > 0 for every eps), got 0.0"
            )
        object.__setattr__(self, "delta", d)

    def trade_off(self, alpha) -> float:
        """G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) [DRS22, Def. 2.6], alpha in [0, 1].

        Phi^-1(1 - alpha) is computed as -Phi^-1(alpha) (exact symmetry), so that a tiny
        alpha keeps its digits instead of rounding 1 - alpha to 1."""
        a = check_real(alpha, "alpha")
        if not 0.0 <= a <= 1.0:
            raise ValueError(f"alpha (a false-positive rate) must lie in [0, 1], got {a!r}")
        return float(ndtr(-ndtri(a) - self.mu))

    def delta_at(self, epsilon) -> float:
        """delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) [DRS22, Cor. 2.13], eps >= 0.

        mu-GDP holds iff (eps, delta(eps))-DP holds for every eps >= 0 (same corollary); this is
        also the Gaussian mechanism's exact profile (Balle and Wang 2018, Thm 8; see
        ``mechanisms``) with Delta / sigma = mu.
        Accuracy: see ``_profile``; input eps = mu^2/2 - mu a carries an absolute error of
        u eps, so a has one of u (mu/2 + eps/mu): for mu >~ 1e6 prefer ``epsilon_at``, which
        never forms a from eps. eps is an accounting query: any eps in [0, 1e300].
        """
        eps = check_nonnegative(epsilon, "epsilon", hi=MAX_ACCOUNTING_EPSILON)
        log_d, _ = _profile(0.5 * self.mu - eps / self.mu, self.mu)
        return min(1.0, math.exp(log_d))

    def epsilon_at(self, delta) -> float:
        """The smallest eps >= 0 with delta(eps) <= delta, rounded up (so the guarantee holds).

        Solved in a = mu/2 - eps/mu (``_profile``), where delta increases with a; each
        candidate is checked against the rounding-safe upper bound on delta(a), so the returned
        eps satisfies delta(eps) <= delta even where the profile loses digits (tiny mu), at
        the price of some slack there. Returns 0.0 when delta(0) = 2 Phi(mu/2) - 1 <= delta.
        """
        d = check_delta(delta)
        if d == 0.0:
            raise ValueError("delta must lie in (0, 1): no finite eps has delta(eps) = 0 under mu-GDP, got 0.0")
        mu, log_target = self.mu, math.log(d)

        def f(a: float) -> float:  # increasing in a
            return _profile(a, mu)[1] - log_target

        a_hi = 0.5 * mu  # eps = 0
        # delta(0) = 2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2)), accurate even for tiny mu; delta(eps)
        # decreases in eps, so delta(0) <= delta means eps = 0 (8 ulps cover erf's rounding).
        if float(erf(0.5 * mu * _SQRT_HALF)) * (1.0 + 8.0 * _U) <= d or f(a_hi) <= 0:
            return 0.0
        step = 1.0
        a_lo = min(a_hi, 0.0) - step
        for _ in range(_BRACKET_STEPS):  # delta(a) -> 0 as a -> -inf
            if f(a_lo) <= 0:
                break
            step *= 2.0
            a_lo = min(a_hi, 0.0) - step
        else:
            raise RuntimeError(f"epsilon_at: no eps reaches delta = {d!r} for mu = {mu!r}")
        a = brentq(f, a_lo, a_hi, xtol=1e-300, rtol=4 * _U, maxiter=2000)
        for k in range(1100):  # the root may round to the wrong side
            if f(a) <= 0:
                break
            a -= (abs(a) + 1e-300) * _U * 2.0**k  # steps of 1, 2, 4, ... ulps down
        else:
            raise RuntimeError(f"epsilon_at did not converge (mu = {mu!r}, delta = {d!r})")
        # eps = mu (mu/2 - a) has relative rounding error <= 2u; rounding up by 8u keeps a' <= a.
        return float(mu * (0.5 * mu - a) * (1.0 + 8.0 * _U))

    def compose(self, *others: "GaussianDP") -> "GaussianDP":
        """mu = sqrt(mu_1^2 + ... + mu_k^2) [DRS22, Cor. 3.3], also under adaptive composition;
        keeps this claim's ``delta``."""
        for i, o in enumerate(others):
            if not isinstance(o, GaussianDP):
                raise TypeError(f"others[{i}] must be a GaussianDP claim, got {type(o).__name__}")
        return GaussianDP(math.hypot(self.mu, *(o.mu for o in others)), self.delta)

    def as_eps_delta(self) -> tuple[float, float]:
        """(epsilon_at(delta), delta): the exact (eps, delta) mu-GDP implies at the claim's delta.

        Refuses an eps above 1e50 (the supported range; reached only for mu >~ 1.4e25), where
        the claim says nothing an audit or a reader could use."""
        eps = self.epsilon_at(self.delta)
        if eps > MAGNITUDE[1]:
            raise ValueError(
                f"mu = {self.mu!r} implies eps = {eps:.3g} at delta = {self.delta!r}, above "
                f"{MAGNITUDE[1]:g} (the supported range): this claim bounds nothing observable"
            )
        return eps, self.delta

    def params(self) -> dict:
        return {"mu": self.mu, "delta": self.delta}


@dataclass(frozen=True)
class Claims:
    """A paper's own claim (``primary``) and the exact mu-GDP (``gdp``) the same mechanism
    satisfies, e.g. ``Claims(ApproxDP(1, 1e-5), GaussianDP(0.268))`` for the analytic Gaussian.

    An audit checks both, and reports a violation if either is violated. ``as_eps_delta``
    is the primary claim's, so code that knows only (eps, delta) claims sees the paper's.
    """

    primary: PureDP | ApproxDP | RenyiDP
    gdp: GaussianDP
    kind: str = field(default="claims", init=False)

    def __post_init__(self):
        if not isinstance(self.primary, (PureDP, ApproxDP, RenyiDP)):
            raise TypeError(f"primary must be a PureDP, ApproxDP or RenyiDP claim, got {type(self.primary).__name__}")
        if not isinstance(self.gdp, GaussianDP):
            raise TypeError(f"gdp must be a GaussianDP claim, got {type(self.gdp).__name__}")

    def as_eps_delta(self) -> tuple[float, float]:
        return self.primary.as_eps_delta()

    def params(self) -> dict:
        return {
            "primary": {"kind": self.primary.kind, "params": self.primary.params()},
            "gdp": {"kind": self.gdp.kind, "params": self.gdp.params()},
        }


Claim = PureDP | ApproxDP | RenyiDP | PersonalizedDP | GaussianDP | Claims
