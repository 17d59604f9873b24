"""``userdp validate ALGORITHM TARGET``: a graded verdict on someone else's implementation.

DESIGN §5. TARGET is ``module:object``: an ``Adapter`` (``properties/adapter.py``) with any
of the suite's stages, or a plain function with the reference mechanism's signature. The
validator runs four checks, each skipped only when the stages it needs are absent, and
says which ran:

a. **properties**: the paper's property suite (``properties/<paper>.py``: ``ALL_PROPERTIES``,
   ``STRATEGIES``, ``EXAMPLES``, ``MAX_EXAMPLES``) on the stages TARGET has; and every
   noise-free stage TARGET has compared with the suite's ``REFERENCE`` on the spec's cases,
   to a relative tolerance ``STAGE_RTOL``.
b. **differential**: TARGET's releases against the reference mechanism's, on the spec's
   cases (generated and worst-case datasets):
   - mean: each coordinate's mean release against the reference's noise-free statistic
     (``ValidationSpec.statistic``), a z interval from the releases' own standard deviation;
   - spread: the two-sample Kolmogorov-Smirnov distance between TARGET's and the
     reference's releases, coordinate by coordinate, against a DKW bound (below);
   - the share of "no release" (NaN rows), where either side has one: a two-proportion test;
   - if TARGET has a ``statistic`` stage too: its releases' mean against its OWN statistic
     (stages that disagree, "its statistic is not what its mechanism adds noise to").
c. **independence**: ``CALLS`` calls of ``PER_CALL`` releases each, on the spec's
   ``independence_case`` (default: its first differential case); Kruskal-Wallis tests
   per coordinate of "the call a release came from", on the releases (location) and on
   their distance to the pooled median (spread: a noise scale or a test outcome drawn once
   per call and shared changes the spread of a call's releases, not their centre). A
   dependent target is reported "not independent", and its audit draws one release per
   call instead (valid for any within-call dependence).
d. **audit**: ``harness.audit`` of TARGET's mechanism on the spec's pairs and designs, under
   the algorithm's relation and claim (the spec's docstring says which bug class each pair
   exposes).

False alarms (a correct target flagged), per algorithm, at most ``ALPHA`` = 1e-4 in total:
``ALPHA_MEAN`` 3e-5 (mean tests and the stages-agree tests, Bonferroni over cases and
coordinates), ``ALPHA_SPREAD`` 3e-5 (KS), ``ALPHA_RELEASE`` 1e-5 (no-release shares),
``ALPHA_INDEPENDENCE`` 1e-5 (Kruskal-Wallis), ``ALPHA_AUDIT`` 2e-5 (the audits' confidence,
split over the spec's audit designs). The property suite is derandomized (no false alarm
from chance, except the suites' own statistical properties, whose thresholds are 1e-5 or
less each, stated in the suite).

Why each test is valid:
- KS: by the Dvoretzky-Kiefer-Wolfowitz inequality with Massart's constant,
  P(sup |F_N - F| > a) <= 2 exp(-2 N a^2) for ANY distribution F; two empirical CDFs of
  the same F then differ by more than 2a with probability <= 4 exp(-2 N a^2). No
  asymptotics, no continuity needed (ties only make it conservative).
- mean: a z test on N >= 10^4 releases. Its level rests on the central limit theorem;
  for the noises here (Laplace, Gaussian, Gamma-radius L2 Laplace: all moments finite,
  symmetric or nearly so) the Edgeworth correction at z = 5 and N = 10^4 changes the tail
  probability by under 1% (excess kurtosis 3 for Laplace: (3 / 24 N)(z^4 - 6 z^2 + 3) =
  0.006). The spread test needs no such approximation and catches the same bugs in most
  cases; the mean test adds the report's confidence interval and power for small shifts.
- Kruskal-Wallis: under independence the releases of all calls are exchangeable, so the
  rank statistic's null distribution is free of the noise's; chi-square with CALLS - 1
  degrees of freedom, accurate in the 1e-6 tail for groups of PER_CALL = 250.

Verdicts (DESIGN §5, Wycheproof's grading), worst first: "privacy violation" (the audit's
eps_lb exceeds the claim), "invariant violation" (a property fails, or stages disagree),
"deviation from reference" (private but not the paper's algorithm), "not independent",
"pass". ``validate`` returns every finding with its evidence; the overall verdict is the
worst. Exit status (``cli.py``): 1 on any finding other than "pass", 0 on "pass", 2 on a
usage error (unknown algorithm, a TARGET that cannot be imported or lacks the signature),
3 on an error in TARGET (it raises, or returns the wrong shape).
"""
from __future__ import annotations

import importlib
import inspect
import math
import numbers
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy import stats

from userdp.properties.adapter import Adapter, check_suite_property

from .harness import audit
from .targets import UsageError, UserCodeError, import_user_module

__all__ = ["BadValue", "BadType", "Case", "AuditDesign", "ValidationSpec", "register_validation", "get_validation",
           "all_validations", "load_target", "validate", "format_report", "format_finding", "ValidationReport", "Finding",
           "VERDICT_ORDER", "ALPHA"]

