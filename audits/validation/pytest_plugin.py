"""The userdp pytest plugin (entry point ``pytest11``): ``userdp validate`` as pytest items.

    pytest --pyargs userdp.properties --userdp-target ALGORITHM=module:object [--userdp-seed S]

runs the checks of ``userdp validate`` (``run.checks``, audits/validation/run.py) against your
implementation, one pytest item per property of the paper's suite and one per check (stages,
independence, differential, inputs, audit), in validate's order; an item run alone runs the checks
it needs first. A property whose stages the target lacks, or a check that does not apply, is
skipped ("not applicable", with the reason); a finding fails its item with the evidence.
``--userdp-target`` may be given several times (one algorithm each). Without it the plugin adds
nothing, so it never changes another project's test run (it imports userdp only then).

A program in another language: ``--userdp-command 'ALGORITHM=CMD ...'`` (repeatable) runs the
program CMD over userdp's JSON-lines protocol (docs/protocol.md), as ``userdp validate ALGORITHM
--command CMD`` does: the same items, one per property and per check, and report snippets that
start the program (``report.impl_lines``), not a Python ``impl``. The program is started once per
target and ended when the session ends; a program that breaks the protocol fails the item that
called it with the breach.

Hypothesis profiles are honoured: the property items run ``hypothesis.settings.default``'s
``max_examples`` (``--hypothesis-profile NAME`` selects a profile, as in any Hypothesis
project). The runs stay derandomized, so a finding reproduces. The statistical checks use
``--userdp-samples`` (default: validate's), ``--userdp-seed`` (default 0) and ``--userdp-inputs``
(default: inferred per case).

Exit status is pytest's: a failed item (any finding) is 1, as with ``userdp validate``. A target
cannot grade itself: pytest's skip, xfail or exit, or any other ``BaseException`` raised inside its
calls, fails the item that called it (``_target_region``); a ``KeyboardInterrupt`` stops the run
(pytest's exit status 2, never 0).
"""

from __future__ import annotations

import contextlib
import importlib

import pytest

__all__: list[str] = []  # registers its entries at import; nothing else is imported from it


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
        "--userdp-command",
        action="append",
        default=[],
        metavar="ALGORITHM=CMD",
        help="validate the program CMD (any language; userdp's JSON-lines protocol, docs/protocol.md) as "
        "ALGORITHM (repeatable)",
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


def _parse(text: str, option: str = "--userdp-target"):
    algorithm, sep, target = text.partition("=")
    if option == "--userdp-command":
        if not sep or not algorithm or not target.strip():
            raise pytest.UsageError(
                f"--userdp-command must be ALGORITHM=CMD (a program and its arguments), got {text!r}"
            )
    elif not sep or not algorithm or ":" not in target:
        raise pytest.UsageError(f"--userdp-target must be ALGORITHM=module:object, got {text!r}")
    return algorithm, target


def pytest_collection_modifyitems(session, config, items):
    targets = [("--userdp-target", t) for t in config.getoption("--userdp-target")]
    targets += [("--userdp-command", t) for t in config.getoption("--userdp-command")]
    if not targets:
        return
    from userdp.audits.engine.usercode import UsageError, UserCodeError
    from userdp.audits.validation.protocol import TargetError

    for option, text in targets:
        algorithm, target = _parse(text, option)
        try:
            if option == "--userdp-command":
                target = _program_target(config, algorithm, target)
            run = _Run(config, algorithm, target)
        except (UsageError, UserCodeError, TargetError, ValueError) as exc:
            raise pytest.UsageError(f"{option} {text}: {exc}") from None
        for check in run.checks.values():
            if check.name != "properties":
                items.append(ValidateItem.from_parent(session, name=f"{algorithm}::{check.name}", run=run, what=check))
            elif run.spec.suite_properties:  # one item per property of the paper's suite
                for prop in getattr(importlib.import_module(run.spec.suite), run.spec.suite_properties):
                    items.append(
                        ValidateItem.from_parent(session, name=f"{algorithm}::{prop.__name__}", run=run, what=prop)
                    )


