"""Corpus for Krichene et al. 2023, Algorithm 1's released sufficient statistics with the
adaptive weights (``krichene2023.ssp``): the §5 mu-family task weights
omega_i = n_i^-mu sqrt(n beta / sum_i' n_i'^(1 - 2 mu)) from PUBLIC n_i and n (beta_bar = beta),
eq. (12) clipping w_ij = omega_i min(1, sqrt(beta / sum_{i' in Omega^j} omega_i'^2)), line 2's
clipping x <- x min(1, Gamma_x / ||x||), y <- clip(y, Gamma_x Gamma_*), and the release

    A-hat_i = sum_j w_ij x x^T + Gamma_x^2 Xi_i        (Xi_i symmetric, upper triangle iid N(0, 1))
    b-hat_i = sum_j w_ij y x   + Gamma_x^2 Gamma_* xi_i (xi_i ~ N(0, I_d))

Every implementation is written here from the paper, independently of reference/krichene2023*.py:
loops over users and records with a Box-Muller sampler, or vectorised with the same weights by
another exact formula. Call shape: ``f(dataset, rng=..., size=..., m=, n_counts=, n_users=,
beta=, mu=, Gamma_x=, Gamma_star=)`` returning (A-hat (size, m, d, d), b-hat (size, m, d)).
Relation: add/remove user; claim: (alpha, alpha beta)-RDP = sqrt(2 beta)-GDP (Theorem 3.3).

The accounting defects docs/papers lists for the authors' pipeline (noisy counts computed twice
and charged once; the centring step charged with wrong multipliers) belong to other releases
(the private counts of Appendix B, the authors' rating centring), not to this one, which takes
the counts as public (Assumption 4.1): the first is planted in the registry as
``krichene2023.planted.counts-twice``; ``counts_from_data`` below is their release-level cousin
(exact counts used as if declared).

Claimed vs true mu below is for the audit's design (audits/papers/krichene2023/specs.py:
``_ssp_designs``: Gamma_x = Gamma_* = 2, beta = mu = 1/2, remove user 0 or 3).
"""

from __future__ import annotations

import math

import numpy as np

from userdp.properties.krichene2023 import MultiTaskAdapter

from corpus import CorpusEntry

ALGO = "krichene2023.ssp"


# ------------------------------------------------------------ shared pieces, written out
def _records(dataset):
    """(task (N,), user (N,), x (N, d), y (N,)); refuses a repeated (task, user) pair (Omega is a set)."""
    t = np.asarray(dataset.task_ids, dtype=int)
    u = np.asarray(dataset.user_ids)
    x = np.asarray(dataset.values, dtype=float).reshape(t.size, -1)
    y = np.asarray(dataset.labels, dtype=float)
    seen = set()
    for i, j in zip(t.tolist(), u.tolist()):
        if (i, j) in seen:
            raise ValueError(f"user {j} has two records in task {i}: one (x_ij, y_ij) per pair")
        seen.add((i, j))
    return t, u, x, y


def _omega(n_counts, n_users, beta, mu):
    """§5: omega_i = n_i^-mu sqrt(n beta_bar / sum n_i'^(1 - 2 mu)), beta_bar = beta."""
    n = [float(v) for v in n_counts]
    if min(n) < 1:
        raise ValueError("every public n_i must be >= 1 (Assumption 4.1)")
    s = math.fsum(v ** (1.0 - 2.0 * mu) for v in n)
    return [v**-mu * math.sqrt(n_users * beta / s) for v in n]


def _clip(x, y, Gamma_x, Gamma_star):
    """Line 2: x scaled into the Gamma_x ball, y into [-Gamma_x Gamma_*, Gamma_x Gamma_*]."""
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    x = x * np.minimum(1.0, Gamma_x / np.maximum(norm, 1e-300))
    return x, np.clip(y, -Gamma_x * Gamma_star, Gamma_x * Gamma_star)


def _sums(t, x, y, w, m):
    """A-bar (m, d, d), b-bar (m, d) by a loop over records."""
    d = x.shape[1]
    A, b = np.zeros((m, d, d)), np.zeros((m, d))
    for r in range(t.size):
        A[t[r]] += w[r] * np.outer(x[r], x[r])
        b[t[r]] += w[r] * y[r] * x[r]
    return A, b


