"""``userdp bench``: every algorithm against its simplest baseline, in one table (docs/performance.md).

A benchmark (``Benchmark``) builds its inputs for a size n outside any timer and returns a
``Case``: our call, the baseline's call (the simplest code that does the unavoidable part of
the work, e.g. ``np.unique`` for anything that must group records by user), an optional
correctness check and the input's size in bytes. ``measure`` times the two interleaved
(``interleaved``: our call and the baseline alternate, so that a change of machine load hits
both; the least disturbed run of each counts) and compares the ratio with the target. The
definitions live in ``bench_cases.py``; the pytest benchmarks in ``tests/benchmarks/`` call
``measure`` on the same definitions, so the test and the command cannot disagree.

Three tables:

- **targets**: ratio = our seconds / the baseline's seconds in the same run, met if
  ratio <= target (or, for a wall-clock target, seconds <= target);
- **scaling**: our time at three sizes a factor of 10 apart, and the slope of log time
  against log n (least squares). Linear work gives 1, n log n about 1.1 over these sizes, a
  quadratic step 2; met if slope <= ``SLOPE_BOUND`` (the bound the PTR benchmark
  set: it tells n log n from quadratic). Fixed costs flatten the slope at small sizes;
  caches and memory bandwidth can steepen it a little between 10^5 and 10^7;
- **memory**: each algorithm at its full size (10^7 records, or about 10^7 values) in a
  child process of its own (spawned, so nothing of this process is counted), with
  ``tracemalloc`` (numpy reports its buffers to it): the peak of the memory the call
  allocates on top of what it was given, as a multiple of the input's bytes, met if <= the
  benchmark's declared constant ``copies``; and the child's peak resident set size (VmHWM,
  else ``resource``), interpreter, inputs and their generation included.

A benchmark whose estimated memory need exceeds the memory available is reported as not
run, with the figures; a benchmark that needs more cores than the machine has, likewise.
BLAS runs single-threaded while benchmarks run (``blas.single_threaded_blas``, as the
command line always does), so that pytest and ``userdp bench`` measure the same thing.
"""

from __future__ import annotations

import gc
import math
import os
import platform
import time
from dataclasses import replace

import numpy as np

from userdp.audits.bench.cases import BENCHMARKS
from userdp.audits.engine.benchmark import Benchmark, Case
from userdp.audits.engine.blas import openblas_thread_setters, single_threaded_blas

__all__ = [
    "Case",
    "Benchmark",
    "interleaved",
    "measure",
    "measure_scaling",
    "measure_memory",
    "machine",
    "available_memory",
    "SLOPE_BOUND",
    "get",
    "names",
    "all_benchmarks",
]

SLOPE_BOUND = 1.3
MEMORY_HEADROOM = 0.8  # a benchmark runs if its estimated need is <= this share of the available memory


# ------------------------------------------------------------------ the timer
def interleaved(ours, bare, rounds: int = 5, *, fresh=None, warmup: bool = True) -> tuple[float, float | None]:
    """(min seconds of ``ours()``, min seconds of ``bare()``) over ``rounds`` alternating runs.

    ``bare`` may be None (then only ``ours`` is timed). ``fresh()``, if given, runs before
    every call of ``ours``, outside the timer. One warm-up call of each first (caches, lazy
    imports) unless ``warmup`` is False. The minimum is the least disturbed run.
    """
    calls = [(ours, fresh, []), *([(bare, None, [])] if bare is not None else [])]
    if warmup:
        for f, before, _ in calls:
            if before is not None:
                before()
            f()
    for _ in range(rounds):
        for f, before, times in calls:
            if before is not None:
                before()
            t = time.perf_counter()
            f()
            times.append(time.perf_counter() - t)
    return min(calls[0][2]), (min(calls[1][2]) if bare is not None else None)


