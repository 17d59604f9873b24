"""The implementation under validation: a ``Target`` with stages and a release.

``validate`` reads a target through three things only: ``name``, ``adapter`` (its noise-free
stages, taking the REFERENCE's parameter names, for the property suite and the stage
comparison) and ``release(dataset, rng, size, params)`` (``size`` releases as one batch). A
process-backed target (a program that is not Python) can implement the same three; this
module builds the Python one, ``PythonTarget``, from ``module:object``:

- a plain function, in either call shape, read from its signature (``call_shape``):
  **batched** if it has a parameter named ``size`` (called as ``f(dataset, rng=, size=,
  **params)``: ``size`` independent releases), else **one release per call** (called as
  ``f(dataset, rng, **params)``, once per release). ``rng`` is passed by keyword when the
  function has a parameter of that name, else as the second positional argument;
- an ``Adapter`` (``userdp.properties.adapter``) with any of the stages; its ``mechanism``
  stage takes either shape.

Parameter names: the target is called with the reference's keywords renamed by the
adapter's ``param_map`` and ``--param-map`` (``{reference name: yours}``). ``check_call``
binds them against the signature before anything runs, and a mismatch is a usage error
naming what did not bind and which renaming would fix it.

Errors: whatever the target raises (``SystemExit`` included) is a ``UserCodeError`` naming
the function, the call and what it raised (exit status 3).

Seeds, before the first release is graded (``PythonTarget.check_seeds``, run by ``release`` on the
first case that gives releases varying within a call, at most ``SEED_CASES`` cases): two calls with
generators from one seed, ``REPRO_DRAWS`` releases each, and, when they agree, ``SEED_TRIES`` calls
with other seeds (``engine/parallel.py``, ``check_reproducible``). A target whose calls all repeat
one varying set of releases ignores its generator: ``UserCodeError`` (exit 3), whatever a check would
have said of its copies (a Python target that uses its generator is flagged with probability at most
``SEED_FALSE_ALARM``, 3.2e-7). Different releases from one seed are the documented warning
(``reproducible`` False: the target draws from a generator of its own, its releases are still
independent), except for a program over the process protocol, which must reproduce them
(``parallel.SEEDED``): exit 3.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from userdp.properties.adapter import Adapter

from userdp.audits.engine import watch
from userdp.audits.engine.parallel import REPRO_DRAWS, SEED_FALSE_ALARM, SEED_TRIES, SEEDED
from userdp.audits.engine.usercode import UserCodeError, import_user_module

from userdp.audits.validation import BadType, BadValue, ValidationSpec

__all__ = [
    "BATCHED",
    "ONE",
    "SEED_CASES",
    "SEED_ENTROPY",
    "PythonTarget",
    "SeedError",
    "load_target",
    "call_shape",
    "parse_param_map",
    "check_call",
    "signature_text",
    "template_text",
]

BATCHED, ONE = "batched", "one release per call"


class SeedError(UserCodeError):
    """TARGET broke the seed contract (``PythonTarget.check_seeds``): exit 3 before any verdict. A
    check that reads TARGET's exceptions as outcomes (``check_behaviour``) lets this one through."""


SEED_CASES = 3  # cases tried for releases that vary within a call (the seed check, module docstring)
SEED_ENTROPY = 0x5EED  # the seed check's own seeds: the caller's generator is not drawn from


def call_shape(fn) -> str:
    """BATCHED if ``fn`` has a parameter named ``size``, else ONE (any function can be called once
    per release; one that cannot be read is called that way too)."""
    try:
        return BATCHED if "size" in inspect.signature(fn).parameters else ONE
    except (TypeError, ValueError):
        return ONE


def _rng_by_keyword(fn) -> bool:
    try:
        ps = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "rng" in ps or any(p.kind == p.VAR_KEYWORD for p in ps.values())