def _box_muller(rng, shape):
    """N(0, 1) draws by Box-Muller from uniforms (1 - U in (0, 1] keeps the log finite)."""
    k = int(np.prod(shape))
    half = (k + 1) // 2
    r = np.sqrt(-2.0 * np.log(1.0 - rng.random(half)))
    a = 2.0 * math.pi * rng.random(half)
    return np.concatenate([r * np.cos(a), r * np.sin(a)])[:k].reshape(shape)


def _noise(rng, size, m, d, sA, sb, normal=_box_muller):
    """(size, m, d, d) symmetric noise of sd sA per released entry (k <= l), (size, m, d) of sd sb."""
    XA = np.zeros((size, m, d, d))
    for k in range(d):
        for l in range(k, d):
            z = sA * normal(rng, (size, m))
            XA[:, :, k, l] = z
            XA[:, :, l, k] = z
    return XA, sb * normal(rng, (size, m, d))


# ------------------------------------------------------------ correct alternatives
def _loop_weights(t, u, omega, beta):
    """eq. (12) user by user: w_ij = omega_i min(1, sqrt(beta / B_j)), B_j = sum_{i in Omega^j} omega_i^2."""
    tasks_of: dict = {}
    for i, j in zip(t.tolist(), u.tolist()):
        tasks_of.setdefault(j, []).append(i)
    factor = {j: min(1.0, math.sqrt(beta / math.fsum(omega[i] ** 2 for i in ts))) for j, ts in tasks_of.items()}
    return np.array([omega[i] * factor[j] for i, j in zip(t.tolist(), u.tolist())])


def loop_box_muller(dataset, rng, size=None, *, m, n_counts, n_users, beta, mu, Gamma_x, Gamma_star):
    """Correct: weights user by user (a dict of tasks per user), sums record by record, Box-Muller noise."""
    if not beta > 0:  # checked before a record is read: beta = 0 is no budget (a ValueError, as a refusal is)
        raise ValueError(f"beta must be > 0, got {beta}")
    t, u, x, y = _records(dataset)
    w = _loop_weights(t, u, _omega(n_counts, n_users, beta, mu), beta)
    x, y = _clip(x, y, Gamma_x, Gamma_star)
    A, b = _sums(t, x, y, w, m)
    NA, Nb = _noise(rng, size, m, x.shape[1], Gamma_x**2, Gamma_x**2 * Gamma_star)
    return A + NA, b + Nb


def _budget_weights(t, u, omega, beta):
    """eq. (12) by another exact formula: w_ij = omega_i sqrt(beta / max(B_j, beta))."""
    om = np.asarray(omega)[t]
    _, pos = np.unique(u, return_inverse=True)
    B = np.bincount(pos, weights=om * om)
    return om * np.sqrt(beta / np.maximum(B, beta))[pos]


def _release(
    dataset,
    rng,
    size,
    m,
    n_counts,
    n_users,
    beta,
    mu,
    Gamma_x,
    Gamma_star,
    *,
    weights=_budget_weights,
    clip_labels=True,
    sigmas=None,
    noise=None,
    counts_from_data=False,
    sum_raw=False,
):
    """The vectorised pipeline the bugs below change one piece of."""
    if not (beta > 0 and Gamma_x > 0 and Gamma_star > 0):
        raise ValueError("beta, Gamma_x and Gamma_star must be > 0")
    t, u, x, y = _records(dataset)
    if counts_from_data:  # BUG below: the graph's own task sizes and users, not the declared ones
        n_counts = np.maximum(np.bincount(t, minlength=m), 1)
        n_users = len(set(u.tolist()))
    w = weights(t, u, _omega(n_counts, n_users, beta, mu), beta)
    raw = x
    if clip_labels:
        x, y = _clip(x, y, Gamma_x, Gamma_star)
    else:
        x, _ = _clip(x, y, Gamma_x, Gamma_star)
    if sum_raw:  # BUG below: the clipped features computed, the raw ones summed
        x = raw
    d = x.shape[1]
    A = np.zeros((m, d, d))
    np.add.at(A, t, w[:, None, None] * x[:, :, None] * x[:, None, :])
    b = np.zeros((m, d))
    np.add.at(b, t, (w * y)[:, None] * x)
    sA, sb = sigmas if sigmas is not None else (Gamma_x**2, Gamma_x**2 * Gamma_star)
    NA, Nb = (noise or _noise)(
        rng, 1 if size is None else size, m, d, sA, sb, normal=lambda g, shape: g.normal(0.0, 1.0, shape)
    )
    if size is None:
        return A + NA[0], b + Nb[0]
    return A + NA, b + Nb


