"""Every corpus entry through ``userdp validate`` at default settings and a fixed seed: its
expected verdict (issue 13 item 5). A correct alternative must pass; every bug must get its
verdict. False alarms: validate's own budget, 1e-4 per run (audits/validate.py), so a correct
entry fails by chance with probability <= 1e-4; a bug is missed only if its effect falls
within the checks' critical values (each entry's effect is many critical values wide)."""
from __future__ import annotations

import importlib
import pkgutil

import pytest

import corpus
from corpus import BUG_TYPES, CorpusEntry
from userdp.audits.validate import all_validations, validate

MODULES = sorted(m.name for m in pkgutil.iter_modules(corpus.__path__) if not m.name.startswith(("_", "test", "report")))
ENTRIES = [e for m in MODULES for e in importlib.import_module(f"corpus.{m}").CORPUS]
SEED = 0


def test_corpus_shape():
    ids = [e.id for e in ENTRIES]
    assert len(ids) == len(set(ids)), "duplicate corpus ids"
    assert all(isinstance(e, CorpusEntry) for e in ENTRIES)
    specs = all_validations()
    assert {e.algorithm for e in ENTRIES} == set(specs), "every algorithm validate supports has corpus entries"
    for algo in specs:        # each algorithm: a correct alternative and a bug, release-only
        mine = [e for e in ENTRIES if e.algorithm == algo]
        assert any(e.expected == "pass" for e in mine), f"{algo}: no correct alternative"
        assert any(e.expected != "pass" and e.exposes == "release" for e in mine), f"{algo}: no release-only bug"
    with pytest.raises(ValueError, match="correct alternative"):   # planted: a bug marked as passing
        CorpusEntry("x", "a", "m:o", "sensitivity", "pass", "e", "planted")
    with pytest.raises(ValueError, match="bug_type"):
        CorpusEntry("x", "a", "m:o", "typo", "pass", "e", "planted")
    assert set(BUG_TYPES) >= {e.bug_type for e in ENTRIES}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_corpus_entry_gets_its_verdict(entry):
    report = validate(entry.algorithm, entry.target, seed=SEED)
    bad = [f"{f.verdict}: {f.check}: {f.title}" for f in report.findings if f.verdict != "pass"]
    assert report.verdict == entry.expected, f"{entry.id}: {report.verdict}, expected {entry.expected}; {bad}"
