"""Neighbouring relations as first-class objects (docs/design.md §3).

A privacy claim means nothing without its relation. The five papers use five:

- ``ADD_REMOVE_USER`` (add-remove-user): all records of one user appear or vanish
  (Amin 2019 §2; Krichene 2023 §2).
- ``REPLACE_USER`` (replace-user): one user's values (and labels, if any) change; S_l (who
  owns which record, hence s_l) is public (Epasto 2020 §2.2-4).
- ``REPLACE_USER_LABELS`` (replace-user-labels): one user's labels change; features are public
  (Epasto 2020 §5, "label privacy").
- ``REPLACE_USER_ITEMS`` (replace-user-items): one user's items change, the item count n_i kept
  (Zhao 2024 poster: "differ in items belonging to only one user").
- ``REPLACE_RECORD`` (replace-record): record i's value and label change; claim eps_i (eps for
  every record under a PureDP/ApproxDP claim: the libraries' "replace one record"; Acharya
  2024 Def. 2.1; OpenDP ChangeOneDistance; diffprivlib with n public).
- ``ADD_REMOVE_RECORD`` (add-remove-record): one record (all its fields) appears or vanishes;
  the records are a multiset, order does not matter (OpenDP SymmetricDistance; python-dp;
  diffprivlib).

Record-level relations know nothing of users: a record is the tuple of all its fields
(value, label, user id, eps_i, task, partition key), and under add-remove-record the whole
tuple appears or vanishes, while under replace-record only its value and label change (n,
the owners, the levels and the keys stay public, as Acharya's Def. 2.1 and diffprivlib's
"n is public" reading need). The empty dataset ``data.EMPTY`` may stand on one side of an
add/remove pair: "no records vs one record" (add-remove-record) and "empty partition vs one
user" (add-remove-user, the PipelineDP worst case) are neighbours.

Both record relations also define neighbours of raw sequences of records, for audit pairs
that are plain lists or arrays (``changed_positions``): add/remove one record, the
multisets of elements (rows of a 2-D array) differ by one element; replace one record,
the same length and exactly one position differs.

Every relation can
- ``neighbour(D, unit, ...)``: build one neighbour of D by changing ``unit`` (a user id,
  or a record index for replace-record);
- ``enumerate(D, grid)``: every neighbour of a small D whose new values lie on ``grid``
  (brute force for property tests; exponential, for tiny datasets only);
- ``sample(D, rng, lo, hi)``: one random neighbour with new values in [lo, hi];
- ``worst_case_pairs(D, lo, hi)``: candidate pairs for audits (the heaviest users moved
  between the declared bounds, a user removed, a record replaced);
- ``changed_units(D, D')``: which units differ. A pair is a neighbour exactly when this
  returns one unit (checked by ``is_neighbour``).

Replace-type relations keep the record layout, so for them ``changed_units`` compares
record by record. ``unit`` in a ``NeighbourPair`` is the user id (or record index) that
changed; for add-remove-record, the index in the larger dataset of the first record equal to
the one added or removed (equal records are interchangeable in a multiset).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ._checks import check_finite_array, check_generator, check_int, check_real
from .data import EMPTY, EmptyDataset, UserDataset, check_dataset

__all__ = [
    "NeighbourPair",
    "Relation",
    "AddRemoveUser",
    "ReplaceUser",
    "ReplaceUserLabels",
    "ReplaceUserItems",
    "ReplaceRecord",
    "AddRemoveRecord",
    "ADD_REMOVE_USER",
    "REPLACE_USER",
    "REPLACE_USER_LABELS",
    "REPLACE_USER_ITEMS",
    "REPLACE_RECORD",
    "ADD_REMOVE_RECORD",
    "RELATIONS",
    "get_relation",
    "is_neighbour",
]


@dataclass(frozen=True, eq=False)
class NeighbourPair:
    """Two datasets that are neighbours under ``relation``; ``unit`` is what changed."""

    first: UserDataset
    second: UserDataset
    relation: str
    unit: int
    description: str


def _bounds(lo, hi) -> tuple[float, float]:
    lo, hi = check_real(lo, "lo"), check_real(hi, "hi")
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be finite with lo < hi, got lo={lo!r}, hi={hi!r}")
    return lo, hi


def _grid(grid, name: str = "grid") -> np.ndarray:
    g = check_finite_array(grid, name, ndim=(1,))
    if g.size == 0:
        raise ValueError(f"{name} must hold at least one value")
    return g


def _heaviest(D: UserDataset, k: int) -> np.ndarray:
    """Ids of the k users with the most records (ties: smaller id first)."""
    order = np.lexsort((D.users, -D.counts))
    return D.users[order[:k]]


class _ReplaceUserField:
    """Shared machinery of the replace-one-user relations: one user's ``field`` changes."""

    name = ""
    field = "values"
    also: tuple[str, ...] = ()  # other fields the relation lets change with ``field``
    unit_kind = "user"

    def _column(self, D: UserDataset) -> np.ndarray:
        col = getattr(D, self.field)
        if col is None:
            raise ValueError(f"relation {self.name} needs dataset.{self.field}, which is None")
        return col

    def neighbour(self, D: UserDataset, user_id: int, new, *, labels=None) -> UserDataset:
        """D with user ``user_id``'s ``field`` entries (in record order) replaced by ``new``,
        and their labels by ``labels`` where the relation lets labels change too."""
        idx = check_dataset(D).records_of(user_id)
        changes = {self.field: self._replaced(D, self.field, idx, new, "new", user_id)}
        if labels is not None:
            if "labels" not in self.also:
                raise ValueError(f"relation {self.name} does not change labels; labels must be None")
            changes["labels"] = self._replaced(D, "labels", idx, labels, "labels", user_id)
        return D.with_fields(**changes)

    def _replaced(self, D, field, idx, new, arg, user_id) -> np.ndarray:
        col = getattr(D, field)
        if col is None:
            raise ValueError(f"relation {self.name} needs dataset.{field}, which is None")
        col = col.copy()
        new = check_finite_array(new, arg)
        expected = (idx.size,) + col.shape[1:]
        if new.shape != expected:
            raise ValueError(
                f"{arg} must have shape {expected} (one entry per record of user {user_id}), got {new.shape}"
            )
        col[idx] = new
        return col

    def changed_units(self, a: UserDataset, b: UserDataset) -> set[int]:
        check_dataset(a, "a"), check_dataset(b, "b")
        if not np.array_equal(a.user_ids, b.user_ids):
            raise ValueError(f"relation {self.name} keeps the record layout; user_ids differ")
        free = (self.field, *self.also)
        for other in ("values", "labels", "epsilons", "task_ids", "partition_ids"):
            if other not in free and not _same(getattr(a, other), getattr(b, other)):
                raise ValueError(f"relation {self.name} changes only {', '.join(free)}; {other} differ")
        diff = np.zeros(a.n, dtype=bool)
        for f in free:
            ca, cb = getattr(a, f), getattr(b, f)
            if (ca is None) != (cb is None):
                raise ValueError(f"relation {self.name}: dataset.{f} is None on one side only")
            if ca is not None:
                diff |= np.asarray(ca != cb).reshape(a.n, -1).any(axis=1)
        return set(int(u) for u in np.unique(a.user_ids[diff]))

    def enumerate(self, D: UserDataset, grid, label_grid=None):
        """Every neighbour of D: one user's ``field`` entries on ``grid`` and, where the
        relation lets labels change with them (``also``) and D has labels, its labels on
        ``label_grid`` (default ``grid``); D itself is skipped. |grid|^(s d) |label_grid|^s - 1
        neighbours per user of s records: exponential, for tiny datasets only."""
        g = _grid(grid)
        col = self._column(check_dataset(D))
        moves_labels = "labels" in self.also and D.labels is not None
        lg = (_grid(label_grid, "label_grid") if label_grid is not None else g) if moves_labels else None
        if label_grid is not None and not moves_labels:
            raise ValueError(f"label_grid must be None: relation {self.name} on this dataset moves no labels")
        for u in D.users:
            idx = D.records_of(u)
            shape = (idx.size,) + col.shape[1:]
            label_choices = itertools.product(lg, repeat=idx.size) if moves_labels else [None]
            for ys in label_choices:
                for combo in itertools.product(g, repeat=int(np.prod(shape, dtype=int))):
                    new = np.reshape(combo, shape)
                    same_y = ys is None or np.array_equal(ys, D.labels[idx])
                    if np.array_equal(new, col[idx]) and same_y:
                        continue
                    labels = None if ys is None else np.asarray(ys, dtype=float)
                    what = f"user {u}: {self.field} -> {new.tolist()}" + (
                        "" if ys is None else f", labels -> {[float(v) for v in ys]}"
                    )
                    yield NeighbourPair(D, self.neighbour(D, u, new, labels=labels), self.name, int(u), what)

    def sample(self, D: UserDataset, rng, lo, hi) -> NeighbourPair:
        check_generator(rng)
        lo, hi = _bounds(lo, hi)
        u = int(rng.choice(check_dataset(D).users))
        col = self._column(D)
        new = rng.uniform(lo, hi, size=(D.records_of(u).size,) + col.shape[1:])
        return NeighbourPair(D, self.neighbour(D, u, new), self.name, u, f"user {u}: random {self.field}")

    def worst_case_pairs(self, D: UserDataset, lo, hi, *, k: int = 2) -> list[NeighbourPair]:
        """The k heaviest users (and the lightest) with all their entries at lo vs at hi."""
        lo, hi = _bounds(lo, hi)
        k = check_int(k, "k", lo=1)
        col = self._column(check_dataset(D))
        users = list(dict.fromkeys([*_heaviest(D, k).tolist(), int(D.users[np.argmin(D.counts)])]))
        pairs = []
        for u in users:
            shape = (D.records_of(u).size,) + col.shape[1:]
            a = self.neighbour(D, u, np.full(shape, lo))
            b = self.neighbour(D, u, np.full(shape, hi))
            pairs.append(
                NeighbourPair(a, b, self.name, int(u), f"user {u} (s={shape[0]}): {self.field} all {lo} vs all {hi}")
            )
        return pairs


