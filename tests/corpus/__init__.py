"""The known-bug corpus of ``userdp validate`` (issue 13 item 5), like Wycheproof's vectors.

One module per paper. Each holds small implementations written as an outside engineer
would write them, each with one named bug (or none: the correct alternatives, which must
pass), and a list ``CORPUS`` of ``CorpusEntry`` records saying what each is, what it
gets wrong, what verdict ``userdp validate`` must give, and where the bug comes from.
tests/corpus/test_corpus.py runs every entry through ``validate`` at default settings.
"""
from __future__ import annotations

from dataclasses import dataclass

BUG_TYPES = ("sensitivity", "noise scale", "budget", "accounting", "sampling", "domain",
             "non-private data-dependent choice", "normalisation", "optimality", "independence", "none")
VERDICTS = ("privacy violation", "invariant violation", "deviation from reference", "not independent", "pass")
PROVENANCE = ("found in the authors' public code", "planted", "correct alternative")


@dataclass(frozen=True)
class CorpusEntry:
    id: str                  # e.g. "amin2019/per-record-cap"
    algorithm: str           # the registered algorithm validated against (`userdp list`)
    target: str              # module:object, importable with tests/ on the path
    bug_type: str            # one of BUG_TYPES ("none" for a correct alternative)
    expected: str            # the overall verdict validate must give (one of VERDICTS)
    effect: str              # what the bug does; claimed vs true privacy loss where known
    provenance: str          # one of PROVENANCE; "found in ..." names NOTES.md's defect
    exposes: str = "release" # "release": a plain mechanism function; "stages": an Adapter

    def __post_init__(self):
        if self.bug_type not in BUG_TYPES:
            raise ValueError(f"{self.id}: bug_type {self.bug_type!r} not in {BUG_TYPES}")
        if self.expected not in VERDICTS:
            raise ValueError(f"{self.id}: expected {self.expected!r} not in {VERDICTS}")
        if self.provenance not in PROVENANCE:
            raise ValueError(f"{self.id}: provenance {self.provenance!r} not in {PROVENANCE}")
        if (self.bug_type == "none") != (self.expected == "pass") or \
                (self.bug_type == "none") != (self.provenance == "correct alternative"):
            raise ValueError(f"{self.id}: a correct alternative has bug_type 'none', expected 'pass' and "
                             "provenance 'correct alternative', and only it")
        if self.exposes not in ("release", "stages"):
            raise ValueError(f"{self.id}: exposes must be 'release' or 'stages'")
