"""Calling any mechanism: its calling convention, shards over processes or a Dask cluster,
and the reproducibility check.

Calling conventions (``calling_convention``), read with ``inspect.signature``. Let R be
the number of required positional parameters and P the positional parameters (unbounded
with ``*args``):

- "batched", ``mechanism(dataset, rng, size)`` returns ``size`` outputs (``sampling.py``):
  R == 3, or R < 3 and the third positional parameter is named ``size``;
- "scalar(dataset, rng)", one release per call: otherwise R == 2, or R < 2 and the second
  positional parameter is named ``rng``;
- "scalar(dataset)", one release per call: otherwise R == 1;
- anything else (R == 0 as in ``f(*args)``, R > 3, a required keyword-only parameter, no
  readable signature) is ambiguous and refused with a TypeError: wrap it in a ``def``
  with one of the three signatures.

A batched mechanism is called as before: once per side, in this process, with that
side's generator (vectorised code gains nothing from processes, and every registry
entry sees the random numbers it always saw). A scalar mechanism is called in a loop and
its outputs stacked; every output must have the shape and type (bool, integer, float, str)
of the first, or the draw fails naming both calls (``VaryingOutputError``).

Shards. The ``size`` releases of one side are cut into ``ceil(size / SHARD)`` shards of
``SHARD`` releases (the last one shorter): a number fixed by the sample count alone. The
side's generator gives the entropy of a ``SeedSequence`` whose ``spawn`` gives each shard
its own stream, and the shards are stacked in their order. Which process ran a shard
therefore changes nothing: the outputs, and so the audit, depend only on the seed, for
any ``workers`` and on a Dask cluster alike (the counts are sums over shards).

Processes. ``workers > 1`` runs the shards on a ``ProcessPoolExecutor`` whose workers are
started by a fork server (``multiprocessing``'s "forkserver": a fresh interpreter, started
once, that forks each worker; "spawn" where there is none), never by a bare fork of this
process: a threaded runtime loaded here (polars' thread pool behind OpenDP's front end)
would be copied with its locks held, and a worker could hang for ever. The fork server
is started single-threaded (OPENBLAS_NUM_THREADS=1 unless set), preloads userdp (so a
worker costs a fork and an unpickling) and dies with the process that started it
(``_forkserver_preload``). The mechanism travels pickled: by reference for a
module-level function, or, for the command line's targets, as the recipe that rebuilds it
(``targets.UserMechanism``: the worker imports the module and calls the factory once).
A mechanism that cannot be pickled (a closure or a lambda given to ``audit()`` from
Python) falls back to forked workers, as before, with a progress note saying so. Pool
size: ``--workers`` capped at ``WORKERS_PER_CORE`` times the cores (and a worker is only
started for a waiting shard), so ``--workers 1000`` never makes 1000 processes. This
process is one of the ``workers``: it runs shards from the end of the list while the
pool's ``workers - 1`` run them from the start, so it works while they start (a worker
needs a moment before its first call, longer when started by the fork server than by a
fork; measured: docs/performance.md, "audits/engine/parallel.py") and the start costs the
audit nothing.

Each worker: ignores SIGINT (the command line's supervisor handles Ctrl-C, ``supervise.py``),
dies with its parent (Linux ``PR_SET_PDEATHSIG``), writes fd 1 to stderr (stdout carries
the result only), reseeds numpy's and Python's global generators from the operating
system, and, when python-dp was loaded before a fork, spends the random buffer it
inherited (``discard_inherited_pydp_buffer``). For a mechanism that draws from a
generator of its own (``reproducible`` is False), two shards with identical outputs, or
identical first outputs, or the first outputs of one shard anywhere in another (a copy of
one generator, shifted), mean that workers replay copies of one stream, which would make
the samples dependent: that is refused (``DuplicateStreamsError``, ``streams.py``).

Seeds (``check_reproducible``, before an audit draws): two calls with generators from one
seed, and, when they agree on outputs that vary, ``SEED_TRIES`` calls with other seeds. A
mechanism whose every seed repeats them ignores its generator (``SeedIgnoredError``); one
that promises reproducible outputs (the attribute named ``SEEDED``: a program over the
process protocol) and does not keep it is ``NotReproducibleError`` (the harness raises it).

What the user's code may not do (each is an error of the mechanism, exit 3 on the command
line, naming the function, the call and the dataset; ``sampling.UserCallError``):

- raise, or end the call with ``SystemExit``, ``KeyboardInterrupt`` (where SIGINT is not
  ours to handle) or any other ``BaseException``: caught at the call, never passed up as
  an exit status;
- change the dataset it is given: each shard fingerprints the dataset (``fingerprint``:
  a hash of its pickle, or of a dataclass's fields) before its first call, after it and
  after its last call, and refuses a change (``MutatedInputError``). Measured: a
  fingerprint of the bench's 40-record list costs about 5 us, once per 5000 calls, where
  copying the dataset for every call would cost a copy per release;
- return releases too large to audit: after the first release of a side (and, for a
  batched mechanism, from the reproducibility check's) the memory the side needs,
  ``MEMORY_FACTOR`` times the releases' bytes, is compared with the memory available, and
  an audit that cannot fit is refused before it fills the machine (``OutputTooLargeError``,
  naming the size of one release);
- end a worker process (``os._exit``, a crash): ``WorkerDiedError``, naming the call from
  the worker's slot (``watch.py``) and how the process ended.

Every call is recorded in the process's ``watch`` slot (region, call index, start time), so
that the supervisor can report a slow call (``--deadline``) and end a hung one
(``--timeout``).

Dask (``scheduler="tcp://host:8786"``, optional extra ``distributed``): the same shards
are submitted to the cluster (the mechanism travels with cloudpickle, so it must be
importable on the workers or defined by value, e.g. in a function). The connection is
given ``SCHEDULER_TIMEOUT`` seconds, then ``SchedulerError``: never a hang.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import multiprocessing
import os
import pickle
import random
import shutil
import signal
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from userdp.audits.engine import watch
from userdp.audits.engine.streams import (
    DuplicateStreamsError,
    check_replays,
    check_streams,
)
from userdp.audits.engine.sampling import (
    NO_RELEASE,
    CallRecorder,
    OneOfBatch,
    SideEvents,
    UserCallError,
    as_outputs,
    is_interrupt,
    mechanism_name,
    raised_text,
    side_outcomes,
)

__all__ = [
    "BATCHED",
    "SCALAR",
    "SCALAR_RNG",
    "SHARD",
    "REPRO_DRAWS",
    "SEED_TRIES",
    "SEED_FALSE_ALARM",
    "SCHEDULER_TIMEOUT",
    "calling_convention",
    "Sampler",
    "batched",
    "check_reproducible",
    "default_workers",
    "worker_cap",
    "VaryingOutputError",
    "DuplicateStreamsError",
    "SeedIgnoredError",
    "NotReproducibleError",
    "SEEDED",
    "PASSTHROUGH",
    "SchedulerError",
    "MutatedInputError",
    "OutputTooLargeError",
    "WorkerDiedError",
    "UserExitError",
    "fingerprint",
    "available_memory",
    "discard_inherited_pydp_buffer",
    "START_METHOD",
    "preload",
]

BATCHED, SCALAR_RNG, SCALAR = "batched", "scalar(dataset, rng)", "scalar(dataset)"
SHARD = 5000  # releases per shard (the unit of work, progress and seeding)
SCHEDULER_TIMEOUT = 10.0  # seconds to reach a Dask scheduler and find a worker
PROGRESS_EVERY = 1.0  # seconds between shard progress lines (the last shard always)
WORKERS_PER_CORE = 4  # the pool's cap: a few per core still helps a mechanism that waits on I/O
MEMORY_FACTOR = 6  # bytes the audit holds per byte of a side's releases (both sides, the
# stacked arrays, their encoded copies), rounded up
START_METHOD = None  # None: "forkserver" (or "spawn"), "fork" for a mechanism that cannot be pickled
_KINDS = {"b": "bool", "i": "integer", "u": "integer", "f": "float", "U": "str"}
_SIGNATURES = "mechanism(dataset, rng, size) (batched), mechanism(dataset, rng) or mechanism(dataset)"
_INDEX, _FIRST, _CALL_T = watch.INDEX, watch.FIRST, watch.CALL_T


class VaryingOutputError(ValueError):
    """A scalar mechanism's outputs changed shape or type from one call to another."""


