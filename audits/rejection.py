"""Rejection sets and how one is chosen on the selection share (DESIGN §6).

A rejection set S is an event on the output space. The audit counts how often M(D)
and M(D') land in S on the counting share; which S to count is decided here, from the
selection share only, so the counts stay independent of the choice.

- scalar outputs: thresholds {x >= t} and {x <= t} (both tails);
- vector outputs: a direction w learned on the selection share (Fisher's discriminant
  Sigma^{-1}(mu_1 - mu_2), the difference of means, and each coordinate axis for d <= 32),
  then thresholds on <w, x>;
- discrete outputs (integer codes): the values ranked by their likelihood ratio on the
  selection share and every prefix of that ranking, i.e. single values and unions
  (the Neyman-Pearson sets, Ding et al. 2018).

Each set is scored in both orderings of the pair ("first over second": p = Pr[M(D) in S],
q = Pr[M(D') in S], and the swap) with ``bounds.projected_bound``, or, for the trade-off
audit of a Gaussian-DP claim (``gdp=True``; scalar and vector outputs), with
``bounds.projected_mu_bound``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.ndimage import uniform_filter1d

from .bounds import projected_bound, projected_mu_bound

__all__ = ["Threshold", "ValueSet", "Candidate", "choose_scalar", "choose_vector", "choose_discrete"]

_GRID = 2048          # candidate thresholds per direction (quantiles of the pooled selection share)
_MAX_AXES = 32        # coordinate axes tried as projections up to this dimension


@dataclass(frozen=True)
class Threshold:
    """{x : <w, x> >= t} (tail "upper") or {x : <w, x> <= t} (tail "lower"); w=None: scalar x."""

    tail: str
    t: float
    projection: tuple[float, ...] | None = None

    def project(self, outputs: np.ndarray) -> np.ndarray:
        x = np.asarray(outputs, dtype=float)
        if self.projection is None:
            return x.reshape(x.shape[0])
        return x.reshape(x.shape[0], -1) @ np.asarray(self.projection)

    def mask(self, x: np.ndarray) -> np.ndarray:
        """Membership of already-projected scalars x."""
        return x >= self.t if self.tail == "upper" else x <= self.t

    def contains(self, outputs) -> np.ndarray:
        return self.mask(self.project(outputs))

    def describe(self) -> str:
        lhs = "x" if self.projection is None else "<w, x>"
        op = ">=" if self.tail == "upper" else "<="
        return f"{{{lhs} {op} {self.t:.6g}}}"

    def to_dict(self) -> dict:
        d = {"type": "threshold", "tail": self.tail, "t": self.t, "description": self.describe()}
        if self.projection is not None:
            d["projection"] = list(self.projection)
        return d


@dataclass(frozen=True)
class ValueSet:
    """A finite set of output values; ``codes`` index the audit's table of distinct outputs."""

    values: tuple
    codes: tuple[int, ...] = field(repr=False, default=())

    def mask(self, codes: np.ndarray) -> np.ndarray:
        return np.isin(codes, np.asarray(self.codes, dtype=np.int64))

    def contains(self, outputs) -> np.ndarray:
        x = np.asarray(outputs)
        if x.ndim == 1:
            return np.isin(x, np.asarray(self.values))
        rows = x.reshape(x.shape[0], -1)
        out = np.zeros(rows.shape[0], dtype=bool)
        for v in self.values:
            out |= np.all(rows == np.asarray(v), axis=1)
        return out

    def describe(self, limit: int = 8) -> str:
        shown = ", ".join(map(str, self.values[:limit]))
        more = f", ... ({len(self.values)} values)" if len(self.values) > limit else ""
        return "{" + shown + more + "}"

    def to_dict(self) -> dict:
        return {"type": "values", "values": [_jsonable(v) for v in self.values],
                "description": self.describe()}


def _jsonable(v):
    if isinstance(v, tuple):
        return [_jsonable(u) for u in v]
    return v.item() if isinstance(v, np.generic) else v


@dataclass(frozen=True)
class Candidate:
    """A rejection set with its ordering, its score and its selection-share counts."""

    rejection_set: Threshold | ValueSet
    first_over_second: bool
    score: float
    selection_counts: tuple[int, int]


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    k = min(k, scores.size)
    idx = np.argpartition(-scores, k - 1)[:k]
    return idx[np.argsort(-scores[idx])]


SMOOTH = 0.02  # fraction of the (logit-spaced) grid averaged when ranking thresholds


def _grid_ranks(N: int) -> np.ndarray:
    """Ranks of the pooled sample at logit-spaced masses: dense in both tails, where
    small-mass sets live, and one point per ~1/_GRID of mass in the middle. Repeated
    ranks are kept, so an atom keeps as many grid points as its mass earns."""
    lim = np.log(N)                                   # logit(1/N) ~ -ln N
    u = 1.0 / (1.0 + np.exp(-np.linspace(-lim, lim, _GRID)))
    return np.clip(np.round(u * (N - 1)).astype(np.int64), 0, N - 1)


