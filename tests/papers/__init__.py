"""The tests of each paper, one folder per paper (``tests/papers/<paper>/``), mirroring the paper's
home in the package: its reference tests, audits, reproductions, planted bugs (``planted*.py``),
corpus entries of ``userdp validate`` (``corpus*.py``) and bad-input rows (``bad_input.py``).

Shared tables (the corpus, the bad-input table) find the papers' modules through ``PAPERS`` and
``paper_modules`` instead of naming each paper. Importable as ``papers.<paper>.<module>``: tests/
is on sys.path (rootdir conftest, no tests/__init__.py).
"""

from __future__ import annotations

import importlib
import pathlib
import types

from userdp.audits.papers import PAPERS  # the package's one list of papers

__all__ = ["PAPERS", "paper_modules"]

_HERE = pathlib.Path(__file__).resolve().parent


def paper_modules(kind: str) -> dict[str, types.ModuleType]:
    """Every paper's test modules of one kind, imported: ``papers.<paper>.<kind>`` and
    ``papers.<paper>.<kind>_<alg>`` for each paper of ``PAPERS``, e.g. ``paper_modules("corpus")``.
    Keyed by the algorithm's name (``amin2019``, ``amin2019_erm``: the name of its reference module,
    and of the flat ``tests/corpus/<name>.py`` it came from) and ordered by it."""
    found = {}  # algorithm name -> module name
    for paper in PAPERS:
        for path in (_HERE / paper).glob(f"{kind}*.py"):
            if path.stem == kind or path.stem.startswith(kind + "_"):
                found[paper + path.stem[len(kind) :]] = f"papers.{paper}.{path.stem}"
    return {algo: importlib.import_module(found[algo]) for algo in sorted(found)}
