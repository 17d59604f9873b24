"""The named builders produce what they promise (so property suites see the hard cases)."""

import numpy as np
from hypothesis import given, settings, strategies as st, find

from userdp.properties.strategies import (
    epsilon_profiles,
    task_user_graphs,
    user_datasets,
    user_size_profiles,
    weights_summing_to,
)


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
