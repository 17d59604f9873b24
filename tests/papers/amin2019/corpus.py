"""Corpus for Amin et al. 2019 §3: the capped sum g_T + Lap(T/eps) (``amin2019.capped-sum``) and the
capped sum with a private cap (``amin2019.capped-sum-private-cap``).

Every implementation is written here from the paper, independently of reference/amin2019.py,
in the style an outside engineer might use (loops, dicts, other samplers), in all three call
shapes: batched ``f(dataset, rng, size, *, T, epsilon)``, one release per call
``f(dataset, rng, ...)`` (some with their own parameter names, mapped with ``param_map``), and
Adapters with stages.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from userdp.properties.amin2019 import CapAdapter

from corpus import CorpusEntry

ALGO = "amin2019.capped-sum"


def _totals(dataset) -> dict:
    totals: dict = {}
    for u, v in zip(dataset.user_ids.tolist(), dataset.values.tolist()):
        totals[u] = totals.get(u, 0.0) + v
    return totals


def _check(T, epsilon):
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon}")
    if not T >= 0:
        raise ValueError(f"T must be >= 0, got {T}")


# ------------------------------------------------------------ correct alternatives
def loop_exponential_difference(dataset, rng, size=None, *, T, epsilon):
    """Correct: a dict of user totals, and Laplace(b) as the difference of two Exp(b)."""
    _check(T, epsilon)
    g = math.fsum(min(t, T) for t in _totals(dataset).values())
    b = T / epsilon
    return g + rng.exponential(b, size) - rng.exponential(b, size)


def _stat_bincount(dataset, T):
    _, inverse = np.unique(dataset.user_ids, return_inverse=True)
    return float(np.minimum(np.bincount(inverse, weights=dataset.values), T).sum())


def _mech_inverse_cdf(dataset, rng, size=None, *, T, epsilon):
    _check(T, epsilon)
    u = rng.uniform(-0.5, 0.5, size)  # inverse CDF of Laplace(0, b)
    return _stat_bincount(dataset, T) - (T / epsilon) * np.sign(u) * np.log1p(-2 * np.abs(u))


staged_inverse_cdf = CapAdapter(
    "corpus/amin-staged-inverse-cdf",
    statistic=_stat_bincount,
    sensitivity=lambda T: T,
    noise_scale=lambda T, epsilon: T / epsilon,
    mechanism=_mech_inverse_cdf,
)


# ------------------------------------------------------------ bugs, release only
def per_record_cap(dataset, rng, size=None, *, T, epsilon):
    """BUG (sensitivity): caps each record at T instead of each user's total."""
    _check(T, epsilon)
    return float(np.minimum(dataset.values, T).sum()) + rng.laplace(0.0, T / epsilon, size)


def half_scale(dataset, rng, size=None, *, T, epsilon):
    """BUG (noise scale): Laplace scale T / (2 eps), as if the sensitivity were T/2."""
    _check(T, epsilon)
    g = math.fsum(min(t, T) for t in _totals(dataset).values())
    return g + rng.laplace(0.0, T / (2 * epsilon), size)


def data_chosen_cap(dataset, rng, size=None, *, T, epsilon):
    """BUG (non-private data-dependent choice): ignores the public T and uses eq. 6's optimum,
    the ceil(1/eps)-th largest user total, read exactly from the data."""
    _check(T, epsilon)
    x = sorted(_totals(dataset).values(), reverse=True)
    k = math.ceil(1 / epsilon)
    T = x[k - 1] if k <= len(x) else 0.0
    return math.fsum(min(t, T) for t in x) + rng.laplace(0.0, T / epsilon, size)


def noise_once_per_call(dataset, rng, size=None, *, T, epsilon):
    """BUG (independence): one Laplace draw per call, repeated for all `size` releases."""
    _check(T, epsilon)
    g = math.fsum(min(t, T) for t in _totals(dataset).values())
    return np.full(size, g + rng.laplace(0.0, T / epsilon))


def no_noise_at_eps_zero(dataset, rng, size=None, *, T, epsilon):
    """BUG (domain): "epsilon = 0 means no noise" (the guard the reference has is missing, as
    with lambda = 0 in the PDP-OP authors' code): releases g_T exactly at eps = 0."""
    if not T >= 0:
        raise ValueError("T must be >= 0")
    g = math.fsum(min(t, T) for t in _totals(dataset).values())
    b = T / epsilon if epsilon > 0 else 0.0
    return g + rng.laplace(0.0, 1.0, size) * b


