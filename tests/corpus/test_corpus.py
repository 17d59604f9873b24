"""The known-bug corpus through ``userdp validate``: every entry gets its expected verdict.

Default run: the corpus's shape (every validatable algorithm has correct alternatives in several
call shapes and bugs of the classes that matter), and a representative slice (``SLICE``: for a
few algorithms a correct alternative, a small-effect bug, a domain bug under a declared policy,
a parameter-regime bug seen only on generated cases, a structure bug; the one-release-per-call
shape and the other policies are run by tests/audits/test_validate_cli.py) at seed 0. ``-m slow``: every entry at seeds
0-4 (``SEEDS``), the README table's run (``python -m corpus.report`` prints it).

False alarms: validate's own budget is 1e-4 per run (audits/validation/run.py), so a correct entry fails
by chance with probability <= 1e-4 per run (the fixed seeds make each run deterministic); a bug is
missed only if its effect falls within the checks' critical values.
"""

from __future__ import annotations

import collections

import pytest

from corpus import BUG_TYPES, CorpusEntry
from papers import paper_modules
from userdp.audits.validation import all_specs
from userdp.audits.validation.run import validate
from userdp.audits.validation.target import load_target

MODULES = paper_modules("corpus")  # algorithm -> tests/papers/<paper>/corpus*.py
ENTRIES = [e for m in MODULES.values() for e in m.CORPUS]
BY_ID = {e.id: e for e in ENTRIES}
SEEDS = (0, 1, 2, 3, 4)
SLICE = (
    "amin2019/loop-exponential-difference",
    "amin2019/five-percent-less-noise",
    "amin2019/clips-to-absolute-value",
    "amin2019/cap-at-half-T",
    "amin2019/no-noise-at-eps-zero",
    "epasto2020/wa-clips-values",
    "epasto2020/wa-noise-for-B-one",
    "epasto2020/wa-sigma-ignored",
    "epasto2020/gwa-first-coordinate-noise",
    "acharya2024/eta-eight-percent-high",
    "krichene2023/upper-triangle-noise-only",
    "amin2019_erm/ridge-seven-percent-less-noise",
    "zhao2024_wme/epsilon-not-split",
)


def shape_of(e: CorpusEntry) -> str:
    t = load_target(e.target, dict(e.param_map))
    return "adapter" if not t.plain else t.shape


def test_corpus_shape():
    ids = [e.id for e in ENTRIES]
    assert len(ids) == len(set(ids)), "duplicate corpus ids"
    assert all(isinstance(e, CorpusEntry) for e in ENTRIES)
    assert set(SLICE) <= set(BY_ID)
    specs = all_specs()
    assert {e.algorithm for e in ENTRIES} == set(specs), "every algorithm validate supports has corpus entries"
    for algo in specs:
        mine = [e for e in ENTRIES if e.algorithm == algo]
        good = [e for e in mine if e.expected == "pass"]
        assert len(good) >= 3, f"{algo}: {len(good)} correct alternatives, want >= 3"
        assert len({shape_of(e) for e in good}) >= 2, f"{algo}: the correct alternatives use one call shape"
        assert any(e.expected != "pass" and e.exposes == "release" for e in mine), f"{algo}: no release-only bug"
        assert any(e.bug_type == "independence" for e in mine), f"{algo}: no independence bug"
    classes = collections.Counter(e.bug_type for e in ENTRIES)
    for c in (
        "sensitivity",
        "noise scale",
        "budget",
        "domain",
        "independence",
        "parameter regime",
        "structure",
        "public inputs",
        "bias",
        "variance",
        "non-private data-dependent choice",
        "normalisation",
    ):
        assert classes[c], f"no bug of class {c!r}"
    assert sum(e.small for e in ENTRIES) >= 10, "small-effect bugs"
    assert {e.inputs for e in ENTRIES} >= {None, "refuse", "clip", "trust"}, "every input policy"
    with pytest.raises(ValueError, match="correct alternative"):  # planted: a bug marked as passing
        CorpusEntry("x", "a", "m:o", "sensitivity", "pass", "e", "planted")
    with pytest.raises(ValueError, match="bug_type"):
        CorpusEntry("x", "a", "m:o", "typo", "pass", "e", "planted")
    with pytest.raises(ValueError, match="inputs"):
        CorpusEntry("x", "a", "m:o", "none", "pass", "e", "correct alternative", inputs="ignore")
    assert set(BUG_TYPES) >= {e.bug_type for e in ENTRIES}


def _check(entry: CorpusEntry, seed: int):
    report = validate(entry.algorithm, entry.target, seed=seed, **entry.kwargs())
    bad = [f"{f.verdict}: {f.check}: {f.title}" for f in report.findings if f.verdict != "pass"]
    assert report.verdict == entry.expected, (
        f"{entry.id} (seed {seed}): {report.verdict}, expected {entry.expected}; {bad}"
    )


# Slice entries whose run takes ~10 s (measured on a fresh clone at idle, 2026-11-28): in the slow run
# only (where every entry runs at five seeds); SSP's validate stays in the default run through
# tests/audits/test_validate_cli.py.
SLOW_SLICE = {"krichene2023/upper-triangle-noise-only"}


@pytest.mark.parametrize(
    "entry_id", [pytest.param(i, marks=[pytest.mark.slow] if i in SLOW_SLICE else []) for i in SLICE]
)
def test_corpus_slice_gets_its_verdict(entry_id):
    _check(BY_ID[entry_id], 0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_corpus_entry_gets_its_verdict(entry, seed):
    _check(entry, seed)
