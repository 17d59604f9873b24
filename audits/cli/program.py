"""The ``--command`` target: a program over the process protocol (``audits/validation/protocol.py``),
built in one place for the three commands that take one.

- ``add_program_arguments`` adds ``--command`` (dest ``program``), ``--batch`` and ``--transcript``;
  ``uses_program`` tells whether a command line asks for a program;
- ``program_target`` is the one place a ``ProcessTarget`` is built: it checks the options, starts
  nothing (the program starts lazily), turns a ``protocol.TargetError`` raised while it is in use
  into ``program_error``, and ends the program on leaving;
- ``userdp validate ALGORITHM --command "CMD ..."``: ``program_target`` and ``program_adapter``
  (``audits/cli/validate.py``, which wraps the adapter in validate's target);
- ``userdp audit --command "CMD ..." --claim ... --pair FIRST SECOND ...``: ``audit_target``
  (``audits/cli/audit.py``; the options of ``--mechanism``: ``--pair``, ``--kwargs``, ``--claim``,
  ``--relation``, ``--output``);
- ``userdp vectors check ALGORITHM --command "CMD ..."``: ``program_target`` and
  ``program_adapter`` (``audits/cli/vectors.py``).

Exit statuses are the command line's (``audits/cli/common.py``): a program that cannot be started
is a usage error (2); one that breaks the protocol (``protocol.TargetError``) is an error of the
target (3), never a finding. The protocol module is the transport and knows nothing of this one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os

import numpy as np

from userdp.reference.data import EMPTY, UserDataset
from userdp.audits.engine.parallel import SEEDED
from userdp.audits.engine.sampling import AuditPair
from userdp.audits.validation.protocol import (
    DEFAULT_BATCH,
    DEFAULT_TIMEOUT,
    MAX_SIZE,
    CommandError,
    ProcessTarget,
    TargetError,
    decode_dataset,
)
from userdp.audits.cli.targets import (
    CLAIM_FORMS,
    DEFAULT_SAMPLES,
    Target,
    UsageError,
    UserCodeError,
    check_pairs,
    check_relation_name,
    parse_claim,
)

__all__ = [
    "add_program_arguments",
    "uses_program",
    "program_target",
    "program_adapter",
    "program_error",
    "check_program_options",
    "pair_dataset",
    "SIDE_FORMS",
    "audit_target",
]


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


_OPTIONS = ("batch", "transcript")  # --timeout is the command's own (audits/cli/common.py): with --command it is
# also the program's time per response


def uses_program(args) -> bool:
    """Whether the command line asks for a program: ``--command`` or one of its options."""
    return getattr(args, "program", None) is not None or any(getattr(args, k, None) is not None for k in _OPTIONS)


def check_program_options(args) -> None:
    """Refuse ``--batch`` or ``--transcript`` without ``--command`` (a usage error)."""
    stray = [f"--{k}" for k in _OPTIONS if getattr(args, k, None) is not None]
    if getattr(args, "program", None) is None and stray:
        raise UsageError(f"{', '.join(stray)} go(es) with --command CMD")


@contextlib.contextmanager
def program_target(args, algorithm: str | None):
    """The ``ProcessTarget`` of ``--command`` (``algorithm`` named in its hello, None for an
    audit), built here only. A ``TargetError`` raised while it is in use leaves as
    ``program_error``; the program is ended on leaving."""
    check_program_options(args)
    if args.transcript is not None:
        folder = os.path.dirname(os.path.abspath(args.transcript))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            raise UsageError(f"--transcript {args.transcript}: the directory {folder} is not writable")
    timeout = DEFAULT_TIMEOUT if getattr(args, "timeout", None) is None else args.timeout
    program = ProcessTarget(
        args.program,
        algorithm=algorithm,
        timeout=timeout,
        batch=args.batch or DEFAULT_BATCH,
        transcript=args.transcript,
    )
    try:
        try:
            if program.transcript is not None:  # the hello written now: a transcript that cannot be
                program.hello  # written (a full device) is a usage error before any work, for every command
            yield program
        except TargetError as exc:
            raise program_error(exc) from None
    finally:
        program.close()


def program_error(exc: TargetError) -> Exception:
    """A ``TargetError`` as the command line reports it: a command that cannot be started is a
    usage error (exit 2), any other breach of the protocol an error of the target (exit 3)."""
    return (UsageError if isinstance(exc, CommandError) else UserCodeError)(str(exc))


def program_adapter(program: ProcessTarget, adapter_type):
    """The program's stages and mechanism in ``adapter_type`` (``ProcessTarget.adapter``); a
    program whose stages the type does not have is a usage error."""
    try:
        return program.adapter(adapter_type, name=f'--command "{program.command}"')
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# ------------------------------------------------------------------ userdp audit --command
def _json(text: str, flag: str):
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{flag} must be JSON, got {text!r}: {exc}") from None


SIDE_FORMS = (
    "a side is a JSON array of numbers, one record per user ([1.5, 2, 0.5]: users 0, 1, 2), an array of "
    "equal-length arrays (one vector record per user: [[1, 2], [3, 4]]), or, for users with several records, "
    'a dataset object {"values": [1, 2, 3], "user_ids": [0, 0, 1]} (user 0 has the records 1 and 2)'
)


def _ragged(obj) -> str | None:
    """Why a JSON array is not rectangular (rows of different lengths, numbers beside arrays), or None."""
    if not isinstance(obj, list):
        return None
    kinds = {isinstance(x, list) for x in obj}
    if kinds == {True, False}:
        return "it mixes numbers and arrays"
    if kinds == {True}:
        lengths = sorted({len(x) for x in obj})
        if len(lengths) > 1:
            return (
                f"its inner arrays have different lengths ({', '.join(map(str, lengths))}); a list of each "
                "user's records is not a side"
            )
        return next((why for why in map(_ragged, obj) if why is not None), None)
    return None


def pair_dataset(obj, flag: str = "--pair"):
    """A ``--pair`` side for a program: a JSON array of numbers (one record per user: user ids
    0, 1, ...; rows of an array of arrays are vector records; [] is the empty dataset) or the
    protocol's dataset object ({"values": ..., "user_ids": ..., ...}). A malformed side is a
    UsageError that says what a valid side looks like (``SIDE_FORMS``)."""
    why = _ragged(obj.get("values") if isinstance(obj, dict) else obj)
    if why is not None:
        where = "its values: " if isinstance(obj, dict) else ""
        raise UsageError(f"{flag}: {json.dumps(obj)[:80]} is not a dataset: {where}{why}; {SIDE_FORMS}")
    try:
        if isinstance(obj, dict):
            return decode_dataset(obj)
        if isinstance(obj, list):
            if not obj:
                return EMPTY
            a = np.asarray(obj, dtype=float)
            return UserDataset(a, np.arange(a.shape[0]))
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{flag}: {json.dumps(obj)[:80]} is not a dataset: {exc}; {SIDE_FORMS}") from None
    raise UsageError(f"{flag}: {json.dumps(obj)[:80]} is not a JSON array or a dataset object; {SIDE_FORMS}")


@contextlib.contextmanager
def audit_target(args):
    """The ``targets.Target`` of ``userdp audit --command``, its mechanism the program's; the
    program is ended on leaving, and a ``TargetError`` leaves as ``program_error``."""
    check_program_options(args)
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
    with program_target(args, None) as program:

        def mechanism(dataset, rng, size):
            return program.mechanism(dataset, rng, size, **kw)

        mechanism.__qualname__ = mechanism.__name__ = f"`{program.command}`"  # how reports name it
        mechanism.__module__ = "program"
        setattr(mechanism, SEEDED, True)  # the protocol: one seed, the same releases (harness checks it)
        yield Target(
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