def vectorised_budget_formula(dataset, rng, size=None, **p):
    """Correct: eq. (12) written as omega_i sqrt(beta / max(B_j, beta)), np.add.at sums, numpy normals."""
    return _release(dataset, rng, size, **p)


def ssp_psd_projected(dataset, rng, size=None, **p):
    """Post-processing, private: the correct release with each noisy A-hat_j projected onto the PSD cone
    (negative eigenvalues set to 0, as a solver needs), a function of the private release only. Its
    spread is smaller than the reference's where A_j is near singular, which the spread rule alone reads
    as under-noised; no pair realises any loss above the claim."""
    A, b = _release(dataset, rng, size, **p)
    lam, V = np.linalg.eigh(A)
    return (V * np.maximum(lam, 0.0)[..., None, :]) @ np.swapaxes(V, -1, -2), b


# ------------------------------------------------------------ bugs, release only
def unclipped_labels(dataset, rng, size=None, **p):
    """BUG (sensitivity; the authors' code, docs/papers/krichene2023.md): x clipped, y used raw, while the b noise
    Gamma_x^2 Gamma_* assumes |y| <= Gamma_x Gamma_*."""
    return _release(dataset, rng, size, **p, clip_labels=False)


def clips_but_sums_raw(dataset, rng, size=None, **p):
    """BUG (the pattern of opendp/smartnoise-sdk issue 622, a covariance that clips but uses the unclipped
    data): x and y clipped into their bounds, then the sums A-bar and b-bar taken over the raw x."""
    return _release(dataset, rng, size, **p, sum_raw=True)


def no_weight_clipping(dataset, rng, size=None, **p):
    """BUG (budget): w_ij = omega_i, eq. (12)'s clipping of users above beta skipped."""
    return _release(dataset, rng, size, **p, weights=lambda t, u, omega, beta: np.asarray(omega)[t])


def swapped_sigmas(dataset, rng, size=None, *, Gamma_x, Gamma_star, **p):
    """BUG (noise scale): A noise sd Gamma_x^2 Gamma_* and b noise sd Gamma_x^2 (lines 5 and 6 swapped)."""
    return _release(
        dataset, rng, size, Gamma_x=Gamma_x, Gamma_star=Gamma_star, **p, sigmas=(Gamma_x**2 * Gamma_star, Gamma_x**2)
    )


def sigma_gamma_x(dataset, rng, size=None, *, Gamma_x, Gamma_star, **p):
    """BUG (noise scale): noise sd Gamma_x and Gamma_x Gamma_*, the bound on ||x|| where the
    sensitivity of w x x^T is w ||x||^2 <= w Gamma_x^2."""
    return _release(
        dataset, rng, size, Gamma_x=Gamma_x, Gamma_star=Gamma_star, **p, sigmas=(Gamma_x, Gamma_x * Gamma_star)
    )


def per_user_normalised(dataset, rng, size=None, **p):
    """BUG (normalisation): every user's weights scaled to spend exactly beta,
    w_ij = sqrt(beta) omega_i / sqrt(B_j) (Appendix C; the authors' code's weighting, docs/papers/krichene2023.md),
    where eq. (12) scales only the users above beta."""

    def w(t, u, omega, beta):
        om = np.asarray(omega)[t]
        _, pos = np.unique(u, return_inverse=True)
        return om * np.sqrt(beta / np.bincount(pos, weights=om * om))[pos]

    return _release(dataset, rng, size, **p, weights=w)


