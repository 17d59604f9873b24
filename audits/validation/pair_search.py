"""The pair search of ``userdp validate`` (docs/validate.md, "The pair search"): the neighbouring pair
that maximises TARGET's realised loss, found instead of assumed, for the audit to confirm.

A spec declares its neighbour space as a ``Domain`` (``ValidationSpec.domain``: params -> Domain):
the relation, the public parameters, the datasets whose neighbours are searched, the bounds of a
record's value coordinates (a box, and optionally an L2 ball), of its label, and how many records the
differing user may hold. ``candidates`` enumerates the space: a user removed (every user of a base),
or added with 1 .. many records whose values lie anywhere in the domain: the box's corners, its
centre and interior points (a cap's endpoint strictly inside (0, U)), every coordinate axis, every
diagonal and off-diagonal direction (e_k +- e_l), and seeded uniform points; labels at both ends and
the centre. Under replace-record a record (the first, the last, the most and least lenient of a
personalized profile) is moved; under replace-user-items every item of one user (the lightest, one of
median count, the heaviest: the counts are public) moves between two points of the domain.

Each candidate pair (D, D') is scored by **coupled replay**: TARGET is called on both sides with
generators from ONE seed (``replay`` rows per side, one batched call or one call per release). For
additive noise the two releases then differ by exactly the difference of the statistics, so the
score is deterministic: the move measured in the claimed noise's norm (L1 for Laplace, L2 for
L2-Laplace and Gaussian), coordinate by coordinate in units of the reference's noise scale on the
base (estimated once per base from the reference's own releases), over the claim's level for the
pair (eps, eps_i or mu): the pair's realised share of the claim. Where the replayed difference is not
the same on every row (TARGET's noise is not additive, or it ignores the rng), the score is the
move of TARGET's own noise-free ``statistic`` stage where it has one (exact), else the move of the
release's mean (the few rows' moments), and the search also looks for an **atom**: a
release value that repeats on one side and never occurs on the other. Such a value has positive
probability under one dataset and none under its neighbour, an unbounded loss; the audit then
counts the indicator of that value (post-processing: any bound on it bounds the release's loss).

The score measures the claimed norm; a target whose noise has another shape (per-coordinate
Laplace where the claim is L2) realises its largest loss along another direction, so the best
pair under each of the L1, L2 and max norms is kept too (at most ``KEEP`` pairs): the auditor's
own pilot ranks them on fresh releases and confirms the best (``harness.audit``).

Validity: the search draws only on its own seed stream (``[seed, 11, ...]``), which the audit never
uses, so choosing the pair costs none of the audit's confidence: the audited pair is fixed before
the audit's samples are drawn, exactly as a spec's design pair is. A search is a lower bound on the
worst case, never a proof that none is worse.
"""

from __future__ import annotations

import itertools
import json
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from userdp.reference.neighbours import NeighbourPair

from userdp.audits.validation import AuditDesign, BadType, BadValue, Case
from userdp.audits.validation.releases import call_target, reference_rows, release_rows, stage_vector

__all__ = [
    "Domain",
    "Candidate",
    "SearchResult",
    "candidates",
    "search_pairs",
    "searched_design",
    "atom_indicator",
    "KEEP",
]

KEEP = 3  # pairs handed to the audit: the best under the claimed norm, then under L1, L2, max
RELATIONS = ("add-remove-user", "replace-record", "replace-user-items", "replace-user", "replace-user-labels")
_NORMS = {"laplace": 1, "l2laplace": 2, "gaussian": 2}


