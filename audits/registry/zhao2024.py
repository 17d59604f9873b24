"""Registry entries for Zhao et al. 2024 (HLM, poster) and its baseline WME (Levy et al. 2021).

The claim is user-level (epsilon, delta)-DP under replace-user-items (m_i kept, public),
epsilon = 3, delta = 1e-5. At epsilon = 1 the pairs move a release by a tenth of a noise
standard deviation and the (eps, 1e-5) set holds a few dozen outputs; at 3 the audit resolves
the loss (figures in docs/papers/zhao2024.md). The privacy argument does not depend on epsilon.

HLM's pair (``worst_case_pair``): n = 2,000 one-item users (R = R_c = 1, so T = 2 and
w = 1/2000 for everyone), ``QUADRATIC`` = 1,060 of them spread inside [-R/2, R/2] (within every
threshold of the minimiser), the rest far out, half at -100 R and half at +100 R, and user 0
moving from -100 R to +100 R (in d = 3 along the first axis, the cluster in the ball of radius
R/2). The far users' pulls cancel, so the curvature at the minimiser is the cluster's weight
K = 0.53 and user 0's move shifts mu0 by 2 w T / K (closed form, tested): 0.943 of the
calibrated B = 2 c / kappa0 (+ the certified slack), since kappa0 / K = 0.5 / 0.53. This is
the worst case the proposal allows up to that factor: PTR passes only when more than kappa0
of the weight sits in the quadratic region, and the shift of a user is 2 c / (that weight).
The cluster is large enough that gamma = J on both sides, so the test fails with probability
<= 1e-12 and every release is Clip(mu0) + N(0, sigma_pass^2): the entry declares that
Gaussian noise model for its ceiling. (The imbalanced ``audit_dataset`` with its heaviest and
lightest users moved, the pairs audited before, realise at most 0.5 of B: the reserve there is
a property of those pairs, not of the mechanism.) The white-box search
(``userdp reproduce whitebox-sensitivity``) searches user 0's two positions on this dataset
and the imbalanced one for the ratio to B.

WME (``zhao2024.wme``, d = 1) is audited on ``audit_dataset`` with the items moved to the
support's poles (-R vs +R: WME refuses data outside its declared support). There m_min = 5
gives tau = 1.21 R and K = 2 bins, and either chosen interval (width 3 tau) covers [-R, R],
so nothing is clipped: the release is the plain mean of the local averages plus
N(0, sigma_2^2), which the entry declares as its noise model. WME in d = 3 is not registered
(each release rotates all n averages: far over the budget of ``userdp audit --all``);
tests/test_zhao2024_wme.py checks its d = 3 sensitivities by brute force. The pole pair moves
the mean by 2R/n = Delta_2 exactly. Its claim carries the exact GDP of the two composed
Gaussians; stage I (the histogram) moves by one count in two bins and is nearly invisible in
the release, so mu tightness is about mu_2 / mu.

``userdp validate`` specs (end of the module): ``zhao2024.hlm`` (its release is Clip(mu0) plus a
scale mixture of centred Gaussians; the flatten appends |x| so that a PTR decision shared by
the releases of one call shows) and ``zhao2024.wme`` in d = 1 (a mixture over the noisy
argmax; the statistic is its exact mean). Corpus: tests/corpus/zhao2024.py.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from userdp.reference import zhao2024 as Z
from userdp.reference import zhao2024_wme as W
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import REPLACE_USER_ITEMS, NeighbourPair

from userdp.audits.ceiling import NoiseModel

from . import AuditSetup, Entry, register

PAPER = "Zhao et al. 2024 (poster)"
EPSILON, DELTA, R, R_C = 3.0, 1e-5, 1.0, 1.0
SAMPLES = 200_000
HLM_SAMPLES = 1_000_000   # Gaussian tails at delta = 1e-5: 10^6 per side takes HLM to 0.48-0.56 of eps = 3
COUNTS = np.ceil(200 / np.sqrt(np.arange(1, 2001))).astype(np.int64)


def audit_dataset(d: int = 1, counts=COUNTS, seed: int = 2024) -> UserDataset:
    """Users l = 0..n-1 with counts[l] items uniform on [-R, R] (d = 1) or on the cube
    [-R, R]^d scaled by 1/sqrt(d) (so that ||x|| <= R)."""
    rng = np.random.default_rng(seed)
    ids = np.repeat(np.arange(len(counts)), counts)
    x = rng.uniform(-R, R, ids.size if d == 1 else (ids.size, d))
    return UserDataset(x if d == 1 else x / np.sqrt(d), ids)


def _params(**kw) -> dict:
    return {"epsilon": EPSILON, "delta": DELTA, "R": R, "R_c": R_C, **kw}


def audit_users(D: UserDataset) -> list[int]:
    """The largest user, the user with the largest w_k T_k, and a smallest user (positions)."""
    p = Z.release_plan(D, **_params())
    m = D.counts
    return list(dict.fromkeys([int(np.argmax(m)), int(np.argmax(p.w * p.T)), int(np.argmin(m))]))


def moved_pairs(D: UserDataset, users, at: float) -> list[NeighbourPair]:
    """User k's items all at -at vs all at +at (first coordinate), m_k kept (replace-user-items)."""
    e1 = 1.0 if D.values.ndim == 1 else np.eye(D.d)[0]
    pairs = []
    for k in users:
        rows = D.user_ids == D.users[k]
        a, b = np.array(D.values), np.array(D.values)
        a[rows], b[rows] = -at * e1, at * e1
        pairs.append(NeighbourPair(D.with_fields(values=a), D.with_fields(values=b), REPLACE_USER_ITEMS.name,
                                   int(D.users[k]), f"user {k} (m = {D.counts[k]}): items at -{at:g} vs +{at:g}"))
    return pairs


