"""Argument checks shared by every reference module.

Each check raises ``ValueError`` (bad value) or ``TypeError`` (bad type) with a
message that names the argument, the offending value and the violated bound.
Nothing here clips or repairs input: a reference implementation refuses.

Supported ranges (the same for every public function, stated in every error):

- ``MAGNITUDE`` = [1e-50, 1e50] for every positive real parameter (bounds B, R, Y,
  sensitivities, sigma, Lambda, caps, radii, eta, tolerances) and for epsilon.
  Why: the formulas multiply and divide up to six such factors (Epasto's
  2 d B^2 / eps^2, squared in the variance), and 1e50^6 = 1e300 stays inside double
  range (about 1.8e308), as does 1e-50^6 = 1e-300 (the smallest normal double is
  2.2e-308). So no intermediate overflows to inf or underflows to 0.
- ``MAX_EPSILON`` = 50 unless the caller opts in with ``allow_large_epsilon()``:
  e^50 = 5.2e21 bounds a likelihood ratio no deployment can interpret, and the
  noise at such epsilons is below the resolution that an audit or a reader can
  check. 50 is our choice, above every epsilon the reference's own experiments use (our
  Theorem 2 instance, ``epasto2020.theorem2_instance``, reaches sqrt(8 g) = 20 at g = 50).
- ``MAX_INT`` = 2^31 - 1 for integer parameters (numpy index arithmetic stays exact),
  ``MAX_RELEASES`` = 10^8 for ``size`` (one call's output must fit in memory).
- A computed noise scale b must be finite and > 0, and |value| / b <= ``NOISE_RESOLUTION``
  = 2^52 (``check_noise_scale``). Above that ratio the spacing of doubles at the value
  (|value| 2^-52) exceeds b, so ``value + noise`` rounds back to ``value`` in most
  releases: the exact value would go out.
"""

from __future__ import annotations

import contextvars
import math
import numbers
from contextlib import contextmanager

import numpy as np

__all__ = [
    "MAGNITUDE",
    "MAX_EPSILON",
    "MAX_INT",
    "MAX_RELEASES",
    "NOISE_RESOLUTION",
    "allow_large_epsilon",
    "check_real",
    "check_positive",
    "check_nonnegative",
    "check_epsilon",
    "check_delta",
    "check_sensitivity",
    "check_int",
    "check_generator",
    "check_size",
    "check_finite_array",
    "check_in_interval",
    "check_noise_scale",
]

MAGNITUDE = (1e-50, 1e50)
MAX_EPSILON = 50.0
MAX_INT = 2**31 - 1
MAX_RELEASES = 10**8
NOISE_RESOLUTION = 2.0**52

_LARGE_EPSILON = contextvars.ContextVar("userdp_allow_large_epsilon", default=False)


@contextmanager
def allow_large_epsilon():
    """Opt in to epsilon above ``MAX_EPSILON`` (up to ``MAGNITUDE[1]``) inside a ``with`` block.

    Explicit and scoped (a context variable, so other threads and tasks are unaffected):
    ``with allow_large_epsilon(): laplace_mechanism(x, 1.0, 200.0, rng)``.
    """
    token = _LARGE_EPSILON.set(True)
    try:
        yield
    finally:
        _LARGE_EPSILON.reset(token)


def _fmt(v) -> str:
    return repr(float(v)) if isinstance(v, (float, np.floating)) else repr(v)


def check_real(value, name: str) -> float:
    """A real number (int or float, not bool, not a string, not an array); NaN and inf pass
    here and fail the range checks below, which name the range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def check_positive(value, name: str, lo: float = MAGNITUDE[0], hi: float = MAGNITUDE[1]) -> float:
    """Return ``value`` as a float after checking lo <= value <= hi (default ``MAGNITUDE``)."""
    v = check_real(value, name)
    if not (lo <= v <= hi):
        raise ValueError(f"{name} must be finite and > 0, in [{lo:g}, {hi:g}] (the supported range), got {_fmt(v)}")
    return v


def check_nonnegative(value, name: str, hi: float = MAGNITUDE[1]) -> float:
    """0, or a positive real in ``MAGNITUDE`` (e.g. a standard deviation sigma >= 0)."""
    v = check_real(value, name)
    if v == 0.0:
        return 0.0
    if not (MAGNITUDE[0] <= v <= hi):
        raise ValueError(f"{name} must be 0 or in [{MAGNITUDE[0]:g}, {hi:g}] (the supported range), got {_fmt(v)}")
    return v


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """A privacy level in [1e-50, MAX_EPSILON], or up to 1e50 inside ``allow_large_epsilon()``."""
    v = check_real(epsilon, name)
    cap = MAGNITUDE[1] if _LARGE_EPSILON.get() else MAX_EPSILON
    if not (MAGNITUDE[0] <= v <= cap):
        hint = (
            ""
            if _LARGE_EPSILON.get()
            else (
                f"; above {MAX_EPSILON:g} the guarantee e^eps is meaningless, and callers who mean it opt in "
                f"with userdp.reference.allow_large_epsilon()"
            )
        )
        raise ValueError(f"{name} must be finite and > 0, in [{MAGNITUDE[0]:g}, {cap:g}]{hint}, got {_fmt(v)}")
    return v


def check_delta(delta, name: str = "delta") -> float:
    """A failure probability: 0 <= delta < 1."""
    d = check_real(delta, name)
    if not (0.0 <= d < 1.0):
        raise ValueError(f"{name} must lie in [0, 1), got {d!r}")
    return d


def check_sensitivity(sensitivity, name: str = "sensitivity") -> float:
    """A sensitivity in ``MAGNITUDE`` (a zero sensitivity would release unnoised)."""
    return check_positive(sensitivity, name)


def check_int(value, name: str, lo: int = 1, hi: int = MAX_INT) -> int:
    """An integer (Python or numpy, not bool) with lo <= value <= hi."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if not (lo <= value <= hi):
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return int(value)


