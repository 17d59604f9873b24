""" "No release" outputs: a release that publishes nothing, e.g. a
partition dropped by private partition selection, is returned as ``None`` (one release per
call) or as a masked row (batched), and both the continuous and the discrete tests see it.

The mechanism below is the textbook thresholded count (Korolova et al. 2009; the shape of
PipelineDP's and Google's partition selection): a partition with no user does not exist,
so nothing is released; a partition with n >= 1 users releases c = n + Lap(1/eps), only
when c >= tau. On the worst-case pair "one user vs empty partition" (add/remove-user) the
event {released} has probability delta_0 = Pr[1 + Lap(1/eps) >= tau] = exp(-eps (tau - 1)) / 2
(tau >= 1) on the first side and 0 on the second: the mechanism is (eps, delta_0)-DP on this
pair, and no smaller delta is, since for that set p - e^eps q = delta_0.
"""

import json
import math

import numpy as np
import pytest

from userdp.audits import VIOLATION, audit
from userdp.audits.cli.main import main
from userdp.audits.engine.parallel import Sampler
from userdp.audits.engine.thresholds import Threshold
from userdp.audits.engine.value_sets import ValueSet, ValueThreshold
from userdp.audits.engine.sampling import NO_RELEASE, as_outputs, encode, released_floats
from userdp.reference.claims import ApproxDP

EPS, TAU = 1.0, 6.0
DELTA_0 = 0.5 * math.exp(-EPS * (TAU - 1.0))  # 3.4e-3
PAIR = ((7,), ())  # one user's record vs the empty partition


def thresholded_count(tau: float, integer: bool = False):
    """One release per call: None for an empty partition or a noisy count below tau."""
    q = 1.0 - math.exp(-EPS)

    def mechanism(partition, rng):
        if len(partition) == 0:
            return NO_RELEASE
        noise = int(rng.geometric(q) - rng.geometric(q)) if integer else float(rng.laplace(0.0, 1.0 / EPS))
        c = len(partition) + noise
        return c if c >= tau else NO_RELEASE

    return mechanism


def batched_thresholded_count(tau: float):
    """The same release, batched: a masked array whose masked rows are "no release"."""

    def mechanism(partition, rng, size):
        if len(partition) == 0:
            return np.ma.MaskedArray(np.zeros(size), mask=True)
        c = len(partition) + rng.laplace(0.0, 1.0 / EPS, size)
        return np.ma.MaskedArray(c, mask=c < tau)

    return mechanism


CONFIDENCE = 1 - 1e-4  # a correct mechanism is flagged with probability <= 1e-4 (the audit's guarantee)
MAKE = {
    "continuous": thresholded_count,
    "discrete": lambda tau: thresholded_count(tau, integer=True),
    "batched": batched_thresholded_count,
}
# The geometric variant's delta: Pr[1 + Z >= 6] = Pr[Z >= 5] = e^-5 / (1 + e^-1) = 4.9e-3 > DELTA_0
# (two-sided geometric Z, Pr[Z = z] = (1 - e^-1) / (1 + e^-1) e^-|z|).
DELTA = {"continuous": DELTA_0, "discrete": math.exp(-EPS * (TAU - 1)) / (1 + math.exp(-EPS)), "batched": DELTA_0}


