"""Corpus for Epasto et al. 2020 §5, Algorithm 3 GWA_C for a given C (``epasto2020.gwa``) and §5.2
sample-limited OLS at a given h (``epasto2020.sample-limited-ols``).

Written from the paper, independently of reference/epasto2020_gwa.py: beta_hat = C y for a
C with C X = I_d (Algorithm 3's input), plus i.i.d. Lap(b) on each coordinate,
b = B eps^-1 max_l sum_j sum_{i in S_l} |c_{j,i}| (line 2), labels y_i in [0, B] (§5).
Call shape: the reference's, ``f(dataset, rng=..., size=..., C=..., B=..., epsilon=...)``.
A trial's GWA bugs are here: the row-max b (free on the orthogonal audit data,
2 eps on the spec's diagonal design) and a C with C X != I accepted silently.
"""

from __future__ import annotations

import math

import numpy as np

from userdp.properties.epasto2020_gwa import ADAPTER

from corpus import CorpusEntry

ALGO = "epasto2020.gwa"
CX_TOL = 1e-9  # this implementation's own tolerance on max |C X - I| (the paper's C X = I)


def _X(dataset) -> np.ndarray:
    X = np.asarray(dataset.values, dtype=float)
    return X[:, None] if X.ndim == 1 else X


def _check(dataset, C, B, epsilon, check_cx=True):
    if not epsilon > 0 or not B > 0:
        raise ValueError(f"need epsilon > 0 and B > 0; got {epsilon}, {B}")
    y = np.asarray(dataset.labels, dtype=float)
    if (y < 0).any() or (y > B).any():
        raise ValueError("labels must lie in [0, B]")
    C = np.asarray(C, dtype=float)
    X = _X(dataset)
    if C.shape != (X.shape[1], X.shape[0]):
        raise ValueError(f"C must be (d, n) = {(X.shape[1], X.shape[0])}, got {C.shape}")
    if check_cx:
        d = X.shape[1]
        err = max(
            abs(math.fsum(C[j, i] * X[i, k] for i in range(X.shape[0])) - (j == k)) for j in range(d) for k in range(d)
        )
        if err > CX_TOL:
            raise ValueError(f"C X must be I (Algorithm 3); max |C X - I| = {err:.3g}")
    return C, y


def _blocks(dataset, C) -> dict:
    """user -> its (d, s_l) block of C, by a loop over the records."""
    cols: dict = {}
    for i, u in enumerate(dataset.user_ids.tolist()):
        cols.setdefault(u, []).append(i)
    return {u: C[:, idx] for u, idx in cols.items()}


def _b(dataset, C, B, epsilon, per_user=None) -> float:
    per_user = per_user or (lambda Cl: math.fsum(np.abs(Cl).ravel().tolist()))
    return B * max(per_user(Cl) for Cl in _blocks(dataset, C).values()) / epsilon


def _release(beta, b, rng, size):
    """Lap(b) as the difference of two Exp(b) variates, coordinate by coordinate."""
    shape = beta.shape if size is None else (size, beta.size)
    return beta + rng.exponential(b, shape) - rng.exponential(b, shape)


def _beta(C, y) -> np.ndarray:
    return np.array([math.fsum((row * y).tolist()) for row in C])


# ------------------------------------------------------------ correct alternatives
def loop_exp_difference(dataset, rng, size=None, *, C, B, epsilon):
    """Correct: C X = I checked by exact sums, b by a loop over users, Laplace as Exp - Exp."""
    C, y = _check(dataset, C, B, epsilon)
    return _release(_beta(C, y), _b(dataset, C, B, epsilon), rng, size)


def _stage(fn):
    return lambda dataset, *, C, B, epsilon: fn(dataset, C, B, epsilon)


staged_loop = ADAPTER(
    "corpus/epasto-gwa-staged-loop",
    weights=_stage(lambda D, C, B, e: _check(D, C, B, e)[0]),
    statistic=_stage(lambda D, C, B, e: _beta(*_check(D, C, B, e))),
    sensitivity=_stage(lambda D, C, B, e: e * _b(D, _check(D, C, B, e)[0], B, e)),
    noise_scale=_stage(lambda D, C, B, e: _b(D, _check(D, C, B, e)[0], B, e)),
    mechanism=loop_exp_difference,
)


