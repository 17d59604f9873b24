"""Calling any mechanism: its calling convention, shards over processes or a Dask cluster,
and the reproducibility check (issue 12, items 2 and 3).

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
its outputs stacked; every output must have the shape and type (bool, integer, float) of
the first, or the draw fails naming both calls (``VaryingOutputError``).

Shards. The ``size`` releases of one side are cut into ``ceil(size / SHARD)`` shards of
``SHARD`` releases (the last one shorter): a number fixed by the sample count alone. The
side's generator gives the entropy of a ``SeedSequence`` whose ``spawn`` gives each shard
its own stream, and the shards are stacked in their order. Which process ran a shard
therefore changes nothing: the outputs, and so the audit, depend only on the seed, for
any ``workers`` and on a Dask cluster alike (the counts are sums over shards).

Processes. ``workers > 1`` runs the shards on a ``ProcessPoolExecutor`` whose workers are
forked from this process, so that a mechanism defined anywhere (a closure, a lambda, a
module not importable by a fresh interpreter) runs there without being pickled; the
datasets and outputs are pickled. Where ``fork`` does not exist, ``spawn`` is used and the
mechanism must be picklable. A forked worker inherits copies of the generators this
process holds: it reseeds numpy's and Python's global generators from the operating
system, and for a mechanism that draws from a generator of its own (``reproducible`` is
False), two shards with identical outputs mean that workers replay copies of one stream,
which would make the samples dependent: that is refused (``DuplicateStreamsError``).

Dask (``scheduler="tcp://host:8786"``, optional extra ``distributed``): the same shards
are submitted to the cluster (the mechanism travels with cloudpickle, so it must be
importable on the workers or defined by value, e.g. in a function). The connection is
given ``SCHEDULER_TIMEOUT`` seconds, then ``SchedulerError``: never a hang.
"""
from __future__ import annotations

import hashlib
import inspect
import math
import multiprocessing
import os
import random
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from .sampling import NO_RELEASE, as_outputs, mechanism_name

__all__ = ["BATCHED", "SCALAR", "SCALAR_RNG", "SHARD", "REPRO_DRAWS", "SCHEDULER_TIMEOUT", "calling_convention", "Sampler",
           "batched", "check_reproducible", "default_workers", "VaryingOutputError", "DuplicateStreamsError",
           "SchedulerError"]

BATCHED, SCALAR_RNG, SCALAR = "batched", "scalar(dataset, rng)", "scalar(dataset)"
SHARD = 5000                    # releases per shard (the unit of work, progress and seeding)
SCHEDULER_TIMEOUT = 10.0        # seconds to reach a Dask scheduler and find a worker
PROGRESS_EVERY = 1.0            # seconds between shard progress lines (the last shard always)
_KINDS = {"b": "bool", "i": "integer", "u": "integer", "f": "float"}
_SIGNATURES = "mechanism(dataset, rng, size) (batched), mechanism(dataset, rng) or mechanism(dataset)"


class VaryingOutputError(ValueError):
    """A scalar mechanism's outputs changed shape or type from one call to another."""


class DuplicateStreamsError(RuntimeError):
    """Worker processes replayed copies of one random stream: the samples are not independent."""


class SchedulerError(RuntimeError):
    """The Dask scheduler cannot be used (unreachable, no workers, ``distributed`` missing)."""


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                                    # not on Linux
        return os.cpu_count() or 1


def calling_convention(mechanism) -> str:
    """BATCHED, SCALAR_RNG or SCALAR by the rule in the module docstring; TypeError otherwise."""
    name = mechanism_name(mechanism)
    if not callable(mechanism):
        raise TypeError(f"mechanism must be callable as {_SIGNATURES}, got {type(mechanism).__name__}")
    try:
        sig = inspect.signature(mechanism)
    except (TypeError, ValueError):
        raise TypeError(f"mechanism {name}: its signature cannot be read, so it is unclear how to call it; "
                        f"wrap it in a def with one of the signatures {_SIGNATURES}") from None
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
    why = (f"required keyword-only parameter(s) {kw_required}" if kw_required else
           f"{required} required positional parameters")
    raise TypeError(f"mechanism {name}{sig} is ambiguous ({why}): it must be callable as {_SIGNATURES}, "
                    "where the batched form has exactly 3 required positional parameters or a third named "
                    "'size', and the one-release form with an optional second parameter names it 'rng'; "
                    "wrap it in a def, e.g. `def mechanism(dataset, rng): return f(dataset)`")


