"""userdp.audits: confident empirical lower bounds on privacy loss (docs/design.md §6).

``audit(mechanism, pairs, claim, samples=..., seed=...)`` returns an ``AuditResult``;
``userdp.audits.engine.registry`` lists the mechanisms the CLI (``userdp audit``) knows.
This package depends on numpy, scipy, statsmodels and ``userdp.reference.claims`` only.
"""

from userdp.audits.engine.harness import (
    NO_VIOLATION,
    VIOLATION,
    AuditResult,
    IncompleteAudit,
    PairFailure,
    PairResult,
    Witness,
    audit,
)
from userdp.audits.engine.thresholds import StatisticThreshold, Threshold
from userdp.audits.engine.value_sets import ValueSet
from userdp.audits.engine.sampling import MechanismError

__all__ = [
    "audit",
    "AuditResult",
    "Witness",
    "MechanismError",
    "Threshold",
    "StatisticThreshold",
    "ValueSet",
    "VIOLATION",
    "NO_VIOLATION",
    "PairResult",
    "PairFailure",
    "IncompleteAudit",
]
