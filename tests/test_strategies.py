"""The named builders produce what they promise (so property suites see the hard cases)."""

import numpy as np
from hypothesis import given, settings, strategies as st, find

from userdp.properties.strategies import (
    FLOAT_MAX,
    epsilon_profiles,
    extreme_datasets,
    extreme_floats,
    extreme_pairs,
    task_user_graphs,
    user_datasets,
    user_size_profiles,
    weights_summing_to,
)
from userdp.reference.data import UserDataset


@given(user_size_profiles())
def test_sizes_positive(s):
    assert s.size >= 1 and (s >= 1).all()


def test_size_profiles_reach_imbalance_and_singletons():
    # find() searches until the predicate holds: it fails loudly if the builder never yields it
    find(user_size_profiles(min_users=5), lambda s: (s == 1).sum() >= 4 and s.max() >= 20)
    find(user_size_profiles(min_users=5), lambda s: s.max() >= 10 * np.median(s))


@given(st.integers(1, 50).flatmap(lambda n: st.tuples(st.just(n), epsilon_profiles(n, mix="acharya"))))
def test_acharya_mix(args):
    n, eps = args
    n_c, n_m = int(np.floor(0.34 * n)), int(np.floor(0.43 * n))
    assert ((eps[:n_c] >= 0.01) & (eps[:n_c] <= 0.2)).all()
    assert ((eps[n_c : n_c + n_m] >= 0.2) & (eps[n_c : n_c + n_m] <= 1.0)).all()
    assert (eps[n_c + n_m :] == 1.0).all()


@given(st.integers(1, 20).flatmap(lambda n: weights_summing_to(2.5, n)))
def test_weights_budget(w):
    assert (w >= 0).all() and abs(w.sum() - 2.5) <= 1e-12 * 2.5 * w.size


@given(user_datasets(dim=2, labels=True, value_range=(-1.0, 3.0)))
def test_datasets_respect_ranges(D):
    assert D.values.shape[1] == 2 and ((D.values >= -1) & (D.values <= 3)).all()
    assert ((D.labels >= -1) & (D.labels <= 1)).all()


def test_task_graphs_are_skewed():
    @settings(max_examples=200, derandomize=True, database=None)
    @given(task_user_graphs())
    def each(D):
        n_t = D.task_counts()
        assert (n_t >= 1).all()

    each()
    find(task_user_graphs(), lambda D: D.tasks.size >= 3 and D.task_counts().max() >= 3 * D.task_counts().min())


# ------------------------------------------------------------------ extreme floats
@given(
    st.sampled_from([(-FLOAT_MAX, FLOAT_MAX), (0.0, FLOAT_MAX), (-1.0, 1.0), (0.0, 1.0)]).flatmap(
        lambda b: st.tuples(st.just(b), extreme_floats(*b))
    )
)
def test_extreme_floats_stay_in_the_domain(args):
    (lo, hi), v = args
    assert lo <= v <= hi and np.isfinite(v)


def test_extreme_floats_reach_every_end_of_the_range():
    # find() fails loudly if the builder never yields the case
    find(extreme_floats(), lambda v: v >= 1e307)
    find(extreme_floats(), lambda v: v <= -1e307)
    find(extreme_floats(), lambda v: 0 < abs(v) < np.finfo(float).tiny)  # subnormal
    find(extreme_floats(), lambda v: v == 0 and np.signbit(v))  # -0.0
    find(extreme_floats(0.0, FLOAT_MAX), lambda v: v == 0 and not np.signbit(v))


def _base():
    return UserDataset(np.zeros((7, 2)), np.array([0, 0, 0, 1, 2, 2, 3]), labels=np.zeros(7))


def _overflows(D) -> bool:
    with np.errstate(over="ignore"):
        return not np.all(np.isfinite(np.add.reduceat(D.values[:, 0], [0, 3, 4, 6])))


def test_extreme_datasets_keep_the_public_structure_and_the_domain():
    @settings(max_examples=60, derandomize=True, database=None)
    @given(extreme_pairs(_base(), {"values": (-FLOAT_MAX, FLOAT_MAX), "labels": (0.0, 1.0)}))
    def each(pair):
        for D in pair:
            assert np.array_equal(D.user_ids, _base().user_ids) and D.values.shape == (7, 2)
            assert np.all(np.isfinite(D.values)) and ((D.labels >= 0) & (D.labels <= 1)).all()
        changed = np.any(pair[0].values != pair[1].values, axis=1) | (pair[0].labels != pair[1].labels)
        assert np.unique(pair[0].user_ids[changed]).size <= 1  # one user's records redrawn

    each()
    # user totals that overflow, and huge users among zeros, are drawn
    find(extreme_datasets(_base(), {"values": (0.0, FLOAT_MAX)}), _overflows)
    find(
        extreme_datasets(_base(), {"values": (-FLOAT_MAX, FLOAT_MAX)}),
        lambda D: (np.abs(D.values) >= 1e300).any() and (D.values == 0).any(),
    )


def test_extreme_datasets_respect_a_ball():
    @settings(max_examples=40, derandomize=True, database=None)
    @given(extreme_datasets(_base(), {"values": (-1.0, 1.0)}, {"values": 1.0}))
    def each(D):
        assert (np.sqrt(np.sum(D.values**2, axis=1)) <= 1.0 + 1e-12).all()

    each()
