"""The known-bug corpus of ``userdp validate``, like Wycheproof's vectors.

One module per algorithm, in its paper's test folder (``tests/papers/<paper>/corpus.py``,
``corpus_<alg>.py``; ``papers.paper_modules("corpus")`` finds them). Each holds small
implementations written as an outside engineer would write them, each with one named bug (or none:
the correct alternatives, which must pass), and a list ``CORPUS`` of ``CorpusEntry`` records saying
what each is, what it gets wrong, what verdict ``userdp validate`` must give (with the input policy
and parameter renaming the entry declares), and where the bug comes from. The implementations use
all three call shapes (one release per call, batched, an Adapter with stages) and all input policies
(refuse, clip, trust).

tests/corpus/test_corpus.py runs a representative slice in the default suite and every entry
over seeds 0-4 under ``-m slow``; ``python -m corpus.report`` prints the README's table.
"""

from __future__ import annotations

from dataclasses import dataclass

BUG_TYPES = (
    "sensitivity",
    "noise scale",
    "budget",
    "accounting",
    "sampling",
    "domain",
    "non-private data-dependent choice",
    "data-dependent behaviour",
    "normalisation",
    "optimality",
    "independence",
    "parameter regime",
    "structure",
    "public inputs",
    "bias",
    "variance",
    "none",
)
VERDICTS = ("privacy violation", "invariant violation", "deviation from reference", "not independent", "pass")
PROVENANCE = ("found in the authors' public code", "planted", "correct alternative")
POLICIES = (None, "refuse", "clip", "trust")


@dataclass(frozen=True)
class CorpusEntry:
    id: str  # e.g. "amin2019/per-record-cap"
    algorithm: str  # the registered algorithm validated against (`userdp list`)
    target: str  # module:object, importable with tests/ on the path
    bug_type: str  # one of BUG_TYPES ("none" for a correct alternative)
    expected: str  # the overall verdict validate must give (one of VERDICTS)
    effect: str  # what the bug does; claimed vs true privacy loss where known
    provenance: str  # one of PROVENANCE; "found in ..." names a documented defect (docs/papers/<paper>.md)
    exposes: str = "release"  # "release": a plain function; "stages": an Adapter
    inputs: str | None = None  # the declared input policy (--inputs); None: inferred
    param_map: tuple = ()  # ((reference name, yours), ...) (--param-map)
    small: bool = False  # a small-effect bug (a few per cent of the noise or less)

    def __post_init__(self):
        if self.bug_type not in BUG_TYPES:
            raise ValueError(f"{self.id}: bug_type {self.bug_type!r} not in {BUG_TYPES}")
        if self.expected not in VERDICTS:
            raise ValueError(f"{self.id}: expected {self.expected!r} not in {VERDICTS}")
        if self.provenance not in PROVENANCE:
            raise ValueError(f"{self.id}: provenance {self.provenance!r} not in {PROVENANCE}")
        if (self.bug_type == "none") != (self.expected == "pass") or (self.bug_type == "none") != (
            self.provenance == "correct alternative"
        ):
            raise ValueError(
                f"{self.id}: a correct alternative has bug_type 'none', expected 'pass' and "
                "provenance 'correct alternative', and only it"
            )
        if self.exposes not in ("release", "stages"):
            raise ValueError(f"{self.id}: exposes must be 'release' or 'stages'")
        if self.inputs not in POLICIES:
            raise ValueError(f"{self.id}: inputs must be one of {POLICIES}")

    def kwargs(self) -> dict:
        """The keyword arguments of ``validate`` this entry declares."""
        out = {}
        if self.inputs is not None:
            out["inputs"] = self.inputs
        if self.param_map:
            out["param_map"] = dict(self.param_map)
        return out
