"""Independent streams across worker processes: the checks that refuse shards replaying copies of
one generator (``parallel.Sampler`` runs them for a mechanism that draws from a generator of its own,
``reproducible`` False, whose shards ran in several processes).

- ``check_streams``: two shards with identical outputs, or with the same first K outputs
  (``prefix_length``: a forked copy of a buffered generator repeats only until its buffer is spent);
- ``check_replays``: the first K outputs of a shard anywhere else, at any offset, in this call or
  (through anchors kept from them) an earlier one (``window_length``): processes that hold copies
  of one generator started at different points of it replay it shifted. Each output is a 64-bit
  symbol (``symbols``), and every window of K symbols is hashed in one pass (``window_hashes``, a
  polynomial hash modulo 2^64); a hash match is confirmed on the symbols.

Both choose K so that independent outputs are refused with probability at most
``PREFIX_FALSE_ALARM`` (1e-12) over all the comparisons made, from the estimated collision
probability q of one output (``collision``); outputs too concentrated for that skip the check.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

__all__ = [
    "PREFIX_FALSE_ALARM",
    "ANCHOR",
    "ANCHORS_KEPT",
    "DuplicateStreamsError",
    "collision",
    "prefix_length",
    "window_length",
    "symbols",
    "window_hashes",
    "digest",
    "check_streams",
    "check_replays",
]


class DuplicateStreamsError(RuntimeError):
    """Worker processes replayed copies of one random stream: the samples are not independent."""


PREFIX_FALSE_ALARM = 1e-12  # Pr[two independent shards share their first K outputs], all pairs together


def collision(plain: list) -> float:
    """q = sum_v p_v^2, the collision probability of one output, estimated on all the (data, mask)
    parts of a side."""
    data = np.concatenate([d.reshape(d.shape[0], -1) for d, _ in plain])
    mask = np.concatenate([m.reshape(m.shape[0], -1)[:, :1] for _, m in plain])
    if data.dtype.kind not in "biuf":  # str labels: their codes
        data = np.unique(data.ravel(), return_inverse=True)[1].reshape(data.shape)
    if data.shape[1] == 1 and not mask.any():
        _, counts = np.unique(data[:, 0], return_counts=True)
    else:
        _, counts = np.unique(np.column_stack([data.astype(float), mask]), axis=0, return_counts=True)
    return float(np.sum((counts / data.shape[0]) ** 2))


def prefix_length(plain: list, shortest: int, n_shards: int) -> int | None:
    """The K for which independent shards share their first K outputs with probability at most
    PREFIX_FALSE_ALARM over all pairs of shards: q^K <= PREFIX_FALSE_ALARM / C(n_shards, 2),
    q = sum_v p_v^2 the collision probability of one output, estimated on all the outputs of
    the side (a misestimate can only refuse a good mechanism, with an error, never bias a
    bound). None when K would exceed the shortest shard (outputs too concentrated for a
    prefix to mean anything; whole shards are still compared)."""
    q = collision(plain)
    if q >= 1.0:
        return None
    K = math.ceil(math.log(PREFIX_FALSE_ALARM / max(1, n_shards * (n_shards - 1) // 2)) / math.log(q))
    return K if K <= shortest else None


ANCHOR = 256  # outputs of each shard kept for the replay check of later calls (``check_replays``)
ANCHORS_KEPT = 1024  # the most recent shards' anchors kept (2 MB at most)
_B = 0x9E3779B97F4A7C15  # odd: invertible modulo 2^64 (the window hash)
_B_INV = pow(_B, -1, 1 << 64)
_MASKED = np.uint64(0xA5A5A5A5A5A5A5A5)  # the symbol of "no release"


def symbols(data: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """One uint64 per output (its bits; a hash of its values for a vector or a label), equal for
    equal outputs; "no release" has a symbol of its own."""
    n = data.shape[0]
    d = data.reshape(n, -1)
    with np.errstate(all="ignore"):
        if d.dtype.kind == "f":
            u = np.ascontiguousarray(d, dtype=np.float64).view(np.uint64)
        elif d.dtype.kind in "biu":
            u = np.ascontiguousarray(d, dtype=np.int64).view(np.uint64)
        else:  # labels: a digest of each distinct value, the same in every call
            values, inverse = np.unique(d.ravel(), return_inverse=True)
            codes = np.array(
                [int.from_bytes(hashlib.blake2b(str(v).encode(), digest_size=8).digest(), "little") for v in values],
                dtype=np.uint64,
            )
            u = codes[inverse].reshape(d.shape)
        h = np.zeros(n, dtype=np.uint64)
        for c in range(u.shape[1]):
            h = h * np.uint64(_B) + u[:, c]
        rows = mask.reshape(n, -1)[:, 0] if mask.size else np.zeros(n, bool)
        return np.where(rows, _MASKED, h)


def window_hashes(u: np.ndarray, K: int) -> np.ndarray:
    """h[i] = sum_t u[i + t] B^(K - 1 - t) mod 2^64 for every window of K symbols, in O(len(u)):
    with w[t] = u[t] B^-t, h[i] B^-(i + K - 1) = cumsum(w)[i + K - 1] - cumsum(w)[i - 1]."""
    n = u.size - K + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    with np.errstate(all="ignore"):
        inv = np.cumprod(np.full(u.size, _B_INV, dtype=np.uint64)) * np.uint64(_B)  # B^-t
        fwd = np.cumprod(np.full(u.size, _B, dtype=np.uint64)) * np.uint64(_B_INV)  # B^t
        c = np.concatenate([np.zeros(1, dtype=np.uint64), np.cumsum(u * inv, dtype=np.uint64)])
        return (c[K:] - c[:n]) * fwd[K - 1 : K - 1 + n]


def window_length(parts, shortest: int, comparisons: int) -> int | None:
    """The K for which independent outputs match an anchor of K outputs at one of ``comparisons``
    (anchor, window) places with probability at most PREFIX_FALSE_ALARM: q^K <= PREFIX_FALSE_ALARM /
    comparisons, q the collision probability of one output (``prefix_length``'s estimate). None
    when K would exceed the shortest shard or ANCHOR."""
    plain = [(np.ma.filled(p, 0), np.ma.getmaskarray(p)) for p in parts]
    q = collision(plain)
    if q >= 1.0:
        return None
    K = max(1, math.ceil(math.log(PREFIX_FALSE_ALARM / max(1, comparisons)) / math.log(q)))
    return K if K <= min(shortest, ANCHOR) else None


def digest(a: np.ndarray) -> bytes:
    """A 16-byte digest of an array's bytes (shards compared whole or by prefix)."""
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=16).digest()


