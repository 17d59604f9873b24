"""``userdp validate ALGORITHM TARGET``: a graded verdict on someone else's implementation.

TARGET is ``module:object``: a function making one release per call, ``f(dataset, rng,
**params)``, a batched one, ``f(dataset, rng, size, **params)``, or an ``Adapter``
(``properties/adapter.py``) with any of the suite's stages (``audits/validation/target.py``
reads the shape from the signature and renames parameters with ``param_map``). What validate
knows about each algorithm is its spec (``audits/validation/``). The checks, each skipped only
when the stages it needs are absent, and said so:

a. **properties**: the paper's property suite on the noise-free stages TARGET has, and each
   such stage against the suite's reference on every case (relative tolerance ``STAGE_RTOL``).
b. **independence** (batched targets): ``CALLS`` calls of ``PER_CALL`` releases (``FEW_CALLS``
   for a target whose calls are slow); Kruskal-Wallis per coordinate on "the call a release
   came from", on the releases and on their distance to the pooled median. A dependent
   target is then drawn one release per call.
c. **differential**, on the spec's fixed cases and the generated ones (over the parameter
   range, seeded by ``seed``), the whole release (every coordinate the spec's flatten makes,
   both triangles of a matrix):
   - *mean*: each coordinate's mean against the reference's exact statistic (one-sample z),
     or, for a nonlinear release without one, against the reference's releases (Welch z);
   - *scale*: each coordinate's mean absolute deviation about its own median (each side's,
     so that a bias is not read as noise), target over reference, with a confidence
     interval on the ratio. Less spread than the reference on a case whose ``pair`` moves
     the reference's statistic by a share s of the sensitivity its noise is calibrated to
     is a **privacy** finding, "under-noised", when TARGET's own move on that pair in its
     own noise units (drawn on the pair's other side), over the reference's, exceeds 1/s
     even at its lower confidence bound (``_pair_cover``): TARGET's loss on the pair is then
     at least the claim's parameter x s x that ratio for noise of the reference's family
     (unbounded when TARGET's noise scale differs between the two sides). The bound is
     printed with the pair, which is then audited. More spread, or less that no pair here
     shows to matter, is a deviation;
   - *distribution*: two-sample Kolmogorov-Smirnov distances on every coordinate, on the
     norm of the standardised release and on two fixed random projections of it, each with
     its distribution-free DKW p-value, Holm's procedure over all of them and all cases;
   - *structure*: coordinates equal in every reference release (the two triangles of a
     symmetric matrix) must be equal in every target release;
   - *finite*: a release holding inf, or NaN (unless the algorithm may decline to release),
     is an invariant violation; where it may decline, the shares of no release are compared;
   - *stages agree*: with a ``statistic`` stage, the releases' mean against it.
   The failing case with the fewest records is printed as a runnable snippet.
d. **inputs**: the inputs the reference refuses (``Refusal``), under the declared input
   policy or, when none is declared, the policy each case shows (``POLICIES``):
   - a release at a budget the reference refuses (eps = 0, no noise) or a non-finite one is
     always an invariant violation;
   - "refuse": releasing on any refused input is an invariant violation;
   - "clip": releases on out-of-domain data must be the reference's on the projected data
     (``ValidationSpec.project``; KS and mean tests), and the spec's out-of-domain pairs are
     audited; a mismatch is an invariant violation;
   - "trust": out-of-domain cases are listed in a non-failing section, "inputs not
     enforced: the caller must guarantee ...";
   - inferred: a refusal is "refuse", a release matching the projection is "clip", any
     other release is "trust".
e. **audit**: ``harness.audit`` of TARGET's release on the spec's designs, on one pair aimed
   by TARGET's behaviour (the under-noised case's pair, or else the case whose spread is
   smallest against the reference's, among the cases with a sensitivity-attaining pair), on
   the pair a white-box search of TARGET's OWN ``statistic`` and ``noise_scale`` stages finds
   worst (where the spec has search spaces and TARGET those stages: ``_whitebox_design``),
   and, for a clipping target, on the spec's out-of-domain designs.

False alarms. A correct target gets a finding with probability at most ``ALPHA`` = 1e-4 per
run, split as ``ALPHAS`` (Bonferroni: valid under any dependence between the checks):
mean 2e-5, scale 2e-5, distribution 2e-5 (each Bonferroni or Holm over every case and
coordinate), audit 2e-5 (split evenly over the planned audits: designs, the aimed slot, the
white-box slot where the spec has one, and the out-of-domain designs), independence,
stages-agree, no-release shares and the clip comparisons 5e-6 each. The property suites are derandomized (their own
statistical
properties state thresholds of 1e-5 or less). The inferred input policy draws no finding,
so it spends nothing.

Why each test is valid:
- KS: Dvoretzky-Kiefer-Wolfowitz with Massart's constant: P(sup |F_n - F| > a) <= 2 exp(-2 n a^2)
  for ANY F, so two empirical CDFs of one law (sizes n, m) differ by more than d with
  probability <= 4 exp(-2 d^2 n m / (sqrt n + sqrt m)^2) (the split of d that equalises the
  two terms). No asymptotics, no continuity (ties only make it conservative); Holm's procedure
  over these p-values holds under any dependence.
- mean and scale: z tests by the central limit theorem, their standard errors from the
  reference's releases (the same law under the null, from many releases, so that a target
  sample that misses a rare component of a mixture cannot shrink them). The one-term
  Edgeworth correction of a two-sided tail at z ~ 5 is, relative to the tail,
  (kappa_4 (z^3 - 3 z) / 24 + gamma^2 (z^5 - 10 z^3 + 15 z) / 72) / n ~ (5 kappa_4 + 32 gamma^2) / n
  (the odd terms cancel), kappa_4 the excess kurtosis of what is averaged (a release's
  coordinate for the mean, its absolute deviation for the scale) and gamma^2 <~ kappa_4 + 2.
  So the z tests run only on coordinates with n >= ``Z_KURT`` = 300 x max(1, kappa_4) (the
  reference's sample kurtosis), where the correction is under 15% of the stated level;
  elsewhere (a very slow target, or a release mixing in a rare component: a PTR fallback,
  a second histogram bin) they are skipped and said so, and the distribution-free KS test
  stands alone. Laplace noise (kappa_4 = 3, and 6 for its absolute deviation) needs n >= 1800.
- Kruskal-Wallis: under independence the releases of all calls are exchangeable; chi-square
  with (calls - 1) degrees of freedom, accurate in the 1e-6 tail for groups of PER_CALL = 250.

Sample sizes. Batched targets get ``DEFAULT_SAMPLES`` releases per case (the reference
``REFERENCE_FACTOR`` times as many, and at least ``REFERENCE_MIN``) and ``DEFAULT_AUDIT_SAMPLES`` per side per
audited pair.
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
(``ValidationReport.complete``). Exit status (``cli.py``): 0 pass; 1 any finding; 2 usage
error (unknown algorithm, a TARGET that cannot be imported, has no stage, or does not take
the reference's keywords); 3 TARGET raised or returned the wrong shape; 4 a partial pass
(unless ``--allow-partial``).
"""

from __future__ import annotations

import importlib
import math
import numbers
import time
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
from scipy import stats

from userdp.properties.adapter import check_suite_property

from userdp.audits.engine.blas import single_threaded_blas
from userdp.audits.engine.harness import audit
from userdp.audits.engine.sampling import MechanismError
from userdp.audits.engine.usercode import UsageError, UserCodeError
from userdp.audits.validation import (
    AuditDesign,
    BadType,
    BadValue,
    Case,
    Refusal,
    ValidationSpec,
    add_axis,
    all_specs,
    get,
    register,
)
from userdp.audits.validation.target import BATCHED, ONE, PythonTarget, check_call, load_target, parse_param_map

__all__ = [
    "BadValue",
    "BadType",
    "Case",
    "AuditDesign",
    "Refusal",
    "ValidationSpec",
    "register_validation",
    "get_validation",
    "all_validations",
    "load_target",
    "validate",
    "format_report",
    "format_finding",
    "ValidationReport",
    "Finding",
    "VERDICT_ORDER",
    "ALPHA",
    "ALPHAS",
    "POLICIES",
    "parse_param_map",
    "Validation",
]

ALPHA = 1e-4
ALPHAS = {
    "mean": 2e-5,
    "scale": 2e-5,
    "distribution": 2e-5,
    "audit": 2e-5,
    "independence": 5e-6,
    "stages_agree": 5e-6,
    "release_share": 5e-6,
    "clip": 5e-6,
}
STAGE_RTOL = 1e-9  # noise-free stages, |target - reference| / max(1, |reference|)
CALLS, PER_CALL = 40, 250  # the independence check: 10^4 releases in 40 calls
FEW_CALLS, SLOW_CALL = 12, 0.05  # ... or 12 calls where one call takes more than 0.05 s of CPU
DEFAULT_SAMPLES = 100_000  # target releases per case (a fast target)
REFERENCE_FACTOR = 2  # reference releases per target release ...
REFERENCE_MIN = 200_000  # ... and at least this many (the spec's max_samples permitting): the reference is
# cheap, and a rare component of its law (a PTR fallback) must show in its kurtosis
CENTRE_SAMPLES = 20_000  # the separate reference batch whose median centres a release without a statistic
DEFAULT_AUDIT_SAMPLES = 100_000
MIN_SAMPLES, MIN_AUDIT_SAMPLES = 2_000, 2_000
FLOOR_SAMPLES = 250  # the least a very slow target gets, per case and per audited pair
Z_KURT = 300  # z tests only where n >= 300 x max(1, the reference's excess kurtosis) (module docstring)
MAX_SECONDS = 30.0  # the target's own CPU time above which the floors above give way (to FLOOR_SAMPLES)
BUDGET = {"differential": 3.5, "audit": 2.5}  # seconds of the target's own time, at most, by default
QUICK = {"samples": 20_000, "audit_samples": 20_000, "examples": 10, "budget": 0.4}
DEFAULT_EXAMPLES = 50
SHRINK_SECONDS = 5.0  # Hypothesis's shrinking of the first failing property's counterexample, at most
CLIP_SAMPLES = 20_000
KS_MAX = 50_000  # rows of each side in a KS test (the first ones: the rows are i.i.d.)
VERDICT_ORDER = ("privacy violation", "invariant violation", "deviation from reference", "not independent", "pass")
POLICIES = ("refuse", "clip", "trust")
NOISE_FREE_STAGES = ("weights", "statistic", "sensitivity", "noise_scale")
PROBE = {BATCHED: 500, ONE: 200}  # releases in the first, timed batch of a case

