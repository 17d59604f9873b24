"""``userdp audit``: a registered or external mechanism, one audit or ``--all``, printed as text
or JSON (schemas userdp.audit/1 and userdp.audit-all/1, documented with the exit statuses and
the ``--all`` correction in the docstring of ``audits/cli/main.py``).

What is audited is built by ``targets.py`` (a registry entry, ``module:callable``,
``--mechanism``) or by ``program.py`` (``--command``); ``_run_target`` audits any of them.
"""

from __future__ import annotations

import argparse
import json
import textwrap
import traceback

from userdp.audits.engine.ceiling import NOISE_FAMILIES
from userdp.audits.engine import outcomes
from userdp.audits.engine.harness import VIOLATION, IncompleteAudit
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

from userdp.audits.engine.registry import all_entries
from userdp.audits.engine.report import Progress, fmt, pct, results, table, to_json
from userdp.audits.engine.sampling import MechanismError
from userdp.audits.validation.pair_search import domain_pairs
from userdp.audits.cli.common import (
    EXIT_ERROR,
    EXIT_FINDING,
    EXIT_OK,
    check_plot_target,
    confidence_level,
    fail,
    int_at_least,
    selection_fraction_arg,
    watch_options,
)
from userdp.audits.cli.program import add_program_arguments, audit_target, uses_program
from userdp.audits.cli.targets import (
    CLAIM_FORMS,
    DEFAULT_SAMPLES,
    Target,
    UsageError,
    call_target,
    external_target,
    mechanism_error,
    parse_params,
    registry_target,
    run_audit,
    run_efficiency,
)

__all__ = ["add_parser", "run", "claim_text", "DEFAULT_CONFIDENCE", "DEFAULT_SEED", "MIN_SAMPLES", "SAMPLES_RANGE"]

DEFAULT_CONFIDENCE = 0.95  # --confidence
DEFAULT_SEED = 0  # --seed
MIN_SAMPLES = 100  # the harness's floor (harness.audit)
SAMPLES_RANGE = "20000 to 1000000"  # of the entries' defaults; a test keeps it true


def add_parser(sub, common) -> None:
    """The ``audit`` subcommand."""
    au = sub.add_parser(
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
    _what_arguments(au)
    _external_arguments(au)
    _run_arguments(au)


def _what_arguments(au: argparse.ArgumentParser) -> None:
    """What is audited, how hard, and what is printed: NAME, --all, --samples, ..., --plot."""
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
        type=int_at_least(MIN_SAMPLES, "outputs per side"),
        default=None,
        metavar="N",
        help=f"outputs per side, >= {MIN_SAMPLES} (default: the entry's own, "
        f"the 'samples' column of `userdp list`, {SAMPLES_RANGE}; {DEFAULT_SAMPLES} for "
        "module:callable)",
    )
    au.add_argument(
        "--confidence",
        type=confidence_level,
        default=DEFAULT_CONFIDENCE,
        metavar="C",
        help=f"confidence in (0, 1) (default {DEFAULT_CONFIDENCE}); with --all it is "
        "family-wise: each of m entries is audited at 1 - (1 - C)/m",
    )
    au.add_argument(
        "--seed",
        type=int_at_least(0, "a seed"),
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


def _external_arguments(au: argparse.ArgumentParser) -> None:
    """An external mechanism's claim, relation and outputs, the audit's options, and --mechanism."""
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
        type=selection_fraction_arg,
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
        "--search",
        metavar="DOMAIN",
        help="with --mechanism, instead of --pair: search the pairs of a declared domain, a JSON object "
        '{"values": [lo, hi], "sizes": [n, ...], "relation": "add-remove-record" or "replace-record"}: '
        "records at both ends, interior points and the centre, added, removed or replaced, on datasets of "
        'each size; or "relation": "add-remove-user" with "partitions": [key, ...] (and "records": [r, ...]): '
        "rows [user, partition, value], a user added across 1 .. all keys or removed "
        "(audits/validation/pair_search.py); the auditor's pilot ranks them on fresh outputs and "
        "confirms the best",
    )
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


