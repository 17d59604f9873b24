"""The ``userdp`` command line.

    userdp --version
    userdp list [--json]
    userdp audit NAME [--samples N] [--confidence C] [--seed S] [--param k=v ...] [--json] [--plot FILE]
    userdp audit --all [--samples N] [--confidence C] [--seed S] [--json]
    userdp audit module:callable --claim pure:epsilon=1 [--relation R] [--output KIND] [--param k=v ...]
    userdp reproduce NAME [--json] [--plot FILE]

External mechanisms: ``module:callable`` names a factory called as ``callable(**params)``
(params from ``--param``) that returns either an ``AuditSetup`` or a tuple
``(mechanism, pairs)``; in the second case ``--claim`` is required. Claim syntax:
``pure:epsilon=1``, ``approx:epsilon=1,delta=1e-6``, ``renyi:alpha=2,rho=0.5,delta=1e-6``,
``personalized:epsilons=[1,2,0.5]``. ``--relation`` is a label recorded in the output.

Exit status: 0 ok; 1 a finding (a violation; with --all, any entry whose verdict is not
its expected one, i.e. a reference mechanism flagged or a broken control missed); 2 a
usage or input error (message on stderr). Progress goes to stderr.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import re
import sys
import time
from importlib import metadata

from userdp.reference.claims import ApproxDP, PersonalizedDP, PureDP, RenyiDP

from .harness import VIOLATION, audit
from .registry import AuditSetup, all_entries, get, get_reproduction

DEFAULT_SAMPLES = 200_000
DEFAULT_SEED = 0
_CLAIMS = {"pure": PureDP, "approx": ApproxDP, "renyi": RenyiDP, "personalized": PersonalizedDP}


class UsageError(Exception):
    """Bad command-line input: reported on stderr with exit status 2."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="userdp", description="Reference, properties and audits for "
                                "user-level and personalized differential privacy.")
    p.add_argument("--version", action="version", version=f"userdp {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="list registered mechanisms and controls")
    ls.add_argument("--json", action="store_true")
    au = sub.add_parser("audit", help="audit a registered or external mechanism")
    au.add_argument("name", nargs="?", help="registry name (see `userdp list`) or module:callable")
    au.add_argument("--all", action="store_true", help="audit every reference and control entry")
    au.add_argument("--samples", type=int, default=None, help=f"outputs per side (default {DEFAULT_SAMPLES})")
    au.add_argument("--confidence", type=float, default=0.95)
    au.add_argument("--seed", type=int, default=DEFAULT_SEED)
    au.add_argument("--param", action="append", default=[], metavar="K=V", help="override a parameter")
    au.add_argument("--json", action="store_true")
    au.add_argument("--plot", metavar="FILE", help="histograms of the two sides with the witness set")
    au.add_argument("--claim", help="claim of an external mechanism, e.g. pure:epsilon=1")
    au.add_argument("--relation", help="neighbouring relation of an external mechanism (a label)")
    au.add_argument("--output", choices=["continuous", "vector", "discrete"], help="output kind (external)")
    rp = sub.add_parser("reproduce", help="reproduce a paper's figures and claims")
    rp.add_argument("name")
    rp.add_argument("--json", action="store_true")
    rp.add_argument("--plot", metavar="FILE")
    return p


def _version() -> str:
    try:
        return metadata.version("userdp")
    except metadata.PackageNotFoundError:
        return "unknown"


# ------------------------------------------------------------------ parsing helpers
def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_params(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, sep, val = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--param must look like key=value, got {item!r}")
        out[key.strip()] = _value(val.strip())
    return out


def parse_claim(spec: str):
    """'pure:epsilon=1' -> PureDP(1); see the module docstring for the syntax."""
    kind, sep, rest = spec.partition(":")
    if kind not in _CLAIMS or not sep:
        raise UsageError(f"--claim must look like KIND:k=v,... with KIND in {sorted(_CLAIMS)}, got {spec!r}")
    parts = [s for s in re.split(r",(?![^\[]*\])", rest) if s]
    return _CLAIMS[kind](**parse_params(parts))


def _claim_text(claim) -> str:
    params = claim.params()
    if "epsilons" in params:
        return f"{claim.kind} eps_i ({len(params['epsilons'])} records)"
    return claim.kind + " " + " ".join(f"{k}={v:g}" for k, v in params.items())


def _json(obj) -> str:
    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x
    return json.dumps(clean(obj), indent=2)


def _progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ commands
def _entry_dict(entry) -> dict:
    claim = entry.setup().claim
    return {"name": entry.name, "kind": entry.kind, "paper": entry.paper, "algorithm": entry.algorithm,
            "relation": entry.relation, "claim": {"kind": claim.kind, "params": claim.params()},
            "function": entry.function, "expected": entry.expected, "params": dict(entry.params),
            "true_epsilon": entry.true_epsilon}


def cmd_list(args) -> int:
    rows = [_entry_dict(e) for e in all_entries()]
    if args.json:
        print(_json(rows))
        return 0
    print(f"{'name':34s} {'kind':9s} {'claim':28s} {'expected':19s} function")
    for r in rows:
        claim = r["claim"]["kind"] + " " + ",".join(f"{k}={v}" for k, v in r["claim"]["params"].items()
                                                     if k != "epsilons")
        print(f"{r['name']:34s} {r['kind']:9s} {claim[:28]:28s} {r['expected']:19s} {r['function']}")
    return 0


def _external(args, params) -> tuple[AuditSetup, str]:
    mod_name, _, attr = args.name.partition(":")
    try:
        factory = getattr(importlib.import_module(mod_name), attr)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"cannot load {args.name!r}: {exc}") from exc
    made = factory(**params)
    if isinstance(made, AuditSetup):
        claim = parse_claim(args.claim) if args.claim else made.claim
        setup = AuditSetup(made.mechanism, made.pairs, claim, args.output or made.output)
    elif isinstance(made, tuple) and len(made) == 2:
        if not args.claim:
            raise UsageError(f"{args.name} returned (mechanism, pairs): give the claim with --claim")
        setup = AuditSetup(made[0], made[1], parse_claim(args.claim), args.output or "continuous")
    else:
        raise UsageError(f"{args.name} must return an AuditSetup or (mechanism, pairs), "
                         f"got {type(made).__name__}")
    return setup, args.relation or "unspecified"


def _run(setup: AuditSetup, args, samples: int, progress=None):
    return audit(setup.mechanism, setup.pairs, setup.claim, samples=samples, confidence=args.confidence,
                 seed=args.seed, output=setup.output, progress=progress)


def cmd_audit(args) -> int:
    if args.all:
        if args.name or args.param or args.plot or args.claim:
            raise UsageError("--all takes no NAME, --param, --plot or --claim")
        return _audit_all(args)
    if not args.name:
        raise UsageError("audit needs a NAME (see `userdp list`), module:callable, or --all")
    params = parse_params(args.param)
    if ":" in args.name:
        setup, relation = _external(args, params)
        name, samples = args.name, args.samples or DEFAULT_SAMPLES
    else:
        try:
            entry = get(args.name)
        except KeyError as exc:
            raise UsageError(exc.args[0]) from None
        setup, relation, name = entry.setup(**params), entry.relation, entry.name
        samples = args.samples or entry.samples or DEFAULT_SAMPLES
    result = _run(setup, args, samples, progress=_progress)
    if args.json:
        print(_json({"name": name, "relation": relation, **result.to_dict()}))
    else:
        _print_result(name, relation, result)
    if args.plot:
        from .plot import plot_audit
        plot_audit(setup, result, args.plot, seed=args.seed)
        _progress(f"plot written to {args.plot}")
    return 1 if result.verdict == VIOLATION else 0


def _print_result(name, relation, r) -> None:
    w = r.witness
    print(f"{name}: {r.verdict}")
    print(f"  claim            {_claim_text(r.claim)}  (relation: {relation})")
    print(f"  eps lower bound  {r.epsilon_lower_bound:.4f} at {r.confidence:.0%} confidence "
          f"(tightness {r.tightness:.3f})")
    print(f"  witness          {w.pair_description}; S = {w.rejection_set.describe()} ({w.ordering})")
    print(f"  counts           first {w.counts['first']}, second {w.counts['second']} "
          f"of {w.counts['n_per_side']} per side; p = {w.p_value:.3g}, Holm-adjusted {w.adjusted_p_value:.3g}")
    print(f"  samples          {r.samples} per side; {r.termination_reason}; {r.elapsed_seconds:.2f} s")


def _audit_all(args) -> int:
    entries = [e for e in all_entries() if e.kind in ("reference", "control")]
    rows, failed, errors = [], 0, 0
    t0 = time.perf_counter()
    for i, e in enumerate(entries, 1):
        samples = args.samples or e.samples or DEFAULT_SAMPLES
        try:
            r = _run(e.setup(), args, samples)
        except Exception as exc:  # reported, counted, and the run goes on; exit 2 at the end
            errors += 1
            _progress(f"[{i}/{len(entries)}] {e.name}: ERROR {type(exc).__name__}: {exc}")
            rows.append({"name": e.name, "kind": e.kind, "error": f"{type(exc).__name__}: {exc}"})
            continue
        ok = r.verdict == e.expected
        failed += not ok
        _progress(f"[{i}/{len(entries)}] {e.name}: {r.verdict} (eps_lb {r.epsilon_lower_bound:.3f}, "
                  f"{r.elapsed_seconds:.1f} s){'' if ok else '  <-- expected ' + e.expected}")
        rows.append({"name": e.name, "kind": e.kind, "expected": e.expected, "as_expected": ok,
                     **r.to_dict()})
    if args.json:
        print(_json(rows))
    else:
        print(f"{'name':34s} {'kind':9s} {'claim':28s} {'eps_lb':>8s} {'tight':>7s}  verdict")
        for row in rows:
            if "error" in row:
                print(f"{row['name']:34s} {row['kind']:9s} ERROR: {row['error']}")
                continue
            c = row["claim"]
            claim = c["kind"] + " " + ",".join(f"{k}={v:g}" for k, v in c["params"].items() if k != "epsilons")
            mark = "" if row["as_expected"] else f"   <-- expected {row['expected']}"
            print(f"{row['name']:34s} {row['kind']:9s} {claim[:28]:28s} {row['epsilon_lower_bound']:8.4f} "
                  f"{row['tightness']:7.3f}  {row['verdict']}{mark}")
        print(f"{len(rows)} entries, {failed} not as expected, {errors} errors, "
              f"{time.perf_counter() - t0:.1f} s")
    return 2 if errors else (1 if failed else 0)


def cmd_reproduce(args) -> int:
    try:
        func = get_reproduction(args.name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    out = func(plot=args.plot)
    claims = out.get("claims", [])
    if args.json:
        print(_json(out))
    else:
        table = out.get("table")
        if isinstance(table, str):
            print(table)
        elif table:
            for row in table:
                print("  ".join(f"{k}={v}" for k, v in row.items()) if isinstance(row, dict) else row)
        for c in claims:
            print(f"[{'holds' if c['holds'] else 'FAILS'}] {c['statement']} -- {c.get('evidence', '')}")
    return 0 if all(c["holds"] for c in claims) else 1


def main(argv=None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --version / --help -> 0, usage error -> 2
        return int(exc.code or 0)
    commands = {"list": cmd_list, "audit": cmd_audit, "reproduce": cmd_reproduce}
    try:
        return commands[args.command](args)
    except BrokenPipeError:  # e.g. `userdp list | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (UsageError, ValueError, TypeError, ImportError, KeyError, RuntimeError) as exc:
        print(f"userdp: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
