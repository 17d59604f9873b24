"""``audit``: a confident empirical lower bound on a mechanism's privacy loss (docs/design.md §6).

Procedure, for each neighbouring pair (D, D') that is confirmed:

1. draw ``samples`` outputs of M(D) and of M(D') (one vectorised call per side);
2. the first ``selection_fraction`` of each side is the *selection share*: it chooses
   the rejection set S and the ordering of the pair (``rejection.py``);
3. the rest is the *counting share*: k1 = #{M(D) in S}, k2 = #{M(D') in S} over n
   outputs each (or swapped), and eps_lb = ln((p_lo - delta) / q_hi) with one-sided
   Clopper-Pearson bounds at level alpha / (2m) each (``bounds.py``).

With several candidate pairs, a pilot on separate samples ranks them and only the top
``confirm_pairs`` are confirmed (``search.py``).

Why the bound is valid. Let m = (confirmed pairs) x (sets per pair) be the number of
(set, ordering, pair) hypotheses that reach the counting stage. Each was fixed by the
selection share or the pilot, which are independent of its counting share, so
conditionally on them each k is binomial and each eps_lb_j at level alpha/m exceeds
that set's true loss with probability <= alpha/m (``bounds.py``). By the union bound the
reported eps_lb = max_j eps_lb_j exceeds the mechanism's true eps with probability
<= alpha = 1 - confidence. The verdict is Holm's procedure (``holm``, as ``multipletests``) on the
exact p-values of H0_j: p_j <= e^eps q_j + delta; it flags a correct mechanism with
probability <= alpha, and it flags exactly when some eps_lb_j > the claimed eps.
Choosing the best threshold among thousands on the selection share costs nothing,
because only the chosen set is tested on fresh data.

The families of sets (``rejection.py``) compete INSIDE that count: thresholds on the output
or on learned projections and statistics (the classifier, a declared family's likelihood
ratio, the corner sets of vector outputs), value sets of discrete outputs, atom sets of
continuous ones (values that repeat on the selection share), release patterns of
multi-partition outputs. Every family proposes sets on the selection share; the
``sets_per_pair`` best of all of them, by a score read from the selection share only (for
atoms against thresholds, and value sets against thresholds, a cross-fit between the
selection share's two halves), are the only sets counted. However many families and sets
were looked at, m stays pairs x sets_per_pair (x 2 with a GDP claim), and each counted set
is a fixed event given the selection share: the argument above holds unchanged. A set
whose description uses a learned parameter (a centre, a scale, an atom's value, a
pattern) is fixed in the same way: the parameter is a function of the selection share.

A declared noise model (``noise_model``, ``model_sets.py``). Each confirmed pair's
Neyman-Pearson set under the model is one more hypothesis per side (eps, and GDP), fixed by
the model before any output is drawn and counted on all ``samples`` outputs (the eps side's
with its mirror, both orderings pooled on 2 ``samples`` indicators with Hoeffding's bounds:
``model_sets.py``); the model sets
share MODEL_SHARE of alpha and the m selection-share sets the rest (each at
(1 - MODEL_SHARE) alpha / m instead of alpha / m). The levels still add up to alpha, so the
union bound holds, and the verdict is the weighted Holm procedure (``holm`` with weights
proportional to the levels), which flags a correct mechanism with probability <= alpha.

Gaussian DP (a ``GaussianDP`` claim, or ``Claims(primary, GaussianDP)``). Each confirmed
pair also gets ``sets_per_pair`` sets chosen for the trade-off audit (``projected_mu_bound``:
sets in the middle of the distributions), counted on the same counting share, bounded by
mu_lb = Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi) (``bounds.mu_lower_bound``) and tested by
``bounds.gdp_p_value``. The eps side compares with the primary claim, or, for a bare
``GaussianDP``, with the exact (eps, delta) it implies at its ``delta`` (``as_eps_delta``).
Multiplicity is handled as above with m doubled: m = pairs x sets x 2 hypotheses, every
bound at level alpha/m, one Holm family over all of them. So eps_lb and mu_lb hold
together with probability >= 1 - alpha, and the verdict, a violation if either side finds
one, flags a mechanism that keeps both claims with probability <= alpha. Sharing the
counting share between the two sides needs nothing more: each set is fixed before the
counting share is seen, and the union bound and Holm's procedure hold under any dependence.
A discrete output is refused for a GDP claim (``search.check_gdp_output`` says which test
applies instead).

Any mechanism (``parallel.py``): batched ``mechanism(dataset, rng, size)``, or one
release per call, ``mechanism(dataset, rng)`` or ``mechanism(dataset)``, looped for the
caller in shards over ``workers`` processes or a Dask cluster; the result depends only on
the seed. Before drawing, the mechanism is called twice on the first pair's first dataset
with generators from one seed: different outputs (``AuditResult.reproducible`` False)
mean it draws from a generator of its own, so the seed does not reproduce the audit. The
bound stays valid: its samples are still independent (a program over the process protocol
must reproduce them: ``NotReproducibleError``). Equal outputs that vary are drawn again
with other seeds: a mechanism whose every seed repeats them ignores its generator, its
calls are copies of one another, and it is refused (``SeedIgnoredError``,
``parallel.check_reproducible``).

Pairs that fail. When the mechanism raises on some pairs (in the pilot or when
confirmed) the other pairs go on. The failed pairs drop out; the m of the bound stays the
planned one, which only makes the bound more conservative. If some pair finished, the
audit raises ``IncompleteAudit``, a ``MechanismError`` carrying the finished pairs'
``AuditResult`` (its ``failed_pairs`` names each failure); if none did, the first error.

Per pair. ``AuditResult.pairs`` gives every confirmed pair's own best set, counts and
eps_lb (each at the audit's level alpha/m, so each holds, and they hold jointly).

Floating-point leaks. Floating-point noise is not the real-number mechanism its proof is
about: x + noise in floating point reaches different sets of numbers for different x, and
a set that sorts outputs by their last bits can show a loss above the claim (Mironov 2012,
"On significance of the least significant bits for differential privacy", CCS). Such a
bound is valid (its counts are fresh), but the cause is not the noise scale, so it is named.
A violation's witness set is "decided by rounding" (``rounding.rounding_decided``) when it is an
atom set of a continuous output, or a threshold with at least ROUNDING_SHARE of its hits on
the side it favours within ROUNDING_BAND (relative) of t: a plateau of the statistic whose
values differ in their last bits, as at the attained extreme of a Laplace statistic. Then
the audit is run again, same seed, on the outputs rounded to ROUND_DIGITS significant
digits (``rounding.round_outputs``): if that finds no violation, the finding class is "floating-point
leak" (``AuditResult.finding``, ``FloatingPointFinding`` with both bounds and the
explanation), else "privacy loss". The re-audit changes nothing above: eps_lb, the witness,
the verdict and its Holm accounting are the first audit's; the re-audit's result only names
the finding, and is itself a valid audit of round(M), a post-processing of M.

"No violation found" means only that: it is never evidence of privacy.
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import asdict, dataclass, replace

import numpy as np

from userdp.reference._checks import check_int
from userdp.reference.claims import Claims, GaussianDP, PersonalizedDP

from userdp.audits.engine.ceiling import NoiseModel, _check_pairs, ceiling
from userdp.audits.engine.bounds import (
    epsilon_lower_bound,
    error_rate_upper_bounds,
    gdp_p_value,
    mu_lower_bound,
    p_value,
)
from userdp.audits.engine.parallel import (
    BATCHED,
    REPRO_DRAWS,
    SEEDED,
    NotReproducibleError,
    Sampler,
    VaryingOutputError,
    calling_convention,
    check_reproducible,
    default_workers,
)
from userdp.audits.engine.sampling import (
    OUTPUT_KINDS,
    MechanismError,
    draw_outcomes,
    encode,
    infer_kind,
    mechanism_name,
    normalize_pairs,
)
from userdp.audits.engine.plan import AuditPlan, CountedGDPSet, CountedSet
from userdp.audits.engine import model_sets, outcomes
from userdp.audits.engine.model_sets import (
    MODEL_SHARE,
    PooledModelSet,
    check_noise_model,
    model_candidate,
    pooled_epsilon_bound,
    pooled_p_value,
)
from userdp.audits.engine.rejection import check_noise_family
from userdp.audits.engine.rounding import ROUND_DIGITS, FloatingPointFinding, round_outputs, rounding_decided
from userdp.audits.engine.thresholds import StatisticThreshold
from userdp.audits.engine.search import best_candidates, check_gdp_output, check_noise_family_output, rank_pairs

__all__ = [
    "audit",
    "AuditResult",
    "efficiency_report",
    "Witness",
    "GDPAudit",
    "GDPWitness",
    "MechanismError",
    "VIOLATION",
    "NO_VIOLATION",
    "PairResult",
    "PairFailure",
    "IncompleteAudit",
]

VIOLATION = "violation"
NO_VIOLATION = "no violation found"


@dataclass(frozen=True)
class Witness:
    """The (pair, set, ordering) behind the reported bound, with its counting-share counts."""

    pair_description: str
    pair_index: int
    unit: int | None
    rejection_set: object  # thresholds.Threshold or value_sets.ValueSet
    ordering: str  # "first over second": p = Pr[M(first) in S]
    counts: dict  # {"first": k, "second": k, "n_per_side": n}
    claim_epsilon: float  # the eps this pair is compared with (eps_i for personalized)
    p_value: float  # exact p-value of H0 for this candidate
    adjusted_p_value: float  # Holm-adjusted over all tested candidates
    candidates_tested: int  # m, the multiplicity the bound accounts for
    pair: object = None  # the pair object itself (not serialised)

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k not in ("pair", "rejection_set")}
        d["rejection_set"] = self.rejection_set.to_dict()
        return d


@dataclass(frozen=True)
class GDPWitness:
    """The (pair, set, ordering) behind mu_lb, read as a test: reject H0 "the output came from
    M(null_side)" iff it is in S. "first over second" (S fires more often on the first
    dataset): null_side = "second", FPR = counts["second"] / n, FNR = 1 - counts["first"] / n;
    "second over first" exchanges the roles."""

    pair_description: str
    pair_index: int
    unit: int | None
    rejection_set: object  # thresholds.Threshold
    ordering: str
    null_side: str  # "second" or "first": the dataset of H0 (the side S disfavours)
    counts: dict  # {"first": k, "second": k, "n_per_side": n}
    error_rates: dict  # {"fpr", "fnr"}: estimates on the outputs counted; "*_upper": CP at its level / 2
    claim_mu: float
    p_value: float  # exact p-value of H0: on or above the mu-GDP curve
    adjusted_p_value: float  # Holm-adjusted over all tested candidates (eps and GDP)
    candidates_tested: int  # m, eps and GDP hypotheses together
    pair: object = None

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k not in ("pair", "rejection_set")}
        d["rejection_set"] = self.rejection_set.to_dict()
        return d


@dataclass(frozen=True)
class GDPAudit:
    """The trade-off-curve side of an audit of a Gaussian-DP claim."""

    mu: float  # the claimed mu
    mu_lower_bound: float  # >= 0; holds with the audit's confidence, jointly with eps_lb
    tightness: float  # mu_lower_bound / mu
    witness: GDPWitness

    def to_dict(self) -> dict:
        return {
            "mu": self.mu,
            "mu_lower_bound": self.mu_lower_bound,
            "tightness": self.tightness,
            "witness": self.witness.to_dict(),
        }


@dataclass(frozen=True)
class PairResult:
    """One confirmed pair: its best set (largest eps_lb / eps), counts and eps_lb; and its
    mu_lb when the claim declares Gaussian DP."""

    epsilon_lower_bound: float
    tightness: float
    witness: Witness
    mu_lower_bound: float | None = None

    def to_dict(self) -> dict:
        return {
            "pair_description": self.witness.pair_description,
            "pair_index": self.witness.pair_index,
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "tightness": self.tightness,
            "mu_lower_bound": self.mu_lower_bound,
            "witness": self.witness.to_dict(),
        }


@dataclass(frozen=True)
class PairFailure:
    """A pair on which the mechanism raised: no bound from it."""

    pair_description: str
    pair_index: int
    stage: str  # "pilot" or "confirm"
    error: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AuditResult:
    claim: object
    epsilon_lower_bound: float
    confidence: float
    samples: int
    verdict: str  # a violation if the eps side OR the GDP side finds one
    tightness: float
    witness: Witness
    termination_reason: str
    elapsed_seconds: float
    gdp: GDPAudit | None = None  # present iff the claim is (or declares) GaussianDP
    reproducible: bool | None = (
        None  # same outputs from the same seed (None: undetermined, parallel.check_reproducible)
    )
    calling: str = BATCHED  # the mechanism's calling convention (parallel.calling_convention)
    pairs: tuple = ()  # PairResult of every confirmed pair that finished
    failed_pairs: tuple = ()  # PairFailure of every pair on which the mechanism raised
    floating_point: FloatingPointFinding | None = None  # a violation whose set rounding decides, re-audited
    events: tuple = ()  # outcomes.summary of each confirmed pair whose calls raised or warned

    @property
    def finding(self) -> str | None:
        """The finding class: "floating-point leak" (a violation that vanishes on rounded outputs,
        ``floating_point``), "privacy loss" (any other violation), or None (no violation found)."""
        if self.verdict != VIOLATION:
            return None
        return "floating-point leak" if self.floating_point is not None and self.floating_point.leak else "privacy loss"

    def report_dict(self) -> dict:
        """``to_dict()`` (the reported bound) and the run: reproducible, calling, pairs, failed_pairs,
        events (the pairs whose calls raised or warned) and event_witness (``outcomes.witness_text``)."""
        return {
            **self.to_dict(),
            "reproducible": self.reproducible,
            "calling": self.calling,
            "pairs": [p.to_dict() for p in self.pairs],
            "failed_pairs": [f.to_dict() for f in self.failed_pairs],
            "events": list(self.events),
            "event_witness": outcomes.witness_text(self),
        }

    def to_dict(self) -> dict:
        c = self.claim
        d = {
            "claim": {"kind": c.kind, "params": c.params()},
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "confidence": self.confidence,
            "samples": self.samples,
            "verdict": self.verdict,
            "finding": self.finding,
            "tightness": self.tightness,
            "witness": self.witness.to_dict(),
            "termination_reason": self.termination_reason,
            "elapsed_seconds": self.elapsed_seconds,
        }
        if self.gdp is not None:
            d["gdp"] = self.gdp.to_dict()
        d["floating_point"] = None if self.floating_point is None else self.floating_point.to_dict()
        return d


class IncompleteAudit(MechanismError):
    """The mechanism raised on some pairs; ``result`` is the audit of the pairs that finished."""

    def __init__(self, result: AuditResult, first: Exception):
        self.result = result
        n = len(result.failed_pairs)
        super().__init__(
            f"the mechanism raised on {n} pair(s), first on "
            f"{result.failed_pairs[0].pair_description!r}: {first}; the result covers the "
            f"{len(result.pairs)} pair(s) that finished"
        )


MAX_SAMPLES = 10**8  # outputs per side of one call (the mechanism returns them in memory)

# Floating-point leaks (module docstring). tests/planted/auditor.py plants "not named" with
# ROUNDING_ON = False.
ROUNDING_ON = True


def _floating_point(cause: str, rounded: AuditResult) -> FloatingPointFinding:
    return FloatingPointFinding(
        cause,
        ROUND_DIGITS,
        rounded.epsilon_lower_bound,
        rounded.verdict,
        rounded.witness.rejection_set.describe(),
        rounded.verdict != VIOLATION,
    )


def _check_int(value, name: str, lo: int, hi: int = MAX_SAMPLES) -> int:
    return check_int(value, name, lo=lo, hi=hi)


def _check_open_unit(value, name: str, hi: float = 1.0) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not (0.0 < v < hi):
        raise ValueError(f"{name} must lie in (0, {hi:g}), got {v!r}")
    return v


def _check_seed(seed):
    """An int >= 0 or a ``numpy.random.SeedSequence``: audits are reproducible."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is None:
        raise ValueError("seed must be given (an int >= 0 or SeedSequence): audits are reproducible")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int >= 0 or a numpy.random.SeedSequence, got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def _gdp_of(claim) -> GaussianDP | None:
    """The Gaussian-DP claim to audit through the trade-off curve, if any."""
    if isinstance(claim, GaussianDP):
        return claim
    return claim.gdp if isinstance(claim, Claims) else None


