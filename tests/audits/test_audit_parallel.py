"""Any mechanism: calling conventions, shards over processes and a
Dask cluster, results that depend only on the seed, the reproducibility check, bad input.

Statistical tests here audit mechanisms far from the decision boundary; each says why its
false-failure probability is below 1e-4.
"""

import functools
import sys
import time
import types

import numpy as np
import pytest

from userdp.audits import MechanismError, audit
from userdp.audits.cli import main as cli
from userdp.audits.engine import parallel, streams
from userdp.audits.engine.parallel import (
    BATCHED,
    SCALAR,
    SCALAR_RNG,
    DuplicateStreamsError,
    SchedulerError,
    VaryingOutputError,
    calling_convention,
)
from userdp.reference.claims import PureDP


def lap_rng(D, rng):
    return D + rng.laplace()


def lap_own(D):
    return D + np.random.default_rng().laplace()  # ignores the audit's seed


def _key(r):
    """Everything an audit result says about the mechanism (not how long it took)."""
    pairs = [(p.epsilon_lower_bound, p.witness.counts, p.witness.rejection_set.to_dict()) for p in r.pairs]
    return (
        r.epsilon_lower_bound,
        r.verdict,
        r.witness.counts,
        r.witness.rejection_set.to_dict(),
        r.witness.pair_index,
        pairs,
    )


# ------------------------------------------------------------------ calling conventions
def _batched(D, rng, size): ...
def _batched_opt(D, rng=None, size=None): ...  # numpy's convention: size named
def _scalar_rng(D, rng): ...
def _scalar_opt_rng(D, rng=None): ...
def _scalar_rng_extra(D, rng, scale=1.0): ...
def _scalar(D): ...
def _scalar_opts(D, epsilon=1.0, bounds=None): ...  # a library call: its defaults kept
def _star(*args): ...
def _four(a, b, c, d): ...
def _none(): ...
def _kw_required(D, rng, *, epsilon): ...
def _opt_unnamed(D=None, x=None): ...


class _Callable:
    def __call__(self, D, rng):
        return D + rng.laplace()


@pytest.mark.parametrize(
    "f, calling",
    [
        (_batched, BATCHED),
        (_batched_opt, BATCHED),
        (lambda q, g, n: q, BATCHED),
        (_scalar_rng, SCALAR_RNG),
        (_scalar_opt_rng, SCALAR_RNG),
        (_scalar_rng_extra, SCALAR_RNG),
        (_scalar, SCALAR),
        (_scalar_opts, SCALAR),
        (_Callable(), SCALAR_RNG),
        (functools.partial(_scalar_opts, epsilon=2.0), SCALAR),
        (functools.partial(_four, 1), BATCHED),
    ],
)
def test_calling_convention_rule(f, calling):
    assert calling_convention(f) == calling


@pytest.mark.parametrize(
    "f, words",
    [
        (_star, "0 required positional"),
        (_four, "4 required positional"),
        (_none, "0 required positional"),
        (_kw_required, "keyword-only"),
        (_opt_unnamed, "0 required positional"),
        (max, "signature cannot be read"),
        (3.0, "must be callable"),
    ],
)
def test_ambiguous_or_uncallable_mechanisms_are_refused_naming_mechanism(f, words):
    with pytest.raises(TypeError, match="mechanism") as info:
        audit(f, (0.0, 1.0), PureDP(1.0), samples=1000, seed=0)
    assert words in str(info.value)


# ------------------------------------------------------------------ scalar mechanisms
@pytest.mark.parametrize(
    "make",
    [
        lambda: lambda D, rng: D + rng.laplace(0.0, 0.5),
        lambda: functools.partial(lambda D, g: D + g.laplace(0.0, 0.5), g=np.random.default_rng(11)),
    ],
)
def test_scalar_mechanisms_are_looped_and_audited(make):
    # true eps 2 against a claim of 1: at 2e4 samples eps_lb ~ 1.8 (as in test_audit_harness); a
    # miss needs a > 15 sd error, probability << 1e-4. The second, mechanism(dataset), draws
    # from its own generator, seeded here and run in one process, so the test is deterministic.
    r = audit(make(), (0.0, 1.0), PureDP(1.0), samples=20_000, seed=0, workers=1)
    assert r.verdict == "violation" and r.epsilon_lower_bound > 1.5
    assert r.calling in (SCALAR, SCALAR_RNG) and r.witness.counts["n_per_side"] == 18_000


def test_correct_scalar_mechanism_not_flagged():
    # correct Laplace at confidence 0.9999: flagged with probability <= 1e-4 (harness.py)
    r = audit(lap_rng, (0.0, 1.0), PureDP(1.0), samples=20_000, seed=1, workers=1, confidence=0.9999)
    assert r.verdict == "no violation found" and r.reproducible is True