class NotReproducibleError(UserCallError):
    """A mechanism that promises the same outputs for one seed (``SEEDED``: a program over the
    process protocol) gave different ones."""


class SeedIgnoredError(UserCallError):
    """Generators from different seeds gave the same varying outputs: the mechanism ignores its
    generator and replays one stream (``check_reproducible``)."""


class SchedulerError(RuntimeError):
    """The Dask scheduler cannot be used (unreachable, no workers, ``distributed`` missing)."""


class MutatedInputError(UserCallError):
    """The mechanism changed the dataset it was given."""


class OutputTooLargeError(UserCallError):
    """The releases would not fit in memory (or did not: a MemoryError)."""


class WorkerDiedError(UserCallError):
    """A worker process ended while it ran the mechanism (os._exit, a crash, a kill)."""


class UserExitError(UserCallError):
    """The mechanism ended a call with a BaseException that is not an Exception (SystemExit,
    KeyboardInterrupt where SIGINT is not handled here, ...)."""


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_cap(workers: int) -> tuple[int, str | None]:
    """(processes the pool may start, a note when ``workers`` was capped): at most
    ``WORKERS_PER_CORE`` per core; a worker is only started for a shard that waits."""
    cap = WORKERS_PER_CORE * default_workers()
    if workers <= cap:
        return workers, None
    return cap, (
        f"{workers} workers capped at {cap}: {WORKERS_PER_CORE} per core on {default_workers()} "
        f"core(s), and one only for a shard of {SHARD} releases that waits"
    )


