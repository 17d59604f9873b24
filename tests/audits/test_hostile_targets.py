"""Hostile targets: ``userdp audit`` never lies, never hangs, never leaves a process behind.

Each test writes a hostile target module to a temporary folder and runs the command line
on it, as a user would: ``userdp audit --mechanism hostile:f P`` with P the issue's pair
``--pair '[1,1,1]' '[1,1]' --relation add-remove-record --claim pure:epsilon=1``. ``lap`` is
``10 len(d) + Laplace(1)``, 10-DP on that pair, so any honest audit of it at the sample
counts here is a violation (eps_lb is near 6 at 2000 samples: a miss has probability far
below 1e-12). The numbered problems are the ones this suite was written for; each test
failed before the fix (run against the code before it: the exit status, message or hang
it asserts against is in the test's docstring).

Where the fix lives in the supervisor (``audits/cli/supervise.py``: os._exit and crashes in the
command's own process, signals, deadlines), the test runs the real ``userdp`` program in a
new session and checks the session's process group with ``ps``. Timing margins, measured
on the project's 2-core machine at a load average of 7.5: every process gone 0.16-0.24 s
after SIGTERM or SIGINT, and 0.2 s after SIGKILL of the main process (zombies waiting for
init excluded), against the 2 s asserted; a hung call ended 0.12 s after its --timeout.
The file takes about 45 s at that load (its subprocess tests 3-7 s each).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from userdp.audits.cli import main as cli
from userdp.audits.engine import parallel

P = ["--pair", "[1,1,1]", "[1,1]", "--relation", "add-remove-record", "--claim", "pure:epsilon=1"]

HOSTILE = '''
import ctypes, os, signal, sys, time
import numpy as np

CALLS = [0]
HERE = {here!r}


def lap(d):
    """10 len(d) + Laplace(1): 10-DP on [1,1,1] vs [1,1], a certain violation of a claim of 1."""
    return 10.0 * len(d) + np.random.default_rng().laplace()


def _nth(n=100):
    CALLS[0] += 1                 # this process's calls (each worker process counts its own)
    return CALLS[0] == n


def _hang():
    open(os.path.join(HERE, "hanging"), "w").close()
    while True:
        time.sleep(3600)


def exit_0(d):
    if _nth():
        sys.exit(0)
    return lap(d)


def exit_1(d):
    if _nth():
        sys.exit(1)
    return lap(d)


class Odd(BaseException):
    pass


def odd(d):
    if _nth():
        raise Odd("not an Exception")
    return lap(d)


def pads(d):
    """The issue's: 10-DP on the pair, but it pads its input to three records."""
    out = lap(d)
    while len(d) < 3:
        d.append(1)
    return out


def prints(d):
    print("hello from the mechanism")
    os.write(1, b"and from file descriptor 1\\n")
    return lap(d)


def nan(d):
    return float("nan")


def complex_(d):
    return complex(lap(d), 1.0)


def dict_(d):
    return {{"sum": lap(d)}}


def bytes_(d):
    return b"yes"


def one_too_many(d, rng, size):
    return rng.laplace(size=size + 1)


def randomized_response(d, rng):
    """"yes" w.p. 0.9 on three records, 0.1 on two: ln 9 = 2.2-DP."""
    return "yes" if rng.random() < (0.9 if len(d) == 3 else 0.1) else "no"


def fair_response(d, rng):
    """"yes" w.p. e/(1+e) on three records, 1/(1+e) on two: exactly 1-DP."""
    p = np.e / (1 + np.e)
    return "yes" if rng.random() < (p if len(d) == 3 else 1 - p) else "no"


def wide(d):
    return np.full(10_000, lap(d))


def out_of_memory(d):
    raise MemoryError


def segfault(d):
    if _nth():
        ctypes.string_at(0)
    return lap(d)


def hard_exit(d):
    if _nth():
        os._exit(0)
    return lap(d)