def cap_twice(dataset, rng, size=None, *, T, epsilon):
    """BUG (optimality): caps at T/2 (a "safety margin"): private (sensitivity T/2 < T) but
    not the paper's g_T: the estimate is biased down for every user above T/2."""
    _check(T, epsilon)
    g = math.fsum(min(t, T / 2) for t in _totals(dataset).values())
    return g + rng.laplace(0.0, T / epsilon, size)


# ------------------------------------------------------------ bugs, with stages
def _stat_per_record(dataset, T):
    return float(np.minimum(dataset.values, T).sum())


def _scale(T, epsilon):
    """T / epsilon, refusing epsilon <= 0 with a ValueError (what a refusal is; the bug lies elsewhere)."""
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon}")
    return T / epsilon


staged_per_record_cap = CapAdapter(
    "corpus/amin-staged-per-record-cap",
    statistic=_stat_per_record,
    sensitivity=lambda T: T,
    noise_scale=lambda T, epsilon: T / epsilon,
    mechanism=lambda dataset, rng, size=None, *, T, epsilon: (
        _stat_per_record(dataset, T) + rng.laplace(0.0, _scale(T, epsilon), size)
    ),
)


def _optimal_cap_off_by_one(dataset, epsilon):
    x = sorted(_totals(dataset).values(), reverse=True)
    k = math.ceil(1 / epsilon)
    return x[k] if k < len(x) else 0.0  # BUG: the (k+1)-th largest


staged_optimal_cap_off_by_one = CapAdapter(
    "corpus/amin-staged-optimal-cap-off-by-one",
    statistic=_stat_bincount,
    sensitivity=lambda T: T,
    noise_scale=lambda T, epsilon: T / epsilon,
    optimal_cap=_optimal_cap_off_by_one,
    mechanism=_mech_inverse_cdf,
)

staged_disagreeing = CapAdapter(
    "corpus/amin-staged-disagreeing",
    statistic=lambda dataset, T: _stat_bincount(dataset, 2 * T),
    sensitivity=lambda T: T,
    noise_scale=lambda T, epsilon: T / epsilon,
    mechanism=_mech_inverse_cdf,
)


# ------------------------------------------------------------ more correct alternatives
def one_release_clipping(dataset, rng, cap, eps):
    """Correct: one release per call, its own names (cap, eps), negative values clipped to 0 (as
    diffprivlib clips to its bounds): the paper's algorithm on the projected data."""
    if not eps > 0 or not cap > 0:
        raise ValueError("cap and eps must be > 0")
    totals = _totals(dataset.with_fields(values=np.maximum(dataset.values, 0.0)))
    return math.fsum(min(t, cap) for t in totals.values()) + rng.laplace(0.0, cap / eps)


def one_release_trusting(dataset, rng, *, T, epsilon):
    """Correct under its documented precondition (values >= 0, not checked): one release per call,
    Laplace drawn as a signed exponential."""
    if not epsilon > 0 or not T > 0:
        raise ValueError("T and epsilon must be > 0")
    g = math.fsum(min(t, T) for t in _totals(dataset).values())
    return g + (1.0 if rng.random() < 0.5 else -1.0) * rng.exponential(T / epsilon)


# ------------------------------------------------------------ more bugs
def noise_from_largest_record(dataset, rng, *, T, epsilon):
    """BUG (noise scale): the Laplace scale is min(T, the largest record) / eps, read
    from the data: on data whose records are all below T the noise is too small (and data-dependent)."""
    if not epsilon > 0 or not T > 0:
        raise ValueError("T and epsilon must be > 0")
    g = math.fsum(min(t, T) for t in _totals(dataset).values())
    return g + rng.laplace(0.0, min(T, float(np.max(dataset.values))) / epsilon)


def five_percent_less_noise(dataset, rng, size=None, *, T, epsilon):
    """BUG (noise scale, small): Laplace scale 0.95 T / eps (a "tuning" factor)."""
    _check(T, epsilon)
    return _stat_bincount(dataset, T) + rng.laplace(0.0, 0.95 * T / epsilon, size)


