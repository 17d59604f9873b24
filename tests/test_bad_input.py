"""Every public function refuses bad input clearly .

The table (``tests/bad_input_table.py``, with each paper's rows from
``tests/papers/<paper>/bad_input.py``) lists, for every public callable of the scoped modules, a
valid call and the bad values of each parameter. Each bad call must raise ``ValueError`` or
``TypeError`` whose message names the parameter (a whole word: the parameter's name or one of
the entry's aliases) within ``TIME_LIMIT`` CPU seconds, unless the entry lists the value as
documented valid (then the call must succeed).

Scope: every module of ``userdp.reference`` (and the package itself), ``userdp.audits.engine.bounds``,
``userdp.audits.engine.harness`` and ``userdp.properties.adapter``: the functions that take user data
and parameters. Out of scope, with reasons: the property suites' ``prop_*`` functions (their
input is an adapter and an example their own strategy builds), the registry and the command
line (tested through ``main([...])`` in tests/audits/test_audit_cli.py), and
``audits.rejection``/``search``/``sampling`` (internal to ``audit``, fed by it).

A public callable with no entry (or exemption in ``EXEMPT``) fails
``test_every_public_callable_has_an_entry``, and a scoped module without ``__all__`` fails
``test_every_scoped_module_declares_its_public_api``: a new function cannot quietly skip the table.

The epsilon cap (``_checks.MAX_EPSILON`` = 50): every privacy-level parameter of the table
refuses 51, accepts it inside ``userdp.reference.allow_large_epsilon()``, and refuses 1e60
even there (``test_epsilon_above_50_is_refused_unless_opted_in``).

Also a probe: ``python tests/test_bad_input.py --report [--json FILE]`` classifies every bad
call of the table as good (ValueError/TypeError naming the argument), weak (ValueError or
TypeError not naming it), crash (another exception), hang (time limit) or silent (returned
for a bad value), against whatever ``userdp`` is installed; entries absent from that install
are counted as skipped. ``--compare BEFORE.json AFTER.json`` prints the before/after table
of two saved probes (calls per class, per module, and how the calls moved between classes).
"""

from __future__ import annotations

import faulthandler
import importlib
import inspect
import json
import math
import os
import pathlib
import pkgutil
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import types
import warnings
from collections import Counter

import numpy as np
import pytest

import bad_input_table as T
import bad_values as BV

TIME_LIMIT = 5.0  # CPU seconds per call; every valid call of the table takes < 0.5 s
# The limit is CPU time (ITIMER_PROF: this process's user + system time), not wall time, so the
# "hang" verdict does not depend on the machine's load: at a load average of 15 a call gets a
# fraction of a core, and a 0.5 s call can take several wall seconds. A hang that spins is
# caught by it; one that blocks (uses no CPU) by the wall-clock BACKSTOP below.
# SIGPROF is only seen between Python bytecodes: a hang inside one C call (a BLAS or scipy
# loop) would not be interrupted. Then faulthandler dumps every thread's stack and ends
# the process (exit status 1) after BACKSTOP seconds, so such a hang fails the run instead
# of stalling it. The dump (whose stack names the call) goes to stderr when this file runs
# as a script; under pytest, which captures stderr and loses it with the process, to
# BACKSTOP_LOG.
BACKSTOP = 60.0
BACKSTOP_LOG = pathlib.Path(tempfile.gettempdir()) / "userdp-bad-input-backstop.txt"
_backstop_stream = None


def _backstop_file():
    global _backstop_stream
    if _backstop_stream is None:  # a bare descriptor: nothing to close at exit
        _backstop_stream = os.open(BACKSTOP_LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    return _backstop_stream


# A bad size or dimension (size = 10^8 + 1, d = 2^31) that slips through makes numpy allocate
# gigabytes; on a shared machine that is everyone's memory. Each call may grow the address
# space by MEMORY_LIMIT bytes only: beyond that its allocation fails (MemoryError, a crash).
MEMORY_LIMIT = 2 * 2**30


def _address_space() -> int | None:
    """This process's current virtual memory in bytes (Linux), else None (no limit set)."""
    try:
        with open("/proc/self/status") as f:
            kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return None
    return kb * 1024


class _MemoryCap:
    """RLIMIT_AS lowered to the current size + MEMORY_LIMIT for one call, restored after."""

    def __enter__(self):
        self.old = None
        now = _address_space()
        if now is None:
            return self
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = now + MEMORY_LIMIT
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft == resource.RLIM_INFINITY or cap < soft:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
            self.old = (soft, hard)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, self.old)
        return False


