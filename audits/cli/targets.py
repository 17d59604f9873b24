"""What ``userdp audit`` audits: a registry entry or a user's ``module:callable`` factory.

Each is turned into a ``Target`` (mechanism, pairs, claim, parameters, expected verdict),
and every failure is classified by its ORIGIN, because the exit status depends on it
(``cli.py``): bad input -> ``UsageError`` (exit 2); the user's own module, factory, pairs or
mechanism raised (any ``BaseException``, ``SystemExit`` included: ``user_code``) ->
``UserCodeError`` (exit 3); anything else that escapes is an internal error of userdp
(exit 3). A pair whose sides are of two kinds, or identical, is bad input (``_check_sides``).
The mechanism is wrapped in ``UserMechanism``: it keeps the user's function's name for the
messages and pickles as the recipe that rebuilds it in a worker process. A registry entry's mechanism is ours: when
it refuses a value
the user gave with ``--param``, that is bad input (2); when it fails on its defaults, a bug (3).
"""

from __future__ import annotations

import inspect
import itertools
import json
import os
import sys
from dataclasses import dataclass

import numpy as np

from userdp.reference.claims import ApproxDP, Claims, PersonalizedDP, PureDP, RenyiDP
from userdp.reference.data import EmptyDataset, UserDataset
from userdp.reference.neighbours import RELATIONS

from userdp.audits.engine.usercode import UsageError, UserCodeError, import_user_module, user_code
from userdp.audits.engine.harness import IncompleteAudit, audit, efficiency_report
from userdp.audits.engine.parallel import (
    DuplicateStreamsError,
    SchedulerError,
    VaryingOutputError,
    batched,
    calling_convention,
    fingerprint,
)
from userdp.audits.engine.registry import AuditSetup, get
from userdp.audits.engine.report import fmt
from userdp.audits.engine.ceiling import FIT_DRAWS, FIT_MIN, estimated_ceiling, fit_noise
from userdp.audits.engine.sampling import AuditPair, MechanismError, UserCallError, draw, infer_kind

__all__ = [
    "UsageError",
    "UserCodeError",
    "CLAIM_FORMS",
    "Target",
    "UserMechanism",
    "parse_params",
    "parse_claim",
    "check_params",
    "registry_target",
    "external_target",
    "call_target",
    "check_relation_name",
    "check_pairs",
    "run_audit",
    "run_efficiency",
    "estimated_efficiency",
    "user_code",
]

DEFAULT_SAMPLES = 200_000  # external mechanisms and entries without their own default
MAX_PAIRS = 100  # the harness's default max_pairs
CLAIM_FORMS = (
    "pure:epsilon=1",
    "approx:epsilon=1,delta=1e-6",
    "renyi:alpha=2,rho=0.5,delta=1e-6",
    "personalized:epsilons=[1,2,0.5]",
)
_CLAIMS = {"pure": PureDP, "approx": ApproxDP, "renyi": RenyiDP, "personalized": PersonalizedDP}


# ------------------------------------------------------------------ the mechanism, and its recipe
@dataclass(frozen=True)
class _Recipe:
    """How a worker process rebuilds a target's mechanism: import ``spec`` (module:callable)
    from ``path`` and call it, as the command line did (``kind``: "factory", "call" or
    "registry"). Plain data, so it pickles where the mechanism (often a closure) does not."""

    kind: str
    spec: str
    params: dict
    path: str

    def build(self):
        if self.path not in sys.path:
            sys.path.insert(0, self.path)
        if self.kind == "registry":
            m = registry_target(self.spec, self.params).mechanism
            return m.mechanism if isinstance(m, UserMechanism) else m
        factory = _load_factory(self.spec)
        if self.kind == "call":
            return _CallWith(factory, self.params)
        made = factory(**self.params)
        return made.mechanism if isinstance(made, AuditSetup) else made[0]


def _rebuild(recipe: _Recipe, module: str | None, qualname: str | None) -> "UserMechanism":
    return UserMechanism(recipe.build(), recipe, module, qualname)


