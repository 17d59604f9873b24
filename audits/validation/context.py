"""The shared, explicit state of one ``userdp validate`` run: ``Context``.

Every check (``audits/validation/check_*.py``) is called as ``check(spec, target, ctx)`` and reads or
writes only what this dataclass holds: the settings (seed, quick, the sample counts given, the time
budgets), the cases, what earlier checks learnt (whether TARGET's releases are independent, its cost
per release, the drawn cases of the differential, whether it clips, the pair to aim an audit at) and
what the run collects (findings, the checks' one-line summaries, notes, the inputs table).

``CaseDraw``: one case's releases as the differential drew them, which the inputs and audit checks
read too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from userdp.audits.validation import Case, ValidationSpec
from userdp.audits.validation.findings import Finding
from userdp.audits.validation.releases import release_rows
from userdp.audits.validation.settings import BUDGET, DEFAULT_EXAMPLES, MAX_SECONDS, QUICK
from userdp.audits.validation.target import PythonTarget

__all__ = ["Context", "CaseDraw"]


@dataclass
class CaseDraw:
    """One case's releases as the differential drew them (finite rows only), with its centre."""

    case: Case
    Xt: np.ndarray  # target rows (finite and released only)
    Xr: np.ndarray  # reference rows
    centre: np.ndarray  # (k,) the statistic, or the median of a separate reference batch
    exact: bool  # centre is the exact statistic
    bad_rows: int  # target rows holding inf or (not declining) NaN
    released: tuple  # (share released by target, by reference) where the spec declines
    own: np.ndarray | None  # TARGET's own statistic stage, flattened
    n: int = 0  # target releases drawn (finite or not)
    non_finite: str = ""  # which non-finite values the bad rows hold ("NaN in 3 releases, +inf in 1")
    scale: list = field(default_factory=list)  # per coordinate (ratio, log_se, s_t, s_r)


@dataclass
class Context:
    """One run's settings and state, shared by the checks in the order ``run.py`` plans them. Build it
    with ``Context.start`` (the settings are checked before, by ``settings.check_settings``)."""

    spec: ValidationSpec
    target: PythonTarget
    seed: int
    quick: bool
    policy: str | None  # the declared input policy, None: inferred per case
    examples: int  # Hypothesis examples per property
    samples_given: int | None  # releases per case, None: chosen by TARGET's speed
    audit_samples_given: int | None  # outputs per side per audited pair, None: chosen by TARGET's speed
    budget: dict  # seconds of TARGET's own time: differential, audit
    max_seconds: float  # TARGET's CPU time above which the sample floors give way
    cases: list  # the spec's fixed cases, then the generated ones for the seed
    progress: Callable | None = None  # called with one message as the run goes
    findings: list = field(default_factory=list)  # every Finding, in the order found
    checks: dict = field(default_factory=dict)  # check -> "ran: ..." or "skipped: why"
    notes: list = field(default_factory=list)
    inputs: list = field(default_factory=list)  # [{case, kind, behaviour, requires}]
    independent: bool = True  # TARGET's releases of one call are independent (the independence check)
    cost: float | None = None  # seconds per target release, measured
    samples: object = None  # releases drawn per case (an int, or "lo-hi"), for the report
    audit_samples: object = None  # outputs per side per audited pair, for the report
    draws: list = field(default_factory=list)  # [CaseDraw] of the differential
    clips: bool = False  # some out-of-domain case released on the projected law
    clipped_fields: set = field(default_factory=set)  # the dataset fields found clipped (check_inputs)
    reproducible: bool | None = None  # TARGET's releases follow the rng it is given
    aim: tuple | None = None  # (case, reason) for the aimed audit
    slow: bool = False  # the floors gave way to a very slow target
    search: bool = True  # the pair search (pair_search.py) runs where the spec declares a domain
    search_summary: str = ""  # what the pair search found, for the report

    @classmethod
    def start(
        cls, spec, target, *, samples, audit_samples, examples, seed, quick, inputs, progress, search=True
    ) -> Context:
        """A fresh run of ``spec`` on ``target`` with checked settings (``check_settings``)."""
        return cls(
            spec=spec,
            target=target,
            seed=int(seed),
            quick=quick,
            policy=inputs,
            examples=examples if examples is not None else (QUICK["examples"] if quick else DEFAULT_EXAMPLES),
            samples_given=samples,
            audit_samples_given=audit_samples,
            budget={k: v * (QUICK["budget"] if quick else 1.0) for k, v in BUDGET.items()},
            max_seconds=MAX_SECONDS * (QUICK["budget"] if quick else 1.0),
            cases=spec.all_cases(seed),
            progress=progress,
            search=bool(search),
        )

    def say(self, msg: str) -> None:
        """Report progress (``progress``), if a callable was given."""
        if self.progress is not None:
            self.progress(msg)

    def add(self, finding: Finding) -> None:
        """Collect one finding."""
        self.findings.append(finding)

    def rows(self, case: Case, rng, n: int, where: str) -> np.ndarray:
        """n releases of TARGET on ``case`` as rows, one per call where its batches are not independent."""
        return release_rows(
            self.spec, self.target, case.dataset, rng, n, case.params, where, one_per_call=not self.independent
        )

    def claim(self, case: Case):
        """The privacy claim on ``case``: the spec's, or its first design's; None without either."""
        if self.spec.claim is not None:
            return self.spec.claim(case.dataset, case.params)
        designs = list(self.spec.designs())
        return designs[0].claim if designs else None