MODULES = [
    "userdp.audits.engine.bounds",
    "userdp.audits.engine.harness",
    "userdp.properties.adapter",
    "userdp.audits.engine.ceiling",
    "userdp.audits.engine.whitebox",
    "userdp.audits.validation.run",
    "userdp.audits.validation",
    "userdp.audits.validation.target",
    "userdp.audits.validation.report",
    "userdp.audits.validation.check_independence",
    "userdp.audits.engine.verdicts",
    "userdp.audits.validation.protocol",
    "userdp.audits.validation.vectors",
    "userdp.audits.validation.vector_cases",
]

# Public names that are not functions of user input, with the reason.
EXEMPT = {
    "erm.Minimiser": "a result record returned by erm.minimise, never built from user input",
    "epasto2020_gwa.OptimalC": "a result record returned by optimal_C",
    "neighbours.NeighbourPair": "a record the relations build; the audit only reads it",
    "harness.AuditResult": "a result record returned by audit",
    "harness.Witness": "a result record inside AuditResult",
    "harness.MechanismError": "an exception class",
    "harness.GDPAudit": "a result record inside AuditResult (the trade-off audit of a GDP claim)",
    "harness.GDPWitness": "a result record inside GDPAudit",
    "harness.PairResult": "a result record inside AuditResult (one confirmed pair's bound)",
    "harness.PairFailure": "a result record inside IncompleteAudit (a pair whose mechanism raised)",
    "harness.IncompleteAudit": "an exception class (some pairs failed; .result holds the finished ones)",
    "adapter.Finding": "a result record returned by check_property",
    "adapter.StageMissing": "an exception class",
    "ceiling.Ceiling": "a result record returned by ceiling",
    "whitebox.WhiteboxResult": "a result record returned by whitebox.search",
    "ceiling.NOISE_FAMILIES": "a tuple of names",
    "zhao2024.Plan": "a result record returned by zhao2024.release_plan",
    "zhao2024_solver.Solution": "a result record returned by zhao2024.solve",
    "zhao2024_calibration.GlobalConstants": "a result record returned by zhao2024_calibration.global_constants",
    "zhao2024_calibration.GlobalPlan": "a result record returned by zhao2024_calibration.global_plan",
    "zhao2024_calibration.Calibration": "a result record returned by zhao2024_calibration.calibrate",
    "verdicts.Interval": "a result record built by the comparisons inside decide, never from user input",
    "protocol.load_schema": "takes no input (the package's schema file)",
    "protocol.TargetError": "an exception class",
    "target.SeedError": "an exception class",
    "protocol.CommandError": "an exception class",
    "protocol.TranscriptError": "an exception class",
    "vectors.load_schema": "takes no input (the package's schema file)",
    "protocol.ProgramRefused": "an exception class",
    "protocol.ProgramFailed": "an exception class",
    "protocol.SchemaViolation": "an exception class",
    "vectors.VectorResult": "a result record inside CheckReport",
    "vectors.CheckReport": "a result record returned by check",
    "vector_cases.BugClass": "a record of the package's own vocabulary (BUG_CLASSES), never built from user input",
    "vector_cases.Design": "a record of the package's own designs (designs()), never built from user input",
    "vector_cases.designs": "takes no input",
    "vector_cases.register_design": "registry plumbing (the papers' vectors modules call it at import; a second "
    "design for one algorithm must not be left registered by a table call)",
    "validation.run.Check": "a record built by run.checks (one check of one run), never from user input",
    # validation, target, report and check_independence are scoped for the names that moved there from
    # validation.run (0.3.0); their other names, out of scope before, with the reason:
    "validation.BadValue": "an exception class",
    "validation.BadType": "an exception class",
    "validation.Param": "a record of a spec's parameter (the package's own specs build it)",
    "validation.add_axis": "internal to validate (a release of one call given a leading axis), fed by it",
    "validation.all_specs": "takes no input",
    "validation.register": "registry plumbing (the papers' spec modules call it at import; a second spec for "
    "one algorithm must not be left registered by a table call); its refusals are tested in "
    "tests/audits/test_validate_cli.py",
    "target.PythonTarget": "built by target.load_target from the user's object; its methods are fed by validate",
    "target.call_shape": "takes any callable and reads its signature; it never refuses (an unreadable one is ONE)",
    "target.check_call": "internal to validate (binds TARGET to the call it will make), fed by it",
    "target.signature_text": "takes a spec of the package (validation.get), never user input",
    "target.template_text": "takes a spec of the package (validation.get), never user input",
    "report.short": "never raises, by design: any object, briefly (tests/audits/test_validate_cli.py)",
    "report.jsonable": "internal to validate's report, fed by its cases' parameters",
    "report.claim_text": "internal to validate's report, fed by the specs' claims",
    "report.scale_parameter": "internal to validate's report, fed by the specs' claims",
    "report.property_snippet": "internal to validate's report, fed by the property suites' findings",
    "report.case_snippet": "internal to validate's report, fed by a run's context and its cases",
    "check_independence.applies": "takes the spec, target and context run.checks built, never user input",
}


