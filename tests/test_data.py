"""UserDataset: validation (each bad field named) and the vectorized per-user structure.

Oracles: plain-Python loops over records (brute force), never the code under test.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from userdp.properties.strategies import task_user_graphs, user_datasets
from userdp.reference import data
from userdp.reference.data import UserDataset


def loop_structure(D):
    """Brute-force oracle: per-user record lists built with a dict loop."""
    by_user = {}
    for i, u in enumerate(D.user_ids.tolist()):
        by_user.setdefault(u, []).append(i)
    return dict(sorted(by_user.items()))


@given(user_datasets(dim=None))
def test_per_user_structure_matches_loop_oracle(D):
    oracle = loop_structure(D)
    assert D.users.tolist() == list(oracle)
    assert D.counts.tolist() == [len(v) for v in oracle.values()]
    for l, (u, idx) in enumerate(oracle.items()):
        assert D.records_of(u).tolist() == idx
        assert D.position_of(u) == l
        assert all(D.user_index[i] == l for i in idx)
        # float sums in a different order: 1e-12 absolute is far above rounding for values in [0, 1]
        assert abs(D.local_averages()[l] - np.mean(D.values[idx])) <= 1e-12
    assert D.counts.sum() == D.n


@given(user_datasets(dim=3))
def test_vector_local_averages_match_loop(D):
    for l, u in enumerate(D.users):
        np.testing.assert_allclose(D.local_averages()[l], D.values[D.records_of(u)].mean(axis=0), atol=1e-12)


@given(task_user_graphs())
def test_task_sets_match_loop(D):
    pairs = set(zip(D.task_ids.tolist(), D.user_ids.tolist()))
    for t in D.tasks:
        assert D.task_users(t).tolist() == sorted({u for (s, u) in pairs if s == t})
    for u in D.users:
        assert D.user_tasks(u).tolist() == sorted({s for (s, v) in pairs if v == u})
    assert D.task_counts().tolist() == [len({u for (s, u) in pairs if s == t}) for t in D.tasks]


def test_dataset_is_immutable_and_copies_input():
    x = np.array([1.0, 2.0])
    D = UserDataset(x, [0, 1])
    x[0] = 99.0
    assert D.values[0] == 1.0
    with pytest.raises(ValueError):
        D.values[0] = 5.0
    with pytest.raises(AttributeError):
        D.values = np.zeros(2)


def test_without_user_and_take():
    D = UserDataset.from_user_lists([[1, 2], [3], [4, 5, 6]], user_ids=[5, 6, 7])
    E = D.without_user(6)
    assert E.users.tolist() == [5, 7] and E.values.tolist() == [1, 2, 4, 5, 6]
    with pytest.raises(ValueError, match="user_id 8"):
        D.without_user(8)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(values=[1.0, 2.0], user_ids=[0]), r"user_ids must have shape \(2,\)"),
        (dict(values=[1.0, np.nan], user_ids=[0, 1]), r"values must be finite; values\[1\]"),
        (dict(values=[1.0, np.inf], user_ids=[0, 1]), r"values\[1\] = inf"),
        (dict(values=[1.0, 2.0], user_ids=[0, -1]), r"user_ids must be non-negative; user_ids\[1\]"),
        (dict(values=[1.0, 2.0], user_ids=[0, 1.5]), r"user_ids must be integers; user_ids\[1\] = 1.5"),
        (dict(values=[], user_ids=[]), "at least one record"),
        (dict(values=[1.0, 2.0], user_ids=[0, 1], labels=[1.0]), r"labels must have shape \(2,\)"),
        (dict(values=[1.0, 2.0], user_ids=[0, 1], labels=[1.0, np.nan]), r"labels\[1\]"),
        (
            dict(values=[1.0, 2.0], user_ids=[0, 1], epsilons=[1.0, 0.0]),
            r"epsilons\[1\] must be finite and > 0, in \[1e-50, 50\].*got 0.0",
        ),
        (
            dict(values=[1.0, 2.0], user_ids=[0, 1], epsilons=[-1.0, 1.0]),
            r"epsilons\[0\] must be finite and > 0.*got -1.0",
        ),
        (dict(values=[1.0, 2.0], user_ids=[0, 1], task_ids=[0, -2]), r"task_ids must be non-negative"),
        (dict(values=np.zeros((2, 0)), user_ids=[0, 1]), "at least one column"),
    ],
)
def test_bad_fields_raise_value_error_naming_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        UserDataset(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(values=[1.0, 2.0], user_ids=["a", "b"]),
        dict(values=[1.0, 2.0], user_ids=[True, False]),
        dict(values=["x", "y"], user_ids=[0, 1]),
    ],
)
def test_bad_types_raise_type_error(kwargs):
    with pytest.raises(TypeError):
        UserDataset(**kwargs)


def test_from_user_lists_refuses_empty_user():
    with pytest.raises(ValueError, match=r"per_user_values\[1\] is empty"):
        UserDataset.from_user_lists([[1.0], []])


def test_task_helpers_need_task_ids():
    with pytest.raises(ValueError, match="task_ids is None"):
        UserDataset([1.0], [0]).task_users(0)


_BOUNDS = st.one_of(st.integers(1, 2**20), st.integers(2**45, 2**63 - 1))  # small, and near the packing limit


@given(
    st.tuples(_BOUNDS, st.integers(1, 3000)).flatmap(
        lambda bn: hnp.arrays(np.int64, bn[1], elements=st.integers(0, bn[0] - 1)).map(lambda k: (k, bn[0]))
    )
)
def test_stable_argsort_of_packed_pairs_matches_numpy_stable_argsort(keys_bound):
    # Oracle: numpy's own stable argsort (a merge sort). Bounds near 2^63 / 2^b (n <= 3000:
    # b <= 12) reach both branches: packed pairs (bound * 2^b <= 2^63) and the merge-sort fallback.
    keys, bound = keys_bound
    assert data._stable_argsort(keys, bound).tolist() == np.argsort(keys, kind="stable").tolist()


@pytest.mark.parametrize("bound", [2**53, 2**53 + 1, 2**54])
def test_stable_argsort_at_the_packing_limit(bound):
    # n = 1000 positions take b = 10 bits: keys < 2^53 pack into 63 bits, wider keys must not.
    rng = np.random.default_rng(bound % 97)
    keys = np.r_[bound - 1, rng.integers(0, bound, 998), bound - 1]
    assert np.array_equal(data._stable_argsort(keys, bound), np.argsort(keys, kind="stable"))


def test_stable_argsort_keeps_record_order_among_equal_keys_at_scale():
    # 10^5 keys over 300 values: every key repeats ~300 times, so an unstable sort (the
    # default quicksort, or packing without the position) would reorder equal keys.
    keys = np.random.default_rng(5).integers(0, 300, 100_000)
    assert np.array_equal(data._stable_argsort(keys, 300), np.argsort(keys, kind="stable"))
    wide = keys * 2**50  # too wide to pack: the fallback
    assert np.array_equal(data._stable_argsort(wide, 300 * 2**50), np.argsort(wide, kind="stable"))


# _group_order (the per-user structure's fast path) against numpy's stable argsort, the oracle.
# The id draws: HEAVY users with many records each and LIGHT users with one to three, shuffled;
# with heavy users holding at least half the records the radix path runs, else the fallback.
@st.composite
def _skewed_ids(draw):
    heavy = draw(st.lists(st.integers(1, 400), min_size=1, max_size=300))
    light = draw(st.lists(st.integers(1, 3), max_size=600))
    sizes = np.array(heavy + light)
    ids = np.repeat(np.arange(sizes.size), sizes)
    perm = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).permutation(ids.size)
    gaps = draw(st.integers(1, 5))  # users need not be 0..m-1
    return ids[perm] * gaps


def _group_order_of(ids):
    users, user_index, counts = np.unique(ids, return_inverse=True, return_counts=True)
    return data._group_order(user_index, counts), np.argsort(user_index, kind="stable")


@given(_skewed_ids())
def test_group_order_matches_numpy_stable_argsort(ids):
    got, want = _group_order_of(ids)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("m_heavy", [1, 200, 255, 256, 300])
def test_group_order_at_the_heavy_user_limit(m_heavy):
    # k = min(255, m) heavy users: m <= 255 is all-radix, more takes the split; 40 light users
    # of 1-3 records interleave with them. The radix path's condition is asserted first.
    rng = np.random.default_rng(m_heavy)
    sizes = np.r_[rng.integers(20, 60, m_heavy), rng.integers(1, 4, 40)]
    ids = rng.permutation(np.repeat(np.arange(sizes.size), sizes))
    assert 2 * np.sort(sizes)[-min(255, sizes.size) :].sum() >= ids.size
    got, want = _group_order_of(ids)
    assert np.array_equal(got, want)


def test_group_order_planted_bugs_are_caught(monkeypatch):
    # Two planted bugs, each must break the agreement on a skewed draw with > 256 users:
    # 256 heavy users in a uint8 key (rank 255 collides with the light marker), and the light
    # records left in record order (not grouped by user).
    rng = np.random.default_rng(3)
    sizes = np.r_[rng.integers(20, 60, 300), rng.integers(1, 4, 200)]
    ids = rng.permutation(np.repeat(np.arange(sizes.size), sizes))
    got, want = _group_order_of(ids)
    assert np.array_equal(got, want)
    with monkeypatch.context() as mp:
        mp.setattr(data, "HEAVY_USERS", 256)
        got, want = _group_order_of(ids)
        assert not np.array_equal(got, want)
    with monkeypatch.context() as mp:
        mp.setattr(data, "_stable_argsort", lambda keys, bound: np.arange(keys.size))
        got, want = _group_order_of(ids)
        assert not np.array_equal(got, want)


@pytest.mark.parametrize("sort_beats_radix", [True, False])
def test_group_order_machine_paths_agree_at_scale(sort_beats_radix, monkeypatch):
    # At n >= SORT_CALIBRATION_N the path depends on the machine (_sort_beats_radix): one
    # np.sort of packed keys, or the radix pass; both must be numpy's stable argsort, on Zipf
    # ownership (the bench's) where the radix path's condition holds.
    monkeypatch.setattr(data, "_SORT_BEATS_RADIX", sort_beats_radix)
    rng = np.random.default_rng(5)
    n = data.SORT_CALIBRATION_N + 1234
    ids = (rng.zipf(1.3, size=n) - 1) % (n // 10)
    got, want = _group_order_of(ids)
    assert np.array_equal(got, want)


def test_sort_calibration_is_measured_once():
    first = data._sort_beats_radix()
    assert isinstance(first, bool) and data._SORT_BEATS_RADIX is first and data._sort_beats_radix() is first


# _one_sort_structure (the per-user structure from one np.sort, where np.sort is the fast
# primitive) against np.unique with its inverse and counts and numpy's stable argsort, the oracle.
# CHUNK is made small so that the chunked passes cross many chunk boundaries, at every remainder.
def _structure_oracle(ids):
    users, user_index, counts = np.unique(ids, return_inverse=True, return_counts=True)
    return users, np.argsort(user_index, kind="stable"), np.r_[0, np.cumsum(counts)], user_index


def _id_draws(n, seed):
    rng = np.random.default_rng(seed)
    yield "zipf, gaps", ((rng.zipf(1.3, n) - 1) % max(n // 10, 1)) * 3 + 1  # ids need not be 0..m-1
    yield "uniform", rng.integers(0, max(n // 3, 1), n)
    yield "one user", np.full(n, 5)
    yield "distinct", rng.permutation(n) * 2


def _same_arrays(got, want):
    return all(a.dtype == np.int64 and np.array_equal(a, b) for a, b in zip(got, want, strict=True))


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 63, 1000, 1001])
@pytest.mark.parametrize("chunk", [3, 8, 64])
def test_one_sort_structure_matches_numpy(n, chunk, monkeypatch):
    monkeypatch.setattr(data, "CHUNK", chunk)
    for name, ids in _id_draws(n, seed=n * chunk):
        ids = ids.astype(np.int64)
        assert _same_arrays(data._one_sort_structure(ids, int(ids.max())), _structure_oracle(ids)), name


def test_one_sort_structure_refuses_ids_too_wide_to_pack():
    # n = 8 records take b = 3 bits: ids up to 2^60 - 1 pack, 2^60 does not (the caller's other path;
    # the caller passes only ids dense enough for a table, so the limit is never reached from it).
    assert data._one_sort_structure(np.array([2**60] + [0] * 7), 2**60) is None


def _dataset_structure(ids):
    D = UserDataset(np.zeros(ids.size), ids)
    return D.users, D.record_order[0], D.record_order[1], D.user_index


@pytest.mark.parametrize("sort_beats_radix", [True, False])
def test_dataset_structure_on_either_machine_path(sort_beats_radix, monkeypatch):
    # The dataset takes _one_sort_structure only where np.sort wins and from SORT_CALIBRATION_N
    # records: both lowered here, so that either path runs on a small draw, and must agree with
    # the oracle. Ids too sparse for a table (the np.unique path) are checked too.
    monkeypatch.setattr(data, "_SORT_BEATS_RADIX", sort_beats_radix)
    monkeypatch.setattr(data, "SORT_CALIBRATION_N", 100)
    monkeypatch.setattr(data, "CHUNK", 64)
    for name, ids in _id_draws(5000, seed=11):
        assert _same_arrays(_dataset_structure(ids), _structure_oracle(ids)), name
    sparse = np.random.default_rng(12).integers(0, 2**62, 500)
    assert _same_arrays(_dataset_structure(sparse), _structure_oracle(sparse))


def test_one_sort_structure_planted_bugs_are_caught(monkeypatch):
    # The dataset's structure is checked through the one-sort path: two planted bugs in it must
    # break the agreement, on Zipf ids with gaps: (1) sorting the ids without the record index
    # (numpy's default sort is not stable: a user's records leave record order); (2) user_index
    # taken as the ids themselves (right only when the users are exactly 0 .. m-1).
    monkeypatch.setattr(data, "_SORT_BEATS_RADIX", True)
    monkeypatch.setattr(data, "SORT_CALIBRATION_N", 100)
    ids = next(_id_draws(5000, seed=13))[1]
    want = _structure_oracle(ids)
    assert _same_arrays(_dataset_structure(ids), want)
    real = data._one_sort_structure

    def unstable(ids, top):
        users, _, offsets, user_index = real(ids, top)
        return users, np.argsort(ids), offsets, user_index

    def ids_as_index(ids, top):
        users, order, offsets, _ = real(ids, top)
        return users, order, offsets, ids.copy()

    for planted in (unstable, ids_as_index):
        with monkeypatch.context() as mp:
            mp.setattr(data, "_one_sort_structure", planted)
            assert not _same_arrays(_dataset_structure(ids), want), planted.__name__
