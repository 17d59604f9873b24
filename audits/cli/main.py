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
                    [--quick] [--samples N] [--audit-samples N] [--examples K] [--seed S] [--no-search]
                    [--allow-partial] [--json] [--report FILE] [--deadline S] [--timeout S]  (audits/validation/run.py)
    userdp validate ALGORITHM --signature | --template
    userdp validate ALGORITHM --command "CMD ..." ...          (a program in any language:
    audits/validation/protocol.py)
    userdp audit --command "CMD ..." --claim ... --pair FIRST SECOND ...
    userdp vectors export [ALGORITHM ...] --out DIR [--index FILE]  (audits/validation/vectors.py)
    userdp vectors check ALGORITHM --command "CMD ..." [--file FILE] [--json] [--deadline S] [--timeout S]

Every subcommand takes ``--debug`` (show the traceback of an error).

One module per command, each with its ``add_parser`` and ``run``: ``listing.py``, ``audit.py``,
``reproduce.py``, ``bench.py``, ``validate.py``, ``vectors.py``; ``common.py`` holds what they
share (exit statuses, argument types, ``fail``) and ``program.py`` the ``--command`` target. This
module holds the parser, ``main`` and the mapping of errors to exit statuses.

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
       (or without a worker) within ``parallel.SCHEDULER_TIMEOUT`` seconds; an empty or
       unsplittable ``--command``, a ``--transcript`` that is a folder or cannot be written
       (``common.start_checks``: paths are made absolute before any of your code runs);
    3  an exception: raised by YOUR factory or mechanism (the message says which, and the
       exception), or an internal error of userdp. In ``audit`` a mechanism's exception or
       warning on some calls only is an output, counted like a release (docs/audit.md,
       "Exceptions and warnings are outputs"); on every call of both sides of a pair, exit 3.
    4  ``validate`` only: a partial pass (TARGET has no release; ``--allow-partial`` makes it 0).
       When the mechanism failed on some pairs only, the pairs that finished are still
       printed (text and JSON, with ``failed_pairs`` and ``error``) and the status is 3.
       Also 3, naming the function and the call: ``sys.exit`` or any other BaseException
       in your code, ``os._exit`` or a crash (in this process or a worker), a changed
       input, an output that is not one (NaN, complex, bytes, an object, a wrong count),
       releases too large for the memory, a call that outlives ``--timeout``;
    129, 130, 143  SIGHUP, SIGINT (Ctrl-C) or SIGTERM: every process of the run was ended.
With ``--all``, an entry that raised is reported in its row and the run goes on; the exit
status is 1 if some entry is not as expected, else 3 if some entry raised, else 0.

Your code cannot decide the exit status (``supervise.py``): ``audit``, ``validate`` and ``vectors``
run in a child of a supervisor that runs none of it (``validate``'s child sends its findings to
the supervisor, which grades them, prints the report and chooses the exit status:
``validate.render``), reports progress by time, names a call slower than ``--deadline`` and
ends one that outlives ``--timeout``, and on a signal ends every process of the run. stdout
carries the result only: while your code runs, file descriptor 1 and ``sys.stdout`` point at
stderr (``report.command_output``), and a reader that leaves early (``| head``) changes nothing
in the exit status.

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
  values that repeat in a continuous output, {type: "event", event: "raised" | "warned"}: the
  indicator of a call that raised or warned, ``audits/engine/outcomes.py``, or {type: "statistic",
  statistic, formula, params, tail, t}: a learned statistic, ``audits/engine/rejection.py``; a list of more than
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
  ``events``: each confirmed pair whose calls raised or warned, [{pair_description, pair_index,
  drawn, first and second {calls, raised, raised_by_class, warned, warning_categories,
  messages}, counted: [{event, ordering, k1, k2, n_per_side, epsilon_lower_bound}]}] (shares of
  the side's calls; ``audits/engine/outcomes.py``), ``event_witness`` (null, or the finding when
  the witness is an event set), and ``error`` (null, or the message of a run that failed on
  some pairs: exit 3).
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
import os
import signal
import sys