def one_release_items(dataset, rng, *, m, n_items, n_users, beta, mu, Gamma_x, Gamma_star):
    """Correct: one release per call; the declared task sizes named n_items (--param-map n_counts=n_items)."""
    return _release(dataset, rng, None, m, n_items, n_users, beta, mu, Gamma_x, Gamma_star)


def counts_from_data(dataset, rng, size=None, **p):
    """BUG (public inputs; as in a port of the authors' code): the weights read the graph's OWN task sizes and user
    count, not the declared public ones: exact counts used as if they were free. Identical where the
    declared counts are the graph's (every fixed case); different elsewhere."""
    return _release(dataset, rng, size, **p, counts_from_data=True)


def _independent_triangles(rng, size, m, d, sA, sb, normal):
    """BUG below: every entry of A's noise drawn on its own (no mirror): an asymmetric release."""
    return sA * normal(rng, (size, m, d, d)), sb * normal(rng, (size, m, d))


def independent_triangles(dataset, rng, size=None, **p):
    """BUG (structure): the lower triangle gets its own noise instead of the upper's mirror: A-hat is not
    symmetric, and the off-diagonal statistic is released twice with independent noise (its loss
    sqrt(2) x in d >= 2). d = 1 designs cannot show it."""
    return _release(dataset, rng, size, **p, noise=_independent_triangles)


def _upper_only(rng, size, m, d, sA, sb, normal):
    XA = np.zeros((size, m, d, d))
    for k in range(d):
        for l in range(k, d):
            XA[:, :, k, l] = sA * normal(rng, (size, m))  # BUG: the lower triangle keeps no noise
    return XA, sb * normal(rng, (size, m, d))


def upper_triangle_noise_only(dataset, rng, size=None, **p):
    """BUG (structure): noise on the upper triangle only; the lower triangle is released exact."""
    return _release(dataset, rng, size, **p, noise=_upper_only)


def sigma_ninety_five_percent(dataset, rng, size=None, *, Gamma_x, Gamma_star, **p):
    """BUG (noise scale, small): both noise sds at 0.95 x."""
    return _release(
        dataset,
        rng,
        size,
        Gamma_x=Gamma_x,
        Gamma_star=Gamma_star,
        **p,
        sigmas=(0.95 * Gamma_x**2, 0.95 * Gamma_x**2 * Gamma_star),
    )


def variance_eight_percent_high(dataset, rng, size=None, *, Gamma_x, Gamma_star, **p):
    """BUG (variance, small): both noise sds at 1.04 x (8% more variance): private."""
    return _release(
        dataset,
        rng,
        size,
        Gamma_x=Gamma_x,
        Gamma_star=Gamma_star,
        **p,
        sigmas=(1.04 * Gamma_x**2, 1.04 * Gamma_x**2 * Gamma_star),
    )


_FITTED: dict = {}


def noise_once_per_call(dataset, rng, size=None, *, m, n_counts, n_users, beta, mu, Gamma_x, Gamma_star):
    """BUG (independence): one noise draw per call, broadcast to all `size` releases. (The noise-free
    sums are cached per dataset: validate audits a dependent target one release per call.)"""
    key = (id(dataset), id(n_counts), m, n_users, beta, mu, Gamma_x, Gamma_star)
    hit = _FITTED.get(key)
    if hit is None or hit[0] is not dataset or hit[1] is not n_counts:
        A, b = _release(
            dataset, np.random.default_rng(0), 1, m, n_counts, n_users, beta, mu, Gamma_x, Gamma_star, sigmas=(0.0, 0.0)
        )
        if len(_FITTED) > 64:
            _FITTED.clear()
        hit = _FITTED[key] = (dataset, n_counts, A, b)
    _, _, A, b = hit
    d = b.shape[-1]
    Z = rng.standard_normal((1, m, d, d))
    Xi = Z if d == 1 else np.triu(Z) + np.triu(Z, 1).swapaxes(-1, -2)
    A_hat = A + Gamma_x**2 * Xi
    b_hat = b + Gamma_x**2 * Gamma_star * rng.standard_normal((1, m, d))
    if size == 1:
        return A_hat, b_hat
    return np.repeat(A_hat, size, axis=0), np.repeat(b_hat, size, axis=0)