def _pair_claims(claim, pairs) -> list[tuple[float, float]]:
    """(eps, delta) each pair is compared with; per record for a PersonalizedDP claim."""
    if not hasattr(claim, "as_eps_delta"):
        raise TypeError(f"claim must be a userdp.reference.claims claim, got {type(claim).__name__}")
    if not isinstance(claim, PersonalizedDP):
        eps_delta = claim.as_eps_delta()
        return [eps_delta] * len(pairs)
    out = []
    for p in pairs:
        if p.unit is None or not 0 <= p.unit < len(claim.epsilons):
            raise ValueError(
                f"a PersonalizedDP claim needs each pair's .unit to be a record index in "
                f"[0, {len(claim.epsilons)}); {p.description!r} has unit {p.unit!r}"
            )
        out.append(claim.for_record(p.unit).as_eps_delta())
    return out


def audit(
    mechanism,
    pair_or_generator,
    claim,
    *,
    samples: int,
    confidence: float = 0.95,
    seed,
    selection_fraction: float = 0.1,
    output: str | None = None,
    confirm_pairs: int = 3,
    sets_per_pair: int = 1,
    pilot_samples: int | None = None,
    max_pairs: int = 100,
    noise_family: str | None = None,
    progress=None,
    workers: int | None = None,
    scheduler: str | None = None,
    rounding_check: bool = True,
    noise_model: NoiseModel | None = None,
) -> AuditResult:
    """Audit ``mechanism`` on one pair or many; see the module docstring for the method.

    mechanism: ``mechanism(dataset, rng, size)`` returning ``size`` outputs, or one release
        per call, ``mechanism(dataset, rng)`` or ``mechanism(dataset)`` (``parallel.py`` has
        the rule that tells them apart; an ambiguous signature is a TypeError).
    claim: a ``userdp.reference.claims`` claim. A ``GaussianDP`` or ``Claims(primary, gdp)``
        claim adds the trade-off-curve audit (``AuditResult.gdp``); the outputs must then be
        continuous or vector (a discrete output raises ValueError naming the test to use).

    samples: outputs per side for each confirmed pair (selection + counting), >= 100.
    confidence: Pr[a correct mechanism is flagged] <= 1 - confidence (and eps_lb is a
        lower bound on the true eps with this probability).
    seed: int or ``numpy.random.SeedSequence``; every stream is spawned from it.
    selection_fraction: share of each side used to choose the rejection set, in (0, 0.5].
    output: "continuous" | "vector" | "discrete" | "categorical", or None to infer from dtype
        and shape (``audits/engine/sampling.py`` says how each is tested, and how a mechanism says
        "no release": ``None``, or a masked array).
    confirm_pairs / pilot_samples: with more candidate pairs than ``confirm_pairs``, each
        gets a pilot of ``pilot_samples`` per side (default min(samples, max(1000,
        samples // 10))) and only the best ``confirm_pairs`` are confirmed.
    sets_per_pair: candidate sets per confirmed pair tested on the counting share.
    noise_family: None, or the family of the mechanism's additive noise ("laplace",
        "gaussian", "l2laplace"; ``ceiling.NOISE_FAMILIES``): vector outputs then also get
        that family's likelihood-ratio statistic (``rejection.py``). It only adds candidate
        sets, so a wrong declaration costs power, never validity. Refused for discrete output.
    progress: optional callable receiving one-line progress messages.
    workers: processes for a one-release-per-call mechanism (default: the cores available);
        a batched one runs in this process. The result does not depend on it.
    scheduler: the address of a Dask scheduler to run those shards on instead (needs the
        ``distributed`` extra); ``parallel.SchedulerError`` if it cannot be reached.
    rounding_check: when a violation's witness set has a boundary that rounding decides
        (module docstring, "Floating-point leaks"), re-audit on outputs rounded to
        ROUND_DIGITS significant digits and name the finding (``AuditResult.floating_point``).
        False skips the re-audit (it costs a second audit).
    noise_model: None, or the setup's declared ``ceiling.NoiseModel``: each confirmed pair's
        Neyman-Pearson set under that model (the ceiling's set) is tested too, counted on all
        ``samples`` outputs per side, with MODEL_SHARE of alpha (``model_sets.py`` says why the
        bound stays valid whatever the mechanism does).

    Raises ``IncompleteAudit`` (with the finished pairs' result) when the mechanism raised
    on some pairs but not all (module docstring).
    """
    t0 = time.perf_counter()
    plan = _plan(
        mechanism,
        pair_or_generator,
        claim,
        samples=samples,
        confidence=confidence,
        seed=seed,
        selection_fraction=selection_fraction,
        output=output,
        confirm_pairs=confirm_pairs,
        sets_per_pair=sets_per_pair,
        pilot_samples=pilot_samples,
        max_pairs=max_pairs,
        noise_family=noise_family,
        progress=progress,
        workers=workers,
        scheduler=scheduler,
        rounding_check=rounding_check,
        noise_model=noise_model,
    )
    result, rounding = _run(plan, t0=t0)
    if not (rounding_check and ROUNDING_ON and result.verdict == VIOLATION and rounding is not None):
        return result
    if progress is not None:
        progress(
            f"the witness set's boundary is decided by rounding ({rounding}): re-auditing on outputs "
            f"rounded to {ROUND_DIGITS} significant digits"
        )
    rounded, _ = _run(plan, t0=time.perf_counter(), transform=round_outputs)
    return replace(result, floating_point=_floating_point(rounding, rounded), elapsed_seconds=time.perf_counter() - t0)


