"""Registry entries for Amin et al. 2019 Algorithm 1 (first tau records per user) with CMS11
output perturbation (``reference/amin2019_erm.py``).

- ``amin2019.erm-output-perturbation``: L2-regularised LOGISTIC regression, d = 2
  (exercises the L2-Laplace vector noise); relation add/remove-user, claim eps-DP.
- ``amin2019.erm-output-perturbation-ridge``: the same algorithm for RIDGE regression,
  d = 1, Lambda = 10^4: the pair that realises the sensitivity almost exactly.

Tightness, entry by entry (what the audit can reach, and why):

- ridge (tight). Pair: n_min = 4 single-record users at x = 1, y = -1 (N = n_min kept
  records, the case where Delta_2 = (L/Lambda) 2 tau/(n_min + tau) is attained) vs the same
  plus one user with tau + 2 records at x = 1, y = +1 (only tau kept). Closed form
  (d = 1, x = 1): theta-hat = mean(y) / (1 + Lambda), so the shift is
  2 tau / ((N + tau)(1 + Lambda)), and with L = R(R Y/sqrt(Lambda) + Y)(1 + 1e-12)
  the realised loss is eps Lambda / ((1 + Lambda)(1 + Lambda^{-1/2})(1 + 1e-12)) =
  0.9900 eps at Lambda = 10^4 (``ridge_realised_ratio``); in d = 1 the L2-Laplace noise is
  Laplace, so a threshold realises it. The gap to 1 is the Lipschitz bound being taken
  on the whole ball ||theta|| <= Y/sqrt(Lambda) while theta-hat sits near 0; it closes as
  Lambda -> infinity (0.999 at 10^6). Measured: tightness 0.986 (10^6 per side, seeds 0 and 1).
- logistic (not tight, a property of the loss). The record gradient is
  -y x sigma(-y theta.x): its bound L = R is reached only by a record misclassified
  with margin -> -infinity. At a minimiser near 0 (large Lambda) every gradient is
  ~ R/2, so a pair moves theta-hat by ~ Delta_2 / 2; at small Lambda theta-hat moves
  far but the misclassified records' weight shrinks and the ratio falls (d = 1 search,
  tau in {1, 4}, n_min in {1, 4}: ratio 0.03 at Lambda = 0.01, 0.16 at 0.1, 0.40 at 1,
  0.488 at 10). So the realised loss of the pairs we know is <= ~0.49 eps. Default
  Lambda = 10 (was 2): the pair below moves theta-hat by 0.488 Delta_2 in d = 2 (the
  heavy-user pair of ``amin_default_dataset``) and the audit reaches 0.40 (10^6, seed 0;
  it was 0.364 at Lambda = 2); the rest of the gap is the d = 2 L2-Laplace tail
  (the density ratio reaches e^{eps ||shift||/Delta_2} only far out along the shift).
The property suite (tests/papers/amin2019/test_amin2019_erm.py) is what checks the sensitivities exactly.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import amin2019_erm as A
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import NeighbourPair

from userdp.audits.engine.ceiling import NoiseModel

from userdp.audits.engine.registry import AuditSetup, Entry, register

__all__ = [
    "AMIN_PARAMS",
    "RIDGE_PARAMS",
    "amin_default_dataset",
    "build_amin",
    "build_amin_ridge",
    "ridge_default_dataset",
    "ridge_realised_ratio",
]

AMIN_SAMPLES = 1_000_000  # output perturbation is one L2-Laplace draw per release: 10^6 take ~2 s

# ---------------------------------------------------------------------------- logistic, d = 2
AMIN_PARAMS = {"epsilon": 1.0, "tau": 2, "Lambda": 10.0, "n_min": 4}  # Lambda = 10: module docstring


def amin_default_dataset(tau: int = 2, n_light: int = 4) -> UserDataset:
    """User 0 has tau + 2 records at x = (1, 0), y = -1; n_light single-record users at x = (1, 0), y = +1.

    Found by a small search (Lambda in {0.25..2}, n_min in {2..8}): removing user 0 moves
    theta-hat by 0.445 Delta_2 at Lambda = 2, n_min = n_light = 4 (0.488 at the default Lambda = 10).
    """
    s0 = tau + 2
    X = np.tile([1.0, 0.0], (s0 + n_light, 1))
    y = np.r_[-np.ones(s0), np.ones(n_light)]
    return UserDataset(X, np.r_[np.zeros(s0, dtype=int), np.arange(1, n_light + 1)], labels=y)


def _amin_pairs(D: UserDataset, tau: int) -> list[NeighbourPair]:
    rel = A.RELATION
    heavy = int(D.users[np.argmax(D.counts)])
    pairs = [NeighbourPair(D, rel.neighbour(D, heavy), rel.name, heavy, f"remove heaviest user {heavy}")]
    new_id = int(D.users.max()) + 1
    for label in (-1.0, 1.0):
        D2 = rel.neighbour(D, new_id, np.tile([1.0, 0.0], (tau, 1)), labels=np.full(tau, label))
        pairs.append(
            NeighbourPair(D, D2, rel.name, new_id, f"add user {new_id}: {tau} records x=(1,0), y={label:+.0f}")
        )
    return pairs


def build_amin(epsilon=1.0, tau=2, Lambda=10.0, n_min=4) -> AuditSetup:
    """Entry ``amin2019.erm-output-perturbation``: logistic ERM with output perturbation."""
    D = amin_default_dataset(tau, n_min)

    def mechanism(dataset, rng, size):
        return A.mechanism(dataset, rng, size, epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min)

    return AuditSetup(
        mechanism=mechanism,
        pairs=_amin_pairs(D, tau),
        claim=A.claim(epsilon),
        output="vector",
        noise=_amin_noise(epsilon, tau=tau, Lambda=Lambda, n_min=n_min),
    )


def _amin_noise(epsilon, **params) -> NoiseModel:
    """theta-hat + b, density of b prop. to exp(-||b||_2 / (Delta_2 / eps)) (``A.mechanism``)."""
    return NoiseModel("l2laplace", lambda D: A.statistic(D, **params), A.noise_scale(epsilon=epsilon, **params))


register(
    Entry(
        name="amin2019.erm-output-perturbation",
        kind="reference",
        paper="Amin et al. 2019",
        algorithm="Algorithm 1 (first tau records per user) + CMS11 output perturbation, logistic",
        relation=A.RELATION.name,
        function="userdp.reference.amin2019_erm.mechanism",
        expected="no violation found",
        build=build_amin,
        params=dict(AMIN_PARAMS),
        true_epsilon=None,
        samples=AMIN_SAMPLES,
    )
)

# ------------------------------------------------------------------------------ ridge, d = 1
RIDGE_PARAMS = {"epsilon": 1.0, "tau": 2, "Lambda": 1e4, "n_min": 4}


def ridge_default_dataset(n_min: int = 4) -> UserDataset:
    """n_min single-record users at x = 1 (d = 1), y = -1: N = n_min kept records."""
    return UserDataset(np.ones((n_min, 1)), np.arange(n_min), labels=-np.ones(n_min))


def ridge_realised_ratio(Lambda: float, R: float = 1.0, Y: float = 1.0) -> float:
    """|theta-hat(D) - theta-hat(D')| / sensitivity on the ridge pair (module docstring), R = Y = 1;
    the reference's sensitivity is Delta_2 (1 + 2 CERT_REL) (its certified solver error)."""
    if R != 1.0 or Y != 1.0:
        raise ValueError("closed form written for R = Y = 1")
    return Lambda / ((1.0 + Lambda) * (1.0 + Lambda**-0.5) * (1.0 + 1e-12) * (1.0 + 2.0 * A.CERT_REL))


def _ridge_pairs(D: UserDataset, tau: int) -> list[NeighbourPair]:
    rel, u = A.RELATION, int(D.users.max()) + 1
    pairs = []
    for s in (tau + 2, tau):  # tau + 2 records: only the first tau count (tau is per user)
        D2 = rel.neighbour(D, u, np.ones((s, 1)), labels=np.ones(s))
        pairs.append(NeighbourPair(D, D2, rel.name, u, f"add user {u}: {s} records x=1, y=+1 (vs {D.n} at y=-1)"))
    return pairs


def build_amin_ridge(epsilon=1.0, tau=2, Lambda=1e4, n_min=4) -> AuditSetup:
    """Entry ``amin2019.erm-output-perturbation-ridge``: the same with the ridge loss."""
    D = ridge_default_dataset(n_min)

    def mechanism(dataset, rng, size):
        return A.mechanism(dataset, rng, size, epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min, loss="ridge")

    return AuditSetup(
        mechanism=mechanism,
        pairs=_ridge_pairs(D, tau),
        claim=A.claim(epsilon),
        output="vector",
        noise=_amin_noise(epsilon, tau=tau, Lambda=Lambda, n_min=n_min, loss="ridge"),
    )


register(
    Entry(
        name="amin2019.erm-output-perturbation-ridge",
        kind="reference",
        paper="Amin et al. 2019",
        algorithm="Algorithm 1 (first tau records per user) + CMS11 output perturbation, ridge, d = 1",
        relation=A.RELATION.name,
        function="userdp.reference.amin2019_erm.mechanism",
        expected="no violation found",
        build=build_amin_ridge,
        params=dict(RIDGE_PARAMS),
        true_epsilon=None,
        samples=AMIN_SAMPLES,
    )
)
