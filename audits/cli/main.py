"""The ``userdp`` command line.

    userdp --version
    userdp list [--json]
    userdp audit NAME [--samples N] [--confidence C] [--seed S] [--param K=V ...] [--json] [--plot FILE]
    userdp audit --all [--samples N] [--confidence C] [--seed S] [--json]
    userdp audit module:callable --claim pure:epsilon=1 [--relation R] [--output KIND] [--param K=V ...]
    userdp audit ... [--workers N | --scheduler ADDRESS] [--noise-family F] [--selection-fraction F]
    userdp audit ... [--deadline SECONDS] [--timeout SECONDS]
    userdp reproduce NAME [--quick] [--json] [--plot FILE]
    userdp reproduce --list
    userdp bench [--quick] [--json] [--only NAME ...]       (audits/bench/run.py)
    userdp validate ALGORITHM module:object [--inputs refuse|clip|trust] [--param-map REF=YOURS ...]
                    [--quick] [--samples N] [--audit-samples N] [--examples K] [--seed S]
                    [--allow-partial] [--json] [--report FILE] [--deadline S] [--timeout S]  (audits/validation/run.py)
    userdp validate ALGORITHM --signature | --template
    userdp validate ALGORITHM --command "CMD ..." ...          (a program in any language:
    audits/validation/protocol.py)
    userdp audit --command "CMD ..." --claim ... --pair FIRST SECOND ...
    userdp vectors export [ALGORITHM ...] --out DIR [--index FILE]  (audits/validation/vectors.py)
    userdp vectors check ALGORITHM --command "CMD ..." [--file FILE] [--json]

Every subcommand takes ``--debug`` (show the traceback of an error).

External mechanisms. ``module:callable`` names a factory called as ``callable(**params)``
(params from ``--param``) that returns an ``AuditSetup`` or a tuple ``(mechanism, pairs)``;
in the second case ``--claim`` is required. The module is imported with the current
directory on the import path (as ``python -m`` does), so ``mymod.py`` in it needs no
``PYTHONPATH``. A pair is ``(D, D')``, ``(D, D', description)``
or an object with ``.first``, ``.second`` and optionally ``.description`` and ``.unit``
(``NeighbourPair``). Claim syntax: one of CLAIM_FORMS. ``--relation`` names one of
``neighbours.RELATIONS`` (an unknown name is exit 2) and the pairs are checked to be
neighbours under it (``targets.check_pairs``; a pair that is not is exit 2, named): UserDataset
pairs always, raw sequences of numbers under the record relations; other pairs are reported
as not checked. ``--output`` says how the outputs are tested (default: inferred): see its help.

Mechanisms. Batched, ``mechanism(dataset, rng, size)`` returning ``size`` outputs, or one
release per call, ``mechanism(dataset, rng)`` or ``mechanism(dataset)``; the signature
tells which (``parallel.calling_convention``; an ambiguous one is refused, exit 2). A
one-release mechanism is looped in shards of ``parallel.SHARD`` releases over ``--workers``
processes (default: the cores available) or a Dask cluster (``--scheduler``), each shard
on its own ``SeedSequence.spawn`` stream; the result depends only on ``--seed``. Outputs
that change shape or type between calls are an error of the mechanism (exit 3). Before
auditing, the mechanism is called twice with generators from one seed: if the outputs
differ it ignores the rng, the audit is not reproducible from ``--seed``, and stderr, the
text and the JSON (``reproducible``: false) say so; the bound stays valid.

Exit status:
    0  no violation found (``--all``: every entry met its expected verdict);
    1  a violation finding (``--all``: some entry's verdict is not its expected one, i.e. a
       reference mechanism or a correct control flagged, or a broken control missed);
       ``reproduce``: a claim of the paper fails (decided: its interval lies outside the
       claim; an undecided claim exits 0, ``verdicts.py``); ``bench``: a target is missed;
    2  a usage or input error: bad option or parameter, a registry entry refusing a
       ``--param`` value, a factory or setup the audit cannot use, an unwritable ``--plot``
       path, ``--plot`` without matplotlib. All are checked before the audit runs where
       they can be; ``--workers`` below 1 or not an integer; a ``--scheduler`` not reached
       (or without a worker) within ``parallel.SCHEDULER_TIMEOUT`` seconds;
    3  an exception: raised by YOUR factory or mechanism (the message says which, and the
       exception), or an internal error of userdp. Never 1: an exception is not a finding.
    4  ``validate`` only: a partial pass (TARGET has no release; ``--allow-partial`` makes it 0).
       When the mechanism raised on some pairs only, the pairs that finished are still
       printed (text and JSON, with ``failed_pairs`` and ``error``) and the status is 3.
       Also 3, naming the function and the call: ``sys.exit`` or any other BaseException
       in your code, ``os._exit`` or a crash (in this process or a worker), a changed
       input, an output that is not one (NaN, complex, bytes, an object, a wrong count),
       releases too large for the memory, a call that outlives ``--timeout``;
    129, 130, 143  SIGHUP, SIGINT (Ctrl-C) or SIGTERM: every process of the run was ended.
With ``--all``, an entry that raised is reported in its row and the run goes on; the exit
status is 1 if some entry is not as expected, else 3 if some entry raised, else 0.

Your code cannot decide the exit status (``supervise.py``): ``audit`` and ``validate`` run
in a child of a supervisor that runs none of it, reports progress by time, names a call
slower than ``--deadline`` and ends one that outlives ``--timeout``, and on a signal ends
every process of the run. stdout carries the result only: while your code runs, file
descriptor 1 and ``sys.stdout`` point at stderr (``report.command_output``), and a reader
that leaves early (``| head``) changes nothing in the exit status.

``--all`` and multiplicity. ``--confidence`` is FAMILY-WISE for ``--all``: each of the m
entries is audited at confidence 1 - (1 - C)/m (Bonferroni), so that the probability that
ANY correct entry is flagged is at most 1 - C. Each single audit already controls its own
pairs and sets (Holm, harness.py), and Bonferroni needs no independence between entries.
Why: ``--all`` answers one question with one exit status ("is every entry as expected?").
Uncorrected, each correct entry whose true loss equals its claim (control.laplace,
amin2019.capped-sum, ...) is flagged with probability up to 5%, so with k such entries
the registry would fail that question with probability up to 1 - 0.95^k (40% at k = 10). The cost is power:
measured over seeds 0-19 at the default sizes, every
broken control is still flagged at 99.75% (m = 20, C = 0.95) and at 1 - 5e-6 (C = 0.9999),
the smallest margin being control.isvt3 (eps_lb >= 1.43 against its claim 1.0).

JSON (``--json``): strict JSON (``allow_nan=False``), one object whose ``schema`` is
"userdp.list/1", "userdp.audit/1", "userdp.audit-all/1" or "userdp.reproduction/2", with
``userdp_version``; a non-finite number is ``null`` and its JSON Pointer is listed in the
top-level ``nonfinite`` map (see ``report.py``). The fields:

- userdp.list/1: ``entries``: [{name, kind, paper, algorithm, relation, claim {kind,
  params}, function, expected, params, true_epsilon, samples, noise}] (noise: the declared
  noise family, "laplace" | "gaussian" | "l2laplace", or null: ``audits/engine/ceiling.py``).
- userdp.audit/1: name, kind ("reference" | "control" | "planted" | "external"), relation,
  params (the parameters used), expected (the entry's expected verdict, or null for an
  external mechanism or when ``--param`` changed a default), as_expected (bool or null),
  then the audit result: claim {kind, params}, epsilon_lower_bound, confidence, samples,
  verdict, finding ("privacy loss", "floating-point leak" or null when no violation),
  tightness, witness {pair_description, pair_index, unit, rejection_set, ordering,
  counts {first, second, n_per_side}, claim_epsilon, p_value, adjusted_p_value,
  candidates_tested}, termination_reason, elapsed_seconds (rejection_set: {type:
  "threshold", tail, t, projection?}, {type: "values", values}, {type: "atoms", values}:
  values that repeat in a continuous output, or {type: "statistic", statistic, formula,
  params, tail, t}: a learned statistic, ``audits/engine/rejection.py``; a list of more than
  ``report.WITNESS_VALUES_MAX`` values is cut there, with values_count, values_sha256 and
  values_truncated;
  a registry entry that declares its noise family gets that family's likelihood-ratio
  statistic); and, only when the claim
  declares Gaussian DP (claim kind "gdp", or "claims" with params {primary, gdp}), ``gdp``
  {mu, mu_lower_bound, tightness, witness {..., null_side, error_rates {fpr, fnr,
  fpr_upper, fnr_upper}, claim_mu, p_value, adjusted_p_value, candidates_tested}}. The
  verdict is "violation" if either the eps side or the mu side finds one. ``floating_point``
  (null, or {cause, digits, rounded_epsilon_lower_bound, rounded_verdict, rounded_witness,
  leak, explanation}: a violation whose witness set rounding decides, re-audited on rounded
  outputs, ``harness.py``). Then ``ceiling``
  {epsilon, mu, pair_index, method, standard_error} (null when the setup declares no noise
  model), ``efficiency`` (eps_lb / ceiling) and ``mu_efficiency`` (mu_lb / mu ceiling), each
  null when not computed (``audits/engine/ceiling.py``). Then ``reproducible`` (true, false: the
  mechanism ignores the rng, or null: not determined), ``calling`` ("batched",
  "scalar(dataset, rng)" or "scalar(dataset)"), ``pairs``: every confirmed pair that
  finished, [{pair_description, pair_index, epsilon_lower_bound, tightness,
  mu_lower_bound (null without a GDP claim), witness (as above, that pair's best set)}],
  ``failed_pairs``: [{pair_description, pair_index, stage ("pilot" | "confirm"), error}],
  and ``error`` (null, or the message of a run that failed on some pairs: exit 3).
- userdp.audit-all/1: confidence (family-wise), correction ("bonferroni"),
  per_entry_confidence, entries (each as in userdp.audit/1 without ``error``, or {name, kind, relation,
  expected, as_expected: false, error} if it raised), summary {entries, as_expected,
  not_as_expected, errors, elapsed_seconds}.
- userdp.reproduction/2: name, quick, elapsed_seconds, table (list of rows), claims
  [{statement, verdict ("holds" | "fails" | "undecided"), holds (true | false | null when
  undecided), evidence, combine, alpha, error, interval_ends, intervals [{what, estimate, low,
  high, region {above, below, closed}, method, level, n, verdict, text}]}] (``verdicts.py``),
  summary {holds, fails, undecided}, and what the reproduction adds (e.g. setup).
- userdp.bench/1: quick, machine, rows, scaling, memory, summary (``audits/bench/run.py``).

Progress lines go to stderr only; stdout carries the result.
"""