class UserMechanism:
    """A target's mechanism: called as itself, named as the user's function (``module`` and
    ``qualname``, default the mechanism's own), and pickled as the recipe that rebuilds it
    (``parallel.py`` sends it to worker processes started by a fork server, which a closure
    could not reach)."""

    def __init__(self, mechanism, recipe: _Recipe, module: str | None = None, qualname: str | None = None):
        self.mechanism, self.recipe = mechanism, recipe
        self.__signature__ = inspect.signature(mechanism)
        self._named = (module, qualname)
        self.__qualname__ = (
            qualname
            or getattr(mechanism, "__qualname__", None)
            or getattr(mechanism, "__name__", None)
            or type(mechanism).__name__
        )
        self.__module__ = module or getattr(mechanism, "__module__", None) or type(mechanism).__module__

    def __call__(self, *args, **kwargs):
        return self.mechanism(*args, **kwargs)

    def __reduce__(self):
        return _rebuild, (self.recipe, *self._named)

    def __repr__(self) -> str:
        return f"{self.__module__}.{self.__qualname__}"


class _CallWith:
    """``--mechanism``: ``f(dataset, **kwargs)``, one release per call."""

    def __init__(self, f, kwargs: dict):
        self.f, self.kwargs = f, kwargs

    def __call__(self, dataset):
        return self.f(dataset, **self.kwargs)


def _wrap(mechanism, recipe: _Recipe):
    """``UserMechanism`` when the signature can be read (else the mechanism, refused later)."""
    try:
        return UserMechanism(mechanism, recipe)
    except (TypeError, ValueError):
        return mechanism


# ------------------------------------------------------------------ parameters and claims
def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_params(items: list[str], flag: str = "--param") -> dict:
    """``["k=v", ...]`` (``--param``) to a dict; each value read as JSON where it parses, else as text."""
    out = {}
    for item in items:
        key, sep, val = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{flag} must look like key=value, got {item!r}")
        out[key.strip()] = _value(val.strip())
    return out


def parse_claim(spec: str):
    """'pure:epsilon=1' -> PureDP(1); the accepted forms are CLAIM_FORMS."""
    forms = "; accepted forms: " + ", ".join(CLAIM_FORMS)
    kind, sep, rest = spec.partition(":")
    if kind not in _CLAIMS or not sep:
        raise UsageError(f"--claim {spec!r}: KIND must be one of {sorted(_CLAIMS)}, followed by ':'{forms}")
    parts = [s for s in _split_commas(rest) if s]
    try:
        return _CLAIMS[kind](**parse_params(parts, "--claim"))
    except UsageError as exc:
        raise UsageError(f"{exc}{forms}") from None
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--claim {spec!r}: {exc}{forms}") from None


def _split_commas(text: str) -> list[str]:
    """Split at commas outside [...] (personalized:epsilons=[1,2,0.5])."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def _kind_of_default(default) -> str | None:
    """What a value must be to replace ``default``: 'a number', 'an integer', ... or None (anything)."""
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, int):
        return "an integer"
    if isinstance(default, float):
        return "a number"
    if default is None:
        return "a number or null"
    if isinstance(default, str):
        return "a string"
    return None


def _fits(value, default) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return number
    if default is None:
        return value is None or number
    if isinstance(default, str):
        return isinstance(value, str)
    return True


def check_params(params: dict, defaults: dict, where: str, *, closed: bool = True) -> dict:
    """Each --param K=V against its default's type; unknown keys refused when ``closed``."""
    unknown = sorted(set(params) - set(defaults))
    if unknown and closed:
        known = ", ".join(f"{k} (default {defaults[k]!r})" for k in defaults) or "none"
        raise UsageError(f"{where}: unknown parameter(s) {unknown}; its parameters: {known}")
    out = {}
    for k, v in params.items():
        d = defaults.get(k, inspect.Parameter.empty)
        if d is not inspect.Parameter.empty and not _fits(v, d):
            raise UsageError(
                f"--param {k}={json.dumps(v) if not isinstance(v, str) else v}: {k} must be "
                f"{_kind_of_default(d)} (its default is {d!r}), got {v!r}"
            )
        out[k] = float(v) if isinstance(d, float) and not isinstance(v, bool) else v
    return out