def check_generator(rng, name: str = "rng") -> np.random.Generator:
    """Randomness only from an explicit ``numpy.random.Generator`` (docs/design.md §4)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{name} must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), got {type(rng).__name__}"
        )
    return rng


def check_size(size, name: str = "size") -> int | None:
    """``None`` (one release) or a number of independent releases in [1, MAX_RELEASES]."""
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise TypeError(f"{name} must be None or a positive int, got {type(size).__name__} {size!r}")
    if not (1 <= size <= MAX_RELEASES):
        raise ValueError(f"{name} must be None or an integer in [1, {MAX_RELEASES}], got {size!r}")
    return int(size)


def check_finite_array(x, name: str, *, ndim: tuple[int, ...] | None = None) -> np.ndarray:
    """A float array of real numbers (int or float dtype: no bool, complex, string or object
    entries) with only finite entries; names the first bad index."""
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise TypeError(f"{name} must be a rectangular array of real numbers: {exc}") from None
    if raw.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must hold real numbers (an int or float array), got dtype {raw.dtype}"
            + (f" ({type(x).__name__})" if raw.dtype.kind == "O" else "")
        )
    if isinstance(x, (list, tuple)) and raw.size and _holds_bool(x):
        raise TypeError(f"{name} must hold real numbers, got a bool among them (True/False is not a number here)")
    a = raw.astype(float, copy=False)
    if ndim is not None and a.ndim not in ndim:
        raise ValueError(f"{name} must have ndim in {ndim}, got shape {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite; {name}[{', '.join(map(str, idx))}] = {a[idx].item()!r}")
    return a


def _holds_bool(x) -> bool:
    """Whether a (nested) list or tuple holds a bool; numpy casts [True, 0.5] to floats silently."""
    return any(_holds_bool(v) if isinstance(v, (list, tuple)) else isinstance(v, (bool, np.bool_)) for v in x)


def check_in_interval(x, lo: float, hi: float, name: str) -> np.ndarray:
    """Every entry of ``x`` in the closed interval [lo, hi]; names the first violator.

    Used where a paper assumes bounded data (e.g. y in [0, B]): the reference refuses
    out-of-range data instead of clipping it silently.
    """
    a = check_finite_array(x, name)
    bad = (a < lo) | (a > hi)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must lie in [{lo}, {hi}]; {name}[{', '.join(map(str, idx))}] = {a[idx].item()!r}")
    return a


def check_noise_scale(scale, value=0.0, name: str = "noise scale") -> float:
    """The noise scale a mechanism computed: finite, > 0, and not absorbed by the value.

    ``scale`` is the Laplace b, the Gaussian sigma, or 1/eta of L2-Laplace noise; ``value``
    the noise-free release (scalar or array). Refuses max |value| / scale > NOISE_RESOLUTION
    (2^52): the spacing of doubles at the value would exceed the noise, and value + noise
    would round back to the exact value (see the module docstring).
    """
    b = float(scale)
    if not (math.isfinite(b) and b > 0.0):
        raise ValueError(
            f"{name} must be finite and > 0, got {b!r}: the release would be "
            f"{'unbounded' if b > 0 else 'the exact value'}; check the sensitivity and "
            f"epsilon it was computed from"
        )
    top = float(np.max(np.abs(value))) if np.size(value) else 0.0
    if top > NOISE_RESOLUTION * b:
        raise ValueError(
            f"{name} {b!r} is too small for the value (max |value| = {top!r}): "
            f"|value| / scale = {top / b:.3g} > 2^52, so the noise cannot change the "
            f"float and the exact value would be released; rescale the data"
        )
    return b
