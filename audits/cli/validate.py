"""``userdp validate``: an implementation of a registered algorithm against the reference
(``audits/validation/run.py`` runs it; a ``--command`` program is built by ``audits/cli/program.py``).

Exit statuses: those of ``audits/cli/common.py`` and ``EXIT_PARTIAL`` (4).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import time

from userdp.audits.engine.report import results, to_json
from userdp.audits.cli import supervise
from userdp.audits.cli.common import EXIT_FINDING, EXIT_OK, check_writable, int_at_least, watch_options
from userdp.audits.cli.program import (
    add_program_arguments,
    check_program_options,
    program_adapter,
    program_target,
)
from userdp.audits.cli.targets import UsageError

__all__ = ["add_parser", "run", "render", "EXIT_PARTIAL"]

EXIT_PARTIAL = 4  # validate: what ran passed, but the release was not tested (without --allow-partial)


def add_parser(sub, common) -> None:
    """The ``validate`` subcommand."""
    vp = sub.add_parser(
        "validate",
        parents=[common],
        help="validate your implementation of a paper's algorithm: properties, differential test, independence, audit",
    )
    vp.description = (
        "Validate an implementation of a registered algorithm against the reference: the paper's "
        "property suite on the stages it has, its releases against the reference's on fixed and "
        "generated cases (mean, noise scale, distribution, structure), the independence of the releases "
        "of one call, the inputs the reference refuses under an input policy, and audits on worst-case "
        "and aimed pairs. Graded verdict: privacy violation, invariant violation, deviation from "
        "reference, not independent, or pass. False alarms on a correct implementation: at most 1e-4 "
        "per run. `userdp validate ALGORITHM --signature` shows how to call yours."
    )
    vp.epilog = (
        "Exit status: 0 pass; 1 a finding (any verdict but pass); 2 usage error (unknown algorithm, TARGET "
        "not importable, with no stage, or not callable with the reference's keywords); 3 TARGET raised or "
        "returned the wrong shape; 4 a partial pass: TARGET has no release, so the release and its privacy "
        "were not tested (0 with --allow-partial)."
    )
    _target_arguments(vp)
    _run_arguments(vp)


def _target_arguments(vp) -> None:
    """What is validated: ALGORITHM, TARGET or --command, what to print instead, how to call TARGET."""
    vp.add_argument("algorithm", help="a registered algorithm (`userdp list`, column validate)")
    vp.add_argument(
        "target",
        nargs="?",
        help="module:object: a function making one release per call, f(dataset, "
        "rng, **params), a batched one, f(dataset, rng, size, **params), or an Adapter "
        "(userdp.properties.adapter) with stages; the current directory is on the import path. "
        "Or --command instead",
    )
    add_program_arguments(vp)
    vp.add_argument(
        "--signature",
        action="store_true",
        help="print the accepted call shapes, every parameter with "
        "its meaning and unit, and the UserDataset fields the algorithm reads; then exit",
    )
    vp.add_argument(
        "--template", action="store_true", help="print a runnable skeleton module for your implementation; then exit"
    )
    vp.add_argument(
        "--inputs",
        choices=("refuse", "clip", "trust"),
        default=None,
        help="what TARGET does with inputs the reference refuses: refuse them, clip (project out-of-domain "
        "data onto the domain: checked against the reference on the projected data, and audited), or "
        "trust (documented preconditions: listed, not a finding); default: inferred per case",
    )
    vp.add_argument(
        "--param-map",
        action="append",
        default=[],
        metavar="REFERENCE=YOURS",
        help="your name for one of the reference's parameters, e.g. --param-map epsilon=eps (repeatable)",
    )


def _run_arguments(vp) -> None:
    """How much is run (--quick, --samples, ..., --seed), what is printed, and the watch options."""
    vp.add_argument(
        "--quick",
        action="store_true",
        help="fewer releases and examples: about 4 s of CPU in all for a fast target (measured on programs in "
        "Node.js and Python: 17 s of wall clock on 2 cores at a load average of 22; docs/performance.md)",
    )
    vp.add_argument(
        "--samples",
        type=int_at_least(2_000, "--samples"),
        default=None,
        help="TARGET's releases per case (default: 100000, fewer for a slow target)",
    )
    vp.add_argument(
        "--audit-samples",
        type=int_at_least(1_000, "--audit-samples"),
        default=None,
        help="audit outputs per side per pair (default 100000, fewer for a slow target)",
    )
    vp.add_argument(
        "--examples",
        type=int_at_least(1, "--examples"),
        default=None,
        help="Hypothesis examples per property (default 50, at most the suite's own)",
    )
    vp.add_argument(
        "--seed",
        type=int_at_least(0, "--seed"),
        default=0,
        help="the seed of every random draw and of the generated cases",
    )
    vp.add_argument(
        "--no-search",
        action="store_true",
        help="turn the pair search off: audit only the spec's fixed pairs and the aimed ones (docs/validate.md, "
        '"The pair search"); for comparing what the search adds',
    )
    vp.add_argument(
        "--allow-partial",
        action="store_true",
        help="exit 0 on a pass even when the release was not tested (an Adapter with noise-free stages only)",
    )
    vp.add_argument("--json", action="store_true", help="print JSON (schema userdp.validate/1)")
    vp.add_argument("--report", metavar="FILE", help="also write the JSON report to FILE")
    watch_options(vp)


def run(args) -> int:
    """``userdp validate``: the exit status."""
    from userdp.audits import validation as VS
    from userdp.audits.validation import run as V
    from userdp.audits.validation.target import parse_param_map, signature_text, template_text

    if args.signature or args.template:
        if args.signature and args.template:
            raise UsageError("--signature and --template: give one")
        spec = VS.get(args.algorithm)
        with results():
            print(signature_text(spec) if args.signature else template_text(spec))
        return EXIT_OK
    if args.report is not None:
        check_writable(args.report, "--report")
    kw = {
        k: v
        for k, v in (("samples", args.samples), ("audit_samples", args.audit_samples), ("examples", args.examples))
        if v is not None
    }
    t0 = time.perf_counter()

    def progress(msg):
        print(f"[{time.perf_counter() - t0:6.1f} s] {msg}", file=sys.stderr, flush=True)

    with _validate_target(args) as target:  # module:object, or the program of --command
        report = V.validate(
            args.algorithm,
            target,
            seed=args.seed,
            quick=args.quick,
            inputs=args.inputs,
            param_map=parse_param_map(args.param_map),
            search=not args.no_search,
            progress=progress,
            **kw,
        )
    for note in report.notes:
        print(f"userdp: warning: {note}", file=sys.stderr)
    payload = {
        "command": "validate",
        "report": report.to_dict(),
        "elapsed_seconds": report.elapsed_seconds,
        "json": bool(args.json),
        "report_file": args.report,
        "allow_partial": bool(args.allow_partial),
    }
    if supervise.deliver(payload):  # the supervisor grades and prints it (``render``)
        return EXIT_OK  # not used: the supervisor's render decides the exit status
    return render(json.loads(json.dumps(payload, default=_plain, allow_nan=True)))


def _plain(obj):
    if hasattr(obj, "tolist"):  # numpy arrays and scalars
        return obj.tolist()
    raise TypeError(f"not JSON: {type(obj).__name__}")


def render(payload: dict) -> int:
    """Grade, print and save a run's result (``payload``: the report as JSON, as ``run`` sends it)
    and return the exit status. Run as a program, this runs in the supervisor (``supervise.py``),
    which ran none of the target's code, so that nothing the target does to the modules of the
    process it runs in (``ValidationReport.verdict``, the exit statuses, ``format_report``) sets
    the verdict, the message or the exit status: the verdict is recomputed from the findings. Called
    from Python (``main(argv)``), it runs in that process, after the same JSON round trip."""
    from userdp.audits.validation.report import format_report, report_from_dict

    report = report_from_dict(payload["report"], payload["elapsed_seconds"])
    data = report.to_dict()  # its verdict and completeness recomputed from the findings
    path = payload["report_file"]
    if path is not None:
        _write_report(path, to_json("userdp.validate/1", data) + "\n")
    with results():
        if payload["json"]:
            print(to_json("userdp.validate/1", data))
        else:
            print(format_report(report))
    if report.verdict != "pass":
        return EXIT_FINDING
    return EXIT_OK if report.complete or payload["allow_partial"] else EXIT_PARTIAL


def _write_report(path: str, text: str) -> None:
    """``--report``: a regular file (or a new one) is written whole or not at all (a temporary file
    beside it, then renamed over it); anything else (a device, a pipe) is written in place, never
    replaced. A write that fails (a full device) is a usage error naming the option."""
    try:
        if os.path.exists(path) and not os.path.isfile(path):
            with open(path, "w") as fh:
                fh.write(text)
            return
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w") as fh:
                fh.write(text)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    except OSError as exc:
        raise UsageError(f"--report {path}: cannot write it: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _validate_target(args):
    """Validate's target: ``args.target`` (module:object) unchanged, or, with ``--command``, a
    ``PythonTarget`` (audits/validation/target.py) whose
    adapter and release are the program's (in the suite's adapter type). The
    program is ended on leaving; a ``TargetError`` leaves as ``program_error``."""
    check_program_options(args)
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
    with program_target(args, args.algorithm) as program:
        adapter = program_adapter(program, adapter_type)
        yield PythonTarget(
            f'--command "{program.command}"', adapter, adapter.mechanism, plain=not program.stages, program=program
        )
