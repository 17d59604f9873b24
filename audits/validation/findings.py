"""What ``userdp validate`` finds: ``Finding`` (one check's result on one question, graded) and
``ValidationReport`` (the run: its verdict, which checks ran, the findings, the settings).

A "privacy violation" carries its witness (``evidence["witness"]``): the pair and set of an audit, or an
exact replay (a data-dependent refusal or warning replayed with the same seeds; an under-noised pair
replayed with coupled noise). The spread rule alone grades a deviation, "a possible privacy violation".

``VERDICT_ORDER``: the grades, worst first (Wycheproof's grading): "privacy violation", "invariant
violation", "deviation from reference", "not independent", "pass".
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Finding", "ValidationReport", "VERDICT_ORDER"]

VERDICT_ORDER = ("privacy violation", "invariant violation", "deviation from reference", "not independent", "pass")


@dataclass
class Finding:
    check: str  # properties | stages | differential | independence | inputs | audit
    verdict: str  # one of VERDICT_ORDER
    title: str
    evidence: dict

    def __post_init__(self):
        if self.verdict not in VERDICT_ORDER:
            raise ValueError(f"verdict must be one of {VERDICT_ORDER}, got {self.verdict!r}")
        if self.verdict == "privacy violation" and not self.evidence.get("witness"):
            raise ValueError(
                f"{self.check}: a privacy violation needs its witness (evidence['witness']: an audit's pair and "
                f"set, or an exact replay), got none for {self.title!r}"
            )

    def to_dict(self) -> dict:
        return {"check": self.check, "verdict": self.verdict, "title": self.title, "evidence": self.evidence}


@dataclass
class ValidationReport:
    algorithm: str
    target: str
    checks: dict  # check -> "ran: ..." or "skipped: why"
    findings: list
    settings: dict
    elapsed_seconds: float = 0.0
    call_shape: str | None = None
    untested: list = field(default_factory=list)  # what a partial run did not test
    inputs: list = field(default_factory=list)  # [{case, kind, behaviour, requires}]
    notes: list = field(default_factory=list)
    reproducible: bool | None = None

    @property
    def verdict(self) -> str:
        bad = [f.verdict for f in self.findings if f.verdict != "pass"]
        return min(bad, key=VERDICT_ORDER.index) if bad else "pass"

    @property
    def complete(self) -> bool:
        return not self.untested

    def verdict_line(self) -> str:
        v = self.verdict.upper()
        return v if self.complete else f"{v} ({'; '.join(self.untested)})"

    def to_dict(self) -> dict:
        return {
            "algorithm": self.algorithm,
            "target": self.target,
            "verdict": self.verdict,
            "complete": self.complete,
            "untested": list(self.untested),
            "call_shape": self.call_shape,
            "checks": self.checks,
            "settings": self.settings,
            "inputs": self.inputs,
            "notes": self.notes,
            "reproducible": self.reproducible,
            "findings": [f.to_dict() for f in self.findings if f.verdict != "pass"],
            "passed": [f.to_dict() for f in self.findings if f.verdict == "pass"],
            "elapsed_seconds": round(self.elapsed_seconds, 2),
        }
