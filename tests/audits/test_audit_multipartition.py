"""Multi-partition releases with "no release" cells (``audits/engine/sampling.py``, "Multi-partition
releases"; ``audits/engine/rejection.py``): each partition is audited alone and jointly.

The mechanism: two partitions that share a user, each released as its count plus Laplace
noise of scale b only when the noisy count reaches TAU (the thresholded count of private
partition selection, Korolova et al. 2009), else "no release". On the pair "the user in
both partitions (counts 1, 1) vs absent (0, 0)" each partition's loss is 1/b (the
threshold is post-processing) and the pair's is 2/b (composition; reached by the corner
{both released, x1 >= 1, x2 >= 1}, where each coordinate's Laplace loss is flat at 1/b,
since TAU <= 1). Correct for eps = 1 at b = 2; the planted mechanism bug "scale calibrated
for a user in one partition" has b = 1, loss 2, while each partition alone stays 1-DP.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from planted import auditor as planted  # tests/ is on sys.path (rootdir conftest)
from userdp.audits import VIOLATION, StatisticThreshold, ValueSet, audit
from userdp.audits.engine.patterns import ReleasePatternSet
from userdp.audits.engine.report import to_json
from userdp.audits.engine.sampling import NO_RELEASE, as_outputs, encode, released_cells
from userdp.reference.claims import PureDP

TAU = 0.5
PAIR = (1.0, 0.0)  # the user in both partitions vs absent: both counts move by 1


def batched(scale: float):
    """Both partitions, batched: a (size, 2) masked array whose masked cells are not released."""

    def mechanism(D, rng, size):
        x = D + rng.laplace(0.0, scale, (size, 2))
        return np.ma.MaskedArray(x, mask=x < TAU)

    return mechanism


def per_call(scale: float):
    """The same release, one per call: a list with None in the cells not released."""

    def mechanism(D, rng):
        x = D + rng.laplace(0.0, scale, 2)
        return [float(v) if v >= TAU else NO_RELEASE for v in x]

    return mechanism


def test_cells_are_encoded_as_nan_and_tuples_with_none():
    rows = [[1.5, None], None, [0.7, 2.0], [None, None]]
    x = as_outputs(rows)
    assert np.ma.isMaskedArray(x) and x.shape == (4, 2)
    assert np.ma.getmaskarray(x).tolist() == [[False, True], [True, True], [False, False], [True, True]]
    cells = released_cells(x)
    assert np.isnan(cells[0, 1]) and np.isnan(cells[1]).all() and cells[2].tolist() == [0.7, 2.0]
    a, b, _ = encode(x, x, "vector")
    assert np.array_equal(a, cells, equal_nan=True)
    ints = as_outputs([[3, None], [4, 5], None])
    assert ints.dtype.kind == "i"  # integer cells stay integers
    ca, cb, values = encode(ints, ints, "discrete")
    assert sorted(values, key=str) == sorted([(3, None), (4, 5), None], key=str)
    assert [values[c] for c in ca] == [(3, None), (4, 5), None]
    vs = ValueSet(((3, None), None))  # contains() agrees with the codes
    assert vs.contains(ints).tolist() == [True, False, True]
    assert ValueSet(((3, 0),)).contains(ints).tolist() == [False, False, False]  # a masked cell is no 0


def _audit(mechanism, bug=None, samples=20_000, seed=0, claim=1.0):
    def run():
        return audit(mechanism, PAIR, PureDP(claim), samples=samples, seed=seed, output="vector", workers=1)

    if bug is None:
        return run()
    with planted.REACH_BY_NAME[bug].applied():
        return run()


def test_joint_sets_find_the_loss_per_partition_audits_miss():
    # b = 1: loss 2. The corner {both released, x >= (1, 1)} has P_D = 1/4, P_D' = e^-2 / 4; at
    # 2 x 10^4 per side (18,000 counted) eps_lb ~ ln((0.25 - 0.01) / (0.0338 + 0.004)) ~ 1.8.
    # Per partition the loss is 1 (the claim): no set on one partition can show more.
    r = _audit(batched(1.0))
    assert r.verdict == VIOLATION and r.epsilon_lower_bound > 1.5
    s = r.witness.rejection_set
    assert isinstance(s, StatisticThreshold) and s.statistic == "orthant" and not s.missing
    alone = _audit(batched(1.0), bug="per-partition-only")
    assert alone.verdict != VIOLATION and alone.epsilon_lower_bound <= 1.0


def test_correct_release_is_not_flagged_and_joint_sets_reach_its_loss():
    # b = 2: loss 1 = the claim. One partition alone reaches at most 0.5.
    r = _audit(batched(2.0))
    assert r.verdict != VIOLATION and r.epsilon_lower_bound > 0.7
    alone = _audit(batched(2.0), bug="per-partition-only")
    assert alone.epsilon_lower_bound < 0.5


def test_per_call_rows_with_none_cells_are_the_batched_release():
    # The same release returned one row per call, looped by the sampler (shards of 5,000
    # calls): the audit sees the same distribution, so its verdict and witness family agree.
    r = _audit(per_call(1.0), samples=12_000)
    assert r.verdict == VIOLATION and r.epsilon_lower_bound > 1.3
    assert r.calling == "scalar(dataset, rng)"


def test_release_pattern_sets_with_private_selection():
    # Which partitions are released, and nothing else (each released cell holds the constant
    # 1): partition j is released with probability pi(1) = Pr[1 + Lap(1) >= 2] = e^-1 / 2 with
    # the user and pi(0) = e^-2 / 2 without, independently. {released in both} has ratio
    # (pi(1) / pi(0))^2 = e^2, and one partition's {released} e^1 (each is 1-DP): claimed at
    # eps = 1.5, only the joint release pattern shows the violation (no projection or
    # statistic can: the released values never vary).
    def mechanism(D, rng, size):
        x = D + rng.laplace(0.0, 1.0, (size, 2))
        return np.ma.MaskedArray(np.ones_like(x), mask=x < 2.0)

    pi1, pi0 = math.exp(-1) / 2, math.exp(-2) / 2
    assert (pi1 / pi0) ** 2 == pytest.approx(math.exp(2))
    r = _audit(mechanism, samples=40_000, claim=1.5)
    assert r.verdict == VIOLATION and r.epsilon_lower_bound > 1.5
    assert isinstance(r.witness.rejection_set, ReleasePatternSet) and r.witness.rejection_set.patterns == ((0, 1),)
    assert r.witness.rejection_set.describe() == "{released cells are {0, 1}}"
    alone = _audit(mechanism, bug="per-partition-only", samples=40_000, claim=1.5)
    assert alone.verdict != VIOLATION


def test_witness_with_unreleased_cells_serialises():
    r = _audit(batched(1.0), samples=4_000)
    doc = json.loads(to_json("userdp.audit/1", r.report_dict()))
    assert doc["witness"]["rejection_set"]["type"] in ("statistic", "threshold")
