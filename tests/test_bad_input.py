"""Every public function refuses bad input clearly (issue 7: "A test that keeps it so").

The table (``tests/bad_input_table.py``) lists, for every public callable of the scoped
modules, a valid call and the bad values of each parameter. Each bad call must raise
``ValueError`` or ``TypeError`` whose message names the parameter (a whole word: the
parameter's name or one of the entry's aliases) within ``TIME_LIMIT`` seconds, unless the
entry lists the value as documented valid (then the call must succeed).

Scope: every module of ``userdp.reference`` (and the package itself), ``userdp.audits.bounds``,
``userdp.audits.harness`` and ``userdp.properties.adapter``: the functions that take user data
and parameters. Out of scope, with reasons: the property suites' ``prop_*`` functions (their
input is an adapter and an example their own strategy builds), the registry and the command
line (tested through ``main([...])`` in tests/audits/test_audit_cli.py), and
``audits.rejection``/``search``/``sampling`` (internal to ``audit``, fed by it).

A public callable with no entry (or exemption in ``EXEMPT``) fails
``test_every_public_callable_has_an_entry``: a new function cannot quietly skip the table.

Also a probe: ``python tests/test_bad_input.py --report [--json FILE]`` classifies every bad
call of the table as good (ValueError/TypeError naming the argument), weak (ValueError or
TypeError not naming it), crash (another exception), hang (time limit) or silent (returned
for a bad value), against whatever ``userdp`` is installed; entries absent from that install
are counted as skipped.
"""
from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
import signal
import sys
import time
import warnings
from collections import Counter

import pytest

import bad_input_table as T

TIME_LIMIT = 5.0          # seconds per call; every valid call of the table takes < 0.5 s

MODULES = ["userdp.audits.bounds", "userdp.audits.harness", "userdp.properties.adapter"]

# Public names that are not functions of user input, with the reason.
EXEMPT = {
    "erm.Minimiser": "a result record returned by erm.minimise, never built from user input",
    "epasto2020_gwa.OptimalC": "a result record returned by optimal_C",
    "neighbours.NeighbourPair": "a record the relations build; the audit only reads it",
    "harness.AuditResult": "a result record returned by audit",
    "harness.Witness": "a result record inside AuditResult",
    "harness.MechanismError": "an exception class",
    "adapter.Finding": "a result record returned by check_property",
    "adapter.StageMissing": "an exception class",
}


def _modules():
    import userdp.reference as R
    names = ["userdp.reference"] + [f"userdp.reference.{m.name}" for m in pkgutil.iter_modules(R.__path__)
                                    if not m.name.startswith("_")]
    return [importlib.import_module(n) for n in names + MODULES]


def _short(module) -> str:
    return module.__name__.rsplit(".", 1)[-1]


def _takes_arguments(func) -> bool:
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return True
    return any(p.name not in ("self", "cls") for p in params)


def _public_methods(cls):
    attrs = {}
    for klass in reversed(cls.__mro__):                  # inherited methods too (userdp classes only)
        if klass.__module__.startswith("userdp"):
            attrs.update(vars(klass))
    for name, attr in attrs.items():
        if name.startswith("_"):
            continue
        func = attr.__func__ if isinstance(attr, (classmethod, staticmethod)) else attr
        if inspect.isfunction(func) and _takes_arguments(func):
            yield name


def required_names() -> dict[str, set[str]]:
    """{required entry: names that satisfy it}. A class's method is satisfied by an entry for
    the class or for any module-level instance of it (e.g. neighbours.REPLACE_USER.neighbour)."""
    need: dict[str, set[str]] = {}
    for mod in _modules():
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
    return need


# ------------------------------------------------------------------------------ one call
class _Timeout(BaseException):
    """Raised by SIGALRM; a BaseException so that ``except Exception`` in the code cannot eat it."""


def _alarm(signum, frame):
    raise _Timeout()


