"""The benchmarks of ``userdp bench`` (``run.py`` runs them), one builder per row: the paper-free
rows here (primitives, the auditor, the protocol), each paper's in ``audits/papers/<paper>/bench.py``.

Each builder makes the inputs for a size n outside every timer and returns a ``bench.Case``:
our call and the baseline's (the simplest numpy code doing the part of the work nothing can
avoid). A ``UserDataset`` is built outside the timer: copying and validating the arrays is
the dataset's cost, paid once; where the per-user structure must not be cached (it is part
of the work timed), ``Case.fresh`` builds a new dataset before each call, untimed.

Targets (docs/performance.md): the Laplace primitive 1.5x and the per-user structure on Zipf
ownership 3x, the audit of scalar Laplace 2x, the optimal WA weights 5x and the certified GWA
instances, PDP-OP fit and draws 2x, the adaptive weights 5x and the SSP solve 2x a batched
eigh, HLM 20x and the PTR step's slope < 1.3, the one-release-per-call audit 1.3x and two
workers 1.7x faster.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

from userdp.audits import papers
from userdp.audits.engine.benchmark import TEN_SCALING, Benchmark, Case, pow10, records_text

__all__ = ["BENCHMARKS"]


# ------------------------------------------------------------------ primitives and the data model
def laplace(n: int) -> Case:
    from userdp.reference.mechanisms import laplace_mechanism

    rng = np.random.default_rng(0)
    return Case(
        ours=lambda: laplace_mechanism(0.0, 1.0, 1.0, rng, size=n),
        baseline=lambda: rng.laplace(0.0, 1.0, n),
        input_bytes=8 * n,
    )


def _structure_case(ids: np.ndarray, values: np.ndarray) -> Case:
    """counts, user_index and record_order (the CSR layout of S_l) of a new dataset each round."""
    from userdp.reference.data import UserDataset

    state = {}

    def fresh():
        state.clear()
        state["D"] = UserDataset(values, ids)  # not cached: the structure is the work timed

    def ours():
        D = state["D"]
        return D.counts, D.user_index, D.record_order

    def check():
        D = state["D"]
        order = D.record_order[0]
        if not (
            np.array_equal(D.user_index[order], np.repeat(np.arange(D.m), D.counts))
            and bool(np.all(np.diff(order)[np.diff(D.user_index[order]) == 0] > 0))
        ):
            return "record_order is not the stable grouping of the records by user"
        return None

    fresh()
    return Case(
        ours=ours,
        baseline=lambda: np.unique(state["D"].user_ids, return_counts=True),
        fresh=fresh,
        check=check,
        input_bytes=ids.nbytes + values.nbytes,
        note=f"m = {state['D'].m} users",
    )


def per_user_structure(n: int) -> Case:
    rng = np.random.default_rng(20261122)
    return _structure_case(rng.integers(0, max(n // 10, 1), n), rng.uniform(size=n))


def per_user_structure_zipf(n: int) -> Case:
    from userdp.reference import data

    rng = np.random.default_rng(20261122)
    ids = (rng.zipf(1.3, size=n) - 1) % max(n // 10, 1)  # Zipf-like ownership: imbalanced users
    case = _structure_case(ids, rng.uniform(size=n))
    if n >= data.SORT_CALIBRATION_N:  # the grouping depends on the machine's np.sort
        case.note += (
            "; grouping: one np.sort of packed keys (it beats the radix path here)"
            if data._sort_beats_radix()
            else "; grouping: a radix pass for the heaviest users (one sort is slower here)"
        )
    return case


# ------------------------------------------------------------------ Epasto et al. 2020


# ------------------------------------------------------------------ Amin et al. 2019


# ------------------------------------------------------------------ Krichene et al. 2023


# ------------------------------------------------------------------ Acharya et al. 2024


# ------------------------------------------------------------------ Zhao et al. 2024


# ------------------------------------------------------------------ the auditor
def _lap(D, rng, size):
    return D + rng.laplace(0.0, 1.0, size)


def audit_laplace(N: int) -> Case:
    from userdp.audits import audit
    from userdp.reference.claims import PureDP

    seeds = iter(range(10**6))
    rng = np.random.default_rng(0)

    def draw():
        rng.laplace(0.0, 1.0, N)
        rng.laplace(0.0, 1.0, N)

    return Case(
        ours=lambda: audit(_lap, (0.0, 1.0), PureDP(1.0), samples=N, seed=next(seeds)),
        baseline=draw,
        input_bytes=16 * N,
    )


_LOOP_DATA = [0.25 * (i % 5) for i in range(40)]
LOOP_PAIR = (_LOOP_DATA, _LOOP_DATA[:-1] + [0.0])  # one record changed from 1 to 0: sensitivity 1


def bounded_sum(D, rng):
    """A library-style release, one per call: clip each record, sum in Python, add Laplace noise."""
    s = 0.0
    for x in D:
        s += min(max(x, 0.0), 1.0)
    return s + rng.laplace(0.0, 1.0)


def _loop_audit(N: int, workers: int):
    from userdp.audits import audit
    from userdp.reference.claims import PureDP

    return lambda: audit(bounded_sum, LOOP_PAIR, PureDP(1.0), samples=N, seed=0, workers=workers)


def audit_one_release_per_call(N: int) -> Case:
    def bare():
        rng = np.random.default_rng(0)
        for D in LOOP_PAIR:
            for _ in range(N):
                bounded_sum(D, rng)

    return Case(
        ours=_loop_audit(N, 1),
        baseline=bare,
        input_bytes=16 * N,
        note=f"per release: the audit's time / (2 x {N}) against the bare loop's",
    )


def audit_two_workers(N: int) -> Case:
    """Two worker processes need two free cores: on a machine busy with other jobs the speedup
    shrinks, and the row's note gives the load average measured right after it."""
    out = {}
    one, two = _loop_audit(N, 1), _loop_audit(N, 2)
    case = Case(ours=lambda: out.__setitem__(2, two()), baseline=lambda: out.__setitem__(1, one()), input_bytes=16 * N)

    def check():
        r1, r2 = out[1], out[2]
        load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
        case.note = (
            f"eps_lb {r1.epsilon_lower_bound:.4f} with 1 worker, {r2.epsilon_lower_bound:.4f} with 2; "
            f"load average {load} (other jobs take cores from the 2 workers)"
        )
        same = (r1.epsilon_lower_bound, r1.witness.counts, r1.witness.rejection_set) == (
            r2.epsilon_lower_bound,
            r2.witness.counts,
            r2.witness.rejection_set,
        )
        return None if same else "2 workers gave a different result from 1 worker"

    case.check = check
    return case


