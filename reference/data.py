"""The data model shared by every paper: one immutable ``UserDataset`` (docs/design.md §2).

A record i has a value x_i (scalar or d-vector), an optional label y_i, an owner
user_ids[i], an optional personal privacy level epsilons[i] (Acharya et al. 2024) and
an optional task task_ids[i] (Krichene et al. 2023: record i is the pair (task, user)) and
an optional partition key partition_ids[i] (the group a partition-level release, e.g. a
PipelineDP or GROUP BY aggregation, puts the record in; ``partition(p)`` selects one).

The user is the privacy unit. The per-user structure the papers use is derived once,
vectorized (one sort, with a counting pass where it helps; no Python loop over records):

- ``users``            the distinct user ids, sorted, shape (m,);
- ``user_index``       for each record, the position of its user in ``users``, (n,);
- ``counts``           s_l = |S_l|, the number of records of user l, (m,);
- ``records_of(l)``    S_l, the record indices of the l-th user, in record order;
- ``local_averages()`` (1/s_l) sum_{i in S_l} x_i, (m,) or (m, d);
- ``task_users(t)``    Omega_t, the users with a record in task t;
- ``user_tasks(u)``    Omega^u, the tasks in which user u has a record.

The empty dataset. A ``UserDataset`` holds at least one record: every paper's statistic
(means, local averages, s_l) is undefined on none, and the per-user structure above assumes
one. The record-level libraries, though, must be audited on "no records vs one record" (the
PipelineDP worst case "empty partition vs one user"). That side of an add/remove pair is
``EMPTY``, an ``EmptyDataset``: a separate, duck-typed object with n = m = 0 and empty
fields, accepted by the add/remove relations (``neighbours.py``) and the audit's pair
checks, and returned by ``partition(p)`` when no record has key p. Keeping it separate
leaves every invariant of ``UserDataset`` (and of the code that relies on it) untouched.

Validation happens on construction: shapes agree, values are finite, ids are
non-negative integers, epsilons are > 0, and the dataset is not empty. A bad field
raises ``ValueError`` (or ``TypeError``) naming the field and the first bad index.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from ._checks import check_epsilon, check_finite_array, check_int

__all__ = ["UserDataset", "EmptyDataset", "EMPTY"]


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.flags.writeable = False
    return a


_ID_MAX = np.iinfo(np.int64).max


def _ids(x, name: str, n: int) -> np.ndarray:
    """Non-negative integer ids of shape (n,), at most int64's max; floats are accepted only
    if integral. Bools, strings, complex and object (oversized Python int) entries are refused."""
    a = np.asarray(x)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an integer array, got dtype {a.dtype}")
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) to match values, got {a.shape}")
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a) | (a != np.round(a))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{name} must be integers; {name}[{i}] = {a[i].item()!r}")
    neg = a < 0
    if neg.any():
        i = int(np.argmax(neg))
        raise ValueError(f"{name} must be non-negative; {name}[{i}] = {a[i].item()!r}")
    big = a > _ID_MAX if a.dtype.kind != "f" else a >= 2.0**63
    if big.any():
        i = int(np.argmax(big))
        raise ValueError(f"{name} must be at most {_ID_MAX} (int64); {name}[{i}] = {a[i].item()!r}")
    return a.astype(np.int64)


def _epsilons(x, n: int) -> np.ndarray:
    """Per-record privacy levels, each in the range ``check_epsilon`` accepts."""
    e = check_finite_array(x, "epsilons", ndim=(1,))
    if e.shape != (n,):
        raise ValueError(f"epsilons must have shape ({n},) to match values, got {e.shape}")
    if e.size:
        for i in (int(np.argmin(e)), int(np.argmax(e))):  # the range is an interval: the extremes decide
            check_epsilon(float(e[i]), f"epsilons[{i}]")
    return e


def _id_arg(value, name: str) -> int:
    """One user or task id, as the methods below take it."""
    return check_int(value, name, lo=0, hi=_ID_MAX)


def _readonly(a: np.ndarray) -> np.ndarray:
    """``a`` itself, made read-only (for arrays built here, that nothing else holds: no copy)."""
    a.flags.writeable = False
    return a


def _stable_argsort(keys: np.ndarray, bound: int) -> np.ndarray:
    """Stable argsort of non-negative int keys < bound: one sort of packed (key, position) pairs.

    Position i is packed with its key as key * 2^b + i (2^b > n). Sorting the packed integers
    orders them by key, and by position among equal keys, so their low b bits are a stable
    argsort. numpy sorts int64 with a vectorised quicksort (numpy >= 2 on AVX2 or AVX-512),
    faster than two stable 16-bit radix passes or one stable argsort of the int64 keys (merge
    sort; measured: docs/performance.md, "reference/data.py"). Keys too wide to pack
    (bound * 2^b > 2^63) take the merge sort.
    """
    n = keys.size
    b = max(n - 1, 1).bit_length()  # positions 0 .. n-1 fit in b bits
    if bound > 1 << (63 - b):
        return np.argsort(keys, kind="stable")
    packed = keys.astype(np.int64, copy=False) << b  # one new array, then in place: each pass over 8n
    packed |= np.arange(n, dtype=np.int64)  # bytes costs as much as a fifth of the sort (docs/performance.md)
    packed.sort()
    packed &= (1 << b) - 1
    return packed


# The passes of _one_sort_structure before and after its sort run over chunks of CHUNK keys (512 KiB
# of int64), so each works in cache: one trip through memory for the packing, one for the reading.
CHUNK = 1 << 16


def _one_sort_structure(ids: np.ndarray, top: int):
    """(users, order, offsets, user_index) of the ids (non-negative int64, largest ``top``) from ONE
    np.sort of packed (id, record) keys, id * 2^b + i; None when they are too wide to pack.

    The same four arrays as the counting pass followed by ``_stable_argsort(user_index, m)``, its
    reference (``tests/test_data.py`` checks them against np.unique and numpy's stable argsort),
    with less work around the sort (the figures: docs/performance.md, "reference/data.py"): ids
    order the keys as their users' positions do, so no counting pass is needed before the sort;
    after it, the users start where the high bits change, their ids are read at those starts,
    and the low bits are the CSR order. Packing and reading go chunk by chunk, in cache. Only
    ``user_index`` needs a pass through memory of its own: one gather through a table of the
    users' positions (m int64 entries, up to ``top``)."""
    n = ids.size
    b = max(n - 1, 1).bit_length()  # records 0 .. n-1 fit in b bits
    if top >= 1 << (63 - b):
        return None
    packed = np.empty(n, dtype=np.int64)
    record = np.arange(CHUNK, dtype=np.int64)
    for c in range(0, n, CHUNK):  # packed = ids << b | arange(n), a chunk at a time
        chunk = packed[c : c + CHUNK]
        np.left_shift(ids[c : c + CHUNK], b, out=chunk)
        chunk |= record[: chunk.size]
        record += CHUNK
    packed.sort()
    starts = np.empty(n, dtype=bool)  # where a new user begins in the sorted keys
    starts[0] = True
    high = np.empty(CHUNK + 1, dtype=np.int64)
    for c in range(0, n, CHUNK):  # the next chunk's first key is read before it is masked
        keys = packed[c : c + CHUNK + 1]
        h = np.right_shift(keys, b, out=high[: keys.size])
        np.not_equal(h[1:], h[:-1], out=starts[c + 1 : c + keys.size])
        packed[c : c + CHUNK] &= (1 << b) - 1  # the record index: S_l in record order
    offsets = np.append(np.flatnonzero(starts), n)  # (m+1,)
    users = ids[packed[offsets[:-1]]]  # each user's id, read at its first record
    position = np.empty(top + 1, dtype=np.int64)
    position[users] = np.arange(users.size)
    return users, packed, offsets, position[ids]  # user_index: one gather (np.take is slower on read-only ids)


# The radix path of _group_order: the HEAVY_USERS users with the most records are grouped by
# one stable radix pass over a uint8 key (their rank, 255 for every other user), when they hold
# at least half of the records; the rest take _stable_argsort.
HEAVY_USERS = 255
# Which path is faster depends on the machine's np.sort (_sort_beats_radix): measured once per
# process, on SORT_CALIBRATION_N keys, and only for datasets of at least that many records.
SORT_CALIBRATION_N = 1 << 20
# The calibration's own sample: at 2^20 records the two paths tie on this machine (8.8 ms against
# 8.6 ms), at 2^22 the sort's lead at 10^7 shows (49 ms against 66 ms; docs/performance.md).
SORT_CALIBRATION_SAMPLE = 1 << 22
_SORT_BEATS_RADIX: bool | None = None


def _sort_beats_radix() -> bool:
    """Whether the one-sort path of ``_group_order`` (``_stable_argsort``) groups a skewed dataset of
    SORT_CALIBRATION_SAMPLE records faster than its radix path (``_radix_order``) on this machine: both
    paths timed on the same Zipf(1.3) ownership, interleaved, best of 3 each.

    Where numpy's np.sort is vectorised (x86-simd-sort on AVX-512 machines) the one sort wins;
    elsewhere a sort of n distinct keys costs several radix passes (the figures:
    docs/performance.md, "reference/data.py"). Timing the two paths themselves, not two
    primitives, keeps a close call from going to the wrong one. The choice changes the time only:
    both paths return the same order."""
    global _SORT_BEATS_RADIX
    if _SORT_BEATS_RADIX is None:
        rng = np.random.default_rng(0)
        ids = (rng.zipf(1.3, SORT_CALIBRATION_SAMPLE) - 1) % (SORT_CALIBRATION_SAMPLE // 10)
        cnt = np.bincount(ids)  # the counting pass: np.unique's inverse would cost 6x as much here
        users = np.flatnonzero(cnt)
        counts, m = cnt[users], users.size
        position = np.empty(cnt.size, dtype=np.int64)
        position[users] = np.arange(m)
        user_index = position[ids]
        sort_t, radix_t = [], []
        for _ in range(3):
            t = time.perf_counter()
            _stable_argsort(user_index, m)
            sort_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            _radix_order(user_index, counts)
            radix_t.append(time.perf_counter() - t)
        _SORT_BEATS_RADIX = min(sort_t) < min(radix_t)
    return _SORT_BEATS_RADIX


def _group_order(user_index: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The stable argsort of ``user_index`` (positions in [0, m), ``counts`` = their bincount):
    S_0, S_1, ... in turn, each in record order. Equal to ``_stable_argsort(user_index, m)``,
    its reference (``tests/test_data.py`` checks the two agree, on skewed and flat users).

    Why a second path (the bench target of docs/performance.md). ``_stable_argsort`` sorts n
    distinct packed keys. When a few users own most records (Zipf ownership), most of that sort
    is spent ordering records that one counting pass can place: numpy's stable argsort of a uint8 array is a radix
    sort (one O(n) pass). So the k <= 255 heaviest users get the key rank 0..k-1, every other
    user 255; that pass puts each heavy user's records together in record order, and the
    light ones after them, also in record order. Each heavy block is copied to its CSR
    slot; the light records (fewer, and light users only) take the packed sort, and fill the
    slots left, which in order are exactly the light users' slots in ascending l: on Zipf
    ownership a fraction of ``_stable_argsort``'s time; on uniform ids (the heavy users hold a
    small share) this path is not taken (measured: docs/performance.md, "reference/data.py").

    Where numpy's sort is vectorised the radix pass is the slow part (the baseline np.unique
    sorts several times faster there), so datasets of at least
    SORT_CALIBRATION_N records take ONE np.sort of packed (user position, record index) keys,
    ``_stable_argsort``, whenever ``_sort_beats_radix`` says np.sort is the faster primitive
    on this machine.
    """
    if user_index.size >= SORT_CALIBRATION_N and _sort_beats_radix():
        return _stable_argsort(user_index, counts.size)  # one np.sort of packed 64-bit keys
    return _radix_order(user_index, counts)


def _radix_order(user_index: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``_group_order``'s radix path (its docstring): a radix pass for the heaviest users when they
    hold at least half of the records, ``_stable_argsort`` for the rest; else ``_stable_argsort``."""
    n, m = user_index.size, counts.size
    k = min(HEAVY_USERS, m)
    heavy = np.argpartition(counts, m - k)[m - k :] if k < m else np.arange(m)  # the k heaviest users
    if 2 * int(counts[heavy].sum()) < n:
        return _stable_argsort(user_index, m)
    rank = np.full(m, 255, dtype=np.uint8)
    rank[heavy] = np.arange(k, dtype=np.uint8)
    by_rank = np.argsort(rank[user_index], kind="stable")  # radix sort: heavy blocks, then light
    offsets = np.r_[0, np.cumsum(counts)]  # CSR slots, (m+1,)
    starts = np.r_[0, np.cumsum(counts[heavy])]  # heavy blocks in by_rank
    order = np.empty(n, dtype=np.int64)
    free = np.ones(n, dtype=bool)  # the light users' slots
    for r, l in enumerate(heavy):
        order[offsets[l] : offsets[l + 1]] = by_rank[starts[r] : starts[r + 1]]
        free[offsets[l] : offsets[l + 1]] = False
    light = by_rank[starts[k] :]  # light records, record order
    if light.size:
        order[free] = light[_stable_argsort(user_index[light], m)]
    return order


@dataclass(frozen=True, eq=False)
class UserDataset:
    """An immutable set of records, each owned by one user. See the module docstring."""

    values: np.ndarray
    user_ids: np.ndarray
    labels: np.ndarray | None = None
    epsilons: np.ndarray | None = None
    task_ids: np.ndarray | None = None
    partition_ids: np.ndarray | None = None

    def __post_init__(self):
        v = check_finite_array(self.values, "values", ndim=(1, 2))
        n = v.shape[0]
        if n == 0:
            raise ValueError("values must hold at least one record (an empty dataset has no users)")
        if v.ndim == 2 and v.shape[1] == 0:
            raise ValueError(f"values must have at least one column, got shape {v.shape}")
        set_ = lambda k, a: object.__setattr__(self, k, None if a is None else _frozen(a))  # noqa: E731
        set_("values", v)
        set_("user_ids", _ids(self.user_ids, "user_ids", n))
        if self.labels is not None:
            y = check_finite_array(self.labels, "labels", ndim=(1,))
            if y.shape != (n,):
                raise ValueError(f"labels must have shape ({n},) to match values, got {y.shape}")
            set_("labels", y)
        if self.epsilons is not None:
            set_("epsilons", _epsilons(self.epsilons, n))
        if self.task_ids is not None:
            set_("task_ids", _ids(self.task_ids, "task_ids", n))
        if self.partition_ids is not None:
            set_("partition_ids", _ids(self.partition_ids, "partition_ids", n))

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_arrays(
        cls, values, user_ids, *, labels=None, epsilons=None, task_ids=None, partition_ids=None
    ) -> "UserDataset":
        return cls(
            values=values,
            user_ids=user_ids,
            labels=labels,
            epsilons=epsilons,
            task_ids=task_ids,
            partition_ids=partition_ids,
        )

    @classmethod
    def from_user_lists(cls, per_user_values, *, user_ids=None) -> "UserDataset":
        """Build from one list of scalar values per user: [[x_11, x_12], [x_21], ...].

        User l gets id ``user_ids[l]`` (default l); ids must be distinct (two lists with
        one id would silently merge two users into one). A user with no values is refused.
        """
        if isinstance(per_user_values, (str, bytes, np.ndarray, set, frozenset, dict)) or not hasattr(
            per_user_values, "__len__"
        ):
            raise TypeError(f"per_user_values must be a list of per-user lists, got {type(per_user_values).__name__}")
        if len(per_user_values) == 0:
            raise ValueError("per_user_values must hold at least one user")
        lists = [
            np.atleast_1d(check_finite_array(u, f"per_user_values[{l}]", ndim=(0, 1)))
            for l, u in enumerate(per_user_values)
        ]
        ids = np.arange(len(lists)) if user_ids is None else _ids(user_ids, "user_ids", len(lists))
        for l, u in enumerate(lists):
            if u.size == 0:
                raise ValueError(f"per_user_values[{l}] is empty: every user must own at least one record")
        uniq, first, counts = np.unique(ids, return_index=True, return_counts=True)
        if (counts > 1).any():
            dup = int(uniq[np.argmax(counts > 1)])
            raise ValueError(
                f"user_ids must be distinct (one id per user list); id {dup} appears {int(counts.max())} times"
            )
        sizes = np.array([u.size for u in lists])
        return cls(values=np.concatenate(lists), user_ids=np.repeat(ids, sizes))

    # ------------------------------------------------------------------ shape
    @property
    def n(self) -> int:
        """Number of records."""
        return int(self.values.shape[0])

    @property
    def d(self) -> int:
        """Dimension of a value (1 for scalar values)."""
        return 1 if self.values.ndim == 1 else int(self.values.shape[1])

    # ------------------------------------------------------------------ per-user structure
    @cached_property
    def _by_user(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        # Where np.sort is the fast primitive (_sort_beats_radix) and the ids are dense, all four
        # come from one sort of packed (id, record) keys (_one_sort_structure). Otherwise users,
        # s_l and each record's user position l come from one O(n) counting pass when ids are
        # dense (np.unique's sort otherwise), and the CSR order of S_l is a stable sort of those
        # positions (_group_order: a radix pass for the heaviest users, one sort of packed pairs
        # for the rest). No loop over records.
        ids = self.user_ids
        top = int(ids.max())
        dense = top <= 2 * ids.size + (1 << 20)  # a table of top + 1 entries is at most O(n)
        if dense and ids.size >= SORT_CALIBRATION_N and _sort_beats_radix():  # np.sort is the fast one here
            structure = _one_sort_structure(ids, top)
            if structure is not None:
                return tuple(_readonly(a) for a in structure)
        if dense:  # counting pass
            cnt = np.bincount(ids)
            users = np.flatnonzero(cnt)  # (m,)
            counts = cnt[users]  # s_l, (m,)
            lookup = np.empty(cnt.size, dtype=np.int64)
            lookup[users] = np.arange(users.size)
            user_index = lookup[ids]  # (n,)
        else:
            users, user_index, counts = np.unique(ids, return_inverse=True, return_counts=True)
        order = _group_order(user_index, counts)  # S_l grouped, record order kept
        offsets = np.r_[0, np.cumsum(counts)]  # (m+1,)
        return tuple(_readonly(a) for a in (users, order, offsets, user_index))

    @property
    def users(self) -> np.ndarray:
        """Distinct user ids, sorted ascending, shape (m,)."""
        return self._by_user[0]

    @property
    def m(self) -> int:
        """Number of distinct users."""
        return int(self.users.size)

    @property
    def counts(self) -> np.ndarray:
        """s_l: the number of records of each user, aligned with ``users``, shape (m,)."""
        return np.diff(self._by_user[2])

    @property
    def user_index(self) -> np.ndarray:
        """For each record, the position of its owner in ``users``, shape (n,)."""
        return self._by_user[3]

    @property
    def record_order(self) -> tuple[np.ndarray, np.ndarray]:
        """(order, offsets): S_l = order[offsets[l]:offsets[l+1]] (CSR layout)."""
        return self._by_user[1], self._by_user[2]

    def position_of(self, user_id: int) -> int:
        """Position l of ``user_id`` in ``users``; ValueError if the user is absent."""
        user_id = _id_arg(user_id, "user_id")
        l = int(np.searchsorted(self.users, user_id))
        if l >= self.m or self.users[l] != user_id:
            raise ValueError(f"user_id {user_id!r} is not in the dataset")
        return l

    def records_of(self, user_id: int) -> np.ndarray:
        """S_l: indices of the records owned by ``user_id``, ascending."""
        order, offsets = self.record_order
        l = self.position_of(user_id)
        return order[offsets[l] : offsets[l + 1]]

    def user_sums(self, x=None) -> np.ndarray:
        """sum_{i in S_l} x_i for every user l, shape (m,) or (m, d). Default x = values."""
        x = self.values if x is None else check_finite_array(x, "x", ndim=(1, 2))
        if x.shape[0] != self.n:
            raise ValueError(f"x must have {self.n} rows (one per record), got shape {x.shape}")
        if x.ndim == 1:
            return np.bincount(self.user_index, weights=x, minlength=self.m)
        order, offsets = self.record_order
        return np.add.reduceat(x[order], offsets[:-1], axis=0)

    def local_averages(self, x=None) -> np.ndarray:
        """(1/s_l) sum_{i in S_l} x_i for every user l, shape (m,) or (m, d)."""
        s = self.counts
        sums = self.user_sums(x)
        return sums / (s if sums.ndim == 1 else s[:, None])

    # ------------------------------------------------------------------ tasks (Krichene et al.)
    def _require_tasks(self) -> np.ndarray:
        if self.task_ids is None:
            raise ValueError("task_ids is None: this dataset has no task structure")
        return self.task_ids

    @cached_property
    def tasks(self) -> np.ndarray:
        """Distinct task ids, sorted, shape (k,)."""
        return _frozen(np.unique(self._require_tasks()))

    def task_users(self, task_id: int) -> np.ndarray:
        """Omega_t: the distinct users with at least one record in task ``task_id``."""
        t = self._require_tasks()
        return np.unique(self.user_ids[t == _id_arg(task_id, "task_id")])

    def user_tasks(self, user_id: int) -> np.ndarray:
        """Omega^u: the distinct tasks in which ``user_id`` has a record."""
        return np.unique(self._require_tasks()[self.records_of(user_id)])

    def task_counts(self) -> np.ndarray:
        """n_t = |Omega_t|: the number of distinct users of each task, aligned with ``tasks``."""
        t = self._require_tasks()
        pairs = np.unique(np.stack([t, self.user_ids]), axis=1)  # distinct (task, user)
        return np.bincount(np.searchsorted(self.tasks, pairs[0]), minlength=self.tasks.size)

    # ------------------------------------------------------------------ derived datasets
    def take(self, idx) -> "UserDataset":
        """The dataset restricted to record indices ``idx`` (integers in [0, n); must leave one record)."""
        idx = np.asarray(idx)
        if idx.dtype.kind not in "iu" or idx.ndim != 1:
            raise TypeError(
                f"idx must be a 1-D integer array of record indices, got dtype {idx.dtype}, shape {idx.shape}"
            )
        if idx.size == 0:
            raise ValueError("idx must select at least one record (an empty dataset has no users)")
        bad = (idx < 0) | (idx >= self.n)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"idx must lie in [0, {self.n}); idx[{i}] = {idx[i].item()!r}")
        if np.unique(idx).size != idx.size:
            raise ValueError("idx must not repeat a record: a record belongs to the dataset once")
        pick = lambda a: None if a is None else a[idx]  # noqa: E731
        return UserDataset(
            self.values[idx],
            self.user_ids[idx],
            pick(self.labels),
            pick(self.epsilons),
            pick(self.task_ids),
            pick(self.partition_ids),
        )

    def without_user(self, user_id: int) -> "UserDataset":
        """D minus every record of ``user_id`` (add/remove-user neighbour)."""
        self.position_of(user_id)
        return self.take(np.flatnonzero(self.user_ids != user_id))

    def partition(self, partition_id: int) -> "UserDataset | EmptyDataset":
        """The records whose partition key is ``partition_id``; ``EMPTY`` when there are none
        (the partition a private partition selection must be able to drop)."""
        if self.partition_ids is None:
            raise ValueError("partition_ids is None: this dataset has no partition key")
        idx = np.flatnonzero(self.partition_ids == _id_arg(partition_id, "partition_id"))
        return self.take(idx) if idx.size else EMPTY

    def with_fields(self, **changes) -> "UserDataset":
        """A copy with some fields replaced (re-validated)."""
        return replace(self, **changes)

    def __len__(self) -> int:
        return self.n


@dataclass(frozen=True, eq=False)
class EmptyDataset:
    """The dataset with no records (see the module docstring): n = m = 0, every per-record
    field an empty array (labels, epsilons, task_ids and partition_ids None), values of shape
    (0,) + ``value_shape``. Only the add/remove relations accept it, on one side of a pair."""

    value_shape: tuple = ()

    def __post_init__(self):
        shape = self.value_shape
        if (
            not isinstance(shape, tuple)
            or len(shape) > 1
            or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in shape)
        ):
            raise ValueError(f"value_shape must be () (scalar values) or (d,) with d >= 1, got {shape!r}")

    labels = epsilons = task_ids = partition_ids = None
    n = m = 0

    @property
    def values(self) -> np.ndarray:
        return _frozen(np.zeros((0,) + self.value_shape))

    @property
    def user_ids(self) -> np.ndarray:
        return _frozen(np.zeros(0, dtype=np.int64))

    users = counts = user_ids

    @property
    def d(self) -> int:
        return self.value_shape[0] if self.value_shape else 1

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "EMPTY" if not self.value_shape else f"EmptyDataset(value_shape={self.value_shape})"


EMPTY = EmptyDataset()


def check_dataset(dataset, name: str = "dataset"):  # internal: the reference modules check their argument
    """A ``UserDataset`` (TypeError naming the argument otherwise)."""
    if not isinstance(dataset, UserDataset):
        raise TypeError(
            f"{name} must be a userdp UserDataset (UserDataset.from_arrays(values, user_ids)), "
            f"got {type(dataset).__name__}"
        )
    return dataset
