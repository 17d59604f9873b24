"""Value sets of discrete outputs and atom sets of continuous ones, and how the best ones are
chosen on the selection share (``rejection.py`` has the overview of the families of sets).

- discrete outputs (integer codes): the values ranked by their likelihood ratio on the
  selection share and every prefix of that ranking, i.e. single values and unions
  (the Neyman-Pearson sets, Ding et al. 2018); and, when the values are ordered (scalar
  numbers: counts, geometric noise), the threshold sets {x <= t} and {x >= t}
  (``ValueThreshold``). The two families compete on the same selection-share score for the
  k sets that reach the counting share, so m is unchanged. Thresholds matter where the
  likelihood ratio is flat: discrete Laplace noise has ratio e^eps on every x >= 1, so the
  noisy ranking of those values orders them at random and a prefix is an odd set such
  as {2, 20, 5, 3, -1}, while {x >= 1} takes all of them.
- atom sets of a continuous scalar output (``AtomSet``): the values that repeat on the
  selection share, which a continuous law never does (an exact value released with small
  probability, a clipped end, a rounding grid),
  ranked by their likelihood ratio, every prefix a candidate, as for discrete outputs. A
  cross-fit between the two halves of the selection share decides whether the atom sets or
  the thresholds go forward (``_atoms_win``). Laplace noise that releases the exact value
  with probability 1e-3 (infinite loss) hides in every threshold set: eps_lb ~0.98 against a
  claim of 1 at 10^5 per side; the atom set {the exact value} reaches ~2.9
  (tests/audits/test_audit_reach.py). ``rejection.choose_continuous`` lets them compete with
  the thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from userdp.audits.engine.bounds import projected_bound
from userdp.audits.engine.report import capped_values
from userdp.audits.engine.sampling import NO_RELEASE_LABEL, released_cells, released_floats, released_rows
from userdp.audits.engine.thresholds import _MODEL_Z_SEL, Candidate, Threshold, _top, choose_scalar

__all__ = [
    "ValueSet",
    "ValueThreshold",
    "AtomSet",
    "ATOM_MAX",
    "choose_discrete",
]


@dataclass(frozen=True)
class ValueSet:
    """A finite set of output values; ``codes`` index the audit's table of distinct outputs.
    The value ``None`` stands for "no release" (``sampling.NO_RELEASE``)."""

    values: tuple
    codes: tuple[int, ...] = field(repr=False, default=())

    def mask(self, codes: np.ndarray) -> np.ndarray:
        return np.isin(codes, np.asarray(self.codes, dtype=np.int64))

    def contains(self, outputs) -> np.ndarray:
        if any(isinstance(v, tuple) for v in self.values):  # rows: compared cell by cell, NaN = not released
            x = released_cells(outputs)
            gaps = np.isnan(x)
            out = np.zeros(x.shape[0], dtype=bool)
            for v in self.values:
                hit = gaps.all(axis=1) if v is None else ~gaps.all(axis=1)
                for j, c in enumerate(() if v is None else v):
                    hit &= gaps[:, j] if c is None else x[:, j] == c
                out |= hit
            return out
        rows, released = released_rows(outputs)  # (n, k), (n,)
        out = np.zeros(rows.shape[0], dtype=bool)
        for v in self.values:
            out |= ~released if v is None else released & np.all(rows == np.asarray(v), axis=1)
        return out

    def describe(self, limit: int = 8) -> str:
        shown = ", ".join(NO_RELEASE_LABEL if v is None else str(v) for v in self.values[:limit])
        more = f", ... ({len(self.values)} values)" if len(self.values) > limit else ""
        return "{" + shown + more + "}"

    def to_dict(self) -> dict:
        values = [NO_RELEASE_LABEL if v is None else _jsonable(v) for v in self.values]
        return {"type": "values", **capped_values(values), "description": self.describe()}


@dataclass(frozen=True)
class ValueThreshold:
    """{x >= t} (tail "upper") or {x <= t} (tail "lower") on ordered discrete outputs, with
    "no release" as a member when ``missing``; ``values`` and ``codes`` are the members among
    the audit's table of distinct outputs (``None`` = no release)."""

    tail: str
    t: float
    values: tuple = field(repr=False, default=())
    codes: tuple[int, ...] = field(repr=False, default=())
    missing: bool = False

    def mask(self, codes: np.ndarray) -> np.ndarray:
        return np.isin(codes, np.asarray(self.codes, dtype=np.int64))

    def contains(self, outputs) -> np.ndarray:
        return Threshold(self.tail, self.t, None, self.missing).contains(outputs)

    def describe(self) -> str:
        op = ">=" if self.tail == "upper" else "<="
        return f"{{x {op} {self.t:.6g}{' or no release' if self.missing else ''}}}"

    def to_dict(self) -> dict:
        d = {"type": "threshold", "tail": self.tail, "t": self.t, "description": self.describe()}
        if self.missing:
            d["no_release"] = True
        return d