# ------------------------------------------------------------------ one shard
def _form(x) -> tuple:
    a = np.asarray(x)
    if a.dtype == object and a.ndim == 1 and any(v is None for v in a):     # a multi-partition release:
        cells = [v for v in a if v is not None]                           # None in cells not released
        return a.shape, _KINDS.get(np.asarray(cells).dtype.kind, "object") if cells else None
    return a.shape, _KINDS.get(a.dtype.kind, str(a.dtype))


def _stack(outputs: list, start: int) -> np.ndarray:
    """The releases of one shard as one array; ``start`` is the index of its first call.
    Calls that returned ``NO_RELEASE`` (None) make it a masked array (``sampling.as_outputs``)."""
    first = type(outputs[0])
    same_scalar = issubclass(first, (int, float, bool, np.generic)) and all(type(o) is first for o in outputs)
    if same_scalar:                                      # the fast path: one plain scalar type throughout
        return np.asarray(outputs)
    released = [(i, o) for i, o in enumerate(outputs) if o is not NO_RELEASE]
    gaps = False                                         # some output has a cell not released
    if released:
        i0, f0 = released[0][0], _form(released[0][1])
        for i, o in released:
            f = _form(o)
            gaps = gaps or np.asarray(o).dtype == object
            if f[1] is None and f[0] == f0[0]:           # no cell released: fits any type
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
        parts = [p if _part_form(p) is not None else
                 np.ma.MaskedArray(np.zeros((p.shape[0],) + ref.shape[1:], ref.dtype), mask=True) for p in parts]
    return np.ma.concatenate(parts) if len(parts) > 1 else parts[0]


def _varying(i: int, f: tuple, start: int, f0: tuple) -> VaryingOutputError:
    return VaryingOutputError(f"call {i} returned shape {f[0]} ({f[1]}), but call {start} returned shape "
                              f"{f0[0]} ({f0[1]}); every call must return the same shape and type")


def _shard(mechanism, calling: str, dataset, seed, start: int, size: int) -> np.ndarray:
    """``size`` releases, calls ``start`` to ``start + size - 1`` of the side."""
    if calling == SCALAR_RNG:
        rng = np.random.default_rng(seed)
        outputs = [mechanism(dataset, rng) for _ in range(size)]
    else:
        outputs = [mechanism(dataset) for _ in range(size)]
    return _stack(outputs, start)


_WORKER = {}                    # the mechanism, installed in each forked worker


def _install(mechanism, calling: str) -> None:
    """Pool initializer: fresh global generators (the fork copied this process's), the mechanism."""
    np.random.seed()            # from the operating system: a mechanism using them gets its own stream
    random.seed()
    _WORKER["call"] = (mechanism, calling)


def _pooled_shard(dataset, seed, start: int, size: int) -> np.ndarray:
    return _shard(*_WORKER["call"], dataset, seed, start, size)


PREFIX_FALSE_ALARM = 1e-12     # Pr[two independent shards share their first K outputs], all pairs together