def _same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


class ReplaceUser(_ReplaceUserField):
    """Epasto et al. 2020 §2.2: D, D' "are the same except all data points from a single
    user l", with S_l public. A data point is (X_i, y_i) in §4-5, so labels may change too;
    ``enumerate``/``sample``/``worst_case_pairs`` move the values (pass ``labels=`` to
    ``neighbour`` to move both)."""

    name = "replace-user"
    field = "values"
    also = ("labels",)


class ReplaceUserLabels(_ReplaceUserField):
    """Replace one user's labels, features and record ownership public (Epasto 2020 §5, label
    privacy)."""

    name = "replace-user-labels"
    field = "labels"


class ReplaceUserItems(_ReplaceUserField):
    """Zhao et al. 2024: the poster's adjacency "differ in items belonging to only one user".

    Read here with the user's item count n_i kept (the counts are public in the
    imbalanced-user setting); values are replaced.
    """

    name = "replace-user-items"
    field = "values"


class AddRemoveUser:
    """One user's records appear or vanish (Amin et al. 2019 §2, Krichene et al. 2023 §2)."""

    name = "add-remove-user"
    unit_kind = "user"
    accepts_empty = True  # data.EMPTY may be one side of a pair

    def neighbour(self, D: UserDataset, user_id: int, new=None, *, labels=None) -> UserDataset:
        """Remove ``user_id`` (``new`` is None) or add it with values ``new`` (and ``labels``)."""
        check_dataset(D)
        user_id = check_int(user_id, "user_id", lo=0, hi=np.iinfo(np.int64).max)
        if new is None:
            if D.m < 2:
                raise ValueError(
                    "cannot remove the only user: a UserDataset is never empty; pair D with data.EMPTY directly"
                )
            return D.without_user(user_id)
        if user_id in set(D.users.tolist()):
            raise ValueError(f"user_id {user_id} already present; choose a new id to add a user")
        new = check_finite_array(new, "new")
        if new.ndim == 0 or new.shape[1:] != D.values.shape[1:] or new.shape[0] < 1:
            raise ValueError(f"new must have shape (k,) + {D.values.shape[1:]} with k >= 1, got {new.shape}")
        k = new.shape[0]
        extra = {}
        if D.labels is not None:
            if labels is None:
                raise ValueError("labels is required: the dataset has labels")
            y = check_finite_array(labels, "labels", ndim=(1,))
            if y.shape != (k,):
                raise ValueError(f"labels must have shape ({k},) (one per new record), got {y.shape}")
            extra["labels"] = np.r_[D.labels, y]
        elif labels is not None:
            raise ValueError("labels must be None: the dataset has no labels")
        if D.epsilons is not None or D.task_ids is not None or D.partition_ids is not None:
            raise ValueError(
                "adding a user to a dataset with epsilons, task_ids or partition_ids needs them; build it directly"
            )
        return D.with_fields(
            values=np.concatenate([D.values, new]), user_ids=np.r_[D.user_ids, np.full(k, user_id)], **extra
        )

    def changed_units(self, a: UserDataset, b: UserDataset) -> set[int]:
        """The users present on one side only; ``data.EMPTY`` may be either side."""
        _dataset_or_empty(a, "a"), _dataset_or_empty(b, "b")
        if isinstance(a, EmptyDataset) or isinstance(b, EmptyDataset):
            return set(b.users.tolist()) | set(a.users.tolist())
        ua, ub = set(a.users.tolist()), set(b.users.tolist())
        if not (ua <= ub or ub <= ua):
            raise ValueError("add-remove-user: neither user set contains the other")
        small, big = (a, b) if len(ua) <= len(ub) else (b, a)
        changed = set(big.users.tolist()) - set(small.users.tolist())
        kept = big.take(np.flatnonzero(~np.isin(big.user_ids, list(changed)))) if changed else big
        if kept.n != small.n or not all(
            _same(getattr(kept, f), getattr(small, f))
            for f in ("values", "user_ids", "labels", "epsilons", "task_ids", "partition_ids")
        ):
            raise ValueError("add-remove-user: the shared users' records differ")
        return changed

    def enumerate(self, D: UserDataset, grid, *, max_records: int = 2, label_grid=None):
        """Every removal of one user, and every added user with 1..max_records records, each
        record a point of grid^d (and a label on ``label_grid``, default ``grid``, if D has
        labels), in every order: (|grid|^d |label_grid|)^k added users of k records. A user's
        record order matters to mechanisms that keep "the first tau" (Amin §4)."""
        g = _grid(grid)
        max_records = check_int(max_records, "max_records", lo=1, hi=8)
        check_dataset(D)
        for u in D.users:
            if D.m >= 2:
                yield NeighbourPair(D, self.neighbour(D, int(u)), self.name, int(u), f"remove user {u}")
        points = [np.reshape(p, D.values.shape[1:]) for p in itertools.product(g, repeat=D.d)]
        if label_grid is not None and D.labels is None:
            raise ValueError("label_grid must be None: the dataset has no labels")
        lg = None if label_grid is None else _grid(label_grid, "label_grid")
        ys = [None] if D.labels is None else list(g if lg is None else lg)
        records = [(p, y) for p in points for y in ys]
        new_id = int(D.users.max()) + 1
        for k in range(1, max_records + 1):
            for combo in itertools.product(records, repeat=k):
                new = np.array([p for p, _ in combo])
                labels = None if D.labels is None else np.array([y for _, y in combo])
                what = f"add user {new_id} with {new.tolist()}" + (
                    "" if labels is None else f", labels {labels.tolist()}"
                )
                yield NeighbourPair(D, self.neighbour(D, new_id, new, labels=labels), self.name, new_id, what)

    def sample(self, D: UserDataset, rng, lo, hi) -> NeighbourPair:
        check_generator(rng)
        _bounds(lo, hi)
        if check_dataset(D).m < 2:
            raise ValueError("cannot remove the only user: D must have at least 2 users to sample a removal")
        u = int(rng.choice(D.users))
        return NeighbourPair(D, self.neighbour(D, u), self.name, u, f"remove user {u}")

    def worst_case_pairs(
        self, D: UserDataset, lo, hi, *, k: int = 2, max_records: int | None = None
    ) -> list[NeighbourPair]:
        """Remove each of the k heaviest users; add a user with max_records records all at hi / all at lo."""
        lo, hi = _bounds(lo, hi)
        k = check_int(k, "k", lo=1)
        check_dataset(D)
        if max_records is not None:
            max_records = check_int(max_records, "max_records", lo=1)
        pairs = [
            NeighbourPair(
                D,
                self.neighbour(D, int(u)),
                self.name,
                int(u),
                f"remove heaviest user {u} (s={D.counts[D.position_of(u)]})",
            )
            for u in _heaviest(D, k)
            if D.m >= 2
        ]
        r = int(D.counts.max()) if max_records is None else int(max_records)
        new_id = int(D.users.max()) + 1
        labels = np.full(r, hi) if D.labels is not None else None
        for v in (hi, lo):
            new = np.full((r,) + D.values.shape[1:], v)
            pairs.append(
                NeighbourPair(
                    D,
                    self.neighbour(D, new_id, new, labels=labels),
                    self.name,
                    new_id,
                    f"add user {new_id} with {r} records at {v}",
                )
            )
        return pairs


