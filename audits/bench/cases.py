"""The benchmarks of ``userdp bench`` (``bench.py`` runs them), one builder per row.

Each builder makes the inputs for a size n outside every timer and returns a ``bench.Case``:
our call and the baseline's (the simplest numpy code doing the part of the work nothing can
avoid). A ``UserDataset`` is built outside the timer: copying and validating the arrays is
the dataset's cost, paid once; where the per-user structure must not be cached (it is part
of the work timed), ``Case.fresh`` builds a new dataset before each call, untimed. The
papers' code is imported inside the builders (``audits`` imports no paper at import time).

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

from userdp.audits.bench.model import Benchmark, Case

__all__ = ["BENCHMARKS"]


def _pow10(n: int) -> str:
    """10^7 for 10_000_000, else the number with thousands separators."""
    e = round(np.log10(n)) if n > 0 else 0
    return f"10^{e}" if n == 10**e else f"{n:,}"


def _dataset_bytes(D) -> int:
    return sum(a.nbytes for a in (D.values, D.user_ids, D.labels, D.epsilons, D.task_ids) if a is not None)


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
            "; grouping: one np.sort of packed keys (np.sort beats a radix pass here)"
            if data._sort_beats_radix()
            else "; grouping: a radix pass for the heaviest users (np.sort is slower than a radix pass here)"
        )
    return case


# ------------------------------------------------------------------ Epasto et al. 2020
def epasto_optimal_weights(n: int) -> Case:
    from userdp.reference.data import UserDataset
    from userdp.reference.epasto2020 import optimal_weights

    rng = np.random.default_rng(0)
    ids, values = rng.integers(0, max(n // 10, 1), n), np.zeros(n)
    state, out = {}, {}

    def fresh():
        state["D"] = UserDataset(values, ids)  # the per-user structure is part of the work

    def ours():
        out["c"], out["h"] = optimal_weights(state["D"], 1.0, 1.0)
        return out["c"]

    def check():
        c = out["c"]
        return None if c.shape == (n,) and abs(c.sum() - 1) < 1e-9 else f"c has shape {c.shape}, sum {c.sum()!r}"

    fresh()
    return Case(
        ours=ours,
        baseline=lambda: np.unique(state["D"].user_ids, return_counts=True),
        fresh=fresh,
        check=check,
        input_bytes=ids.nbytes + values.nbytes,
        note=f"m = {state['D'].m} users",
    )


def epasto_gwa_optimal_C(n: int, alpha: float = 1.5) -> Case:
    """The §6 instance (Zipf(alpha) users, make_regression with 9 features + intercept: d = 10)."""
    from userdp.reference import epasto2020_gwa as G
    from userdp.audits.registry.epasto2020_gwa import synthetic_instance

    D, _, B, sigma = synthetic_instance(n, np.random.default_rng(0), alpha=alpha, d=9)
    X, y, out = G.features(D), D.labels, {}
    case = Case(
        ours=lambda: out.__setitem__("opt", G.optimal_C(D, B, 1.0, sigma)),
        baseline=lambda: np.linalg.lstsq(X, y, rcond=None),
        input_bytes=_dataset_bytes(D),
    )

    def check():
        opt = out["opt"]
        case.note = (
            f"m = {D.m} users, working set {opt.working_set:,} of {D.n:,} records, "
            f"{opt.iterations} Newton iterations, duality gap {opt.gap:.1e}"
        )
        return None if opt.gap <= 1e-6 else f"duality gap {opt.gap:.2e} > 1e-6"

    case.check = check
    return case


GWA_INSTANCES = ((1.5, 10.0, 1.0), (3.0, 10.0, 1.0), (1.5, 1000.0, 20.0), (3.0, 1000.0, 20.0))  # (alpha, B, sigma)


def epasto_gwa_instances(n: int) -> Case:
    """The four GWA benchmark instances: X standard normal (d = 10), Zipf(alpha) users (1.5: few heavy
    users; 3: many small ones), labels U(0, B); a moderate noise ratio (B = 10, sigma = 1) and
    the §6 one (B = 1000, sigma = 20, kappa / sigma^2 ~ 1e5). Each C must be certified."""
    from userdp.reference import epasto2020_gwa as G
    from userdp.reference.data import UserDataset
    from userdp.audits.registry.epasto2020_gwa import zipf_user_ids

    rng = np.random.default_rng(n)
    data = []
    for alpha, B, sigma in GWA_INSTANCES:
        data.append(
            (
                UserDataset(rng.standard_normal((n, 10)), zipf_user_ids(n, alpha, rng), labels=rng.uniform(0, B, n)),
                B,
                sigma,
            )
        )
    out = []

    def ours():
        out[:] = [G.optimal_C(D, B, 1.0, sigma) for D, B, sigma in data]

    def bare():
        for D, _, _ in data:
            np.linalg.lstsq(D.values, D.labels, rcond=None)

    case = Case(ours=ours, baseline=bare, input_bytes=sum(_dataset_bytes(D) for D, _, _ in data))

    def check():
        case.note = "; ".join(
            f"alpha {a:g}, B {B:g}, sigma {s:g}: m = {D.m}, working set {o.working_set:,}, "
            f"{o.iterations} Newton iterations, gap {o.gap:.1e}, "
            f"max|CX - I| {np.abs(o.C @ G.features(D) - np.eye(10)).max():.1e}"
            for (a, B, s), (D, _, _), o in zip(GWA_INSTANCES, data, out)
        )
        bad = [
            f"alpha {a:g}, B {B:g}: gap {o.gap:.2e}" for (a, B, _), o in zip(GWA_INSTANCES, out) if not o.gap <= 1e-6
        ]
        return None if not bad else "certificate above 1e-6: " + "; ".join(bad)

    case.check = check
    return case


# ------------------------------------------------------------------ Amin et al. 2019
def amin_private_cap_sum(n: int) -> Case:
    from userdp.reference import amin2019 as A
    from userdp.reference.data import UserDataset

    rng = np.random.default_rng(0)
    D = UserDataset(rng.uniform(0.0, 1.0, n), rng.integers(0, max(n // 10, 1), n))
    D.user_index  # the dataset's index: built with the dataset
    ids, x = D.user_ids, D.values
    return Case(
        ours=lambda: A.private_cap_mechanism(D, 0.5, 0.5, 100.0, rng),
        baseline=lambda: np.bincount(ids, weights=x),
        input_bytes=_dataset_bytes(D),
        note=f"m = {D.m} users, eps_cap = eps_sum = 0.5, U = 100",
    )


# ------------------------------------------------------------------ Krichene et al. 2023
def _krichene_graph(n_records: int, n_users: int, m: int, d: int, rng):
    """Distinct (task, user) pairs: user j takes tasks (j + k * 7919) mod m, k = 0, 1, ..."""
    from userdp.reference.data import UserDataset

    per = n_records // n_users
    users = np.repeat(np.arange(n_users), per)
    tasks = (users + np.tile(np.arange(per), n_users) * 7919) % m
    return UserDataset(
        rng.standard_normal((users.size, d)), users, labels=rng.standard_normal(users.size), task_ids=tasks
    )


def krichene_adaptive_weights(n: int) -> Case:
    from userdp.reference import krichene2023_weights as W

    n_users = max(n // 10, 1)
    m = min(10**4, n_users)  # every task has a user (Assumption 4.1): user j takes task j
    D = _krichene_graph(n, n_users, m, 1, np.random.default_rng(0))
    D.user_index  # the dataset's index: built with the dataset
    counts = np.bincount(D.task_ids, minlength=m).astype(float)  # declared public here
    ids = D.user_ids
    return Case(
        ours=lambda: W.adaptive_weights(D, m=m, beta=1.0, mu=0.25, n_counts=counts, n_users=n_users),
        baseline=lambda: np.unique(ids),
        input_bytes=_dataset_bytes(D),
        note=f"{m} tasks, {n_users} users",
    )


def krichene_ssp_solve(m: int) -> Case:
    """Algorithm 1's solve for m tasks, d = 16 (10 records per task) against a bare batched eigh."""
    from userdp.reference import krichene2023 as K

    rng = np.random.default_rng(1)
    d = 16
    D = _krichene_graph(10 * m, m, m, d, rng)
    w = np.full(D.n, 0.1)
    kw = dict(m=m, Gamma_x=1.0, Gamma_star=1.0)
    t = time.perf_counter()
    A_hat, b_hat = K.ssp_release(D, w, rng, **kw)
    t_release = time.perf_counter() - t
    M = A_hat + np.eye(d)
    return Case(
        ours=lambda: K.solve(A_hat, b_hat, 1.0),
        baseline=lambda: np.linalg.eigh(M),
        input_bytes=A_hat.nbytes + b_hat.nbytes,
        note=f"the release before it (statistic + noise, untimed here): {t_release * 1e3:.0f} ms",
    )


