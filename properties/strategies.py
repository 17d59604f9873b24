"""Hypothesis builders for user-level DP data (docs/design.md §8.5: strategies are named builders).

Each builder is an ``@st.composite`` strategy that draws the data shapes the papers
worry about: imbalanced users (Zipf-like sizes, many single-record users), personal
privacy levels (Acharya et al.'s conservative / medium / liberal mix), skewed task-user
graphs (Krichene et al.), weight vectors with a fixed budget, and neighbouring pairs
under each relation of ``userdp.reference.neighbours``, and records at the ends of the float
range (``extreme_floats``, ``extreme_datasets``, ``extreme_pairs``: near +-max, totals that
overflow, subnormals, -0.0), clipped into a mechanism's declared domain.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from userdp.reference.data import UserDataset
from userdp.reference.neighbours import get_relation, NeighbourPair

__all__ = [
    "user_size_profiles",
    "user_datasets",
    "epsilon_profiles",
    "task_user_graphs",
    "weights_summing_to",
    "neighbouring_pairs",
    "FLOAT_MAX",
    "extreme_floats",
    "extreme_datasets",
    "extreme_pairs",
]

_finite = dict(allow_nan=False, allow_infinity=False)
FLOAT_MAX = float(np.finfo(float).max)  # 1.7976931348623157e308
_TINY = float(np.finfo(float).tiny)  # 2.2250738585072014e-308, the smallest normal float


@st.composite
def user_size_profiles(draw, min_users: int = 1, max_users: int = 30, max_size: int = 50) -> np.ndarray:
    """s_l >= 1 for m users: uniform, Zipf-like (s_l ~ ceil(max_size / l^a)), or mostly singletons."""
    m = draw(st.integers(min_users, max_users))
    shape = draw(st.sampled_from(["uniform", "zipf", "singletons"]))
    if shape == "uniform":
        sizes = draw(st.lists(st.integers(1, max_size), min_size=m, max_size=m))
    elif shape == "zipf":
        a = draw(st.floats(0.5, 2.5))
        top = draw(st.integers(1, max_size))
        sizes = [max(1, int(np.ceil(top / (l + 1) ** a))) for l in range(m)]
    else:  # a few heavy users among many single-record users
        heavy = draw(st.lists(st.integers(1, max_size), min_size=0, max_size=min(3, m)))
        sizes = heavy + [1] * (m - len(heavy))
    return np.array(draw(st.permutations(sizes)), dtype=np.int64)


@st.composite
def user_datasets(
    draw,
    min_users: int = 1,
    max_users: int = 8,
    max_records_per_user: int = 6,
    dim: int | None = None,
    value_range=(0.0, 1.0),
    labels: bool = False,
    label_range=(-1.0, 1.0),
) -> UserDataset:
    """A dataset of imbalanced users with values in ``value_range`` (scalar, or (n, dim))."""
    sizes = draw(user_size_profiles(min_users, max_users, max_records_per_user))
    n = int(sizes.sum())
    ids = draw(st.lists(st.integers(0, 10_000), min_size=sizes.size, max_size=sizes.size, unique=True))
    lo, hi = value_range
    shape = n if dim is None else n * dim
    vals = np.array(draw(st.lists(st.floats(lo, hi, **_finite), min_size=shape, max_size=shape)))
    y = None
    if labels:
        y = np.array(draw(st.lists(st.floats(*label_range, **_finite), min_size=n, max_size=n)))
    return UserDataset(values=vals if dim is None else vals.reshape(n, dim), user_ids=np.repeat(ids, sizes), labels=y)


@st.composite
def epsilon_profiles(
    draw,
    n: int,
    mix: str | None = None,
    eps_c: float = 0.01,
    eps_m: float = 0.2,
    eps_l: float = 1.0,
    f_c: float = 0.34,
    f_m: float = 0.43,
) -> np.ndarray:
    """Per-record privacy levels eps_i > 0, shape (n,).

    ``mix="acharya"`` follows Acharya et al. 2024 §4 (authors' code, github krishnacharya/pp-ridge): the first
    floor(f_c n) records get U(eps_c, eps_m), the next floor(f_m n) get U(eps_m, eps_l), the
    rest eps_l. Otherwise: uniform levels, or the Acharya mix, drawn by Hypothesis.
    """
    mix = mix or draw(st.sampled_from(["uniform", "acharya", "two-level"]))
    if mix == "uniform":
        return np.array(draw(st.lists(st.floats(0.01, 5.0), min_size=n, max_size=n)))
    if mix == "two-level":
        lo, hi = sorted(draw(st.lists(st.floats(0.01, 5.0), min_size=2, max_size=2)))
        return np.array(draw(st.lists(st.sampled_from([lo, hi]), min_size=n, max_size=n)))
    n_c, n_m = int(np.floor(f_c * n)), int(np.floor(f_m * n))
    u = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n)))
    eps = np.full(n, eps_l)
    eps[:n_c] = eps_c + (eps_m - eps_c) * u[:n_c]
    eps[n_c : n_c + n_m] = eps_m + (eps_l - eps_m) * u[n_c : n_c + n_m]
    return eps


@st.composite
def task_user_graphs(draw, max_tasks: int = 6, max_users: int = 8, dim: int = 2) -> UserDataset:
    """A bipartite task-user graph Omega with skewed task sizes (Krichene et al. 2023).

    Task t is popular with probability ~ 1/(t+1): each user picks tasks with
    probabilities proportional to a Zipf profile, so task sizes n_t are skewed. One record
    per (task, user) pair; values are features in [0, 1]^dim, labels in [-1, 1].
    """
    k = draw(st.integers(1, max_tasks))
    m = draw(st.integers(1, max_users))
    p = 1.0 / np.arange(1, k + 1)
    rows = []
    for u in range(m):
        picks = draw(st.lists(st.integers(0, k - 1), min_size=1, max_size=k, unique=True))
        # keep popular tasks more often: task t kept if its draw falls under p_t (task 0 always)
        kept = [t for t in picks if t == picks[0] or draw(st.floats(0, 1)) < p[t]]
        rows += [(t, u) for t in kept]
    tasks, users = np.array(rows).T
    n = tasks.size
    x = np.array(draw(st.lists(st.floats(0, 1, **_finite), min_size=n * dim, max_size=n * dim)))
    y = np.array(draw(st.lists(st.floats(-1, 1, **_finite), min_size=n, max_size=n)))
    return UserDataset(values=x.reshape(n, dim), user_ids=users, labels=y, task_ids=tasks)


@st.composite
def weights_summing_to(draw, total: float, n: int) -> np.ndarray:
    """Non-negative weights w (n,) with sum(w) = total up to float rounding (1e-12 relative)."""
    raw = np.array(draw(st.lists(st.floats(0.0, 1.0, **_finite), min_size=n, max_size=n)))
    if raw.sum() == 0:
        raw = np.ones(n)
    return total * raw / raw.sum()


@st.composite
def neighbouring_pairs(draw, relation, datasets=None, lo: float = 0.0, hi: float = 1.0) -> NeighbourPair:
    """A dataset and one neighbour under ``relation`` (an object or its name).

    New values are drawn in [lo, hi]; Hypothesis picks which user or record changes. For
    add-remove-user, it either removes a user or adds one with 1..4 records.
    """
    rel = get_relation(relation) if isinstance(relation, str) else relation
    needs_labels = rel.name in ("replace-user-labels",)
    D = draw(datasets if datasets is not None else user_datasets(value_range=(lo, hi), labels=needs_labels))
    floats = st.floats(lo, hi, **_finite)
    if rel.name == "add-remove-user":
        if D.m >= 2 and draw(st.booleans()):
            u = int(draw(st.sampled_from(D.users.tolist())))
            return NeighbourPair(D, rel.neighbour(D, u), rel.name, u, f"remove user {u}")
        k = draw(st.integers(1, 4))
        new = np.array(draw(st.lists(floats, min_size=k * D.d, max_size=k * D.d))).reshape((k,) + D.values.shape[1:])
        y = None if D.labels is None else np.array(draw(st.lists(floats, min_size=k, max_size=k)))
        u = int(D.users.max()) + 1
        return NeighbourPair(D, rel.neighbour(D, u, new, labels=y), rel.name, u, f"add user {u}")
    if rel.name == "add-remove-record":
        if draw(st.booleans()):
            i = draw(st.integers(0, D.n - 1))
            return NeighbourPair(D, rel.neighbour(D, i), rel.name, _first_equal_record(D, i), f"remove record {i}")
        x = np.array(draw(st.lists(floats, min_size=D.d, max_size=D.d))).reshape(D.values.shape[1:])
        y = None if D.labels is None else draw(floats)
        u = draw(st.sampled_from(D.users.tolist() + [int(D.users.max()) + 1]))  # an old or a new owner
        N = rel.neighbour(D, new_value=x, new_label=y, user_id=u)
        return NeighbourPair(D, N, rel.name, _first_equal_record(N, N.n - 1), "add a record")
    if rel.name == "replace-record":
        i = draw(st.integers(0, D.n - 1))
        x = np.array(draw(st.lists(floats, min_size=D.d, max_size=D.d))).reshape(D.values.shape[1:])
        y = None if D.labels is None else draw(floats)
        if np.array_equal(x, D.values[i]) and (y is None or y == D.labels[i]):
            x = _moved(x, lo, hi)  # a neighbour differs: never return D itself
        return NeighbourPair(D, rel.neighbour(D, i, x, y), rel.name, i, f"replace record {i}")
    u = int(draw(st.sampled_from(D.users.tolist())))
    col = getattr(D, rel.field)
    shape = (D.records_of(u).size,) + col.shape[1:]
    new = np.array(draw(st.lists(floats, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))).reshape(shape)
    if np.array_equal(new, col[D.records_of(u)]):
        new = _moved(new, lo, hi)  # a neighbour differs: never return D itself
    return NeighbourPair(D, rel.neighbour(D, u, new), rel.name, u, f"replace user {u}'s {rel.field}")


def _first_equal_record(D, i: int) -> int:
    """The first j with record j == record i (value, label, owner), by a plain loop: the
    add-remove-record unit, computed independently of ``neighbours``."""
    rec = lambda j: (  # noqa: E731
        np.asarray(D.values[j]).tolist(),
        None if D.labels is None else D.labels[j],  # noqa: E731
        int(D.user_ids[j]),
    )
    return next(j for j in range(D.n) if rec(j) == rec(i))


def _moved(a: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """``a`` with its first entry moved to the farther end of [lo, hi] (so it changes)."""
    a = np.array(a, dtype=float)
    flat = a.reshape(-1)
    flat[0] = hi if abs(flat[0] - lo) <= abs(flat[0] - hi) else lo
    return a


# ------------------------------------------------------------------ extreme floats
def extreme_floats(lo: float = -FLOAT_MAX, hi: float = FLOAT_MAX):
    """Floats at the ends of the float range, clipped into [lo, hi] (a record's declared domain):
    near +-max (1e307 .. 1.7976931348623157e308), +-1e300, subnormals (5e-324 .. 2.2e-308) of
    both signs, -0.0 and 0.0, the domain's own ends, and ordinary values in [-1, 1]."""
    lo, hi = float(lo), float(hi)
    raw = st.one_of(
        st.floats(1e307, FLOAT_MAX),
        st.floats(-FLOAT_MAX, -1e307),
        st.sampled_from([FLOAT_MAX, -FLOAT_MAX, 1e300, -1e300, 5e-324, -5e-324, _TINY, -_TINY, 0.0, -0.0, lo, hi]),
        st.floats(5e-324, _TINY, allow_subnormal=True),
        st.floats(-_TINY, -5e-324, allow_subnormal=True),
        st.floats(-1.0, 1.0),
    )
    return raw.map(lambda v: v if lo <= v <= hi else min(max(v, lo), hi))  # keeps -0.0 when 0 is inside


def _into_ball(a: np.ndarray, radius: float) -> np.ndarray:
    """Rows of a (n, d) with norm > radius moved onto the ball (computed on rows scaled by their
    largest entry, so a row near the float maximum is moved too); rows inside are unchanged."""
    with np.errstate(all="ignore"):
        top = np.max(np.abs(a), axis=1, keepdims=True)
        unit = a / np.where(top > 0, top, 1.0)
        r = np.sqrt(np.sum(unit * unit, axis=1, keepdims=True))
        out = np.where(top * r > radius, unit * (radius / np.where(r > 0, r, 1.0)), a)
    return out


def _extreme_field(draw, D: UserDataset, shape: tuple, lo: float, hi: float) -> np.ndarray:
    """One private field of the shape of D's, in [lo, hi], from one of four families."""
    family = draw(st.sampled_from(["elementwise", "overflowing users", "huge among zeros", "tiny"]))
    size = int(np.prod(shape))
    if family == "elementwise":  # at most 64 drawn entries, repeated over a larger field
        k = min(size, 64)
        return np.resize(np.array(draw(st.lists(extreme_floats(lo, hi), min_size=k, max_size=k)), float), shape)
    clip = lambda v: np.clip(v, lo, hi)  # noqa: E731
    if family == "overflowing users":  # every record near the max: user totals and sums overflow
        sign = draw(st.sampled_from([1.0, -1.0]))
        return clip(np.full(shape, sign * draw(st.floats(1e307, FLOAT_MAX))))
    if family == "huge among zeros":  # some users at +-1e300 (or the max), the rest at 0
        v = draw(st.sampled_from([1e300, -1e300, FLOAT_MAX, -FLOAT_MAX]))
        users = D.users.tolist()
        huge = draw(st.lists(st.sampled_from(users), min_size=1, max_size=len(users), unique=True))
        rows = np.isin(D.user_ids, huge)
        out = np.zeros(shape)
        out[rows] = v
        return clip(out)
    tiny = st.sampled_from([5e-324, -5e-324, _TINY, -_TINY, 1e-310, 0.0, -0.0])
    k = min(size, 64)
    return clip(np.resize(np.array(draw(st.lists(tiny, min_size=k, max_size=k)), float), shape))


@st.composite
def extreme_datasets(draw, base: UserDataset, fields, balls=None) -> UserDataset:
    """``base`` (its public structure: users, sizes, tasks, epsilons, and every field not named)
    with the private ``fields`` ({name: (lo, hi)}) redrawn at the float extremes, clipped into
    [lo, hi]; a field of ``balls`` ({name: radius}) is then moved into the ball of its radius."""
    balls = balls or {}
    new = {}
    for name, (lo, hi) in fields.items():
        shape = getattr(base, name).shape
        a = _extreme_field(draw, base, shape, lo, hi)
        if name in balls:
            a = _into_ball(a.reshape(shape[0], -1), balls[name]).reshape(shape)
        new[name] = a
    return base.with_fields(**new)


@st.composite
def extreme_pairs(draw, base: UserDataset, fields, balls=None) -> tuple[UserDataset, UserDataset]:
    """(D, D'): an ``extreme_datasets`` draw and the same with one user's private records redrawn
    (public structure kept, so that both sides are legal inputs with the same public parameters)."""
    D = draw(extreme_datasets(base, fields, balls))
    other = draw(extreme_datasets(base, fields, balls))
    u = draw(st.sampled_from(D.users.tolist()))
    rows = D.user_ids == u
    new = {}
    for name in fields:
        a = np.array(getattr(D, name))
        a[rows] = getattr(other, name)[rows]
        new[name] = a
    return D, D.with_fields(**new)