@pytest.mark.parametrize("kind", list(MAKE))
def test_correct_partition_selection_is_not_flagged_and_a_low_threshold_is(kind):
    """Claim (EPS, delta), the exact delta on this pair.

    Planted bug: tau = 3 under the claim for tau = 6, true delta 0.5 e^-2 = 0.068 (continuous;
    the geometric one is larger). On the counting share (18,000 per side) {released} is hit
    ~1,200 times on the first side and never on the second: eps_lb = ln((p_lo - delta)/q_hi)
    with p_lo > 0.05 (> 8 sd below 0.068), q_hi <= ln(1/alpha)/18000 = 5.1e-4 (alpha = 1e-4 /
    m), i.e. eps_lb > ln(0.045 / 5.1e-4) = 4.5 > 3: a miss is a > 8 sd event."""
    claim = ApproxDP(EPS, DELTA[kind])
    ok = audit(MAKE[kind](TAU), PAIR, claim, samples=20_000, seed=3, confidence=CONFIDENCE)
    assert ok.verdict != VIOLATION, (ok.epsilon_lower_bound, ok.witness.rejection_set.describe())
    r = audit(MAKE[kind](3.0), PAIR, claim, samples=20_000, seed=3, confidence=CONFIDENCE)
    assert r.verdict == VIOLATION and r.epsilon_lower_bound > 3.0
    assert r.witness.counts["second"] == 0
    # the witness holds every release of the first side (all >= 3) and no "no release"
    assert r.witness.rejection_set.contains(as_outputs([5.0, 3.0, None, 11.0])).tolist() == [True, True, False, True]


def test_the_witness_is_the_release_event():
    r = audit(thresholded_count(3.0), PAIR, ApproxDP(EPS, DELTA_0), samples=20_000, seed=3, confidence=CONFIDENCE)
    assert r.witness.rejection_set.describe() in (
        "{released}",
        "{x >= 3}",
    ) or r.witness.rejection_set.describe().startswith("{x >= 3.")


def test_encoding_of_no_release():
    a = as_outputs([1.5, None, 2.0])
    assert np.ma.isMaskedArray(a) and np.ma.getmaskarray(a).tolist() == [False, True, False]
    assert np.isnan(released_floats(a)).tolist() == [False, True, False]
    rows = as_outputs([[1, 2], None, [3, 4]])  # rows and None: a masked row
    assert np.ma.getmaskarray(rows).tolist() == [[False, False], [True, True], [False, False]]
    assert isinstance(as_outputs([1.0, 2.0]), np.ndarray) and not np.ma.isMaskedArray(as_outputs([1.0, 2.0]))
    ca, cb, values = encode(as_outputs([3, None, 3, 1]), as_outputs([None, None, 1, 1]), "discrete")
    assert values == [1, 3, None]  # None is one more value, last
    assert ca.tolist() == [1, 2, 1, 0] and cb.tolist() == [2, 2, 0, 0]
    fa, fb, _ = encode(as_outputs([3.0, None]), np.array([1.0, 2.0]), "continuous")
    assert np.isnan(fa).tolist() == [False, True] and fb.tolist() == [1.0, 2.0]


def test_sets_with_no_release_and_their_reports():
    x = as_outputs([1.0, None, 5.0])
    assert Threshold("upper", 2.0).contains(x).tolist() == [False, False, True]
    assert Threshold("upper", 2.0, missing=True).contains(x).tolist() == [False, True, True]
    assert Threshold("upper", -math.inf).describe() == "{released}"
    assert Threshold("upper", math.inf, missing=True).describe() == "{no release}"
    assert Threshold("lower", 2.0, missing=True).describe() == "{x <= 2 or no release}"
    assert Threshold("lower", 2.0, missing=True).to_dict()["no_release"] is True
    vs = ValueSet((None, 5.0))
    assert vs.contains(x).tolist() == [False, True, True] and vs.describe() == "{no release, 5.0}"
    assert vs.to_dict()["values"] == ["no release", 5.0]
    vt = ValueThreshold("upper", 5.0, missing=True)
    assert vt.contains(x).tolist() == [False, True, True] and vt.describe() == "{x >= 5 or no release}"


