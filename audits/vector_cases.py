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
    planted: tuple = ()           # ids "<tests/planted module>/<bug name>"
    corpus: tuple = ()            # tests/corpus ids


BUG_CLASSES: dict[str, BugClass] = {
    "per-record-bound": BugClass(
        "A contribution bound (a cap, a weight budget, a sensitivity) applied to each record where the paper "
        "bounds each user's total: a user with s records moves the release up to s times more than the noise "
        "covers.",
        planted=("amin2019/cap-per-record", "epasto2020/cap-per-record", "epasto2020/sample-limiting-record-sensitivity",
                 "epasto2020_gwa/gwa-b-per-record-max", "erm/amin.tau-per-record", "erm/amin.record-level-sensitivity"),
        corpus=("amin2019/per-record-cap", "amin2019/staged-per-record-cap", "epasto2020/wa-record-weight-noise",
                "epasto2020/gwa-record-max-noise", "epasto2020/sl-record-level-noise")),
    "understated-sensitivity": BugClass(
        "A sensitivity formula that under-counts: the average user instead of the worst, one coordinate or row "
        "instead of all, signed sums that cancel, a factor 2 or a sqrt(m_i) dropped, a distance or utility whose "
        "own sensitivity is larger than assumed.",
        planted=("amin2019/half-sensitivity", "amin2019/em-no-half", "epasto2020/mean-user-weight-sensitivity",
                 "epasto2020/laplace-scale-uses-n", "epasto2020_gwa/gwa-b-single-row", "epasto2020_gwa/gwa-b-signed-sum",
                 "epasto2020_gwa/gwac-b-single-row", "acharya2024/average-record-sensitivity",
                 "erm/epasto.mean-user-weight", "krichene2023/lambda-inside-the-sum",
                 "zhao2024/threshold-not-scaled-with-m", "zhao2024/ptr-distance-without-movement",
                 "zhao2024/global-curvature-from-radius", "zhao2024/global-no-sign-flip"),
        corpus=("amin2019/half-scale", "epasto2020/wa-mean-user-weight-noise", "epasto2020/gwa-row-max-noise",
                "zhao2024/hlm-one-user-sensitivity", "zhao2024/hlm-staged-one-user-sensitivity",
                "zhao2024/wme-bin-width-noise", "zhao2024/hlm-d3-one-user-sensitivity",
                "zhao2024/global-no-sign-flip")),
    "noise-formula": BugClass(
        "The noise scale's formula mistranscribed: a scale read as a rate (Delta * eps), d where sqrt(d) "
        "belongs, a factor 2 or Gamma_* lost, two scales swapped, a formula copied from another section.",
        planted=("epasto2020/laplace-scale-times-eps", "epasto2020_gwa/sl-ols-one-dimensional-scale",
                 "acharya2024/eta-d-for-sqrt-d", "krichene2023/gd-sigma-gamma", "krichene2023/b-noise-without-gamma-star"),
        corpus=("acharya2024/eta-without-sqrt-d", "acharya2024/eta-missing-two", "krichene2023/swapped-sigmas",
                "krichene2023/sigma-gamma-x")),
    "noise-distribution": BugClass(
        "Noise from the wrong distribution, or a parameter of the right one in the wrong convention (numpy's "
        "Gamma scale where the paper gives a rate; Gaussian where Laplace-type noise is needed).",
        planted=("acharya2024/gamma-scale-eta",),
        corpus=("acharya2024/gaussian-noise",)),
    "unnormalised-weights": BugClass(
        "The estimator's normalisation broken: weights that do not sum to 1 (a wrong normaliser, a sum over "
        "records instead of users, eps_i / n), or a regression C with C X != I; the estimate is biased.",
        planted=("epasto2020/weights-not-normalised", "epasto2020_gwa/gwa-ridge-C", "acharya2024/weights-eps-over-n",
                 "zhao2024/weights-not-normalised"),
        corpus=("acharya2024/unnormalised-weights", "acharya2024/staged-unnormalised-weights",
                "epasto2020/wa-unnormalised-weights", "zhao2024/hlm-unnormalised-weights",
                "zhao2024/hlm-staged-inverse-count-weights", "zhao2024/hlm-d3-unnormalised-weights")),
    "weight-formula": BugClass(
        "Weights by another formula than the paper's: a per-user weight not split over the user's records, a "
        "budget on sum w instead of sum w^2, per-user renormalisation where the paper clips.",
        planted=("epasto2020/lemma3-weight-not-split", "krichene2023/budget-w-not-w-squared",
                 "erm/epasto.per-user-renormalised-weights"),
        corpus=("krichene2023/per-user-normalised",)),
    "missing-clipping": BugClass(
        "A clip the privacy argument needs is skipped or applied in the wrong place: weights not clipped to "
        "the budget (eq. 12), labels not clipped to their bound, the sum clipped instead of each term, the "
        "noisy release clipped instead of the estimate.",
        planted=("krichene2023/eq12-clipping-skipped", "krichene2023/unclipped-labels-unit-bound",
                 "krichene2023/gd-sum-clip-only", "zhao2024/clip-after-noise"),
        corpus=("krichene2023/unclipped-labels", "krichene2023/no-weight-clipping",
                "krichene2023/staged-no-weight-clipping")),
    "sub-optimal-parameter": BugClass(
        "A parameter the paper fixes by an optimality condition (Claim 1's h*, eq. 6's cap, Theorem 6's C, "
        "the bin width, the personalized weights) set otherwise: usually private, but not the paper's estimate.",
        planted=("amin2019/optimal-cap-interpolated-quantile", "amin2019/optimal-cap-off-by-one",
                 "epasto2020/equal-user-weights", "epasto2020_gwa/gwa-ols-C"),
        corpus=("amin2019/cap-at-half-T", "amin2019/staged-optimal-cap-off-by-one", "epasto2020/wa-median-h",
                "epasto2020/sl-no-limiting", "zhao2024/wme-unwidened-bin", "acharya2024/nonpersonalized")),
    "parameter-not-applied": BugClass(
        "A quantity computed and then not used where the paper uses it, so that the stages disagree: the "
        "statistic ignores the weights or the given C, or is computed at another cap than the noise.",
        planted=("epasto2020/statistic-ignores-weights", "epasto2020_gwa/gwa-statistic-uses-ols",
                 "epasto2020_gwa/gwac-statistic-ignores-C"),
        corpus=("amin2019/staged-disagreeing", "epasto2020/gwa-ols-ignores-C")),
    "input-not-refused": BugClass(
        "An input outside the paper's domain accepted instead of refused: eps = 0 or lambda = 0 (no noise), "
        "labels or values outside [0, B] (clipped silently, or a range wider than the one calibrated), a C "
        "with C X != I.",
        planted=("acharya2024/lambda-zero-no-noise", "epasto2020_gwa/gwa-labels-in-minus-B-B",
                 "epasto2020_gwa/gwac-labels-in-minus-B-B", "epasto2020_gwa/gwac-no-CX-check"),
        corpus=("acharya2024/no-noise-at-lambda-zero", "amin2019/no-noise-at-eps-zero", "epasto2020/wa-clips-values",
                "epasto2020/gwa-no-cx-check")),
    "data-dependent-choice": BugClass(
        "A parameter that must be public chosen from the private data without paying for it: the cap, sigma, "
        "C, the counts n_i, kappa0, the clipping range, the PTR decision or the histogram's top bin read "
        "exactly.",
        planted=("amin2019/data-chosen-cap", "epasto2020/sigma-from-data", "epasto2020_gwa/gwa-C-reads-labels",
                 "erm/amin.data-dependent-n-tau", "krichene2023/exact-counts-no-charge",
                 "zhao2024/typical-sensitivity-without-ptr", "zhao2024/ptr-kappa0-from-data"),
        corpus=("amin2019/data-chosen-cap", "zhao2024/hlm-deterministic-test", "zhao2024/hlm-range-from-data",
                "zhao2024/wme-exact-argmax", "zhao2024/hlm-d3-deterministic-test")),
    "data-dependent-refusal": BugClass(
        "A refusal (an exception, no release) that depends on the private data: one dataset raises where its "
        "neighbour releases, which tells them apart as surely as a number would.",
        planted=("zhao2024/capped-solver-refuses",)),
    "accounting": BugClass(
        "Privacy spent but not charged: a step, a release or a delta left out of the composition, a budget "
        "split wrongly, a baseline given more than its records' eps_i.",
        planted=("amin2019/cap-budget-not-accounted", "acharya2024/jorgensen-linear-probability",
                 "acharya2024/nonpersonalized-mean-eps", "erm/epasto.no-composition",
                 "krichene2023/counts-used-twice-charged-once", "krichene2023/rdp-half-for-the-pair",
                 "zhao2024/ptr-delta-not-composed", "zhao2024/wme-localisation-delta-not-composed"),
        corpus=("zhao2024/hlm-delta-not-split", "zhao2024/wme-delta-not-split", "zhao2024/wme-epsilon-not-split")),
    "unchecked-assumption": BugClass(
        "A theorem used outside its assumption: Theorem 3.4's known bound B on ||theta_bar||, taken without "
        "checking that every neighbour satisfies it.",
        planted=("acharya2024/theorem34-violated-B",)),
    "solver-error": BugClass(
        "A numerical solver's error not covered by the privacy argument: fewer iterations than the bound "
        "needs, so neighbours move by more than the sensitivity plus the declared error.",
        planted=("zhao2024/global-one-solver-step",)),
    "shared-randomness": BugClass(
        "Randomness drawn once per call and shared by the call's releases (a noise draw, a random choice, a "
        "test outcome): the `size` releases are not independent.",
        corpus=("acharya2024/noise-once-per-call", "amin2019/noise-once-per-call", "epasto2020/wa-noise-once-per-call",
                "epasto2020/sl-random-T-once-per-call", "krichene2023/noise-once-per-call",
                "zhao2024/hlm-decision-per-call", "zhao2024/hlm-d3-decision-per-call", "zhao2024/wme-noise-once-per-call",
                "zhao2024/global-noise-once-per-call")),
}