@dataclass(frozen=True)
class Domain:
    """The neighbour space of one algorithm at one set of public parameters.

    relation: "add-remove-user" (a user appears or vanishes), "replace-record" (one record's value
        and label change, n public), "replace-user-items" (one user's items change, its count public),
        "replace-user" (one user's values, and its labels where ``labels`` is given, change; which
        records are whose is public) or "replace-user-labels" (one user's labels change, its features
        public: ``values`` is then not used).
    params: the public parameters the search (and the audit of its pair) runs at.
    bases: the datasets whose neighbours are searched.
    values: (lo, hi), the bounds of every value coordinate; norm: None, or an L2 bound on a record's
        value vector (features in a ball): candidate directions are scaled into it.
    labels: None (no labels), or the label values to try (both ends and the centre of a range; the
        two classes of a classifier).
    records: the numbers of records the added user may hold (e.g. 1, tau, 2 tau, 4 tau); under
        "replace-user-items" the counts are public, so the users moved are a base's lightest, one of
        median count and its heaviest; under "replace-user" and "replace-user-labels" the users'
        sizes are public and the bases' own: one user of each size present is searched (a base whose
        sizes span 1, tau, 2 tau, 4 tau covers them).
    add: None, or ``add(base, user_id, values (k, ...), labels (k,) or None) -> dataset``, for
        datasets with more fields than values and labels (task ids); default: the relation's own.
    partitions: None (no partition key), or the partition keys the added user may hold records in, those of
        the bases first, then new ones: the relation across partitions (an added user holds records in
        ``spread`` of them at once, ``records`` in each).
    spread: the numbers of partitions the added user holds records in (e.g. 1, L0, L0 + 1, all).
    points: None (both ends, interior fractions, seeded uniforms), or the scalar values to try, each in
        ``values`` (a clamp's ends inside a wider domain, the centre: a target that reads no value needs one).
    replay: the coupled rows per side that score a candidate (16 by default; where the rng streams do not
        align, e.g. a sampling stage whose draws depend on the data, more rows make the moments tighter).
    refine: 0, or the rows per side that re-score the best candidates on fresh seeds where the replay is not
        exact (the first ``replay`` rows rank them; these decide).
    score: None, or the parameters the candidates are SCORED at (default ``params``; the audit of the chosen
        pair always runs at ``params``). A larger epsilon shrinks additive noise, so a few coupled rows give
        a pair's move precisely where the replay does not align the noise (the move of the statistic does not
        depend on epsilon; a target whose noise does not scale with 1 / epsilon is ranked, and the audit at
        ``params`` decides). The share of the claim is then measured at these parameters.
    stage: whether TARGET's own noise-free ``statistic`` stage may measure a pair's move where the replay is
        not exact (False where the releases' mean is not the statistic of the data as given: a sampling
        stage comes first, as Wilson's bounding).
    absent: None, or the release value that means "this partition is absent" (private partition selection:
        0 in a 0/1 release; NaN in a map of values). Such a release is scored by its partitions' presence:
        a partition present on one side and absent on the other is the selection's event, measured by its
        probability, and a partition ALWAYS present on one side and never on the other is an atom.
    """

    relation: str
    params: Mapping[str, Any]
    bases: tuple
    values: tuple
    norm: float | None = None
    labels: tuple | None = None
    records: tuple = (1,)
    add: Callable | None = field(default=None, repr=False)
    partitions: tuple | None = None
    spread: tuple = (1,)
    points: tuple | None = None
    replay: int = 16
    refine: int = 0
    score: Mapping | None = None
    stage: bool = True
    absent: float | None = None

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise BadValue(f"relation must be one of {RELATIONS}, got {self.relation!r}")
        if not isinstance(self.params, Mapping):
            raise BadType(f"params must be a mapping of parameter names to values, got {type(self.params).__name__}")
        if not isinstance(self.bases, tuple) or not self.bases:
            raise BadValue("bases must be a non-empty tuple of datasets")
        b = self.values
        if not (isinstance(b, tuple) and len(b) == 2 and all(math.isfinite(float(v)) for v in b) and b[0] < b[1]):
            raise BadValue(f"values must be a pair (lo, hi) of finite reals with lo < hi, got {b!r}")
        if self.labels is not None and not (
            isinstance(self.labels, tuple) and self.labels and all(math.isfinite(float(v)) for v in self.labels)
        ):
            raise BadValue(f"labels must be None or a non-empty tuple of finite reals, got {self.labels!r}")
        if self.norm is not None and not (math.isfinite(self.norm) and self.norm > 0):
            raise BadValue(f"norm must be None or a finite real > 0, got {self.norm!r}")
        if not self.records or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in self.records):
            raise BadValue(f"records must be a non-empty tuple of ints >= 1, got {self.records!r}")
        if self.add is not None and not callable(self.add):
            raise BadType(f"add must be None or callable, got {type(self.add).__name__}")
        self._check_partitions()

    def _check_partitions(self):
        def ints(t, lo):
            return bool(t) and all(isinstance(k, int) and not isinstance(k, bool) and k >= lo for k in t)

        if self.partitions is not None and not (
            isinstance(self.partitions, tuple)
            and ints(self.partitions, 0)
            and len(set(self.partitions)) == len(self.partitions)
        ):
            raise BadValue(f"partitions must be None or a tuple of distinct ints >= 0, got {self.partitions!r}")
        if not (isinstance(self.spread, tuple) and ints(self.spread, 1)):
            raise BadValue(f"spread must be a non-empty tuple of ints >= 1, got {self.spread!r}")
        if self.partitions is None and self.spread != (1,):
            raise BadValue(f"spread must be (1,) without partitions, got {self.spread!r}")
        if self.partitions is not None and max(self.spread) > len(self.partitions):
            raise BadValue(f"spread must be at most len(partitions) = {len(self.partitions)}, got {self.spread!r}")
        lo, hi = (float(v) for v in self.values)
        if self.points is not None and not (
            isinstance(self.points, tuple) and self.points and all(lo <= float(v) <= hi for v in self.points)
        ):
            raise BadValue(f"points must be None or a non-empty tuple of values in [{lo}, {hi}], got {self.points!r}")
        for name, v, least in (("replay", self.replay, 2), ("refine", self.refine, 0)):
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= least):
                raise BadValue(f"{name} must be an int >= {least}, got {v!r}")
        if self.score is not None and not isinstance(self.score, Mapping):
            raise BadType(
                f"score must be None or a mapping of parameter names to values, got {type(self.score).__name__}"
            )
        if self.absent is not None and not isinstance(self.absent, (int, float)):
            raise BadType(f"absent must be None or a number (NaN allowed), got {type(self.absent).__name__}")


@dataclass(frozen=True)
class Candidate:
    """One neighbouring pair of the space, with what it is."""

    first: Any
    second: Any
    unit: int
    description: str
    base: Any = field(default=None, repr=False)  # the base dataset the pair was built from