from userdp.audits.cli import audit, bench, listing, reproduce, supervise, validate, vectors
from userdp.audits.engine import watch
from userdp.audits.engine.blas import single_threaded_blas
from userdp.audits.engine import parallel
from userdp.audits.engine.report import command_output, version
from userdp.audits.engine.sampling import raised_text
from userdp.audits.cli.common import EXIT_ERROR, EXIT_USAGE, fail, start_checks
from userdp.audits.cli.targets import UsageError, UserCodeError

__all__ = ["main"]

parallel.preload("userdp.audits.cli.main")  # the fork server imports the command line once, not each worker


def _parser() -> argparse.ArgumentParser:
    """The ``userdp`` parser: one subcommand per module (its ``add_parser``), in this order."""
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
    for command in (listing, audit, reproduce, bench, validate, vectors):
        command.add_parser(sub, common)
    return p


# ------------------------------------------------------------------ entry point
USER_COMMANDS = ("audit", "validate", "vectors")  # the commands that run the user's code: supervised


def main(argv=None) -> int:
    """The ``userdp`` command. Run as a program (``argv`` None), ``audit`` and ``validate`` run
    under the supervisor (``supervise.py``: user code cannot decide the exit status, hang the
    command, or leave a process behind); called with ``argv`` from Python, in this process."""
    if argv is None:
        argv = sys.argv[1:]
        if argv[:1] and argv[0] in USER_COMMANDS and supervise.available():
            code = supervise.run(list(argv), _main, _render)
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            os._exit(code)  # at once: the run is over, and this process ran none of its code
    return _main(argv)


def _render(payload: dict) -> int:
    """In the supervisor: a supervised command's result (``supervise.deliver``) graded and printed
    by the command's ``render``; the exit status (a usage error of the output, e.g. --report, is 2)."""
    renderers = {"validate": validate.render}
    with command_output(False):
        try:
            return renderers[payload["command"]](payload)
        except UsageError as exc:
            print(f"userdp: error: {exc}", file=sys.stderr)
            return EXIT_USAGE


def _main(argv) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --version / --help -> 0, usage error -> 2
        return int(exc.code or 0)
    commands = {
        "list": listing.run,
        "audit": audit.run,
        "reproduce": reproduce.run,
        "bench": bench.run,
        "validate": validate.run,
        "vectors": vectors.run,
    }
    isolate = args.command in USER_COMMANDS
    if isolate:
        timeout = getattr(args, "timeout", None)
        watch.configure(
            getattr(args, "deadline", watch.DEFAULT_DEADLINE), watch.DEFAULT_TIMEOUT if timeout is None else timeout
        )
    try:
        start_checks(args)  # before any code of the target runs: paths made absolute, --command split
        with command_output(isolate), single_threaded_blas():  # blas.py: 10x faster on a busy machine
            return commands[args.command](args)
    except UsageError as exc:
        return fail(args, exc, f"userdp: error: {exc}", EXIT_USAGE)
    except UserCodeError as exc:
        return fail(args, exc, f"userdp: error: {exc}", EXIT_ERROR)
    except MemoryError as exc:
        return fail(
            args,
            exc,
            f"userdp: error: out of memory ({raised_text(exc)}): the releases or the data "
            "did not fit; audit a smaller release (one coordinate, or a summary) or fewer --samples",
            EXIT_ERROR,
        )
    except Exception as exc:
        return fail(
            args,
            exc,
            f"userdp: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in userdp, not a finding about your mechanism; please report it "
            "with the --debug output.",
            EXIT_ERROR,
        )
    except KeyboardInterrupt as exc:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # supervised: no Ctrl-C reaches here
            return fail(
                args,
                exc,
                f"userdp: error: code outside userdp (your module, factory or mechanism) "
                f"{raised_text(exc)}; it is an error of that code, not an interrupt",
                EXIT_ERROR,
            )
        print("userdp: interrupted", file=sys.stderr)
        return 130
    except BaseException as exc:  # SystemExit and others: userdp never raises them here
        return fail(
            args,
            exc,
            f"userdp: error: code outside userdp (your module, factory or mechanism) "
            f"{raised_text(exc)}; an exit status is never the audited code's to set",
            EXIT_ERROR,
        )


if __name__ == "__main__":
    sys.exit(main())