def check_streams(parts, tasks) -> None:
    """Refuse shards that replay one stream: two shards with identical outputs, or with an
    identical prefix of ``prefix_length`` releases (a forked copy of a buffered generator
    repeats only until its buffer is spent: Google's SecureURBG behind python-dp and
    PipelineDP keeps 64 KiB, and two forked workers' first ~100 releases were equal)."""
    plain = [(np.ma.filled(p, 0), np.ma.getmaskarray(p)) for p in parts]
    K = prefix_length(plain, min(t[3] for t in tasks), len(parts))
    whole, prefix = {}, {}
    for j, (data, mask) in enumerate(plain):
        if (data != data[0]).any() or (mask != mask[0]).any():  # a constant shard: equal by nature
            _refuse_if_seen(whole, digest(data) + digest(mask), j, tasks, "identical outputs")
        if K is not None:
            _refuse_if_seen(prefix, digest(data[:K]) + digest(mask[:K]), j, tasks, f"the same first {K} outputs")


def check_replays(parts, tasks, where: str, kept: list) -> list:
    """Refuse a shard whose first K outputs appear anywhere else: in another shard at any offset,
    in the same shard at another offset, or, through the anchors kept from earlier calls, in an
    earlier call's shard. Processes holding copies of one generator, started at different points of
    it (a module-level generator seeded at import, this process having drawn the reproducibility
    check's outputs first), replay it shifted, which no comparison of whole shards or prefixes
    sees. K makes Pr[some anchor equals some window] <= PREFIX_FALSE_ALARM for independent
    outputs (``window_length``); None (outputs too concentrated) skips the check. ``kept``: the
    anchors of earlier calls, (symbols, what); returns them with this call's (at most ANCHORS_KEPT)."""
    syms = [symbols(np.ma.filled(p, 0), np.ma.getmaskarray(p)) for p in parts]
    old = list(kept)
    windows = sum(max(0, u.size) for u in syms)
    K = window_length(parts, min(t[3] for t in tasks), (len(parts) + len(old)) * max(1, windows))
    if K is None:
        return kept
    anchors = [(u[:K], f"shard {j} (calls {tasks[j][2]} on) of {where}", j) for j, u in enumerate(syms)]
    anchors += [(a[:K], what, None) for a, what in old if a.size >= K]
    keys = np.array([window_hashes(a, K)[0] for a, _, _ in anchors], dtype=np.uint64)
    for j, u in enumerate(syms):
        hashes = window_hashes(u, K)
        for i in np.flatnonzero(np.isin(hashes, keys)):
            for k in np.flatnonzero(keys == hashes[i]):
                a, what, own = anchors[k]
                if (own == j and i == 0) or not np.array_equal(u[i : i + K], a):
                    continue
                raise DuplicateStreamsError(
                    f"the first {K} outputs of {what} reappear at call {tasks[j][2] + int(i)} ({where}, "
                    f"shard {j}): the mechanism draws from a generator of its own, and the worker "
                    "processes replay copies of it (shifted), so the samples are not independent; "
                    "create the generator inside the call (or use the rng it is given), or run with "
                    "workers=1"
                )
    kept = old + [(u[:ANCHOR], f"shard {j} (calls {tasks[j][2]} on) of {where}") for j, u in enumerate(syms)]
    return kept[-ANCHORS_KEPT:]


def _refuse_if_seen(seen: dict, key: bytes, j: int, tasks, what: str) -> None:
    k = seen.setdefault(key, j)
    if k != j:
        raise DuplicateStreamsError(
            f"shards {k} and {j} (calls {tasks[k][2]} and {tasks[j][2]} on) returned {what}: the mechanism "
            "draws from a generator of its own, and the worker processes replay copies of it, so the "
            "samples are not independent; create the generator inside the call (or use the rng it is "
            "given), or run with workers=1"
        )
