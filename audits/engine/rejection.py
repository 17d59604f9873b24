"""Rejection sets and how one is chosen on the selection share (docs/design.md §6).

A rejection set S is an event on the output space. The audit counts how often M(D)
and M(D') land in S on the counting share; which S to count is decided here, from the
selection share only, so the counts stay independent of the choice.

The families of sets, by output kind (each module's docstring has their reasoning):

- scalar outputs: thresholds {x >= t} and {x <= t} (both tails; ``thresholds.py``,
  ``choose_scalar``), thresholds on a learned classifier statistic where it is not monotone
  (``choose_continuous``, ``learned.py``), and atom sets, the values that repeat
  (``value_sets.py``);
- vector outputs: thresholds on learned directions and coordinate axes, and on learned
  non-linear statistics (a declared noise family's likelihood-ratio statistic, corner sets,
  a classifier score; ``learned.py``), put together by ``choose_vector``;
- discrete outputs: prefixes of the values' likelihood-ratio ranking and, for ordered values,
  threshold sets (``value_sets.py``, ``choose_discrete``);
- multi-partition outputs (vector rows with cells not released, NaN here,
  ``sampling.py``): the directions and statistics are learned on the rows with every cell
  released and computed on all rows, NaN where a cell they read is missing; each set then
  also comes with "a cell it reads not released" added, and {every cell it reads released}
  and its complement are sets; and the unions of release patterns (``ReleasePatternSet``,
  "released in partitions 0 and 1") are value sets of the rows' patterns (``patterns.py``).

Each set is scored in both orderings of the pair ("first over second": p = Pr[M(D) in S],
q = Pr[M(D') in S], and the swap) with ``bounds.projected_bound``, or, for the trade-off
audit of a Gaussian-DP claim (``gdp=True``; scalar and vector outputs), with
``bounds.projected_mu_bound``.

Why a learned statistic keeps the test valid: its parameters (the centres m, m', the
classifier's weights and standardisation) are functions of the selection share alone, so
once they are fixed {s(x) >= t} is a fixed set, exactly like a threshold on a learned
direction, and the counting share counts it afresh. The statistics compete with the
directions for the k sets that reach the counting share; m (the multiplicity) is unchanged.
The same holds for atom sets (their values are read off the selection share), corner sets
and release patterns (harness.py, "Why the bound is valid").

This module keeps the entry points that put the families together (``choose_continuous``,
``choose_vector``); ``choose_scalar`` (``thresholds.py``) and ``choose_discrete``
(``value_sets.py``) choose within one family. tests/planted/auditor.py plants bugs by
replacing names this module reads (``ATOMS_ON``, ``_learned_statistics``,
``_orthant_statistics``, ``_directions``, ``_pattern_candidates``), so they are read here.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from userdp.audits.engine.ceiling import NOISE_FAMILIES
from userdp.audits.engine.learned import (
    SCALAR_FIT_MAX,
    _axes,
    _directions,
    _fit_classifier,
    _learned_statistics,
    _monotone,
    _orthant_statistics,
)
from userdp.audits.engine.patterns import PATTERN_MAX_CELLS, _pattern_candidates
from userdp.audits.engine.thresholds import Candidate, StatisticThreshold, Threshold, choose_scalar, project_cells
from userdp.audits.engine.value_sets import _atom_families, _atoms, _atoms_win, _best

__all__ = [
    "ATOMS_ON",
    "check_noise_family",
    "choose_continuous",
    "choose_vector",
]


ATOMS_ON = True  # tests/planted/auditor.py plants "atoms off" by setting it False


def check_noise_family(noise_family) -> str | None:
    """None or one of ``ceiling.NOISE_FAMILIES``."""
    if noise_family is not None and noise_family not in NOISE_FAMILIES:
        raise ValueError(f"noise_family must be None or one of {NOISE_FAMILIES}, got {noise_family!r}")
    return noise_family


def choose_continuous(
    a: np.ndarray,
    b: np.ndarray,
    n_count: int,
    alpha: float,
    delta: float,
    k: int = 1,
    *,
    gdp: bool = False,
    noise_family: str | None = None,
) -> list[Candidate]:
    """Scalar outputs: the thresholds of ``choose_scalar`` and thresholds on the logistic
    classifier statistic s(x) = <w, (z, z^2, |z|)> fitted on the selection share.

    Thresholds are the likelihood-ratio sets only when the ratio is monotone in x (a shift of
    the location). When the neighbours change the *spread* (noise scaled by a private n, as
    in diffprivlib's ``tools.mean`` under add/remove-record, or a clipped output whose atoms
    move), the Neyman-Pearson sets are intervals {|x - c| <= r} or their complements, which no
    threshold contains; the quadratic statistic's level sets are exactly those. Both compete
    for the k sets on the selection-share score (the statistic is fitted on the first
    SCALAR_FIT_MAX selection outputs of each side, its thresholds chosen on all of them).
    Outputs with "no release" keep the thresholds alone (their NaN has no place in the
    classifier's features).

    Atoms: when some released value repeats on the selection share (``_atoms``), the atom
    sets (prefixes of the atoms' likelihood-ratio ranking, ``AtomSet``) are built too, and a
    cross-fit (``_atoms_win``) decides whether they or the sets above go forward (the atom
    sets first, then the others, up to k); the atom candidates' score is then the
    cross-fit's held-out score. Not for the trade-off audit (``gdp``)."""
    cands = _continuous_sets(a, b, n_count, alpha, delta, k, gdp=gdp, noise_family=noise_family)
    atoms = None if gdp else _atoms(a, b)
    if atoms is None or not ATOMS_ON:
        return cands
    won, score = _atoms_win(a, b, atoms, n_count, alpha, delta, noise_family)
    if not won:
        return cands
    found = [
        replace(c, score=min(c.score, score) if i else score)
        for i, c in enumerate(_best(_atom_families(a, b, atoms), a.shape[0], n_count, alpha, delta, k))
    ]
    return (found + cands)[:k]


def _continuous_sets(
    a, b, n_count: int, alpha: float, delta: float, k: int, *, gdp: bool = False, noise_family: str | None = None
) -> list[Candidate]:
    """The thresholds and the classifier statistic's thresholds (``choose_continuous``)."""
    cands = choose_scalar(a, b, n_count, alpha, delta, k, gdp=gdp, noise_family=noise_family)
    if np.isnan(a).any() or np.isnan(b).any():
        return cands
    fa, fb = a[:SCALAR_FIT_MAX, None], b[:SCALAR_FIT_MAX, None]  # i.i.d.: the first ones are a sample
    fit = _fit_classifier(fa, fb)
    if fit is not None and not _monotone(fit, np.r_[fa[:, 0], fb[:, 0]]):
        s = StatisticThreshold("logistic-classifier", tuple(tuple(map(float, v)) for v in fit), "upper", 0.0)
        for c in choose_scalar(s.project(a), s.project(b), n_count, alpha, delta, k, gdp=gdp):
            t = c.rejection_set
            cands.append(replace(c, rejection_set=replace(s, tail=t.tail, t=t.t)))
    cands.sort(key=lambda c: -c.score)
    return cands[:k]


def choose_vector(
    a: np.ndarray,
    b: np.ndarray,
    n_count: int,
    alpha: float,
    delta: float,
    k: int = 1,
    *,
    gdp: bool = False,
    noise_family: str | None = None,
) -> list[Candidate]:
    """Learn directions and statistics on the selection share (a, b: (n, d)), then thresholds
    on each (``_vector_families``); ``noise_family`` adds that family's likelihood-ratio
    statistic. A multi-partition release (NaN: a cell not released) also gets the unions of
    release patterns (``ReleasePatternSet``: "released in both partitions", ...). Every
    family competes for the k sets on its selection-share score."""
    check_noise_family(noise_family)
    cands = [
        c
        for _, tmpl in _vector_families(a, b, noise_family)
        for c in _family_candidates(tmpl, a, b, n_count, alpha, delta, k, gdp, noise_family)
    ]
    if not gdp and a.shape[1] <= PATTERN_MAX_CELLS and (np.isnan(a).any() or np.isnan(b).any()):
        cands += _pattern_candidates(a, b, n_count, alpha, delta, k)  # which partitions were released
    cands.sort(key=lambda c: -c.score)
    return cands[:k]


def _vector_families(a: np.ndarray, b: np.ndarray, noise_family: str | None) -> list[tuple[tuple, object]]:
    """(key, set template) of every family learned on a, b: the directions (on the rows with
    every cell released), the axes, the learned statistics and the corner sets; a template
    is a Threshold (a projection) or a StatisticThreshold with t = 0, its threshold to be
    chosen. The key names the family."""
    d = a.shape[1]
    full_a, full_b = a[~np.isnan(a).any(axis=1)], b[~np.isnan(b).any(axis=1)]  # every cell released
    out = [
        (("direction", i), Threshold("upper", 0.0, tuple(map(float, w))))
        for i, w in enumerate(_directions(full_a, full_b))
    ]
    out += [(("axis", int(j)), Threshold("upper", 0.0, tuple(map(float, np.eye(d)[j])))) for j in _axes(a, b)]
    learned = _learned_statistics(full_a, full_b, noise_family) if min(full_a.shape[0], full_b.shape[0]) >= 2 else []
    out += [(("statistic", name), StatisticThreshold(name, params, "upper", 0.0)) for name, params in learned]
    out += [
        (("orthant", len(params[0])), StatisticThreshold(name, params, "upper", 0.0))
        for name, params in _orthant_statistics(a, b)
    ]
    return out


def _family_candidates(
    tmpl, a, b, n_count: int, alpha: float, delta: float, k: int, gdp: bool, noise_family: str | None
) -> list[Candidate]:
    """The k best thresholds of one family on a, b, as candidates of its set type."""
    if isinstance(tmpl, Threshold):
        w = np.asarray(tmpl.projection)
        return choose_scalar(
            project_cells(a, w),
            project_cells(b, w),
            n_count,
            alpha,
            delta,
            k,
            projection=tmpl.projection,
            gdp=gdp,
            noise_family=noise_family,
        )
    out = []
    for c in choose_scalar(tmpl.project(a), tmpl.project(b), n_count, alpha, delta, k, gdp=gdp):
        t = c.rejection_set
        out.append(replace(c, rejection_set=replace(tmpl, tail=t.tail, t=t.t, missing=t.missing)))
    return out
