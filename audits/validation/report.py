"""Reporting of ``userdp validate``, apart from the testing: the text report (``format_report``,
``format_finding``), the report record of a run (``report_of``), and how a finding's evidence shows
an output, parameters, a claim and a runnable snippet (``short``, ``jsonable``, ``claim_text``,
``property_snippet``, ``case_snippet``); ``scale_parameter`` is the claim's parameter that scales as
one over the noise scale (the under-noised finding's implied bound).
"""

from __future__ import annotations

import numbers
from typing import Mapping

import numpy as np

from userdp.audits.validation import BadType, BadValue, Case
from userdp.audits.validation.context import Context
from userdp.audits.validation.findings import VERDICT_ORDER, Finding, ValidationReport
from userdp.audits.validation.releases import nested_flat
from userdp.audits.validation.settings import ALPHA
from userdp.audits.validation.target import ONE

__all__ = [
    "format_report",
    "format_finding",
    "report_of",
    "report_from_dict",
    "short",
    "jsonable",
    "claim_text",
    "scale_parameter",
    "property_snippet",
    "case_snippet",
    "impl_lines",
]


def format_report(r: ValidationReport) -> str:
    """The text report: verdict, which checks ran, each finding with its evidence (worst first)."""
    if not isinstance(r, ValidationReport):
        raise BadType(f"r must be a ValidationReport (what validate returns), got {type(r).__name__}")
    lines = [f"userdp validate {r.algorithm} {r.target}", f"verdict: {r.verdict_line()}"]
    if r.call_shape:
        lines.append(
            f"call shape: {r.call_shape}"
            + (f"; parameters renamed {r.settings.get('param_map')}" if r.settings.get("param_map") else "")
        )
    lines += ["", "checks:"] + [f"  {k:<13} {v}" for k, v in r.checks.items()]
    for n in r.notes:
        lines.append(f"note: {n}")
    bad = sorted((f for f in r.findings if f.verdict != "pass"), key=lambda f: VERDICT_ORDER.index(f.verdict))
    lines += ["", f"findings ({len(bad)}):" if bad else "findings: none"]
    shown = set()
    for f in bad:
        snip = f.evidence.get("snippet")
        if snip is not None and snip in shown:  # the same case's snippet: printed once
            f = Finding(
                f.check,
                f.verdict,
                f.title,
                {**{k: v for k, v in f.evidence.items() if k != "snippet"}, "snippet": "(as above)"},
            )
        elif snip is not None:
            shown.add(snip)
        lines += format_finding(f)
    loose = [e for e in r.inputs if e["behaviour"] == "not enforced"]
    if r.inputs:
        lines += ["", "inputs the reference refuses:"]
        lines += [f"  {e['behaviour']:<26} {e['case']}" for e in r.inputs if e["behaviour"] != "not enforced"]
    if loose:
        lines += ["", "inputs not enforced (not a finding; the caller must guarantee them):"]
        lines += [f"  {e['requires']}  ({e['case']}: TARGET released)" for e in loose]
    ok = [f for f in r.findings if f.verdict == "pass"]
    lines += ["", f"passed ({len(ok)}):"] + [f"  {f.check}: {f.title}" for f in ok]
    lines += ["", f"settings: {r.settings}; {r.elapsed_seconds:.1f} s"]
    return "\n".join(lines)


def report_from_dict(data: Mapping, elapsed_seconds: float | None = None) -> ValidationReport:
    """The ``ValidationReport`` whose ``to_dict()`` is ``data`` (JSON-decoded): its findings
    (``findings`` and ``passed``), checks, settings and the rest. Its verdict and completeness are
    recomputed from them (``data["verdict"]`` and ``data["complete"]`` are not read).
    ``elapsed_seconds``: the run's time unrounded (default: ``data``'s, rounded to 0.01 s)."""
    if not isinstance(data, Mapping):
        raise BadType(f"data must be a report as a mapping (ValidationReport.to_dict()), got {type(data).__name__}")
    keys = ("algorithm", "target", "checks", "findings", "passed", "settings", "elapsed_seconds", "call_shape")
    missing = [k for k in keys + ("untested", "inputs", "notes", "reproducible") if k not in data]
    if missing:
        raise BadValue(f"data must be a report (ValidationReport.to_dict()); missing {missing}")
    if elapsed_seconds is not None and (
        isinstance(elapsed_seconds, bool)
        or not isinstance(elapsed_seconds, (int, float))
        or not 0 <= elapsed_seconds < float("inf")
    ):
        raise BadValue(f"elapsed_seconds must be None or a finite number of seconds >= 0, got {elapsed_seconds!r}")
    findings = [
        Finding(f["check"], f["verdict"], f["title"], dict(f["evidence"]))
        for f in list(data["findings"]) + list(data["passed"])
    ]
    bad = [f.verdict for f in findings if f.verdict not in VERDICT_ORDER]
    if bad:
        raise ValueError(f"data: finding verdict(s) {bad} are not among {VERDICT_ORDER}")
    return ValidationReport(
        algorithm=data["algorithm"],
        target=data["target"],
        checks=dict(data["checks"]),
        findings=findings,
        settings=dict(data["settings"]),
        elapsed_seconds=float(data["elapsed_seconds"] if elapsed_seconds is None else elapsed_seconds),
        call_shape=data["call_shape"],
        untested=list(data["untested"]),
        inputs=list(data["inputs"]),
        notes=list(data["notes"]),
        reproducible=data["reproducible"],
    )