# ------------------------------------------------------------ with stages (STAGED_CORPUS)
def _stage_weights(dataset, *, m, n_counts, n_users, beta, mu, **_):
    t, u, _, _ = _records(dataset)
    return _loop_weights(t, u, _omega(n_counts, n_users, beta, mu), beta)


def _stage_statistic(dataset, *, m, n_counts, n_users, beta, mu, Gamma_x, Gamma_star, **_):
    t, u, x, y = _records(dataset)
    w = _loop_weights(t, u, _omega(n_counts, n_users, beta, mu), beta)
    return _sums(t, *_clip(x, y, Gamma_x, Gamma_star), w, m)


staged_loop = MultiTaskAdapter(
    "corpus/krichene-staged-loop",
    weights=_stage_weights,
    statistic=_stage_statistic,
    sensitivity=lambda *, beta, Gamma_x, Gamma_star, **_: (
        math.sqrt(beta) * Gamma_x**2,
        math.sqrt(beta) * Gamma_x**2 * Gamma_star,
    ),
    noise_scale=lambda *, Gamma_x, Gamma_star, **_: (Gamma_x**2, Gamma_x**2 * Gamma_star),
    # the suite calls every stage with all of MTExample.params (properties/krichene2023.py): a
    # stage takes the keywords it needs and ignores the rest
    mechanism=lambda dataset, rng, size=None, *, m, n_counts, n_users, beta, mu, Gamma_x, Gamma_star, **_: (
        loop_box_muller(
            dataset,
            rng,
            size,
            m=m,
            n_counts=n_counts,
            n_users=n_users,
            beta=beta,
            mu=mu,
            Gamma_x=Gamma_x,
            Gamma_star=Gamma_star,
        )
    ),
)

staged_no_weight_clipping = MultiTaskAdapter(
    "corpus/krichene-staged-no-weight-clipping",
    weights=lambda dataset, *, m, n_counts, n_users, beta, mu, **_: np.asarray(_omega(n_counts, n_users, beta, mu))[
        _records(dataset)[0]
    ],
    mechanism=no_weight_clipping,
)