assert abs(sum(ALPHAS.values()) - ALPHA) < 1e-15


# ------------------------------------------------------------------------ compatibility names
def register_validation(spec: ValidationSpec) -> ValidationSpec:
    """``register`` of ``audits/validation/__init__.py``: add a spec (a spec module calls it)."""
    return register(spec)


def all_validations() -> dict[str, ValidationSpec]:
    """Every validation spec, by algorithm name (``all_specs``)."""
    return all_specs()


def get_validation(algorithm: str) -> ValidationSpec:
    """The spec of ``algorithm`` (``get``); a BadValue naming the supported ones otherwise."""
    return get(algorithm)


def _check_count(value, name: str, lo: int, hi: int) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
        raise BadType(f"{name} must be an int, got {type(value).__name__} {value!r:.80}")
    if not lo <= value <= hi:
        raise BadValue(f"{name} must be an int in [{lo}, {hi}], got {value!r}")
    return int(value)


# ------------------------------------------------------------------------ findings and the report
@dataclass
class Finding:
    check: str  # properties | stages | differential | independence | inputs | audit
    verdict: str  # one of VERDICT_ORDER
    title: str
    evidence: dict

    def to_dict(self) -> dict:
        return {"check": self.check, "verdict": self.verdict, "title": self.title, "evidence": self.evidence}


@dataclass
class ValidationReport:
    algorithm: str
    target: str
    checks: dict  # check -> "ran: ..." or "skipped: why"
    findings: list
    settings: dict
    elapsed_seconds: float = 0.0
    call_shape: str | None = None
    untested: list = field(default_factory=list)  # what a partial run did not test
    inputs: list = field(default_factory=list)  # [{case, kind, behaviour, requires}]
    notes: list = field(default_factory=list)
    reproducible: bool | None = None

    @property
    def verdict(self) -> str:
        bad = [f.verdict for f in self.findings if f.verdict != "pass"]
        return min(bad, key=VERDICT_ORDER.index) if bad else "pass"

    @property
    def complete(self) -> bool:
        return not self.untested

    def verdict_line(self) -> str:
        v = self.verdict.upper()
        return v if self.complete else f"{v} ({'; '.join(self.untested)})"

    def to_dict(self) -> dict:
        return {
            "algorithm": self.algorithm,
            "target": self.target,
            "verdict": self.verdict,
            "complete": self.complete,
            "untested": list(self.untested),
            "call_shape": self.call_shape,
            "checks": self.checks,
            "settings": self.settings,
            "inputs": self.inputs,
            "notes": self.notes,
            "reproducible": self.reproducible,
            "findings": [f.to_dict() for f in self.findings if f.verdict != "pass"],
            "passed": [f.to_dict() for f in self.findings if f.verdict == "pass"],
            "elapsed_seconds": round(self.elapsed_seconds, 2),
        }


def _progress(progress, msg):
    if progress is not None:
        progress(msg)


# ------------------------------------------------------------------------ releases as rows
def _flat(out, size: int, flatten, where: str) -> np.ndarray:
    """The ``size`` releases of one batched call as a float array (size, k); NaN rows = no release."""
    if flatten is not None:
        try:
            out = flatten(out, size)
        except (UsageError, UserCodeError):
            raise
        except Exception as exc:
            raise UserCodeError(
                f"{where} returned {type(out).__name__}, which is not a release of this "
                f"algorithm ({type(exc).__name__}: {exc})"
            ) from None
    if isinstance(out, np.ma.MaskedArray):
        out = np.ma.filled(out.astype(float), np.nan)
    try:
        a = np.asarray(out, dtype=float)
    except (TypeError, ValueError) as exc:
        raise UserCodeError(
            f"{where} returned {type(out).__name__}, expected {size} numeric releases "
            f"(an array of shape ({size},) or ({size}, k)): {exc}"
        ) from None
    if a.ndim == 0 or a.shape[0] != size:
        raise UserCodeError(
            f"{where} returned shape {a.shape} for size={size}; expected ({size},) or ({size}, k): "
            "`size` independent releases, one per row"
        )
    return a.reshape(size, -1)


def _rows_one(outs: list, flatten, where: str) -> np.ndarray:
    """The outputs of ``len(outs)`` one-release calls as rows; ``None`` (no release) is a NaN row."""
    n = len(outs)
    if n and flatten is None and all(type(o) in (float, int, np.float64, np.float32) for o in outs):
        return np.asarray(outs, dtype=float).reshape(n, 1)  # the common fast path: scalars
    rows, k, missing = [], None, []
    for i, o in enumerate(outs):
        if o is None:
            missing.append(i)
            rows.append(None)
            continue
        r = _flat(add_axis(o), 1, flatten, f"{where} (call {i + 1})")[0]
        if k is None:
            k = r.size
        elif r.size != k:
            raise UserCodeError(
                f"{where} returned a release of {r.size} values on call {i + 1} and of {k} on an "
                "earlier call: every release must have the same shape"
            )
        rows.append(r)
    if k is None:
        return np.full((n, 1), np.nan)
    return np.stack([np.full(k, np.nan) if r is None else r for r in rows])


def _release_rows(
    spec: ValidationSpec, target: PythonTarget, dataset, rng, n: int, params, where: str, one_per_call: bool = False
) -> np.ndarray:
    """n releases of TARGET as rows (n, k): one batched call, or n one-release calls (a target
    made one release per call, or one whose batched releases are not independent)."""
    if target.shape == BATCHED and not one_per_call:
        return _flat(target.release(dataset, rng, n, params, where), n, spec.flatten, f"TARGET {target.who}")
    if target.shape == BATCHED:
        return np.concatenate(
            [
                _flat(target.release(dataset, rng, 1, params, where), 1, spec.flatten, f"TARGET {target.who}")
                for _ in range(n)
            ]
        )
    return _rows_one(target.release(dataset, rng, n, params, where), spec.flatten, f"TARGET {target.who}")


def _reference_rows(spec: ValidationSpec, dataset, rng, n: int, params) -> np.ndarray:
    return _flat(spec.reference(dataset, rng=rng, size=n, **params), n, spec.flatten, "the reference")


def _nested_flat(out):
    """A stage's output as one flat float vector: an array, a number, or a (nested) tuple, list or
    dict (values in key order) of them (Krichene's (A, b)); None when it is not numeric."""
    if isinstance(out, Mapping):
        out = tuple(out[k] for k in sorted(out, key=str))
    if isinstance(out, (tuple, list)) and any(isinstance(p, (tuple, list, np.ndarray, Mapping)) for p in out):
        parts = [_nested_flat(p) for p in out]
        return None if any(p is None for p in parts) else np.concatenate(parts) if parts else np.zeros(0)
    try:
        return np.asarray(out, dtype=float).ravel()
    except (TypeError, ValueError):
        return None


def _short(a) -> str:
    """Any output, briefly, for the report; never raises (a finding is never lost to its formatting)."""
    try:
        if a is None:
            return "None"
        flat = _nested_flat(a)
        if flat is None:
            return f"{type(a).__name__} (not numeric): {repr(a)[:80]}"
        text = np.array2string(flat[:6], precision=6)
        return text + (f" ... ({flat.size} values)" if flat.size > 6 else "")
    except Exception:  # noqa: BLE001 - a repr must not end the run
        return f"{type(a).__name__} (unprintable)"


def _jsonable(d: Mapping) -> dict:
    """Parameters for the report: small arrays as lists, larger ones by shape."""
    return {
        k: ((v.tolist() if v.size <= 8 else f"array of shape {v.shape}") if isinstance(v, np.ndarray) else v)
        for k, v in d.items()
    }


def _claim_text(claim) -> str:
    """'pure epsilon=1', 'approx epsilon=3,delta=1e-05'; a paired claim as both, joined by '; and '."""
    if claim.kind == "claims":
        return f"{_claim_text(claim.primary)}; and {_claim_text(claim.gdp)}"

    def one(v):
        if isinstance(v, float):
            return f"{v:g}"
        if isinstance(v, (list, tuple)) and len(v) > 8:  # a personalized profile: its range
            return f"[{len(v)} values in {min(v):g}..{max(v):g}]"
        return str(v)

    params = ",".join(f"{k}={one(v)}" for k, v in claim.params().items())
    return f"{claim.kind} {params}"


def _scale_parameter(claim, unit) -> tuple[str, float] | None:
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


