"""Positive and negative controls: textbook mechanisms whose true privacy loss is known.

The auditor is itself tested on these (docs/design.md §8.7): correct ones must not be flagged
more often than alpha, broken ones must be flagged. Names are fixed (the README and tests cite them);
each builder's docstring gives the true privacy loss and its source. Sources:

- [DR14] Dwork, Roth. The Algorithmic Foundations of Differential Privacy (2014).
- [BW18] Balle, Wang. Improving the Gaussian mechanism for differential privacy (ICML 2018).
- [LSL17] Lyu, Su, Li. Understanding the Sparse Vector Technique for Differential Privacy
  (PVLDB 10(6), 2017), Figure 1, Algorithms 1-6.
- [DWWZK18] Ding, Wang, Wang, Zhang, Kifer. Detecting Violations of Differential Privacy
  (StatDP, CCS 2018), Section 6 (the histogram with scale eps, iSVT3, the input patterns).
- [Google] google/differential-privacy, C++ stochastic tester tests
  (BoundedSumWithInsufficientNoise, CountNoDpError).

All query sensitivities here are Delta = 1. Outputs are vectorised over ``size``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from userdp.reference._checks import check_positive, check_sensitivity
from userdp.reference.claims import ApproxDP, Claims, GaussianDP, PureDP
from userdp.reference.mechanisms import gaussian_gdp_mu, gaussian_sigma_analytic

from userdp.audits.engine.ceiling import NoiseModel

from userdp.audits.engine.registry import AuditSetup, Entry, register

__all__ = ["gaussian_setup"]

_HERE = __name__


@dataclass(frozen=True, eq=False)
class Pair:
    """A named control pair (the audit reads .first, .second, .description)."""

    first: object
    second: object
    description: str


def _identity(q):
    """The noise-free statistic of a control whose "dataset" is the query answer itself."""
    return q


# --------------------------------------------------------------------------- scalars
def laplace_setup(epsilon=1.0, sensitivity=1.0, scale_factor=1.0) -> AuditSetup:
    """Laplace mechanism q + Lap(scale_factor * Delta / eps) on |q(D) - q(D')| = Delta.

    True loss: eps / scale_factor [DR14, Thm 3.6]; scale_factor = 1 is the correct
    mechanism (control.laplace), 1/2 is control.laplace-half-scale (true 2 eps).
    """
    claim = PureDP(epsilon)  # validates epsilon first
    b = check_positive(scale_factor, "scale_factor") * check_sensitivity(sensitivity) / claim.epsilon

    def mechanism(q, rng, size):
        return q + rng.laplace(0.0, b, size)

    return AuditSetup(
        mechanism,
        [Pair(0.0, float(sensitivity), f"q = 0 vs q = {sensitivity}")],
        claim,
        noise=NoiseModel("laplace", _identity, b),
    )


def gaussian_setup(epsilon=1.0, delta=1e-5, sensitivity=1.0) -> AuditSetup:
    """Analytic Gaussian mechanism q + N(0, sigma^2), sigma from [BW18, Thm 8].

    True loss: exactly (eps, delta) on |q(D) - q(D')| = Delta [BW18, Thm 8] (tight), and
    exactly mu = Delta / sigma-GDP (``mechanisms.gaussian_gdp_mu``, DRS22 Thm 2.7), declared beside it.
    """
    sigma = gaussian_sigma_analytic(sensitivity, epsilon, delta)

    def mechanism(q, rng, size):
        return q + rng.normal(0.0, sigma, size)

    claim = Claims(ApproxDP(epsilon, delta), GaussianDP(gaussian_gdp_mu(sensitivity, sigma), delta))
    return AuditSetup(
        mechanism,
        [Pair(0.0, float(sensitivity), f"q = 0 vs q = {sensitivity}")],
        claim,
        noise=NoiseModel("gaussian", _identity, sigma),
    )


def bounded_sum_setup(epsilon=1.0, lower=0.0, upper=1.0, n=10) -> AuditSetup:
    """Bounded sum sum(clip(x, lower, upper)) + Lap(Delta / eps), *reported as eps/2-DP*.

    Delta = max(|lower|, |upper|) under add/remove-one-record. The noise is right for
    eps, the claim says eps/2. True loss: eps = 2x the claim (Laplace
    noise at eps against a claim of eps/2; [Google] BoundedSum tests with insufficient noise).
    """
    claim = PureDP(epsilon / 2.0) if epsilon > 0 else PureDP(epsilon)
    delta_sum = max(abs(lower), abs(upper))

    def statistic(x):
        return np.clip(np.asarray(x, float), lower, upper).sum()

    def mechanism(x, rng, size):
        return statistic(x) + rng.laplace(0.0, delta_sum / epsilon, size)

    base = np.full(n, 0.5 * (lower + upper))
    pairs = [
        Pair(base, np.append(base, upper), f"{n} records at the midpoint vs + one record at upper"),
        Pair(base, np.append(base, lower), f"{n} records at the midpoint vs + one record at lower"),
    ]
    return AuditSetup(mechanism, pairs, claim, noise=NoiseModel("laplace", statistic, delta_sum / epsilon))


def count_error_leak_setup(epsilon=1.0, max_count=100) -> AuditSetup:
    """Noisy count with an error path: count + Lap(1/eps), but -1 ("error: too many
    records") when the true count exceeds ``max_count``, instead of saturating.

    True loss: infinite. On the pair (max_count, max_count + 1) records, Pr[output = -1]
    is 1 on D' and 0 on D (a Laplace variate is never exactly -1). The classic
    "error path leaks" bug: the exception, not the noisy value, reveals the record
    (cf. [Google] counting tests; StatDP's point that any deterministic side channel
    breaks DP [DWWZK18, §2]).
    """
    claim = PureDP(epsilon)

    def mechanism(count, rng, size):
        if count > max_count:
            return np.full(size, -1.0)  # the leaky error code
        return count + rng.laplace(0.0, 1.0 / epsilon, size)

    return AuditSetup(
        mechanism, [Pair(int(max_count), int(max_count) + 1, f"{max_count} records vs {max_count + 1} records")], claim
    )


def count_raises_setup(epsilon=1.0, max_count=100) -> AuditSetup:
    """Noisy count whose error path raises: count + Lap(1/eps), but ``ValueError("too many
    records")`` when the true count exceeds ``max_count``, a refusal that reads the data.

    True loss: infinite. On the pair (max_count, max_count + 1) records, the call raises with
    probability 1 on D' and 0 on D: everything observable is an output, and an exception tells the
    neighbours apart as surely as control.count-error-leak's -1 does ([Google]'s stochastic tester
    counts error statuses as outputs, CountNoDpError). The auditor counts the indicator of "the
    call raised" as a set of its own (audits/engine/outcomes.py); batched, the raising call is drawn
    again one release per call.
    """
    claim = PureDP(epsilon)

    def mechanism(count, rng, size):
        if count > max_count:
            raise ValueError(f"too many records: {count} > {max_count}")  # the leaky refusal
        return count + rng.laplace(0.0, 1.0 / epsilon, size)

    return AuditSetup(
        mechanism, [Pair(int(max_count), int(max_count) + 1, f"{max_count} records vs {max_count + 1} records")], claim
    )


# --------------------------------------------------------------------------- vectors
def histogram_eps_scale_setup(epsilon=0.7, bins=5) -> AuditSetup:
    """Histogram h + Lap(eps)^bins: the bug uses scale eps instead of 1/eps.

    Add/remove one record changes one bin by 1 (L1 sensitivity 1). True loss: 1/eps
    [DWWZK18, §6.1]; it violates the eps claim iff eps < 1 (eps0 = 0.7: 1/0.7 = 1.43).
    """
    claim = PureDP(epsilon)
    h = np.arange(bins, dtype=float) + 1.0  # (bins,)

    def mechanism(hist, rng, size):
        return np.asarray(hist, float) + rng.laplace(0.0, epsilon, (size, bins))  # (size, bins)

    e0 = np.eye(bins)[0]
    return AuditSetup(
        mechanism,
        [Pair(h, h + e0, "add a record to bin 0"), Pair(h, h - e0, "remove a record from bin 0")],
        claim,
        output="vector",
        noise=NoiseModel("laplace", _identity, epsilon),
    )


# --------------------------------------------------------------------------- discrete
def noisy_max_setup(epsilon=1.0, k=5) -> AuditSetup:
    """Report noisy argmax of k sensitivity-1 queries with Lap(2/eps) noise.

    True loss: at most eps [DR14, Claim 3.9, whose proof with general (non-monotone)
    sensitivity-1 queries needs scale 2/eps]; StatDP's correct NoisyMax [DWWZK18, §6].
    """
    claim = PureDP(epsilon)

    def mechanism(q, rng, size):
        return np.argmax(np.asarray(q, float) + rng.laplace(0.0, 2.0 / epsilon, (size, k)), axis=1)

    ones = np.ones(k)
    pairs = [
        Pair(ones, ones + np.eye(k)[0], "all ones vs one above"),
        Pair(ones, ones - np.eye(k)[0], "all ones vs one below"),
        Pair(ones, np.r_[2.0, np.zeros(k - 1)], "all ones vs one above, rest below"),
        Pair(ones, np.r_[0.0, 2.0 * np.ones(k - 1)], "all ones vs one below, rest above"),
    ]
    return AuditSetup(mechanism, pairs, claim, output="discrete")


def _svt(q, rng, size, *, T, c, rho_scale, nu_scale, resample_scale=None):
    """Vectorised SVT run: (size, m) int array, 1 = TOP, 0 = BOTTOM, -1 = not answered.

    ``nu_scale = 0`` means no query noise; ``c = None`` means no cutoff.
    """
    q = np.asarray(q, float)  # (m,)
    rho = rng.laplace(0.0, rho_scale, size)  # (size,)
    count = np.zeros(size, dtype=np.int64)
    out = np.empty((size, q.size), dtype=np.int8)
    for i, qi in enumerate(q):
        active = count < c if c is not None else np.ones(size, dtype=bool)
        nu = rng.laplace(0.0, nu_scale, size) if nu_scale > 0 else 0.0
        top = active & (qi + nu >= T + rho)
        out[:, i] = np.where(active, top, -1)
        count += top
        if resample_scale is not None:
            rho = np.where(top, rng.laplace(0.0, resample_scale, size), rho)
    return out


SVT_PAIRS_M = 10


def _svt_pairs(m=SVT_PAIRS_M):
    """StatDP's SVT input patterns [DWWZK18, §6.2]; D is all ones."""
    d = np.ones(m)
    patterns = [
        ("one above", np.r_[2.0, np.ones(m - 1)]),
        ("one below", np.r_[0.0, np.ones(m - 1)]),
        ("one above, rest below", np.r_[2.0, np.zeros(m - 1)]),
        ("rest below, last above", np.r_[np.zeros(m - 1), 2.0]),
        ("one below, rest above", np.r_[0.0, 2.0 * np.ones(m - 1)]),
        ("half below, half above", np.r_[np.zeros(m // 2), 2.0 * np.ones(m - m // 2)]),
        ("rest above, last below", np.r_[2.0 * np.ones(m - 1), 0.0]),
    ]
    return [Pair(d, q2, f"{m} queries all 1 vs {name}") for name, q2 in patterns]


def svt_setup(variant="svt1", epsilon=1.0, c=1, T=1.0) -> AuditSetup:
    """The SVT variants of [LSL17, Fig. 1] with Delta = 1, eps1 + eps2 = eps.

    - "svt1": [LSL17] Alg. 1. eps1 = eps2 = eps/2, rho ~ Lap(1/eps1), nu ~ Lap(2c/eps2),
      stop after c TOPs. True loss <= eps [LSL17, Thm 2]. Correct.
    - "svt2": [LSL17] Alg. 2 (Dwork-Roth 2014). rho ~ Lap(c/eps1), nu ~ Lap(2c/eps1),
      rho resampled ~ Lap(c/eps2) after each TOP. True loss <= eps. Correct.
    - "isvt3": [LSL17] Alg. 4 (Lee-Clifton 2014), StatDP's iSVT3. eps1 = eps/4,
      rho ~ Lap(1/eps1), nu ~ Lap(1/eps2) with eps2 = 3 eps/4 (not scaled with c).
      True loss (1 + 6c) eps / 4 = 1.75 eps at c = 1 [LSL17, §4.1; DWWZK18, §6.2].
    - "no-query-noise": [LSL17] Alg. 5 (Stoddard et al. 2014): rho ~ Lap(2/eps), nu = 0,
      no cutoff. Not eps'-DP for any finite eps' [LSL17, §4.1].
    """
    claim = PureDP(epsilon)
    e1 = e2 = epsilon / 2.0
    if variant == "svt1":
        kw = dict(c=c, rho_scale=1.0 / e1, nu_scale=2.0 * c / e2)
    elif variant == "svt2":
        kw = dict(c=c, rho_scale=c / e1, nu_scale=2.0 * c / e1, resample_scale=c / e2)
    elif variant == "isvt3":
        kw = dict(c=c, rho_scale=4.0 / epsilon, nu_scale=4.0 / (3.0 * epsilon))
    elif variant == "no-query-noise":
        kw = dict(c=None, rho_scale=1.0 / e1, nu_scale=0.0)
    else:
        raise ValueError(f"variant must be svt1, svt2, isvt3 or no-query-noise, got {variant!r}")

    def mechanism(q, rng, size):
        return _svt(q, rng, size, T=T, **kw)

    mechanism.__qualname__ = f"svt[{variant}]"
    return AuditSetup(mechanism, _svt_pairs(), claim, output="discrete")


# --------------------------------------------------------------------------- named builders
def laplace_half_scale_setup(epsilon=1.0, sensitivity=1.0) -> AuditSetup:
    """Laplace with half the scale, Lap(Delta / (2 eps)). True loss: 2 eps [DR14, Thm 3.6]."""
    return laplace_setup(epsilon, sensitivity, scale_factor=0.5)


def svt1_setup(epsilon=1.0, c=1, T=1.0) -> AuditSetup:
    """[LSL17] Alg. 1. True loss: at most eps [LSL17, Thm 2]. See ``svt_setup``."""
    return svt_setup("svt1", epsilon, c, T)


def svt2_setup(epsilon=1.0, c=2, T=1.0) -> AuditSetup:
    """[LSL17] Alg. 2 (Dwork-Roth 2014). True loss: at most eps [LSL17, §3]. See ``svt_setup``."""
    return svt_setup("svt2", epsilon, c, T)


def isvt3_setup(epsilon=1.0, c=1, T=1.0) -> AuditSetup:
    """[LSL17] Alg. 4 = StatDP iSVT3. True loss: (1 + 6c) eps / 4 = 1.75 eps at c = 1
    [LSL17, §4.1; DWWZK18, §6.2]. See ``svt_setup``."""
    return svt_setup("isvt3", epsilon, c, T)


def svt_no_query_noise_setup(epsilon=1.0, T=1.0) -> AuditSetup:
    """[LSL17] Alg. 5 (no query noise). True loss: infinite [LSL17, §4.1]. See ``svt_setup``."""
    return svt_setup("no-query-noise", epsilon, None, T)


# --------------------------------------------------------------------------- entries
def _entry(name, algorithm, relation, build, params, expected, true_epsilon, func, samples=None):
    register(
        Entry(
            name=name,
            kind="control",
            paper="control",
            algorithm=algorithm,
            relation=relation,
            function=f"{_HERE}.{func}",
            expected=expected,
            build=build,
            params=params,
            true_epsilon=true_epsilon,
            samples=samples,
        )
    )


OK, BAD = "no violation found", "violation"
SCALAR = "|q(D) - q(D')| <= sensitivity"
RECORD = "add/remove one record"
QUERIES = "each query changes by <= 1"

_entry(
    "control.laplace",
    "Laplace mechanism",
    SCALAR,
    laplace_setup,
    {"epsilon": 1.0, "sensitivity": 1.0},
    OK,
    1.0,
    "laplace_setup",
)
_entry(
    "control.gaussian",
    "analytic Gaussian mechanism (BW18)",
    SCALAR,
    gaussian_setup,
    {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0},
    OK,
    1.0,
    "gaussian_setup",
)
_entry(
    "control.noisy-max",
    "report noisy argmax, Lap(2/eps)",
    QUERIES,
    noisy_max_setup,
    {"epsilon": 1.0, "k": 5},
    OK,
    1.0,
    "noisy_max_setup",
)
_entry(
    "control.svt1", "SVT, LSL17 Alg. 1", QUERIES, svt1_setup, {"epsilon": 1.0, "c": 1, "T": 1.0}, OK, 1.0, "svt1_setup"
)
_entry(
    "control.svt2",
    "SVT, LSL17 Alg. 2 (Dwork-Roth)",
    QUERIES,
    svt2_setup,
    {"epsilon": 1.0, "c": 2, "T": 1.0},
    OK,
    1.0,
    "svt2_setup",
)
_entry(
    "control.laplace-half-scale",
    "Laplace with half the scale",
    SCALAR,
    laplace_half_scale_setup,
    {"epsilon": 1.0, "sensitivity": 1.0},
    BAD,
    2.0,
    "laplace_half_scale_setup",
)
_entry(
    "control.histogram-eps-scale",
    "histogram with scale eps instead of 1/eps",
    RECORD,
    histogram_eps_scale_setup,
    {"epsilon": 0.7, "bins": 5},
    BAD,
    1 / 0.7,
    "histogram_eps_scale_setup",
)
_entry(
    "control.isvt3",
    "iSVT3 = LSL17 Alg. 4 (Lee-Clifton)",
    QUERIES,
    isvt3_setup,
    {"epsilon": 1.0, "c": 1, "T": 1.0},
    BAD,
    1.75,
    "isvt3_setup",
)
_entry(
    "control.svt-no-query-noise",
    "SVT without query noise, LSL17 Alg. 5",
    QUERIES,
    svt_no_query_noise_setup,
    {"epsilon": 1.0, "T": 1.0},
    BAD,
    float("inf"),
    "svt_no_query_noise_setup",
)
_entry(
    "control.sum-half-epsilon",
    "bounded sum reporting eps/2",
    RECORD,
    bounded_sum_setup,
    {"epsilon": 1.0, "lower": 0.0, "upper": 1.0, "n": 10},
    BAD,
    1.0,
    "bounded_sum_setup",
)
_entry(
    "control.count-error-leak",
    "count whose error path leaks",
    RECORD,
    count_error_leak_setup,
    {"epsilon": 1.0, "max_count": 100},
    BAD,
    float("inf"),
    "count_error_leak_setup",
)
_entry(
    "control.count-raises",
    "count whose error path raises",
    RECORD,
    count_raises_setup,
    {"epsilon": 1.0, "max_count": 100},
    BAD,
    float("inf"),
    "count_raises_setup",
    samples=20_000,  # one release per call once a call raised (sampling.draw_outcomes): 2 x 20,000 calls
)
