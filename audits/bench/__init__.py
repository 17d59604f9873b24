"""``userdp bench``: every algorithm against its simplest baseline (docs/performance.md).

``run`` measures and prints; ``cases`` holds the benchmarks, one ``Benchmark`` per row.
"""

__all__: list[str] = []
