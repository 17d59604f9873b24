"""Registry entries for Zhao et al. 2024 (HLM, poster): ``zhao2024.hlm`` and ``zhao2024.hlm-d3``.

The claim is user-level (epsilon, delta)-DP under replace-user-items (m_i kept, public),
epsilon = 3, delta = 1e-5. At epsilon = 1 the pairs move a release by a tenth of a noise
standard deviation and the (eps, 1e-5) set holds a few dozen outputs; at 3 the audit resolves
the loss (figures in docs/papers/zhao2024.md). The privacy argument does not depend on epsilon.

HLM's pair (``worst_case_pair``): n = 2,000 one-item users (R = R_c = 1, so T = 2 and
w = 1/2000 for everyone), ``QUADRATIC`` = 1,060 of them spread inside [-R/2, R/2] (within every
threshold of the minimiser), the rest far out, half at -100 R and half at +100 R, and user 0
moving from -100 R to +100 R (in d = 3 along the first axis, the cluster in the ball of radius
R/2). The far users' pulls cancel, so the curvature at the minimiser is the cluster's weight
K = 0.53 and user 0's move shifts mu0 by 2 w T / K (closed form, tested): 0.943 of the
calibrated B = 2 c / kappa0 (+ the certified slack), since kappa0 / K = 0.5 / 0.53. This is
the worst case the proposal allows up to that factor: PTR passes only when more than kappa0
of the weight sits in the quadratic region, and the shift of a user is 2 c / (that weight).
The cluster is large enough that gamma = J on both sides, so the test fails with probability
<= 1e-12 and every release is Clip(mu0) + N(0, sigma_pass^2): the entry declares that
Gaussian noise model for its ceiling. (The imbalanced ``audit_dataset`` with its heaviest and
lightest users moved, the pairs audited before, realise at most 0.5 of B: the reserve there is
a property of those pairs, not of the mechanism.) The white-box search
(``userdp reproduce whitebox-sensitivity``) searches user 0's two positions on this dataset
and the imbalanced one for the ratio to B.

The baseline WME's entry is in ``audits/papers/zhao2024/audits_wme.py``. The ``userdp validate`` specs of HLM are in
``audits/papers/zhao2024/specs.py``.
"""

from __future__ import annotations


import numpy as np

from userdp.reference import zhao2024 as Z
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import REPLACE_USER_ITEMS, NeighbourPair

from userdp.audits.engine.ceiling import NoiseModel

from userdp.audits.engine.registry import AuditSetup, Entry, register

__all__ = [
    "DELTA",
    "EPSILON",
    "PAPER",
    "QUADRATIC",
    "R",
    "R_C",
    "audit_dataset",
    "audit_users",
    "build_hlm",
    "extreme_pairs",
    "moved_pairs",
    "realised_share",
    "worst_case_pair",
]

PAPER = "Zhao et al. 2024 (poster)"
EPSILON, DELTA, R, R_C = 3.0, 1e-5, 1.0, 1.0
HLM_SAMPLES = 1_000_000  # Gaussian tails at delta = 1e-5: 10^6 per side takes HLM to 0.48-0.56 of eps = 3
COUNTS = np.ceil(200 / np.sqrt(np.arange(1, 2001))).astype(np.int64)


def audit_dataset(d: int = 1, counts=COUNTS, seed: int = 2024) -> UserDataset:
    """Users l = 0..n-1 with counts[l] items uniform on [-R, R] (d = 1) or on the cube
    [-R, R]^d scaled by 1/sqrt(d) (so that ||x|| <= R)."""
    rng = np.random.default_rng(seed)
    ids = np.repeat(np.arange(len(counts)), counts)
    x = rng.uniform(-R, R, ids.size if d == 1 else (ids.size, d))
    return UserDataset(x if d == 1 else x / np.sqrt(d), ids)


def _params(**kw) -> dict:
    return {"epsilon": EPSILON, "delta": DELTA, "R": R, "R_c": R_C, **kw}


def audit_users(D: UserDataset) -> list[int]:
    """The largest user, the user with the largest w_k T_k, and a smallest user (positions)."""
    p = Z.release_plan(D, **_params())
    m = D.counts
    return list(dict.fromkeys([int(np.argmax(m)), int(np.argmax(p.w * p.T)), int(np.argmin(m))]))