@dataclass
class SearchResult:
    """The search's best pairs (best first), how it scored them, and what it cost."""

    pairs: list  # [NeighbourPair], best first, all from one base dataset
    scores: list  # their realised shares of the claim (inf: an atom)
    how: str  # "coupled replay (deterministic)", "coupled replay (moments)", "atom"
    evaluated: int
    seconds: float
    atom: tuple | None = None  # (coordinate, value) of an atom found on the first pair
    width: int = 1  # coordinates of one release row (the spec's flatten)

    def summary(self) -> str:
        s = self.scores[0]
        share = "an atom: unbounded" if math.isinf(s) else f"{s:.4g} of the claim"
        return f"{self.evaluated} pairs by {self.how}: best {self.pairs[0].description} ({share})"


# ------------------------------------------------------------------ the space
def _directions(dim: int) -> list[np.ndarray]:
    """Unit-free directions of a value vector: every axis, every diagonal (all sign patterns, for
    d <= 3), and every off-diagonal pair e_k +- e_l."""
    out = []
    for k in range(dim):
        e = np.zeros(dim)
        e[k] = 1.0
        out += [e, -e]
    if dim >= 2:
        if dim <= 3:
            out += [np.array(s, float) for s in itertools.product((1.0, -1.0), repeat=dim)]
        for k, j in itertools.combinations(range(dim), 2):
            for s in (1.0, -1.0):
                e = np.zeros(dim)
                e[k], e[j] = 1.0, s
                out.append(e)
    return out


def _points(dom: Domain, shape: tuple, rng) -> list[tuple[np.ndarray, str]]:
    """Record values to try: (value, what). Scalars: both ends, interior points, seeded uniforms;
    vectors: the box's corners and axes (or the ball's surface along every direction), the centre,
    half-way points, seeded uniforms."""
    lo, hi = (float(v) for v in dom.values)
    if shape == () and dom.points is not None:
        return [(np.array(float(v)), f"{float(v):.4g}") for v in dom.points]
    if shape == ():
        fr = (0.0, 1.0, 0.125, 0.25, 0.5, 0.75, 0.875, 0.37, 0.61)
        pts = [(np.array(lo + f * (hi - lo)), f"{lo + f * (hi - lo):.4g}") for f in fr]
        pts += [(np.array(v), f"{v:.4g}") for v in rng.uniform(lo, hi, 2)]
        return pts
    dim = int(np.prod(shape))
    mid = (lo + hi) / 2
    pts = []
    for e in _directions(dim):
        if dom.norm is not None:
            v = np.clip(dom.norm * e / np.linalg.norm(e), lo, hi)
        else:
            v = np.where(e > 0, hi, np.where(e < 0, lo, mid))
        pts.append((v, "(" + ", ".join(f"{x:.3g}" for x in v) + ")"))
        pts.append((mid + (v - mid) / 2, "half-way to (" + ", ".join(f"{x:.3g}" for x in v) + ")"))
    for u in rng.uniform(lo, hi, (2, dim)):
        if dom.norm is not None and np.linalg.norm(u) > dom.norm:
            u = u * dom.norm / np.linalg.norm(u)
        pts.append((u, "(" + ", ".join(f"{x:.3g}" for x in u) + ")"))
    return [(v.reshape(shape), w) for v, w in pts]


def _label_values(dom: Domain) -> list[float | None]:
    return [None] if dom.labels is None else [float(v) for v in dom.labels]


def candidates(dom: Domain, seed: int = 0) -> list[Candidate]:
    """Every pair of the space, in a fixed order (``seed`` draws its uniform interior points)."""
    from userdp.reference.neighbours import ADD_REMOVE_USER, REPLACE_RECORD, REPLACE_USER_ITEMS

    rng = np.random.default_rng([seed, 11, 0])
    out = []
    for D in dom.bases:
        shape = tuple(np.asarray(D.values).shape[1:])
        pts = _points(dom, shape, rng)
        labels = _label_values(dom)
        if dom.relation == "add-remove-user":
            uid = int(np.max(D.user_ids)) + 1
            for u in np.unique(D.user_ids).tolist():
                if D.m >= 2:
                    out.append(Candidate(D, D.without_user(u), u, f"remove user {u} of {D.m}", D))
            if dom.partitions is not None:
                out += _partition_users(dom, D, pts, uid)
                continue
            for k in dom.records:
                for v, what in pts:
                    for y in labels:
                        vals = np.repeat(v[None], k, axis=0)
                        ys = None if y is None else np.full(k, y)
                        add = dom.add or (lambda B, i, x, lab: ADD_REMOVE_USER.neighbour(B, i, x, labels=lab))
                        D2 = add(D, uid, vals, ys)
                        tail = "" if y is None else f", label {y:g}"
                        out.append(
                            Candidate(D, D2, uid, f"add user {uid}: {k} record(s) at {what}{tail} ({D.m} users)", D)
                        )
        elif dom.relation == "replace-user-items":  # every item of one user moved between two points
            for u in _by_count(D):
                k = int(D.records_of(u).size)
                for (v1, w1), (v2, w2) in _moves(pts, dom):
                    a = REPLACE_USER_ITEMS.neighbour(D, u, np.repeat(v1[None], k, axis=0))
                    b = REPLACE_USER_ITEMS.neighbour(D, u, np.repeat(v2[None], k, axis=0))
                    out.append(Candidate(a, b, u, f"user {u} ({k} items): all at {w1} vs all at {w2} ({D.m} users)", D))
        elif dom.relation.startswith("replace-user"):
            out += _replace_user(dom, D, pts, labels, rng)
        else:  # replace-record: a record's label flipped at one value, or its value moved between two
            eps = getattr(D, "epsilons", None)
            tight = {int(np.argmax(eps)), int(np.argmin(eps))} if eps is not None else set()
            idx = sorted({0, D.n - 1} | tight)
            y_lo, y_hi = labels[0], labels[-1]
            for i in idx:
                for v, w in pts:
                    if y_lo != y_hi:
                        a, b = REPLACE_RECORD.neighbour(D, i, v, y_lo), REPLACE_RECORD.neighbour(D, i, v, y_hi)
                        out.append(Candidate(a, b, i, f"record {i} at {w}: label {y_lo:g} vs {y_hi:g}", D))
                for (v1, w1), (v2, w2) in itertools.combinations(pts[:8], 2):
                    a, b = REPLACE_RECORD.neighbour(D, i, v1, y_hi), REPLACE_RECORD.neighbour(D, i, v2, y_hi)
                    tail = "" if y_hi is None else f", label {y_hi:g}"
                    out.append(Candidate(a, b, i, f"record {i}: {w1} vs {w2}{tail}", D))
    return out


