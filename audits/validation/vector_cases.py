"""The bug classes that test vectors are flagged with, and the vectors of each algorithm.

``BUG_CLASSES``: the vocabulary of flags (Wycheproof's "flags"). Each class is drawn from
userdp's own records of real mistakes: the planted bugs of ``tests/papers/<paper>/planted*.py``
(ids "<algorithm>/<name>", the algorithm's module name: ``amin2019_erm`` for ``planted_erm.py`` of
``amin2019``) and the known-bug corpus of ``tests/papers/<paper>/corpus*.py`` (its ids). Every planted bug
and every corpus bug belongs to exactly one class (tests/test_vectors.py checks both ways).

``designs()``: for each algorithm ``userdp validate`` supports, the vectors (datasets and public
parameters), each with the flags it is built to expose and a comment saying how. The designs
live with their papers (``audits/papers/<paper>/vectors.py``, which call ``register_design``)
and are registered when the catalogue loads (``engine/registry.py:load_catalogue``). The
expected values are not here: ``vectors.build`` computes them from the reference's stages. A design's
comment on a flag is a claim that a bug of that class changes the vector's stages; the test
checks it on every planted stage bug (each fails a vector flagged with its class).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from userdp.audits.engine import registry

__all__ = [
    "BugClass",
    "BUG_CLASSES",
    "CLASS_STAGES",
    "DOWNSTREAM",
    "STAGE_NAMES",
    "reach",
    "suspects",
    "VectorCase",
    "StatCase",
    "Design",
    "designs",
    "register_design",
]


@dataclass(frozen=True)
class BugClass:
    description: str
    planted: tuple = ()  # ids "<algorithm>/<bug name>" (tests/papers/<paper>/planted*.py)
    corpus: tuple = ()  # corpus ids (tests/papers/<paper>/corpus*.py)


BUG_CLASSES: dict[str, BugClass] = {
    "per-record-bound": BugClass(
        "A contribution bound (a cap, a weight budget, a sensitivity) applied to each record where the paper "
        "bounds each user's total: a user with s records moves the release up to s times more than the noise "
        "covers.",
        planted=(
            "amin2019/cap-per-record",
            "epasto2020/cap-per-record",
            "epasto2020/sample-limiting-record-sensitivity",
            "epasto2020_gwa/gwa-b-per-record-max",
            "amin2019_erm/tau-per-record",
            "amin2019_erm/record-level-sensitivity",
            "wilson2020/sum-clamp-per-record",
            "desfontaines2022/count-rows",
            "desfontaines2022/bound-rows-not-partitions",
        ),
        corpus=(
            "amin2019/per-record-cap",
            "amin2019/staged-per-record-cap",
            "epasto2020/wa-record-weight-noise",
            "epasto2020/gwa-record-max-noise",
            "epasto2020/sl-record-level-noise",
            "epasto2020/sl-ols-record-noise",
            "desfontaines2022/count-rows",
        ),
    ),
    "understated-sensitivity": BugClass(
        "A sensitivity formula that under-counts: the average user instead of the worst, one coordinate or row "
        "instead of all, signed sums that cancel, a factor 2 or a sqrt(m_i) dropped, a distance or utility whose "
        "own sensitivity is larger than assumed, a Lipschitz constant from another loss (the logistic's 1 for "
        "the ridge's) or the smoothness R/4 for the Lipschitz R, a bound on ||theta|| valid only for lambda >= 1.",
        planted=(
            "amin2019/half-sensitivity",
            "amin2019/em-no-half",
            "epasto2020/mean-user-weight-sensitivity",
            "epasto2020/laplace-scale-uses-n",
            "epasto2020_gwa/gwa-b-single-row",
            "epasto2020_gwa/gwa-b-signed-sum",
            "epasto2020_gwa/gwac-b-single-row",
            "acharya2024/average-record-sensitivity",
            "epasto2020_erm/mean-user-weight",
            "krichene2023/lambda-inside-the-sum",
            "zhao2024/threshold-not-scaled-with-m",
            "zhao2024/ptr-distance-without-movement",
            "zhao2024/global-curvature-from-radius",
            "zhao2024/global-no-sign-flip",
            "wilson2020/sensitivity-max-without-abs",
            "wilson2020/l2-without-sqrt-l0",
        ),
        corpus=(
            "wilson2020/lower-bound-twice",
            "amin2019/half-scale",
            "epasto2020/wa-mean-user-weight-noise",
            "epasto2020/gwa-row-max-noise",
            "acharya2024/bound-one-below-lambda-one",
            "amin2019/private-cap-no-half",
            "amin2019_erm/logistic-quarter-noise",
            "amin2019_erm/ridge-lipschitz-one",
            "zhao2024/hlm-one-user-sensitivity",
            "zhao2024/hlm-staged-one-user-sensitivity",
            "zhao2024_wme/bin-width-noise",
            "zhao2024/hlm-d3-one-user-sensitivity",
            "zhao2024/global-no-sign-flip",
            "acharya2024/np-feature-bound-from-data",
            "wilson2020/merged-groups-stale-bound",
            "wilson2020/truncate-to-even-length",
            "wilson2020/linf-without-abs",
            "wilson2020/codes-by-first-appearance",
        ),
    ),
    "noise-formula": BugClass(
        "The noise scale's formula mistranscribed: a scale read as a rate (Delta * eps), d where sqrt(d) "
        "belongs, a factor 2 or Gamma_* lost, two scales swapped, a formula copied from another section, or a "
        "stray constant (a scale 5% too small or 4% too large: a privacy loss or a needless variance).",
        planted=(
            "epasto2020/laplace-scale-times-eps",
            "epasto2020_gwa/sl-ols-one-dimensional-scale",
            "acharya2024/eta-d-for-sqrt-d",
            "krichene2023/gd-sigma-gamma",
            "krichene2023/b-noise-without-gamma-star",
            "wilson2020/replace-one-sensitivity",
            "wilson2020/classical-gaussian-sigma",
            "wilson2020/mean-sum-over-count",
            "desfontaines2022/crossover-off-by-one",
            "desfontaines2022/recurrence-index-shift",
            "desfontaines2022/pi0-positive",
            "desfontaines2022/drop-term-missing",
        ),
        corpus=(
            "acharya2024/eta-without-sqrt-d",
            "acharya2024/eta-missing-two",
            "krichene2023/swapped-sigmas",
            "krichene2023/sigma-gamma-x",
            "acharya2024/eta-eight-percent-high",
            "acharya2024/d2-eta-eight-percent-high",
            "acharya2024/d2-eta-without-sqrt-d",
            "amin2019/five-percent-less-noise",
            "amin2019/variance-eight-percent-high",
            "epasto2020/gwa-b-ninety-five-percent",
            "epasto2020/sl-noise-ninety-six-percent",
            "epasto2020/wa-five-percent-less-noise",
            "epasto2020_erm/gd-sigma-halved",
            "amin2019_erm/ridge-seven-percent-less-noise",
            "krichene2023/gd-sigma-gamma",
            "krichene2023/sigma-ninety-five-percent",
            "krichene2023/variance-eight-percent-high",
            "wilson2020/per-user-sum-times-linf",
        ),
    ),
    "noise-distribution": BugClass(
        "Noise from the wrong distribution, or a parameter of the right one in the wrong convention (numpy's "
        "Gamma scale where the paper gives a rate; Gaussian where Laplace-type noise is needed).",
        planted=("acharya2024/gamma-scale-eta",),
        corpus=(
            "acharya2024/gaussian-noise",
            "acharya2024/d2-gaussian-noise",
            "desfontaines2022/laplace-tau-gaussian-noise",
            "amin2019_erm/ridge-per-coordinate-laplace",
        ),
    ),
    "unnormalised-weights": BugClass(
        "The estimator's normalisation broken: weights that do not sum to 1 (a wrong normaliser, a sum over "
        "records instead of users, eps_i / n), or a regression C with C X != I; the estimate is biased.",
        planted=(
            "epasto2020/weights-not-normalised",
            "epasto2020_gwa/gwa-ridge-C",
            "acharya2024/weights-eps-over-n",
            "zhao2024/weights-not-normalised",
        ),
        corpus=(
            "acharya2024/unnormalised-weights",
            "acharya2024/staged-unnormalised-weights",
            "epasto2020/wa-unnormalised-weights",
            "zhao2024/hlm-unnormalised-weights",
            "zhao2024/hlm-staged-inverse-count-weights",
            "zhao2024/hlm-d3-unnormalised-weights",
        ),
    ),
    "weight-formula": BugClass(
        "Weights by another formula than the paper's: a per-user weight not split over the user's records, a "
        "budget on sum w instead of sum w^2, per-user renormalisation where the paper clips, personalized "
        "weights eps_i / sum eps in a baseline whose noise is calibrated for 1/n.",
        planted=(
            "epasto2020/lemma3-weight-not-split",
            "krichene2023/budget-w-not-w-squared",
            "epasto2020_erm/per-user-renormalised-weights",
        ),
        corpus=("krichene2023/per-user-normalised", "acharya2024/np-personal-weights"),
    ),
    "missing-clipping": BugClass(
        "A clip the privacy argument needs is skipped or applied in the wrong place: weights not clipped to "
        "the budget (eq. 12), labels not clipped to their bound, the sum clipped instead of each term, the "
        "noisy release clipped instead of the estimate, per-record gradients not clipped to Gamma, a user's "
        "records not limited to the first tau.",
        planted=(
            "krichene2023/eq12-clipping-skipped",
            "krichene2023/unclipped-labels-unit-bound",
            "krichene2023/gd-sum-clip-only",
            "zhao2024/clip-after-noise",
            "wilson2020/clamp-after-aggregate",
            "wilson2020/l0-off-by-one",
            "wilson2020/no-linf-sampling",
            "desfontaines2022/no-cross-partition-bounding",
        ),
        corpus=(
            "krichene2023/clips-but-sums-raw",
            "krichene2023/unclipped-labels",
            "krichene2023/no-weight-clipping",
            "krichene2023/staged-no-weight-clipping",
            "amin2019_erm/ridge-all-records",
            "amin2019_erm/logistic-all-records",
            "krichene2023/gd-no-gradient-clipping",
            "krichene2023/gd-coordinate-clipping",
            "desfontaines2022/select-before-bounding",
            "desfontaines2022/stale-bound-after-rekey",
            "wilson2020/upper-clamp-only",
        ),
    ),
    "sub-optimal-parameter": BugClass(
        "A parameter the paper fixes by an optimality condition (Claim 1's h*, eq. 6's cap, Theorem 6's C, "
        "the bin width, the personalized weights, Claim 2's h, Lemma 3's weights, the cap's noise T / eps_sum, "
        "the Jorgensen level t) set otherwise: usually private, but not the paper's estimate.",
        planted=(
            "amin2019/optimal-cap-interpolated-quantile",
            "amin2019/optimal-cap-off-by-one",
            "epasto2020/equal-user-weights",
            "epasto2020_gwa/gwa-ols-C",
        ),
        corpus=(
            "amin2019/cap-at-half-T",
            "amin2019/staged-optimal-cap-off-by-one",
            "epasto2020/wa-median-h",
            "acharya2024/jorgensen-mean-min-level",
            "amin2019/private-cap-noise-from-U",
            "epasto2020/sl-h-plus-one",
            "epasto2020/sl-ols-no-limit",
            "epasto2020_erm/gd-uniform-weights",
            "epasto2020/sl-no-limiting",
            "zhao2024_wme/unwidened-bin",
            "acharya2024/nonpersonalized",
        ),
    ),
    "parameter-not-applied": BugClass(
        "A quantity computed and then not used where the paper uses it, so that the stages disagree: the "
        "statistic ignores the weights or the given C, or is computed at another cap than the noise; h* or the "
        "noise computed at a default (sigma = B/2, B = 1) instead of the given parameter.",
        planted=(
            "epasto2020/statistic-ignores-weights",
            "epasto2020_gwa/gwa-statistic-uses-ols",
            "epasto2020_gwa/gwac-statistic-ignores-C",
        ),
        corpus=(
            "amin2019/staged-disagreeing",
            "epasto2020/gwa-ols-ignores-C",
            "epasto2020/wa-noise-for-B-one",
            "epasto2020/wa-sigma-ignored",
        ),
    ),
    "input-not-refused": BugClass(
        "An input outside the paper's domain accepted instead of refused: eps = 0 or lambda = 0 (no noise), "
        "labels or values outside [0, B] (clipped silently, or a range wider than the one calibrated), a C "
        "with C X != I; or, by an implementation that declares it clips, projected wrongly (|x| for max(x, 0), "
        "[0, 2B] for [0, B]) or not at all.",
        planted=(
            "acharya2024/lambda-zero-no-noise",
            "epasto2020_gwa/gwa-labels-in-minus-B-B",
            "epasto2020_gwa/gwac-labels-in-minus-B-B",
            "epasto2020_gwa/gwac-no-CX-check",
        ),
        corpus=(
            "acharya2024/no-noise-at-lambda-zero",
            "amin2019/no-noise-at-eps-zero",
            "epasto2020/gwa-no-cx-check",
            "acharya2024/d2-no-noise-at-lambda-zero",
            "amin2019/clips-to-absolute-value",
            "amin2019/one-release-refuse-declared",
            "epasto2020/gwa-labels-not-clipped",
            "epasto2020/wa-clips-refuse-declared",
            "epasto2020/wa-clips-to-two-B",
        ),
    ),
    "data-dependent-choice": BugClass(
        "A parameter that must be public chosen from the private data without paying for it: the cap, sigma, "
        "C, the counts n_i, kappa0, the clipping range, the PTR decision or the histogram's top bin read "
        "exactly, a noise scale from the largest record or from the data's own n_tau.",
        planted=(
            "amin2019/data-chosen-cap",
            "epasto2020/sigma-from-data",
            "epasto2020_gwa/gwa-C-reads-labels",
            "amin2019_erm/data-dependent-n-tau",
            "krichene2023/exact-counts-no-charge",
            "zhao2024/typical-sensitivity-without-ptr",
            "zhao2024/ptr-kappa0-from-data",
            "wilson2020/largest-partitions-kept",
            "desfontaines2022/first-k-partitions",
            "desfontaines2022/sampling-by-values",
        ),
        corpus=(
            "amin2019/data-chosen-cap",
            "zhao2024/hlm-deterministic-test",
            "zhao2024/hlm-range-from-data",
            "amin2019/noise-from-largest-record",
            "amin2019/private-cap-exact-quantile",
            "amin2019/private-cap-left-end",
            "amin2019_erm/logistic-data-dependent-ntau",
            "krichene2023/counts-from-data",
            "krichene2023/gd-counts-from-data",
            "zhao2024_wme/exact-argmax",
            "zhao2024/hlm-d3-deterministic-test",
            "wilson2020/distinct-dedup-before-bounding",
        ),
    ),
    "data-dependent-refusal": BugClass(
        "A refusal (an exception, no release) or a warning that depends on the private data: one dataset "
        "raises or warns where its neighbour releases silently, which tells them apart as surely as a number would.",
        corpus=("amin2019/refuses-total-above-cap", "amin2019/warns-when-capping"),
        planted=("zhao2024/capped-solver-refuses",),
    ),
    "accounting": BugClass(
        "Privacy spent but not charged: a step, a release or a delta left out of the composition, a budget "
        "split wrongly, a baseline given more than its records' eps_i (no sampling, a wrong sampling "
        "probability, the mean eps for the min).",
        corpus=(
            "acharya2024/jorgensen-max-keep-all",
            "acharya2024/jorgensen-max-ratio-probability",
            "acharya2024/jorgensen-mean-keep-all",
            "acharya2024/np-mean-eps",
            "amin2019/private-cap-whole-budget",
            "epasto2020_erm/gd-one-step-accounting",
            "zhao2024/hlm-delta-not-split",
            "zhao2024_wme/delta-not-split",
            "zhao2024_wme/epsilon-not-split",
            "desfontaines2022/delta-not-split",
            "desfontaines2022/kappa-one-budget",
        ),
        planted=(
            "amin2019/cap-budget-not-accounted",
            "acharya2024/jorgensen-linear-probability",
            "acharya2024/nonpersonalized-mean-eps",
            "epasto2020_erm/no-composition",
            "krichene2023/counts-used-twice-charged-once",
            "krichene2023/rdp-half-for-the-pair",
            "zhao2024/ptr-delta-not-composed",
            "zhao2024_wme/localisation-delta-not-composed",
            "desfontaines2022/delta-not-split",
        ),
    ),
    "unchecked-assumption": BugClass(
        "A theorem used outside its assumption: Theorem 3.4's known bound B on ||theta_bar||, taken without "
        "checking that every neighbour satisfies it.",
        planted=("acharya2024/theorem34-violated-B",),
    ),
    "solver-error": BugClass(
        "A numerical solver's error not covered by the privacy argument: fewer iterations than the bound "
        "needs, so neighbours move by more than the sensitivity plus the declared error.",
        planted=("zhao2024/global-one-solver-step",),
    ),
    "shared-randomness": BugClass(
        "Randomness drawn once per call and shared by the call's releases (a noise draw, a random choice, a "
        "test outcome): the `size` releases are not independent.",
        corpus=(
            "acharya2024/noise-once-per-call",
            "amin2019/noise-once-per-call",
            "epasto2020/wa-noise-once-per-call",
            "acharya2024/d2-noise-once-per-call",
            "acharya2024/jorgensen-max-once-per-call",
            "acharya2024/jorgensen-mean-once-per-call",
            "acharya2024/np-noise-once-per-call",
            "amin2019/private-cap-once-per-call",
            "epasto2020/gwa-noise-once-per-call",
            "epasto2020/sl-ols-random-once-per-call",
            "epasto2020_erm/gd-once-per-call",
            "amin2019_erm/logistic-noise-once-per-call",
            "amin2019_erm/ridge-noise-once-per-call",
            "krichene2023/gd-once-per-call",
            "epasto2020/sl-random-T-once-per-call",
            "krichene2023/noise-once-per-call",
            "zhao2024/hlm-decision-per-call",
            "zhao2024/hlm-d3-decision-per-call",
            "zhao2024_wme/noise-once-per-call",
            "zhao2024/global-noise-once-per-call",
            *(
                f"wilson2020/{a}/shared-noise"
                for a in (
                    "count",
                    "count-gaussian",
                    "sum",
                    "sum-gaussian",
                    "sum-per-user",
                    "sum-per-user-gaussian",
                    "mean",
                    "mean-gaussian",
                )
            ),
            "desfontaines2022/one-uniform-per-call",
        ),
    ),
    "biased-estimate": BugClass(
        "The estimate moved while the noise stays right: a constant added to every release (a safety margin "
        "T/100), the regulariser changed (a ridge at 1.1 lambda, Lambda ||theta||^2 without its 1/2). Private, "
        "but not the paper's estimate, and the bias is small next to the noise on most cases; or the release "
        "post-processed (clamped at 0, projected onto the PSD cone): private, but not the paper's law.",
        planted=("wilson2020/bound-before-public-filter",),
        corpus=(
            "amin2019/clamped-at-zero",
            "krichene2023/ssp-psd-projected",
            "amin2019/safety-margin-bias",
            "acharya2024/lambda-stabiliser",
            "amin2019_erm/logistic-no-half",
            "desfontaines2022/absent-keys-kept",
        ),
    ),
    "partial-noise": BugClass(
        "Noise not added to the whole release: one coordinate noised and the others released exact, one "
        "triangle of a symmetric matrix noised and the other copied without noise, or the two triangles "
        "noised independently (the off-diagonal entries released twice). No noise-free stage shows it; "
        "compare every coordinate of the releases.",
        corpus=(
            "epasto2020/gwa-first-coordinate-noise",
            "krichene2023/upper-triangle-noise-only",
            "krichene2023/independent-triangles",
        ),
    ),
}


# ------------------------------------------------------------------ the stages each class can change
# Which noise-free stages a bug of each class corrupts in its own computation (where the deviation
# starts), and which stages take another's value (``DOWNSTREAM``: a wrong weight moves the statistic,
# the sensitivity and the noise scale computed from it). A class "can change" its stages and their
# downstream stages (``reach``). ``vectors.check`` suspects a vector's flag only when the stages that
# failed on it are ones the class can change and include one where it starts (``suspects``): a noise
# scale wrong with right weights is not a weight bug. tests/test_vectors.py checks the table on every
# planted stage bug (its failing stages are among its class's, one of them a start). Release-only
# classes (shared-randomness, partial-noise) change no stage; an input accepted that the paper
# excludes (an "invalid" vector) is a refusal, suspected whatever the stage.
STAGE_NAMES = (
    "weights",
    "thresholds",
    "statistic",
    "sensitivity",
    "ptr_distance",
    "noise_scale",
    "gd_noise_scale",
    "keep_probability",
    "optimal_cap",
)
DOWNSTREAM: dict[str, tuple] = {
    "weights": ("thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale", "gd_noise_scale"),
    "thresholds": ("statistic", "sensitivity", "ptr_distance", "noise_scale"),
    "statistic": (),
    "sensitivity": ("ptr_distance", "noise_scale", "gd_noise_scale"),
    "ptr_distance": ("noise_scale",),
    "noise_scale": (),
    "gd_noise_scale": (),
    "keep_probability": (),
    "optimal_cap": (),
}
_NOISE = ("noise_scale", "gd_noise_scale", "keep_probability")
CLASS_STAGES: dict[str, tuple] = {
    "per-record-bound": ("weights", "statistic", "sensitivity"),
    # the sensitivity folded into the noise scale, or the clipping thresholds the statistic uses
    "understated-sensitivity": ("thresholds", "statistic", "sensitivity", "ptr_distance", *_NOISE),
    "noise-formula": ("sensitivity", *_NOISE),
    "noise-distribution": _NOISE,
    "unnormalised-weights": ("weights", "statistic"),
    "weight-formula": ("weights",),
    "missing-clipping": ("weights", "statistic"),
    "sub-optimal-parameter": ("optimal_cap", "weights", "thresholds", "statistic", *_NOISE),
    "parameter-not-applied": ("weights", "statistic", "sensitivity", *_NOISE),
    "input-not-refused": STAGE_NAMES,
    "data-dependent-choice": STAGE_NAMES,
    "data-dependent-refusal": STAGE_NAMES,
    "accounting": ("weights", *_NOISE),
    "unchecked-assumption": ("sensitivity", *_NOISE),
    "solver-error": ("statistic", "sensitivity", *_NOISE),
    "shared-randomness": (),
    "biased-estimate": ("statistic",),
    "partial-noise": (),
}


def reach(bug_class: str) -> frozenset:
    """The stages a bug of ``bug_class`` can change: its own and everything downstream of them."""
    if bug_class not in CLASS_STAGES:
        raise ValueError(f"bug_class must be one of BUG_CLASSES, got {bug_class!r:.80}")
    out, todo = set(), list(CLASS_STAGES[bug_class])
    while todo:
        s = todo.pop()
        if s not in out:
            out.add(s)
            todo.extend(DOWNSTREAM[s])
    return frozenset(out)


def suspects(flags, failed_stages, result: str = "valid") -> list:
    """The flags of a failed vector that its failing stages point to: on a valid vector, the classes
    that can change every failing noise-free stage and start in one of them; a release that errs on
    a valid input (no noise-free stage failed) or an invalid vector accepted says nothing of the
    stage, so then every flag."""
    if result not in ("valid", "invalid"):
        raise ValueError(f"result must be 'valid' or 'invalid', got {result!r:.80}")
    for name, seq in (("flags", flags), ("failed_stages", failed_stages)):
        if isinstance(seq, str) or not isinstance(seq, (list, tuple)) or not all(isinstance(x, str) for x in seq):
            raise TypeError(f"{name} must be a list of str, got {seq!r:.80}")
    stages = [s for s in failed_stages if s != "mechanism"]
    if result != "valid" or not stages:
        return list(flags)
    return [f for f in flags if f in CLASS_STAGES and set(stages) <= reach(f) and set(stages) & set(CLASS_STAGES[f])]


@dataclass(frozen=True)
class VectorCase:
    dataset: Any
    params: Mapping
    flags: tuple
    comment: str
    result: str = "valid"  # "valid" | "invalid"

    def __post_init__(self):
        if not isinstance(self.params, Mapping):
            raise TypeError(f"params must be a mapping of parameter names to values, got {type(self.params).__name__}")
        if (
            isinstance(self.flags, (str, bytes))
            or not isinstance(self.flags, (tuple, list))
            or not all(isinstance(f, str) for f in self.flags)
        ):
            raise TypeError(f"flags must be a tuple of bug-class names, got {self.flags!r:.80}")
        if not isinstance(self.comment, str) or not self.comment:
            raise TypeError(
                f"comment must be a non-empty str (how the vector exposes its flags), got {self.comment!r:.80}"
            )
        if self.result not in ("valid", "invalid"):
            raise ValueError(f"result must be 'valid' or 'invalid', got {self.result!r}")
        unknown = [f for f in self.flags if f not in BUG_CLASSES]
        if unknown:
            raise ValueError(f"flags {unknown} are not bug classes (vector_cases.BUG_CLASSES)")


@dataclass(frozen=True)
class StatCase:
    """A statistical vector (``vector_stats``): a neighbouring pair ``D``, ``D_prime`` under the design's
    relation, the public ``params``, the claim {epsilon, delta} they give, the noise ``family`` of the release
    coordinate ``index`` (None: a scalar release), whose law on each side is the reference's ``statistic``
    there (at ``index``) plus noise of its ``noise_scale``, and how the pair moves the release."""

    D: Any
    D_prime: Any
    params: Mapping
    claim: Mapping
    comment: str
    family: str = "laplace"
    index: int | None = None
    flags: tuple = ("noise-distribution", "shared-randomness", "partial-noise")

    def __post_init__(self):
        if not isinstance(self.params, Mapping):
            raise TypeError(f"params must be a mapping of parameter names to values, got {type(self.params).__name__}")
        if not isinstance(self.claim, Mapping):
            raise TypeError(f"claim must be a mapping {{epsilon[, delta]}}, got {type(self.claim).__name__}")
        if set(self.claim) - {"epsilon", "delta"} or "epsilon" not in self.claim:
            raise ValueError(f"claim must be {{epsilon[, delta]}}, got {dict(self.claim)!r:.80}")
        if self.family not in ("laplace", "gaussian"):
            raise ValueError(f"family must be 'laplace' or 'gaussian', got {self.family!r:.80}")
        if self.index is not None and (
            isinstance(self.index, bool) or not isinstance(self.index, int) or self.index < 0
        ):
            raise ValueError(f"index must be None or a coordinate >= 0 (an int), got {self.index!r:.80}")
        if not isinstance(self.comment, str) or not self.comment:
            raise TypeError(f"comment must be a non-empty str, got {self.comment!r:.80}")
        if (
            isinstance(self.flags, (str, bytes))
            or not isinstance(self.flags, (tuple, list))
            or not all(isinstance(f, str) for f in self.flags)
        ):
            raise TypeError(f"flags must be a tuple of bug-class names, got {self.flags!r:.80}")
        unknown = [f for f in self.flags if f not in BUG_CLASSES]
        if unknown:
            raise ValueError(f"flags {unknown} are not bug classes (vector_cases.BUG_CLASSES)")


@dataclass(frozen=True)
class Design:
    """The vectors of one algorithm. ``reference()``: the adapter whose stages give the
    expected values; ``mechanism()``: the reference release ``f(dataset, rng=, size=, **params)``;
    ``stages``: stage -> the parameter names it takes (by keyword); ``takes_dataset``: the
    stages called with the dataset first; ``adapter_type()``: the adapter class a program's
    stages are wrapped in (its extra stages, e.g. ``optimal_cap``); ``bind``: None, or how an
    adapter in the property suite's stage shape is put in this algorithm's call shape (the
    public choices the algorithm fixes, e.g. Jorgensen's t = max eps, bound as arguments): the
    reference is the suite's reference bound so, and tests/test_vectors.py binds the planted
    bugs the same way. ``intermediate``: None, or ``f(dataset, params) -> {name: value}``, the
    values the paper defines between the input and a stage (Epasto's h* and n_h), written into
    each valid vector's ``intermediate`` so that a failing stage can be located; informative,
    never checked (no implementation is asked for them). ``statistical``: None (the release has no
    closed-form law at a pair; ``statistical_none`` says why), or a list of ``StatCase``."""

    algorithm: str
    reference: Callable[[], Any]
    mechanism: Callable[[], Callable]
    adapter_type: Callable[[], type]
    stages: Mapping[str, tuple]
    takes_dataset: tuple
    cases: Callable[[], list]
    relation: str
    reference_text: str
    notes: str = ""
    bind: Callable[[Any], Any] | None = None
    intermediate: Callable[[Any, Mapping], Mapping] | None = None
    statistical: Callable[[], list] | None = None
    statistical_none: str = ""  # without statistical vectors: why (the file's statisticalNote)


_DESIGNS: dict[str, Design] = {}


def register_design(d: Design) -> Design:
    """Add ``d`` (a paper's vectors module calls it at import); a second design for one algorithm is an error."""
    if not isinstance(d, Design):
        raise TypeError(f"d must be a vector_cases.Design, got {type(d).__name__}")
    if d.algorithm in _DESIGNS and _DESIGNS[d.algorithm] is not d:
        raise ValueError(f"test vectors for {d.algorithm!r} designed twice")
    _DESIGNS[d.algorithm] = d
    return d


def designs() -> dict[str, Design]:
    """Every algorithm's design, by name (the catalogue loaded on first use)."""
    registry.load_catalogue("vectors")
    return dict(sorted(_DESIGNS.items()))
