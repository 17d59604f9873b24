"""The table of invalid inputs for every public function (Wycheproof's invalid vectors).

One ``Entry`` per public callable: how to call it, a factory of VALID keyword arguments
(tiny data, fresh objects every call), and for each parameter the bad values it must
refuse. ``tests/test_bad_input.py`` runs every (entry, parameter, bad value) call and
demands a ``ValueError`` or ``TypeError`` whose message names the parameter (or one of the
entry's declared aliases for it) within a time limit, or, for a value the entry lists in
``ok``, a normal return (a documented valid input).

Bad values by kind of parameter: ``EPS``, ``DELTA``/``DELTA_POS``, ``POS``, ``NONNEG``,
``RNG``, ``SIZE``, ``INT``, ``DATASET``, ``ARRAY`` below (each list is what any such parameter
must refuse, by the supported ranges of ``userdp.reference._checks``); an entry adds the bad
values of its own domain (labels outside [0, B], ||x|| > R, h outside [s_1, s_m], index
arrays out of range or duplicated, ...). A value is listed only if it is out of the
parameter's documented domain; values the documentation admits go in ``ok``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from userdp import reference
from userdp.audits.engine import bounds as Bd
from userdp.audits.engine import harness as H
from userdp.properties import adapter as Ad
from userdp.reference import amin2019 as A
from userdp.reference import amin2019_erm as AE
from userdp.reference import claims as Cl
from userdp.reference import epasto2020 as E
from userdp.reference import epasto2020_erm as EE
from userdp.reference import epasto2020_gwa as G
from userdp.reference import erm
from userdp.reference import mechanisms as M
from userdp.reference import neighbours as N
from userdp.reference.data import EmptyDataset, UserDataset

nan, inf = math.nan, math.inf


# ------------------------------------------------------------------------ bad values by kind
def EPS():
    """Privacy levels: [1e-50, 50] (50 without the explicit opt-in)."""
    return [
        0,
        0.0,
        -1.0,
        nan,
        inf,
        -inf,
        1e308,
        5e-324,
        51.0,
        "1",
        None,
        True,
        [1.0],
        1 + 1j,
        np.float64(nan),
        np.True_,
    ]


def DELTA():
    """Failure probabilities where 0 is allowed: [0, 1)."""
    return [-0.1, 1.0, 1.5, nan, inf, "x", None, True]


def DELTA_POS():
    """Failure probabilities where delta > 0 is needed (Gaussian noise, RDP conversion)."""
    return [0.0] + DELTA()


def POS():
    """Positive magnitudes (bounds, sensitivities, sigma > 0, Lambda, caps, radii): [1e-50, 1e50]."""
    return [0, 0.0, -1.0, nan, inf, 1e308, 5e-324, 1e-200, 1e60, "1", None, True, [1.0]]


def NONNEG():
    """Magnitudes where 0 is valid (a noise standard deviation sigma >= 0): 0 or [1e-50, 1e50]."""
    return [-1.0, nan, inf, 1e308, 1e60, 1e-200, "x", True, [0.5]]


def RNG():
    return [0, 1, None, "seed", np.random.RandomState(0), np.random, np.random.default_rng(0).bit_generator]


def SIZE():
    """None or a number of releases: int (not bool or float), in [1, 10^8]."""
    return [0, -1, 2.5, True, np.True_, "3", 10**8 + 1, 10**12, np.float64(2.0)]


MAX_INT = 2**31 - 1


def INT(lo: int = 1, hi: int = MAX_INT):
    """Integer counts and iteration limits: int (not bool or float), in [lo, hi] (hi: the
    parameter's documented maximum; 2^31 - 1 unless the function states another)."""
    return [lo - 1, -1, 1.5, True, np.True_, None, "2", hi + 1, 2**63, 10**30, float(lo + 1)]


def DATASET():
    return [np.array([0.5, 0.5]), None, [0.5, 0.5], "data", {"values": [0.5]}]


def ARRAY():
    """A float array parameter (weights, theta, values): finite real numbers only."""
    return [None, "abc", ["a", "b"], [1 + 1j, 0.5], np.array([0.5, None], dtype=object), [[1.0], [1.0, 2.0]]]


def finite_bad(shape_like: np.ndarray):
    """``shape_like`` with a NaN, with an inf, and with 1e308 in its first entry."""
    out = []
    for v in (nan, inf, -inf):
        a = np.array(shape_like, dtype=float, copy=True)
        a.flat[0] = v
        out.append(a)
    return out


# --------------------------------------------------------------------------- tiny data
def rng():
    return np.random.default_rng(0)


def scalar_ds():
    """Three users (2, 1, 1 records) with values in [0, 1]."""
    return UserDataset.from_user_lists([[0.2, 0.4], [0.5], [0.9]])


def erm_ds():
    """Logistic-ready: ||x_i|| <= 1, labels in {-1, +1}; users 0 (3 records), 1, 2."""
    X = np.array([[0.6, 0.0], [0.0, 0.5], [0.3, 0.3], [-0.5, 0.2], [0.1, -0.7]])
    return UserDataset(X, np.array([0, 0, 0, 1, 2]), labels=np.array([1.0, -1.0, 1.0, -1.0, 1.0]))


def gwa_ds():
    """Full-rank X (n = 8, d = 2), labels in [0, 1]; users of sizes 3, 2, 1, 1, 1."""
    X = np.array([[1.0, 0.2], [0.8, -0.5], [0.1, 1.0], [-0.3, 0.9], [1.0, 1.0], [0.5, -1.0], [-1.0, 0.3], [0.2, 0.4]])
    return UserDataset(X, np.array([0, 0, 0, 1, 1, 2, 3, 4]), labels=np.linspace(0.1, 0.9, 8))


def c_uniform(D):
    return np.full(D.n, 1.0 / D.n)


def with_values(D, i, v):
    x = D.values.copy()
    x.flat[i] = v
    return D.with_fields(values=x)


def with_labels(D, i, v):
    y = D.labels.copy()
    y[i] = v
    return D.with_fields(labels=y)


def ols(D):
    return G.ols_C(G.features(D))


def sl_T(D, h=1):
    return G.sample_limit_selection(D, h, rng())


# -------------------------------------------------------------------------------- entries
@dataclass
class Entry:
    """``call(**valid())`` must succeed; ``call(**{**valid(), p: v})`` must refuse each v in bad[p]."""

    name: str  # dotted public name, e.g. "mechanisms.laplace_mechanism"
    call: Callable[..., Any]
    valid: Callable[[], dict]
    bad: dict[str, list]
    ok: dict[str, list] = field(default_factory=dict)  # documented valid values: must succeed
    alias: dict[str, tuple] = field(default_factory=dict)  # other words an error may name p by
    legacy: bool = False  # public only on old checkouts (the probe uses it)


DS_ALIAS = ("dataset", "values", "labels", "user_ids", "UserDataset")
TABLE: list[Entry] = []


def entry(_name, _call, _valid, ok=None, alias=None, legacy=False, **bad):
    al = {p: DS_ALIAS for p in bad if p in ("dataset", "D", "a", "b", "dataset_or_counts")}
    al.update(alias or {})
    TABLE.append(Entry(_name, _call, _valid, bad, ok or {}, al, legacy))


# ============================================================================ mechanisms
entry(
    "mechanisms.laplace_scale",
    M.laplace_scale,
    lambda: dict(sensitivity=1.0, epsilon=1.0),
    sensitivity=POS(),
    epsilon=EPS(),
)
entry(
    "mechanisms.laplace_mechanism",
    M.laplace_mechanism,
    lambda: dict(value=0.5, sensitivity=1.0, epsilon=1.0, rng=rng(), size=None),
    value=[nan, inf, 1e308, 2.0**60, [2.0**60, 0.0], "1", None, [[1.0, 2.0]], [1 + 1j]],
    sensitivity=POS(),
    epsilon=EPS(),
    rng=RNG(),
    size=SIZE(),
    ok={"size": [1, 3]},
    alias={"value": ("value",), "sensitivity": ("sensitivity", "Laplace scale")},
)
entry(
    "mechanisms.gaussian_sigma_classical",
    M.gaussian_sigma_classical,
    lambda: dict(sensitivity=1.0, epsilon=0.5, delta=1e-5),
    sensitivity=POS(),
    epsilon=EPS() + [1.0, 2.0],
    delta=DELTA_POS(),
)
entry(
    "mechanisms.gaussian_sigma_analytic",
    M.gaussian_sigma_analytic,
    lambda: dict(sensitivity=1.0, epsilon=1.0, delta=1e-5, tol=1e-12),
    sensitivity=POS(),
    epsilon=EPS(),
    delta=DELTA_POS(),
    tol=POS() + [0.5, 1e-20],
)
entry(
    "mechanisms.gaussian_mechanism",
    M.gaussian_mechanism,
    lambda: dict(value=[0.5, 1.0], sigma=1.0, rng=rng(), size=None),
    value=[nan, [inf, 0.0], 2.0**60, "1", None, [[1.0]], [1 + 1j]],
    sigma=POS(),
    rng=RNG(),
    size=SIZE(),
)
entry(
    "mechanisms.l2_laplace_noise",
    M.l2_laplace_noise,
    lambda: dict(eta=1.0, d=3, rng=rng(), size=None),
    eta=POS(),
    d=INT(1),
    rng=RNG(),
    size=SIZE(),
)
entry(
    "mechanisms.l2_laplace_mechanism",
    M.l2_laplace_mechanism,
    lambda: dict(value=[0.5, 1.0], eta=1.0, rng=rng(), size=None),
    value=[[nan, 0.0], [1e308, 0.0], 0.5, [], "ab", None, [[1.0, 2.0]]],
    eta=POS(),
    rng=RNG(),
    size=SIZE(),
    alias={"eta": ("eta", "1/eta")},
)
entry(
    "mechanisms.clip_interval",
    M.clip_interval,
    lambda: dict(x=[0.2, 3.0], lo=0.0, hi=1.0),
    x=finite_bad([0.2, 3.0]) + ARRAY(),
    lo=[nan, inf, "0", None, [0.0], 1.0, 2.0],
    hi=[nan, -inf, "1", None, 0.0],
    alias={"lo": ("lo",), "hi": ("hi", "lo < hi")},
)
entry(
    "mechanisms.clip_l2",
    M.clip_l2,
    lambda: dict(x=[[3.0, 4.0], [0.1, 0.0]], radius=1.0),
    x=finite_bad([[3.0, 4.0]]) + ARRAY() + [[[[1.0]]]],
    radius=POS(),
)
entry(
    "mechanisms.gaussian_rdp",
    M.gaussian_rdp,
    lambda: dict(orders=[1.5, 2.0, 8.0], sensitivity=1.0, sigma=1.0),
    orders=[[1.0], [0.5, 2.0], [], [nan], [1e60], "2", None, [[2.0]]],
    sensitivity=POS(),
    sigma=POS(),
)
entry(
    "mechanisms.compose_rdp",
    lambda rdp_curves: M.compose_rdp(*rdp_curves),
    lambda: dict(rdp_curves=[[0.1, 0.2], [0.3, 0.4]]),
    rdp_curves=[[], [[0.1, 0.2], [0.3]], [[0.1, nan]], [[-0.1, 0.2]], [["a", "b"]], [[0.1 + 1j, 0.2]], [[[0.1, 0.2]]]],
)
entry(
    "mechanisms.rdp_to_dp",
    M.rdp_to_dp,
    lambda: dict(orders=[2.0, 8.0], rdp=[0.1, 0.4], delta=1e-5, method="cks2020"),
    orders=[[1.0, 2.0], [nan, 2.0], [], "ab", None],
    rdp=[[0.1], [nan, 0.1], [-1.0, 0.1], ["a", "b"], None],
    delta=DELTA_POS(),
    method=["exact", None, 1],
    ok={"method": ["mironov2017"]},
)
entry(
    "mechanisms.rdp_delta",
    M.rdp_delta,
    lambda: dict(orders=[2.0, 8.0], rdp=[0.1, 0.4], epsilon=1.0, method="cks2020"),
    orders=[[1.0, 2.0], [nan, 2.0], [], None],
    rdp=[[0.1], [nan, 0.1], [-1.0, 0.1], None],
    epsilon=[-1.0, nan, inf, 1e60, "1", None, True],
    method=["exact", None],
    ok={"epsilon": [0.0, 60.0], "method": ["mironov2017"]},
)  # an accounting query: no cap

# ================================================================================ claims
entry("claims.PureDP", Cl.PureDP, lambda: dict(epsilon=1.0), epsilon=EPS())
entry(
    "claims.ApproxDP",
    Cl.ApproxDP,
    lambda: dict(epsilon=1.0, delta=1e-6),
    epsilon=EPS(),
    delta=DELTA(),
    ok={"delta": [0.0]},
)
entry(
    "claims.RenyiDP",
    Cl.RenyiDP,
    lambda: dict(alpha=2.0, rho=0.5, delta=1e-6),
    alpha=POS() + [1.0, 0.5],
    rho=POS(),
    delta=DELTA_POS(),
)
entry(
    "claims.PersonalizedDP",
    Cl.PersonalizedDP,
    lambda: dict(epsilons=(1.0, 0.5)),
    epsilons=[(), (1.0, 0.0), (1.0, nan), (1.0, 51.0), ("a",), None, ((1.0,),), (True, 1.0)],
)
entry(
    "claims.PersonalizedDP.for_record",
    lambda i: Cl.PersonalizedDP((1.0, 0.5)).for_record(i),
    lambda: dict(i=1),
    i=[-1, 2, 1.0, None, "0", True],
)

# ================================================================================== data
entry(
    "data.UserDataset",
    UserDataset,
    lambda: dict(
        values=[0.5, 0.2, 0.9], user_ids=[0, 0, 1], labels=None, epsilons=None, task_ids=None, partition_ids=None
    ),
    values=[
        ["0.1", "0.2", "0.3"],
        [True, False, True],
        [1 + 1j, 0.2, 0.3],
        [nan, 0.2, 0.3],
        [inf, 0, 0],
        [],
        None,
        [0.5, 0.2],
        np.zeros((3, 0)),
        np.zeros((3, 1, 1)),
        np.array([0.5, None, 0.2], dtype=object),
    ],
    user_ids=[
        [0, 0],
        [0, -1, 1],
        [0.5, 0, 1],
        [2**63, 0, 1],
        np.array([2**64 - 1, 0, 1], dtype=np.uint64),
        [10**30, 0, 1],
        ["a", "b", "c"],
        [True, False, True],
        None,
        [nan, 0, 1],
    ],
    labels=[[0.1, 0.2], ["a", "b", "c"], [nan, 0.0, 0.0], [True, False, True], [1j, 0, 0]],
    epsilons=[[1.0, 0.0, 1.0], [1.0, -1.0, 1.0], [1.0, 51.0, 1.0], [nan, 1.0, 1.0], [1.0, 1.0], ["a", "b", "c"]],
    task_ids=[[0, -1, 1], [0.5, 0, 0], [0, 1], ["a", "b", "c"]],
    partition_ids=[[0, -1, 1], [0.5, 0, 0], [0, 1], ["a", "b", "c"], [True, False, True]],
    ok={
        "labels": [[0.1, -0.2, 3.0]],
        "task_ids": [[0, 1, 1]],
        "epsilons": [[0.1, 1.0, 50.0]],
        "partition_ids": [[0, 1, 1]],
    },
)
entry(
    "data.EmptyDataset",
    EmptyDataset,
    lambda: dict(value_shape=()),
    value_shape=[(0,), (2, 2), "a", None, [2], (True,), (1.5,), (-1,)],
    ok={"value_shape": [(3,)]},
)
entry(
    "data.UserDataset.from_arrays",
    UserDataset.from_arrays,
    lambda: dict(values=[0.5, 0.2], user_ids=[0, 1]),
    values=[["0.1", "0.2"], [nan, 0.2], None],
    user_ids=[[0], [-1, 0], ["a", "b"]],
    labels=[[0.1], [nan, 0.2], ["a", "b"], [True, False]],
    epsilons=[[1.0, 0.0], [1.0, 51.0], ["1", "1"]],
    task_ids=[[0, -1], [0.5, 1.0], [0]],
    ok={"labels": [[0.1, 0.2]], "epsilons": [[1.0, 0.5]], "task_ids": [[0, 1]]},
)
entry(
    "data.UserDataset.from_user_lists",
    UserDataset.from_user_lists,
    lambda: dict(per_user_values=[[0.5, 0.2], [0.9]], user_ids=None),
    per_user_values=[
        [],
        [[0.5], []],
        [[nan]],
        [["0.5"]],
        "ab",
        np.array([0.5]),
        None,
        5,
        [[[0.5]]],
        {0.5, 0.2},
    ],  # a set: no order, so users' ids would follow hash order
    user_ids=[[0, 0], [0], [-1, 2], ["a", "b"], [0.5, 1]],
)
_D = scalar_ds
entry(
    "data.UserDataset.records_of",
    lambda D, user_id: D.records_of(user_id),
    lambda: dict(D=_D(), user_id=1),
    user_id=[7, -1, 1.0, "1", None, True, 2**64],
)
entry(
    "data.UserDataset.position_of",
    lambda D, user_id: D.position_of(user_id),
    lambda: dict(D=_D(), user_id=1),
    user_id=[7, -1, 1.0, "1", None],
)
entry(
    "data.UserDataset.user_sums",
    lambda D, x: D.user_sums(x),
    lambda: dict(D=_D(), x=[1.0, 2.0, 3.0, 4.0]),
    x=[[1.0, 2.0], [nan, 1, 1, 1], ["a", "b", "c", "d"], [True, False, True, True]],
    ok={"x": [None]},
)
entry(
    "data.UserDataset.local_averages",
    lambda D, x: D.local_averages(x),
    lambda: dict(D=_D(), x=[1.0, 2.0, 3.0, 4.0]),
    x=[[1.0, 2.0], [inf, 1, 1, 1], ["a", "b", "c", "d"]],
    ok={"x": [None]},
)
_DT = lambda: UserDataset([0.1, 0.2, 0.3], [0, 0, 1], task_ids=[0, 1, 1])  # noqa: E731
entry(
    "data.UserDataset.task_users",
    lambda D, task_id: D.task_users(task_id),
    lambda: dict(D=_DT(), task_id=1),
    task_id=[-1, 1.5, "1", None],
    D=[_D()],
    alias={"D": ("task_ids",)},
    ok={"task_id": [9]},
)
entry(
    "data.UserDataset.user_tasks",
    lambda D, user_id: D.user_tasks(user_id),
    lambda: dict(D=_DT(), user_id=1),
    user_id=[-1, 7, 1.5, "1"],
    D=[_D()],
    alias={"D": ("task_ids",)},
)
entry(
    "data.UserDataset.take",
    lambda D, idx: D.take(idx),
    lambda: dict(D=_D(), idx=[0, 2]),
    idx=[[], [0, 4], [-1], [0.5], ["a"], [True, False, True, True], [[0]], None, [0, 0]],
)  # a duplicated index adds a record D does not have: not a restriction
_DP = lambda: UserDataset([0.1, 0.2, 0.3], [0, 0, 1], partition_ids=[0, 1, 1])  # noqa: E731
entry(
    "data.UserDataset.partition",
    lambda D, partition_id: D.partition(partition_id),
    lambda: dict(D=_DP(), partition_id=1),
    partition_id=[-1, 1.5, "1", None, True, 2**64],
    D=[_D()],
    alias={"D": ("partition_ids",)},
    ok={"partition_id": [9]},
)  # no record with key 9: EMPTY
entry(
    "data.UserDataset.without_user",
    lambda D, user_id: D.without_user(user_id),
    lambda: dict(D=_D(), user_id=1),
    user_id=[7, -1, 1.5, "1", None],
)
entry(
    "data.UserDataset.with_fields",
    lambda D, changes: D.with_fields(**changes),
    lambda: dict(D=_D(), changes={"values": [0.1, 0.2, 0.3, 0.4]}),
    changes=[
        {"values": [nan, 0, 0, 0]},
        {"values": ["a", "b", "c", "d"]},
        {"user_ids": [0, 1]},
        {"nope": 1},
        {"epsilons": [1, 1, 1, 0]},
    ],
    alias={"changes": ("values", "user_ids", "nope", "epsilons")},
)

# ============================================================================ neighbours
_REPLACE = {
    "replace_user": N.REPLACE_USER,
    "replace_user_labels": N.REPLACE_USER_LABELS,
    "replace_user_items": N.REPLACE_USER_ITEMS,
}
_LD = lambda: _D().with_fields(labels=[0.1, 0.2, 0.3, 0.4])  # noqa: E731
BAD_GRID = [[], [nan, 1.0], ["a"], None, [[0.0, 1.0]], [1j]]
BAD_LABEL_GRID = [g for g in BAD_GRID if g is not None]  # None: the default (the value grid)


def _lg(label_grid) -> dict:
    """label_grid as a keyword only when given (so the probe can run checkouts without it)."""
    return {} if label_grid is None else {"label_grid": label_grid}


for _key, _rel in _REPLACE.items():
    _field = "labels" if _rel is N.REPLACE_USER_LABELS else "values"
    _moves_labels = _rel is N.REPLACE_USER  # values and labels (Epasto §4-5)
    _dsf = _LD if _field == "labels" or _moves_labels else _D
    # labels=: the new labels where the relation moves them; refused where it does not
    _bad_labels = [[nan, 0.1], [0.1], ["a", "b"], [[0.1, 0.2]], [1j, 0]] if _moves_labels else [[0.1, 0.9], [nan, 0.1]]
    entry(
        f"neighbours.{_key.upper()}.neighbour",
        _rel.neighbour,
        lambda _dsf=_dsf: dict(D=_dsf(), user_id=0, new=[0.1, 0.9], labels=None),
        D=DATASET() + ([_D()] if _field == "labels" else []),
        user_id=[7, -1, 0.0, "0", None],
        new=[[0.1], [nan, 0.1], ["a", "b"], None, [[0.1, 0.2]], [1j, 0]],
        labels=_bad_labels,
        ok={"labels": [[0.3, 0.7]]} if _moves_labels else {},
        alias={"user_id": ("user_id",), "D": DS_ALIAS + ("dataset.labels",)},
    )
    # label_grid only where labels move with the values (elsewhere it has no meaning)
    entry(
        f"neighbours.{_key.upper()}.enumerate",
        lambda D, grid, label_grid, _rel=_rel: list(_rel.enumerate(D, grid, **_lg(label_grid))),
        lambda _dsf=_dsf: dict(D=_dsf(), grid=[0.0, 1.0], label_grid=None),
        D=DATASET(),
        grid=BAD_GRID,
        label_grid=BAD_LABEL_GRID if _moves_labels else [[0.5]],  # meaningless where labels stay
        ok={"label_grid": [[0.5]]} if _moves_labels else {},
    )
    entry(
        f"neighbours.{_key.upper()}.sample",
        _rel.sample,
        lambda _dsf=_dsf: dict(D=_dsf(), rng=rng(), lo=0.0, hi=1.0),
        D=DATASET(),
        rng=RNG(),
        lo=[nan, "0", None, 1.0, 2.0],
        hi=[inf, "1", None, 0.0],
        alias={"lo": ("lo",), "hi": ("hi", "lo < hi")},
    )
    entry(
        f"neighbours.{_key.upper()}.worst_case_pairs",
        _rel.worst_case_pairs,
        lambda _dsf=_dsf: dict(D=_dsf(), lo=0.0, hi=1.0, k=2),
        D=DATASET(),
        lo=[nan, "0", None, 1.0],
        hi=[inf, "1", None, 0.0],
        k=INT(1),
        alias={"lo": ("lo",), "hi": ("hi", "lo < hi")},
    )
    entry(
        f"neighbours.{_key.upper()}.changed_units",
        _rel.changed_units,
        lambda _dsf=_dsf: dict(a=_dsf(), b=_dsf()),
        a=DATASET(),
        b=DATASET(),
    )

entry(
    "neighbours.ADD_REMOVE_USER.neighbour",
    N.ADD_REMOVE_USER.neighbour,
    lambda: dict(D=_D(), user_id=9, new=[0.3, 0.4], labels=None),
    D=DATASET(),
    user_id=[0, -1, 9.0, "9", 2**64],
    new=[[], [nan], ["a"], [[0.1, 0.2]], 0.5],
    labels=[[0.1, 0.2], [[0.1, 0.2]]],
    alias={"user_id": ("user_id",)},
)  # D has no labels
entry(
    "neighbours.ADD_REMOVE_USER.enumerate",
    lambda D, grid, max_records, label_grid: list(
        N.ADD_REMOVE_USER.enumerate(D, grid, max_records=max_records, **_lg(label_grid))
    ),
    lambda: dict(D=_LD(), grid=[0.0, 1.0], max_records=2, label_grid=None),
    D=DATASET(),
    grid=BAD_GRID,
    max_records=INT(1, hi=8),
    label_grid=BAD_LABEL_GRID,
    ok={"label_grid": [[0.5]]},
)
entry(
    "neighbours.ADD_REMOVE_USER.sample",
    N.ADD_REMOVE_USER.sample,
    lambda: dict(D=_D(), rng=rng(), lo=0.0, hi=1.0),
    D=DATASET() + [UserDataset([0.5], [0])],
    rng=RNG(),
    lo=[nan, "0", 2.0],
    hi=[inf, "1", -1.0],
    alias={"hi": ("hi", "lo < hi"), "D": DS_ALIAS + ("only user",)},
)
entry(
    "neighbours.ADD_REMOVE_USER.worst_case_pairs",
    N.ADD_REMOVE_USER.worst_case_pairs,
    lambda: dict(D=_D(), lo=0.0, hi=1.0, k=2, max_records=None),
    D=DATASET(),
    lo=[nan, "0"],
    hi=[inf, -1.0],
    k=INT(1),
    max_records=[v for v in INT(1) if v is not None],
    alias={"hi": ("hi", "lo < hi")},
)
entry(
    "neighbours.ADD_REMOVE_USER.changed_units",
    N.ADD_REMOVE_USER.changed_units,
    lambda: dict(a=_D(), b=_D().without_user(1)),
    a=DATASET(),
    b=DATASET(),
)
_ED = lambda: _D().with_fields(epsilons=[1.0, 0.5, 0.2, 1.0])  # noqa: E731
entry(
    "neighbours.REPLACE_RECORD.neighbour",
    N.REPLACE_RECORD.neighbour,
    lambda: dict(D=_ED(), i=1, new_value=0.3, new_label=None),
    D=DATASET(),
    i=[-1, 4, 1.0, "1", None, True],
    new_value=[nan, "a", None, [0.1, 0.2]],
    new_label=[0.5],
)
_ELD = lambda: _ED().with_fields(labels=[0.1, 0.2, 0.3, 0.4])  # noqa: E731
entry(
    "neighbours.REPLACE_RECORD.enumerate",
    lambda D, grid, label_grid: list(N.REPLACE_RECORD.enumerate(D, grid, **_lg(label_grid))),
    lambda: dict(D=_ELD(), grid=[0.0, 1.0], label_grid=None),
    D=DATASET(),
    grid=BAD_GRID,
    label_grid=BAD_LABEL_GRID,
    ok={"label_grid": [[0.5]]},
)
entry(
    "neighbours.REPLACE_RECORD.sample",
    N.REPLACE_RECORD.sample,
    lambda: dict(D=_ED(), rng=rng(), lo=0.0, hi=1.0),
    D=DATASET(),
    rng=RNG(),
    lo=[nan, "0", 2.0],
    hi=[inf, "1"],
    alias={"lo": ("lo", "lo < hi")},
)
entry(
    "neighbours.REPLACE_RECORD.worst_case_pairs",
    N.REPLACE_RECORD.worst_case_pairs,
    lambda: dict(D=_ELD(), lo=0.0, hi=1.0, records=None, label_lo=None, label_hi=None),
    D=DATASET(),
    lo=[nan, 2.0],
    hi=[inf, "1"],
    records=[[7], [-1], [0.5], ["0"], [], 0.5, "01"],
    label_lo=[nan, -inf, "0", 2.0, [0.0]],
    label_hi=[inf, nan, "1", -1.0, [1.0]],
    ok={"label_lo": [-1.0], "label_hi": [2.0]},
    alias={"lo": ("lo", "lo < hi"), "records": ("records",)},
)
entry(
    "neighbours.REPLACE_RECORD.changed_units",
    N.REPLACE_RECORD.changed_units,
    lambda: dict(a=_ED(), b=_ED()),
    a=DATASET(),
    b=DATASET(),
)
entry(
    "neighbours.REPLACE_RECORD.changed_positions",
    N.REPLACE_RECORD.changed_positions,
    lambda: dict(a=[0.1, 0.2], b=[0.1, 0.3]),
    a=ARRAY() + [[nan, 0.2], np.zeros((2, 1, 1))],
    b=ARRAY(),
)
entry(
    "neighbours.ADD_REMOVE_RECORD.neighbour",
    N.ADD_REMOVE_RECORD.neighbour,
    lambda: dict(D=_D(), i=None, new_value=0.3, new_label=None, user_id=None, partition_id=None),
    D=DATASET(),
    i=[0],
    new_value=[nan, "a", [0.1, 0.2], None, [[0.1]]],
    new_label=[0.5],
    user_id=[-1, 1.5, "1", True, 2**64],
    partition_id=[0],
    alias={"D": DS_ALIAS + ("D",)},
)
entry(
    "neighbours.ADD_REMOVE_RECORD.enumerate",
    lambda D, grid, label_grid: list(N.ADD_REMOVE_RECORD.enumerate(D, grid, **_lg(label_grid))),
    lambda: dict(D=_LD(), grid=[0.0, 1.0], label_grid=None),
    D=DATASET(),
    grid=BAD_GRID,
    label_grid=BAD_LABEL_GRID,
    ok={"label_grid": [[0.5]]},
)
entry(
    "neighbours.ADD_REMOVE_RECORD.sample",
    N.ADD_REMOVE_RECORD.sample,
    lambda: dict(D=_D(), rng=rng(), lo=0.0, hi=1.0),
    D=DATASET(),
    rng=RNG(),
    lo=[nan, "0", 2.0],
    hi=[inf, "1"],
    alias={"lo": ("lo", "lo < hi"), "D": DS_ALIAS + ("D",)},
)
entry(
    "neighbours.ADD_REMOVE_RECORD.worst_case_pairs",
    N.ADD_REMOVE_RECORD.worst_case_pairs,
    lambda: dict(D=_LD(), lo=0.0, hi=1.0),
    D=DATASET(),
    lo=[nan, 2.0, "0"],
    hi=[inf, "1"],
    alias={"lo": ("lo", "lo < hi"), "D": DS_ALIAS + ("D",)},
)
entry(
    "neighbours.ADD_REMOVE_RECORD.changed_units",
    N.ADD_REMOVE_RECORD.changed_units,
    lambda: dict(a=_D(), b=_D().take([0, 1, 2])),
    a=DATASET() + [_LD()],
    b=DATASET(),
    alias={"a": DS_ALIAS + ("a", "add-remove-record")},
)
entry(
    "neighbours.ADD_REMOVE_RECORD.changed_positions",
    N.ADD_REMOVE_RECORD.changed_positions,
    lambda: dict(a=[0.1, 0.2], b=[0.2]),
    a=ARRAY() + [[nan, 0.2], np.zeros((2, 1, 1))],
    b=ARRAY(),
)
entry(
    "neighbours.get_relation",
    N.get_relation,
    lambda: dict(name="replace-user"),
    name=["nope", None, 3, ["replace-user"]],
    alias={"name": ("relation",)},
)
entry(
    "neighbours.is_neighbour",
    N.is_neighbour,
    lambda: dict(relation=N.REPLACE_USER, a=_D(), b=_D()),
    relation=["replace-user", None],
    a=DATASET(),
    b=DATASET(),
)

# ============================================================================== amin2019
entry("amin2019.claim", A.claim, lambda: dict(epsilon=1.0), epsilon=EPS())
_neg = lambda: UserDataset.from_user_lists([[0.5], [-0.1, 0.2]])  # noqa: E731
_vec = lambda: UserDataset(np.ones((3, 2)), [0, 1, 1])  # noqa: E731
AMIN_BAD_DS = DATASET() + [_neg(), _vec()]  # §3: nonnegative scalar values
entry("amin2019.user_totals", A.user_totals, lambda: dict(dataset=_D()), dataset=DATASET() + [_neg(), _vec()])
entry("amin2019.statistic", A.statistic, lambda: dict(dataset=_D(), T=1.0), dataset=AMIN_BAD_DS, T=POS())
entry("amin2019.sensitivity", A.sensitivity, lambda: dict(T=1.0), T=POS())
entry("amin2019.noise_scale", A.noise_scale, lambda: dict(T=1.0, epsilon=1.0), T=POS(), epsilon=EPS())
entry(
    "amin2019.mechanism",
    A.mechanism,
    lambda: dict(dataset=_D(), T=1.0, epsilon=1.0, rng=rng(), size=None),
    dataset=AMIN_BAD_DS,
    T=POS(),
    epsilon=EPS(),
    rng=RNG(),
    size=SIZE(),
)
entry(
    "amin2019.error_bound",
    A.error_bound,
    lambda: dict(x=[0.5, 2.0], T=1.0, epsilon=1.0),
    x=[[], [-1.0], [nan], ["a"], None, [[1.0]]],
    T=[-1.0, nan, inf, 1e60, "1", None],
    epsilon=EPS(),
    ok={"T": [0.0]},
)  # T = 0: optimal_cap_nonprivate's answer when ceil(1/eps) > m
entry("amin2019.optimal_rank", A.optimal_rank, lambda: dict(epsilon=0.3), epsilon=EPS())
entry(
    "amin2019.optimal_cap_nonprivate",
    A.optimal_cap_nonprivate,
    lambda: dict(dataset=_D(), epsilon=1.0),
    dataset=AMIN_BAD_DS,
    epsilon=EPS(),
)
entry(
    "amin2019.capped_sums",
    A.capped_sums,
    lambda: dict(dataset=_D(), T=[0.5, 1.0]),
    dataset=AMIN_BAD_DS,
    T=[[-1.0], [nan], [inf], [1e60], [1e-200], ["a"], None, [[1.0]]],
    ok={"T": [0.0, [0.0, 2.0]]},
)
entry(
    "amin2019.private_cap",
    A.private_cap,
    lambda: dict(dataset=_D(), epsilon_cap=1.0, epsilon_sum=1.0, U=1.0, rng=rng(), size=None),
    dataset=AMIN_BAD_DS,
    epsilon_cap=EPS(),
    epsilon_sum=EPS(),
    U=POS(),
    rng=RNG(),
    size=SIZE(),
)
entry(
    "amin2019.private_cap_claim",
    A.private_cap_claim,
    lambda: dict(epsilon_cap=1.0, epsilon_sum=1.0),
    epsilon_cap=EPS(),
    epsilon_sum=EPS(),
)
entry(
    "amin2019.private_cap_mechanism",
    A.private_cap_mechanism,
    lambda: dict(dataset=_D(), epsilon_cap=1.0, epsilon_sum=1.0, U=1.0, rng=rng(), size=None),
    dataset=AMIN_BAD_DS,
    epsilon_cap=EPS(),
    epsilon_sum=EPS(),
    U=POS(),
    rng=RNG(),
    size=SIZE(),
)

# ================================================================================== erm
_far = lambda: with_values(erm_ds(), 0, 3.0)  # ||x_0|| > R = 1  # noqa: E731
_half = lambda: with_labels(erm_ds(), 0, 0.5)  # a logistic label not in {-1, +1}  # noqa: E731
_nolab = lambda: erm_ds().with_fields(labels=None)  # noqa: E731
ERM_BAD_DS = DATASET() + [_far(), _half(), _nolab()]
LOSS = ["hinge", None, 1, ["ridge"]]
_X, _y = erm_ds().values, erm_ds().labels
entry(
    "erm.check_erm_data",
    erm.check_erm_data,
    lambda: dict(dataset=erm_ds(), loss="logistic", R=1.0, Y=1.0),
    dataset=ERM_BAD_DS,
    loss=LOSS,
    R=POS(),
    Y=POS(),
    ok={"loss": ["ridge"]},
    alias={"R": ("R", "||x_"), "Y": ("Y",)},
)
entry("erm.features", erm.features, lambda: dict(dataset=erm_ds()), dataset=DATASET())
THETA = [[nan, 0.0], [0.0], ["a", "b"], None, [[[0.0, 0.0]]], [1j, 0]]
entry(
    "erm.record_losses",
    erm.record_losses,
    lambda: dict(theta=[0.1, 0.2], X=_X, y=_y, loss="logistic"),
    theta=THETA,
    X=finite_bad(_X) + [None, _X[:, :1], _X[0]],
    y=finite_bad(_y) + [_y[:2], None],
    loss=LOSS,
)
entry(
    "erm.record_gradients",
    erm.record_gradients,
    lambda: dict(theta=[0.1, 0.2], X=_X, y=_y, loss="ridge"),
    theta=THETA + [[[0.1, 0.2]]],
    X=finite_bad(_X) + [None],
    y=finite_bad(_y) + [_y[:2]],
    loss=LOSS,
)
entry(
    "erm.weighted_gradient",
    erm.weighted_gradient,
    lambda: dict(theta=[0.1, 0.2], X=_X, y=_y, c=np.full(5, 0.2), loss="logistic"),
    theta=THETA,
    X=finite_bad(_X) + [None],
    y=finite_bad(_y),
    c=finite_bad(np.full(5, 0.2)) + [[0.5]],
    loss=LOSS,
)
entry(
    "erm.lipschitz",
    erm.lipschitz,
    lambda: dict(loss="ridge", R=1.0, Y=1.0, Lambda=1.0),
    loss=LOSS,
    R=POS(),
    Y=POS(),
    Lambda=POS(),
)
entry("erm.smoothness", erm.smoothness, lambda: dict(loss="logistic", R=1.0), loss=LOSS, R=POS())
entry("erm.ridge_theta_radius", erm.ridge_theta_radius, lambda: dict(Y=1.0, Lambda=1.0), Y=POS(), Lambda=POS())
entry(
    "erm.minimise",
    erm.minimise,
    lambda: dict(X=_X, y=_y, w=np.full(5, 0.2), Lambda=1.0, loss="logistic", tol=1e-12, max_iter=100),
    X=finite_bad(_X) + [None, np.zeros((0, 2)), _X[0]],
    y=finite_bad(_y) + [_y[:2]],
    w=finite_bad(np.full(5, 0.2)) + [[-0.2, 0.3, 0.3, 0.3, 0.3], [0.5]],
    Lambda=POS(),
    loss=LOSS,
    tol=POS() + [2.0],
    max_iter=INT(1, hi=10**4),
)

# ========================================================================== amin2019_erm
AP = dict(tau=2, Lambda=1.0, n_min=3, loss="logistic", R=1.0, Y=1.0)
APB = dict(tau=INT(1), Lambda=POS(), n_min=INT(1), loss=LOSS, R=POS(), Y=POS())
entry("amin2019_erm.claim", AE.claim, lambda: dict(epsilon=1.0), epsilon=EPS())
entry(
    "amin2019_erm.kept_records", AE.kept_records, lambda: dict(dataset=erm_ds(), tau=2), dataset=DATASET(), tau=INT(1)
)
entry(
    "amin2019_erm.effective_sample_size",
    AE.effective_sample_size,
    lambda: dict(dataset=erm_ds(), tau=2),
    dataset=DATASET(),
    tau=INT(1),
)
entry(
    "amin2019_erm.weights",
    AE.weights,
    lambda: dict(dataset=erm_ds(), tau=2, n_min=3),
    dataset=DATASET(),
    tau=INT(1),
    n_min=INT(1),
)
entry(
    "amin2019_erm.fit",
    AE.fit,
    lambda: dict(dataset=erm_ds(), **AP),
    dataset=ERM_BAD_DS,
    **APB,
    alias={"R": ("R", "||x_")},
)
entry(
    "amin2019_erm.statistic",
    AE.statistic,
    lambda: dict(dataset=erm_ds(), **AP),
    dataset=ERM_BAD_DS,
    **APB,
    alias={"R": ("R", "||x_")},
)
entry("amin2019_erm.sensitivity", AE.sensitivity, lambda: dict(AP), **APB)
entry("amin2019_erm.noise_scale", AE.noise_scale, lambda: dict(epsilon=1.0, **AP), epsilon=EPS(), **APB)
entry(
    "amin2019_erm.mechanism",
    AE.mechanism,
    lambda: dict(dataset=erm_ds(), rng=rng(), size=None, epsilon=1.0, **AP),
    dataset=ERM_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    epsilon=EPS(),
    **APB,
    alias={"R": ("R", "||x_")},
)
entry(
    "amin2019_erm.bias_bound",
    AE.bias_bound,
    lambda: dict(dataset=erm_ds(), tau=2, var_H=None),
    dataset=DATASET(),
    tau=INT(1),
    var_H=[-0.1, 0.3, nan, inf, "0.1"],
    ok={"var_H": [0.0, 0.25]},
)
entry(
    "amin2019_erm.bias_bound_tau0",
    AE.bias_bound_tau0,
    lambda: dict(tau0=0.5, var_H=None),
    tau0=POS() + [1.5],
    var_H=[-0.1, 0.3, nan, "0.1"],
    ok={"tau0": [1.0]},
)

# ============================================================================= epasto2020
_Dw = scalar_ds
_above = lambda: with_values(_Dw(), 0, 1.5)  # y outside [0, B = 1]  # noqa: E731
_below = lambda: with_values(_Dw(), 0, -0.1)  # noqa: E731
WA_BAD_DS = DATASET() + [_above(), _below(), _vec()]
C_BAD = [[0.25] * 3, [0.5, 0.5, 0.5, -0.5], [0.3, 0.3, 0.3, 0.3], [nan, 0.5, 0.25, 0.25], ["a"] * 4, None, [[0.25] * 4]]
COUNTS = np.array([2, 1, 1])
COUNTS_BAD = [
    np.array([2, 0, 1]),
    np.array([], dtype=int),
    np.array([2.0, 1.0]),
    np.array([10**12]),
    [[2, 1]],
    "abc",
    None,
    np.array([2**40, 1]),
]
entry("epasto2020.claim", E.claim, lambda: dict(epsilon=1.0), epsilon=EPS())
entry(
    "epasto2020.user_weights",
    E.user_weights,
    lambda: dict(dataset=_Dw(), c=c_uniform(_Dw())),
    dataset=DATASET(),
    c=C_BAD,
)
entry(
    "epasto2020.wa_statistic",
    E.wa_statistic,
    lambda: dict(dataset=_Dw(), c=c_uniform(_Dw()), B=1.0),
    dataset=WA_BAD_DS,
    c=C_BAD,
    B=POS(),
    alias={"B": ("B", "dataset.values")},
)
entry(
    "epasto2020.wa_sensitivity",
    E.wa_sensitivity,
    lambda: dict(dataset=_Dw(), c=c_uniform(_Dw()), B=1.0),
    dataset=DATASET(),
    c=C_BAD,
    B=POS(),
)
entry(
    "epasto2020.wa_noise_scale",
    E.wa_noise_scale,
    lambda: dict(dataset=_Dw(), c=c_uniform(_Dw()), B=1.0, epsilon=1.0),
    dataset=DATASET(),
    c=C_BAD,
    B=POS(),
    epsilon=EPS(),
)
entry(
    "epasto2020.wa_mechanism",
    E.wa_mechanism,
    lambda: dict(dataset=_Dw(), rng=rng(), size=None, c=c_uniform(_Dw()), B=1.0, epsilon=1.0),
    dataset=WA_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    c=C_BAD,
    B=POS(),
    epsilon=EPS(),
    alias={"B": ("B", "dataset.values")},
)
entry(
    "epasto2020.wa_variance",
    E.wa_variance,
    lambda: dict(dataset=_Dw(), c=c_uniform(_Dw()), sigma=0.5, B=1.0, epsilon=1.0),
    dataset=DATASET(),
    c=C_BAD,
    sigma=NONNEG(),
    B=POS(),
    epsilon=EPS(),
    ok={"sigma": [0.0, None]},
)
entry("epasto2020.n_h", E.n_h, lambda: dict(counts=COUNTS, h=1.5), counts=COUNTS_BAD, h=POS())
entry(
    "epasto2020.lemma3_weights",
    E.lemma3_weights,
    lambda: dict(dataset_or_counts=COUNTS, h=1.5),
    dataset_or_counts=COUNTS_BAD,
    h=[0.5, 3.0, nan, inf, "1", None, True],
    ok={"dataset_or_counts": [_Dw()]},
    alias={"dataset_or_counts": ("counts",)},
)
_PUB = dict(sigma=0.5, B=1.0, epsilon=1.0)
_PUBB = dict(sigma=NONNEG(), B=POS(), epsilon=EPS())
entry(
    "epasto2020.v",
    E.v,
    lambda: dict(counts=COUNTS, h=[1.0, 2.0], **_PUB),
    counts=COUNTS_BAD,
    h=[[nan], [0.0], [-1.0], ["a"], None, [1e60]],
    **_PUBB,
    ok={"sigma": [0.0, None]},
)
entry(
    "epasto2020.optimal_h",
    E.optimal_h,
    lambda: dict(counts=COUNTS, **_PUB),
    counts=COUNTS_BAD,
    **_PUBB,
    ok={"sigma": [0.0, None]},
)
entry(
    "epasto2020.optimal_weights",
    E.optimal_weights,
    lambda: dict(dataset_or_counts=COUNTS, epsilon=1.0, B=1.0, sigma=None),
    dataset_or_counts=COUNTS_BAD,
    epsilon=EPS(),
    B=POS(),
    sigma=NONNEG(),
    ok={"sigma": [0.0]},
    alias={"dataset_or_counts": ("counts",)},
)
entry(
    "epasto2020.optimal_wa_mechanism",
    E.optimal_wa_mechanism,
    lambda: dict(dataset=_Dw(), rng=rng(), size=None, epsilon=1.0, B=1.0, sigma=None),
    dataset=WA_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    epsilon=EPS(),
    B=POS(),
    sigma=NONNEG(),
    alias={"B": ("B", "dataset.values")},
)
entry(
    "epasto2020.sample_limiting_weights",
    E.sample_limiting_weights,
    lambda: dict(dataset_or_counts=COUNTS, h=1),
    dataset_or_counts=COUNTS_BAD,
    h=[0, 3, 1.5, 2.0, np.float64(1.0), nan, "1", None, True],  # §3.2: h is an integer (an int)
    alias={"dataset_or_counts": ("counts",)},
)
entry(
    "epasto2020.v_prime",
    E.v_prime,
    lambda: dict(counts=COUNTS, h=[1.0, 2.0], **_PUB),
    counts=COUNTS_BAD,
    h=[[nan], [0.0], ["a"], None],
    **_PUBB,
)
entry("epasto2020.best_integer_h", E.best_integer_h, lambda: dict(counts=COUNTS, **_PUB), counts=COUNTS_BAD, **_PUBB)
entry(
    "epasto2020.sample_limiting_mechanism",
    E.sample_limiting_mechanism,
    lambda: dict(dataset=_Dw(), rng=rng(), size=None, h=1, B=1.0, epsilon=1.0),
    dataset=WA_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    h=[0, 3, 1.5, 2.0, "1", None, True],
    B=POS(),
    epsilon=EPS(),
    alias={"B": ("B", "dataset.values")},
)
entry(
    "epasto2020.best_sample_limiting_mechanism",
    E.best_sample_limiting_mechanism,
    lambda: dict(dataset=_Dw(), rng=rng(), size=None, epsilon=1.0, B=1.0, sigma=None),
    dataset=WA_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    epsilon=EPS(),
    B=POS(),
    sigma=NONNEG(),
    alias={"B": ("B", "dataset.values")},
)
entry("epasto2020.theorem2_instance", E.theorem2_instance, lambda: dict(g=3), g=INT(1, hi=312))
entry("epasto2020.variance_ratio", E.variance_ratio, lambda: dict(counts=COUNTS, **_PUB), counts=COUNTS_BAD, **_PUBB)

# ========================================================================= epasto2020_erm
_ce = lambda: c_uniform(erm_ds())  # noqa: E731
C5_BAD = [[0.25] * 4, [0.4, 0.4, 0.4, -0.2, 0.0], [0.4] * 5, [nan, 0.25, 0.25, 0.25, 0.25], ["a"] * 5, None]
EP = dict(loss="logistic", R=1.0, Y=1.0)
EPB = dict(loss=LOSS, R=POS(), Y=POS())
entry("epasto2020_erm.claim", EE.claim, lambda: dict(epsilon=1.0, delta=1e-5), epsilon=EPS(), delta=DELTA_POS())
entry("epasto2020_erm.weights", EE.weights, lambda: dict(dataset=erm_ds(), c=_ce()), dataset=DATASET(), c=C5_BAD)
entry(
    "epasto2020_erm.user_weight_sums",
    EE.user_weight_sums,
    lambda: dict(dataset=erm_ds(), c=_ce()),
    dataset=DATASET(),
    c=C5_BAD,
)
for _n in ("user_losses", "user_gradients", "statistic"):
    entry(
        f"epasto2020_erm.{_n}",
        getattr(EE, _n),
        lambda: dict(dataset=erm_ds(), theta=[0.1, 0.2], c=_ce(), **EP),
        dataset=ERM_BAD_DS,
        theta=THETA,
        c=C5_BAD,
        **EPB,
        alias={"R": ("R", "||x_")},
    )
entry(
    "epasto2020_erm.lipschitz",
    EE.lipschitz,
    lambda: dict(loss="ridge", R=1.0, Y=1.0, radius=1.0),
    loss=LOSS,
    R=POS(),
    Y=POS(),
    radius=POS(),
)
entry(
    "epasto2020_erm.sensitivity",
    EE.sensitivity,
    lambda: dict(dataset=erm_ds(), c=_ce(), radius=1.0, **EP),
    dataset=DATASET(),
    c=C5_BAD,
    radius=POS(),
    **EPB,
)
entry(
    "epasto2020_erm.epsilon_spent",
    EE.epsilon_spent,
    lambda: dict(noise_multiplier=2.0, T=4, delta=1e-5),
    noise_multiplier=POS(),
    T=INT(1, hi=10**6),
    delta=DELTA_POS(),
)
_EN = dict(epsilon=1.0, delta=1e-5, T=4, radius=1.0, **EP)
_ENB = dict(epsilon=EPS(), delta=DELTA_POS(), T=INT(1, hi=10**6), radius=POS(), **EPB)
entry(
    "epasto2020_erm.noise_scale",
    EE.noise_scale,
    lambda: dict(dataset=erm_ds(), c=_ce(), **_EN),
    dataset=DATASET(),
    c=C5_BAD,
    **_ENB,
)
entry(
    "epasto2020_erm.step_size",
    EE.step_size,
    lambda: dict(sigma=1.0, d=2, T=4, radius=1.0, **EP),
    sigma=POS(),
    d=INT(1),
    T=INT(1, hi=10**6),
    radius=POS(),
    **EPB,
)
entry(
    "epasto2020_erm.mechanism",
    EE.mechanism,
    lambda: dict(dataset=erm_ds(), rng=rng(), size=None, c=_ce(), **_EN),
    dataset=ERM_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    c=C5_BAD,
    **_ENB,
    alias={"R": ("R", "||x_")},
)
entry(
    "epasto2020_erm.noisy_gradient_descent",
    lambda **kw: EE.noisy_gradient_descent(**kw),
    lambda: dict(X=_X, y=_y, c=np.full(5, 0.2), rng=rng(), size=None, sigma=1.0, T=4),
    sigma=[0.0, 5e-324, -1.0, nan],
    X=[np.array([[3.0, 0.0]] * 5)],
    y=[np.full(5, 0.5)],
    c=[np.full(5, 0.4), np.r_[-0.2, np.full(4, 0.3)]],
    rng=RNG(),
    legacy=True,
    alias={"X": ("X", "||x"), "y": ("y", "labels"), "c": ("c",)},
)

# ========================================================================= epasto2020_gwa
_Dg = gwa_ds
_ylab = lambda: with_labels(_Dg(), 0, 1.5)  # a label above B = 1  # noqa: E731
_nolabg = lambda: _Dg().with_fields(labels=None)  # noqa: E731
_rankdef = lambda: _Dg().with_fields(values=np.tile([1.0, 1.0], (8, 1)))  # noqa: E731
GWA_BAD_DS = DATASET() + [_ylab(), _nolabg()]
C_GWA_BAD = lambda: [ols(_Dg())[:, :5], ols(_Dg()) * 2, finite_bad(ols(_Dg()))[0], None, "C", ols(_Dg()).ravel()]  # noqa: E731
entry("epasto2020_gwa.claim", G.claim, lambda: dict(epsilon=1.0), epsilon=EPS())
entry("epasto2020_gwa.features", G.features, lambda: dict(dataset=_Dg()), dataset=DATASET())
entry(
    "epasto2020_gwa.check_labels",
    G.check_labels,
    lambda: dict(dataset=_Dg(), B=1.0),
    dataset=GWA_BAD_DS,
    B=POS() + [0.5],
    alias={"B": ("B", "labels")},
)
entry(
    "epasto2020_gwa.check_C",
    G.check_C,
    lambda: dict(C=ols(_Dg()), dataset=_Dg(), atol=1e-8),
    C=C_GWA_BAD(),
    dataset=DATASET(),
    atol=POS(),
)
entry(
    "epasto2020_gwa.user_l1",
    G.user_l1,
    lambda: dict(dataset=_Dg(), C=ols(_Dg())),
    dataset=DATASET(),
    C=[ols(_Dg())[:, :5], None, "C", finite_bad(ols(_Dg()))[0]],
)
for _n in ("sensitivity", "statistic"):
    entry(
        f"epasto2020_gwa.{_n}",
        getattr(G, _n),
        lambda: dict(dataset=_Dg(), C=ols(_Dg()), B=1.0),
        dataset=DATASET() + ([_ylab(), _nolabg()] if _n == "statistic" else []),
        C=[ols(_Dg())[:, :5], None, finite_bad(ols(_Dg()))[0]] + ([ols(_Dg()) * 2] if _n == "statistic" else []),
        B=POS(),
        alias={"B": ("B", "labels")},
    )
entry(
    "epasto2020_gwa.noise_scale",
    G.noise_scale,
    lambda: dict(dataset=_Dg(), C=ols(_Dg()), B=1.0, epsilon=1.0),
    dataset=DATASET(),
    C=[None, ols(_Dg())[:, :5]],
    B=POS(),
    epsilon=EPS(),
)
entry(
    "epasto2020_gwa.mechanism",
    G.mechanism,
    lambda: dict(dataset=_Dg(), C=ols(_Dg()), B=1.0, epsilon=1.0, rng=rng(), size=None),
    dataset=GWA_BAD_DS,
    C=C_GWA_BAD(),
    B=POS(),
    epsilon=EPS(),
    rng=RNG(),
    size=SIZE(),
    alias={"B": ("B", "labels")},
)
entry(
    "epasto2020_gwa.total_variance",
    G.total_variance,
    lambda: dict(dataset=_Dg(), C=ols(_Dg()), B=1.0, epsilon=1.0, sigma=0.5),
    dataset=DATASET(),
    C=C_GWA_BAD(),
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    ok={"sigma": [0.0]},
)
entry(
    "epasto2020_gwa.ols_C",
    G.ols_C,
    lambda: dict(X=_Dg().values),
    X=[None, np.ones((8, 2)), np.zeros((1, 2)), np.zeros((3, 0)), finite_bad(_Dg().values)[0], [1.0, 2.0], "X"],
)
entry(
    "epasto2020_gwa.dual_bound",
    G.dual_bound,
    lambda: dict(dataset=_Dg(), B=1.0, epsilon=1.0, sigma=0.5, Lambda=np.eye(2), mu=np.zeros(5)),
    dataset=DATASET(),
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    Lambda=[None, np.eye(3), [[nan, 0], [0, 1]], "L"],
    mu=[None, np.zeros(4), -np.ones(5), np.full(5, nan), "mu"],
    ok={"sigma": [0.0]},
)
_OC = dict(B=1.0, epsilon=1.0, sigma=0.5)
entry(
    "epasto2020_gwa.optimal_C",
    G.optimal_C,
    lambda: dict(dataset=_Dg(), rtol=1e-6, max_iter=500, **_OC),
    dataset=DATASET() + [_rankdef()],
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    rtol=POS() + [0.5, 1e-14],
    max_iter=INT(1, hi=10**5),
    ok={"sigma": [0.0]},
    alias={"dataset": DS_ALIAS + ("X",)},
)
entry(
    "epasto2020_gwa.optimal_C_all_records",
    G.optimal_C_all_records,
    lambda: dict(dataset=_Dg(), rtol=1e-6, max_iter=500, **_OC),
    dataset=DATASET() + [_rankdef()],
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    rtol=POS() + [0.5, 1e-14],
    max_iter=INT(1, hi=10**5),
    ok={"sigma": [0.0]},
    alias={"dataset": DS_ALIAS + ("X",)},
)
entry(
    "epasto2020_gwa.weights",
    G.weights,
    lambda: dict(dataset=_Dg(), **_OC),
    dataset=DATASET() + [_rankdef()],
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    alias={"dataset": DS_ALIAS + ("X",)},
)
H_BAD = [0, 4, 1.0, "1", None, True, 2**63]
entry(
    "epasto2020_gwa.sample_limit_selection",
    G.sample_limit_selection,
    lambda: dict(dataset=_Dg(), h=1, rng=rng()),
    dataset=DATASET(),
    h=H_BAD,
    rng=RNG(),
)
T_BAD = lambda: [  # noqa: E731
    [0.0, 3.0, 5.0, 6.0, 7.0],
    [0, 3, 5, 6, 99],
    [0, 0, 5, 6, 7],
    [0, 1, 3, 5, 6, 7],
    [0, 3, 5, 6],  # noqa: E731
    [-1, 3, 5, 6, 7],
    None,
    "T",
    [[0, 3, 5, 6, 7]],
]
entry(
    "epasto2020_gwa.sample_limited_C",
    G.sample_limited_C,
    lambda: dict(dataset=_Dg(), h=1, T=[0, 3, 5, 6, 7]),
    dataset=DATASET(),
    h=H_BAD,
    T=T_BAD(),
)
entry(
    "epasto2020_gwa.best_sample_limit_h",
    G.best_sample_limit_h,
    lambda: dict(dataset=_Dg(), rng=rng(), **_OC),
    dataset=DATASET(),
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    rng=RNG(),
    ok={"sigma": [0.0]},
)
entry(
    "epasto2020_gwa.best_sample_limit_hs",
    G.best_sample_limit_hs,
    lambda: dict(dataset=_Dg(), B=1.0, epsilons=[1.0, 2.0], sigma=0.5, rng=rng()),
    dataset=DATASET(),
    B=POS(),
    sigma=NONNEG() + [None],
    epsilons=[[], [0.0], [1.0, nan], [51.0], "1", None, 1.0, {1.0, 2.0}, [[1.0, 2.0]]],  # a set: no order
    rng=RNG(),
)
entry(
    "epasto2020_gwa.sample_limited_ols_mechanism",
    G.sample_limited_ols_mechanism,
    lambda: dict(dataset=_Dg(), h=1, B=1.0, epsilon=1.0, rng=rng(), size=None, T=None),
    dataset=GWA_BAD_DS,
    h=H_BAD,
    B=POS(),
    epsilon=EPS(),
    rng=RNG(),
    size=SIZE() + [3],
    T=[t for t in T_BAD() if t is not None],
    ok={"size": [1]},
    alias={"B": ("B", "labels"), "size": ("size",)},
)
entry(
    "epasto2020_gwa.worst_case_pairs",
    G.worst_case_pairs,
    lambda: dict(dataset=_Dg(), C=ols(_Dg()), B=1.0, max_brute=14),
    dataset=DATASET(),
    C=[None, ols(_Dg())[:, :5], finite_bad(ols(_Dg()))[0]],
    B=POS(),
    max_brute=INT(0, hi=20),
)


# ==================================================================== reference (package)
def _opt_in_and_out():
    with reference.allow_large_epsilon():
        pass


entry("reference.allow_large_epsilon", _opt_in_and_out, lambda: {})


# ================================================================== audits: bounds, audit
def _lap(D, rng, size):
    return D + rng.laplace(0.0, 1.0, size)


entry(
    "bounds.cp_lower",
    Bd.cp_lower,
    lambda: dict(count=3, nobs=10, level_alpha=0.025),
    count=[-1, 11, 2.5, None, "3", True],
    nobs=INT(1, hi=2**62),
    level_alpha=[0.0, -0.1, 0.6, nan, "0.1", None],
    alias={"nobs": ("nobs",)},
)
entry(
    "bounds.cp_upper",
    Bd.cp_upper,
    lambda: dict(count=3, nobs=10, level_alpha=0.025),
    count=[-1, 11, 2.5, None],
    nobs=INT(1, hi=2**62),
    level_alpha=[0.0, 0.6, nan, None],
)
entry(
    "bounds.epsilon_lower_bound",
    Bd.epsilon_lower_bound,
    lambda: dict(k1=50, k2=20, n=100, alpha=0.05, delta=0.0),
    k1=[-1, 101, 2.5, None],
    k2=[-1, 101, "3"],
    n=INT(1, hi=2**62),
    alpha=[0.0, 1.5, nan, None],
    delta=DELTA(),
)
entry(
    "bounds.p_value",
    Bd.p_value,
    lambda: dict(k1=50, k2=20, n=100, epsilon=0.5, delta=0.0),
    k1=[-1, 101, None],
    k2=[-1, 2.5],
    n=INT(1, hi=2**62),
    epsilon=[-1.0, nan, inf, "1", None],
    delta=DELTA(),
    ok={"epsilon": [0.0, 60.0]},
)
entry(
    "bounds.projected_bound",
    Bd.projected_bound,
    lambda: dict(k1=[5, 9], k2=[1, 2], n_sel=10, n_count=90, alpha=0.05, delta=0.0, z_sel=2.0),
    k1=[[11, 2], [-1, 2], [nan, 2], ["a", "b"], None],
    k2=[[11, 2], [-1, 0]],
    n_sel=INT(1, hi=2**62),
    n_count=INT(1, hi=2**62),
    alpha=[0.0, 2.0, nan],
    delta=DELTA(),
    z_sel=POS(),
)
entry(
    "harness.audit",
    H.audit,
    lambda: dict(
        mechanism=_lap,
        pair_or_generator=(0.0, 1.0),
        claim=Cl.PureDP(1.0),
        samples=200,
        seed=0,
        confidence=0.95,
        selection_fraction=0.1,
        output=None,
        confirm_pairs=3,
        sets_per_pair=1,
        pilot_samples=None,
        max_pairs=100,
        noise_family=None,
        progress=None,
        rounding_check=True,
    ),
    mechanism=[None, 3, "lap"],
    pair_or_generator=[[], None, 3],
    claim=[None, 1.0, "pure"],
    samples=INT(100, hi=10**8),
    seed=[None, -1, 1.5, "0", True],
    confidence=[0.0, 1.0, 1.5, nan, "0.9", None],
    selection_fraction=[0.0, 0.6, nan, "0.1", None],
    output=["scalar", 3],
    confirm_pairs=INT(1, hi=10**4),
    sets_per_pair=INT(1, hi=10**4),
    pilot_samples=[v for v in INT(100, hi=10**8) if v is not None],
    max_pairs=INT(1, hi=10**5),
    noise_family=["cauchy", "", 3, "Laplace"],
    progress=[3, "print"],
    rounding_check=[None, 1, "yes"],
    alias={"pair_or_generator": ("pair",), "claim": ("claim",)},
    ok={"output": ["continuous"], "noise_family": ["laplace", "l2laplace"]},
)  # scalar output: a no-op

# ======================================================================== properties
entry(
    "adapter.Adapter",
    Ad.Adapter,
    lambda: dict(name="x", statistic=lambda D: 0.0),
    name=[None, 3, ""],
    statistic=[3, "f"],
    weights=["w"],
    sensitivity=[1.0],
    noise_scale=[0.5],
    mechanism=["lap"],
    ok={"sensitivity": [None, lambda: 1.0]},
)
entry(
    "adapter.Adapter.renamed",
    lambda impl, extra: impl.renamed(extra),
    lambda: dict(impl=Ad.Adapter("x", statistic=lambda D, T: T), extra={"T": "cap"}),
    extra=[3, "T=cap", {"T": 1}, {1: "a"}],
    ok={"extra": [None, {}]},
)
entry(
    "adapter.Adapter.require",
    lambda impl, stages: impl.require(*stages),
    lambda: dict(impl=Ad.Adapter("x", statistic=lambda D: 0.0), stages=["statistic"]),
    stages=[["nope"], [3]],
)


def _prop(impl, D):
    impl.require("statistic")


def _strategy():
    from userdp.properties.strategies import user_datasets

    return user_datasets(max_users=2)


entry(
    "adapter.check_property",
    Ad.check_property,
    lambda: dict(
        prop=_prop, strategy=_strategy(), impl=Ad.Adapter("x", statistic=lambda D: 0.0), max_examples=2, examples=()
    ),
    prop=[None, "prop"],
    strategy=[None, [1, 2], "st"],
    impl=[None, "x", lambda D: 0.0],
    max_examples=INT(1, hi=10**5),
    examples=[None, 3, "ab"],
    shrink=[None, 1, "yes"],
    shrink_seconds=[0, -1.0, "1", True, 1e9, nan],
)


def _suite_module():
    import types

    m = types.ModuleType("planted_suite")
    m.STRATEGIES, m.EXAMPLES, m.MAX_EXAMPLES = {_prop: _strategy()}, {}, {_prop: 2}
    return m


entry(
    "adapter.check_suite_property",
    Ad.check_suite_property,
    lambda: dict(suite=_suite_module(), prop=_prop, impl=Ad.Adapter("x", statistic=lambda D: 0.0), max_examples=None),
    suite=[None, 3, "planted_suite"],
    prop=[None, "prop", lambda impl, ex: None],
    impl=[None, "x", lambda D: 0.0],
    max_examples=[0, -1, 1.5, "2", True],
)

# ========================================================== Gaussian DP
# (guarded: the probe imports this table on checkouts that predate Gaussian DP)
if hasattr(Cl, "GaussianDP") and hasattr(Bd, "mu_lower_bound"):
    entry("claims.GaussianDP", Cl.GaussianDP, lambda: dict(mu=1.0, delta=1e-5), mu=POS(), delta=DELTA_POS())
    _gdp = lambda: Cl.GaussianDP(1.0)  # noqa: E731
    entry(
        "claims.GaussianDP.delta_at",
        lambda g, epsilon: g.delta_at(epsilon),
        lambda: dict(g=_gdp(), epsilon=1.0),
        epsilon=[-1.0, nan, inf, "1", None, True],
        ok={"epsilon": [0.0, 60.0]},
    )  # a profile query: no cap
    entry(
        "claims.GaussianDP.epsilon_at",
        lambda g, delta: g.epsilon_at(delta),
        lambda: dict(g=_gdp(), delta=1e-5),
        delta=DELTA_POS(),
    )
    entry(
        "claims.GaussianDP.trade_off",
        lambda g, alpha: g.trade_off(alpha),
        lambda: dict(g=_gdp(), alpha=0.1),
        alpha=[-0.1, 1.1, nan, "0.1", None, True],
        ok={"alpha": [0.0, 1.0]},
    )
    entry(
        "claims.GaussianDP.compose",
        lambda g, others: g.compose(*others),
        lambda: dict(g=_gdp(), others=[_gdp()]),
        others=[[1.0], [None], ["gdp"], [Cl.PureDP(1.0)]],
        alias={"others": ("others", "GaussianDP")},
    )
    entry(
        "claims.Claims",
        Cl.Claims,
        lambda: dict(primary=Cl.ApproxDP(1.0, 1e-5), gdp=_gdp()),
        primary=[None, 1.0, _gdp(), "pure"],
        gdp=[None, 1.0, Cl.PureDP(1.0)],
    )
    entry(
        "mechanisms.gaussian_gdp_mu",
        M.gaussian_gdp_mu,
        lambda: dict(sensitivity=1.0, sigma=2.0),
        sensitivity=POS(),
        sigma=POS(),
    )
    entry(
        "epasto2020_erm.gdp_mu",
        EE.gdp_mu,
        lambda: dict(epsilon=1.0, delta=1e-5, T=4),
        epsilon=EPS(),
        delta=DELTA_POS(),
        T=INT(1, hi=10**6),
    )
    entry(
        "epasto2020_erm.gdp_claim",
        EE.gdp_claim,
        lambda: dict(epsilon=1.0, delta=1e-5, T=4),
        epsilon=EPS(),
        delta=DELTA_POS(),
        T=INT(1, hi=10**6),
    )
    entry(
        "bounds.error_rate_upper_bounds",
        Bd.error_rate_upper_bounds,
        lambda: dict(k1=30, k2=60, n=100, alpha=0.05),
        k1=[-1, 101, 2.5, None],
        k2=[-1, 101, "3"],
        n=INT(1, hi=2**62),
        alpha=[0.0, 1.5, nan, None],
    )
    entry(
        "bounds.mu_lower_bound",
        Bd.mu_lower_bound,
        lambda: dict(k1=30, k2=60, n=100, alpha=0.05),
        k1=[-1, 101, 2.5, None],
        k2=[-1, 101, "3"],
        n=INT(1, hi=2**62),
        alpha=[0.0, 1.5, nan, None],
    )
    entry(
        "bounds.gdp_p_value",
        Bd.gdp_p_value,
        lambda: dict(k1=30, k2=60, n=100, mu=1.0),
        k1=[-1, 101, None],
        k2=[-1, 2.5],
        n=INT(1, hi=2**62),
        mu=POS(),
    )
    entry(
        "bounds.projected_mu_bound",
        Bd.projected_mu_bound,
        lambda: dict(k1=[5, 9], k2=[8, 2], n_sel=10, n_count=90, alpha=0.05, z_sel=4.0),
        k1=[[11, 2], [-1, 2], [nan, 2], ["a", "b"], None],
        k2=[[11, 2], [-1, 0]],
        n_sel=INT(1, hi=2**62),
        n_count=INT(1, hi=2**62),
        alpha=[0.0, 2.0, nan],
        z_sel=POS(),
    )

# ============================================================ statistical ceiling
# (guarded: the probe imports this table on checkouts that predate the ceiling)
try:
    from userdp.audits.engine import ceiling as Ce
except ImportError:
    Ce = None
if Ce is not None:

    class _P:
        def __init__(self, first, second):
            self.first, self.second, self.description = first, second, f"{first} vs {second}"

    def _ident(q):
        return q

    def _lap_noise():
        return Ce.NoiseModel("laplace", _ident, 1.0)

    def _lap_result():
        return H.audit(_lap, (0.0, 1.0), Cl.PureDP(1.0), samples=200, seed=0, output="continuous")

    entry(
        "ceiling.NoiseModel",
        Ce.NoiseModel,
        lambda: dict(family="laplace", statistic=_ident, scale=1.0),
        family=["gauss", None, 3, "Laplace"],
        statistic=[3, "f", None],
        scale=POS(),
        ok={"scale": [lambda D: 1.0]},
    )
    entry(
        "ceiling.NoiseModel.locate",
        lambda nm, dataset: nm.locate(dataset),
        lambda: dict(nm=_lap_noise(), dataset=0.5),
        dataset=[nan, inf, "abc", None, [[1.0, 2.0]]],
        alias={"dataset": ("dataset",)},
    )
    entry(
        "ceiling.ceiling",
        Ce.ceiling,
        lambda: dict(
            noise=_lap_noise(),
            pairs=[_P(0.0, 1.0)],
            samples=1000,
            confidence=0.95,
            delta=0.0,
            gdp=False,
            output_shape=None,
            draws=Ce.MC_DRAWS,
            seed=Ce.MC_SEED,
        ),
        noise=[None, "laplace", 3],
        pairs=[[], None, 3, [1.0], "ab"],
        samples=INT(1, hi=2**62),
        confidence=[0.0, 1.0, nan, "0.9", None, True],
        delta=DELTA(),
        gdp=[1, "yes", None],
        output_shape=[(0,), (2, 3), "x", [2], (1.5,)],
        draws=INT(800, hi=10**8),
        seed=[-1, 1.5, None, "0", True],
        ok={"output_shape": [(), (1,)]},
    )
    entry(
        "harness.efficiency_report",
        H.efficiency_report,
        lambda: dict(noise=_lap_noise(), pairs=[_P(0.0, 1.0)], result=_lap_result(), output_shape=()),
        noise=["laplace", 3],
        pairs=[[], None, 3],
        result=[None, 3, "r"],
        output_shape=[(5,), "x", (2, 2)],
        ok={"noise": [None]},
        alias={"output_shape": ("output_shape", "noise")},
    )
    entry(
        "ceiling.plugin_epsilon_bound",
        Ce.plugin_epsilon_bound,
        lambda: dict(P=[0.5], Q=[0.2], n=100, alpha=0.05, delta=0.0),
        P=[[1.5], [nan], None, ["a"], [0.5, 0.5]],
        Q=[[-0.1], [inf]],
        n=INT(1, hi=2**62),
        alpha=[0.0, 1.0, nan, None, "0.1"],
        delta=DELTA(),
        alias={"P": ("P",), "Q": ("Q",)},
    )
    entry(
        "ceiling.plugin_mu_bound",
        Ce.plugin_mu_bound,
        lambda: dict(P=[0.5], Q=[0.2], n=100, alpha=0.05),
        P=[[1.5], [nan], None, ["a"], [0.5, 0.5]],
        Q=[[-0.1], [inf]],
        n=INT(1, hi=2**62),
        alpha=[0.0, 1.0, nan, None, "0.1"],
        alias={"P": ("P",), "Q": ("Q",)},
    )

# ============================================================ white-box search
try:
    from userdp.audits.engine import whitebox as Wb
except ImportError:
    Wb = None
if Wb is not None and Ce is not None:

    def _wb_space(**kw):
        return Wb.Space(**{"name": "shift", "bounds": ((0.0, 1.0),), "build": lambda th: (0.0, float(th[0])), **kw})

    entry(
        "whitebox.Space",
        Wb.Space,
        lambda: dict(
            name="shift", bounds=((0.0, 1.0),), build=lambda th: (0.0, float(th[0])), starts=((0.5,),), describe=None
        ),
        name=["", None, 3],
        bounds=[(), ((1.0, 0.0),), ((0.0, inf),), ((nan, 1.0),), "ab", ((0.0, 1.0, 2.0),)],
        build=[None, 3, "f"],
        starts=[((2.0,),), ((0.5, 0.5),), ((nan,),)],
    )
    entry(
        "whitebox.realised_ratio",
        Wb.realised_ratio,
        lambda: dict(noise=_lap_noise(), first=0.0, second=1.0, epsilon=1.0, sensitivity=None),
        noise=[None, "laplace", 3, Ce.NoiseModel("gaussian", _ident, 1.0)],
        first=[nan, "x", None],
        second=[inf, [1.0, 2.0]],
        epsilon=EPS(),
        sensitivity=[v for v in POS() if v is not None],
        alias={"first": ("dataset", "statistic", "shapes"), "second": ("dataset", "statistic", "shapes")},
    )
    entry(
        "whitebox.search",
        Wb.search,
        lambda: dict(
            noise=_lap_noise(),
            spaces=[_wb_space()],
            epsilon=1.0,
            sensitivity=None,
            random_starts=1,
            seed=0,
            maxiter=20,
            progress=None,
        ),
        sensitivity=[v for v in POS() if v is not None],
        noise=[None, "laplace", Ce.NoiseModel("gaussian", _ident, 1.0)],
        spaces=[[], None, "ab", [3]],
        epsilon=EPS(),
        random_starts=INT(0, hi=10_000),
        seed=[-1, 1.5, None, "0", True],
        maxiter=INT(1, hi=10**6),
        progress=[3, "print"],
    )

# ============================================================ Acharya et al. 2024
try:
    from userdp.reference import acharya2024 as Ac
except ImportError:
    Ac = None
if Ac is not None:

    def _Da(**kw):
        """Three records in [0, 1]^2, labels in [-1, 1], a profile."""
        f = dict(
            values=np.array([[0.1, 0.9], [0.5, 0.5], [1.0, 0.0]]),
            user_ids=np.arange(3),
            labels=np.array([0.5, -0.5, 1.0]),
            epsilons=np.array([0.2, 0.5, 1.0]),
        )
        f.update(kw)
        return UserDataset(**f)

    def DATASET_AC():
        """The domain of Acharya et al.: x in [0, 1]^d, y in [-1, 1], a profile, labels."""
        return DATASET() + [
            _Da(values=np.array([[0.1, 1.5], [0.5, 0.5], [1.0, 0.0]])),
            _Da(values=np.array([[0.1, -0.1], [0.5, 0.5], [1.0, 0.0]])),
            _Da(labels=np.array([0.5, -1.5, 1.0])),
            _Da(epsilons=None),
            _Da(labels=None),
        ]

    AC_ALIAS = {"dataset": DS_ALIAS + ("epsilons",)}

    entry("acharya2024.check_data", Ac.check_data, lambda: dict(dataset=_Da()), dataset=DATASET_AC(), alias=AC_ALIAS)
    entry("acharya2024.claim", Ac.claim, lambda: dict(dataset=_Da()), dataset=DATASET_AC(), alias=AC_ALIAS)
    entry("acharya2024.weights", Ac.weights, lambda: dict(dataset=_Da()), dataset=DATASET_AC(), alias=AC_ALIAS)
    entry(
        "acharya2024.theta_bound",
        Ac.theta_bound,
        lambda: dict(Lambda=1.0, d=2, B=None),
        Lambda=POS(),
        d=INT(1),
        B=[0.0, -1.0, nan, inf, "1", True],
        ok={"B": [2.0]},
    )
    for _name in ("eta", "sensitivity", "noise_scale"):
        entry(
            f"acharya2024.{_name}",
            getattr(Ac, _name),
            lambda: dict(dataset=_Da(), Lambda=1.0, B=None),
            dataset=DATASET_AC(),
            Lambda=POS(),
            B=[0.0, -1.0, nan, inf, "1", True],
            alias=AC_ALIAS,
            ok={"B": [0.5]},
        )
    entry(
        "acharya2024.statistic",
        Ac.statistic,
        lambda: dict(dataset=_Da(), Lambda=1.0),
        dataset=DATASET_AC(),
        Lambda=POS(),
        alias=AC_ALIAS,
    )
    entry(
        "acharya2024.mechanism",
        Ac.mechanism,
        lambda: dict(dataset=_Da(), rng=rng(), size=None, Lambda=1.0, B=None),
        dataset=DATASET_AC(),
        rng=RNG(),
        size=SIZE(),
        Lambda=POS(),
        B=[0.0, -1.0, nan, inf, "1", True],
        alias=AC_ALIAS,
        ok={"size": [1, 3], "B": [0.5]},
    )
    entry(
        "acharya2024.unregularised_norm",
        Ac.unregularised_norm,
        lambda: dict(dataset=_Da()),
        dataset=DATASET_AC(),
        alias=AC_ALIAS,
    )

    def _Da2():
        return Ac.RELATION.neighbour(_Da(), 0, np.array([1.0, 1.0]), -1.0)

    entry(
        "acharya2024.theorem34_sensitivity",
        Ac.theorem34_sensitivity,
        lambda: dict(dataset=_Da(), neighbour=_Da2(), Lambda=1.0, B=1.0),
        dataset=DATASET_AC(),
        neighbour=[None, "x", _Da(), _Da(labels=np.array([1.0, 1.0, -1.0]))],
        Lambda=POS(),
        B=POS(),
        alias={**AC_ALIAS, "neighbour": ("neighbour",)},
    )
    entry(
        "acharya2024.nonpersonalized_epsilons",
        Ac.nonpersonalized_epsilons,
        lambda: dict(dataset=_Da()),
        dataset=DATASET_AC(),
        alias=AC_ALIAS,
    )
    entry(
        "acharya2024.nonpersonalized_mechanism",
        Ac.nonpersonalized_mechanism,
        lambda: dict(dataset=_Da(), rng=rng(), size=None, Lambda=1.0),
        dataset=DATASET_AC(),
        rng=RNG(),
        size=SIZE(),
        Lambda=POS(),
        alias=AC_ALIAS,
        ok={"size": [2]},
    )
    entry(
        "acharya2024.jorgensen_threshold",
        Ac.jorgensen_threshold,
        lambda: dict(dataset=_Da(), threshold="max"),
        dataset=DATASET_AC(),
        threshold=["median", "", None, 0.0, -1.0, nan, inf, True],
        alias=AC_ALIAS,
        ok={"threshold": ["mean", 0.7]},
    )
    entry(
        "acharya2024.jorgensen_probabilities",
        Ac.jorgensen_probabilities,
        lambda: dict(epsilons=[0.2, 1.0], t=1.0),
        epsilons=[[], [0.0, 1.0], [-1.0], [nan], "a", None, [[0.5]]],
        t=POS(),
    )
    entry(
        "acharya2024.jorgensen_levels",
        Ac.jorgensen_levels,
        lambda: dict(epsilons=[0.2, 1.0], t=1.0),
        epsilons=[[], [0.0, 1.0], [-1.0], [nan], "a", None],
        t=POS(),
    )
    entry(
        "acharya2024.jorgensen_mechanism",
        Ac.jorgensen_mechanism,
        lambda: dict(dataset=_Da(), rng=rng(), size=None, Lambda=1.0, threshold="max"),
        dataset=DATASET_AC(),
        rng=RNG(),
        size=SIZE(),
        Lambda=POS(),
        threshold=["median", 0.0, -1.0, nan, None],
        alias={**AC_ALIAS, "threshold": ("threshold", "t")},
        ok={"size": [2], "threshold": ["mean"]},
    )

# ============================================================ Krichene et al. 2023
try:
    from userdp.reference import krichene2023 as Kr
    from userdp.reference import krichene2023_dpals as Kd
    from userdp.reference import krichene2023_weights as Kw
except ImportError:
    Kr = None
if Kr is not None:

    def _Dk(**kw):
        """Tasks 0, 1 (m = 2); user 0 in both, user 1 in task 0; d = 2, labels."""
        f = dict(
            values=np.array([[0.6, 0.0], [0.0, 0.5], [0.3, 0.4]]),
            user_ids=np.array([0, 0, 1]),
            labels=np.array([0.5, -0.2, 0.4]),
            task_ids=np.array([0, 1, 0]),
        )
        f.update(kw)
        return UserDataset(**f)

    def DATASET_MT(labels=True):
        """Multi-task datasets: task ids present, in [0, m) (m = 2), no repeated (task, user) pair."""
        bad = DATASET() + [_Dk(task_ids=None), _Dk(task_ids=np.array([0, 1, 2])), _Dk(task_ids=np.array([0, 0, 0]))]
        return bad + ([_Dk(labels=None)] if labels else [])

    MT_ALIAS = {
        "dataset": DS_ALIAS + ("task_ids", "m"),
        "train": DS_ALIAS + ("task_ids", "m"),
        "test": DS_ALIAS + ("task_ids", "m"),
    }
    W3 = lambda: np.array([0.5, 0.5, 0.5])  # noqa: E731
    BAD_W = ARRAY() + [[0.5, 0.5], [-0.1, 0.5, 0.5], [nan, 0.5, 0.5], [[0.5, 0.5, 0.5]]]
    BAD_COUNTS = [None, "ab", [2.0, 0.0], [2.0], [2.0, nan], [2.0, inf], [[2.0, 1.0]], [2.0, -1.0]]
    BAD_OMEGA = ARRAY() + [[0.5], [-0.5, 1.0], [nan, 1.0], [[0.5, 1.0]]]
    M_BAD = INT(1)
    KW_MU = [-0.5, nan, inf, 11.0, "1", None, True]
    CNT = dict(m=2, n_counts=[2.0, 1.0], n_users=2)

    entry(
        "krichene2023_weights.graph",
        Kw.graph,
        lambda: dict(dataset=_Dk(), m=2),
        dataset=DATASET_MT(False),
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.check_counts",
        Kw.check_counts,
        lambda: dict(n_counts=[2.0, 1.0], m=2, name="n_counts"),
        n_counts=BAD_COUNTS,
        m=M_BAD + [3],
    )
    entry(
        "krichene2023_weights.omega_mu",
        Kw.omega_mu,
        lambda: dict(n_counts=[2.0, 1.0], n_users=2, beta_bar=1.0, mu=0.5),
        n_counts=BAD_COUNTS[:2] + BAD_COUNTS[2:3] + BAD_COUNTS[4:],
        n_users=INT(1),
        beta_bar=POS(),
        mu=KW_MU,
        ok={"mu": [0, 0.0, 1.0]},
    )
    entry(
        "krichene2023_weights.omega_star",
        Kw.omega_star,
        lambda: dict(n_counts=[2.0, 1.0], n_users=2, beta_bar=1.0, gamma=1),
        n_counts=[None, [2.0, 0.0], [nan]],
        n_users=INT(1),
        beta_bar=POS(),
        gamma=[2, -1, 0.5, None, "1", True],
        ok={"gamma": [0]},
    )
    entry(
        "krichene2023_weights.uniform_omega",
        Kw.uniform_omega,
        lambda: dict(n_counts=[2.0, 1.0], n_users=2, beta_bar=1.0),
        n_counts=[None, [2.0, 0.0], [nan]],
        n_users=INT(1),
        beta_bar=POS(),
    )
    entry(
        "krichene2023_weights.user_budgets",
        Kw.user_budgets,
        lambda: dict(dataset=_Dk(), w=W3(), m=2),
        dataset=DATASET_MT(False),
        w=ARRAY() + [[0.5, 0.5], [nan, 0.5, 0.5]],
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.clip_weights",
        Kw.clip_weights,
        lambda: dict(dataset=_Dk(), omega=[0.5, 1.0], beta=1.0, m=2),
        dataset=DATASET_MT(False),
        omega=BAD_OMEGA,
        beta=POS(),
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.per_user_weights",
        Kw.per_user_weights,
        lambda: dict(dataset=_Dk(), omega=[0.5, 1.0], beta=1.0, m=2),
        dataset=DATASET_MT(False),
        omega=BAD_OMEGA + [[0.0, 1.0]],
        beta=POS(),
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.adaptive_weights",
        Kw.adaptive_weights,
        lambda: dict(dataset=_Dk(), beta=1.0, mu=0.5, beta_bar=None, normalise="clip", **CNT),
        dataset=DATASET_MT(False),
        beta=POS(),
        mu=KW_MU,
        n_counts=BAD_COUNTS,
        n_users=INT(1),
        m=M_BAD + [1],
        beta_bar=[0.0, -1.0, nan, inf, "1", True],
        normalise=["none", None, 1],
        alias=MT_ALIAS,
        ok={"normalise": ["per-user"], "beta_bar": [2.0]},
    )
    entry(
        "krichene2023_weights.uniform_sample_weights",
        Kw.uniform_sample_weights,
        lambda: dict(dataset=_Dk(), rng=rng(), m=2, k=1, beta=1.0),
        dataset=DATASET_MT(False),
        rng=RNG(),
        m=M_BAD + [1],
        k=INT(1),
        beta=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.tail_sample_weights",
        Kw.tail_sample_weights,
        lambda: dict(dataset=_Dk(), noisy_counts=[3.0, 1.0], m=2, k=1, beta=1.0),
        dataset=DATASET_MT(False),
        noisy_counts=ARRAY() + [[1.0], [nan, 1.0]],
        m=M_BAD + [1],
        k=INT(1),
        beta=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.private_counts",
        Kw.private_counts,
        lambda: dict(dataset=_Dk(), rng=rng(), m=2, k=1, sigma=1.0),
        dataset=DATASET_MT(False),
        rng=RNG(),
        m=M_BAD + [1],
        k=INT(1),
        sigma=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.count_rdp",
        Kw.count_rdp,
        lambda: dict(orders=[2.0, 8.0], k=2, sigma=1.0),
        orders=[[1.0], [], None, [nan]],
        k=INT(1),
        sigma=POS(),
        alias={"orders": ("orders", "alpha")},
    )
    entry(
        "krichene2023_weights.accuracy_margin",
        Kw.accuracy_margin,
        lambda: dict(sigma=1.0, m=2, failure=0.05),
        sigma=POS(),
        m=M_BAD,
        failure=[0.0, 1.0, -0.1, nan, "x", None, True],
    )
    entry(
        "krichene2023_weights.estimated_omega",
        Kw.estimated_omega,
        lambda: dict(noisy_counts=[2.5, -0.3], s=1.0, n_users=2, beta_bar=1.0, mu=0.5),
        noisy_counts=[None, "ab", [nan, 1.0], [[1.0]]],
        s=NONNEG(),
        n_users=INT(1),
        beta_bar=POS(),
        mu=KW_MU,
        ok={"s": [0.0]},
    )
    entry(
        "krichene2023_weights.improvement_ratios",
        Kw.improvement_ratios,
        lambda: dict(n_counts=[2.0, 1.0]),
        n_counts=[None, "ab", [2.0, 0.0], [nan], [[1.0, 2.0]]],
    )
    entry(
        "krichene2023_weights.rdp",
        Kw.rdp,
        lambda: dict(orders=[2.0, 8.0], beta=0.5, runs=1),
        orders=[[1.0], [], None, [nan]],
        beta=POS(),
        runs=INT(1),
        alias={"orders": ("orders", "alpha")},
    )
    _CK = dict(count_k=None, count_sigma=None, count_releases=1)
    entry(
        "krichene2023_weights.total_rdp",
        Kw.total_rdp,
        lambda: dict(orders=[2.0, 8.0], beta=0.5, runs=1, count_k=2, count_sigma=3.0, count_releases=1),
        orders=[[1.0], None],
        beta=POS(),
        runs=INT(1),
        count_k=[0, 1.5, True, "2"],
        count_sigma=[0.0, nan, "1", True],
        count_releases=INT(1),
        alias={"orders": ("orders", "alpha"), "count_k": ("count_k", "k"), "count_sigma": ("count_sigma", "sigma")},
    )
    entry(
        "krichene2023_weights.epsilon",
        Kw.epsilon,
        lambda: dict(beta=0.5, delta=1e-5, runs=1, **_CK),
        beta=POS(),
        delta=DELTA_POS(),
        runs=INT(1),
        count_releases=INT(1) + [],
    )
    entry(
        "krichene2023_weights.beta_for_epsilon",
        Kw.beta_for_epsilon,
        lambda: dict(target_epsilon=1.0, delta=1e-5, runs=1, rtol=1e-6, **_CK),
        target_epsilon=EPS(),
        delta=DELTA_POS(),
        runs=INT(1),
        rtol=POS() + [0.5],
    )
    entry(
        "krichene2023_weights.gdp_mu",
        Kw.gdp_mu,
        lambda: dict(beta=0.5, runs=1, count_k=2, count_sigma=3.0, count_releases=1),
        beta=POS(),
        runs=INT(1),
        count_k=[0, 1.5, True, "2"],
        count_sigma=[0.0, nan, "1", True],
        count_releases=INT(1),
    )
    entry("krichene2023_weights.claim", Kw.claim, lambda: dict(beta=0.5, delta=1e-5), beta=POS(), delta=DELTA_POS())

    GX = dict(Gamma_x=1.0, Gamma_star=1.0)
    entry(
        "krichene2023.check_data",
        Kr.check_data,
        lambda: dict(dataset=_Dk(), m=2),
        dataset=DATASET_MT(),
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023.budget",
        Kr.budget,
        lambda: dict(dataset=_Dk(), w=W3(), m=2),
        dataset=DATASET_MT(),
        w=BAD_W,
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023.clip_data",
        Kr.clip_data,
        lambda: dict(x=[[3.0, 4.0]], y=[5.0], **GX),
        x=ARRAY() + finite_bad([[3.0, 4.0]]) + [[1.0, 2.0]],
        y=ARRAY()[:3] + [[nan], [[1.0]]],
        Gamma_x=POS(),
        Gamma_star=POS(),
    )
    entry(
        "krichene2023.statistic",
        Kr.statistic,
        lambda: dict(dataset=_Dk(), w=W3(), m=2, **GX),
        dataset=DATASET_MT(),
        w=BAD_W,
        m=M_BAD + [1],
        Gamma_x=POS(),
        Gamma_star=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023.sensitivity",
        Kr.sensitivity,
        lambda: dict(beta=0.5, **GX),
        beta=POS(),
        Gamma_x=POS(),
        Gamma_star=POS(),
    )
    entry("krichene2023.noise_scale", Kr.noise_scale, lambda: dict(**GX), Gamma_x=POS(), Gamma_star=POS())
    entry(
        "krichene2023.symmetric_noise",
        Kr.symmetric_noise,
        lambda: dict(rng=rng(), shape=(2,), d=3),
        rng=RNG(),
        d=INT(1),
        shape=[(-1,), "x", (1.5,), None, (0,)],
    )
    entry(
        "krichene2023.ssp_release",
        Kr.ssp_release,
        lambda: dict(dataset=_Dk(), w=W3(), rng=rng(), size=None, m=2, **GX),
        dataset=DATASET_MT(),
        w=BAD_W,
        rng=RNG(),
        size=SIZE(),
        m=M_BAD + [1],
        Gamma_x=POS(),
        Gamma_star=POS(),
        alias=MT_ALIAS,
        ok={"size": [1, 3]},
    )
    _A = lambda: np.eye(2)[None] * 2.0  # noqa: E731
    entry(
        "krichene2023.solve",
        Kr.solve,
        lambda: dict(A_hat=_A(), b_hat=np.ones((1, 2)), Lambda=1.0),
        A_hat=ARRAY() + [np.eye(2), np.ones((1, 2, 3)), np.full((1, 2, 2), nan)],
        b_hat=ARRAY() + [np.ones((1, 3)), np.full((1, 2), inf)],
        Lambda=[-1.0, nan, inf, "1", None, [1.0, 2.0], [[1.0]]],
        alias={"b_hat": ("b_hat", "A_hat")},
        ok={"Lambda": [0.0, [0.5]]},
    )
    entry(
        "krichene2023.ssp_mechanism",
        Kr.ssp_mechanism,
        lambda: dict(dataset=_Dk(), w=W3(), rng=rng(), size=None, m=2, Lambda=1.0, **GX),
        dataset=DATASET_MT(),
        w=BAD_W,
        rng=RNG(),
        size=SIZE(),
        m=M_BAD + [1],
        Gamma_x=POS(),
        Gamma_star=POS(),
        Lambda=[-1.0, nan, inf, "1", None],
        alias=MT_ALIAS,
        ok={"size": [2], "Lambda": [0.0, [1.0, 2.0]]},
    )
    entry("krichene2023.gd_noise_scale", Kr.gd_noise_scale, lambda: dict(Gamma=1.0, T=4), Gamma=POS(), T=INT(1))
    entry(
        "krichene2023.weighted_gradient",
        Kr.weighted_gradient,
        lambda: dict(dataset=_Dk(), w=W3(), theta=np.zeros((2, 2)), m=2, Gamma=1.0, Lambda=0.1),
        dataset=DATASET_MT(),
        w=BAD_W,
        theta=ARRAY() + [np.zeros((3, 2)), np.full((2, 2), nan), np.zeros(2)],
        m=M_BAD + [1],
        Gamma=POS(),
        Lambda=NONNEG(),
        alias=MT_ALIAS,
        ok={"Lambda": [0.0]},
    )
    entry(
        "krichene2023.theorem312_schedule",
        Kr.theorem312_schedule,
        lambda: dict(n_counts=[2.0, 1.0], omega=[0.5, 1.0], d=2, case="a", Gamma=1.0, radius=1.0, Lambda=None, T=None),
        n_counts=BAD_COUNTS,
        omega=BAD_OMEGA + [[0.0, 1.0]],
        d=INT(1),
        case=["c", None, 1],
        Gamma=POS(),
        radius=POS(),
        T=[0, -1, 1.5, True, "2"],
        ok={"T": [3]},
    )
    entry(
        "krichene2023.gd_mechanism",
        Kr.gd_mechanism,
        lambda: dict(
            dataset=_Dk(),
            w=W3(),
            rng=rng(),
            size=None,
            m=2,
            Gamma=1.0,
            Lambda=0.1,
            eta=np.full((2, 2), 0.1),
            radius=1.0,
            theta0=None,
        ),
        dataset=DATASET_MT(),
        w=BAD_W,
        rng=RNG(),
        size=SIZE(),
        m=M_BAD + [1],
        Gamma=POS(),
        Lambda=NONNEG(),
        eta=ARRAY() + [np.full((2, 3), 0.1), np.full((2, 2), -0.1), np.full(2, 0.1), np.full((2, 2), nan)],
        radius=POS(),
        theta0=ARRAY()[1:] + [np.zeros((3, 2)), np.full((2, 2), nan)],
        alias=MT_ALIAS,
        ok={"size": [2], "theta0": [np.zeros((2, 2))]},
    )

    entry(
        "krichene2023_dpals.power_law_graph",
        Kd.power_law_graph,
        lambda: dict(rng=rng(), m=5, n_users=10, a=1.0, tasks_per_user=2),
        rng=RNG(),
        m=INT(1, hi=10**5),
        n_users=INT(1, hi=10**7),
        a=POS(),
        tasks_per_user=POS(),
    )
    entry(
        "krichene2023_dpals.appendix_c_problem",
        Kd.appendix_c_problem,
        lambda: dict(rng=rng(), m=5, n_users=10, d=2, a=1.0, tasks_per_user=2, sigma_F=1e-3),
        rng=RNG(),
        m=INT(1, hi=10**5),
        n_users=INT(1, hi=10**7),
        d=INT(1, hi=10**4),
        a=POS(),
        tasks_per_user=POS(),
        sigma_F=NONNEG(),
        ok={"sigma_F": [0.0]},
    )
    entry(
        "krichene2023_dpals.low_rank_problem",
        Kd.low_rank_problem,
        lambda: dict(rng=rng(), m=5, n_users=10, rank=2, a=1.0, tasks_per_user=2, noise=0.1),
        rng=RNG(),
        m=INT(1, hi=10**5),
        n_users=INT(1, hi=10**7),
        rank=INT(1, hi=10**4),
        a=POS(),
        tasks_per_user=POS(),
        noise=NONNEG(),
    )
    entry(
        "krichene2023_dpals.split",
        Kd.split,
        lambda: dict(dataset=_Dk(), rng=rng(), test_fraction=0.2),
        dataset=DATASET(),
        rng=RNG(),
        test_fraction=[0.0, 1.0, -0.5, nan, "x", None],
    )
    entry(
        "krichene2023_dpals.task_rmse",
        Kd.task_rmse,
        lambda: dict(theta=np.zeros((2, 2)), dataset=_Dk(), m=2),
        theta=ARRAY() + [np.zeros((3, 2)), np.full((2, 2), nan)],
        dataset=DATASET_MT(),
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_dpals.user_embeddings",
        Kd.user_embeddings,
        lambda: dict(dataset=_Dk(), U=np.ones((2, 2)), m=2, Lambda=1.0),
        dataset=DATASET_MT(),
        U=ARRAY() + [np.ones((3, 2)), np.full((2, 2), nan)],
        m=M_BAD + [1],
        Lambda=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_dpals.dpals",
        Kd.dpals,
        lambda: dict(train=_Dk(), w=W3(), rng=rng(), m=2, rank=2, steps=1, Lambda=1.0, item_Lambda=None, **GX),
        train=DATASET_MT(),
        w=BAD_W,
        rng=RNG(),
        m=M_BAD + [1],
        rank=INT(1, hi=1000),
        steps=INT(1, hi=1000),
        Gamma_x=POS(),
        Gamma_star=POS(),
        Lambda=POS(),
        item_Lambda=[-1.0, nan, "1"],
        alias=MT_ALIAS,
        ok={"item_Lambda": [0.0]},
    )
    entry(
        "krichene2023_dpals.factor_rmse",
        Kd.factor_rmse,
        lambda: dict(U=np.ones((2, 2)), train=_Dk(), test=_Dk(), m=2, Lambda=1.0),
        U=ARRAY() + [np.ones((3, 2))],
        train=DATASET_MT(),
        test=DATASET_MT(),
        m=M_BAD + [1],
        Lambda=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_dpals.bucket_rmse",
        Kd.bucket_rmse,
        lambda: dict(sq_err=np.ones(3), test=_Dk(), n_counts=[2.0, 1.0], m=2, buckets=2),
        sq_err=ARRAY() + [np.ones(2), [nan, 1.0, 1.0], [-1.0, 1.0, 1.0]],
        test=DATASET_MT(),
        n_counts=BAD_COUNTS,
        m=M_BAD + [1],
        buckets=INT(1, hi=2),
        alias=MT_ALIAS,
    )

# ======================================================= Zhao et al. 2024, HLM
try:
    from userdp.reference import zhao2024 as Zh
except ImportError:
    Zh = None
if Zh is not None:

    def _Dz():
        """Four users (2, 1, 3, 1 items), scalar items."""
        return UserDataset(np.array([0.1, 0.3, -0.2, 0.5, 0.4, 0.45, 0.0]), np.array([0, 0, 1, 2, 2, 2, 3]))

    M_BAD = [[], [0, 1], [1.5], [-1], [nan], "a", None, [[1]]]
    Y, W4, T4 = np.array([[0.1], [0.2], [0.4]]), np.full(3, 1 / 3), np.full(3, 0.5)
    Y_BAD = [None, "a", [[nan]], np.zeros((0, 1)), [0.1, 0.2, 0.4], np.zeros((2, 1))]
    W_BAD = [None, "a", [nan, 0.5, 0.5], [-0.5, 1.0, 0.5], [0.0, 0.0, 0.0], [0.5, 0.5]]
    T_BAD = [None, "a", [0.5, 0.0, 0.5], [0.5, -1.0, 0.5], [0.5, nan, 0.5], [0.5]]
    HLM = dict(
        epsilon=EPS(),
        delta=DELTA_POS(),
        R=POS(),
        tau=POS(),
        kappa0=POS() + [1.0, 2.0],
        test_share=POS() + [1.0, 1.5],
        support=[v for v in POS() if v is not None] + [0.2],
    )  # 0.2: items of _Dz reach 0.5
    HLM_OK = dict(epsilon=1.0, delta=1e-5, R=1.0, tau=2.0, kappa0=0.5, test_share=0.25, support=None)

    entry("zhao2024.local_averages", Zh.local_averages, lambda: dict(dataset=_Dz()), dataset=DATASET())
    entry("zhao2024.thresholds", Zh.thresholds, lambda: dict(m=[1, 4], R=1.0, tau=2.0), m=M_BAD, R=POS(), tau=POS())
    entry("zhao2024.weights", Zh.weights, lambda: dict(m=[1, 4], cap=2.0), m=M_BAD, cap=POS() + [0.5])
    entry(
        "zhao2024.choose_cap",
        Zh.choose_cap,
        lambda: dict(
            m=[1, 4, 9],
            R=1.0,
            epsilon=1.0,
            delta=1e-5,
            d=1,
            tau=2.0,
            kappa0=0.5,
            test_share=0.25,
            candidates=8,
            support=None,
        ),
        m=M_BAD,
        R=POS(),
        epsilon=EPS(),
        delta=DELTA_POS(),
        d=INT(1),
        tau=POS(),
        kappa0=HLM["kappa0"],
        test_share=HLM["test_share"],
        candidates=INT(2, hi=10_000),
        support=HLM["support"][:-1],
    )
    entry(
        "zhao2024.huber_loss",
        Zh.huber_loss,
        lambda: dict(s=[0.2], y=Y, w=W4, T=T4),
        s=[None, "a", [nan], [0.1, 0.2], [[0.1]]],
        y=Y_BAD,
        w=W_BAD,
        T=T_BAD,
    )
    entry(
        "zhao2024.huber_gradient",
        Zh.huber_gradient,
        lambda: dict(s=[0.2], y=Y, w=W4, T=T4),
        s=[None, "a", [inf], [0.1, 0.2]],
        y=Y_BAD,
        w=W_BAD,
        T=T_BAD,
    )
    entry(
        "zhao2024.solve",
        Zh.solve,
        lambda: dict(y=Y, w=W4, T=T4, e=1e-9, kappa0=0.5, rho=1e-3),
        y=Y_BAD,
        w=W_BAD,
        T=T_BAD,
        e=POS(),
        kappa0=HLM["kappa0"],
        rho=POS(),
    )
    entry(
        "zhao2024.clip",
        Zh.clip,
        lambda: dict(v=[3.0, 4.0], R_c=1.0),
        v=[None, "a", [nan], [inf, 0.0], [[1.0]]],
        R_c=POS(),
    )
    entry(
        "zhao2024.statistic",
        Zh.statistic,
        lambda: dict(dataset=_Dz(), **HLM_OK, cap=None),
        dataset=DATASET(),
        cap=[v for v in POS() if v is not None] + [0.5],
        ok={"cap": [2.0]},
        **HLM,
    )
    entry(
        "zhao2024.proposed_sensitivity",
        Zh.proposed_sensitivity,
        lambda: dict(w=W4, T=T4, kappa0=0.5, support=None),
        w=W_BAD,
        T=T_BAD,
        kappa0=HLM["kappa0"],
        support=HLM["support"][:-1],
        ok={"support": [0.2]},
    )
    entry(
        "zhao2024.ptr_distance",
        Zh.ptr_distance,
        lambda: dict(margins=[0.3, 0.2, -inf], w=W4, B=0.05, shift=0.0, kappa0=0.5, J=10),
        margins=[None, "a", [nan, 0.1, 0.1], [inf, 0.1, 0.1], [], [0.1, 0.1]],
        w=W_BAD[:4],
        B=POS(),
        shift=[-1.0, nan, inf, "a", None],
        kappa0=HLM["kappa0"],
        J=INT(1),
    )
    entry(
        "zhao2024.budget",
        Zh.budget,
        lambda: dict(epsilon=1.0, delta=1e-5, test_share=0.25),
        epsilon=EPS(),
        delta=DELTA_POS(),
        test_share=HLM["test_share"],
    )
    entry(
        "zhao2024.release_plan",
        Zh.release_plan,
        lambda: dict(dataset=_Dz(), **HLM_OK, R_c=1.0, cap=None),
        dataset=DATASET(),
        R_c=POS(),
        cap=[v for v in POS() if v is not None] + [0.5],
        **HLM,
    )
    entry(
        "zhao2024.mechanism",
        Zh.mechanism,
        lambda: dict(dataset=_Dz(), rng=rng(), size=None, **HLM_OK, R_c=1.0, cap=None),
        dataset=DATASET(),
        rng=RNG(),
        size=SIZE(),
        R_c=POS(),
        cap=[v for v in POS() if v is not None] + [0.5],
        ok={"size": [1, 3]},
        **HLM,
    )
    entry("zhao2024.claim", Zh.claim, lambda: dict(epsilon=1.0, delta=1e-5), epsilon=EPS(), delta=DELTA_POS())

    from userdp.reference import zhao2024_solver as Zs

    WT_BAD = dict(w=W_BAD, T=T_BAD)
    entry("zhao2024_solver.rounding_bound", Zs.rounding_bound, lambda: dict(w=W4, T=T4, d=1), d=INT(1), **WT_BAD)
    entry("zhao2024_solver.margin_gap", Zs.margin_gap, lambda: dict(T=T4, d=1), T=T_BAD[:-1] + [[]], d=INT(1))
    entry(
        "zhao2024_solver.feasible",
        Zs.feasible,
        lambda: dict(w=W4, T=T4, d=1, e=1e-6, kappa0=0.5),
        d=INT(1),
        e=POS(),
        kappa0=POS(),
        **WT_BAD,
    )
    entry(
        "zhao2024_solver.guarantee_steps",
        Zs.guarantee_steps,
        lambda: dict(w=W4, T=T4, d=2, e=1e-6, kappa0=0.5, rho=1e-3),
        d=INT(1),
        e=POS(),
        kappa0=POS(),
        rho=POS(),
        **WT_BAD,
    )

# ======================================================= Zhao et al. 2024, HLM calibrations
try:
    from userdp.reference import zhao2024_calibration as Zc
except ImportError:
    Zc = None
if Zc is not None and Zh is not None:

    def _Dzo():
        """_Dz with an item at 2: outside the support 1 (refused by the domain check)."""
        return UserDataset(np.array([0.1, 0.3, -0.2, 0.5, 0.4, 0.45, 2.0]), np.array([0, 0, 1, 2, 2, 2, 3]))

    _SUP = [v for v in POS() if v is not None]
    _GP = dict(epsilon=1.0, delta=1e-5, R=1.0, R_c=1.0, support=1.0, tau=2.0)
    _GPB = dict(epsilon=EPS(), delta=DELTA_POS(), R=POS(), R_c=POS(), support=POS(), tau=POS())
    _THETA = [v for v in POS() if v is not None]
    entry(
        "zhao2024_calibration.equalised_weights",
        Zc.equalised_weights,
        lambda: dict(m=[1, 4, 16], R=1.0, theta=2.0, tau=2.0, support=1.0),
        m=M_BAD,
        R=POS(),
        theta=POS(),
        tau=POS(),
        support=POS(),
    )
    entry(
        "zhao2024_calibration.global_constants",
        Zc.global_constants,
        lambda: dict(m=[1, 4, 16], R=1.0, theta=2.0, d=1, tau=2.0, support=1.0),
        m=M_BAD + [[2, 3]],
        R=POS(),
        theta=POS(),
        d=INT(1, hi=2**20),
        tau=POS(),
        support=POS(),
        alias={"m": ("m", "T_i", "threshold"), "R": ("R", "threshold", "T_i"), "tau": ("tau", "threshold", "T_i")},
        ok={"support": [0.5]},
    )
    entry(
        "zhao2024_calibration.global_plan",
        Zc.global_plan,
        lambda: dict(dataset=_Dz(), **_GP, theta=None),
        dataset=DATASET() + [_Dzo()],
        theta=_THETA,
        ok={"theta": [2.0]},
        **_GPB,
    )
    entry(
        "zhao2024_calibration.global_mechanism",
        Zc.global_mechanism,
        lambda: dict(dataset=_Dz(), rng=rng(), size=None, **_GP, theta=None),
        dataset=DATASET() + [_Dzo()],
        rng=RNG(),
        size=SIZE(),
        theta=_THETA,
        ok={"size": [1, 3]},
        **_GPB,
    )
    entry(
        "zhao2024_calibration.choose_theta",
        Zc.choose_theta,
        lambda: dict(m=[1, 4, 16], R=1.0, epsilon=1.0, delta=1e-5, d=1, tau=2.0, support=1.0, R_c=1.0, candidates=8),
        m=M_BAD + [[2, 3]],
        d=INT(1, hi=2**20),
        candidates=INT(2, hi=10_000),
        alias={"m": ("m", "theta"), "R": ("R", "theta"), "tau": ("tau", "theta")},
        **_GPB,
    )
    entry(
        "zhao2024_calibration.tune_ptr",
        Zc.tune_ptr,
        lambda: dict(m=[1, 4, 16], R=1.0, epsilon=1.0, delta=1e-5, d=1, tau=2.0, support=None, R_c=1.0, candidates=4),
        m=M_BAD,
        d=INT(1, hi=2**20),
        candidates=INT(2, hi=10_000),
        **{**_GPB, "support": _SUP},
        ok={"support": [1.0]},
    )
    entry(
        "zhao2024_calibration.calibrate",
        Zc.calibrate,
        lambda: dict(m=[1, 4, 16], R=1.0, epsilon=1.0, delta=1e-5, R_c=1.0, d=1, tau=2.0, support=None),
        m=M_BAD,
        d=INT(1, hi=2**20),
        **{**_GPB, "support": _SUP},
        ok={"support": [1.0]},
    )
    entry(
        "zhao2024_calibration.calibrated_mechanism",
        Zc.calibrated_mechanism,
        lambda: dict(
            dataset=_Dz(),
            rng=rng(),
            size=None,
            epsilon=1.0,
            delta=1e-5,
            R=1.0,
            R_c=1.0,
            tau=2.0,
            support=None,
            calibration=None,
        ),
        dataset=DATASET(),
        rng=RNG(),
        size=SIZE(),
        calibration=["ptr", 3, Zc.Calibration("nope")],
        ok={"size": [1, 3], "support": [1.0]},
        **{**_GPB, "support": _SUP},
    )
    entry(
        "zhao2024_calibration.claim", Zc.claim, lambda: dict(epsilon=1.0, delta=1e-5), epsilon=EPS(), delta=DELTA_POS()
    )


# =================================================== Zhao et al. 2024, WME baseline
try:
    from userdp.reference import zhao2024_wme as Wm
except ImportError:
    Wm = None
if Wm is not None:

    def _users(avgs, m=8):
        """One user per entry of ``avgs``, each holding m copies of it (local average = the entry)."""
        a = np.asarray(avgs, dtype=float)
        return UserDataset.from_arrays(np.repeat(a, m, axis=0), np.repeat(np.arange(a.shape[0]), m))

    def _D1():
        return scalar_ds()  # values in [0, 1], 3 users

    def _D3():
        return _users(np.array([[0.2, 0.1, -0.3], [0.0, 0.5, 0.1]]), m=2)

    _SIGNS4 = np.array([1.0, -1.0, 1.0, 1.0])
    _DS_BAD = DATASET() + [_users([0.5, 1.5])]  # out of the support |x| <= 1
    _BETA_BAD = [0, 0.0, 1.0, 1.5, -0.1, nan, inf, "x", None, True]
    _SPLIT_BAD = _BETA_BAD
    _SIGNS_BAD = [None, [1.0, 1.0], [1.0, 0.5, 1.0, 1.0], "x", [[1.0, 1.0, 1.0, 1.0]] * 2, [nan, 1, 1, 1]]
    _M_BAD = [0, -1, 1.5, True, None, "2", np.array([3, 0]), np.array([], dtype=int), np.array([1.5]), 2**31]
    _LOHI_BAD = ARRAY() + [[nan], [0.5, 0.6], [[[0.1]]]]
    _DS = {"dataset": DS_ALIAS}

    TABLE.extend(
        [
            Entry("zhao2024_wme.padded_dimension", Wm.padded_dimension, lambda: dict(d=3), {"d": INT(1, hi=Wm.MAX_D)}),
            Entry(
                "zhao2024_wme.fwht",
                Wm.fwht,
                lambda: dict(x=[1.0, 2.0]),
                {"x": ARRAY() + finite_bad(np.ones(2)) + [[1.0, 2.0, 3.0], 5.0, [1e60, 0.0], np.zeros((2, 0))]},
            ),
            Entry(
                "zhao2024_wme.random_signs",
                Wm.random_signs,
                lambda: dict(d=3, rng=rng(), size=None),
                {"d": INT(1, hi=Wm.MAX_D), "rng": RNG(), "size": SIZE()},
                ok={"size": [2]},
            ),
            Entry(
                "zhao2024_wme.rotate",
                Wm.rotate,
                lambda: dict(x=[0.1, 0.2, 0.3], signs=_SIGNS4),
                {"x": ARRAY() + [[0.5], [nan, 0, 0]], "signs": _SIGNS_BAD},
            ),
            Entry(
                "zhao2024_wme.unrotate",
                Wm.unrotate,
                lambda: dict(z=[0.1, 0.2, 0.3, 0.4], signs=_SIGNS4, d=3),
                {"z": ARRAY() + [[0.1, 0.2, 0.3], [inf, 0, 0, 0]], "signs": _SIGNS_BAD, "d": INT(2, hi=Wm.MAX_D)},
            ),
            Entry(
                "zhao2024_wme.wme_radius",
                Wm.wme_radius,
                lambda: dict(m=np.array([2, 3]), R=1.0, beta=0.05),
                {"m": _M_BAD, "R": POS(), "beta": _BETA_BAD},
                ok={"m": [4, [2, 3]]},
            ),
            Entry(
                "zhao2024_wme.wme_histogram",
                Wm.wme_histogram,
                lambda: dict(dataset=_D1(), R=1.0, beta=0.05, signs=None),
                {"dataset": _DS_BAD, "R": POS() + [0.5], "beta": _BETA_BAD, "signs": [np.ones(1), "x"]},
                alias=_DS,
            ),
            Entry(
                "zhao2024_wme.wme_localise",
                Wm.wme_localise,
                lambda: dict(
                    dataset=_D3(), epsilon=0.5, delta=5e-6, R=1.0, rng=rng(), size=None, beta=0.05, signs=_SIGNS4
                ),
                {
                    "dataset": _DS_BAD,
                    "epsilon": EPS(),
                    "delta": DELTA_POS(),
                    "R": POS(),
                    "rng": RNG(),
                    "size": SIZE(),
                    "beta": _BETA_BAD,
                    "signs": _SIGNS_BAD,
                },
                alias=_DS,
                ok={"size": [1, 3]},
            ),
            Entry(
                "zhao2024_wme.wme_statistic",
                Wm.wme_statistic,
                lambda: dict(dataset=_D1(), lo=[0.0], hi=[0.5], R=1.0, signs=None),
                {
                    "dataset": _DS_BAD,
                    "lo": _LOHI_BAD + [[0.6]],
                    "hi": _LOHI_BAD + [[-0.1]],
                    "R": POS(),
                    "signs": [np.ones(1), "x"],
                },
                alias={**_DS, "lo": ("lo",), "hi": ("hi",)},
            ),
            Entry(
                "zhao2024_wme.wme_budgets",
                Wm.wme_budgets,
                lambda: dict(epsilon=1.0, delta=1e-5, split=0.5),
                {"epsilon": EPS(), "delta": DELTA_POS(), "split": _SPLIT_BAD},
            ),
            Entry(
                "zhao2024_wme.wme_sensitivities",
                Wm.wme_sensitivities,
                lambda: dict(dataset=_D1(), R=1.0, beta=0.05),
                {"dataset": _DS_BAD, "R": POS(), "beta": _BETA_BAD},
                alias=_DS,
            ),
            Entry(
                "zhao2024_wme.wme_noise_scales",
                Wm.wme_noise_scales,
                lambda: dict(dataset=_D1(), epsilon=1.0, delta=1e-5, R=1.0, beta=0.05, split=0.5),
                {
                    "dataset": _DS_BAD,
                    "epsilon": EPS(),
                    "delta": DELTA_POS(),
                    "R": POS(),
                    "beta": _BETA_BAD,
                    "split": _SPLIT_BAD,
                },
                alias=_DS,
            ),
            Entry(
                "zhao2024_wme.wme_gdp_mu",
                Wm.wme_gdp_mu,
                lambda: dict(epsilon=1.0, delta=1e-5, split=0.5),
                {"epsilon": EPS(), "delta": DELTA_POS(), "split": _SPLIT_BAD},
            ),
            Entry(
                "zhao2024_wme.wme_claim",
                Wm.wme_claim,
                lambda: dict(epsilon=1.0, delta=1e-5, split=0.5),
                {"epsilon": EPS(), "delta": DELTA_POS(), "split": _SPLIT_BAD},
            ),
            Entry(
                "zhao2024_wme.wme_mechanism",
                Wm.wme_mechanism,
                lambda: dict(dataset=_D3(), epsilon=1.0, delta=1e-5, R=1.0, rng=rng(), size=None, beta=0.05, split=0.5),
                {
                    "dataset": _DS_BAD,
                    "epsilon": EPS(),
                    "delta": DELTA_POS(),
                    "R": POS(),
                    "rng": RNG(),
                    "size": SIZE(),
                    "beta": _BETA_BAD,
                    "split": _SPLIT_BAD,
                },
                alias=_DS,
                ok={"size": [1, 3]},
            ),
        ]
    )

# ==================================================================== userdp validate
from userdp.audits.validation import run as V  # noqa: E402

_CORRECT = "papers.amin2019.corpus:loop_exponential_difference"  # tests/ is on sys.path


def _NOT_NONE(values):
    """``values`` without None (the parameters where None means "chosen by the target's speed")."""
    return [v for v in values if v is not None]


def _report():
    return V.ValidationReport("amin2019.capped-sum", _CORRECT, {}, [], {})


entry(
    "validation.run.validate",
    V.validate,
    lambda: dict(
        algorithm="amin2019.capped-sum",
        target=_CORRECT,
        samples=2_000,
        audit_samples=1_000,
        examples=1,
        seed=0,
        quick=True,
        inputs=None,
        param_map=None,
        progress=None,
    ),
    algorithm=[None, 3, "amin2019.nope", "control.laplace"],
    target=[
        None,
        3,
        "nocolon",
        "no_such_module_x:f",
        "papers.amin2019.corpus:no_such_object",
        "papers.amin2019.corpus:ALGO",
    ],
    samples=_NOT_NONE(INT(2_000, hi=10_000_000)),
    audit_samples=_NOT_NONE(INT(1_000, hi=10_000_000)),
    examples=_NOT_NONE(INT(1, hi=100_000)),
    seed=[None, -1, 1.5, "0", True],
    progress=[3, "print"],
    quick=[None, 1, "yes"],
    inputs=["ignore", 3, "Clip"],
    param_map=[3, "T=cap"],
    ok={"samples": [None], "audit_samples": [None], "examples": [None]},
    alias={"target": ("TARGET", "module", "target")},
)
entry(
    "validation.run.parse_param_map",
    V.parse_param_map,
    lambda: dict(param_map=["T=cap"]),
    param_map=[3, "T=cap", [3], ["T"], ["=cap"], ["T=1x"], ["T=a", "T=b"], ["T=a", "epsilon=a"]],
    ok={"param_map": [None, []]},
)
entry(
    "validation.run.Refusal",
    V.Refusal,
    lambda: dict(case=V.Case(None, {"T": 1.0}, "c"), kind="data", requires="every value >= 0"),
    case=[None, 3, "c"],
    kind=[None, "refuse", 3],
    requires=[None, 3],
)


def _validation():
    return V.Validation(V.get_validation("amin2019.capped-sum"), V.load_target(_CORRECT), quick=True)


entry(
    "validation.run.Validation",
    V.Validation,
    lambda: dict(
        spec=V.get_validation("amin2019.capped-sum"),
        target=V.load_target(_CORRECT),
        samples=None,
        audit_samples=None,
        examples=None,
        seed=0,
        quick=False,
        inputs=None,
        progress=None,
    ),
    spec=[None, "amin2019.capped-sum", 3],
    target=[None, _CORRECT, 3],
    samples=_NOT_NONE(INT(2_000, hi=10_000_000)),
    audit_samples=_NOT_NONE(INT(1_000, hi=10_000_000)),
    examples=_NOT_NONE(INT(1, hi=100_000)),
    seed=[None, -1, 1.5, "0", True],
    quick=[None, 1],
    inputs=["ignore", 3],
    progress=[3, "print"],
    ok={"samples": [None]},
)
entry(
    "validation.run.Validation.report",
    lambda v, elapsed: v.report(elapsed),
    lambda: dict(v=_validation(), elapsed=1.0),
    elapsed=[None, "1", -1.0, nan, True],
)
entry(
    "validation.run.Validation.run_independence",
    lambda v, case: v.run_independence(case),
    lambda: dict(v=_validation(), case=None),
    case=[3, "case", {"T": 1.0}],
)
entry(
    "validation.run.ValidationSpec.all_cases",
    lambda spec, seed: spec.all_cases(seed),
    lambda: dict(spec=V.get_validation("amin2019.capped-sum"), seed=0),
    seed=[None, -1, 1.5, "0", True],
)
entry(
    "validation.run.ValidationSpec.reference_one",
    lambda spec, dataset, rng, params: spec.reference_one(dataset, rng, params),
    lambda: dict(
        spec=V.get_validation("amin2019.capped-sum"), dataset=scalar_ds(), rng=rng(), params={"T": 1.0, "epsilon": 1.0}
    ),
    dataset=[None, "data"],
    rng=RNG(),
    params=[None, 3, [("T", 1.0)], {"T": -1.0, "epsilon": 1.0}],
    alias={"dataset": DS_ALIAS, "params": ("params", "T")},
)
entry(
    "validation.run.load_target",
    V.load_target,
    lambda: dict(text=_CORRECT),
    text=[
        None,
        3,
        "nocolon",
        ":f",
        "no_such_module_x:f",
        "papers.amin2019.corpus:no_such_object",
        "papers.amin2019.corpus:ALGO",
    ],
    alias={"text": ("target", "module")},
)
entry(
    "validation.run.get_validation",
    V.get_validation,
    lambda: dict(algorithm="amin2019.capped-sum"),
    algorithm=[None, 3, "amin2019.nope", "control.laplace"],
)
entry(
    "validation.run.Case",
    V.Case,
    lambda: dict(dataset=None, params={"T": 1.0}, description="c", pair=None, origin="fixed", pair_share=1.0),
    params=[None, [("T", 1.0)], "T=1"],
    description=[None, 3],
    pair=[3, "pair", (1, 2)],
    origin=["random", None, 3],
    pair_share=[0.0, -1.0, 1.5, nan, "1", True],
)
entry(
    "validation.run.AuditDesign",
    V.AuditDesign,
    lambda: dict(pairs=[], params={}, claim=Cl.PureDP(1.0), description="d", output="continuous"),
    params=[None, [1]],
    claim=[None, 1.0, "pure"],
    description=[None, 3],
    output=["scalar", 3],
)
entry(
    "validation.run.ValidationSpec",
    V.ValidationSpec,
    lambda: dict(
        algorithm="x",
        reference=_lap,
        statistic=_lap,
        cases=list,
        designs=list,
        suite="m",
        stage_params={},
        refusals=list,
        flatten=None,
    ),
    algorithm=[None, 3],
    reference=[None, 3],
    statistic=[3, "stat"],
    cases=[None, [1]],
    designs=[None, ()],
    suite=[None, 3],
    stage_params=[None, [1]],
    refusals=[None, ()],
    flatten=[3, "f"],
    noise=["cauchy", 3],
    parameters=[["T"], "T"],
    reads=[None, ["values"]],
    max_samples=[10, 1.5e6, True],
    generate=[3, "g"],
    project=[3],
    claim=["pure"],
    stage_cases=["some"],
    noise_width=[3],
    ok={"statistic": [None]},
)
entry(
    "validation.run.ValidationSpec.independence_on",
    lambda spec, cases: spec.independence_on(cases),
    lambda: dict(spec=V.get_validation("amin2019.capped-sum"), cases=[V.Case(None, {"T": 1.0}, "c")]),
    cases=[None, 3, "cases", [], [1], {"a": 1}],
)
entry("validation.run.format_report", V.format_report, lambda: dict(r=_report()), r=[None, 3, "report", {}])
entry(
    "validation.run.format_finding",
    V.format_finding,
    lambda: dict(f=V.Finding("audit", "pass", "t", {}), indent="  "),
    f=[None, 3, {}],
    indent=[None, 3],
)


# ============================================================ reproduced claims' verdicts
from userdp.audits.engine import verdicts as Vd  # noqa: E402

_TEXT = [None, 3, "", "  "]
_REAL = [nan, inf, "1", None, True, [1.0]]
_ABOVE = [nan, inf, "0", True]
_BELOW = [nan, -inf, "1", True]
_ALPHA = [0.0, 0.5, 1.0, -0.1, nan, "0.1", None, True]
_NREP = [0, -1, 2.5, True, "3", 10**8]
_SAMPLES = [[], [nan, 1.0], "abc", None, [[1.0, 2.0]], [True, 1.0]]


def _cmp():
    return Vd.exact("v", 1.0, above=0.0)


entry(
    "verdicts.exact",
    Vd.exact,
    lambda: dict(what="v", value=1.0, above=0.0, below=None, strict=False),
    what=_TEXT,
    value=[nan, "1", None, True, [1.0]],
    above=_ABOVE,
    below=_BELOW + [-1.0],
    strict=["yes", 1, None],
    alias={"above": ("above", "below"), "below": ("above", "below")},
)
entry(
    "verdicts.mean",
    Vd.mean,
    lambda: dict(what="m", samples=[1.0, 2.0, 3.0], above=0.0, below=None),
    what=_TEXT,
    samples=_SAMPLES,
    above=_ABOVE,
    below=_BELOW + [-1.0],
    alias={"below": ("above", "below")},
)
entry(
    "verdicts.normal",
    Vd.normal,
    lambda: dict(what="n", estimate=1.0, se=0.1, above=0.0, below=None, n=None),
    what=_TEXT,
    estimate=_REAL,
    se=[-1.0, nan, inf, "x", None],
    above=_ABOVE,
    below=_BELOW,
    n=_NREP,
)
entry(
    "verdicts.ratio",
    Vd.ratio,
    lambda: dict(what="r", num=2.0, num_se=0.1, den=1.0, den_se=0.1, above=1.0, below=None, n=None),
    what=_TEXT,
    num=[0.0, -1.0] + _REAL,
    num_se=[-1.0, nan, inf, "x"],
    den=[0.0, -1.0] + _REAL,
    den_se=[-1.0, nan, inf, None],
    above=_ABOVE,
    below=_BELOW,
    n=_NREP,
)
entry(
    "verdicts.max_normal",
    Vd.max_normal,
    lambda: dict(what="x", estimates=[1.0, 2.0], ses=[0.1, 0.1], above=0.0, below=None),
    what=_TEXT,
    estimates=[[], [nan, 1.0], "x", None, [[1.0, 2.0]]],
    ses=[[-1.0, 0.1], [0.1], [nan, 0.1], "x", None],
    above=_ABOVE,
    below=_BELOW,
)
entry(
    "verdicts.median",
    Vd.median,
    lambda: dict(what="m", samples=[1.0, 2.0, 3.0], above=0.0, below=None),
    what=_TEXT,
    samples=_SAMPLES,
    above=_ABOVE,
    below=_BELOW,
)
entry(
    "verdicts.refutable",
    Vd.refutable,
    lambda: dict(what="eps", lower_bound=lambda a: 0.5, below=1.0),
    what=_TEXT,
    lower_bound=[None, 3, "f"],
    below=[None, nan, -inf, "1", True],
)
entry(
    "verdicts.all_of", lambda parts: Vd.all_of(parts), lambda: dict(parts=[_cmp()]), parts=[None, 3, [], [1, 2], "ab"]
)
entry(
    "verdicts.any_of", lambda parts: Vd.any_of(parts), lambda: dict(parts=[_cmp()]), parts=[None, 3, [], [1, 2], "ab"]
)
entry(
    "verdicts.claim",
    Vd.claim,
    lambda: dict(statement="s", comparisons=[_cmp()], combine="all", evidence=""),
    statement=_TEXT,
    comparisons=[None, [], [1], "x", 3],
    combine=["both", None, 1],
    evidence=[None, 3],
)
entry(
    "verdicts.decide",
    Vd.decide,
    lambda: dict(claims=[Vd.claim("s", _cmp())], error=1e-4),
    claims=[None, 3, "x", [1], [{"statement": "s"}]],
    error=[0.0, 1.0, -0.1, nan, "0.1", None, True],
)
entry(
    "verdicts.check_claims",
    Vd.check_claims,
    lambda: dict(claims=Vd.decide([Vd.claim("s", _cmp())]), name="demo"),
    claims=[None, {}, [{}], [{"verdict": "maybe", "intervals": []}], [{"statement": "s", "holds": True}]],
    name=_TEXT,
)
entry(
    "verdicts.t_power",
    Vd.t_power,
    lambda: dict(effect_over_sd=1.0, n=10, alpha=0.01),
    effect_over_sd=[nan, inf, "1", None, True],
    n=[1, 0, 2.5, True, "3", 10**8],
    alpha=_ALPHA,
)
entry(
    "verdicts.replications_for_power",
    Vd.replications_for_power,
    lambda: dict(effect_over_sd=1.0, alpha=0.01, power=0.9, n_max=100_000),
    effect_over_sd=[0.0, -1.0, nan, inf, "1", None],
    alpha=_ALPHA,
    power=[0.0, 1.0, nan, "x", None],
    n_max=[1, 0, 2.5, True, 10**8],
)
entry("verdicts.median_bounds_index", Vd.median_bounds_index, lambda: dict(n=20, alpha=0.025), n=_NREP, alpha=_ALPHA)
entry(
    "verdicts.median_power",
    Vd.median_power,
    lambda: dict(p_below=0.3, n=101, alpha=0.01),
    p_below=[-0.1, 1.1, nan, "x", None],
    n=_NREP,
    alpha=_ALPHA,
)
entry(
    "verdicts.median_replications",
    Vd.median_replications,
    lambda: dict(p_below=0.3, alpha=0.01, power=0.9, n_max=200_000),
    p_below=[0.5, 0.7, -0.1, nan, "x", None],
    alpha=_ALPHA,
    power=[0.0, 1.0, nan, None],
    n_max=[0, 2.5, True, 10**8],
)


# ==================================================================== the process protocol and test vectors
import os as _os  # noqa: E402
import pathlib as _pathlib  # noqa: E402
import sys as _sys  # noqa: E402
import tempfile as _tempfile  # noqa: E402

from userdp.audits.validation import protocol as Pr  # noqa: E402
from userdp.audits.validation import vector_cases as VC  # noqa: E402
from userdp.audits.validation import vectors as Vec  # noqa: E402

_PROGRAM = [_sys.executable, "-S", str(_pathlib.Path(__file__).parent / "audits" / "protocol_program.py"), "good"]
_VEC_DIR = _pathlib.Path(_tempfile.gettempdir()) / "userdp-bad-input-vectors"
_DS_OPTIONAL = [np.array([0.5]), [0.5], "data", {"values": [0.5]}]  # a dataset or None


def _program():
    return Pr.ProcessTarget(_PROGRAM)


def _vec_dir() -> str:
    _VEC_DIR.mkdir(exist_ok=True)
    return str(_VEC_DIR)


def _vec_file() -> str:
    return Vec.export(["amin2019.capped-sum"], _vec_dir())[0]


def _bad_vec_file() -> str:
    p = _pathlib.Path(_vec_dir()) / "not-vectors.json"
    p.write_text('{"schema": "userdp.audit/1"}')
    return str(p)


entry(
    "protocol.ProcessTarget",
    Pr.ProcessTarget,
    lambda: dict(
        command=_PROGRAM, algorithm=None, timeout=5.0, start_timeout=5.0, batch=100, cwd=None, env=None, transcript=None
    ),
    command=[None, "", "   ", [], [1, 2], 3],
    algorithm=[3, ["a"]],
    timeout=[0, -1.0, math.nan, math.inf, "5", True],
    start_timeout=[0, -1.0, math.nan, 1e9],
    batch=INT(1, hi=Pr.MAX_SIZE),
    cwd=[3, "/no/such/dir/userdp"],
    env=[3, "PATH=/bin"],
    transcript=[3, ["log"]],
)
entry(
    "protocol.ProcessTarget.mechanism",
    lambda target, dataset, rng, size, T, epsilon: target.mechanism(dataset, rng, size, T=T, epsilon=epsilon),
    lambda: dict(target=_program(), dataset=scalar_ds(), rng=rng(), size=3, T=1.0, epsilon=1.0),
    dataset=DATASET(),
    rng=RNG(),
    size=SIZE(),
    ok={"size": [None, 1]},
)
entry(
    "protocol.ProcessTarget.stage_values",
    lambda target, dataset, params, stages: target.stage_values(dataset, params, stages),
    lambda: dict(target=_program(), dataset=scalar_ds(), params={"T": 1.0}, stages=["sensitivity"]),
    dataset=_DS_OPTIONAL,
    params=[None, [1], "T=1", {"T": len}],
    stages=[None, "statistic", [], [3], [""], ["nope"]],
    ok={"dataset": [None]},
    alias={"stages": ("stage",)},
)
entry(
    "protocol.ProcessTarget.stage",
    lambda target, name: target.stage(name),
    lambda: dict(target=_program(), name="statistic"),
    name=[None, 3, ""],
)
entry(
    "protocol.ProcessTarget.adapter",
    lambda target, adapter_type, name: target.adapter(adapter_type, name),
    lambda: dict(target=_program(), adapter_type=None, name=None),
    adapter_type=[3, int, "Adapter"],
    name=[3, ""],
    ok={"name": ["mine"]},
)
entry(
    "protocol.check_message",
    Pr.check_message,
    lambda: dict(message={"values": [0.5], "user_ids": [0]}, definition="dataset"),
    message=[None, {"values": [0.5]}, {"values": [0.5], "user_ids": ["a"]}, {"values": [True], "user_ids": [0]}],
    definition=[None, 3, "nope"],
    alias={"message": ("schema",)},
)
entry(
    "protocol.encode_dataset",
    Pr.encode_dataset,
    lambda: dict(dataset=scalar_ds()),
    dataset=DATASET(),
    ok={"dataset": [EmptyDataset()]},
)
entry(
    "protocol.decode_dataset",
    Pr.decode_dataset,
    lambda: dict(obj={"values": [0.5, 1.0], "user_ids": [0, 1]}),
    obj=[
        None,
        [0.5],
        {"values": [0.5]},
        {"values": [0.5], "user_ids": [-1]},
        {"values": [[0.5], [1.0, 2.0]], "user_ids": [0, 1]},
    ],
    alias={"obj": ("schema", "values", "user_ids")},
)
entry(
    "protocol.encode_params",
    Pr.encode_params,
    lambda: dict(params={"T": 1.0, "C": np.eye(2)}),
    params=[None, [("T", 1.0)], {"f": len}, {3: 1.0}, {"a": np.array(["x"])}],
)
entry(
    "protocol.decode_value",
    Pr.decode_value,
    lambda: dict(value=[[1.0, 2.0], [3.0]]),
    value=[None, "x", True, {"a": "x"}, [1, "x"]],
)
entry(
    "vectors.build",
    Vec.build,
    lambda: dict(algorithm="amin2019.capped-sum"),
    algorithm=[None, 3, "amin2019.nope", "control.laplace"],
)
entry(
    "vectors.export",
    Vec.export,
    lambda: dict(algorithms=["amin2019.capped-sum"], out_dir=_vec_dir()),
    algorithms=[3, "amin2019.capped-sum", ["nope"], [3]],
    out_dir=[None, 3, "/no/such/dir/userdp"],
    ok={"algorithms": [None, []]},
    alias={"algorithms": ("algorithm",)},
)
entry(
    "vectors.load",
    Vec.load,
    lambda: dict(path=_vec_file()),
    path=[None, 3, "/no/such/file.json", _os.devnull],
    alias={"path": ("path",)},
)
entry(
    "vectors.check",
    Vec.check,
    lambda: dict(
        document=Vec.build("amin2019.capped-sum"), impl=VC.DESIGNS["amin2019.capped-sum"].reference(), name=None
    ),
    document=[None, {}, {"schema": "userdp.audit/1"}, "vectors"],
    impl=[None, 3, "adapter"],
    name=[3, ["x"]],
)
entry(
    "vectors.index_markdown",
    Vec.index_markdown,
    lambda: dict(documents=[Vec.build("epasto2020.wa")]),
    documents=[None, 3, "doc", [{}], {"schema": Vec.SCHEMA}],
)
entry(
    "vectors.format_check",
    Vec.format_check,
    lambda: dict(r=Vec.check(Vec.build("zhao2024.wme"), VC.DESIGNS["zhao2024.wme"].reference())),
    r=[None, 3, {}],
)
entry(
    "vector_cases.VectorCase",
    VC.VectorCase,
    lambda: dict(dataset=scalar_ds(), params={"T": 1.0}, flags=("per-record-bound",), comment="c", result="valid"),
    params=[None, [1]],
    flags=["per-record-bound", [3], ("off-by-two",)],
    comment=[None, ""],
    result=["acceptable", None],
)