from __future__ import annotations

import argparse
import inspect
import os
import signal
import sys
import textwrap
import time
import traceback

from userdp.audits.cli import program as protocol_cli
from userdp.audits.cli import supervise
from userdp.audits.engine import watch
from userdp.audits.engine.blas import single_threaded_blas
from userdp.audits.engine.ceiling import NOISE_FAMILIES
from userdp.audits.engine.harness import VIOLATION, IncompleteAudit
from userdp.audits.engine import parallel
from userdp.audits.engine.parallel import (
    BATCHED,
    REPRO_DRAWS,
    SCHEDULER_TIMEOUT,
    SHARD,
    batched,
    calling_convention,
    default_workers,
    worker_cap,
)
from userdp.reference.neighbours import RELATIONS

from userdp.audits.engine.registry import all_entries, all_reproductions, get_reproduction
from userdp.audits.engine.report import Progress, command_output, fmt, pct, results, table, to_json, version
from userdp.audits.engine.sampling import MechanismError, raised_text
from userdp.audits.engine.verdicts import FAILS, HOLDS, UNDECIDED, VERDICTS, Interval, check_claims
from userdp.audits.cli.targets import (
    CLAIM_FORMS,
    DEFAULT_SAMPLES,
    Target,
    UsageError,
    UserCodeError,
    call_target,
    check_params,  # noqa: F401
    external_target,
    mechanism_error,
    parse_params,
    registry_target,
    run_audit,
    run_efficiency,
)

