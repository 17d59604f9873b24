"""Registry entries for Krichene et al. 2023: Algorithm 1 (SSP) and Algorithm 2 (noisy GD)
with the mu-family weights and eq. (12) clipping, under add/remove user.

Claims: ``krichene2023_weights.claim(beta, delta)``: the paper's (alpha, alpha beta)-RDP
converted to (eps, delta) at delta = 1e-5, with the exact sqrt(2 beta)-GDP of the same
Gaussian releases beside it (docs/design.md §6: at delta = 1e-5 an (eps, delta) audit of Gaussian
noise cannot be tight, the trade-off audit can).

The audit dataset (``audit_dataset``): d = 1, m = 3 tasks, Gamma_x = Gamma_* = 1, public
n = (3, 1, 1), n_users = 4, beta = beta_bar = 1/2, mu = 1/2. omega_i = n_i^-1/2 sqrt(4 beta / 3):

- user 0 touches tasks 0 and 1 (the user with the most tasks), x = 1, y = 1: at the clipping
  bounds; its budget omega_0^2 + omega_1^2 = 8/9 > 1/2 is clipped to exactly beta by eq. (12);
- user 3 is alone in task 2 (removing it empties the task) with x = 5, y = -7, clipped by
  line 2 to x = 1, y = -1; budget omega_2^2 = 2/3 > 1/2, clipped to beta;
- users 1 and 2 are inside the bounds in task 0.

In d = 1 the upper-triangle sensitivity equals the Frobenius one (x is on an axis), so
removing user 0 or user 3 moves the released (A-hat, b-hat) by exactly sqrt(2 beta) noise
units: mu = 1 is attained, the pairs are worst cases (``tests/papers/krichene2023/test_krichene2023_audits.py``
checks the shift). The release audited is the noisy sufficient statistic itself (6 numbers:
A-hat_i, b-hat_i); theta-hat is post-processing of it.

Noisy GD (``build_noisy_gd``): the same graph, every label y = 10 and x = 1, lambda = 0,
Gamma = 1, a constant public step eta = 0.01, T = 4 steps, and a radius 1e3 that is never
reached. Every record's gradient (theta - 10) is then clipped to -Gamma at every step, so
each step's noise-free gradient is the same constant, and theta^(T) = -eta T g - eta sigma
sum_t xi_t: one Gaussian with shift eta T w Gamma per task of the removed user and sd
eta Gamma sqrt(T/2) sqrt(T), i.e. exactly sqrt(2 beta) in noise units. So this pair attains
the composition's worst case (a Gaussian mechanism in disguise), and the audit can be as
tight as on SSP.

Planted entries (kind "planted", expected "violation"; tests/papers/krichene2023/planted.py):
- ``krichene2023.planted.unclipped-labels``: labels not clipped (user 0's y = 3), noise as declared;
- ``krichene2023.planted.gd-sigma-gamma``: Algorithm 2 with sigma = Gamma, T = 8;
- ``krichene2023.planted.rdp-half``: SSP claimed at (alpha, alpha beta / 2);
- ``krichene2023.planted.counts-twice``: two noisy count releases charged as one.
"""

from __future__ import annotations

import math

import numpy as np

from userdp.reference import krichene2023 as K
from userdp.reference import krichene2023_weights as W
from userdp.reference.claims import ApproxDP, Claims, GaussianDP
from userdp.reference.data import UserDataset
from userdp.reference.mechanisms import DEFAULT_RDP_ORDERS, gaussian_rdp, rdp_to_dp
from userdp.reference.neighbours import NeighbourPair

from userdp.audits.engine.ceiling import NoiseModel

from userdp.audits.engine.registry import AuditSetup, Entry, register

__all__ = ["M", "N_COUNTS", "N_USERS", "audit_dataset", "build_noisy_gd", "removal_pairs", "weights"]

PAPER = "Krichene et al. 2023"
M = 3
N_COUNTS = (3.0, 1.0, 1.0)
N_USERS = 4
SAMPLES = 200_000  # 6-number Gaussian releases: ~1 s per entry
DELTA = 1e-5
PARAMS = {"beta": 0.5, "mu": 0.5, "delta": DELTA}


def audit_dataset(labels=(1.0, 0.3, -0.4, -7.0), x0: float = 1.0) -> UserDataset:
    """The module docstring's graph: records (task, user, x, y)."""
    tasks = np.array([0, 1, 0, 0, 2])
    users = np.array([0, 0, 1, 2, 3])
    x = np.array([x0, x0, 0.5, -0.2, 5.0])
    y = np.array([labels[0], labels[0], labels[1], labels[2], labels[3]])
    return UserDataset(x[:, None], users, labels=y, task_ids=tasks)