@dataclass(frozen=True)
class VectorCase:
    dataset: Any
    params: Mapping
    flags: tuple
    comment: str
    result: str = "valid"         # "valid" | "invalid"

    def __post_init__(self):
        if not isinstance(self.params, Mapping):
            raise TypeError(f"params must be a mapping of parameter names to values, got {type(self.params).__name__}")
        if isinstance(self.flags, (str, bytes)) or not isinstance(self.flags, (tuple, list)) or \
                not all(isinstance(f, str) for f in self.flags):
            raise TypeError(f"flags must be a tuple of bug-class names, got {self.flags!r:.80}")
        if not isinstance(self.comment, str) or not self.comment:
            raise TypeError(f"comment must be a non-empty str (how the vector exposes its flags), got {self.comment!r:.80}")
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
    stages are wrapped in (its extra stages, e.g. ``optimal_cap``)."""
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


def _spec_reference(algorithm: str) -> Callable[[], Callable]:
    def get():
        from .validate import get_validation
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
    ten = UserDataset.from_user_lists([[0.1 * (k + 1), 0.03 * k] for k in range(10)])   # totals 0.1, 0.23, .., 1.27
    V = VectorCase
    return [
        V(six, {"T": 1.0, "epsilon": 1.0}, ("understated-sensitivity", "sub-optimal-parameter", "data-dependent-choice",
                                            "parameter-not-applied"),
          "six users of 1-4 records, totals 0.3 to 2.6, T = 1, eps = 1: g_T = 4.7 caps two users; the sensitivity "
          "is T (not T/2); eq. 6's cap at eps = 1 is the largest total 2.6 (not the second largest, 1.3, nor an "
          "interpolated quantile); a T read from the data instead of the given one, or a statistic at another cap, "
          "changes g_T"),
        V(multi, {"T": 1.0, "epsilon": 0.5}, ("per-record-bound", "noise-formula"),
          "users of 4 records each below T whose totals (2.0, 1.6) exceed it, T = 1, eps = 0.5: g_T = 2.2, "
          "where capping each record gives 3.8; the noise scale is T/eps = 2 (not T eps = 0.5)"),
        V(multi, {"T": 0.3, "epsilon": 4.0}, ("per-record-bound", "noise-formula"),
          "the same users at T = 0.3, eps = 4: the two heavy users' totals are capped, g_T = 0.3 + 0.3 + 0.2 = 0.8, "
          "where capping each record gives 8 x 0.3 + 0.2 = 2.6; the noise scale is 0.075"),
        V(ten, {"T": 2.0, "epsilon": 0.35}, ("sub-optimal-parameter",),
          "ten users of two records, distinct totals 0.1 to 1.27, eps = 0.35: 1/eps is not an integer, so eq. 6's "
          "cap (the ceil(1/eps) = 3rd largest total, 1.01) differs from the interpolated 1 - 1/(m eps) quantile "
          "(0.94) and from the 4th largest (0.88)"),
        V(_users([0.25]), {"T": 1.0, "epsilon": 2.0}, (),
          "one user of one record, below T: g_T is the record itself (eq. 6's cap at k = 1 > m - 1)"),
        V(six, {"T": 1.0, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0: Laplace scale T / 0", "invalid"),
        V(six, {"T": -1.0, "epsilon": 1.0}, ("input-not-refused",), "T = -1: a negative cap", "invalid"),
        V(six, {"T": 0.0, "epsilon": 1.0}, ("input-not-refused",),
          "T = 0: the constant 0 released with zero noise", "invalid"),
        V(_users([0.5, -0.25], [1.0]), {"T": 1.0, "epsilon": 1.0}, ("input-not-refused",),
          "a negative record value: §3 sums non-negative contributions (min(x_l, T) is no cap for a negative "
          "total)", "invalid"),
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
        V(zipf, base, ("understated-sensitivity", "unnormalised-weights", "weight-formula", "parameter-not-applied",
                       "per-record-bound"),
          "50 users with Zipf(1.6) sizes (1 to 40 records), values in [0, 1], B = 1, eps = 1, sigma = 1/2: the "
          "weights sum to 1 over users' min(h*, s_q) (not over records), are split over each user's records, "
          "the noise covers the heaviest user's total weight (not the mean user, nor n records, nor one record), "
          "and the statistic applies them (not the plain mean)"),
        V(skew, {"B": 1.0, "epsilon": 4.0, "sigma": 0.5}, ("per-record-bound", "understated-sensitivity",
                                                          "sub-optimal-parameter", "noise-formula"),
          "3 users of 20 records and 40 of 1, eps = 4: h* lies strictly between the sizes (not at s_1 = 1: "
          "equal user weights are not optimal), a heavy user's weight is h*/n_h, and the noise scale is "
          "Delta / eps (not Delta eps)"),
        V(spread, {"B": 1.0, "epsilon": 2.0, "sigma": 0.05}, ("data-dependent-choice",),
          "sigma = 0.05 given while the values' standard deviation is about 0.29: h* computed from an estimated "
          "sigma differs"),
        V(spread.with_fields(values=2 * spread.values), {"B": 2.0, "epsilon": 0.5, "sigma": 1.0}, ("noise-formula",),
          "values doubled into [0, 2], B = 2, sigma = 1, eps = 0.5: a scale read as a rate (Delta eps) is "
          "eps^2 = 1/4 of Delta / eps"),
        V(_users([0.5, 0.5], [0.25, 0.75]), {"B": 1.0, "epsilon": 1.0, "sigma": 0.5}, (),
          "two users of two records: all sizes equal, so h* = s and every weight is 1/n"),
        V(zipf.with_fields(values=np.where(np.arange(zipf.n) == 3, 2.0, zipf.values)), base, ("input-not-refused",),
          "a value 2B outside [0, B]: the noise covers B (refuse, do not clip)", "invalid"),
        V(zipf, {**base, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
        V(zipf, {**base, "sigma": -0.5}, ("input-not-refused",), "sigma = -0.5: a negative standard deviation",
          "invalid"),
        V(zipf, {**base, "B": 0.0}, ("input-not-refused",), "B = 0: an empty range [0, 0]", "invalid"),
    ]


def _sl_cases() -> list:
    zipf, skew = _zipf_users(50, 21, True), _skewed(True)
    V = VectorCase
    base = {"B": 1.0, "epsilon": 1.0, "sigma": 0.5}
    note = " (values equal within each user: §3.2 lets an implementation keep any min(h, s_l) of a user's records)"
    return [
        V(zipf, base, ("per-record-bound", "understated-sensitivity"),
          "50 users with Zipf(1.6) sizes, B = 1, eps = 1: the best integer h keeps several records of heavy "
          "users, so a user moves the estimate by B h / n_h, not one record's B / n_h" + note),
        V(skew, {"B": 1.0, "epsilon": 4.0, "sigma": 0.5}, ("per-record-bound", "noise-formula"),
          "3 users of 20 records and 40 of 1, eps = 4" + note),
        V(zipf.with_fields(values=np.where(zipf.user_ids == zipf.user_ids[0], 2.0, zipf.values)), base,
          ("input-not-refused",), "a user's values at 2B, outside [0, B]", "invalid"),
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


_register(Design(
    "amin2019.capped-sum", _amin_reference, _spec_reference("amin2019.capped-sum"), _amin_adapter,
    {"statistic": ("T",), "sensitivity": ("T",), "noise_scale": ("T", "epsilon"), "optimal_cap": ("epsilon",)},
    ("statistic", "optimal_cap"), _amin_cases, "add/remove user",
    "userdp.reference.amin2019: statistic (g_T, §3), sensitivity (T, eq. 2), noise_scale (T / eps), "
    "optimal_cap_nonprivate (eq. 5-6, the ceil(1/eps)-th largest user total)"))

_register(Design(
    "epasto2020.wa", _wa_reference, _spec_reference("epasto2020.wa"), _plain_adapter,
    {s: ("B", "epsilon", "sigma") for s in ("weights", "statistic", "sensitivity", "noise_scale")},
    ("weights", "statistic", "sensitivity", "noise_scale"), _wa_cases, "replace user (S_l public)",
    "userdp.reference.epasto2020: optimal_weights (Lemma 3 at Claim 1's h*), wa_statistic, wa_sensitivity "
    "(Lemma 1: B max_l W_l), wa_noise_scale"))

_register(Design(
    "epasto2020.sample-limiting", _sl_reference, _spec_reference("epasto2020.sample-limiting"), _plain_adapter,
    {s: ("B", "epsilon", "sigma") for s in ("statistic", "sensitivity", "noise_scale")},
    ("statistic", "sensitivity", "noise_scale"), _sl_cases, "replace user (S_l public)",
    "userdp.reference.epasto2020: best_integer_h (Claim 2), sample_limiting_weights, and Lemma 1's sensitivity "
    "B h / n_h",
    notes="No weights stage: §3.2 lets an implementation keep any min(h, s_l) records of user l (first, last, "
          "random), so the weights are not unique; the vectors hold values equal within each user, where the "
          "statistic is."))


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
        V(D, {"C": C, "B": 1.0, "epsilon": 1.0}, ("understated-sensitivity", "parameter-not-applied", "per-record-bound"),
          "non-orthogonal design, users of 3, 2, 1, 1, 1 records, Theorem 6's C (sigma = 1/2), B = 1, eps = 1: "
          "b sums |c_ji| over both rows j and over the user's records i (not one row, not one record, not signed "
          "sums), and the statistic is this C times y (not X^+ y)"),
        V(D.with_fields(labels=D.labels / 2), {"C": C, "B": 0.5, "epsilon": 20.0},
          ("understated-sensitivity", "noise-formula"), "the same with B = 1/2 (labels halved), eps = 20"),
        V(Dd, {"C": Cd, "B": 1.0, "epsilon": 1.0}, ("understated-sensitivity", "per-record-bound"),
          "diagonal design: user 0 holds four records at (1, 1), which enter both rows of C = X^+: one row, or "
          "one record, gives half of Algorithm 3's b or less"),
        V(D, {"C": 1.1 * C, "B": 1.0, "epsilon": 1.0}, ("input-not-refused",),
          "a C with C X = 1.1 I (Algorithm 3 needs C X = I)", "invalid"),
        V(D.with_fields(labels=big), {"C": C, "B": 1.0, "epsilon": 1.0}, ("input-not-refused",),
          "a label 2B, outside [0, B]", "invalid"),
        V(D.with_fields(labels=neg), {"C": C, "B": 1.0, "epsilon": 1.0}, ("input-not-refused",),
          "a label -B/2: inside [-B, B] but outside the [0, B] that b is calibrated to", "invalid"),
        V(D, {"C": C, "B": 1.0, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
    ]


def _gwa_reference():
    from userdp.properties.epasto2020_gwa import REFERENCE_GWAC
    return REFERENCE_GWAC


_register(Design(
    "epasto2020.gwa", _gwa_reference, _spec_reference("epasto2020.gwa"), _plain_adapter,
    {s: ("C", "B", "epsilon") for s in ("weights", "statistic", "sensitivity", "noise_scale")},
    ("weights", "statistic", "sensitivity", "noise_scale"), _gwa_cases, "replace user's labels (features public)",
    "userdp.reference.epasto2020_gwa: check_C (the weights stage returns the given C after checking C X = I), "
    "statistic (C y), sensitivity (Algorithm 3: B max_l sum_j sum_{i in S_l} |c_ji|), noise_scale",
    notes="C is Algorithm 3's input, a d x n matrix (an array of d rows) in params; Theorem 6's optimal C is "
          "computed by userdp.reference.epasto2020_gwa.optimal_C when the vectors are built."))


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
        V(D2, {"Lambda": 100.0}, ("unnormalised-weights", "noise-formula", "understated-sensitivity",
                                  "unchecked-assumption"),
          "n = 8, d = 2, eps_i from 0.05 to 2, lambda = 100: w_i = eps_i / sum eps (they sum to 1, not to mean "
          "eps); eta is Theorem 3.2's, with sqrt(d) (not d) and each record's own sensitivity 2 w_i (d B + "
          "sqrt(d)) / lambda (not an average record's), and without Theorem 3.4's bound B"),
        V(D2, {"Lambda": 1.0}, ("unnormalised-weights", "noise-formula"),
          "the same at lambda = 1, where B(lambda) = min(1/sqrt(lambda), sqrt(d)/lambda) = 1"),
        V(D1, {"Lambda": 10.0}, ("unnormalised-weights", "understated-sensitivity"),
          "n = 10, d = 1, lambda = 10"),
        V(D3, {"Lambda": 1.0}, ("noise-formula", "understated-sensitivity"),
          "n = 30, d = 3, lambda = 1: d and sqrt(d) differ by 1.7x"),
        V(D2, {"Lambda": 0.0}, ("input-not-refused",),
          "lambda = 0: eta = 0, no noise at all (Theorem 3.2 needs lambda > 0; found in the authors' code)", "invalid"),
        V(D2, {"Lambda": -1.0}, ("input-not-refused",), "lambda = -1", "invalid"),
        V(D2.with_fields(values=bad_x), {"Lambda": 1.0}, ("input-not-refused",),
          "a feature 1.5 outside [0, 1]^d (Theorem 3.2 assumes x in [0, 1]^d)", "invalid"),
        V(D2.with_fields(labels=bad_y), {"Lambda": 1.0}, ("input-not-refused",),
          "a label -2 outside [-1, 1]", "invalid"),
    ]


def _pdp_reference():
    from userdp.properties.acharya2024 import REFERENCE
    return REFERENCE


_register(Design(
    "acharya2024.pdp-op", _pdp_reference, _spec_reference("acharya2024.pdp-op"), _plain_adapter,
    {s: ("Lambda",) for s in ("weights", "statistic", "sensitivity", "noise_scale")},
    ("weights", "statistic", "sensitivity", "noise_scale"), _pdp_cases, "replace record (the profile eps_i public)",
    "userdp.reference.acharya2024: weights (w_i = eps_i / sum eps), statistic (the weighted ridge theta_bar), "
    "sensitivity (each record's Delta_i, Theorem A.4), noise_scale (1 / eta, Theorem 3.2)",
    notes="The dataset's epsilons are the privacy profile eps_i (one per record, public); the labels are y."))


# ================================================================== Krichene et al. 2023 (SSP)
def _ssp_graph(labels=(1.0, 1.0, 0.3, -0.4, -7.0), x0: float = 1.0) -> Any:
    """Records (task, user, x, y): (0, 0), (1, 0), (0, 1), (0, 2), (2, 3): user 0 has two tasks."""
    from userdp.reference.data import UserDataset
    return UserDataset(np.array([[x0], [x0], [0.5], [-0.2], [5.0]]), np.array([0, 0, 1, 2, 3]),
                       labels=np.asarray(labels, float), task_ids=np.array([0, 1, 0, 0, 2]))


def _ssp_generated(seed: int = 3) -> tuple:
    from userdp.reference.data import UserDataset
    g = np.random.default_rng(seed)
    tasks, users = [], []
    for j in range(12):
        mine = [0, 1] if j % 4 == 0 else ([0] if j % 4 in (1, 2) else [1])
        tasks += mine
        users += [j] * len(mine)
    t = np.array(tasks)
    D = UserDataset(np.round(1.2 * g.standard_normal((t.size, 2)), 4), np.array(users),
                    labels=np.round(1.5 * g.standard_normal(t.size), 4), task_ids=t)
    return D, {"m": 2, "n_counts": np.array([10.0, 7.0]), "n_users": 12, "beta": 1.0, "mu": 0.25,
               "Gamma_x": 1.5, "Gamma_star": 1.0}


def _ssp_cases() -> list:
    G, gp = _ssp_generated()
    base = {"m": 3, "n_counts": np.array([4.0, 2.0, 1.0]), "n_users": 4, "beta": 0.5, "mu": 0.5,
            "Gamma_x": 1.0, "Gamma_star": 1.0}
    twice = _ssp_graph()
    twice = twice.with_fields(values=np.vstack([twice.values, [[0.5]]]), user_ids=np.append(twice.user_ids, 1),
                              labels=np.append(twice.labels, 0.5), task_ids=np.append(twice.task_ids, 0))
    V = VectorCase
    return [
        V(_ssp_graph(), base, ("missing-clipping", "weight-formula", "data-dependent-choice"),
          "d = 1, m = 3, beta = mu = 1/2, public counts n = (4, 2, 1) (the graph's own are (3, 1, 1)): user 3, "
          "alone in task 2, has budget omega_2^2 = 2/3 > beta, so eq. (12) scales its weight by sqrt(beta / budget) "
          "(no clipping differs); user 0's sum omega^2 = 1/2 needs none, where a budget on sum omega (0.99) would "
          "clip it; user 3's label -7 and feature 5 are clipped to Gamma_x Gamma_* = 1 and Gamma_x = 1; the "
          "weights read the public n_i, not the data's counts"),
        V(_ssp_graph(), {**base, "Gamma_x": 2.0, "Gamma_star": 2.0}, ("noise-formula", "missing-clipping"),
          "the same graph with Gamma_x = Gamma_* = 2: the two noise scales (Gamma_x^2 on A, Gamma_x^2 Gamma_* on "
          "b) differ"),
        V(G, gp, ("missing-clipping", "data-dependent-choice"),
          "d = 2, m = 2, 12 users (every fourth in both tasks), x ~ 1.2 N(0, I) and y ~ 1.5 N(0, 1), some beyond "
          "Gamma_x = 1.5 and Gamma_x Gamma_* = 1.5 (clipped in L2 and in absolute value), beta = 1, mu = 1/4, "
          "public counts (10, 7) against the data's (9, 6)"),
        V(twice, base, ("input-not-refused",),
          "user 1 holds two records in task 0: Omega is a set of (task, user) pairs, and a second record doubles "
          "its weight, which the budget sum_i w_ij^2 does not count", "invalid"),
    ]


def _ssp_reference():
    from userdp.properties.krichene2023 import REFERENCE
    return REFERENCE


def _ssp_adapter():
    from userdp.properties.krichene2023 import MultiTaskAdapter
    return MultiTaskAdapter


_SSP_KEYS = ("m", "n_counts", "n_users", "beta", "mu", "Gamma_x", "Gamma_star")
_register(Design(
    "krichene2023.ssp", _ssp_reference, _spec_reference("krichene2023.ssp"), _ssp_adapter,
    {"weights": ("m", "n_counts", "n_users", "beta", "mu"), "statistic": _SSP_KEYS,
     "sensitivity": ("beta", "Gamma_x", "Gamma_star"), "noise_scale": ("Gamma_x", "Gamma_star")},
    ("weights", "statistic"), _ssp_cases, "add/remove user",
    "userdp.reference.krichene2023_weights.adaptive_weights (the mu-family from the public counts, eq. (12) "
    "clipping) and userdp.reference.krichene2023: statistic (A-bar_i, b-bar_i of Algorithm 1, clipped data), "
    "sensitivity, noise_scale",
    notes="The dataset's task_ids are the tasks i, user_ids the users j; values are x (n x d), labels y. The "
          "statistic is the pair (A-bar (m x d x d), b-bar (m x d)): an array of two differently shaped parts."))


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
        V(het, p, ("unnormalised-weights", "understated-sensitivity", "accounting", "data-dependent-choice"),
          "120 imbalanced users (40 items down to 4), heavy users centred at +0.3, light ones at -0.3, eps = 3, "
          "delta = 1e-5, R = R_c = 1: weights min(m_i, cap) normalised to sum 1, thresholds T_i = tau R / "
          "sqrt(m_i), the PTR distance shifting the margins as the minimiser moves, and noise scales at the "
          "split budget (eps/4 and delta/2 for the test) with kappa0 from the public counts"),
        V(crossing, p, ("understated-sensitivity", "accounting"),
          "65 one-item users at 0: the PTR distance (16) sits just above the threshold (15.35)"),
        V(split, p, ("data-dependent-refusal",),
          "50 one-item users at 0 and 49 at +100: every user is linear at the weighted-mean start, where a "
          "Newton solver capped at 100 steps stops above its certificate; the reference's certified solver "
          "answers (a release must not depend on whether a solver converged)"),
        V(d2, p, ("unnormalised-weights", "understated-sensitivity"),
          "80 imbalanced users in d = 2 (the Huber loss on the L2 norm)"),
        V(crossing, {**p, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0: no budget for the test or the noise",
          "invalid"),
        V(crossing, {**p, "delta": 0.0}, ("input-not-refused",), "delta = 0: Gaussian noise and PTR need delta > 0",
          "invalid"),
    ]


def _hlm_reference():
    from userdp.properties.zhao2024 import REFERENCE
    return REFERENCE


def _hlm_adapter():
    from userdp.properties.zhao2024 import HLMAdapter
    return HLMAdapter


_HLM = ("epsilon", "delta", "R", "R_c")
_register(Design(
    "zhao2024.hlm", _hlm_reference, _spec_reference("zhao2024.hlm"), _hlm_adapter,
    {s: _HLM for s in ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale")},
    ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale"), _hlm_cases,
    "replace user's items (the item counts m_i public)",
    "userdp.reference.zhao2024 (derived there: the poster gives no w_i, T_i or calibration): weights, "
    "thresholds, statistic (the Huber minimiser mu0), sensitivity (B), ptr_distance (gamma), noise_scale "
    "(sigma_pass, sigma_fallback, the threshold and the budget split)",
    notes="noise_scale is an object of named values; it is compared key by key. ptr_distance (gamma) counts "
          "the users whose margin at the solver's certified point reaches each threshold t_j = (j + 1) B + shift; "
          "in d >= 2 the shift includes rho0 = B (reference/zhao2024.py, items 3 and 5), so an implementation "
          "without it counts about one more there."))


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
        V(het, p, ("unnormalised-weights", "understated-sensitivity", "accounting"),
          "80 imbalanced users in d = 3 (30 items down to 4), heavy users offset along (0.2, 0.1, 0.05): the vector "
          "Huber loss on the L2 norm, B from max w_i T_i, and gamma with the thresholds shifted by e + rho0, "
          "rho0 = B in d >= 2 (an implementation without rho0 counts one more level)"),
        V(crossing, p, ("understated-sensitivity", "accounting"),
          "65 one-item users at 0 in d = 3: every margin is T, so gamma counts the levels (j + 1) B + e + B below T"),
        V(split, p, ("data-dependent-refusal",),
          "50 one-item users at 0 and 49 at +100 (1, 1, 1): every user is linear at the weighted-mean start, where "
          "a capped Newton solver stops above its certificate; the reference's guaranteed path answers"),
        V(crossing, {**p, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0: no budget for the test or the noise",
          "invalid"),
        V(crossing, {**p, "R_c": -1.0}, ("input-not-refused",), "R_c = -1: the clipping radius must be > 0", "invalid"),
    ]


_register(Design(
    "zhao2024.hlm-d3", _hlm_reference, _spec_reference("zhao2024.hlm-d3"), _hlm_adapter,
    {s: _HLM for s in ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale")},
    ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance", "noise_scale"), _hlm_d3_cases,
    "replace user's items (the item counts m_i public)",
    "userdp.reference.zhao2024 in d = 3: the same stages as zhao2024.hlm on vector items",
    notes="As zhao2024.hlm; in d = 3 the statistic is the certified point of the guaranteed solver (within e of "
          "the minimiser), and gamma's thresholds include rho0 = B."))


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
        V(imb, p, ("understated-sensitivity", "unnormalised-weights"),
          "300 users at the poster's counts (gamma = 2: 1 to 1,300 items), averages uniform on [-0.5, 0.5], eps = "
          "3, delta = 1e-5, R = R_c = support = 1, theta chosen from the counts: equalised weights min(m_i, theta / "
          "min(T_i, rho)) normalised, kappa_G over the one-item users, S = 2c / kappa_G + 2e"),
        V(curv, {**p, "theta": 1.0}, ("understated-sensitivity",),
          "20 one-item users at +1 and 3 two-item users at -1, theta = 1: the two-item users (T = sqrt 2 < 2 rho) "
          "must not count in kappa_G; x_K is 0.79, where they are linear"),
        V(curv, {**p, "theta": 1.0, "epsilon": 1.0}, ("solver-error",),
          "the same at eps = 1: x_K within the public e of the exact minimiser (0.7878...)"),
        V(d2, {**p, "R": 1.5}, ("understated-sensitivity",),
          "40 users in d = 2 (30 one-item users, 10 of three items), R = 1.5: in d >= 2 the radii rho_s, rho_G "
          "exceed rho by (d + 8) u"),
        V(curv, {**p, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0: no budget for the noise", "invalid"),
        V(users([0.2, -0.3, 0.1], [2, 3, 4]), p, ("input-not-refused",),
          "no one-item user (every T_i < 2 rho): no guaranteed curvature, refused from the counts", "invalid"),
    ]


def _global_reference():
    from userdp.properties.zhao2024 import REFERENCE_GLOBAL
    return REFERENCE_GLOBAL


_GLOBAL = ("epsilon", "delta", "R", "R_c", "support", "theta")
_register(Design(
    "zhao2024.hlm-global", _global_reference, _spec_reference("zhao2024.hlm-global"), _hlm_adapter,
    {s: _GLOBAL for s in ("weights", "thresholds", "statistic", "sensitivity", "noise_scale")},
    ("weights", "thresholds", "statistic", "sensitivity", "noise_scale"), _global_cases,
    "replace user's items (the item counts m_i public)",
    "userdp.reference.zhao2024_calibration, calibration \"global\" (G1-G5): equalised_weights, thresholds, the "
    "statistic x_K (K public projected-gradient steps), sensitivity S, noise_scale (sigma at the whole budget, "
    "Delta, e, kappa_G, rho_G)",
    notes="theta (the weights' cap) is chosen from the public counts when a vector does not give it; the "
          "statistic is x_K, within the public e of the exact minimiser, so an exact solver differs from it by up "
          "to e."))


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
        V(_wme_users(np.r_[np.full(11, -0.9), np.full(10, 0.9)]), p, ("accounting",),
          "11 users at -0.9 R and 10 at +0.9 R, 50 items each, eps = 3, delta = 1e-5: the two stages' budgets "
          "(eps/2, delta/2 each) and noise scales"),
        V(gen, {**p, "epsilon": 1.0}, ("accounting",), "60 imbalanced users (220 down to 24 items), eps = 1"),
        V(_wme_users([0.0, 2.0]), p, ("input-not-refused",), "an item at 2 R, outside the declared support [-R, R]",
          "invalid"),
        V(_wme_users(np.zeros(5)), {**p, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0", "invalid"),
    ]


def _wme_reference():
    from userdp.properties.zhao2024 import REFERENCE_WME
    return REFERENCE_WME


_register(Design(
    "zhao2024.wme", _wme_reference, _spec_reference("zhao2024.wme"), _plain_adapter,
    {"sensitivity": ("epsilon", "delta", "R"), "noise_scale": ("epsilon", "delta", "R")},
    ("sensitivity", "noise_scale"), _wme_cases, "replace user's items",
    "userdp.reference.zhao2024_wme (Levy et al. 2021's WME): sensitivity (the two stages' sensitivities), "
    "noise_scale (their budgets and Gaussian scales)",
    notes="WME's statistic is a mixture over the noisy argmax, so there is no noise-free statistic stage; "
          "validate compares its releases."))
