"""The registry of auditable mechanisms and reproducible paper claims.

Mechanisms as data: this module holds the records (``Entry``, ``AuditSetup``) and the store; it
imports no paper. Each paper's modules (``audits/papers/<paper>/``) and the positive controls
(``audits/engine/controls.py``) call ``register(Entry(...))`` (and ``register_reproduction(name,
func)``) at import time. The catalogue that imports them, ``audits/papers/__init__.py`` (its
``PAPERS`` is the one list of papers), is loaded on first use of ``all_entries`` / ``get`` /
``all_reproductions`` by ``load_catalogue``: the one reference of a lower layer to a higher one,
by name (``CATALOGUE``), which ``tests/test_layers.py`` allows for this module alone. A module
that fails to import raises ``ImportError`` naming it (fail loudly: an audit list with a
silently missing paper would read as "no violation").

An ``Entry`` says which mechanism, on which pairs, against which claim, and which verdict
is expected: "no violation found" for reference mechanisms and correct controls,
"violation" for broken controls and planted bugs. ``kind`` is "reference", "control" or
"planted" (planted = known-broken paper variants; not part of ``userdp audit --all``).

A reproduction is ``func(plot=None, quick=False, progress=None) -> {"table": [row dicts],
"claims": verdicts.decide([verdicts.claim(...), ...]), ...}`` (optional extra keys such as
"setup" are printed and put in the JSON). Every claim has a three-valued verdict, holds,
fails or undecided, decided by its confidence intervals under one rule
(``audits/engine/verdicts.py``): a claim whose interval straddles its boundary is undecided, never
"fails". Its docstring's first paragraph is the line ``userdp reproduce --list`` shows.
``quick=True`` must finish in under a minute and still check EVERY claim (on less data a
claim may be undecided where the full run decides it). ``progress(done, total, message)``,
if given, is called after each step (the CLI prints steps done of total, the elapsed time
and an estimate of the time left to stderr). ``userdp reproduce NAME`` prints the result
and exits 1 only if a claim fails (a decided failure); undecided claims exit 0.

An ``AuditSetup`` whose release is additive noise of a known family on a noise-free
statistic declares it (``noise=NoiseModel(family, statistic, scale)``, ``audits/engine/ceiling.py``):
the report then gives the statistical ceiling and the audit's efficiency against it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from userdp.audits.engine.ceiling import NoiseModel

__all__ = [
    "AuditSetup",
    "Entry",
    "register",
    "all_entries",
    "get",
    "register_reproduction",
    "get_reproduction",
    "all_reproductions",
    "KINDS",
    "EXPECTED",
    "CATALOGUE",
    "load_catalogue",
]

KINDS = ("reference", "control", "planted")
EXPECTED = ("no violation found", "violation")
OUTPUTS = ("continuous", "vector", "discrete", "categorical")  # sampling.OUTPUT_KINDS


@dataclass(frozen=True)
class AuditSetup:
    mechanism: Callable  # (dataset, rng, size) -> ndarray
    pairs: Sequence  # candidate neighbouring pairs (NeighbourPair or 2-tuples)
    claim: Any  # a userdp.reference.claims claim
    output: str = "continuous"  # one of OUTPUTS (audits/engine/sampling.py says what each means)
    noise: NoiseModel | None = None  # the release is noise.statistic(D) + noise: gives the ceiling

    def __post_init__(self):
        if self.output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}, got {self.output!r}")
        if self.noise is not None:
            if not isinstance(self.noise, NoiseModel):
                raise TypeError(
                    f"noise must be None or a userdp.audits.engine.ceiling.NoiseModel, got {type(self.noise).__name__}"
                )
            if self.output in ("discrete", "categorical"):
                raise ValueError(
                    f"noise: a {self.noise.family} noise model declares a continuous release, "
                    f"but output is {self.output!r} (the ceiling applies to additive continuous noise)"
                )


@dataclass(frozen=True)
class Entry:
    name: str  # e.g. "control.laplace", "epasto2020.wa"
    kind: str  # "reference" | "control" | "planted"
    paper: str  # e.g. "Epasto et al. 2020 (NeurIPS 2020)" or "control"
    algorithm: str
    relation: str
    function: str  # dotted path of the reference function
    expected: str  # "no violation found" | "violation"
    build: Callable[..., AuditSetup]
    params: Mapping[str, Any] = field(default_factory=dict)
    true_epsilon: float | None = None
    samples: int | None = None  # per-entry default for --all, if it needs more

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Entry {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.expected not in EXPECTED:
            raise ValueError(f"Entry {self.name!r}: expected must be one of {EXPECTED}, got {self.expected!r}")

    def setup(self, **overrides) -> AuditSetup:
        unknown = set(overrides) - set(self.params)
        if unknown:
            raise ValueError(f"{self.name}: unknown parameter(s) {sorted(unknown)}; known: {sorted(self.params)}")
        return self.build(**{**self.params, **overrides})


_ENTRIES: dict[str, Entry] = {}
_REPRODUCTIONS: dict[str, Callable] = {}
_loaded: set[str] = set()  # the parts of the catalogue imported


def register(entry: Entry) -> Entry:
    """Add ``entry``; a second entry with the same name is an error."""
    if entry.name in _ENTRIES and _ENTRIES[entry.name] is not entry:
        raise ValueError(f"an audit entry named {entry.name!r} is already registered")
    _ENTRIES[entry.name] = entry
    return entry


def register_reproduction(name: str, func: Callable) -> Callable:
    """Add the reproduction ``name`` (``userdp reproduce NAME``); a registry module calls it at import."""
    if name in _REPRODUCTIONS and _REPRODUCTIONS[name] is not func:
        raise ValueError(f"a reproduction named {name!r} is already registered")
    _REPRODUCTIONS[name] = func
    return func


CATALOGUE = "userdp.audits.papers"  # the catalogue: its load(part) registers every paper's records of that part


def load_catalogue(part: str = "entries") -> None:
    """Import the catalogue's ``part`` once (``audits/papers/__init__.py``: "entries" for this
    store, "specs" and "vectors" for validate's), so that every record of that part is
    registered; an import error names the module that failed."""
    if part in _loaded:
        return
    _loaded.add(part)
    try:
        importlib.import_module(CATALOGUE).load(part)
    except Exception:
        _loaded.discard(part)
        raise


def all_entries() -> list[Entry]:
    """Every registered audit entry (the registry modules imported on first use)."""
    load_catalogue()
    return sorted(_ENTRIES.values(), key=lambda e: (KINDS.index(e.kind), e.name))


def get(name: str) -> Entry:
    """The entry called ``name``; a KeyError pointing to `userdp list` otherwise."""
    load_catalogue()
    try:
        return _ENTRIES[name]
    except KeyError:
        raise KeyError(f"no audit entry named {name!r}; `userdp list` shows the names") from None


def all_reproductions() -> dict[str, Callable]:
    """Every registered reproduction, by name."""
    load_catalogue()
    return dict(sorted(_REPRODUCTIONS.items()))


def get_reproduction(name: str) -> Callable:
    """The reproduction called ``name``; a KeyError naming the known ones otherwise."""
    load_catalogue()
    try:
        return _REPRODUCTIONS[name]
    except KeyError:
        raise KeyError(f"no reproduction named {name!r}; known: {sorted(_REPRODUCTIONS)}") from None
