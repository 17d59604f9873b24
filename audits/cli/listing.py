"""``userdp list``: the registered mechanisms and controls, as a table or JSON (schema
userdp.list/1, documented in the docstring of ``audits/cli/main.py``)."""

from __future__ import annotations

from userdp.audits.engine.registry import all_entries
from userdp.audits.engine.report import table, to_json
from userdp.audits.cli.audit import claim_text
from userdp.audits.cli.common import EXIT_OK
from userdp.audits.cli.targets import DEFAULT_SAMPLES

__all__ = ["add_parser", "run"]


def add_parser(sub, common) -> None:
    """The ``list`` subcommand."""
    ls = sub.add_parser("list", parents=[common], help="list registered mechanisms and controls")
    ls.add_argument("--json", action="store_true", help="print JSON (schema userdp.list/1)")


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


def run(args) -> int:
    """``userdp list``: the exit status."""
    entries = all_entries()
    setups = [e.setup() for e in entries]
    claims = [s.claim for s in setups]
    rows = [_entry_dict(e, s) for e, s in zip(entries, setups)]
    if args.json:
        print(to_json("userdp.list/1", {"entries": rows}))
        return EXIT_OK
    for r, c in zip(rows, claims):
        r["claim"] = claim_text(c)
    for r in rows:
        r["validate"] = "yes" if r["validate"] else "-"
    print(table(rows, ["name", "kind", "claim", "expected", "samples", "validate", "function"]))
    print(
        "\nkind: reference = a paper's mechanism; control = textbook mechanism with known loss; "
        "planted = known-broken variant (not in --all). samples = default outputs per side. "
        "validate: `userdp validate NAME module:object` checks your implementation of it."
    )
    return EXIT_OK