def _modules():
    import userdp.reference as R

    names = ["userdp.reference"] + [
        f"userdp.reference.{m.name}" for m in pkgutil.iter_modules(R.__path__) if not m.name.startswith("_")
    ]
    return [importlib.import_module(n) for n in names + MODULES]


def _short(module) -> str:
    """The module's name in the table: its last part, or its last two where the last is generic
    (``validation.run``)."""
    parts = module.__name__.split(".")
    return ".".join(parts[-2:]) if parts[-1] in ("run", "main", "cases") else parts[-1]


def _takes_arguments(func) -> bool:
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return True
    return any(p.name not in ("self", "cls") for p in params)


def _public_methods(cls):
    attrs = {}
    for klass in reversed(cls.__mro__):  # inherited methods too (userdp classes only)
        if klass.__module__.startswith("userdp"):
            attrs.update(vars(klass))
    for name, attr in attrs.items():
        if name.startswith("_"):
            continue
        func = attr.__func__ if isinstance(attr, (classmethod, staticmethod)) else attr
        if inspect.isfunction(func) and _takes_arguments(func):
            yield name


def required_names(modules=None) -> dict[str, set[str]]:
    """{required entry: names that satisfy it}. A class's method is satisfied by an entry for
    the class or for any module-level instance of it (e.g. neighbours.REPLACE_USER.neighbour);
    a public instance of a userdp class whose class is not public needs its methods itself."""
    need: dict[str, set[str]] = {}
    modules = _modules() if modules is None else modules
    classes = {
        getattr(m, n) for m in modules for n in getattr(m, "__all__", []) if isinstance(getattr(m, n), type)
    }  # public somewhere: covered there
    for mod in modules:
        short = _short(mod)
        public = {n: getattr(mod, n) for n in getattr(mod, "__all__", [])}
        for name, obj in public.items():
            full = f"{short}.{name}"
            if full in EXEMPT:
                continue
            if isinstance(obj, type):
                if _takes_arguments(obj):
                    need[full] = {full}
                instances = [n for n, o in public.items() if type(o) is obj]
                for meth in _public_methods(obj):
                    need[f"{full}.{meth}"] = {f"{full}.{meth}"} | {f"{short}.{i}.{meth}" for i in instances}
            elif callable(obj):
                need[full] = {full}
            elif type(obj).__module__.startswith("userdp") and type(obj) not in classes:
                for meth in _public_methods(type(obj)):
                    need[f"{full}.{meth}"] = {f"{full}.{meth}"}
    return need


# ------------------------------------------------------------------------------ one call
class _Timeout(BaseException):
    """Raised by SIGPROF; a BaseException so that ``except Exception`` in the code cannot eat it."""


def _alarm(signum, frame):
    raise _Timeout()


