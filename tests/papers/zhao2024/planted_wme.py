"""Planted bugs for the WME baseline of Zhao et al. 2024 (Levy et al. 2021's two-stage winsorized
mean, ``reference/zhao2024_wme.py``), recorded Wycheproof-style: an ``Adapter`` with the stage
signatures of ``userdp.properties.zhao2024_wme`` for each bug a property catches.
``tests/papers/zhao2024/test_zhao2024_wme.py`` asserts that each is caught.
"""

from __future__ import annotations

from userdp.properties import zhao2024_wme as P
from userdp.properties.adapter import Adapter
from userdp.reference import zhao2024_wme as Wm
from userdp.reference.mechanisms import gaussian_sigma_analytic

from planted import PlantedBug


def _wme_delta_not_composed(D, *, epsilon, delta, R):
    """Bug: stage I (localisation) calibrated at the whole delta and not composed: both stages
    at (eps_k, delta), claim (eps, delta); the mechanism is (eps, 2 delta)-DP by composition."""
    e1, _, e2, _ = Wm.wme_budgets(epsilon, delta)
    D1, D2 = Wm.wme_sensitivities(D, R)
    return {
        "eps1": e1,
        "delta1": delta,
        "eps2": e2,
        "delta2": delta,
        "sigma1": gaussian_sigma_analytic(D1, e1, delta),
        "sigma2": gaussian_sigma_analytic(D2, e2, delta),
    }


BUGS = (
    PlantedBug(
        "localisation-delta-not-composed",
        "accounting",
        "WME's stage I (the private histogram) is calibrated at the whole delta and its delta left "
        "out of the claim: (eps, 2 delta)-DP by composition, claimed (eps, delta)",
        "a project review (the localisation stage treated as free of delta)",
        ("prop_wme_noise_calibrated",),
        Adapter(
            "bug: WME localisation delta not composed",
            noise_scale=_wme_delta_not_composed,
            sensitivity=P.REFERENCE.sensitivity,
        ),
    ),
)
