"""Argument checks shared by every reference module.

Each check raises ``ValueError`` (bad value) or ``TypeError`` (bad type) with a
message that names the argument, the offending value and the violated bound.
Nothing here clips or repairs input: a reference implementation refuses.
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "check_positive",
    "check_epsilon",
    "check_delta",
    "check_sensitivity",
    "check_generator",
    "check_size",
    "check_finite_array",
    "check_in_interval",
]


def _real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def check_positive(value, name: str) -> float:
    """Return ``value`` as a float after checking 0 < value < inf."""
    v = _real(value, name)
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {v!r}")
    return v


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """A privacy level: finite and > 0 (epsilon = 0 would demand infinite noise)."""
    return check_positive(epsilon, name)


def check_delta(delta, name: str = "delta") -> float:
    """A failure probability: 0 <= delta < 1."""
    d = _real(delta, name)
    if not (0.0 <= d < 1.0):
        raise ValueError(f"{name} must lie in [0, 1), got {d!r}")
    return d


def check_sensitivity(sensitivity, name: str = "sensitivity") -> float:
    """A sensitivity: finite and > 0 (a zero sensitivity would release unnoised)."""
    return check_positive(sensitivity, name)


def check_generator(rng, name: str = "rng") -> np.random.Generator:
    """Randomness only from an explicit ``numpy.random.Generator`` (DESIGN §4)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{name} must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )
    return rng


def check_size(size, name: str = "size") -> int | None:
    """``None`` (one release) or a positive integer number of independent releases."""
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise TypeError(f"{name} must be None or a positive int, got {type(size).__name__} {size!r}")
    if size < 1:
        raise ValueError(f"{name} must be >= 1, got {size!r}")
    return int(size)


def check_finite_array(x, name: str, *, ndim: tuple[int, ...] | None = None) -> np.ndarray:
    """A float array with only finite entries; names the first bad index."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be convertible to a float array: {exc}") from None
    if ndim is not None and a.ndim not in ndim:
        raise ValueError(f"{name} must have ndim in {ndim}, got shape {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite; {name}[{', '.join(map(str, idx))}] = {a[idx].item()!r}")
    return a


def check_in_interval(x, lo: float, hi: float, name: str) -> np.ndarray:
    """Every entry of ``x`` in the closed interval [lo, hi]; names the first violator.

    Used where a paper assumes bounded data (e.g. y in [0, B]): the reference refuses
    out-of-range data instead of clipping it silently.
    """
    a = check_finite_array(x, name)
    bad = (a < lo) | (a > hi)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} must lie in [{lo}, {hi}]; {name}[{', '.join(map(str, idx))}] = {a[idx].item()!r}"
        )
    return a