def format_finding(f: Finding, indent: str = "  ") -> list:
    """One finding: its verdict and title, then its evidence, one item per line."""
    if not isinstance(f, Finding):
        raise BadType(f"f must be a validate.Finding, got {type(f).__name__}")
    if not isinstance(indent, str):
        raise BadType(f"indent must be a str, got {type(indent).__name__}")
    lines = [f"{indent}[{f.verdict}] {f.check}: {f.title}"]
    for k, v in f.evidence.items():
        if k == "snippet" and v == "(as above)":
            lines.append(f"{indent}    snippet: as above (the same case)")
        elif k == "snippet":
            lines.append(f"{indent}    snippet (runnable):")
            lines += [f"{indent}      {s}" for s in str(v).splitlines()]
        elif k == "witness" and isinstance(v, dict):  # an audit's; a replay's is text
            lines.append(
                f"{indent}    witness: pair {v['pair_description']!r}, set "
                f"{v['rejection_set'].get('description', v['rejection_set'])}, counts {v['counts']} "
                f"({v['ordering']})"
            )
        else:
            lines.append(f"{indent}    {k}: {_fmt(v)}")
    return lines


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list) and all(isinstance(x, float) for x in v):
        return "[" + ", ".join(f"{x:.6g}" for x in v) + "]"
    return str(v)


def report_of(ctx: Context, elapsed: float) -> ValidationReport:
    """The run's report: what ``ctx`` collected, its settings, and ``elapsed`` seconds."""
    if isinstance(elapsed, bool) or not isinstance(elapsed, numbers.Real) or not elapsed >= 0:
        raise BadValue(f"elapsed must be a number of seconds >= 0, got {elapsed!r}")
    untested = (
        [] if ctx.target.mechanism is not None else ["stages only: the release was not tested; privacy not checked"]
    )
    settings = {
        "samples": ctx.samples,
        "audit_samples": ctx.audit_samples,
        "examples": ctx.examples,
        "seed": ctx.seed,
        "quick": ctx.quick,
        "inputs": ctx.policy or "inferred",
        "param_map": dict(ctx.target.param_map),
        "alpha": ALPHA,
        "seconds_per_release": None if ctx.cost is None else float(f"{ctx.cost:.3g}"),
    }
    return ValidationReport(
        ctx.spec.algorithm,
        ctx.target.name,
        ctx.checks,
        ctx.findings,
        settings,
        elapsed,
        ctx.target.shape,
        untested,
        ctx.inputs,
        ctx.notes,
        ctx.reproducible,
    )


def short(a) -> str:
    """Any output, briefly, for the report; never raises (a finding is never lost to its formatting)."""
    try:
        if a is None:
            return "None"
        flat = nested_flat(a)
        if flat is None:
            return f"{type(a).__name__} (not numeric): {repr(a)[:80]}"
        text = np.array2string(flat[:6], precision=6)
        return text + (f" ... ({flat.size} values)" if flat.size > 6 else "")
    except Exception:  # noqa: BLE001 - a repr must not end the run
        return f"{type(a).__name__} (unprintable)"


def jsonable(d: Mapping) -> dict:
    """Parameters for the report: small arrays as lists, larger ones by shape."""
    return {
        k: ((v.tolist() if v.size <= 8 else f"array of shape {v.shape}") if isinstance(v, np.ndarray) else v)
        for k, v in d.items()
    }


