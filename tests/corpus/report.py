"""The corpus table of the README ("Validate your implementation"): run every corpus entry
through ``validate`` at default settings and seed 0, and print per algorithm the entries, the
bugs caught (the expected verdict, not just any finding), the false verdicts on the correct
alternatives, and the time of each validate run (the slowest, and the correct plain function's).

    cd tests && python -m corpus.report            # 94 s on 2 cores (2026-11-24)
"""
from __future__ import annotations

import collections
import importlib
import pkgutil
import time

import corpus
from userdp.audits.validate import validate


def main() -> None:
    rows = collections.defaultdict(list)
    for m in sorted(m.name for m in pkgutil.iter_modules(corpus.__path__) if not m.name.startswith(("_", "test", "report"))):
        for e in importlib.import_module(f"corpus.{m}").CORPUS:
            t0 = time.perf_counter()
            verdict = validate(e.algorithm, e.target, seed=0).verdict
            rows[e.algorithm].append((e, verdict, time.perf_counter() - t0))
            print(f"{e.id:52s} {e.expected:26s} {verdict:26s} {rows[e.algorithm][-1][2]:6.1f} s", flush=True)
    print("\n| algorithm | bugs caught (expected verdict) | correct alternatives passed | validate time, correct release-only / slowest entry |")
    print("|---|---|---|---|")
    tot = collections.Counter()
    for algo, rs in rows.items():
        bugs = [r for r in rs if r[0].expected != "pass"]
        good = [r for r in rs if r[0].expected == "pass"]
        caught = sum(v == e.expected for e, v, _ in bugs)
        passed = sum(v == "pass" for _, v, _ in good)
        plain = min((s for e, _, s in good if e.exposes == "release"), default=float("nan"))
        print(f"| {algo} | {caught} of {len(bugs)} | {passed} of {len(good)} | {plain:.1f} s / {max(s for *_, s in rs):.1f} s |")
        tot.update(caught=caught, bugs=len(bugs), passed=passed, good=len(good))
    print(f"| all | {tot['caught']} of {tot['bugs']} | {tot['passed']} of {tot['good']} | |")


if __name__ == "__main__":
    main()