def variance_eight_percent_high(dataset, rng, size=None, *, T, epsilon):
    """BUG (variance, small): Laplace scale 1.04 T / eps: 8% more variance than needed (private)."""
    _check(T, epsilon)
    return _stat_bincount(dataset, T) + rng.laplace(0.0, 1.04 * T / epsilon, size)


def safety_margin_bias(dataset, rng, size=None, *, T, epsilon):
    """BUG (bias, small): adds T/100 to the sum ("round up"): private, biased by 1% of T, a
    hundredth of the noise's scale at eps = 1."""
    _check(T, epsilon)
    return _stat_bincount(dataset, T) + T / 100 + rng.laplace(0.0, T / epsilon, size)


def clips_to_absolute_value(dataset, rng, size=None, *, T, epsilon):
    """BUG (domain; declared --inputs clip): "clips" a negative value to its absolute value, not to 0."""
    _check(T, epsilon)
    return _stat_bincount(dataset.with_fields(values=np.abs(dataset.values)), T) + rng.laplace(0.0, T / epsilon, size)


# ------------------------------------------------------------ the private cap (capped-sum-private-cap)
# ------------------------------------------------------------ data-dependent behaviour, post-processing
def refuses_total_above_cap(dataset, rng, *, T, epsilon):
    """BUG (data-dependent behaviour): refuses (ValueError) when a user's total exceeds T, instead of
    capping it: whether it raises reads the records, so a dataset with a heavy user raises where its
    neighbour without that user releases (probability 1 against 0)."""
    _check(T, epsilon)
    totals = _totals(dataset)
    if max(totals.values()) > T:
        raise ValueError(f"a user's total exceeds the cap T = {T}")
    return math.fsum(totals.values()) + rng.laplace(0.0, T / epsilon)


def warns_when_capping(dataset, rng, size=None, *, T, epsilon):
    """BUG (data-dependent behaviour): a correct release, but it warns when it caps a user's total: the
    warning is printed on a dataset with a heavy user and not on its neighbour without that user."""
    _check(T, epsilon)
    totals = _totals(dataset)
    if max(totals.values()) > T:
        warnings.warn(f"capped {sum(t > T for t in totals.values())} user total(s) at T = {T}", stacklevel=2)
    return _stat_bincount(dataset, T) + rng.laplace(0.0, T / epsilon, size)


def clamped_at_zero(dataset, rng, size=None, *, T, epsilon):
    """Post-processing, private: the reference's release clamped at 0 (a sum of non-negative values), a
    function of the private release only. Less spread than the reference where g_T is near 0, so the
    spread rule reads it as "under-noised"; no pair realises any loss above eps."""
    _check(T, epsilon)
    return np.maximum(_stat_bincount(dataset, T) + rng.laplace(0.0, T / epsilon, size), 0.0)


CAP_ALGO = "amin2019.capped-sum-private-cap"


def _em_cap(totals: np.ndarray, eps_cap: float, k: int, U: float, rng, em_half: float = 0.5) -> float:
    """T from the exponential mechanism on [0, U] with utility -| #{x_l > T} - k | (piecewise constant
    between the sorted totals), density prop. to exp(em_half eps_cap u)."""
    xs = np.sort(totals)
    cuts = np.unique(np.clip(np.r_[0.0, xs, U], 0.0, U))
    lo, hi = cuts[:-1], cuts[1:]
    mid = (lo + hi) / 2
    above = np.array([(xs > t).sum() for t in mid])
    logw = np.log(np.maximum(hi - lo, 1e-300)) + em_half * eps_cap * (-np.abs(above - k))
    w = np.exp(logw - logw.max())
    w[hi - lo <= 0] = 0
    j = rng.choice(lo.size, p=w / w.sum())
    return float(rng.uniform(lo[j], hi[j]))


def _cap_check(epsilon_cap, epsilon_sum, U):
    if not (epsilon_cap > 0 and epsilon_sum > 0 and U > 0):
        raise ValueError("epsilon_cap, epsilon_sum and U must be > 0")