def test_bad_no_release_outputs_are_refused():
    # Cells of a multi-partition release may be None (tests/audits/test_audit_multipartition.py);
    # what stays refused: rows of different lengths, a cell that is no number, a partly masked
    # output that has no cells (a (size, k, j) array).
    with pytest.raises(ValueError, match="2 and 3 cells"):
        as_outputs([[1.0, None], [2.0, 3.0, None]])
    with pytest.raises(ValueError, match="neither a number nor None"):
        as_outputs([[1.0, None], ["a", 3.0]])
    with pytest.raises(ValueError, match="partly masked"):
        as_outputs(np.ma.MaskedArray(np.zeros((1, 2, 2)), mask=[[[True, False], [False, False]]]))

    def nan_mechanism(D, rng, size):
        return np.full(size, np.nan)

    with pytest.raises(ValueError, match="NaN.*return None for no release"):
        audit(nan_mechanism, PAIR, ApproxDP(EPS, DELTA_0), samples=2000, seed=0)

    with pytest.raises(ValueError, match="noise_family='laplace'.*'no release'"):
        audit(thresholded_count(TAU), PAIR, ApproxDP(EPS, DELTA_0), samples=2000, seed=0, noise_family="laplace")


def test_shards_with_no_release_at_all_join_the_others():
    """Shards of 5000 releases: the first shard below releases nothing at all (its calls
    0-4999), the rest release floats; one side, whatever the number of workers."""

    def mechanism(D, rng):
        return None if mechanism.calls < 5000 or rng.random() < 0.5 else float(rng.normal())

    mechanism.calls = 0

    def counting(D, rng):
        out = mechanism(D, rng)
        mechanism.calls += 1
        return out

    with Sampler(counting) as s:
        out = s((1,), np.random.default_rng(0), 12_000)
    assert np.ma.isMaskedArray(out) and out.dtype.kind == "f" and out.shape == (12_000,)
    m = np.ma.getmaskarray(out)
    assert m[:5000].all() and 0.4 < m[5000:].mean() < 0.6  # Bin(7000, 1/2): > 16 sd margins


@pytest.mark.parametrize("workers", [1, 2])
def test_results_do_not_depend_on_workers_with_no_release(workers):
    r = audit(thresholded_count(3.0), PAIR, ApproxDP(EPS, DELTA_0), samples=12_000, seed=5, workers=workers)
    ref = audit(thresholded_count(3.0), PAIR, ApproxDP(EPS, DELTA_0), samples=12_000, seed=5, workers=1)
    assert (r.epsilon_lower_bound, r.witness.counts) == (ref.epsilon_lower_bound, ref.witness.counts)


def test_cli_json_names_no_release(tmp_path, monkeypatch, capsys):
    (tmp_path / "psel.py").write_text(
        "import math\n"
        "def make_setup():\n"
        "    from userdp.reference.claims import ApproxDP\n"
        "    def mechanism(partition, rng):\n"
        "        if not partition:\n"
        "            return None\n"
        "        c = len(partition) + rng.laplace(0.0, 1.0)\n"
        "        return c if c >= 3.0 else None\n"
        "    return mechanism, [((7,), ())]\n"
    )
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "audit",
            "psel:make_setup",
            "--claim",
            f"approx:epsilon=1,delta={0.5 * math.exp(-5.0)!r}",
            "--samples",
            "12000",
            "--json",
            "--workers",
            "1",
        ]
    )
    d = json.loads(capsys.readouterr().out)
    assert code == 1 and d["verdict"] == "violation"
    assert d["witness"]["rejection_set"]["description"] in ("{released}",) or d["witness"]["rejection_set"][
        "description"
    ].startswith("{x >= ")


@pytest.mark.parametrize("kind", ["continuous", "discrete"])
def test_plot_shows_the_no_release_mass(kind, tmp_path):
    """--plot draws released values as fractions of all outputs and names the "no release"
    share; an empty side and an infinite t ({released}) plot without a warning (warnings are
    errors here)."""
    from userdp.audits.engine import plot
    from userdp.audits.engine.parallel import batched

    mech = batched(MAKE[kind](3.0))
    r = audit(mech, PAIR, ApproxDP(EPS, DELTA[kind]), samples=5000, seed=0)
    path = tmp_path / f"{kind}.png"
    plot.plot_audit(mech, r, str(path), samples=2000, name="partition selection")
    assert path.stat().st_size > 10_000