# ------------------------------------------------------------------ the registry of benchmarks
def all_benchmarks() -> list[Benchmark]:
    """Every benchmark of ``cases.BENCHMARKS``, in table order."""
    return list(BENCHMARKS)


def names() -> list[str]:
    """The benchmarks' names (``--only`` takes them)."""
    return [b.name for b in all_benchmarks()]


def get(name: str) -> Benchmark:
    """The benchmark called ``name``; a KeyError naming the known ones otherwise."""
    for b in all_benchmarks():
        if b.name == name:
            return b
    raise KeyError(f"unknown benchmark {name!r}; known: {', '.join(names())}")


# ------------------------------------------------------------------ the machine
def _meminfo() -> dict[str, int]:
    try:
        with open("/proc/meminfo") as f:
            return {k: int(v.split()[0]) * 1024 for k, v in (line.split(":", 1) for line in f)}
    except (OSError, ValueError):
        return {}


def available_memory() -> int:
    """Bytes of memory available to a new allocation (MemAvailable; else free physical pages)."""
    info = _meminfo()
    if "MemAvailable" in info:
        return info["MemAvailable"]
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _total_memory() -> int:
    return _meminfo().get("MemTotal") or os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _blas() -> str:
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]
        b = deps["blas"]
        return f"{b.get('name', '?')} {b.get('version', '')}".strip()
    except Exception:  # numpy < 1.25 has no mode="dicts"; the name is then unknown
        return "unknown"


