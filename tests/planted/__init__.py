"""The planted-bug corpus: implementations with one named bug each (docs/design.md §8.8, like
Wycheproof's vectors). Each paper's modules (``tests/papers/<paper>/planted*.py``) list
``PlantedBug`` records; its test files assert that the property suite or the audit catches every one.
``auditor.py`` here holds the paper-free positive controls of the auditor itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class PlantedBug:
    name: str
    bug_type: str
    effect: str
    source: str  # where the mistake comes from
    caught_by: tuple[str, ...] = ()  # property names and/or "audit"
    adapter: Optional[Any] = None  # the buggy stages, for the property suite
    mechanism: Optional[Callable[..., Any]] = None  # the buggy release, for the audit ...
    claim: Any = None  # ... against this (wrong) claim
    pairs: Any = ()  # ... on these neighbouring pairs
