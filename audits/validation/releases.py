"""Releases as rows: TARGET's and the reference's outputs read as float arrays (one row per release,
one column per coordinate the spec's flatten makes), as every check of ``userdp validate`` reads them.

A release that is not numbers of one shape is TARGET's error (``UserCodeError``, exit 3), named with
the call that made it; so is a release of the reference's size in another shape (``release_rows``:
(size, 1) where the reference gives (size,), or [x] where it gives a number), named as such.
``NONFINITE``: how +inf, -inf and NaN are mapped for the auditor.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from userdp.audits.engine.usercode import UsageError, UserCodeError
from userdp.audits.validation import ValidationSpec, add_axis
from userdp.audits.validation.target import BATCHED, PythonTarget

__all__ = [
    "flat_releases",
    "rows_one",
    "release_rows",
    "reference_rows",
    "nested_flat",
    "stage_vector",
    "NONFINITE",
    "finite_for_audit",
    "first_release",
    "stack_releases",
    "call_target",
    "check_release_shape",
]


def flat_releases(out, size: int, flatten, where: str) -> np.ndarray:
    """The ``size`` releases of one batched call as a float array (size, k); NaN rows = no release."""
    if flatten is not None:
        try:
            out = flatten(out, size)
        except (UsageError, UserCodeError):
            raise
        except Exception as exc:
            raise UserCodeError(
                f"{where} returned {type(out).__name__}, which is not a release of this "
                f"algorithm ({type(exc).__name__}: {exc})"
            ) from None
    if isinstance(out, np.ma.MaskedArray):
        out = np.ma.filled(out.astype(float), np.nan)
    try:
        a = np.asarray(out, dtype=float)
    except (TypeError, ValueError, OverflowError) as exc:
        raise UserCodeError(
            f"{where} returned {_what(out)}, expected {size} numeric releases "
            f"(an array of shape ({size},) or ({size}, k)): {exc}"
        ) from None
    except Exception as exc:  # the output's own code (its __float__, __array__, __len__) raised: the target's
        inner = out.flat[0] if isinstance(out, np.ndarray) and out.dtype == object and out.size else out
        raise UserCodeError(
            f"{where} returned {type(inner).__name__}, whose conversion to numbers (its own __float__, __array__ "
            f"or __len__) raised {type(exc).__name__}: {exc}"
        ) from None
    if a.ndim == 0 or a.shape[0] != size:
        raise UserCodeError(
            f"{where} returned shape {a.shape} for size={size}; expected ({size},) or ({size}, k): "
            "`size` independent releases, one per row"
        )
    return a.reshape(size, -1)


def _what(out) -> str:
    """What a release is, for a message: its type and, for text or objects, its first value."""
    if isinstance(out, (str, bytes)):
        return f"the text {out!r:.60}"
    if isinstance(out, np.ndarray) and out.size and out.dtype.kind in "USO":
        kind = {"U": "text", "S": "bytes", "O": "Python objects"}[out.dtype.kind]
        first = out.ravel()[0]
        first = first.item() if isinstance(first, np.generic) else first
        return f"{kind} ({type(first).__name__} {first!r:.60}{' ...' if out.size > 1 else ''})"
    if isinstance(out, (list, tuple)) and out and not isinstance(out[0], (int, float)):
        return f"a {type(out).__name__} of {type(out[0]).__name__} ({out[0]!r:.60} ...)"
    return type(out).__name__


def rows_one(outs: list, flatten, where: str) -> np.ndarray:
    """The outputs of ``len(outs)`` one-release calls as rows; ``None`` (no release) is a NaN row."""
    n = len(outs)
    if n and flatten is None and all(type(o) in (float, int, np.float64, np.float32) for o in outs):
        return np.asarray(outs, dtype=float).reshape(n, 1)  # the common fast path: scalars
    rows, k, missing = [], None, []
    for i, o in enumerate(outs):
        if o is None:
            missing.append(i)
            rows.append(None)
            continue
        r = flat_releases(add_axis(o), 1, flatten, f"{where} (call {i + 1})")[0]
        if k is None:
            k = r.size
        elif r.size != k:
            raise UserCodeError(
                f"{where} returned a release of {r.size} values on call {i + 1} and of {k} on an "
                "earlier call: every release must have the same shape"
            )
        rows.append(r)
    if k is None:
        return np.full((n, 1), np.nan)
    return np.stack([np.full(k, np.nan) if r is None else r for r in rows])


def _one_shape(out, batched: bool):
    """The shape of one release in TARGET's raw output (a batched call's, or one call's), None where
    it is not a plain array of numbers (a masked, tuple or object output: checked elsewhere)."""
    if isinstance(out, (np.ma.MaskedArray, tuple, dict, str, bytes)) or out is None:
        return None
    try:
        a = np.asarray(out)
    except Exception:
        return None
    if a.dtype.kind not in "biuf":
        return None
    if batched:
        return a.shape[1:] if a.ndim else None
    return a.shape


def check_release_shape(spec: ValidationSpec, out, reference_out, batched: bool, who: str, where: str) -> None:
    """TARGET's release shape against the reference's, where the spec has no ``flatten`` (the
    release is an array): a release of another shape is TARGET's error, named, even with the
    right number of values ((size, 1) for (size,), or [x] for a number), because a caller who
    reads the paper's shape would read it wrongly. ``out``: TARGET's batched output (``batched``)
    or one call's; ``reference_out``: the reference's batched output."""
    if spec.flatten is not None:
        return
    mine, ours = _one_shape(out, batched), _one_shape(reference_out, True)
    if mine is None or ours is None or mine == ours:
        return
    if int(np.prod(mine)) != int(np.prod(ours)):
        return  # another number of values: the differential check names it, with both counts

    def name(shape):
        return "a number" if shape == () else f"an array of shape {shape}"

    raise UserCodeError(
        f"TARGET {who} returned each release as {name(mine)} on {where}; the reference's is {name(ours)} "
        f"({spec.release}): the same values in another shape"
        + (
            ""
            if mine != ours + (1,)
            else f" (an extra axis of length 1: return shape (size, {', '.join(map(str, ours))}), not (size, "
            f"{', '.join(map(str, mine))}))".replace("(size, )", "(size,)")
            if batched
            else " (a one-element list or array: return the number itself)"
            if ours == ()
            else " (an extra axis of length 1)"
        )
        + f"; `userdp validate {spec.algorithm} --signature` shows the call shape"
    )


def _reference_shape_out(spec: ValidationSpec, target: PythonTarget, dataset, params):
    """Two releases of the reference on ``dataset`` (its shape), once per dataset and parameter
    shape for ``target`` (a fixed generator: the shape does not depend on the draw)."""
    values = getattr(dataset, "values", None)
    key = (
        None if values is None else np.shape(values)[1:],
        tuple(
            sorted((k, np.shape(v) if isinstance(v, (list, tuple, np.ndarray)) else None) for k, v in params.items())
        ),
    )
    cache = target.__dict__.setdefault("_reference_shapes", {})
    if key not in cache:
        try:
            cache[key] = spec.reference(dataset, rng=np.random.default_rng(0), size=2, **params)
        except Exception:  # the reference refuses the input: no shape to compare with
            cache[key] = None
    return cache[key]


def release_rows(
    spec: ValidationSpec, target: PythonTarget, dataset, rng, n: int, params, where: str, one_per_call: bool = False
) -> np.ndarray:
    """n releases of TARGET as rows (n, k): one batched call, or n one-release calls (a target
    made one release per call, or one whose batched releases are not independent). A release of
    another shape than the reference's is TARGET's error (``check_release_shape``)."""
    who = f"TARGET {target.who}"

    def shaped(out, batched):
        if spec.flatten is None:
            ref = _reference_shape_out(spec, target, dataset, params)
            if ref is not None:
                check_release_shape(spec, out, ref, batched, target.who, where or "a case")
        return out

    if target.shape == BATCHED and not one_per_call:
        return flat_releases(shaped(target.release(dataset, rng, n, params, where), True), n, spec.flatten, who)
    if target.shape == BATCHED:
        return np.concatenate(
            [
                flat_releases(shaped(target.release(dataset, rng, 1, params, where), True), 1, spec.flatten, who)
                for _ in range(n)
            ]
        )
    outs = target.release(dataset, rng, n, params, where)
    if outs:
        shaped(next((o for o in outs if o is not None), None), False)
    return rows_one(outs, spec.flatten, who)


def reference_rows(spec: ValidationSpec, dataset, rng, n: int, params) -> np.ndarray:
    """n releases of the reference on ``dataset`` as rows (n, k)."""
    return flat_releases(spec.reference(dataset, rng=rng, size=n, **params), n, spec.flatten, "the reference")


def nested_flat(out):
    """A stage's output as one flat float vector: an array, a number, or a (nested) tuple, list or
    dict (values in key order) of them (Krichene's (A, b)); None when it is not numeric."""
    if isinstance(out, Mapping):
        out = tuple(out[k] for k in sorted(out, key=str))
    if isinstance(out, (tuple, list)) and any(isinstance(p, (tuple, list, np.ndarray, Mapping)) for p in out):
        parts = [nested_flat(p) for p in out]
        return None if any(p is None for p in parts) else np.concatenate(parts) if parts else np.zeros(0)
    try:
        return np.asarray(out, dtype=float).ravel()
    except (TypeError, ValueError):
        return None


def stage_vector(spec: ValidationSpec, out) -> np.ndarray:
    """TARGET's statistic stage's output as one flat vector (the spec's ``stage_flatten``, else ``nested_flat``)."""
    if spec.stage_flatten is not None:
        try:
            return np.asarray(spec.stage_flatten(out), dtype=float).ravel()
        except Exception as exc:
            raise UserCodeError(
                f"TARGET's statistic stage returned {type(out).__name__}, not this algorithm's "
                f"statistic ({type(exc).__name__}: {exc})"
            ) from None
    own = nested_flat(out)
    if own is None:
        raise UserCodeError(f"TARGET's statistic stage returned {type(out).__name__}, not numbers")
    return own


NONFINITE = 1e9  # +inf, -inf and NaN in a release are audited as +-1e9 and 1.5e9


def finite_for_audit(out):
    """A release with inf or NaN (already an invariant violation in the differential) as the auditor can
    read it: +inf -> 1e9, -inf -> -1e9, NaN -> 1.5e9. A fixed map of the output is post-processing, so
    a loss the audit finds on the mapped releases is a loss of the releases themselves."""
    if isinstance(out, np.ma.MaskedArray) or not isinstance(out, np.ndarray) or out.dtype.kind != "f":
        return out
    if np.all(np.isfinite(out)):
        return out
    return np.nan_to_num(out, nan=1.5 * NONFINITE, posinf=NONFINITE, neginf=-NONFINITE)


def first_release(out):
    """The one release of a size-1 batched call (a masked row: no release, ``None``)."""
    if isinstance(out, np.ma.MaskedArray):
        if np.ma.getmaskarray(out)[0].any():
            return None
        out = out.data
    if isinstance(out, tuple):
        return tuple(np.asarray(p)[0] for p in out)
    return np.asarray(out)[0]


def stack_releases(outs: list, where: str):
    """One-release outputs as the harness's batched form: an array, or a masked one with a
    masked row where a call made no release (``None``)."""
    if all(type(o) in (float, int, np.float64) for o in outs):
        return np.asarray(outs, dtype=float)
    if any(o is None for o in outs):
        rows = rows_one(outs, None, where)
        return np.ma.masked_invalid(rows if rows.shape[1] > 1 else rows[:, 0])
    try:
        return np.asarray([np.asarray(o, dtype=float) for o in outs])
    except (TypeError, ValueError) as exc:
        raise UserCodeError(f"{where} returned releases that are not numbers of one shape: {exc}") from None


def call_target(what: str, f, *args, **kwargs):
    """``f(*args, **kwargs)``, TARGET's code: what it raises becomes a UserCodeError naming ``what`` (exit 3)."""
    try:
        return f(*args, **kwargs)
    except (UsageError, UserCodeError):
        raise
    except (Exception, SystemExit) as exc:
        raise UserCodeError(f"{what} raised {type(exc).__name__}: {exc}") from exc
