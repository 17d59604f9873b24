"""The command line of the process protocol (``audits/validation/protocol.py``) and of the test vectors.

Kept apart from ``cli.py``, which calls these in a few places:

- ``userdp validate ALGORITHM --command "CMD ..."``: ``add_program_arguments`` adds the options,
  ``validate_target`` builds validate's target from the program (its stages in the algorithm's
  adapter type, its mechanism) and ends the program afterwards;
- ``userdp audit --command "CMD ..." --claim ... --pair FIRST SECOND ...``: ``run_audit`` (the
  options of ``--mechanism``: ``--pair``, ``--kwargs``, ``--claim``, ``--relation``, ``--output``);
- ``userdp vectors export [ALGORITHM ...] --out DIR [--index FILE]`` and ``userdp vectors check
  ALGORITHM --command "CMD ..." [--file FILE]``: ``add_vectors_parser``, ``run_vectors``.

Exit statuses are cli.py's: a program that cannot be started is a usage error (2); one that
breaks the protocol (``protocol.TargetError``) is an error of the target (3), never a finding.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os

import numpy as np

from userdp.audits.validation.protocol import (
    DEFAULT_BATCH,
    DEFAULT_TIMEOUT,
    MAX_SIZE,
    CommandError,
    ProcessTarget,
    TargetError,
    decode_dataset,
)

__all__ = [
    "add_program_arguments",
    "validate_target",
    "pair_dataset",
    "audit_target",
    "run_audit",
    "add_vectors_parser",
    "run_vectors",
    "program_error",
]


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not 0 < v <= 86_400:
        raise argparse.ArgumentTypeError(f"must be a number of seconds in (0, 86400], got {text!r}")
    return v


def _batch(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if not 1 <= v <= MAX_SIZE:
        raise argparse.ArgumentTypeError(f"must be an integer in [1, {MAX_SIZE}] (releases per request), got {text!r}")
    return v


def add_program_arguments(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    """``--command`` (dest ``program``) and the protocol's options."""
    parser.add_argument(
        "--command",
        dest="program",
        metavar="CMD",
        required=required,
        help="a program that speaks userdp's JSON-lines protocol on stdin/stdout, in any language "
        '(docs/protocol.md), e.g. "node examples/js/capped_sum.js"; split like a shell command, '
        "run without a shell",
    )
    parser.add_argument(
        "--batch",
        type=_batch,
        default=None,
        metavar="N",
        help=f"with --command: releases per request (default {DEFAULT_BATCH})",
    )
    parser.add_argument(
        "--transcript",
        metavar="FILE",
        help="with --command: append every request ('>') and response ('<') line to FILE",
    )


_OPTIONS = ("batch", "transcript")  # --timeout is the command's own (audits/cli/main.py): with --command it is
# also the program's time per response


def uses_program(args) -> bool:
    """Whether the command line asks for a program: ``--command`` or one of its options."""
    return getattr(args, "program", None) is not None or any(getattr(args, k, None) is not None for k in _OPTIONS)


def _check_options(args) -> None:
    from userdp.audits.cli.targets import UsageError

    stray = [f"--{k}" for k in _OPTIONS if getattr(args, k, None) is not None]
    if getattr(args, "program", None) is None and stray:
        raise UsageError(f"{', '.join(stray)} go(es) with --command CMD")


def _program(args, algorithm: str | None) -> ProcessTarget:
    _check_options(args)
    if args.transcript is not None:
        folder = os.path.dirname(os.path.abspath(args.transcript))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            from userdp.audits.cli.targets import UsageError

            raise UsageError(f"--transcript {args.transcript}: the directory {folder} is not writable")
    timeout = DEFAULT_TIMEOUT if getattr(args, "timeout", None) is None else args.timeout
    return ProcessTarget(
        args.program,
        algorithm=algorithm,
        timeout=timeout,
        batch=args.batch or DEFAULT_BATCH,
        transcript=args.transcript,
    )


def program_error(exc: TargetError) -> Exception:
    """A ``TargetError`` as the command line reports it: a command that cannot be started is a
    usage error (exit 2), any other breach of the protocol an error of the target (exit 3)."""
    from userdp.audits.cli.targets import UsageError, UserCodeError

    return (UsageError if isinstance(exc, CommandError) else UserCodeError)(str(exc))