def _jsonable(v):
    if isinstance(v, tuple):
        return [_jsonable(u) for u in v]
    return v.item() if isinstance(v, np.generic) else v


@dataclass(frozen=True)
class AtomSet:
    """{x : x in values}: a finite set of output values of a CONTINUOUS output, tested by exact
    equality (``choose_continuous``, "Atoms"). A continuous law puts no mass on any finite set,
    so a value that repeats is an atom of the mechanism (an exact value released with positive
    probability, a clipped end, a rounded grid); "no release" (NaN) is never a member."""

    values: tuple[float, ...]

    def mask(self, x: np.ndarray) -> np.ndarray:
        """Membership of scalars x (NaN: no release, never a member)."""
        return np.isin(x, np.asarray(self.values, dtype=float))

    def contains(self, outputs) -> np.ndarray:
        return self.mask(released_floats(outputs))

    def describe(self, limit: int = 8) -> str:
        shown = ", ".join(f"{v:.17g}" for v in self.values[:limit])
        more = f", ... ({len(self.values)} values)" if len(self.values) > limit else ""
        return "{x in {" + shown + more + "}} (atoms: values that repeat, learned on the selection share)"

    def to_dict(self) -> dict:
        return {"type": "atoms", **capped_values([float(v) for v in self.values]), "description": self.describe()}


ATOM_MAX = 100_000  # distinct repeated values kept (the most frequent): a rounded output has many