def private_cap_loop(dataset, rng, *, epsilon_cap, epsilon_sum, U, em_half=0.5, sum_eps=None, noise_U=False):
    """Correct (one release per call): the exponential mechanism over the intervals between totals, then
    the capped sum with Laplace(T / eps_sum)."""
    _cap_check(epsilon_cap, epsilon_sum, U)
    if (dataset.values < 0).any():
        raise ValueError("values must be >= 0")
    totals = np.array(list(_totals(dataset).values()))
    T = _em_cap(totals, epsilon_cap, math.ceil(1 / epsilon_sum), U, rng, em_half)
    scale = (U if noise_U else T) / (epsilon_sum if sum_eps is None else sum_eps)
    return np.array([T, math.fsum(np.minimum(totals, T)) + rng.laplace(0.0, scale)])


def private_cap_batched(dataset, rng, size=None, *, epsilon_cap, epsilon_sum, U):
    """Correct (batched): every release its own T; the sum by sorting the totals once."""
    _cap_check(epsilon_cap, epsilon_sum, U)
    if (dataset.values < 0).any():
        raise ValueError("values must be >= 0")
    totals = np.array(list(_totals(dataset).values()))
    n = 1 if size is None else size
    xs = np.sort(totals)
    cuts = np.unique(np.clip(np.r_[0.0, xs, U], 0.0, U))
    lo, hi = cuts[:-1], cuts[1:]
    above = xs.size - np.searchsorted(xs, (lo + hi) / 2, side="right")
    logw = np.log(hi - lo) + 0.5 * epsilon_cap * -np.abs(above - math.ceil(1 / epsilon_sum))
    p = np.exp(logw - logw.max())
    j = rng.choice(lo.size, size=n, p=p / p.sum())
    T = rng.uniform(lo[j], hi[j])
    s = np.minimum(xs[None, :], T[:, None]).sum(axis=1) + rng.laplace(0.0, T / epsilon_sum)
    out = np.stack([T, s], axis=1)
    return out[0] if size is None else out


def private_cap_one_clipping(dataset, rng, *, epsilon_cap, epsilon_sum, U):
    """Correct (one release per call): negative values clipped to 0 first (input policy clip)."""
    return private_cap_loop(
        dataset.with_fields(values=np.maximum(dataset.values, 0.0)),
        rng,
        epsilon_cap=epsilon_cap,
        epsilon_sum=epsilon_sum,
        U=U,
    )


def private_cap_no_half(dataset, rng, *, epsilon_cap, epsilon_sum, U):
    """BUG (sensitivity): exp(eps_cap u) without the 1/2 of the exponential mechanism."""
    return private_cap_loop(dataset, rng, epsilon_cap=epsilon_cap, epsilon_sum=epsilon_sum, U=U, em_half=1.0)


def private_cap_whole_budget(dataset, rng, *, epsilon_cap, epsilon_sum, U):
    """BUG (budget): the sum's noise uses eps_cap + eps_sum, the whole budget, after spending eps_cap on T."""
    return private_cap_loop(
        dataset, rng, epsilon_cap=epsilon_cap, epsilon_sum=epsilon_sum, U=U, sum_eps=epsilon_cap + epsilon_sum
    )


def private_cap_noise_from_U(dataset, rng, *, epsilon_cap, epsilon_sum, U):
    """BUG (optimality): the sum's noise scale U / eps_sum instead of T / eps_sum: private, too noisy."""
    return private_cap_loop(dataset, rng, epsilon_cap=epsilon_cap, epsilon_sum=epsilon_sum, U=U, noise_U=True)


def private_cap_exact_quantile(dataset, rng, size=None, *, epsilon_cap, epsilon_sum, U):
    """BUG (non-private data-dependent choice): T = the k-th largest total exactly (no exponential
    mechanism), reported as if private."""
    _cap_check(epsilon_cap, epsilon_sum, U)
    xs = np.sort(np.array(list(_totals(dataset).values())))[::-1]
    k = math.ceil(1 / epsilon_sum)
    T = min(U, float(xs[k - 1]) if k <= xs.size else 0.0)
    T = max(T, 1e-9)
    n = 1 if size is None else size
    out = np.stack([np.full(n, T), np.minimum(xs, T).sum() + rng.laplace(0.0, T / epsilon_sum, n)], axis=1)
    return out[0] if size is None else out