def claim_text(claim) -> str:
    """'pure epsilon=1', 'approx epsilon=3,delta=1e-05'; a paired claim as both, joined by '; and '."""
    if claim.kind == "claims":
        return f"{claim_text(claim.primary)}; and {claim_text(claim.gdp)}"

    def one(v):
        if isinstance(v, float):
            return f"{v:g}"
        if isinstance(v, (list, tuple)) and len(v) > 8:  # a personalized profile: its range
            return f"[{len(v)} values in {min(v):g}..{max(v):g}]"
        return str(v)

    params = ",".join(f"{k}={one(v)}" for k, v in claim.params().items())
    return f"{claim.kind} {params}"


def scale_parameter(claim, unit) -> tuple[str, float] | None:
    """The claim's parameter that scales as 1 / (noise scale) for noise of a fixed family:
    mu for Gaussian DP, eps for pure, personalized (the pair's record) and approximate DP."""
    kind = claim.kind
    if kind == "claims":
        return "mu", float(claim.gdp.mu)
    if kind == "gdp":
        return "mu", float(claim.mu)
    if kind == "personalized":
        eps = claim.params()["epsilons"]
        i = 0 if unit is None or not 0 <= int(unit) < len(eps) else int(unit)
        return f"eps_{i}", float(eps[i])
    if kind in ("pure", "approx"):
        return "eps", float(claim.params()["epsilon"])
    return None


def impl_lines(spec, target, what: str = "mechanism") -> str:
    """How a snippet gets ``impl``: for a program (``--command``), the lines that start it over the
    protocol and take its release (``what`` "mechanism") or its stages ("adapter"), in the program's
    own terms; for a Python target, a comment that ``impl`` is your function or Adapter."""
    if what not in ("mechanism", "adapter"):
        raise ValueError(f"what must be 'mechanism' or 'adapter', got {what!r:.80}")
    program = getattr(target, "program", None)
    if program is None:
        return (
            "# impl: your Adapter\n"
            if what == "adapter"
            else "# impl: your function (rename the parameters as with --param-map)\n"
        )
    take = (
        f"impl = program.adapter(getattr(importlib.import_module({spec.suite!r}), 'ADAPTER', None))"
        "   # its stages, over the protocol"
        if what == "adapter"
        else "impl = program.mechanism   # its releases: impl(dataset, rng=rng, size=n, **params), over the protocol"
    )
    return (
        "# your program, run as userdp validate runs it (docs/protocol.md; --transcript FILE logs its requests)\n"
        "import importlib\n"
        "from userdp.audits.validation.protocol import ProcessTarget\n"
        f"program = ProcessTarget({program.command!r}, algorithm={spec.algorithm!r})\n"
        f"{take}\n"
    )


def property_snippet(spec, prop, f, target=None) -> str:
    """The minimal counterexample as a runnable snippet (the TARGET's adapter is named 'impl';
    for a program, ``impl_lines`` start it)."""
    return (
        impl_lines(spec, target, "adapter") + "import numpy as np\n"
        "from numpy import array, float64, int64\n"
        "from userdp.reference.data import UserDataset\n"
        f"from {spec.suite} import *\n"
        f"example = {f.counterexample}\n"
        f"{prop.__name__}(impl, example)   # raises AssertionError"
    )


def case_snippet(ctx: Context, case: Case) -> dict:
    """A runnable snippet that reproduces the comparison on ``case`` (``evidence['snippet']``)."""
    i = next((j for j, c in enumerate(ctx.cases) if c is case), None)
    if i is None:
        return {}
    call = (
        "np.array([impl(case.dataset, rng, **case.params) for _ in range(n)])"
        if ctx.target.shape == ONE
        else "impl(case.dataset, rng=rng, size=n, **case.params)"
    )
    return {
        "snippet": (
            impl_lines(ctx.spec, ctx.target) + "import numpy as np\n"
            "from userdp.audits.validation import get\n"
            f"spec = get({ctx.spec.algorithm!r})\n"
            f"case = spec.all_cases(seed={ctx.seed})[{i}]   # {case.description}\n"
            "print(case.dataset, case.params)\n"
            "rng, n = np.random.default_rng(0), 20_000\n"
            f"mine = {call}\n"
            "ours = spec.reference(case.dataset, rng=rng, size=n, **case.params)\n"
            "print('yours: mean', np.mean(mine, axis=0), 'sd', np.std(mine, axis=0))\n"
            "print('ours:  mean', np.mean(ours, axis=0), 'sd', np.std(ours, axis=0))"
        )
    }
