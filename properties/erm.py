"""Shared pieces of the two ERM property suites (``properties/amin2019_erm.py``,
``properties/epasto2020_erm.py``): the record and dataset strategies both draw from.

A dataset here is a ``UserDataset`` with features ``values`` (n, d), ||x_i||_2 <= R, and
``labels`` in {-1, +1} (logistic) or [-Y, Y] (ridge); the records of each user are S_l. The
solver both reference algorithms share is ``reference/erm.py``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from userdp.reference.data import UserDataset

from .strategies import user_size_profiles

__all__ = ["erm_datasets"]

_finite = dict(allow_nan=False, allow_infinity=False)


# ------------------------------------------------------------------------------ strategies
def _record_points(draw, k: int, d: int, R: float, loss: str):
    """k features with ||x|| <= R and k admissible labels.

    Each feature is either a corner +-R e_j (the extreme points where sensitivities are
    realised: aligned, maximal-norm records) or uniform in [-R/sqrt d, R/sqrt d]^d.
    """
    a = R / np.sqrt(d) * (1 - 1e-12)
    corners = [s * R * np.eye(d)[j] for j in range(d) for s in (1.0, -1.0)]
    rows = []
    for _ in range(k):
        if draw(st.booleans()):
            rows.append(corners[draw(st.integers(0, len(corners) - 1))])
        else:
            rows.append(np.array(draw(st.lists(st.floats(-a, a, **_finite), min_size=d, max_size=d))))
    x = np.array(rows).reshape(k, d)
    if loss == "logistic":
        y = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=k, max_size=k)))
    else:
        y = np.array(
            draw(
                st.lists(
                    st.one_of(st.sampled_from([-1.0, 1.0]), st.floats(-1.0, 1.0, **_finite)), min_size=k, max_size=k
                )
            )
        )
    return x, y


@st.composite
def erm_datasets(
    draw, loss: str = "logistic", d: int = 2, R: float = 1.0, max_users: int = 6, max_records: int = 7
) -> UserDataset:
    """Imbalanced users (1..max_records records each) with ||x_i|| <= R and labels in the loss's domain.

    Half of the time the dataset is "aligned": every x_i = R e_1 and each user has one
    label, the configuration where a user's records all push theta the same way (this is
    where the sensitivity bounds are nearly attained, see audits/papers/amin2019/audits_erm.py).
    """
    sizes = draw(user_size_profiles(1, max_users, max_records)).tolist()  # uniform, Zipf or heavy + singletons
    n = sum(sizes)
    if draw(st.booleans()):
        x = np.tile(R * np.eye(d)[0], (n, 1))
        y = np.repeat(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=len(sizes), max_size=len(sizes))), sizes)
    else:
        x, y = _record_points(draw, n, d, R, loss)
    return UserDataset(x, np.repeat(np.arange(len(sizes)), sizes), labels=y)