def private_cap_once_per_call(dataset, rng, size=None, *, epsilon_cap, epsilon_sum, U):
    """BUG (independence): one T per call, shared by its `size` releases."""
    one = private_cap_batched(dataset, rng, 1, epsilon_cap=epsilon_cap, epsilon_sum=epsilon_sum, U=U)[0]
    n = 1 if size is None else size
    xs = np.array(list(_totals(dataset).values()))
    s = np.minimum(xs, one[0]).sum() + rng.laplace(0.0, one[0] / epsilon_sum, n)
    out = np.stack([np.full(n, one[0]), s], axis=1)
    return out[0] if size is None else out


def private_cap_left_end(dataset, rng, size=None, *, epsilon_cap, epsilon_sum, U):
    """BUG (non-private data-dependent choice): the exponential mechanism picks an interval between the
    totals, and T is released as its LEFT END instead of a uniform point in it: T is then 0 or a user's
    exact total. A user added with a total strictly inside (0, U) makes a new endpoint, a value T takes
    with positive probability on one dataset and never on the other (an unbounded loss). The spec's
    pairs add their user at U, where no new left end appears."""
    _cap_check(epsilon_cap, epsilon_sum, U)
    if (dataset.values < 0).any():
        raise ValueError("values must be >= 0")
    xs = np.sort(np.array(list(_totals(dataset).values())))
    n = 1 if size is None else size
    cuts = np.unique(np.clip(np.r_[0.0, xs, U], 0.0, U))
    lo, hi = cuts[:-1], cuts[1:]
    above = xs.size - np.searchsorted(xs, (lo + hi) / 2, side="right")
    logw = np.log(hi - lo) + 0.5 * epsilon_cap * -np.abs(above - math.ceil(1 / epsilon_sum))
    p = np.exp(logw - logw.max())
    T = lo[rng.choice(lo.size, size=n, p=p / p.sum())]
    s = np.minimum(xs[None, :], T[:, None]).sum(axis=1) + rng.laplace(0.0, 1.0, n) * (T / epsilon_sum)
    out = np.stack([T, s], axis=1)
    return out[0] if size is None else out


from userdp.properties.adapter import Adapter  # noqa: E402

private_cap_adapter = Adapter("corpus/amin-private-cap-adapter", mechanism=private_cap_batched)


