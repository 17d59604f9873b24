"""Record-level relations: add/remove one record, replace one record, the
empty dataset on one side of an add/remove pair, and the partition key.

Oracle: a pair is an add-remove-record neighbour exactly when the multisets of its records
(tuples of every field, counted with ``collections.Counter``) differ by one element; a
replace-record neighbour of raw sequences has the same length and one differing position.
"""

from collections import Counter

import numpy as np
import pytest

from userdp.reference import neighbours as N
from userdp.reference.data import EMPTY, EmptyDataset, UserDataset

R = N.ADD_REMOVE_RECORD


def records(D) -> Counter:
    """The multiset of D's records, each the tuple of all its fields (the oracle)."""
    out = Counter()
    for i in range(D.n):
        out[
            (
                tuple(np.atleast_1d(D.values[i]).tolist()),
                None if D.labels is None else float(D.labels[i]),
                int(D.user_ids[i]),
                None if D.partition_ids is None else int(D.partition_ids[i]),
            )
        ] += 1
    return out


def symmetric_distance(a, b) -> int:
    ra, rb = records(a), records(b)
    return sum(((ra - rb) + (rb - ra)).values())


def small_dataset(rng, n: int, keys: bool) -> UserDataset:
    # values and owners from tiny ranges, so that duplicated records are common
    return UserDataset(
        rng.integers(0, 2, n).astype(float),
        rng.integers(0, 2, n),
        partition_ids=rng.integers(0, 2, n) if keys else None,
    )


@pytest.mark.parametrize("keys", [False, True])
def test_is_neighbour_agrees_with_the_multiset_oracle(keys):
    """Random small pairs (many duplicates): one record added or removed, two changed, a
    record's owner or key changed, the order shuffled. is_neighbour == (distance 1)."""
    rng = np.random.default_rng(12)
    verdicts = Counter()
    for _ in range(400):
        a = small_dataset(rng, int(rng.integers(1, 5)), keys)
        b = small_dataset(rng, int(rng.integers(1, 5)), keys)
        if rng.random() < 0.5:  # half the pairs are built near each other
            b = (
                a.take(rng.permutation(a.n)[: a.n - 1])
                if a.n > 1 and rng.random() < 0.5
                else UserDataset(
                    np.r_[a.values, rng.integers(0, 2)],
                    np.r_[a.user_ids, rng.integers(0, 2)],
                    partition_ids=None if not keys else np.r_[a.partition_ids, rng.integers(0, 2)],
                )
            )
        expected = symmetric_distance(a, b) == 1
        assert N.is_neighbour(R, a, b) == expected == N.is_neighbour(R, b, a), (a.values, b.values)
        verdicts[expected] += 1
        if expected:
            (i,) = R.changed_units(a, b)
            big, small = (a, b) if a.n > b.n else (b, a)
            assert records(big.take(np.flatnonzero(np.arange(big.n) != i)) if big.n > 1 else EMPTY) == records(small)
    assert verdicts[True] > 50 and verdicts[False] > 50


def test_enumeration_is_complete_and_every_pair_is_a_neighbour():
    D = UserDataset([0.0, 1.0, 1.0], [0, 1, 1], labels=[0.5, 0.5, -0.5])
    pairs = list(R.enumerate(D, [0.0, 1.0], label_grid=[-1.0, 0.0, 1.0]))
    assert len(pairs) == D.n + 2 * 3  # n removals + |grid| |label grid| additions
    assert {p.description for p in pairs[: D.n]} == {f"remove record {i}" for i in range(D.n)}
    for p in pairs:
        assert symmetric_distance(p.first, p.second) == 1, p.description
        assert R.changed_units(p.first, p.second) == {p.unit}, p.description
    scalar = UserDataset([2.0, 2.0], [5, 5])  # two equal records: one unit
    assert [p.unit for p in R.enumerate(scalar, [0.0])] == [0, 0, 2]


def test_order_does_not_matter_and_planted_non_neighbours_are_refused():
    D = UserDataset([0.1, 0.2, 0.3], [0, 1, 2], partition_ids=[0, 0, 1])
    shuffled_minus_one = D.take(np.array([2, 0]))
    assert R.changed_units(D, shuffled_minus_one) == {1}
    two_removed = D.take(np.array([0]))
    owner_moved = D.with_fields(user_ids=[0, 1, 1])  # same values: one record left, one arrived
    key_moved = D.with_fields(partition_ids=[0, 1, 1])
    labelled = D.take(np.array([0, 1])).with_fields(labels=[0.0, 0.0])
    for bad in (two_removed, owner_moved, key_moved, labelled, D):
        assert not N.is_neighbour(R, D, bad)
    with pytest.raises(ValueError, match="more than one record|exactly one record|same fields"):
        R.changed_units(D, owner_moved)