# ------------------------------------------------------------------------ statistics
def _ks_distance(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The two-sample KS distance sup_t |F_x(t) - F_y(t)| and where it is attained."""
    xs, ys = np.sort(x), np.sort(y)
    grid = np.concatenate([xs, ys])
    d = np.abs(np.searchsorted(xs, grid, side="right") / xs.size - np.searchsorted(ys, grid, side="right") / ys.size)
    i = int(np.argmax(d))
    return float(d[i]), float(grid[i])


def _ks_pvalue(d: float, n: int, m: int) -> float:
    """P(KS distance >= d) for two samples of one law, sizes n and m: the DKW bound (module docstring)."""
    return min(1.0, 4.0 * math.exp(-2.0 * d * d * n * m / (math.sqrt(n) + math.sqrt(m)) ** 2))


def _ks_threshold(n: int, alpha: float, m: int | None = None) -> float:
    """The distance whose DKW p-value is alpha (equal sizes by default)."""
    m = n if m is None else m
    return math.sqrt(math.log(4.0 / alpha) * (math.sqrt(n) + math.sqrt(m)) ** 2 / (2.0 * n * m))


def _holm(pvals: list[float], alpha: float) -> list[bool]:
    order = sorted(range(len(pvals)), key=pvals.__getitem__)
    reject = [False] * len(pvals)
    for rank, i in enumerate(order):
        if pvals[i] > alpha / (len(pvals) - rank):
            break
        reject[i] = True
    return reject


def _z(alpha: float, tests: int) -> float:
    """Two-sided Bonferroni critical value for ``tests`` tests at family level alpha."""
    return float(stats.norm.isf(alpha / (2 * max(1, tests))))


_PROJECTIONS = {}


def _projections(k: int) -> np.ndarray:
    """Two fixed random unit directions in R^k (seeded by k): a joint difference shows in them."""
    if k not in _PROJECTIONS:
        g = np.random.default_rng([1729, k]).standard_normal((k, 2))
        _PROJECTIONS[k] = g / np.linalg.norm(g, axis=0)
    return _PROJECTIONS[k]


@dataclass
class _CaseDraw:
    case: Case
    Xt: np.ndarray  # target rows (finite and released only)
    Xr: np.ndarray  # reference rows
    centre: np.ndarray  # (k,) the statistic, or the median of a separate reference batch
    exact: bool  # centre is the exact statistic
    bad_rows: int  # target rows holding inf or (not declining) NaN
    released: tuple  # (share released by target, by reference) where the spec declines
    own: np.ndarray | None  # TARGET's own statistic stage, flattened
    n: int = 0  # target releases drawn (finite or not)
    scale: list = field(default_factory=list)  # per coordinate (ratio, log_se, s_t, s_r)


# ------------------------------------------------------------------------ the run
class Validation:
    """One validation: the spec, the target, the settings, and the checks as methods (``validate``
    runs them in order; the pytest plugin runs them one item each)."""

    def __init__(
        self,
        spec: ValidationSpec,
        target: PythonTarget,
        *,
        samples=None,
        audit_samples=None,
        examples=None,
        seed: int = 0,
        quick: bool = False,
        inputs: str | None = None,
        progress=None,
    ):
        if not isinstance(spec, ValidationSpec):
            raise BadType(f"spec must be a ValidationSpec (validation.get(ALGORITHM)), got {type(spec).__name__}")
        if not isinstance(target, PythonTarget):
            raise BadType(f"target must be a PythonTarget (validation.target.load_target), got {type(target).__name__}")
        if samples is not None:
            _check_count(samples, "samples", MIN_SAMPLES, 10_000_000)
        if audit_samples is not None:
            _check_count(audit_samples, "audit_samples", 1_000, 10_000_000)
        if examples is not None:
            _check_count(examples, "examples", 1, 100_000)
        _check_count(seed, "seed", 0, 2**63 - 1)
        if not isinstance(quick, bool):
            raise BadType(f"quick must be a bool, got {type(quick).__name__}")
        if inputs is not None and inputs not in POLICIES:
            raise BadValue(f"inputs must be one of {POLICIES} or None (inferred per case), got {inputs!r}")
        if progress is not None and not callable(progress):
            raise BadType(f"progress must be None or a callable taking one message, got {type(progress).__name__}")
        self.spec, self.t, self.seed, self.quick = spec, target, int(seed), quick
        self.progress = progress
        self.policy = inputs
        self.examples = examples if examples is not None else (QUICK["examples"] if quick else DEFAULT_EXAMPLES)
        self.samples_given, self.audit_samples_given = samples, audit_samples
        self.budget = {k: v * (QUICK["budget"] if quick else 1.0) for k, v in BUDGET.items()}
        self.max_seconds = MAX_SECONDS * (QUICK["budget"] if quick else 1.0)
        self.cases = spec.all_cases(seed)
        self.findings: list[Finding] = []
        self.checks: dict[str, str] = {}
        self.notes: list[str] = []
        self.inputs: list[dict] = []
        self.independent = True
        self.cost = None  # seconds per target release, measured
        self.samples = self.audit_samples = None
        self.draws: list[_CaseDraw] = []
        self.clips = False  # some out-of-domain case released on the projected law
        self.reproducible = None
        self.aim = None  # (case, reason) for the aimed audit
        self.slow = False  # the floors gave way to a very slow target

    # -------------------------------------------------------------- shapes and settings
    def check_target(self) -> None:
        """Refuse (exit 2) a target with no stage, and one that cannot be called as validate will."""
        t, spec = self.t, self.spec
        if t.mechanism is None and not t.stage_names():
            raise BadValue(
                f"target {t.name}: an Adapter with no stage, so there is nothing to validate; validate "
                f"needs a mechanism (the release: `userdp validate {spec.algorithm} --signature` shows "
                f"its call shapes) or at least one noise-free stage "
                f"({', '.join(spec.stage_params) or 'none for this algorithm'})"
            )
        case = self.cases[0]
        if t.mechanism is not None:
            check_call(t.mechanism, spec, case.params, t.param_map, t.who)
        if self.policy is not None and self.policy not in POLICIES:
            raise BadValue(f"inputs must be one of {POLICIES} or None (inferred per case), got {self.policy!r}")
        if self.policy == "clip" and spec.project is None:
            raise BadValue(
                f"--inputs clip: {spec.algorithm} has no projection onto its domain (its inputs are "
                "refused on parameters only); use refuse or trust"
            )

    def _audit_samples_for(self, d: AuditDesign, share: float, n_designs: int = 1) -> int:
        """Outputs per side for design ``d``: given, or as many as ``share`` seconds of TARGET's time
        allow (one release per call: timed on the design's first dataset), within
        [MIN_AUDIT_SAMPLES, the default]."""
        if self.audit_samples_given is not None:
            return self.audit_samples_given
        default = QUICK["audit_samples"] if self.quick else DEFAULT_AUDIT_SAMPLES
        sides = 2 * min(3, len(d.pairs)) + (0.2 * len(d.pairs) if len(d.pairs) > 3 else 0)
        if self.t.shape == BATCHED and self.independent:
            cost = self.cost or 0.0
        else:
            case = Case(d.pairs[0].first, d.params, "timing")
            p = PROBE[ONE]
            t0 = time.process_time()
            self._rows(case, np.random.default_rng([self.seed, 8]), p, f"audit {d.description!r}")
            cost = (time.process_time() - t0) / p
            self.cost = max(self.cost or 0.0, cost)
        n = int(share / (cost * sides)) if cost > 0 else default
        floor = MIN_AUDIT_SAMPLES
        if cost * MIN_AUDIT_SAMPLES * sides * n_designs > 0.35 * self.max_seconds:
            floor = _quantised(
                int(0.35 * self.max_seconds / (cost * sides * n_designs)), FLOOR_SAMPLES, MIN_AUDIT_SAMPLES
            )
            self.slow = True
        return _quantised(n, floor, default)

    # -------------------------------------------------------------- a. properties and stages
    def run_properties(self) -> None:
        spec, t = self.spec, self.t
        suite = importlib.import_module(spec.suite)
        present = set(t.stage_names())
        if not spec.suite_properties:
            self.checks["properties"] = f"skipped: {spec.suite} has no property suite for {spec.algorithm}"
            return
        if not present:
            self.checks["properties"] = (
                "skipped: TARGET has no noise-free stage (the suite checks "
                f"{', '.join(spec.stage_params) or 'stages this algorithm does not have'})"
            )
            return
        ran, failed = 0, 0
        props = getattr(suite, spec.suite_properties)
        for prop in props:
            # the first failing property's counterexample is shrunk (for at most SHRINK_SECONDS); the
            # later ones are reported as found: the grades are the same, the run stays short
            f = check_suite_property(
                suite, prop, t.adapter, max_examples=self.examples, shrink=failed == 0, shrink_seconds=SHRINK_SECONDS
            )
            failed += f.verdict not in ("pass", "not applicable")
            if f.verdict == "not applicable":
                continue
            ran += 1
            _progress(self.progress, f"property {prop.__name__}: {f.verdict}")
            verdict = "pass" if f.verdict == "pass" else "invariant violation"
            ev = {"property": f.property, "paper_invariant": (prop.__doc__ or "").strip().split("\n")[0]}
            if f.verdict != "pass":
                ev.update(
                    grade=f.verdict,
                    message=f.message,
                    counterexample=f.counterexample,
                    snippet=_property_snippet(spec, prop, f),
                )
            self.findings.append(Finding("properties", verdict, f"{prop.__name__}: {f.verdict}", ev))
        self.checks["properties"] = (
            f"ran: {ran} of {len(props)} properties (the rest need stages TARGET lacks), "
            f"up to {self.examples} Hypothesis examples each"
        )

    def run_stages(self) -> None:
        spec, t = self.spec, self.t
        ref = getattr(importlib.import_module(spec.suite), spec.suite_reference, None) if spec.suite_reference else None
        stages = [
            s
            for s in spec.stage_params
            if getattr(t.adapter, s, None) is not None and getattr(ref, s, None) is not None
        ]
        if not stages:
            self.checks["stages"] = "skipped: TARGET has no noise-free stage to compare with the reference"
            return
        cases = self.cases if spec.stage_cases == "all" else [c for c in self.cases if c.origin == "fixed"]
        for s in stages:
            worst = None
            for case in cases:
                kw = {k: case.params[k] for k in spec.stage_params[s] if k in case.params}
                args = (case.dataset,) if s in spec.takes_dataset else ()
                want = _nested_flat(getattr(ref, s)(*args, **kw))
                got = _nested_flat(
                    _call(
                        f"TARGET {t.name}'s {s} stage on case {case.description!r}", getattr(t.adapter, s), *args, **kw
                    )
                )
                if got is None or want is None or got.shape != want.shape:
                    worst = (math.inf, case, want, got)
                    break
                err = float(np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)))) if want.size else 0.0
                if not np.isfinite(err):
                    err = math.inf
                if worst is None or err > worst[0]:
                    worst = (err, case, want, got)
            err, case, want, got = worst
            ok = err <= STAGE_RTOL
            ev = {"stage": s, "largest_relative_difference": err, "tolerance": STAGE_RTOL, "case": case.description}
            if not ok:
                ev.update(reference=_short(want), target=_short(got), params=_jsonable(case.params))
            self.findings.append(
                Finding(
                    "stages",
                    "pass" if ok else "deviation from reference",
                    f"stage {s} {'equals' if ok else 'differs from'} the reference's",
                    ev,
                )
            )
        self.checks["stages"] = (
            f"ran: stages {', '.join(stages)} compared on {len(cases)} cases "
            f"(|difference| <= {STAGE_RTOL:g} max(1, |reference|))"
        )

    # -------------------------------------------------------------- b. independence
    def run_independence(self, case: Case | None = None) -> Finding | None:
        spec, t = self.spec, self.t
        if case is not None and not isinstance(case, Case):
            raise BadType(f"case must be None or a validation Case, got {type(case).__name__}")
        if t.shape != BATCHED:
            self.checks["independence"] = "skipped: one release per call (no releases share a call)"
            return None
        case = case or spec.independence_on(self.cases)
        rng = np.random.default_rng([self.seed, 2])
        t0 = time.process_time()
        first = _release_rows(spec, t, case.dataset, rng, PER_CALL, case.params, f"case {case.description!r}")
        calls = CALLS if time.process_time() - t0 < SLOW_CALL else FEW_CALLS  # a slow call: fewer groups
        X = np.stack(
            [first]
            + [
                _release_rows(spec, t, case.dataset, rng, PER_CALL, case.params, f"case {case.description!r}")
                for _ in range(calls - 1)
            ]
        )
        self.cost = (time.process_time() - t0) / (calls * PER_CALL)
        k = X.shape[2]
        pmin, where = 1.0, None
        for j in range(k):
            groups = [g[np.isfinite(g)] for g in X[:, :, j]]
            flat = np.concatenate(groups)
            if flat.size == 0 or np.all(flat == flat[0]):
                continue
            med = float(np.median(flat))
            for what, gs in (("location", groups), ("spread", [np.abs(g - med) for g in groups])):
                gs = [g for g in gs if g.size]
                allv = np.concatenate(gs)
                if len(gs) < 2 or np.all(allv == allv[0]):
                    continue
                h, p = stats.kruskal(*gs)
                if p < pmin:
                    within = float(np.mean([np.var(g) for g in groups if g.size > 1]))
                    pmin, where = p, (j, what, float(h), within, float(np.var(flat)))
        crit = ALPHAS["independence"] / max(1, 2 * k)
        text = (
            f"ran: {calls} calls x {PER_CALL} releases on case {case.description!r}, Kruskal-Wallis per "
            "coordinate on location and spread"
        )
        if where is None:
            self.checks["independence"] = text + " (nothing varies: not determined)"
            return None
        j, what, h, within, total = where
        bad = pmin < crit
        f = Finding(
            "independence",
            "not independent" if bad else "pass",
            "releases of one call " + ("share randomness" if bad else "look independent"),
            {
                "smallest_p": pmin,
                "critical_p": crit,
                "coordinate": j,
                "in": what,
                "kruskal_h": round(h, 2),
                "within_call_variance": within,
                "overall_variance": total,
                "meaning": "releases grouped by the call that made them; a small p says they cluster by call "
                "(randomness drawn once per call and shared)",
            },
        )
        self.checks["independence"] = text
        self.findings.append(f)
        self.independent = not bad
        return f

    # -------------------------------------------------------------- c. differential
    def _rows(self, case: Case, rng, n: int, where: str) -> np.ndarray:
        return _release_rows(
            self.spec, self.t, case.dataset, rng, n, case.params, where, one_per_call=not self.independent
        )

    def _adaptive_rows(self, case: Case, rng, budget: float, default: int, where: str) -> np.ndarray:
        """TARGET's releases on ``case``: ``samples`` if given, else as many as ``budget`` seconds of
        its time allow on this case (timed on a first batch; between MIN_SAMPLES and ``default``).
        The count depends on timings only, never on the releases, so every test keeps its level."""
        if self.samples_given is not None:
            return self._rows(case, rng, self.samples_given, where)
        one = self.t.shape == ONE or not self.independent
        p = PROBE[ONE] if one else PROBE[BATCHED]
        t0 = time.process_time()  # CPU time: less sensitive to the machine's load
        parts = [self._rows(case, rng, p, where)]
        t1 = time.process_time() - t0
        if one:
            cost, overhead = t1 / p, 0.0
        else:  # two sizes: per-call overhead and per-release cost
            t0 = time.process_time()
            parts.append(self._rows(case, rng, 4 * p, where))
            t2 = time.process_time() - t0
            cost = max((t2 - t1) / (3 * p), 1e-9)
            overhead = max(t1 - cost * p, 0.0)
        self.cost = max(self.cost or 0.0, cost)
        drawn = sum(x.shape[0] for x in parts)
        floor = MIN_SAMPLES
        if cost * MIN_SAMPLES * len(self.cases) > 0.5 * self.max_seconds:  # a very slow target
            floor = _quantised(int(0.5 * self.max_seconds / (cost * len(self.cases))), FLOOR_SAMPLES, MIN_SAMPLES)
            self.slow = True
        n = _quantised(
            int((budget - overhead) / cost) if budget > overhead else 0, floor, min(default, self.spec.max_samples)
        )
        if n < drawn:  # keep the count on the quantised grid
            parts = [np.concatenate(parts)[:n]]
            drawn = n
        if n > drawn:
            parts.append(self._rows(case, rng, n - drawn, where))
        return np.concatenate(parts)

    def draw_cases(self) -> None:
        spec, t = self.spec, self.t
        default = QUICK["samples"] if self.quick else DEFAULT_SAMPLES
        budget = self.budget["differential"] / max(1, len(self.cases))
        own_stage = t.adapter.statistic if "statistic" in spec.stage_params else None
        for j, case in enumerate(self.cases):
            ss = np.random.SeedSequence([self.seed, 1, j]).spawn(3)
            where = f"case {case.description!r}"
            Xt = self._adaptive_rows(case, np.random.default_rng(ss[0]), budget, default, where)
            n = Xt.shape[0]
            nr = min(spec.max_samples, max(REFERENCE_FACTOR * n, REFERENCE_MIN))
            Xr = _reference_rows(spec, case.dataset, np.random.default_rng(ss[1]), nr, case.params)
            if Xt.shape[1] != Xr.shape[1]:
                raise UserCodeError(
                    f"TARGET {t.who} returned releases of {Xt.shape[1]} values on {where}; the "
                    f"reference's have {Xr.shape[1]} ({spec.release}; `userdp validate "
                    f"{spec.algorithm} --signature`)"
                )
            centre = None
            if spec.statistic is not None:
                centre, exact = np.asarray(spec.statistic(case.dataset, **case.params), dtype=float).ravel(), True
                if centre.size != Xr.shape[1]:  # a statistic not flattened like the releases: unused
                    centre = None
            if centre is None:
                C = _reference_rows(
                    spec, case.dataset, np.random.default_rng(ss[2]), min(CENTRE_SAMPLES, nr), case.params
                )
                centre, exact = np.nanmedian(C, axis=0), False
            empty = np.all(np.isnan(Xt), axis=1)
            finite = np.all(np.isfinite(Xt), axis=1)
            bad_rows = int(np.sum(~finite & ~(empty if spec.declines else False)))
            released = (float(np.mean(~empty)), float(np.mean(~np.all(np.isnan(Xr), axis=1))))
            own = None
            if own_stage is not None:
                kw = {k: case.params[k] for k in spec.stage_params["statistic"] if k in case.params}
                out = _call(f"TARGET {t.name}'s statistic stage", own_stage, case.dataset, **kw)
                own = _stage_vector(spec, out)
            self.draws.append(
                _CaseDraw(
                    case, Xt[finite], Xr[np.all(np.isfinite(Xr), axis=1)], centre, exact, bad_rows, released, own, n
                )
            )
            _progress(self.progress, f"differential: case {j + 1} of {len(self.cases)} drawn ({n} releases)")
        ns = [d.n for d in self.draws]
        self.samples = ns[0] if min(ns) == max(ns) else f"{min(ns)}-{max(ns)}"

    def run_differential(self) -> None:
        if not self.draws:
            self.draw_cases()
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # degenerate coordinates: handled
            self._differential()

    def _differential(self) -> None:
        spec = self.spec
        coords = sum(d.Xr.shape[1] for d in self.draws)
        z_mean = _z(ALPHAS["mean"], coords)
        z_scale = _z(ALPHAS["scale"], coords)
        skipped = {"mean": 0, "scale": 0}
        fails = {"mean": [], "scale": [], "dist": [], "structure": [], "finite": [], "own": [], "share": []}
        mean_worst = scale_worst = own_worst = None
        ks_tests = []  # (p, case index, what, distance, at)
        for ci, d in enumerate(self.draws):
            if d.bad_rows:
                fails["finite"].append(ci)
            if spec.declines and (d.released[0] < 1 or d.released[1] < 1):
                fails["share"].append(ci)
            if d.Xt.shape[0] < 2 or d.Xr.shape[0] < 2:
                continue
            nt, nr = d.Xt.shape[0], d.Xr.shape[0]
            for k in range(d.Xr.shape[1]):
                t, r = d.Xt[:, k], d.Xr[:, k]
                # mean: the standard error from the REFERENCE's spread (the same law under the null, and
                # estimated from many releases: a target sample that happens to miss a rare component of
                # a mixture cannot shrink it), and only where the normal approximation holds (Z_KURT)
                sd_r = float(np.std(r, ddof=1))
                if nt >= Z_KURT * max(1.0, _excess_kurtosis(r)):
                    if d.exact and d.centre.size == d.Xr.shape[1]:
                        diff, se = float(np.mean(t)) - float(d.centre[k]), sd_r / math.sqrt(nt)
                    else:
                        diff = float(np.mean(t)) - float(np.mean(r))
                        se = sd_r * math.sqrt(1.0 / nt + 1.0 / nr)
                    z = abs(diff) / se if se > 0 else (0.0 if diff == 0 else math.inf)
                    if mean_worst is None or z > mean_worst[0]:
                        mean_worst = (z, ci, k, diff, se)
                    if z > z_mean:
                        fails["mean"].append((ci, k))
                else:
                    skipped["mean"] += 1
                # scale: each side's mean absolute deviation about its own median, so that a shifted
                # centre (the mean test's business) is not read as more noise. d/dm E|X - m| = 2 F(m) - 1
                # vanishes at the median, so estimating m changes the estimator's variance by o(1/n)
                at, ar = np.abs(t - np.median(t)), np.abs(r - np.median(r))
                st, sr = float(np.mean(at)), float(np.mean(ar))
                if sr > 0 and nt >= Z_KURT * max(1.0, _excess_kurtosis(ar)):
                    rel = float(np.var(ar)) / (sr * sr)  # the reference's, for both sides (as above)
                    lse = math.sqrt(rel * (1.0 / nt + 1.0 / nr))
                    ratio = st / sr
                    d.scale.append((k, ratio, lse))
                    zs = abs(math.log(ratio)) / lse if ratio > 0 else math.inf
                    if scale_worst is None or zs > scale_worst[0]:
                        scale_worst = (zs, ci, k, ratio, lse)
                    if zs > z_scale:
                        fails["scale"].append((ci, k, ratio, lse))
                elif sr > 0:
                    skipped["scale"] += 1
                # stages agree (the same standard error and condition as the mean test)
                if d.own is not None and d.own.size == d.Xr.shape[1] and nt >= Z_KURT * max(1.0, _excess_kurtosis(r)):
                    se_o = sd_r / math.sqrt(nt)
                    dz = float(np.mean(t)) - float(d.own[k])
                    zo = abs(dz) / se_o if se_o > 0 else (0.0 if dz == 0 else math.inf)
                    if own_worst is None or zo > own_worst[0]:
                        own_worst = (zo, ci, k, dz, se_o)
            # structure: coordinates equal in every reference release
            same = _equal_pairs(d.Xr)
            dup = set()
            for i, j in same:
                differ = int(np.sum(~_close(d.Xt[:, i], d.Xt[:, j])))
                if differ:
                    fails["structure"].append((ci, i, j, differ))
                else:
                    dup.add(j)  # a mirror of coordinate i in both: tested once
            # distribution: coordinates, the standardised norm, two projections (KS_MAX rows of each)
            Xt, Xr = d.Xt[:KS_MAX], d.Xr[:KS_MAX]
            sd = np.std(Xr, axis=0)
            sd = np.where(sd > 0, sd, 1.0)
            Zt, Zr = (Xt - d.centre) / sd, (Xr - d.centre) / sd
            series = [(f"coordinate {k}", Xt[:, k], Xr[:, k]) for k in range(Xr.shape[1]) if k not in dup]
            if Xr.shape[1] > 1:
                P = _projections(Xr.shape[1])
                series.append(
                    ("norm of the standardised release", np.linalg.norm(Zt, axis=1), np.linalg.norm(Zr, axis=1))
                )
                series += [(f"random projection {i}", Zt @ P[:, i], Zr @ P[:, i]) for i in range(2)]
            for what, a, b in series:
                dist, at = _ks_distance(a, b)
                ks_tests.append((_ks_pvalue(dist, a.size, b.size), ci, what, dist, at))
        ks_reject = _holm([p for p, *_ in ks_tests], ALPHAS["distribution"]) if ks_tests else []
        fails["dist"] = [t for t, bad in zip(ks_tests, ks_reject) if bad]
        self._report_differential(fails, mean_worst, scale_worst, own_worst, ks_tests, coords, z_mean, z_scale, skipped)

    def _report_differential(
        self, fails, mean_worst, scale_worst, own_worst, ks_tests, coords, z_mean, z_scale, skipped
    ):
        spec, D = self.spec, self.draws
        F = self.findings.append

        def smallest(cis):  # the failing case with the fewest records
            return min(dict.fromkeys(cis), key=lambda ci: (D[ci].case.dataset.n, ci))

        for ci in fails["finite"][:1]:
            d = D[ci]
            F(
                Finding(
                    "differential",
                    "invariant violation",
                    "releases non-finite values (inf or NaN)",
                    {
                        "case": d.case.description,
                        "bad_releases": d.bad_rows,
                        "of": d.n,
                        "meaning": "a release must be a finite number in every coordinate"
                        + ("" if spec.declines else "; this algorithm always releases"),
                        **self._snippet(d.case),
                    },
                )
            )
        if fails["share"]:
            ci = fails["share"][0]
            pt, pr = D[ci].released
            zc = _z(ALPHAS["release_share"], len(D))
            n = D[ci].n
            p = (pt + pr) / 2
            z = abs(pt - pr) / math.sqrt(max(p * (1 - p), 1e-300) * 2 / n)
            F(
                Finding(
                    "differential",
                    "deviation from reference" if z > zc else "pass",
                    "share of releases " + ("differs from" if z > zc else "matches") + " the reference's",
                    {
                        "z": round(z, 3),
                        "critical_z": round(zc, 3),
                        "case": D[ci].case.description,
                        "released_target": pt,
                        "released_reference": pr,
                    },
                )
            )
        # mean
        if mean_worst is not None:
            z, ci, k, diff, se = mean_worst
            bad = bool(fails["mean"])
            if bad:
                ci = smallest([c for c, _ in fails["mean"]])
                k = next(kk for c, kk in fails["mean"] if c == ci)
                d = D[ci]
                t, r = d.Xt[:, k], d.Xr[:, k]
                sd_r = float(np.std(r, ddof=1))
                if d.exact:
                    diff, se = float(np.mean(t)) - float(d.centre[k]), sd_r / math.sqrt(t.size)
                else:
                    diff, se = float(np.mean(t)) - float(np.mean(r)), sd_r * math.sqrt(1 / t.size + 1 / r.size)
                z = abs(diff) / se if se > 0 else math.inf
            F(
                Finding(
                    "differential",
                    "deviation from reference" if bad else "pass",
                    "mean release " + ("differs from" if bad else "matches") + " the reference's statistic",
                    {
                        "largest_z" if not bad else "z": round(z, 3),
                        "critical_z": round(z_mean, 3),
                        "case": D[ci].case.description,
                        "coordinate": k,
                        "difference": diff,
                        "confidence_interval": [diff - z_mean * se, diff + z_mean * se],
                        "meaning": (
                            "target mean minus the reference's noise-free statistic"
                            if D[ci].exact
                            else "target mean minus the reference releases' mean"
                        )
                        + f"; the interval holds jointly for all {coords} coordinates with probability "
                        f">= 1 - {ALPHAS['mean']:g}",
                        **(self._snippet(D[ci].case) if bad else {}),
                    },
                )
            )
        # scale
        if scale_worst is not None:
            self._report_scale(fails["scale"], scale_worst, z_scale, smallest)
        # distribution
        if ks_tests:
            if fails["dist"]:
                p, ci, what, dist, at = min(fails["dist"], key=lambda t: (D[t[1]].case.dataset.n, t[0]))
            else:
                p, ci, what, dist, at = min(ks_tests, key=lambda t: t[0])
            bad = bool(fails["dist"])
            F(
                Finding(
                    "differential",
                    "deviation from reference" if bad else "pass",
                    "release distribution " + ("differs from" if bad else "matches") + " the reference's",
                    {
                        "case": D[ci].case.description,
                        "in": what,
                        "ks_distance": round(dist, 5),
                        "at": at,
                        "p_value": p,
                        "tests": len(ks_tests),
                        "meaning": "two-sample Kolmogorov-Smirnov distance; distribution-free p-value (DKW); "
                        f"Holm's procedure over all {len(ks_tests)} tests at {ALPHAS['distribution']:g}",
                        **(self._snippet(D[ci].case) if bad else {}),
                    },
                )
            )
        if fails["structure"]:
            ci, i, j, differ = fails["structure"][0]
            F(
                Finding(
                    "differential",
                    "deviation from reference",
                    "release structure differs from the reference's",
                    {
                        "case": D[ci].case.description,
                        "coordinates": [i, j],
                        "differing_releases": differ,
                        "meaning": f"coordinates {i} and {j} are equal in every reference release (e.g. the two "
                        "triangles of a symmetric matrix) but not in TARGET's: the whole release is "
                        "compared, not one triangle",
                    },
                )
            )
        if own_worst is not None:
            z, ci, k, dz, se = own_worst
            zc = _z(ALPHAS["stages_agree"], coords)
            bad = z > zc
            F(
                Finding(
                    "stages",
                    "invariant violation" if bad else "pass",
                    "TARGET's stages "
                    + (
                        "disagree: its mechanism does not add noise to its statistic"
                        if bad
                        else "agree (mechanism centred on statistic)"
                    ),
                    {
                        "largest_z": round(z, 3),
                        "critical_z": round(zc, 3),
                        "case": D[ci].case.description,
                        "coordinate": k,
                        "mean_release_minus_own_statistic": dz,
                        "confidence_interval": [dz - zc * se, dz + zc * se],
                    },
                )
            )
        how = "" if self.independent else " (one release per call: TARGET is not independent)"
        fixed = sum(d.case.origin == "fixed" for d in D)
        res = self._resolution(z_scale)
        self.checks["differential"] = (
            f"ran: {len(D)} cases ({fixed} fixed, {len(D) - fixed} generated for seed {self.seed}) x {self.samples} "
            f"releases (reference: {D[0].Xr.shape[0] if D else 0}){how}; mean z (critical {z_mean:.2f}), scale "
            f"(critical {z_scale:.2f}), KS over {len(ks_tests)} series (Holm) on {coords} coordinates"
            + (f"; resolves a change of the noise scale by {res:.1%}" if res else "")
            + (
                f"; the z tests skipped {skipped['mean']} mean and {skipped['scale']} scale coordinate(s) with too few "
                f"releases for the normal approximation (n < {Z_KURT} x excess kurtosis)"
                if skipped["mean"] or skipped["scale"]
                else ""
            )
        )

    def _report_scale(self, fails, worst, z_scale, smallest):
        spec, D = self.spec, self.draws
        bad = bool(fails)
        if not bad:
            zs, ci, k, ratio, lse = worst
            self.findings.append(
                Finding(
                    "differential",
                    "pass",
                    "noise scale matches the reference's",
                    {
                        "largest_z": round(zs, 3),
                        "critical_z": round(z_scale, 3),
                        "case": D[ci].case.description,
                        "coordinate": k,
                        "spread_ratio": ratio,
                        "confidence_interval": _ci(ratio, lse, z_scale),
                    },
                )
            )
            return
        # under-noised: on a case with a pair whose spread is significantly below the reference's, the
        # target's own move on the pair, in its own noise units, against the reference's (``_pair_cover``)
        cand = list(
            dict.fromkeys(
                ci
                for ci, k, r, l in fails
                if r < 1 and spec.noise is not None and spec.statistic is not None and D[ci].case.pair is not None
            )
        )
        privacy, covers = [], {}
        for ci in cand:
            covers[ci] = self._pair_cover(D[ci], z_scale)
            if covers[ci]["rho_lower"] * D[ci].case.pair_share > 1.0:
                privacy += [f for f in fails if f[0] == ci]
        if privacy:
            ci = max({f[0] for f in privacy}, key=lambda c: covers[c]["rho_lower"] * D[c].case.pair_share)
            k, r, l = next((f[1], f[2], f[3]) for f in privacy if f[0] == ci)
            lo, hi = _ci(r, l, z_scale)
            case, cov = D[ci].case, covers[ci]
            share = case.pair_share
            factor = cov["rho_lower"] * share
            claim = self._claim(case)
            par = _scale_parameter(claim, getattr(case.pair, "unit", None)) if claim is not None else None
            ev = {
                "case": case.description,
                "coordinate": k,
                "spread_ratio": r,
                "confidence_interval": [lo, hi],
                "critical_z": round(z_scale, 3),
                "pair": getattr(case.pair, "description", "the case's sensitivity pair"),
                "pair_share": share,
                "move_in_noise_units_vs_reference": cov["rho"],
                "lower_bound": cov["rho_lower"],
                "meaning": f"TARGET's noise is {r:.4g} x the reference's (at most {hi:.4g} with confidence 1 - "
                f"{ALPHAS['scale']:g}); on the pair, which moves the reference by {share:.4g} of its "
                f"calibrated sensitivity, TARGET moves {cov['rho']:.4g} x as many of its own noise units "
                f"as the reference (at least {cov['rho_lower']:.4g}): its noise covers less than the "
                "relation allows",
            }
            if cov["scale_varies"]:
                ev["meaning"] = (
                    f"TARGET's noise is {r:.4g} x the reference's (at most {hi:.4g}) on this case, and "
                    "its spread differs between the two sides of the pair (mean absolute deviation "
                    f"{cov['spread_on_the_pair'][0]:.4g} vs {cov['spread_on_the_pair'][1]:.4g}) where the "
                    "reference's is the same: a noise scale read from the data; two scales of one noise "
                    "family have an unbounded likelihood ratio in the tails"
                )
                ev["implied"] = (
                    "unbounded privacy loss on the pair (a data-dependent noise scale); audited below ('aimed')"
                )
            elif par is not None and par[0] == "eps" and spec.noise == "gaussian":
                # an (eps, delta) claim of Gaussian noise: eps is not linear in the noise; its mu is
                ev["implied"] = (
                    f"the release's Gaussian-DP mu on the pair is at least share x (TARGET's move / "
                    f"TARGET's noise) / (the reference's) = {factor:.4g} x the reference's there, which "
                    "its (eps, delta) claim is calibrated to; audited below ('aimed')"
                )
            elif par is not None:
                name, val = par
                ev["implied_loss_lower_bound"] = val * factor
                ev["implied"] = (
                    f"{name} >= {name}_claimed x share x (TARGET's move / TARGET's noise) / (the "
                    f"reference's) >= {val:g} x {share:.4g} x {cov['rho_lower']:.4g} = {val * factor:.4g} "
                    f"on the pair, for noise of the reference's family ({spec.noise}); audited below "
                    "('aimed')"
                )
            ev.update(self._snippet(case))
            self.findings.append(
                Finding(
                    "differential",
                    "privacy violation",
                    "under-noised: less noise than the reference where its sensitivity is attained",
                    ev,
                )
            )
            self.aim = (case, "the under-noised case's sensitivity pair")
        rest = [f for f in fails if f not in privacy and not (privacy and f[2] < 1)]
        if rest:
            ci = smallest([f[0] for f in rest])
            ci, k, r, l = next(f for f in rest if f[0] == ci)
            lo, hi = _ci(r, l, z_scale)
            less = r < 1
            why = (
                "less spread than the reference"
                + (
                    ""
                    if spec.noise is None
                    else " (on no case where a pair's move would then exceed what the noise covers: graded a deviation)"
                )
                if less
                else "more noise than the reference"
            )
            self.findings.append(
                Finding(
                    "differential",
                    "deviation from reference",
                    f"noise scale differs from the reference's: {why}",
                    {
                        "case": D[ci].case.description,
                        "coordinate": k,
                        "spread_ratio": r,
                        "confidence_interval": [lo, hi],
                        "critical_z": round(z_scale, 3),
                        "meaning": "mean absolute deviation about the median, TARGET over the "
                        "reference; the interval holds jointly for every case and "
                        f"coordinate with probability >= 1 - {ALPHAS['scale']:g}",
                        **self._snippet(D[ci].case),
                    },
                )
            )

    def _pair_cover(self, d: _CaseDraw, z: float) -> dict:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            return self._pair_cover_(d, z)

    def _pair_cover_(self, d: _CaseDraw, z: float) -> dict:
        """rho = ||TARGET's move on the case's pair in its own noise units|| / ||the reference's||, with a
        lower bound: each coordinate's move |mean(D') - mean(D)| less z standard errors, over the larger
        of TARGET's two spreads (upper bounds), against the reference's exact move over its spread (lower
        bound): conservative at every step. Noise units: the mean absolute deviation from the centre.
        For noise of one family (the spec's), the loss of a pair is its move in noise units (L1 for
        Laplace, L2 otherwise; with two scales, at least the move over the larger: ``_report_scale``),
        so TARGET's loss on the pair is at least rho x the reference's, which is pair_share x the claim."""
        spec, case = self.spec, d.case
        w = d.Xr.shape[1] if spec.noise_width is None else spec.noise_width(d.Xr.shape[1])
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 6, self.cases.index(case)]))
        second = Case(case.pair.second, case.params, f"{case.description} (the pair's second dataset)")
        Y = self._rows(second, rng, d.Xt.shape[0], f"the pair of case {case.description!r}")
        Y = Y[np.all(np.isfinite(Y), axis=1)][:, :w]
        X, R = d.Xt[:, :w], d.Xr[:, :w]
        if min(X.shape[0], Y.shape[0], R.shape[0]) < 2:  # no finite releases to compare (already a finding)
            return {"rho": 0.0, "rho_lower": 0.0, "scale_varies": False}
        p = 1 if spec.noise == "laplace" else 2
        s2 = np.asarray(spec.statistic(case.pair.second, **case.params), dtype=float).ravel()[:w]
        c1 = d.centre[:w]
        if s2.shape != c1.shape or not d.exact:  # no exact statistic to measure the move with
            return {"rho": 0.0, "rho_lower": 0.0, "scale_varies": False}

        def spread(A):  # mean |A - median(A)| per coordinate, with a z upper bound
            a = np.abs(A - np.median(A, axis=0))
            m = a.mean(axis=0)
            return m, m + z * a.std(axis=0) / math.sqrt(max(1, A.shape[0]))

        (m1, hi1), (m2, hi2) = spread(X), spread(Y)
        s_t = np.maximum(hi1, hi2)
        sr = np.abs(R - np.median(R, axis=0))
        s_r_lo = np.maximum(sr.mean(axis=0) - z * sr.std(axis=0) / math.sqrt(R.shape[0]), 1e-300)
        move = Y.mean(axis=0) - X.mean(axis=0)
        v = np.maximum(np.maximum(Y.var(axis=0), X.var(axis=0)), R.var(axis=0))  # the largest: conservative
        se = np.sqrt(v / max(1, Y.shape[0]) + v / max(1, X.shape[0]))
        # the target's own spread on the two sides (about its own medians): the reference's is public (the
        # same on both); two different scales of one family make the likelihood ratio unbounded in the tails
        a1, a2 = np.abs(X - np.median(X, axis=0)), np.abs(Y - np.median(Y, axis=0))
        both = (m1 > 0) & (m2 > 0)
        lse = np.sqrt(
            a1.var(axis=0) / (X.shape[0] * np.maximum(m1 * m1, 1e-300))
            + a2.var(axis=0) / (Y.shape[0] * np.maximum(m2 * m2, 1e-300))
        )
        gap = np.abs(np.log(np.where(both, m2, 1.0) / np.where(both, m1, 1.0)))
        varies = bool(np.any(both & (gap > z * lse)) or np.any((m1 > 0) != (m2 > 0)))
        if varies:  # only where the reference's own spread is the same on both sides
            R2 = _reference_rows(spec, case.pair.second, rng, R.shape[0], case.params)[:, :w]
            b1, b2 = np.abs(R - np.median(R, axis=0)), np.abs(R2 - np.median(R2, axis=0))
            r1, r2 = b1.mean(axis=0), b2.mean(axis=0)
            rboth = (r1 > 0) & (r2 > 0)
            rse = np.sqrt(
                b1.var(axis=0) / (R.shape[0] * np.maximum(r1 * r1, 1e-300))
                + b2.var(axis=0) / (R2.shape[0] * np.maximum(r2 * r2, 1e-300))
            )
            rgap = np.abs(np.log(np.where(rboth, r2, 1.0) / np.where(rboth, r1, 1.0)))
            varies = not bool(np.any(rboth & (rgap > z * rse)) or np.any((r1 > 0) != (r2 > 0)))
        ref = np.linalg.norm((s2 - c1) / s_r_lo, ord=p)
        if ref <= 0:
            return {"rho": 0.0, "rho_lower": math.inf if varies else 0.0, "scale_varies": varies}
        rho = float(
            np.linalg.norm(move / np.maximum(m1, 1e-300), ord=p)
            / np.linalg.norm((s2 - c1) / np.maximum(sr.mean(axis=0), 1e-300), ord=p)
        )
        lower = float(np.linalg.norm(np.maximum(np.abs(move) - z * se, 0.0) / np.maximum(s_t, 1e-300), ord=p) / ref)
        return {
            "rho": rho,
            "rho_lower": math.inf if varies else lower,
            "scale_varies": varies,
            "spread_on_the_pair": [float(np.max(m1)), float(np.max(m2))],
        }

    def _resolution(self, z_scale) -> float | None:
        """The smallest relative change of the noise scale detected with probability >= 1/2: z_crit x the
        largest standard error of the log spread ratio over the cases."""
        lses = [l for d in self.draws for _, r, l in d.scale if l > 0]
        return math.expm1(z_scale * max(lses)) if lses else None

    def _claim(self, case: Case):
        if self.spec.claim is not None:
            return self.spec.claim(case.dataset, case.params)
        designs = list(self.spec.designs())
        return designs[0].claim if designs else None

    def _snippet(self, case: Case) -> dict:
        """A runnable snippet that reproduces the comparison on ``case`` (``evidence['snippet']``)."""
        i = next((j for j, c in enumerate(self.cases) if c is case), None)
        if i is None:
            return {}
        call = (
            "np.array([impl(case.dataset, rng, **case.params) for _ in range(n)])"
            if self.t.shape == ONE
            else "impl(case.dataset, rng=rng, size=n, **case.params)"
        )
        return {
            "snippet": (
                "import numpy as np\n"
                "from userdp.audits.validation import get\n"
                f"spec = get({self.spec.algorithm!r})\n"
                f"case = spec.all_cases(seed={self.seed})[{i}]   # {case.description}\n"
                "print(case.dataset, case.params)\n"
                "rng, n = np.random.default_rng(0), 20_000\n"
                f"mine = {call}   # impl: your function (rename parameters as with --param-map)\n"
                "ours = spec.reference(case.dataset, rng=rng, size=n, **case.params)\n"
                "print('yours: mean', np.mean(mine, axis=0), 'sd', np.std(mine, axis=0))\n"
                "print('ours:  mean', np.mean(ours, axis=0), 'sd', np.std(ours, axis=0))"
            )
        }

    # -------------------------------------------------------------- d. inputs
    def run_inputs(self) -> None:
        spec, t = self.spec, self.t
        refusals = list(spec.refusals())
        if not refusals:
            self.checks["inputs"] = "skipped: the reference refuses no input this spec tries"
            return
        data = [r for r in refusals if r.kind == "data"]
        zc = _z(ALPHAS["clip"], max(1, len(data)) * 4)
        for j, r in enumerate(refusals):
            case = r.case
            rng = np.random.default_rng([self.seed, 3, j])
            try:
                out = t.release(case.dataset, rng, 4, case.params, f"case {case.description!r}")
            except UserCodeError as exc:
                self.inputs.append(
                    {
                        "case": case.description,
                        "kind": r.kind,
                        "behaviour": "refuses",
                        "raised": str(exc.__cause__ or exc)[:200],
                    }
                )
                self.findings.append(
                    Finding(
                        "inputs", "pass", f"refuses {case.description}", {"raised": str(exc.__cause__ or exc)[:200]}
                    )
                )
                continue
            try:
                rows = (
                    _flat(out, 4, spec.flatten, "TARGET")
                    if t.shape == BATCHED
                    else _rows_one(out, spec.flatten, "TARGET")
                )
            except UserCodeError:  # a release of another shape: still a release on an excluded input,
                rows = None  # graded below by the input's kind (it is not read as numbers)
            finite = rows is not None and bool(np.all(np.isfinite(rows)))
            entry = {"case": case.description, "kind": r.kind, "requires": r.requires, "output": _short(out)}
            if rows is not None and not finite:
                self.findings.append(
                    Finding(
                        "inputs",
                        "invariant violation",
                        f"releases non-finite values on an input the paper excludes: {case.description}",
                        {"params": _jsonable(case.params), **entry},
                    )
                )
                entry["behaviour"] = "releases non-finite values"
            elif r.kind == "budget":
                self.findings.append(
                    Finding(
                        "inputs",
                        "invariant violation",
                        f"releases on an input the paper excludes: {case.description}",
                        {
                            "params": _jsonable(case.params),
                            **entry,
                            "meaning": "a release at this budget is never private, whatever the input policy",
                        },
                    )
                )
                entry["behaviour"] = "releases"
            elif self.policy == "refuse":
                self.findings.append(
                    Finding(
                        "inputs",
                        "invariant violation",
                        f"releases on an input the paper excludes: {case.description}",
                        {
                            "params": _jsonable(case.params),
                            **entry,
                            "meaning": "--inputs refuse: every input the reference refuses must be refused",
                        },
                    )
                )
                entry["behaviour"] = "releases"
            elif r.kind == "data" and spec.project is not None and self.policy in (None, "clip"):
                ok, ev = self._clips(case, j, zc)
                entry.update(ev)
                if ok:
                    entry["behaviour"] = "clips"
                    self.clips = True
                    self.findings.append(
                        Finding("inputs", "pass", f"clips {case.description}", {"clip_test": ev.get("clip_test")})
                    )
                elif self.policy == "clip":
                    self.findings.append(
                        Finding(
                            "inputs",
                            "invariant violation",
                            f"--inputs clip, but the release on {case.description} is not the "
                            "reference's on the projected data",
                            {**entry},
                        )
                    )
                    entry["behaviour"] = "releases, not clipped"
                else:
                    entry["behaviour"] = "not enforced"
            else:
                entry["behaviour"] = "not enforced"
            self.inputs.append(entry)
        declared = f"declared --inputs {self.policy}" if self.policy else "inferred per case"
        self.checks["inputs"] = f"ran: {len(refusals)} input(s) the reference refuses ({declared}): " + ", ".join(
            f"{e['behaviour']}" for e in self.inputs
        )

    def _clips(self, case: Case, j: int, zc: float) -> tuple[bool, dict]:
        """Does TARGET release on ``case`` what the reference releases on the projected data?"""
        spec, t = self.spec, self.t
        n = min([CLIP_SAMPLES] + [d.n for d in self.draws])
        projected = spec.project(case.dataset, case.params)
        ss = np.random.SeedSequence([self.seed, 4, j]).spawn(2)
        Xt = _release_rows(
            spec,
            t,
            case.dataset,
            np.random.default_rng(ss[0]),
            n,
            case.params,
            f"case {case.description!r}",
            one_per_call=not self.independent,
        )
        Xr = _reference_rows(spec, projected, np.random.default_rng(ss[1]), n, case.params)
        if Xt.shape[1] != Xr.shape[1] or not np.all(np.isfinite(Xt)):
            return False, {"clip_test": "release shape or values unlike the reference's"}
        worst = 0.0
        crit = _ks_threshold(n, ALPHAS["clip"] / (2 * max(1, Xt.shape[1]) * max(1, len(list(spec.refusals())))))
        for k in range(Xt.shape[1]):
            dist, _ = _ks_distance(Xt[:, k], Xr[:, k])
            worst = max(worst, dist)
            diff = float(np.mean(Xt[:, k]) - np.mean(Xr[:, k]))
            se = math.sqrt(2.0 * float(np.var(Xr[:, k])) / n)  # the reference's spread (as the mean test)
            z_ok = n >= Z_KURT * max(1.0, _excess_kurtosis(Xr[:, k]))
            if dist > crit or (z_ok and se > 0 and abs(diff) / se > zc) or (se == 0 and diff != 0):
                return False, {
                    "clip_test": f"differs from the reference on the projected data (coordinate {k}: "
                    f"KS {dist:.4f}, critical {crit:.4f})"
                }
        return True, {
            "clip_test": f"matches the reference on the projected data (largest KS {worst:.4f}, critical {crit:.4f})"
        }

    # -------------------------------------------------------------- e. audits
    def _aimed_design(self) -> AuditDesign | None:
        if self.aim is None:
            best = None
            for d in self.draws:
                if d.case.pair is None or not d.scale:
                    continue
                r = min(r for _, r, _ in d.scale)
                if best is None or r < best[0]:
                    best = (r, d.case)
            if best is None:
                return None
            self.aim = (best[1], f"the case whose spread is smallest against the reference's (ratio {best[0]:.4g})")
        case, why = self.aim
        claim = self._claim(case)
        if claim is None:
            return None
        d = next((d for d in self.draws if d.case is case), None)
        out = "continuous" if d is not None and d.Xr.shape[1] == 1 and self.spec.audit_flatten is None else "vector"
        return AuditDesign([case.pair], case.params, claim, f"aimed: {why}: {case.pair.description}", output=out)

    def _whitebox_design(self) -> AuditDesign | None:
        """A pair aimed by the white-box search (``audits/engine/whitebox.py``) of TARGET's OWN ``statistic`` and
        ``noise_scale`` stages over the spec's spaces: the pair where TARGET's stages say its statistic
        moves most in units of its own noise. Its realised ratio (above 1: TARGET's own stages admit a
        loss above the claim) is in the title; the pair is audited on TARGET's releases either way."""
        spec, t = self.spec, self.t
        if spec.spaces is None or spec.noise is None or t.adapter.statistic is None or t.adapter.noise_scale is None:
            return None
        from userdp.audits.engine.ceiling import NoiseModel
        from userdp.audits.engine.whitebox import search

        p = dict(spec.whitebox_params or next(iter(spec.designs())).params)

        def stage(name):
            kw = {k: p[k] for k in spec.stage_params.get(name, ()) if k in p}
            f = getattr(t.adapter, name)
            if name in spec.takes_dataset:
                return lambda D: _call(f"TARGET {t.name}'s {name} stage (white-box search)", f, D, **kw)
            return lambda D: _call(f"TARGET {t.name}'s {name} stage (white-box search)", f, **kw)

        stat, scale = stage("statistic"), stage("noise_scale")

        def flat_stat(D):
            return _stage_vector(spec, stat(D))

        claim = self._claim(Case(next(iter(spec.designs())).pairs[0].first, p, "white-box"))
        par = _scale_parameter(claim, None)
        try:
            res = search(
                NoiseModel(spec.noise, flat_stat, lambda D: float(_nested_flat(scale(D)).max())),
                spec.spaces(p),
                par[1] if par else 1.0,
                random_starts=2,
                seed=self.seed % 2**32,
                maxiter=100,
            )
        except (ValueError, TypeError) as exc:  # TARGET's stages return what the search cannot read
            self.notes.append(f"white-box search of TARGET's stages skipped: {exc}")
            return None
        from userdp.reference.neighbours import NeighbourPair

        first, second = res.pair
        pair = NeighbourPair(first, second, spec.relation.split(" ")[0], 0, f"white-box: {res.description}")
        return AuditDesign(
            [pair],
            p,
            claim,
            f"white-box aimed (TARGET's stages put this pair at {res.ratio:.4g} of its claim)",
            output="continuous" if np.ndim(flat_stat(first)) == 0 or np.size(flat_stat(first)) == 1 else "vector",
        )

    def run_audits(self) -> None:
        spec, t = self.spec, self.t
        designs = [("design", d) for d in spec.designs()]
        clip = list(spec.clip_designs())
        slots = len(designs) + 1 + len(clip) + (spec.spaces is not None)
        aimed = self._aimed_design()
        if aimed is not None:
            designs.append(("aimed", aimed))
        wb = self._whitebox_design()
        if wb is not None:
            designs.append(("white-box", wb))
        if self.clips or self.policy == "clip":
            designs += [("out of domain", d) for d in clip]
        confidence = 1.0 - ALPHAS["audit"] / slots
        used = []
        for j, (kind, d) in enumerate(designs):
            n = self._audit_samples_for(d, self.budget["audit"] / len(designs), len(designs))
            used.append(n)
            r = self._audit_one(d, n, confidence, j)
            bad = r.verdict == "violation"
            w = r.witness.to_dict()
            if r.reproducible is False:
                self.reproducible = False
            elif r.reproducible is True and self.reproducible is None:
                self.reproducible = True
            ev = {
                "design": d.description,
                "epsilon_lower_bound": r.epsilon_lower_bound,
                "claim": _claim_text(d.claim),
                "confidence": confidence,
                "samples_per_side": n,
                "witness": w,
            }
            if r.gdp is not None:
                ev["mu_lower_bound"] = r.gdp.mu_lower_bound
            self.findings.append(
                Finding(
                    "audit",
                    "privacy violation" if bad else "pass",
                    f"{d.description}: eps_lb {r.epsilon_lower_bound:.3f}"
                    + (
                        f" exceeds the claim's {w['claim_epsilon']:g} on its witness pair"
                        if bad
                        else f" within the claim's {w['claim_epsilon']:g}"
                    ),
                    ev,
                )
            )
            _progress(
                self.progress, f"audit {j + 1} of {len(designs)}: {r.verdict} (eps_lb {r.epsilon_lower_bound:.3f})"
            )
        how = "one release per call" if (t.shape == ONE or not self.independent) else "batched"
        kinds = ", ".join(
            f"{sum(k == x for k, _ in designs)} {x}"
            for x in ("design", "aimed", "white-box", "out of domain")
            if any(k == x for k, _ in designs)
        )
        self.audit_samples = used[0] if min(used) == max(used) else f"{min(used)}-{max(used)}"
        self.checks["audit"] = (
            f"ran: {len(designs)} audit(s) ({kinds}), {self.audit_samples} samples per side, "
            f"confidence "
            f"{confidence:.7f} each ({slots} planned), {how}"
        )
        if self.slow:
            self.notes.append(
                f"TARGET is slow ({1e3 * self.cost:.3g} ms of CPU per release): to stay near "
                f"{self.max_seconds:g} s this run drew as few as {FLOOR_SAMPLES}-{MIN_SAMPLES} releases per "
                "case or pair, so it resolves only large effects (see 'resolves' above); "
                "--samples and --audit-samples make it longer and stronger"
            )
        if self.reproducible is False:
            self.notes.append(
                "TARGET ignores the rng: two calls with generators from one seed gave different "
                "releases, so it draws from a generator of its own and --seed does not reproduce this "
                "run (the checks stay valid: its releases are still independent draws)"
            )

    def _audit_one(self, d: AuditDesign, n: int, confidence: float, j: int):
        spec, t = self.spec, self.t
        params = dict(d.params)
        flat = spec.audit_flatten
        one = t.shape == ONE or not self.independent

        def m(dataset, rng, size):
            if not one:
                out = t.release(dataset, rng, size, params, f"audit {d.description!r}")
                return _finite(out if flat is None else _flat(out, size, flat, f"TARGET {t.who}"))
            if t.shape == BATCHED:
                outs = [_first(t.release(dataset, rng, 1, params, f"audit {d.description!r}")) for _ in range(size)]
            else:
                outs = t.release(dataset, rng, size, params, f"audit {d.description!r}")
            if flat is not None:
                return _finite(_rows_one(outs, flat, f"TARGET {t.who}"))
            return _finite(_stack(outs, f"TARGET {t.who}"))

        try:
            return audit(
                m,
                d.pairs,
                d.claim,
                samples=n,
                confidence=confidence,
                seed=np.random.SeedSequence([self.seed, 5, j]),
                output=d.output,
                workers=1,
            )
        except MechanismError as exc:
            cause = exc.__cause__
            if isinstance(cause, (UserCodeError, UsageError)):
                raise cause from None
            raise UserCodeError(
                f"TARGET {t.who} failed in the audit of {d.description!r}: "
                f"{type(cause).__name__ if cause else 'error'}: {cause or exc}"
            ) from exc

    # -------------------------------------------------------------- all of it
    def run(self) -> None:
        self.check_target()
        self.run_properties()
        self.run_stages()
        if self.t.mechanism is None:
            for c in ("independence", "differential", "inputs", "audit"):
                self.checks[c] = "skipped: TARGET has no mechanism stage (the release)"
            return
        self.run_independence()
        self.draw_cases()
        self.run_differential()
        self.run_inputs()
        self.run_audits()

    def report(self, elapsed: float) -> ValidationReport:
        if isinstance(elapsed, bool) or not isinstance(elapsed, numbers.Real) or not elapsed >= 0:
            raise BadValue(f"elapsed must be a number of seconds >= 0, got {elapsed!r}")
        untested = (
            [] if self.t.mechanism is not None else ["stages only: the release was not tested; privacy not checked"]
        )
        settings = {
            "samples": self.samples,
            "audit_samples": self.audit_samples,
            "examples": self.examples,
            "seed": self.seed,
            "quick": self.quick,
            "inputs": self.policy or "inferred",
            "param_map": dict(self.t.param_map),
            "alpha": ALPHA,
            "seconds_per_release": None if self.cost is None else float(f"{self.cost:.3g}"),
        }
        return ValidationReport(
            self.spec.algorithm,
            self.t.name,
            self.checks,
            self.findings,
            settings,
            elapsed,
            self.t.shape,
            untested,
            self.inputs,
            self.notes,
            self.reproducible,
        )


def _excess_kurtosis(x: np.ndarray) -> float:
    """The sample excess kurtosis E[(x - mean)^4] / var^2 - 3 (0 for a constant)."""
    c = x - np.mean(x)
    v = float(np.mean(c * c))
    return float(np.mean(c**4)) / (v * v) - 3.0 if v > 0 else 0.0


def _quantised(n: int, lo: int, hi: int) -> int:
    """n rounded DOWN to lo x a power of 2, within [lo, hi]: a count chosen from timings falls on a few
    values only, so that a run's sample sizes rarely change with the machine's load (the report gives
    them, for --samples and --audit-samples to reproduce a run exactly)."""
    if n >= hi:
        return hi
    k = lo
    while 2 * k <= n:
        k *= 2
    return min(hi, k)


def _ci(ratio: float, lse: float, z: float) -> list:
    if ratio <= 0:
        return [0.0, 0.0]
    return [ratio * math.exp(-z * lse), ratio * math.exp(z * lse)]


STRUCTURE_RTOL = 1e-9  # "equal" coordinates: |x_i - x_j| <= 1e-9 max(1, |x_i|) (rounding of a sum in
# another order is ~1e-15 relative; a coordinate with its own noise differs by O(1))


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a - b) <= STRUCTURE_RTOL * np.maximum(1.0, np.abs(a))