def _adapter_for(program: ProcessTarget, adapter_type):
    from userdp.audits.cli.targets import UsageError

    try:
        return program.adapter(adapter_type, name=f'--command "{program.command}"')
    except ValueError as exc:
        raise UsageError(str(exc)) from None


@contextlib.contextmanager
def validate_target(args):
    """Validate's target: ``args.target`` (module:object) unchanged, or, with ``--command``, a
    ``PythonTarget`` (audits/validation/target.py) whose
    adapter and release are the program's (in the suite's adapter type). The
    program is ended on leaving; a ``TargetError`` leaves as ``program_error``."""
    from userdp.audits.cli.targets import UsageError

    _check_options(args)
    if getattr(args, "program", None) is None:
        if args.target is None:
            raise UsageError('validate needs a TARGET (module:object) or --command "CMD ..."')
        yield args.target
        return
    if args.target is not None:
        raise UsageError(f"give TARGET ({args.target}) or --command, not both")
    if getattr(args, "param_map", None):
        raise UsageError(
            "--param-map renames a Python target's parameters; a --command program takes the "
            "reference's names (docs/protocol.md)"
        )
    from userdp.audits import validation as VS
    from userdp.audits.validation.target import PythonTarget

    spec = VS.get(args.algorithm)
    adapter_type = getattr(importlib.import_module(spec.suite), "ADAPTER", None)
    program = _program(args, args.algorithm)
    try:
        try:
            adapter = _adapter_for(program, adapter_type)
            yield PythonTarget(f'--command "{program.command}"', adapter, adapter.mechanism, plain=not program.stages)
        except TargetError as exc:
            raise program_error(exc) from None
    finally:
        program.close()


# ------------------------------------------------------------------ userdp audit --command
def _json(text: str, flag: str):
    from userdp.audits.cli.targets import UsageError

    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{flag} must be JSON, got {text!r}: {exc}") from None


def pair_dataset(obj, flag: str = "--pair"):
    """A ``--pair`` side for a program: a JSON array of numbers (one record per user: user ids
    0, 1, ...; rows of an array of arrays are vector records; [] is the empty dataset) or the
    protocol's dataset object ({"values": ..., "user_ids": ..., ...})."""
    from userdp.reference.data import EMPTY, UserDataset
    from userdp.audits.cli.targets import UsageError

    try:
        if isinstance(obj, dict):
            return decode_dataset(obj)
        if isinstance(obj, list):
            if not obj:
                return EMPTY
            a = np.asarray(obj, dtype=float)
            return UserDataset(a, np.arange(a.shape[0]))
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{flag}: {json.dumps(obj)[:80]} is not a dataset: {exc}") from None
    raise UsageError(
        f"{flag}: a side must be a JSON array of numbers or a dataset object "
        f'{{"values": [...], "user_ids": [...]}}, got {json.dumps(obj)[:80]}'
    )


def audit_target(args):
    """(``targets.Target``, the ``ProcessTarget``) for ``userdp audit --command``."""
    from userdp.audits.engine.sampling import AuditPair
    from userdp.audits.cli.targets import (
        CLAIM_FORMS,
        DEFAULT_SAMPLES,
        Target,
        UsageError,
        check_pairs,
        check_relation_name,
        parse_claim,
    )

    _check_options(args)
    if args.name or args.param or args.mechanism or args.all:
        raise UsageError("--command replaces NAME, --param, --mechanism and --all: give one of them")
    if args.claim is None:
        raise UsageError(f"--command: give the claim with --claim, one of: {', '.join(CLAIM_FORMS)}")
    claim = parse_claim(args.claim)
    check_relation_name(args.relation)
    kw = {} if args.kwargs is None else _json(args.kwargs, "--kwargs")
    if not isinstance(kw, dict):
        raise UsageError(f"--kwargs must be a JSON object (the program's params), got {type(kw).__name__}")
    if not args.pair:
        raise UsageError("--command: give at least one --pair FIRST SECOND (two JSON datasets)")
    pairs = [
        AuditPair(pair_dataset(_json(a, "--pair")), pair_dataset(_json(b, "--pair")), f"--pair {a} {b}", None, i)
        for i, (a, b) in enumerate(args.pair)
    ]
    checked = None if args.relation is None else check_pairs(args.relation, pairs)
    program = _program(args, None)

    def mechanism(dataset, rng, size):
        return program.mechanism(dataset, rng, size, **kw)

    mechanism.__qualname__ = mechanism.__name__ = f"`{program.command}`"  # how reports name it
    mechanism.__module__ = "program"
    target = Target(
        name=f"--command {program.command}",
        kind="external",
        relation=args.relation or "unspecified",
        mechanism=mechanism,
        pairs=pairs,
        claim=claim,
        output=args.output,
        samples=args.samples or DEFAULT_SAMPLES,
        params=kw,
        overrides=kw,
        expected=None,
        noise=None,
        relation_check=checked,
    )
    return target, program


