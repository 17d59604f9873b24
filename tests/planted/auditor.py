"""Planted bugs of the auditor itself (docs/design.md §8.7-8.8): Wycheproof-style records.

The auditor's promise (audits/engine/bounds.py, audits/engine/harness.py): for a mechanism that meets
its claim, Pr[reported eps_lb > eps] <= alpha and Pr[verdict "violation"] <= alpha, with
alpha = 1 - confidence, over all m candidates that reach the counting share. Each record
below breaks that promise in one named way; tests/audits/test_audit_bounds.py computes
the exact exceedance of every variant and asserts that each one is caught while the
real auditor is not.

An auditor is described to the exact checks by an ``AuditorModel``:

- ``bound(k1, k2, n, level, delta)``: eps_lb of one candidate from its counts, vectorised
  (k1 and k2 broadcast), at the per-candidate level the harness passes;
- ``level(alpha, m)``: that per-candidate level (harness.py: ``alpha / m``);
- ``flags(pvals, alpha)``: the verdict, True for "violation" (harness.py: Holm).

``REFERENCE`` is the real auditor written with array beta quantiles; the tests check that
it agrees with ``bounds.epsilon_lower_bound`` count for count, so the exact checks see the
decisions of the real code. Bugs that live in the data flow rather than in a formula
(``no-sample-split``) carry ``patches``: module attributes swapped inside ``applied()``
so that the real ``audit`` runs with the bug.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
from scipy import stats
from scipy.special import ndtri

from userdp.audits.engine import bounds
from userdp.audits.engine import harness
from userdp.audits.engine import learned
from userdp.audits.engine import model_sets
from userdp.audits.engine import rejection
from userdp.audits.engine import thresholds
from userdp.audits.engine import sampling

__all__ = ["AuditorModel", "PlantedAuditorBug", "REFERENCE", "BUGS", "BY_NAME", "REACH_BUGS", "REACH_BY_NAME"]


# ------------------------------------------------- the reference auditor, vectorised
def cp_lower(k, n: int, level: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound at ``level``: Beta(level; k, n - k + 1), 0 at k = 0."""
    k = np.asarray(k)
    return np.where(k == 0, 0.0, stats.beta.ppf(level, np.maximum(k, 1), n - k + 1))


