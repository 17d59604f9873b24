"""Reproduction ``whitebox-sensitivity``: the realised sensitivity ratio of every reference
entry that declares its noise (method in ``audits/engine/whitebox.py``).

Each paper's ``whitebox.py`` gives its entries search spaces over the differing unit's data
within the declared bounds, on the entry's own dataset and, where it matters, other dataset
shapes, with the closed form of the worst case where one is known (each module's docstring
derives it). This module holds what they share and runs them:

- ``register_spaces(name, spaces)``: the search spaces of the registry entry ``name`` as a
  function of (setup, params); ``validate``'s white-box slot reads them through a spec's
  ``spaces`` too;
- ``register_row(Row(...))``: one row of the table. A row either names a registry entry (its
  noise, claim and parameters come from the entry) or builds its own statistic (``build``:
  noise model, sensitivity, spaces); ``seed`` and ``fewer_starts`` fix its search, so that a
  row's figure does not depend on which other rows exist;
- ``register_followup(f)``: a paper's step after the searches (for example an audit of the best
  pair found), given the rows' search results: it returns extra setup text, extra JSON keys and
  claims.

The claims: no realised ratio exceeds 1 + ``TOLERANCE`` (no understated sensitivity), and the
search reaches the closed form where one is known (to 1e-6); then the follow-ups' own claims.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from userdp.audits.engine.registry import get, load_catalogue, register_reproduction
from userdp.audits.engine.verdicts import claim, decide, exact
from userdp.audits.engine.whitebox import Space, search

__all__ = [
    "Row",
    "TOLERANCE",
    "disc",
    "entries",
    "register_followup",
    "register_row",
    "register_spaces",
    "rows",
    "spaces_for",
    "whitebox_sensitivity",
]

TOLERANCE = 1e-9  # ratios above 1 + TOLERANCE are understated sensitivities


@dataclass(frozen=True)
class Row:
    """One row of the table, ``order`` its place in it.

    ``entry``: a registry name whose noise, claim (its epsilon) and spaces (``register_spaces``)
    are searched; or ``build() -> (noise, sensitivity, spaces)`` for a statistic of its own (the
    search then uses epsilon 1 and the declared sensitivity). ``closed_form() -> float`` where the
    worst case is known in closed form, else None.
    """

    label: str
    order: float
    seed: int
    entry: str | None = None
    build: Callable[[], tuple[Any, float, list[Space]]] | None = None
    closed_form: Callable[[], float] | None = None
    fewer_starts: int = 0  # random starts below the run's (quick: 2, full: 6)

    def __post_init__(self):
        if (self.entry is None) == (self.build is None):
            raise ValueError(f"row {self.label!r}: give exactly one of entry and build")


_SPACES: dict[str, Callable] = {}
_ROWS: dict[str, Row] = {}
_FOLLOWUPS: list[Callable] = []


def register_spaces(name: str, spaces: Callable) -> Callable:
    """``spaces(setup, params) -> [Space]`` for the registry entry ``name`` (a paper's whitebox module)."""
    if name in _SPACES and _SPACES[name] is not spaces:
        raise ValueError(f"white-box spaces for {name!r} registered twice")
    _SPACES[name] = spaces
    return spaces


def register_row(row: Row) -> Row:
    """Add a row of the table (a paper's whitebox module); a second row with the same label is an error."""
    if row.label in _ROWS and _ROWS[row.label] is not row:
        raise ValueError(f"a white-box row {row.label!r} is already registered")
    _ROWS[row.label] = row
    return row


def register_followup(f: Callable) -> Callable:
    """``f(results, quick, progress) -> {"setup": str, "extra": dict, "claims": [claim]}``;
    ``results`` maps a row's label to its search result."""
    if f not in _FOLLOWUPS:
        _FOLLOWUPS.append(f)
    return f


def entries() -> tuple[str, ...]:
    """The registry entries with white-box spaces (the catalogue loaded first)."""
    load_catalogue()
    return tuple(_SPACES)


def rows() -> list[Row]:
    """The table's rows, in order (the catalogue loaded first)."""
    load_catalogue()
    return sorted(_ROWS.values(), key=lambda r: r.order)


def spaces_for(name: str, setup, params) -> list[Space]:
    """The white-box search spaces of the registry entry ``name`` (its parameters ``params``)."""
    load_catalogue()
    if name not in _SPACES:
        raise KeyError(f"no white-box search space for {name!r}; known: {entries()}")
    return _SPACES[name](setup, params)


def disc(theta) -> np.ndarray:
    """(r_1, phi_1, r_2, phi_2, ...) -> points of the unit disc, shape (k, 2)."""
    r, phi = theta[0::2], theta[1::2]
    return np.c_[r * np.cos(phi), r * np.sin(phi)]


def polar(k: int) -> tuple:
    """The box of k points of the unit disc in polar parameters (r, phi)."""
    return ((0.0, 1.0), (0.0, 2 * math.pi)) * k


def _search(row: Row, starts: int):
    if row.entry is not None:
        entry = get(row.entry)
        setup = entry.setup()
        eps = setup.claim.as_eps_delta()[0]
        return search(setup.noise, spaces_for(row.entry, setup, entry.params), eps, random_starts=starts, seed=row.seed)
    noise, sensitivity, spaces = row.build()
    return search(noise, spaces, 1.0, sensitivity=sensitivity, random_starts=starts - row.fewer_starts, seed=row.seed)


def whitebox_sensitivity(plot=None, quick: bool = False, progress=None) -> dict:
    """Realised sensitivity ratio per entry; the best logistic pair audited."""
    table, results = [], {}
    starts = 2 if quick else 6
    order = rows()
    steps = len(order) + len(_FOLLOWUPS)
    for i, row in enumerate(order):
        res = _search(row, starts)
        results[row.label] = res
        table.append(
            {
                "entry": row.label,
                "realised_ratio": res.ratio,
                "best_pair": res.description,
                "evaluations": res.evaluations,
                "closed_form": row.closed_form() if row.closed_form is not None else None,
            }
        )
        if progress is not None:
            progress(i + 1, steps, f"{row.label}: ratio {res.ratio:.6f}")
    worst = max(r["realised_ratio"] for r in table)
    setup_text, extra, more = [], {}, []
    for k, f in enumerate(_FOLLOWUPS):
        out = f(results, quick, progress)
        setup_text.append(out["setup"])
        extra.update(out["extra"])
        more += out["claims"]
        if progress is not None:
            progress(len(order) + k + 1, steps, out.get("progress", "follow-up done"))
    return {
        "setup": "; ".join(setup_text),
        "table": table,
        **extra,
        "claims": decide(
            [
                claim(
                    f"no realised ratio exceeds 1 + {TOLERANCE:g} (no understated sensitivity)",
                    exact(
                        "largest realised ratio over the entries (a seeded search: exact)", worst, below=1 + TOLERANCE
                    ),
                ),
                claim(
                    "the search reaches the closed-form worst case where one is known (to 1e-6)",
                    [
                        exact(
                            f"{r['entry']}: realised - closed form",
                            r["realised_ratio"] - r["closed_form"],
                            above=-1e-6,
                            below=1e-6,
                        )
                        for r in table
                        if r["closed_form"] is not None
                    ],
                ),
                *more,
            ]
        ),
    }


register_reproduction("whitebox-sensitivity", whitebox_sensitivity)
