"""Registry entries for the ERM algorithms (vector outputs, d = 2).

- ``amin2019.erm-output-perturbation``: Amin et al. 2019 Algorithm 1 (first tau records
  per user) with CMS11 output perturbation, L2-regularised logistic regression;
  relation add/remove-user, claim eps-DP.
- ``epasto2020.weighted-erm``: Epasto et al. 2020 Algorithm 2 (weighted user-level loss,
  Lemma 3 weights from ``epasto2020.optimal_weights``) with noisy projected GD and RDP
  accounting, logistic regression; relation replace-user (features and labels, S_l
  public), claim (eps, delta)-DP.

Honest note on tightness. Both audits are far from tight, for reasons of the mechanisms,
not of the harness:
- output perturbation: the CMS11 bound 2 tau L / ((n_min + tau) Lambda) is a worst case
  over all data; for logistic loss near theta = 0 the gradient is sigma(0) = 1/2 of its
  Lipschitz bound, so the best pair we found moves theta-hat by 0.445 Delta_2; and with
  L2-Laplace noise in d = 2 the density ratio only reaches e^{eps ||shift|| / Delta_2} far in
  the tail. Measured: tightness 0.36 at 10^6 samples per side (seed 0), 0.32 at 10^5.
- noisy GD: the per-step gradient realises about half of Delta_2 = 2 L C_max (a label
  flip at theta ~ 0), the T = 4 releases are averaged into one output, and RDP -> (eps,
  delta) conversion is itself loose. Measured: tightness 0.12 at 10^5 samples (seed 0, ~3 s).
The property suite (tests/test_erm.py) is what checks the sensitivities exactly.
"""
from __future__ import annotations

import numpy as np

from userdp.reference import amin2019_erm as A
from userdp.reference import epasto2020 as W
from userdp.reference import epasto2020_erm as E
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import NeighbourPair

from . import AuditSetup, Entry, register

DEFAULT_SAMPLES = 100_000
AMIN_SAMPLES = 1_000_000   # output perturbation is one L2-Laplace draw per release: 10^6 take ~2 s

# ----------------------------------------------------------------------------- Amin 2019
AMIN_PARAMS = {"epsilon": 1.0, "tau": 2, "Lambda": 2.0, "n_min": 4}


def amin_default_dataset(tau: int = 2, n_light: int = 4) -> UserDataset:
    """User 0 has tau + 2 records at x = (1, 0), y = -1; n_light single-record users at x = (1, 0), y = +1.

    Found by a small search (Lambda in {0.25..2}, n_min in {2..8}): removing user 0 moves
    theta-hat by 0.445 Delta_2 at Lambda = 2, n_min = n_light = 4, the largest ratio seen.
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
        pairs.append(NeighbourPair(D, D2, rel.name, new_id, f"add user {new_id}: {tau} records x=(1,0), y={label:+.0f}"))
    return pairs


def build_amin(epsilon=1.0, tau=2, Lambda=2.0, n_min=4) -> AuditSetup:
    D = amin_default_dataset(tau, n_min)

    def mechanism(dataset, rng, size):
        return A.mechanism(dataset, rng, size, epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min)

    return AuditSetup(mechanism=mechanism, pairs=_amin_pairs(D, tau), claim=A.claim(epsilon), output="vector")


register(Entry(name="amin2019.erm-output-perturbation", kind="reference", paper="Amin et al. 2019",
               algorithm="Algorithm 1 (first tau records per user) + CMS11 output perturbation, logistic",
               relation=A.RELATION.name, function="userdp.reference.amin2019_erm.mechanism",
               expected="no violation found", build=build_amin, params=dict(AMIN_PARAMS),
               true_epsilon=None, samples=AMIN_SAMPLES))

# ---------------------------------------------------------------------------- Epasto 2020
EPASTO_PARAMS = {"epsilon": 1.0, "delta": 1e-5, "T": 4}
EPASTO_COUNTS = np.array([6, 3, 2, 1, 1, 1, 1, 1])


def epasto_default_dataset() -> UserDataset:
    """Zipf-like sizes EPASTO_COUNTS; every x = (1, 0); labels alternate +1, -1 in record order."""
    n = int(EPASTO_COUNTS.sum())
    X = np.tile([1.0, 0.0], (n, 1))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    return UserDataset(X, np.repeat(np.arange(EPASTO_COUNTS.size), EPASTO_COUNTS), labels=y)


def _replace(D: UserDataset, u: int, x, label) -> UserDataset:
    idx = D.records_of(u)
    v, y = D.values.copy(), D.labels.copy()
    v[idx], y[idx] = x, label
    return D.with_fields(values=v, labels=y)


def _epasto_pairs(D: UserDataset) -> list[NeighbourPair]:
    """Heaviest and lightest user: all records at x = (1, 0) with y = +1 vs y = -1 (a label flip
    at theta ~ 0 moves their gradient by sum_{S_u} c_i, the largest move near the start)."""
    pairs = []
    for u in dict.fromkeys([int(D.users[np.argmax(D.counts)]), int(D.users[np.argmin(D.counts)])]):
        a, b = _replace(D, u, [1.0, 0.0], 1.0), _replace(D, u, [1.0, 0.0], -1.0)
        pairs.append(NeighbourPair(a, b, E.RELATION.name, u, f"user {u} (s={D.records_of(u).size}): y all +1 vs all -1"))
    return pairs


def build_epasto(epsilon=1.0, delta=1e-5, T=4) -> AuditSetup:
    D = epasto_default_dataset()
    c, _ = W.optimal_weights(D, epsilon, 1.0)     # Lemma 3 weights: read only the public s_l

    def mechanism(dataset, rng, size):
        return E.mechanism(dataset, rng, size, c=c, epsilon=epsilon, delta=delta, T=T)

    return AuditSetup(mechanism=mechanism, pairs=_epasto_pairs(D), claim=E.claim(epsilon, delta), output="vector")


register(Entry(name="epasto2020.weighted-erm", kind="reference", paper="Epasto et al. 2020",
               algorithm="Algorithm 2 (weighted ERM, Lemma 3 weights) by noisy projected GD + RDP, logistic",
               relation=E.RELATION.name, function="userdp.reference.epasto2020_erm.mechanism",
               expected="no violation found", build=build_epasto, params=dict(EPASTO_PARAMS),
               true_epsilon=None, samples=DEFAULT_SAMPLES))
