"""Drawing outputs from a mechanism, checking them, and putting them in a common form.

A mechanism is any callable ``mechanism(dataset, rng, size) -> ndarray`` returning
``size`` independent outputs: shape (size,) for scalars, (size, k) for vectors; an
integer or boolean dtype (or ``output="discrete"``) means discrete outputs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MechanismError", "AuditPair", "normalize_pairs", "draw", "encode", "OUTPUT_KINDS"]

OUTPUT_KINDS = ("continuous", "vector", "discrete")


class MechanismError(RuntimeError):
    """The audited mechanism raised; the message names the mechanism and the pair."""


@dataclass(frozen=True)
class AuditPair:
    first: object
    second: object
    description: str
    unit: int | None
    index: int


def mechanism_name(mechanism) -> str:
    name = getattr(mechanism, "__qualname__", None) or getattr(mechanism, "__name__", None)
    mod = getattr(mechanism, "__module__", None)
    return f"{mod}.{name}" if name and mod else repr(mechanism)


def _short(x, limit: int = 60) -> str:
    r = repr(x).replace("\n", " ")
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _is_pair(obj) -> bool:
    if hasattr(obj, "first") and hasattr(obj, "second"):
        return True
    return isinstance(obj, tuple) and len(obj) == 2 and not any(
        hasattr(x, "first") and hasattr(x, "second") for x in obj)


def _one(obj, index: int) -> AuditPair:
    if hasattr(obj, "first") and hasattr(obj, "second"):
        first, second = obj.first, obj.second
        desc = getattr(obj, "description", None)
        unit = getattr(obj, "unit", None)
    elif isinstance(obj, tuple) and len(obj) == 2:
        (first, second), desc, unit = obj, None, None
    else:
        raise TypeError(f"pair {index} must be a 2-tuple (D, D') or have .first/.second, "
                        f"got {type(obj).__name__}")
    desc = desc or f"pair {index}: {_short(first)} vs {_short(second)}"
    return AuditPair(first, second, str(desc), None if unit is None else int(unit), index)


def normalize_pairs(pairs, max_pairs: int) -> list[AuditPair]:
    """One pair (a 2-tuple or an object with .first/.second) or an iterable of them.

    A *tuple* of length 2 whose items are not pairs is one pair (D, D'); lists,
    generators and other iterables are several pairs. At most ``max_pairs`` are taken.
    """
    if _is_pair(pairs):
        return [_one(pairs, 0)]
    try:
        it = iter(pairs)
    except TypeError:
        raise TypeError(f"pairs must be a pair or an iterable of pairs, got {type(pairs).__name__}") from None
    out = []
    for i, obj in enumerate(it):
        if i >= max_pairs:
            break
        out.append(_one(obj, i))
    if not out:
        raise ValueError("pairs is empty: the audit needs at least one neighbouring pair")
    return out


def draw(mechanism, pair: AuditPair, rngs, size: int) -> tuple[np.ndarray, np.ndarray]:
    """size outputs on each side of ``pair``; checks count, NaN and matching shapes."""
    name = mechanism_name(mechanism)
    outs = []
    for side, dataset, rng in (("first", pair.first, rngs[0]), ("second", pair.second, rngs[1])):
        try:
            out = mechanism(dataset, rng, size)
        except Exception as exc:
            raise MechanismError(f"mechanism {name} raised {type(exc).__name__} on the {side} "
                                 f"dataset of {pair.description!r}: {exc}") from exc
        out = np.asarray(out)
        if out.ndim == 0 or out.shape[0] != size:
            raise ValueError(f"mechanism {name} returned shape {out.shape} on the {side} dataset of "
                             f"{pair.description!r}; expected {size} outputs (shape ({size},) or ({size}, k))")
        if out.dtype.kind not in "biuf":
            raise ValueError(f"mechanism {name} returned dtype {out.dtype} on {pair.description!r}; "
                             "expected numbers")
        if out.dtype.kind == "f" and np.isnan(out).any():
            raise ValueError(f"mechanism {name} returned NaN on the {side} dataset of {pair.description!r} "
                             f"(first at output {int(np.argmax(np.isnan(out).reshape(size, -1).any(1)))})")
        outs.append(out)
    if outs[0].shape != outs[1].shape:
        raise ValueError(f"mechanism {name} returned different shapes on the two sides of "
                         f"{pair.description!r}: {outs[0].shape} vs {outs[1].shape}")
    return outs[0], outs[1]


def infer_kind(out: np.ndarray, declared: str | None) -> str:
    if declared is not None:
        if declared not in OUTPUT_KINDS:
            raise ValueError(f"output must be one of {OUTPUT_KINDS}, got {declared!r}")
        if declared == "vector" and out.reshape(out.shape[0], -1).shape[1] == 1:
            return "continuous"
        return declared
    if out.dtype.kind in "biu":
        return "discrete"
    return "vector" if out.reshape(out.shape[0], -1).shape[1] > 1 else "continuous"


def encode(a: np.ndarray, b: np.ndarray, kind: str):
    """Common form of both sides: floats (n,), floats (n, d), or int codes (n,) + values."""
    n = a.shape[0]
    if kind == "continuous":
        if a.reshape(n, -1).shape[1] != 1:
            raise ValueError(f"output='continuous' needs scalar outputs, got shape {a.shape}")
        return a.reshape(n).astype(float, copy=False), b.reshape(n).astype(float, copy=False), None
    if kind == "vector":
        a2, b2 = a.reshape(n, -1).astype(float), b.reshape(n, -1).astype(float)
        if not (np.isfinite(a2).all() and np.isfinite(b2).all()):
            raise ValueError("vector outputs must be finite to be projected")
        return a2, b2, None
    both = np.concatenate([a.reshape(n, -1), b.reshape(n, -1)])
    if both.shape[1] == 1:
        uniq, inv = np.unique(both[:, 0], return_inverse=True)
        values = [v.item() for v in uniq]
    else:
        uniq, inv = _unique_rows(both)
        values = [tuple(v.item() for v in row) for row in uniq]
    inv = inv.reshape(-1).astype(np.int64)
    return inv[:n], inv[n:], values


def _unique_rows(x: np.ndarray):
    """np.unique(x, axis=0, return_inverse=True), via one int64 key per row when the
    columns' distinct values fit a mixed radix below 2**62 (much faster than axis=0)."""
    cols = [np.unique(x[:, j], return_inverse=True) for j in range(x.shape[1])]
    radices = [u.size for u, _ in cols]
    if float(np.prod(np.asarray(radices, dtype=float))) >= 2.0**62:
        return np.unique(x, axis=0, return_inverse=True)
    key = np.zeros(x.shape[0], dtype=np.int64)
    for (u, inv), r in zip(cols, radices):       # lexicographic: first column most significant
        key = key * r + inv.reshape(-1)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return x[first], inv
