"""The program's answers as userdp reads them (``audits/validation/protocol.py``, docs/protocol.md):
stage values (``decode_value``) and releases (``masked``, ``tuples``, ``concat``, ``unreadable``).

What cannot be read is refused, never guessed: a number that is not a finite binary64 (1e400 is JSON
and overflows; an integer of 400 digits has no binary64), an empty array, a ragged array (arrays of
one rank and different lengths: a tuple's parts, such as Krichene et al.'s (A-hat, b-hat), differ in
rank), a string where a number is due. The protocol turns each into a ``TargetError`` naming it.
"""

from __future__ import annotations

import json
import math

import numpy as np

__all__ = ["decode_value", "show", "unreadable", "masked", "tuples", "concat"]


def show(x) -> str:
    """A JSON value in at most 80 characters, for a message."""
    text = json.dumps(x) if not isinstance(x, float) or math.isfinite(x) else repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


def decode_value(value):
    """A stage's value as userdp compares it: a number as a float, an array as a float ndarray
    (a tuple's parts, arrays of different ranks, as a tuple of its decoded parts: Krichene's (A, b)),
    an object as a dict of decoded values. ValueError for what is not such a value: a number that is
    not a finite binary64 (1e400, an integer of 400 digits), an empty array, a ragged array (parts of
    one rank and different lengths), a string; TypeError for a value of another JSON type."""
    if isinstance(value, dict):
        return {k: decode_value(v) for k, v in value.items()}
    if isinstance(value, list):
        if not value:
            raise ValueError("an empty array (a value has at least one number)")
        try:
            a = np.array(value, dtype=float)
        except OverflowError:
            raise ValueError("an array holding a number that is not a binary64 (an integer of many digits)") from None
        except (ValueError, TypeError):
            parts = tuple(decode_value(v) for v in value)
            ranks = [np.ndim(p) if not isinstance(p, tuple) else -1 for p in parts]
            if any(isinstance(p, dict) for p in parts) or len(set(ranks)) < len(ranks):
                raise ValueError(
                    f"a ragged array {show(value)} (arrays must be rectangular; a tuple's parts differ in rank)"
                ) from None
            return parts
        if not np.isfinite(a).all():
            raise ValueError(f"an array holding a number that is not finite ({show(value)})")
        if a.size == 0:
            raise ValueError("an array without numbers")
        return a
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"a stage value must be a number, an array or an object, got {type(value).__name__}")
    try:
        v = float(value)
    except OverflowError:
        raise ValueError(f"the integer {str(value)[:20]}... ({len(str(value))} digits) is not a binary64") from None
    if not math.isfinite(v):
        raise ValueError(f"the number {value!r} is not finite (1e400 is JSON, and overflows a binary64)")
    return v


def unreadable(out) -> str | None:
    """Why decoded releases cannot be audited (a value not finite, a release without numbers), or None."""
    parts = out if isinstance(out, tuple) else (out,)
    for p in parts:
        data = np.ma.getdata(p)
        if data.size == 0 or data.ndim >= 2 and 0 in data.shape[1:]:
            return "empty releases ([]): a release is a number or an array of at least one"
        if data.dtype.kind == "f" and not np.isfinite(data).all():
            return f"a release that is not finite ({float(data[~np.isfinite(data)].flat[0])!r})"
    return None


def masked(items: list) -> np.ma.MaskedArray:
    """Releases with nulls ("no release") as a masked array whose masked rows are the nulls."""
    shapes = {np.shape(r) for r in items if r is not None}
    if len(shapes) != 1:
        raise ValueError(f"release shapes {sorted(shapes)}")
    shape = shapes.pop()
    data = np.zeros((len(items),) + shape)
    mask = np.zeros(data.shape, dtype=bool)
    for j, r in enumerate(items):
        if r is None:
            mask[j] = True
        else:
            data[j] = np.asarray(r, dtype=float)
    return np.ma.MaskedArray(data, mask=mask)


def tuples(items: list) -> tuple:
    """Releases that are tuples of parts as one array per part (ValueError: ragged, or parts vary)."""
    k = {len(r) for r in items}
    if len(k) != 1:
        raise ValueError(f"releases with {sorted(k)} parts")
    parts = tuple(np.array([r[p] for r in items], dtype=float) for p in range(k.pop()))
    if len({p.ndim for p in parts}) < len(parts):  # [[1, 2], [3]]: one rank, two lengths
        raise ValueError("ragged releases (arrays must be rectangular; a tuple's parts differ in rank)")
    return parts


def concat(parts: list):
    """The decoded releases of several requests as one (ValueError when their forms differ)."""
    if isinstance(parts[0], tuple):
        if not all(isinstance(p, tuple) and len(p) == len(parts[0]) for p in parts):
            raise ValueError("the program's releases changed form between requests")
        return tuple(np.concatenate([p[j] for p in parts]) for j in range(len(parts[0])))
    if any(isinstance(p, np.ma.MaskedArray) for p in parts):
        return np.ma.concatenate(parts)
    return np.concatenate(parts)
