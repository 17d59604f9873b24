"""Seeds: one seed gives the same releases, two seeds give different ones, for Python targets and
programs alike, under ``audit`` and ``validate``; and worker processes that replay copies of one
generator, shifted, are refused.

A target that ignores its seed replays one stream: every call of an audit or a check is a copy of
the first, so no verdict on it means anything. Before this check, a program answering from one
fixed seed got "violation" at ``--batch 20`` and "no violation found" at the default batch, and
``validate`` a silent PASS ("reproducible: yes"). Each test has its planted bug: the check turned
off gives the old verdict back.

False alarms (``engine/parallel.py``, ``SEED_FALSE_ALARM``): a varying call of n = 16 independent
releases has probability at most max_p p^15 (1 - p) = (15/16)^15 / 16 = 0.0237 of being drawn again
by an independent seed, so four other seeds all repeating it has probability <= 0.0237^4 = 3.2e-7, for any
output distribution (the discrete worst case is tested below).
"""

from __future__ import annotations

import json
import math
import pathlib
import sys

import numpy as np
import pytest

from test_audit_cli import run  # tests/audits is on sys.path (rootdir conftest)
from userdp.audits.engine import parallel, streams
from userdp.audits.engine.harness import audit
from userdp.audits.engine.parallel import NotReproducibleError, SeedIgnoredError
from userdp.audits.validation import protocol as Pr
from userdp.audits.validation import target as T
from userdp.reference.claims import PureDP

PROGRAM = pathlib.Path(__file__).with_name("protocol_program.py")
AUDIT = [
    "--claim",
    "pure:epsilon=1",
    "--relation",
    "add-remove-user",
    "--kwargs",
    '{"T": 1, "epsilon": 1}',
    "--pair",
    "[0.5, 1.0]",
    "[0.5]",
    "--samples",
    "4000",
]


def program(mode: str) -> str:
    return f"{sys.executable} -S {PROGRAM} {mode}"


def fixed(D, rng, n):
    """Laplace noise from one fixed seed: ignores the generator it is given."""
    return D + np.random.default_rng(12345).laplace(size=n)


def honest(D, rng, n):
    return D + rng.laplace(size=n)


def test_the_false_alarm_bound_is_the_closed_form():
    n, tries = parallel.REPRO_DRAWS, parallel.SEED_TRIES
    worst = max(p ** (n - 1) * (1 - p) for p in np.linspace(0, 1, 100_001))  # brute force over p
    assert worst == pytest.approx((15 / 16) ** 15 / 16, rel=1e-6)
    assert parallel.SEED_FALSE_ALARM == pytest.approx(worst**tries, rel=1e-5) and parallel.SEED_FALSE_ALARM <= 1e-4


def test_a_python_mechanism_that_ignores_its_generator_is_refused(monkeypatch):
    with pytest.raises(SeedIgnoredError, match="ignores the seed it is given.*5 different seeds"):
        audit(fixed, (0.0, 1.0), PureDP(1.0), samples=2000, seed=0)
    assert audit(honest, (0.0, 1.0), PureDP(1.0), samples=2000, seed=0).reproducible is True
    # a deterministic mechanism (no noise) is not "ignoring its seed": nothing varies, and the
    # audit itself finds the violation, as before
    r = audit(lambda D, rng, n: np.full(n, D), (0.0, 1.0), PureDP(1.0), samples=2000, seed=0)
    assert r.reproducible is None and r.verdict == "violation"
    monkeypatch.setattr(parallel, "_check_seed_used", lambda *a: None)  # the planted bug: one seed only
    assert audit(fixed, (0.0, 1.0), PureDP(1.0), samples=2000, seed=0).reproducible is True


def test_a_mechanism_that_promises_its_seed_must_keep_it():
    def own(D, rng, n):
        return D + np.random.default_rng().laplace(size=n)

    assert audit(own, (0.0, 1.0), PureDP(1.0), samples=2000, seed=0).reproducible is False  # a warning
    setattr(own, parallel.SEEDED, True)  # as a program over the protocol is
    with pytest.raises(NotReproducibleError, match="broke its seed"):
        audit(own, (0.0, 1.0), PureDP(1.0), samples=2000, seed=0)