M = "papers.krichene2023.corpus"
CORPUS = [
    CorpusEntry(
        "krichene2023/ssp-psd-projected",
        ALGO,
        f"{M}:ssp_psd_projected",
        "bias",
        "deviation from reference",
        "each noisy A-hat_j projected onto the PSD cone: post-processing, private (true loss the claim's), "
        "but not the reference's law, and less spread where A_j is near singular",
        "planted",
    ),
    CorpusEntry(
        "krichene2023/loop-box-muller",
        ALGO,
        f"{M}:loop_box_muller",
        "none",
        "pass",
        "none: eq. (12) user by user, sums record by record, Box-Muller normals, the symmetric noise "
        "filled entry by entry",
        "correct alternative",
    ),
    CorpusEntry(
        "krichene2023/vectorised-budget-formula",
        ALGO,
        f"{M}:vectorised_budget_formula",
        "none",
        "pass",
        "none: eq. (12) as omega_i sqrt(beta / max(B_j, beta)) (equal to omega_i min(1, sqrt(beta / B_j))), "
        "np.add.at sums",
        "correct alternative",
    ),
    CorpusEntry(
        "krichene2023/unclipped-labels",
        ALGO,
        f"{M}:unclipped_labels",
        "sensitivity",
        "privacy violation",
        "the authors' code's defect (docs/papers/krichene2023.md: centred raw ratings used unclipped while the b "
        "noise assumes "
        "|y| <= 1): removing user 0 (y = 9 against the bound 4) moves b by 2.25 noise units per unit of "
        "weight: true mu = sqrt(beta (1 + 2.25^2)) = 1.74, claimed sqrt(2 beta) = 1 (unbounded in |y|)",
        "found in the authors' public code",
    ),
    CorpusEntry(
        "krichene2023/clips-but-sums-raw",
        ALGO,
        f"{M}:clips_but_sums_raw",
        "sensitivity",
        "privacy violation",
        "opendp/smartnoise-sdk issue 622 (a covariance that clips but uses the unclipped data), re-implemented "
        "in SSP: the features are clipped into the Gamma_x ball and then the raw ones summed, so a user whose "
        "||x|| exceeds Gamma_x moves A-bar by ||x||^2 / Gamma_x^2 times the noise's calibration (unbounded)",
        "planted",
    ),
    CorpusEntry(
        "krichene2023/no-weight-clipping",
        ALGO,
        f"{M}:no_weight_clipping",
        "budget",
        "privacy violation",
        "w_ij = omega_i without eq. (12): user 0 (tasks of n = 3 and 1) spends omega_0^2 + omega_1^2 = 8/9 "
        "of the budget beta = 1/2: true mu = sqrt(2 x 8/9) = 1.33, claimed 1",
        "planted",
    ),
    CorpusEntry(
        "krichene2023/swapped-sigmas",
        ALGO,
        f"{M}:swapped_sigmas",
        "noise scale",
        "privacy violation",
        "A noise Gamma_x^2 Gamma_* and b noise Gamma_x^2: at Gamma_x = Gamma_* = 2 the b block moves by "
        "2 sqrt(beta) noise units, the A block by sqrt(beta)/2: true mu = sqrt(beta (4 + 1/4)) = 1.46, "
        "claimed 1 (no effect when Gamma_* = 1)",
        "planted",
    ),
    CorpusEntry(
        "krichene2023/sigma-gamma-x",
        ALGO,
        f"{M}:sigma_gamma_x",
        "noise scale",
        "privacy violation",
        "noise Gamma_x and Gamma_x Gamma_* (the bound on ||x||, not on ||x x^T|| = ||x||^2): at Gamma_x = 2 "
        "both blocks move by 2 sqrt(beta) noise units: true mu = 2, claimed 1 (no effect at Gamma_x = 1)",
        "planted",
    ),
    CorpusEntry(
        "krichene2023/per-user-normalised",
        ALGO,
        f"{M}:per_user_normalised",
        "normalisation",
        "deviation from reference",
        "every user scaled to spend exactly beta (Appendix C; the weighting of the authors' code, "
        "docs/papers/krichene2023.md, "
        "there a choice, not a defect): private (every budget is beta, mu = sqrt(2 beta) exactly), but not "
        "eq. (12): users 1 and 2 of the audit graph (budget 2/9) get 1.5 x their weight, so A-bar_0 moves "
        "from 0.49 to 0.56 and b-bar_0 from 0.46 to 0.51 (z ~ 60 at 20,000 releases)",
        "planted",
    ),
    CorpusEntry(
        "krichene2023/noise-once-per-call",
        ALGO,
        f"{M}:noise_once_per_call",
        "independence",
        "not independent",
        "the `size` releases of one call share one noise draw: an audit of one call reads the noise as "
        "absent; validate audits one release per call instead, which is the paper's release",
        "planted",
    ),
]

CORPUS += [
    CorpusEntry(
        "krichene2023/one-release-items",
        ALGO,
        f"{M}:one_release_items",
        "none",
        "pass",
        "none: one release per call, the declared sizes named n_items",
        "correct alternative",
        param_map=(("n_counts", "n_items"),),
    ),
    CorpusEntry(
        "krichene2023/counts-from-data",
        ALGO,
        f"{M}:counts_from_data",
        "public inputs",
        "deviation from reference",
        "the weights from the graph's own counts, not the declared ones: the "
        "same where they agree (every fixed case), other weights where they do not (the generated cases); "
        "private counts used for free (a privacy defect the release-level tests see as a deviation)",
        "found in the authors' public code",
    ),
    CorpusEntry(
        "krichene2023/independent-triangles",
        ALGO,
        f"{M}:independent_triangles",
        "structure",
        "deviation from reference",
        "A-hat's lower triangle has its own noise: not symmetric; the "
        "off-diagonal entries are released twice (loss sqrt(2) x on them, d >= 2). Private at the claim all "
        "the same: a user's loss on A is then ||w x x^T||_F / Gamma_x^2 = w ||x||^2 / Gamma_x^2, the bound the "
        "noise is calibrated to (attained on an axis, where the reference attains it too); the pair search's "
        "best pair realises 1.006 of the claim, as on the correct code (docs/validate.md, 'The pair search')",
        "planted",
    ),
    CorpusEntry(
        "krichene2023/upper-triangle-noise-only",
        ALGO,
        f"{M}:upper_triangle_noise_only",
        "structure",
        "privacy violation",
        "the lower triangle of A-hat is released without noise: unbounded loss in "
        "d >= 2, invisible to a reading of one triangle",
        "planted",
    ),
    CorpusEntry(
        "krichene2023/sigma-ninety-five-percent",
        ALGO,
        f"{M}:sigma_ninety_five_percent",
        "noise scale",
        "privacy violation",
        "0.95 x both noise sds: mu = 1.053 x the claim's",
        "planted",
        small=True,
    ),
    CorpusEntry(
        "krichene2023/variance-eight-percent-high",
        ALGO,
        f"{M}:variance_eight_percent_high",
        "variance",
        "deviation from reference",
        "1.04 x both noise sds: private, 8% more variance",
        "planted",
        small=True,
    ),
]