# ------------------------------------------------------------------ what is audited
@dataclass
class Target:
    name: str
    kind: str  # "reference" | "control" | "planted" | "external"
    relation: str
    mechanism: object  # (dataset, rng, size) -> ndarray
    pairs: list
    claim: object
    output: str | None  # None: inferred from the outputs (harness.audit)
    samples: int
    params: dict  # the parameters in force
    overrides: dict  # what --param changed
    expected: str | None  # None: external, or --param changed a default
    noise: object = None  # the setup's ceiling.NoiseModel, if it declares one
    relation_check: str | None = None  # what --relation checked of the pairs (external targets)


def registry_target(entry, raw: dict, samples: int | None = None) -> Target:
    """A registry ``Entry`` (or its name) with ``--param`` values ``raw``, checked against its defaults."""
    if isinstance(entry, str):
        try:
            entry = get(entry)
        except KeyError as exc:
            raise UsageError(exc.args[0]) from None
    params = check_params(raw, dict(entry.params), entry.name)
    changed = {k: v for k, v in params.items() if v != entry.params[k]}
    try:
        setup = entry.setup(**params)
    except (ValueError, TypeError) as exc:
        if not changed:
            raise  # our own defaults refused: a bug (exit 3)
        raise UsageError(f"{entry.name} refused {_param_text(changed)}: {exc}") from None
    mechanism = _wrap(setup.mechanism, _Recipe("registry", entry.name, dict(raw), os.getcwd()))
    return Target(
        entry.name,
        entry.kind,
        entry.relation,
        mechanism,
        setup.pairs,
        setup.claim,
        setup.output,
        samples or entry.samples or DEFAULT_SAMPLES,
        {**entry.params, **params},
        changed,
        None if changed else entry.expected,
        setup.noise,
    )


def _param_text(params: dict) -> str:
    return " ".join(f"--param {k}={json.dumps(v)}" for k, v in params.items())


def external_target(
    name: str,
    raw: dict,
    *,
    claim: str | None = None,
    relation: str | None = None,
    output: str | None = None,
    samples: int | None = None,
) -> Target:
    """``module:callable`` called with the ``--param`` values ``raw``; ``claim`` is a --claim spec;
    ``relation`` a name of ``neighbours.RELATIONS`` (or None: "unspecified"), checked on the pairs."""
    given = parse_claim(claim) if claim else None  # input checks before any user code runs
    check_relation_name(relation)
    factory = _load_factory(name)
    params = _bind(factory, name, raw)
    made = user_code(f"your factory {name}", factory, **params)
    noise = None
    if isinstance(made, AuditSetup):
        the_claim = made.claim if given is None else given
        mechanism, pairs, output, noise = made.mechanism, made.pairs, output or made.output, made.noise
    elif isinstance(made, tuple) and len(made) == 2:
        if given is None:
            raise UsageError(
                f"{name} returned (mechanism, pairs): give the claim with --claim, one of: {', '.join(CLAIM_FORMS)}"
            )
        (mechanism, pairs), the_claim = made, given
    else:
        raise UsageError(f"{name} must return an AuditSetup or (mechanism, pairs), got {type(made).__name__}")
    try:
        calling_convention(mechanism)
    except TypeError as exc:
        raise UsageError(f"{name}: the {exc}") from None
    pairs = _external_pairs(pairs, name)
    checked = None if relation is None else check_pairs(relation, pairs)
    mechanism = _wrap(mechanism, _Recipe("factory", name, params, os.getcwd()))
    return Target(
        name,
        "external",
        relation or "unspecified",
        mechanism,
        pairs,
        the_claim,
        output,
        samples or DEFAULT_SAMPLES,
        params,
        params,
        None,
        noise,
        checked,
    )


def _json_arg(text: str, flag: str):
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{flag} must be JSON, got {text!r}: {exc}") from None


def _tuples(v):
    """JSON arrays as tuples: the libraries' parameters such as ``bounds=(0, 1)`` want tuples
    (diffprivlib refuses a list), and a tuple serves wherever a sequence is read."""
    return tuple(_tuples(x) for x in v) if isinstance(v, list) else v