ALPHA = 1e-4
ALPHA_MEAN, ALPHA_SPREAD, ALPHA_RELEASE, ALPHA_INDEPENDENCE, ALPHA_AUDIT = 3e-5, 3e-5, 1e-5, 1e-5, 2e-5
STAGE_RTOL = 1e-9          # noise-free stages, |target - reference| / max(1, |reference|): the rounding of
                           # sums of <= 10^4 terms is < 1e-12 of that; the bugs differ by > 1e-3
CALLS, PER_CALL = 40, 250  # the independence check: 10^4 releases in 40 calls
DEFAULT_SAMPLES = 20_000   # releases per side per case (differential check)
DEFAULT_AUDIT_SAMPLES = 100_000
DEPENDENT_AUDIT_SAMPLES = 20_000   # a target that is not independent is audited one call per release
DEFAULT_EXAMPLES = 50      # Hypothesis examples per property (at most the suite's own MAX_EXAMPLES)
VERDICT_ORDER = ("privacy violation", "invariant violation", "deviation from reference", "not independent", "pass")
NOISE_FREE_STAGES = ("weights", "statistic", "sensitivity", "noise_scale")


class BadValue(UsageError, ValueError):
    """A bad argument: a ValueError to Python callers, exit status 2 from the command line."""


class BadType(UsageError, TypeError):
    """An argument of the wrong type: a TypeError to Python callers, exit status 2 from the command line."""


def _need(value, types, name: str, what: str):
    if not isinstance(value, types) or (isinstance(value, bool) and types is int):    # True is not a count
        raise BadType(f"{name} must be {what}, got {type(value).__name__} {value!r:.80}")
    return value


def _check_count(value, name: str, lo: int, hi: int) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
        raise BadType(f"{name} must be an int, got {type(value).__name__} {value!r:.80}")
    if not lo <= value <= hi:
        raise BadValue(f"{name} must be an int in [{lo}, {hi}], got {value!r}")
    return value


# ------------------------------------------------------------------------ specs
@dataclass(frozen=True)
class Case:
    """One dataset and the public parameters the mechanism is called with."""
    dataset: Any
    params: Mapping[str, Any]
    description: str

    def __post_init__(self):
        _need(self.params, Mapping, "params", "a mapping of parameter names to values")
        _need(self.description, str, "description", "a str")


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


@dataclass(frozen=True)
class ValidationSpec:
    """How ``validate`` checks one registered algorithm.

    reference: the reference mechanism, called as ``reference(dataset, rng=, size=, **params)``;
        TARGET's mechanism is called the same way (its signature must accept it).
    statistic: ``statistic(dataset, **params)``: the mean of the reference's releases
        (its noise-free statistic), flattened like the releases.
    cases / designs: zero-argument builders of the differential cases and the audit designs.
    suite: the property-suite module name. stage_params: stage -> the parameter names it
        takes by keyword (the dataset is positional for the stages in ``takes_dataset``).
    refusals: cases the reference refuses (ValueError): a TARGET that releases on one
        is an invariant violation ("releases on an input the paper excludes").
    flatten: the releases of one call as a float array (size, k), NaN rows = no release.
    audit_flatten: the same for the audit, where the harness takes the mechanism's raw
        output by default (None); set it for outputs the harness cannot read (tuples).
    stage_flatten: a ``statistic`` stage's output as the flat vector that ``flatten`` makes
        of a release (the stages-agree test compares them); default ``np.ravel``. The
        stage comparison with the reference flattens nested tuples of arrays itself.
    independence_case: a zero-argument builder of the case the independence check runs on;
        None: the first differential case. Set it where that case cannot show randomness
        shared within a call (sample limiting's cases make the choice of records irrelevant).
    """
    algorithm: str
    reference: Callable
    statistic: Callable
    cases: Callable[[], Sequence[Case]]
    designs: Callable[[], Sequence[AuditDesign]]
    suite: str
    stage_params: Mapping[str, tuple] = field(default_factory=dict)
    takes_dataset: tuple = ("weights", "statistic", "sensitivity", "noise_scale")
    refusals: Callable[[], Sequence[Case]] = lambda: ()
    flatten: Callable | None = None
    audit_flatten: Callable | None = None
    stage_flatten: Callable | None = None
    suite_properties: str = "ALL_PROPERTIES"    # the names, in the suite module, of this algorithm's
    suite_reference: str = "REFERENCE"          # properties and reference adapter (a module may hold two)
    why: str = ""
    independence_case: Callable[[], Case] | None = None

    def __post_init__(self):
        _need(self.algorithm, str, "algorithm", "a str (a registry name)")
        for name in ("reference", "statistic", "cases", "designs", "refusals"):
            if not callable(getattr(self, name)):
                raise BadType(f"{name} must be callable, got {type(getattr(self, name)).__name__}")
        for name in ("flatten", "audit_flatten", "stage_flatten", "independence_case"):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise BadType(f"{name} must be None or callable, got {type(getattr(self, name)).__name__}")
        _need(self.suite, str, "suite", "a module name (str)")
        _need(self.suite_properties, str, "suite_properties", "a name in the suite module (str)")
        _need(self.suite_reference, str, "suite_reference", "a name in the suite module (str)")
        _need(self.stage_params, Mapping, "stage_params", "a mapping stage -> parameter names")

    def independence_on(self, cases: Sequence[Case]) -> Case:
        """The case the independence check runs on (``cases``: the spec's differential cases)."""
        if isinstance(cases, (str, bytes)) or not isinstance(cases, Sequence) or \
                not all(isinstance(c, Case) for c in cases):
            raise BadType(f"cases must be a sequence of validate.Case, got {type(cases).__name__} {cases!r:.80}")
        if not cases:
            raise BadValue("cases must hold at least one Case (the spec's differential cases), got none")
        if self.independence_case is None:
            return cases[0]
        case = self.independence_case()
        _need(case, Case, "independence_case()", "a Case")
        return case

    def _releases(self, fn, dataset, rng, size: int, params) -> np.ndarray:
        out = fn(dataset, rng=rng, size=size, **params)
        return _flat(out, size, self.flatten, "mechanism")