def classify(entry, param: str, value, expect_ok: bool = False) -> tuple[str, str]:
    """(class, detail) of one call: good / weak / crash / hang / silent, or ok / fails for a valid one."""
    try:
        kwargs = entry.valid()
    except Exception as exc:  # the table's own valid arguments failed
        return "crash", f"valid() raised {type(exc).__name__}: {exc}"
    if param is not None:
        kwargs[param] = value
    old = signal.signal(signal.SIGPROF, _alarm)
    # fires again every 0.5 CPU s until cleared: an alarm raised inside a gc callback is ignored
    # by the interpreter ("Exception ignored in ..."), so one shot could miss a real hang
    signal.setitimer(signal.ITIMER_PROF, TIME_LIMIT, 0.5)
    faulthandler.dump_traceback_later(BACKSTOP, exit=True, file=_backstop_file())
    try:
        with warnings.catch_warnings(), _MemoryCap():
            warnings.simplefilter("error")  # a warning is not an answer
            entry.call(**kwargs)
    except _Timeout:
        return "hang", f"no answer within {TIME_LIMIT} CPU s"
    except (ValueError, TypeError) as exc:
        if expect_ok:
            return "fails", f"{type(exc).__name__}: {exc}"
        names = (param,) + tuple(entry.alias.get(param, ()))
        msg = str(exc)
        if any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", msg) for n in names):
            return "good", msg
        return "weak", f"{type(exc).__name__} does not name {param!r}: {msg}"
    except Exception as exc:  # noqa: BLE001 - classified, not hidden
        return ("fails" if expect_ok else "crash"), f"{type(exc).__name__}: {exc}"
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    return ("ok", "") if expect_ok else ("silent", f"returned for {param} = {value!r}")


def entry_failures(entry) -> list[str]:
    """Every call of ``entry`` that does not behave as the table demands."""
    out = []
    cls, detail = classify(entry, None, None, expect_ok=True)
    if cls != "ok":
        return [f"the valid call fails: {detail}"]
    for param, values in entry.bad.items():
        for v in values:
            cls, detail = classify(entry, param, v)
            if cls != "good":
                out.append(f"{param} = {v!r}: {cls}: {detail}")
    for param, values in entry.ok.items():
        for v in values:
            cls, detail = classify(entry, param, v, expect_ok=True)
            if cls != "ok":
                out.append(f"{param} = {v!r} (documented valid): {cls}: {detail}")
    return out


# --------------------------------------------------------------------------------- tests
CURRENT = [e for e in T.TABLE if not e.legacy]


def test_every_public_callable_has_an_entry():
    have = {e.name for e in CURRENT}
    missing = [req for req, ok in sorted(required_names().items()) if not (ok & have)]
    assert not missing, (
        "public callables without a bad-input entry (add one to tests/bad_input_table.py or "
        f"tests/papers/<paper>/bad_input.py): {missing}"
    )


def test_every_entry_names_a_public_callable_and_legacy_ones_are_gone():
    public = set().union(*required_names().values())
    stale = [e.name for e in CURRENT if e.name not in public]
    assert not stale, f"entries for names that are not public (mark legacy=True if they were): {stale}"
    back = [e.name for e in T.TABLE if e.legacy and e.name in public]
    assert not back, f"legacy entries that are public again: {back}"


def test_table_names_are_unique_and_every_entry_has_bad_values():
    names = Counter(e.name for e in T.TABLE)
    assert [n for n, k in names.items() if k > 1] == []
    no_args = {"reference.allow_large_epsilon"}  # takes no argument at all
    assert [e.name for e in CURRENT if not e.bad and e.name not in no_args] == []


@pytest.mark.parametrize("entry", CURRENT, ids=[e.name for e in CURRENT])
def test_bad_input_is_refused_naming_the_argument(entry):
    failures = entry_failures(entry)
    assert not failures, f"{entry.name}: {len(failures)} call(s) not refused as required:\n  " + "\n  ".join(failures)


# ------------------------------------------------------------------- epsilon above 50
# Privacy-level parameters: those whose bad values include 51 (the cap, _checks.MAX_EPSILON = 50).
# Outside ``allow_large_epsilon()`` the table already demands that 51 is refused; inside it,
# 51 must be accepted (the opt-in must reach every function that checks epsilon) and 1e60
# still refused (the magnitude range [1e-50, 1e50] holds whatever the opt-in).
# Entries where 51 is out of the parameter's own domain, with the reason:
LARGE_EPSILON_EXEMPT = {
    ("mechanisms.gaussian_sigma_classical", "epsilon"): "the classical bound needs epsilon < 1 [DR14, Thm A.1]",
}