def call_target(
    spec: str,
    kwargs: str | None,
    pairs: list,
    *,
    claim: str | None,
    relation: str | None = None,
    output: str | None = None,
    samples: int | None = None,
) -> Target:
    """A one-line audit of a library call: ``spec`` (module:callable) is called as
    ``f(dataset, **kwargs)``, one release per call (``--mechanism``, ``--kwargs`` a JSON object
    whose arrays become tuples, each ``--pair`` two JSON datasets), against the ``--claim`` spec (required). The call
    takes no generator, so it is looped in this process or over ``--workers``, and the audit's
    reproducibility check says whether ``--seed`` reproduces it (a library's own generator
    does not)."""
    if claim is None:
        raise UsageError(f"--mechanism {spec}: give the claim with --claim, one of: {', '.join(CLAIM_FORMS)}")
    the_claim = parse_claim(claim)  # input checks before any user code runs
    check_relation_name(relation)
    kw = {} if kwargs is None else _json_arg(kwargs, "--kwargs")
    if not isinstance(kw, dict):
        raise UsageError(f"--kwargs must be a JSON object (keyword arguments), got {type(kw).__name__}: {kwargs!r}")
    kw = {k: _tuples(v) for k, v in kw.items()}
    if not pairs:
        raise UsageError(f"--mechanism {spec}: give at least one --pair FIRST SECOND (two JSON datasets)")
    sides = [(_json_arg(a, "--pair"), _json_arg(b, "--pair"), f"--pair {a} {b}") for a, b in pairs]
    f = _load_factory(spec)
    mod, _, attr = spec.partition(":")
    mechanism = UserMechanism(_CallWith(f, kw), _Recipe("call", spec, kw, os.getcwd()), mod, attr)
    the_pairs = _external_pairs(sides, spec)
    checked = None if relation is None else check_pairs(relation, the_pairs)
    return Target(
        spec,
        "external",
        relation or "unspecified",
        mechanism,
        the_pairs,
        the_claim,
        output,
        samples or DEFAULT_SAMPLES,
        kw,
        kw,
        None,
        None,
        checked,
    )


def check_relation_name(relation) -> None:
    """``--relation``: None or a known relation; UsageError listing the known ones otherwise."""
    if relation is not None and relation not in RELATIONS:
        raise UsageError(f"--relation {relation!r} is not a known relation; known: {', '.join(sorted(RELATIONS))}")


def _datasets(pair) -> bool:
    return all(isinstance(x, (UserDataset, EmptyDataset)) for x in (pair.first, pair.second))


def _sequence(x):
    """A raw side as an array of numbers (a scalar is one record), or None if it is not one."""
    try:
        a = np.asarray(x)
    except Exception:
        return None
    return np.atleast_1d(a) if a.dtype.kind in "biuf" and a.ndim <= 2 else None


def check_pairs(relation: str, pairs: list[AuditPair]) -> str:
    """Refuse (UsageError, naming the pair) a pair that is not a neighbour under ``relation``.

    ``UserDataset`` pairs (``data.EMPTY`` on one side of an add/remove pair) are checked with
    the relation's ``is_neighbour``; raw sequences of numbers with ``changed_positions`` under
    the record relations (add/remove one record: the multisets differ by one element; replace
    one record: same length, one position differs). Other pairs are not checked. Returns one
    line saying what was checked."""
    rel = RELATIONS[relation]
    checked, unchecked = 0, []
    for p in pairs:
        if _datasets(p):
            test = rel.changed_units
            a, b = p.first, p.second
            if (isinstance(a, EmptyDataset) or isinstance(b, EmptyDataset)) and not getattr(
                rel, "accepts_empty", False
            ):
                raise UsageError(
                    f"--relation {relation}: {p.description!r} is not a pair of neighbours: an empty "
                    "dataset has a neighbour only under add-remove-user and add-remove-record"
                )
        else:
            a, b = _sequence(p.first), _sequence(p.second)
            test = getattr(rel, "changed_positions", None)
            if test is None or a is None or b is None:
                unchecked.append(p.index)
                continue
        try:
            units = test(a, b)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"--relation {relation}: {p.description!r} is not a pair of neighbours: {exc}") from None
        if len(units) != 1:
            raise UsageError(
                f"--relation {relation}: {p.description!r} is not a pair of neighbours: it differs in "
                f"{len(units)} {getattr(rel, 'unit_kind', 'unit')}s {sorted(units)[:5]}, not one"
            )
        checked += 1
    text = f"--relation {relation}: {checked} pair(s) checked to be neighbours"
    if unchecked:
        why = (
            "their sides are not UserDatasets or sequences of numbers"
            if hasattr(rel, "changed_positions")
            else f"{relation} defines neighbours of UserDatasets only, and their sides are not UserDatasets"
        )
        text += (
            f"; {len(unchecked)} pair(s) NOT checked (pairs {unchecked[:5]}"
            f"{', ...' if len(unchecked) > 5 else ''}: {why})"
        )
    return text


