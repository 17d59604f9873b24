"""Neighbouring relations: every produced neighbour differs in exactly one unit, and the
brute-force enumeration is complete (counted against closed-form counts on tiny grids)."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from userdp.properties.strategies import neighbouring_pairs, user_datasets
from userdp.reference import neighbours as N
from userdp.reference.data import UserDataset

REPLACE = [N.REPLACE_USER, N.REPLACE_USER_ITEMS]


@pytest.fixture
def tiny():
    return UserDataset.from_user_lists([[0.0, 1.0, 0.0], [1.0], [0.0, 0.0]], user_ids=[4, 2, 9])


@pytest.mark.parametrize("rel", REPLACE)
def test_replace_user_enumeration_is_complete(rel, tiny):
    grid = [0.0, 0.5, 1.0]
    pairs = list(rel.enumerate(tiny, grid))
    # closed form: each user l can take any of |grid|^{s_l} value vectors except its own
    expected = sum(len(grid) ** s - 1 for s in tiny.counts)
    assert len(pairs) == expected
    seen = {(p.unit, tuple(p.second.values.tolist())) for p in pairs}
    assert len(seen) == expected  # all distinct
    for p in pairs:
        assert rel.changed_units(p.first, p.second) == {p.unit}


def test_add_remove_enumeration_is_complete(tiny):
    grid = [0.0, 1.0]
    pairs = list(N.ADD_REMOVE_USER.enumerate(tiny, grid, max_records=3))
    # m removals + every ordered sequence of 1..3 values on the grid (a user's record order
    # matters to "keep the first tau records", Amin §4)
    expected = tiny.m + sum(len(grid) ** k for k in (1, 2, 3))
    assert len(pairs) == expected
    for p in pairs:
        assert N.ADD_REMOVE_USER.changed_units(p.first, p.second) == {p.unit}


def _added_user(p):
    """The records of the user that ``p`` adds, as a tuple of (x tuple, label)."""
    idx = p.second.records_of(p.unit)
    xs = p.second.values[idx].reshape(idx.size, -1)
    ys = [None] * idx.size if p.second.labels is None else p.second.labels[idx].tolist()
    return tuple((tuple(x), y) for x, y in zip(xs.tolist(), ys))


def test_add_remove_enumeration_is_complete_in_d2_with_labels():
    # Independent oracle: the added users written out by nested loops over coordinates and
    # labels (no itertools), compared as sets. The old enumeration (multisets of flattened
    # coordinates, labels fixed at 0) never added the one-record user x = (1, 0), y = +1.
    D = UserDataset(
        np.array([[0.5, 0.5], [0.0, 1.0], [1.0, 1.0]]), np.array([3, 3, 7]), labels=np.array([1.0, -1.0, 1.0])
    )
    grid, labels = [0.0, 1.0], [-1.0, 1.0]
    pairs = list(N.ADD_REMOVE_USER.enumerate(D, grid, max_records=2, label_grid=labels))
    records = [((a, b), y) for a in grid for b in grid for y in labels]  # 8 records
    want = {(r,) for r in records} | {(r, q) for r in records for q in records}  # 8 + 64 users
    added = [_added_user(p) for p in pairs if p.second.n > D.n]
    removed = {p.unit for p in pairs if p.second.n < D.n}
    assert removed == {3, 7}
    assert len(added) == len(want) == 72 and set(added) == want
    assert (((1.0, 0.0), 1.0),) in set(added)
    for p in pairs:
        assert N.ADD_REMOVE_USER.changed_units(p.first, p.second) == {p.unit}


def test_replace_user_enumeration_moves_labels_too_in_d2():
    # Epasto §2.2: a user's data points (x, y) are replaced, so labels move with the values.
    # Independent count: a user of s records has (|grid|^(s d) |labels|^s) - 1 neighbours,
    # and the neighbours are distinct; checked against an explicit nested-loop set for user 7.
    D = UserDataset(
        np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([3, 3, 7]), labels=np.array([1.0, -1.0, 1.0])
    )
    grid, labels = [0.0, 1.0], [-1.0, 1.0]
    pairs = list(N.REPLACE_USER.enumerate(D, grid, label_grid=labels))
    assert len(pairs) == (2**4 * 2**2 - 1) + (2**2 * 2 - 1)
    seen = {(p.unit, tuple(p.second.values.ravel()), tuple(p.second.labels)) for p in pairs}
    assert len(seen) == len(pairs)
    user7 = {(tuple(p.second.values[2]), p.second.labels[2]) for p in pairs if p.unit == 7}
    want7 = {((a, b), y) for a in grid for b in grid for y in labels} - {((1.0, 1.0), 1.0)}
    assert user7 == want7
    for p in pairs:
        assert N.REPLACE_USER.changed_units(p.first, p.second) == {p.unit}
    # the values-only relations keep the labels fixed
    assert len(list(N.REPLACE_USER_ITEMS.enumerate(D, grid))) == (2**4 - 1) + (2**2 - 1)


def test_replace_record_and_labels_enumeration(tiny):
    D = tiny.with_fields(labels=np.zeros(tiny.n), epsilons=np.linspace(0.5, 1, tiny.n))
    pairs = list(N.REPLACE_RECORD.enumerate(D, [0.0, 1.0], label_grid=[-1.0, 1.0]))
    assert len(pairs) == D.n * 2 * 2  # every (x, y) on the grid differs from (x_i, 0)
    assert all(N.REPLACE_RECORD.changed_units(p.first, p.second) == {p.unit} for p in pairs)
    lab = list(N.REPLACE_USER_LABELS.enumerate(D, [-1.0, 1.0]))
    assert len(lab) == sum(2**s for s in D.counts)
    assert all(N.REPLACE_USER_LABELS.changed_units(p.first, p.second) == {p.unit} for p in lab)


@pytest.mark.parametrize("name", sorted(N.RELATIONS))
@given(data=st.data())
def test_sampled_pairs_differ_in_exactly_the_named_unit(name, data):
    p = data.draw(neighbouring_pairs(name))
    rel = N.get_relation(name)
    assert rel.changed_units(p.first, p.second) == {p.unit}  # never D itself


@pytest.mark.parametrize("name", sorted(N.RELATIONS))
@given(D=user_datasets(min_users=2, labels=True), seed=st.integers(0, 2**32 - 1))
def test_worst_case_and_random_pairs_are_neighbours(name, D, seed):
    rel = N.get_relation(name)
    if name == "replace-record":
        D = D.with_fields(epsilons=np.linspace(0.1, 1.0, D.n))
    for p in rel.worst_case_pairs(D, 0.0, 1.0):
        assert rel.changed_units(p.first, p.second) == {p.unit}, p.description
    p = rel.sample(D, np.random.default_rng(seed), 0.0, 1.0)
    # uniform new values equal the old ones with probability 0
    assert rel.changed_units(p.first, p.second) == {p.unit}


def test_worst_case_replace_user_puts_heaviest_user_at_the_bounds(tiny):
    p = N.REPLACE_USER.worst_case_pairs(tiny, 0.0, 2.0)[0]
    assert p.unit == 4  # the user with 3 records
    idx = tiny.records_of(4)
    assert p.first.values[idx].tolist() == [0.0] * 3 and p.second.values[idx].tolist() == [2.0] * 3


def test_is_neighbour_rejects_two_changed_users(tiny):
    a = N.REPLACE_USER.neighbour(tiny, 4, [1.0, 1.0, 1.0])
    b = N.REPLACE_USER.neighbour(a, 2, [0.0])
    assert N.is_neighbour(N.REPLACE_USER, tiny, a)
    assert not N.is_neighbour(N.REPLACE_USER, tiny, b)
    assert not N.is_neighbour(N.REPLACE_USER, tiny, tiny)
    assert not N.is_neighbour(N.REPLACE_USER, tiny, tiny.without_user(2))


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda D: N.REPLACE_USER.neighbour(D, 4, [1.0]), ValueError, r"new must have shape \(3,\)"),
        (lambda D: N.REPLACE_USER.neighbour(D, 4, [1.0, np.nan, 0.0]), ValueError, r"new must be finite"),
        (lambda D: N.REPLACE_USER.worst_case_pairs(D, 1.0, 0.0), ValueError, "lo < hi"),
        (
            lambda D: N.REPLACE_RECORD.neighbour(D, 99, 0.0),
            ValueError,
            r"i \(record index\) must be an integer in \[0, 5\], got 99",
        ),
        (lambda D: N.ADD_REMOVE_USER.neighbour(D, 4, [1.0]), ValueError, "user_id 4 already present"),
        (lambda D: N.ADD_REMOVE_USER.neighbour(D.take([0]), 4), ValueError, "cannot remove the only user"),
        (lambda D: N.REPLACE_USER_LABELS.neighbour(D, 4, [0.0, 0.0, 0.0]), ValueError, "needs dataset.labels"),
        (lambda D: N.get_relation("nope"), ValueError, "relation must be one of"),
        (lambda D: N.REPLACE_USER.sample(D, 0, 0.0, 1.0), TypeError, "numpy.random.Generator"),
    ],
)
def test_bad_input(tiny, call, exc, match):
    with pytest.raises(exc, match=match):
        call(tiny)


def test_replace_user_moves_values_and_labels_together(tiny):
    D = tiny.with_fields(labels=np.zeros(tiny.n))
    E = N.REPLACE_USER.neighbour(D, 4, [1.0, 1.0, 1.0], labels=[1.0, -1.0, 1.0])
    assert N.REPLACE_USER.changed_units(D, E) == {4}
    # a label-only change of another user makes it two units
    F = N.REPLACE_USER_LABELS.neighbour(E, 2, [5.0])
    assert N.REPLACE_USER.changed_units(D, F) == {2, 4}
    # the labels-only relation refuses a value change, and refuses to move values
    with pytest.raises(ValueError, match="does not change labels"):
        N.REPLACE_USER_ITEMS.neighbour(D, 4, [0.0] * 3, labels=[0.0] * 3)
    assert not N.is_neighbour(N.REPLACE_USER_LABELS, D, E)


def test_label_arguments_without_labels_to_move_are_refused(tiny):
    # A label grid or label bounds where no label can move would be silently ignored:
    # refused instead, as neighbour(labels=...) is for a relation that keeps labels.
    with pytest.raises(ValueError, match="label_grid must be None"):
        list(N.ADD_REMOVE_USER.enumerate(tiny, [0.0, 1.0], label_grid=[0.5]))
    with pytest.raises(ValueError, match="label_grid must be None"):
        list(N.REPLACE_RECORD.enumerate(tiny, [0.0, 1.0], label_grid=[0.5]))
    with pytest.raises(ValueError, match="label_grid must be None"):
        list(N.REPLACE_USER.enumerate(tiny, [0.0, 1.0], label_grid=[0.5]))
    D = tiny.with_fields(labels=np.zeros(tiny.n))
    with pytest.raises(ValueError, match="label_grid must be None"):
        list(N.REPLACE_USER_ITEMS.enumerate(D, [0.0, 1.0], label_grid=[0.5]))
    with pytest.raises(ValueError, match="label_lo and label_hi must be None"):
        N.REPLACE_RECORD.worst_case_pairs(tiny, 0.0, 1.0, label_lo=-1.0)
