"""The records of ``userdp bench``: ``Case`` (one benchmark's inputs at one size) and ``Benchmark``
(what is timed, against what, at which sizes, and its target), with the few helpers the rows
share. The rows are data: the paper-free ones in ``audits/bench/cases.py``, each paper's in
``audits/papers/<paper>/bench.py``; ``audits/bench/run.py`` measures them. This module imports
none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = ["Case", "Benchmark", "TEN_SCALING", "dataset_bytes", "pow10", "records_text"]

TEN_SCALING = dict(scaling=(10**5, 10**6, 10**7), quick_scaling=(10**4, 10**5, 10**6))  # sizes of the slope


def pow10(n: int) -> str:
    """10^7 for 10_000_000, else the number with thousands separators."""
    e = round(np.log10(n)) if n > 0 else 0
    return f"10^{e}" if n == 10**e else f"{n:,}"


def records_text(n: int) -> str:
    """The size text of a row of n records owned by n / 10 users."""
    return f"{pow10(n)} records, {pow10(max(n // 10, 1))} users"


def dataset_bytes(D) -> int:
    """The bytes of a ``UserDataset``'s arrays (the input size of a row)."""
    return sum(a.nbytes for a in (D.values, D.user_ids, D.labels, D.epsilons, D.task_ids) if a is not None)


@dataclass
class Case:
    """One benchmark's inputs, built for a size: the two calls to time, compared with each other."""

    ours: Callable[[], Any]
    baseline: Callable[[], Any] | None = None
    input_bytes: int = 0
    fresh: Callable[[], None] | None = None  # untimed, before each call of ``ours`` (e.g. a new dataset)
    check: Callable[[], str | None] | None = None  # after timing: None, or why the result is wrong
    note: str = ""  # extra figures for the row (e.g. iterations, gap)


@dataclass(frozen=True)
class Benchmark:
    """A benchmark: what is timed, against what, at which size, and its target.

    ``build(n)`` returns the ``Case`` for size n; ``size`` / ``quick_size`` are the sizes of
    the target row; ``scaling`` the three sizes of the slope (full run; ``--quick`` uses
    ``quick_scaling``); ``copies`` the memory bound (working memory / input bytes), None for
    no memory row; ``need(n)`` the estimated peak bytes of the whole benchmark at size n.
    ``kind`` "ratio" (target: our time / the baseline's <= target) or "seconds" (wall clock
    <= target). A benchmark with no target and no baseline only has a scaling row.
    """

    name: str
    work: str
    baseline: str | None
    target: float | None
    build: Callable[[int], Case]
    size: int
    size_text: Callable[[int], str]
    quick_size: int | None = None
    kind: str = "ratio"
    rounds: int = 5
    quick_rounds: int = 3
    warmup: bool = True
    scaling: tuple[int, int, int] | None = None
    quick_scaling: tuple[int, int, int] | None = None
    complexity: str = ""
    scaling_note: str = ""
    copies: float | None = None
    need: Callable[[int], float] = field(default=lambda n: 0.0)
    cores: int = 1
    min_size: int = 100  # the smallest size a test run (hidden --scale) may shrink it to
    memory_size: int | None = None  # the size of the memory row (default: ``size``)
    requires: Callable[[], str | None] | None = None  # why it cannot run on this machine (a missing tool), or None

    def target_size(self, quick: bool) -> int:
        return self.quick_size if quick and self.quick_size is not None else self.size

    def scaling_sizes(self, quick: bool):
        return self.quick_scaling if quick and self.quick_scaling is not None else self.scaling