def _program_target(config, algorithm: str, command: str):
    """The ``PythonTarget`` of a program (``--userdp-command``): its stages and release over the
    protocol, in the paper's adapter type, as ``userdp validate --command`` builds it; the program
    is ended when the session ends."""
    from userdp.audits.validation import get
    from userdp.audits.validation.protocol import ProcessTarget
    from userdp.audits.validation.target import PythonTarget

    spec = get(algorithm)
    program = ProcessTarget(command, algorithm=algorithm)
    config.add_cleanup(program.close)
    adapter = program.adapter(getattr(importlib.import_module(spec.suite), "ADAPTER", None), f'--command "{command}"')
    return PythonTarget(
        f'--command "{program.command}"', adapter, adapter.mechanism, plain=not program.stages, program=program
    )


class _Run:
    """One target's validation (``run.checks``): the checks share one context, so each runs once."""

    def __init__(self, config, algorithm, target):
        from userdp.audits.validation.run import checks

        self.checks = {
            c.name: c
            for c in checks(
                algorithm,
                target,
                samples=config.getoption("--userdp-samples"),
                seed=config.getoption("--userdp-seed"),
                inputs=config.getoption("--userdp-inputs"),
            )
        }
        ctx = next(iter(self.checks.values())).ctx
        self.spec, self.target = ctx.spec, ctx.target

    def property(self, prop):
        from hypothesis import settings
        from userdp.properties.adapter import check_suite_property

        suite = importlib.import_module(self.spec.suite)
        with _target_region(f"property {prop.__name__}"):
            f = check_suite_property(suite, prop, self.target.adapter, max_examples=settings.default.max_examples)
        if f.verdict == "not applicable":
            pytest.skip(f"not applicable: {f.message}")
        if f.verdict != "pass":
            from userdp.audits.validation.report import property_snippet

            snippet = property_snippet(self.spec, prop, f, self.target).replace("\n", "\n  ")
            pytest.fail(
                f"{f.verdict}: {f.message}\nminimal counterexample: {f.counterexample}\n"
                f"snippet (runnable):\n  {snippet}",
                pytrace=False,
            )

    def check(self, check):
        from userdp.audits.engine.blas import single_threaded_blas
        from userdp.audits.validation.report import format_finding

        why = check.applies()
        if why is not None:
            pytest.skip(f"not applicable: {why}")
        with _target_region(f"{check.name} check"), single_threaded_blas():
            findings = check.run()
        if not findings:
            pytest.skip(check.ctx.checks.get(check.name, "nothing to check"))
        bad = [f for f in findings if f.verdict != "pass"]
        if bad:
            pytest.fail("\n".join(line for f in bad for line in format_finding(f, indent="")), pytrace=False)


@contextlib.contextmanager
def _target_region(what: str):
    """Run validate's ``what`` (a check, or a property of the paper's suite), which calls TARGET.
    A target must not grade itself: pytest's skip, xfail or exit, or any other ``BaseException``
    that is not a finding, raised inside its calls would turn an item it fails (no noise at all)
    into "skipped", "xfailed" or an early exit 0. Each is a failure of the item, naming it. A
    ``UserCodeError`` (validate's report of an error in TARGET) and a ``KeyboardInterrupt`` (it may
    be a real Ctrl-C, which must stop the run; pytest then exits 2, never 0) pass through."""
    from userdp.audits.engine.usercode import UsageError, UserCodeError
    from userdp.audits.validation.protocol import TargetError

    try:
        yield
    except (UserCodeError, UsageError, KeyboardInterrupt):
        raise
    except TargetError as exc:  # the program broke the protocol (userdp validate --command: exit 3)
        why = f"the program broke the protocol inside validate's {what}: {exc}"
    except BaseException as exc:
        why = (
            f"TARGET raised {type(exc).__name__} ({exc}) inside validate's {what}: "
            "a target cannot skip, expect-fail or end its own validation; this is a failure, not a verdict "
            "of the target's choosing"
        )
    else:
        return
    raise pytest.fail.Exception(why, pytrace=False) from None  # the failure alone, not the chain it came from


class ValidateItem(pytest.Item):
    """One pytest item: a property of the paper's suite, or one of validate's checks."""

    def __init__(self, *, run, what, **kwargs):
        super().__init__(**kwargs)
        self.run, self.what = run, what

    def runtest(self):
        from userdp.audits.engine.usercode import UserCodeError

        try:
            if hasattr(self.what, "applies"):  # a check (run.Check); else a property
                self.run.check(self.what)
            else:
                self.run.property(self.what)
        except UserCodeError as exc:
            pytest.fail(f"error in the target: {exc}", pytrace=False)

    def reportinfo(self):
        return self.path, None, f"userdp validate {self.name}"