_SPECS: dict[str, ValidationSpec] = {}


def register_validation(spec: ValidationSpec) -> ValidationSpec:
    _need(spec, ValidationSpec, "spec", "a ValidationSpec")
    if spec.algorithm in _SPECS:
        raise BadValue(f"validation for {spec.algorithm!r} registered twice")
    _SPECS[spec.algorithm] = spec
    return spec


def all_validations() -> dict[str, ValidationSpec]:
    from . import registry
    registry.all_entries()              # imports every registry module; they register their specs
    return dict(sorted(_SPECS.items()))


def get_validation(algorithm: str) -> ValidationSpec:
    _need(algorithm, str, "algorithm", "a str (a registry name, `userdp list`)")
    specs = all_validations()
    if algorithm not in specs:
        from . import registry
        known = {e.name for e in registry.all_entries()}
        why = ("it is registered (`userdp list`) but has no validation spec yet" if algorithm in known
               else "it is not a registered algorithm (`userdp list`)")
        raise BadValue(f"algorithm: cannot validate {algorithm!r}: {why}; algorithms that validate supports: "
                         f"{', '.join(specs)}")
    return specs[algorithm]


def _flat(out, size: int, flatten, where: str) -> np.ndarray:
    if flatten is not None:
        try:
            out = flatten(out, size)
        except (UsageError, UserCodeError):
            raise
        except Exception as exc:      # the spec's flatten could not read what the target returned
            raise UserCodeError(f"{where} returned {type(out).__name__}, which is not a release of this "
                                f"algorithm ({type(exc).__name__}: {exc})") from None
    if isinstance(out, np.ma.MaskedArray):
        out = np.ma.filled(out.astype(float), np.nan)
    try:
        a = np.asarray(out, dtype=float)
    except (TypeError, ValueError) as exc:
        raise UserCodeError(f"{where} returned {type(out).__name__}, expected {size} numeric releases "
                            f"(an array of shape ({size},) or ({size}, k)): {exc}") from None
    if a.ndim == 0 or a.shape[0] != size:
        raise UserCodeError(f"{where} returned shape {a.shape} for size={size}; expected ({size},) or ({size}, k): "
                            "`size` independent releases, one per row")
    return a.reshape(size, -1)


# ------------------------------------------------------------------------ the target
@dataclass(frozen=True)
class Target:
    name: str
    adapter: Adapter              # its stages (a plain function: mechanism only)
    plain: bool


