"""The benchmarks of ``userdp bench`` as pytest tests: the same definitions
(``audits/bench/cases.py``) measured by the same code (``audits/bench/run.py``) at the full sizes,
so that the test and the command cannot disagree. Each test prints its row.

Timed with interleaved perf_counter loops (``bench.interleaved``), not the pytest-benchmark
fixture: the default addopts deselect the ``benchmark`` marker, which keeps these out of the
default run. Run with:
    python3 -m pytest tests/benchmarks -m benchmark -s -n 0
A benchmark this machine cannot run (too little memory, too few cores) is skipped with the
reason (``-ra`` lists it), as ``userdp bench`` marks it "not run".
"""

from __future__ import annotations

import pytest

from userdp.audits.bench import run as bench

pytestmark = pytest.mark.benchmark

ALL = bench.all_benchmarks()
TARGETS = [b.name for b in ALL if b.target is not None or b.baseline is not None]
SCALING = [b.name for b in ALL if b.scaling is not None]
MEMORY = [b.name for b in ALL if b.copies is not None]


def _ran(row: dict) -> dict:
    if row["status"] == "not run":
        pytest.skip(f"{row['name']}: not run on this machine: {row['note']}")
    return row


@pytest.mark.parametrize("name", TARGETS)
def test_target(name):
    r = _ran(bench.measure(bench.get(name)))
    ratio = (
        ""
        if r["ratio"] is None
        else f" vs {bench.fmt_seconds(r['baseline_seconds'])} ({r['baseline']}): ratio {r['ratio']:.3f}"
    )
    print(f"\n{name} at {r['size']}: {bench.fmt_seconds(r['seconds'])}{ratio}; target {r['target']}; {r['note']}")
    assert r["met"] is not False, f"{name}: target missed: {r}"


@pytest.mark.parametrize("name", SCALING)
def test_scaling(name):
    r = _ran(bench.measure_scaling(bench.get(name)))
    print(
        f"\n{name}: "
        + ", ".join(f"n = {n}: {bench.fmt_seconds(t)}" for n, t in zip(r["sizes"], r["seconds"]))
        + f"; log-log slope {r['slope']:.2f} (expected {r['complexity']})"
    )
    assert r["met"], f"{name}: slope {r['slope']:.2f} > {bench.SLOPE_BOUND}"


@pytest.mark.parametrize("name", MEMORY)
def test_memory(name):
    r = _ran(bench.measure_memory(bench.get(name)))
    mib = {k: r[k] / 2**20 for k in ("input_bytes", "working_bytes", "rss_bytes")}
    print(
        f"\n{name} at {r['size']}: input {mib['input_bytes']:.0f} MiB, working peak {mib['working_bytes']:.0f} MiB "
        f"({r['copies']:.2f} x), process peak RSS {mib['rss_bytes']:.0f} MiB"
    )
    assert r["met"], f"{name}: {r['copies']:.2f} copies of the input > {r['bound']}"
