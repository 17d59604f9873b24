"""The auditor's reach on mechanisms whose true loss is known (``audits/engine/rejection.py``:
atoms, corner sets, the weighted Laplace statistic; ``audits/engine/harness.py``: floating-point
leaks named). Each case is checked on the real auditor and on a planted weakened auditor
(``tests/planted/auditor.py``, ``REACH_BUGS``) that misses it at the same seeds.

Oracles: closed forms of Laplace probabilities (stated at each case), and the statistical
ceiling of ``audits/engine/ceiling.py`` (the best bound a perfect test reaches with the same
samples; its Monte Carlo is checked against brute force in tests/audits/test_ceiling.py).

False failures. Where one audit's eps_lb can fall below the stated figure by the chance of
its own samples, the check is on the median of k audits at seeds 0..k-1 (independent: each
seed spawns its own streams): with a per-audit miss probability p, the median misses with
probability sum_{j > k/2} C(k, j) p^j (1 - p)^(k - j), stated at each case from p's measured
95% upper bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from planted import auditor as planted  # tests/ is on sys.path (rootdir conftest)
from userdp.audits import VIOLATION, StatisticThreshold, audit
from userdp.audits.engine.ceiling import NoiseModel, ceiling
from userdp.audits.engine.value_sets import AtomSet
from userdp.audits.engine.sampling import normalize_pairs
from userdp.reference.claims import PureDP


def _median_misses(k: int, p: float) -> float:
    """Pr[at least half of k independent audits miss] when each misses with probability p."""
    return float(stats.binom.sf(k // 2, k, p))


def _with(bug: str | None, f):
    if bug is None:
        return f()
    with planted.REACH_BY_NAME[bug].applied():
        return f()


# ------------------------------------------------------------------ atoms
def exact_leak(D, rng, size):
    """Laplace(1) around D (eps = 1, sensitivity 1), but with probability 1e-3 the exact value
    D itself: the set {D} has probability 1e-3 on one side and 0 on the other, so the
    mechanism is (1, 1e-3)-DP and not eps-DP for any eps (infinite loss)."""
    x = D + rng.laplace(0.0, 1.0, size)
    exact = rng.random(size) < 1e-3
    x[exact] = D
    return x


def _leak_audit(seed: int):
    return audit(exact_leak, (0.0, 1.0), PureDP(1.0), samples=100_000, seed=seed)


def test_exact_value_atom_is_found_at_1e5():
    # Measured over seeds 0-999 (this code, 2026-11-25): eps_lb min 2.519, median 2.977, 0 of
    # 1000 below 1, the witness an atom set; a miss rate's 95% upper bound is 3.0e-3, so the
    # median of 3 audits misses with probability <= 2.7e-5.
    assert _median_misses(3, 3.0e-3) <= 1e-4
    results = [_leak_audit(s) for s in range(3)]
    assert sorted(r.epsilon_lower_bound for r in results)[1] > 1.0
    for r in results:
        assert r.verdict == VIOLATION and isinstance(r.witness.rejection_set, AtomSet)
        assert r.witness.rejection_set.values in ((0.0,), (1.0,))  # the exact value of one side
        assert r.witness.counts["second" if r.witness.ordering == "first over second" else "first"] == 0


def test_planted_atoms_off_misses_the_exact_value():
    # Thresholds alone: the atom hides in a threshold set; measured over seeds 0-199: eps_lb
    # median 0.979, max 1.007. At seeds 0-2: below 1, no violation.
    for s in range(3):
        r = _with("atoms-off", lambda: _leak_audit(s))
        assert r.verdict != VIOLATION and r.epsilon_lower_bound < 1.0
        assert not isinstance(r.witness.rejection_set, AtomSet)


def test_a_continuous_law_has_no_atoms():
    # Correct Laplace: two float64 draws coincide with probability of order 2^-52 (the
    # spacing of floats near the draw, times a density <= 1/2), so among the 2 x 10^8 pairs
    # of 2 x 10^4 draws one coincides with probability < 1e-7: no atom, no atom set tried.
    from userdp.audits.engine import value_sets

    rng = np.random.default_rng(0)
    a, b = rng.laplace(size=10_000), 1 + rng.laplace(size=10_000)
    assert value_sets._atoms(a, b) is None
    atoms = value_sets._atoms(np.r_[a, 0.0, 0.0], b)
    assert atoms.tolist() == [0.0]


# ------------------------------------------------------------------ corner sets: two partitions, a user in both
def two_partitions(D, rng, size):
    """The 2-vector of two partitions' sums, Laplace(4) each (PipelineDP's scale L0 x Linf / eps
    with L0 = Linf = 2, eps = 1); the pair moves both by 2 (a user in both partitions)."""
    return np.asarray(D, dtype=float) + rng.laplace(0.0, 4.0, (size, 2))


QUAD_PAIR = ((2.0, 2.0), (0.0, 0.0))


def _quad_audit(seed: int):
    return audit(two_partitions, QUAD_PAIR, PureDP(1.0), samples=50_000, seed=seed)


def test_two_partition_quadrant_reaches_its_claim_at_5e4():
    # Loss 1 (0.5 per coordinate, Laplace's flat tails). The quadrant {x1 >= 2, x2 >= 2} has
    # P_D = 1/4 and P_D' = (e^-0.5 / 2)^2 = e^-1 / 4 (closed form): the full loss at mass 1/4.
    assert (0.5 * math.exp(-0.5)) ** 2 == pytest.approx(math.exp(-1) / 4)
    top = ceiling(
        NoiseModel("laplace", lambda D: np.asarray(D, dtype=float), 4.0),
        normalize_pairs(QUAD_PAIR, 1),
        samples=50_000,
        confidence=0.95,
        delta=0.0,
        gdp=False,
        output_shape=(2,),
    ).epsilon
    # Measured over seeds 0-199: eps_lb median 0.949, 2.5% of audits below 0.9 (min 0.54: a far
    # tail of a projection chosen on the selection share), against a ceiling of ~0.98; a
    # per-audit miss rate's 95% upper bound 0.05, so the median of 9 misses with
    # probability <= 6e-5.
    assert _median_misses(9, 0.05) <= 1e-4
    results = [_quad_audit(s) for s in range(9)]
    lbs = sorted(r.epsilon_lower_bound for r in results)
    assert lbs[4] >= 0.9 and lbs[4] <= top + 0.05
    corners = [
        r
        for r in results
        if isinstance(r.witness.rejection_set, StatisticThreshold) and r.witness.rejection_set.statistic == "orthant"
    ]
    assert len(corners) >= 5  # the corner set is the usual witness


def test_planted_no_joint_sets_misses_the_quadrant():
    # Projections and learned statistics only: measured over seeds 0-199, median 0.699, max
    # 0.829 (the "0.68 at 5 x 10^4").
    lbs = sorted(_with("no-joint-sets", lambda: _quad_audit(s)).epsilon_lower_bound for s in range(9))
    assert lbs[4] < 0.9


# ------------------------------------------------------------------ 20 counts, one coordinate's noise too small
SCALES = np.r_[2.0, np.full(19, 20.0)]  # Laplace(20) per count (L1 sensitivity 20, eps = 1); count 0: 2


def twenty_counts(D, rng, size):
    """20 counts that all move by 1 between the neighbours, each with Laplace noise of scale
    20 (correct for eps = 1), except count 0's, 10x too small. True loss sum_j 1 / b_j =
    19 / 20 + 1 / 2 = 1.45."""
    return D + rng.laplace(size=(size, 20)) * SCALES


def _counts_ceiling(samples: int) -> float:
    # The loss is invariant under rescaling each coordinate: x_j / b_j is Laplace(1) noise
    # around D / b_j, i.i.d. Laplace with the shift vector 1 / b (ceiling.py's Monte Carlo).
    return ceiling(
        NoiseModel("laplace", lambda D: D / SCALES, 1.0),
        normalize_pairs((1.0, 0.0), 1),
        samples=samples,
        confidence=0.95,
        delta=0.0,
        gdp=False,
        output_shape=(20,),
    ).epsilon


def _counts_audit(seed: int, samples: int = 100_000):
    return audit(twenty_counts, (1.0, 0.0), PureDP(1.0), samples=samples, seed=seed, noise_family="laplace")


@pytest.mark.slow  # a figure (~3 s)
def test_twenty_counts_cannot_be_flagged_at_1e5_by_any_test():
    # The perfect test (the Neyman-Pearson sets, exact probabilities) reaches 0.876 at 10^5 per
    # side: below the claim of 1, so no audit at 10^5 per side flags this bug with 95%
    # confidence. It reaches 1 near 10^6 per side (1.0085 by a Monte Carlo of the loss with
    # 8 x 10^6 draws per side) and 1.11 at 4 x 10^6 (test_twenty_counts_flagged_slow).
    assert _counts_ceiling(100_000) == pytest.approx(0.876, abs=0.01)
    assert 1.0 * 19 / 20 + 1 / 2 == pytest.approx(1.45)


@pytest.mark.slow  # a figure (~4 s)
def test_twenty_counts_weighted_statistic_nears_the_ceiling_at_1e5():
    # The declared Laplace family's statistic sum_j (|x_j - m2_j| - |x_j - m1_j|) / b_j with the
    # scales b_j learned on the selection share. Measured over seeds 0-99 (this code,
    # 2026-11-25): eps_lb median 0.789 (0.90 of the ceiling), 1 of 100 below 0.70 (a far-tail
    # threshold, 0.448), so a per-audit miss rate's 95% upper bound is 0.047 and the median of
    # 9 misses with probability <= 3e-5. The planted unweighted statistic (every b_j = 1):
    # median 0.563, 90% quantile 0.643; below the real audit at 99 of the 100 seeds. Measured
    # with the per-coordinate ratio statistic off (it competes for the witness and reaches as
    # far without the declaration: test_twenty_counts_black_box_*), which isolates the family's.
    assert _median_misses(9, 0.047) <= 1e-4
    with planted.REACH_BY_NAME["coordinate-ratio-off"].applied():
        results = [_counts_audit(s) for s in range(9)]
    assert sorted(r.epsilon_lower_bound for r in results)[4] >= 0.70
    assert (
        sum(
            isinstance(r.witness.rejection_set, StatisticThreshold)
            and r.witness.rejection_set.statistic == "l1-distance-difference"
            for r in results
        )
        >= 5
    )
    with planted.REACH_BY_NAME["coordinate-ratio-off"].applied():
        flat = sorted(_with("l1-statistic-unweighted", lambda: _counts_audit(s)).epsilon_lower_bound for s in range(9))
    assert flat[4] < 0.65


SLOW_SAMPLES = 4_000_000  # per side: 640 MB of outputs per side, ~2.6 GB peak, 40-120 s an audit


@pytest.mark.slow
def test_twenty_counts_flagged_slow():
    # The perfect test reaches ~1.11 here. Measured (this code, 2026-11-25): eps_lb 1.150,
    # 1.120, 1.099 at seeds 0, 1, 2 (mean 1.12, sd ~0.025: a miss, eps_lb <= 1, lies ~5 sd
    # below, one-sided normal ~3e-7); the planted unweighted statistic 0.942 at seed 0, measured
    # before the per-coordinate ratio statistic (learned.py), which reaches as far without the
    # family's weights: the planted run turns it off too, to isolate the family's statistic.
    r = _counts_audit(0, samples=SLOW_SAMPLES)
    assert r.verdict == VIOLATION and r.epsilon_lower_bound <= 1.45
    with planted.REACH_BY_NAME["coordinate-ratio-off"].applied():
        flat = _with("l1-statistic-unweighted", lambda: _counts_audit(0, samples=SLOW_SAMPLES))
    assert flat.verdict != VIOLATION, flat.epsilon_lower_bound


# ------------------------------------------------------------------ floating-point leaks named
def numpy_laplace_2d(D, rng, size):
    """A correct 2-D Laplace mechanism, as numpy computes it: D + Laplace(1) in float64. The
    ideal mechanism's loss on ((0, 0), (1, 0)) is 1."""
    return np.asarray(D, dtype=float) + rng.laplace(0.0, 1.0, (size, 2))