# ------------------------------------------------------------ bugs, release only
def row_max_noise(dataset, rng, size=None, *, C, B, epsilon):
    """BUG (sensitivity): b from the larger row of each user's block, max_j sum_i |c_ji|,
    not the sum over j: Lemma 1 applied per coordinate. Free when each user's records lie
    in one row (orthogonal designs), half the noise when they spread over both."""
    C, y = _check(dataset, C, B, epsilon)
    b = _b(dataset, C, B, epsilon, per_user=lambda Cl: float(np.abs(Cl).sum(axis=1).max()))
    return _release(_beta(C, y), b, rng, size)


def record_max_noise(dataset, rng, size=None, *, C, B, epsilon):
    """BUG (sensitivity): b from the heaviest record's column sum_j |c_ji|, not the user's."""
    C, y = _check(dataset, C, B, epsilon)
    b = _b(dataset, C, B, epsilon, per_user=lambda Cl: float(np.abs(Cl).sum(axis=0).max()))
    return _release(_beta(C, y), b, rng, size)


def no_cx_check(dataset, rng, size=None, *, C, B, epsilon):
    """BUG (domain): any C accepted. Private (b from C itself), but a C with C X != I gives
    a biased beta_hat, and nothing tells the caller."""
    C, y = _check(dataset, C, B, epsilon, check_cx=False)
    return _release(_beta(C, y), _b(dataset, C, B, epsilon), rng, size)


def ols_ignores_C(dataset, rng, size=None, *, C, B, epsilon):
    """BUG (optimality): the given C is checked, then X^+ (OLS) is used for the estimate and
    the noise: private and unbiased, not the GWA_C asked for (its variance is larger on the
    orthogonal design, where the registry's C is Theorem 6's optimum)."""
    _check(dataset, C, B, epsilon)
    P = np.linalg.pinv(_X(dataset))
    return _release(_beta(P, dataset.labels), _b(dataset, P, B, epsilon), rng, size)


def one_release_clipping(dataset, rng, C, B, eps):
    """Correct: one release per call, parameter eps, labels clipped into [0, B] (policy clip, inferred),
    numpy sums."""
    if not eps > 0 or not B > 0:
        raise ValueError("eps and B must be > 0")
    C = np.asarray(C, dtype=float)
    y = np.clip(np.asarray(dataset.labels, dtype=float), 0.0, B)
    X = _X(dataset)
    if np.abs(C @ X - np.eye(X.shape[1])).max() > CX_TOL:
        raise ValueError("C X must be I")
    Wl = np.bincount(np.unique(dataset.user_ids, return_inverse=True)[1], weights=np.abs(C).sum(axis=0))
    return C @ y + rng.laplace(0.0, B * Wl.max() / eps, C.shape[0])


def b_ninety_five_percent(dataset, rng, size=None, *, C, B, epsilon):
    """BUG (noise scale, small): 0.95 b."""
    C, y = _check(dataset, C, B, epsilon)
    return _release(_beta(C, y), 0.95 * _b(dataset, C, B, epsilon), rng, size)


def labels_unchecked_unclipped(dataset, rng, size=None, *, C, B, epsilon):
    """BUG (domain; declared --inputs clip): claims to clip labels into [0, B] but does not."""
    C = np.asarray(C, dtype=float)
    if not epsilon > 0:
        raise ValueError("epsilon must be > 0")
    return _release(_beta(C, np.asarray(dataset.labels, float)), _b(dataset, C, B, epsilon), rng, size)


def first_column_only_noise(dataset, rng, size=None, *, C, B, epsilon):
    """BUG (structure): Laplace noise on the first coordinate only, the others released as C y (a
    "the noise is for the scalar case" port): private only in d = 1."""
    C, y = _check(dataset, C, B, epsilon)
    out = _release(_beta(C, y), _b(dataset, C, B, epsilon), rng, size)
    beta = _beta(C, y)
    if size is None:
        out[1:] = beta[1:]
    else:
        out[:, 1:] = beta[1:]
    return out


def noise_once_per_call(dataset, rng, size=None, *, C, B, epsilon):
    """BUG (independence): one noise vector per call, repeated."""
    C, y = _check(dataset, C, B, epsilon)
    one = _release(_beta(C, y), _b(dataset, C, B, epsilon), rng, None)
    return np.tile(one, (1 if size is None else size, 1))


# ------------------------------------------------------------ sample-limited OLS
SL_ALGO = "epasto2020.sample-limited-ols"