def _load_factory(target: str):
    module, attr = import_user_module(target)
    mod_name = module.__name__
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise UsageError(f"module {mod_name!r} has no callable {attr!r}")
    return factory


def _bind(factory, name: str, raw: dict) -> dict:
    """--param values checked against the factory's signature (names, and defaults' types)."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return raw
    try:
        sig.bind(**raw)
    except TypeError as exc:
        raise UsageError(f"{name}{sig} cannot take {sorted(raw)}: {exc}") from None
    defaults = {k: p.default for k, p in sig.parameters.items()}
    return check_params(raw, defaults, name, closed=False)


def _external_pairs(pairs, name: str) -> list[AuditPair]:
    """The factory's pairs, each with its own description, or a short one built here."""
    if _is_one_pair(pairs):
        pairs = [pairs]
    try:
        it = iter(pairs)
    except TypeError:
        raise UsageError(f"{name}: pairs must be a pair or an iterable of pairs, got {type(pairs).__name__}") from None
    items = user_code(
        f"iterating the pairs from your factory {name}", lambda: list(itertools.islice(it, MAX_PAIRS + 1))
    )
    if not items:
        raise UsageError(f"{name}: no neighbouring pairs; the audit needs at least one")
    if len(items) > MAX_PAIRS:
        raise UsageError(f"{name}: more than {MAX_PAIRS} pairs; pass the {MAX_PAIRS} most promising")
    out = [_one_pair(p, i, name) for i, p in enumerate(items)]
    for p in out:
        _check_sides(p, name)
    return out


def _dataset_kind(x) -> str:
    if isinstance(x, UserDataset):
        return "UserDataset"
    if isinstance(x, EmptyDataset):
        return "EmptyDataset (data.EMPTY)"
    return type(x).__name__


def _check_sides(p: AuditPair, name: str) -> None:
    """A pair's two sides are datasets of one kind (a UserDataset may face data.EMPTY), and
    not the same dataset: an audit of D against D itself can find nothing, and its "no
    violation found" would read as a pass. Both are UsageErrors naming the pair."""
    a, b = p.first, p.second
    if isinstance(a, (UserDataset, EmptyDataset)) != isinstance(b, (UserDataset, EmptyDataset)):
        raise UsageError(
            f"{name}: {p.description!r} has a {_dataset_kind(a)} on one side and a {_dataset_kind(b)} "
            "on the other: the two sides of a pair must be datasets of one kind (two UserDatasets, "
            "a UserDataset and data.EMPTY, or two sequences of records)"
        )
    fa = fingerprint(a)
    if fa is not None and fa == fingerprint(b):
        raise UsageError(
            f"{name}: {p.description!r}: its two datasets are identical, so no test can tell them "
            "apart and 'no violation found' would mean nothing: a pair must differ in one unit of "
            "its relation (a record, a user)"
        )


def _has_sides(obj) -> bool:
    return hasattr(obj, "first") and hasattr(obj, "second")


def _is_one_pair(obj) -> bool:
    """One pair rather than a collection: an object with .first/.second, a 2-tuple of
    non-pairs (as ``harness.audit`` reads it), or (D, D', "description")."""
    if _has_sides(obj):
        return True
    if not isinstance(obj, tuple):
        return False
    if len(obj) == 3:
        return isinstance(obj[2], str)
    return len(obj) == 2 and not any(_has_sides(x) for x in obj)


