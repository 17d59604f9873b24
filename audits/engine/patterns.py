"""Release patterns of multi-partition outputs: which cells (partitions) a row released, as a
value set (``ReleasePatternSet``: "released in partitions 0 and 1"), chosen among the
patterns' unions by ``value_sets.choose_discrete`` on each row's pattern (``rejection.py``,
multi-partition outputs, has the rest of how such outputs are tested).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from userdp.audits.engine.report import capped_values
from userdp.audits.engine.sampling import released_cells
from userdp.audits.engine.value_sets import choose_discrete

__all__ = ["ReleasePatternSet", "PATTERN_MAX_CELLS"]


@dataclass(frozen=True)
class ReleasePatternSet:
    """{x : the set of x's released cells is one of ``patterns``}, for a multi-partition release
    (``sampling.py``): each pattern lists the cells (partitions) released, e.g. ((0, 1),) is
    "released in both partitions 0 and 1, and no other". Chosen among the patterns' unions
    by their likelihood ratio on the selection share (``choose_vector``)."""

    patterns: tuple[tuple[int, ...], ...]

    @property
    def values(self) -> tuple:
        return self.patterns

    def project(self, outputs) -> np.ndarray:
        """Each output's pattern as an integer code: bit j set when cell j is released."""
        return _pattern_codes(~np.isnan(released_cells(outputs)))

    def mask(self, codes: np.ndarray) -> np.ndarray:
        return np.isin(codes, np.asarray([sum(1 << j for j in p) for p in self.patterns], dtype=np.int64))

    def contains(self, outputs) -> np.ndarray:
        return self.mask(self.project(outputs))

    def describe(self, limit: int = 8) -> str:
        shown = " or ".join("{" + ", ".join(map(str, p)) + "}" for p in self.patterns[:limit])
        more = f" or ... ({len(self.patterns)} patterns)" if len(self.patterns) > limit else ""
        return f"{{released cells are {shown}{more}}}"

    def to_dict(self) -> dict:
        return {
            "type": "release-pattern",
            **capped_values([list(p) for p in self.patterns]),
            "description": self.describe(),
        }


PATTERN_MAX_CELLS = 62  # release patterns are int64 bit masks


def _pattern_codes(released: np.ndarray) -> np.ndarray:
    """(n,) int64 bit masks of the released cells of (n, d) booleans, d <= PATTERN_MAX_CELLS."""
    return released.astype(np.int64) @ (np.int64(1) << np.arange(released.shape[1], dtype=np.int64))


def _pattern_candidates(a, b, n_count: int, alpha: float, delta: float, k: int) -> list:
    """The k best unions of release patterns (``ReleasePatternSet``): the value-set test of
    ``choose_discrete`` on each output's pattern of released cells."""
    codes_a, codes_b = _pattern_codes(~np.isnan(a)), _pattern_codes(~np.isnan(b))
    seen, inv = np.unique(np.r_[codes_a, codes_b], return_inverse=True)
    if seen.size < 2:
        return []
    d = a.shape[1]
    values = [tuple(j for j in range(d) if int(c) >> j & 1) for c in seen]
    n = codes_a.size
    out = []
    for c in choose_discrete(inv[:n], inv[n:], values, n_count, alpha, delta, k, ordered=False):
        out.append(replace(c, rejection_set=ReleasePatternSet(c.rejection_set.values)))
    return out