def audit_all_command(samples: int) -> list[str]:
    """The child's command: ``userdp audit --all`` (a test replaces it with a cheaper one)."""
    return [
        sys.executable,
        "-m",
        "userdp.audits.cli",
        "audit",
        "--all",
        "--json",
        *(["--samples", str(samples)] if samples else []),
    ]


def audit_all(samples: int) -> Case:
    """``userdp audit --all`` in a child process, wall clock (samples 0: the entries' defaults)."""
    cmd = audit_all_command(samples)
    out = {}

    def ours():
        out["p"] = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ})

    case = Case(ours=ours)

    def check():
        p = out["p"]
        case.note = f"exit status {p.returncode}" + (" (every entry as expected)" if p.returncode == 0 else "")
        if p.returncode not in (0, 1):
            return f"userdp audit --all failed (exit {p.returncode}): {p.stderr.strip().splitlines()[-1:]}"
        return None

    case.check = check
    return case


# ------------------------------------------------------------------ the process protocol
PROTOCOL_BATCH = 1000
# the repository's examples/ (a source checkout): audits/bench/cases.py -> the repository root
_CAPPED_SUM_JS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples", "js", "capped_sum.js"
)


def _node() -> str | None:
    import shutil

    return shutil.which("node")


def _protocol_requires() -> str | None:
    if _node() is None:
        return "needs Node.js (node) for the example program examples/js/capped_sum.js"
    if not os.path.exists(_CAPPED_SUM_JS):
        return f"needs the example program {_CAPPED_SUM_JS} (a source checkout)"
    return None


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc), else None."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class _RawProgram:
    """The program alone: request bytes written, response lines counted, nothing parsed."""

    def __init__(self, argv):
        import fcntl
        from userdp.audits.validation.protocol import _PIPE_SIZE, _READ

        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.chunk = bytearray(_READ)
        for f in (self.proc.stdin, self.proc.stdout):  # the pipes and reads ProcessTarget uses
            os.set_blocking(f.fileno(), False)
            try:
                fcntl.fcntl(f.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_SIZE)
            except OSError:
                pass

    def pump(self, payload: bytes, lines: int) -> int:
        import selectors

        out, pos, seen, total = memoryview(payload), 0, 0, 0
        wfd, rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(rfd, selectors.EVENT_READ)
            sel.register(wfd, selectors.EVENT_WRITE)
            while seen < lines:
                for key, _ in sel.select(60):
                    if key.fd == wfd:
                        try:
                            pos += os.write(wfd, out[pos : pos + 65536])
                        except BlockingIOError:
                            continue
                        if pos == len(out):
                            sel.unregister(wfd)
                    else:
                        try:
                            k = os.readv(rfd, [self.chunk])
                        except BlockingIOError:
                            continue
                        if not k:
                            raise RuntimeError("the program exited")
                        seen += self.chunk.count(b"\n", 0, k)
                        total += k
        return total

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()

    def __del__(self):
        if self.proc.returncode is None:
            self.proc.kill()
            self.proc.wait()
            self.proc.stdin.close()
            self.proc.stdout.close()


