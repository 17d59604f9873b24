"""White-box worst-case search: the realised sensitivity ratio of a declared noise model
(docs/design.md §6).

For a release statistic(D) + Z, Z i.i.d. Laplace(b) per coordinate or L2-Laplace
(density prop. to exp(-||z||_2 / b)), the privacy loss of a pair (D, D') with the same
scale b is exactly

    L(D, D') = ||statistic(D) - statistic(D')|| / b      (L1 norm for "laplace", L2 for "l2laplace"),

the supremum of ln p_D(x) / p_D'(x) over x (triangle inequality, attained along the
shift). The claim eps-DP calibrates b = Delta / eps, so

    realised ratio = L(D, D') / eps = ||statistic(D) - statistic(D')|| / Delta

is the fraction of the declared sensitivity that the pair uses. Gaussian noise has no
single-ratio loss (its eps depends on delta), so for it (and for any family, if given)
the caller passes the declared ``sensitivity`` Delta and the ratio is
||statistic(D) - statistic(D')||_2 / Delta directly (for example the per-step gradient of
noisy gradient descent, whose Delta the noise multiplier is applied to). A ratio above 1 is a
privacy violation found deterministically (an understated sensitivity); far below 1 on
every pair we can find means the noise is larger than the data can need (over-noising),
or that the search is weak. When the scales differ (b depends on private data) the loss
is unbounded and the ratio is reported as +inf (without a given ``sensitivity``).

``search`` maximises the ratio over a ``Space``: a box of parameters theta (the differing
unit's values within their declared bounds, and whatever the entry lets vary) and a map
theta -> (D, D'). It runs scipy's bounded optimisers (L-BFGS-B with finite differences,
then Nelder-Mead, which does not need the gradient that capped or clipped statistics
lack) from the space's own starting points and from ``random_starts`` uniform points,
and keeps the best. A search is a lower bound on the worst case, never a proof that none
is worse; the ratio of the best pair found is exact (no sampling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from scipy.optimize import minimize

from userdp.reference._checks import check_epsilon, check_int, check_positive

from userdp.audits.engine.ceiling import NoiseModel

__all__ = ["Space", "WhiteboxResult", "realised_ratio", "search"]

_NORMS = {"laplace": 1, "l2laplace": 2, "gaussian": 2}


@dataclass(frozen=True)
class Space:
    """Pairs (D, D') = build(theta) for theta in the box ``bounds`` ((lo, hi) per parameter).

    starts: parameter vectors tried first (for example the registry pair's own theta).
    describe: theta -> a one-line description of the pair, for the report.
    """

    name: str
    bounds: tuple[tuple[float, float], ...]
    build: Callable[[np.ndarray], tuple[Any, Any]]
    starts: tuple[tuple[float, ...], ...] = ()
    describe: Callable[[np.ndarray], str] | None = field(default=None, repr=False)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"space name must be a non-empty string, got {self.name!r}")
        try:
            b = np.asarray(self.bounds, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(
                f"space bounds must be a list of (lo, hi) pairs of reals, got {self.bounds!r:.80}"
            ) from None
        if b.ndim != 2 or b.shape[1] != 2 or b.shape[0] == 0:
            raise ValueError(f"space bounds must be a non-empty list of (lo, hi) pairs, got shape {b.shape}")
        if not (np.all(np.isfinite(b)) and np.all(b[:, 0] <= b[:, 1])):
            raise ValueError("space bounds must be finite with lo <= hi for every parameter")
        if not callable(self.build):
            raise TypeError(f"space build must be callable as build(theta) -> (D, D'), got {type(self.build).__name__}")
        for s in self.starts:
            try:
                s = np.asarray(s, dtype=float)
            except (TypeError, ValueError):
                raise TypeError(f"space starts must be vectors of reals, got {s!r:.80}") from None
            if s.shape != (b.shape[0],) or not (np.all(s >= b[:, 0]) and np.all(s <= b[:, 1])):
                raise ValueError(
                    f"space starts must be points of the box ({b.shape[0]} parameters within bounds), got {s!r}"
                )


@dataclass(frozen=True)
class WhiteboxResult:
    ratio: float  # the best realised ratio found (exact for that pair)
    theta: tuple[float, ...]
    space: str
    pair: tuple[Any, Any] = field(repr=False)
    description: str = ""
    evaluations: int = 0
    per_space: dict = field(default_factory=dict)  # space name -> best ratio there

    def to_dict(self) -> dict:
        return {
            "ratio": self.ratio,
            "theta": list(self.theta),
            "space": self.space,
            "description": self.description,
            "evaluations": self.evaluations,
            "per_space": dict(self.per_space),
        }


def _family_norm(noise, sensitivity) -> int:
    if not isinstance(noise, NoiseModel):
        raise TypeError(f"noise must be a userdp.audits.engine.ceiling.NoiseModel, got {type(noise).__name__}")
    if noise.family == "gaussian" and sensitivity is None:
        raise ValueError(
            "sensitivity must be given for gaussian noise: its privacy loss has no single ratio "
            "(its eps depends on delta), so the ratio is taken to the declared L2 sensitivity"
        )
    return _NORMS[noise.family]


def realised_ratio(noise: NoiseModel, first, second, epsilon: float, sensitivity: float | None = None) -> float:
    """||statistic(first) - statistic(second)|| / (epsilon * scale): the pair's exact privacy
    loss over the claimed epsilon (module docstring); +inf when the two scales differ.
    With ``sensitivity`` (required for gaussian noise): the norm of the shift / sensitivity."""
    p = _family_norm(noise, sensitivity)
    epsilon = check_epsilon(epsilon)
    if sensitivity is not None:
        sensitivity = check_positive(sensitivity, "sensitivity")
    m1, b1 = noise.locate(first)
    m2, b2 = noise.locate(second)
    if m1.shape != m2.shape:
        raise ValueError(f"noise statistic returned shapes {m1.shape} and {m2.shape} on the two datasets")
    shift = float(np.linalg.norm(m1 - m2, ord=p))
    if sensitivity is not None:
        return shift / sensitivity
    if not math.isclose(b1, b2, rel_tol=1e-12):
        return math.inf
    return shift / (epsilon * b1)


def search(
    noise: NoiseModel,
    spaces,
    epsilon: float,
    *,
    sensitivity: float | None = None,
    random_starts: int = 6,
    seed: int = 0,
    maxiter: int = 200,
    progress=None,
) -> WhiteboxResult:
    """The pair of largest realised ratio over ``spaces`` (module docstring)."""
    _family_norm(noise, sensitivity)
    epsilon = check_epsilon(epsilon)
    if sensitivity is not None:
        sensitivity = check_positive(sensitivity, "sensitivity")
    random_starts = check_int(random_starts, "random_starts", lo=0, hi=10_000)
    maxiter = check_int(maxiter, "maxiter", lo=1, hi=10**6)
    seed = check_int(seed, "seed", lo=0, hi=2**63 - 1)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be None or a callable taking one message, got {type(progress).__name__}")
    if isinstance(spaces, Space):
        spaces = [spaces]
    spaces = list(spaces) if hasattr(spaces, "__iter__") and not isinstance(spaces, (str, bytes)) else None
    if not spaces or not all(isinstance(s, Space) for s in spaces):
        raise TypeError("spaces must be a Space or a non-empty list of Space")
    rng = np.random.default_rng(seed)
    best = (-math.inf, None, None)
    per_space, evaluations = {}, 0
    for space in spaces:
        lo, hi = np.asarray(space.bounds, dtype=float).T
        evals = []

        def objective(theta):
            theta = np.clip(theta, lo, hi)  # the optimisers may step on the boundary
            r = realised_ratio(noise, *space.build(theta), epsilon, sensitivity)
            evals.append(1)
            return -r if math.isfinite(r) else -1e300

        starts = [np.asarray(s, float) for s in space.starts]
        starts += [rng.uniform(lo, hi) for _ in range(random_starts)]
        starts = starts or [(lo + hi) / 2]  # no start given: the box's centre
        top = (-math.inf, None)
        for x0 in starts:
            for method in ("L-BFGS-B", "Nelder-Mead"):
                res = minimize(objective, x0, method=method, bounds=list(zip(lo, hi)), options={"maxiter": maxiter})
                theta = np.clip(res.x, lo, hi)
                r = realised_ratio(noise, *space.build(theta), epsilon, sensitivity)
                if r > top[0]:
                    top = (r, theta)
                x0 = theta  # Nelder-Mead polishes L-BFGS-B's point
        per_space[space.name] = top[0]
        evaluations += len(evals)
        if progress is not None:
            progress(f"{space.name}: best ratio {top[0]:.6f} ({len(evals)} evaluations)")
        if top[0] > best[0]:
            best = (top[0], top[1], space)
    ratio, theta, space = best
    pair = space.build(theta)
    text = (
        space.describe(theta)
        if space.describe is not None
        else f"{space.name} at theta = {np.round(theta, 4).tolist()}"
    )
    return WhiteboxResult(float(ratio), tuple(map(float, theta)), space.name, pair, text, evaluations, per_space)