def _is_51(v) -> bool:
    return isinstance(v, float) and v == 51.0


def epsilon_params(entry) -> list[str]:
    """The entry's privacy-level parameters: a bad value is 51.0 or a sequence holding it."""
    return [
        p
        for p, values in entry.bad.items()
        if any(_is_51(v) or (isinstance(v, (list, tuple)) and any(_is_51(x) for x in v)) for v in values)
    ]


def _set_to(valid_value, x: float):
    """The valid value of a privacy-level parameter with every level replaced by ``x``."""
    if isinstance(valid_value, (list, tuple, np.ndarray)):
        return (
            type(valid_value)([x] * len(valid_value))
            if not isinstance(valid_value, np.ndarray)
            else np.full(valid_value.shape, x)
        )
    return x


def large_epsilon_failures(entry) -> list[str]:
    from userdp.reference import allow_large_epsilon

    out = []
    for p in epsilon_params(entry):
        if (entry.name, p) in LARGE_EPSILON_EXEMPT:
            continue
        # the valid value, or (where that is None, e.g. UserDataset's epsilons) the first
        # documented valid one, with every privacy level set to x
        template = entry.valid().get(p)
        template = entry.ok[p][0] if template is None else template
        at = lambda x: _set_to(template, x)  # noqa: E731
        cls, detail = classify(entry, p, at(51.0))
        if cls != "good":
            out.append(f"{p} = 51 without the opt-in: {cls}: {detail}")
        with allow_large_epsilon():
            cls, detail = classify(entry, p, at(51.0), expect_ok=True)
            if cls != "ok":
                out.append(f"{p} = 51 inside allow_large_epsilon(): {cls}: {detail}")
            cls, detail = classify(entry, p, at(1e60))
            if cls != "good":
                out.append(f"{p} = 1e60 inside allow_large_epsilon(): {cls}: {detail}")
    return out


EPSILON_ENTRIES = [e for e in CURRENT if epsilon_params(e)]


def test_the_epsilon_cap_covers_the_mechanisms():
    # The opt-in is tested on every entry with a privacy level; these must be among them.
    names = {e.name for e in EPSILON_ENTRIES}
    for must in (
        "mechanisms.laplace_mechanism",
        "amin2019.mechanism",
        "amin2019.private_cap_mechanism",
        "amin2019_erm.mechanism",
        "epasto2020.wa_mechanism",
        "epasto2020.optimal_wa_mechanism",
        "epasto2020.sample_limiting_mechanism",
        "epasto2020_erm.mechanism",
        "epasto2020_gwa.mechanism",
        "epasto2020_gwa.sample_limited_ols_mechanism",
        "claims.PureDP",
        "claims.PersonalizedDP",
        "data.UserDataset",
    ):
        assert must in names, must
    assert {k[0] for k in LARGE_EPSILON_EXEMPT} <= names


@pytest.mark.parametrize("entry", EPSILON_ENTRIES, ids=[e.name for e in EPSILON_ENTRIES])
def test_epsilon_above_50_is_refused_unless_opted_in(entry):
    failures = large_epsilon_failures(entry)
    assert not failures, f"{entry.name}: {len(failures)} epsilon-cap call(s) wrong:\n  " + "\n  ".join(failures)


def _capped(epsilon):  # the intended check: 50 unless opted in, 1e50 always
    from userdp.reference._checks import check_epsilon

    return check_epsilon(epsilon)


def _cap_ignores_opt_in(epsilon):  # planted: a hard-coded cap the opt-in does not reach
    if not 1e-50 <= epsilon <= 50.0:
        raise ValueError(f"epsilon must lie in [1e-50, 50], got {epsilon!r}")


def _no_cap(epsilon):  # planted: only positivity checked
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")