def _sl_C(dataset, h, pick):
    """C^s: OLS on the records ``pick`` chooses (min(h, s_l) per user), zero columns elsewhere."""
    X = _X(dataset)
    groups: dict = {}
    for i, u in enumerate(dataset.user_ids.tolist()):
        groups.setdefault(u, []).append(i)
    T = sorted(i for idx in groups.values() for i in pick(idx, h))
    C = np.zeros((X.shape[1], X.shape[0]))
    U = X[T]
    C[:, T] = np.linalg.solve(U.T @ U, U.T)
    return C


def _sl_check(dataset, h, B, epsilon):
    if not epsilon > 0 or not B > 0:
        raise ValueError("epsilon and B must be > 0")
    if not (isinstance(h, (int, np.integer)) and h >= 1):
        raise ValueError("h must be an integer >= 1")
    y = np.asarray(dataset.labels, float)
    if (y < 0).any() or (y > B).any():
        raise ValueError("labels must lie in [0, B]")
    return y


def sl_first_h(dataset, rng, size=None, *, h, B, epsilon):
    """Correct: the first min(h, s_l) records of each user (record order)."""
    y = _sl_check(dataset, h, B, epsilon)
    C = _sl_C(dataset, h, lambda idx, h: idx[:h])
    return _release(_beta(C, y), _b(dataset, C, B, epsilon), rng, size)


def sl_random_one(dataset, rng, *, h, B, epsilon):
    """Correct: one release per call, a uniformly random choice of min(h, s_l) records per user each call."""
    y = _sl_check(dataset, h, B, epsilon)
    C = _sl_C(dataset, h, lambda idx, h: list(rng.permutation(idx)[:h]))
    return _release(_beta(C, y), _b(dataset, C, B, epsilon), rng, None)


def _sl_last_h_C(dataset, *, h, B, epsilon):
    return _sl_C(dataset, h, lambda idx, h: idx[-h:])


sl_staged_last_h = ADAPTER(
    "corpus/epasto-sl-ols-staged-last-h",
    mechanism=lambda dataset, rng, size=None, *, h, B, epsilon: _release(
        _beta(_sl_last_h_C(dataset, h=h, B=B, epsilon=epsilon), _sl_check(dataset, h, B, epsilon)),
        _b(dataset, _sl_last_h_C(dataset, h=h, B=B, epsilon=epsilon), B, epsilon),
        rng,
        size,
    ),
)


def sl_record_noise(dataset, rng, size=None, *, h, B, epsilon):
    """BUG (sensitivity): b from one record's column of C^s, not a user's h columns."""
    y = _sl_check(dataset, h, B, epsilon)
    C = _sl_C(dataset, h, lambda idx, h: idx[:h])
    b = _b(dataset, C, B, epsilon, per_user=lambda Cl: float(np.abs(Cl).sum(axis=0).max()))
    return _release(_beta(C, y), b, rng, size)


def sl_no_limit(dataset, rng, size=None, *, h, B, epsilon):
    """BUG (optimality): every record kept (plain OLS), noise from its C: private, not h-limited."""
    y = _sl_check(dataset, h, B, epsilon)
    C = _sl_C(dataset, 10**9, lambda idx, h: idx)
    return _release(_beta(C, y), _b(dataset, C, B, epsilon), rng, size)


def sl_random_once_per_call(dataset, rng, size=None, *, h, B, epsilon):
    """BUG (independence): one random choice of records per call, shared by its releases."""
    y = _sl_check(dataset, h, B, epsilon)
    C = _sl_C(dataset, h, lambda idx, h: list(rng.permutation(idx)[:h]))
    return _release(_beta(C, y), _b(dataset, C, B, epsilon), rng, size)


