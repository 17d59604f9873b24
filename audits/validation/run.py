"""``userdp validate ALGORITHM TARGET``: a graded verdict on someone else's implementation.

TARGET is ``module:object``: a function making one release per call, ``f(dataset, rng,
**params)``, a batched one, ``f(dataset, rng, size, **params)``, or an ``Adapter``
(``properties/adapter.py``) with any of the suite's stages (``audits/validation/target.py``
reads the shape from the signature and renames parameters with ``param_map``). What validate
knows about each algorithm is its spec (``audits/papers/<paper>/specs*.py``). The checks, in this order, each
skipped only when the stages it needs are absent, and said so (``applies``); each is one module,
``audits/validation/check_<name>.py``, whose docstring says what it tests and why the test is valid,
with one signature, ``check(spec, target, ctx)``, the context (``context.py``) holding the run's
shared state:

0. **behaviour** (``check_behaviour.py``, first): a refusal, exception, warning, non-finite value or
   release of another type or shape on one side of a neighbouring pair and not on the other, found by
   screening the spec's datasets and bisecting paths of neighbours, confirmed by replay with the same
   seeds: a privacy violation with the pair as witness. A later check that raises is then reported as
   stopped (``Check.run``), not as exit status 3.
a. **properties** (``check_properties.py``): the paper's property suite on the noise-free stages
   TARGET has; **stages** (``check_stages.py``): each such stage against the suite's reference on
   every case (relative tolerance ``STAGE_RTOL``).
b. **independence** (``check_independence.py``, batched targets): Kruskal-Wallis on releases grouped
   by the call that made them. A dependent target is then drawn one release per call.
c. **differential** (``check_differential.py``; its findings: ``report_differential.py``), on the
   spec's fixed cases and the generated ones, the whole release: mean, scale (less noise where a
   pair shows it matters: "under-noised", a privacy finding with an exact replay witness, else a
   possible one), distribution (KS), structure,
   finite, stages agree. The failing case with the fewest records is printed as a runnable snippet.
d. **inputs** (``check_inputs.py``): the inputs the reference refuses (``Refusal``), under the
   declared input policy or the one each case shows (``POLICIES``).
e. **audit** (``check_audits.py``): ``harness.audit`` of TARGET's release on the spec's designs, on
   one pair aimed by TARGET's behaviour, on the pair a white-box search of TARGET's own stages finds
   worst, on the pairs the pair search of TARGET's release finds worst in the spec's declared
   neighbour domain (``pair_search.py``; ``search=False`` turns it off), and, for a clipping
   target, on the spec's out-of-domain designs.

This module only plans, orders and collects: ``checks`` yields the checks of one run one by one
(each says whether it applies and, if not, why; each runs the checks it needs first), sharing one
``Context``; ``validate`` runs them all and returns the report (``report.py`` formats it). The
settings are checked in one place (``settings.check_settings``), before TARGET is imported.

False alarms. A correct target gets a finding with probability at most ``ALPHA`` = 1e-4
(``settings.py``) per run, split as ``ALPHAS`` (Bonferroni: valid under any dependence between the checks):
mean 2e-5, scale 2e-5, distribution 2e-5 (each Bonferroni or Holm over every case and
coordinate), audit 2e-5 (split evenly over the planned audits: designs, the aimed slot, the
white-box slot where the spec has one, the searched slot where it declares a domain, and the
out-of-domain designs), independence,
stages-agree, no-release shares and the clip comparisons 5e-6 each (``settings.ALPHAS``). The
property suites are derandomized (their own statistical properties state thresholds of 1e-5 or
less). The inferred input policy draws no finding, so it spends nothing.

Sample sizes (the constants of ``settings.py``). Batched targets get ``DEFAULT_SAMPLES`` releases
per case (the reference ``REFERENCE_FACTOR`` times as many, and at least ``REFERENCE_MIN``) and
``DEFAULT_AUDIT_SAMPLES`` per side per audited pair.
A target that is slow per release (one release per call, or not independent) gets fewer, so
that its own time stays within ``BUDGET`` seconds for the differential and the audits, but
never fewer than ``MIN_SAMPLES`` and ``MIN_AUDIT_SAMPLES`` unless that would take the run past
``MAX_SECONDS`` of the target's CPU time (then down to ``FLOOR_SAMPLES``, and the report says so;
``--quick`` scales the budgets and ``MAX_SECONDS`` by ``QUICK["budget"]``).
Counts are rounded down to a power of 2 times the floor (timings vary with the machine's load;
the report gives the counts, and ``samples`` and ``audit_samples`` given explicitly are used as
they are, which reproduces a run exactly). Every critical value follows the sample size, and
the report says what the run resolves (the smallest change of the noise scale it detects with
probability >= 1/2).

Verdicts (Wycheproof's grading), worst first: "privacy violation", "invariant violation",
"deviation from reference", "not independent", "pass". Without a release (an Adapter with
noise-free stages only) the run is partial: the verdict says what was not tested
(``ValidationReport.complete``). Exit status (``audits/cli/main.py``): 0 pass; 1 any finding; 2 usage
error (unknown algorithm, a TARGET that cannot be imported, has no stage, or does not take
the reference's keywords); 3 TARGET raised or returned the wrong shape (on every dataset tried,
or on public inputs: otherwise the behaviour check grades it); 4 a partial pass (unless
``--allow-partial``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Iterator, Mapping

from userdp.audits.engine.blas import single_threaded_blas
from userdp.audits.engine.usercode import UserCodeError
from userdp.audits.validation import BadType, BadValue, ValidationSpec, get
from userdp.audits.validation import (
    check_audits,
    check_behaviour,
    check_differential,
    check_independence,
    check_inputs,
    check_properties,
    check_stages,
)
from userdp.audits.validation.context import Context
from userdp.audits.validation.findings import ValidationReport
from userdp.audits.validation.report import report_of
from userdp.audits.validation.settings import check_settings
from userdp.audits.validation.target import PythonTarget, check_call, load_target

__all__ = [
    "PLAN",
    "Check",
    "checks",
    "validate",
]

# the checks of a run, in the order they run (each module: NAME, NEEDS, applies, check)
PLAN = (
    check_behaviour,
    check_properties,
    check_stages,
    check_independence,
    check_differential,
    check_inputs,
    check_audits,
)


# ------------------------------------------------------------------------ the plan
@dataclass(eq=False)
class Check:
    """One check of one run (``checks`` builds it): its ``name``, whether it ``applies`` (None, or why
    not) and ``run``, which runs the checks it needs first (once each) and returns its own findings."""

    name: str
    unit: ModuleType  # its module: NAME, NEEDS, applies(spec, target, ctx), check(spec, target, ctx)
    ctx: Context  # the run's shared state
    siblings: dict = field(repr=False)  # name -> Check, the run's other checks
    findings: list | None = None  # its own findings, once run

    def applies(self) -> str | None:
        """None if the check applies to this spec and target, else why it is skipped."""
        return self.unit.applies(self.ctx.spec, self.ctx.target, self.ctx)

    def run(self) -> list:
        """Run the check (a skipped one says why in ``ctx.checks``); its findings."""
        if self.findings is not None:
            return self.findings
        for need in self.unit.NEEDS:
            self.siblings[need].run()
        ctx = self.ctx
        before = len(ctx.findings)
        why = self.applies()
        if why is not None:
            ctx.checks[self.name] = f"skipped: {why}"
        else:
            try:
                self.unit.check(ctx.spec, ctx.target, ctx)
            except (
                UserCodeError
            ) as exc:  # TARGET raised: exit 3, unless the behaviour check found it depends on the data
                if not any(f.check == check_behaviour.NAME and f.verdict == "privacy violation" for f in ctx.findings):
                    raise
                ctx.checks[self.name] = f"stopped: {exc} (a data-dependent failure: the behaviour finding)"
        self.findings = ctx.findings[before:]
        return self.findings


def checks(
    algorithm,
    target,
    *,
    samples: int | None = None,
    audit_samples: int | None = None,
    examples: int | None = None,
    seed: int = 0,
    quick: bool = False,
    inputs: str | None = None,
    param_map: Mapping[str, str] | None = None,
    progress=None,
    search: bool = True,
) -> Iterator[Check]:
    """The checks of one run of ``validate``, in order, sharing one context (``checks(...)`` raises at
    once on a bad setting or a TARGET that cannot be validated; then nothing has run). Run them in
    order, or any one alone (it runs what it needs first).

    algorithm: a name (``userdp list``) or a ``ValidationSpec``. target: ``module:object`` or a
    ``PythonTarget``. The settings are ``validate``'s."""
    spec = algorithm if isinstance(algorithm, ValidationSpec) else get(algorithm)
    if not isinstance(search, bool):
        raise BadType(f"search must be True or False (the pair search on or off), got {search!r:.80}")
    check_settings(
        samples=samples,
        audit_samples=audit_samples,
        examples=examples,
        seed=seed,
        quick=quick,
        inputs=inputs,
        progress=progress,
    )  # before TARGET is imported
    t = target if isinstance(target, PythonTarget) else load_target(target, param_map)
    ctx = Context.start(
        spec,
        t,
        samples=samples,
        audit_samples=audit_samples,
        examples=examples,
        seed=seed,
        quick=quick,
        inputs=inputs,
        progress=progress,
        search=search,
    )
    _check_target(ctx)
    siblings: dict = {}
    for unit in PLAN:
        siblings[unit.NAME] = Check(unit.NAME, unit, ctx, siblings)
    return iter(list(siblings.values()))