def machine() -> dict:
    """Cores, memory, load, numpy's BLAS and the thread count benchmarks run with."""
    setters = openblas_thread_setters()
    with single_threaded_blas():
        bench_threads = [int(getter()) for _, getter in setters]
    chosen = {v: os.environ[v] for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS") if os.environ.get(v)}
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "memory_bytes": _total_memory(),
        "memory_available_bytes": available_memory(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": _blas(),
        "blas_threads": bench_threads[0] if bench_threads else None,
        "blas_threads_note": (
            f"as you set it ({', '.join(f'{k}={v}' for k, v in chosen.items())})"
            if chosen
            else "userdp sets 1 while it runs (audits/engine/blas.py)"
            if setters
            else "no OpenBLAS found: its threads are not controlled"
        ),
    }


# ------------------------------------------------------------------ measuring
def _not_run(b: Benchmark, n: int) -> str | None:
    """Why ``b`` cannot run at size n on this machine, or None."""
    cores = os.cpu_count() or 1
    if b.cores > cores:
        return f"needs {b.cores} cores, this machine has {cores}"
    missing = b.requires() if b.requires is not None else None
    if missing:
        return missing
    need, avail = b.need(n), available_memory()
    if need > MEMORY_HEADROOM * avail:
        return (
            f"needs about {need / 2**30:.1f} GiB of memory at this size, {avail / 2**30:.1f} GiB available "
            f"(runs when the need is <= {MEMORY_HEADROOM:.0%} of it)"
        )
    return None


def _row(b: Benchmark, n: int, **fields) -> dict:
    return {
        "name": b.name,
        "work": b.work,
        "size": b.size_text(n),
        "n": n,
        "baseline": b.baseline,
        "seconds": None,
        "baseline_seconds": None,
        "ratio": None,
        "target": b.target,
        "target_kind": b.kind,
        "met": None,
        "status": "run",
        "note": "",
        **fields,
    }


def measure(
    b: Benchmark, *, quick: bool = False, n: int | None = None, rounds: int | None = None, cache: dict | None = None
) -> dict:
    """The target row of ``b``: times, ratio, target, met (None: nothing to meet), status, note.

    status "not run" (with the reason in ``note``) when the machine cannot run it; "error"
    when it raised (the message in ``note``); met is then None.
    """
    n = b.target_size(quick) if n is None else n
    rounds = (b.quick_rounds if quick else b.rounds) if rounds is None else rounds
    why = _not_run(b, n)
    if why is not None:
        return _row(b, n, status="not run", note=why)
    with single_threaded_blas():
        case = b.build(n)
        t_ours, t_base = interleaved(case.ours, case.baseline, rounds, fresh=case.fresh, warmup=b.warmup)
        problem = case.check() if case.check is not None else None
    note = "; ".join(s for s in (case.note, f"WRONG RESULT: {problem}" if problem else "") if s)
    del case  # its inputs: before the next benchmark builds its own
    if cache is not None:
        cache[(b.name, n)] = (t_ours, note)
    ratio = None if t_base is None else t_ours / t_base
    value = ratio if b.kind == "ratio" else t_ours
    met = None if b.target is None or value is None else bool(value <= b.target)
    if problem is not None:
        met = False
    return _row(b, n, seconds=t_ours, baseline_seconds=t_base, ratio=ratio, met=met, note=note)


def slope(sizes, seconds) -> float:
    """Least-squares slope of log(seconds) against log(size)."""
    return float(np.polyfit(np.log(np.asarray(sizes, float)), np.log(np.asarray(seconds, float)), 1)[0])


def measure_scaling(
    b: Benchmark, *, quick: bool = False, sizes=None, rounds: int | None = None, cache: dict | None = None
) -> dict:
    """Our time at three sizes a factor of 10 apart and the log-log slope; met if <= SLOPE_BOUND."""
    sizes = tuple(b.scaling_sizes(quick) if sizes is None else sizes)
    rounds = (b.quick_rounds if quick else b.rounds) if rounds is None else rounds
    row = {
        "name": b.name,
        "work": b.work,
        "sizes": list(sizes),
        "seconds": [],
        "slope": None,
        "last_step_slope": None,
        "complexity": b.complexity,
        "bound": SLOPE_BOUND,
        "met": None,
        "status": "run",
        "note": "",
    }
    for n in sizes:
        why = _not_run(b, n)
        if why is not None:
            return {**row, "status": "not run", "note": f"size {n}: {why}"}
    notes = []
    for n in sizes:
        if cache is not None and (b.name, n) in cache:
            t, note = cache[(b.name, n)]
        else:
            with single_threaded_blas():
                case = b.build(n)
                t, _ = interleaved(case.ours, None, rounds, fresh=case.fresh, warmup=b.warmup)
                problem = case.check() if case.check is not None else None
            note = "; ".join(x for x in (case.note, f"WRONG RESULT: {problem}" if problem else "") if x)
            del case
            if cache is not None:
                cache[(b.name, n)] = (t, note)
        row["seconds"].append(t)
        if note and (b.scaling_note or "WRONG RESULT" in note):  # per-size figures where they explain the slope
            notes.append(f"n = {n}: {note}")
    s, last = slope(sizes, row["seconds"]), slope(sizes[1:], row["seconds"][1:])
    return {
        **row,
        "slope": s,
        "last_step_slope": last,
        "met": bool(s <= SLOPE_BOUND),
        "note": "; ".join(x for x in (b.scaling_note or _slope_reading(s, last), *notes) if x),
    }


def _slope_reading(s: float, last: float) -> str:
    """Why a slope differs from 1 (linear; n log n reads about 1.1 over these sizes)."""
    if s > SLOPE_BOUND:
        return f"slope {s:.2f} above {SLOPE_BOUND}: more than n log n work"
    if s < 0.9:
        return (
            f"slope {s:.2f} below 1: fixed per-call costs (checks, small arrays, Python) weigh on the smallest "
            f"size; between the two largest sizes it is {last:.2f}"
        )
    return ""


def trace_call(case: Case) -> dict:
    """One call of ``case.ours`` under tracemalloc: the input's bytes and the peak of what the
    call allocates beyond what existed before it (numpy reports its buffers to tracemalloc)."""
    import tracemalloc

    if case.fresh is not None:
        case.fresh()
    gc.collect()
    tracemalloc.start()
    try:
        result = case.ours()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return {"input_bytes": case.input_bytes, "working_bytes": peak}


def memory_row(b: Benchmark, n: int, traced: dict | None = None, why: str | None = None) -> dict:
    row = {
        "name": b.name,
        "work": b.work,
        "size": b.size_text(n),
        "n": n,
        "input_bytes": None,
        "working_bytes": None,
        "copies": None,
        "bound": b.copies,
        "rss_bytes": None,
        "met": None,
        "status": "run",
        "note": "",
    }
    if traced is None:
        return {**row, "status": "not run", "note": why}
    copies = traced["working_bytes"] / traced["input_bytes"]
    return {**row, **traced, "copies": copies, "met": bool(copies <= b.copies)}


def _peak_rss() -> int:
    """This process's peak resident set size in bytes: VmHWM (Linux; it starts afresh at exec),
    else ``resource``'s ru_maxrss, which on Linux keeps the forked parent's peak across exec."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    scale = 1 if platform.system() == "Darwin" else 1024  # macOS: bytes, Linux: kilobytes
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _memory_child(name: str, n: int) -> dict:
    """In a fresh process: build the case, trace one call; and the process's peak RSS."""
    with single_threaded_blas():
        out = trace_call(get(name).build(n))
    out["rss_bytes"] = _peak_rss()
    return out


def measure_memory(b: Benchmark, *, n: int | None = None) -> dict:
    """Peak working memory of one call of ours at size n (default: the full size), in a spawned child."""
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing

    n = b.size if n is None else n
    why = _not_run(b, n)
    if why is not None:
        return memory_row(b, n, why=why)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return memory_row(b, n, pool.submit(_memory_child, b.name, n).result())


def run(benchmarks, *, quick: bool, progress=None, memory: bool = True, debug: bool = False) -> dict:
    """Every table for ``benchmarks``: {"rows", "scaling", "memory"}; errors go in their rows."""
    cache: dict = {}
    rows, scaling, mem = [], [], []
    jobs = []
    for b in benchmarks:
        if b.target is not None or b.baseline is not None:
            jobs.append(("target", b))
        if b.scaling is not None:
            jobs.append(("scaling", b))
        if memory and b.copies is not None:
            jobs.append(("memory", b))
    for i, (what, b) in enumerate(jobs, 1):
        try:
            if what == "target":
                rows.append(r := measure(b, quick=quick, cache=cache))
                msg = _target_progress(r)
            elif what == "scaling":
                scaling.append(r := measure_scaling(b, quick=quick, cache=cache))
                msg = (
                    f"slope {r['slope']:.2f} over n = {', '.join(map(str, r['sizes']))}"
                    if r["status"] == "run"
                    else f"NOT RUN: {r['note']}"
                )
            else:
                mem.append(r := measure_memory(b, n=b.memory_size))
                msg = (
                    f"working memory {r['copies']:.2f} x the input ({r['input_bytes'] / 2**20:.0f} MiB)"
                    if r["status"] == "run"
                    else f"NOT RUN: {r['note']}"
                )
        except Exception as exc:  # reported in its row; the run goes on (exit 3 at the end)
            if debug:
                import traceback

                traceback.print_exc()
            err = {
                "name": b.name,
                "work": b.work,
                "met": None,
                "status": "error",
                "note": f"{type(exc).__name__}: {exc}",
            }
            {"target": rows, "scaling": scaling, "memory": mem}[what].append(err)
            msg = f"ERROR {err['note']}"
        if progress is not None:
            progress(i, len(jobs), f"{b.name} ({what}): {msg}")
    return {"rows": rows, "scaling": scaling, "memory": mem}


def _target_progress(r: dict) -> str:
    if r["status"] != "run":
        return f"NOT RUN: {r['note']}"
    head = f"{r['seconds']:.3g} s" + (
        f" vs {r['baseline_seconds']:.3g} s, ratio {r['ratio']:.2f}" if r["ratio"] is not None else ""
    )
    return head + ("" if r["met"] is None else (", met" if r["met"] else ", MISSED"))


def summary(tables: dict) -> dict:
    every = [r for t in tables.values() for r in t]
    return {
        "checks": sum(r["met"] is not None for r in every),
        "met": sum(r["met"] is True for r in every),
        "missed": sum(r["met"] is False for r in every),
        "not_run": sum(r["status"] == "not run" for r in every),
        "errors": sum(r["status"] == "error" for r in every),
        "missed_names": sorted({r["name"] for r in every if r["met"] is False}),
    }


def fmt_seconds(s) -> str:
    if s is None or (isinstance(s, float) and math.isnan(s)):
        return "-"
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


# ------------------------------------------------------------------ the command line (userdp bench)
def scaled(n: int, scale: float, min_size: int) -> int:
    """A size times ``scale`` (the hidden test-only ``--scale``), at least ``min_size``."""
    return n if scale == 1.0 else max(min_size, round(n * scale))


def select(only: list[str] | None) -> list[Benchmark]:
    """The benchmarks named by ``--only`` (every one when None); an unknown name is a usage error."""
    from userdp.audits.engine.usercode import UsageError

    benches = all_benchmarks()
    if not only:
        return benches
    known = [b.name for b in benches]
    unknown = [name for name in only if name not in known]
    if unknown:
        raise UsageError(f"--only: unknown benchmark {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    return [b for b in benches if b.name in only]


def resized(b: Benchmark, scale: float) -> Benchmark:
    """``b`` with every size scaled (test runs); the three scaling sizes stay a factor of 10 apart."""
    if scale == 1.0:
        return b
    lo = b.min_size
    steps = lambda s: None if s is None else tuple(scaled(s[0], scale, lo) * 10**k for k in range(3))  # noqa: E731
    return replace(
        b,
        size=scaled(b.size, scale, lo) if b.size else lo,
        memory_size=scaled(b.size, scale, lo),
        quick_size=None if b.quick_size is None else scaled(b.quick_size, scale, lo),
        scaling=steps(b.scaling),
        quick_scaling=steps(b.quick_scaling),
    )


def command(args) -> int:
    """``userdp bench [--quick] [--json] [--only NAME]``: the tables, the machine; exit 1 if a target is missed."""
    from userdp.audits.engine.report import Progress, to_json

    benches = [resized(b, args.scale) for b in select(args.only)]
    progress = Progress("bench")
    info = machine()
    progress.note(
        f"{len(benches)} benchmark(s), {'quick' if args.quick else 'full'} run; "
        f"{info['cores']} cores, load average {_load(info)}"
    )
    tables = run(benches, quick=args.quick, progress=progress.step, debug=args.debug)
    info["load_average_after"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    total = summary(tables)
    total["elapsed_seconds"] = progress.elapsed()
    if args.json:
        print(to_json("userdp.bench/1", {"quick": args.quick, "machine": info, **tables, "summary": total}))
    else:
        print_tables(tables, info, total, quick=args.quick)
    return 1 if total["missed"] else (3 if total["errors"] else 0)


def _load(info: dict, key: str = "load_average") -> str:
    v = info.get(key)
    return "unknown" if v is None else " ".join(f"{x:.2f}" for x in v)


def _gib(b) -> str:
    return "-" if b is None else f"{b / 2**30:.1f} GiB"


def _mib(b) -> str:
    return "-" if b is None else f"{b / 2**20:.0f} MiB"


def _target_text(r: dict) -> str:
    if r.get("target") is None:
        return "report"
    return f"<= {r['target']:g} s" if r.get("target_kind") == "seconds" else f"<= {r['target']:.3g}x"


def _met_text(r: dict) -> str:
    if r["status"] != "run":
        return r["status"].upper()
    return "-" if r["met"] is None else ("yes" if r["met"] else "MISSED")


def print_tables(tables: dict, info: dict, total: dict, *, quick: bool) -> None:
    from userdp.audits.engine.report import table

    print(
        f"userdp bench{' --quick' if quick else ''}: our time against the simplest baseline, in one run "
        f"(min of interleaved rounds)"
    )
    print(
        f"machine: {info['cpu']}; {info['cores']} cores ({info['cores_usable']} usable), "
        f"{_gib(info['memory_bytes'])} memory ({_gib(info['memory_available_bytes'])} available); "
        f"load average {_load(info)} at the start, {_load(info, 'load_average_after')} at the end"
    )
    print(
        f"         Python {info['python']}, numpy {info['numpy']}, BLAS {info['blas']}: "
        f"{info['blas_threads'] if info['blas_threads'] is not None else '?'} thread(s) while benchmarks run "
        f"({info['blas_threads_note']})"
    )
    rows = [
        {
            "name": r["name"],
            "work": r["work"],
            "size": r.get("size", "-"),
            "ours": fmt_seconds(r.get("seconds")),
            "baseline": r.get("baseline") or "-",
            "baseline time": fmt_seconds(r.get("baseline_seconds")),
            "ratio": "-" if r.get("ratio") is None else f"{r['ratio']:.2f}x",
            "target": _target_text(r),
            "met": _met_text(r),
        }
        for r in tables["rows"]
    ]
    if rows:
        print("\ntargets (ratio = our time / the baseline's time, both measured in this run):")
        print(table(rows, indent="  "))
    notes = [(what, r) for what, t in tables.items() for r in t if r.get("note")]
    scale_rows = [
        {
            "name": r["name"],
            "sizes": ", ".join(_short(n) for n in r.get("sizes", [])),
            "times": ", ".join(fmt_seconds(s) for s in r.get("seconds", [])),
            "slope": "-" if r.get("slope") is None else f"{r['slope']:.2f}",
            "last step": "-" if r.get("last_step_slope") is None else f"{r['last_step_slope']:.2f}",
            "expected": r.get("complexity", ""),
            "met": _met_text(r),
        }
        for r in tables["scaling"]
    ]
    if scale_rows:
        print(
            f"\nscaling (our time at three sizes a factor of 10 apart; slope of log time against log n over the "
            f"three, met if <= {SLOPE_BOUND}: linear or n log n work; last step: the slope between the two "
            f"largest sizes, where fixed costs weigh least):"
        )
        print(table(scale_rows, indent="  "))
    mem_rows = [
        {
            "name": r["name"],
            "size": r.get("size", "-"),
            "input": _mib(r.get("input_bytes")),
            "working peak": _mib(r.get("working_bytes")),
            "copies": "-" if r.get("copies") is None else f"{r['copies']:.2f}",
            "bound": "-" if r.get("bound") is None else f"<= {r['bound']:g}",
            "process peak RSS": _mib(r.get("rss_bytes")),
            "met": _met_text(r),
        }
        for r in tables["memory"]
    ]
    if mem_rows:
        print(
            "\nmemory (one call in a fresh child process; working peak = the most it allocates beyond its "
            "inputs (tracemalloc), copies = working peak / input bytes; peak RSS of the whole child):"
        )
        print(table(mem_rows, indent="  "))
    if notes:
        print("\nnotes:")
        for what, r in notes:
            print(f"  {r['name']} ({_TABLE_NAMES[what]}): {r['note']}")
    print(
        f"\n{total['checks']} checks: {total['met']} met, {total['missed']} missed"
        + (f" ({', '.join(total['missed_names'])})" if total["missed"] else "")
        + f", {total['not_run']} not run, {total['errors']} errors; {total['elapsed_seconds']:.0f} s."
    )


_TABLE_NAMES = {"rows": "target", "scaling": "scaling", "memory": "memory"}


def _short(n: int) -> str:
    e = round(math.log10(n)) if n > 0 else 0
    return f"1e{e}" if n == 10**e else str(n)