def _plan(
    mechanism,
    pair_or_generator,
    claim,
    *,
    samples,
    confidence,
    seed,
    selection_fraction,
    output,
    confirm_pairs,
    sets_per_pair,
    pilot_samples,
    max_pairs,
    noise_family,
    progress,
    workers,
    scheduler,
    rounding_check,
    noise_model=None,
) -> AuditPlan:
    """``audit``'s arguments checked, in the order ``audit`` documents them failing (the first
    bad one raises), as an ``AuditPlan``; ``rounding_check`` is checked, not planned."""
    calling_convention(mechanism)  # a mechanism that cannot be called: refuse first
    samples = _check_int(samples, "samples", 100)
    confidence = _check_open_unit(confidence, "confidence")
    f = selection_fraction
    if isinstance(f, bool) or not isinstance(f, numbers.Real):
        raise TypeError(f"selection_fraction must be a real number, got {type(f).__name__} {f!r}")
    if not 0.0 < f <= 0.5:
        raise ValueError(f"selection_fraction must lie in (0, 0.5], got {f!r}")
    confirm_pairs = _check_int(confirm_pairs, "confirm_pairs", 1, hi=10_000)
    sets_per_pair = _check_int(sets_per_pair, "sets_per_pair", 1, hi=10_000)
    workers = default_workers() if workers is None else _check_int(workers, "workers", 1, hi=4096)
    if scheduler is not None and not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be None or an address string, got {type(scheduler).__name__}")
    root = _check_seed(seed)
    if pilot_samples is not None:
        pilot_samples = _check_int(pilot_samples, "pilot_samples", 100)
    if output is not None and output not in OUTPUT_KINDS:
        raise ValueError(f"output must be one of {OUTPUT_KINDS} or None, got {output!r}")
    check_noise_family(noise_family)
    if output is not None:
        check_noise_family_output(output, noise_family)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be None or a callable taking one message, got {type(progress).__name__}")
    if not isinstance(rounding_check, (bool, np.bool_)):
        raise TypeError(f"rounding_check must be True or False, got {type(rounding_check).__name__} {rounding_check!r}")
    check_noise_model(noise_model)
    pairs = normalize_pairs(pair_or_generator, _check_int(max_pairs, "max_pairs", 1, hi=100_000))
    return AuditPlan(
        mechanism=mechanism,
        pairs=pairs,
        claim=claim,
        samples=samples,
        confidence=confidence,
        root=root,
        selection_fraction=f,
        output=output,
        confirm_pairs=confirm_pairs,
        sets_per_pair=sets_per_pair,
        pilot_samples=pilot_samples,
        noise_family=noise_family,
        progress=progress,
        workers=workers,
        scheduler=scheduler,
        noise_model=noise_model,
    )


