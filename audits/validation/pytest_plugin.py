"""The userdp pytest plugin (entry point ``pytest11``): ``userdp validate`` as pytest items.

    pytest --pyargs userdp.properties --userdp-target ALGORITHM=module:object [--userdp-seed S]

runs the checks of ``userdp validate`` (audits/validation/run.py) against your implementation,
one pytest item per property of the paper's suite and one per check (stages, independence,
differential, inputs, audit). A property whose stages the target lacks is skipped ("not
applicable"); a finding fails its item with the evidence. ``--userdp-target`` may be given
several times (one algorithm each). Without it the plugin adds nothing, so it never changes
another project's test run.

Hypothesis profiles are honoured: the property items run ``hypothesis.settings.default``'s
``max_examples`` (``--hypothesis-profile NAME`` selects a profile, as in any Hypothesis
project). The runs stay derandomized, so a finding reproduces. The statistical checks use
``--userdp-samples`` (default: validate's), ``--userdp-seed`` (default 0) and ``--userdp-inputs``
(default: inferred per case).

Exit status is pytest's: a failed item (any finding) is 1, as with ``userdp validate``.
"""

from __future__ import annotations

import pytest

__all__: list[str] = []  # registers its entries at import; nothing else is imported from it

_KEY = "userdp_validate_state"
CHECKS = ("stages", "independence", "differential", "inputs", "audit")


def pytest_addoption(parser):
    g = parser.getgroup("userdp", "userdp: validate an implementation of a paper's algorithm")
    g.addoption(
        "--userdp-target",
        action="append",
        default=[],
        metavar="ALGORITHM=module:object",
        help="validate module:object (an Adapter or a mechanism function) as ALGORITHM (repeatable)",
    )
    g.addoption(
        "--userdp-samples",
        type=int,
        default=None,
        metavar="N",
        help="releases per case (default: userdp validate's, chosen by the target's speed)",
    )
    g.addoption("--userdp-seed", type=int, default=0, metavar="S", help="seed of every random draw (default 0)")
    g.addoption(
        "--userdp-inputs",
        choices=("refuse", "clip", "trust"),
        default=None,
        help="the target's input policy (default: inferred per case, as userdp validate)",
    )


def _parse(text: str):
    algorithm, sep, target = text.partition("=")
    if not sep or not algorithm or ":" not in target:
        raise pytest.UsageError(f"--userdp-target must be ALGORITHM=module:object, got {text!r}")
    return algorithm, target


def pytest_collection_modifyitems(session, config, items):
    targets = config.getoption("--userdp-target")
    if not targets:
        return
    from userdp.audits.validation import run as V

    for text in targets:
        algorithm, target = _parse(text)
        try:
            spec = V.get_validation(algorithm)
            loaded = V.load_target(target)
            run = _Run(config, spec, loaded)
        except (V.UsageError, V.UserCodeError) as exc:
            raise pytest.UsageError(f"--userdp-target {text}: {exc}") from None
        if spec.suite_properties:
            suite = V.importlib.import_module(spec.suite)
            for prop in getattr(suite, spec.suite_properties):
                items.append(
                    ValidateItem.from_parent(session, name=f"{algorithm}::{prop.__name__}", run=run, what=prop)
                )
        for check in CHECKS:
            items.append(ValidateItem.from_parent(session, name=f"{algorithm}::{check}", run=run, what=check))


class _Run:
    """One target's validation (``validate.Validation``): the checks share its draws, so each runs once."""

    def __init__(self, config, spec, target):
        from userdp.audits.validation import run as V

        self.V, self.spec, self.target = V, spec, target
        self.v = V.Validation(
            spec,
            target,
            samples=config.getoption("--userdp-samples"),
            seed=config.getoption("--userdp-seed"),
            inputs=config.getoption("--userdp-inputs"),
        )
        self.v.check_target()
        self.done: dict = {}

    def property(self, prop):
        from hypothesis import settings
        from userdp.properties.adapter import check_suite_property

        suite = self.V.importlib.import_module(self.spec.suite)
        f = check_suite_property(suite, prop, self.target.adapter, max_examples=settings.default.max_examples)
        if f.verdict == "not applicable":
            pytest.skip(f"not applicable: {f.message}")
        if f.verdict != "pass":
            pytest.fail(f"{f.verdict}: {f.message}\nminimal counterexample: {f.counterexample}", pytrace=False)

    def _run(self, name):
        """Run check ``name`` (and what it needs first) once; its findings."""
        if name in self.done:
            return self.done[name]
        v = self.v
        needs = {"differential": ("independence",), "inputs": ("differential",), "audit": ("differential", "inputs")}
        for first in needs.get(name, ()):
            self._run(first)
        before = len(v.findings)
        with self.V.single_threaded_blas():
            {
                "stages": v.run_stages,
                "independence": v.run_independence,
                "differential": v.run_differential,
                "inputs": v.run_inputs,
                "audit": v.run_audits,
            }[name]()
        self.done[name] = v.findings[before:]
        return self.done[name]

    def check(self, name):
        if name != "stages" and self.target.mechanism is None:
            pytest.skip("not applicable: the target has no mechanism stage (the release)")
        findings = self._run(name)
        if not findings:
            pytest.skip(self.v.checks.get(name, "nothing to check"))
        bad = [f for f in findings if f.verdict != "pass"]
        if bad:
            pytest.fail("\n".join(line for f in bad for line in self.V.format_finding(f, indent="")), pytrace=False)


class ValidateItem(pytest.Item):
    def __init__(self, *, run, what, **kwargs):
        super().__init__(**kwargs)
        self.run, self.what = run, what

    def runtest(self):
        from userdp.audits.validation.run import UserCodeError

        try:
            if isinstance(self.what, str):
                self.run.check(self.what)
            else:
                self.run.property(self.what)
        except UserCodeError as exc:
            pytest.fail(f"error in the target: {exc}", pytrace=False)

    def reportinfo(self):
        return self.path, None, f"userdp validate {self.name}"