class ReplaceRecord:
    """Record i's value (and label) change; the claim for the pair is eps_i (Acharya et al. 2024)."""

    name = "replace-record"
    unit_kind = "record"

    def neighbour(self, D: UserDataset, i: int, new_value, new_label=None) -> UserDataset:
        i = check_int(i, "i (record index)", lo=0, hi=check_dataset(D).n - 1)
        values = D.values.copy()
        x = check_finite_array(new_value, "new_value")
        if x.shape != D.values.shape[1:]:
            raise ValueError(f"new_value must have shape {D.values.shape[1:]} (one record), got {x.shape}")
        values[i] = x
        changes = {"values": values}
        if D.labels is not None:
            if new_label is None:
                raise ValueError("new_label is required: the dataset has labels")
            labels = D.labels.copy()
            labels[i] = float(check_finite_array(new_label, "new_label", ndim=(0,)))
            changes["labels"] = labels
        elif new_label is not None:
            raise ValueError("new_label must be None: the dataset has no labels")
        return D.with_fields(**changes)

    def changed_units(self, a: UserDataset, b: UserDataset) -> set[int]:
        check_dataset(a, "a"), check_dataset(b, "b")
        if a.n != b.n or not (
            _same(a.user_ids, b.user_ids)
            and _same(a.epsilons, b.epsilons)
            and _same(a.task_ids, b.task_ids)
            and _same(a.partition_ids, b.partition_ids)
        ):
            raise ValueError("replace-record keeps n, user_ids, epsilons, task_ids and partition_ids")
        diff = np.asarray(a.values != b.values).reshape(a.n, -1).any(axis=1)
        if a.labels is not None:
            diff |= a.labels != b.labels
        return set(np.flatnonzero(diff).tolist())

    def changed_positions(self, a, b) -> set[int]:
        """Raw sequences of records (1-D: one number per record; 2-D: one row per record):
        the positions that differ. A neighbour has the same shape and one such position."""
        ra, rb = _rows(a, "a"), _rows(b, "b")
        if ra.shape != rb.shape:
            raise ValueError(
                f"replace-record keeps the number and shape of records; shapes {ra.shape} and {rb.shape} differ"
            )
        return set(np.flatnonzero((ra != rb).any(axis=1)).tolist())

    def enumerate(self, D: UserDataset, grid, label_grid=None):
        g = _grid(grid)
        if check_dataset(D).labels is None and label_grid is not None:
            raise ValueError("label_grid must be None: the dataset has no labels")
        lg = None if label_grid is None else _grid(label_grid, "label_grid")
        labels = [None] if D.labels is None else (g if lg is None else lg)
        for i in range(D.n):
            for combo in itertools.product(g, repeat=D.d):
                for y in labels:
                    x = np.reshape(combo, D.values.shape[1:])
                    if np.array_equal(x, D.values[i]) and (y is None or y == D.labels[i]):
                        continue
                    yield NeighbourPair(
                        D,
                        self.neighbour(D, i, x, y),
                        self.name,
                        i,
                        f"record {i}: value -> {np.asarray(x).tolist()}, label -> {y}",
                    )

    def sample(self, D: UserDataset, rng, lo, hi) -> NeighbourPair:
        check_generator(rng)
        lo, hi = _bounds(lo, hi)
        i = int(rng.integers(check_dataset(D).n))
        x = rng.uniform(lo, hi, size=D.values.shape[1:])
        y = None if D.labels is None else float(rng.uniform(lo, hi))
        return NeighbourPair(D, self.neighbour(D, i, x, y), self.name, i, f"record {i}: random")

    def worst_case_pairs(
        self, D: UserDataset, lo, hi, *, label_lo=None, label_hi=None, records=None
    ) -> list[NeighbourPair]:
        """Records (default: the most and least protected) moved between the corners lo and hi."""
        lo, hi = _bounds(lo, hi)
        check_dataset(D)
        if (label_lo is not None or label_hi is not None) and D.labels is None:
            raise ValueError("label_lo and label_hi must be None: the dataset has no labels")
        if label_lo is not None:
            label_lo = check_real(label_lo, "label_lo")
        if label_hi is not None:
            label_hi = check_real(label_hi, "label_hi")
        ylo_, yhi_ = (lo if label_lo is None else label_lo), (hi if label_hi is None else label_hi)
        if not (np.isfinite(ylo_) and np.isfinite(yhi_) and ylo_ < yhi_):
            raise ValueError(
                f"label_lo and label_hi must be finite with label_lo < label_hi, "
                f"got label_lo={ylo_!r}, label_hi={yhi_!r}"
            )
        if records is not None:
            if isinstance(records, (str, bytes, set, frozenset)) or not hasattr(records, "__iter__"):
                raise TypeError(f"records must be a list of record indices, got {type(records).__name__}")
            records = [check_int(i, f"records[{j}]", lo=0, hi=D.n - 1) for j, i in enumerate(records)]
            if not records:
                raise ValueError("records must name at least one record index")
        if records is None:
            records = [0] if D.epsilons is None else [int(np.argmax(D.epsilons)), int(np.argmin(D.epsilons))]
        ylo = lo if label_lo is None else label_lo
        yhi = hi if label_hi is None else label_hi
        has_y = D.labels is not None
        pairs = []
        for i in dict.fromkeys(records):
            a = self.neighbour(D, i, np.full(D.values.shape[1:], lo), ylo if has_y else None)
            b = self.neighbour(D, i, np.full(D.values.shape[1:], hi), (yhi if has_y else None))
            pairs.append(NeighbourPair(a, b, self.name, int(i), f"record {i}: all {lo} vs all {hi}"))
        return pairs


