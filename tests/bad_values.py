"""What every row of the bad-input table uses (Wycheproof's invalid vectors): the bad values by
kind of parameter, tiny valid data, the ``Entry`` record and its builder ``entry_adder``.

The rows: ``tests/bad_input_table.py`` (the generic modules, and the table ``TABLE`` that collects
every paper's rows) and ``tests/papers/<paper>/bad_input.py`` (each paper's modules).
``tests/test_bad_input.py`` runs them.

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

from userdp.reference.data import UserDataset

__all__ = [
    "ARRAY",
    "DATASET",
    "DELTA",
    "DELTA_POS",
    "DS_ALIAS",
    "EPS",
    "ERM_BAD_DS",
    "Entry",
    "INT",
    "LOSS",
    "MAX_INT",
    "NONNEG",
    "POS",
    "RNG",
    "SIZE",
    "THETA",
    "entry_adder",
    "erm_ds",
    "finite_bad",
    "inf",
    "nan",
    "rng",
    "scalar_ds",
    "with_labels",
    "with_values",
]

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


def with_values(D, i, v):
    x = D.values.copy()
    x.flat[i] = v
    return D.with_fields(values=x)


def with_labels(D, i, v):
    y = D.labels.copy()
    y[i] = v
    return D.with_fields(labels=y)


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


def entry_adder(table: list[Entry]) -> Callable[..., None]:
    """The row builder of one table: ``entry(name, call, valid, ok=, alias=, legacy=, **bad)``
    appends an ``Entry`` to ``table``; a dataset parameter may be named by any of ``DS_ALIAS``."""

    def entry(_name, _call, _valid, ok=None, alias=None, legacy=False, **bad):
        al = {p: DS_ALIAS for p in bad if p in ("dataset", "D", "a", "b", "dataset_or_counts")}
        al.update(alias or {})
        table.append(Entry(_name, _call, _valid, bad, ok or {}, al, legacy))

    return entry


# ------------------------------------------------- domain values shared by several modules' rows
# a vector-valued dataset (the scalar algorithms refuse it: amin2019, epasto2020)
_vec = lambda: UserDataset(np.ones((3, 2)), [0, 1, 1])  # noqa: E731

# reference/erm.py's data (the rows of erm, amin2019_erm and epasto2020_erm)
_far = lambda: with_values(erm_ds(), 0, 3.0)  # ||x_0|| > R = 1  # noqa: E731
_half = lambda: with_labels(erm_ds(), 0, 0.5)  # a logistic label not in {-1, +1}  # noqa: E731
_nolab = lambda: erm_ds().with_fields(labels=None)  # noqa: E731
ERM_BAD_DS = DATASET() + [_far(), _half(), _nolab()]
LOSS = ["hinge", None, 1, ["ridge"]]
_X, _y = erm_ds().values, erm_ds().labels
THETA = [[nan, 0.0], [0.0], ["a", "b"], None, [[[0.0, 0.0]]], [1j, 0]]