def weights(dataset: UserDataset, beta: float, mu: float) -> np.ndarray:
    """mu-family omega from the PUBLIC n = N_COUNTS and n_users = N_USERS, then eq. (12)."""
    return W.adaptive_weights(dataset, m=M, beta=beta, mu=mu, n_counts=N_COUNTS, n_users=N_USERS)


def removal_pairs(D: UserDataset, users=(0, 3, 1)) -> list[NeighbourPair]:
    """The pairs (D, D without user u) for the given users, each described."""
    what = {
        0: "the user with the most tasks (2), at the clipping bounds",
        3: "the only user of task 2 (removal empties it), data beyond the bounds",
        1: "a user inside the bounds",
    }
    return [
        NeighbourPair(D, K.RELATION.neighbour(D, u), K.RELATION.name, u, f"remove user {u}: {what.get(u, '')}")
        for u in users
    ]


def _flat(A, b) -> np.ndarray:
    """(A-hat_i (d = 1), b-hat_i) of every task as one vector, (..., 2m)."""
    return np.concatenate([A.reshape(*A.shape[:-3], -1), b.reshape(*b.shape[:-2], -1)], axis=-1)


def _ssp_setup(beta, mu, delta, *, clip_labels=True, claim=None, labels=(1.0, 0.3, -0.4, -7.0)) -> AuditSetup:
    D = audit_dataset(labels)

    def stat(ds):
        w = weights(ds, beta, mu)
        if clip_labels:
            return K.statistic(ds, w, m=M, Gamma_x=1.0, Gamma_star=1.0)
        x = K.clip_data(ds.values, ds.labels, 1.0, 1.0)[0]
        A, _ = K.statistic(ds, w, m=M, Gamma_x=1.0, Gamma_star=1.0)
        b = np.zeros((M, 1))
        np.add.at(b, ds.task_ids, (w * ds.labels)[:, None] * x)  # planted: raw labels
        return A, b

    def mechanism(ds, rng, size):
        A, b = stat(ds)
        return _flat(A + rng.standard_normal((size, M, 1, 1)), b + rng.standard_normal((size, M, 1)))

    def reference_mechanism(ds, rng, size):
        return _flat(*K.ssp_release(ds, weights(ds, beta, mu), rng, size, m=M, Gamma_x=1.0, Gamma_star=1.0))

    return AuditSetup(
        reference_mechanism if clip_labels else mechanism,
        removal_pairs(D),
        W.claim(beta, delta) if claim is None else claim,
        output="vector",
        noise=NoiseModel("gaussian", lambda ds: _flat(*stat(ds)), 1.0),
    )


def build_ssp(beta=0.5, mu=0.5, delta=DELTA) -> AuditSetup:
    return _ssp_setup(beta, mu, delta)


GD_PARAMS = {"beta": 0.5, "mu": 0.5, "delta": DELTA, "T": 4, "eta": 0.01}


def _gd_setup(beta, mu, delta, T, eta, sigma_factor=1.0) -> AuditSetup:
    D = audit_dataset(labels=(10.0, 10.0, 10.0, 10.0), x0=1.0).with_fields(values=np.ones((5, 1)))
    steps = np.full((T, M), float(eta))
    sigma = K.gd_noise_scale(1.0, T) * sigma_factor

    def mechanism(ds, rng, size):
        w = weights(ds, beta, mu)
        if sigma_factor == 1.0:
            return K.gd_mechanism(ds, w, rng, size, m=M, Gamma=1.0, Lambda=0.0, eta=steps, radius=1e3)[..., 0]
        theta = np.zeros((size, M, 1))  # planted: sigma = Gamma
        for k in range(T):
            g = K.weighted_gradient(ds, w, theta, m=M, Gamma=1.0, Lambda=0.0)
            theta -= eta * (g + sigma * rng.standard_normal(g.shape))
        return theta[..., 0]

    def mean(ds):  # every gradient clipped: constant
        g = K.weighted_gradient(ds, weights(ds, beta, mu), np.zeros((M, 1)), m=M, Gamma=1.0, Lambda=0.0)
        return -eta * T * g[:, 0]

    return AuditSetup(
        mechanism,
        removal_pairs(D, (0, 3)),
        W.claim(beta, delta),
        output="vector",
        noise=NoiseModel("gaussian", mean, eta * sigma * math.sqrt(T)),
    )


def build_noisy_gd(beta=0.5, mu=0.5, delta=DELTA, T=4, eta=0.01) -> AuditSetup:
    """Entry ``krichene2023.noisy-gd``: Algorithm 2 on the audit dataset, its removal pairs."""
    return _gd_setup(beta, mu, delta, T, eta)