def _dataset_or_empty(D, name: str = "D"):
    """A ``UserDataset`` or ``data.EMPTY`` (an ``EmptyDataset``)."""
    return D if isinstance(D, EmptyDataset) else check_dataset(D, name)


_RECORD_FIELDS = ("labels", "user_ids", "epsilons", "task_ids", "partition_ids")


def _record_columns(D, other) -> list[np.ndarray]:
    """The columns whose rows are D's records (value coordinates, then every present field);
    ``other`` is the dataset D is compared with, whose fields an empty D takes on."""
    if isinstance(D, EmptyDataset):
        cols = [np.zeros(0)] * (0 if isinstance(other, EmptyDataset) else other.d)
        return cols + [
            np.zeros(0) for f in _RECORD_FIELDS if not isinstance(other, EmptyDataset) and getattr(other, f) is not None
        ]
    values = D.values.reshape(D.n, -1)
    return [values[:, j] for j in range(values.shape[1])] + [
        getattr(D, f) for f in _RECORD_FIELDS if getattr(D, f) is not None
    ]


def _rows(x, name: str) -> np.ndarray:
    """A raw sequence of records as an (n, k) array of numbers: a 1-D array is n records of
    one number, a 2-D array n rows. An empty sequence is n = 0."""
    a = check_finite_array(x, name, ndim=(1, 2))
    return a.reshape(a.shape[0], -1) if a.size else np.zeros((0, 0))