def extreme_pairs(D: UserDataset, users) -> list[NeighbourPair]:
    """HLM's pairs: user k's items at -100 R vs +100 R, beyond every threshold."""
    return moved_pairs(D, users, 100 * R)


def realised_share(pair: NeighbourPair) -> float:
    """||Clip mu0(first) - Clip mu0(second)|| / B: the share of the calibrated sensitivity the
    pair uses (exact, no sampling)."""
    a, b = Z.release_plan(pair.first, **_params()), Z.release_plan(pair.second, **_params())
    return float(np.linalg.norm(a.clipped - b.clipped) / a.B)


QUADRATIC = 1060      # cluster users of ``worst_case_pair``: weight 0.53 = kappa0 + 60 w, so gamma = J


def worst_case_pair(d: int = 1, n: int = 2000, quadratic: int = QUADRATIC, seed: int = 7) -> NeighbourPair:
    """n one-item users: ``quadratic`` of them in [-R/2, R/2] (d = 1) or the ball of radius R/2
    (d > 1), inside every threshold T = 2R; the others half at -100 R e1 and half at +100 R e1;
    user 0 from -100 R e1 to +100 R e1. Shift of mu0: 2 w T / K, K = quadratic / n (module docstring)."""
    rng = np.random.default_rng(seed)
    far = n - quadratic
    e1 = np.eye(d)[0]
    if d == 1:
        cluster = rng.uniform(-R / 2, R / 2, (quadratic, 1))
    else:
        u = rng.standard_normal((quadratic, d))
        cluster = u / np.linalg.norm(u, axis=1, keepdims=True) * (R / 2) * rng.uniform(0, 1, (quadratic, 1)) ** (1 / d)
    v = np.concatenate([[-100.0 * R * e1], cluster, np.tile(-100.0 * R * e1, (far // 2, 1)),
                        np.tile(100.0 * R * e1, (far - far // 2 - 1, 1))])
    w = v.copy()
    w[0] = 100.0 * R * e1
    if d == 1:
        v, w = v[:, 0], w[:, 0]
    D = UserDataset(v, np.arange(n))
    return NeighbourPair(D, D.with_fields(values=w), REPLACE_USER_ITEMS.name, 0,
                         f"{n} one-item users, {quadratic} in a cluster, the rest at +-100 R; user 0: -100 R vs +100 R")


def build_hlm(d: int = 1) -> AuditSetup:
    pairs = [worst_case_pair(d)]

    def mechanism(dataset, rng, size):
        return Z.mechanism(dataset, rng, size, **_params())

    plans = [Z.release_plan(x, **_params()) for p in pairs for x in (p.first, p.second)]
    noise = None
    if all(q.gamma == q.J for q in plans):     # the test fails w.p. <= 1e-12: pure Gaussian releases
        noise = NoiseModel("gaussian", lambda D: Z.release_plan(D, **_params()).clipped,
                           lambda D: Z.release_plan(D, **_params()).sigma_pass)
    return AuditSetup(mechanism=mechanism, pairs=pairs, claim=Z.claim(EPSILON, DELTA),
                      output="continuous" if d == 1 else "vector", noise=noise)


for _name, _d, _algorithm in (
        ("zhao2024.hlm", 1, "HLM: weighted Huber minimiser (poster eq. 2-3), Clip + Gaussian noise calibrated "
                            "by propose-test-release (eq. 4; calibration derived here)"),
        ("zhao2024.hlm-d3", 3, "HLM in d = 3: the vector Huber loss on ||s - y||, L2 sensitivity, Gaussian noise")):
    register(Entry(name=_name, kind="reference", paper=PAPER, algorithm=_algorithm,
                   relation=REPLACE_USER_ITEMS.name, function="userdp.reference.zhao2024.mechanism",
                   expected="no violation found", build=build_hlm, params={"d": _d}, true_epsilon=EPSILON,
                   samples=HLM_SAMPLES))


# --------------------------------------------------------------------------------- WME
def build_wme(d: int = 1) -> AuditSetup:
    D = audit_dataset(d)
    m = D.counts
    pairs = moved_pairs(D, list(dict.fromkeys([int(np.argmax(m)), int(np.argmin(m))])), R)   # WME's support poles

    def mechanism(dataset, rng, size):
        return W.wme_mechanism(dataset, EPSILON, DELTA, R, rng, size)

    def mean(dataset):
        y = dataset.local_averages()
        return y.mean(axis=0)

    noise = NoiseModel("gaussian", mean, lambda dataset: W.wme_noise_scales(dataset, EPSILON, DELTA, R)[1])
    return AuditSetup(mechanism=mechanism, pairs=pairs, claim=W.wme_claim(EPSILON, DELTA),
                      output="continuous" if d == 1 else "vector", noise=noise)


register(Entry(name="zhao2024.wme", kind="reference", paper=PAPER,
               algorithm="baseline WME (Levy et al. 2021): private histogram localisation, then the clipped "
                         "mean plus Gaussian noise; exact GDP of the composition",
               relation=REPLACE_USER_ITEMS.name, function="userdp.reference.zhao2024_wme.wme_mechanism",
               expected="no violation found", build=build_wme, params={"d": 1}, true_epsilon=EPSILON,
               samples=SAMPLES))


# ------------------------------------------------------------------ userdp validate
# HLM. The reference (``Z.mechanism``) always releases: when the PTR test fails it releases
# Clip(mu0) + N(0, sigma_fallback^2) (the global fallback, module docstring of reference/
# zhao2024.py, item 4), never "no release", so no row is NaN. Its release is Clip(mu0, R_c)
# plus a scale MIXTURE of centred Gaussians (sigma_pass with probability P(pass), else
# sigma_fallback): mean-zero noise on the noise-free point Clip(mu0, R_c). Two things follow.
# - The statistic validate compares mean releases with is Clip(mu0, R_c) (not the unclipped
#   mu0 of the suite's ``statistic`` stage): the exact mean of the reference's releases.
# - The PTR decision moves the SCALE of a release, never its centre. Validate's Kruskal-
#   Wallis test of independence (audits/validate.py, run_independence) compares locations,
#   so a target that draws the decision once per call (all `size` releases share sigma)
#   would look independent. ``_hlm_flatten`` therefore appends |x_k| to every coordinate x_k:
#   a fixed function of each release, so under independence the releases stay i.i.d. and
#   every check keeps its null law (KS: DKW holds for any law; Kruskal-Wallis: i.i.d. values
#   are exchangeable; mean: compared with its exact expectation, ``_hlm_statistic``), while
#   a shared sigma turns into a shift of |x| by call when the centre is near 0 (case 0).
#   The z test on |x| (a folded Gaussian mixture: skewness 2.44 and excess kurtosis 6.2 on
#   case 0, the worst) keeps its level within 4 per cent at N = 20,000 and z = 4.8 (two-sided
#   Edgeworth: the skewness term cancels; the O(1/N) terms give a relative change of the tail
#   of z (gamma^2 (z^5 - 10 z^3 + 15 z) / 72 + kappa_4 (z^3 - 3 z) / 24) / N = 0.037).
V_EPS, V_DELTA = 3.0, 1e-5
CROSS_N = 65          # one-item users at 0: gamma = 16 just above the threshold L = 15.35 at eps = 3


def _params_v(eps: float = V_EPS, **kw) -> dict:
    return {"epsilon": eps, "delta": V_DELTA, "R": R, "R_c": R_C, **kw}


def crossing_pair() -> NeighbourPair:
    """65 one-item users at 0 (R = 1, eps = 3: T = 2, w = 1/65, B = 0.1231, gamma = 16) vs the
    same with user 0 at +100 (mu0 = T/64, every other margin T - T/64: gamma = 15). The
    threshold L = ln(1/(2 delta_t)) / eps_t = 15.35 lies between: the reference passes with
    probability 0.69 on the first and 0.38 on the second (a Laplace(1/eps_t) coin on gamma)."""
    D = UserDataset(np.zeros(CROSS_N), np.arange(CROSS_N))
    v = np.zeros(CROSS_N)
    v[0] = 100.0 * R
    return NeighbourPair(D, D.with_fields(values=v), REPLACE_USER_ITEMS.name, 0,
                         "65 one-item users at 0 vs user 0 at +100 (gamma 16 vs 15, threshold 15.35)")


def realisation_pair(n: int = 2000, quadratic: int = 1040, seed: int = 7) -> NeighbourPair:
    """n one-item users: ``quadratic`` of them uniform on [-R/2, R/2] (inside every threshold
    T = 2R), the other n - quadratic far out, half at -100 R and half at +100 R, user 0 moving
    from -100 R to +100 R. The far users' pulls cancel, so the curvature at mu0 is the cluster's
    weight 0.52 = kappa0 + 40 w_max: user 0 moves mu0 by 2 w T / 0.52 = 0.96 of the calibrated
    B = 2 c / kappa0 (the registry's pairs, in a cluster of weight ~1, use about half of it),
    while gamma = 39 > L + 23 (the test fails with probability 1e-8). This is the pair where a
    sensitivity bound too small by a factor shows at nearly its full size."""
    rng = np.random.default_rng(seed)
    far = n - quadratic
    v = np.concatenate([[-100.0 * R], rng.uniform(-R / 2, R / 2, quadratic),
                        np.full(far // 2, -100.0 * R), np.full(far - far // 2 - 1, 100.0 * R)])
    D = UserDataset(v, np.arange(n))
    w = v.copy()
    w[0] = 100.0 * R
    return NeighbourPair(D, D.with_fields(values=w), REPLACE_USER_ITEMS.name, 0,
                         f"{n} one-item users, {quadratic} in a cluster, the rest at +-100 R; user 0: -100 R vs +100 R")


def range_pair() -> NeighbourPair:
    """Case 1's dataset ("het": items in [-0.9, 0.9], always passes) vs its lightest user's
    (m = 3) items moved to +100 R: max |x| jumps from 0.9 to 100 on the second."""
    D = _generated("het", 300, 50, 1)
    k = int(np.argmin(D.counts))
    v = np.array(D.values)
    v[D.user_ids == D.users[k]] = 100.0 * R
    return NeighbourPair(D, D.with_fields(values=v), REPLACE_USER_ITEMS.name, int(D.users[k]),
                         f"case 1 vs user {k}'s {D.counts[k]} items at +100 R")


def _generated(kind: str, n: int, top: int, seed: int) -> UserDataset:
    """n users with m_l = ceil(top / sqrt(l)) items (imbalanced, ``top`` down to a few), seeded:
    "het": items uniform on [-0.6, 0.6] around +0.3 for users of >= 10 items and -0.3 for the
    others (the heavy users differ: mu0 depends on how users are weighted); "heavy": 0.3 x
    Student t with 1.5 degrees of freedom (infinite variance; items far beyond R); "d2": the
    "het" design in d = 2 (items in the unit disc)."""
    rng = np.random.default_rng(seed)
    m = np.ceil(top / np.sqrt(np.arange(1, n + 1))).astype(np.int64)
    ids = np.repeat(np.arange(n), m)
    big = (m >= 10)[ids]
    if kind == "het":
        x = np.where(big, 0.3, -0.3) + rng.uniform(-0.6, 0.6, ids.size)
    elif kind == "heavy":
        x = 0.3 * rng.standard_t(1.5, ids.size)
    else:
        x = (rng.uniform(-1, 1, (ids.size, 2)) + np.where(big, 0.2, -0.2)[:, None] * np.array([1.0, 0.5])) / np.sqrt(2)
    return UserDataset(x * R, ids)


def _validation_cases() -> list:
    """Differential cases, all at eps = 3, delta = 1e-5, R = R_c = 1 (cap chosen by ``choose_cap``).

    0. The crossing dataset (``crossing_pair``'s first): gamma = 16, P(pass) = 0.69, centre 0.
       The release is a visible mixture (sigma_fallback / sigma_pass = 16): a deterministic
       test (always pass here), a test on the wrong threshold, or a decision shared by the
       releases of one call (case 0 is the independence case; |x| clusters by call) show.
    1. 300 imbalanced users (50 items down to 3), heavy users centred at +0.3, light ones at
       -0.3 ("het"): mu0 depends on the weights and thresholds; gamma = 49 (always passes),
       sigma_pass = 0.025, so the mean test resolves a change of mu0 by ~1e-3 and the KS test
       a change of sigma_pass by a few per cent (a sensitivity bound off by a factor).
    2. The same counts, items 0.3 x Student t(1.5) ("heavy"): the Huber minimiser (0.018)
       differs from the weighted mean (0.085); items up to 25 R, so an R read from the data
       changes everything here.
    3. "het" in d = 2, 200 users: the vector Huber loss on the L2 norm and L2 sensitivity.
    """
    from userdp.audits.validate import Case
    p = _params_v()
    return [Case(crossing_pair().first, p, "65 one-item users at 0 (PTR near its threshold: P(pass) = 0.69)"),
            Case(_generated("het", 300, 50, 1), p, "300 imbalanced users, heavy users offset (always passes)"),
            Case(_generated("heavy", 300, 50, 2), p, "300 imbalanced users, Student t(1.5) items (heavy tails)"),
            Case(_generated("d2", 200, 30, 3), p, "200 imbalanced users in d = 2")]


def _validation_designs() -> list:
    """Audit designs (claim (3, 1e-5)-DP, replace-user-items):

    - "PTR threshold": ``crossing_pair``. gamma 16 vs 15 around the threshold 15.35, with
      sigma_fallback = 16 sigma_pass. The reference passes w.p. 0.69 vs 0.38: the test is
      eps_t = 0.75-DP and the spread of a release reveals no more. A deterministic test
      (gamma > L without Laplace noise) passes always on the first and never on the second:
      N(0, 0.229^2) vs N(0.031, 3.72^2), whose tails give an unbounded loss. An R read from
      the data (max |x| = 100 on the second) inflates every threshold and the noise with it.
    - "sensitivity": ``realisation_pair``. The move of Clip(mu0) is 0.96 B; the reference's
      sigma_pass = 1.86 B gives mu = 0.52 (Gaussian DP), within (2.25, 5e-6) for the release;
      a bound B / 4 (c = max w_i T_i: one user's bounded gradient, without the factor 2 of a
      sign flip and without 1 / kappa0) gives mu = 2.07, whose (eps, 1e-5) loss is far above 3.
    - "item range": ``range_pair``. Both sides always pass (gamma = 49 and more); the reference
      moves Clip(mu0) by at most B. An R read from the data (R_eff = max(R, max |x|)) is 1 on
      the first and 100 on the second: every T_i and B grow 100-fold (B capped at 2 R_c), so
      sigma jumps from 0.025 to 3.7: the spread alone tells the two apart (unbounded loss).
    """
    from userdp.audits.validate import AuditDesign
    claim = Z.claim(V_EPS, V_DELTA)
    return [AuditDesign([crossing_pair()], _params_v(), claim, "PTR threshold: gamma 16 vs 15 around L = 15.35"),
            AuditDesign([realisation_pair()], _params_v(), claim,
                        "sensitivity: a user moving Clip(mu0) by 0.96 of the calibrated B"),
            AuditDesign([range_pair()], _params_v(), claim, "item range: a light user's items moved to +100 R")]


def _hlm_flatten(out, size: int):
    """(size, 2d): the release x and |x| per coordinate (see the comment above ``V_EPS``)."""
    try:
        a = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        return out                               # validate's own check names the bad output
    if a.ndim == 0 or a.shape[0] != size:
        return out
    a = a.reshape(size, -1)
    return np.hstack([a, np.abs(a)])


def pass_probability(plan) -> float:
    """P(gamma + Laplace(1/eps_t) > L), in closed form (the Laplace tail)."""
    a, eps_t = plan.threshold - plan.gamma, plan.budget["eps_test"]
    return 0.5 * math.exp(-eps_t * a) if a >= 0 else 1.0 - 0.5 * math.exp(eps_t * a)


def _folded_mean(c: np.ndarray, sigma: float) -> np.ndarray:
    """E|c + sigma Z|, Z ~ N(0, 1): sigma sqrt(2/pi) exp(-c^2 / (2 sigma^2)) + c (1 - 2 Phi(-c / sigma))."""
    return sigma * math.sqrt(2 / math.pi) * np.exp(-c * c / (2 * sigma * sigma)) + c * (1 - 2 * stats.norm.cdf(-c / sigma))


def _hlm_statistic(dataset, **params) -> np.ndarray:
    """The exact mean of ``_hlm_flatten`` of the reference's releases: (Clip(mu0), E|x|)."""
    p = Z.release_plan(dataset, **params)
    c, q = p.clipped, pass_probability(p)
    return np.concatenate([c, q * _folded_mean(c, p.sigma_pass) + (1 - q) * _folded_mean(c, p.sigma_fallback)])


def _register_validation():
    from userdp.audits.validate import Case, ValidationSpec, register_validation
    D = crossing_pair().first
    register_validation(ValidationSpec(
        algorithm="zhao2024.hlm", reference=Z.mechanism, statistic=_hlm_statistic,
        cases=_validation_cases, designs=_validation_designs, suite="userdp.properties.zhao2024",
        # noise_scale returns a dict (properties/zhao2024.py), which run_stages cannot compare
        stage_params={s: ("epsilon", "delta", "R", "R_c") for s in
                      ("weights", "thresholds", "statistic", "sensitivity", "ptr_distance")},
        takes_dataset=("weights", "thresholds", "statistic", "sensitivity", "ptr_distance"),
        refusals=lambda: [Case(D, _params_v(eps=0.0), "epsilon = 0 (no budget for the test or the noise)"),
                          Case(D, {**_params_v(), "delta": 0.0}, "delta = 0 (Gaussian noise and PTR need delta > 0)")],
        flatten=_hlm_flatten,
        why="release = Clip(mu0, R_c) + a scale mixture of centred Gaussians (PTR pass / fallback); "
            "flatten appends |x| so that a PTR decision shared within a call is visible"))


_register_validation()


# ------------------------------------------------------------------ userdp validate: WME (d = 1)
# The reference (``W.wme_mechanism``) always releases. In d = 1 its release is
# means[j] + N(0, sigma_2^2), j the noisy argmax of the histogram (stage I) and means[j] the
# mean of the local averages clipped to the interval of bin j: a MIXTURE over j, so the
# noise-free point is not one statistic. ``_wme_statistic`` is the exact mean of the release,
# sum_j P(j) means[j], with P(j) = int phi(z) prod_{k != j} Phi((c_j - c_k) / sigma_1 + z) dz (the
# argmax of independent Gaussians) by the trapezoid rule on [-12, 12] (10^4 steps: error far
# below 1e-9, the tails beyond 12 carry < 1e-32): validate then tests mean releases against it
# with its one-sample z test. Only d = 1 is validated: in d > 1 each release draws its own
# rotation, so its law has no closed form (and the registry audits d = 1 only, for time).
WME_M = 50           # items per user: tau = R sqrt(2 ln 40 / 50) = 0.384 R, K = 6 bins, 3 tau = 1.15 R < 2 R


def _wme_users(values, m: int = WME_M) -> UserDataset:
    """One user per value, each holding m items all equal to it (its local average)."""
    values = np.asarray(values, float)
    return UserDataset(np.repeat(values, m), np.repeat(np.arange(values.size), m))


def localisation_pair() -> NeighbourPair:
    """11 users at -0.9 R and 10 at +0.9 R (50 items each) vs one of the first moved to +0.9 R:
    the histogram's top bin flips between the two ends (counts 11:10 vs 10:11). The two
    intervals [-1.38, -0.23] R and [0.54, 1.69] R clip the other cluster, so the two possible
    releases are 1.3 R apart, 9 sigma_2 (eps = 3); the reference picks either with
    probabilities that differ by the Gaussian noise on one count (sigma_1 = 3.8)."""
    D = _wme_users(np.r_[np.full(11, -0.9), np.full(10, 0.9)] * R)
    v = np.array(D.values)
    v[D.user_ids == 0] = 0.9 * R
    return NeighbourPair(D, D.with_fields(values=v), REPLACE_USER_ITEMS.name, 0,
                         "11 users at -0.9 R, 10 at +0.9 R vs one moved across (the top bin flips)")


def width_pair(n: int = 30) -> NeighbourPair:
    """n users at 0 (50 items each: all in bin 2, interval [-0.62, 0.54] R of width 3 tau) with
    user 0 at -R vs +R: clipped to either end, the mean moves by 3 tau / n = Delta_2 exactly; the
    histogram moves one count between two empty bins (the argmax stays put)."""
    v = np.zeros(n)
    v[0] = -R
    D = _wme_users(v)
    w = np.array(D.values)
    w[D.user_ids == 0] = R
    return NeighbourPair(D, D.with_fields(values=w), REPLACE_USER_ITEMS.name, 0,
                         f"{n} users at 0, user 0 at -R vs +R (the interval's full width)")


def _wme_generated(n: int = 200, seed: int = 11) -> UserDataset:
    """n users with m_l = 20 + ceil(200 / l) items (220 down to 21), items uniform on [-R, R]
    around a user-level offset in [-0.3, 0.3] R, clamped to [-R, R]."""
    rng = np.random.default_rng(seed)
    m = 20 + np.ceil(200 / np.arange(1, n + 1)).astype(np.int64)
    ids = np.repeat(np.arange(n), m)
    x = np.clip(rng.uniform(-0.3, 0.3, n)[ids] + rng.uniform(-0.7, 0.7, ids.size), -1, 1)
    return UserDataset(x * R, ids)


def _wme_cases() -> list:
    """Differential cases (eps = 3, delta = 1e-5, R = 1):

    0. ``localisation_pair``'s first: the noisy argmax picks either end (a release mixture
       1.3 R wide): an argmax without noise, or one shared by the releases of a call, shows.
    1. 200 imbalanced users (m >= 21: tau = 0.59 R, K = 4, 3 tau < 2 R): the chosen bin's
       interval clips the upper tail; sigma_2 = 0.024 resolves a change of the clipping
       interval (the bin alone instead of bin +- tau) and a sigma_2 off by a factor.
    2. ``width_pair``'s second: 29 users at 0 and one at +R (clipped to the interval's top)."""
    from userdp.audits.validate import Case
    p = {"epsilon": V_EPS, "delta": V_DELTA, "R": R}
    return [Case(localisation_pair().first, p, "11 users at -0.9 R, 10 at +0.9 R (the top bin is a coin toss)"),
            Case(_wme_generated(), p, "200 imbalanced users (m >= 21), items uniform around user offsets"),
            Case(width_pair().second, p, "29 users at 0, one at +R (clipped)")]


def _wme_designs() -> list:
    """Audit designs, claim ``wme_claim(3, 1e-5)``: (3, 1e-5)-DP and mu-GDP with
    mu = sqrt(mu_1^2 + mu_2^2) = 0.527 (the trade-off audit of the GDP claim is what gives the
    power here: an (eps, 1e-5) test at 10^5 samples reaches only eps_lb ~ 5 at mu ~ 2).

    - "localisation": ``localisation_pair``. The reference's two stages are each Gaussian
      calibrated; the top bin's choice is mu_1-GDP. An argmax of the EXACT counts flips
      deterministically between the two ends, so the releases are N(-0.58, 0.14^2) vs
      N(0.71, 0.14^2): mu = 9, far above 0.527.
    - "interval width": ``width_pair``. The move 3 tau / n is exactly Delta_2, so stage II is
      mu_2 = 0.373-GDP; noise scaled to the bin width tau instead of the interval's 3 tau
      makes it 1.12-GDP (eps 5.0 at delta 1e-5), above the claimed mu = 0.527.
    """
    from userdp.audits.validate import AuditDesign
    claim = W.wme_claim(V_EPS, V_DELTA)
    p = {"epsilon": V_EPS, "delta": V_DELTA, "R": R}
    return [AuditDesign([localisation_pair()], p, claim, "localisation: the top bin flips between the two ends"),
            AuditDesign([width_pair()], p, claim, "interval width: a user from one end of the interval to the other")]


def _wme_statistic(dataset, *, epsilon, delta, R) -> np.ndarray:
    """The exact mean of the d = 1 release: sum_j P(j) means[j] (see the comment above ``WME_M``)."""
    y = dataset.local_averages()
    tau = W.wme_radius(dataset.counts, R)
    K = max(1, math.ceil(2 * R / tau))
    counts = W.wme_histogram(dataset, R)                          # (1, K) for d = 1
    sigma1, _ = W.wme_noise_scales(dataset, epsilon, delta, R)
    c = np.asarray(counts, float).reshape(-1)
    z = np.linspace(-12.0, 12.0, 10_001)
    phi = stats.norm.pdf(z)
    means = np.empty(K)
    P = np.empty(K)
    for j in range(K):
        lo, hi = -R + (j - 1) * tau, -R + (j + 2) * tau
        means[j] = float(np.mean(np.clip(y, lo, hi)))
        others = np.delete(c, j)
        f = phi * np.prod(stats.norm.cdf((c[j] - others)[:, None] / sigma1 + z[None, :]), axis=0)
        P[j] = np.trapezoid(f, z) if hasattr(np, "trapezoid") else np.trapz(f, z)
    return np.array([float(P @ means / P.sum())])


def _register_wme_validation():
    from userdp.audits.validate import Case, ValidationSpec, register_validation
    D = _wme_users([0.0, 0.5])
    p = {"epsilon": V_EPS, "delta": V_DELTA, "R": R}
    register_validation(ValidationSpec(
        algorithm="zhao2024.wme", reference=W.wme_mechanism, statistic=_wme_statistic,
        cases=_wme_cases, designs=_wme_designs, suite="userdp.properties.zhao2024",
        # no stages yet: properties/zhao2024.py's REFERENCE and ALL_PROPERTIES are HLM's (the WME
        # ones are REFERENCE_WME and WME_PROPERTIES); release-only until the suites are reshaped
        stage_params={}, takes_dataset=(),
        refusals=lambda: [Case(_wme_users([0.0, 2.0]), p, "an item at 2 R, outside the declared support [-R, R]"),
                          Case(D, {**p, "epsilon": 0.0}, "epsilon = 0")],
        why="d = 1; the release is a mixture over the noisy argmax: the statistic is its exact mean"))


_register_wme_validation()