def load_target(text: str) -> Target:
    """``module:object`` with the current directory on the import path (as ``python -m``)."""
    _need(text, str, "target", "a str module:object")
    module, attr = import_user_module(text, "target is module:object (an Adapter or a mechanism function)",
                                      usage_error=BadValue)
    mod_name, obj = module.__name__, module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise BadValue(f"target {text!r}: module {mod_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    if isinstance(obj, Adapter):
        return Target(text, obj, plain=False)
    if callable(obj) and not isinstance(obj, type):
        return Target(text, Adapter(text, mechanism=obj), plain=True)
    raise BadType(f"target {text!r} is a {type(obj).__name__}; expected an Adapter "
                  "(userdp.properties.adapter) or a mechanism function")


def _check_signature(fn, spec: ValidationSpec, case: Case, target: str) -> None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return                                           # a builtin: the call itself will tell
    try:
        sig.bind(case.dataset, rng=None, size=1, **case.params)
    except TypeError as exc:
        want = f"(dataset, *, rng, size, {', '.join(case.params)})"
        raise BadValue(f"target {target}: its mechanism{sig} cannot be called as mechanism{want}, the reference's "
                         f"call shape for {spec.algorithm} (keywords {sorted(case.params)}): {exc}") from None


def _call(what: str, f, *args, **kwargs):
    try:
        return f(*args, **kwargs)
    except (UsageError, UserCodeError):
        raise
    except Exception as exc:
        raise UserCodeError(f"{what} raised {type(exc).__name__}: {exc}") from exc


# ------------------------------------------------------------------------ findings
@dataclass
class Finding:
    check: str                    # properties | stages | differential | independence | audit
    verdict: str                  # one of VERDICT_ORDER
    title: str
    evidence: dict

    def to_dict(self) -> dict:
        return {"check": self.check, "verdict": self.verdict, "title": self.title, "evidence": self.evidence}


@dataclass
class ValidationReport:
    algorithm: str
    target: str
    checks: dict                  # check -> "ran: ..." or "skipped: why"
    findings: list
    settings: dict
    elapsed_seconds: float = 0.0

    @property
    def verdict(self) -> str:
        bad = [f.verdict for f in self.findings if f.verdict != "pass"]
        return min(bad, key=VERDICT_ORDER.index) if bad else "pass"

    def to_dict(self) -> dict:
        return {"algorithm": self.algorithm, "target": self.target,
                "verdict": self.verdict, "checks": self.checks, "settings": self.settings,
                "findings": [f.to_dict() for f in self.findings if f.verdict != "pass"],
                "passed": [f.to_dict() for f in self.findings if f.verdict == "pass"],
                "elapsed_seconds": round(self.elapsed_seconds, 2)}


def _progress(progress, msg):
    if progress is not None:
        progress(msg)


# ------------------------------------------------------------------------ a. properties and stages
def _suite(spec: ValidationSpec):
    return importlib.import_module(spec.suite)


def run_properties(spec, target: Target, examples: int, progress=None) -> tuple[list, str]:
    suite = _suite(spec)
    present = set(target.adapter.stages()) - {"mechanism"}
    if not present:
        return [], "skipped: TARGET has no noise-free stage (the suite checks weights, statistic, sensitivity, " \
                   "noise_scale and the like)"
    findings, ran = [], 0
    props = getattr(suite, spec.suite_properties)
    for prop in props:
        f = check_suite_property(suite, prop, target.adapter, max_examples=examples)
        if f.verdict == "not applicable":
            continue
        ran += 1
        _progress(progress, f"property {prop.__name__}: {f.verdict}")
        verdict = "pass" if f.verdict == "pass" else "invariant violation"
        ev = {"property": f.property, "paper_invariant": (prop.__doc__ or "").strip().split("\n")[0]}
        if f.verdict != "pass":
            ev.update(grade=f.verdict, message=f.message, counterexample=f.counterexample,
                      snippet=_snippet(spec, prop, f))
        findings.append(Finding("properties", verdict, f"{prop.__name__}: {f.verdict}", ev))
    return findings, f"ran: {ran} of {len(props)} properties (the rest need stages TARGET lacks), " \
                     f"up to {examples} Hypothesis examples each"


def _snippet(spec, prop, f) -> str:
    """The minimal counterexample as a runnable snippet (the TARGET's adapter is named 'impl')."""
    return ("import numpy as np\n"
            "from numpy import array, float64, int64\n"
            "from userdp.reference.data import UserDataset\n"
            f"from {spec.suite} import *\n"
            f"example = {f.counterexample}\n"
            f"{prop.__name__}(impl, example)   # impl: your Adapter; raises AssertionError")


def run_stages(spec, target: Target, cases) -> tuple[list, str]:
    suite = _suite(spec)
    ref = getattr(suite, spec.suite_reference, None)
    stages = [s for s in spec.stage_params if getattr(target.adapter, s, None) is not None
              and getattr(ref, s, None) is not None]
    if not stages:
        return [], "skipped: TARGET has no noise-free stage to compare with the reference"
    findings, compared = [], 0
    for s in stages:
        worst = None
        for case in cases:
            kw = {k: case.params[k] for k in spec.stage_params[s] if k in case.params}
            args = (case.dataset,) if s in spec.takes_dataset else ()
            want = _nested_flat(getattr(ref, s)(*args, **kw))
            got = _nested_flat(_call(f"TARGET's {s} stage on case {case.description!r}", getattr(target.adapter, s),
                                     *args, **kw))
            compared += 1
            if got is None or got.shape != want.shape:
                worst = (math.inf, case, want, got)
                break
            err = float(np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)))) if want.size else 0.0
            if worst is None or err > worst[0]:
                worst = (err, case, want, got)
        err, case, want, got = worst
        ok = err <= STAGE_RTOL
        ev = {"stage": s, "largest_relative_difference": err, "tolerance": STAGE_RTOL, "case": case.description}
        if not ok:
            ev.update(reference=_short(want), target=_short(got))
        findings.append(Finding("stages", "pass" if ok else "deviation from reference",
                                f"stage {s} {'equals' if ok else 'differs from'} the reference's", ev))
    return findings, f"ran: stages {', '.join(stages)} compared on {len(cases)} cases (|difference| <= {STAGE_RTOL:g} max(1, |reference|))"


