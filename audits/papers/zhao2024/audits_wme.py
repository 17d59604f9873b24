"""Registry entry for the baseline WME of Zhao et al. 2024 (Levy et al. 2021's two-stage
winsorized mean, ``reference/zhao2024_wme.py``): ``zhao2024.wme``, d = 1.

The claim and budget are HLM's (``audits/papers/zhao2024/audits.py``): user-level (epsilon, delta)-DP
under replace-user-items (m_i kept, public), epsilon = 3, delta = 1e-5.

WME is audited on HLM's imbalanced ``audit_dataset`` with the items moved to the
support's poles (-R vs +R: WME refuses data outside its declared support). There m_min = 5
gives tau = 1.21 R and K = 2 bins, and either chosen interval (width 3 tau) covers [-R, R],
so nothing is clipped: the release is the plain mean of the local averages plus
N(0, sigma_2^2), which the entry declares as its noise model. WME in d = 3 is not registered
(each release rotates all n averages: far over the budget of ``userdp audit --all``);
tests/papers/zhao2024/test_zhao2024_wme.py checks its d = 3 sensitivities by brute force. The pole pair moves
the mean by 2R/n = Delta_2 exactly. Its claim carries the exact GDP of the two composed
Gaussians; stage I (the histogram) moves by one count in two bins and is nearly invisible in
the release, so mu tightness is about mu_2 / mu.

The ``userdp validate`` spec of this algorithm is in ``audits/papers/zhao2024/specs_wme.py``.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import zhao2024_wme as W
from userdp.reference.neighbours import REPLACE_USER_ITEMS

from userdp.audits.engine.ceiling import NoiseModel

from userdp.audits.engine.registry import AuditSetup, Entry, register
from userdp.audits.papers.zhao2024.audits import DELTA, EPSILON, PAPER, R, audit_dataset, moved_pairs

__all__: list[str] = []  # registers its entries at import; nothing else is imported from it

SAMPLES = 200_000


def build_wme(d: int = 1) -> AuditSetup:
    D = audit_dataset(d)
    m = D.counts
    pairs = moved_pairs(D, list(dict.fromkeys([int(np.argmax(m)), int(np.argmin(m))])), R)  # WME's support poles

    def mechanism(dataset, rng, size):
        return W.wme_mechanism(dataset, EPSILON, DELTA, R, rng, size)

    def mean(dataset):
        y = dataset.local_averages()
        return y.mean(axis=0)

    noise = NoiseModel("gaussian", mean, lambda dataset: W.wme_noise_scales(dataset, EPSILON, DELTA, R)[1])
    return AuditSetup(
        mechanism=mechanism,
        pairs=pairs,
        claim=W.wme_claim(EPSILON, DELTA),
        output="continuous" if d == 1 else "vector",
        noise=noise,
    )


register(
    Entry(
        name="zhao2024.wme",
        kind="reference",
        paper=PAPER,
        algorithm="baseline WME (Levy et al. 2021): private histogram localisation, then the clipped "
        "mean plus Gaussian noise; exact GDP of the composition",
        relation=REPLACE_USER_ITEMS.name,
        function="userdp.reference.zhao2024_wme.wme_mechanism",
        expected="no violation found",
        build=build_wme,
        params={"d": 1},
        true_epsilon=EPSILON,
        samples=SAMPLES,
    )
)
