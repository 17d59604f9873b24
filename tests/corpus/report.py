"""The corpus table of the README ("Validate your implementation"): every corpus entry through
``validate`` at default settings for each seed, and per algorithm the bugs caught with their
expected verdict (at every seed), the correct alternatives passed (at every seed), and the time of
a validate run (median and slowest over the entries and seeds: wall clock and the process's CPU).

    cd tests && python -m corpus.report [--seeds 0,1,2,3,4] [--only ALGORITHM] [--log FILE [--resume] [--reverse]]

Each run is printed as it ends (and appended to ``--log``), then the table in Markdown.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import time

from papers import paper_modules
from userdp.audits.validation.run import validate

from .test_corpus import shape_of


def entries(only=None):
    for m in paper_modules("corpus").values():
        for e in m.CORPUS:
            if only is None or e.algorithm in only:
                yield e


def _logged(log) -> dict:
    """(id, seed) -> the logged run, from ``log`` (JSON lines), if it exists."""
    out = {}
    try:
        with open(log) as fh:
            for line in fh:
                r = json.loads(line)
                out[(r["id"], r["seed"])] = r
    except FileNotFoundError:
        pass
    return out


def run(seeds, only=None, log=None, resume=False, reverse=False) -> dict:
    rows = collections.defaultdict(list)  # algorithm -> [(entry, seed, verdict, wall, cpu)]
    todo = [(e, seed) for e in entries(only) for seed in seeds]
    for e, seed in reversed(todo) if reverse else todo:
        done = _logged(log).get((e.id, seed)) if (resume and log) else None
        if done is not None:  # run by another process sharing the log: reuse it
            rows[e.algorithm].append((e, seed, done["verdict"], done["wall"], done["cpu"]))
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            verdict = validate(e.algorithm, e.target, seed=seed, **e.kwargs()).verdict
        except Exception as exc:  # an error is a failed row, named
            verdict = f"error: {type(exc).__name__}: {exc}"[:120]
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        rows[e.algorithm].append((e, seed, verdict, wall, cpu))
        line = {
            "id": e.id,
            "seed": seed,
            "expected": e.expected,
            "verdict": verdict,
            "wall": round(wall, 2),
            "cpu": round(cpu, 2),
        }
        print(
            f"{'ok' if verdict == e.expected else 'XX'} {e.id:52s} {seed} {e.expected:26s} {verdict:26s} "
            f"{wall:6.1f} s ({cpu:5.1f} s CPU)",
            flush=True,
        )
        if log:
            with open(log, "a") as fh:
                fh.write(json.dumps(line) + "\n")
    return rows


def table(rows, seeds) -> str:
    rows = {a: sorted(rs, key=lambda r: (r[0].id, r[1])) for a, rs in sorted(rows.items())}
    out = [
        "| algorithm | bugs caught with the expected verdict | correct alternatives passed | call shapes | "
        "validate time: median / slowest (CPU) |",
        "|---|---|---|---|---|",
    ]
    tot = collections.Counter()
    cpus = []
    for algo, rs in rows.items():
        by_entry = collections.defaultdict(list)
        for e, seed, v, wall, cpu in rs:
            by_entry[e.id].append((e, v))
        bugs = [vs for vs in by_entry.values() if vs[0][0].expected != "pass"]
        good = [vs for vs in by_entry.values() if vs[0][0].expected == "pass"]
        caught = sum(all(v == e.expected for e, v in vs) for vs in bugs)
        passed = sum(all(v == "pass" for _, v in vs) for vs in good)
        shapes = sorted({shape_of(vs[0][0]) for vs in by_entry.values()})
        c = [cpu for *_, cpu in rs]
        cpus += c
        out.append(
            f"| {algo} | {caught} of {len(bugs)} | {passed} of {len(good)} | {', '.join(shapes)} | "
            f"{statistics.median(c):.1f} s / {max(c):.1f} s |"
        )
        tot.update(caught=caught, bugs=len(bugs), passed=passed, good=len(good))
    out.append(
        f"| all ({len(seeds)} seeds) | {tot['caught']} of {tot['bugs']} | {tot['passed']} of {tot['good']} | | "
        f"{statistics.median(cpus):.1f} s / {max(cpus):.1f} s |"
    )
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seeds", default="0,1,2,3,4")
    p.add_argument("--only", action="append", help="an algorithm (repeatable)")
    p.add_argument("--log", help="append one JSON line per run to this file")
    p.add_argument(
        "--resume",
        action="store_true",
        help="reuse the runs already in --log (several processes "
        "may share one log: each skips what the others have done)",
    )
    p.add_argument("--reverse", action="store_true", help="run the entries in reverse order (a second process)")
    a = p.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    rows = run(seeds, a.only, a.log, a.resume, a.reverse)
    print()
    print(table(rows, seeds))


if __name__ == "__main__":
    main()