def _run(plan: AuditPlan, t0: float, transform=None):
    """The audit proper (module docstring) of a checked plan; (result, rounding), where
    rounding says why the witness set's boundary is decided by rounding, or is None.
    ``transform`` maps each drawn side (the rounded re-audit)."""
    pairs, progress = plan.pairs, plan.progress
    claims = _pair_claims(plan.claim, pairs)
    gdp = _gdp_of(plan.claim)
    if gdp is not None and plan.output is not None:
        check_gdp_output(plan.output)  # a declared discrete output: refuse before drawing
    sides = 1 if gdp is None else 2  # hypotheses per set: eps, and mu when declared
    pilot_root, confirm_root = plan.root.spawn(2)
    confirm_seeds = confirm_root.spawn(len(pairs))
    mech = Sampler(
        plan.mechanism, workers=plan.workers, scheduler=plan.scheduler, progress=progress, planned=plan.samples
    )
    with mech:
        _check_reproducible(mech, plan)
        chosen, failures, reason = _choose_pairs(mech, plan, claims, pilot_root, gdp, sides, transform)
        m = max(1, len(chosen)) * plan.sets_per_pair * sides  # the planned m, kept if a confirmed pair fails
        levels = _levels(plan, max(1, len(chosen)), m, sides)
        tested = []  # CountedSet of every confirmed pair
        rounding = {}  # id(candidate) -> why rounding decides its boundary (candidates above their claim)
        tested_gdp = []  # CountedGDPSet of every confirmed pair
        summaries = []  # outcomes.summary of the pairs whose calls raised or warned
        for j, i in enumerate(chosen):
            pair = pairs[i]
            rngs = [np.random.default_rng(s) for s in confirm_seeds[i].spawn(2)]
            mech.pair = pair
            try:
                a, b, events = draw_outcomes(mech, pair, rngs, plan.samples)
            except MechanismError as exc:
                failures.append((pair, "confirm", exc))
                if progress is not None:
                    progress(f"confirmed {j + 1}/{len(chosen)}: {pair.description}: FAILED: {exc}")
                continue
            if transform is not None:
                a, b = transform(a), transform(b)
            if events is not None and events.batch is not None and progress is not None:
                progress(f"{events.batch}: an exception or a warning is an output; both sides drawn one per call")
            rows, gdp_rows, found = _count_pair(plan, pair, a, b, claims[i], gdp, levels, events)
            summaries += [] if events is None else [outcomes.summary(pair, events, rows)]
            tested += rows
            tested_gdp += gdp_rows
            rounding.update(found)
            text = f"eps_lb {max(t.eps_lb for t in tested if t.pair is pair):.4f}"
            if gdp is not None:
                text += f", mu_lb {max(t.mu_lb for t in tested_gdp if t.pair is pair):.4f}"
            if progress is not None:
                progress(f"confirmed {j + 1}/{len(chosen)}: {pair.description}: {text}")
    if not tested:
        raise failures[0][2]  # no pair finished: the first error, as it was raised
    m_all = m + (max(1, len(chosen)) * sides if levels[1] is not None else 0)
    m_all += sum(len(s["counted"]) for s in summaries)  # the event sets (outcomes.py)
    result = _assemble(plan, tested, tested_gdp, failures, m_all, reason, mech, gdp, t0, tuple(summaries))
    best = tested[_best(tested, range(len(tested)))].candidate
    return result, rounding.get(id(best))