def _nested_flat(out):
    """A stage's output as one flat float vector: an array, a number, or a (nested) tuple, list or
    dict (values in key order) of them (Krichene's (A, b)); None when it is not numeric."""
    if isinstance(out, Mapping):                       # e.g. a noise_scale stage returning named scales
        out = tuple(out[k] for k in sorted(out, key=str))
    if isinstance(out, (tuple, list)) and any(isinstance(p, (tuple, list, np.ndarray, Mapping)) for p in out):
        parts = [_nested_flat(p) for p in out]
        return None if any(p is None for p in parts) else np.concatenate(parts) if parts else np.zeros(0)
    try:
        return np.asarray(out, dtype=float).ravel()
    except (TypeError, ValueError):
        return None


def _short(a) -> str:
    if a is None:
        return "not numeric"
    a = np.asarray(a)
    return np.array2string(a.ravel()[:6], precision=6) + (f" ... ({a.size} values)" if a.size > 6 else "")


# ------------------------------------------------------------------------ b. differential
def _ks_threshold(n: int, alpha: float) -> float:
    """sup |F_target - F_ref| above this is a deviation: 4 exp(-2 n a^2) = alpha, threshold 2a."""
    return 2.0 * math.sqrt(math.log(4.0 / alpha) / (2.0 * n))


