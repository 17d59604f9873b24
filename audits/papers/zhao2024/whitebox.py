"""White-box search space of Zhao et al. 2024's HLM (the reproduction ``whitebox-sensitivity``,
``audits/papers/whitebox.py``; the method in ``audits/engine/whitebox.py``):

- zhao2024.hlm (d = 1): the ratio of ||Clip mu0(D) - Clip mu0(D')|| to the calibrated B, user 0's
  item searched on both sides in [-200, 200] R, on the registry's pair dataset (1,060 of 2,000
  one-item users in a cluster, the rest far on both sides) and on the imbalanced dataset
  (``zhao2024.audit_dataset``, its largest-w_k T_k user). Closed form on the first: the move
  2 w T / K over B, K the cluster's weight (0.943; audits/papers/zhao2024/audits.py). B bounds the move
  only where PTR passes (gamma >= 1), which holds on every pair of both spaces.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import zhao2024 as Z
from userdp.audits.engine.ceiling import NoiseModel
from userdp.audits.engine.whitebox import Space
from userdp.audits.papers.whitebox import Row, register_row
from userdp.audits.papers.zhao2024 import audits as RZ

__all__ = ["hlm_spaces"]


def hlm_spaces():
    """(noise, 1, spaces) of the HLM row (module docstring): the statistic is Clip(mu0) / B, so the
    ratio to sensitivity 1 is the ratio to each dataset's own B."""
    p = RZ._params()

    def scaled(D):  # in units of the dataset's own B (public: it reads the counts)
        q = Z.release_plan(D, **p)
        return q.clipped / q.B

    noise = NoiseModel("gaussian", scaled, lambda D: (lambda q: q.sigma_pass / q.B)(Z.release_plan(D, **p)))
    spaces = []
    for label, D, k in (
        ("the registry's cluster dataset", RZ.worst_case_pair(1).first, 0),
        ("the imbalanced dataset", RZ.audit_dataset(1), None),
    ):
        plan = Z.release_plan(D, **p)
        k = int(np.argmax(plan.w * plan.T)) if k is None else k
        rows = D.user_ids == D.users[k]

        def build(theta, D=D, rows=rows):
            a, b = np.array(D.values), np.array(D.values)
            a[rows], b[rows] = theta[0], theta[1]
            return D.with_fields(values=a), D.with_fields(values=b)

        spaces.append(
            Space(
                f"{label}: user {k}'s items at a vs b, in [-200, 200] R",
                ((-200.0, 200.0),) * 2,
                build,
                starts=((-100.0, 100.0),),
                describe=lambda th, k=k, label=label: f"{label}: user {k}'s items at {th[0]:.3g} vs {th[1]:.3g}",
            )
        )
    return noise, 1.0, spaces


register_row(
    Row(
        "zhao2024.hlm (ratio to B)",
        order=17,
        seed=8,
        build=hlm_spaces,
        closed_form=lambda: RZ.realised_share(RZ.worst_case_pair(1)),
        fewer_starts=2,
    )
)