def _opt_in_lifts_everything(epsilon):  # planted: the opt-in also lifts the magnitude range
    from userdp.reference._checks import _LARGE_EPSILON

    if not (1e-50 <= epsilon <= (math.inf if _LARGE_EPSILON.get() else 50.0)):
        raise ValueError(f"epsilon out of range, got {epsilon!r}")


@pytest.mark.parametrize(
    "func,want",
    [
        (_capped, []),
        (_cap_ignores_opt_in, ["epsilon = 51 inside allow_large_epsilon(): fails"]),
        (_no_cap, ["epsilon = 51 without the opt-in: silent", "epsilon = 1e60 inside allow_large_epsilon(): silent"]),
        (_opt_in_lifts_everything, ["epsilon = 1e60 inside allow_large_epsilon(): silent"]),
    ],
)
def test_the_epsilon_cap_check_catches_planted_caps(func, want):
    e = BV.Entry("planted.cap", func, lambda: dict(epsilon=1.0), {"epsilon": BV.EPS()})
    got = [f.split(":")[0] + ":" + f.split(":")[1] for f in large_epsilon_failures(e)]
    assert got == want


# -------------------------------------------------------------- planted: the table's own checks
def _planted_module(**members):
    mod = types.ModuleType("userdp.planted_fake")
    for k, v in members.items():
        setattr(mod, k, v)
        if hasattr(v, "__module__"):
            try:
                v.__module__ = "userdp.planted_fake"
            except (AttributeError, TypeError):
                pass
    mod.__all__ = list(members)
    return mod


class _Rel:
    def neighbour(self, D, user_id):
        return D

    def changed_units(self):  # no argument: nothing to refuse
        return set()


def test_a_new_public_function_without_an_entry_is_caught():
    # Planted: a module publishing a function, a class, a constant and an instance whose
    # class is not public; every callable with an input must be required, nothing else.
    def new_estimator(dataset, epsilon):
        return 0.0

    class Shiny:
        def __init__(self, x):
            self.x = x

        def fit(self, y):
            return y

    inst = _Rel()
    _Rel.__module__ = "userdp.planted_fake"
    mod = _planted_module(new_estimator=new_estimator, Shiny=Shiny, SOME_TOL=1e-9, REL=inst)
    need = required_names([mod])
    assert set(need) == {
        "planted_fake.new_estimator",
        "planted_fake.Shiny",
        "planted_fake.Shiny.fit",
        "planted_fake.REL.neighbour",
    }
    have = {e.name for e in CURRENT}
    assert all(not (ok & have) for ok in need.values())  # none of them has an entry


def test_every_scoped_module_declares_its_public_api():
    # A module without __all__ would publish nothing to the table and skip the test quietly.
    assert [m.__name__ for m in _modules() if not hasattr(m, "__all__")] == []


def test_a_documented_valid_value_that_fails_and_a_broken_valid_call_are_reported():
    def f(x):
        if x < 0:
            raise ValueError(f"x must be >= 0, got {x!r}")
        if x == 0:
            raise ValueError("x = 0 is refused (planted: 0 was documented valid)")
        return x

    e = BV.Entry("planted.ok", f, lambda: dict(x=1.0), {"x": [-1.0]}, ok={"x": [0.0]})
    assert entry_failures(e) == [
        "x = 0.0 (documented valid): fails: ValueError: x = 0 is refused (planted: 0 was documented valid)"
    ]
    broken = BV.Entry("planted.valid", f, lambda: dict(x=0.0), {"x": [-1.0]})
    assert entry_failures(broken)[0].startswith("the valid call fails")


def test_a_message_must_name_the_argument_as_a_word():
    # "epsilons" or "sigma_eps" does not name "eps"; an alias counts only when declared.
    def f(eps):
        raise ValueError(f"epsilons and sigma_eps must be positive, got {eps!r}")

    assert classify(BV.Entry("planted.word", f, lambda: dict(eps=1.0), {}), "eps", -1.0)[0] == "weak"
    aliased = BV.Entry("planted.word", f, lambda: dict(eps=1.0), {}, alias={"eps": ("epsilons",)})
    assert classify(aliased, "eps", -1.0)[0] == "good"


def _silent(epsilon):
    return 1.0 / epsilon if epsilon == epsilon else 0.0  # NaN slips through