# ------------------------------------------------------------------ Acharya et al. 2024
LAMBDA = 100.0


def _acharya_dataset(n: int, d: int, rng):
    from userdp.reference.data import UserDataset

    return UserDataset(
        rng.random((n, d)), np.arange(n), labels=rng.uniform(-1, 1, n), epsilons=rng.uniform(0.01, 1.0, n)
    )


def acharya_fit_release(n: int) -> Case:
    from userdp.reference import acharya2024 as A

    rng = np.random.default_rng(0)
    D = _acharya_dataset(n, 30, rng)
    X, y, eps = D.values, D.labels, D.epsilons

    def bare():
        w = eps / eps.sum()
        M = (X * w[:, None]).T @ X  # X^T diag(w) X, (d, d)
        M[np.diag_indices_from(M)] += LAMBDA
        return np.linalg.solve(M, X.T @ (w * y))

    return Case(ours=lambda: A.mechanism(D, rng, Lambda=LAMBDA), baseline=bare, input_bytes=_dataset_bytes(D))


def _acharya_draws(N: int, n: int, d: int) -> Case:
    from userdp.reference import acharya2024 as A

    rng = np.random.default_rng(1)
    D = _acharya_dataset(n, d, rng)
    eta = A.eta(D, LAMBDA)

    def bare():
        r = rng.gamma(shape=d, scale=1.0 / eta, size=N)  # radius
        z = rng.standard_normal((N, d))
        z *= (r / np.linalg.norm(z, axis=1))[:, None]  # r Z / ||Z||
        return z

    return Case(ours=lambda: A.mechanism(D, rng, N, Lambda=LAMBDA), baseline=bare, input_bytes=8 * N * d)


