"""White-box search spaces of Acharya et al. 2024's entries (the reproduction
``whitebox-sensitivity``, ``audits/papers/whitebox.py``; the method in ``audits/engine/whitebox.py``):

- acharya2024.pdp-op (d = 1), -pdp-op-d2 and -nonpersonalized: per record (the audited
  records: most stringent, middle, most lenient), record i's (x_i, y_i) and (x'_i, y'_i)
  searched over [0, 1]^d x [-1, 1] on both sides; the ratio is to that record's own
  Delta_i (Theorem A.4), since the claim is eps_i-DP for record i.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import acharya2024 as AC
from userdp.audits.engine.registry import get
from userdp.audits.engine.whitebox import Space
from userdp.audits.papers.acharya2024 import audits as RAC
from userdp.audits.papers.whitebox import Row, register_row

__all__ = ["ACHARYA_ENTRIES", "acharya_closed_forms", "acharya_record_space"]

ACHARYA_ENTRIES = ("acharya2024.pdp-op", "acharya2024.pdp-op-d2", "acharya2024.nonpersonalized")


def acharya_record_space(name: str, record: int):
    """(noise model, Delta_i, [Space]) for record i of an Acharya entry: record i's (x, y)
    on each side searched over [0, 1]^d x [-1, 1], the rest of the audit dataset fixed."""
    entry = get(name)
    setup, lam = entry.setup(), entry.params["Lambda"]
    d = setup.pairs[0].first.values.shape[1]
    D = RAC.audit_dataset(d)  # every record at x = 0.5 (the pairs move one)
    profile = D.epsilons if name != "acharya2024.nonpersonalized" else AC.nonpersonalized_epsilons(D)
    delta_i = float(AC.sensitivity(D.with_fields(epsilons=profile), lam)[record])

    def build(theta):
        x1, y1, x2, y2 = theta[:d], theta[d], theta[d + 1 : 2 * d + 1], theta[2 * d + 1]
        return AC.RELATION.neighbour(D, record, x1, y1), AC.RELATION.neighbour(D, record, x2, y2)

    box = ((0.0, 1.0),) * d + ((-1.0, 1.0),)
    space = Space(
        f"record {record}: (x, y) vs (x', y') in [0, 1]^{d} x [-1, 1]",
        box * 2,
        build,
        starts=((0.5,) * d + (-0.5,) + (0.5,) * d + (0.5,),),
        describe=lambda th: (
            f"record {record}: x = {np.round(th[:d], 3).tolist()}, y = {th[d]:.3f} vs "
            f"x' = {np.round(th[d + 1 : 2 * d + 1], 3).tolist()}, y' = {th[2 * d + 1]:.3f}"
        ),
    )
    return setup.noise, delta_i, [space]


def acharya_closed_forms() -> dict:
    """d = 1, lambda = 100, the other records at x = 0.5: record i moved at x = 1 from y = -1
    to +1 shifts theta_bar = sum w x y / (sum w x^2 + lambda) by 2 w_i / (S + lambda),
    S = sum_{j != i} w_j / 4 + w_i, against Delta_i = 2 w_i (B + 1) / lambda, B = 1 / lambda:
    ratio lambda / ((S + lambda)(1 + 1/lambda)). (That the corner is the worst case is what
    the search checks.)"""
    lam = 100.0
    out = {}
    for name, w in (
        ("acharya2024.pdp-op", np.asarray(RAC.PROFILE) / sum(RAC.PROFILE)),
        ("acharya2024.nonpersonalized", np.full(len(RAC.PROFILE), 1 / len(RAC.PROFILE))),
    ):
        for i in (0, 4, 7):
            S = (w.sum() - w[i]) / 4 + w[i]
            out[f"{name} (record {i})"] = lam / ((S + lam) * (1 + 1 / lam))
    return out


for _k, (_name, _record) in enumerate((n, r) for n in ACHARYA_ENTRIES for r in (0, 4, 7)):  # the audited records
    _label = f"{_name} (record {_record})"
    register_row(
        Row(
            _label,
            order=8 + _k,
            seed=_record,
            build=lambda n=_name, r=_record: acharya_record_space(n, r),
            closed_form=(lambda label=_label: acharya_closed_forms()[label])
            if _name != "acharya2024.pdp-op-d2"
            else None,
        )
    )