def protocol_overhead(N: int) -> Case:
    """N releases of the Amin capped sum from examples/js/capped_sum.js (Node.js) in requests of
    ``PROTOCOL_BATCH``: ``ProcessTarget.mechanism`` (encoding, pipelined requests, decoding and
    schema checks, the releases as one array) against the same program answering the same
    requests alone (the bytes written and the response lines counted, nothing parsed): the
    program's own time. Both programs are started and warmed before the timer."""
    from userdp.audits.validation.protocol import ProcessTarget, _dumps, encode_dataset, encode_params
    from userdp.reference.data import UserDataset

    D = UserDataset.from_user_lists([[0.9, 0.8, 0.5, 0.4], [0.7, 0.6], [0.3], [0.2, 0.6, 0.1], [1.0], [0.5]])
    params = {"T": 1.0, "epsilon": 1.0}
    argv = [_node(), _CAPPED_SUM_JS]
    target = ProcessTarget(argv, algorithm="amin2019.capped-sum", batch=PROTOCOL_BATCH)
    raw = _RawProgram(argv)
    k = -(-N // PROTOCOL_BATCH)
    tail = ',"dataset":' + _dumps(encode_dataset(D)) + ',"params":' + _dumps(encode_params(params)) + "}"
    seeds = np.random.default_rng(1).integers(0, 2**53, k).tolist()
    payload = "".join(
        f'{{"protocol":1,"id":{j + 1},"seed":{s},"size":{min(PROTOCOL_BATCH, N - j * PROTOCOL_BATCH)}{tail}\n'
        for j, s in enumerate(seeds)
    ).encode()
    raw.pump(b'{"protocol":1,"id":0,"hello":{"algorithm":null}}\n', 1)
    target.mechanism(D, np.random.default_rng(0), 1, **params)  # started (its hello answered)
    rng, out, cpu = np.random.default_rng(0), {}, {"ours": [], "baseline": []}

    def timed(which: str, pid: int, f):
        c0, p0 = _cpu_seconds(pid), time.process_time()
        f()
        c1, p1 = _cpu_seconds(pid), time.process_time()
        if c0 is not None and c1 is not None:
            cpu[which].append((p1 - p0, c1 - c0))

    def ours():
        timed("ours", target.pid, lambda: out.__setitem__("x", target.mechanism(D, rng, N, **params)))

    def baseline():
        timed("baseline", raw.proc.pid, lambda: out.__setitem__("bytes", raw.pump(payload, k)))

    version = subprocess.run([_node(), "--version"], capture_output=True, text=True).stdout.strip()
    case = Case(ours=ours, baseline=baseline, input_bytes=len(payload))

    def check():
        x = out["x"]
        target.close()
        raw.close()
        case.note = f"node {version}, {k} requests of {PROTOCOL_BATCH}"
        if cpu["ours"] and cpu["baseline"]:  # CPU time per release, median over the rounds
            (a, b), (c, e) = (np.median(np.array(cpu[w]), axis=0) * 1e9 / N for w in ("ours", "baseline"))
            case.note += (
                f"; CPU per release: userdp {a:.0f} ns + the program {b:.0f} ns, against the program "
                f"alone {e:.0f} ns + writing its requests {c:.0f} ns (CPU ratio {(a + b) / (c + e):.2f}; "
                "the wall ratio needs a free core for each process to overlap them)"
            )
        g = 4.7  # g_1: totals 2.6, 1.3, 0.3, 0.9, 1.0, 0.5 capped at T = 1
        if x.shape != (N,) or abs(float(x.mean()) - g) > 6 * np.sqrt(2.0 / N):  # Laplace(1): sd sqrt(2)
            return f"releases of shape {x.shape}, mean {float(x.mean()):.4f}; expected ({N},), mean {g}"
        return None

    case.check = check
    return case


# ------------------------------------------------------------------ the table
GiB = 2**30

_PRIMITIVES = [
    Benchmark(
        "laplace",
        "Laplace primitive",
        "rng.laplace",
        1.5,
        laplace,
        10**7,
        lambda n: f"{pow10(n)} draws",
        rounds=7,
        need=lambda n: 40 * n,
    ),
    Benchmark(
        "per-user-structure",
        "per-user structure (s_l, user index, S_l order)",
        "np.unique(ids, return_counts=True)",
        3.0,
        per_user_structure,
        10**7,
        records_text,
        **TEN_SCALING,
        complexity="n log n (one sort)",
        copies=3.0,
        need=lambda n: 120 * n,
    ),
    Benchmark(
        "per-user-structure-zipf",
        "per-user structure, Zipf(1.3) ownership",
        "np.unique(ids, return_counts=True)",
        3.0,
        per_user_structure_zipf,
        10**7,
        lambda n: f"{pow10(n)} records, ids mod {pow10(max(n // 10, 1))}",
        need=lambda n: 120 * n,
    ),
]

_AUDITS = [
    Benchmark(
        "audit.laplace",
        "audit of scalar Laplace",
        "drawing the 2 N variates",
        2.0,
        audit_laplace,
        10**6,
        lambda n: f"N = {pow10(n)} per side",
        rounds=7,
        scaling=(10**5, 10**6, 10**7),
        quick_scaling=(10**4, 10**5, 10**6),
        complexity="N log N (threshold sorts)",
        need=lambda n: 100 * n,
    ),
    Benchmark(
        "audit.one-release-per-call",
        "audit, one release per call, 1 worker",
        "the bare Python loop",
        1.3,
        audit_one_release_per_call,
        10**5,
        lambda n: f"{pow10(n)} releases per side",
        rounds=3,
        quick_size=2 * 10**4,
        need=lambda n: 100 * n,
    ),
    Benchmark(
        "audit.two-workers",
        "the same audit, 2 workers (>= 1.7x faster)",
        "the audit on 1 worker",
        1 / 1.7,
        audit_two_workers,
        10**5,
        lambda n: f"{pow10(n)} releases per side",
        rounds=3,
        # the full size in --quick too: at 2 x 10^4 (4 shards per side) the pool's start and
        # the last shard's imbalance dominate (measured 0.66 at load 0.8, against 0.53 at 10^5)
        cores=2,
        need=lambda n: 100 * n,
    ),
    Benchmark(
        "protocol.overhead",
        "Amin capped sum from a Node.js program over the protocol, batch 1000",
        "the program alone (same requests, responses not parsed)",
        1.3,
        protocol_overhead,
        10**6,
        lambda n: f"{pow10(n)} releases",
        quick_size=2 * 10**5,
        rounds=15,
        quick_rounds=7,
        need=lambda n: 60 * n,
        requires=_protocol_requires,
        min_size=2000,
    ),
    Benchmark(
        "audit.all",
        "userdp audit --all (wall clock)",
        None,
        180.0,
        audit_all,
        0,
        lambda n: "default settings" if n == 0 else f"--samples {n}",
        kind="seconds",
        rounds=1,
        quick_rounds=1,
        warmup=False,
        need=lambda n: 2 * GiB,
    ),
]

# the paper-free primitives, each paper's rows (``audits/papers/<paper>/bench.py``, in the order of
# ``papers.PAPERS``), then the audits and the protocol
BENCHMARKS = [*_PRIMITIVES, *(b for m in papers.modules("bench") for b in m.BENCHMARKS), *_AUDITS]