# Adapter entries: the property suite, the stage comparison and the stages-agree test run on them.
STAGED_CORPUS = [
    CorpusEntry(
        "krichene2023/staged-loop",
        ALGO,
        f"{M}:staged_loop",
        "none",
        "pass",
        "none: loop-box-muller with its weights, statistic, sensitivity (Appendix A.1) and noise-scale stages",
        "correct alternative",
        exposes="stages",
    ),
    CorpusEntry(
        "krichene2023/staged-no-weight-clipping",
        ALGO,
        f"{M}:staged_no_weight_clipping",
        "budget",
        "privacy violation",
        "as no-weight-clipping, with its weights stage exposed: prop_budget_holds fails (user 0 spends "
        "8/9 > 1/2: invariant violation), and the audit's privacy violation is the overall verdict",
        "planted",
        exposes="stages",
    ),
]
CORPUS += STAGED_CORPUS


# ------------------------------------------------------------ Algorithm 2, noisy GD (krichene2023.noisy-gd)
GD_ALGO = "krichene2023.noisy-gd"


def _gd(
    dataset,
    rng,
    size,
    *,
    m,
    n_counts,
    n_users,
    beta,
    mu,
    Gamma,
    Lambda,
    eta,
    T,
    radius,
    sigma_factor=None,
    clip=True,
    counts_from_data=False,
):
    if not (beta > 0 and Gamma > 0 and eta > 0 and T >= 1 and radius > 0 and Lambda >= 0):
        raise ValueError("need beta, Gamma, eta, radius > 0, T >= 1, Lambda >= 0")
    t, u, x, y = _records(dataset)
    if counts_from_data:
        n_counts = np.maximum(np.bincount(t, minlength=m), 1)
        n_users = len(set(u.tolist()))
    w = _budget_weights(t, u, _omega(n_counts, n_users, beta, mu), beta)
    k, d = (1 if size is None else size), x.shape[1]
    sigma = Gamma * math.sqrt(T / 2.0) if sigma_factor is None else sigma_factor * Gamma
    theta = np.zeros((k, m, d))
    for _ in range(T):
        at = theta[:, t, :]  # (k, N, d)
        g = (np.einsum("knd,nd->kn", at, x) - y)[:, :, None] * x[None] + Lambda * at
        if clip == "coordinate":
            g = np.clip(g, -Gamma, Gamma)
        elif clip:
            norms = np.linalg.norm(g, axis=2, keepdims=True)
            g = g * np.minimum(1.0, Gamma / np.maximum(norms, 1e-300))
        G = np.zeros((k, m, d))
        for r in range(t.size):  # sum_j w_ij g_ij, task by task
            G[:, t[r], :] += w[r] * g[:, r, :]
        theta = theta - eta * (G + sigma * rng.standard_normal((k, m, d)))
        theta *= np.minimum(1.0, radius / np.maximum(np.linalg.norm(theta, axis=2, keepdims=True), 1e-300))
    return theta[0] if size is None else theta


def gd_loop(dataset, rng, size=None, **p):
    """Correct (batched): the gradient sums task by task in a loop over records."""
    return _gd(dataset, rng, size, **p)


def gd_one(dataset, rng, **p):
    """Correct (one release per call)."""
    return _gd(dataset, rng, None, **p)