def _run_arguments(au: argparse.ArgumentParser) -> None:
    """--command and its options, where the releases are drawn, and the watch options."""
    add_program_arguments(au)
    au.add_argument(
        "--workers",
        type=int_at_least(1, "worker processes"),
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
    watch_options(au)


def claim_text(claim) -> str:
    """A claim as one line of text (a "claims" pair as its two parts)."""
    if claim.kind == "claims":  # a paper's claim and its declared exact mu-GDP
        return f"{claim_text(claim.primary)}; and {claim_text(claim.gdp)}"
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


def run(args) -> int:
    """``userdp audit``: the exit status."""
    if args.workers is not None and args.scheduler is not None:
        raise UsageError("--workers and --scheduler exclude each other: the Dask cluster has its own workers")
    if uses_program(args):  # a program over the protocol (audits/cli/program.py)
        if args.plot:  # refused before the program starts
            check_plot_target(args.plot)
        with audit_target(args) as target:  # the program is ended on leaving
            return _run_target(target, args)
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
    if args.search is not None:
        if not args.mechanism or args.pair:
            raise UsageError("--search goes with --mechanism MODULE:CALLABLE, instead of --pair")
        try:
            domain = json.loads(args.search)
        except ValueError as exc:
            raise UsageError(f"--search must be JSON, got {args.search!r}: {exc}") from None
        args.pair = [(json.dumps(a), json.dumps(b)) for a, b in domain_pairs(domain)]
        args.relation = args.relation or domain["relation"]
    if args.mechanism:
        if args.name or args.param:
            raise UsageError("--mechanism replaces NAME and --param: give one of them")
        if args.plot:
            check_plot_target(args.plot)
        target = call_target(
            args.mechanism,
            args.kwargs,
            args.pair,
            claim=args.claim,
            relation=args.relation,
            output=args.output,
            samples=args.samples,
        )
        return _run_target(target, args)
    if not args.name:
        raise UsageError("audit needs a NAME (see `userdp list`), module:callable, or --all")
    if ":" not in args.name and (args.claim or args.relation or args.output):
        raise UsageError(
            "--claim, --relation and --output are for module:callable targets; a registry "
            "entry has its own (see `userdp list --json`)"
        )
    if args.plot:
        check_plot_target(args.plot)
    raw = parse_params(args.param)
    if ":" in args.name:
        target = external_target(
            args.name, raw, claim=args.claim, relation=args.relation, output=args.output, samples=args.samples
        )
    else:
        target = registry_target(args.name, raw, args.samples)
    return _run_target(target, args)


def _run_target(target: Target, args) -> int:
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
    if target.noise is None:
        progress.note("estimating the noise family and its ceiling on fresh outputs of the witness pair")
    eff = run_efficiency(target, result, args.seed)
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
        return fail(args, incomplete, f"userdp: error: {error}", EXIT_ERROR)
    return EXIT_FINDING if result.verdict == VIOLATION else EXIT_OK


def _print_estimated(est) -> None:
    """The estimated ceiling's line (``targets.estimated_efficiency``), if one was tried."""
    if est is None:
        return
    if est["ceiling"] is None:
        print(f"  estimated        no ceiling: {est['refusal']}")
        return
    f, c = est["fit"], est["ceiling"]
    print(
        f"  estimated        ceiling {c['epsilon']:.4f} of {f['family']} noise fitted per coordinate on {f['draws']} "
        f"fresh outputs per side (fit p = {f['p_value']:.2g}); efficiency eps_lb / estimated ceiling = "
        f"{fmt(est['efficiency'], 3)} (estimated: not used for the verdict)"
    )


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
    print(f"  claim            {claim_text(r.claim)}  (relation: {t.relation})")
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
        _print_estimated(eff.get("estimated"))
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
    for line in _event_lines(r):
        print(textwrap.fill(line, 110, initial_indent="  outcomes         ", subsequent_indent=" " * 19))
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


def _event_lines(r) -> list[str]:
    """The pairs whose calls raised or warned: their rates per side, how they were drawn, and the
    witness when it is an event set (``outcomes.py``: an exception or a warning is an output)."""
    lines = []
    for ev in r.events:
        rates = []
        for kind in ("raised", "warned"):
            if ev["first"][kind] or ev["second"][kind]:
                names = {**ev["first"]["raised_by_class"], **ev["second"]["raised_by_class"]}
                what = sorted(names) if kind == "raised" else ev["first"]["warning_categories"]
                what = what or ev["second"]["warning_categories"]
                rates.append(
                    f"{kind} ({', '.join(what)}) on {100 * ev['first'][kind]:.3g}% of the first dataset's calls "
                    f"and {100 * ev['second'][kind]:.3g}% of the second's"
                )
        counted = (
            ", ".join(f"{{the call {c['event']}}}" for c in ev["counted"])
            or "none (no difference in the selection share)"
        )
        lines.append(
            f"pair {ev['pair_description']}: {'; '.join(rates)}; drawn {ev['drawn']}; event sets counted: {counted}"
        )
    text = outcomes.witness_text(r)
    if text is not None:
        lines.append(f"witness: {text}")
    return lines


_REPRODUCIBLE = {
    True: "yes: two calls with generators from one seed gave the same varying outputs, and another seed other ones",
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