def _one_extra(big: list[np.ndarray], small: list[np.ndarray], what: str) -> int:
    """Index in ``big`` of the record whose removal leaves the multiset ``small``: the first
    record equal to it. ValueError when the multisets do not differ by exactly one record."""
    n = small[0].size if small else 0
    if len(big) != len(small) or (big[0].size if big else 0) != n + 1:
        raise ValueError(f"add-remove-record: {what} must differ by exactly one record")
    ob = np.lexsort(big[::-1]) if big else np.zeros(1, dtype=np.int64)
    os_ = np.lexsort(small[::-1]) if small and n else np.zeros(0, dtype=np.int64)
    sb, ss = [c[ob] for c in big], [c[os_] for c in small]
    mismatch = np.zeros(n + 1, dtype=bool)
    mismatch[n] = True
    for cb, cs in zip(sb, ss):
        mismatch[:n] |= cb[:n] != cs
    s = int(np.argmax(mismatch))  # sorted big = sorted small with one row inserted at s
    keep = np.r_[0:s, s + 1 : n + 1]
    if not all(np.array_equal(cb[keep], cs) for cb, cs in zip(sb, ss)):
        raise ValueError(f"add-remove-record: {what} differ in more than one record")
    extra = ob[s]
    equal = np.ones(n + 1, dtype=bool)
    for c in big:
        equal &= c == c[extra]
    return int(np.argmax(equal))