def test_empty_dataset_on_one_side_of_an_add_remove_pair():
    one = UserDataset([3.0], [7])
    assert R.neighbour(one, 0) is EMPTY
    assert R.changed_units(EMPTY, one) == {0} and N.is_neighbour(R, one, EMPTY)
    assert N.is_neighbour(N.ADD_REMOVE_USER, EMPTY, UserDataset([1.0, 2.0], [4, 4]))  # one user, two records
    assert not N.is_neighbour(N.ADD_REMOVE_USER, EMPTY, UserDataset([1.0, 2.0], [4, 5]))
    assert not N.is_neighbour(R, EMPTY, UserDataset([1.0, 2.0], [4, 4]))  # two records
    assert not N.is_neighbour(R, EMPTY, EMPTY)
    for rel in (N.REPLACE_RECORD, N.REPLACE_USER, N.REPLACE_USER_LABELS, N.REPLACE_USER_ITEMS):
        assert not N.is_neighbour(rel, EMPTY, one)
    pairs = R.worst_case_pairs(EMPTY, -1.0, 1.0)
    assert [p.second.values.tolist() for p in pairs] == [[1.0], [-1.0]]
    assert all(p.first is EMPTY and R.changed_units(p.first, p.second) == {0} for p in pairs)
    assert R.sample(EMPTY, np.random.default_rng(0), 0.0, 1.0).second.n == 1
    assert EMPTY.n == EMPTY.m == len(EMPTY) == 0 and EMPTY.values.shape == (0,) and EMPTY.users.size == 0
    assert EmptyDataset((3,)).values.shape == (0, 3)


def test_partition_key_gives_the_empty_partition_vs_one_user_pair():
    """PipelineDP's worst case: user 2 alone in partition 1; without it, partition 1 is empty."""
    D = UserDataset([1.0, 2.0, 5.0, 6.0], [0, 1, 2, 2], partition_ids=[0, 0, 1, 1])
    without = D.without_user(2)
    assert without.partition_ids.tolist() == [0, 0]  # take keeps the key
    first, second = D.partition(1), without.partition(1)
    assert second is EMPTY and first.values.tolist() == [5.0, 6.0]
    assert N.ADD_REMOVE_USER.changed_units(first, second) == {2}
    assert N.is_neighbour(N.ADD_REMOVE_USER, first, second)
    assert not N.is_neighbour(N.ADD_REMOVE_RECORD, first, second)  # two records, one user
    # the key is public under the replace relations: moving a record to another partition is not a neighbour
    assert not N.is_neighbour(N.REPLACE_RECORD, D, D.with_fields(partition_ids=[0, 1, 1, 1]))
    assert not N.is_neighbour(N.REPLACE_USER, D, D.with_fields(partition_ids=[0, 1, 1, 1]))
    with pytest.raises(ValueError, match="partition_id is required"):
        R.neighbour(D, new_value=1.0)
    assert R.neighbour(D, new_value=1.0, partition_id=3).partition(3).n == 1


def test_raw_sequences():
    assert R.changed_positions([1, 1, 1], [1, 1]) == {0}
    assert R.changed_positions([3, 1], [1, 2, 3]) == {1}  # a multiset: order free
    assert R.changed_positions([], [4.0]) == {0}
    assert R.changed_positions([[1, 2], [3, 4]], [[3, 4]]) == {0}
    for a, b in (([1, 2, 3], [1, 4]), ([1, 2], [1, 2]), ([1, 2, 3, 4], [1, 2]), ([[1, 2]], [[2, 1], [1, 2], [0, 0]])):
        with pytest.raises(ValueError, match="add-remove-record"):
            R.changed_positions(a, b)
    assert N.REPLACE_RECORD.changed_positions([1, 2, 3], [1, 2, 4]) == {2}
    assert N.REPLACE_RECORD.changed_positions([1, 2, 3], [3, 2, 1]) == {0, 2}  # positions matter
    with pytest.raises(ValueError, match="replace-record keeps"):
        N.REPLACE_RECORD.changed_positions([1, 2, 3], [1, 2])