def test_a_discrete_target_near_its_worst_case_is_not_flagged():
    """Batched draws of a coin with p = 15/16 (the bound's worst case): over 200 checks the seeds are
    told apart every time (Pr[a false alarm in 200] <= 200 x 3.2e-7 = 6.4e-5)."""

    def coin(D, rng, n):
        return (rng.random(n) < 15 / 16).astype(float) + D

    flagged = 0
    for s in range(200):
        try:
            parallel.check_reproducible(parallel.Sampler(coin), (0.0, 1.0), np.random.SeedSequence(s))
        except SeedIgnoredError:
            flagged += 1
    assert flagged == 0


@pytest.mark.parametrize("batch", ["20", "10000"])
def test_audit_of_a_program_that_ignores_the_seed_exits_3_at_any_batch(capsys, batch):
    code, out, err = run(capsys, "audit", "--command", program("fixed-seed"), *AUDIT, "--batch", batch)
    assert code == 3 and out == ""
    assert "ignores the seed it is given" in err and "5 different seeds returned the same 16 varying outputs" in err


def test_audit_of_a_program_whose_seed_does_not_reproduce_exits_3(capsys, monkeypatch):
    code, out, err = run(capsys, "audit", "--command", program("unseeded"), *AUDIT)
    assert code == 3 and out == ""
    assert "broke its seed" in err and "two calls with generators from one seed returned different outputs" in err
    monkeypatch.setattr(parallel, "SEEDED", "no_such_attribute")  # the planted bug: programs held to nothing
    monkeypatch.setattr("userdp.audits.engine.harness.SEEDED", "no_such_attribute")
    code, out, err = run(capsys, "audit", "--command", program("unseeded"), *AUDIT, "--json")
    assert code in (0, 1) and json.loads(out)["reproducible"] is False


@pytest.mark.parametrize(
    "mode, says",
    [
        ("fixed-seed", "ignores the seed it is given: calls with generators from 5 different seeds"),
        ("unseeded", "broke its seed: two calls with one seed (16 releases each"),
    ],
)
def test_validate_of_a_program_that_breaks_its_seed_exits_3(capsys, mode, says):
    code, out, err = run(capsys, "validate", "amin2019.capped-sum", "--command", program(mode), "--quick")
    assert code == 3 and "PASS" not in out
    assert says in err


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fixed-seed", "unseeded"])
def test_planted_validate_without_the_seed_checks_grades_the_copies(capsys, monkeypatch, mode):
    monkeypatch.setattr(T, "SEED_CASES", 0)  # the planted bug: no seed check before the checks,
    monkeypatch.setattr(parallel, "_check_seed_used", lambda *a: None)  # nor in the audits' harness
    code, out, err = run(capsys, "validate", "amin2019.capped-sum", "--command", program(mode), "--quick")
    assert code != 3, err


TARGETS = '''
import numpy as np
from userdp.reference import amin2019 as A


def fixed_seed(dataset, rng, size, *, T, epsilon):
    """The capped sum with correct noise, drawn from one fixed seed."""
    g = A.statistic(dataset, T)
    return g + np.random.default_rng(7).laplace(scale=T / epsilon, size=size)


def frozen(dataset, rng, *, T, epsilon):
    """One release per call, every call the same: one fixed draw (nothing varies, under any seed)."""
    if not (epsilon > 0 and T > 0):
        raise ValueError(f"epsilon and T must be > 0, got {epsilon}, {T}")
    return A.statistic(dataset, T) + np.random.default_rng(7).laplace(scale=T / epsilon)


def own_generator(dataset, rng, *, T, epsilon):
    """Correct, one release per call, from a generator of its own (the documented warning)."""
    if not (epsilon > 0 and T > 0):  # refused before a record is read, as the reference does
        raise ValueError(f"epsilon and T must be > 0, got {epsilon}, {T}")
    return A.statistic(dataset, T) + np.random.default_rng().laplace(scale=T / epsilon)
'''


def test_validate_of_a_python_target_that_ignores_its_rng_exits_3(capsys, monkeypatch, tmp_path):
    (tmp_path / "seedy.py").write_text(TARGETS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "seedy", raising=False)
    code, out, err = run(capsys, "validate", "amin2019.capped-sum", "seedy:fixed_seed", "--quick")
    assert code == 3 and "ignores the seed it is given" in err and "seedy:fixed_seed" in err


