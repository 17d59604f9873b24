"""Run every gallery entry with the real ``userdp`` command and print the README's table.

    python -m examples.gallery_table [--quick] [--workers N]

Each entry is ``userdp audit MODULE:TARGET --relation R --samples N --confidence 0.9999
--workers 2 --json`` from the repository root; ``time`` is the command's wall clock (the
interpreter's start and the libraries' imports included). Without ``--quick`` the sample
counts are the entries' ``figure_samples`` (the README's figures, ``tests/gallery``'s slow
test); with it, the default test run's ``samples``. The exit status is 1 if some verdict
is not the expected one.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import gallery_diffprivlib, gallery_opendp, gallery_pipelinedp, gallery_pydp

REPO = Path(__file__).resolve().parents[1]
CONFIDENCE = 0.9999  # a correct mechanism is flagged with probability <= 1e-4 per audit
WORKERS = 2
MODULES = (gallery_pipelinedp, gallery_diffprivlib, gallery_opendp, gallery_pydp)
ENTRIES = [e for m in MODULES for e in m.ENTRIES]


def userdp_command() -> str:
    """The ``userdp`` console script of this interpreter's environment (else the PATH's)."""
    here = Path(sys.executable).with_name("userdp")
    found = str(here) if here.exists() else shutil.which("userdp")
    if found is None:
        raise FileNotFoundError("no `userdp` command: pip install -e '.[gallery]' first")
    return found


def command(entry, samples: int, workers: int = WORKERS, confidence: float = CONFIDENCE) -> list[str]:
    return [
        "userdp",
        "audit",
        entry.target,
        "--relation",
        entry.relation,
        "--samples",
        str(samples),
        "--confidence",
        str(confidence),
        "--workers",
        str(workers),
        "--json",
    ]


def run(entry, samples: int, workers: int = WORKERS) -> dict:
    """The entry's audit by the real command line: its JSON result, with the wall time and exit status."""
    cmd = command(entry, samples, workers)
    t0 = time.perf_counter()
    proc = subprocess.run([userdp_command(), *cmd[1:]], cwd=REPO, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}")
    result = json.loads(proc.stdout)
    return {**result, "wall_seconds": wall, "exit_status": proc.returncode}


def _claim(c: dict) -> str:
    p = c["params"]
    if c["kind"] == "pure":
        return f"eps={p['epsilon']:.10g}"
    return f"(eps={p['epsilon']:g}, delta={p['delta']:g})"


def row(entry, r: dict) -> str:
    tight = r["tightness"]
    tight = "-" if tight is None or not math.isfinite(tight) else f"{tight:.3f}"
    verdict = r["verdict"] + ("" if r["verdict"] == entry.expected else " (NOT AS EXPECTED)")
    return (
        f"| {entry.library} | {entry.version} | {entry.mechanism} | {entry.relation} | {_claim(r['claim'])} "
        f"| {r['samples']:,} | {r['epsilon_lower_bound']:.3f} | {tight} | {verdict} | {r['wall_seconds']:.1f} s |"
    )


HEADER = (
    "| library | version | mechanism | relation | claim | samples per side | eps_lb | tightness | verdict "
    "| time |\n|---|---|---|---|---|---|---|---|---|---|"
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m examples.gallery_table", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the default test run's sample counts")
    ap.add_argument("--workers", type=int, default=WORKERS)
    args = ap.parse_args(argv)
    t0, ok = time.perf_counter(), True
    print(HEADER)
    for e in ENTRIES:
        r = run(e, e.samples if args.quick else e.figure_samples, args.workers)
        ok &= r["verdict"] == e.expected
        print(row(e, r), flush=True)
    print(
        f"\n{len(ENTRIES)} entries, {time.perf_counter() - t0:.0f} s in total, --workers {args.workers}, "
        f"confidence {CONFIDENCE}",
        file=sys.stderr,
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