def acharya_draws_d2(N: int) -> Case:
    return _acharya_draws(N, 8, 2)


def acharya_draws_d30(N: int) -> Case:
    return _acharya_draws(N, 80, 30)


# ------------------------------------------------------------------ Zhao et al. 2024
HLM_PARAMS = dict(epsilon=1.0, delta=1e-5, R=1.0, R_c=1.0)


def zhao_hlm(n: int, items: str = "uniform") -> Case:
    """HLM on n users with 1-20 items each (d = 10) against the weighted mean of the local averages.

    Uniform items: every user sits in its quadratic region and the solve ends at its start.
    Student-t items (2.5 degrees of freedom): outliers in the linear region make Newton iterate."""
    from userdp.reference import zhao2024 as Z
    from userdp.reference.data import UserDataset

    rng = np.random.default_rng(0)
    d = 10
    ids = np.repeat(np.arange(n), rng.integers(1, 21, n))
    x = rng.uniform(-1, 1, (ids.size, d)) if items == "uniform" else rng.standard_t(2.5, (ids.size, d))
    D = UserDataset(x / np.sqrt(d), ids)
    cap = Z.release_plan(D, **HLM_PARAMS).cap  # warms the dataset's per-user grouping for both sides

    def bare():
        y = D.local_averages()
        a = np.minimum(D.counts, cap)
        return (a / a.sum()) @ y

    return Case(
        ours=lambda: Z.mechanism(D, rng, **HLM_PARAMS),
        baseline=bare,
        input_bytes=_dataset_bytes(D),
        note=f"{ids.size} items",
    )


def zhao_hlm_student_t(n: int) -> Case:
    return zhao_hlm(n, "student-t 2.5")


def zhao_ptr(n: int) -> Case:
    from userdp.reference import zhao2024 as Z

    rng = np.random.default_rng(1)
    margins, w = rng.uniform(0, 1, n), np.full(n, 1.0 / n)
    return Case(ours=lambda: Z.ptr_distance(margins, w, B=1e-3, shift=0.0, kappa0=0.5, J=154), input_bytes=16 * n)


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