class AddRemoveRecord:
    """One record appears or vanishes; the records are a multiset (OpenDP's symmetric
    distance 1; python-dp's and diffprivlib's unbounded DP). The unit is the record's index
    in the larger dataset (the first record equal to it). Either side may be ``data.EMPTY``."""

    name = "add-remove-record"
    unit_kind = "record"
    accepts_empty = True

    def neighbour(self, D, i=None, new_value=None, *, new_label=None, user_id=None, partition_id=None):
        """Remove record ``i`` (``data.EMPTY`` if it was the only one), or, with ``new_value``,
        append a record: owned by ``user_id`` (default: a new user), with ``new_label`` if D has
        labels and ``partition_id`` if D has a partition key. Exactly one of i and new_value."""
        _dataset_or_empty(D)
        if (i is None) == (new_value is None):
            raise ValueError("give exactly one of i (remove record i) and new_value (add a record)")
        if i is not None:
            if D.n == 0:
                raise ValueError("i: the empty dataset has no record to remove")
            i = check_int(i, "i (record index)", lo=0, hi=D.n - 1)
            return D.take(np.flatnonzero(np.arange(D.n) != i)) if D.n > 1 else EMPTY
        return self._added(D, new_value, new_label, user_id, partition_id)

    def _added(self, D, new_value, new_label, user_id, partition_id) -> UserDataset:
        x = check_finite_array(new_value, "new_value", ndim=(0, 1))
        if D.n and x.shape != D.values.shape[1:]:
            raise ValueError(f"new_value must have shape {D.values.shape[1:]} (one record), got {x.shape}")
        uid = (
            (int(D.users.max()) + 1 if D.n else 0)
            if user_id is None
            else check_int(user_id, "user_id", lo=0, hi=np.iinfo(np.int64).max)
        )
        fields = {"labels": (new_label, "new_label"), "partition_ids": (partition_id, "partition_id")}
        extra = {}
        for f, (v, arg) in fields.items():
            has = D.n > 0 and getattr(D, f) is not None
            if has != (v is not None) and D.n:
                raise ValueError(
                    f"{arg} is {'required' if has else 'not allowed'}: the dataset {'has' if has else 'has no'} {f}"
                )
            if v is not None:
                v = check_real(v, arg) if f == "labels" else check_int(v, arg, lo=0, hi=np.iinfo(np.int64).max)
                extra[f] = np.r_[getattr(D, f) if D.n else np.zeros(0), v]
        if D.n and (D.epsilons is not None or D.task_ids is not None):
            raise ValueError("D: adding a record to a dataset with epsilons or task_ids needs them; build it directly")
        return UserDataset(np.concatenate([D.values, x[None]]) if D.n else x[None], np.r_[D.user_ids, uid], **extra)

    def changed_units(self, a, b) -> set[int]:
        """{index in the larger of a, b of the record added or removed}; ValueError when the
        multisets of records do not differ by exactly one, or the fields present differ."""
        _dataset_or_empty(a, "a"), _dataset_or_empty(b, "b")
        big, small = (a, b) if a.n >= b.n else (b, a)
        if small.n and any((getattr(big, f) is None) != (getattr(small, f) is None) for f in _RECORD_FIELDS):
            raise ValueError(
                "add-remove-record: the two datasets must have the same fields "
                "(labels, epsilons, task_ids, partition_ids)"
            )
        if small.n and big.values.shape[1:] != small.values.shape[1:]:
            raise ValueError("add-remove-record: the values of the two datasets have different shapes")
        return {_one_extra(_record_columns(big, small), _record_columns(small, big), "the two datasets")}

    def changed_positions(self, a, b) -> set[int]:
        """Raw sequences of records (see the module docstring): {index in the longer sequence
        of the element added or removed}; ValueError unless the multisets differ by one."""
        ra, rb = _rows(a, "a"), _rows(b, "b")
        big, small = (ra, rb) if ra.shape[0] >= rb.shape[0] else (rb, ra)
        if small.shape[0] and big.shape[1] != small.shape[1]:
            raise ValueError(f"add-remove-record: records of {big.shape[1]} and {small.shape[1]} numbers")
        cols = lambda r: [r[:, j] if r.shape[0] else np.zeros(0) for j in range(big.shape[1])]  # noqa: E731
        return {_one_extra(cols(big), cols(small), "the two sequences")}

    def enumerate(self, D, grid, label_grid=None):
        """Every removal of one record, then every added record (a new user) with its value on
        grid^d (and its label on ``label_grid``, default ``grid``, when D has labels)."""
        g = _grid(grid)
        _dataset_or_empty(D)
        if label_grid is not None and D.labels is None:
            raise ValueError("label_grid must be None: the dataset has no labels")
        for i in range(D.n):
            N = self.neighbour(D, i)
            yield NeighbourPair(D, N, self.name, _first_equal(D, i), f"remove record {i}")
        if D.n and (D.epsilons is not None or D.task_ids is not None or D.partition_ids is not None):
            return  # an added record's level, task or key is not on a grid
        ys = [None] if D.labels is None else list(g if label_grid is None else _grid(label_grid, "label_grid"))
        for combo in itertools.product(g, repeat=D.d):
            x = np.reshape(combo, D.values.shape[1:])
            for y in ys:
                N = self.neighbour(D, new_value=x, new_label=y)
                yield NeighbourPair(
                    D,
                    N,
                    self.name,
                    _first_equal(N, N.n - 1),
                    f"add record {np.asarray(x).tolist()}" + ("" if y is None else f", label {y}"),
                )

    def sample(self, D, rng, lo, hi) -> NeighbourPair:
        """Remove a uniformly chosen record or add one (a new user, value and label uniform in
        [lo, hi]), with probability 1/2 each (always add to the empty dataset)."""
        check_generator(rng)
        lo, hi = _bounds(lo, hi)
        _dataset_or_empty(D)
        if D.n and rng.random() < 0.5:
            i = int(rng.integers(D.n))
            return NeighbourPair(D, self.neighbour(D, i), self.name, _first_equal(D, i), f"remove record {i}")
        x = rng.uniform(lo, hi, size=D.values.shape[1:])
        y = None if D.labels is None else float(rng.uniform(lo, hi))
        key = None if D.partition_ids is None else int(rng.choice(D.partition_ids))
        N = self.neighbour(D, new_value=x, new_label=y, partition_id=key)
        return NeighbourPair(D, N, self.name, _first_equal(N, N.n - 1), "add a random record")

    def worst_case_pairs(self, D, lo, hi) -> list[NeighbourPair]:
        """Add a record (a new user) with every coordinate at hi, and one at lo (label at the
        same bound); remove the record with the largest and the smallest value sum. On
        ``data.EMPTY`` (scalar values): the empty dataset vs one record at hi, and at lo."""
        lo, hi = _bounds(lo, hi)
        _dataset_or_empty(D)
        pairs = []
        for v in (hi, lo):
            x = np.full(D.values.shape[1:], v)
            y = None if D.labels is None else v
            key = None if D.partition_ids is None else int(D.partition_ids[0])
            N = self.neighbour(D, new_value=x, new_label=y, partition_id=key)
            pairs.append(NeighbourPair(D, N, self.name, _first_equal(N, N.n - 1), f"add a record at {v}"))
        if D.n:
            sums = D.values.reshape(D.n, -1).sum(axis=1)
            for i in dict.fromkeys([int(np.argmax(sums)), int(np.argmin(sums))]):
                pairs.append(
                    NeighbourPair(
                        D,
                        self.neighbour(D, i),
                        self.name,
                        _first_equal(D, i),
                        f"remove record {i} (value {np.asarray(D.values[i]).tolist()})",
                    )
                )
        return pairs


