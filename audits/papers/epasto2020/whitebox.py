"""White-box search spaces of Epasto et al. 2020's entries (the reproduction
``whitebox-sensitivity``, ``audits/papers/whitebox.py``; the method in ``audits/engine/whitebox.py``):

- epasto2020.wa / sample-limiting: replace all values of the heaviest or the lightest
  user, each record's value in [0, B] on both sides. Closed form (Lemma 1): values 0 vs B
  of a user with the largest weight sum: ratio 1 (a heavy user: Lemma 3 equalises them).
- epasto2020.gwa / sample-limited-ols: replace the labels of the heaviest user of each
  feature group, each in [0, B] on both sides. Closed form: on the orthogonal data every
  record moves one coordinate, so labels 0 vs B reach B sum_{j,i in S_l} |c_ji| = Delta_1: 1.

- epasto2020.weighted-erm (noisy GD, Gaussian noise): the noise-free statistic of one step
  is the weighted gradient sum at the current iterate theta, which the previous releases
  make public, so theta is searched too (||theta|| <= radius), with the heaviest user's
  records given one feature per side (identical records align their gradient changes,
  the sum's worst case) and labels +1 vs -1 or +1 vs +1. The ratio is to the declared
  Delta_2 = 2 L max_l sum_{i in S_l} c_i that the noise multiplier is applied to.
"""

from __future__ import annotations

import math

import numpy as np

from userdp.reference import epasto2020 as EW
from userdp.reference import epasto2020_erm as EE
from userdp.audits.engine.ceiling import NoiseModel
from userdp.audits.engine.registry import get
from userdp.audits.engine.whitebox import Space
from userdp.audits.papers.epasto2020 import audits_erm as REE
from userdp.audits.papers.epasto2020 import audits_gwa as RG
from userdp.audits.papers.whitebox import Row, disc, polar, register_row, register_spaces

__all__ = ["gwa_spaces", "replace_user_spaces", "wa_spaces", "weighted_erm_step"]


def _compact(x) -> str:
    """A user's values for the report: the list when short, else "k x v" runs by value."""
    x = np.round(np.asarray(x, dtype=float), 3)
    if x.size <= 6:
        return str(x.tolist())
    vals, counts = np.unique(x, return_counts=True)
    return "{" + ", ".join(f"{c} x {v:g}" for v, c in zip(vals, counts)) + "}"


def replace_user_spaces(D, users, field: str, B: float, start: tuple[float, float]) -> list[Space]:
    """For each user u: u's records' ``field`` ("values" or "labels") set from theta on both
    sides, each in [0, B]; theta = (the s values in D, the s values in D')."""
    spaces = []
    for u in users:
        idx = D.records_of(u)
        s = idx.size

        def build(theta, idx=idx, s=s):
            f1, f2 = getattr(D, field).copy(), getattr(D, field).copy()
            f1[idx], f2[idx] = theta[:s], theta[s:]
            return D.with_fields(**{field: f1}), D.with_fields(**{field: f2})

        spaces.append(
            Space(
                f"replace user {u}'s {s} {field}, each in [0, B]",
                ((0.0, B),) * (2 * s),
                build,
                starts=((start[0] * B,) * s + (start[1] * B,) * s,),
                describe=lambda th, u=u, s=s: (
                    f"user {u} ({s} records): {field} {_compact(th[:s])} vs {_compact(th[s:])}"
                ),
            )
        )
    return spaces


def wa_spaces(setup, params):
    """Replace all values of the heaviest or the lightest user of the entry's dataset, each in [0, B]."""
    D = setup.pairs[0].first
    users = dict.fromkeys([int(D.users[np.argmax(D.counts)]), int(D.users[np.argmin(D.counts)])])
    return replace_user_spaces(D, users, "values", params["B"], (0.25, 0.75))


def gwa_spaces(setup, params):
    """Replace the labels of the heaviest user of each feature group of the orthogonal data, each in [0, B]."""
    D = RG.orthogonal_dataset()
    n1 = len(RG.E1_SIZES)
    users = (int(np.argmax(D.counts[:n1])), n1 + int(np.argmax(D.counts[n1:])))  # heaviest of each group
    return replace_user_spaces(D, users, "labels", params["B"], (0.4, 0.6))


def weighted_erm_step(params):
    """(noise model, Delta_2, spaces) of one noisy-GD step of epasto2020.weighted-erm; the
    statistic's input is (theta, dataset): theta, the public iterate, is searched too."""
    D = REE.epasto_default_dataset()
    eps, delta, T = params["epsilon"], params["delta"], params["T"]
    c, _ = EW.optimal_weights(D, eps, 1.0)
    noise = NoiseModel(
        "gaussian", lambda td: EE.statistic(td[1], td[0], c), EE.noise_scale(D, c, epsilon=eps, delta=delta, T=T)
    )
    u = int(D.users[np.argmax(D.counts)])
    idx = D.records_of(u)
    spaces = []
    for label2 in (-1.0, 1.0):

        def build(theta, label2=label2):
            t, v, v2 = disc(theta)  # iterate, the user's feature in D, in D'
            X1, X2 = D.values.copy(), D.values.copy()
            y1, y2 = D.labels.copy(), D.labels.copy()
            X1[idx], X2[idx], y1[idx], y2[idx] = v, v2, 1.0, label2
            return (t, D.with_fields(values=X1, labels=y1)), (t, D.with_fields(values=X2, labels=y2))

        spaces.append(
            Space(
                f"iterate theta and user {u}'s {idx.size} records: y = +1 vs {label2:+.0f}",
                polar(3),
                build,
                starts=((1.0, 0.0, 1.0, math.pi, 1.0, 0.0),),
                describe=lambda th, label2=label2: (
                    f"theta = {np.round(disc(th)[0], 3).tolist()}, user {u}'s "
                    f"records at {np.round(disc(th)[1], 3).tolist()} (y = +1) vs "
                    f"{np.round(disc(th)[2], 3).tolist()} (y = {label2:+.0f})"
                ),
            )
        )
    return noise, EE.sensitivity(D, c), spaces


for _order, _name in enumerate(("epasto2020.wa", "epasto2020.sample-limiting"), start=1):
    register_spaces(_name, wa_spaces)
    register_row(Row(_name, order=_order, seed=_order, entry=_name, closed_form=lambda: 1.0))
for _order, _name in enumerate(("epasto2020.gwa", "epasto2020.sample-limited-ols"), start=3):
    register_spaces(_name, gwa_spaces)
    register_row(Row(_name, order=_order, seed=_order, entry=_name, closed_form=lambda: 1.0))
register_row(
    Row(
        "epasto2020.weighted-erm (one GD step)",
        order=7,
        seed=7,
        build=lambda: weighted_erm_step(dict(get("epasto2020.weighted-erm").params)),
    )
)