M = "papers.amin2019.corpus"
CORPUS = [
    CorpusEntry(
        "amin2019/loop-exponential-difference",
        ALGO,
        f"{M}:loop_exponential_difference",
        "none",
        "pass",
        "none: a dict of totals and Lap(b) = Exp(b) - Exp(b)",
        "correct alternative",
    ),
    CorpusEntry(
        "amin2019/staged-inverse-cdf",
        ALGO,
        f"{M}:staged_inverse_cdf",
        "none",
        "pass",
        "none: bincount totals and an inverse-CDF Laplace sampler, all stages",
        "correct alternative",
        exposes="stages",
    ),
    CorpusEntry(
        "amin2019/per-record-cap",
        ALGO,
        f"{M}:per_record_cap",
        "sensitivity",
        "privacy violation",
        "a user with r records at T moves the sum by rT: claimed eps, true r eps (4 eps on the audit's "
        "4-record user; unbounded in r)",
        "planted",
    ),
    CorpusEntry(
        "amin2019/staged-per-record-cap",
        ALGO,
        f"{M}:staged_per_record_cap",
        "sensitivity",
        "privacy violation",
        "as per-record-cap, with its stages exposed (the properties fail too)",
        "planted",
        exposes="stages",
    ),
    CorpusEntry(
        "amin2019/half-scale",
        ALGO,
        f"{M}:half_scale",
        "noise scale",
        "privacy violation",
        "Laplace scale T/(2 eps): claimed eps, true 2 eps",
        "planted",
    ),
    CorpusEntry(
        "amin2019/data-chosen-cap",
        ALGO,
        f"{M}:data_chosen_cap",
        "non-private data-dependent choice",
        "privacy violation",
        "T = eq. 6's optimum read from the data: the release's scale reveals it; "
        "true loss unbounded in general (the registry's planted amin2019.data-chosen-cap)",
        "planted",
    ),
    CorpusEntry(
        "amin2019/noise-once-per-call",
        ALGO,
        f"{M}:noise_once_per_call",
        "independence",
        "not independent",
        "the `size` releases of one call are one release repeated: an audit of them reads the noise as absent",
        "planted",
    ),
    CorpusEntry(
        "amin2019/no-noise-at-eps-zero",
        ALGO,
        f"{M}:no_noise_at_eps_zero",
        "domain",
        "invariant violation",
        "eps = 0 releases g_T without noise: infinite loss where the paper excludes the input",
        "planted",
    ),
    CorpusEntry(
        "amin2019/cap-at-half-T",
        ALGO,
        f"{M}:cap_twice",
        "optimality",
        "deviation from reference",
        "private (sensitivity T/2), but the sum is g_{T/2}, not g_T: biased for users above T/2",
        "planted",
    ),
    CorpusEntry(
        "amin2019/staged-optimal-cap-off-by-one",
        ALGO,
        f"{M}:staged_optimal_cap_off_by_one",
        "optimality",
        "invariant violation",
        "eq. 6's cap read one rank too low: the (k+1)-th largest total; the release (public T) is correct",
        "planted",
        exposes="stages",
    ),
    CorpusEntry(
        "amin2019/staged-disagreeing",
        ALGO,
        f"{M}:staged_disagreeing",
        "sensitivity",
        "invariant violation",
        "its statistic stage caps at 2T while its mechanism caps at T: stages "
        "that disagree (the statistic differs from the reference's, and from the releases' mean)",
        "planted",
        exposes="stages",
    ),
    CorpusEntry(
        "amin2019/one-release-clipping",
        ALGO,
        f"{M}:one_release_clipping",
        "none",
        "pass",
        "none: one release per call, names cap and eps, negative values clipped to 0 (policy clip, inferred)",
        "correct alternative",
        param_map=(("T", "cap"), ("epsilon", "eps")),
    ),
    CorpusEntry(
        "amin2019/one-release-trusting",
        ALGO,
        f"{M}:one_release_trusting",
        "none",
        "pass",
        "none: one release per call; values >= 0 is a documented precondition, not checked (policy trust)",
        "correct alternative",
        inputs="trust",
    ),
    CorpusEntry(
        "amin2019/one-release-refuse-declared",
        ALGO,
        f"{M}:one_release_trusting",
        "domain",
        "invariant violation",
        "declared --inputs refuse, but releases on a negative value (a negative "
        "total lowers g_T by more than T: unbounded loss)",
        "planted",
        inputs="refuse",
    ),
    CorpusEntry(
        "amin2019/noise-from-largest-record",
        ALGO,
        f"{M}:noise_from_largest_record",
        "noise scale",
        "privacy violation",
        "Laplace scale min(T, max record) / eps: on users all below the cap the "
        "noise is smaller than T / eps and moves with the data (unbounded loss)",
        "planted",
    ),
    CorpusEntry(
        "amin2019/five-percent-less-noise",
        ALGO,
        f"{M}:five_percent_less_noise",
        "noise scale",
        "privacy violation",
        "Laplace scale 0.95 T / eps: true loss eps / 0.95 = 1.053 eps",
        "planted",
        small=True,
    ),
    CorpusEntry(
        "amin2019/variance-eight-percent-high",
        ALGO,
        f"{M}:variance_eight_percent_high",
        "variance",
        "deviation from reference",
        "Laplace scale 1.04 T / eps: private, 8% more variance",
        "planted",
        small=True,
    ),
    CorpusEntry(
        "amin2019/safety-margin-bias",
        ALGO,
        f"{M}:safety_margin_bias",
        "bias",
        "deviation from reference",
        "adds T/100 to every release: private, biased by 0.7% of the noise's sd at eps = 1",
        "planted",
        small=True,
    ),
    CorpusEntry(
        "amin2019/refuses-total-above-cap",
        ALGO,
        f"{M}:refuses_total_above_cap",
        "data-dependent behaviour",
        "privacy violation",
        "raises ValueError when a user's total exceeds T (instead of capping it): a neighbour without "
        "that user releases, probability 1 against 0, an unbounded loss",
        "planted",
    ),
    CorpusEntry(
        "amin2019/warns-when-capping",
        ALGO,
        f"{M}:warns_when_capping",
        "data-dependent behaviour",
        "privacy violation",
        "a correct release that warns (UserWarning) when it caps a user's total: the warning tells a "
        "dataset with a heavy user from its neighbour without, probability 1 against 0",
        "planted",
    ),
    CorpusEntry(
        "amin2019/clamped-at-zero",
        ALGO,
        f"{M}:clamped_at_zero",
        "bias",
        "deviation from reference",
        "the release clamped at 0: post-processing, private (true loss eps), but biased and less spread "
        "where g_T is near 0, which the spread rule alone reads as under-noised",
        "planted",
    ),
    CorpusEntry(
        "amin2019/clips-to-absolute-value",
        ALGO,
        f"{M}:clips_to_absolute_value",
        "domain",
        "invariant violation",
        "declared --inputs clip, but a negative value counts as its absolute value",
        "planted",
        inputs="clip",
    ),
    CorpusEntry(
        "amin2019/private-cap-loop",
        CAP_ALGO,
        f"{M}:private_cap_loop",
        "none",
        "pass",
        "none: one release per call, the exponential mechanism over the intervals between totals",
        "correct alternative",
    ),
    CorpusEntry(
        "amin2019/private-cap-batched",
        CAP_ALGO,
        f"{M}:private_cap_batched",
        "none",
        "pass",
        "none: batched, the capped sums by sorting the totals once",
        "correct alternative",
    ),
    CorpusEntry(
        "amin2019/private-cap-one-clipping",
        CAP_ALGO,
        f"{M}:private_cap_one_clipping",
        "none",
        "pass",
        "none: one release per call, negative values clipped to 0 (declared --inputs clip)",
        "correct alternative",
        inputs="clip",
    ),
    CorpusEntry(
        "amin2019/private-cap-adapter",
        CAP_ALGO,
        f"{M}:private_cap_adapter",
        "none",
        "pass",
        "none: the batched implementation wrapped in an Adapter",
        "correct alternative",
        exposes="stages",
    ),
    CorpusEntry(
        "amin2019/private-cap-no-half",
        CAP_ALGO,
        f"{M}:private_cap_no_half",
        "sensitivity",
        "deviation from reference",
        "exp(eps_cap u) without the 1/2: the cap is 2 eps_cap-DP; the excess "
        "(0.35 over a composed 3.5 on the registry's pairs) is below what an audit resolves, the sharper "
        "cap distribution is not",
        "planted",
    ),
    CorpusEntry(
        "amin2019/private-cap-whole-budget",
        CAP_ALGO,
        f"{M}:private_cap_whole_budget",
        "budget",
        "deviation from reference",
        "the sum's noise at eps_cap + eps_sum after spending eps_cap on T: "
        "the release is (2 eps_cap + eps_sum)-DP, 4 against the claim 3.5; on the registry's pairs the "
        "excess is 0.35 of 3.85, below what an audit of 10^5 releases resolves; the sum's spread, 14% "
        "below the reference's, is graded a deviation (the release has no declared noise family)",
        "planted",
    ),
    CorpusEntry(
        "amin2019/private-cap-noise-from-U",
        CAP_ALGO,
        f"{M}:private_cap_noise_from_U",
        "optimality",
        "deviation from reference",
        "noise U / eps_sum instead of T / eps_sum: private, needlessly noisy",
        "planted",
    ),
    CorpusEntry(
        "amin2019/private-cap-exact-quantile",
        CAP_ALGO,
        f"{M}:private_cap_exact_quantile",
        "non-private data-dependent choice",
        "privacy violation",
        "T is the k-th largest total read exactly from the data and released: unbounded loss",
        "planted",
    ),
    CorpusEntry(
        "amin2019/private-cap-left-end",
        CAP_ALGO,
        f"{M}:private_cap_left_end",
        "non-private data-dependent choice",
        "privacy violation",
        "T released as the chosen interval's left end, a user's exact total: a user added strictly inside "
        "(0, U) is a new value of T, of positive probability on one side only (unbounded loss); the spec's "
        "pairs add their user at U (no new endpoint), so only the pair search finds it",
        "planted",
    ),
    CorpusEntry(
        "amin2019/private-cap-once-per-call",
        CAP_ALGO,
        f"{M}:private_cap_once_per_call",
        "independence",
        "not independent",
        "one T per call shared by its releases",
        "planted",
    ),
]