def classify(entry, param: str, value, expect_ok: bool = False) -> tuple[str, str]:
    """(class, detail) of one call: good / weak / crash / hang / silent, or ok / fails for a valid one."""
    try:
        kwargs = entry.valid()
    except Exception as exc:                              # the table's own valid arguments failed
        return "crash", f"valid() raised {type(exc).__name__}: {exc}"
    if param is not None:
        kwargs[param] = value
    old = signal.signal(signal.SIGALRM, _alarm)
    # fires again every 0.5 s until cleared: an alarm raised inside a gc callback is ignored
    # by the interpreter ("Exception ignored in ..."), so one shot could miss a real hang
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT, 0.5)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")                # a warning is not an answer
            entry.call(**kwargs)
    except _Timeout:
        return "hang", f"no answer within {TIME_LIMIT} s"
    except (ValueError, TypeError) as exc:
        if expect_ok:
            return "fails", f"{type(exc).__name__}: {exc}"
        names = (param,) + tuple(entry.alias.get(param, ()))
        msg = str(exc)
        if any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", msg) for n in names):
            return "good", msg
        return "weak", f"{type(exc).__name__} does not name {param!r}: {msg}"
    except Exception as exc:                              # noqa: BLE001 - classified, not hidden
        return ("fails" if expect_ok else "crash"), f"{type(exc).__name__}: {exc}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
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
    assert not missing, f"public callables without a bad-input entry (add one to tests/bad_input_table.py): {missing}"


def test_every_entry_names_a_public_callable_and_legacy_ones_are_gone():
    public = set().union(*required_names().values())
    stale = [e.name for e in CURRENT if e.name not in public]
    assert not stale, f"entries for names that are not public (mark legacy=True if they were): {stale}"
    back = [e.name for e in T.TABLE if e.legacy and e.name in public]
    assert not back, f"legacy entries that are public again: {back}"


def test_table_names_are_unique_and_every_entry_has_bad_values():
    names = Counter(e.name for e in T.TABLE)
    assert [n for n, k in names.items() if k > 1] == []
    no_args = {"reference.allow_large_epsilon"}                  # takes no argument at all
    assert [e.name for e in CURRENT if not e.bad and e.name not in no_args] == []


@pytest.mark.parametrize("entry", CURRENT, ids=[e.name for e in CURRENT])
def test_bad_input_is_refused_naming_the_argument(entry):
    failures = entry_failures(entry)
    assert not failures, f"{entry.name}: {len(failures)} call(s) not refused as required:\n  " + "\n  ".join(failures)


def _silent(epsilon):
    return 1.0 / epsilon if epsilon == epsilon else 0.0         # NaN slips through


def _crash(epsilon):
    return {}["epsilon"]                                        # KeyError, not a refusal


def _weak(epsilon):
    raise ValueError("bad value")                               # does not name the argument


def _hang(epsilon):
    while True:                                                 # never returns
        pass


def _good(epsilon):
    raise ValueError(f"epsilon must be finite, got {epsilon!r}")


@pytest.mark.parametrize("func,want", [(_silent, "silent"), (_crash, "crash"), (_weak, "weak"), (_hang, "hang"),
                                       (_good, "good")])
def test_the_grader_classes_planted_input_checks(func, want, monkeypatch):
    # Planted bugs of input checking itself: the grader must tell each failure class apart.
    monkeypatch.setattr(sys.modules[__name__], "TIME_LIMIT", 0.3)
    e = T.Entry("planted." + want, func, lambda: dict(epsilon=1.0), {"epsilon": [float("nan")]})
    assert classify(e, "epsilon", float("nan"))[0] == want


# --------------------------------------------------------------------------------- probe
def probe() -> dict:
    """Classify every bad call of the table against the installed userdp."""
    rows, skipped = [], []
    names = set().union(*required_names().values())
    for e in T.TABLE:
        if e.name not in names:
            skipped.append(e.name)
            continue
        for param, values in e.bad.items():
            for v in values:
                t0 = time.perf_counter()
                cls, detail = classify(e, param, v)
                rows.append({"function": e.name, "param": param, "value": repr(v)[:60], "class": cls,
                             "detail": detail[:300], "seconds": round(time.perf_counter() - t0, 3)})
    counts = Counter(r["class"] for r in rows)
    return {"calls": len(rows), "functions": len({r["function"] for r in rows}), "counts": dict(counts),
            "skipped_entries": skipped, "rows": rows}


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="bad-input probe of the installed userdp")
    ap.add_argument("--report", action="store_true", help="print the class counts and the non-good calls")
    ap.add_argument("--json", metavar="FILE", help="write every call's class to FILE")
    a = ap.parse_args(argv)
    out = probe()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    print(f"{out['calls']} calls over {out['functions']} functions; skipped entries: {out['skipped_entries']}")
    for k in ("good", "weak", "crash", "hang", "silent"):
        print(f"  {k:7s} {out['counts'].get(k, 0)}")
    if a.report:
        for r in out["rows"]:
            if r["class"] != "good":
                print(f"{r['class']:7s} {r['function']}({r['param']}={r['value']}): {r['detail'][:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
