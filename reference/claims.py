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
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._checks import check_delta, check_epsilon, check_finite_array, check_int, check_positive

__all__ = ["Claim", "PureDP", "ApproxDP", "RenyiDP", "PersonalizedDP"]


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
        for i in (int(np.argmin(e)), int(np.argmax(e))):     # a range: the extremes decide
            check_epsilon(float(e[i]), f"epsilons[{i}]")
        object.__setattr__(self, "epsilons", tuple(float(v) for v in e))

    def for_record(self, i: int) -> PureDP:
        return PureDP(self.epsilons[check_int(i, "i (record index)", lo=0, hi=len(self.epsilons) - 1)])

    def as_eps_delta(self) -> tuple[float, float]:
        # The weakest record's guarantee bounds every record's.
        return max(self.epsilons), 0.0

    def params(self) -> dict:
        return {"epsilons": list(self.epsilons)}


Claim = PureDP | ApproxDP | RenyiDP | PersonalizedDP