def _ks_distance(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The two-sample KS distance sup_t |F_x(t) - F_y(t)| and where it is attained."""
    xs, ys = np.sort(x), np.sort(y)
    grid = np.concatenate([xs, ys])
    d = np.abs(np.searchsorted(xs, grid, side="right") / xs.size - np.searchsorted(ys, grid, side="right") / ys.size)
    i = int(np.argmax(d))
    return float(d[i]), float(grid[i])


def _draw(spec, fn, case: Case, rng, n: int, independent: bool) -> np.ndarray:
    """n releases: one call of size n, or (a target whose releases share randomness within a
    call) n calls of size 1, so that the comparison is of the marginal law of a release."""
    if independent:
        return spec._releases(fn, case.dataset, rng, n, case.params)
    return np.concatenate([spec._releases(fn, case.dataset, rng, 1, case.params) for _ in range(n)])


def run_differential(spec, target: Target, cases, samples: int, seed: int, independent: bool = True,
                     progress=None) -> tuple[list, str]:
    mech = target.adapter.mechanism
    own_stat = target.adapter.statistic if "statistic" in spec.stage_params else None
    results = []                                   # per case: (case, X_t, X_r, stat, own)
    for j, case in enumerate(cases):
        ss = np.random.SeedSequence([seed, 1, j]).spawn(2)
        Xt = _draw(spec, lambda *a, **k: _call(f"TARGET's mechanism on case {case.description!r}", mech, *a, **k),
                   case, np.random.default_rng(ss[0]), samples, independent)
        Xr = spec._releases(spec.reference, case.dataset, np.random.default_rng(ss[1]), samples, case.params)
        if Xt.shape[1] != Xr.shape[1]:
            raise UserCodeError(f"TARGET's mechanism returned releases of {Xt.shape[1]} values on case "
                                f"{case.description!r}; the reference's have {Xr.shape[1]}")
        stat = np.asarray(spec.statistic(case.dataset, **case.params), dtype=float).ravel()
        own = None
        if own_stat is not None:
            kw = {k: case.params[k] for k in spec.stage_params["statistic"] if k in case.params}
            out = _call("TARGET's statistic stage", own_stat, case.dataset, **kw)
            if spec.stage_flatten is not None:
                try:
                    own = np.asarray(spec.stage_flatten(out), dtype=float).ravel()
                except Exception as exc:
                    raise UserCodeError(f"TARGET's statistic stage returned {type(out).__name__}, not this "
                                        f"algorithm's statistic ({type(exc).__name__}: {exc})") from None
            else:
                own = _nested_flat(out)
                if own is None:
                    raise UserCodeError(f"TARGET's statistic stage returned {type(out).__name__}, not numbers")
        results.append((case, Xt, Xr, stat, own))
        _progress(progress, f"differential: case {j + 1} of {len(cases)} drawn")
    coords = sum(r[1].shape[1] for r in results)
    z_crit = float(stats.norm.isf(ALPHA_MEAN / (2 * 2 * coords)))       # two-sided; half for the own-statistic test
    ks_crit = _ks_threshold(samples, ALPHA_SPREAD / coords)
    findings = []
    mean_worst = ks_worst = rel_worst = own_worst = None
    for case, Xt, Xr, stat, own in results:
        rt, rr = ~np.isnan(Xt).any(axis=1), ~np.isnan(Xr).any(axis=1)
        if (~rt).any() or (~rr).any():                 # no-release shares: pooled two-proportion z test
            pt, pr = rt.mean(), rr.mean()
            p = (rt.sum() + rr.sum()) / (2 * samples)
            se = math.sqrt(max(p * (1 - p), 1e-300) * 2 / samples)
            z = abs(pt - pr) / se
            if rel_worst is None or z > rel_worst[0]:
                rel_worst = (z, case, pt, pr)
        Yt, Yr = Xt[rt], Xr[rr]
        for k in range(Xt.shape[1]):
            t, r = Yt[:, k], Yr[:, k]
            if t.size < 2 or r.size < 2:
                continue
            se = float(np.std(t, ddof=1)) / math.sqrt(t.size)          # of the target's mean alone
            one_sample = stat.size == Xt.shape[1] and rr.all()
            if one_sample:              # against the reference's exact noise-free statistic
                diff, se_diff = float(np.mean(t)) - stat[k], se
            else:                       # against the reference's releases: both means vary (Welch)
                diff = float(np.mean(t)) - float(np.mean(r))
                se_diff = math.sqrt(se ** 2 + float(np.var(r, ddof=1)) / r.size)
            z = abs(diff) / se_diff if se_diff > 0 else (0.0 if diff == 0 else math.inf)
            if mean_worst is None or z > mean_worst[0]:
                mean_worst = (z, case, k, diff, se_diff, one_sample)
            d, at = _ks_distance(t, r)
            if ks_worst is None or d > ks_worst[0]:
                sd_t, sd_r = float(np.std(t)), float(np.std(r))
                ks_worst = (d, case, k, at, sd_t, sd_r)
            if own is not None and own.size == Xt.shape[1]:
                dz = float(np.mean(t)) - own[k]
                zo = abs(dz) / se if se > 0 else (0.0 if dz == 0 else math.inf)
                if own_worst is None or zo > own_worst[0]:
                    own_worst = (zo, case, k, dz, se)
    if mean_worst is not None:
        z, case, k, diff, se, one_sample = mean_worst
        bad = z > z_crit
        findings.append(Finding("differential", "deviation from reference" if bad else "pass",
                                "mean release " + ("differs from" if bad else "matches") + " the reference's statistic",
                                {"largest_z": round(z, 3), "critical_z": round(z_crit, 3), "case": case.description,
                                 "coordinate": k, "difference": diff,
                                 "confidence_interval": [diff - z_crit * se, diff + z_crit * se],
                                 "meaning": ("target mean minus the reference's noise-free statistic" if one_sample
                                             else "target mean minus the reference releases' mean") + "; the interval "
                                            f"holds it jointly for all {coords} coordinates with probability >= "
                                            f"1 - {ALPHA_MEAN / 2:g}"}))
    if ks_worst is not None:
        d, case, k, at, sd_t, sd_r = ks_worst
        bad = d > ks_crit
        findings.append(Finding("differential", "deviation from reference" if bad else "pass",
                                "release distribution " + ("differs from" if bad else "matches") + " the reference's",
                                {"largest_ks_distance": round(d, 5), "critical": round(ks_crit, 5), "at": at,
                                 "case": case.description, "coordinate": k, "sd_target": sd_t, "sd_reference": sd_r,
                                 "sd_ratio": (sd_t / sd_r) if sd_r > 0 else None,
                                 "meaning": "sup |F_target - F_reference| of one coordinate; above the critical "
                                            f"value with probability <= {ALPHA_SPREAD:g} for a correct target (DKW)"}))
    if rel_worst is not None:
        z, case, pt, pr = rel_worst
        zc = float(stats.norm.isf(ALPHA_RELEASE / (2 * len(cases))))
        bad = z > zc
        findings.append(Finding("differential", "deviation from reference" if bad else "pass",
                                "share of releases " + ("differs from" if bad else "matches") + " the reference's",
                                {"z": round(z, 3), "critical_z": round(zc, 3), "case": case.description,
                                 "released_target": pt, "released_reference": pr}))
    if own_worst is not None:
        z, case, k, dz, se = own_worst
        bad = z > z_crit
        findings.append(Finding("stages", "invariant violation" if bad else "pass",
                                "TARGET's stages " + ("disagree: its mechanism does not add noise to its statistic"
                                                      if bad else "agree (mechanism centred on statistic)"),
                                {"largest_z": round(z, 3), "critical_z": round(z_crit, 3), "case": case.description,
                                 "coordinate": k, "mean_release_minus_own_statistic": dz,
                                 "confidence_interval": [dz - z_crit * se, dz + z_crit * se]}))
    how = "" if independent else " (one release per call: TARGET is not independent)"
    return findings, (f"ran: {len(cases)} cases x {samples} releases per side{how}; mean z test (critical {z_crit:.2f}), "
                      f"KS distance (critical {ks_crit:.4f}) over {coords} coordinates")


def run_refusals(spec, target: Target, seed: int) -> tuple[list, str]:
    refusals = list(spec.refusals())
    if not refusals:
        return [], ""
    findings = []
    for j, case in enumerate(refusals):
        try:
            out = target.adapter.mechanism(case.dataset, rng=np.random.default_rng([seed, 3, j]), size=4, **case.params)
        except Exception as exc:
            findings.append(Finding("differential", "pass", f"refuses {case.description}",
                                    {"raised": f"{type(exc).__name__}: {exc}"[:300]}))
            continue
        findings.append(Finding("differential", "invariant violation", f"releases on an input the paper excludes: "
                                f"{case.description}", {"params": _jsonable(case.params), "output": _short(out)}))
    return findings, f"; {len(refusals)} input(s) the reference refuses tried"


def _claim_text(claim) -> str:
    """'pure epsilon=1', 'approx epsilon=3,delta=1e-05'; a paired claim as both, joined by '; and '."""
    if claim.kind == "claims":
        return f"{_claim_text(claim.primary)}; and {_claim_text(claim.gdp)}"
    params = ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in claim.params().items())
    return f"{claim.kind} {params}"


def _jsonable(d: Mapping) -> dict:
    """Parameters for the report: small arrays as lists, larger ones (GWA's C) by shape."""
    return {k: ((v.tolist() if v.size <= 8 else f"array of shape {v.shape}") if isinstance(v, np.ndarray) else v)
            for k, v in d.items()}


# ------------------------------------------------------------------------ c. independence
def run_independence(spec, target: Target, case: Case, seed: int) -> tuple[Finding | None, str]:
    rng = np.random.default_rng([seed, 2])
    mech = target.adapter.mechanism
    X = np.stack([spec._releases(lambda *a, **k: _call("TARGET's mechanism", mech, *a, **k),
                                case.dataset, rng, PER_CALL, case.params) for _ in range(CALLS)])
    k = X.shape[2]
    pmin, where = 1.0, None
    for j in range(k):
        groups = [g[~np.isnan(g)] for g in X[:, :, j]]
        flat = np.concatenate(groups)
        if flat.size == 0 or np.all(flat == flat[0]):
            continue                                            # nothing varies in this coordinate
        med = float(np.median(flat))
        # location (the releases) and spread (their distance to the pooled median: a scale or a
        # branch drawn once per call, Brown-Forsythe's idea). Both are symmetric functions of
        # exchangeable values under independence, so Kruskal-Wallis stays exact in law for each.
        for what, gs in (("location", groups), ("spread", [np.abs(g - med) for g in groups])):
            gs = [g for g in gs if g.size]
            allv = np.concatenate(gs)
            if np.all(allv == allv[0]):
                continue
            h, p = stats.kruskal(*gs)
            if p < pmin:
                within = float(np.mean([np.var(g) for g in groups if g.size > 1]))
                pmin, where = p, (j, what, float(h), within, float(np.var(flat)))
    crit = ALPHA_INDEPENDENCE / max(1, 2 * k)
    text = (f"ran: {CALLS} calls x {PER_CALL} releases on case {case.description!r}, Kruskal-Wallis per coordinate "
            "on location and spread")
    if where is None:
        return None, text + " (nothing varies: not determined)"
    j, what, h, within, total = where
    bad = pmin < crit
    return Finding("independence", "not independent" if bad else "pass",
                   "releases of one call " + ("share randomness" if bad else "look independent"),
                   {"smallest_p": pmin, "critical_p": crit, "coordinate": j, "in": what, "kruskal_h": round(h, 2),
                    "within_call_variance": within, "overall_variance": total,
                    "meaning": "releases grouped by the call that made them; a small p says they cluster by call "
                               "(randomness drawn once per call and shared)"}), text


# ------------------------------------------------------------------------ d. audit
def _first(out):
    """The one release of a size-1 call, as the harness's one-release form takes it: a masked
    row (no release) is ``None`` (``sampling.NO_RELEASE``)."""
    if isinstance(out, np.ma.MaskedArray):
        if np.ma.getmaskarray(out)[0].any():
            return None
        out = out.data
    return np.asarray(out)[0]


def run_audits(spec, target: Target, samples: int, seed: int, independent: bool, progress=None) -> tuple[list, str]:
    designs = list(spec.designs())
    if not independent:         # a Python call per release: fewer, and said so in the report
        samples = min(samples, DEPENDENT_AUDIT_SAMPLES)
    findings = []
    confidence = 1.0 - ALPHA_AUDIT / len(designs)
    mech = target.adapter.mechanism
    for j, d in enumerate(designs):
        params = dict(d.params)
        flat = spec.audit_flatten
        if independent:
            def m(dataset, rng, size, _p=params):
                out = mech(dataset, rng=rng, size=size, **_p)
                return out if flat is None else _flat(out, size, flat, "mechanism")
        else:                                   # one release per call: within-call sharing cannot matter
            def m(dataset, rng, _p=params):
                out = mech(dataset, rng=rng, size=1, **_p)
                return _first(out if flat is None else _flat(out, 1, flat, "mechanism"))
        try:
            r = audit(m, d.pairs, d.claim, samples=samples, confidence=confidence, seed=seed + j,
                      output=d.output, workers=1)
        except (UsageError, UserCodeError):
            raise
        except Exception as exc:
            raise UserCodeError(f"auditing TARGET's mechanism on design {d.description!r} failed: "
                                f"{type(exc).__name__}: {exc}") from exc
        bad = r.verdict == "violation"
        w = r.witness.to_dict()
        findings.append(Finding("audit", "privacy violation" if bad else "pass",
                                f"{d.description}: eps_lb {r.epsilon_lower_bound:.3f}"
                                + (f" exceeds the claim's {w['claim_epsilon']:g} on its witness pair" if bad
                                   else " within the claim"),
                                {"design": d.description, "epsilon_lower_bound": r.epsilon_lower_bound,
                                 "claim": _claim_text(d.claim),
                                 "confidence": confidence, "samples_per_side": samples, "witness": w}))
        _progress(progress, f"audit {j + 1} of {len(designs)}: {r.verdict} (eps_lb {r.epsilon_lower_bound:.3f})")
    how = "one release per call (TARGET is not independent)" if not independent else "batched"
    return findings, f"ran: {len(designs)} design(s), {samples} samples per side, confidence {confidence:.7f}, {how}"


# ------------------------------------------------------------------------ all of it
def validate(algorithm: str, target: str | Target, *, samples: int = DEFAULT_SAMPLES,
             audit_samples: int = DEFAULT_AUDIT_SAMPLES, examples: int = DEFAULT_EXAMPLES, seed: int = 0,
             progress=None) -> ValidationReport:
    """Run the four checks of the module docstring; return the report (never raises on a finding)."""
    t0 = time.perf_counter()
    spec = get_validation(algorithm)
    _check_count(samples, "samples", 10_000, 10_000_000)
    _check_count(audit_samples, "audit_samples", 1_000, 10_000_000)
    _check_count(examples, "examples", 1, 100_000)
    _check_count(seed, "seed", 0, 2**63 - 1)
    if progress is not None and not callable(progress):
        raise BadType(f"progress must be None or a callable taking one message, got {type(progress).__name__}")
    t = target if isinstance(target, Target) else load_target(target)
    cases = list(spec.cases())
    checks, findings = {}, []
    f, checks["properties"] = run_properties(spec, t, examples, progress)
    findings += f
    f, checks["stages"] = run_stages(spec, t, cases)
    findings += f
    if t.adapter.mechanism is None:
        skipped = "skipped: TARGET has no mechanism stage"
        checks.update(differential=skipped, independence=skipped, audit=skipped)
    else:
        _check_signature(t.adapter.mechanism, spec, cases[0], t.name)
        ind, checks["independence"] = run_independence(spec, t, spec.independence_on(cases), seed)
        if ind is not None:
            findings.append(ind)
        independent = ind is None or ind.verdict == "pass"
        f, checks["differential"] = run_differential(spec, t, cases, samples, seed, independent, progress)
        findings += f
        f, more = run_refusals(spec, t, seed)
        findings += f
        checks["differential"] += more
        f, checks["audit"] = run_audits(spec, t, audit_samples, seed, independent, progress)
        findings += f
    settings = {"samples": samples, "audit_samples": audit_samples, "examples": examples, "seed": seed,
                "alpha": ALPHA}
    return ValidationReport(algorithm, t.name, checks, findings, settings, time.perf_counter() - t0)


def format_report(r: ValidationReport) -> str:
    """The text report: verdict, which checks ran, each finding with its evidence (worst first)."""
    _need(r, ValidationReport, "r", "a ValidationReport (what validate returns)")
    lines = [f"userdp validate {r.algorithm} {r.target}", f"verdict: {r.verdict.upper()}", "", "checks:"]
    lines += [f"  {k:<13} {v}" for k, v in r.checks.items()]
    bad = sorted((f for f in r.findings if f.verdict != "pass"), key=lambda f: VERDICT_ORDER.index(f.verdict))
    lines += ["", f"findings ({len(bad)}):" if bad else "findings: none"]
    for f in bad:
        lines += format_finding(f)
    ok = [f for f in r.findings if f.verdict == "pass"]
    lines += ["", f"passed ({len(ok)}):"] + [f"  {f.check}: {f.title}" for f in ok]
    lines += ["", f"settings: {r.settings}; {r.elapsed_seconds:.1f} s"]
    return "\n".join(lines)


def format_finding(f: Finding, indent: str = "  ") -> list:
    """One finding: its verdict and title, then its evidence, one item per line."""
    _need(f, Finding, "f", "a validate.Finding")
    _need(indent, str, "indent", "a str")
    lines = [f"{indent}[{f.verdict}] {f.check}: {f.title}"]
    for k, v in f.evidence.items():
        if k == "snippet":
            lines.append(f"{indent}    snippet (runnable, with your adapter as `impl`):")
            lines += [f"{indent}      {s}" for s in str(v).splitlines()]
        elif k == "witness":
            lines.append(f"{indent}    witness: pair {v['pair_description']!r}, set "
                         f"{v['rejection_set'].get('description', v['rejection_set'])}, counts {v['counts']} "
                         f"({v['ordering']})")
        else:
            lines.append(f"{indent}    {k}: {_fmt(v)}")
    return lines


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list) and all(isinstance(x, float) for x in v):
        return "[" + ", ".join(f"{x:.6g}" for x in v) + "]"
    return str(v)