def _atoms(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """The released values that occur at least twice in the pooled selection share, ascending
    (None if there are none). Under a continuous law two outputs are equal with probability 0,
    so each is an atom of the mechanism: a value released with positive probability (an exact
    answer, a clipped end, a point of a rounding grid)."""
    x = np.concatenate([a, b])
    x = np.sort(x[~np.isnan(x)])
    eq = x[1:] == x[:-1]
    if not eq.any():
        return None
    values, counts = np.unique(x[1:][eq], return_counts=True)
    if values.size > ATOM_MAX:
        values = np.sort(values[np.argsort(-counts, kind="stable")[:ATOM_MAX]])
    return values


def _atom_codes(x: np.ndarray, atoms: np.ndarray) -> np.ndarray:
    """Index of each x among ``atoms``; ``atoms.size`` (the "rest" code) for every other x."""
    i = np.minimum(np.searchsorted(atoms, x), atoms.size - 1)
    return np.where(atoms[i] == x, i, atoms.size)


def _atom_families(a: np.ndarray, b: np.ndarray, atoms: np.ndarray) -> list:
    """``_discrete_families`` over the atoms: prefixes of their likelihood-ratio ranking on a
    (first) and b (second), both orderings; the outputs that are no atom belong to no set."""
    m = atoms.size
    ca = np.bincount(_atom_codes(a, atoms), minlength=m + 1)[:m].astype(float)
    cb = np.bincount(_atom_codes(b, atoms), minlength=m + 1)[:m].astype(float)
    seen = np.flatnonzero(ca + cb > 0)
    out = []
    for fos, (x, y) in ((True, (ca, cb)), (False, (cb, ca))):
        order = seen[np.argsort(-((x[seen] + 0.5) / (y[seen] + 0.5)), kind="stable")]
        out.append(
            (
                fos,
                lambda r, o=order: AtomSet(tuple(float(v) for v in atoms[o[: r + 1]])),
                np.cumsum(x[order]),
                np.cumsum(y[order]),
            )
        )
    return out


def _atoms_win(a, b, atoms, n_count: int, alpha: float, delta: float, noise_family) -> tuple[bool, float]:
    """(whether the atom sets beat the thresholds, the atoms' held-out score), by cross-fitting
    as in ``choose_discrete``: on each half of the selection share each family proposes its
    best set, and the other half scores both proposals with plain plug-in counts (no
    shrinkage: the proposals are fixed before that half is read, so there is no winner's
    curse to correct, and a zero count on the other side, which the Wilson shrinkage would
    inflate to ~2/n, is the whole signal of an atom). Each family proposes its best set in
    each ordering of the pair (the atoms of the two sides are two sets, and a half may hold
    one side's atoms only) and counts the larger held-out score, floored at 0 as the audit
    floors eps_lb. Reads the selection share only."""
    h = a.shape[0] // 2
    if h < 2:
        return False, -np.inf
    halves = ((a[:h], b[:h]), (a[h : 2 * h], b[h : 2 * h]))
    total = {"atoms": 0.0, "thresholds": 0.0}
    for (pa, pb), (sa, sb) in (halves, halves[::-1]):  # propose on one half, score on the other
        proposals = {
            "atoms": [c for fam in _atom_families(pa, pb, atoms) for c in _best([fam], h, n_count, alpha, delta, 1)],
            "thresholds": choose_scalar(pa, pb, n_count, alpha, delta, 8, noise_family=noise_family),
        }
        for name, found in proposals.items():
            best = 0.0  # as the audit reports max(eps_lb, 0): no evidence scores 0
            for fos in (True, False):  # each family's best set in each ordering of the pair
                c = next((c for c in found if c.first_over_second == fos), None)
                if c is None:
                    continue
                ka, kb = (int(np.count_nonzero(c.rejection_set.mask(x))) for x in (sa, sb))
                k1, k2 = (ka, kb) if fos else (kb, ka)
                best = max(
                    best,
                    float(
                        projected_bound(np.array([k1]), np.array([k2]), h, n_count, alpha, delta, z_sel=_MODEL_Z_SEL)[0]
                    ),
                )
            total[name] += best
    return bool(total["atoms"] > total["thresholds"]), total["atoms"] / 2


def _ordered(values: list) -> np.ndarray | None:
    """The codes of the released values, ascending in value, when those are ordered scalars
    (numbers); None otherwise (tuples of a vector output, or nothing released)."""
    released = [j for j, v in enumerate(values) if v is not None]
    if not released or not all(isinstance(values[j], (int, float, bool, np.number)) for j in released):
        return None
    num = np.array([float(values[j]) for j in released])
    return np.asarray(released, dtype=np.int64)[np.argsort(num, kind="stable")]


def choose_discrete(
    a: np.ndarray,
    b: np.ndarray,
    values: list,
    n_count: int,
    alpha: float,
    delta: float,
    k: int = 1,
    *,
    ordered: bool = True,
) -> list[Candidate]:
    """The k best prefixes of the likelihood-ratio ranking of the codes a, b (int arrays;
    values[c] = output), or, for ordered values, the k best thresholds {x <= t}, {x >= t} (t a
    value seen on the selection share) when the thresholds win the family comparison below;
    each set in both orderings of the pair.

    The comparison is cross-fitted: a set scored on the counts that chose it looks better than
    it is (the values whose ratio the noise inflated come first, and the best of many noisy
    scores is biased up), and the value sets, far more numerous, gain most from that. So the
    selection share is cut in two halves; on each, each family proposes its best set, and the
    other half scores the two proposals (one set each: no maximum, no bias). The family with
    the larger total over the two folds wins, and its candidates are then built on the whole
    selection share, as before. Every step reads the selection share only.

    ``ordered=False`` (output kind "categorical": labels whose order means nothing) keeps the
    value sets alone. "No release" (the value ``None``) is one more value for the value sets;
    each threshold also comes with it added ({x >= t or no release})."""
    m = len(values)
    value_sets = _discrete_families(a, b, values)
    ordered = _ordered(values) if ordered else None
    if ordered is None or a.shape[0] < 4:
        return _best(value_sets, a.shape[0], n_count, alpha, delta, k)
    count = lambda x: np.bincount(x, minlength=m)  # noqa: E731
    thresholds = _threshold_families(count(a), count(b), ordered, values)
    h = a.shape[0] // 2
    halves = ((a[:h], b[:h]), (a[h : 2 * h], b[h : 2 * h]))
    total = {"values": 0.0, "thresholds": 0.0}
    for (pa, pb), (sa, sb) in (halves, halves[::-1]):  # propose on one half, score on the other
        proposals = {
            "values": _discrete_families(pa, pb, values),
            "thresholds": _threshold_families(count(pa), count(pb), ordered, values),
        }
        for name, fams in proposals.items():
            c = _best(fams, h, n_count, alpha, delta, 1)[0]
            inside = c.rejection_set.mask
            ka, kb = int(np.count_nonzero(inside(sa))), int(np.count_nonzero(inside(sb)))
            k1, k2 = (ka, kb) if c.first_over_second else (kb, ka)
            total[name] += float(projected_bound(np.array([k1]), np.array([k2]), h, n_count, alpha, delta)[0])
    winner = thresholds if total["thresholds"] > total["values"] else value_sets
    return _best(winner, a.shape[0], n_count, alpha, delta, k)


def _discrete_families(a, b, values: list) -> list:
    """(first over second, set builder from a position r, k1, k2) for the prefixes of the
    likelihood-ratio ranking of the codes a (first) and b (second), values[c] = output."""
    m = len(values)
    ca = np.bincount(a, minlength=m).astype(float)  # (C,)
    cb = np.bincount(b, minlength=m).astype(float)
    seen = np.flatnonzero(ca + cb > 0)
    out = []
    for fos, (x, y) in ((True, (ca, cb)), (False, (cb, ca))):
        order = seen[np.argsort(-((x[seen] + 0.5) / (y[seen] + 0.5)), kind="stable")]
        out.append((fos, lambda r, o=order: _value_set(values, o[: r + 1]), np.cumsum(x[order]), np.cumsum(y[order])))
    return out


def _threshold_families(ca, cb, ordered: np.ndarray, values: list) -> list:
    """As ``_discrete_families`` for {x <= t} and {x >= t}, t each value with a count, and,
    when "no release" (the value None) occurs, the same sets with it added."""
    at = np.flatnonzero((ca + cb)[ordered] > 0)
    none = [j for j, v in enumerate(values) if v is None]
    with_missing = (False, True) if none and ca[none[0]] + cb[none[0]] > 0 else (False,)
    out = []
    for missing in with_missing:
        for fos, (x, y) in ((True, (ca, cb)), (False, (cb, ca))):
            xo, yo = x[ordered].astype(float), y[ordered].astype(float)
            x0, y0 = (float(x[none[0]]), float(y[none[0]])) if missing else (0.0, 0.0)
            out.append(
                (
                    fos,
                    lambda r, o=ordered, at=at, ms=missing: _value_threshold(values, "lower", o, at[r], ms),
                    x0 + np.cumsum(xo)[at],
                    y0 + np.cumsum(yo)[at],
                )
            )  # {x <= t}
            out.append(
                (
                    fos,
                    lambda r, o=ordered, at=at, ms=missing: _value_threshold(values, "upper", o, at[r], ms),
                    x0 + np.cumsum(xo[::-1])[::-1][at],
                    y0 + np.cumsum(yo[::-1])[::-1][at],
                )
            )  # {x >= t}
    return out


def _best(families: list, n_sel: int, n_count: int, alpha: float, delta: float, k: int) -> list[Candidate]:
    """The k best sets of ``families`` (see ``_discrete_families``) by their projected bound."""
    k1 = np.concatenate([f[2] for f in families])
    k2 = np.concatenate([f[3] for f in families])
    ends = np.cumsum([f[2].size for f in families])
    scores = projected_bound(k1, k2, n_sel, n_count, alpha, delta)
    out = []
    for i in _top(scores, k):
        j = int(np.searchsorted(ends, i, side="right"))
        fos, build = families[j][:2]
        out.append(
            Candidate(build(int(i) - (int(ends[j - 1]) if j else 0)), fos, float(scores[i]), (int(k1[i]), int(k2[i])))
        )
    return out


def _value_set(values: list, codes: np.ndarray) -> ValueSet:
    return ValueSet(tuple(values[c] for c in codes), tuple(int(c) for c in codes))


def _value_threshold(values: list, tail: str, ordered: np.ndarray, p: int, missing: bool = False) -> ValueThreshold:
    """{x <= values[ordered[p]]} ("lower") or {x >= values[ordered[p]]} ("upper"), with "no
    release" added when ``missing``."""
    codes = list(ordered[: p + 1] if tail == "lower" else ordered[p:])
    if missing:
        codes.append(values.index(None))
    return ValueThreshold(
        tail, float(values[ordered[p]]), tuple(values[c] for c in codes), tuple(int(c) for c in codes), missing
    )