def _fp_audit(seed: int = 0):
    return audit(
        numpy_laplace_2d, ((0.0, 0.0), (1.0, 0.0)), PureDP(1.0), samples=100_000, seed=seed, noise_family="laplace"
    )


def test_floating_point_leak_is_named_and_re_audited():
    # At seed 0 the witness is a threshold on the attained maximum of the Laplace statistic
    # (a plateau whose values differ only in their last bits, spread over a few ulps): the
    # bound 1.09 > 1 is real for these floating-point outputs (the counts are fresh), and it
    # vanishes when every output is rounded to 6 significant digits (0.981, the same seed's
    # draws): a floating-point leak, not a noise-scale bug. Over seeds 0-19 this happens at
    # seed 0 only (before the weighted statistic, at 5 of 20 seeds).
    r = _fp_audit()
    assert r.verdict == VIOLATION and r.finding == "floating-point leak"
    fp = r.floating_point
    assert fp.leak and fp.digits == 6 and fp.rounded_verdict != VIOLATION
    assert fp.rounded_epsilon_lower_bound < 1.0 < r.epsilon_lower_bound
    assert "attained extreme" in fp.cause and "Mironov 2012" in fp.explanation
    assert "noise scale is not the issue" in fp.explanation
    d = r.to_dict()
    assert d["finding"] == "floating-point leak" and d["floating_point"]["leak"] is True