def _check_reproducible(mech: Sampler, plan: AuditPlan) -> None:
    """Call the mechanism twice on the first pair's first dataset with generators from one
    seed, and with other seeds when the two agree (``parallel.check_reproducible``, which raises
    ``SeedIgnoredError`` for a mechanism that ignores its generator); set ``mech.reproducible``
    and warn when it is False, or raise ``NotReproducibleError`` for a mechanism that promises
    reproducible outputs (``parallel.SEEDED``: a program over the process protocol)."""
    pairs, progress = plan.pairs, plan.progress
    mech.pair = pairs[0]  # names the pair in the sampler's messages
    try:
        mech.reproducible = check_reproducible(mech, (pairs[0].first, pairs[0].second), plan.root.spawn(1)[0])
    except VaryingOutputError as exc:
        raise MechanismError(
            f"mechanism {mechanism_name(plan.mechanism)} on {pairs[0].description!r} (the "
            f"reproducibility check, {REPRO_DRAWS} calls per side): {exc}"
        ) from exc
    if mech.reproducible is False and getattr(plan.mechanism, SEEDED, False):
        raise NotReproducibleError(
            f"mechanism {mechanism_name(plan.mechanism)} broke its seed: on {pairs[0].description!r}, two "
            f"calls with generators from one seed returned different outputs ({REPRO_DRAWS} each), where "
            "the same seed must give the same releases (docs/protocol.md, release requests)"
        )
    if mech.reproducible is False and progress is not None:
        progress(
            "warning: two calls with generators from the same seed gave different outputs: the "
            "mechanism draws from a generator of its own, so this audit is not reproducible from "
            "its seed (the bound stays valid: its samples are still independent)"
        )