def spins(d):
    """Ignores SIGINT and SIGTERM, then never returns (at its 50th call in each process)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if _nth(50):
        open(os.path.join(HERE, "hanging"), "w").close()
        while True:
            pass
    return lap(d)


def slow_then_hangs(d):
    CALLS[0] += 1
    if CALLS[0] == 1:
        time.sleep(1.5)
    if CALLS[0] == 5:
        _hang()
    return lap(d)


def records_pid(d):
    open(os.path.join(HERE, "pids", str(os.getpid())), "w").close()
    return lap(d)


def too_many_setup():
    return one_too_many, [([1, 1, 1], [1, 1])]


def rr_setup():
    return randomized_response, [([1, 1, 1], [1, 1])]


def fair_setup():
    return fair_response, [([1, 1, 1], [1, 1])]


def mixed_pair():
    from userdp.reference.data import UserDataset
    return lap, [(UserDataset.from_user_lists([[1.0], [1.0], [1.0]]), [1.0, 1.0])]
'''


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """The hostile module ``hostile`` in a fresh folder, the current directory."""
    (tmp_path / "pids").mkdir()
    (tmp_path / "hostile.py").write_text(HOSTILE.format(here=str(tmp_path)))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "hostile", raising=False)
    yield tmp_path
    sys.modules.pop("hostile", None)


def _audit(capsys, *args) -> tuple[int, str, str]:
    code = cli.main(["audit", *args])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ the real program, in its own session
USERDP = (
    [str(Path(sys.executable).with_name("userdp"))]
    if Path(sys.executable).with_name("userdp").exists()
    else [sys.executable, "-m", "userdp.audits.cli"]
)


def _start(folder, *args, env=None, stdout=subprocess.PIPE) -> subprocess.Popen:
    return subprocess.Popen(
        [*USERDP, "audit", *args],
        cwd=folder,
        start_new_session=True,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )


def _group(pgid: int) -> list[tuple[int, str]]:
    """(pid, state) of every process in the process group ``pgid`` (``ps``)."""
    out = subprocess.run(["ps", "-o", "pid=,stat=", "-g", str(pgid)], capture_output=True, text=True).stdout
    return [(int(a), b) for a, b in (line.split()[:2] for line in out.splitlines() if line.strip())]


def _finish(p: subprocess.Popen, timeout: float) -> tuple[int | None, str, str]:
    """The program's exit status and output; on a timeout, kill its whole group (the test fails)."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, (out or b"").decode(), err.decode()
    return p.returncode, (out or b"").decode(), err.decode()


def _wait_for(path: Path, p: subprocess.Popen, timeout: float = 120.0) -> None:
    t = time.monotonic()
    while not path.exists():
        assert p.poll() is None, p.communicate()[1].decode()
        assert time.monotonic() - t < timeout, f"{path} never appeared"
        time.sleep(0.05)


def _seconds_until_gone(p: subprocess.Popen, zombies_count: bool, limit: float = 10.0) -> float:
    """Seconds until no process of the group is left (zombies, reaped by init, not counted
    unless ``zombies_count``)."""
    t = time.monotonic()
    while time.monotonic() - t < limit:
        p.poll()
        left = [pid for pid, stat in _group(p.pid) if zombies_count or not stat.startswith("Z")]
        if not left:
            return time.monotonic() - t
        time.sleep(0.02)
    return float("inf")


# ------------------------------------------------------------------ 1, 2: the target decides the exit status
@pytest.mark.parametrize("f, status, workers", [("exit_0", 0, 1), ("exit_1", 1, 1), ("exit_0", 0, 2)])
def test_sys_exit_in_the_mechanism_is_exit_3_naming_the_call(hostile, capsys, f, status, workers):
    """1. sys.exit(0) at the 100th call made the audit exit 0 with empty stdout ("no
    violation found"), in this process or in a worker; sys.exit(1) read as a violation."""
    code, out, err = _audit(capsys, "--mechanism", f"hostile:{f}", *P, "--samples", "12000", "--workers", str(workers))
    assert code == 3 and out == ""
    assert f"your mechanism hostile.{f} called sys.exit({status}) (SystemExit) at call " in err
    assert "on the first dataset of '--pair [1,1,1] [1,1]'" in err


def test_a_base_exception_is_exit_3_not_a_traceback(hostile, capsys):
    """2. A BaseException subclass exited 1 with a raw traceback."""
    code, out, err = _audit(capsys, "--mechanism", "hostile:odd", *P, "--samples", "2000", "--workers", "1")
    assert code == 3 and out == "" and "Traceback" not in err
    assert "your mechanism hostile.odd raised Odd (a BaseException" in err and "at call 67" in err


# ------------------------------------------------------------------ 3: a mechanism that mutates its input
def test_a_mechanism_that_changes_its_input_is_refused(hostile, capsys, monkeypatch):
    """3. `pads` is 10-DP on the pair, but pads the second dataset to three records at its
    first call: the audit said "no violation found", eps_lb 0.0000, exit 0, about the
    original pair. Planted bug: the fingerprint check off gives that lie back."""
    args = ["--mechanism", "hostile:pads", *P, "--samples", "2000", "--workers", "1"]
    code, out, err = _audit(capsys, *args)
    assert code == 3 and out == ""
    assert (
        "your mechanism hostile.pads modified its input: the second dataset of '--pair [1,1,1] [1,1]' "
        "changed during call 0"
    ) in err
    monkeypatch.setattr(parallel, "fingerprint", lambda dataset: None)  # the planted bug
    code, out, err = _audit(capsys, *args)  # (--pair's lists are new ones)
    assert code == 0 and "no violation found" in out


