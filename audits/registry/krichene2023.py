"""Registry entries for Krichene et al. 2023: Algorithm 1 (SSP) and Algorithm 2 (noisy GD)
with the mu-family weights and eq. (12) clipping, under add/remove user.

Claims: ``krichene2023_weights.claim(beta, delta)``: the paper's (alpha, alpha beta)-RDP
converted to (eps, delta) at delta = 1e-5, with the exact sqrt(2 beta)-GDP of the same
Gaussian releases beside it (DESIGN §6: at delta = 1e-5 an (eps, delta) audit of Gaussian
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
units: mu = 1 is attained, the pairs are worst cases (``tests/test_krichene2023_audits.py``
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

Planted entries (kind "planted", expected "violation"; tests/planted/krichene2023.py):
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

from userdp.audits.ceiling import NoiseModel

from . import AuditSetup, Entry, register

PAPER = "Krichene et al. 2023"
M = 3
N_COUNTS = (3.0, 1.0, 1.0)
N_USERS = 4
SAMPLES = 200_000            # 6-number Gaussian releases: ~1 s per entry
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
    what = {0: "the user with the most tasks (2), at the clipping bounds",
            3: "the only user of task 2 (removal empties it), data beyond the bounds",
            1: "a user inside the bounds"}
    return [NeighbourPair(D, K.RELATION.neighbour(D, u), K.RELATION.name, u, f"remove user {u}: {what.get(u, '')}")
            for u in users]


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
        np.add.at(b, ds.task_ids, (w * ds.labels)[:, None] * x)        # planted: raw labels
        return A, b

    def mechanism(ds, rng, size):
        A, b = stat(ds)
        return _flat(A + rng.standard_normal((size, M, 1, 1)), b + rng.standard_normal((size, M, 1)))

    def reference_mechanism(ds, rng, size):
        return _flat(*K.ssp_release(ds, weights(ds, beta, mu), rng, size, m=M, Gamma_x=1.0, Gamma_star=1.0))

    return AuditSetup(reference_mechanism if clip_labels else mechanism, removal_pairs(D),
                      W.claim(beta, delta) if claim is None else claim, output="vector",
                      noise=NoiseModel("gaussian", lambda ds: _flat(*stat(ds)), 1.0))


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
        theta = np.zeros((size, M, 1))                                 # planted: sigma = Gamma
        for k in range(T):
            g = K.weighted_gradient(ds, w, theta, m=M, Gamma=1.0, Lambda=0.0)
            theta -= eta * (g + sigma * rng.standard_normal(g.shape))
        return theta[..., 0]

    def mean(ds):                                                       # every gradient clipped: constant
        g = K.weighted_gradient(ds, weights(ds, beta, mu), np.zeros((M, 1)), m=M, Gamma=1.0, Lambda=0.0)
        return -eta * T * g[:, 0]

    return AuditSetup(mechanism, removal_pairs(D, (0, 3)), W.claim(beta, delta), output="vector",
                      noise=NoiseModel("gaussian", mean, eta * sigma * math.sqrt(T)))


def build_noisy_gd(beta=0.5, mu=0.5, delta=DELTA, T=4, eta=0.01) -> AuditSetup:
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
        exact = np.bincount(ds.task_ids, minlength=M).astype(float)    # no user has more than k tasks
        return np.tile(exact, 2) + sigma * rng.standard_normal((size, 2 * M))   # BUG: two draws, one charge

    return AuditSetup(mechanism, removal_pairs(D, (0,)), claim, output="vector",
                      noise=NoiseModel("gaussian", lambda ds: np.tile(np.bincount(ds.task_ids, minlength=M), 2)
                                       .astype(float), sigma))


_REF = dict(kind="reference", paper=PAPER, relation=K.RELATION.name, expected="no violation found", true_epsilon=None)
register(Entry(name="krichene2023.ssp", algorithm="Algorithm 1 (task-weighted SSP), mu = 1/2 weights + eq. (12), "
                                                  "release (A-hat, b-hat), d = 1, m = 3",
               function="userdp.reference.krichene2023.ssp_release", build=build_ssp, params=dict(PARAMS),
               samples=SAMPLES, **_REF))
register(Entry(name="krichene2023.noisy-gd", algorithm="Algorithm 2 (task-weighted noisy GD), T = 4, constant "
                                                       "public step, d = 1, m = 3",
               function="userdp.reference.krichene2023.gd_mechanism", build=build_noisy_gd, params=dict(GD_PARAMS),
               samples=SAMPLES, **_REF))

_BUG = dict(kind="planted", paper=PAPER, relation=K.RELATION.name, expected="violation", samples=SAMPLES)
register(Entry(name="krichene2023.planted.unclipped-labels",
               algorithm="SSP with labels not clipped, b noise as if |y| <= 1 (authors' code, NOTES.md)",
               function="userdp.reference.krichene2023.ssp_release", build=build_unclipped_labels,
               params=dict(PARAMS), **_BUG))
register(Entry(name="krichene2023.planted.gd-sigma-gamma",
               algorithm="noisy GD with sigma = Gamma instead of Gamma sqrt(T/2), T = 8",
               function="userdp.reference.krichene2023.gd_mechanism", build=build_gd_sigma_gamma,
               params={**GD_PARAMS, "T": 8}, **_BUG))
register(Entry(name="krichene2023.planted.rdp-half", algorithm="SSP claimed at (alpha, alpha beta / 2)",
               function="userdp.reference.krichene2023.ssp_release", build=build_rdp_half, params=dict(PARAMS), **_BUG))
register(Entry(name="krichene2023.planted.counts-twice",
               algorithm="noisy task counts released twice, charged once (authors' code, NOTES.md)",
               function="userdp.reference.krichene2023_weights.private_counts", build=build_counts_twice,
               params={"k": 2, "sigma": 2.0, "delta": DELTA}, **_BUG))


# ------------------------------------------------------------------ userdp validate
SSP_KEYS = ("m", "n_counts", "n_users", "beta", "mu", "Gamma_x", "Gamma_star")


def ssp_adaptive_release(dataset, rng, size=None, *, m, n_counts, n_users, beta, mu, Gamma_x, Gamma_star):
    """The release validated as ``krichene2023.ssp``: ``K.ssp_release`` with the §5 mu-family
    weights from public n_counts, n_users and eq. (12) clipping at beta (beta_bar = beta),
    computed inside from the dataset (so that an add/remove-user pair recomputes them, as the
    paper's algorithm does). Returns (A-hat (size, m, d, d), b-hat (size, m, d))."""
    w = W.adaptive_weights(dataset, m=m, beta=beta, mu=mu, n_counts=n_counts, n_users=n_users)
    return K.ssp_release(dataset, w, rng, size, m=m, Gamma_x=Gamma_x, Gamma_star=Gamma_star)


def ssp_adaptive_statistic(dataset, *, m, n_counts, n_users, beta, mu, Gamma_x, Gamma_star):
    """(A-bar, b-bar) under the same weights: the mean of ``ssp_adaptive_release`` (the noise,
    Gamma_x^2 Xi_i and Gamma_x^2 Gamma_* xi_i, has mean zero), flattened like the releases."""
    w = W.adaptive_weights(dataset, m=m, beta=beta, mu=mu, n_counts=n_counts, n_users=n_users)
    A, b = K.statistic(dataset, w, m=m, Gamma_x=Gamma_x, Gamma_star=Gamma_star)
    return flatten_ssp((A[None], b[None]), 1)[0]


_TRIU: dict = {}


def flatten_ssp(out, size: int) -> np.ndarray:
    """(A-hat, b-hat) -> (size, m d (d + 1) / 2 + m d): the upper triangle of every A-hat_i
    (diagonal included: the released entries, the lower triangle is a copy) then every b-hat_i.
    k is 6 at d = 1, m = 3 and 10 at d = 2, m = 2 (the cases below keep it so). Kept lean: a
    target whose releases share randomness is flattened once per release."""
    try:
        A_hat, b_hat = out
        A_hat, b_hat = np.asarray(A_hat, dtype=float), np.asarray(b_hat, dtype=float)
        d = A_hat.shape[-1]
        if A_hat.ndim != 4 or A_hat.shape[0] != size or A_hat.shape[-2] != d or b_hat.shape != A_hat.shape[:-1]:
            raise ValueError(f"shapes {A_hat.shape} and {b_hat.shape}")
    except (TypeError, ValueError) as exc:
        from userdp.audits.targets import UserCodeError
        raise UserCodeError(f"the SSP release must be a pair (A-hat (size, m, d, d), b-hat (size, m, d)) with "
                            f"size = {size}: {exc}") from None
    if d not in _TRIU:
        _TRIU[d] = np.triu_indices(d)
    k, l = _TRIU[d]
    return np.concatenate([A_hat[:, :, k, l].reshape(size, -1), b_hat.reshape(size, -1)], axis=1)


def _bounds2_dataset() -> UserDataset:
    """The audit graph with every bound at 2: user 0 at x = 3 (clipped to Gamma_x = 2), y = 9
    (clipped to Gamma_x Gamma_* = 4); user 3 at x = 5, y = -7 (clipped to 2, -4)."""
    return audit_dataset(labels=(9.0, 0.3, -0.4, -7.0), x0=3.0)


BOUNDS2 = {"m": M, "n_counts": np.array(N_COUNTS), "n_users": N_USERS, "beta": 0.5, "mu": 0.5,
           "Gamma_x": 2.0, "Gamma_star": 2.0}


def _generated_graph(seed: int = 3) -> tuple[UserDataset, dict]:
    """d = 2, m = 2: 12 users, each in task 0, task 1 or both (skewed: task 0 has most), x ~ N(0, I)
    x 1.2 (some beyond Gamma_x = 1.5), y ~ N(0, 1) x 1.5 (some beyond 1.5); public n_counts = the
    graph's own sizes, n_users = 12, beta = 1, mu = 1/4."""
    g = np.random.default_rng(seed)
    tasks, users = [], []
    for j in range(12):
        mine = [0, 1] if j % 4 == 0 else ([0] if j % 4 in (1, 2) else [1])
        tasks += mine
        users += [j] * len(mine)
    t = np.array(tasks)
    D = UserDataset(1.2 * g.standard_normal((t.size, 2)), np.array(users), labels=1.5 * g.standard_normal(t.size),
                    task_ids=t)
    return D, {"m": 2, "n_counts": np.bincount(t, minlength=2).astype(float), "n_users": 12, "beta": 1.0, "mu": 0.25,
               "Gamma_x": 1.5, "Gamma_star": 1.0}


def _validation_cases() -> list:
    """Differential cases (``audits/validate.py``); 6 + 6 + 10 = 22 coordinates in all:

    1. the registry's audit graph (d = 1, m = 3, Gamma_x = Gamma_* = 1, beta = mu = 1/2): user 0
       is clipped by eq. (12) (budget 8/9 -> 1/2: its weights 0.471, 0.816 -> 0.354, 0.612, a
       change of A-bar_0 by 0.118 at noise sd 1, z ~ 17 at 20,000 releases); user 3's label
       y = -7 is clipped to -1 (raw: b-bar_2 moves by 0.707 x 6 = 4.2); users 1 and 2 are
       below beta (budget 2/9: per-user normalisation would scale them by 1.5);
    2. the same graph with every bound at 2 (``_bounds2_dataset``: Gamma_x = Gamma_* = 2, noise
       sd 4 on A and 8 on b): the two noise scales differ, so a swap of them, or the noise of
       Gamma_x instead of Gamma_x^2, changes each coordinate's spread by 2 x (KS ~0.3);
    3. a generated d = 2, m = 2 graph (``_generated_graph``): the symmetric d x d noise
       (off-diagonal entry drawn once), clipping in L2 of 2-vectors, mu = 1/4."""
    from userdp.audits.validate import Case
    base = {"m": M, "n_counts": np.array(N_COUNTS), "n_users": N_USERS, "beta": 0.5, "mu": 0.5,
            "Gamma_x": 1.0, "Gamma_star": 1.0}
    G, gp = _generated_graph()
    return [Case(audit_dataset(), base, "audit graph, d = 1, m = 3, bounds 1, beta = mu = 1/2"),
            Case(_bounds2_dataset(), dict(BOUNDS2), "audit graph, d = 1, m = 3, Gamma_x = Gamma_* = 2"),
            Case(G, gp, "generated graph, d = 2, m = 2, 12 users, beta = 1, mu = 1/4")]


def _validation_designs() -> list:
    """One audit design: the bounds-2 graph (Gamma_x = Gamma_* = 2, beta = mu = 1/2, claim
    ``W.claim(1/2, 1e-5)``: sqrt(2 beta) = 1-GDP, audited through its trade-off curve), removing
    user 0 (2 tasks, x = 3 and y = 9 beyond the bounds) or user 3 (alone in task 2, x = 5,
    y = -7). For the reference each moves (A-hat, b-hat) by exactly mu = 1 noise unit (x on
    the axis, both clipped to their bounds, both budgets clipped to beta by eq. (12)); users
    inside the bounds move it by ~0.03 and are left out. In noise units (sensitivity / sd of
    each block), the bugs give:

    - labels unclipped: user 0's b moves by 2 w 9 / 8 = 2.25 w per task (not w): mu =
      sqrt(beta (1 + 2.25^2)) = 1.74; user 3's y = -7 gives 1.75 w: mu = 1.42;
    - no eq. (12) clipping (w = omega): user 0's budget is 8/9: mu = sqrt(2 x 8/9) = 1.33
      (user 3's 2/3: 1.15);
    - A and b noise swapped: A moves by 4 sqrt(beta) / 8, b by 8 sqrt(beta) / 4: mu =
      sqrt(beta (1/4 + 4)) = 1.46;
    - noise sd Gamma_x and Gamma_x Gamma_* (not Gamma_x^2): both blocks move by 2 sqrt(beta):
      mu = 2;
    - per-user normalisation (every user to beta exactly) is private at mu = 1: no finding.
    Measured mu_lb at 10^5 per side (seeds 0-2): reference-like 0.95-0.97; the bugs 1.69, 1.28,
    1.41, 1.95 (user 0's pair)."""
    from userdp.audits.validate import AuditDesign
    D = _bounds2_dataset()
    return [AuditDesign(removal_pairs(D, (0, 3)), dict(BOUNDS2), W.claim(0.5, DELTA),
                        "bounds 2, beta = mu = 1/2: remove user 0 (2 tasks, beyond the bounds) or user 3 (alone in "
                        "task 2, y = -7)", output="vector")]


def _register_validation():
    from userdp.audits.validate import Case, ValidationSpec, register_validation

    def repeated_pair():
        D = audit_dataset()
        twice = UserDataset(np.vstack([D.values, [[0.5]]]), np.append(D.user_ids, 1),
                            labels=np.append(D.labels, 0.5), task_ids=np.append(D.task_ids, 0))
        return [Case(twice, {"m": M, "n_counts": np.array(N_COUNTS), "n_users": N_USERS, "beta": 0.5, "mu": 0.5,
                             "Gamma_x": 1.0, "Gamma_star": 1.0},
                     "user 1 with two records in task 0 (Omega is a set: one (x_ij, y_ij) per pair; a second "
                     "record doubles its weight in the sum, which the budget sum_i w_ij^2 does not count)")]

    register_validation(ValidationSpec(
        algorithm="krichene2023.ssp", reference=ssp_adaptive_release, statistic=ssp_adaptive_statistic,
        cases=_validation_cases, designs=_validation_designs, suite="userdp.properties.krichene2023",
        stage_params={"weights": ("m", "n_counts", "n_users", "beta", "mu"), "statistic": SSP_KEYS,
                      "sensitivity": ("beta", "Gamma_x", "Gamma_star"), "noise_scale": ("Gamma_x", "Gamma_star")},
        takes_dataset=("weights", "statistic"), refusals=repeated_pair, flatten=flatten_ssp,
        audit_flatten=flatten_ssp,                   # the harness reads arrays, not (A-hat, b-hat) pairs
        stage_flatten=lambda out: flatten_ssp((np.asarray(out[0])[None], np.asarray(out[1])[None]), 1)[0],
        why="Algorithm 1's released (A-hat_i, b-hat_i) with the §5 weights and eq. (12); releases flattened "
            "to the upper triangles of A-hat and b-hat"))


_register_validation()
