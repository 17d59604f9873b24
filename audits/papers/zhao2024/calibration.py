"""Registry entry for HLM's global-curvature calibration (``reference/zhao2024_calibration.py``,
calibration "global": no test, Gaussian noise at the global sensitivity Delta = 2c / kappa_G).

Claim: user-level (3, 1e-5)-DP under replace-user-items (m_i public), epsilon = 3 as for the
other Zhao entries (``audits/papers/zhao2024/audits.py`` says why). Support rho = R = R_c = 1.

The audit dataset (``audit_dataset``) has the poster's most imbalanced counts (n = 2,000,
gamma = 2: 1,873 one-item users, the largest user 24,324 items). Users with m_i <= 4 (T_i >= rho)
hold items uniform on [-rho/2, rho/2]; the 73 users with m_i >= 5 (T_i < rho) hold all their
items at +rho or -rho, alternately, so that at the minimiser (near 0) each sits in its linear
region: it pulls with its bounded w_i t_i and adds no curvature (the pulls nearly cancel).
The pair moves the items of the user with the largest pull c = max_i w_i min(T_i, rho) (a
heavy user at the weights' cap: theta / sum_j a_j) from -rho to +rho: its pull flips from
+c to -c. With the users of G (the one-item users) and the 54 users of 2-4 items in their
quadratic regions and the other heavy users in their linear ones, the minimiser moves by
2c / (the light users' weight) = 0.96 S (``realised_share``, exact; S = Delta + 2e): the pair
realises nearly the whole calibrated sensitivity, so the audit is about as sharp as a
Gaussian mechanism at its own sensitivity can be. The release is Clip(x_K) + N(0, sigma^2): the entry
declares that noise model for the ceiling.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import zhao2024_calibration as C
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import REPLACE_USER_ITEMS, NeighbourPair

from userdp.audits.engine.ceiling import NoiseModel

from userdp.audits.engine.registry import AuditSetup, Entry, register

__all__ = ["params", "realised_share", "tight_pair"]

PAPER = "Zhao et al. 2024 (poster)"
EPSILON, DELTA, R, R_C, SUPPORT = 3.0, 1e-5, 1.0, 1.0, 1.0
SAMPLES = 200_000
N_USERS, GAMMA = 2000, 2.0


def _counts() -> np.ndarray:
    """The imbalance reproduction's counts at gamma = 2: m_i = max(1, round(20 i^-2 / mean_j j^-2))."""
    r = np.arange(1, N_USERS + 1, dtype=float) ** -GAMMA
    return np.maximum(1, np.round(20.0 * r / r.mean())).astype(np.int64)


def params() -> dict:
    """The public parameters of the ``zhao2024.hlm-global`` entry."""
    return {"epsilon": EPSILON, "delta": DELTA, "R": R, "R_c": R_C, "support": SUPPORT}


def moved_user() -> int:
    """The user with the largest pull w_i min(T_i, rho) (the last of them): it sets c."""
    k = C.global_constants(
        _counts(), R, C.choose_theta(_counts(), R, EPSILON, DELTA, support=SUPPORT, R_c=R_C), support=SUPPORT
    )
    pull = k.w * np.minimum(k.T, SUPPORT)
    return int(np.flatnonzero(pull == pull.max())[-1])


def audit_dataset(seed: int = 2024) -> UserDataset:
    """Light users (m_i <= 4) uniform on [-rho/2, rho/2]; heavy users (m_i >= 5) all at +rho or
    -rho, alternately (see the module docstring), the moved user (``moved_user``) at -rho."""
    rng = np.random.default_rng(seed)
    m = _counts()
    heavy = np.flatnonzero(m >= 5)
    y = rng.uniform(-SUPPORT / 2, SUPPORT / 2, m.size)
    y[heavy] = SUPPORT * np.where(np.arange(heavy.size) % 2 == 0, 1.0, -1.0)
    y[moved_user()] = -SUPPORT
    ids = np.repeat(np.arange(m.size), m)
    return UserDataset(y[ids], ids)


def tight_pair() -> NeighbourPair:
    """The moved user's items all at -rho vs all at +rho (m_k kept)."""
    D = audit_dataset()
    k = moved_user()
    v = np.array(D.values)
    v[D.user_ids == D.users[k]] = SUPPORT
    return NeighbourPair(
        D,
        D.with_fields(values=v),
        REPLACE_USER_ITEMS.name,
        int(D.users[k]),
        f"the user with the largest pull (m = {D.counts[k]}) from -rho to +rho; the other "
        "heavy users pulling from their linear regions",
    )


def realised_share(pair: NeighbourPair) -> float:
    """||Clip x_K(first) - Clip x_K(second)|| / S: the share of the calibrated sensitivity the pair
    uses (exact, no sampling)."""
    a, b = C.global_plan(pair.first, **params()), C.global_plan(pair.second, **params())
    return float(np.linalg.norm(a.clipped - b.clipped) / a.sensitivity)


def build_global() -> AuditSetup:
    pair = tight_pair()

    def mechanism(dataset, rng, size):
        return C.global_mechanism(dataset, rng, size, **params())

    noise = NoiseModel(
        "gaussian", lambda D: C.global_plan(D, **params()).clipped, lambda D: C.global_plan(D, **params()).sigma
    )
    return AuditSetup(
        mechanism=mechanism, pairs=[pair], claim=C.claim(EPSILON, DELTA), output="continuous", noise=noise
    )


register(
    Entry(
        name="zhao2024.hlm-global",
        kind="reference",
        paper=PAPER,
        algorithm="HLM, calibration 'global' (derived here): weights equalising the users' pulls, "
        "a support's guaranteed curvature, a public iteration count, Gaussian noise at the "
        "global sensitivity 2c / kappa_G (no test)",
        relation=REPLACE_USER_ITEMS.name,
        function="userdp.reference.zhao2024_calibration.global_mechanism",
        expected="no violation found",
        build=build_global,
        true_epsilon=EPSILON,
        samples=SAMPLES,
    )
)