def _smooth(scores: np.ndarray) -> np.ndarray:
    """Moving average of each family's score curve over SMOOTH of its grid points.

    The selection-share score is a noisy curve; averaging a window before taking the
    argmax stops the choice chasing noise across a flat optimum. (Ranking only.)
    """
    w = max(1, int(SMOOTH * scores.shape[1]))
    if w <= 1:
        return scores
    finite = np.where(np.isfinite(scores), scores, -1e6)
    return uniform_filter1d(finite, size=w, axis=1, mode="nearest")


def choose_scalar(a: np.ndarray, b: np.ndarray, n_count: int, alpha: float, delta: float,
                  k: int = 1, projection=None, *, gdp: bool = False) -> list[Candidate]:
    """Best k thresholds on scalars a (first) and b (second), both tails, both orderings;
    scored for eps_lb, or for mu_lb when ``gdp`` (then ``delta`` is not used)."""
    n = a.shape[0]
    sa, sb = np.sort(a), np.sort(b)
    pooled = np.sort(np.concatenate([sa, sb]), kind="stable")     # merges two sorted runs
    grid = pooled[_grid_ranks(pooled.size)]
    ge_a = n - np.searchsorted(sa, grid, "left")                     # (G,) counts of a >= t
    ge_b = n - np.searchsorted(sb, grid, "left")
    le_a = np.searchsorted(sa, grid, "right")                        # (G,) counts of a <= t
    le_b = np.searchsorted(sb, grid, "right")
    families = [("upper", True, ge_a, ge_b), ("upper", False, ge_b, ge_a),
                ("lower", True, le_a, le_b), ("lower", False, le_b, le_a)]
    k1 = np.concatenate([f[2] for f in families])
    k2 = np.concatenate([f[3] for f in families])
    scores = (projected_mu_bound(k1, k2, n, n_count, alpha) if gdp
              else projected_bound(k1, k2, n, n_count, alpha, delta))
    ranked = _smooth(scores.reshape(4, grid.size)).reshape(-1)
    out = []
    for i in _top(ranked, k):
        tail, fos, _, _ = families[i // grid.size]
        t = float(grid[i % grid.size])
        out.append(Candidate(Threshold(tail, t, projection), fos, float(scores[i]), (int(k1[i]), int(k2[i]))))
    return out


def _directions(a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    """Fisher's direction, the difference of means, and the axes (d <= 32)."""
    d = a.shape[1]
    diff = a.mean(axis=0) - b.mean(axis=0)                            # (d,)
    cov = 0.5 * (np.cov(a, rowvar=False).reshape(d, d) + np.cov(b, rowvar=False).reshape(d, d))
    ridge = 1e-9 * max(float(np.trace(cov)) / d, 1e-300)
    dirs = [np.linalg.solve(cov + ridge * np.eye(d), diff), diff]
    if d <= _MAX_AXES:
        dirs.extend(np.eye(d))
    return [w / np.linalg.norm(w) for w in dirs if np.all(np.isfinite(w)) and np.linalg.norm(w) > 0]


def choose_vector(a: np.ndarray, b: np.ndarray, n_count: int, alpha: float, delta: float,
                  k: int = 1, *, gdp: bool = False) -> list[Candidate]:
    """Learn directions on the selection share (a, b: (n, d)), then thresholds on each."""
    cands = []
    for w in _directions(a, b):
        cands += choose_scalar(a @ w, b @ w, n_count, alpha, delta, k, projection=tuple(map(float, w)), gdp=gdp)
    cands.sort(key=lambda c: -c.score)
    return cands[:k]


def choose_discrete(a: np.ndarray, b: np.ndarray, values: list, n_count: int, alpha: float,
                    delta: float, k: int = 1) -> list[Candidate]:
    """Prefixes of the likelihood-ratio ranking of the codes a, b (int arrays; values[c] = output)."""
    m = len(values)
    ca = np.bincount(a, minlength=m).astype(float)                   # (C,)
    cb = np.bincount(b, minlength=m).astype(float)
    seen = np.flatnonzero(ca + cb > 0)
    cands_k1, cands_k2, orders, fos_list = [], [], [], []
    for fos, (x, y) in ((True, (ca, cb)), (False, (cb, ca))):
        order = seen[np.argsort(-((x[seen] + 0.5) / (y[seen] + 0.5)), kind="stable")]
        cands_k1.append(np.cumsum(x[order]))
        cands_k2.append(np.cumsum(y[order]))
        orders.append(order)
        fos_list.append(fos)
    k1, k2 = np.concatenate(cands_k1), np.concatenate(cands_k2)
    scores = projected_bound(k1, k2, a.shape[0], n_count, alpha, delta)
    out = []
    for i in _top(scores, k):
        j, r = divmod(int(i), seen.size)
        codes = orders[j][: r + 1]
        vs = ValueSet(tuple(values[c] for c in codes), tuple(int(c) for c in codes))
        out.append(Candidate(vs, fos_list[j], float(scores[i]), (int(k1[i]), int(k2[i]))))
    return out