def _first_equal(D: UserDataset, i: int) -> int:
    """The first index of a record of D equal to record i (the add-remove-record unit)."""
    equal = np.ones(D.n, dtype=bool)
    for c in _record_columns(D, D):
        equal &= c == c[i]
    return int(np.argmax(equal))


ADD_REMOVE_USER = AddRemoveUser()
REPLACE_USER = ReplaceUser()
REPLACE_USER_LABELS = ReplaceUserLabels()
REPLACE_USER_ITEMS = ReplaceUserItems()
REPLACE_RECORD = ReplaceRecord()
ADD_REMOVE_RECORD = AddRemoveRecord()
RELATIONS = {
    r.name: r
    for r in (ADD_REMOVE_USER, REPLACE_USER, REPLACE_USER_LABELS, REPLACE_USER_ITEMS, REPLACE_RECORD, ADD_REMOVE_RECORD)
}
Relation = AddRemoveUser | ReplaceUser | ReplaceUserLabels | ReplaceUserItems | ReplaceRecord | AddRemoveRecord


def get_relation(name: str):
    """The relation object called ``name``; ValueError listing the known names otherwise."""
    try:
        return RELATIONS[name]
    except (KeyError, TypeError):
        raise ValueError(f"relation must be one of {sorted(RELATIONS)}, got {name!r}") from None


def is_neighbour(relation, a: UserDataset, b: UserDataset) -> bool:
    """True when a and b differ in exactly one unit of ``relation`` (a relation object).
    ``data.EMPTY`` is a neighbour only under the add/remove relations."""
    if not hasattr(relation, "changed_units"):
        raise TypeError(
            f"relation must be a relation object (e.g. neighbours.REPLACE_USER), got {type(relation).__name__}"
        )
    if (isinstance(a, EmptyDataset) or isinstance(b, EmptyDataset)) and not getattr(relation, "accepts_empty", False):
        return False
    try:
        return len(relation.changed_units(a, b)) == 1
    except ValueError:
        return False