def moved_pairs(D: UserDataset, users, at: float) -> list[NeighbourPair]:
    """User k's items all at -at vs all at +at (first coordinate), m_k kept (replace-user-items)."""
    e1 = 1.0 if D.values.ndim == 1 else np.eye(D.d)[0]
    pairs = []
    for k in users:
        rows = D.user_ids == D.users[k]
        a, b = np.array(D.values), np.array(D.values)
        a[rows], b[rows] = -at * e1, at * e1
        pairs.append(
            NeighbourPair(
                D.with_fields(values=a),
                D.with_fields(values=b),
                REPLACE_USER_ITEMS.name,
                int(D.users[k]),
                f"user {k} (m = {D.counts[k]}): items at -{at:g} vs +{at:g}",
            )
        )
    return pairs


def extreme_pairs(D: UserDataset, users) -> list[NeighbourPair]:
    """HLM's pairs: user k's items at -100 R vs +100 R, beyond every threshold."""
    return moved_pairs(D, users, 100 * R)


def realised_share(pair: NeighbourPair) -> float:
    """||Clip mu0(first) - Clip mu0(second)|| / B: the share of the calibrated sensitivity the
    pair uses (exact, no sampling)."""
    a, b = Z.release_plan(pair.first, **_params()), Z.release_plan(pair.second, **_params())
    return float(np.linalg.norm(a.clipped - b.clipped) / a.B)


QUADRATIC = 1060  # cluster users of ``worst_case_pair``: weight 0.53 = kappa0 + 60 w, so gamma = J


def worst_case_pair(d: int = 1, n: int = 2000, quadratic: int = QUADRATIC, seed: int = 7) -> NeighbourPair:
    """n one-item users: ``quadratic`` of them in [-R/2, R/2] (d = 1) or the ball of radius R/2
    (d > 1), inside every threshold T = 2R; the others half at -100 R e1 and half at +100 R e1;
    user 0 from -100 R e1 to +100 R e1. Shift of mu0: 2 w T / K, K = quadratic / n (module docstring)."""
    rng = np.random.default_rng(seed)
    far = n - quadratic
    e1 = np.eye(d)[0]
    if d == 1:
        cluster = rng.uniform(-R / 2, R / 2, (quadratic, 1))
    else:
        u = rng.standard_normal((quadratic, d))
        cluster = u / np.linalg.norm(u, axis=1, keepdims=True) * (R / 2) * rng.uniform(0, 1, (quadratic, 1)) ** (1 / d)
    v = np.concatenate(
        [
            [-100.0 * R * e1],
            cluster,
            np.tile(-100.0 * R * e1, (far // 2, 1)),
            np.tile(100.0 * R * e1, (far - far // 2 - 1, 1)),
        ]
    )
    w = v.copy()
    w[0] = 100.0 * R * e1
    if d == 1:
        v, w = v[:, 0], w[:, 0]
    D = UserDataset(v, np.arange(n))
    return NeighbourPair(
        D,
        D.with_fields(values=w),
        REPLACE_USER_ITEMS.name,
        0,
        f"{n} one-item users, {quadratic} in a cluster, the rest at +-100 R; user 0: -100 R vs +100 R",
    )


def build_hlm(d: int = 1) -> AuditSetup:
    """Entries ``zhao2024.hlm`` (d = 1) and ``zhao2024.hlm-d3``: HLM on ``worst_case_pair(d)``."""
    pairs = [worst_case_pair(d)]

    def mechanism(dataset, rng, size):
        return Z.mechanism(dataset, rng, size, **_params())

    plans = [Z.release_plan(x, **_params()) for p in pairs for x in (p.first, p.second)]
    noise = None
    if all(q.gamma == q.J for q in plans):  # the test fails w.p. <= 1e-12: pure Gaussian releases
        noise = NoiseModel(
            "gaussian",
            lambda D: Z.release_plan(D, **_params()).clipped,
            lambda D: Z.release_plan(D, **_params()).sigma_pass,
        )
    return AuditSetup(
        mechanism=mechanism,
        pairs=pairs,
        claim=Z.claim(EPSILON, DELTA),
        output="continuous" if d == 1 else "vector",
        noise=noise,
    )


for _name, _d, _algorithm in (
    (
        "zhao2024.hlm",
        1,
        "HLM: weighted Huber minimiser (poster eq. 2-3), Clip + Gaussian noise calibrated "
        "by propose-test-release (eq. 4; calibration derived here)",
    ),
    ("zhao2024.hlm-d3", 3, "HLM in d = 3: the vector Huber loss on ||s - y||, L2 sensitivity, Gaussian noise"),
):
    register(
        Entry(
            name=_name,
            kind="reference",
            paper=PAPER,
            algorithm=_algorithm,
            relation=REPLACE_USER_ITEMS.name,
            function="userdp.reference.zhao2024.mechanism",
            expected="no violation found",
            build=build_hlm,
            params={"d": _d},
            true_epsilon=EPSILON,
            samples=HLM_SAMPLES,
        )
    )