# ------------------------------------------------------------------ 4: a closed pipe
def test_a_closed_pipe_keeps_the_violation_exit_status(hostile):
    """4. `userdp audit ... | head -1` exited 0 on a certain violation in 8 of 10 runs: the
    BrokenPipeError mapped to success. Here the reader leaves before the first byte, so
    every write fails; the old code exited 0 every time."""
    r, w = os.pipe()
    p = _start(hostile, "--mechanism", "hostile:lap", *P, "--samples", "2000", "--workers", "1", stdout=w)
    os.close(w)
    os.close(r)  # the reader is gone before the first byte
    code, _, err = _finish(p, timeout=120)
    assert code == 1, err
    assert "Traceback" not in err


# ------------------------------------------------------------------ 5, 6, 13: signals and parent death
@pytest.mark.parametrize("sig, to_group, status", [(signal.SIGTERM, False, 143), (signal.SIGINT, True, 130)])
def test_a_signal_ends_every_process_of_the_run(hostile, sig, to_group, status):
    """5. SIGTERM to the main process left the --workers processes alive (40 s later).
    6. Ctrl-C (SIGINT to the whole process group, as a terminal sends it) waited for the
    running shards, and with a mechanism hanging in a worker never exited, even after a
    second Ctrl-C. Here both workers spin in a call that ignores SIGINT and SIGTERM."""
    p = _start(hostile, "--mechanism", "hostile:spins", *P, "--samples", "12000", "--workers", "2")
    try:
        _wait_for(hostile / "hanging", p)
        time.sleep(0.3)
        assert len(_group(p.pid)) >= 3  # at least the main process and the two workers
        t = time.monotonic()
        (os.killpg if to_group else os.kill)(p.pid, sig)
        gone = _seconds_until_gone(p, zombies_count=True)
        assert gone <= 2.0, (gone, _group(p.pid))
        assert p.wait(timeout=10) == status
        assert time.monotonic() - t <= 2.5
    finally:
        if p.poll() is None or _group(p.pid):
            os.killpg(p.pid, signal.SIGKILL)
        p.communicate()


def test_workers_die_with_the_main_process(hostile):
    """13. SIGKILL to the main process (nothing can be caught): its command process dies
    with it, the fork server with that one, each worker with the fork server (before the
    fix, forked workers stayed: nothing tied them to their parent)."""
    p = _start(hostile, "--mechanism", "hostile:spins", *P, "--samples", "12000", "--workers", "2")
    try:
        _wait_for(hostile / "hanging", p)
        time.sleep(0.3)
        os.kill(p.pid, signal.SIGKILL)
        assert _seconds_until_gone(p, zombies_count=False) <= 2.0, _group(p.pid)
    finally:
        if _group(p.pid):
            os.killpg(p.pid, signal.SIGKILL)
        p.communicate()


# ------------------------------------------------------------------ 8: prints
def test_the_mechanisms_prints_go_to_stderr(hostile, capfd):
    """8. A mechanism's prints went to stdout, so --json was no longer JSON. Both print()
    and a write to file descriptor 1, in this process and in the workers."""
    code = cli.main(["audit", "--mechanism", "hostile:prints", *P, "--samples", "12000", "--workers", "2", "--json"])
    out, err = capfd.readouterr()
    assert code == 1 and json.loads(out)["verdict"] == "violation"
    assert "hello from the mechanism" in err and "and from file descriptor 1" in err


# ------------------------------------------------------------------ 9: deadlines and progress
def test_slow_and_hung_calls_are_reported_and_ended(hostile):
    """9. With 1 s a call nothing was printed for 25 s, and a hung call hung the audit for
    ever. Here the first call takes 1.5 s (--deadline 1: reported as slow, naming it), a
    quiet second brings a progress line (USERDP_PROGRESS_EVERY=1; default 5 s), and the
    fifth call hangs: it is ended at --timeout 2 and named, exit 3, no process left."""
    p = _start(
        hostile,
        "--mechanism",
        "hostile:slow_then_hangs",
        *P,
        "--samples",
        "2000",
        "--workers",
        "1",
        "--deadline",
        "1",
        "--timeout",
        "2",
        env={"USERDP_PROGRESS_EVERY": "1"},
    )
    code, out, err = _finish(p, timeout=120)
    assert code == 3 and out == "", err
    assert (
        "slow: mechanism hostile.slow_then_hangs on the first dataset of '--pair [1,1,1] [1,1]', call 0 "
        "(of 16) has run for" in err
    )
    assert "working: mechanism hostile.slow_then_hangs" in err
    assert (
        "userdp: error: your code did not return within --timeout 2 s: mechanism hostile.slow_then_hangs on "
        "the first dataset of '--pair [1,1,1] [1,1]', call 4 (of 16)"
    ) in err
    assert _seconds_until_gone(p, zombies_count=True) <= 2.0