def run_audit(args, audit) -> int:
    """``userdp audit --command``: ``audit(target, args)`` is audits/cli/main.py's audit of a
    built target (which has refused a bad --plot before calling this)."""
    target, program = audit_target(args)
    try:
        try:
            return audit(target, args)
        except TargetError as exc:
            raise program_error(exc) from None
    finally:
        program.close()


# ------------------------------------------------------------------ userdp vectors
def add_vectors_parser(sub, common) -> None:
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
    ex.add_argument("--out", required=True, metavar="DIR", help="the directory to write ALGORITHM.json into")
    ex.add_argument("--index", metavar="FILE", help="also write the markdown index (docs/vectors.md)")
    ck = vs.add_parser(
        "check",
        parents=[common],
        help="run an algorithm's vectors against a program",
        epilog="Exit status: 0 every vector passes; 1 a vector fails; 2 usage error; 3 the program "
        "broke the protocol (crashed, hung, wrote garbage).",
    )
    ck.add_argument("algorithm", help="a validatable algorithm (`userdp list`)")
    add_program_arguments(ck, required=True)
    ck.add_argument(
        "--file",
        metavar="FILE",
        help="the vectors to run (an exported file; default: built from the installed reference)",
    )
    ck.add_argument("--json", action="store_true", help="print JSON (schema userdp.vectors-check/1)")


def run_vectors(args) -> int:
    """``userdp vectors export`` and ``userdp vectors check``: the exit status."""
    from userdp.audits.validation import vectors as Vec
    from userdp.audits.engine.report import to_json
    from userdp.audits.cli.targets import UsageError
    from userdp.audits.validation.vector_cases import designs

    known = designs()

    if args.vectors_command == "export":
        if not os.path.isdir(args.out):
            raise UsageError(f"--out {args.out}: not a directory")
        unknown = [a for a in args.algorithms if a not in known]
        if unknown:
            raise UsageError(
                f"no vectors for {', '.join(unknown)}; algorithms with vectors: {', '.join(sorted(known))}"
            )
        paths = Vec.export(args.algorithms or None, args.out)
        for p in paths:
            print(p)
        if args.index:
            docs = [Vec.load(p) for p in paths]
            with open(args.index, "w", encoding="utf-8") as fh:
                fh.write(Vec.index_markdown(docs))
            print(args.index)
        return 0
    if args.algorithm not in known:
        raise UsageError(f"no vectors for {args.algorithm}; algorithms with vectors: {', '.join(sorted(known))}")
    if args.file:
        try:
            doc = Vec.load(args.file)
        except (OSError, ValueError) as exc:
            raise UsageError(f"--file {args.file}: {exc}") from None
        if doc["algorithm"] != args.algorithm:
            raise UsageError(f"--file {args.file} holds the vectors of {doc['algorithm']}, not {args.algorithm}")
    else:
        doc = Vec.build(args.algorithm)
    program = _program(args, args.algorithm)
    try:
        try:
            impl = _adapter_for(program, known[args.algorithm].adapter_type())
            report = Vec.check(doc, impl, name=f'--command "{program.command}"')
        except TargetError as exc:
            raise program_error(exc) from None
    finally:
        program.close()
    if args.json:
        print(to_json("userdp.vectors-check/1", report.to_dict()))
    else:
        print(Vec.format_check(report))
    return 0 if report.verdict == "pass" else 1
