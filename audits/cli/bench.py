"""``userdp bench``: every algorithm timed against its baseline (``audits/bench/run.py`` runs
it; the benchmarks are in ``audits/bench/cases.py``)."""

from __future__ import annotations

import argparse

from userdp.audits.cli.targets import UsageError

__all__ = ["add_parser", "run"]


def add_parser(sub, common) -> None:
    """The ``bench`` subcommand."""
    bp = sub.add_parser(
        "bench",
        parents=[common],
        help="time every algorithm against its simplest baseline; exit 1 if a target is missed",
    )
    bp.description = (
        "Time every algorithm against its simplest baseline (ratios in one run), the scaling "
        "slopes and the peak memory; print the machine. Exit status: 0 every target met, 1 a "
        "target missed (or a wrong result), 2 usage error, 3 a benchmark raised (--debug: its "
        "traceback). Progress goes to stderr."
    )
    bp.add_argument("--quick", action="store_true", help="the short version (under 5 minutes on 2 cores)")
    bp.add_argument("--json", action="store_true", help="print JSON (schema userdp.bench/1)")
    bp.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="run only this benchmark (repeatable); an unknown name lists the known ones",
    )
    bp.add_argument("--scale", type=float, default=1.0, help=argparse.SUPPRESS)  # tests: every size times this


def run(args) -> int:
    """``userdp bench``: the exit status (``audits/bench/run.py``)."""
    from userdp.audits.bench.run import command

    if not 0.0 < args.scale <= 1.0:
        raise UsageError(f"--scale must lie in (0, 1], got {args.scale!r}")
    return command(args)
