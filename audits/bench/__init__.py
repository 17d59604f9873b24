"""``userdp bench``: every algorithm against its simplest baseline (docs/performance.md).

``run`` measures and prints; ``cases`` holds the paper-free benchmarks and collects each paper's
(``audits/papers/<paper>/bench.py``), one ``Benchmark`` per row (``audits/engine/benchmark.py``).
"""

__all__: list[str] = []
