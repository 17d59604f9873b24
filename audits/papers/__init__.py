"""One home per paper: everything the audit side knows about a paper, in ``audits/papers/<paper>/``.

``PAPERS`` is the one list of papers and ``load`` the one discovery mechanism: for each paper it
imports the modules of one part (the paper package's ``PARTS``), and these register, at import,
their audit entries, reproductions and white-box rows (part "entries": ``engine/registry.py``,
``papers/whitebox.py``; with the paper-free positive controls, ``audits/engine/controls.py``),
validate specs ("specs": ``validation/__init__.py``) or test-vector designs ("vectors":
``validation/vector_cases.py``).
The engines never import a paper: the stores load this catalogue on first use
(``engine/registry.py:load_catalogue``). A paper's benchmark rows (``bench.py``) are data that
``userdp bench`` reads through ``modules``.

A paper's folder holds, in files named for what they hold (``_<alg>`` for an algorithm with a
reference module of its own, as ``reference/<paper>_<alg>.py``):

- ``audits.py``: its audit entries (``userdp audit``), the worst-case pairs and datasets, and
  the reproductions that live beside them; ``reproductions.py``: the paper's other claims;
- ``specs.py``: its validate specs (``userdp validate``);
- ``vectors.py``: its test-vector designs (``userdp vectors``);
- ``whitebox.py``: its white-box search spaces (``userdp reproduce whitebox-sensitivity``);
- ``bench.py``: its benchmark rows (``userdp bench``); a row calls the code it times through its
  module (``EW.optimal_weights``, ``userdp.audits.audit``), so that the planted wrong results of
  ``tests/audits/test_bench_cli.py`` replace what the row calls.

Adding a paper: docs/design.md, "Adding a paper".
"""

from __future__ import annotations

import importlib
from types import ModuleType

from userdp.audits.engine import controls
from userdp.audits.papers import whitebox

__all__ = ["PAPERS", "PARTS", "load", "modules"]

PAPERS = (
    "amin2019",
    "epasto2020",
    "zhao2024",
    "acharya2024",
    "krichene2023",
    "wilson2020",
    "desfontaines2022",
)


PARTS = ("entries", "specs", "vectors")  # the stores a paper's modules register into


def load(part: str) -> None:
    """Import every paper's modules of ``part`` (each paper's ``PARTS``; "entries" also imports
    the paper-free positive controls): they register what they hold. An import error names the
    paper. A store loads only its own part, so that ``userdp audit`` does not import the
    validate specs and the property suites they use."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}")
    assert controls and whitebox  # imported for their registrations (the controls, the cross-paper reproduction)
    for p in PAPERS:
        try:
            for m in importlib.import_module(f"{__name__}.{p}").PARTS[part]:
                importlib.import_module(f"{__name__}.{p}.{m}")
        except Exception as exc:
            raise ImportError(
                f"the audit side of paper {p!r} ({__name__}.{p}, {part}) failed to import: {exc}"
            ) from exc


def modules(kind: str) -> list[ModuleType]:
    """Each paper's module ``kind`` (e.g. "bench"), in the order of ``PAPERS``, where it has one."""
    out = []
    for p in PAPERS:
        try:
            out.append(importlib.import_module(f"{__name__}.{p}.{kind}"))
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{p}.{kind}":
                raise
    return out