def _prefix_length(plain: list, shortest: int, n_shards: int) -> int | None:
    """The K for which independent shards share their first K outputs with probability at most
    PREFIX_FALSE_ALARM over all pairs of shards: q^K <= PREFIX_FALSE_ALARM / C(n_shards, 2),
    q = sum_v p_v^2 the collision probability of one output, estimated on all the outputs of
    the side (a misestimate can only refuse a good mechanism, with an error, never bias a
    bound). None when K would exceed the shortest shard (outputs too concentrated for a
    prefix to mean anything; whole shards are still compared)."""
    data = np.concatenate([d.reshape(d.shape[0], -1) for d, _ in plain])
    mask = np.concatenate([m.reshape(m.shape[0], -1)[:, :1] for _, m in plain])
    if data.shape[1] == 1 and not mask.any():
        _, counts = np.unique(data[:, 0], return_counts=True)
    else:
        _, counts = np.unique(np.column_stack([data.astype(float), mask]), axis=0, return_counts=True)
    q = float(np.sum((counts / data.shape[0]) ** 2))
    if q >= 1.0:
        return None
    K = math.ceil(math.log(PREFIX_FALSE_ALARM / max(1, n_shards * (n_shards - 1) // 2)) / math.log(q))
    return K if K <= shortest else None


def _digest(a: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=16).digest()


# ------------------------------------------------------------------ the sampler
class Sampler:
    """Any mechanism as a batched callable ``(dataset, rng, size) -> size outputs``.

    Use it as a context manager: it owns the process pool or the Dask client, if any.
    Set ``pair`` to the pair being drawn to name it in progress lines, and ``reproducible``
    to the result of ``check_reproducible`` to turn on the duplicate-stream check.
    """

    def __init__(self, mechanism, *, workers: int = 1, scheduler: str | None = None, progress=None):
        self.mechanism, self.calling = mechanism, calling_convention(mechanism)
        self.workers, self.scheduler, self.progress = workers, scheduler, progress
        self.pair = self.reproducible = None
        self.__qualname__ = getattr(mechanism, "__qualname__", None)   # how draw() names it in its messages
        self.__module__ = getattr(mechanism, "__module__", None)
        self._pool = self._client = None

    def __repr__(self) -> str:
        return mechanism_name(self.mechanism)

    def __enter__(self):
        if self.scheduler is not None and self.calling != BATCHED:
            self._client = _connect(self.scheduler)
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def __call__(self, dataset, rng, size: int):
        if self.calling == BATCHED:
            return self.mechanism(dataset, rng, size)
        n = -(-size // SHARD)
        seeds = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist()).spawn(n)
        tasks = [(dataset, seeds[j], j * SHARD, min(SHARD, size - j * SHARD)) for j in range(n)]
        if self._client is not None:
            parts = self._dask(tasks)
        elif self.workers > 1 and n > 1:
            parts = self._pooled(tasks)
        else:
            parts = self._local(tasks)
        out = _join(parts, tasks)
        if self.reproducible is False and len(parts) > 1:
            self._check_streams(parts, tasks)
        return out

    # -------------------------------------------------------------- where the shards run
    def _local(self, tasks) -> list:
        parts, t = [], _Ticker(self, tasks)
        for j, task in enumerate(tasks):
            parts.append(_shard(self.mechanism, self.calling, *task))
            t.done(j)
        return parts

    def _pooled(self, tasks) -> list:
        if self._pool is None:
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
            self._pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_install,
                                             initargs=(self.mechanism, self.calling))
        with warnings.catch_warnings():     # Python >= 3.12 warns on fork() with threads (e.g. OpenBLAS's, idle)
            warnings.filterwarnings("ignore", r".*use of fork\(\) may lead to deadlocks", DeprecationWarning)
            futures = {self._pool.submit(_pooled_shard, *task): j for j, task in enumerate(tasks)}
        return self._gather(futures, tasks)

    def _dask(self, tasks) -> list:
        futures = {self._client.submit(_shard, self.mechanism, self.calling, *task, pure=False): j
                   for j, task in enumerate(tasks)}
        from distributed import as_completed as dask_completed
        return self._gather(futures, tasks, dask_completed)

    def _gather(self, futures: dict, tasks, completed=as_completed) -> list:
        parts, t = [None] * len(tasks), _Ticker(self, tasks)
        try:
            for f in completed(list(futures)):
                j = futures[f]
                parts[j] = f.result()
                t.done(j)
        except BrokenProcessPool:
            self._pool = None                               # a worker died: a fresh pool next time
            raise
        finally:
            for f in futures:
                f.cancel()
        return parts

    def _check_streams(self, parts, tasks) -> None:
        """Refuse shards that replay one stream: two shards with identical outputs, or with an
        identical prefix of ``_prefix_length`` releases (a forked copy of a buffered generator
        repeats only until its buffer is spent: Google's SecureURBG behind python-dp and
        PipelineDP keeps 64 KiB, and two forked workers' first ~100 releases were equal)."""
        plain = [(np.ma.filled(p, 0), np.ma.getmaskarray(p)) for p in parts]
        K = _prefix_length(plain, min(t[3] for t in tasks), len(parts))
        whole, prefix = {}, {}
        for j, (data, mask) in enumerate(plain):
            if (data != data[0]).any() or (mask != mask[0]).any():    # a constant shard: equal by nature
                self._refuse_if_seen(whole, _digest(data) + _digest(mask), j, tasks, "identical outputs")
            if K is not None:
                self._refuse_if_seen(prefix, _digest(data[:K]) + _digest(mask[:K]), j, tasks,
                                     f"the same first {K} outputs")

    @staticmethod
    def _refuse_if_seen(seen: dict, key: bytes, j: int, tasks, what: str) -> None:
        k = seen.setdefault(key, j)
        if k != j:
            raise DuplicateStreamsError(
                f"shards {k} and {j} (calls {tasks[k][2]} and {tasks[j][2]} on) returned {what}: the mechanism "
                "draws from a generator of its own, and the worker processes replay copies of it, so the "
                "samples are not independent; create the generator inside the call (or use the rng it is "
                "given), or run with workers=1")

    def where(self, dataset) -> str:
        p = self.pair
        for side in ("first", "second"):
            if p is not None and getattr(p, side) is dataset:
                return f"{side} dataset of {p.description}"
        return "dataset"


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
            self.s.progress(f"{self.s.where(self.tasks[j][0])}: shard {j + 1} done, {self.count}/{len(self.tasks)} "
                            f"shards of {self.size} releases")


def _connect(address: str):
    try:
        from distributed import Client
    except ImportError:
        raise SchedulerError("a Dask scheduler needs the optional extra: pip install 'userdp[distributed]'") \
            from None
    try:
        client = Client(address, timeout=SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SchedulerError(f"cannot reach the Dask scheduler at {address!r} within {SCHEDULER_TIMEOUT:g} s: "
                             f"{exc}") from exc
    try:
        client.wait_for_workers(1, timeout=SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        client.close()
        raise SchedulerError(f"the Dask scheduler at {address!r} has no worker after {SCHEDULER_TIMEOUT:g} s") \
            from exc
    return client


def batched(mechanism):
    """``mechanism`` as a batched callable run in this process (for a plot or a shape check)."""
    return mechanism if calling_convention(mechanism) == BATCHED else Sampler(mechanism)


REPRO_DRAWS = 16          # outputs per call of the reproducibility check


def check_reproducible(mechanism, datasets, seed: np.random.SeedSequence) -> bool | None:
    """Two calls of the (batched) ``mechanism`` with generators from the same seed, REPRO_DRAWS
    outputs each: different outputs (False: it draws from a generator of its own, so the
    audit is not reproducible from its seed), or equal outputs that vary within a call (True).
    ``datasets`` are tried in turn (the first pair's two sides) until one gives outputs that
    vary: equal outputs that never vary (an empty partition's "no release", a clipped atom)
    prove nothing. None if they never vary or the mechanism raised (the audit reports a
    raising pair's error)."""
    for dataset in datasets:
        try:
            a, b = (as_outputs(mechanism(dataset, np.random.default_rng(seed), REPRO_DRAWS)) for _ in range(2))
        except VaryingOutputError:
            raise                       # a broken mechanism, not an undetermined check: the caller reports it
        except Exception:
            return None
        (da, ma), (db, mb) = ((np.ma.filled(x, 0), np.ma.getmaskarray(x)) for x in (a, b))
        if not (np.array_equal(ma, mb) and np.array_equal(da, db, equal_nan=da.dtype.kind == "f")):
            return False
        if (da != da[0]).any() or (ma != ma[0]).any():
            return True
    return None