def cp_upper(k, n: int, level: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound at ``level``: Beta(1 - level; k + 1, n - k), 1 at k = n."""
    k = np.asarray(k)
    return np.where(k == n, 1.0, stats.beta.isf(level, k + 1, np.maximum(n - k, 1)))


def _log_ratio(p_lo: np.ndarray, q_hi: np.ndarray) -> np.ndarray:
    """ln(p_lo / q_hi), -inf where p_lo <= 0 (no evidence), +inf where q_hi = 0 < p_lo."""
    with np.errstate(divide="ignore"):
        return np.where(p_lo > 0, np.log(np.where(p_lo > 0, p_lo, 1.0)) - np.log(q_hi), -np.inf)


def split_cp_bound(k1, k2, n: int, level: float, delta: float = 0.0) -> np.ndarray:
    """bounds.epsilon_lower_bound over arrays: ln((p_lo - delta) / q_hi), CP at level/2 per side."""
    return _log_ratio(cp_lower(k1, n, level / 2) - delta, cp_upper(k2, n, level / 2))


def holm_flags(pvals, alpha: float) -> bool:
    """The harness's verdict: "violation" iff Holm rejects some H0_j (harness.holm)."""
    reject, _ = harness.holm(list(pvals), alpha)
    return bool(np.any(reject))


@dataclass(frozen=True)
class AuditorModel:
    bound: Callable[..., np.ndarray]  # (k1, k2, n, level, delta) -> eps_lb, vectorised
    level: Callable[[float, int], float]  # (alpha, m) -> per-candidate level
    flags: Callable[..., bool]  # (pvals, alpha) -> verdict is "violation"


REFERENCE = AuditorModel(split_cp_bound, lambda alpha, m: alpha / m, holm_flags)


# ------------------------------------------------------------------ the bugs
@dataclass(frozen=True)
class PlantedAuditorBug:
    name: str
    bug_type: str
    effect: str
    source: str  # where the mistake comes from
    caught_by: tuple[str, ...]  # names of the checks that catch it
    model: AuditorModel = REFERENCE  # what the exact checks see
    patches: Optional[Callable[[int], tuple]] = None  # m -> ((object, attribute, value), ...)

    @contextlib.contextmanager
    def applied(self, m: int = 1):
        """Run the real ``audit`` with this bug (m: the audit's number of candidates)."""
        if self.patches is None:
            raise ValueError(f"planted bug {self.name!r} has no patches: it is a formula, see .model")
        swapped = [(obj, attr, getattr(obj, attr), value) for obj, attr, value in self.patches(m)]
        try:
            for obj, attr, _, value in swapped:
                setattr(obj, attr, value)
            yield self
        finally:
            for obj, attr, old, _ in reversed(swapped):
                setattr(obj, attr, old)


# ---------------------------------------------- 1. Clopper-Pearson at alpha per side
def _cp_alpha_per_side(k1, k2, n, level, delta=0.0):
    return _log_ratio(cp_lower(k1, n, level) - delta, cp_upper(k2, n, level))  # BUG: level, not level/2


# ----------------------------------------------- 2. run at 0.75, reported as 0.95
LOOSE_ALPHA = 0.25  # confidence 0.75


def _holm_at_loose(pvals, alpha):
    return holm_flags(pvals, LOOSE_ALPHA)  # BUG: alpha ignored


# ------------------------------------------------------ 3./4. no multiplicity correction
def _uncorrected_flags(pvals, alpha) -> bool:
    return bool(np.any(np.asarray(pvals) <= alpha))  # BUG: no Holm


def _uncorrected_holm(pvals, alpha):
    p = np.asarray(pvals, dtype=float)
    return p <= alpha, p  # BUG: no Holm


def _uncorrected_bound_patches(m: int):
    def lb(k1, k2, n, level, delta=0.0):
        return bounds.epsilon_lower_bound(k1, k2, n, min(1.0, level * m), delta)  # BUG: alpha, not alpha/m

    return ((harness, "epsilon_lower_bound", lb),)


# ------------------------------------------------------ 5. normal approximation
def _wald(k, n, level, upper: bool):
    ph = np.asarray(k) / n
    half = ndtri(1 - level) * np.sqrt(ph * (1 - ph) / n)
    return np.clip(ph + half if upper else ph - half, 0.0, 1.0)


def _wald_bound(k1, k2, n, level, delta=0.0):
    return _log_ratio(_wald(k1, n, level / 2, False) - delta, _wald(k2, n, level / 2, True))  # BUG: Wald


# ------------------------------------------------------ 6. delta left out of the bound
def _delta_ignored(k1, k2, n, level, delta=0.0):
    return split_cp_bound(k1, k2, n, level, 0.0)  # BUG: delta dropped


# ------------------------------------------------------ 7. no sample split
def _no_split_patches(m: int):
    real_draw = sampling.draw_outcomes

    def draw(mechanism, pair, rngs, size):
        """Outputs whose second half repeats the first: with selection_fraction = 0.5 the
        counting share *is* the selection share (the calls' events, if any, as drawn)."""
        a, b, events = real_draw(mechanism, pair, rngs, size)
        h = size // 2
        return np.concatenate([a[:h], a[:h]]), np.concatenate([b[:h], b[:h]]), events  # BUG: counts reused

    return ((harness, "draw_outcomes", draw),)


# ------------------------------------------------------ 8. learned statistic refitted on the counting share
def _refit_patches(m: int):
    real_count = harness._count

    def count(c, kind, ca, cb):
        """The learned statistic's parameters (centres, classifier weights) re-estimated on
        the counting outputs before counting; its threshold t stays the selection share's."""
        s = c.rejection_set
        if isinstance(s, thresholds.StatisticThreshold):
            family = {"l2-distance-difference": "l2laplace", "l1-distance-difference": "laplace"}.get(s.statistic)
            refit = dict(rejection._learned_statistics(ca, cb, family))  # BUG: fitted on the counts
            c = dataclasses.replace(c, rejection_set=dataclasses.replace(s, params=refit[s.statistic]))
        return real_count(c, kind, ca, cb)

    return ((harness, "_count", count),)


BUGS = [
    PlantedAuditorBug(
        "cp-alpha-per-side",
        "mis-levelled bound",
        "each Clopper-Pearson bound at alpha instead of alpha/2: confidence 1 - 2 alpha reported "
        "as 1 - alpha; on a set where one side is exact (p = 1 or q = 0) the exceedance "
        "approaches alpha where the bound allows alpha/2",
        "DP-Sniper's lcb takes each CP bound at 0.95 (Bichsel et al. 2021, DP-Sniper), which by the union bound "
        "is 0.90 overall",
        ("one-sided coverage",),
        model=AuditorModel(_cp_alpha_per_side, REFERENCE.level, REFERENCE.flags),
    ),
    PlantedAuditorBug(
        "confidence-0.75-reported-0.95",
        "mis-levelled audit",
        "the audit runs at confidence 0.75 (alpha 0.25, 5x too loose at 0.95) whatever it is "
        "asked and reports the requested confidence",
        "a confidence default not passed through from the command line to the harness",
        ("coverage", "one-sided coverage", "family-wise bound", "verdict"),
        model=AuditorModel(split_cp_bound, lambda alpha, m: LOOSE_ALPHA / m, _holm_at_loose),
    ),
    PlantedAuditorBug(
        "uncorrected-bound",
        "no multiplicity correction",
        "each of m candidates bounded at alpha instead of alpha/m and the maximum reported: "
        "over 10 candidates on the boundary Pr[eps_lb > eps] reaches ~4x alpha",
        "the winner's curse: the best of several tests reported as if it were the only one",
        ("family-wise bound", "reported bound is at alpha/m"),
        model=AuditorModel(split_cp_bound, lambda alpha, m: alpha, REFERENCE.flags),
        patches=_uncorrected_bound_patches,
    ),
    PlantedAuditorBug(
        "uncorrected-verdict",
        "no multiplicity correction",
        "Holm replaced by testing each candidate's p-value at alpha: over 10 candidates a "
        "correct mechanism is flagged with probability ~4x alpha",
        "each pair audited on its own and the verdicts OR-ed",
        ("verdict", "audit: ten pairs"),
        model=AuditorModel(split_cp_bound, REFERENCE.level, _uncorrected_flags),
        patches=lambda m: ((harness, "holm", _uncorrected_holm),),
    ),
    PlantedAuditorBug(
        "normal-approximation",
        "wrong interval",
        "Wald intervals p^ -/+ z sqrt(p^(1 - p^)/n) instead of Clopper-Pearson: q_hi = 0 when "
        "k2 = 0, so eps_lb = +inf whenever the set is empty on the second side",
        "the textbook interval, whose coverage Brown, Cai and DasGupta (2001) show fails at small counts",
        ("coverage", "one-sided coverage", "family-wise bound"),
        model=AuditorModel(_wald_bound, REFERENCE.level, REFERENCE.flags),
    ),
    PlantedAuditorBug(
        "delta-ignored",
        "wrong bound for (eps, delta)",
        "ln(p_lo / q_hi) compared with eps for an (eps, delta) claim: a set of mass delta that "
        "M(D') never hits reads as an infinite loss",
        "a pure-DP auditor (DP-Sniper's ln(p_lo / q_hi)) reused for approximate claims",
        ("coverage", "one-sided coverage", "family-wise bound"),
        model=AuditorModel(_delta_ignored, REFERENCE.level, REFERENCE.flags),
    ),
    PlantedAuditorBug(
        "no-sample-split",
        "selection bias",
        "the rejection set is chosen and counted on the same outputs: among many small sets the "
        "union the second side missed is chosen, so k2 = 0 and eps_lb = ln(p_lo / q_hi(0)) with "
        "q_hi(0) ~ ln(2/alpha)/n: 4.45 for a true loss of 1 at n = 1000",
        "DP-Sniper and StatDP keep the two shares separate for exactly this reason",
        ("audit: sample split",),
        patches=_no_split_patches,
    ),
    PlantedAuditorBug(
        "learned-statistic-refit-on-counting-share",
        "selection bias",
        "the learned statistic (centres m1, m2 or the classifier's weights) is "
        "re-estimated on the counting outputs it is then counted on: each side's outputs lie "
        "nearer their own fitted centre, so on a pair with no privacy loss at all the set "
        "separates the counts and the audit reports a loss",
        "fitting a model on all the data and evaluating it on the same data; DP-Sniper (Bichsel "
        "et al. 2021) trains its classifier on outputs kept apart from those it counts",
        ("audit: learned statistic on a null pair",),
        patches=_refit_patches,
    ),
]

BY_NAME = {b.name: b for b in BUGS}


# ====================================================================== weakened auditors
# Bugs of REACH, not of validity: each removes one family of sets (or the naming of a
# finding), so the auditor stays valid but misses what the real one finds. Each is caught by
# a test of tests/audits/test_audit_reach.py (named in caught_by) that the real auditor
# passes at the same seed. Kept apart from BUGS, whose exact checks are about validity.
def _atoms_off(m: int):
    return ((rejection, "ATOMS_ON", False),)


def _unweighted_l1(m: int):
    real = rejection._learned_statistics

    def learned(a, b, noise_family):
        """The Laplace family's statistic with every coordinate weighted 1 (its scales b dropped)."""
        return [
            (name, params[:2] if name == "l1-distance-difference" else params)
            for name, params in real(a, b, noise_family)
        ]  # BUG: scales ignored

    return ((rejection, "_learned_statistics", learned),)


def _no_joint_sets(m: int):
    # BUG: no corner sets, and no sum of per-coordinate ratios (the other set family that adds
    # the coordinates' losses)
    return ((rejection, "_orthant_statistics", lambda a, b: []), (learned, "RATIO_ON", False))


def _ratio_off(m: int):
    return ((learned, "RATIO_ON", False),)  # BUG: no per-coordinate density-ratio statistic


def _model_sets_off(m: int):
    return ((model_sets, "MODEL_SETS_ON", False),)  # BUG: the declared model's own sets not tested


def _pooling_off(m: int):
    return ((model_sets, "POOLED_ON", False),)  # BUG: the model's set of one ordering, on n outputs


def _per_partition_only(m: int):
    return (
        (rejection, "_orthant_statistics", lambda a, b: []),  # BUG: each coordinate alone
        (rejection, "_directions", lambda a, b: []),
        (rejection, "_learned_statistics", lambda a, b, f: []),
        (rejection, "_pattern_candidates", lambda *args: []),
        (learned, "RATIO_ON", False),
    )


def _rounding_unnamed(m: int):
    return ((harness, "ROUNDING_ON", False),)  # BUG: no rounding check


REACH_BUGS = [
    PlantedAuditorBug(
        "atoms-off",
        "missing set family",
        "continuous outputs are tested with thresholds only: an exact value released with probability "
        "1e-3 (infinite loss) hides inside a threshold set, eps_lb 0.98 against a claim of 1",
        "a continuous law has no atoms, so an auditor built for densities never looks for them",
        ("reach: exact-value atom at 1e5",),
        patches=_atoms_off,
    ),
    PlantedAuditorBug(
        "l1-statistic-unweighted",
        "wrong likelihood ratio",
        "the declared Laplace family's statistic sums |x_j - m2_j| - |x_j - m1_j| with weight 1: the "
        "likelihood ratio of Laplace noise weights coordinate j by 1/b_j, so one coordinate with 10x "
        "less noise among 20 counts for 1/20 of the sum",
        "the i.i.d. Laplace model (one scale for every coordinate) applied to a release whose scales differ",
        ("reach: 20 counts, one coordinate's noise too small",),
        patches=_unweighted_l1,
    ),
    PlantedAuditorBug(
        "no-joint-sets",
        "missing set family",
        "vector outputs get projections and learned statistics but no joint sets (corner sets, the sum of "
        "per-coordinate ratios): two partitions moved by (2, 2) with Laplace(4) each (loss 1) reach 0.69 "
        "at 5x10^4 per side, where the quadrant {x1 >= 2, x2 >= 2} (mass 0.25 against 0.092) reaches 0.9",
        "testing each coordinate, or one projection, as if the loss of a multi-partition release lived in one",
        ("reach: two-partition quadrant",),
        patches=_no_joint_sets,
    ),
    PlantedAuditorBug(
        "per-partition-only",
        "missing set family",
        "a multi-partition release is audited partition by partition (each axis alone), never jointly: "
        "a user in both partitions of a private-selection release moves both, and only the joint sets see "
        "the sum of the two losses",
        "auditing each partition of a GROUP BY release as its own mechanism",
        ("reach: multi-partition release with no-release cells",),
        patches=_per_partition_only,
    ),
    PlantedAuditorBug(
        "floating-point-unnamed",
        "misreported finding",
        "a violation whose witness is a threshold on the attained extreme of a statistic (a plateau whose "
        "values differ in their last bits) is reported as an ordinary loss bound, sending the user after a "
        "noise-scale bug that is not there",
        "Mironov 2012: the low-order bits of floating-point noise leak; an auditor that reads every bound "
        "as a noise-scale bound misnames the cause",
        ("reach: floating-point leak named",),
        patches=_rounding_unnamed,
    ),
]

REACH_BUGS += [
    PlantedAuditorBug(
        "coordinate-ratio-off",
        "missing set family",
        "undeclared vector noise gets projections, corner sets and the (z, z^2, ||z||) classifier but no "
        "per-coordinate density-ratio statistic: 20 counts with Laplace(20), one count's noise 10x too small "
        "(loss 1.45), reach a median eps_lb 0.47 at 2x10^4 per side (0.57 at 10^5), where the sum of "
        "per-coordinate ramps reaches 0.64 (0.79)",
        "a classifier whose features see one coordinate's spread but not the many small shifts of the others: "
        "DP-Sniper's point that the statistic must approximate the likelihood ratio",
        ("reach: 20 counts black box",),
        patches=_ratio_off,
    ),
    PlantedAuditorBug(
        "model-sets-off",
        "missing set family",
        "a setup that declares its noise model gets only the sets chosen on the selection share, never the "
        "model's Neyman-Pearson set counted on every output: HLM (d = 3) reaches efficiency below 0.95 under "
        "audit --all's confidence (d = 1: 0.942 at 31 entries, 0.952 at 44)",
        "an auditor that learns from samples what the declaration already states",
        ("reach: the declared model's set",),
        patches=_model_sets_off,
    ),
    PlantedAuditorBug(
        "model-pooling-off",
        "missing set family",
        "the declared model's set is tested in one ordering on n outputs per side, not with its mirror over "
        "both orderings on 2n: HLM reaches efficiency 0.937 (d = 1) and 0.941 (d = 3) at seed 0 under "
        "audit --all's confidence with 44 entries, not 0.95",
        "a test of one set, which falls below 0.95 of the ceiling at ~10% of seeds however well it is placed",
        ("reach: the declared model's set",),
        patches=_pooling_off,
    ),
]


def _exceptions_not_outputs(m: int):
    return ((sampling, "EVENTS_ON", False),)  # BUG: an exception is the mechanism's error, a warning unseen


REACH_BUGS += [
    PlantedAuditorBug(
        "exceptions-not-outputs",
        "missing outcome",
        "a call that raises is an error of the mechanism and a warning is not seen: control.count-raises (a "
        "ValueError on every call of D', a release on every call of D) ends the audit with exit 3, and a count "
        "that warns on D' alone gets 'no violation found'",
        "an auditor that reads only the returned values, where everything observable is an output (Google's "
        "stochastic tester counts error statuses as outputs)",
        ("reach: a data-dependent exception or warning",),
        patches=_exceptions_not_outputs,
    ),
]

REACH_BY_NAME = {b.name: b for b in REACH_BUGS}