def test_result_depends_only_on_the_seed_not_on_the_workers(monkeypatch):
    # 4 pairs (a pilot ranks them, 3 confirmed), 12000 outputs per side = 3 shards per side
    pairs = [(0.0, 1.0), (0.0, 0.5), (0.0, 2.0), (1.0, 1.25)]
    runs = [audit(lap_rng, pairs, PureDP(1.0), samples=12_000, seed=5, workers=w) for w in (1, 2, 3)]
    assert _key(runs[0]) == _key(runs[1]) == _key(runs[2])
    assert len(runs[0].pairs) == 3
    # planted bug: shards cut by something other than the sample count (here a shard size
    # that a worker count could have chosen) give other random numbers, and the check sees it
    monkeypatch.setattr(parallel, "SHARD", 4000)
    assert _key(audit(lap_rng, pairs, PureDP(1.0), samples=12_000, seed=5, workers=2)) != _key(runs[0])


def test_scalar_outputs_are_stacked_in_call_order():
    # the shards are stacked in their order, whichever worker finished first
    calls = parallel.Sampler(lambda D, rng: rng.integers(0, 2**62), workers=2)
    with calls:
        a = calls(None, np.random.default_rng(3), 3 * parallel.SHARD + 7)
    with parallel.Sampler(lambda D, rng: rng.integers(0, 2**62), workers=1) as one:
        b = one(None, np.random.default_rng(3), 3 * parallel.SHARD + 7)
    assert a.shape == (3 * parallel.SHARD + 7,) and np.array_equal(a, b)
    assert np.unique(a).size == a.size  # 62-bit draws: a repeat has probability < 1e-10


def test_progress_per_shard():
    lines = []
    pair = types.SimpleNamespace(first=0.0, second=1.0, description="the-pair")
    audit(lap_rng, pair, PureDP(1.0), samples=12_000, seed=0, workers=2, progress=lines.append)
    shard = [s for s in lines if "shard" in s]
    assert shard and all("3 shards of 12000 releases" in s for s in shard)
    assert any(s.startswith("first dataset of the-pair: shard") for s in shard)
    assert any(s.startswith("second dataset of the-pair: shard") for s in shard)


# ------------------------------------------------------------------ outputs that change
def _changing(at: int, second):
    state = {"calls": 0}

    def mech(D, rng):
        state["calls"] += 1
        return second(D) if state["calls"] > at else D + rng.laplace()

    return mech


@pytest.mark.parametrize(
    "at, second, words",
    [
        (7, lambda D: np.array([D, D]), ["call 7 returned shape (2,) (float)", "call 0 returned shape () (float)"]),
        (11, lambda D: 3, ["call 11 returned shape () (integer)", "() (float)"]),
        (parallel.SHARD, lambda D: np.array([D]), [f"call {parallel.SHARD} returned shape (1,)"]),  # across shards
    ],
)
def test_varying_output_shape_or_type_is_an_error_naming_the_calls(at, second, words):
    with parallel.Sampler(_changing(at, second), workers=1) as s, pytest.raises(VaryingOutputError) as info:
        s(0.0, np.random.default_rng(0), 12_000)
    for w in words:
        assert w in str(info.value), (w, str(info.value))
    with pytest.raises(MechanismError) as info:  # in an audit: the pair's error
        audit(_changing(at, second), (0.0, 1.0), PureDP(1.0), samples=12_000, seed=0, workers=1)
    assert isinstance(info.value.__cause__, VaryingOutputError)