__all__ = ["main"]

parallel.preload("userdp.audits.cli.main")  # the fork server imports the command line once, not each worker

EXIT_OK, EXIT_FINDING, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 0
MIN_SAMPLES = 100  # the harness's floor (harness.audit)
SAMPLES_RANGE = "100000 to 1000000"  # of the entries' defaults; a test keeps it true
_DEBUG_HINT = "run again with --debug for the traceback"


# ------------------------------------------------------------------ argument parsing
def _int_at_least(lo: int, what: str):
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo} ({what}), got {text!r}") from None
        if n < lo:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo} ({what}), got {n}")
        return n

    return parse


def _confidence(text: str) -> float:
    try:
        c = float(text)
    except ValueError:
        c = float("nan")
    if not 0.0 < c < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number strictly between 0 and 1, got {text!r}")
    return c


def _selection_fraction(text: str) -> float:
    try:
        f = float(text)
    except ValueError:
        f = float("nan")
    if not 0.0 < f <= 0.5:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 0.5], got {text!r}")
    return f


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="userdp",
        description="Reference, properties and audits for user-level and personalized differential privacy.",
        epilog="Exit status: 0 no violation found; 1 a violation finding; 2 usage or "
        "input error; 3 an exception (your factory or mechanism, or a bug in "
        "userdp). See `userdp audit --help`.",
    )
    p.add_argument("--version", action="version", version=f"userdp {version()}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="on an error, print its traceback")
    sub = p.add_subparsers(dest="command", required=True, metavar="{list,audit,reproduce,bench,validate,vectors}")
    ls = sub.add_parser("list", parents=[common], help="list registered mechanisms and controls")
    ls.add_argument("--json", action="store_true", help="print JSON (schema userdp.list/1)")
    _audit_parser(
        sub.add_parser(
            "audit",
            parents=[common],
            help="audit a registered or external mechanism",
            description="Audit a mechanism: a confident lower bound eps_lb on its "
            "privacy loss, and the verdict 'violation' if eps_lb exceeds "
            "the claim. 'no violation found' is never proof of privacy.",
            epilog="Exit status: 0 no violation found (--all: every entry as "
            "expected); 1 a violation (--all: some entry not as expected); "
            "2 usage or input error; 3 an exception raised by your factory "
            "or mechanism, or an internal error.",
        )
    )
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
    _bench_parser(
        sub.add_parser(
            "bench",
            parents=[common],
            help="time every algorithm against its simplest baseline; exit 1 if a target is missed",
        )
    )
    _validate_parser(
        sub.add_parser(
            "validate",
            parents=[common],
            help="validate your implementation of a "
            "paper's algorithm: properties, differential test, independence, audit",
        )
    )
    protocol_cli.add_vectors_parser(sub, common)
    return p


EXIT_PARTIAL = 4  # validate: what ran passed, but the release was not tested (without --allow-partial)


def _validate_parser(vp: argparse.ArgumentParser) -> None:
    """``userdp validate``: audits/validation/run.py runs it."""
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
    vp.add_argument("algorithm", help="a registered algorithm (`userdp list`, column validate)")
    vp.add_argument(
        "target",
        nargs="?",
        help="module:object: a function making one release per call, f(dataset, "
        "rng, **params), a batched one, f(dataset, rng, size, **params), or an Adapter "
        "(userdp.properties.adapter) with stages; the current directory is on the import path. "
        "Or --command instead",
    )
    protocol_cli.add_program_arguments(vp)
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
    vp.add_argument("--quick", action="store_true", help="fewer releases and examples (under 10 s for a fast target)")
    vp.add_argument(
        "--samples",
        type=_int_at_least(2_000, "--samples"),
        default=None,
        help="TARGET's releases per case (default: 100000, fewer for a slow target)",
    )
    vp.add_argument(
        "--audit-samples",
        type=_int_at_least(1_000, "--audit-samples"),
        default=None,
        help="audit outputs per side per pair (default 100000, fewer for a slow target)",
    )
    vp.add_argument(
        "--examples",
        type=_int_at_least(1, "--examples"),
        default=None,
        help="Hypothesis examples per property (default 50, at most the suite's own)",
    )
    vp.add_argument(
        "--seed",
        type=_int_at_least(0, "--seed"),
        default=0,
        help="the seed of every random draw and of the generated cases",
    )
    vp.add_argument(
        "--allow-partial",
        action="store_true",
        help="exit 0 on a pass even when the release was not tested (an Adapter with noise-free stages only)",
    )
    vp.add_argument("--json", action="store_true", help="print JSON (schema userdp.validate/1)")
    vp.add_argument("--report", metavar="FILE", help="also write the JSON report to FILE")
    _watch_options(vp)


def _seconds(text: str) -> float:
    try:
        s = float(text)
    except ValueError:
        s = float("nan")
    if not 0.0 < s < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return s


def _watch_options(p: argparse.ArgumentParser) -> None:
    """--deadline and --timeout: what the supervisor does with a slow call (audits/cli/supervise.py)."""
    p.add_argument(
        "--deadline",
        type=_seconds,
        default=watch.DEFAULT_DEADLINE,
        metavar="SECONDS",
        help="a call of your code running longer is reported as slow on stderr, naming it "
        f"(default {watch.DEFAULT_DEADLINE:g})",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="a call of your code running longer is taken to hang: every process is ended and the "
        f"command exits 3, naming the call (default {watch.DEFAULT_TIMEOUT:g}; a batched call counts "
        "as one call; validate records only the calls of its audits); with --command, also the "
        f"program's time per response (default there {protocol_cli.DEFAULT_TIMEOUT:g})",
    )


def cmd_validate(args) -> int:
    from userdp.audits import validation as VS
    from userdp.audits.validation import run as V
    from userdp.audits.validation.report import format_report
    from userdp.audits.validation.target import parse_param_map, signature_text, template_text

    if args.signature or args.template:
        if args.signature and args.template:
            raise UsageError("--signature and --template: give one")
        spec = VS.get(args.algorithm)
        with results():
            print(signature_text(spec) if args.signature else template_text(spec))
        return EXIT_OK
    if args.report is not None:
        _check_writable(args.report, "--report")
    kw = {
        k: v
        for k, v in (("samples", args.samples), ("audit_samples", args.audit_samples), ("examples", args.examples))
        if v is not None
    }
    t0 = time.perf_counter()

    def progress(msg):
        print(f"[{time.perf_counter() - t0:6.1f} s] {msg}", file=sys.stderr, flush=True)

    with protocol_cli.validate_target(args) as target:  # module:object, or the program of --command
        report = V.validate(
            args.algorithm,
            target,
            seed=args.seed,
            quick=args.quick,
            inputs=args.inputs,
            param_map=parse_param_map(args.param_map),
            progress=progress,
            **kw,
        )
    for note in report.notes:
        print(f"userdp: warning: {note}", file=sys.stderr)
    data = report.to_dict()
    if args.report is not None:
        tmp = f"{args.report}.{os.getpid()}.tmp"  # written whole or not at all
        with open(tmp, "w") as fh:
            fh.write(to_json("userdp.validate/1", data) + "\n")
        os.replace(tmp, args.report)
    with results():
        if args.json:
            print(to_json("userdp.validate/1", data))
        else:
            print(format_report(report))
    if report.verdict != "pass":
        return EXIT_FINDING
    return EXIT_OK if report.complete or args.allow_partial else EXIT_PARTIAL


def _bench_parser(bp: argparse.ArgumentParser) -> None:
    """``userdp bench``: audits/bench/run.py runs it (the benchmarks are in audits/bench/cases.py)."""
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


def cmd_bench(args) -> int:
    from userdp.audits.bench.run import command

    if not 0.0 < args.scale <= 1.0:
        raise UsageError(f"--scale must lie in (0, 1], got {args.scale!r}")
    return command(args)


def _audit_parser(au: argparse.ArgumentParser) -> None:
    au.add_argument(
        "name",
        nargs="?",
        help="registry name (see `userdp list`) or module:callable (the module "
        "is imported with the current directory on the import path, as `python -m` does)",
    )
    au.add_argument(
        "--all",
        action="store_true",
        help="audit every reference and control entry, Bonferroni-corrected across entries",
    )
    au.add_argument(
        "--samples",
        type=_int_at_least(MIN_SAMPLES, "outputs per side"),
        default=None,
        metavar="N",
        help=f"outputs per side, >= {MIN_SAMPLES} (default: the entry's own, "
        f"the 'samples' column of `userdp list`, {SAMPLES_RANGE}; {DEFAULT_SAMPLES} for "
        "module:callable)",
    )
    au.add_argument(
        "--confidence",
        type=_confidence,
        default=DEFAULT_CONFIDENCE,
        metavar="C",
        help=f"confidence in (0, 1) (default {DEFAULT_CONFIDENCE}); with --all it is "
        "family-wise: each of m entries is audited at 1 - (1 - C)/m",
    )
    au.add_argument(
        "--seed",
        type=_int_at_least(0, "a seed"),
        default=DEFAULT_SEED,
        metavar="S",
        help=f"random seed, an integer >= 0 (default {DEFAULT_SEED})",
    )
    au.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="K=V",
        help="override a parameter (repeatable); V is JSON (1, 1e-6, null, [1,2]) or "
        "text; `userdp list --json` shows each entry's parameters and defaults",
    )
    au.add_argument(
        "--json", action="store_true", help="print JSON (schema userdp.audit/1, or userdp.audit-all/1 with --all)"
    )
    au.add_argument(
        "--plot",
        metavar="FILE",
        help="write the two output distributions of the witness pair with the witness set "
        "(needs matplotlib; format from the suffix, e.g. .png, .pdf)",
    )
    au.add_argument("--claim", metavar="SPEC", help="claim of an external mechanism: " + ", ".join(CLAIM_FORMS))
    au.add_argument(
        "--relation",
        metavar="R",
        help="neighbouring relation of an external mechanism, one of: "
        + ", ".join(sorted(RELATIONS))
        + ". Each pair is checked to be neighbours under it (UserDataset pairs, data.EMPTY on one "
        "side of an add/remove pair; raw sequences of numbers under the record relations: "
        "add-remove-record = the multisets differ by one element, replace-record = same length, "
        "one position differs) and a pair that is not is refused (exit 2); other pairs are "
        "reported as not checked. Default 'unspecified' (nothing checked)",
    )
    au.add_argument(
        "--output",
        choices=["continuous", "vector", "discrete", "categorical"],
        help="how the outputs are tested (default: inferred: integer or bool outputs are "
        "discrete, floats continuous, rows of floats vector). continuous: threshold sets "
        "{x >= t}, {x <= t}; vector: thresholds on learned projections and statistics; "
        "discrete: sets of values ranked by likelihood ratio and, for scalar outputs (counts, "
        "geometric noise), thresholds too, the selection share choosing between them; "
        "categorical: labels whose order means nothing (argmax indices, codes): value sets "
        "only. A mechanism returns None for 'no release' (e.g. a partition dropped by "
        "private partition selection): discrete and categorical tests treat it as one more "
        "value, continuous ones as an event outside every threshold set, tested alone and "
        "with each set; a vector row may hold None cells (partitions not released: a "
        "multi-partition release), tested per partition and jointly",
    )
    au.add_argument(
        "--noise-family",
        choices=NOISE_FAMILIES + ("none",),
        metavar="FAMILY",
        help="the family of the mechanism's additive noise, one of "
        + ", ".join(NOISE_FAMILIES)
        + ", or none (default: the entry's or setup's declared family, else none). Vector outputs "
        "then also get that family's likelihood-ratio statistic (laplace: a per-coordinate scaled L1 "
        "distance), and thresholds are scored with the fitted family; it only adds candidate sets, "
        "so a wrong family costs power, never validity. Refused for discrete outputs",
    )
    au.add_argument(
        "--selection-fraction",
        type=_selection_fraction,
        default=None,
        metavar="F",
        help="share of each side's outputs that chooses the rejection set, in (0, 0.5] (default "
        "0.1); the rest counts. More selection helps when many candidate sets compete (high "
        "dimension, atoms), and costs counting samples",
    )
    au.add_argument(
        "--mechanism",
        metavar="MODULE:CALLABLE",
        help="audit a library call without writing a module: MODULE:CALLABLE is called as "
        "f(dataset, **KWARGS), one release per call, on each --pair, against --claim (required)",
    )
    au.add_argument("--kwargs", metavar="JSON", help="with --mechanism: its keyword arguments, a JSON object")
    au.add_argument(
        "--pair",
        nargs=2,
        action="append",
        default=[],
        metavar=("FIRST", "SECOND"),
        help="with --mechanism or --command: two neighbouring datasets as JSON, e.g. '[1,1,1]' '[1,1]' "
        '(repeatable); with --command a side may also be a dataset object {"values": [...], '
        '"user_ids": [...]}',
    )
    protocol_cli.add_program_arguments(au)
    au.add_argument(
        "--workers",
        type=_int_at_least(1, "worker processes"),
        default=None,
        metavar="N",
        help="processes for a mechanism called once per release, mechanism(dataset, rng) or "
        f"mechanism(dataset) (default: the cores available, {default_workers()} here; capped at "
        f"{worker_cap(10**9)[0]} here, 4 per core, and one only for a waiting shard); a batched "
        "mechanism(dataset, rng, size) runs vectorised in this process. The result depends only on "
        "--seed, never on N",
    )
    au.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run those shards on a Dask cluster instead (e.g. tcp://host:8786; needs pip install "
        f"'userdp[distributed]'); an address not reached within {SCHEDULER_TIMEOUT:g} s is an error "
        "(exit 2)",
    )
    _watch_options(au)