M = "papers.epasto2020.corpus_gwa"
CORPUS = [
    CorpusEntry(
        "epasto2020/gwa-loop-exp-difference",
        ALGO,
        f"{M}:loop_exp_difference",
        "none",
        "pass",
        "none: loops and exact sums, Laplace as the difference of two exponentials",
        "correct alternative",
    ),
    CorpusEntry(
        "epasto2020/gwa-staged-loop",
        ALGO,
        f"{M}:staged_loop",
        "none",
        "pass",
        "none: the same, with weights (C), statistic, sensitivity and noise scale exposed",
        "correct alternative",
        exposes="stages",
    ),
    CorpusEntry(
        "epasto2020/gwa-row-max-noise",
        ALGO,
        f"{M}:row_max_noise",
        "sensitivity",
        "privacy violation",
        "b from one row of C: true loss 2 eps on the diagonal design (user 0's records in both rows); "
        "1.0 eps on the orthogonal audit data, where the audit cannot see it",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/gwa-record-max-noise",
        ALGO,
        f"{M}:record_max_noise",
        "sensitivity",
        "privacy violation",
        "b from one record: true loss 2.78 eps on the orthogonal design (user 0, "
        "4 records), 2.55 eps on the diagonal design",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/gwa-no-cx-check",
        ALGO,
        f"{M}:no_cx_check",
        "domain",
        "invariant violation",
        "declared --inputs refuse, but releases for a C with C X = 1.1 I: private, biased by 10%, silently",
        "planted",
        inputs="refuse",
    ),
    CorpusEntry(
        "epasto2020/gwa-no-cx-check-trusting",
        ALGO,
        f"{M}:no_cx_check",
        "none",
        "pass",
        "none: C X = I is a documented precondition of the caller (declared --inputs trust)",
        "correct alternative",
        inputs="trust",
    ),
    CorpusEntry(
        "epasto2020/gwa-one-release-clipping",
        ALGO,
        f"{M}:one_release_clipping",
        "none",
        "pass",
        "none: one release per call, parameter eps, labels clipped into [0, B] (policy clip, inferred)",
        "correct alternative",
        param_map=(("epsilon", "eps"),),
    ),
    CorpusEntry(
        "epasto2020/gwa-b-ninety-five-percent",
        ALGO,
        f"{M}:b_ninety_five_percent",
        "noise scale",
        "privacy violation",
        "0.95 b: true loss 1.053 eps on the argmax user's pair",
        "planted",
        small=True,
    ),
    CorpusEntry(
        "epasto2020/gwa-labels-not-clipped",
        ALGO,
        f"{M}:labels_unchecked_unclipped",
        "domain",
        "privacy violation",
        "declared --inputs clip, labels used as they are: a user at -B vs 2B moves "
        "the release 3 x what the noise covers",
        "planted",
        inputs="clip",
    ),
    CorpusEntry(
        "epasto2020/gwa-first-coordinate-noise",
        ALGO,
        f"{M}:first_column_only_noise",
        "structure",
        "privacy violation",
        "noise on coordinate 0 only, C y exact on the others: unbounded loss in d >= 2",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/gwa-noise-once-per-call",
        ALGO,
        f"{M}:noise_once_per_call",
        "independence",
        "not independent",
        "one noise vector per call",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/sl-ols-first-h",
        SL_ALGO,
        f"{M}:sl_first_h",
        "none",
        "pass",
        "none: the first min(h, s_l) records of each user",
        "correct alternative",
    ),
    CorpusEntry(
        "epasto2020/sl-ols-random-one",
        SL_ALGO,
        f"{M}:sl_random_one",
        "none",
        "pass",
        "none: one release per call, a fresh uniformly random choice each call",
        "correct alternative",
    ),
    CorpusEntry(
        "epasto2020/sl-ols-staged-last-h",
        SL_ALGO,
        f"{M}:sl_staged_last_h",
        "none",
        "pass",
        "none: the last h records, in an Adapter",
        "correct alternative",
        exposes="stages",
    ),
    CorpusEntry(
        "epasto2020/sl-ols-record-noise",
        SL_ALGO,
        f"{M}:sl_record_noise",
        "sensitivity",
        "privacy violation",
        "b from one record of C^s: true loss up to h eps",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/sl-ols-no-limit",
        SL_ALGO,
        f"{M}:sl_no_limit",
        "optimality",
        "deviation from reference",
        "plain OLS on every record: private, not h-limited",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/sl-ols-random-once-per-call",
        SL_ALGO,
        f"{M}:sl_random_once_per_call",
        "independence",
        "not independent",
        "one random choice per call, shared by its releases",
        "planted",
    ),
    CorpusEntry(
        "epasto2020/gwa-ols-ignores-C",
        ALGO,
        f"{M}:ols_ignores_C",
        "optimality",
        "deviation from reference",
        "X^+ instead of the given C: private (b from X^+), not GWA_C; W_max 0.526 vs 0.316 on the orthogonal design",
        "planted",
    ),
]