def _by_count(D) -> list[int]:
    """The users a replace-user-items move is tried on: the lightest, one of median count and the
    heaviest (ties: the smaller id), one per count (the counts are public, and every item of the user
    moves, so two users of one count differ only in which of the others' items stay)."""
    order = np.lexsort((D.users, D.counts))
    picked: dict[int, int] = {}
    for i in (0, order.size // 2, order.size - 1):
        picked.setdefault(int(D.counts[order[i]]), int(D.users[order[i]]))
    return list(picked.values())


def _moves(pts: list, dom: Domain) -> list[tuple]:
    """Pairs of points one user's items move between: every pair of the points for a scalar; for a
    vector, each point vs its mirror through the box's centre (the whole swing along its direction)
    and vs the centre (a pair per point, where every pair would be quadratic in the directions)."""
    if np.ndim(pts[0][0]) == 0:
        return list(itertools.combinations(pts, 2))
    mid = (float(dom.values[0]) + float(dom.values[1])) / 2
    out = []
    for v, w in pts:
        m = 2 * mid - v
        out.append(((v, w), (m, "(" + ", ".join(f"{x:.3g}" for x in m.reshape(-1)) + ")")))
        out.append(((v, w), (np.full_like(v, mid), "the centre")))
    return out


def _replace_user(dom: Domain, D, pts: list, labels: list, rng) -> list[Candidate]:
    """Replace-user pairs of base D: for one user of each size present (S_l public: a correct mechanism's
    weights read only the sizes), all of its records moved together between two values (or, under
    replace-user-labels, two labels), its labels flipped at each value, and its records split between
    the two ends record by record (every split for up to 4 records, 3 seeded ones above), where a
    sign-aligned move (a user's records entering rows of both signs) realises more than a uniform one."""
    from userdp.reference.neighbours import REPLACE_USER, REPLACE_USER_LABELS

    rel = REPLACE_USER_LABELS if dom.relation == "replace-user-labels" else REPLACE_USER
    users = [int(D.users[int(np.flatnonzero(D.counts == k)[0])]) for k in np.unique(D.counts)]
    ys = [y for y in labels if y is not None]
    out = []

    def pair(u, a, b, what, ya=None, yb=None):
        if rel is REPLACE_USER_LABELS:
            first, second = rel.neighbour(D, u, a), rel.neighbour(D, u, b)
        else:
            first, second = rel.neighbour(D, u, a, labels=ya), rel.neighbour(D, u, b, labels=yb)
        out.append(Candidate(first, second, u, f"user {u} ({D.records_of(u).size} record(s)): {what}", D))

    for u in users:
        k = int(D.records_of(u).size)
        if rel is REPLACE_USER_LABELS:
            states = [(np.full(k, y), f"labels {y:g}") for y in ys]
            for (a, wa), (b, wb) in itertools.combinations(states, 2):
                pair(u, a, b, f"all {wa} vs all {wb}")
            ends = (np.array(min(ys)), np.array(max(ys)))
        else:
            y_hi = None if not ys else np.full(k, max(ys))
            tail = "" if not ys else f", labels {max(ys):g}"
            for (v1, w1), (v2, w2) in itertools.combinations(pts[:8], 2):
                pair(u, np.repeat(v1[None], k, 0), np.repeat(v2[None], k, 0), f"all {w1} vs all {w2}{tail}", y_hi, y_hi)
            if len(ys) >= 2:
                for v, w in pts:
                    vals = np.repeat(v[None], k, 0)
                    pair(u, vals, vals, f"all at {w}, labels {min(ys):g} vs {max(ys):g}", np.full(k, min(ys)), y_hi)
            far = max(pts, key=lambda p: float(np.linalg.norm(p[0] - pts[0][0])))
            ends = (pts[0][0], far[0])
        if k >= 2:
            masks = range(1, 2 ** (k - 1)) if k <= 4 else rng.integers(1, 2 ** min(k, 62) - 1, 3).tolist()
            for mask in masks:
                bits = np.array([(int(mask) >> r) & 1 for r in range(k)], bool)
                a = np.stack([ends[int(b)] for b in bits])
                b = np.stack([ends[1 - int(b)] for b in bits])
                what = f"records split {''.join('ab'[int(b)] for b in bits)} vs the complement (a, b: the ends)"
                if rel is REPLACE_USER_LABELS:
                    pair(u, a, b, what)
                else:
                    pair(u, a, b, what, y_hi, y_hi)
    return out


def _with_user(D, uid: int, values, parts) -> Any:
    """D plus user ``uid`` with records of ``values`` in partitions ``parts`` (in that record order)."""
    from userdp.reference.data import UserDataset

    if D.partition_ids is None:
        raise BadValue("a Domain with partitions needs bases with partition_ids")
    return UserDataset.from_arrays(
        np.r_[D.values, np.asarray(values, float)],
        np.r_[D.user_ids, np.full(len(parts), uid)],
        partition_ids=np.r_[D.partition_ids, np.asarray(parts, dtype=np.int64)],
    )


def _partition_users(dom: Domain, D, pts: list, uid: int) -> list[Candidate]:
    """The users added across partitions: in s partitions of ``spread`` (the first s keys of ``partitions``,
    the bases' own first, and the last s in reverse: new partitions, another record order), k records of
    ``records`` in each, at one value; for s >= 2, values rising and falling across the user's partitions
    (unequal values: a bounding that keeps the user's first partitions, not a uniform sample, shows), and k
    records in the first partition with one in each other (unequal records)."""
    keys, out = list(dom.partitions), []
    lo, hi = min(float(v) for v, _ in pts), max(float(v) for v, _ in pts)

    def add(vals, parts, what):
        out.append(Candidate(D, _with_user(D, uid, vals, parts), uid, f"add user {uid}: {what} ({D.m} users)", D))

    for s in dom.spread:
        places = [keys[:s]] + ([keys[::-1][:s]] if keys[::-1][:s] != keys[:s] else [])
        for ks in places:
            for k in dom.records:
                parts = np.repeat(ks, k)
                for v, what in pts:
                    add(np.full(parts.size, float(v)), parts, f"{k} record(s) at {what} in each of partitions {ks}")
                if s >= 2 and hi > lo:
                    ramp = np.linspace(lo, hi, s)
                    for r, how in ((ramp, "rising"), (ramp[::-1], "falling")):
                        add(
                            np.repeat(r, k),
                            parts,
                            f"{k} record(s) in each of partitions {ks}, values {how} {lo:.4g}..{hi:.4g}",
                        )
                if s >= 2 and k >= 2:
                    heavy = np.r_[np.full(k, ks[0]), ks[1:]]
                    add(
                        np.full(heavy.size, hi),
                        heavy,
                        f"{k} record(s) at {hi:.4g} in partition {ks[0]}, one in each of {ks[1:]}",
                    )
    return out


# ------------------------------------------------------------------ scoring
def _level(claim, unit) -> float:
    """The claim's level for the pair's unit: mu (Gaussian DP), eps_i (personalized), eps."""
    kind = claim.kind
    if kind == "claims":
        return float(claim.gdp.mu)
    if kind == "gdp":
        return float(claim.mu)
    if kind == "personalized":
        eps = claim.params()["epsilons"]
        return float(eps[int(unit)]) if 0 <= int(unit) < len(eps) else float(min(eps))
    return float(claim.as_eps_delta()[0])


def _noise_scales(spec, D, params, seed) -> np.ndarray | None:
    """Per coordinate, the reference's noise scale on D (Laplace: b = E|Z|; L2-Laplace: E||Z|| / k;
    Gaussian: sd), from 4000 of its releases; None without a statistic or a declared noise family.
    Coordinates without noise get +inf (a move there is not measured)."""
    if spec.statistic is None or spec.noise is None:
        return None
    Z = reference_rows(spec, D, np.random.default_rng([seed, 11, 1]), 4000, params)
    Z = Z - np.asarray(spec.statistic(D, **params), float).reshape(1, -1)
    a = np.abs(Z)
    if spec.noise == "laplace":
        s = a.mean(axis=0)
    elif spec.noise == "gaussian":
        s = np.sqrt((Z**2).mean(axis=0))
    else:
        k = max(1, int((a.max(axis=0) > 0).sum()))
        s = np.full(Z.shape[1], float(np.linalg.norm(Z, axis=1).mean()) / k)
    return np.where(a.max(axis=0) > 0, s, np.inf)


def _spread(rows) -> np.ndarray:
    """A per-coordinate scale from the rows themselves (where the reference gives none)."""
    with np.errstate(invalid="ignore", over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column
        s = np.nanstd(np.where(np.isfinite(rows), rows, np.nan), axis=0)
    return np.where(s > 0, s, np.inf)


def _atom(a: np.ndarray, b: np.ndarray) -> tuple | None:
    """(side, coordinate, value): a value repeated on one side's rows and absent from the other's."""
    for side, (x, y) in enumerate(((b, a), (a, b))):
        for j in range(x.shape[1]):
            vals, counts = np.unique(x[:, j][np.isfinite(x[:, j])], return_counts=True)
            rep = vals[counts >= 2]
            if rep.size:
                new = rep[~np.isin(rep, y[:, j])]
                if new.size:
                    return side, j, float(new[0])
    return None


def atom_indicator(coordinate: int, value: float, flatten: Callable):
    """Post-processing for the atom audit: releases (rows) -> 1.0 where ``coordinate`` equals ``value``."""

    def post(rows: np.ndarray) -> np.ndarray:
        return (np.asarray(rows, float)[:, coordinate] == value).astype(float)

    return post


def _presence(rows: np.ndarray, absent: float) -> np.ndarray:
    """Where each row holds each partition: a finite value other than ``absent`` (NaN: any finite value)."""
    with np.errstate(invalid="ignore"):
        here = np.isfinite(rows)
        return here if math.isnan(float(absent)) else here & (rows != float(absent))


def _selection(a: np.ndarray, b: np.ndarray, absent: float, delta: float) -> tuple[np.ndarray, tuple | None]:
    """(per coordinate, the largest log ratio of a presence event; an atom or None) from R coupled rows a side.

    A partition kept with frequency f_a on one side and f_b on the other: the events "present" and "absent",
    both orderings, each ratio of the smoothed frequencies (f R + 1/2) / (R + 1) (never 0 or 1), counted only
    where the larger side's frequency exceeds delta (an event below delta is the claim's delta part, not its
    eps). An atom: a partition present on EVERY row of one side and on none of the other's (R >= 8), a value
    of positive probability under one dataset and, as far as R rows tell, none under its neighbour."""
    R = a.shape[0]
    fa, fb = _presence(a, absent).mean(axis=0), _presence(b, absent).mean(axis=0)
    atom = None
    always = np.flatnonzero(((fa == 1) & (fb == 0)) | ((fa == 0) & (fb == 1)))
    if R >= 8 and always.size:
        k = int(always[0])
        vals = np.unique((a if fa[k] == 1 else b)[:, k])
        if vals.size == 1:  # the present side's one value: its indicator is the partition's presence
            atom = (k, float(vals[0]))
    sa, sb = (fa * R + 0.5) / (R + 1), (fb * R + 0.5) / (R + 1)
    terms = [
        np.where(fx > delta, np.log(x / y), 0.0)
        for x, y, fx in ((sa, sb, fa), (sb, sa, fb), (1 - sa, 1 - sb, 1 - fa), (1 - sb, 1 - sa, 1 - fb))
    ]
    return np.maximum(np.max(np.stack(terms), axis=0), 0.0), atom


def _delta(claim) -> float:
    try:
        return float(claim.as_eps_delta()[1])
    except (AttributeError, TypeError, ValueError):
        return 0.0


@dataclass
class _Scoring:
    """What scoring a candidate needs, computed once per search."""

    ctx: Any
    dom: Domain
    params: dict
    one: bool
    scales: dict
    stat: Callable | None
    p: int


def _score(sc: _Scoring, c: Candidate, j: int, n: int, stream: int) -> dict | None:
    """One candidate's score from n coupled rows a side (seeds ``[seed, 11, stream, j]``); None: no claim."""
    ctx, spec, dom, params = sc.ctx, sc.ctx.spec, sc.dom, sc.params
    claim = ctx.claim(Case(c.first, params, "searched"))
    if claim is None:
        return None
    where = f"pair search: {c.description}"
    t = ctx.target
    a = release_rows(spec, t, c.first, np.random.default_rng([ctx.seed, 11, stream, j]), n, params, where, sc.one)
    b = release_rows(spec, t, c.second, np.random.default_rng([ctx.seed, 11, stream, j]), n, params, where, sc.one)
    out = {"c": c, "width": a.shape[1], "det": True, "staged": False, "atom": None, "norms": None}
    if a.shape != b.shape:
        return out
    lev = _level(claim, c.unit)
    if dom.absent is not None:  # partition selection: presence events, by their probabilities
        per, out["atom"] = _selection(a, b, dom.absent, _delta(claim))
        out["det"] = False
        out["norms"] = tuple(float(np.linalg.norm(per, ord=q)) / lev for q in (1, 1, 2, np.inf))
        return out
    det, shift = _replayed_shift(a, b)
    out["det"] = det
    if not det and sc.stat is not None:  # no exact replay (TARGET's own generator): its noise-free stage
        s1, s2 = sc.stat(c.first), sc.stat(c.second)
        if s1 is not None and s2 is not None and s1.shape == s2.shape == shift.shape:
            shift, out["staged"] = s1 - s2, True
    scale = sc.scales.get(id(c.base))
    scale = _spread(np.vstack([a, b])) if scale is None or scale.shape != shift.shape else scale
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        u = np.nan_to_num(shift / scale, nan=0.0)
    out["norms"] = tuple(float(np.linalg.norm(u, ord=q)) / lev for q in (sc.p, 1, 2, np.inf))
    if not det:
        found = _atom(a, b)
        out["atom"] = None if found is None else found[1:]
    return out


def search_pairs(ctx, budget: float) -> SearchResult | None:
    """The best pairs of the spec's domain for TARGET (module docstring), within ``budget`` seconds
    of the search's own time; None where the spec declares no domain."""
    spec = ctx.spec
    if spec.domain is None:
        return None
    t0 = time.perf_counter()
    dom = spec.domain(ctx.seed)
    params = dict(dom.params if dom.score is None else dom.score)  # where the candidates are scored
    cands = candidates(dom, ctx.seed)
    replay = dom.replay if not ctx.slow else max(4, dom.replay // 4)
    scales = {id(D): _noise_scales(spec, D, params, ctx.seed) for D in dom.bases}
    stat = _stage_statistic(ctx, params) if dom.stage else None
    sc = _Scoring(ctx, dom, params, not ctx.independent, scales, stat, _NORMS.get(spec.noise, 2))
    rows, atom = [], None
    order = np.random.default_rng([ctx.seed, 11, 3]).permutation(len(cands))  # fair coverage within the budget
    for j in order.tolist():
        if time.perf_counter() - t0 > budget and len(rows) >= 8:
            break
        r = _score(sc, cands[j], j, replay, 2)
        if r is None:
            return None
        r["j"] = j
        rows.append(r)
        if atom is None and r["atom"] is not None:
            atom = r
    scored = [r for r in rows if r["norms"] is not None]
    if not scored:
        return None
    exact = all(r["det"] for r in scored)
    if atom is None and dom.refine and not exact:
        scored, atom = _refined(sc, scored, replay, budget, time.perf_counter() - t0)
    secs = time.perf_counter() - t0
    if atom is not None:
        c = atom["c"]
        return SearchResult([_pair(spec, c)], [math.inf], "coupled replay, an atom", len(rows), secs, atom["atom"], 1)
    how = "coupled replay, exact (additive noise)" if exact else "coupled replay, moments"
    if dom.absent is not None:
        how = "coupled replay, the partitions' presence probabilities"
    elif not exact and all(r["staged"] for r in scored):
        how = "TARGET's statistic stage, exact (its releases do not replay)"
    if dom.refine and not exact:
        how += f" (the best re-scored on {dom.refine} fresh rows a side at most)"
    return _best(spec, scored, how, len(rows), secs)


def _refined(sc: _Scoring, scored: list, replay: int, budget: float, spent: float) -> tuple[list, dict | None]:
    """The best candidates (by their largest norm) re-scored on fresh seeds with up to ``dom.refine`` rows a
    side, as many as one more ``budget`` allows at the rows' measured cost; an atom found there wins."""
    top = sorted(scored, key=lambda r: max(r["norms"]), reverse=True)[:8]
    per_row = spent / max(1, 2 * replay * len(scored))
    n = int(min(sc.dom.refine, max(replay, budget / max(1e-9, 2 * len(top) * per_row))))
    out, atom = [], None
    for r in top:
        s = _score(sc, r["c"], r["j"], n, 4)
        if s is None or s["norms"] is None:
            continue
        s["j"] = r["j"]
        out.append(s)
        if atom is None and s["atom"] is not None:
            atom = s
    return (out or scored), atom


def _best(spec, scored: list, how: str, evaluated: int, secs: float) -> SearchResult:
    """The best pair under each of the norms (at most ``KEEP``), from one base dataset: one audit design
    takes one release shape, so the base with the largest move under any norm (L1 >= L2 >= max, equal in
    d = 1: a base in more dimensions shows more directions)."""
    top = max(scored, key=lambda r: max(r["norms"]))
    rows = [r for r in scored if r["c"].base is top["c"].base]
    picked, scores = [], []
    for q in range(4):
        best = max(rows, key=lambda r: r["norms"][q])
        if all(best["c"] is not c for c in picked):
            picked.append(best["c"])
            scores.append(best["norms"][0])
        if len(picked) == KEEP:
            break
    return SearchResult([_pair(spec, c) for c in picked], scores, how, evaluated, secs, width=top["width"])


def _replayed_shift(a: np.ndarray, b: np.ndarray) -> tuple[bool, np.ndarray]:
    """(exact, shift): whether the coupled rows differ by one vector (additive noise), and the move: that
    vector, else the mean difference over the finite rows (a release of inf or NaN is no move)."""
    with np.errstate(invalid="ignore", over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column's mean
        diff = a - b
        det = bool(np.all(np.isfinite(diff)) and np.allclose(diff, diff[:1], rtol=1e-9, atol=1e-12))
        shift = diff[0] if det else np.nanmean(np.where(np.isfinite(diff), diff, np.nan), axis=0)
    return det, np.nan_to_num(shift, nan=0.0)


def _stage_statistic(ctx, params):
    """TARGET's own noise-free ``statistic`` stage as D -> a flat vector (None where it returns no
    numbers), or None: no such stage, or a spec without additive noise (no statistic to move)."""
    spec, t = ctx.spec, ctx.target
    f = getattr(t.adapter, "statistic", None)
    if f is None or spec.noise is None:
        return None
    kw = {k: params[k] for k in spec.stage_params.get("statistic", ()) if k in params}

    def stat(D):
        out = call_target(f"TARGET {t.name}'s statistic stage (pair search)", f, D, **kw)
        try:
            return stage_vector(spec, out)
        except (TypeError, ValueError):
            return None

    return stat


def _pair(spec, c: Candidate) -> NeighbourPair:
    rel = "add-remove-user" if spec.relation.startswith("add/remove user") else spec.relation.split(" ")[0].rstrip(";,")
    return NeighbourPair(c.first, c.second, rel, c.unit, c.description)


def searched_design(ctx, res: SearchResult) -> AuditDesign:
    """The audit design of the search's pairs."""
    dom = ctx.spec.domain(ctx.seed)
    claim = ctx.claim(Case(res.pairs[0].first, dict(dom.params), "searched"))
    if res.atom is not None:
        out = "discrete"
    else:
        out = "continuous" if res.width == 1 and ctx.spec.audit_flatten is None else "vector"
    return AuditDesign(list(res.pairs), dict(dom.params), claim, f"searched ({res.summary()})", output=out)


# ------------------------------------------------------------------ black-box: userdp audit --search
SEARCH_RELATIONS = ("add-remove-record", "replace-record", "add-remove-user")
_SEARCH_KEYS = {"values", "sizes", "relation", "partitions", "records"}


def _ints(x, lo: int, hi: int) -> bool:
    return (
        isinstance(x, list)
        and bool(x)
        and all(isinstance(n, int) and not isinstance(n, bool) and lo <= n <= hi for n in x)
    )


def domain_pairs(domain: Mapping) -> list[tuple[list, list]]:
    """Candidate pairs of raw record sequences from a declared domain, for ``userdp audit --search``
    (a black-box mechanism called on lists of numbers): ``{"values": [lo, hi], "sizes": [n, ...],
    "relation": "add-remove-record" | "replace-record"}``. Bases of each size: every record at lo, at
    hi, at the centre, and alternating lo/hi; neighbours: a record added (add-remove) or the first
    one replaced (replace) by lo, hi or interior points (1/8, 1/4, 0.37, 1/2, 3/4 of the range), and
    a record removed. At most 100 pairs (the auditor's own pilot ranks them on fresh outputs and
    confirms the best: ``harness.audit``).

    A mechanism over partitions (``"relation": "add-remove-user"``, with ``"partitions": [key, ...]`` and
    optionally ``"records": [r, ...]``, default [1, 2]) is called on lists of ``[user, partition, value]``
    rows: bases of n users with one record each, spread over the keys (at lo, at hi); neighbours: user 0
    removed, or a new user added with r records in each of 1, half or all of the keys (the first ones, and
    the last ones: new partitions where the bases leave them empty), at lo, hi or an interior point."""
    if not isinstance(domain, Mapping):
        raise BadType(f"--search must be a JSON object {{values, sizes, relation}}, got {type(domain).__name__}")
    extra = set(domain) - _SEARCH_KEYS
    if extra:
        raise BadValue(f"--search: unknown key(s) {sorted(extra)}; the keys are {', '.join(sorted(_SEARCH_KEYS))}")
    v, sizes, rel = domain.get("values"), domain.get("sizes"), domain.get("relation")
    ok = isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
    if not ok or not (math.isfinite(v[0]) and math.isfinite(v[1]) and v[0] < v[1]):
        raise BadValue(f"--search: values must be [lo, hi], finite numbers with lo < hi, got {v!r}")
    if not _ints(sizes, 1, 10_000):
        raise BadValue(f"--search: sizes must be a non-empty list of ints in [1, 10000], got {sizes!r}")
    if rel not in SEARCH_RELATIONS:
        raise BadValue(f"--search: relation must be one of {SEARCH_RELATIONS}, got {rel!r}")
    lo, hi = float(v[0]), float(v[1])
    pts = [lo, hi] + [lo + f * (hi - lo) for f in (0.5, 0.25, 0.75, 0.125, 0.37)]
    if rel == "add-remove-user":
        out = _partition_pairs(domain, sizes, lo, hi, pts)
    else:
        if "partitions" in domain or "records" in domain:
            raise BadValue(f"--search: partitions and records go with relation add-remove-user, not {rel!r}")
        out = _record_pairs(sizes, rel, lo, hi, pts)
    seen, uniq = set(), []
    for a, b in out:
        key = (json.dumps(a), json.dumps(b))
        if key not in seen:
            seen.add(key)
            uniq.append((a, b))
    return uniq[:100]


def _record_pairs(sizes, rel, lo, hi, pts) -> list:
    out: list = []
    for n in sizes:
        bases = [[lo] * n, [hi] * n, [(lo + hi) / 2] * n, [lo if i % 2 == 0 else hi for i in range(n)]]
        for base in bases:
            if rel == "add-remove-record":
                out += [(base, base + [p]) for p in pts]
                if n >= 2:
                    out.append((base, base[1:]))
            else:
                out += [(base, [p] + base[1:]) for p in pts if p != base[0]]
    return out


def _partition_pairs(domain, sizes, lo, hi, pts) -> list:
    keys, records = domain.get("partitions"), domain.get("records", [1, 2])
    if not _ints(keys, 0, 2**62) or len(set(keys)) != len(keys) or len(keys) > 64:
        raise BadValue(f"--search: partitions must be a list of 1 to 64 distinct ints >= 0, got {keys!r}")
    if not _ints(records, 1, 1000):
        raise BadValue(f"--search: records must be a non-empty list of ints in [1, 1000], got {records!r}")
    K, out = len(keys), []
    spreads = sorted({1, max(1, K // 2), K})
    for n in sizes:
        bases = [[[i, keys[i % K], at] for i in range(n)] for at in (lo, hi)]
        out += [(b, b[1:]) for b in bases if n >= 2]
        for r in records:
            for s in spreads:
                for ks in (keys[:s], keys[::-1][:s]):
                    for p in pts[:4]:
                        out += [(b, b + [[n, k, p] for k in ks for _ in range(r)]) for b in bases]
    return out