def _check_plot_target(path: str) -> None:
    """Refuse --plot before any work: matplotlib missing, unknown format, or an unwritable path."""
    from userdp.audits.engine.plot import pyplot

    try:
        plt = pyplot()
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    ext = os.path.splitext(path)[1].lstrip(".").lower() or "png"
    fig = plt.figure()
    supported = fig.canvas.get_supported_filetypes()
    plt.close(fig)
    if ext not in supported:
        raise UsageError(f"--plot {path}: unknown format {ext!r}; use one of {sorted(supported)}")
    _check_writable(path, "--plot")


def _check_writable(path: str, option: str) -> None:
    """Refuse an output path before any work: a directory, a missing folder, or not writable."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory; give a file name")
    if not os.path.isdir(folder):
        raise UsageError(f"{option} {path}: the directory {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"{option} {path}: not writable")


# ------------------------------------------------------------------ commands
def _claim_text(claim) -> str:
    if claim.kind == "claims":  # a paper's claim and its declared exact mu-GDP
        return f"{_claim_text(claim.primary)}; and {_claim_text(claim.gdp)}"
    params = claim.params()
    if "epsilons" in params:
        eps = params["epsilons"]
        return f"{claim.kind} eps_i for {len(eps)} records (min {fmt(min(eps))}, max {fmt(max(eps))})"
    return claim.kind + " " + ",".join(f"{k}={fmt(v)}" for k, v in params.items())


def _claim_dict_text(c: dict) -> str:
    """A claim's {kind, params} as one line (a "claims" pair as its two parts)."""
    if c["kind"] == "claims":
        return f"{_claim_dict_text(c['params']['primary'])}; {_claim_dict_text(c['params']['gdp'])}"
    return c["kind"] + " " + ",".join(f"{k}={fmt(v)}" for k, v in c["params"].items())