def _equal_pairs(X: np.ndarray) -> list[tuple[int, int]]:
    """Pairs (i, j), i < j, of non-constant coordinates equal (to ``STRUCTURE_RTOL``) in every row of X."""
    k = X.shape[1]
    if k < 2 or X.shape[0] < 2:
        return []
    head = X[: min(1000, X.shape[0])]
    varies = np.ptp(X, axis=0) > 0
    out = []
    for i in range(k - 1):
        if not varies[i]:
            continue
        same = np.all(_close(head[:, i : i + 1], head[:, i + 1 :]), axis=0)
        for j in np.flatnonzero(same) + i + 1:
            if varies[j] and bool(np.all(_close(X[:, i], X[:, j]))):
                out.append((i, int(j)))
    return out


def _stage_vector(spec: ValidationSpec, out) -> np.ndarray:
    if spec.stage_flatten is not None:
        try:
            return np.asarray(spec.stage_flatten(out), dtype=float).ravel()
        except Exception as exc:
            raise UserCodeError(
                f"TARGET's statistic stage returned {type(out).__name__}, not this algorithm's "
                f"statistic ({type(exc).__name__}: {exc})"
            ) from None
    own = _nested_flat(out)
    if own is None:
        raise UserCodeError(f"TARGET's statistic stage returned {type(out).__name__}, not numbers")
    return own


