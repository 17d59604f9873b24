"""``userdp vectors``: ``export`` writes the reference's test vectors (``audits/validation/vectors.py``,
docs/vectors.md) into ``--out`` (created if missing), ``check`` runs an algorithm's vectors against a
``--command`` program (built by ``audits/cli/program.py``), statistical vectors included unless
``--no-statistical``, supervised as ``validate`` is
(``supervise.py``: no process of the program outlives the command). A ``--file`` that breaks the
vector schema, or a program of which no vector checks anything, is a usage error (exit 2): a check
passes only when at least one vector was checked."""

from __future__ import annotations

import os

from userdp.audits.validation import vectors as Vec
from userdp.audits.engine.report import results, to_json
from userdp.audits.cli.common import EXIT_FINDING, EXIT_OK, EXIT_USAGE, check_writable, watch_options
from userdp.audits.cli.program import add_program_arguments, program_adapter, program_target
from userdp.audits.cli.targets import UsageError

__all__ = ["add_parser", "run"]


def add_parser(sub, common) -> None:
    """The ``vectors`` subcommand: ``export`` and ``check``."""
    vp = sub.add_parser(
        "vectors",
        parents=[common],
        help="export the reference's test vectors, or check a program against them",
        description="Test vectors (audits/validation/vectors.py, docs/vectors.md): one JSON "
        "file per algorithm with the reference's noise-free stages and the inputs that must be "
        "refused, each vector flagged with the bug classes it exposes.",
    )
    vs = vp.add_subparsers(
        dest="vectors_command",
        required=True,
        metavar="{export,check}",
        help="export: write the vector files; check: run them against a program",
    )
    ex = vs.add_parser(
        "export",
        parents=[common],
        help="write one JSON file per algorithm",
        epilog="Exit status: 0 written; 2 usage error.",
    )
    ex.add_argument(
        "algorithms", nargs="*", metavar="ALGORITHM", help="validatable algorithms (default: every one, `userdp list`)"
    )
    ex.add_argument(
        "--out", required=True, metavar="DIR", help="the directory to write ALGORITHM.json into (created if missing)"
    )
    ex.add_argument("--index", metavar="FILE", help="also write the markdown index (docs/vectors.md)")
    ck = vs.add_parser(
        "check",
        parents=[common],
        help="run an algorithm's vectors against a program",
        epilog="Exit status: 0 every vector checked passes (at least one is checked); 1 a vector fails (a "
        "statistical vector fails a correct release with probability at most 1e-4, stated in the file); 2 usage "
        "error (a malformed --file, naming the field; a program with none of the file's stages and no release, "
        "so that nothing would be checked); 3 the program broke the protocol (crashed, hung, wrote garbage). "
        "Supervised like validate: no process of the program outlives the command.",
    )
    ck.add_argument("algorithm", help="a validatable algorithm (`userdp list`)")
    add_program_arguments(ck, required=True)
    ck.add_argument(
        "--file",
        metavar="FILE",
        help="the vectors to run (an exported file; default: built from the installed reference)",
    )
    ck.add_argument(
        "--no-statistical",
        action="store_true",
        help="skip the statistical vectors (n releases per side of a neighbouring pair, tested against the "
        "reference's noise law; each fails a correct release with probability at most 1e-4)",
    )
    ck.add_argument("--json", action="store_true", help="print JSON (schema userdp.vectors-check/1)")
    watch_options(ck)


def run(args) -> int:
    """``userdp vectors export`` and ``userdp vectors check``: the exit status."""
    from userdp.audits.validation.vector_cases import designs

    known = designs()

    if args.vectors_command == "export":
        return _export(args, known)
    if args.algorithm not in known:
        raise UsageError(f"no vectors for {args.algorithm}; algorithms with vectors: {', '.join(sorted(known))}")
    if args.file:
        try:
            doc = Vec.load(args.file)
        except (OSError, ValueError) as exc:
            raise UsageError(f"--file {args.file}: {exc}") from None
        if doc["algorithm"] != args.algorithm:
            raise UsageError(f"--file {args.file} holds the vectors of {doc['algorithm']}, not {args.algorithm}")
        extra = [s for s in doc["stages"] if s not in known[args.algorithm].stages]
        if extra:
            raise UsageError(
                f"--file {args.file}: /stages names {extra}, which {args.algorithm} does not have (its stages: "
                f"{', '.join(known[args.algorithm].stages)})"
            )
    else:
        doc = Vec.build(args.algorithm)
    with program_target(args, args.algorithm) as program:
        impl = program_adapter(program, known[args.algorithm].adapter_type())
        if not Vec.checkable(doc, impl):
            raise UsageError(
                f'--command "{program.command}": nothing to check: the program declares '
                f"{'stages ' + ', '.join(program.stages) if program.stages else 'no stage'} and "
                f"{'releases' if impl.mechanism is not None else 'no release'}, and no vector of "
                f"{args.file or args.algorithm} checks any of that (its stages: {', '.join(doc['stages'])}); "
                "every vector would be skipped, which is not a pass"
            )
        report = Vec.check(doc, impl, name=f'--command "{program.command}"', statistical=not args.no_statistical)
    with results():
        if args.json:
            print(to_json("userdp.vectors-check/1", report.to_dict()))
        else:
            print(Vec.format_check(report))
    return {"pass": EXIT_OK, "fail": EXIT_FINDING}.get(report.verdict, EXIT_USAGE)


def _export(args, known) -> int:
    """``userdp vectors export``: DIR is created if missing (with its parents)."""
    unknown = [a for a in args.algorithms if a not in known]
    if unknown:
        raise UsageError(f"no vectors for {', '.join(unknown)}; algorithms with vectors: {', '.join(sorted(known))}")
    if args.index:
        check_writable(args.index, "--index")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out}: not a directory")
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot create the directory: {exc.strerror or exc}") from None
    if not os.access(args.out, os.W_OK | os.X_OK):
        raise UsageError(f"--out {args.out}: not writable")
    try:
        paths = Vec.export(args.algorithms or None, args.out)
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot write the vector files: {exc.strerror or exc}") from None
    if args.index:
        docs = [Vec.load(p) for p in paths]
        try:
            with open(args.index, "w", encoding="utf-8") as fh:
                fh.write(Vec.index_markdown(docs))
        except OSError as exc:
            raise UsageError(f"--index {args.index}: cannot write it: {exc.strerror or exc}") from None
    with results():
        for p in paths + ([args.index] if args.index else []):
            print(p)
    return EXIT_OK