def _entry_dict(entry, setup) -> dict:
    claim = setup.claim
    return {
        "name": entry.name,
        "kind": entry.kind,
        "paper": entry.paper,
        "algorithm": entry.algorithm,
        "relation": entry.relation,
        "claim": {"kind": claim.kind, "params": claim.params()},
        "function": entry.function,
        "expected": entry.expected,
        "params": dict(entry.params),
        "true_epsilon": entry.true_epsilon,
        "samples": entry.samples or DEFAULT_SAMPLES,
        "noise": None if setup.noise is None else setup.noise.family,
        "validate": entry.name in _validation_names(),
    }


def _validation_names() -> set:
    from userdp.audits.validation import all_specs

    return set(all_specs())


def cmd_list(args) -> int:
    entries = all_entries()
    setups = [e.setup() for e in entries]
    claims = [s.claim for s in setups]
    rows = [_entry_dict(e, s) for e, s in zip(entries, setups)]
    if args.json:
        print(to_json("userdp.list/1", {"entries": rows}))
        return EXIT_OK
    for r, c in zip(rows, claims):
        r["claim"] = _claim_text(c)
    for r in rows:
        r["validate"] = "yes" if r["validate"] else "-"
    print(table(rows, ["name", "kind", "claim", "expected", "samples", "validate", "function"]))
    print(
        "\nkind: reference = a paper's mechanism; control = textbook mechanism with known loss; "
        "planted = known-broken variant (not in --all). samples = default outputs per side. "
        "validate: `userdp validate NAME module:object` checks your implementation of it."
    )
    return EXIT_OK