def test_planted_rounding_unnamed_reports_an_ordinary_loss():
    r = _with("floating-point-unnamed", _fp_audit)
    assert r.verdict == VIOLATION and r.finding == "privacy loss" and r.floating_point is None


def test_a_noise_bug_is_not_named_floating_point():
    # Laplace of scale 1/2 claimed at eps = 1 (true loss 2): the witness is an ordinary
    # threshold with no hit in a rounding band, so no re-audit and the finding is "privacy loss".
    def half_scale(D, rng, size):
        return np.asarray(D, dtype=float) + rng.laplace(0.0, 0.5, (size, 2))

    r = audit(half_scale, ((0.0, 0.0), (1.0, 0.0)), PureDP(1.0), samples=20_000, seed=0, noise_family="laplace")
    assert r.verdict == VIOLATION and r.finding == "privacy loss" and r.floating_point is None


def test_rounding_check_can_be_switched_off():
    r = audit(
        numpy_laplace_2d,
        ((0.0, 0.0), (1.0, 0.0)),
        PureDP(1.0),
        samples=100_000,
        seed=0,
        noise_family="laplace",
        rounding_check=False,
    )
    assert r.verdict == VIOLATION and r.floating_point is None


# ------------------------------------------------------------------ single coordinates in high dimension
def test_high_dimension_axes_are_the_moved_and_rescaled_coordinates():
    # d = 100 > 32: the axes tried are the 16 coordinates whose median moved most and the 16
    # whose spread changed most. Coordinate 37 moves by 3 (in Laplace(1) units: its median
    # difference is 3, the others' ~N(0, 0.03) at 5,000 per side) and coordinate 81's noise is
    # 5x smaller on one side (|ln 5| = 1.6 against ~0.03): both are found with > 40 sd to spare.
    from userdp.audits.engine import learned

    rng = np.random.default_rng(0)
    a, b = rng.laplace(size=(5000, 100)), rng.laplace(size=(5000, 100))
    a[:, 37] += 3.0
    b[:, 81] *= 0.2
    axes = learned._axes(a, b)
    assert 37 in axes and 81 in axes and axes.size <= 32
    assert learned._axes(a[:, :32], b[:, :32]).tolist() == list(range(32))  # d <= 32: every axis
