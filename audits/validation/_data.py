"""Dataset builders shared by the spec modules' generated cases (seeded, small, readable)."""

from __future__ import annotations

import numpy as np

from userdp.reference.data import UserDataset

__all__ = ["sizes", "user_ids", "add_user", "seeded", "erm_features"]


def seeded(algorithm: str, seed: int, k: int) -> np.random.Generator:
    """The generator of generated case ``k`` of ``algorithm`` for the validate seed ``seed``."""
    return np.random.default_rng([seed, k, sum(map(ord, algorithm))])


def sizes(rng: np.random.Generator, m: int, kind: str, top: int = 20) -> np.ndarray:
    """Records per user, (m,): "balanced" (every user the same, a few records), "skewed" (Zipf-like:
    ceil(top / l) for user l, so a few heavy users and many of one or two records), "single" (one each)."""
    if kind == "balanced":
        return np.full(m, int(rng.integers(2, 5)))
    if kind == "skewed":
        return np.ceil(top / np.arange(1, m + 1)).astype(np.int64)
    if kind == "single":
        return np.ones(m, dtype=np.int64)
    raise ValueError(f"kind must be balanced, skewed or single, got {kind!r}")


def user_ids(counts: np.ndarray) -> np.ndarray:
    """Record owners for per-user record counts, users 0..m-1 in order."""
    return np.repeat(np.arange(len(counts)), counts)


def add_user(D: UserDataset, values, labels=None, description: str = ""):
    """The add/remove-user pair (D, D plus one new user with the given records, id max + 1)."""
    from userdp.reference.neighbours import ADD_REMOVE_USER, NeighbourPair

    u = int(D.users.max()) + 1
    D2 = ADD_REMOVE_USER.neighbour(D, u, np.asarray(values, float), labels=labels)
    return NeighbourPair(D, D2, ADD_REMOVE_USER.name, u, description or f"add user {u}")


def erm_features(seed: int, n: int, d: int) -> np.ndarray:
    """(n, d) features inside the unit ball (norms in [0.3, 0.99)), rounded to 4 places: the ERM
    vectors' features (Amin's and Epasto's), so that a vector file prints them exactly."""
    g = np.random.default_rng(seed)
    X = g.normal(size=(n, d))
    return np.round(X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None] * g.uniform(0.3, 0.99, (n, 1)), 4)