def cmd_audit(args) -> int:
    if args.workers is not None and args.scheduler is not None:
        raise UsageError("--workers and --scheduler exclude each other: the Dask cluster has its own workers")
    if protocol_cli.uses_program(args):  # a program over the protocol (audits/cli/program.py)
        if args.plot:  # refused before the program starts
            _check_plot_target(args.plot)
        return protocol_cli.run_audit(args, _audit_target)
    if args.all:
        if (
            args.name
            or args.param
            or args.plot
            or args.claim
            or args.relation
            or args.output
            or args.mechanism
            or args.noise_family
            or args.selection_fraction
        ):
            raise UsageError(
                "--all takes no NAME, --param, --plot, --claim, --relation, --output, --mechanism, "
                "--noise-family or --selection-fraction (each entry has its own)"
            )
        return _audit_all(args)
    if (args.kwargs is not None or args.pair) and not args.mechanism:
        raise UsageError("--kwargs and --pair go with --mechanism MODULE:CALLABLE or --command CMD")
    if args.mechanism:
        if args.name or args.param:
            raise UsageError("--mechanism replaces NAME and --param: give one of them")
        if args.plot:
            _check_plot_target(args.plot)
        target = call_target(
            args.mechanism,
            args.kwargs,
            args.pair,
            claim=args.claim,
            relation=args.relation,
            output=args.output,
            samples=args.samples,
        )
        return _audit_target(target, args)
    if not args.name:
        raise UsageError("audit needs a NAME (see `userdp list`), module:callable, or --all")
    if ":" not in args.name and (args.claim or args.relation or args.output):
        raise UsageError(
            "--claim, --relation and --output are for module:callable targets; a registry "
            "entry has its own (see `userdp list --json`)"
        )
    if args.plot:
        _check_plot_target(args.plot)
    raw = parse_params(args.param)
    if ":" in args.name:
        target = external_target(
            args.name, raw, claim=args.claim, relation=args.relation, output=args.output, samples=args.samples
        )
    else:
        target = registry_target(args.name, raw, args.samples)
    return _audit_target(target, args)


def _audit_target(target: Target, args) -> int:
    progress = Progress(target.name)
    n_pairs = len(target.pairs) if hasattr(target.pairs, "__len__") else "candidate"
    progress.note(
        f"auditing {n_pairs} pair(s), {target.samples} outputs per side, "
        f"{pct(args.confidence)} confidence, seed {args.seed}"
    )
    if target.relation_check:
        progress.note(target.relation_check)
    progress.note(_calling_text(target, args))
    incomplete = None
    try:
        result = run_audit(
            target,
            args.confidence,
            args.seed,
            progress=progress.note,
            workers=args.workers,
            scheduler=args.scheduler,
            **_audit_options(args),
        )
    except IncompleteAudit as exc:  # some pairs failed: what finished is still reported (exit 3)
        result, incomplete = exc.result, exc
    if target.noise is not None:
        progress.note(f"computing the statistical ceiling ({target.noise.family} noise)")
    eff = run_efficiency(target, result)
    as_expected = None if target.expected is None else result.verdict == target.expected
    error = None if incomplete is None else str(mechanism_error(target, incomplete))
    with results():
        if args.json:
            print(
                to_json(
                    "userdp.audit/1",
                    {
                        "name": target.name,
                        "kind": target.kind,
                        "relation": target.relation,
                        "params": target.params,
                        "expected": target.expected,
                        "as_expected": as_expected,
                        **result.report_dict(),
                        **eff,
                        "error": error,
                    },
                )
            )
        else:
            _print_result(target, result, as_expected, eff)
    if args.plot:
        from userdp.audits.engine.plot import plot_audit

        try:
            plot_audit(batched(target.mechanism), result, args.plot, seed=args.seed, name=target.name)
        except MechanismError as exc:
            raise mechanism_error(target, exc) from exc
        except OSError as exc:
            raise UsageError(f"--plot {args.plot}: {exc}") from exc
        progress.note(f"plot written to {args.plot}")
    if incomplete is not None:
        return _fail(args, incomplete, f"userdp: error: {error}", EXIT_ERROR)
    return EXIT_FINDING if result.verdict == VIOLATION else EXIT_OK


def _audit_options(args) -> dict:
    """--noise-family and --selection-fraction, when given, as ``harness.audit`` keywords."""
    out = {}
    if getattr(args, "noise_family", None) is not None:
        out["noise_family"] = None if args.noise_family == "none" else args.noise_family
    if getattr(args, "selection_fraction", None) is not None:
        out["selection_fraction"] = args.selection_fraction
    return out


def _calling_text(target: Target, args) -> str:
    """How the mechanism will be called (a progress line)."""
    calling = calling_convention(target.mechanism)
    if calling == BATCHED:
        unused = (
            " (--workers and --scheduler are for one-release-per-call mechanisms)"
            if args.workers or args.scheduler
            else ""
        )
        return f"batched mechanism: one vectorised call per side in this process{unused}"
    if args.scheduler:
        where = f"the Dask scheduler at {args.scheduler}"
    else:
        where = f"{worker_cap(args.workers or default_workers())[0]} worker process(es)"
    return f"mechanism called as {calling}, one release per call: shards of {SHARD} releases on {where}"


_EXPECTED_WHY = {
    ("reference", "no violation found"): "a paper's mechanism, audited on its worst-case pairs",
    ("control", "no violation found"): "a correct control must not be flagged",
    ("control", "violation"): "a broken control must be flagged",
    ("planted", "violation"): "a planted bug must be flagged",
}