def calling_convention(mechanism) -> str:
    """BATCHED, SCALAR_RNG or SCALAR by the rule in the module docstring; TypeError otherwise."""
    name = mechanism_name(mechanism)
    if not callable(mechanism):
        raise TypeError(f"mechanism must be callable as {_SIGNATURES}, got {type(mechanism).__name__}")
    try:
        sig = inspect.signature(mechanism)
    except (TypeError, ValueError):
        raise TypeError(
            f"mechanism {name}: its signature cannot be read, so it is unclear how to call it; "
            f"wrap it in a def with one of the signatures {_SIGNATURES}"
        ) from None
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is p.empty for p in positional)
    kw_required = [p.name for p in params if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
    names = [p.name for p in positional]
    if not kw_required:
        if required == 3 or (required < 3 and names[2:3] == ["size"]):
            return BATCHED
        if required == 2 or (required < 2 and names[1:2] == ["rng"]):
            return SCALAR_RNG
        if required == 1:
            return SCALAR
    why = (
        f"required keyword-only parameter(s) {kw_required}"
        if kw_required
        else f"{required} required positional parameters"
    )
    raise TypeError(
        f"mechanism {name}{sig} is ambiguous ({why}): it must be callable as {_SIGNATURES}, "
        "where the batched form has exactly 3 required positional parameters or a third named "
        "'size', and the one-release form with an optional second parameter names it 'rng'; "
        "wrap it in a def, e.g. `def mechanism(dataset, rng): return f(dataset)`"
    )


# ------------------------------------------------------------------ guards
def fingerprint(dataset) -> bytes | None:
    """A hash of the dataset's content: of its fields for a dataclass (``UserDataset``, whose
    cached properties are not content), else of its pickle; None if it cannot be pickled."""
    try:
        if dataclasses.is_dataclass(dataset) and not isinstance(dataset, type):
            dataset = [getattr(dataset, f.name) for f in dataclasses.fields(dataset)]
        data = pickle.dumps(dataset, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return None
    return hashlib.blake2b(data, digest_size=16).digest()


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _release_bytes(out) -> int:
    if out is NO_RELEASE:
        return 0
    try:
        return int(np.asarray(out).nbytes)
    except Exception:
        return 0


def _size_text(nbytes: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{int(nbytes)} bytes"


def _one_release_text(out) -> str:
    try:
        a = np.asarray(out)
        return f"{a.size:,} {a.dtype} value(s), {_size_text(a.nbytes)}"
    except Exception:
        return _size_text(_release_bytes(out))


def _check_memory(name: str, per_release: int, side_size: int, example=None) -> None:
    """Refuse (``OutputTooLargeError``) a side whose releases cannot fit in memory."""
    need = MEMORY_FACTOR * per_release * side_size
    avail = available_memory()
    if avail is None or need <= avail:
        return
    one = _one_release_text(example) if example is not None else _size_text(per_release)
    raise OutputTooLargeError(
        f"mechanism {name}: one release is {one}; {side_size:,} releases per side need about {_size_text(need)} "
        f"with the audit's copies, more than the {_size_text(avail)} of memory available: audit a smaller "
        "release (one coordinate, or a summary of it) or fewer --samples"
    )


def _memory_error(name: str, exc: BaseException, per_release: int | None, where: str) -> OutputTooLargeError:
    size = "" if not per_release else f" (one release is {_size_text(per_release)})"
    return OutputTooLargeError(
        f"mechanism {name} ran out of memory {where}{size}: audit a smaller release "
        f"(one coordinate, or a summary of it) or fewer --samples ({raised_text(exc)})"
    )


def _mutated(name: str, where: str, calls: str) -> MutatedInputError:
    return MutatedInputError(
        f"mechanism {name} modified its input: {where} changed during {calls}. A mechanism must "
        "not change the dataset it is given (every call must see the same neighbouring pair): copy it "
        "first, e.g. `records = list(dataset)`"
    )


# ------------------------------------------------------------------ one shard
def _form(x) -> tuple:
    a = np.asarray(x)
    if a.dtype == object and a.ndim == 1 and any(v is None for v in a):  # a multi-partition release:
        cells = [v for v in a if v is not None]  # None in cells not released
        return a.shape, _KINDS.get(np.asarray(cells).dtype.kind, "object") if cells else None
    return a.shape, _KINDS.get(a.dtype.kind, str(a.dtype))


def _stack(outputs: list, start: int) -> np.ndarray:
    """The releases of one shard as one array; ``start`` is the index of its first call.
    Calls that returned ``NO_RELEASE`` (None) make it a masked array (``sampling.as_outputs``)."""
    first = type(outputs[0])
    same_scalar = issubclass(first, (int, float, bool, np.generic)) and all(type(o) is first for o in outputs)
    if same_scalar:  # the fast path: one plain scalar type throughout
        return np.asarray(outputs)
    released = [(i, o) for i, o in enumerate(outputs) if o is not NO_RELEASE]
    gaps = False  # some output has a cell not released
    if released:
        i0, f0 = released[0][0], _form(released[0][1])
        for i, o in released:
            f = _form(o)
            gaps = gaps or np.asarray(o).dtype == object
            if f[1] is None and f[0] == f0[0]:  # no cell released: fits any type
                continue
            if f0[1] is None and f[0] == f0[0]:
                i0, f0 = i, f
            if f != f0:
                raise _varying(start + i, f, start + i0, f0)
    return as_outputs(outputs) if len(released) < len(outputs) or gaps else np.asarray(outputs)


def _part_form(part) -> tuple | None:
    """(shape of one output, type) of a shard; None if it released nothing at all."""
    if np.ma.isMaskedArray(part) and np.ma.getmaskarray(part).all():
        return None
    return part.shape[1:], _KINDS.get(part.dtype.kind, str(part.dtype))


def _join(parts: list, tasks) -> np.ndarray:
    """The shards of one side, in order, checked to share one output form; a shard with no
    release at all takes the form of the others."""
    forms = [(t[2], _part_form(p)) for t, p in zip(tasks, parts)]
    formed = [(i, f) for i, f in forms if f is not None]
    for i, f in formed[1:]:
        if f != formed[0][1]:
            raise _varying(i, f, formed[0][0], formed[0][1])
    if not any(np.ma.isMaskedArray(p) for p in parts):
        return np.concatenate(parts) if len(parts) > 1 else parts[0]
    if formed:
        ref = next(p for p in parts if _part_form(p) is not None)
        parts = [
            p
            if _part_form(p) is not None
            else np.ma.MaskedArray(np.zeros((p.shape[0],) + ref.shape[1:], ref.dtype), mask=True)
            for p in parts
        ]
    return np.ma.concatenate(parts) if len(parts) > 1 else parts[0]


def _varying(i: int, f: tuple, start: int, f0: tuple) -> VaryingOutputError:
    return VaryingOutputError(
        f"call {i} returned shape {f[0]} ({f[1]}), but call {start} returned shape "
        f"{f0[0]} ({f0[1]}); every call must return the same shape and type"
    )


def _shard(
    mechanism,
    calling: str,
    dataset,
    seed,
    start: int,
    size: int,
    where: str = "the dataset",
    side_size: int = 0,
    planned: int = 0,
    record: bool = False,
) -> np.ndarray:
    """``size`` releases, calls ``start`` to ``start + size - 1`` of the side (``side_size``
    calls in all; the memory check is for ``planned`` releases per side, when larger). Each
    call is recorded in this process's watch slot; what the user's code does wrong is a
    ``UserCallError`` naming the call (module docstring). ``record``: a call that raises or
    warns is an outcome (``sampling.CallRecorder``), and (releases, (raised, warned)) is returned."""
    name = mechanism_name(mechanism)
    fp = fingerprint(dataset)
    s = watch.slot()
    ints, floats, mono = s.ints, s.floats, time.monotonic
    args = (dataset, np.random.default_rng(seed)) if calling == SCALAR_RNG else (dataset,)
    outputs = []
    append = outputs.append
    rec = CallRecorder(mechanism, start, outputs) if record else None
    s.enter(f"mechanism {name} on {where}", side_size or size)
    ints[_FIRST] = start
    if rec is not None:
        mechanism = rec.__enter__()  # the recording call
    try:
        ints[_INDEX], floats[_CALL_T] = start, mono()
        append(mechanism(*args))
        _check_memory(name, _release_bytes(outputs[0]), max(side_size, size, planned), outputs[0])
        if fp is not None and fingerprint(dataset) != fp:
            raise _mutated(name, where, f"call {start}")
        for i in range(start + 1, start + size):
            ints[_INDEX], floats[_CALL_T] = i, mono()
            append(mechanism(*args))
    except UserCallError:
        raise
    except BaseException as exc:
        if is_interrupt(exc) or getattr(exc, PASSTHROUGH, False):
            raise  # a program's TargetError: a complete report, as it is
        call = int(ints[_INDEX])
        if isinstance(exc, MemoryError):
            raise _memory_error(
                name, exc, _release_bytes(outputs[0]) if outputs else None, f"at call {call} on {where}"
            ) from exc
        cls = UserCallError if isinstance(exc, Exception) else UserExitError
        raise cls(f"mechanism {name} {raised_text(exc)} at call {call} on {where}") from exc
    finally:
        s.leave()
        if rec is not None:
            rec.__exit__(None, None, None)
    if fp is not None and size > 1 and fingerprint(dataset) != fp:
        raise _mutated(name, where, f"calls {start + 1} to {start + size - 1}")
    try:
        return _stack(outputs, start) if rec is None else (_stack(outputs, start), (rec.raised, rec.warned))
    except MemoryError as exc:
        raise _memory_error(name, exc, _release_bytes(outputs[0]), f"stacking calls {start} on of {where}") from exc


# ------------------------------------------------------------------ worker processes
_WORKER = {}  # what each worker process runs: the pickled mechanism and how to call it


def _install(payload, mechanism, calling: str, name: str, watch_dir: str | None, forked: bool) -> None:
    """Pool initializer (module docstring): signals, parent death, stdout, generators, the mechanism."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's (or the supervisor's)
    _die_with_parent()
    try:
        sys.stdout.flush()
        os.dup2(2, 1)  # the user's prints: stderr, never the result
    except (OSError, ValueError):
        pass
    sys.stdout = sys.stderr
    watch.use(watch_dir)
    np.random.seed()  # from the operating system: a mechanism using them gets its own stream
    random.seed()
    if forked and "pydp" in sys.modules:
        discard_inherited_pydp_buffer()
    _WORKER.clear()
    _WORKER.update(payload=payload, mechanism=mechanism, calling=calling, name=name)


def _worker_mechanism():
    """The mechanism, unpickled at the first shard (so that a failure is the shard's error)."""
    w = _WORKER
    if w["mechanism"] is None:
        with watch.region(f"loading mechanism {w['name']}"):
            try:
                w["mechanism"] = pickle.loads(w["payload"])
            except BaseException as exc:
                if is_interrupt(exc):
                    raise
                raise UserCallError(f"loading mechanism {w['name']} in a worker process {raised_text(exc)}") from None
    return w["mechanism"]


def _pooled_shard(*task):  # (dataset, seed, start, size, where, side_size, planned, record): _shard's
    return _shard(_worker_mechanism(), _WORKER["calling"], *task)


def _die_with_parent() -> None:
    """Linux: this process gets SIGKILL when its parent ends (``PR_SET_PDEATHSIG``)."""
    parent = os.getppid()
    if prctl(1, signal.SIGKILL) and os.getppid() != parent:  # the parent ended before the call took
        os._exit(1)


def prctl(option: int, value: int) -> bool:
    """Linux ``prctl(option, value)``; False elsewhere or on failure."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


SECURE_URBG_BUFFER_BYTES = 65536
_pydp_guarded_pid = None


def discard_inherited_pydp_buffer() -> None:
    """Once per process: spend the python-dp random buffer inherited across a fork.

    Google's differential-privacy C++ library (python-dp, and PipelineDP, whose noise and
    partition selection are python-dp's) draws every random number from SecureURBG, a
    process-wide 65536-byte buffer of OpenSSL RAND_bytes (cc/algorithms/rand.h: kBufferSize
    = 65536; rand.cc: a draw reads 8 bytes and refreshes the buffer only when it is spent).
    A process forked after the buffer was filled inherits a copy of the unread part, so two
    workers' first releases are IDENTICAL (measured: the first 84 of python-dp's BoundedSum)
    before each worker's own RAND_bytes refresh makes them diverge. So every forked worker in
    which python-dp is loaded draws and discards 8192 draws of 8 bytes first (``_install``;
    a worker started by the fork server imports python-dp afresh, with nothing to discard)."""
    global _pydp_guarded_pid
    pid = os.getpid()
    if pid == _pydp_guarded_pid:
        return
    from pydp.algorithms import numerical_mechanisms

    burn = numerical_mechanisms.LaplaceMechanism(1.0, 1.0)
    for _ in range(SECURE_URBG_BUFFER_BYTES // 8):
        burn.add_noise(0.0)
    _pydp_guarded_pid = pid


def _start_method(picklable: bool) -> str:
    if START_METHOD is not None:
        return START_METHOD
    methods = multiprocessing.get_all_start_methods()
    if not picklable and "fork" in methods:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


_FORKSERVER_STARTED_BY = None  # the process that started the fork server (a forked child starts its own)


_PRELOAD: list[str] = []  # more modules the fork server imports (``preload``)


def preload(module: str) -> None:
    """Have the fork server import ``module`` too (before it starts), so that workers need not:
    the command line registers itself (audits/cli/main.py)."""
    if not isinstance(module, str) or not module.startswith("userdp."):
        raise ValueError(f"module must be the dotted name of a userdp module, got {module!r:.80}")
    if module not in _PRELOAD:
        _PRELOAD.append(module)


def _prepare_forkserver() -> None:
    """Start the fork server once, single-threaded and with userdp preloaded (module docstring)."""
    global _FORKSERVER_STARTED_BY
    if _FORKSERVER_STARTED_BY == os.getpid():
        return
    from multiprocessing import forkserver

    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    chosen = any(os.environ.get(k) for k in names)
    os.environ["USERDP_FORKSERVER_PARENT"] = str(os.getpid())  # _forkserver_preload: die with this process
    try:
        if not chosen:
            for k in names:
                os.environ[k] = "1"
        multiprocessing.get_context("forkserver").set_forkserver_preload(
            ["userdp.audits.engine._forkserver_preload", *_PRELOAD]
        )
        forkserver.ensure_running()
    finally:
        os.environ.pop("USERDP_FORKSERVER_PARENT", None)
        if not chosen:
            for k in names:
                os.environ.pop(k, None)
    _FORKSERVER_STARTED_BY = os.getpid()


# ------------------------------------------------------------------ the sampler
class Sampler:
    """Any mechanism as a batched callable ``(dataset, rng, size) -> size outputs``.

    Use it as a context manager: it owns the process pool or the Dask client, if any (an
    exception, Ctrl-C included, kills the pool's workers at once instead of waiting for
    their shards). Set ``pair`` to the pair being drawn to name it in messages and progress
    lines, and ``reproducible`` to the result of ``check_reproducible`` to turn on the
    duplicate-stream check.
    """

    def __init__(self, mechanism, *, workers: int = 1, scheduler: str | None = None, progress=None, planned: int = 0):
        self.mechanism, self.calling = mechanism, calling_convention(mechanism)
        self.workers, self.scheduler, self.progress = workers, scheduler, progress
        self.planned = planned  # releases per side the caller will ask for (the memory check)
        self.pair = self.reproducible = None
        self.__qualname__ = getattr(mechanism, "__qualname__", None)  # how draw() names it in its messages
        self.__module__ = getattr(mechanism, "__module__", None)
        self.start_method = None  # how the pool's workers were started, once they were
        self._pool = self._client = self._own_watch = None
        self._per_release = 0  # bytes of the largest release seen (a batched call's memory check)
        self._anchors = []  # (first outputs of a shard as symbols, what it was): the replay check across calls

    def __repr__(self) -> str:
        return mechanism_name(self.mechanism)

    def __enter__(self):
        if self.scheduler is not None and self.calling != BATCHED:
            self._client = _connect(self.scheduler)
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if self._pool is not None:
            if exc_type is None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None
            else:
                self._kill_pool()
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._own_watch is not None:
            shutil.rmtree(self._own_watch, ignore_errors=True)
            self._own_watch = None

    def __call__(self, dataset, rng, size: int, record: bool = False):
        """``size`` releases; with ``record``, (releases, ``sampling.SideEvents``) (``CallRecorder``)."""
        if self.calling == BATCHED and not record:
            return self._batched(dataset, rng, size)
        n = -(-size // SHARD)
        seeds = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist()).spawn(n)
        where = self.describe(dataset)
        tasks = [
            (dataset, seeds[j], j * SHARD, min(SHARD, size - j * SHARD), where, size, self.planned, record)
            for j in range(n)
        ]
        if self.calling == BATCHED:  # one release per call (record): in this process (a program cannot travel)
            parts = self._local(tasks, OneOfBatch(self.mechanism), SCALAR_RNG)
        elif self._client is not None:
            parts = self._dask(tasks)
        elif self.workers > 1 and n > 1:
            parts = self._pooled(tasks)
        else:
            parts = self._local(tasks)
        records, parts = ([p[1] for p in parts], [p[0] for p in parts]) if record else ((), parts)
        out = _join(parts, tasks)
        if self.reproducible is False and len(parts) > 1:
            check_streams(parts, tasks)
            self._anchors = check_replays(parts, tasks, where, self._anchors)
        if not record:
            return out
        return out, SideEvents.of_calls(size, [r for p in records for r in p[0]], [w for p in records for w in p[1]])

    def outcomes(self, dataset, rng, size: int, per_call: bool = False):
        """(releases, what the calls did) of one side: ``sampling.side_outcomes``."""
        return side_outcomes(self, dataset, rng, size, per_call)

    def describe(self, dataset) -> str:
        """The dataset as messages name it: "the first dataset of 'pair 0: ...'"."""
        p = self.pair
        for side in ("first", "second"):
            if p is not None and getattr(p, side) is dataset:
                return f"the {side} dataset of {p.description!r}"
        return "the dataset"

    def where(self, dataset) -> str:
        """The dataset as progress lines name it: "first dataset of pair 0: ..."."""
        p = self.pair
        for side in ("first", "second"):
            if p is not None and getattr(p, side) is dataset:
                return f"{side} dataset of {p.description}"
        return "dataset"

    # -------------------------------------------------------------- a batched mechanism: one call, here
    def _batched(self, dataset, rng, size: int):
        name, where = mechanism_name(self.mechanism), self.describe(dataset)
        if self._per_release:
            _check_memory(name, self._per_release, max(size, self.planned))
        fp = fingerprint(dataset)
        s = watch.slot()
        s.enter(f"mechanism {name} on {where}, one batched call of {size} releases")
        try:
            out = self.mechanism(dataset, rng, size)
        except UserCallError:
            raise
        except MemoryError as exc:
            raise _memory_error(name, exc, self._per_release, f"on {where}") from exc
        except Exception:
            raise  # draw() names it with its pair, as it always did
        except BaseException as exc:
            if is_interrupt(exc) or getattr(exc, PASSTHROUGH, False):
                raise  # a complete report of the target's failure (a program's TargetError): as it is
            raise UserExitError(
                f"mechanism {name} {raised_text(exc)} on {where} (one batched call of {size} releases)"
            ) from exc
        finally:
            s.leave()
        if fp is not None and fingerprint(dataset) != fp:
            raise _mutated(name, where, f"its batched call of {size} releases")
        if size > 0:
            self._per_release = max(self._per_release, _release_bytes(out) // size)
            _check_memory(name, self._per_release, max(size, self.planned))
        return out

    # -------------------------------------------------------------- where the shards run
    def _local(self, tasks, mechanism=None, calling=None) -> list:
        parts, t = [], _Ticker(self, tasks)
        for j, task in enumerate(tasks):
            parts.append(_shard(mechanism or self.mechanism, calling or self.calling, *task))
            t.done(j)
        return parts

    def _pooled(self, tasks) -> list:
        """The shards over ``workers`` processes: ``workers - 1`` in the pool, and this one, which
        takes shards from the end of the list that no worker has started (so it works while
        the pool's workers start, and the result is the same whoever ran a shard)."""
        if self._pool is None:
            self._pool = self._start_pool(len(tasks))
        futures = {}
        try:
            with warnings.catch_warnings():
                if self.start_method == "fork":  # Python >= 3.12 warns on fork() with threads: said in _start_pool
                    warnings.filterwarnings("ignore", r".*use of fork\(\) may lead to deadlocks", DeprecationWarning)
                for j, task in enumerate(tasks):
                    futures[self._pool.submit(_pooled_shard, *task)] = j
        except BrokenProcessPool as exc:  # a worker died as the shards were handed out
            for f in futures:
                f.cancel()
            pool, self._pool = self._pool, None
            raise self._worker_died(pool) from exc
        parts, t = [None] * len(tasks), _Ticker(self, tasks)
        try:
            for f, j in reversed(list(futures.items())):
                if not f.cancel():  # the workers have reached this shard
                    break
                del futures[f]
                parts[j] = _shard(self.mechanism, self.calling, *tasks[j])
                t.done(j)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
        return self._gather(futures, tasks, parts=parts, ticker=t)

    def _start_pool(self, n_tasks: int):
        name = mechanism_name(self.mechanism)
        try:
            payload, why = pickle.dumps(self.mechanism), None
        except Exception as exc:
            payload, why = None, f"{type(exc).__name__}: {exc}"
        method = _start_method(payload is not None)
        n, capped = worker_cap(self.workers)
        n -= 1  # this process is one of the workers (_pooled)
        if method == "fork":
            n = min(n, n_tasks - 1)  # a fork context starts every worker at once
        if capped and self.progress is not None:
            self.progress(f"note: {capped}")
        if method == "fork" and self.progress is not None:
            self.progress(
                f"note: mechanism {name} cannot be pickled ({why}), so its {n} other worker process(es) "
                "are forked from this one; a threaded library loaded here (polars, for one) can hang a "
                "forked worker. Define the mechanism at module level to have its workers started "
                "by a fork server"
            )
        if method == "forkserver":
            _prepare_forkserver()
        watch_dir = watch.directory()
        if watch_dir is None:  # audit() from Python: a private record of the workers
            watch_dir = self._own_watch = watch.make_directory("workers")
        initargs = (
            payload,
            self.mechanism if method == "fork" else None,
            self.calling,
            name,
            watch_dir,
            method == "fork",
        )
        self.start_method = method
        return ProcessPoolExecutor(
            n, mp_context=multiprocessing.get_context(method), initializer=_install, initargs=initargs
        )

    def _kill_pool(self) -> None:
        """End the workers at once (an error or an interrupt: their shards are not wanted)."""
        pool, self._pool = self._pool, None
        for p in list((getattr(pool, "_processes", None) or {}).values()):
            try:
                p.kill()
            except (OSError, AttributeError, ValueError):
                pass
        pool.shutdown(wait=False, cancel_futures=True)

    def _dask(self, tasks) -> list:
        futures = {
            self._client.submit(_shard, self.mechanism, self.calling, *task, pure=False): j
            for j, task in enumerate(tasks)
        }
        from distributed import as_completed as dask_completed

        return self._gather(futures, tasks, dask_completed)

    def _gather(self, futures: dict, tasks, completed=as_completed, parts=None, ticker=None) -> list:
        parts = [None] * len(tasks) if parts is None else parts
        t = _Ticker(self, tasks) if ticker is None else ticker
        try:
            for f in completed(list(futures)):
                j = futures[f]
                parts[j] = f.result()
                t.done(j)
        except BrokenProcessPool as exc:
            pool, self._pool = self._pool, None  # a worker died: a fresh pool next time
            raise self._worker_died(pool) from exc
        finally:
            for f in futures:
                f.cancel()
        return parts

    def _worker_died(self, pool) -> WorkerDiedError:
        """Which worker ended, in which call and how: the pool's exit codes and the workers' slots."""
        manager = getattr(pool, "_executor_manager_thread", None)
        if manager is not None:
            manager.join(5.0)  # it terminates the other workers (SIGTERM) and joins them
        codes = {pid: p.exitcode for pid, p in (getattr(pool, "_processes", None) or {}).items()}
        pool.shutdown(wait=False, cancel_futures=True)
        ended = [pid for pid, c in codes.items() if c is not None and c != -signal.SIGTERM] or list(codes)
        d = watch.directory() or self._own_watch
        views = [v for v in (watch.read_slot(d, pid) for pid in ended) if v is not None] if d else []
        busy = [v for v in views if v.busy] or views
        pid = busy[0].pid if busy else (ended[0] if ended else None)
        what = busy[0].where() if busy else f"mechanism {mechanism_name(self.mechanism)}"
        return WorkerDiedError(f"{what} ended its worker process {pid}: {watch.exit_text(codes.get(pid))}")


class _Ticker:
    """Progress per shard, at most one line per PROGRESS_EVERY seconds (and the last one)."""

    def __init__(self, sampler: Sampler, tasks):
        self.s, self.tasks, self.count, self.last = sampler, tasks, 0, time.perf_counter()
        self.size = sum(t[3] for t in tasks)

    def done(self, j: int) -> None:
        self.count += 1
        now = time.perf_counter()
        if self.s.progress is None or len(self.tasks) < 2:
            return
        if self.count == len(self.tasks) or now - self.last >= PROGRESS_EVERY:
            self.last = now
            self.s.progress(
                f"{self.s.where(self.tasks[j][0])}: shard {j + 1} done, {self.count}/{len(self.tasks)} "
                f"shards of {self.size} releases"
            )


def _connect(address: str):
    try:
        from distributed import Client
    except ImportError:
        raise SchedulerError("a Dask scheduler needs the optional extra: pip install 'userdp[distributed]'") from None
    try:
        client = Client(address, timeout=SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SchedulerError(
            f"cannot reach the Dask scheduler at {address!r} within {SCHEDULER_TIMEOUT:g} s: {exc}"
        ) from exc
    try:
        client.wait_for_workers(1, timeout=SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        client.close()
        raise SchedulerError(f"the Dask scheduler at {address!r} has no worker after {SCHEDULER_TIMEOUT:g} s") from exc
    return client


def batched(mechanism):
    """``mechanism`` as a batched callable run in this process (for a plot or a shape check),
    with the sampler's guards (a batched mechanism is called as itself)."""
    return Sampler(mechanism)


REPRO_DRAWS = 16  # outputs per call of the reproducibility check
SEEDED = "userdp_seeded"  # a mechanism with this attribute true must give the same outputs for one seed
PASSTHROUGH = "userdp_passthrough"  # a BaseException with this attribute true leaves a batched call unwrapped
SEED_TRIES = 4  # further seeds tried when two seeds' varying outputs agree (``check_reproducible``)
# Pr[SEED_TRIES seeds each repeat a varying call of REPRO_DRAWS independent outputs] <= SEED_FALSE_ALARM:
# a varying vector v of n independent outputs has Pr[V = v] <= max_p p^(n-1) (1 - p) = ((n-1)/n)^(n-1) / n
# (one value at p, one at 1 - p: 0.0238 at n = 16), for any output distribution, discrete or not.
SEED_FALSE_ALARM = (((REPRO_DRAWS - 1) / REPRO_DRAWS) ** (REPRO_DRAWS - 1) / REPRO_DRAWS) ** SEED_TRIES  # 3.2e-7


def check_reproducible(mechanism, datasets, seed: np.random.SeedSequence) -> bool | None:
    """Two calls of the (batched) ``mechanism`` with generators from the same seed, REPRO_DRAWS
    outputs each: different outputs (False: it draws from a generator of its own, so the
    audit is not reproducible from its seed), or equal outputs that vary within a call (True).
    ``datasets`` are tried in turn (the first pair's two sides) until one gives outputs that
    vary: equal outputs that never vary (an empty partition's "no release", a clipped atom)
    prove nothing. None if they never vary or the mechanism raised (the audit reports a
    raising pair's error).

    Equal varying outputs are then drawn with SEED_TRIES other seeds: if every one repeats them,
    the mechanism ignores the generator it is given and replays one stream (its calls are copies
    of each other: an audit of them would count one draw many times), and ``SeedIgnoredError`` is
    raised. A mechanism that uses its generator repeats a varying call of REPRO_DRAWS independent
    outputs under SEED_TRIES other seeds with probability at most SEED_FALSE_ALARM (3.2e-7)."""
    for dataset in datasets:
        try:
            a, b = (_plain_outputs(mechanism, dataset, np.random.default_rng(seed)) for _ in range(2))
        except (VaryingOutputError, MutatedInputError, OutputTooLargeError, UserExitError, WorkerDiedError):
            raise  # a broken mechanism, not an undetermined check: the caller reports it
        except Exception:
            return None
        if not _same(a, b):
            return False
        if _varies(*a):
            _check_seed_used(mechanism, dataset, seed, a)
            return True
    return None


def _plain_outputs(mechanism, dataset, rng) -> tuple[np.ndarray, np.ndarray]:
    x = as_outputs(mechanism(dataset, rng, REPRO_DRAWS))
    return np.ma.filled(x, 0), np.ma.getmaskarray(x)


def _varies(data: np.ndarray, mask: np.ndarray) -> bool:
    """Whether the outputs of one call differ (NaN equals NaN: a call of NaNs does not vary)."""
    if (mask != mask[0]).any():
        return True
    rows = data.reshape(data.shape[0], -1)
    if rows.dtype.kind == "f":
        rows = np.ascontiguousarray(rows, dtype=np.float64).view(np.uint64)  # the bits: NaN == NaN
    return bool((rows != rows[0]).any())


def _same(a, b) -> bool:
    (da, ma), (db, mb) = a, b
    return (
        da.shape == db.shape
        and np.array_equal(ma, mb)
        and np.array_equal(da, db, equal_nan=da.dtype.kind == "f" and db.dtype.kind == "f")
    )


def _check_seed_used(mechanism, dataset, seed: np.random.SeedSequence, first) -> None:
    """Raise ``SeedIgnoredError`` when SEED_TRIES other seeds all give the outputs ``first`` again."""
    for other in seed.spawn(SEED_TRIES):
        try:
            again = _plain_outputs(mechanism, dataset, np.random.default_rng(other))
        except (VaryingOutputError, MutatedInputError, OutputTooLargeError, UserExitError, WorkerDiedError):
            raise
        except Exception:
            return  # it raised: the audit reports a raising pair's error
        if not _same(first, again):
            return
    name = mechanism_name(getattr(mechanism, "mechanism", mechanism))
    where = mechanism.describe(dataset) if hasattr(mechanism, "describe") else "the dataset"
    raise SeedIgnoredError(
        f"mechanism {name} ignores the seed it is given: on {where}, calls with generators from "
        f"{SEED_TRIES + 1} different seeds returned the same {REPRO_DRAWS} varying outputs, so it replays "
        "one stream and its releases are not independent draws (no audit of them can be valid). Draw "
        "every random number from the generator passed in (a program: from the request's seed). A "
        f"mechanism that uses it repeats them with probability at most {SEED_FALSE_ALARM:.2g}"
    )
