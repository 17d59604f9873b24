"""The bug classes that test vectors are flagged with, and the vectors of each algorithm.

``BUG_CLASSES``: the vocabulary of flags (Wycheproof's "flags"). Each class is drawn from
userdp's own records of real mistakes: the planted bugs of ``tests/planted/`` (ids
"<module>/<name>") and the known-bug corpus of ``tests/corpus/`` (its ids). Every planted bug
and every corpus bug belongs to exactly one class (tests/test_vectors.py checks both ways).

``DESIGNS``: for each algorithm ``userdp validate`` supports, the vectors (datasets and public
parameters), each with the flags it is built to expose and a comment saying how. The expected
values are not here: ``vectors.build`` computes them from the reference's stages. A design's
comment on a flag is a claim that a bug of that class changes the vector's stages; the test
checks it on every planted stage bug (each fails a vector flagged with its class).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

__all__ = ["BugClass", "BUG_CLASSES", "VectorCase", "Design", "DESIGNS"]


@dataclass(frozen=True)
class BugClass:
    description: str
    planted: tuple = ()  # ids "<tests/planted module>/<bug name>"
    corpus: tuple = ()  # tests/corpus ids


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
        ),
        corpus=(
            "amin2019/per-record-cap",
            "amin2019/staged-per-record-cap",
            "epasto2020/wa-record-weight-noise",
            "epasto2020/gwa-record-max-noise",
            "epasto2020/sl-record-level-noise",
            "epasto2020/sl-ols-record-noise",
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
        ),
        corpus=(
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
        ),
    ),
    "noise-distribution": BugClass(
        "Noise from the wrong distribution, or a parameter of the right one in the wrong convention (numpy's "
        "Gamma scale where the paper gives a rate; Gaussian where Laplace-type noise is needed).",
        planted=("acharya2024/gamma-scale-eta",),
        corpus=("acharya2024/gaussian-noise", "acharya2024/d2-gaussian-noise"),
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
        ),
        corpus=(
            "krichene2023/unclipped-labels",
            "krichene2023/no-weight-clipping",
            "krichene2023/staged-no-weight-clipping",
            "amin2019_erm/ridge-all-records",
            "krichene2023/gd-no-gradient-clipping",
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
        ),
        corpus=(
            "amin2019/data-chosen-cap",
            "zhao2024/hlm-deterministic-test",
            "zhao2024/hlm-range-from-data",
            "amin2019/noise-from-largest-record",
            "amin2019/private-cap-exact-quantile",
            "amin2019_erm/logistic-data-dependent-ntau",
            "krichene2023/counts-from-data",
            "krichene2023/gd-counts-from-data",
            "zhao2024_wme/exact-argmax",
            "zhao2024/hlm-d3-deterministic-test",
        ),
    ),
    "data-dependent-refusal": BugClass(
        "A refusal (an exception, no release) that depends on the private data: one dataset raises where its "
        "neighbour releases, which tells them apart as surely as a number would.",
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
        ),
    ),
    "biased-estimate": BugClass(
        "The estimate moved while the noise stays right: a constant added to every release (a safety margin "
        "T/100), the regulariser changed (a ridge at 1.1 lambda, Lambda ||theta||^2 without its 1/2). Private, "
        "but not the paper's estimate, and the bias is small next to the noise on most cases.",
        corpus=("amin2019/safety-margin-bias", "acharya2024/lambda-stabiliser", "amin2019_erm/logistic-no-half"),
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
class Design:
    """The vectors of one algorithm. ``reference()``: the adapter whose stages give the
    expected values; ``mechanism()``: the reference release ``f(dataset, rng=, size=, **params)``;
    ``stages``: stage -> the parameter names it takes (by keyword); ``takes_dataset``: the
    stages called with the dataset first; ``adapter_type()``: the adapter class a program's
    stages are wrapped in (its extra stages, e.g. ``optimal_cap``); ``bind``: None, or how an
    adapter in the property suite's stage shape is put in this algorithm's call shape (the
    public choices the algorithm fixes, e.g. Jorgensen's t = max eps, bound as arguments): the
    reference is the suite's reference bound so, and tests/test_vectors.py binds the planted
    bugs the same way."""

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


def _spec_reference(algorithm: str) -> Callable[[], Callable]:
    def get():
        from userdp.audits.validation.run import get_validation

        return get_validation(algorithm).reference

    return get


def _users(*per_user) -> Any:
    from userdp.reference.data import UserDataset

    return UserDataset.from_user_lists([list(u) for u in per_user])


# ================================================================== Amin et al. 2019 §3
def _amin_cases() -> list:
    from userdp.reference.data import UserDataset

    six = UserDataset.from_user_lists([[0.9, 0.8, 0.5, 0.4], [0.7, 0.6], [0.3], [0.2, 0.6, 0.1], [1.0], [0.5]])
    multi = UserDataset.from_user_lists([[0.5, 0.5, 0.5, 0.5], [0.4, 0.4, 0.4, 0.4], [0.2]])
    ten = UserDataset.from_user_lists([[0.1 * (k + 1), 0.03 * k] for k in range(10)])  # totals 0.1, 0.23, .., 1.27
    V = VectorCase
    return [
        V(
            six,
            {"T": 1.0, "epsilon": 1.0},
            ("understated-sensitivity", "sub-optimal-parameter", "data-dependent-choice", "parameter-not-applied"),
            "six users of 1-4 records, totals 0.3 to 2.6, T = 1, eps = 1: g_T = 4.7 caps two users; the sensitivity "
            "is T (not T/2); eq. 6's cap at eps = 1 is the largest total 2.6 (not the second largest, 1.3, nor an "
            "interpolated quantile); a T read from the data instead of the given one, or a statistic at another cap, "
            "changes g_T",
        ),
        V(
            multi,
            {"T": 1.0, "epsilon": 0.5},
            ("per-record-bound", "noise-formula"),
            "users of 4 records each below T whose totals (2.0, 1.6) exceed it, T = 1, eps = 0.5: g_T = 2.2, "
            "where capping each record gives 3.8; the noise scale is T/eps = 2 (not T eps = 0.5)",
        ),
        V(
            multi,
            {"T": 0.3, "epsilon": 4.0},
            ("per-record-bound", "noise-formula"),
            "the same users at T = 0.3, eps = 4: the two heavy users' totals are capped, g_T = 0.3 + 0.3 + 0.2 = 0.8, "
            "where capping each record gives 8 x 0.3 + 0.2 = 2.6; the noise scale is 0.075",
        ),
        V(
            ten,
            {"T": 2.0, "epsilon": 0.35},
            ("sub-optimal-parameter",),
            "ten users of two records, distinct totals 0.1 to 1.27, eps = 0.35: 1/eps is not an integer, so eq. 6's "
            "cap (the ceil(1/eps) = 3rd largest total, 1.01) differs from the interpolated 1 - 1/(m eps) quantile "
            "(0.94) and from the 4th largest (0.88)",
        ),
        V(
            _users([0.25]),
            {"T": 1.0, "epsilon": 2.0},
            (),
            "one user of one record, below T: g_T is the record itself (eq. 6's cap at k = 1 > m - 1)",
        ),
        V(six, {"T": 1.0, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0: Laplace scale T / 0", "invalid"),
        V(six, {"T": -1.0, "epsilon": 1.0}, ("input-not-refused",), "T = -1: a negative cap", "invalid"),
        V(
            six,
            {"T": 0.0, "epsilon": 1.0},
            ("input-not-refused",),
            "T = 0: the constant 0 released with zero noise",
            "invalid",
        ),
        V(
            _users([0.5, -0.25], [1.0]),
            {"T": 1.0, "epsilon": 1.0},
            ("input-not-refused",),
            "a negative record value: §3 sums non-negative contributions (min(x_l, T) is no cap for a negative total)",
            "invalid",
        ),
    ]


def _amin_reference():
    from userdp.properties.amin2019 import REFERENCE

    return REFERENCE


def _amin_adapter():
    from userdp.properties.amin2019 import CapAdapter

    return CapAdapter


# ================================================================== Epasto et al. 2020 §3
def _zipf_users(m: int, seed: int, equal_within: bool) -> Any:
    from userdp.reference.data import UserDataset

    rng = np.random.default_rng(seed)
    sizes = np.minimum(rng.zipf(1.6, m), 40)
    ids = np.repeat(np.arange(m), sizes)
    if equal_within:
        values = np.repeat(np.round(rng.uniform(0.0, 1.0, m), 3), sizes)
    else:
        values = np.round(rng.uniform(0.0, 1.0, ids.size), 3)
    return UserDataset(values, ids)


def _skewed(equal_within: bool) -> Any:
    """3 users of 20 records and 40 users of 1 record (h* between 1 and 20)."""
    from userdp.reference.data import UserDataset

    sizes = np.r_[np.full(3, 20), np.ones(40, dtype=int)]
    ids = np.repeat(np.arange(sizes.size), sizes)
    rng = np.random.default_rng(2020)
    per_user = np.round(rng.uniform(0.0, 1.0, sizes.size), 3)
    values = np.repeat(per_user, sizes) if equal_within else np.round(rng.uniform(0.0, 1.0, ids.size), 3)
    return UserDataset(values, ids)


def _wa_cases() -> list:
    zipf, skew = _zipf_users(50, 20, False), _skewed(False)
    spread = _zipf_users(30, 7, False)
    V = VectorCase
    base = {"B": 1.0, "epsilon": 1.0, "sigma": 0.5}
    return [
        V(
            zipf,
            base,
            (
                "understated-sensitivity",
                "unnormalised-weights",
                "weight-formula",
                "parameter-not-applied",
                "per-record-bound",
            ),
            "50 users with Zipf(1.6) sizes (1 to 40 records), values in [0, 1], B = 1, eps = 1, sigma = 1/2: the "
            "weights sum to 1 over users' min(h*, s_q) (not over records), are split over each user's records, "
            "the noise covers the heaviest user's total weight (not the mean user, nor n records, nor one record), "
            "and the statistic applies them (not the plain mean)",
        ),
        V(
            skew,
            {"B": 1.0, "epsilon": 4.0, "sigma": 0.5},
            ("per-record-bound", "understated-sensitivity", "sub-optimal-parameter", "noise-formula"),
            "3 users of 20 records and 40 of 1, eps = 4: h* lies strictly between the sizes (not at s_1 = 1: "
            "equal user weights are not optimal), a heavy user's weight is h*/n_h, and the noise scale is "
            "Delta / eps (not Delta eps)",
        ),
        V(
            spread,
            {"B": 1.0, "epsilon": 2.0, "sigma": 0.05},
            ("data-dependent-choice",),
            "sigma = 0.05 given while the values' standard deviation is about 0.29: h* computed from an estimated "
            "sigma differs",
        ),
        V(
            spread.with_fields(values=2 * spread.values),
            {"B": 2.0, "epsilon": 0.5, "sigma": 1.0},
            ("noise-formula",),
            "values doubled into [0, 2], B = 2, sigma = 1, eps = 0.5: a scale read as a rate (Delta eps) is "
            "eps^2 = 1/4 of Delta / eps",
        ),
        V(
            _users([0.5, 0.5], [0.25, 0.75]),
            {"B": 1.0, "epsilon": 1.0, "sigma": 0.5},
            (),
            "two users of two records: all sizes equal, so h* = s and every weight is 1/n",
        ),
        V(
            zipf.with_fields(values=np.where(np.arange(zipf.n) == 3, 2.0, zipf.values)),
            base,
            ("input-not-refused",),
            "a value 2B outside [0, B]: the noise covers B (refuse, do not clip)",
            "invalid",
        ),
        V(zipf, {**base, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
        V(
            zipf,
            {**base, "sigma": -0.5},
            ("input-not-refused",),
            "sigma = -0.5: a negative standard deviation",
            "invalid",
        ),
        V(zipf, {**base, "B": 0.0}, ("input-not-refused",), "B = 0: an empty range [0, 0]", "invalid"),
    ]


def _sl_cases() -> list:
    zipf, skew = _zipf_users(50, 21, True), _skewed(True)
    V = VectorCase
    base = {"B": 1.0, "epsilon": 1.0, "sigma": 0.5}
    note = " (values equal within each user: §3.2 lets an implementation keep any min(h, s_l) of a user's records)"
    return [
        V(
            zipf,
            base,
            ("per-record-bound", "understated-sensitivity"),
            "50 users with Zipf(1.6) sizes, B = 1, eps = 1: the best integer h keeps several records of heavy "
            "users, so a user moves the estimate by B h / n_h, not one record's B / n_h" + note,
        ),
        V(
            skew,
            {"B": 1.0, "epsilon": 4.0, "sigma": 0.5},
            ("per-record-bound", "noise-formula"),
            "3 users of 20 records and 40 of 1, eps = 4" + note,
        ),
        V(
            zipf.with_fields(values=np.where(zipf.user_ids == zipf.user_ids[0], 2.0, zipf.values)),
            base,
            ("input-not-refused",),
            "a user's values at 2B, outside [0, B]",
            "invalid",
        ),
        V(zipf, {**base, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
    ]


def _wa_reference():
    from userdp.properties.epasto2020 import REFERENCE

    return REFERENCE


def _sl_reference():
    from userdp.properties.epasto2020 import REFERENCE_SL

    return REFERENCE_SL


def _plain_adapter():
    from userdp.properties.adapter import Adapter

    return Adapter


DESIGNS: dict[str, Design] = {}


def _register(d: Design) -> None:
    DESIGNS[d.algorithm] = d


_register(
    Design(
        "amin2019.capped-sum",
        _amin_reference,
        _spec_reference("amin2019.capped-sum"),
        _amin_adapter,
        {"statistic": ("T",), "sensitivity": ("T",), "noise_scale": ("T", "epsilon"), "optimal_cap": ("epsilon",)},
        ("statistic", "optimal_cap"),
        _amin_cases,
        "add/remove user",
        "userdp.reference.amin2019: statistic (g_T, §3), sensitivity (T, eq. 2), noise_scale (T / eps), "
        "optimal_cap_nonprivate (eq. 5-6, the ceil(1/eps)-th largest user total)",
    )
)

_register(
    Design(
        "epasto2020.wa",
        _wa_reference,
        _spec_reference("epasto2020.wa"),
        _plain_adapter,
        {s: ("B", "epsilon", "sigma") for s in ("weights", "statistic", "sensitivity", "noise_scale")},
        ("weights", "statistic", "sensitivity", "noise_scale"),
        _wa_cases,
        "replace user (S_l public)",
        "userdp.reference.epasto2020: optimal_weights (Lemma 3 at Claim 1's h*), wa_statistic, wa_sensitivity "
        "(Lemma 1: B max_l W_l), wa_noise_scale",
    )
)

_register(
    Design(
        "epasto2020.sample-limiting",
        _sl_reference,
        _spec_reference("epasto2020.sample-limiting"),
        _plain_adapter,
        {s: ("B", "epsilon", "sigma") for s in ("statistic", "sensitivity", "noise_scale")},
        ("statistic", "sensitivity", "noise_scale"),
        _sl_cases,
        "replace user (S_l public)",
        "userdp.reference.epasto2020: best_integer_h (Claim 2), sample_limiting_weights, and Lemma 1's sensitivity "
        "B h / n_h",
        notes="No weights stage: §3.2 lets an implementation keep any min(h, s_l) records of user l (first, last, "
        "random), so the weights are not unique; the vectors hold values equal within each user, where the "
        "statistic is.",
    )
)


# ================================================================== Epasto et al. 2020 §5 (GWA_C)
def _gwa_data() -> tuple:
    """Non-orthogonal design (n = 8, d = 2; users of 3, 2, 1, 1 and 1 records), labels in [0, 1],
    and Theorem 6's C at B = 1, eps = 1, sigma = 1/2; the diagonal design with C = X^+."""
    from userdp.reference import epasto2020_gwa as G
    from userdp.reference.data import UserDataset

    X = np.array([[1.0, 0.2], [0.8, -0.5], [0.1, 1.0], [-0.3, 0.9], [1.0, 1.0], [0.5, -1.0], [-1.0, 0.3], [0.2, 0.4]])
    D = UserDataset(X, np.array([0, 0, 0, 1, 1, 2, 3, 4]), labels=np.linspace(0.1, 0.9, 8))
    C = G.optimal_C(D, 1.0, 1.0, 0.5).C
    Xd = np.array([[1.0, 1.0]] * 4 + [[1.0, 0.0], [0.0, 1.0], [1.0, -1.0]])
    Dd = UserDataset(Xd, np.array([0, 0, 0, 0, 1, 2, 3]), labels=np.array([0.2, 0.4, 0.6, 0.8, 0.5, 0.3, 0.7]))
    return D, C, Dd, G.ols_C(G.features(Dd))


def _gwa_cases() -> list:
    D, C, Dd, Cd = _gwa_data()
    V = VectorCase
    neg = D.labels.copy()
    neg[2] = -0.5
    big = D.labels.copy()
    big[0] = 2.0
    return [
        V(
            D,
            {"C": C, "B": 1.0, "epsilon": 1.0},
            ("understated-sensitivity", "parameter-not-applied", "per-record-bound"),
            "non-orthogonal design, users of 3, 2, 1, 1, 1 records, Theorem 6's C (sigma = 1/2), B = 1, eps = 1: "
            "b sums |c_ji| over both rows j and over the user's records i (not one row, not one record, not signed "
            "sums), and the statistic is this C times y (not X^+ y)",
        ),
        V(
            D.with_fields(labels=D.labels / 2),
            {"C": C, "B": 0.5, "epsilon": 20.0},
            ("understated-sensitivity", "noise-formula"),
            "the same with B = 1/2 (labels halved), eps = 20",
        ),
        V(
            Dd,
            {"C": Cd, "B": 1.0, "epsilon": 1.0},
            ("understated-sensitivity", "per-record-bound"),
            "diagonal design: user 0 holds four records at (1, 1), which enter both rows of C = X^+: one row, or "
            "one record, gives half of Algorithm 3's b or less",
        ),
        V(
            D,
            {"C": 1.1 * C, "B": 1.0, "epsilon": 1.0},
            ("input-not-refused",),
            "a C with C X = 1.1 I (Algorithm 3 needs C X = I)",
            "invalid",
        ),
        V(
            D.with_fields(labels=big),
            {"C": C, "B": 1.0, "epsilon": 1.0},
            ("input-not-refused",),
            "a label 2B, outside [0, B]",
            "invalid",
        ),
        V(
            D.with_fields(labels=neg),
            {"C": C, "B": 1.0, "epsilon": 1.0},
            ("input-not-refused",),
            "a label -B/2: inside [-B, B] but outside the [0, B] that b is calibrated to",
            "invalid",
        ),
        V(D, {"C": C, "B": 1.0, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
    ]


def _gwa_reference():
    from userdp.properties.epasto2020_gwa import REFERENCE_GWAC

    return REFERENCE_GWAC


_register(
    Design(
        "epasto2020.gwa",
        _gwa_reference,
        _spec_reference("epasto2020.gwa"),
        _plain_adapter,
        {s: ("C", "B", "epsilon") for s in ("weights", "statistic", "sensitivity", "noise_scale")},
        ("weights", "statistic", "sensitivity", "noise_scale"),
        _gwa_cases,
        "replace user's labels (features public)",
        "userdp.reference.epasto2020_gwa: check_C (the weights stage returns the given C after checking C X = I), "
        "statistic (C y), sensitivity (Algorithm 3: B max_l sum_j sum_{i in S_l} |c_ji|), noise_scale",
        notes="C is Algorithm 3's input, a d x n matrix (an array of d rows) in params; Theorem 6's optimal C is "
        "computed by userdp.reference.epasto2020_gwa.optimal_C when the vectors are built.",
    )
)


# ================================================================== Acharya et al. 2024 (PDP-OP)
def _pdp_data(n: int, d: int, seed: int, profile=None) -> Any:
    """x uniform on [0, 1]^d, y = x theta* / sqrt(d) (+ noise) clipped to [-1, 1], eps_i on [0.05, 2]."""
    from userdp.reference.data import UserDataset

    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0.0, 1.0, (n, d)), 4)
    theta = rng.standard_normal(d)
    theta /= np.linalg.norm(theta)
    y = np.clip(np.round(X @ theta / math.sqrt(d) + 0.1 * rng.standard_normal(n), 4), -1.0, 1.0)
    eps = np.round(rng.uniform(0.05, 2.0, n), 3) if profile is None else np.asarray(profile, float)
    return UserDataset(X if d > 1 else X[:, 0], np.arange(n), labels=y, epsilons=eps)


def _pdp_cases() -> list:
    D2, D1, D3 = _pdp_data(8, 2, 1), _pdp_data(10, 1, 2), _pdp_data(30, 3, 5)
    V = VectorCase
    bad_x = np.array(D2.values)
    bad_x[0, 0] = 1.5
    bad_y = np.array(D2.labels)
    bad_y[1] = -2.0
    return [
        V(
            D2,
            {"Lambda": 100.0},
            (
                "unnormalised-weights",
                "noise-formula",
                "understated-sensitivity",
                "unchecked-assumption",
                "biased-estimate",
            ),
            "n = 8, d = 2, eps_i from 0.05 to 2, lambda = 100: w_i = eps_i / sum eps (they sum to 1, not to mean "
            "eps); eta is Theorem 3.2's, with sqrt(d) (not d) and each record's own sensitivity 2 w_i (d B + "
            "sqrt(d)) / lambda (not an average record's), and without Theorem 3.4's bound B; theta_bar is the "
            "ridge at this lambda (a ridge at 1.1 lambda moves it)",
        ),
        V(
            D2,
            {"Lambda": 1.0},
            ("unnormalised-weights", "noise-formula"),
            "the same at lambda = 1, where B(lambda) = min(1/sqrt(lambda), sqrt(d)/lambda) = 1",
        ),
        V(D1, {"Lambda": 10.0}, ("unnormalised-weights", "understated-sensitivity"), "n = 10, d = 1, lambda = 10"),
        V(
            D3,
            {"Lambda": 1.0},
            ("noise-formula", "understated-sensitivity"),
            "n = 30, d = 3, lambda = 1: d and sqrt(d) differ by 1.7x",
        ),
        V(
            D2,
            {"Lambda": 0.3},
            ("understated-sensitivity", "noise-formula"),
            "lambda = 0.3 < 1: B(lambda) = min(1/sqrt(lambda), sqrt(d)/lambda) = 1.83, where min(1, sqrt(d)/lambda) "
            "= 1 gives a sensitivity (sqrt(d) B + 1) 1.48x too small",
        ),
        V(
            D2,
            {"Lambda": 0.0},
            ("input-not-refused",),
            "lambda = 0: eta = 0, no noise at all (Theorem 3.2 needs lambda > 0; found in the authors' code)",
            "invalid",
        ),
        V(D2, {"Lambda": -1.0}, ("input-not-refused",), "lambda = -1", "invalid"),
        V(
            D2.with_fields(values=bad_x),
            {"Lambda": 1.0},
            ("input-not-refused",),
            "a feature 1.5 outside [0, 1]^d (Theorem 3.2 assumes x in [0, 1]^d)",
            "invalid",
        ),
        V(
            D2.with_fields(labels=bad_y),
            {"Lambda": 1.0},
            ("input-not-refused",),
            "a label -2 outside [-1, 1]",
            "invalid",
        ),
    ]


def _pdp_reference():
    from userdp.properties.acharya2024 import REFERENCE

    return REFERENCE


_register(
    Design(
        "acharya2024.pdp-op",
        _pdp_reference,
        _spec_reference("acharya2024.pdp-op"),
        _plain_adapter,
        {s: ("Lambda",) for s in ("weights", "statistic", "sensitivity", "noise_scale")},
        ("weights", "statistic", "sensitivity", "noise_scale"),
        _pdp_cases,
        "replace record (the profile eps_i public)",
        "userdp.reference.acharya2024: weights (w_i = eps_i / sum eps), statistic (the weighted ridge theta_bar), "
        "sensitivity (each record's Delta_i, Theorem A.4), noise_scale (1 / eta, Theorem 3.2)",
        notes="The dataset's epsilons are the privacy profile eps_i (one per record, public); the labels are y.",
    )
)


# ================================================================== Krichene et al. 2023 (SSP)
def _ssp_graph(labels=(1.0, 1.0, 0.3, -0.4, -7.0), x0: float = 1.0) -> Any:
    """Records (task, user, x, y): (0, 0), (1, 0), (0, 1), (0, 2), (2, 3): user 0 has two tasks."""
    from userdp.reference.data import UserDataset

    return UserDataset(
        np.array([[x0], [x0], [0.5], [-0.2], [5.0]]),
        np.array([0, 0, 1, 2, 3]),
        labels=np.asarray(labels, float),
        task_ids=np.array([0, 1, 0, 0, 2]),
    )


def _ssp_generated(seed: int = 3) -> tuple:
    from userdp.reference.data import UserDataset

    g = np.random.default_rng(seed)
    tasks, users = [], []
    for j in range(12):
        mine = [0, 1] if j % 4 == 0 else ([0] if j % 4 in (1, 2) else [1])
        tasks += mine
        users += [j] * len(mine)
    t = np.array(tasks)
    D = UserDataset(
        np.round(1.2 * g.standard_normal((t.size, 2)), 4),
        np.array(users),
        labels=np.round(1.5 * g.standard_normal(t.size), 4),
        task_ids=t,
    )
    return D, {
        "m": 2,
        "n_counts": np.array([10.0, 7.0]),
        "n_users": 12,
        "beta": 1.0,
        "mu": 0.25,
        "Gamma_x": 1.5,
        "Gamma_star": 1.0,
    }


def _ssp_cases() -> list:
    G, gp = _ssp_generated()
    base = {
        "m": 3,
        "n_counts": np.array([4.0, 2.0, 1.0]),
        "n_users": 4,
        "beta": 0.5,
        "mu": 0.5,
        "Gamma_x": 1.0,
        "Gamma_star": 1.0,
    }
    twice = _ssp_graph()
    twice = twice.with_fields(
        values=np.vstack([twice.values, [[0.5]]]),
        user_ids=np.append(twice.user_ids, 1),
        labels=np.append(twice.labels, 0.5),
        task_ids=np.append(twice.task_ids, 0),
    )
    V = VectorCase
    return [
        V(
            _ssp_graph(),
            base,
            ("missing-clipping", "weight-formula", "data-dependent-choice"),
            "d = 1, m = 3, beta = mu = 1/2, public counts n = (4, 2, 1) (the graph's own are (3, 1, 1)): user 3, "
            "alone in task 2, has budget omega_2^2 = 2/3 > beta, so eq. (12) scales its weight by sqrt(beta / budget) "
            "(no clipping differs); user 0's sum omega^2 = 1/2 needs none, where a budget on sum omega (0.99) would "
            "clip it; user 3's label -7 and feature 5 are clipped to Gamma_x Gamma_* = 1 and Gamma_x = 1; the "
            "weights read the public n_i, not the data's counts",
        ),
        V(
            _ssp_graph(),
            {**base, "Gamma_x": 2.0, "Gamma_star": 2.0},
            ("noise-formula", "missing-clipping"),
            "the same graph with Gamma_x = Gamma_* = 2: the two noise scales (Gamma_x^2 on A, Gamma_x^2 Gamma_* on "
            "b) differ",
        ),
        V(
            G,
            gp,
            ("missing-clipping", "data-dependent-choice"),
            "d = 2, m = 2, 12 users (every fourth in both tasks), x ~ 1.2 N(0, I) and y ~ 1.5 N(0, 1), some beyond "
            "Gamma_x = 1.5 and Gamma_x Gamma_* = 1.5 (clipped in L2 and in absolute value), beta = 1, mu = 1/4, "
            "public counts (10, 7) against the data's (9, 6)",
        ),
        V(
            twice,
            base,
            ("input-not-refused",),
            "user 1 holds two records in task 0: Omega is a set of (task, user) pairs, and a second record doubles "
            "its weight, which the budget sum_i w_ij^2 does not count",
            "invalid",
        ),
    ]


def _ssp_reference():
    from userdp.properties.krichene2023 import REFERENCE

    return REFERENCE


def _ssp_adapter():
    from userdp.properties.krichene2023 import MultiTaskAdapter

    return MultiTaskAdapter


_SSP_KEYS = ("m", "n_counts", "n_users", "beta", "mu", "Gamma_x", "Gamma_star")
_register(
    Design(
        "krichene2023.ssp",
        _ssp_reference,
        _spec_reference("krichene2023.ssp"),
        _ssp_adapter,
        {
            "weights": ("m", "n_counts", "n_users", "beta", "mu"),
            "statistic": _SSP_KEYS,
            "sensitivity": ("beta", "Gamma_x", "Gamma_star"),
            "noise_scale": ("Gamma_x", "Gamma_star"),
        },
        ("weights", "statistic"),
        _ssp_cases,
        "add/remove user",
        "userdp.reference.krichene2023_weights.adaptive_weights (the mu-family from the public counts, eq. (12) "
        "clipping) and userdp.reference.krichene2023: statistic (A-bar_i, b-bar_i of Algorithm 1, clipped data), "
        "sensitivity, noise_scale",
        notes="The dataset's task_ids are the tasks i, user_ids the users j; values are x (n x d), labels y. The "
        "statistic is the pair (A-bar (m x d x d), b-bar (m x d)): an array of two differently shaped parts.",
    )
)


# ================================================================== Zhao et al. 2024 (HLM, WME)
def _hlm_users(kind: str, n: int, top: int, seed: int) -> Any:
    """n users with m_l = ceil(top / sqrt(l)) items: "het" items uniform on [-0.6, 0.6] around +0.3
    (users of >= 10 items) or -0.3 (the others); "d2" the same in d = 2."""
    from userdp.reference.data import UserDataset

    rng = np.random.default_rng(seed)
    m = np.ceil(top / np.sqrt(np.arange(1, n + 1))).astype(np.int64)
    ids = np.repeat(np.arange(n), m)
    big = (m >= 10)[ids]
    if kind == "het":
        x = np.where(big, 0.3, -0.3) + rng.uniform(-0.6, 0.6, ids.size)
    else:
        x = (rng.uniform(-1, 1, (ids.size, 2)) + np.where(big, 0.2, -0.2)[:, None] * np.array([1.0, 0.5])) / np.sqrt(2)
    return UserDataset(np.round(x, 4), ids)


def _hlm_cases() -> list:
    from userdp.reference.data import UserDataset

    p = {"epsilon": 3.0, "delta": 1e-5, "R": 1.0, "R_c": 1.0}
    crossing = UserDataset(np.zeros(65), np.arange(65))
    split = UserDataset(np.r_[np.zeros(50), np.full(49, 100.0)], np.arange(99))
    het, d2 = _hlm_users("het", 120, 40, 1), _hlm_users("d2", 80, 30, 3)
    V = VectorCase
    return [
        V(
            het,
            p,
            ("unnormalised-weights", "understated-sensitivity", "accounting", "data-dependent-choice"),
            "120 imbalanced users (40 items down to 4), heavy users centred at +0.3, light ones at -0.3, eps = 3, "
            "delta = 1e-5, R = R_c = 1: weights min(m_i, cap) normalised to sum 1, thresholds T_i = tau R / "
            "sqrt(m_i), the PTR distance shifting the margins as the minimiser moves, and noise scales at the "
            "split budget (eps/4 and delta/2 for the test) with kappa0 from the public counts",
        ),
        V(
            crossing,
            p,
            ("understated-sensitivity", "accounting"),
            "65 one-item users at 0: the PTR distance (16) sits just above the threshold (15.35)",
        ),
        V(
            split,
            p,
            ("data-dependent-refusal",),
            "50 one-item users at 0 and 49 at +100: every user is linear at the weighted-mean start, where a "
            "Newton solver capped at 100 steps stops above its certificate; the reference's certified solver "
            "answers (a release must not depend on whether a solver converged)",
        ),
        V(
            d2,
            p,
            ("unnormalised-weights", "understated-sensitivity"),
            "80 imbalanced users in d = 2 (the Huber loss on the L2 norm)",
        ),
        V(
            crossing,
            {**p, "epsilon": 0.0},
            ("input-not-refused",),
            "epsilon = 0: no budget for the test or the noise",
            "invalid",
        ),
        V(
            crossing,
            {**p, "delta": 0.0},
            ("input-not-refused",),
            "delta = 0: Gaussian noise and PTR need delta > 0",
            "invalid",
        ),
    ]


def _hlm_reference():
    from userdp.properties.zhao2024 import REFERENCE

    return REFERENCE


def _hlm_adapter():
    from userdp.properties.zhao2024 import HLMAdapter

    return HLMAdapter


_HLM = ("epsilon", "delta", "R", "R_c")
_register(
    Design(
        "zhao2024.hlm",
        _hlm_reference,
        _spec_reference("zhao2024.hlm"),
        _hlm_adapter,
        {s: _HLM for s in ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale")},
        ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale"),
        _hlm_cases,
        "replace user's items (the item counts m_i public)",
        "userdp.reference.zhao2024 (derived there: the poster gives no w_i, T_i or calibration): weights, "
        "thresholds, statistic (the Huber minimiser mu0), sensitivity (B), ptr_distance (gamma), noise_scale "
        "(sigma_pass, sigma_fallback, the threshold and the budget split)",
        notes="noise_scale is an object of named values; it is compared key by key. ptr_distance (gamma) counts "
        "the users whose margin at the solver's certified point reaches each threshold t_j = (j + 1) B + shift; "
        "in d >= 2 the shift includes rho0 = B (reference/zhao2024.py, items 3 and 5), so an implementation "
        "without it counts about one more there.",
    )
)


def _hlm_d3_cases() -> list:
    from userdp.reference.data import UserDataset

    p = {"epsilon": 3.0, "delta": 1e-5, "R": 1.0, "R_c": 1.0}
    rng = np.random.default_rng(9)
    m = np.ceil(30 / np.sqrt(np.arange(1, 81))).astype(np.int64)
    ids = np.repeat(np.arange(80), m)
    off = np.where((m >= 10)[ids], 1.0, -1.0)[:, None] * np.array([0.2, 0.1, 0.05])
    het = UserDataset(np.round((rng.uniform(-1, 1, (ids.size, 3)) + off) / np.sqrt(3), 4), ids)
    crossing = UserDataset(np.zeros((65, 3)), np.arange(65))
    split = UserDataset(np.r_[np.zeros(50), np.full(49, 100.0)][:, None] * np.ones(3), np.arange(99))
    V = VectorCase
    return [
        V(
            het,
            p,
            ("unnormalised-weights", "understated-sensitivity", "accounting"),
            "80 imbalanced users in d = 3 (30 items down to 4), heavy users offset along (0.2, 0.1, 0.05): the vector "
            "Huber loss on the L2 norm, B from max w_i T_i, and gamma with the thresholds shifted by e + rho0, "
            "rho0 = B in d >= 2 (an implementation without rho0 counts one more level)",
        ),
        V(
            crossing,
            p,
            ("understated-sensitivity", "accounting"),
            "65 one-item users at 0 in d = 3: every margin is T, so gamma counts the levels (j + 1) B + e + B below T",
        ),
        V(
            split,
            p,
            ("data-dependent-refusal",),
            "50 one-item users at 0 and 49 at +100 (1, 1, 1): every user is linear at the weighted-mean start, where "
            "a capped Newton solver stops above its certificate; the reference's guaranteed path answers",
        ),
        V(
            crossing,
            {**p, "epsilon": 0.0},
            ("input-not-refused",),
            "epsilon = 0: no budget for the test or the noise",
            "invalid",
        ),
        V(crossing, {**p, "R_c": -1.0}, ("input-not-refused",), "R_c = -1: the clipping radius must be > 0", "invalid"),
    ]


_register(
    Design(
        "zhao2024.hlm-d3",
        _hlm_reference,
        _spec_reference("zhao2024.hlm-d3"),
        _hlm_adapter,
        {s: _HLM for s in ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale")},
        ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale"),
        _hlm_d3_cases,
        "replace user's items (the item counts m_i public)",
        "userdp.reference.zhao2024 in d = 3: the same stages as zhao2024.hlm on vector items",
        notes="As zhao2024.hlm; in d = 3 the statistic is the certified point of the guaranteed solver (within e of "
        "the minimiser), and gamma's thresholds include rho0 = B.",
    )
)


def _global_cases() -> list:
    from userdp.reference.data import UserDataset

    def users(y, m):
        y, m = np.asarray(y, float), np.asarray(m, np.int64)
        ids = np.repeat(np.arange(m.size), m)
        return UserDataset(y[ids], ids)

    p = {"epsilon": 3.0, "delta": 1e-5, "R": 1.0, "R_c": 1.0, "support": 1.0}
    r = np.arange(1, 301, dtype=float) ** -2.0
    m = np.maximum(1, np.round(20 * r / r.mean())).astype(np.int64)
    rng = np.random.default_rng(5)
    imb = users(np.round(rng.uniform(-0.5, 0.5, m.size), 4), m)
    curv = users(np.r_[np.ones(20), -np.ones(3)], np.r_[np.ones(20, int), np.full(3, 2)])
    ids = np.repeat(np.arange(40), np.r_[np.ones(30, int), np.full(10, 3)])
    d2 = UserDataset(np.round(rng.uniform(-0.6, 0.6, (ids.size, 2)), 4), ids)
    V = VectorCase
    return [
        V(
            imb,
            p,
            ("understated-sensitivity", "unnormalised-weights"),
            "300 users at the poster's counts (gamma = 2: 1 to 1,300 items), averages uniform on [-0.5, 0.5], eps = "
            "3, delta = 1e-5, R = R_c = support = 1, theta chosen from the counts: equalised weights min(m_i, theta / "
            "min(T_i, rho)) normalised, kappa_G over the one-item users, S = 2c / kappa_G + 2e",
        ),
        V(
            curv,
            {**p, "theta": 1.0},
            ("understated-sensitivity",),
            "20 one-item users at +1 and 3 two-item users at -1, theta = 1: the two-item users (T = sqrt 2 < 2 rho) "
            "must not count in kappa_G; x_K is 0.79, where they are linear",
        ),
        V(
            curv,
            {**p, "theta": 1.0, "epsilon": 1.0},
            ("solver-error",),
            "the same at eps = 1: x_K within the public e of the exact minimiser (0.7878...)",
        ),
        V(
            d2,
            {**p, "R": 1.5},
            ("understated-sensitivity",),
            "40 users in d = 2 (30 one-item users, 10 of three items), R = 1.5: in d >= 2 the radii rho_s, rho_G "
            "exceed rho by (d + 8) u",
        ),
        V(curv, {**p, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0: no budget for the noise", "invalid"),
        V(
            users([0.2, -0.3, 0.1], [2, 3, 4]),
            p,
            ("input-not-refused",),
            "no one-item user (every T_i < 2 rho): no guaranteed curvature, refused from the counts",
            "invalid",
        ),
    ]


def _global_reference():
    from userdp.properties.zhao2024 import REFERENCE_GLOBAL

    return REFERENCE_GLOBAL


_GLOBAL = ("epsilon", "delta", "R", "R_c", "support", "theta")
_register(
    Design(
        "zhao2024.hlm-global",
        _global_reference,
        _spec_reference("zhao2024.hlm-global"),
        _hlm_adapter,
        {s: _GLOBAL for s in ("weights", "thresholds", "statistic", "sensitivity", "noise_scale")},
        ("weights", "thresholds", "statistic", "sensitivity", "noise_scale"),
        _global_cases,
        "replace user's items (the item counts m_i public)",
        'userdp.reference.zhao2024_calibration, calibration "global" (G1-G5): equalised_weights, thresholds, the '
        "statistic x_K (K public projected-gradient steps), sensitivity S, noise_scale (sigma at the whole budget, "
        "Delta, e, kappa_G, rho_G)",
        notes="theta (the weights' cap) is chosen from the public counts when a vector does not give it; the "
        "statistic is x_K, within the public e of the exact minimiser, so an exact solver differs from it by up "
        "to e.",
    )
)


def _wme_users(values, m: int = 50) -> Any:
    from userdp.reference.data import UserDataset

    values = np.asarray(values, float)
    return UserDataset(np.repeat(values, m), np.repeat(np.arange(values.size), m))


def _wme_cases() -> list:
    from userdp.reference.data import UserDataset

    p = {"epsilon": 3.0, "delta": 1e-5, "R": 1.0}
    rng = np.random.default_rng(11)
    m = 20 + np.ceil(200 / np.arange(1, 61)).astype(np.int64)
    ids = np.repeat(np.arange(60), m)
    x = np.clip(rng.uniform(-0.3, 0.3, 60)[ids] + rng.uniform(-0.7, 0.7, ids.size), -1, 1)
    gen = UserDataset(np.round(x, 4), ids)
    V = VectorCase
    return [
        V(
            _wme_users(np.r_[np.full(11, -0.9), np.full(10, 0.9)]),
            p,
            ("accounting",),
            "11 users at -0.9 R and 10 at +0.9 R, 50 items each, eps = 3, delta = 1e-5: the two stages' budgets "
            "(eps/2, delta/2 each) and noise scales",
        ),
        V(gen, {**p, "epsilon": 1.0}, ("accounting",), "60 imbalanced users (220 down to 24 items), eps = 1"),
        V(
            _wme_users([0.0, 2.0]),
            p,
            ("input-not-refused",),
            "an item at 2 R, outside the declared support [-R, R]",
            "invalid",
        ),
        V(_wme_users(np.zeros(5)), {**p, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
    ]


def _wme_reference():
    from userdp.properties.zhao2024_wme import REFERENCE

    return REFERENCE


_register(
    Design(
        "zhao2024.wme",
        _wme_reference,
        _spec_reference("zhao2024.wme"),
        _plain_adapter,
        {"sensitivity": ("epsilon", "delta", "R"), "noise_scale": ("epsilon", "delta", "R")},
        ("sensitivity", "noise_scale"),
        _wme_cases,
        "replace user's items",
        "userdp.reference.zhao2024_wme (Levy et al. 2021's WME): sensitivity (the two stages' sensitivities), "
        "noise_scale (their budgets and Gaussian scales)",
        notes="WME's statistic is a mixture over the noisy argmax, so there is no noise-free statistic stage; "
        "validate compares its releases.",
    )
)


# ================================================================== the algorithms validate added
# (the private cap, the PDP-OP baselines, the ERM releases, sample-limited OLS, noisy GD)
def _released_by(algorithm: str, adapter):
    """``adapter`` with the validated reference release as its mechanism (the vectors' invalid inputs
    must be refused by it, the valid ones released)."""
    import dataclasses

    return dataclasses.replace(adapter, mechanism=_spec_reference(algorithm)())


def _cap_cases() -> list:
    from userdp.reference.data import UserDataset

    six = UserDataset.from_user_lists([[0.9, 0.8, 0.5, 0.4], [0.7, 0.6], [0.3], [0.2, 0.6, 0.1], [1.0], [0.5]])
    ten = UserDataset.from_user_lists([[0.1 * (k + 1), 0.03 * k] for k in range(10)])  # totals 0.1, 0.23, .., 1.27
    neg = UserDataset.from_user_lists([[0.5, -0.25], [1.0]])
    p = {"epsilon_cap": 0.5, "epsilon_sum": 1.0, "U": 3.0}
    V = VectorCase
    return [
        V(
            six,
            p,
            ("sub-optimal-parameter",),
            "six users, totals 0.3 to 2.6, eps_sum = 1: the exponential mechanism aims at the k = ceil(1/eps_sum) = "
            "1st largest total, 2.6 (not the 2nd, 1.3)",
        ),
        V(
            ten,
            {"epsilon_cap": 1.0, "epsilon_sum": 0.35, "U": 2.0},
            ("sub-optimal-parameter",),
            "ten users, distinct totals 0.1 to 1.27, eps_sum = 0.35: k = ceil(1/0.35) = 3, the 3rd largest total "
            "1.01 (an interpolated 1 - 1/(m eps) quantile gives 0.94, the 4th largest 0.88)",
        ),
        V(
            _users([0.25]),
            {"epsilon_cap": 1.0, "epsilon_sum": 0.5, "U": 1.0},
            (),
            "one user, eps_sum = 1/2: k = 2 > m, the target is 0 (every total is above it)",
        ),
        V(
            six,
            {**p, "epsilon_cap": 0.0},
            ("input-not-refused",),
            "epsilon_cap = 0: a cap drawn uniformly, unpaid",
            "invalid",
        ),
        V(six, {**p, "epsilon_sum": 0.0}, ("input-not-refused",), "epsilon_sum = 0: Laplace scale T / 0", "invalid"),
        V(six, {**p, "U": -1.0}, ("input-not-refused",), "U = -1: an empty range [0, U] for the cap", "invalid"),
        V(neg, p, ("input-not-refused",), "a negative record value: §3 sums non-negative contributions", "invalid"),
    ]


def _cap_reference():
    from userdp.properties.amin2019 import CapAdapter
    from userdp.reference import amin2019 as A

    return _released_by(
        "amin2019.capped-sum-private-cap",
        CapAdapter(
            "amin2019.capped-sum-private-cap (reference stages)",
            optimal_cap=lambda D, *, epsilon_sum: A.optimal_cap_nonprivate(D, epsilon_sum),
        ),
    )


_register(
    Design(
        "amin2019.capped-sum-private-cap",
        _cap_reference,
        _spec_reference("amin2019.capped-sum-private-cap"),
        _amin_adapter,
        {"optimal_cap": ("epsilon_sum",)},
        ("optimal_cap",),
        _cap_cases,
        "add/remove user",
        "userdp.reference.amin2019: optimal_cap_nonprivate at eps_sum (eq. 6: the ceil(1/eps_sum)-th largest user "
        "total), the quantile that private_cap's exponential mechanism aims at",
        notes="The release (T, g_T + Lap(T / eps_sum)) is random in T, so its only noise-free stage is the target "
        "of the exponential mechanism, optimal_cap(dataset, epsilon_sum); validate compares the releases as "
        "distributions.",
    )
)


def _pdp_d2_cases() -> list:
    return [c for c in _pdp_cases() if c.result == "invalid" or np.ndim(c.dataset.values) == 2]


_register(
    Design(
        "acharya2024.pdp-op-d2",
        _pdp_reference,
        _spec_reference("acharya2024.pdp-op-d2"),
        _plain_adapter,
        {s: ("Lambda",) for s in ("weights", "statistic", "sensitivity", "noise_scale")},
        ("weights", "statistic", "sensitivity", "noise_scale"),
        _pdp_d2_cases,
        "replace record (the profile eps_i public)",
        "userdp.reference.acharya2024 (the same algorithm as acharya2024.pdp-op, audited in d = 2 first): weights, "
        "statistic, sensitivity, noise_scale (1 / eta, Theorem 3.2)",
        notes="The vectors of acharya2024.pdp-op with d >= 2.",
    )
)


def _np_cases() -> list:
    D2, D3 = _pdp_data(8, 2, 1), _pdp_data(30, 3, 5)
    flat = _pdp_data(6, 2, 4, profile=np.full(6, 0.7))
    V = VectorCase
    bad_x = np.array(D2.values)
    bad_x[0, 0] = 1.5
    return [
        V(
            D2,
            {"Lambda": 100.0},
            ("accounting", "weight-formula"),
            "n = 8, d = 2, eps_i from 0.28 to 1.94 (min 0.28, mean 1.02), lambda = 100: uniform weights 1/n "
            "(not eps_i / sum eps) and eta at n min eps (not n mean eps)",
        ),
        V(D3, {"Lambda": 1.0}, ("accounting", "weight-formula"), "n = 30, d = 3, lambda = 1"),
        V(flat, {"Lambda": 3.0}, (), "a flat profile (every eps_i = 0.7): the baseline is PDP-OP itself"),
        V(D2, {"Lambda": 0.0}, ("input-not-refused",), "lambda = 0: eta = 0, no noise", "invalid"),
        V(
            D2.with_fields(values=bad_x),
            {"Lambda": 1.0},
            ("input-not-refused",),
            "a feature 1.5 outside [0, 1]^d",
            "invalid",
        ),
    ]


def _np_reference():
    from userdp.properties.acharya2024 import REFERENCE_NONPERSONALIZED

    return REFERENCE_NONPERSONALIZED


_register(
    Design(
        "acharya2024.nonpersonalized",
        _np_reference,
        _spec_reference("acharya2024.nonpersonalized"),
        _plain_adapter,
        {"statistic": ("Lambda",), "noise_scale": ("Lambda",)},
        ("statistic", "noise_scale"),
        _np_cases,
        "replace record (the profile eps_i public)",
        "userdp.reference.acharya2024: statistic and noise_scale of PDP-OP on the flat profile min eps "
        "(nonpersonalized_epsilons): the ridge with weights 1/n, and 1 / eta at n min eps",
        notes="The dataset's epsilons are the personalized profile; the baseline reads only its minimum.",
    )
)


def _jorgensen_bind(threshold: str):
    """The suite's Jorgensen stages take the threshold t; the algorithm fixes t = max (or mean) eps."""

    def bind(adapter):
        from userdp.properties.adapter import Adapter
        from userdp.reference import acharya2024 as A

        w = adapter.weights
        return Adapter(
            f"{adapter.name} (t = {threshold} eps)",
            weights=None
            if w is None
            else (lambda D, *, Lambda: w(D, Lambda=Lambda, threshold=A.jorgensen_threshold(D, threshold))),
        )

    return bind


def _jorgensen_cases(threshold: str):
    def cases() -> list:
        D2, D1 = _pdp_data(8, 2, 1), _pdp_data(10, 1, 2)
        g = np.random.default_rng(41)
        groups = 2 * np.r_[np.round(g.uniform(0.01, 0.2, 4), 3), np.round(g.uniform(0.2, 1.0, 5), 3), np.ones(3)]
        D3 = _pdp_data(12, 2, 6, profile=groups)
        V = VectorCase
        bad_y = np.array(D2.labels)
        bad_y[1] = -2.0
        return [
            V(
                D2,
                {"Lambda": 100.0},
                ("accounting",),
                f"n = 8, eps_i from 0.28 to 1.94, t = {threshold} eps: p_i = min(1, (e^eps_i - 1) / (e^t - 1)) (not "
                "eps_i / t, not e^(eps_i - t), not 1 for every record)",
            ),
            V(
                D3,
                {"Lambda": 10.0},
                ("accounting",),
                "12 records, the three-group profile (eps 0.07 to 2): probabilities from "
                f"{'0.011' if threshold == 'max' else '0.035'} to 1",
            ),
            V(D1, {"Lambda": 1.0}, ("accounting",), "n = 10, d = 1"),
            V(D2, {"Lambda": 0.0}, ("input-not-refused",), "lambda = 0: no noise on the kept records", "invalid"),
            V(
                D2.with_fields(labels=bad_y),
                {"Lambda": 1.0},
                ("input-not-refused",),
                "a label -2 outside [-1, 1]",
                "invalid",
            ),
        ]

    return cases


def _jorgensen_reference(threshold: str):
    def get():
        from userdp.properties.acharya2024 import REFERENCE_JORGENSEN

        return _released_by(f"acharya2024.jorgensen-{threshold}", _jorgensen_bind(threshold)(REFERENCE_JORGENSEN))

    return get


for _t in ("max", "mean"):
    _register(
        Design(
            f"acharya2024.jorgensen-{_t}",
            _jorgensen_reference(_t),
            _spec_reference(f"acharya2024.jorgensen-{_t}"),
            _plain_adapter,
            {"weights": ("Lambda",)},
            ("weights",),
            _jorgensen_cases(_t),
            "replace record (the profile eps_i public)",
            f"userdp.reference.acharya2024: jorgensen_probabilities at t = jorgensen_threshold(dataset, {_t!r}) (the "
            "weights stage: each record's sampling probability)",
            notes="The release subsamples records, so its only noise-free stage is the sampling probabilities p_i "
            '("weights"); validate compares the releases as distributions.',
            bind=_jorgensen_bind(_t),
        )
    )


# ------------------------------------------------------------------ Amin et al. 2019 Algorithm 1 (ERM)
def _erm_features(seed: int, n: int, d: int) -> np.ndarray:
    g = np.random.default_rng(seed)
    X = g.normal(size=(n, d))
    return np.round(X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None] * g.uniform(0.3, 0.99, (n, 1)), 4)


def _amin_erm_cases(loss: str):
    def cases() -> list:
        from userdp.reference.data import UserDataset

        heavy = np.r_[np.zeros(4, dtype=int), np.arange(1, 5)]
        X = np.tile([1.0, 0.0], (8, 1)) if loss == "logistic" else np.tile([0.8, 0.0], (8, 1))
        y = np.r_[-np.ones(4), np.ones(4)] if loss == "logistic" else np.r_[np.full(4, -0.9), np.full(4, 0.6)]
        D = UserDataset(X, heavy, labels=y)
        ids = np.repeat(np.arange(6), [5, 3, 2, 1, 1, 1])
        g = np.random.default_rng(7)
        lab = np.where(g.random(13) < 0.6, 1.0, -1.0) if loss == "logistic" else np.round(g.uniform(-1, 1, 13), 3)
        G = UserDataset(_erm_features(7, 13, 3), ids, labels=lab)
        base = {"epsilon": 1.0, "tau": 2, "Lambda": 10.0, "n_min": 8}
        V = VectorCase
        out = [
            V(
                D,
                base,
                ("per-record-bound", "data-dependent-choice", "missing-clipping", "biased-estimate"),
                "user 0 holds 4 records (the first), 4 single-record users, d = 2, tau = 2, Lambda = 10, n_min = 8: "
                "the first tau records of EACH user are kept (6, not the first tau m = 10 records overall, not all "
                "8), weights 1 / max(n_tau, n_min) = 1/8 from the public n_min (not the data's n_tau = 6), "
                "Delta_2 = (L / Lambda) max(2 tau / (n_min + tau), tau / n_min) (not the record-level 2 L / (n_min "
                "Lambda)); theta-hat minimises sum_i w_i l_i + (Lambda / 2) ||theta||^2 (the 1/2 counts)",
            ),
            V(
                G,
                {"epsilon": 2.0, "tau": 3, "Lambda": 2.0, "n_min": 4},
                ("per-record-bound", "understated-sensitivity"),
                "6 users of 5, 3, 2, 1, 1, 1 records, d = 3, tau = 3, Lambda = 2, n_min = 4 < n_tau = 11",
            ),
            V(
                D,
                {**base, "tau": 1, "n_min": 2, "Lambda": 4.0},
                ("understated-sensitivity", "noise-formula"),
                "tau = 1, n_min = 2, Lambda = 4: one record per user",
            ),
            V(D, {**base, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
            V(
                D,
                {**base, "Lambda": 0.0},
                ("input-not-refused",),
                "Lambda = 0: no strong convexity, no sensitivity bound",
                "invalid",
            ),
            V(D, {**base, "tau": 0}, ("input-not-refused",), "tau = 0: no record kept", "invalid"),
            V(
                D.with_fields(values=3 * D.values),
                base,
                ("input-not-refused",),
                "features of norm 3 (||x|| <= 1)",
                "invalid",
            ),
            V(
                D.with_fields(labels=np.where(np.arange(8) == 0, 0.5 if loss == "logistic" else 3.0, D.labels)),
                base,
                ("input-not-refused",),
                "a label " + ("0.5 (logistic labels are -1 or +1)" if loss == "logistic" else "3 outside [-1, 1]"),
                "invalid",
            ),
        ]
        return out

    return cases


def _amin_erm_reference(loss: str):
    def get():
        from userdp.properties.adapter import Adapter
        from userdp.reference import amin2019_erm as A

        name = "amin2019.erm-output-perturbation" + ("-ridge" if loss == "ridge" else "")
        return _released_by(
            name,
            Adapter(
                f"amin2019 ERM output perturbation, {loss} (reference stages)",
                weights=lambda D, *, tau, n_min: A.weights(D, tau, n_min),
                statistic=lambda D, *, tau, Lambda, n_min: A.statistic(
                    D, tau=tau, Lambda=Lambda, n_min=n_min, loss=loss
                ),
                sensitivity=lambda *, tau, Lambda, n_min: A.sensitivity(tau=tau, Lambda=Lambda, n_min=n_min, loss=loss),
                noise_scale=lambda D, *, epsilon, tau, Lambda, n_min: A.noise_scale(
                    epsilon=epsilon, tau=tau, Lambda=Lambda, n_min=n_min, loss=loss
                ),
            ),
        )

    return get


for _loss, _name in (
    ("logistic", "amin2019.erm-output-perturbation"),
    ("ridge", "amin2019.erm-output-perturbation-ridge"),
):
    _register(
        Design(
            _name,
            _amin_erm_reference(_loss),
            _spec_reference(_name),
            _plain_adapter,
            {
                "weights": ("tau", "n_min"),
                "statistic": ("tau", "Lambda", "n_min"),
                "sensitivity": ("tau", "Lambda", "n_min"),
                "noise_scale": ("epsilon", "tau", "Lambda", "n_min"),
            },
            ("weights", "statistic", "noise_scale"),
            _amin_erm_cases(_loss),
            "add/remove user",
            f"userdp.reference.amin2019_erm ({_loss} loss, R = Y = 1): weights (1 / max(n_tau, n_min) on each user's "
            "first tau records), statistic (the minimiser theta-hat), sensitivity (Delta_2), noise_scale "
            "(Delta_2 / eps)",
            notes="theta-hat is the exact minimiser (the reference's is certified to 1e-9 Delta_2; solve to a gradient "
            "norm below 1e-10). The reference's sensitivity is Delta_2 (1 + 2e-9), the slack for that solver "
            "error; on these vectors Delta_2 < 1, so an exact Delta_2 is within the tolerance.",
        )
    )


# ------------------------------------------------------------------ Epasto et al. 2020 Algorithm 2 (noisy GD)
def _c_of(D, epsilon):
    """Lemma 3's weights at Claim 1's h* for B = 1, sigma = 1/2 (what epasto2020.weighted-erm fixes)."""
    from userdp.reference import epasto2020 as W

    return W.optimal_weights(D, epsilon, 1.0)[0]


def _weighted_erm_bind(adapter):
    """The suite's stages take Algorithm 2's weights c; the validated algorithm fixes c = ``_c_of``."""
    from userdp.properties.adapter import Adapter

    def opt(f, g):
        return None if f is None else g

    w, s, n = adapter.weights, adapter.sensitivity, adapter.noise_scale
    return Adapter(
        f"{adapter.name} (c = Lemma 3 at h*)",
        weights=opt(w, lambda D, *, epsilon: w(D, _c_of(D, epsilon))),
        sensitivity=opt(s, lambda D, *, epsilon: s(D, _c_of(D, epsilon))),
        noise_scale=opt(n, lambda D, *, epsilon, delta, T: n(D, _c_of(D, epsilon), epsilon=epsilon, delta=delta, T=T)),
    )


def _weighted_erm_cases() -> list:
    from userdp.reference.data import UserDataset

    sizes = np.array([6, 3, 2, 1, 1, 1, 1, 1])
    n = int(sizes.sum())
    D = UserDataset(
        np.tile([1.0, 0.0], (n, 1)),
        np.repeat(np.arange(sizes.size), sizes),
        labels=np.where(np.arange(n) % 2 == 0, 1.0, -1.0),
    )
    s3 = np.array([5, 4, 3, 2, 1, 1, 1, 1, 1, 1])
    g = np.random.default_rng(20)
    D3 = UserDataset(
        _erm_features(20, int(s3.sum()), 3),
        np.repeat(np.arange(10), s3),
        labels=np.where(g.random(s3.sum()) < 0.5, 1.0, -1.0),
    )
    V = VectorCase
    p = {"epsilon": 1.0, "delta": 1e-5, "T": 4}
    return [
        V(
            D,
            p,
            ("understated-sensitivity", "accounting", "sub-optimal-parameter", "noise-formula"),
            "8 users of 6, 3, 2 and 1 records, eps = 1, delta = 1e-5, T = 4: c is Lemma 3's at h* (not uniform), "
            "Delta_2 = 2 L max_l sum_{S_l} c_i (the heaviest user, not the mean), and sigma keeps all T = 4 steps "
            "(eps, delta)-DP (not one step's)",
        ),
        V(
            D3,
            {"epsilon": 2.0, "delta": 1e-6, "T": 8},
            ("understated-sensitivity", "accounting"),
            "10 users of 5 down to 1 records, d = 3, eps = 2, delta = 1e-6, T = 8",
        ),
        V(D, {**p, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
        V(D, {**p, "delta": 0.0}, ("input-not-refused",), "delta = 0: Gaussian noise needs delta > 0", "invalid"),
        V(D, {**p, "T": 0}, ("input-not-refused",), "T = 0 steps", "invalid"),
        V(
            D.with_fields(labels=np.where(np.arange(n) == 0, 0.3, D.labels)),
            p,
            ("input-not-refused",),
            "a label 0.3 (logistic labels are -1 or +1)",
            "invalid",
        ),
    ]


def _weighted_erm_reference():
    from userdp.properties.epasto2020_erm import epasto_reference

    return _released_by("epasto2020.weighted-erm", _weighted_erm_bind(epasto_reference()))


_register(
    Design(
        "epasto2020.weighted-erm",
        _weighted_erm_reference,
        _spec_reference("epasto2020.weighted-erm"),
        _plain_adapter,
        {"weights": ("epsilon",), "sensitivity": ("epsilon",), "noise_scale": ("epsilon", "delta", "T")},
        ("weights", "sensitivity", "noise_scale"),
        _weighted_erm_cases,
        "replace user (S_l public)",
        "userdp.reference.epasto2020 optimal_weights (c: Lemma 3 at Claim 1's h* for B = 1, sigma = 1/2) and "
        "userdp.reference.epasto2020_erm: sensitivity (Delta_2 = 2 L max_l sum_{S_l} c_i), noise_scale (sigma = z "
        "Delta_2, z from the RDP accounting of T Gaussian steps)",
        notes="The release averages projected noisy GD iterates, so the noise-free stages are the inputs of the "
        "descent: the weights c, the per-step sensitivity and the per-step noise sd; validate compares the "
        "releases as distributions.",
        bind=_weighted_erm_bind,
    )
)


# ------------------------------------------------------------------ Epasto et al. 2020 §5.2 (sample-limited OLS)
def _sl_ols_stage(name: str):
    def stage(D, *, h, B, epsilon=None):
        from userdp.audits.validation.epasto2020_gwa import _sl_C
        from userdp.reference import epasto2020_gwa as G

        C = _sl_C(D, h)
        if name == "statistic":
            return G.statistic(D, C, B)
        return G.sensitivity(D, C, B) if name == "sensitivity" else G.noise_scale(D, C, B, epsilon)

    return stage


def _sl_ols_reference():
    from userdp.properties.adapter import Adapter

    return _released_by(
        "epasto2020.sample-limited-ols",
        Adapter(
            "epasto2020.sample-limited-ols (reference stages)",
            statistic=_sl_ols_stage("statistic"),
            sensitivity=_sl_ols_stage("sensitivity"),
            noise_scale=_sl_ols_stage("noise_scale"),
        ),
    )


def _sl_ols_cases() -> list:
    from userdp.reference.data import UserDataset

    sizes = np.array([5, 3, 2, 1, 1, 1, 1])
    ids = np.repeat(np.arange(sizes.size), sizes)
    X0 = np.array([[1.0, 0.2], [0.8, -0.5], [0.1, 1.0], [-0.3, 0.9], [1.0, 1.0], [0.5, -1.0], [-1.0, 0.3]])
    y0 = np.array([0.9, 0.2, 0.6, 0.4, 0.8, 0.1, 0.5])
    D = UserDataset(X0[ids], ids, labels=y0[ids])  # identical records within each user
    V = VectorCase
    big = np.where(ids == 0, 2.0, D.labels)
    note = " (records identical within each user: §5.2 lets an implementation keep any min(h, s_l) of them)"
    return [
        V(
            D,
            {"h": 2, "B": 1.0, "epsilon": 1.0},
            ("per-record-bound", "noise-formula", "sub-optimal-parameter"),
            "7 users of 5, 3, 2 and 1 records, d = 2, h = 2, B = 1, eps = 1: b = B max_l sum_j sum_{i in S_l} |c^s_ji| "
            "sums the user's kept records (not one record), over both rows (not §3.2's 1-D B h / n_h), and the "
            "statistic is OLS on the kept records (not on all)" + note,
        ),
        V(
            D,
            {"h": 3, "B": 1.0, "epsilon": 4.0},
            ("per-record-bound", "sub-optimal-parameter"),
            "the same at h = 3, eps = 4" + note,
        ),
        V(D, {"h": 2, "B": 1.0, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
        V(D, {"h": 0, "B": 1.0, "epsilon": 1.0}, ("input-not-refused",), "h = 0: no record kept", "invalid"),
        V(
            D.with_fields(labels=big),
            {"h": 2, "B": 1.0, "epsilon": 1.0},
            ("input-not-refused",),
            "user 0's labels at 2B, outside [0, B]",
            "invalid",
        ),
    ]


_register(
    Design(
        "epasto2020.sample-limited-ols",
        _sl_ols_reference,
        _spec_reference("epasto2020.sample-limited-ols"),
        _plain_adapter,
        {"statistic": ("h", "B"), "sensitivity": ("h", "B"), "noise_scale": ("h", "B", "epsilon")},
        ("statistic", "sensitivity", "noise_scale"),
        _sl_ols_cases,
        "replace user's labels (features public)",
        "userdp.reference.epasto2020_gwa: sample_limited_C (C^s, OLS on min(h, s_l) records of each user), statistic "
        "(C^s y), sensitivity (B max_l sum_j sum_{i in S_l} |c^s_ji|), noise_scale",
        notes="No weights stage: which min(h, s_l) records of a user are kept is the implementation's (label-"
        "independent) choice, so C^s is not unique; the vectors hold records identical within each user, "
        "where the statistic and b are.",
    )
)


# ------------------------------------------------------------------ Krichene et al. 2023 Algorithm 2 (noisy GD)
def _gd_cases() -> list:
    base = {
        "m": 3,
        "n_counts": np.array([4.0, 2.0, 1.0]),
        "n_users": 4,
        "beta": 0.5,
        "mu": 0.5,
        "Gamma": 1.0,
        "Lambda": 0.0,
        "eta": 0.01,
        "T": 4,
        "radius": 1e3,
    }
    G, gp = _ssp_generated()
    gp = {k: v for k, v in gp.items() if k not in ("Gamma_x", "Gamma_star")}
    gp.update(Gamma=2.0, Lambda=0.5, eta=0.3, T=6, radius=0.5)
    V = VectorCase
    return [
        V(
            _ssp_graph(),
            base,
            ("missing-clipping", "weight-formula", "data-dependent-choice", "noise-formula"),
            "d = 1, m = 3, beta = mu = 1/2, public counts n = (4, 2, 1) (the graph's own are (3, 1, 1)): user 3, "
            "alone in task 2, has budget omega_2^2 = 2/3 > beta, so eq. (12) scales its weight; user 0's sum "
            "omega^2 = 1/2 needs none (a budget on sum omega would clip it); the weights read the public n_i; "
            "T = 4 steps: the per-step noise sd is Gamma sqrt(T/2) = sqrt(2) Gamma (not Gamma)",
        ),
        V(
            G,
            gp,
            ("data-dependent-choice", "noise-formula"),
            "d = 2, m = 2, 12 users, beta = 1, mu = 1/4, public counts (10, 7) against the data's (9, 6), Gamma = 2, "
            "T = 6: sd 2 sqrt(3)",
        ),
        V(_ssp_graph(), {**base, "beta": 0.0}, ("input-not-refused",), "beta = 0: every weight 0", "invalid"),
        V(
            _ssp_graph(),
            {**base, "Gamma": 0.0},
            ("input-not-refused",),
            "Gamma = 0: gradients clipped to 0, no noise",
            "invalid",
        ),
        V(_ssp_graph(), {**base, "eta": -0.1}, ("input-not-refused",), "a negative step", "invalid"),
        V(_ssp_graph(), {**base, "T": 0}, ("input-not-refused",), "T = 0 steps", "invalid"),
    ]


def _gd_reference():
    from userdp.properties.krichene2023 import REFERENCE

    return _released_by("krichene2023.noisy-gd", REFERENCE)


_register(
    Design(
        "krichene2023.noisy-gd",
        _gd_reference,
        _spec_reference("krichene2023.noisy-gd"),
        _ssp_adapter,
        {"weights": ("m", "n_counts", "n_users", "beta", "mu"), "gd_noise_scale": ("Gamma", "T")},
        ("weights",),
        _gd_cases,
        "add/remove user",
        "userdp.reference.krichene2023_weights.adaptive_weights (the mu-family from the public counts, eq. (12) "
        "clipping) and userdp.reference.krichene2023.gd_noise_scale (Algorithm 2 line 6: Gamma sqrt(T / 2))",
        notes="The release is T projected noisy gradient steps, so the noise-free stages are the weights and the "
        "per-step noise sd; the gradient depends on the iterate and is not pinned here (validate compares "
        "the releases as distributions).",
    )
)