def _crash(epsilon):
    return {}["epsilon"]  # KeyError, not a refusal


def _weak(epsilon):
    raise ValueError("bad value")  # does not name the argument


def _hang(epsilon):
    while True:  # never returns
        pass


def _huge(epsilon):
    # 3 GiB > MEMORY_LIMIT; np.empty touches no page, so a broken cap costs no memory (it
    # returns, "silent", and this case fails)
    return np.empty(3 * 2**27)


def _good(epsilon):
    raise ValueError(f"epsilon must be finite, got {epsilon!r}")


@pytest.mark.parametrize(
    "func,want",
    [(_silent, "silent"), (_crash, "crash"), (_weak, "weak"), (_hang, "hang"), (_huge, "crash"), (_good, "good")],
)
def test_the_grader_classes_planted_input_checks(func, want, monkeypatch):
    # Planted bugs of input checking itself: the grader must tell each failure class apart.
    monkeypatch.setattr(sys.modules[__name__], "TIME_LIMIT", 0.3)
    e = BV.Entry("planted." + want, func, lambda: dict(epsilon=1.0), {"epsilon": [float("nan")]})
    assert classify(e, "epsilon", float("nan"))[0] == want


def test_a_hang_inside_one_c_call_ends_the_process_with_a_dump():
    # Planted: sum(range(10**11)) runs in C without looking at signals, so SIGPROF cannot
    # stop it; the faulthandler backstop must (exit status 1, the stack on stderr).
    code = textwrap.dedent("""
        import sys, test_bad_input as B, bad_values as BV
        B.TIME_LIMIT, B.BACKSTOP, B._backstop_stream = 0.2, 1.0, sys.stderr
        e = BV.Entry("planted.c_hang", lambda epsilon: sum(range(10**11)), lambda: dict(epsilon=1.0), {})
        print(B.classify(e, "epsilon", 1.0))
    """)
    here = pathlib.Path(__file__).parent
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=here,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(here)},
    )
    assert run.returncode == 1 and run.stdout == "", (run.returncode, run.stdout, run.stderr[-500:])
    assert "Timeout (0:00:01)!" in run.stderr and "in classify" in run.stderr


# --------------------------------------------------------------------------------- probe
CLASSES = ("good", "weak", "crash", "hang", "silent")


def probe() -> dict:
    """Classify every bad call of the table against the installed userdp.

    Entries whose name is not public in that install are skipped (listed); entries whose
    all-valid call fails there are listed too (their bad calls are still classified, but a
    "good" among them may only echo the valid call's own refusal).
    """
    rows, skipped, valid_fails = [], [], {}
    names = set().union(*required_names().values())
    for e in T.TABLE:
        if e.name not in names:
            skipped.append(e.name)
            continue
        cls, detail = classify(e, None, None, expect_ok=True)
        if cls != "ok":
            valid_fails[e.name] = detail[:300]
        for param, values in e.bad.items():
            for i, v in enumerate(values):
                t0 = time.perf_counter()
                cls, detail = classify(e, param, v)
                rows.append(
                    {
                        "function": e.name,
                        "module": e.name.split(".")[0],
                        "param": param,
                        "index": i,
                        "value": re.sub(r" at 0x[0-9a-f]+", "", repr(v))[:60],
                        "class": cls,
                        "detail": detail[:300],
                        "seconds": round(time.perf_counter() - t0, 3),
                    }
                )
    counts = Counter(r["class"] for r in rows)
    return {
        "userdp": _installed(),
        "calls": len(rows),
        "functions": len({r["function"] for r in rows}),
        "counts": {k: counts.get(k, 0) for k in CLASSES},
        "by_module": _by_module(rows),
        "skipped_entries": skipped,
        "valid_call_fails": valid_fails,
        "rows": rows,
    }


def _installed() -> str:
    import userdp.reference

    return str(pathlib.Path(userdp.reference.__file__).resolve().parent.parent)


def _by_module(rows) -> dict:
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        out.setdefault(r["module"], {k: 0 for k in CLASSES})[r["class"]] += 1
    return out