NONFINITE = 1e9  # +inf, -inf and NaN in a release are audited as +-1e9 and 1.5e9


def _finite(out):
    """A release with inf or NaN (already an invariant violation in the differential) as the auditor can
    read it: +inf -> 1e9, -inf -> -1e9, NaN -> 1.5e9. A fixed map of the output is post-processing, so
    a loss the audit finds on the mapped releases is a loss of the releases themselves."""
    if isinstance(out, np.ma.MaskedArray) or not isinstance(out, np.ndarray) or out.dtype.kind != "f":
        return out
    if np.all(np.isfinite(out)):
        return out
    return np.nan_to_num(out, nan=1.5 * NONFINITE, posinf=NONFINITE, neginf=-NONFINITE)


def _first(out):
    """The one release of a size-1 batched call (a masked row: no release, ``None``)."""
    if isinstance(out, np.ma.MaskedArray):
        if np.ma.getmaskarray(out)[0].any():
            return None
        out = out.data
    if isinstance(out, tuple):
        return tuple(np.asarray(p)[0] for p in out)
    return np.asarray(out)[0]


def _stack(outs: list, where: str):
    """One-release outputs as the harness's batched form: an array, or a masked one with a
    masked row where a call made no release (``None``)."""
    if all(type(o) in (float, int, np.float64) for o in outs):
        return np.asarray(outs, dtype=float)
    if any(o is None for o in outs):
        rows = _rows_one(outs, None, where)
        return np.ma.masked_invalid(rows if rows.shape[1] > 1 else rows[:, 0])
    try:
        return np.asarray([np.asarray(o, dtype=float) for o in outs])
    except (TypeError, ValueError) as exc:
        raise UserCodeError(f"{where} returned releases that are not numbers of one shape: {exc}") from None