def _print_result(t: Target, r, as_expected, eff: dict) -> None:
    w = r.witness
    c = w.counts
    failed = f"; INCOMPLETE: {len(r.failed_pairs)} pair(s) failed (below)" if r.failed_pairs else ""
    print(f"{t.name}: {r.verdict}{' on the pairs that finished' if failed else ''}{failed}")
    if t.expected is not None:
        why = _EXPECTED_WHY.get((t.kind, t.expected), t.kind)
        print(f"  expected         {t.expected} ({why}): {'as expected' if as_expected else 'NOT AS EXPECTED'}")
    elif t.kind != "external":
        print(
            f"  expected         not stated: --param changed {sorted(t.overrides)}, and the entry's "
            f"expected verdict is for its defaults"
        )
    print(f"  claim            {_claim_text(r.claim)}  (relation: {t.relation})")
    print(
        f"  eps lower bound  {r.epsilon_lower_bound:.4f} at {pct(r.confidence)} confidence; "
        f"tightness eps_lb / eps = {fmt(r.tightness, 3)}"
    )
    if r.gdp is not None:
        g = r.gdp
        print(
            f"  mu lower bound   {g.mu_lower_bound:.4f} (trade-off curve) against mu = {fmt(g.mu)}; "
            f"tightness mu_lb / mu = {fmt(g.tightness, 3)}"
        )
    c = eff["ceiling"]
    if c is None:
        print("  ceiling          not computed: the setup declares no noise model (audits/engine/ceiling.py)")
    else:
        print(
            f"  ceiling          {c['epsilon']:.4f}: the best a perfect test could reach with these samples and "
            f"confidence ({c['method']}); efficiency eps_lb / ceiling = {fmt(eff['efficiency'], 3)}"
        )
        if c["mu"] is not None:
            print(f"  mu ceiling       {c['mu']:.4f}; efficiency mu_lb / mu ceiling = {fmt(eff['mu_efficiency'], 3)}")
    c = w.counts
    print(f"  witness          pair: {w.pair_description}")
    print(f"                   set S = {w.rejection_set.describe()}, ordering {w.ordering}")
    print(
        f"  counts           {c['first']} of M(first) and {c['second']} of M(second) in S, "
        f"of {c['n_per_side']} per side; p = {w.p_value:.3g}, Holm-adjusted {w.adjusted_p_value:.3g} "
        f"over {w.candidates_tested} candidate(s)"
    )
    if r.floating_point is not None:
        print(
            textwrap.fill(
                f"{r.finding}: {r.floating_point.explanation}",
                110,
                initial_indent="  finding          ",
                subsequent_indent=" " * 19,
            )
        )
    print(f"  samples          {r.samples} per side; {r.termination_reason}; {r.elapsed_seconds:.2f} s")
    print(f"  reproducible     {_REPRODUCIBLE[r.reproducible]}")
    print(
        f"  pairs            {len(r.pairs)} confirmed pair(s), each with its own best set "
        f"(every bound at the audit's confidence, jointly):"
    )
    print(_pairs_table(r))
    for f in r.failed_pairs:
        print(f"  FAILED           pair: {f.pair_description} ({f.stage}): {f.error}")
    if r.verdict != VIOLATION:
        print("  note             'no violation found' is not proof of privacy")


_REPRODUCIBLE = {
    True: "yes: two calls with generators from one seed gave the same varying outputs",
    False: "NO: two calls with generators from one seed gave different outputs; the mechanism draws from "
    "a generator of its own, so --seed does not reproduce this audit (the bound stays valid: the "
    "samples are still independent)",
    None: f"not determined: on the first pair the mechanism raised, or its outputs did not vary over "
    f"{REPRO_DRAWS} calls (equal constant outputs prove nothing)",
}


def _pairs_table(r) -> str:
    rows = [
        {
            "pair": p.witness.pair_description,
            "eps_lb": p.epsilon_lower_bound,
            "tightness": p.tightness,
            "mu_lb": p.mu_lower_bound,
            "in S: first": p.witness.counts["first"],
            "second": p.witness.counts["second"],
            "of n": p.witness.counts["n_per_side"],
            "set S": f"{p.witness.rejection_set.describe()}, {p.witness.ordering}",
        }
        for p in r.pairs
    ]
    columns = (
        ["pair", "eps_lb", "tightness"]
        + (["mu_lb"] if r.gdp is not None else [])
        + ["in S: first", "second", "of n", "set S"]
    )
    return table(
        rows,
        columns,
        indent="    ",
        formats={"eps_lb": lambda v: f"{v:.4f}", "mu_lb": lambda v: f"{v:.4f}", "tightness": lambda v: fmt(v, 3)},
    )


def _audit_all(args) -> int:
    entries = [e for e in all_entries() if e.kind in ("reference", "control")]
    m = len(entries)
    per_entry = 1.0 - (1.0 - args.confidence) / m  # Bonferroni (module docstring)
    progress = Progress()
    progress.note(
        f"auditing {m} entries at {pct(args.confidence)} family-wise confidence "
        f"(Bonferroni: {pct(per_entry)} per entry)"
    )
    rows = []
    for i, e in enumerate(entries, 1):
        rows.append(_audit_entry(e, args, per_entry))
        row = rows[-1]
        status = (
            f"ERROR {row['error']}"
            if "error" in row
            else f"{row['verdict']} (eps_lb {row['epsilon_lower_bound']:.3f}, {row['elapsed_seconds']:.1f} s)"
            + ("" if row["as_expected"] else f"  <-- expected {e.expected}")
        )
        progress.step(i, m, f"{e.name}: {status}")
    failed = sum(not r["as_expected"] and "error" not in r for r in rows)
    errors = sum("error" in r for r in rows)
    summary = {
        "entries": m,
        "as_expected": m - failed - errors,
        "not_as_expected": failed,
        "errors": errors,
        "elapsed_seconds": progress.elapsed(),
    }
    with results():
        if args.json:
            print(
                to_json(
                    "userdp.audit-all/1",
                    {
                        "confidence": args.confidence,
                        "correction": "bonferroni",
                        "per_entry_confidence": per_entry,
                        "entries": rows,
                        "summary": summary,
                    },
                )
            )
        else:
            _print_all(rows, args.confidence, per_entry, summary)
    return EXIT_FINDING if failed else (EXIT_ERROR if errors else EXIT_OK)