def _table(title: str, counts_by: dict[str, dict[str, int]]) -> str:
    head = f"{title:18s}" + "".join(f"{k:>8s}" for k in CLASSES) + f"{'calls':>8s}"
    lines = [head, "-" * len(head)]
    total = {k: 0 for k in CLASSES}
    for name, c in counts_by.items():
        lines.append(f"{name:18s}" + "".join(f"{c.get(k, 0):8d}" for k in CLASSES) + f"{sum(c.values()):8d}")
        for k in CLASSES:
            total[k] += c.get(k, 0)
    lines.append(f"{'all':18s}" + "".join(f"{total[k]:8d}" for k in CLASSES) + f"{sum(total.values()):8d}")
    return "\n".join(lines)


def compare(before: dict, after: dict) -> str:
    """Before/after: calls per class for the same probe (the calls present in both runs),
    then per module, then how the classes moved."""
    key = lambda r: (r["function"], r["param"], r.get("index", r["value"]))  # noqa: E731 (same table: same index)
    b, a = {key(r): r for r in before["rows"]}, {key(r): r for r in after["rows"]}
    both = [k for k in b if k in a]
    out = [
        f"{len(both)} calls in both runs ({len(b) - len(both)} only before, {len(a) - len(both)} only after)",
        "",
        "class     before   after",
    ]
    for k in CLASSES:
        out.append(f"{k:8s} {sum(b[x]['class'] == k for x in both):7d} {sum(a[x]['class'] == k for x in both):7d}")
    for label, side in (("before", b), ("after", a)):
        out += ["", _table(f"{label}: module", _by_module([side[x] for x in both]))]
    moves = Counter((b[x]["class"], a[x]["class"]) for x in both)
    out += [
        "",
        "moves (before -> after): " + ", ".join(f"{p} -> {q}: {n}" for (p, q), n in sorted(moves.items()) if p != q),
    ]
    worse = [x for x in both if b[x]["class"] == "good" and a[x]["class"] != "good"]
    out += [f"good before, not after: {len(worse)}"] + [
        f"  {a[x]['class']:7s} {a[x]['function']}({a[x]['param']}={a[x]['value']}); before: {b[x]['detail'][:80]}"
        for x in worse
    ]
    return "\n".join(out)


def test_compare_counts_the_calls_both_probes_made():
    row = lambda f, i, c: {  # noqa: E731
        "function": f,
        "module": f.split(".")[0],
        "param": "p",
        "index": i,  # noqa: E731
        "value": str(i),
        "class": c,
        "detail": "",
    }
    before = {"rows": [row("m.f", 0, "silent"), row("m.f", 1, "good"), row("m.g", 0, "crash")]}
    after = {"rows": [row("m.f", 0, "good"), row("m.f", 1, "weak"), row("m.h", 0, "good")]}
    text = compare(before, after)
    assert text.startswith("2 calls in both runs (1 only before, 1 only after)")
    assert "silent         1       0" in text and "weak           0       1" in text
    assert "good -> weak: 1, silent -> good: 1" in text and "good before, not after: 1" in text


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="bad-input probe of the installed userdp")
    ap.add_argument("--report", action="store_true", help="also list every call that is not good")
    ap.add_argument("--json", metavar="FILE", help="write every call's class to FILE")
    ap.add_argument(
        "--compare",
        nargs=2,
        metavar=("BEFORE.json", "AFTER.json"),
        help="print the before/after table of two saved probes (runs nothing)",
    )
    a = ap.parse_args(argv)
    global _backstop_stream
    _backstop_stream = sys.stderr  # a script: the dump goes to the terminal
    if a.compare:
        with open(a.compare[0]) as f0, open(a.compare[1]) as f1:
            print(compare(json.load(f0), json.load(f1)))
        return 0
    out = probe()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    print(f"userdp at {out['userdp']}: {out['calls']} calls over {out['functions']} functions")
    print(f"skipped entries (not public here): {out['skipped_entries']}")
    if out["valid_call_fails"]:
        print(f"entries whose valid call fails here: {sorted(out['valid_call_fails'])}")
    print()
    print(_table("module", out["by_module"]))
    if a.report:
        print()
        for r in out["rows"]:
            if r["class"] != "good":
                print(f"{r['class']:7s} {r['function']}({r['param']}={r['value']}): {r['detail'][:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