def audit_pdp_op_d30(N: int) -> Case:
    """One pair of the d = 30 PDP-OP audit (the most lenient record at the corner, lambda 1000)."""
    from userdp.audits import audit
    from userdp.audits.registry.acharya2024 import _pdp_setup

    setup = _pdp_setup(30, 1000.0)
    pair = setup.pairs[-1]
    seeds = iter(range(10**6))
    rng = np.random.default_rng(0)
    out = {}

    def ours():
        out["r"] = audit(
            setup.mechanism, [pair], setup.claim, samples=N, seed=next(seeds), output="vector", noise_family="l2laplace"
        )

    def draw():
        setup.mechanism(pair.first, rng, N)
        setup.mechanism(pair.second, rng, N)

    case = Case(ours=ours, baseline=draw, input_bytes=2 * 8 * 30 * N)

    def check():
        r = out["r"]
        case.note = f"eps_lb {r.epsilon_lower_bound:.3f} of eps_i = {setup.claim.epsilons[pair.unit]:g}"
        return None if r.verdict == "no violation found" else "a correct mechanism was flagged"

    case.check = check
    return case


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
_REC = lambda n: f"{_pow10(n)} records, {_pow10(max(n // 10, 1))} users"  # noqa: E731
_TEN = dict(scaling=(10**5, 10**6, 10**7), quick_scaling=(10**4, 10**5, 10**6))
GiB = 2**30