def test_varying_output_exits_3_in_the_cli(capsys, monkeypatch, tmp_path):
    (tmp_path / "varying_mech.py").write_text(
        "import numpy as np\n"
        "def make():\n"
        "    def mech(D, rng):\n"
        "        x = rng.laplace()\n"
        "        return np.array([x, x]) if x > 4 else x\n"  # about 1 call in 110
        "    return mech, [(0.0, 1.0)]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code = cli.main(["audit", "varying_mech:make", "--claim", "pure:epsilon=1", "--samples", "2000"])
    out, err = capsys.readouterr()
    # Pr[no output above 4 in 2000 Laplace draws] = (1 - e^-4 / 2)^2000 < 1e-7
    assert code == 3 and not out
    assert "varying shape or type" in err and "returned shape (2,)" in err and "returned shape ()" in err


# ------------------------------------------------------------------ reproducibility (item 2)
def test_a_mechanism_ignoring_the_rng_is_reported_not_reproducible(capsys, monkeypatch, tmp_path):
    assert audit(lap_rng, (0.0, 1.0), PureDP(1.0), samples=1000, seed=0, workers=1).reproducible is True
    assert (
        audit(lambda D, rng, n: D + rng.laplace(size=n), (0.0, 1.0), PureDP(1.0), samples=1000, seed=0).reproducible
        is True
    )
    own = audit(lap_own, (0.0, 1.0), PureDP(1.0), samples=1000, seed=0, workers=1)
    assert own.reproducible is False and own.report_dict()["reproducible"] is False
    own_batched = audit(
        lambda D, rng, n: D + np.random.default_rng().laplace(size=n), (0.0, 1.0), PureDP(1.0), samples=1000, seed=0
    )
    assert own_batched.reproducible is False
    (tmp_path / "own_rng_mech.py").write_text(
        "import numpy as np\ndef make():\n    return (lambda D: D + np.random.default_rng().laplace()), [(0.0, 1.0)]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code = cli.main(["audit", "own_rng_mech:make", "--claim", "pure:epsilon=1", "--samples", "2000", "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1) and '"reproducible": false' in out
    assert "not reproducible from its seed" in err


def test_workers_replaying_a_copied_generator_are_refused():
    g = np.random.default_rng(7)  # created once, copied into every forked worker

    def copied(D):
        return D + g.laplace()

    with pytest.raises(MechanismError) as info:
        audit(copied, (0.0, 1.0), PureDP(1.0), samples=20_000, seed=0, workers=2)
    assert isinstance(info.value.__cause__, DuplicateStreamsError) and "not independent" in str(info.value)
    # in one process the generator is one stream: independent samples, nothing to refuse
    assert audit(copied, (0.0, 1.0), PureDP(1.0), samples=20_000, seed=0, workers=1).reproducible is False


def test_global_numpy_generator_is_reseeded_in_the_workers():
    # np.random.laplace: each forked worker reseeds numpy's global generator, so shards differ
    with parallel.Sampler(lambda D: np.random.laplace(), workers=2) as s:
        s.reproducible = False
        out = s(0.0, np.random.default_rng(0), 4 * parallel.SHARD)
    assert np.unique(out).size == out.size  # continuous draws: a repeat has probability 0


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "workers, exc", [(0, ValueError), (-2, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)]
)
def test_bad_workers_refused(workers, exc):
    with pytest.raises(exc, match="workers"):
        audit(lap_rng, (0.0, 1.0), PureDP(1.0), samples=1000, seed=0, workers=workers)


@pytest.mark.parametrize("value, words", [("0", "got 0"), ("-1", "got -1"), ("1.5", "got '1.5'"), ("two", "got 'two'")])
def test_cli_bad_workers_exit_2(capsys, value, words):
    code = cli.main(["audit", "control.laplace", "--samples", "1000", "--workers", value])
    _, err = capsys.readouterr()
    assert code == 2 and "--workers" in err and "integer >= 1" in err and words in err


def test_cli_workers_and_scheduler_exclude_each_other(capsys):
    code = cli.main(["audit", "control.laplace", "--workers", "2", "--scheduler", "tcp://127.0.0.1:9"])
    assert code == 2 and "exclude each other" in capsys.readouterr().err


def test_scheduler_without_distributed_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now raises ImportError
    with pytest.raises(SchedulerError, match=r"userdp\[distributed\]"):
        audit(lap_rng, (0.0, 1.0), PureDP(1.0), samples=1000, seed=0, scheduler="tcp://127.0.0.1:9")