# ---------------------------------------------------------------------------- planted
def build_unclipped_labels(beta=0.5, mu=0.5, delta=DELTA) -> AuditSetup:
    """User 0's y = 3 used raw, b noise as if |y| <= Gamma_x Gamma_* = 1: true mu = sqrt(beta (1 + 9)) = 2.24."""
    return _ssp_setup(beta, mu, delta, clip_labels=False, labels=(3.0, 0.3, -0.4, -0.5))


def build_gd_sigma_gamma(beta=0.5, mu=0.5, delta=DELTA, T=8, eta=0.01) -> AuditSetup:
    """sigma = Gamma instead of Gamma sqrt(T/2): true mu = sqrt(2 beta) sqrt(T/2) = 2 at T = 8."""
    return _gd_setup(beta, mu, delta, T, eta, sigma_factor=math.sqrt(2.0 / T))


def build_rdp_half(beta=0.5, mu=0.5, delta=DELTA) -> AuditSetup:
    """The SSP release claimed at (alpha, alpha beta / 2): mu claimed sqrt(beta), true sqrt(2 beta)."""
    return _ssp_setup(beta, mu, delta, claim=W.claim(beta / 2, delta))


def build_counts_twice(k=2, sigma=2.0, delta=DELTA) -> AuditSetup:
    """Two independent ``private_counts`` releases, charged as one Gaussian with noise sigma: the
    claim's mu is sqrt(k) / sigma, the truth sqrt(2 k) / sigma (user 0 has 2 <= k tasks: counted fully)."""
    D = audit_dataset()
    mu_one = math.sqrt(k) / sigma
    rdp = gaussian_rdp(DEFAULT_RDP_ORDERS, math.sqrt(k), sigma)
    claim = Claims(ApproxDP(rdp_to_dp(DEFAULT_RDP_ORDERS, rdp, delta), delta), GaussianDP(mu_one, delta))

    def mechanism(ds, rng, size):
        exact = np.bincount(ds.task_ids, minlength=M).astype(float)  # no user has more than k tasks
        return np.tile(exact, 2) + sigma * rng.standard_normal((size, 2 * M))  # BUG: two draws, one charge

    return AuditSetup(
        mechanism,
        removal_pairs(D, (0,)),
        claim,
        output="vector",
        noise=NoiseModel("gaussian", lambda ds: np.tile(np.bincount(ds.task_ids, minlength=M), 2).astype(float), sigma),
    )


_REF = dict(kind="reference", paper=PAPER, relation=K.RELATION.name, expected="no violation found", true_epsilon=None)
register(
    Entry(
        name="krichene2023.ssp",
        algorithm="Algorithm 1 (task-weighted SSP), mu = 1/2 weights + eq. (12), release (A-hat, b-hat), d = 1, m = 3",
        function="userdp.reference.krichene2023.ssp_release",
        build=build_ssp,
        params=dict(PARAMS),
        samples=SAMPLES,
        **_REF,
    )
)
register(
    Entry(
        name="krichene2023.noisy-gd",
        algorithm="Algorithm 2 (task-weighted noisy GD), T = 4, constant public step, d = 1, m = 3",
        function="userdp.reference.krichene2023.gd_mechanism",
        build=build_noisy_gd,
        params=dict(GD_PARAMS),
        samples=SAMPLES,
        **_REF,
    )
)

_BUG = dict(kind="planted", paper=PAPER, relation=K.RELATION.name, expected="violation", samples=SAMPLES)
register(
    Entry(
        name="krichene2023.planted.unclipped-labels",
        algorithm="SSP with labels not clipped, b noise as if |y| <= 1 (the authors' code: "
        "docs/papers/krichene2023.md)",
        function="userdp.reference.krichene2023.ssp_release",
        build=build_unclipped_labels,
        params=dict(PARAMS),
        **_BUG,
    )
)
register(
    Entry(
        name="krichene2023.planted.gd-sigma-gamma",
        algorithm="noisy GD with sigma = Gamma instead of Gamma sqrt(T/2), T = 8",
        function="userdp.reference.krichene2023.gd_mechanism",
        build=build_gd_sigma_gamma,
        params={**GD_PARAMS, "T": 8},
        **_BUG,
    )
)
register(
    Entry(
        name="krichene2023.planted.rdp-half",
        algorithm="SSP claimed at (alpha, alpha beta / 2)",
        function="userdp.reference.krichene2023.ssp_release",
        build=build_rdp_half,
        params=dict(PARAMS),
        **_BUG,
    )
)
register(
    Entry(
        name="krichene2023.planted.counts-twice",
        algorithm="noisy task counts released twice, charged once (the authors' code: docs/papers/krichene2023.md)",
        function="userdp.reference.krichene2023_weights.private_counts",
        build=build_counts_twice,
        params={"k": 2, "sigma": 2.0, "delta": DELTA},
        **_BUG,
    )
)
