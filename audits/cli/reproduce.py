"""``userdp reproduce``: reproduce a paper's figures and claims (the reproductions are the
registry's), each claim with a verdict (``audits/engine/verdicts.py``), as text or JSON (schema
userdp.reproduction/2, documented in the docstring of ``audits/cli/main.py``)."""

from __future__ import annotations

import inspect

from userdp.audits.engine.registry import all_reproductions, get_reproduction
from userdp.audits.engine.report import Progress, table, to_json
from userdp.audits.engine.verdicts import FAILS, HOLDS, UNDECIDED, VERDICTS, Interval, check_claims
from userdp.audits.cli.common import EXIT_FINDING, EXIT_OK, check_plot_target
from userdp.audits.cli.targets import UsageError

__all__ = ["add_parser", "run", "SHOWN_INTERVALS"]


def add_parser(sub, common) -> None:
    """The ``reproduce`` subcommand."""
    rp = sub.add_parser("reproduce", parents=[common], help="reproduce a paper's figures and claims")
    rp.add_argument("name", nargs="?", help="reproduction name (see `userdp reproduce --list`)")
    rp.add_argument("--list", action="store_true", help="list the reproductions and exit")
    rp.add_argument(
        "--quick",
        action="store_true",
        help="a smaller run (under a minute) that still checks every claim, on fewer "
        "replications: more claims may be undecided",
    )
    rp.add_argument("--json", action="store_true", help="print JSON (schema userdp.reproduction/2)")
    rp.add_argument("--plot", metavar="FILE", help="write the reproduction's figure (needs matplotlib)")


def run(args) -> int:
    """``userdp reproduce``: the exit status."""
    if args.list:
        if args.name:
            raise UsageError("reproduce --list takes no NAME")
        rows = [{"name": n, "what": _first_line(f)} for n, f in all_reproductions().items()]
        print(table(rows))
        return EXIT_OK
    if not args.name:
        raise UsageError("reproduce needs a NAME; `userdp reproduce --list` shows them")
    try:
        func = get_reproduction(args.name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    if args.plot:
        check_plot_target(args.plot)
    progress = Progress(args.name)
    out = func(plot=args.plot, quick=args.quick, progress=progress.step)
    claims = out.get("claims", [])
    check_claims(claims, args.name)  # a verdict and intervals per claim (verdicts.py)
    summary = {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}
    if args.json:
        print(
            to_json(
                "userdp.reproduction/2",
                {
                    "name": args.name,
                    "quick": args.quick,
                    "elapsed_seconds": progress.elapsed(),
                    **out,
                    "summary": summary,
                },
            )
        )
    else:
        _print_reproduction(args, out, claims, summary, progress.elapsed())
    if args.plot:
        progress.note(f"plot written to {args.plot}")
    return EXIT_FINDING if summary[FAILS] else EXIT_OK


def _first_line(func) -> str:
    return (inspect.getdoc(func) or "").split("\n\n")[0].replace("\n", " ")


SHOWN_INTERVALS = 4  # per claim in the text; the JSON has all of them


def _print_reproduction(args, out, claims, summary, elapsed) -> None:
    print(f"{args.name}{' (quick)' if args.quick else ''}: {_first_line(get_reproduction(args.name))}")
    if out.get("setup"):
        print(f"setup: {out['setup']}")
    tab = out.get("table")
    if isinstance(tab, str):
        print(tab)
    elif tab:
        print()
        print(table(tab, indent="  "))
    print()
    for c in claims:
        print(f"[{c['verdict'] if c['verdict'] != FAILS else 'FAILS'}] {c['statement']}")
        if c.get("evidence"):
            print(f"        {c['evidence']}")
        for line in _deciding_intervals(c):
            print(f"        - {line}")
    k = max((c.get("interval_ends", 0) for c in claims), default=0)
    error = next((c["error"] for c in claims if c.get("error") is not None), None)
    alpha = next((c["alpha"] for c in claims if c.get("alpha") is not None), None)
    print(
        f"\n{summary[HOLDS]} of {len(claims)} claims hold, {summary[UNDECIDED]} undecided, {summary[FAILS]} "
        f"fail{'s' if summary[FAILS] == 1 else ''}; {elapsed:.1f} s."
    )
    if alpha is not None:
        print(
            f"Error {error:g} shared by {k} interval ends, each at one-sided level {alpha:.2g} (Bonferroni): no "
            f"decided verdict is wrong with probability >= 1 - {error:g}. Undecided: the interval straddles the "
            f"claim's boundary."
        )


def _deciding_intervals(c) -> list[str]:
    """The claim's intervals, at most SHOWN_INTERVALS: the failing, then the undecided, then
    the holding ones closest to their boundary (the ones that decide the verdict)."""
    rank = {FAILS: 0, UNDECIDED: 1, HOLDS: 2}
    ivs = sorted(c["intervals"], key=lambda i: (rank[i["verdict"]], _margin(i)))
    lines = [i["text"] for i in ivs[:SHOWN_INTERVALS]]
    if len(ivs) > SHOWN_INTERVALS:
        lines.append(
            f"... {len(ivs) - SHOWN_INTERVALS} more ({sum(i['verdict'] == HOLDS for i in ivs)} of "
            f"{len(ivs)} hold; --json has all)"
        )
    return lines


def _margin(i) -> float:
    return Interval.from_dict(i).margin()