def _check_target(ctx: Context) -> None:
    """Refuse (exit 2) a target with no stage, and one that cannot be called as validate will."""
    t, spec = ctx.target, ctx.spec
    if t.mechanism is None and not t.stage_names():
        raise BadValue(
            f"target {t.name}: an Adapter with no stage, so there is nothing to validate; validate "
            f"needs a mechanism (the release: `userdp validate {spec.algorithm} --signature` shows "
            f"its call shapes) or at least one noise-free stage "
            f"({', '.join(spec.stage_params) or 'none for this algorithm'})"
        )
    case = ctx.cases[0]
    if t.mechanism is not None:
        check_call(t.mechanism, spec, case.params, t.param_map, t.who)
    if ctx.policy == "clip" and spec.project is None:
        raise BadValue(
            f"--inputs clip: {spec.algorithm} has no projection onto its domain (its inputs are "
            "refused on parameters only); use refuse or trust"
        )


# ------------------------------------------------------------------------ the entry point
def validate(
    algorithm: str,
    target,
    *,
    samples: int | None = None,
    audit_samples: int | None = None,
    examples: int | None = None,
    seed: int = 0,
    quick: bool = False,
    inputs: str | None = None,
    param_map: Mapping[str, str] | None = None,
    progress=None,
    search: bool = True,
) -> ValidationReport:
    """Run the checks of the module docstring; return the report (never raises on a finding).

    target: ``module:object`` or a ``PythonTarget`` (``audits/validation/target.py``).
    samples / audit_samples: releases per side per case / per audited pair; None: chosen by
        the target's speed (module docstring). inputs: "refuse", "clip", "trust" or None
        (inferred per case). param_map: {reference name: yours}. search: False turns the pair
        search off (``pair_search.py``: the audit then sees only the spec's fixed and aimed pairs)."""
    t0 = time.perf_counter()
    todo = list(
        checks(
            algorithm,
            target,
            samples=samples,
            audit_samples=audit_samples,
            examples=examples,
            seed=seed,
            quick=quick,
            inputs=inputs,
            param_map=param_map,
            progress=progress,
            search=search,
        )
    )
    with single_threaded_blas():  # blas.py: many small solves, on a machine shared with others
        for c in todo:
            c.run()
    return report_of(todo[0].ctx, time.perf_counter() - t0)