def _one_pair(p, i: int, name: str) -> AuditPair:
    if _has_sides(p):
        first, second, desc, unit = p.first, p.second, getattr(p, "description", None), getattr(p, "unit", None)
    elif isinstance(p, tuple) and len(p) in (2, 3):
        first, second, desc, unit = p[0], p[1], (p[2] if len(p) == 3 else None), None
    else:
        raise UsageError(
            f"{name}: pair {i} must be (D, D'), (D, D', description) or have .first and .second, got {type(p).__name__}"
        )
    desc = str(desc) if desc else f"pair {i}: {_pair_text(first, second)}"
    return AuditPair(first, second, desc, None if unit is None else int(unit), i)


def _pair_text(first, second) -> str:
    """A pair without a description: small values in full; same-shape arrays by where they differ."""
    a, b = _numbers(first), _numbers(second)
    if a is not None and b is not None and a.shape == b.shape and a.size > 6:
        diff = np.flatnonzero(a.ravel() != b.ravel())
        where = "; ".join(
            f"[{', '.join(map(str, np.unravel_index(i, a.shape)))}]: "
            f"{fmt(a.ravel()[i].item())} vs {fmt(b.ravel()[i].item())}"
            for i in diff[:3]
        )
        more = f" and {diff.size - 3} more" if diff.size > 3 else ""
        return f"arrays of shape {a.shape} differing at {diff.size} position(s): {where}{more}"
    return f"{_summary(first, a)} vs {_summary(second, b)}"


def _numbers(x):
    try:
        a = np.asarray(x)
    except Exception:
        return None
    return a if a.dtype.kind in "biuf" else None


def _summary(x, a) -> str:
    """One dataset: a UserDataset by its size, small arrays by their values."""
    if hasattr(x, "n") and hasattr(x, "m") and hasattr(x, "values"):
        return f"dataset of {x.n} records, {x.m} users"
    if a is None:
        return type(x).__name__
    if a.size <= 6:
        return fmt(a.item()) if a.ndim == 0 else "[" + ", ".join(fmt(v) for v in a.ravel().tolist()) + "]"
    return f"array of shape {a.shape}"


# ------------------------------------------------------------------ running an audit
def run_audit(
    target: Target,
    confidence: float,
    seed: int,
    progress=None,
    workers: int | None = None,
    scheduler: str | None = None,
    **options,
):
    """audit(); an exception is classified by its origin (see the module docstring), except
    ``IncompleteAudit`` (some pairs finished), which the caller reports with its result; an
    unusable --scheduler is bad input. ``options``: ``noise_family`` (replaces the setup's
    declared family) and ``selection_fraction`` (``--noise-family``, ``--selection-fraction``);
    an audit that cannot use them is bad input."""
    t = target
    try:
        return audit(
            t.mechanism,
            t.pairs,
            t.claim,
            samples=t.samples,
            confidence=confidence,
            seed=seed,
            output=t.output,
            progress=progress,
            workers=workers,
            scheduler=scheduler,
            # the declared model's own sets too, unless --noise-family replaces the declaration
            noise_model=None if "noise_family" in options else t.noise,
            **{"noise_family": None if t.noise is None else t.noise.family, **options},
        )
    except IncompleteAudit:
        raise
    except SchedulerError as exc:
        raise UsageError(f"--scheduler: {exc}") from exc
    except MechanismError as exc:
        raise mechanism_error(target, exc) from exc
    except (ValueError, TypeError) as exc:
        if target.kind == "external":
            raise UsageError(f"the audit cannot use the setup from {target.name}: {exc}") from exc
        if options:
            raise UsageError(f"the audit of {target.name} cannot use {_option_text(options)}: {exc}") from exc
        raise


def _option_text(options: dict) -> str:
    return " ".join(f"--{k.replace('_', '-')} {'none' if v is None else v}" for k, v in options.items())


def run_efficiency(target: Target, result, seed: int | None = None) -> dict:
    """``harness.efficiency_report`` for the target's declared noise model (nulls without one).
    A declaration that does not fit the mechanism is the declarer's error: an external
    target's is a UsageError (exit 2); a registry entry's is a bug in userdp (exit 3).
    With ``seed`` and no declaration, also ``"estimated"`` (``estimated_efficiency``)."""
    if target.noise is None:
        out = efficiency_report(None, target.pairs, result)
        return out if seed is None else {**out, "estimated": estimated_efficiency(target, result, seed)}
    try:  # the shape of one release, for the declaration's check
        a, _ = draw(batched(target.mechanism), target.pairs[0], [np.random.default_rng(0)] * 2, 2)
    except MechanismError as exc:
        raise mechanism_error(target, exc) from exc
    try:
        return efficiency_report(target.noise, target.pairs, result, np.asarray(a).shape[1:])
    except (ValueError, TypeError) as exc:
        if target.kind == "external":
            raise UsageError(f"the noise model declared by {target.name} does not fit: {exc}") from exc
        raise


