"""Property suite for the WME baseline of Zhao et al. 2024 (Levy et al. 2021's two-stage
winsorized mean: a private histogram localises an interval, then the clipped mean plus Gaussian
noise): ``reference/zhao2024_wme.py``.

Adapter stage call shapes (a plain ``Adapter``): the suite passes the dataset positionally and
the public parameters by keyword, exactly as here, where ``**p`` is ``WMEExample.params``:

- ``noise_scale(dataset, epsilon=, delta=, R=)`` -> dict eps1, delta1, eps2, delta2, sigma1,
  sigma2 (the two stages' budgets and Gaussian standard deviations);
- ``sensitivity(dataset, epsilon=, delta=, R=)`` -> (Delta_1, Delta_2), the L2 sensitivities of
  the two stages (histogram, clipped mean);
- ``mechanism(dataset, rng=rng, size=size, epsilon=, delta=, R=)`` -> releases, (d,) or (size, d),
  () or (size,) for scalar items.

Parameters: ``dataset``, a ``UserDataset`` of items in ``values``, (N,) or (N, d), user i owning
m_i >= 1 items; ``epsilon``, ``delta``: the (epsilon, delta)-DP budget of one release; ``R``: the
support bound, |x| <= R (d = 1), ||x||_2 <= R (d > 1); ``rng``: a ``numpy.random.Generator``;
``size``: None (one release) or the number of releases.

Relation: replace one user's items, m_i kept (``REPLACE_USER_ITEMS``), as for HLM. Oracle: the
analytic Gaussian delta of Balle and Wang 2018 (Thm 8), written out in ``properties/zhao2024.py``
(``gaussian_delta_oracle``), and the closed-form sensitivities. Tolerance ``REL`` = 1e-9 relative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from userdp.reference import zhao2024_wme as Wm
from userdp.reference.data import UserDataset

from .extremes import Domain
from .adapter import Adapter
from .zhao2024 import REL, _dataset, _require, gaussian_delta_oracle

__all__ = [
    "WMEExample",
    "wme_examples",
    "prop_wme_noise_calibrated",
    "ALL_PROPERTIES",
    "STRATEGIES",
    "EXAMPLES",
    "MAX_EXAMPLES",
    "RELATION",
    "ADAPTER",
    "REFERENCE",
    "EXTREMES",
]


@dataclass(frozen=True)
class WMEExample:
    dataset: UserDataset
    epsilon: float = 1.0
    delta: float = 1e-5
    R: float = 1.0

    @property
    def params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "R": self.R}


@st.composite
def wme_examples(draw, max_n: int = 8, max_d: int = 3):
    """n users with averages in the support (|x| <= R, ||x|| <= R for d > 1), m_i in [1, 30]."""
    n, d = draw(st.integers(2, max_n)), draw(st.integers(1, max_d))
    m = np.array(draw(st.lists(st.integers(1, 30), min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.lists(st.floats(-1.0, 1.0), min_size=d, max_size=d), min_size=n, max_size=n)))
    y = y / np.maximum(1.0, np.linalg.norm(y, axis=1, keepdims=True) * (1 + 1e-12))  # inside the unit ball
    eps = draw(st.sampled_from([0.5, 1.0, 3.0]))
    return WMEExample(_dataset(y[:, 0] if d == 1 else y, m), epsilon=eps)


def prop_wme_noise_calibrated(impl: Adapter, ex: WMEExample) -> None:
    """WME's two stages compose to the claim: eps_1 + eps_2 <= eps and delta_1 + delta_2 <= delta
    (basic composition, the localisation's delta included), and each stage's sigma meets its
    (eps_k, delta_k) at its declared sensitivity, which is at least the closed forms
    sqrt(2 d') (histogram) and min(3 tau sqrt(d'), 2R) / n (clipped mean), tau = R sqrt(2 ln(40) /
    m_min) (Hoeffding at beta = 0.05), by the exact Gaussian delta (Balle-Wang Thm 8, written out)."""
    impl.require("noise_scale", "sensitivity")
    D, p = ex.dataset, ex.params
    ns = impl.noise_scale(D, **p)
    D1, D2 = impl.sensitivity(D, **p)
    e1, d1, e2, d2 = ns["eps1"], ns["delta1"], ns["eps2"], ns["delta2"]
    _require(e1 + e2 <= ex.epsilon * (1 + REL), f"eps_1 + eps_2 = {e1 + e2!r} > epsilon = {ex.epsilon!r}")
    _require(
        d1 + d2 <= ex.delta * (1 + REL),
        f"delta_1 + delta_2 = {d1 + d2!r} > delta = {ex.delta!r} (a stage's delta is not composed)",
    )
    d = 1 if D.values.ndim == 1 else D.values.shape[1]
    d_pad = 1 << (d - 1).bit_length()
    tau = ex.R * math.sqrt(2 * math.log(2 / 0.05) / float(D.counts.min()))
    _require(
        D1 >= math.sqrt(2 * d_pad) * (1 - REL), f"histogram sensitivity {D1!r} < sqrt(2 d') = {math.sqrt(2 * d_pad)!r}"
    )
    want2 = min(3 * tau * math.sqrt(d_pad), 2 * ex.R) / D.m
    _require(D2 >= want2 * (1 - REL), f"clipped-mean sensitivity {D2!r} < {want2!r}")
    for sigma, sens, eps, dl, what in ((ns["sigma1"], D1, e1, d1, "sigma_1"), (ns["sigma2"], D2, e2, d2, "sigma_2")):
        got = gaussian_delta_oracle(sigma, sens, eps)
        _require(got <= dl * (1 + 1e-6), f"{what} = {sigma!r} at sensitivity {sens!r}: delta = {got!r} > {dl!r}")


def _wme_noise(D, *, epsilon, delta, R):
    e1, d1, e2, d2 = Wm.wme_budgets(epsilon, delta)
    s1, s2 = Wm.wme_noise_scales(D, epsilon, delta, R)
    return {"eps1": e1, "delta1": d1, "eps2": e2, "delta2": d2, "sigma1": s1, "sigma2": s2}


REFERENCE = Adapter(
    "zhao2024_wme (reference)",
    noise_scale=_wme_noise,
    sensitivity=lambda D, *, epsilon, delta, R: Wm.wme_sensitivities(D, R),
    mechanism=lambda D, rng, size=None, *, epsilon, delta, R: Wm.wme_mechanism(D, epsilon, delta, R, rng, size),
)


# ---------------------------------------------------------------------- the suite
ALL_PROPERTIES = (prop_wme_noise_calibrated,)
STRATEGIES = {prop_wme_noise_calibrated: wme_examples()}
EXAMPLES: dict = {}  # none: the hard cases of properties/zhao2024.py are HLM's
MAX_EXAMPLES = {prop_wme_noise_calibrated: 25}
RELATION = Wm.RELATION  # REPLACE_USER_ITEMS, as for HLM
ADAPTER = Adapter


# Totality at the float extremes (properties/extremes.py): the records' declared domain of each
# mechanism, by its validate name: items in [-R, R].
EXTREMES = {"zhao2024.wme": Domain({"values": ("-R", "R")})}