# ------------------------------------------------------------------ Dask
def test_unreachable_scheduler_fails_within_the_time_limit(capsys, monkeypatch, tmp_path):
    pytest.importorskip("distributed", reason="the optional extra 'distributed' (installed by .[test])")
    monkeypatch.setattr(parallel, "SCHEDULER_TIMEOUT", 2.0)
    (tmp_path / "scalar_mech.py").write_text(
        "def make():\n    return (lambda D, rng: D + rng.laplace()), [(0.0, 1.0)]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    t = time.perf_counter()
    code = cli.main(["audit", "scalar_mech:make", "--claim", "pure:epsilon=1", "--scheduler", "tcp://127.0.0.1:9"])
    _, err = capsys.readouterr()
    assert code == 2 and "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9' within 2 s" in err
    assert time.perf_counter() - t < 15


def test_dask_local_cluster_gives_the_same_result():
    distributed = pytest.importorskip("distributed", reason="the optional extra 'distributed' (installed by .[test])")

    def mech(D, rng):  # defined here: cloudpickle sends it by value to the workers
        return D + rng.laplace()

    pairs = [(0.0, 1.0), (0.0, 0.5)]
    local = audit(mech, pairs, PureDP(1.0), samples=12_000, seed=2, workers=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        remote = audit(mech, pairs, PureDP(1.0), samples=12_000, seed=2, scheduler=cluster.scheduler_address)
    assert _key(remote) == _key(local)


def test_plot_of_a_scalar_mechanism(capsys, monkeypatch, tmp_path):
    pytest.importorskip("matplotlib", reason="the plot extra (installed by .[test])")
    (tmp_path / "scalar_plot_mech.py").write_text(
        "def make():\n    return (lambda D, rng: D + rng.laplace()), [(0.0, 1.0)]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    png = tmp_path / "w.png"
    code = cli.main(
        [
            "audit",
            "scalar_plot_mech:make",
            "--claim",
            "pure:epsilon=1",
            "--samples",
            "2000",
            "--plot",
            str(png),
            "--workers",
            "1",
            "--confidence",
            "0.9999",
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0 and png.stat().st_size > 0 and "one release per call" in err  # 0 w.p. >= 1 - 1e-4


# ------------------------------------------------------------------ copied buffers, weak checks (gallery)
_BUFFER = []  # a generator's buffer of random values, filled once in this process


def _buffered(D):
    """Like Google's SecureURBG (python-dp, PipelineDP): values come from a process-wide buffer
    filled once from the operating system; a forked worker inherits a copy of what is left,
    then draws fresh values of its own."""
    if not _BUFFER:
        _BUFFER.extend(np.random.default_rng().laplace(size=2000).tolist())
        _BUFFER.append(None)  # the end of the inherited buffer
    head = _BUFFER.pop(0) if _BUFFER[0] is not None else None
    return D + (head if head is not None else np.random.default_rng().laplace())


def test_workers_sharing_a_copied_buffer_prefix_are_refused(monkeypatch):
    """8 shards over 2 forked workers: the first shard each worker runs starts with the same
    ~2000 buffered values (the reproducibility check spends 32 in the parent), so two shards
    share a prefix though the rest of them differ. Planted bug: comparing whole shards only
    (the check before the gallery found python-dp's buffer) lets it through. Forked workers
    are what a mechanism that cannot be pickled gets; ``_buffered`` can be, so the fork is
    forced here. With the default start (a fork server) each worker imports this module
    afresh and fills a buffer of its own: nothing is replayed and the audit runs."""
    _BUFFER.clear()
    assert audit(_buffered, (0.0, 1.0), PureDP(1.0), samples=40_000, seed=0, workers=2).samples == 40_000
    monkeypatch.setattr(parallel, "START_METHOD", "fork")
    _BUFFER.clear()
    with pytest.raises(MechanismError) as info:
        audit(_buffered, (0.0, 1.0), PureDP(1.0), samples=40_000, seed=0, workers=2)
    assert isinstance(info.value.__cause__, DuplicateStreamsError) and "the same first" in str(info.value)
    _BUFFER.clear()
    monkeypatch.setattr(streams, "prefix_length", lambda *a: None)  # the planted bug
    with pytest.raises(MechanismError, match="reappear at call"):  # the window check still sees the copy
        audit(_buffered, (0.0, 1.0), PureDP(1.0), samples=40_000, seed=0, workers=2)
    _BUFFER.clear()
    monkeypatch.setattr(streams, "window_length", lambda *a: None)  # and without it: let through
    assert audit(_buffered, (0.0, 1.0), PureDP(1.0), samples=40_000, seed=0, workers=2).samples == 40_000


def test_prefix_length_keeps_false_refusals_below_1e_12():
    """K = ceil(ln(1e-12 / C(n, 2)) / ln q) for collision probability q, with 8 shards (C = 28):
    continuous outputs, q = 1/40000 (all distinct), K = ceil(31.0 / 10.6) = 3; a fair coin
    (q = 1/2) K = ceil(44.7) = 45; a constant output has no K."""
    rng = np.random.default_rng(0)
    cont = [(rng.normal(size=5000), np.zeros(5000, bool)) for _ in range(8)]
    coin = [(rng.integers(0, 2, 5000), np.zeros(5000, bool)) for _ in range(8)]
    assert streams.prefix_length(cont, 5000, 8) == 3
    assert streams.prefix_length(coin, 5000, 8) in (45, 46)  # q-hat within 1e-3 of 1/2
    assert streams.prefix_length([(np.ones(5000), np.zeros(5000, bool))] * 8, 5000, 8) is None


def test_reproducibility_needs_outputs_that_vary():
    """An empty partition that never releases (first side) says nothing about the rng; the
    second side, drawing from its own generator, shows it is ignored. (The check before the
    gallery read 2 outputs of the first dataset and reported such mechanisms reproducible.)"""

    def own(D, rng):
        return None if len(D) == 0 else len(D) + np.random.default_rng().laplace()

    r = audit(own, ((), (7,)), PureDP(1.0), samples=2000, seed=0, workers=1)
    assert r.reproducible is False

    def silent(D, rng):
        return None

    assert audit(silent, ((), (7,)), PureDP(1.0), samples=2000, seed=0, workers=1).reproducible is None
    # the first dataset alone (the old check's only one): equal constants are no evidence either way
    assert parallel.check_reproducible(parallel.Sampler(own), ((),), np.random.SeedSequence(0)) is None