FIT_SEED_TAG = 0x5EED_F17  # the fit's outputs come from SeedSequence([seed, FIT_SEED_TAG]), not the audit's
ESTIMATE_MC_DRAWS = 400_000  # Monte Carlo draws of an estimated ceiling (its error is the fit's, not these)


def estimated_efficiency(target: Target, result, seed: int) -> dict:
    """The efficiency against an ESTIMATED ceiling, for an audit without a declared noise model
    (docs/audit.md, "Efficiency"): Laplace or Gaussian noise fitted per coordinate and tested
    (``ceiling.fit_noise``) on fresh outputs of the witness pair, min(FIT_DRAWS, samples / 5) per
    side (at least FIT_MIN) from the audit's seed (their own stream), then the fitted model's
    ceiling. ``{"ceiling", "efficiency", "mu_efficiency", "fit", "refusal"}``; the first three
    null, and ``refusal`` says why, when no family fits or the output is not a continuous scalar
    or vector without "no release". Reported only: never used for the verdict."""
    none = {"ceiling": None, "efficiency": None, "mu_efficiency": None, "fit": None}
    pair = result.witness.pair
    n = min(FIT_DRAWS, result.samples // 5)
    if n < FIT_MIN:
        return {**none, "refusal": f"the fit needs samples / 5 >= {FIT_MIN} outputs per side, got {n}"}
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence([seed, FIT_SEED_TAG]).spawn(2)]
    try:
        a, b = draw(batched(target.mechanism), pair, rngs, n)
    except MechanismError as exc:
        raise mechanism_error(target, exc) from exc
    if np.ma.isMaskedArray(a) or np.ma.isMaskedArray(b):
        return {**none, "refusal": 'some outputs are "no release": no location noise to fit'}
    kind = infer_kind(a, target.output)
    if kind not in ("continuous", "vector"):
        return {**none, "refusal": f"the output is {kind}: no location noise to fit"}
    fit = fit_noise(np.asarray(a, dtype=float).reshape(n, -1), np.asarray(b, dtype=float).reshape(n, -1))
    if fit.family is None:
        return {**none, "fit": fit.to_dict(), "refusal": fit.refusal}
    primary = result.claim.primary if isinstance(result.claim, Claims) else result.claim
    c = estimated_ceiling(
        fit,
        samples=result.samples,
        confidence=result.confidence,
        delta=primary.as_eps_delta()[1],
        gdp=result.gdp is not None,
        draws=ESTIMATE_MC_DRAWS,
    )
    eff = result.epsilon_lower_bound / c.epsilon if c.epsilon > 0 else None
    mu_eff = result.gdp.mu_lower_bound / c.mu if result.gdp is not None and c.mu and c.mu > 0 else None
    return {"ceiling": c.to_dict(), "efficiency": eff, "mu_efficiency": mu_eff, "fit": fit.to_dict(), "refusal": None}


def mechanism_error(target: Target, exc: MechanismError) -> Exception:
    cause = exc.__cause__
    what = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
    if target.kind == "external" and isinstance(exc, UserCallError):  # complete: the function, the call
        text = str(exc)
        return UserCodeError(f"your {text}" if text.startswith("mechanism ") else text)
    if target.kind == "external":
        if isinstance(cause, VaryingOutputError):
            return UserCodeError(f"your mechanism returned outputs of varying shape or type: {cause}\n  ({exc})")
        if isinstance(cause, DuplicateStreamsError):
            return UserCodeError(f"your mechanism's samples are not independent across worker processes: {cause}")
        return UserCodeError(f"your mechanism raised {what}\n  ({exc})")
    if target.overrides and isinstance(cause, (ValueError, TypeError)):
        return UsageError(f"{target.name} refused {_param_text(target.overrides)}: {cause}")
    return exc  # a registry mechanism failed on its defaults: a bug