def _choose_pairs(mech: Sampler, plan: AuditPlan, claims, pilot_root, gdp, sides: int, transform):
    """(indices of the pairs to confirm, ascending; failures, as (pair, "pilot", MechanismError);
    the termination reason). With more pairs than ``plan.confirm_pairs``, a pilot on separate
    samples ranks them (``search.rank_pairs``) and the top ones are confirmed; else all are."""
    pairs, confirm_pairs = plan.pairs, plan.confirm_pairs
    chosen = list(range(len(pairs)))
    failures = []  # (pair, stage, MechanismError)
    reason = f"sample budget spent: {plan.samples} outputs per side"
    if len(pairs) > confirm_pairs:
        samples = plan.samples
        n_pilot = min(samples, max(1000, samples // 10)) if plan.pilot_samples is None else plan.pilot_samples
        m_guess = confirm_pairs * plan.sets_per_pair * sides
        order, failed = rank_pairs(
            mech,
            pairs,
            claims,
            pilot_root.spawn(len(pairs)),
            pilot_samples=n_pilot,
            n_count=plan.n_count,
            alpha=plan.alpha / m_guess,
            output=plan.output,
            progress=plan.progress,
            mu=None if gdp is None else gdp.mu,
            noise_family=plan.noise_family,
            transform=transform,
        )
        failures += [(pairs[i], "pilot", exc) for i, exc in failed]
        chosen = sorted(order[:confirm_pairs])
        reason += f"; pilot ({n_pilot} per side) ranked {len(pairs)} pairs, top {confirm_pairs} confirmed"
    return chosen, failures, reason


def _levels(plan: AuditPlan, pairs: int, m: int, sides: int) -> tuple[float, float | None]:
    """(level of each selection-share set, level of each model set or None): alpha / m and
    None without a declared noise model; with one, the model sets (one per pair and side)
    share MODEL_SHARE of alpha and the m selection-share sets the rest (``model_sets.py``)."""
    if plan.noise_model is None or not model_sets.MODEL_SETS_ON:
        return plan.alpha / m, None
    return plan.alpha * (1.0 - MODEL_SHARE) / m, plan.alpha * MODEL_SHARE / (pairs * sides)


def _count_pair(plan: AuditPlan, pair, a, b, eps_delta: tuple[float, float], gdp, levels, events=None):
    """(eps rows, GDP rows, rounding) of one confirmed pair's outputs a, b: its sets chosen on
    the selection share (``search.best_candidates``) and counted on the counting share, each
    bound at level levels[0], and, with a declared noise model, the model's set counted on all
    outputs at level levels[1]; rounding maps id(candidate) to why rounding decides its
    boundary, for the candidates above their claim. ``events`` (``sampling.PairEvents``): the
    event sets planned on the selection share take their share of the pair's levels (``outcomes.py``)."""
    n_sel, n_cnt, k = plan.n_select, plan.n_count, plan.sets_per_pair
    level, model_level = levels
    eps, delta = eps_delta  # the pair's claim (eps_i for personalized)
    event_sets = outcomes.planned(events, n_sel)
    if event_sets:
        level, event_level = outcomes.split(level, k * (1 if gdp is None else 2), len(event_sets))
    kind = infer_kind(a, plan.output)
    ea, eb, values = encode(a, b, kind)
    family = plan.noise_family  # no family describes a call that raised, coded "no release" (NaN):
    family = None if events is not None and kind == "continuous" and np.isnan(ea).any() | np.isnan(eb).any() else family
    found = [
        (c, n_cnt, level)
        for c in best_candidates(ea[:n_sel], eb[:n_sel], kind, values, n_cnt, level, delta, k, noise_family=family)
    ]
    found += _model_rows(plan, pair, kind, ea, model_level, delta, False)
    rows = outcomes.event_rows(pair, events, event_sets, n_sel, event_level, eps, delta) if event_sets else []
    rounding = {}
    for c, n, lev in found:
        ca, cb = (ea[n_sel:], eb[n_sel:]) if n == n_cnt else (ea, eb)
        k1, k2 = _count(c, kind, ca, cb)
        pooled = isinstance(c.rejection_set, PooledModelSet)  # 2 samples per side, Hoeffding's bounds
        lb = (pooled_epsilon_bound if pooled else epsilon_lower_bound)(k1, k2, n, lev, delta)
        pv = (pooled_p_value if pooled else p_value)(k1, k2, n, eps, delta)
        rows.append(CountedSet(pair, c, k1, k2, max(lb, 0.0), pv, eps, n, lev))
        if lb > eps and kind in ("continuous", "vector"):
            rounding[id(c)] = rounding_decided(c, kind, ca, cb)
    gdp_rows = []
    if gdp is not None:
        found = [
            (c, n_cnt, level)
            for c in best_candidates(
                ea[:n_sel], eb[:n_sel], kind, values, n_cnt, level, delta, k, gdp=True, noise_family=family
            )
        ]
        found += _model_rows(plan, pair, kind, ea, model_level, delta, True)
        for c, n, lev in found:
            ca, cb = (ea[n_sel:], eb[n_sel:]) if n == n_cnt else (ea, eb)
            k1, k2 = _count(c, kind, ca, cb)
            lb = mu_lower_bound(k1, k2, n, lev)  # mu > 0, so 0 is always a lower bound
            gdp_rows.append(
                CountedGDPSet(pair, c, k1, k2, max(lb, 0.0), gdp_p_value(k1, k2, n, gdp.mu), gdp.mu, n, lev)
            )
    return rows, gdp_rows, rounding


def _model_rows(plan: AuditPlan, pair, kind: str, ea, level, delta: float, gdp: bool) -> list:
    """[(the declared model's set for the pair, all outputs per side, its level)], or []."""
    if level is None or kind not in ("continuous", "vector"):
        return []
    d = 1 if kind == "continuous" else ea.shape[1]
    c = model_candidate(plan.noise_model, pair, kind, d, plan.samples, level, delta, gdp=gdp)
    if c is None:
        return []
    return [(c, 2 * plan.samples if isinstance(c.rejection_set, PooledModelSet) else plan.samples, level)]


def _assemble(plan: AuditPlan, tested, tested_gdp, failures, m: int, reason: str, mech: Sampler, gdp, t0, events=()):
    """The ``AuditResult`` of the counted rows: Holm's verdict over all of them (eps and GDP),
    the best witness, every pair's result and failure; raises ``IncompleteAudit`` with it
    when some pair failed."""
    alpha, n_cnt = plan.alpha, plan.n_count
    levels = [t.level for t in tested + tested_gdp]
    weights = None if len(set(levels)) <= 1 else levels  # the model sets' share (model_sets.py)
    pvals = [t.p_value for t in tested + tested_gdp]
    reject, adj = holm(pvals, alpha) if weights is None else holm(pvals, alpha, weights)
    result = _result(
        plan.claim, tested, reject, adj[: len(tested)], m, plan.confidence, plan.samples, n_cnt, reason, t0
    )
    result = replace(
        result,
        reproducible=mech.reproducible,
        calling=mech.calling,
        pairs=_pair_results(tested, adj[: len(tested)], tested_gdp, m, n_cnt),
        failed_pairs=tuple(PairFailure(p.description, p.index, stage, str(exc)) for p, stage, exc in failures),
        events=events,
    )
    if gdp is not None:
        result = replace(
            result,
            gdp=_gdp_result(tested_gdp, adj[len(tested) :], m, n_cnt, alpha),
            elapsed_seconds=time.perf_counter() - t0,
        )
    if failures:
        first = failures[0][2]
        raise IncompleteAudit(result, first) from (first.__cause__ or first)  # the mechanism's own exception
    return result


def _count(c, kind: str, ca: np.ndarray, cb: np.ndarray) -> tuple[int, int]:
    """(k1, k2) of candidate c on the counting share: k1 on the side S favours."""
    s = c.rejection_set
    if isinstance(s, PooledModelSet):
        return s.counts(kind, ca, cb)
    projected = kind == "vector" or isinstance(s, StatisticThreshold)  # a learned statistic of a scalar too
    xa, xb = (s.project(ca), s.project(cb)) if projected else (ca, cb)
    ka, kb = int(np.count_nonzero(s.mask(xa))), int(np.count_nonzero(s.mask(xb)))
    return (ka, kb) if c.first_over_second else (kb, ka)


def holm(pvals: list[float], alpha: float, weights=None):
    """Holm's step-down procedure: the arithmetic of ``statsmodels``' ``multipletests(pvals,
    alpha, method="holm")``, step for step (tests/audits/test_audit_holm.py checks that they agree).

    Sort the m p-values ascending; reject p_(1..k-1), where k is the first j with
    p_(j) > alpha / (m - j + 1); adjusted p_(j) = min(1, max_{i <= j} (m - i + 1) p_(i)).
    Written out because ``multipletests`` runs ``gc.collect()`` on every call, which costs most
    of a small audit on a full heap (measured: docs/performance.md, "audits/engine/harness.py"),
    and a Gaussian-DP audit always has >= 2 hypotheses.

    ``weights`` (positive, any scale; hypothesis j gets the share w_j / sum w of alpha): the
    weighted Holm procedure (Holm 1979, section 5): sort by p_j / w_j, reject p_(1..k-1) where
    k is the first j with p_(j) > alpha w_(j) / sum_{i >= j} w_(i); adjusted p_(j) = min(1,
    max_{i <= j} p_(i) sum_{l >= i} w_(l) / w_(i)). Equal weights give the procedure above.
    """
    if weights is not None:
        return _weighted_holm(np.asarray(pvals, dtype=float), alpha, np.asarray(weights, dtype=float))
    p = np.asarray(pvals, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    ps = p[order]
    steps = np.arange(m, 0, -1)  # m - j + 1 for j = 1..m
    notreject = ps > alpha / steps
    first = int(np.argmax(notreject)) if notreject.any() else m
    reject_sorted = np.arange(m) < first
    adj_sorted = np.minimum(np.maximum.accumulate(ps * steps), 1.0)
    reject, adj = np.empty(m, dtype=bool), np.empty(m)
    reject[order], adj[order] = reject_sorted, adj_sorted
    return reject, adj


def _weighted_holm(p: np.ndarray, alpha: float, w: np.ndarray):
    """``holm`` with weights w (its docstring)."""
    if w.shape != p.shape or not np.all(w > 0):
        raise ValueError(f"weights must be {p.size} positive numbers, got {w!r}")
    order = np.argsort(p / w, kind="stable")
    ps, ws = p[order], w[order]
    rest = np.cumsum(ws[::-1])[::-1]  # sum_{i >= j} w_(i)
    notreject = ps > alpha * ws / rest
    first = int(np.argmax(notreject)) if notreject.any() else p.size
    reject, adj = np.empty(p.size, dtype=bool), np.empty(p.size)
    reject[order] = np.arange(p.size) < first
    adj[order] = np.minimum(np.maximum.accumulate(ps * rest / ws), 1.0)
    return reject, adj


def _tightness(lb: float, eps: float) -> float:
    if eps > 0:
        return lb / eps
    return math.inf if lb > 0 else 0.0


def _best(tested: list[CountedSet], among) -> int:
    """Index of the candidate with the largest eps_lb / eps (ties: smallest p-value)."""
    return max(among, key=lambda j: (_tightness(tested[j].eps_lb, tested[j].eps), -tested[j].p_value))


def _witness(entry: CountedSet, adjusted: float, m: int, n_cnt: int) -> Witness:
    pair, c, k1, k2, lb, p, eps, n_cnt, _ = entry
    return Witness(
        pair_description=pair.description,
        pair_index=pair.index,
        unit=pair.unit,
        rejection_set=c.rejection_set,
        ordering="first over second" if c.first_over_second else "second over first",
        counts={
            "first": k1 if c.first_over_second else k2,
            "second": k2 if c.first_over_second else k1,
            "n_per_side": n_cnt,
        },
        claim_epsilon=eps,
        p_value=p,
        adjusted_p_value=float(adjusted),
        candidates_tested=m,
        pair=pair,
    )


def _result(claim, tested, reject, adj, m, confidence, samples, n_cnt, reason, t0) -> AuditResult:
    best = _best(tested, range(len(tested)))
    lb, eps = tested[best].eps_lb, tested[best].eps
    verdict = VIOLATION if bool(np.any(reject)) else NO_VIOLATION
    return AuditResult(
        claim,
        float(lb),
        confidence,
        samples,
        verdict,
        _tightness(lb, eps),
        _witness(tested[best], adj[best], m, n_cnt),
        reason,
        time.perf_counter() - t0,
    )


def _pair_results(tested, adj, tested_gdp, m: int, n_cnt: int) -> tuple:
    """Each confirmed pair's best candidate, in the order the pairs were confirmed."""
    out = []
    distinct = []
    for t in tested:
        if not any(t.pair is q for q in distinct):
            distinct.append(t.pair)
    for pair in distinct:
        j = _best(tested, [k for k, t in enumerate(tested) if t.pair is pair])
        mu = [t.mu_lb for t in tested_gdp if t.pair is pair]
        out.append(
            PairResult(
                float(tested[j].eps_lb),
                _tightness(tested[j].eps_lb, tested[j].eps),
                _witness(tested[j], adj[j], m, n_cnt),
                float(max(mu)) if mu else None,
            )
        )
    return tuple(out)


def _gdp_result(tested: list[CountedGDPSet], adj, m, n_cnt, alpha) -> GDPAudit:
    """The GDP side: the candidate with the largest mu_lb / mu (ties: smallest p-value)."""
    best = max(range(len(tested)), key=lambda j: (tested[j].mu_lb, -tested[j].p_value))
    pair, c, k1, k2, lb, p, mu, n_cnt, level = tested[best]
    fpr_hi, fnr_hi = error_rate_upper_bounds(k1, k2, n_cnt, level)
    fos = c.first_over_second
    witness = GDPWitness(
        pair_description=pair.description,
        pair_index=pair.index,
        unit=pair.unit,
        rejection_set=c.rejection_set,
        ordering="first over second" if fos else "second over first",
        null_side="second" if fos else "first",
        counts={"first": k1 if fos else k2, "second": k2 if fos else k1, "n_per_side": n_cnt},
        error_rates={"fpr": k2 / n_cnt, "fnr": (n_cnt - k1) / n_cnt, "fpr_upper": fpr_hi, "fnr_upper": fnr_hi},
        claim_mu=mu,
        p_value=p,
        adjusted_p_value=float(adj[best]),
        candidates_tested=m,
        pair=pair,
    )
    return GDPAudit(mu, float(lb), lb / mu, witness)


def efficiency_report(noise: NoiseModel | None, pairs, result, output_shape: tuple | None = None) -> dict:
    """``{"ceiling": Ceiling.to_dict() | None, "efficiency": eps_lb / ceiling | None,
    "mu_efficiency": mu_lb / mu ceiling | None}`` for an ``AuditResult`` on ``pairs``.

    None (no declared noise model) gives nulls. The ceiling is taken at the audit's samples
    and confidence, over all ``pairs``, except for a personalized claim, whose eps_lb is
    compared with its witness record's eps_i: there only the witness pair counts.
    output_shape: the mechanism's shape per release; the declared statistic must match it.
    """
    if not isinstance(result, AuditResult):
        raise TypeError(f"result must be an AuditResult (from audit), got {type(result).__name__}")
    pairs = _check_pairs(pairs)
    if noise is None:
        return {"ceiling": None, "efficiency": None, "mu_efficiency": None}
    claim = result.claim
    primary = claim.primary if isinstance(claim, Claims) else claim
    pairs = [result.witness.pair] if isinstance(primary, PersonalizedDP) else pairs
    delta = primary.as_eps_delta()[1]
    c = ceiling(
        noise,
        pairs,
        samples=result.samples,
        confidence=result.confidence,
        delta=delta,
        gdp=result.gdp is not None,
        output_shape=output_shape,
    )
    eff = result.epsilon_lower_bound / c.epsilon if c.epsilon > 0 else None
    mu_eff = (result.gdp.mu_lower_bound / c.mu) if result.gdp is not None and c.mu and c.mu > 0 else None
    return {"ceiling": c.to_dict(), "efficiency": eff, "mu_efficiency": mu_eff}