BENCHMARKS = [
    Benchmark(
        "laplace",
        "Laplace primitive",
        "rng.laplace",
        1.5,
        laplace,
        10**7,
        lambda n: f"{_pow10(n)} draws",
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
        _REC,
        **_TEN,
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
        lambda n: f"{_pow10(n)} records, ids mod {_pow10(max(n // 10, 1))}",
        need=lambda n: 120 * n,
    ),
    Benchmark(
        "epasto2020.optimal-weights",
        "Epasto optimal WA weights (exact h*)",
        "np.unique(ids, return_counts=True)",
        5.0,
        epasto_optimal_weights,
        10**7,
        _REC,
        rounds=3,
        **_TEN,
        complexity="n log n (one sort)",
        copies=3.0,
        need=lambda n: 140 * n,
    ),
    Benchmark(
        "epasto2020-gwa.optimal-C",
        "Epasto optimal GWA C (certified)",
        "one np.linalg.lstsq",
        50.0,
        # the target's size in --quick too (0.3 s a call since the working set): at n = 10^4
        # one lstsq takes under 1 ms while the Newton steps, on a working set, do not shrink with n
        epasto_gwa_optimal_C,
        10**5,
        lambda n: f"n = {_pow10(n)}, d = 10 (§6)",
        rounds=3,
        scaling=(10**3, 10**4, 10**5),
        complexity="Newton steps x |T| d^3, + n d^2",
        min_size=20,
        scaling_note=(
            "not a complexity: the Newton steps run on a working set of records whose size, "
            "like the number of steps, depends on the instance more than on n (per size below); "
            "only a few passes (the OLS start, the violator check, the certificate) touch all n "
            "records"
        ),
        need=lambda n: 4000 * n,
    ),
    Benchmark(
        "epasto2020-gwa.instances",
        "Epasto optimal GWA C, 4 instances",
        "4 np.linalg.lstsq",
        None,
        epasto_gwa_instances,
        3000,
        lambda n: f"4 x n = {n:,}, d = 10",
        rounds=1,
        quick_rounds=1,
        warmup=False,
        min_size=50,
        need=lambda n: 4 * 4000 * n,
    ),
    Benchmark(
        "amin2019.private-cap-sum",
        "Amin capped sum, private cap",
        "np.bincount(ids, weights=x)",
        3.0,
        amin_private_cap_sum,
        10**7,
        _REC,
        **_TEN,
        complexity="n + m log m (sort of the user totals)",
        copies=3.0,
        need=lambda n: 80 * n,
    ),
    Benchmark(
        "krichene2023.adaptive-weights",
        "Krichene adaptive weights + eq. (12)",
        "np.unique(ids)",
        5.0,
        krichene_adaptive_weights,
        10**7,
        lambda n: f"{_pow10(n)} (task, user) pairs",
        rounds=3,
        **_TEN,
        complexity="n log n (sort of the pairs)",
        copies=3.0,
        need=lambda n: 150 * n,
    ),
    Benchmark(
        "krichene2023.ssp-solve",
        "Krichene SSP solve (PSD projection, pinv)",
        "batched np.linalg.eigh",
        2.0,
        krichene_ssp_solve,
        10**4,
        lambda n: f"m = {_pow10(n)} tasks, d = 16",
        rounds=3,
        need=lambda n: 20 * 16 * 16 * 8 * n,
    ),
    Benchmark(
        "acharya2024.fit-release",
        "PDP-OP fit + release",
        "X^T diag(w) X + np.linalg.solve",
        2.0,
        acharya_fit_release,
        10**6,
        lambda n: f"n = {_pow10(n)}, d = 30",
        scaling=(10**4, 10**5, 10**6),
        quick_scaling=(10**3, 10**4, 10**5),
        complexity="n d^2",
        copies=3.0,
        need=lambda n: 8 * 30 * 6 * n,
    ),
    Benchmark(
        "acharya2024.draws-d2",
        "PDP-OP releases (n = 8, d = 2)",
        "L2-Laplace vectors",
        2.0,
        acharya_draws_d2,
        10**6,
        lambda n: f"{_pow10(n)} releases",
        need=lambda n: 8 * 2 * 8 * n,
    ),
    Benchmark(
        "acharya2024.draws-d30",
        "PDP-OP releases (n = 80, d = 30)",
        "L2-Laplace vectors",
        2.0,
        acharya_draws_d30,
        10**6,
        lambda n: f"{_pow10(n)} releases",
        need=lambda n: 8 * 30 * 8 * n,
    ),
    Benchmark(
        "zhao2024.hlm",
        "HLM estimate + release (uniform items)",
        "weighted mean of local averages",
        20.0,
        zhao_hlm,
        10**5,
        lambda n: f"{_pow10(n)} users, d = 10",
        scaling=(10**3, 10**4, 10**5),
        complexity="n log n (the PTR sort)",
        copies=3.0,
        need=lambda n: 10 * 10 * 8 * 10 * n,
    ),
    Benchmark(
        "zhao2024.hlm-student-t",
        "HLM estimate + release (student-t items)",
        "weighted mean of local averages",
        20.0,
        zhao_hlm_student_t,
        10**5,
        lambda n: f"{_pow10(n)} users, d = 10",
        need=lambda n: 10 * 10 * 8 * 10 * n,
    ),
    Benchmark(
        "zhao2024.ptr",
        "HLM's propose-test-release step",
        None,
        None,
        zhao_ptr,
        10**6,
        lambda n: f"n = {_pow10(n)}",
        scaling=(10**4, 10**5, 10**6),
        complexity="n log n (one sort)",
        need=lambda n: 64 * n,
    ),
    Benchmark(
        "audit.laplace",
        "audit of scalar Laplace",
        "drawing the 2 N variates",
        2.0,
        audit_laplace,
        10**6,
        lambda n: f"N = {_pow10(n)} per side",
        rounds=7,
        scaling=(10**5, 10**6, 10**7),
        quick_scaling=(10**4, 10**5, 10**6),
        complexity="N log N (threshold sorts)",
        need=lambda n: 100 * n,
    ),
    Benchmark(
        "audit.pdp-op-d30",
        "audit of PDP-OP, d = 30 (vector)",
        "drawing the 2 N releases",
        3.0,
        audit_pdp_op_d30,
        10**5,
        lambda n: f"N = {_pow10(n)} per side",
        rounds=3,
        need=lambda n: 30 * 8 * 20 * n,
    ),
    Benchmark(
        "audit.one-release-per-call",
        "audit, one release per call, 1 worker",
        "the bare Python loop",
        1.3,
        audit_one_release_per_call,
        10**5,
        lambda n: f"{_pow10(n)} releases per side",
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
        lambda n: f"{_pow10(n)} releases per side",
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
        lambda n: f"{_pow10(n)} releases",
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