def _call(what: str, f, *args, **kwargs):
    try:
        return f(*args, **kwargs)
    except (UsageError, UserCodeError):
        raise
    except (Exception, SystemExit) as exc:
        raise UserCodeError(f"{what} raised {type(exc).__name__}: {exc}") from exc


def _property_snippet(spec, prop, f) -> str:
    """The minimal counterexample as a runnable snippet (the TARGET's adapter is named 'impl')."""
    return (
        "import numpy as np\n"
        "from numpy import array, float64, int64\n"
        "from userdp.reference.data import UserDataset\n"
        f"from {spec.suite} import *\n"
        f"example = {f.counterexample}\n"
        f"{prop.__name__}(impl, example)   # impl: your Adapter; raises AssertionError"
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
) -> ValidationReport:
    """Run the checks of the module docstring; return the report (never raises on a finding).

    target: ``module:object`` or a ``PythonTarget`` (``audits/validation/target.py``).
    samples / audit_samples: releases per side per case / per audited pair; None: chosen by
        the target's speed (module docstring). inputs: "refuse", "clip", "trust" or None
        (inferred per case). param_map: {reference name: yours}."""
    t0 = time.perf_counter()
    spec = get(algorithm)
    for name, value, lo in (
        ("samples", samples, MIN_SAMPLES),
        ("audit_samples", audit_samples, 1_000),
        ("examples", examples, 1),
    ):
        if value is not None:  # checked before TARGET is imported
            _check_count(value, name, lo, 10_000_000 if name != "examples" else 100_000)
    _check_count(seed, "seed", 0, 2**63 - 1)
    t = target if isinstance(target, PythonTarget) else load_target(target, param_map)
    run = Validation(
        spec,
        t,
        samples=samples,
        audit_samples=audit_samples,
        examples=examples,
        seed=seed,
        quick=quick,
        inputs=inputs,
        progress=progress,
    )
    with single_threaded_blas():  # blas.py: many small solves, on a machine shared with others
        run.run()
    return run.report(time.perf_counter() - t0)


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
        elif k == "witness":
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
