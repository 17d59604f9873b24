"""Totality at the float extremes, for every mechanism (docs/design.md §4: a mechanism refuses only
on public inputs, checked before it reads a record; a warning or an exception that depends on the
records is an output like a number).

Each property suite declares, in its ``EXTREMES`` table, the domain of the records of each of its
mechanisms (keyed by the mechanism's ``userdp validate`` name): which fields are private and the
interval (and, for feature vectors, the L2 ball) that the mechanism declares legal. The strategy
``strategies.extreme_pairs`` draws records in that domain at the ends of the float range (near
+-max, user totals that overflow, subnormals, -0.0); ``prop_total_at_extremes`` then requires, on
both sides of a pair with the same public inputs:

- a release whose every coordinate is finite, with no warning and no exception, or
- a refusal (``ValueError``/``TypeError``) that is the same refusal on the public twin: the same
  public inputs with ordinary records (``Domain.ordinary``). Anything else depends on the records.

The run counts a numpy floating-point warning (overflow, invalid value, division by zero) as a
failure: warnings are errors (``warnings.simplefilter("error")``) and ``np.errstate`` raises on
those three. Underflow is not counted: numpy never warns on it by default, and a result that
underflows to a subnormal or to 0 is still a finite, correctly rounded value.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from userdp.reference.data import UserDataset

from .strategies import FLOAT_MAX

__all__ = ["Domain", "RAISE", "run_quietly", "check_total", "prop_total_at_extremes"]

RAISE = dict(over="raise", invalid="raise", divide="raise", under="ignore")  # the RuntimeWarnings numpy emits


@dataclass(frozen=True)
class Domain:
    """The declared domain of a mechanism's private record fields.

    fields: {field name: (lo, hi)}, e.g. {"values": (0.0, inf)} for non-negative values with no
        upper bound (``strategies.extreme_floats`` clips into it; inf means up to the float max); a
        bound may name a public parameter ("B": the bound is params["B"]; "-B": its negative);
    balls: {field name: radius} for features with ||x||_2 <= radius (drawn, then moved into the
        ball); the radius may name a public parameter as above;
    examples: the Hypothesis examples per mechanism in the default run (kept small: a solver at the
        extremes may take its full public iteration budget).
    """

    fields: Mapping[str, tuple[float, float]]
    balls: Mapping[str, float] = field(default_factory=dict)
    examples: int = 4

    def at(self, params: Mapping[str, Any]) -> "Domain":
        """This domain with every bound that names a public parameter replaced by its value."""

        def value(b):
            if not isinstance(b, str):
                return min(max(float(b), -FLOAT_MAX), FLOAT_MAX)
            return -float(params[b[1:]]) if b.startswith("-") else float(params[b])

        fields = {k: (value(lo), value(hi)) for k, (lo, hi) in self.fields.items()}
        return Domain(fields, {k: value(r) for k, r in self.balls.items()}, self.examples)

    def ordinary(self, base: UserDataset) -> UserDataset:
        """The public twin: ``base`` with every private field at a point inside the domain
        (0 when the interval holds it, else its lower end)."""
        new = {}
        for name, (lo, hi) in self.fields.items():
            v = 0.0 if lo <= 0.0 <= hi else lo
            new[name] = np.full(getattr(base, name).shape, v)
        return base.with_fields(**new)


def run_quietly(release: Callable[[UserDataset], Any], D: UserDataset) -> Any:
    """``release(D)`` with every warning an error and numpy's overflow, invalid and divide raising."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(**RAISE):
            return release(D)


def _outcome(release, D) -> tuple[str, str]:
    """("release", "") | ("refusal", message) | ("failure", what happened)."""
    try:
        out = run_quietly(release, D)
    except (ValueError, TypeError) as exc:  # (numpy's FloatingPointError is neither: a failure below)
        return "refusal", f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # a warning turned error, or anything else: depends on the records
        return "failure", f"{type(exc).__name__}: {exc}"
    parts = out if isinstance(out, tuple) else (out,)
    try:
        flat = np.concatenate([np.asarray(p, dtype=float).reshape(-1) for p in parts])
    except (TypeError, ValueError) as exc:
        return "failure", f"the release is not an array of floats ({exc})"
    if not np.all(np.isfinite(flat)):
        return "failure", f"the release holds {int(np.sum(~np.isfinite(flat)))} non-finite value(s)"
    return "release", ""


def check_total(release: Callable[[UserDataset], Any], D: UserDataset, twin: UserDataset) -> str | None:
    """None if ``release`` is total on ``D``: a finite release with no warning, or the refusal it
    also makes on ``twin`` (the same public inputs, ordinary records). Else what went wrong."""
    kind, what = _outcome(release, D)
    if kind == "release":
        return None
    if kind == "refusal":
        twin_kind, twin_what = _outcome(release, twin)
        if twin_kind == "refusal" and twin_what == what:
            return None  # a refusal on public inputs
        return f"refuses ({what}) on these records but not on ordinary records with the same public inputs"
    return what


def prop_total_at_extremes(release: Callable[[UserDataset], Any], example) -> None:
    """Both sides of an extreme pair release finite values with no warning, or refuse on public inputs.

    ``example``: ((D, D'), twin), the pair from ``strategies.extreme_pairs`` and the public twin."""
    (D, D2), twin = example
    for side, data in (("D", D), ("D'", D2)):
        problem = check_total(release, data, twin)
        assert problem is None, f"not total at the float extremes on {side}: {problem}"