def _audit_entry(e, args, confidence: float) -> dict:
    head = {"name": e.name, "kind": e.kind, "relation": e.relation, "expected": e.expected}
    try:
        t = registry_target(e, {}, args.samples)
        r = run_audit(t, confidence, args.seed, workers=args.workers, scheduler=args.scheduler)
        eff = run_efficiency(t, r)
    except Exception as exc:  # reported in its row; the run goes on (exit 3 at the end)
        if getattr(args, "debug", False):
            traceback.print_exc()
        return {**head, "as_expected": False, "error": f"{type(exc).__name__}: {exc}"}
    return {**head, "as_expected": r.verdict == e.expected, **r.report_dict(), **eff}


def _print_all(rows, confidence, per_entry, summary) -> None:
    shown = []
    for r in rows:
        base = {"name": r["name"], "kind": r["kind"], "expected": r["expected"]}
        if "error" in r:
            shown.append({**base, "verdict": "ERROR: " + r["error"], "ok": "ERROR"})
            continue
        gdp = r.get("gdp")
        shown.append(
            {
                **base,
                "claim": _claim_dict_text(r["claim"]),
                "samples": r["samples"],
                "eps_lb": r["epsilon_lower_bound"],
                "ceiling": None if r["ceiling"] is None else r["ceiling"]["epsilon"],
                "tightness": r["tightness"],
                "efficiency": r["efficiency"],
                "mu tightness": None if gdp is None else gdp["tightness"],
                "mu efficiency": r["mu_efficiency"],
                "verdict": r["verdict"],
                "ok": "yes" if r["as_expected"] else "NO",
            }
        )
    three = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    print(
        table(
            shown,
            [
                "name",
                "kind",
                "claim",
                "samples",
                "eps_lb",
                "ceiling",
                "tightness",
                "efficiency",
                "mu tightness",
                "mu efficiency",
                "verdict",
                "expected",
                "ok",
            ],
            formats={
                "eps_lb": lambda v: "-" if v is None else f"{v:.4f}",
                "ceiling": lambda v: "-" if v is None else f"{v:.4f}",
                "tightness": three,
                "efficiency": three,
                "mu tightness": three,
                "mu efficiency": three,
            },
        )
    )
    print(
        f"\n{summary['entries']} entries: {summary['as_expected']} as expected, {summary['not_as_expected']} "
        f"not as expected, {summary['errors']} errors; {summary['elapsed_seconds']:.1f} s."
    )
    print(
        f"Confidence {pct(confidence)} is family-wise (Bonferroni over {summary['entries']} entries, each "
        f"audited at {pct(per_entry)}): a correct entry among them is flagged with probability "
        f"<= {pct(1 - confidence)} in total."
    )


def cmd_reproduce(args) -> int:
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
        _check_plot_target(args.plot)
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


# ------------------------------------------------------------------ entry point
USER_COMMANDS = ("audit", "validate")  # the commands that run the user's code: supervised


def main(argv=None) -> int:
    """The ``userdp`` command. Run as a program (``argv`` None), ``audit`` and ``validate`` run
    under the supervisor (``supervise.py``: user code cannot decide the exit status, hang the
    command, or leave a process behind); called with ``argv`` from Python, in this process."""
    if argv is None:
        argv = sys.argv[1:]
        if argv[:1] and argv[0] in USER_COMMANDS and supervise.available():
            code = supervise.run(list(argv), _main)
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            os._exit(code)  # at once: the run is over, and this process ran none of its code
    return _main(argv)


def _main(argv) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --version / --help -> 0, usage error -> 2
        return int(exc.code or 0)
    commands = {
        "list": cmd_list,
        "audit": cmd_audit,
        "reproduce": cmd_reproduce,
        "bench": cmd_bench,
        "validate": cmd_validate,
        "vectors": protocol_cli.run_vectors,
    }
    isolate = args.command in USER_COMMANDS
    if isolate:
        watch.configure(args.deadline, watch.DEFAULT_TIMEOUT if args.timeout is None else args.timeout)
    try:
        with command_output(isolate), single_threaded_blas():  # blas.py: 10x faster on a busy machine
            return commands[args.command](args)
    except UsageError as exc:
        return _fail(args, exc, f"userdp: error: {exc}", EXIT_USAGE)
    except UserCodeError as exc:
        return _fail(args, exc, f"userdp: error: {exc}", EXIT_ERROR)
    except MemoryError as exc:
        return _fail(
            args,
            exc,
            f"userdp: error: out of memory ({raised_text(exc)}): the releases or the data "
            "did not fit; audit a smaller release (one coordinate, or a summary) or fewer --samples",
            EXIT_ERROR,
        )
    except Exception as exc:
        return _fail(
            args,
            exc,
            f"userdp: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in userdp, not a finding about your mechanism; please report it "
            "with the --debug output.",
            EXIT_ERROR,
        )
    except KeyboardInterrupt as exc:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # supervised: no Ctrl-C reaches here
            return _fail(
                args,
                exc,
                f"userdp: error: code outside userdp (your module, factory or mechanism) "
                f"{raised_text(exc)}; it is an error of that code, not an interrupt",
                EXIT_ERROR,
            )
        print("userdp: interrupted", file=sys.stderr)
        return 130
    except BaseException as exc:  # SystemExit and others: userdp never raises them here
        return _fail(
            args,
            exc,
            f"userdp: error: code outside userdp (your module, factory or mechanism) "
            f"{raised_text(exc)}; an exit status is never the audited code's to set",
            EXIT_ERROR,
        )


def _fail(args, exc: BaseException, message: str, code: int) -> int:
    if getattr(args, "debug", False):
        traceback.print_exception(exc)
    print(message, file=sys.stderr)
    if code == EXIT_ERROR and not getattr(args, "debug", False):
        print(f"({_DEBUG_HINT})", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
