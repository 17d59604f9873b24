"""The benchmarks' shared timer (not a test module): our call against its bare-numpy floor,
interleaved so that a change of machine load hits both, min over rounds (the least
disturbed run), after one warm-up call of each (caches, lazy imports)."""
from __future__ import annotations

import time


def interleaved(ours, bare, rounds: int = 5) -> tuple[float, float]:
    """(min seconds of ``ours()``, min seconds of ``bare()``) over ``rounds`` alternating runs."""
    ours(), bare()
    t_ours, t_bare = [], []
    for _ in range(rounds):
        for f, ts in ((ours, t_ours), (bare, t_bare)):
            t = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t)
    return min(t_ours), min(t_bare)