@pytest.mark.slow
def test_validate_of_a_frozen_or_own_generator_python_target(capsys, monkeypatch, tmp_path):
    (tmp_path / "seedy.py").write_text(TARGETS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "seedy", raising=False)
    # nothing varies within a call, under any seed: no evidence about the seed (not exit 3), and the
    # checks of the releases themselves find that there is no noise: never a PASS
    code, out, err = run(capsys, "validate", "amin2019.capped-sum", "seedy:frozen", "--quick")
    assert code == 1 and "PASS" not in out, err
    code, out, err = run(capsys, "validate", "amin2019.capped-sum", "seedy:own_generator", "--quick", "--json")
    assert code == 0 and json.loads(out)["reproducible"] is False  # a warning, not an error: still independent


def test_the_seed_check_keys_compare_releases_exactly():
    a = np.array([1.0, np.nan, 2.0])
    assert T._keys(a, T.BATCHED) == T._keys(a.copy(), T.BATCHED)  # NaN equals NaN, bit for bit
    assert T._keys(a, T.BATCHED) != T._keys(a + np.array([0, 0, 1e-12]), T.BATCHED)
    parts = (np.zeros((3, 2, 2)), np.arange(6.0).reshape(3, 2))
    assert len(T._keys(parts, T.BATCHED)) == 3 and len(set(T._keys(parts, T.BATCHED))) == 3
    assert T._keys([None, 1.0, [1.0, 2.0]], T.ONE)[0] == b"None"
    assert T._keys(np.float64(1.0), T.BATCHED) is None  # not a sequence of releases: the checks name it
    assert getattr(Pr.ProcessTarget, parallel.SEEDED) is True


# ------------------------------------------------------------------ workers replaying one generator, shifted
MODGEN = """
import numpy as np

G = np.random.default_rng(7)  # created at import: each worker process imports it afresh, seeded alike


def lap(d):
    return 10.0 * len(d) + 10.0 * G.laplace()
"""


MODGEN_ARGS = ["--mechanism", "modgen:lap", "--pair", "[1,1,1]", "[1,1]", "--relation", "add-remove-record"]
MODGEN_ARGS += ["--claim", "pure:epsilon=1", "--samples", "20000", "--workers", "2"]


def test_workers_replaying_a_module_generator_shifted_are_refused(capsys, monkeypatch, tmp_path):
    """The first probe's: each worker imports the module and gets the same generator, while this
    process has drawn the reproducibility check's 32 outputs from its own copy first: the shards
    are one stream shifted by 32 calls, so no whole shard and no prefix is repeated, and the audit
    said "no violation found", exit 0. Planted bug: without the window check it does again."""
    (tmp_path / "modgen.py").write_text(MODGEN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "modgen", raising=False)
    code, out, err = run(capsys, "audit", *MODGEN_ARGS)
    assert code == 3 and out == ""
    assert "not independent across worker processes" in err and "reappear at call" in err


@pytest.mark.slow
def test_planted_without_the_window_check_the_shifted_copies_pass(capsys, monkeypatch, tmp_path):
    (tmp_path / "modgen.py").write_text(MODGEN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "modgen", raising=False)
    monkeypatch.setattr(streams, "window_length", lambda *a: None)  # the planted bug
    code, out, err = run(capsys, "audit", *MODGEN_ARGS)
    assert code == 0 and "no violation found" in out


def test_window_hashes_are_the_polynomial_hash_of_each_window():
    rng = np.random.default_rng(0)
    u = rng.integers(0, 2**63, size=40, dtype=np.uint64)
    K, M = 5, 1 << 64
    direct = [sum(int(u[i + t]) * pow(streams._B, K - 1 - t, M) for t in range(K)) % M for i in range(40 - K + 1)]
    assert streams.window_hashes(u, K).tolist() == direct
    assert streams.window_hashes(u[:3], K).size == 0


def test_window_length_keeps_false_refusals_below_1e_12():
    """K = ceil(ln(1e-12 / C) / ln q) for C (anchor, window) comparisons: a fair coin (q = 1/2)
    over C = 10 x 40000 needs K = ceil((27.63 + 12.90) / 0.693) = 59; a constant output has no K."""
    rng = np.random.default_rng(1)
    coin = [rng.integers(0, 2, 5000).astype(float) for _ in range(8)]
    q = streams.collision([(c, np.zeros(c.shape, bool)) for c in coin])
    assert abs(q - 0.5) < 1e-3
    assert streams.window_length(coin, 5000, 10 * 40_000) == math.ceil(
        math.log(streams.PREFIX_FALSE_ALARM / 400_000) / math.log(q)
    )
    assert streams.window_length([np.ones(5000)] * 8, 5000, 10) is None
