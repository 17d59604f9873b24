"""What ``userdp validate`` knows about each algorithm: one ``ValidationSpec`` per reference entry.

A spec says how to call the reference (``reference(dataset, rng=, size=, **params)``, batched),
what its noise-free statistic is where one exists, on which datasets to compare a target's
releases with the reference's (the fixed ``cases`` and the ``generate``d ones, which move over
the parameter range: regularisation below and above 1, d >= 2, per-user maxima below the cap,
balanced and skewed users, few and many users, declared public inputs that differ from what the
data shows), which inputs the reference refuses and why (``Refusal``: a budget, a parameter or
the data's domain), how to project out-of-domain data onto the domain (``project``, for targets
that clip), which neighbouring pairs to audit (``designs``), and, for the report and
``userdp validate ALGORITHM --signature``, every parameter's meaning and unit and which
``UserDataset`` fields the algorithm reads.

The types and the store live here; the specs themselves live with their papers
(``audits/papers/<paper>/specs*.py``, beside the audit entries whose datasets and pairs they
import), registered when the catalogue is loaded (``engine/registry.py:load_catalogue``, on first
use of ``all_specs`` or ``get``). Nothing in ``audits/validation/`` names a paper.

``Case.pair``: a neighbouring pair whose first dataset is the case's and on which the reference's
sensitivity is attained (its statistic moves by exactly the sensitivity the noise is calibrated
to). Where a target releases less noise than the reference on such a case, the noise covers less
than a pair the relation allows: ``validate`` grades it "under-noised" (a privacy finding with an
exact replay witness, else a deviation: a possible privacy violation) and audits that pair.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from userdp.audits.engine import registry
from userdp.audits.engine.usercode import UsageError

__all__ = [
    "BadValue",
    "BadType",
    "Param",
    "Case",
    "Refusal",
    "AuditDesign",
    "ValidationSpec",
    "register",
    "get",
    "all_specs",
    "REFUSAL_KINDS",
    "NOISES",
    "add_axis",
]

REFUSAL_KINDS = ("budget", "parameter", "data")
NOISES = ("laplace", "gaussian", "l2laplace")  # additive noise on the statistic (ceiling.NOISE_FAMILIES)


class BadValue(UsageError, ValueError):
    """A bad argument: a ValueError to Python callers, exit status 2 from the command line."""


class BadType(UsageError, TypeError):
    """An argument of the wrong type: a TypeError to Python callers, exit status 2 from the command line."""


def _need(value, types, name: str, what: str):
    if not isinstance(value, types) or (isinstance(value, bool) and types is int):
        raise BadType(f"{name} must be {what}, got {type(value).__name__} {value!r:.80}")
    return value


@dataclass(frozen=True)
class Param:
    """One keyword parameter of the algorithm: its name and what it means, with its unit."""

    name: str
    meaning: str

    def __post_init__(self):
        _need(self.name, str, "name", "a str")
        _need(self.meaning, str, "meaning", "a str")


@dataclass(frozen=True)
class Case:
    """One dataset and the public parameters the mechanism is called with.

    pair: None, or a neighbouring pair (``first`` is this dataset) that moves the reference's
        statistic by ``pair_share`` of the sensitivity its noise is calibrated to (1: attained,
        exactly, in the noise's norm): the under-noised grading and the aimed audit use it.
    origin: "fixed" (the spec's hand-built cases) or "generated" (``ValidationSpec.generate``).
    """

    dataset: Any
    params: Mapping[str, Any]
    description: str
    pair: Any = None
    origin: str = "fixed"
    pair_share: float = 1.0

    def __post_init__(self):
        _need(self.params, Mapping, "params", "a mapping of parameter names to values")
        _need(self.description, str, "description", "a str")
        if self.pair is not None and not (hasattr(self.pair, "first") and hasattr(self.pair, "second")):
            raise BadType(f"pair must be None or a NeighbourPair (.first, .second), got {type(self.pair).__name__}")
        if (
            isinstance(self.pair_share, bool)
            or not isinstance(self.pair_share, numbers.Real)
            or not 0.0 < self.pair_share <= 1.0 + 1e-9
        ):
            raise BadValue(f"pair_share must be a number in (0, 1], got {self.pair_share!r}")
        if self.origin not in ("fixed", "generated"):
            raise BadValue(f"origin must be 'fixed' or 'generated', got {self.origin!r}")


@dataclass(frozen=True)
class Refusal:
    """An input the reference refuses (ValueError), and why.

    kind: "budget" (a privacy level of 0 or a parameter that removes the noise: releasing is a
        finding whatever the input policy), "parameter" (a public parameter outside the paper's
        range: a precondition) or "data" (records outside the declared domain: the input policy
        decides, and ``ValidationSpec.project`` is what "clip" means).
    requires: the precondition in words, for the report ("every value in [0, B]").
    """

    case: Case
    kind: str
    requires: str

    def __post_init__(self):
        _need(self.case, Case, "case", "a validation Case")
        if self.kind not in REFUSAL_KINDS:
            raise BadValue(f"kind must be one of {REFUSAL_KINDS}, got {self.kind!r}")
        _need(self.requires, str, "requires", "a str")


@dataclass(frozen=True)
class AuditDesign:
    """Pairs audited together under one set of public parameters."""

    pairs: Sequence
    params: Mapping[str, Any]
    claim: Any
    description: str
    output: str = "continuous"

    def __post_init__(self):
        _need(self.params, Mapping, "params", "a mapping of parameter names to values")
        _need(self.description, str, "description", "a str")
        if not hasattr(self.claim, "kind"):
            raise BadType(f"claim must be a userdp.reference.claims claim, got {type(self.claim).__name__}")
        if self.output not in ("continuous", "vector", "discrete", "categorical"):
            raise BadValue(f"output must be continuous, vector, discrete or categorical, got {self.output!r}")


def add_axis(out):
    """One release as a batch of one: arrays get a leading axis of 1, tuples and lists of arrays
    get it on each part (Krichene's (A-hat, b-hat)); ``None`` (no release) stays ``None``."""
    if out is None:
        return None
    if isinstance(out, (tuple, list)) and any(isinstance(p, (tuple, list, np.ndarray)) for p in out):
        return type(out)(add_axis(p) for p in out) if isinstance(out, tuple) else [add_axis(p) for p in out]
    if isinstance(out, np.ma.MaskedArray):
        return out[None]
    try:
        return np.asarray(out)[None]
    except Exception:
        return out


@dataclass(frozen=True)
class ValidationSpec:
    """How ``validate`` checks one registered algorithm.

    reference: the reference mechanism, ``reference(dataset, rng=, size=, **params)``, batched.
    statistic: None (a nonlinear release: compared as a distribution only), or
        ``statistic(dataset, **params)``: the exact mean of the reference's releases, flattened
        like them (its noise-free statistic where the noise is additive).
    noise: the family of the additive noise on ``statistic`` ("laplace", "gaussian",
        "l2laplace"), or None. With it, less spread than the reference on a case with a
        ``pair`` is "under-noised" (a privacy violation with an exact replay witness); without, a deviation.
    claim: ``claim(dataset, params)``: the privacy claim at a case (the under-noised bound and
        the aimed audit use it); None: the first design's.
    cases / generate / designs / refusals: zero-argument builders (``generate``, or None, takes
        the validate seed: ``generate(seed) -> [Case]``, each with ``origin="generated"``).
    project: None, or ``project(dataset, params) -> dataset``: out-of-domain records moved onto
        the domain (what ``--inputs clip`` means for this algorithm); clip_designs: audit
        designs whose pairs hold out-of-domain records (audited when the target clips).
    parameters / reads / release / relation: for ``--signature``, ``--template`` and the report.
    suite, suite_properties, suite_reference, stage_params, takes_dataset: the property suite
        module, the names in it of this algorithm's properties and reference adapter, each
        stage's keyword parameters, and the stages that take the dataset first.
    flatten(out, size): the releases of one call as floats (size, k); default ``np.asarray``.
        Every coordinate of the release must be in it (both triangles of a matrix).
    audit_flatten / stage_flatten: the same for the audit (None: the raw output) and for a
        ``statistic`` stage's output (None: nested arrays flattened in order).
    independence_case: None (the first case) or a builder of the case the independence check
        runs on.
    spaces / whitebox_params: where the white-box search of a target's own ``statistic`` and
        ``noise_scale`` stages looks for its worst pair (``audits/engine/whitebox.py``; the spaces
        of the paper's ``audits/papers/<paper>/whitebox.py``), and at which parameters.
    domain: None, or ``domain(seed) -> pair_search.Domain``: the neighbour space (relation, value
        bounds, record counts, base datasets, parameters) where validate's pair search looks for the
        pair of TARGET's largest realised loss (``audits/validation/pair_search.py``).
    stage_cases: "all", or "fixed" where a stage's value is only defined up to a solver's
        tolerance (HLM's PTR distance is an integer count that a certified but different minimiser
        may change on a generated case).
    noise_width: None (every coordinate is a noisy release coordinate) or k -> how many leading
        coordinates of a flattened release are (HLM appends |x|).
    declines: the reference may make no release (a NaN row); else any NaN or inf in a release is
        a finding.
    max_samples: a cap on releases per side per case (an expensive reference).
    """

    algorithm: str
    reference: Callable
    statistic: Callable | None
    cases: Callable[[], Sequence[Case]]
    designs: Callable[[], Sequence[AuditDesign]]
    suite: str
    parameters: tuple = ()
    reads: Mapping[str, str] = field(default_factory=dict)
    release: str = "a float"
    relation: str = ""
    noise: str | None = None
    claim: Callable | None = None
    generate: Callable[[int], Sequence[Case]] | None = None
    refusals: Callable[[], Sequence[Refusal]] = lambda: ()
    project: Callable | None = None
    clip_designs: Callable[[], Sequence[AuditDesign]] = lambda: ()
    stage_params: Mapping[str, tuple] = field(default_factory=dict)
    takes_dataset: tuple = ("weights", "statistic", "sensitivity", "noise_scale")
    flatten: Callable | None = None
    audit_flatten: Callable | None = None
    stage_flatten: Callable | None = None
    suite_properties: str = "ALL_PROPERTIES"  # "" : the suite has no properties for this algorithm
    suite_reference: str = "REFERENCE"  # "" : nor a reference adapter
    why: str = ""
    independence_case: Callable[[], Case] | None = None
    declines: bool = False
    max_samples: int = 10_000_000
    noise_width: Callable[[int], int] | None = None
    stage_cases: str = "all"  # "fixed": compare stages on the fixed cases only
    spaces: Callable | None = None  # params -> [whitebox.Space]: the white-box aimed pair's search
    whitebox_params: Mapping | None = None  # the parameters that search (and its audit) runs at
    domain: Callable | None = None  # seed -> pair_search.Domain: the neighbour space the pair search covers

    def __post_init__(self):
        _need(self.algorithm, str, "algorithm", "a str (a registry name)")
        for name in ("reference", "cases", "designs", "refusals", "clip_designs"):
            if not callable(getattr(self, name)):
                raise BadType(f"{name} must be callable, got {type(getattr(self, name)).__name__}")
        for name in (
            "statistic",
            "claim",
            "generate",
            "project",
            "noise_width",
            "spaces",
            "domain",
            "flatten",
            "audit_flatten",
            "stage_flatten",
            "independence_case",
        ):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise BadType(f"{name} must be None or callable, got {type(getattr(self, name)).__name__}")
        _need(self.suite, str, "suite", "a module name (str)")
        _need(self.suite_properties, str, "suite_properties", "a name in the suite module (str, or '' for none)")
        _need(self.suite_reference, str, "suite_reference", "a name in the suite module (str)")
        _need(self.stage_params, Mapping, "stage_params", "a mapping stage -> parameter names")
        _need(self.reads, Mapping, "reads", "a mapping UserDataset field -> meaning")
        if not isinstance(self.parameters, tuple) or not all(isinstance(p, Param) for p in self.parameters):
            raise BadType(f"parameters must be a tuple of Param, got {self.parameters!r:.80}")
        if self.stage_cases not in ("all", "fixed"):
            raise BadValue(f"stage_cases must be 'all' or 'fixed', got {self.stage_cases!r}")
        if self.noise is not None and self.noise not in NOISES:
            raise BadValue(f"noise must be None or one of {NOISES}, got {self.noise!r}")
        if (
            isinstance(self.max_samples, bool)
            or not isinstance(self.max_samples, numbers.Integral)
            or self.max_samples < 1000
        ):
            raise BadValue(f"max_samples must be an int >= 1000, got {self.max_samples!r}")

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    def all_cases(self, seed: int) -> list[Case]:
        """The fixed cases, then the generated ones for ``seed``."""
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise BadValue(f"seed must be an int >= 0 (the validate seed), got {seed!r}")
        out = list(self.cases()) + (list(self.generate(int(seed))) if self.generate is not None else [])
        for c in out:
            _need(c, Case, "a spec's case", "a validation Case")
        return out

    def independence_on(self, cases: Sequence[Case]) -> Case:
        """The case the independence check runs on (``cases``: the spec's differential cases)."""
        if (
            isinstance(cases, (str, bytes))
            or not isinstance(cases, Sequence)
            or not all(isinstance(c, Case) for c in cases)
        ):
            raise BadType(f"cases must be a sequence of validation Case, got {type(cases).__name__} {cases!r:.80}")
        if not cases:
            raise BadValue("cases must hold at least one Case (the spec's differential cases), got none")
        if self.independence_case is None:
            return cases[0]
        case = self.independence_case()
        _need(case, Case, "independence_case()", "a Case")
        return case

    def reference_one(self, dataset, rng, params: Mapping) -> Any:
        """One release of the reference, without the leading axis (what a one-release-per-call
        implementation returns): the template's body calls it."""
        _need(params, Mapping, "params", "a mapping of parameter names to values")
        out = self.reference(dataset, rng=rng, size=1, **params)
        if isinstance(out, tuple):
            return tuple(np.asarray(p)[0] for p in out)
        a = np.asarray(out)
        return a[0].item() if a.ndim == 1 else a[0]


_SPECS: dict[str, ValidationSpec] = {}


def register(spec: ValidationSpec) -> ValidationSpec:
    """Add ``spec`` to the specs ``userdp validate`` knows (a spec module calls it at import);
    a second, different spec for one algorithm is a BadValue."""
    _need(spec, ValidationSpec, "spec", "a ValidationSpec")
    if spec.algorithm in _SPECS and _SPECS[spec.algorithm] is not spec:
        raise BadValue(f"validation for {spec.algorithm!r} registered twice")
    _SPECS[spec.algorithm] = spec
    return spec


def all_specs() -> dict[str, ValidationSpec]:
    """Every spec, by algorithm name (the papers' spec modules registered by the catalogue,
    ``registry.load_catalogue``, on first use)."""
    registry.load_catalogue("specs")
    return dict(sorted(_SPECS.items()))


def get(algorithm: str) -> ValidationSpec:
    """The spec of ``algorithm``; a BadValue naming the supported ones otherwise."""
    _need(algorithm, str, "algorithm", "a str (a registry name, `userdp list`)")
    specs = all_specs()
    if algorithm not in specs:
        known = {e.name for e in registry.all_entries()}
        why = (
            "it is registered (`userdp list`) but is not a paper's algorithm (a control or a planted bug)"
            if algorithm in known
            else "it is not a registered algorithm (`userdp list`)"
        )
        raise BadValue(
            f"algorithm: cannot validate {algorithm!r}: {why}; algorithms that validate supports: {', '.join(specs)}"
        )
    return specs[algorithm]
