"""An audit's plan and its counted rows (harness.py): ``AuditPlan`` holds the checked arguments
``harness._run`` reads; ``CountedSet`` and ``CountedGDPSet`` are the candidate sets of the
confirmed pairs once counted on the counting share, the rows the verdict and the result are
built from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = ["AuditPlan", "CountedSet", "CountedGDPSet"]


@dataclass(frozen=True)
class AuditPlan:
    """The checked arguments of one audit (``audit``), as ``_run`` reads them."""

    mechanism: object
    pairs: list  # sampling.AuditPair, from normalize_pairs
    claim: object
    samples: int  # outputs per side of each confirmed pair
    confidence: float
    root: np.random.SeedSequence  # every stream is spawned from it
    selection_fraction: float
    output: str | None
    confirm_pairs: int
    sets_per_pair: int
    pilot_samples: int | None
    noise_family: str | None
    progress: object  # None or a callable taking one message
    workers: int
    scheduler: str | None
    noise_model: object = None  # ceiling.NoiseModel: its Neyman-Pearson sets are tested too (model_sets.py)

    @property
    def n_select(self) -> int:
        """Outputs per side in the selection share."""
        return max(1, int(round(self.selection_fraction * self.samples)))

    @property
    def n_count(self) -> int:
        """Outputs per side in the counting share."""
        return self.samples - self.n_select

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence


class CountedSet(NamedTuple):
    """One candidate set of a confirmed pair, counted on the counting share (the eps side)."""

    pair: object
    candidate: object  # thresholds.Candidate
    k1: int  # count on the side the set favours
    k2: int  # count on the other side
    eps_lb: float  # max(eps lower bound, 0), at its level
    p_value: float  # exact p-value of H0: p <= e^eps q + delta
    eps: float  # the eps it is compared with (eps_i for personalized)
    n: int  # outputs per side it was counted on (the counting share; all outputs for a model set)
    level: float  # its share of alpha (alpha / m, or model_sets.py's shares)


class CountedGDPSet(NamedTuple):
    """One candidate set of a confirmed pair, counted on the counting share (the GDP side)."""

    pair: object
    candidate: object  # thresholds.Candidate
    k1: int
    k2: int
    mu_lb: float  # max(mu lower bound, 0), at its level
    p_value: float  # exact p-value of H0: on or above the mu-GDP curve
    mu: float  # the mu it is compared with
    n: int  # outputs per side it was counted on
    level: float  # its share of alpha