gd_adapter = MultiTaskAdapter("corpus/krichene-gd-adapter", mechanism=gd_loop)


def gd_sigma_gamma(dataset, rng, size=None, **p):
    """BUG (accounting): per-step noise sd Gamma instead of Gamma sqrt(T/2): the T steps compose to
    sqrt(T/2) x the claimed mu (1.41 at T = 4)."""
    return _gd(dataset, rng, size, **p, sigma_factor=1.0)


def gd_no_gradient_clipping(dataset, rng, size=None, **p):
    """BUG (sensitivity): the record gradients are not clipped to Gamma (the noise still is for Gamma):
    on the registry's graph (y = 10) a record's gradient is ~10 Gamma: loss ~10 x."""
    return _gd(dataset, rng, size, **p, clip=False)


def gd_coordinate_clipping(dataset, rng, size=None, **p):
    """BUG (sensitivity): each record's gradient clipped coordinate by coordinate to [-Gamma, Gamma] instead
    of to the L2 ball of radius Gamma that the Gaussian noise covers: the same in d = 1, sqrt(d) x longer
    along a diagonal in d dimensions."""
    return _gd(dataset, rng, size, **p, clip="coordinate")


def gd_counts_from_data(dataset, rng, size=None, **p):
    """BUG (public inputs): the weights from the graph's own counts, not the declared ones."""
    return _gd(dataset, rng, size, **p, counts_from_data=True)


def gd_once_per_call(dataset, rng, size=None, **p):
    """BUG (independence): one run per call, repeated."""
    one = _gd(dataset, rng, None, **p)
    return np.repeat(one[None], 1 if size is None else size, axis=0)


CORPUS += [
    CorpusEntry(
        "krichene2023/gd-loop",
        GD_ALGO,
        f"{M}:gd_loop",
        "none",
        "pass",
        "none: the gradient sums task by task in a loop",
        "correct alternative",
    ),
    CorpusEntry(
        "krichene2023/gd-one",
        GD_ALGO,
        f"{M}:gd_one",
        "none",
        "pass",
        "none: one release per call",
        "correct alternative",
    ),
    CorpusEntry(
        "krichene2023/gd-adapter",
        GD_ALGO,
        f"{M}:gd_adapter",
        "none",
        "pass",
        "none: an Adapter holding the mechanism",
        "correct alternative",
        exposes="stages",
    ),
    CorpusEntry(
        "krichene2023/gd-sigma-gamma",
        GD_ALGO,
        f"{M}:gd_sigma_gamma",
        "accounting",
        "privacy violation",
        "noise sd Gamma per step instead of Gamma sqrt(T/2): mu = sqrt(2) x the claim at T = 4",
        "planted",
    ),
    CorpusEntry(
        "krichene2023/gd-no-gradient-clipping",
        GD_ALGO,
        f"{M}:gd_no_gradient_clipping",
        "sensitivity",
        "privacy violation",
        "unclipped gradients, the noise for Gamma: ~10 x the move on the registry's graph",
        "planted",
    ),
    CorpusEntry(
        "krichene2023/gd-coordinate-clipping",
        GD_ALGO,
        f"{M}:gd_coordinate_clipping",
        "sensitivity",
        "privacy violation",
        "each gradient clipped coordinate by coordinate to [-Gamma, Gamma], not to the L2 ball: the same in d = 1, "
        "where every fixed pair lies; only the pair search's d = 2 pair (a user of 2 records at x = (1, -1), "
        "y = -10, added) shows it: its gradients have norm sqrt(2) Gamma, true mu = sqrt(2) x the claim; a "
        "deviation with the search off",
        "planted",
    ),
    CorpusEntry(
        "krichene2023/gd-counts-from-data",
        GD_ALGO,
        f"{M}:gd_counts_from_data",
        "public inputs",
        "deviation from reference",
        "the weights from the graph's own counts: other weights on the generated cases, whose declared counts differ",
        "found in the authors' public code",
    ),
    CorpusEntry(
        "krichene2023/gd-once-per-call",
        GD_ALGO,
        f"{M}:gd_once_per_call",
        "independence",
        "not independent",
        "one run per call",
        "planted",
    ),
]