# ------------------------------------------------------------------ 10: wrong outputs
@pytest.mark.parametrize(
    "f, kind",
    [
        ("nan", "returned NaN"),
        ("complex_", "returned complex numbers (complex128)"),
        ("dict_", "returned Python objects of type dict"),
        ("bytes_", "returned bytes (|S3"),
        ("one_too_many", "returned 2001 outputs (shape (2001,))"),
    ],
)
def test_wrong_outputs_exit_3_naming_the_function_and_the_kind(hostile, capsys, f, kind):
    """10. NaN, complex numbers and size + 1 rows exited 2 (usage), and the message named
    userdp's closure (`...call_target.<locals>.mechanism`) instead of the user's function."""
    target = (
        ["hostile:too_many_setup", "--claim", "pure:epsilon=1"]
        if f == "one_too_many"
        else ["--mechanism", f"hostile:{f}", *P]
    )
    code, out, err = _audit(capsys, *target, "--samples", "2000", "--workers", "1")
    assert code == 3 and out == ""
    assert f"your mechanism hostile.{f} {kind}" in err and "<locals>" not in err


# ------------------------------------------------------------------ 11: str labels
def test_str_labels_are_audited_as_categories(hostile, capsys):
    """11. str outputs were refused as "varying shape or type" ("yes" and "no" differ in
    length). Randomized response at ln 9 = 2.2 against a claim of 1: at 4000 samples the
    value set {yes} gives eps_lb near 2.0 (a miss needs a 10-sigma error). Exactly 1-DP
    randomized response at confidence 1 - 1e-4 is flagged with probability <= 1e-4
    (harness.py). A numeric test of labels is refused (exit 2)."""
    claim = ["--claim", "pure:epsilon=1", "--samples", "4000"]
    code, out, err = _audit(capsys, "hostile:rr_setup", *claim, "--json")
    r = json.loads(out)
    assert code == 1 and r["verdict"] == "violation" and r["epsilon_lower_bound"] > 1.5
    assert r["witness"]["rejection_set"]["values"] in (["yes"], ["no"])
    code, out, err = _audit(capsys, "hostile:fair_setup", *claim, "--confidence", "0.9999")
    assert code == 0 and "no violation found" in out
    code, out, err = _audit(capsys, "hostile:fair_setup", *claim, "--output", "continuous")
    assert code == 2 and "labels are tested as categories" in err


# ------------------------------------------------------------------ 12: memory
def test_releases_too_large_for_memory_are_refused_with_their_size(hostile, capsys, monkeypatch):
    """12. 10^7 floats a release ended as "internal error ... a bug in userdp" (a
    MemoryError), or filled the machine. Here the memory available is set to 10 MB and
    a release is 10^4 floats: refused after the first call, naming its size. A
    MemoryError raised by the mechanism is its error too, not userdp's."""
    code, out, err = _audit(capsys, "--mechanism", "hostile:out_of_memory", *P, "--samples", "2000")
    assert code == 3 and "your mechanism hostile.out_of_memory ran out of memory" in err
    assert "internal error" not in err
    monkeypatch.setattr(parallel, "available_memory", lambda: 10_000_000, raising=False)
    code, out, err = _audit(capsys, "--mechanism", "hostile:wide", *P, "--samples", "2000", "--workers", "1")
    assert code == 3 and out == ""
    assert (
        "your mechanism hostile.wide: one release is 10,000 float64 value(s), 80 kB; 2,000 releases per side "
        "need about 960 MB"
    ) in err


# ------------------------------------------------------------------ 13: the smaller problems
@pytest.mark.parametrize(
    "f, how",
    [
        ("segfault", "it was killed by SIGSEGV (a crash in native code)"),
        ("hard_exit", "it exited with status 0 in the middle of the call"),
    ],
)
def test_a_crash_or_os_exit_in_the_main_process_is_exit_3(hostile, f, how):
    """13. A segfault in the main process exited -11 with no message; os._exit(0) exited 0."""
    p = _start(hostile, "--mechanism", f"hostile:{f}", *P, "--samples", "2000", "--workers", "1")
    code, out, err = _finish(p, timeout=120)
    assert code == 3 and out == "", err
    assert (
        f"userdp: error: your code ended the userdp process during mechanism hostile.{f} on the first "
        f"dataset of '--pair [1,1,1] [1,1]', call 67 (of 2000): {how}"
    ) in err