def _who(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__


def _user_error(who: str, exc: BaseException, where: str) -> UserCodeError:
    if isinstance(exc, SystemExit):
        what = f"called sys.exit({exc.code!r})"
    else:
        what = f"raised {type(exc).__name__}: {exc}"
    return UserCodeError(f"{who} {what} ({where})")


@dataclass
class PythonTarget:
    """A Python implementation: its stages (``adapter``, reference names) and its release."""

    name: str  # as given: module:object
    adapter: Adapter  # stages renamed to the reference's keywords; mechanism kept raw below
    mechanism: Callable | None  # the raw release function (the target's own names)
    param_map: Mapping[str, str] = field(default_factory=dict)
    plain: bool = False  # a plain function (no Adapter)
    program: Any = None  # the protocol.ProcessTarget of a --command target (report snippets start it), else None

    def __post_init__(self):
        self.adapter = _watched_adapter(self.adapter, self.name)
        self.reproducible = None  # check_seeds: one seed gave the same varying releases (None: not known)
        self._seed_cases = 0
        f = self.mechanism
        self.seeded = bool(getattr(f, SEEDED, False) or getattr(getattr(f, "__self__", None), SEEDED, False))
        self.shape = None if self.mechanism is None else call_shape(self.mechanism)
        self._rng_kw = self.mechanism is not None and _rng_by_keyword(self.mechanism)
        self.who = self.name if self.mechanism is None else f"{self.name} ({_who(self.mechanism)})"

    def stage_names(self) -> tuple[str, ...]:
        return tuple(s for s in self.adapter.stages() if s != "mechanism")

    def mapped(self, params: Mapping) -> dict:
        return {self.param_map.get(k, k): v for k, v in params.items()}

    def release(self, dataset, rng, size: int, params: Mapping, where: str = "") -> Any:
        """``size`` releases: the batched function's own output, or (one release per call) the
        list of ``size`` outputs. The first calls check the seeds first (``check_seeds``)."""
        if self.reproducible is None and self._seed_cases < SEED_CASES:
            self.check_seeds(dataset, params, where)
        return self._release(dataset, rng, size, params, where)

    def check_seeds(self, dataset, params: Mapping, where: str = "") -> None:
        """One seed twice, then other seeds (module docstring); sets ``reproducible`` (True, False,
        or None when the releases do not vary within a call) and raises ``UserCodeError`` for a
        target that ignores its generator, or a program that does not reproduce its releases."""
        self._seed_cases += 1
        root = np.random.SeedSequence(SEED_ENTROPY)
        first = _keys(self._release(dataset, np.random.default_rng(root), REPRO_DRAWS, params, where), self.shape)
        again = _keys(self._release(dataset, np.random.default_rng(root), REPRO_DRAWS, params, where), self.shape)
        if first is None or again is None:
            return  # not releases as the checks read them: they say so
        if first != again:
            self.reproducible = False
            if self.seeded:
                raise SeedError(
                    f"TARGET {self.who} broke its seed: two calls with one seed ({REPRO_DRAWS} releases "
                    f"each, {where or 'its first case'}) returned different releases, where the same seed "
                    "must give the same releases (docs/protocol.md, release requests)"
                )
            return
        if len(set(first)) == 1:
            return  # nothing varies within a call: no evidence either way (a later case may tell)
        for other in root.spawn(SEED_TRIES):
            out = _keys(self._release(dataset, np.random.default_rng(other), REPRO_DRAWS, params, where), self.shape)
            if out != first:
                self.reproducible = True
                return
        raise SeedError(
            f"TARGET {self.who} ignores the seed it is given: calls with generators from {SEED_TRIES + 1} "
            f"different seeds returned the same {REPRO_DRAWS} varying releases ({where or 'its first case'}), "
            "so it replays one stream and its releases are not independent draws: no check of them can "
            "be valid. Draw every random number from the rng passed in (a program: from the request's "
            f"seed). A target that uses it repeats them with probability at most {SEED_FALSE_ALARM:.2g}"
        )

    def _release(self, dataset, rng, size: int, params: Mapping, where: str = "") -> Any:
        kw = self.mapped(params)
        f = self.mechanism
        label = f"your mechanism {self.who}" + (f" ({where})" if where else "")
        if self.shape == BATCHED:
            with watch.region(label):  # one call (--timeout, --deadline: audits/engine/watch.py)
                try:
                    return f(dataset, rng=rng, size=size, **kw)
                except (Exception, SystemExit) as exc:
                    raise _user_error(
                        f"TARGET {self.who}", exc, f"size={size}" + (f", {where}" if where else "")
                    ) from exc
        out, i = [], 0
        with watch.region(label, calls=size) as slot:  # each call recorded, as the audit's loops do
            ints, floats = slot.ints, slot.floats
            try:
                for i in range(size):
                    ints[watch.INDEX], floats[watch.CALL_T] = i, time.monotonic()
                    out.append(f(dataset, rng=rng, **kw) if self._rng_kw else f(dataset, rng, **kw))
            except (Exception, SystemExit) as exc:
                raise _user_error(f"TARGET {self.who}", exc, f"call {i + 1}" + (f", {where}" if where else "")) from exc
        return out


def _keys(out, shape: str) -> tuple | None:
    """The releases of one call as a tuple of bytes, one per release (compared exactly: NaN equals
    NaN), or None when they are not read as a sequence of releases."""
    try:
        if shape == ONE:
            items = list(out)
        elif isinstance(out, tuple):
            parts = [np.asarray(p) for p in out]
            items = list(zip(*parts)) if parts and all(p.ndim >= 1 for p in parts) else None
        elif isinstance(out, np.ma.MaskedArray):
            items = list(zip(np.ma.getdata(out), np.ma.getmaskarray(out)))
        else:
            a = np.asarray(out)
            items = list(a) if a.ndim >= 1 else None
        return None if not items else tuple(_key(x) for x in items)
    except Exception:  # whatever the target returned: the checks name it
        return None


def _key(x) -> bytes:
    if x is None:
        return b"None"
    if isinstance(x, (tuple, list)):
        return b"(" + b",".join(_key(p) for p in x) + b")"
    if isinstance(x, Mapping):
        return b"{" + b",".join(repr(k).encode() + b":" + _key(v) for k, v in sorted(x.items(), key=repr)) + b"}"
    a = np.asarray(x)
    if a.dtype.kind in "biufcUS":
        return f"{a.dtype.str}{a.shape}".encode() + a.tobytes()
    return repr(x).encode()


def _watched(label: str, f: Callable) -> Callable:
    """``f`` whose every call is a watched region of user code: the supervisor names it when it
    is slow (--deadline) and ends the run when it hangs (--timeout; audits/engine/watch.py)."""

    @functools.wraps(f)
    def call(*args, **kwargs):
        with watch.region(label):
            return f(*args, **kwargs)

    return call


def _watched_adapter(adapter: Adapter, who: str) -> Adapter:
    """``adapter`` with every noise-free stage watched (the release is watched in ``release``)."""
    stages = {
        s: _watched(f"your stage {s} of {who}", getattr(adapter, s)) for s in adapter.stages() if s != "mechanism"
    }
    return dataclasses.replace(adapter, **stages) if stages else adapter


def parse_param_map(param_map) -> dict:
    """``["epsilon=eps", "T=cap"]`` (``--param-map``) -> {"epsilon": "eps", "T": "cap"} (reference name: yours)."""
    if param_map is None:
        return {}
    if isinstance(param_map, (str, bytes)) or not hasattr(param_map, "__iter__"):
        raise BadType(f"param_map (--param-map) must be a list of REFERENCE=YOURS, got {type(param_map).__name__}")
    out = {}
    for item in param_map:
        if not isinstance(item, str):
            raise BadType(f"param_map (--param-map) items must be str REFERENCE=YOURS, got {type(item).__name__}")
        ref, sep, yours = item.partition("=")
        ref, yours = ref.strip(), yours.strip()
        if not sep or not ref.isidentifier() or not yours.isidentifier():
            raise BadValue(
                f"param_map (--param-map) must look like REFERENCE=YOURS (two parameter names), got {item!r}"
            )
        if ref in out:
            raise BadValue(f"param_map (--param-map) names {ref!r} twice")
        out[ref] = yours
    if len(set(out.values())) != len(out):
        raise BadValue(f"param_map (--param-map) maps two reference names to one of yours: {out}")
    return out


def load_target(text: str, param_map: Mapping[str, str] | None = None) -> PythonTarget:
    """``module:object`` (an Adapter or a function) with the current directory on the import path."""
    if not isinstance(text, str):
        raise BadType(f"target must be a str module:object, got {type(text).__name__} {text!r:.80}")
    if param_map is not None and not isinstance(param_map, Mapping):
        raise BadType(f"param_map must be None or a mapping {{reference name: yours}}, got {type(param_map).__name__}")
    module, attr = import_user_module(
        text, "target is module:object (an Adapter or a mechanism function)", usage_error=BadValue
    )
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise BadValue(f"target {text!r}: module {module.__name__!r} has no {attr!r}")
        obj = getattr(obj, part)
    pm = dict(param_map or {})
    if isinstance(obj, Adapter):
        pm = {**obj.param_map, **pm}
        return PythonTarget(text, obj.renamed(pm), obj.mechanism, pm)
    if callable(obj) and not isinstance(obj, type):
        return PythonTarget(text, Adapter(text, mechanism=obj), obj, pm, plain=True)
    raise BadType(
        f"target {text!r} is a {type(obj).__name__}; expected an Adapter "
        "(userdp.properties.adapter) or a mechanism function"
    )


# ------------------------------------------------------------------ checking the call shape
def _suggest(missing: list[str], theirs: list[str]) -> list[str]:
    """--param-map suggestions: each reference name not accepted, matched to a close name of theirs."""
    out, free = [], [t for t in theirs]
    for ref in missing:
        close = difflib.get_close_matches(ref.lower(), [t.lower() for t in free], n=1, cutoff=0.5)
        hit = next((t for t in free if close and t.lower() == close[0]), None)
        if hit is None:
            hit = next(
                (t for t in free if t.lower().startswith(ref.lower()[:3]) or ref.lower().startswith(t.lower())), None
            )
        if hit is not None:
            out.append(f"{ref}={hit}")
            free.remove(hit)
    rest = [r for r in missing if not any(o.startswith(r + "=") for o in out)]
    if rest and len(rest) == len(free):  # the same number left over: pair them in order
        out += [f"{r}={t}" for r, t in zip(rest, free)]
    return out


def check_call(
    fn,
    spec: ValidationSpec,
    params: Mapping,
    param_map: Mapping,
    who: str,
    stage: str = "mechanism",
    takes_dataset: bool = True,
) -> None:
    """Bind ``fn`` to the call ``validate`` will make; BadValue (exit 2) saying what does not fit."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # a builtin: the call itself will tell
    kw = {param_map.get(k, k): v for k, v in params.items()}
    args = ("dataset",) if takes_dataset else ()
    try:
        if stage == "mechanism":
            if call_shape(fn) == BATCHED:
                sig.bind(None, rng=None, size=1, **kw)
            elif _rng_by_keyword(fn):
                sig.bind(None, rng=None, **kw)
            else:
                sig.bind(None, None, **kw)
        else:
            sig.bind(*args, **kw)
    except TypeError as exc:
        theirs = [
            p.name
            for p in sig.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            and p.name not in ("dataset", "rng", "size")
            and p.name not in kw
        ]
        var_kw = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
        missing = [r for r in params if not var_kw and param_map.get(r, r) not in sig.parameters]
        hint = _suggest(missing, theirs)
        fix = f"; if yours are named differently, rename them: --param-map {' --param-map '.join(hint)}" if hint else ""
        want = ", ".join(params)
        shapes = (
            f"{stage}(dataset, rng, *, {want}) (one release per call) or {stage}(dataset, rng, size, *, "
            f"{want}) (batched)"
            if stage == "mechanism"
            else f"{stage}({'dataset, ' if takes_dataset else ''}*, {want})"
        )
        raise BadValue(
            f"target {who}: its {stage}{sig} cannot be called as {shapes} for {spec.algorithm}: "
            f"{exc}{fix}. `userdp validate {spec.algorithm} --signature` lists the call shapes and "
            "every parameter"
        ) from None


# ------------------------------------------------------------------ --signature and --template
def signature_text(spec: ValidationSpec) -> str:
    """What ``userdp validate ALGORITHM --signature`` prints."""
    names = ", ".join(spec.param_names)
    lines = [f"userdp validate {spec.algorithm}: how to call your implementation", ""]
    if spec.why:
        lines += [f"  {spec.why}", ""]
    lines += [
        "accepted call shapes (TARGET is module:object):",
        f"  1. one release per call:  f(dataset, rng, *, {names})",
        f"       returns one release: {spec.release}",
        f"  2. batched:               f(dataset, rng, size, *, {names})",
        "       returns `size` independent releases, stacked on a first axis of length size",
        "       (a parameter named `size` is how validate tells the two apart)",
        f"  3. an Adapter (userdp.properties.adapter, or the suite's ADAPTER in {spec.suite}) with any of the stages:",
    ]
    for stage, ps in spec.stage_params.items():
        args = ("dataset, " if stage in spec.takes_dataset else "") + "*, " + ", ".join(ps)
        lines.append(f"       {stage}({args})")
    lines += [
        "       mechanism: shape 1 or 2 above",
        "",
        "parameters (passed by keyword; if yours have other names: --param-map REFERENCE=YOURS, or "
        "Adapter(..., param_map={...})):",
    ]
    width = max([len(p.name) for p in spec.parameters] + [4])
    lines += [f"  {p.name:<{width}}  {p.meaning}" for p in spec.parameters]
    lines += [
        "",
        "dataset: a userdp.reference.data.UserDataset (immutable; build one with "
        "UserDataset(values, user_ids, labels=..., epsilons=..., task_ids=...)); this algorithm reads:",
    ]
    w2 = max([len(k) for k in spec.reads] + [4])
    lines += [f"  {k:<{w2}}  {v}" for k, v in spec.reads.items()]
    if spec.relation:
        lines += ["", f"neighbouring relation and claim: {spec.relation}"]
    refusals = list(spec.refusals())
    if refusals:
        lines += [
            "",
            "inputs the reference refuses (--inputs refuse | clip | trust says what yours does; default: "
            "inferred per case):",
        ]
        lines += [f"  [{r.kind}] {r.case.description}: requires {r.requires}" for r in refusals]
        if spec.project is not None:
            lines.append(
                f"  --inputs clip: out-of-domain records are projected onto the domain "
                f"({(spec.project.__doc__ or '').strip().splitlines()[0] if spec.project.__doc__ else ''})"
            )
    return "\n".join(lines)


def template_text(spec: ValidationSpec) -> str:
    """A runnable module skeleton (``--template``): one release per call, calling the reference
    until you replace its body."""
    names = ", ".join(spec.param_names)
    doc = "\n".join(f"        {p.name}: {p.meaning}" for p in spec.parameters)
    reads = ", ".join(f"dataset.{k}" for k in spec.reads)
    case = spec.cases()[0]
    args = ", ".join(f"{k}={_literal(v)}" for k, v in case.params.items())
    return f'''"""My implementation of {spec.algorithm}, checked with

    userdp validate {spec.algorithm} my_module:release

(skeleton from `userdp validate {spec.algorithm} --template`; rename the file and the function as you like)."""
import numpy as np

from userdp.reference.data import UserDataset


def release(dataset: UserDataset, rng: np.random.Generator, *, {names}):
    """One release per call; draw every random number from `rng`.

    Reads {reads}. Parameters:
{doc}
    Returns {spec.release}.
    """
    # Replace this body with your implementation. As generated it returns the reference's
    # release, so that `userdp validate` passes on the skeleton as it stands.
    from userdp.audits.validation import get
    return get({spec.algorithm!r}).reference_one(dataset, rng, dict({", ".join(f"{p}={p}" for p in spec.param_names)}))


if __name__ == "__main__":
    from userdp.audits.validation import get
    dataset = get({spec.algorithm!r}).cases()[0].dataset     # {case.description}
    print(release(dataset, np.random.default_rng(0), {args}))
'''


def _literal(v) -> str:
    import numpy as np

    if isinstance(v, np.ndarray):
        return f"np.array({v.tolist()!r})"
    return repr(v)