def test_workers_are_capped(hostile, capsys, monkeypatch):
    """13. --workers 1000 forked about 1000 processes for 4 shards. The pool is capped at
    WORKERS_PER_CORE per core (with a note), and only a waiting shard starts a worker: the
    processes that ran the mechanism are at most the shards of a side (3 here)."""
    sizes = []
    real = parallel.ProcessPoolExecutor

    def spy(max_workers, **kw):
        sizes.append(max_workers)
        return real(max_workers, **kw)

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", spy)
    code, out, err = _audit(capsys, "--mechanism", "hostile:records_pid", *P, "--samples", "12000", "--workers", "50")
    cap = getattr(parallel, "WORKERS_PER_CORE", 4) * parallel.default_workers()
    assert code == 1 and sizes and max(sizes) <= cap
    assert f"note: 50 workers capped at {cap}" in err
    assert 1 <= len(os.listdir(hostile / "pids")) <= 3 + 1  # + this process (the reproducibility check)


def test_a_user_dataset_against_a_list_is_refused(hostile, capsys):
    """13. A UserDataset against a list was audited, with only "NOT checked" on stderr."""
    code, out, err = _audit(capsys, "hostile:mixed_pair", "--claim", "pure:epsilon=1", "--samples", "2000")
    assert code == 2 and out == ""
    assert "has a UserDataset on one side and a list on the other" in err


def test_an_identical_pair_is_refused(hostile, capsys):
    """13. An identical pair with no --relation was audited without a word: "no violation
    found" about a pair no test can tell apart."""
    code, out, err = _audit(
        capsys,
        "--mechanism",
        "hostile:lap",
        "--pair",
        "[1,1]",
        "[1,1]",
        "--claim",
        "pure:epsilon=1",
        "--samples",
        "2000",
    )
    assert code == 2 and out == "" and "its two datasets are identical" in err


def test_bad_deadline_and_timeout_exit_2(capsys):
    for flag, value in (("--deadline", "0"), ("--timeout", "-1"), ("--timeout", "inf"), ("--deadline", "x")):
        code, out, err = _audit(capsys, "control.laplace", flag, value)
        assert code == 2 and flag in err and "seconds > 0" in err


def test_str_outputs_stack_and_join_across_shards():
    """Labels of different lengths ("no", "yes") across calls and shards are one kind."""
    with parallel.Sampler(lambda D, rng: "yes" if rng.random() < 0.5 else "no", workers=1) as s:
        out = s(None, np.random.default_rng(0), 2 * parallel.SHARD + 3)
    assert out.dtype.kind == "U" and set(out.tolist()) == {"yes", "no"}


# ------------------------------------------------------------------ validate: every call of the target is watched
VALIDATE_HOSTILE = """
import time

import numpy as np

from userdp.properties.amin2019 import CapAdapter
from userdp.reference import amin2019 as A

CALLS = [0]


def hangs_at_call_3(dataset, rng, *, T, epsilon):
    '''One release per call; the third call never returns.'''
    CALLS[0] += 1
    if CALLS[0] == 3:
        time.sleep(10_000)
    return A.mechanism(dataset, T, epsilon, rng)


def _statistic(dataset, *, T, **_):
    time.sleep(10_000)


stage_hangs = CapAdapter("a statistic that never returns", statistic=_statistic)
"""


@pytest.mark.parametrize(
    "target, named",
    [
        ("vhostile:hangs_at_call_3", "your mechanism vhostile:hangs_at_call_3"),
        ("vhostile:stage_hangs", "your stage statistic of vhostile:stage_hangs"),
    ],
)
def test_validate_ends_a_hung_call_of_the_target_at_timeout(tmp_path, target, named):
    """A hung release or a hung noise-free stage is ended at --timeout and named, exit 3 (before
    every call of the target was watched, a hung stage hung validate for ever). Planted: without
    the watched region the run is still going at the 120 s limit, and _finish fails the test."""
    (tmp_path / "vhostile.py").write_text(VALIDATE_HOSTILE)
    p = subprocess.Popen(
        [*USERDP, "validate", "amin2019.capped-sum", target, "--quick", "--timeout", "3"],
        cwd=tmp_path,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    code, out, err = _finish(p, timeout=120)
    assert code == 3, err
    assert "did not return within --timeout 3 s" in err and named in err, err
