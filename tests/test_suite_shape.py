"""One suite shape for every paper: a generic validator runs any suite module
of ``userdp.properties`` without per-paper code.

Every suite module exposes ``ALL_PROPERTIES`` (the main algorithm's properties), ``STRATEGIES``
(property -> Hypothesis strategy), ``EXAMPLES`` (property -> known hard examples, run first),
``MAX_EXAMPLES`` (property -> effort; omitted = 100), ``RELATION`` (a relation object of
``userdp.reference.neighbours``), ``ADAPTER`` (the adapter type) and ``REFERENCE`` (an ``ADAPTER``
wrapping the reference). A module holding other algorithms' suites keeps them in tuples
``X_PROPERTIES``; their reference is ``REFERENCE_X`` (else ``REFERENCE``) and their relation
``RELATION_X`` (else ``RELATION``).

Checked here, each check shown failing on a planted omission:
- the shape (``_shape_problems``);
- every property of every suite passes on its reference with the suite's own strategy and hard
  examples, every stage called with the dataset alone positional (the per-paper test files run
  the full ``MAX_EXAMPLES``; this runs at most ``QUICK`` examples each);
- the neighbour properties' strategies draw neighbours under the suite's relation;
- the reference mechanism takes ``mechanism(dataset, rng=, size=, **params)``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy

from userdp.properties import (
    acharya2024,
    amin2019,
    amin2019_erm,
    desfontaines2022,
    epasto2020,
    epasto2020_erm,
    epasto2020_gwa,
    krichene2023,
    wilson2020,
    zhao2024,
    zhao2024_wme,
)
import userdp.properties
from userdp.audits.papers import PAPERS
from userdp.properties.adapter import Adapter, check_property, check_suite_property
from userdp.reference import neighbours
from userdp.reference.data import UserDataset

# every paper's suites (``properties/<paper>.py`` and ``properties/<paper>_<alg>.py``), read from the
# list of papers, so that a new paper's suite is checked without an edit here
SUITES = tuple(
    importlib.import_module(f"userdp.properties.{m}")
    for p in PAPERS
    for m in sorted(i.name for i in pkgutil.iter_modules(userdp.properties.__path__))
    if m == p or m.startswith(p + "_")
)
QUICK = 10  # examples per property in the keyword-call run below (the paper tests run MAX_EXAMPLES)


def _tuples(suite) -> dict:
    """The property tuples: ALL_PROPERTIES and every other X_PROPERTIES tuple of the module."""
    out = {"ALL_PROPERTIES": getattr(suite, "ALL_PROPERTIES", ())}
    out.update(
        {
            n: v
            for n, v in vars(suite).items()
            if n.endswith("_PROPERTIES") and n != "ALL_PROPERTIES" and isinstance(v, tuple)
        }
    )
    return out


def _reference_for(suite, tuple_name: str):
    return getattr(suite, "REFERENCE_" + tuple_name[: -len("_PROPERTIES")], None) or getattr(suite, "REFERENCE", None)


def _stages_used(prop, stage_names) -> set:
    """Stage names a property needs: its ``require(...)`` arguments and its ``impl.<stage>`` uses."""
    src = inspect.getsource(prop)
    names = {m for args in re.findall(r"\bimpl\.require\(([^)]*)\)", src) for m in re.findall(r"\"(\w+)\"", args)}
    names |= {m for m in re.findall(r"impl\.(\w+)", src) if m in stage_names}
    return names


def _shape_problems(suite) -> list[str]:
    """What keeps a suite module from the common shape (empty: none)."""
    problems = []
    tuples = _tuples(suite)
    listed = {p for t in tuples.values() for p in t}
    defined = {
        n
        for n, f in vars(suite).items()
        if n.startswith("prop_") and callable(f) and getattr(f, "__module__", None) == suite.__name__
    }
    if not tuples["ALL_PROPERTIES"]:
        problems.append("no ALL_PROPERTIES")
    if defined - {p.__name__ for p in listed}:
        problems.append(f"not in a *_PROPERTIES tuple: {sorted(defined - {p.__name__ for p in listed})}")
    strategies = getattr(suite, "STRATEGIES", {})
    if listed - set(strategies):
        problems.append(f"no strategy: {sorted(p.__name__ for p in listed - set(strategies))}")
    if any(not isinstance(s, SearchStrategy) for s in strategies.values()):
        problems.append("a STRATEGIES value is not a Hypothesis strategy")
    for name in ("STRATEGIES", "EXAMPLES", "MAX_EXAMPLES"):
        table = getattr(suite, name, None)
        if not isinstance(table, dict):
            problems.append(f"no {name}")
        elif set(table) - listed:
            problems.append(
                f"{name} names an unlisted property: "
                f"{sorted(getattr(p, '__name__', repr(p)) for p in set(table) - listed)}"
            )
    for p, n in getattr(suite, "MAX_EXAMPLES", {}).items():
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 100_000:
            problems.append(f"MAX_EXAMPLES[{p.__name__}] = {n!r} is not an int in [1, 100000]")
    if any(not isinstance(v, (list, tuple)) for v in getattr(suite, "EXAMPLES", {}).values()):
        problems.append("an EXAMPLES value is not a list of examples")
    relations = {"RELATION"} | {"RELATION_" + t[: -len("_PROPERTIES")] for t in tuples if t != "ALL_PROPERTIES"}
    for name in sorted(relations):
        if name == "RELATION" or hasattr(suite, name):
            if not any(getattr(suite, name, None) is r for r in neighbours.RELATIONS.values()):
                problems.append(f"{name} is not a relation of userdp.reference.neighbours")
    adapter = getattr(suite, "ADAPTER", None)
    if not (isinstance(adapter, type) and issubclass(adapter, Adapter)):
        problems.append("ADAPTER is not an Adapter type")
        return problems
    if not isinstance(getattr(suite, "REFERENCE", None), adapter):
        problems.append(f"REFERENCE is not a {adapter.__name__}")
        return problems
    if suite.REFERENCE.mechanism is None:
        problems.append("REFERENCE has no mechanism")
    doc = suite.__doc__ or ""
    for tname, props in tuples.items():
        ref = _reference_for(suite, tname)
        for p in props:
            used = _stages_used(p, type(ref).STAGES)
            missing = sorted(s for s in used if getattr(ref, s, None) is None)
            if missing:
                problems.append(f"{p.__name__} needs stage(s) {missing} that {ref.name!r} lacks")
            undocumented = sorted(s for s in used if not re.search(rf"\b{s}\(", doc))
            if undocumented:
                problems.append(f"{p.__name__}: no call shape documented for {undocumented}")
    return problems


@pytest.mark.parametrize("suite", SUITES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_suite_has_the_common_shape(suite):
    assert _shape_problems(suite) == []


def _planted_prop(impl, ex):
    raise AssertionError("never run")


_planted_prop.__module__ = amin2019.__name__


PLANTED_OMISSIONS = [  # (what is changed on properties.amin2019, the problem it must produce)
    (
        "unlisted property",
        lambda m, P: m.setattr(P, "prop_planted", _planted_prop, raising=False),
        "not in a *_PROPERTIES tuple: ['prop_planted']",
    ),
    ("no ALL_PROPERTIES", lambda m, P: m.delattr(P, "ALL_PROPERTIES"), "no ALL_PROPERTIES"),
    (
        "strategy missing",
        lambda m, P: m.setattr(
            P, "STRATEGIES", {k: v for k, v in P.STRATEGIES.items() if k is not P.prop_capped_per_user}
        ),
        "no strategy: ['prop_capped_per_user']",
    ),
    (
        "strategy not a strategy",
        lambda m, P: m.setitem(P.STRATEGIES, P.prop_capped_per_user, [1]),
        "not a Hypothesis strategy",
    ),
    ("no EXAMPLES", lambda m, P: m.delattr(P, "EXAMPLES"), "no EXAMPLES"),
    (
        "EXAMPLES of an unlisted property",
        lambda m, P: m.setitem(P.EXAMPLES, _planted_prop, []),
        "EXAMPLES names an unlisted property: ['_planted_prop']",
    ),
    ("no MAX_EXAMPLES", lambda m, P: m.delattr(P, "MAX_EXAMPLES"), "no MAX_EXAMPLES"),
    (
        "MAX_EXAMPLES zero",
        lambda m, P: m.setitem(P.MAX_EXAMPLES, P.prop_capped_per_user, 0),
        "MAX_EXAMPLES[prop_capped_per_user] = 0",
    ),
    ("no RELATION", lambda m, P: m.delattr(P, "RELATION"), "RELATION is not a relation"),
    ("RELATION as a name", lambda m, P: m.setattr(P, "RELATION", "add-remove-user"), "RELATION is not a relation"),
    ("no ADAPTER", lambda m, P: m.delattr(P, "ADAPTER"), "ADAPTER is not an Adapter type"),
    ("no REFERENCE", lambda m, P: m.delattr(P, "REFERENCE"), "REFERENCE is not a CapAdapter"),
    (
        "REFERENCE of the plain type",
        lambda m, P: m.setattr(P, "REFERENCE", Adapter("plain", statistic=len)),
        "REFERENCE is not a CapAdapter",
    ),
    (
        "REFERENCE without a stage",
        lambda m, P: m.setattr(P, "REFERENCE", dataclasses.replace(P.REFERENCE, optimal_cap=None)),
        "prop_optimal_cap_is_kth_largest needs stage(s) ['optimal_cap']",
    ),
    (
        "REFERENCE without mechanism",
        lambda m, P: m.setattr(P, "REFERENCE", dataclasses.replace(P.REFERENCE, mechanism=None)),
        "REFERENCE has no mechanism",
    ),
    (
        "call shape undocumented",
        lambda m, P: m.setattr(P, "__doc__", P.__doc__.replace("``sensitivity(T=T)", "``sens")),
        "prop_sensitivity_bounds_neighbours: no call shape documented for ['sensitivity']",
    ),
]


@pytest.mark.parametrize(
    "change,problem", [(c, p) for _, c, p in PLANTED_OMISSIONS], ids=[n for n, _, _ in PLANTED_OMISSIONS]
)
def test_each_shape_check_fails_on_a_planted_omission(monkeypatch, change, problem):
    assert _shape_problems(amin2019) == []
    change(monkeypatch, amin2019)
    assert any(problem in p for p in _shape_problems(amin2019)), _shape_problems(amin2019)


def test_sub_suite_relation_must_be_a_relation(monkeypatch):
    # Planted: a relation NAME where the sub-suite GLOBAL_PROPERTIES of zhao2024 would need the object.
    assert _shape_problems(zhao2024) == []
    monkeypatch.setattr(zhao2024, "RELATION_GLOBAL", "replace-user-items", raising=False)
    assert _shape_problems(zhao2024) == ["RELATION_GLOBAL is not a relation of userdp.reference.neighbours"]


# ------------------------------------------------------- every property on its reference, keywords only
def _keyword_only(impl: Adapter) -> Adapter:
    """``impl`` whose stages refuse every positional argument but the dataset (TypeError)."""

    def strict(stage, f):
        def call(*args, **kw):
            if len(args) > 1 or (args and not isinstance(args[0], UserDataset)):
                raise TypeError(
                    f"stage {stage} called with positional arguments {args!r}: only the dataset may be positional"
                )
            return f(*args, **kw)

        return call

    return dataclasses.replace(impl, **{s: strict(s, getattr(impl, s)) for s in impl.stages()})


def _every():
    """(suite, tuple name, property) for every property of every suite, each once (a tuple such
    as STATISTICAL_PROPERTIES may repeat properties of ALL_PROPERTIES)."""
    seen, out = set(), []
    for suite in SUITES:
        for tname, props in _tuples(suite).items():
            out += [(suite, tname, p) for p in props if p not in seen]
            seen |= set(props)
    return out


EVERY = _every()


def _run(suite, tname, prop, max_examples=QUICK):
    return check_suite_property(suite, prop, _keyword_only(_reference_for(suite, tname)), max_examples=max_examples)


# A sweep over every property of every suite (16.5 s): slow. The default run keeps each paper's
# test_reference_passes (the same properties, full effort) and the planted positional call below.
@pytest.mark.slow
@pytest.mark.parametrize(
    "suite,tname,prop", EVERY, ids=[f"{s.__name__.rsplit('.', 1)[-1]}-{p.__name__}" for s, _, p in EVERY]
)
def test_every_property_passes_on_its_reference_with_keyword_calls(suite, tname, prop):
    f = _run(suite, tname, prop)
    assert f.verdict == "pass", f


def test_a_positional_stage_call_is_caught():
    # Planted: the Amin sensitivity property as it was before the suites took keywords (sensitivity(T) positional).
    def prop_positional(impl, example):
        impl.require("sensitivity")
        T, _ = example
        assert float(impl.sensitivity(T)) >= T

    f = check_property(prop_positional, amin2019.noise_cases(), _keyword_only(amin2019.REFERENCE), max_examples=5)
    assert f.verdict == "error" and "only the dataset may be positional" in f.message, f
    ok = check_property(prop_positional, amin2019.noise_cases(), amin2019.REFERENCE, max_examples=5)
    assert ok.verdict == "pass", ok  # the reference itself accepts it: only the guard sees it


# --------------------------------------------------------------- neighbour strategies keep their relation
def _attr_pair(ex):
    return ex.dataset, ex.neighbour


NEIGHBOUR_STRATEGIES = [  # (suite, property, (dataset, neighbour) of an example, the relation-less strategy)
    (
        epasto2020,
        epasto2020.prop_sensitivity_bounds_sampled_neighbour,
        _attr_pair,
        epasto2020.wa_examples(max_users=30, max_records_per_user=20, relation=None),
    ),
    (
        epasto2020_gwa,
        epasto2020_gwa.prop_weights_ignore_labels,
        _attr_pair,
        epasto2020_gwa.gwa_examples(max_users=6, max_records_per_user=5, dim=3, relation=None),
    ),
    (
        epasto2020_gwa,
        epasto2020_gwa.prop_sensitivity_bounds_sampled_neighbour,
        _attr_pair,
        epasto2020_gwa.gwa_examples(max_users=6, max_records_per_user=5, dim=3, relation=None),
    ),
    (
        acharya2024,
        acharya2024.prop_loss_bounded_on_sampled_neighbour,
        _attr_pair,
        acharya2024.pdp_examples(max_n=6, max_d=3, neighbour=False),
    ),
    (amin2019, amin2019.prop_sensitivity_bounds_neighbours, lambda ex: (ex[0].first, ex[0].second), None),
    (amin2019_erm, amin2019_erm.prop_minimiser_within_sensitivity, lambda ex: (ex[0], ex[1]), None),
    (amin2019_erm, amin2019_erm.prop_noise_scale_is_public, lambda ex: (ex[0], ex[1]), None),
    (epasto2020_erm, epasto2020_erm.prop_gradient_within_sensitivity, lambda ex: (ex[0], ex[1]), None),
]


def _relation(suite, prop):
    tname = next(t for t, props in _tuples(suite).items() if prop in props)
    return getattr(suite, "RELATION_" + tname[: -len("_PROPERTIES")], None) or suite.RELATION


def _neighbour_problems(suite, prop, pair_of, n=15) -> list[str]:
    """What is wrong with the neighbours STRATEGIES[prop] draws, under the suite's relation (its
    ``changed_units``): a missing neighbour, a pair that is not neighbouring under the relation
    (more than one unit changed, or a field changed that the relation keeps), or no example
    at all that changes exactly one unit. (A neighbour equal to the dataset is tolerated: a
    strategy may draw the old values again.)"""
    rel, problems, moved = _relation(suite, prop), [], []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(suite.STRATEGIES[prop])
    def draw(ex):
        D, D2 = pair_of(ex)
        if D2 is None:
            problems.append("an example without a neighbour")
            return
        try:
            units = rel.changed_units(D, D2)
        except ValueError as exc:
            problems.append(f"not a {rel.name} neighbour: {exc}")
            return
        if len(units) > 1:
            problems.append(f"not a {rel.name} neighbour: changed units {sorted(units)}")
        moved.append(len(units) == 1)

    draw()
    if moved and not any(moved):
        problems.append(f"no example changes exactly one unit under {rel.name}")
    return sorted(set(problems))


@pytest.mark.parametrize(
    "suite,prop,pair_of,_", NEIGHBOUR_STRATEGIES, ids=[p.__name__ for _, p, _, _ in NEIGHBOUR_STRATEGIES]
)
def test_neighbour_strategies_draw_the_suite_relation(suite, prop, pair_of, _):
    assert _neighbour_problems(suite, prop, pair_of) == []


LOSABLE = [e for e in NEIGHBOUR_STRATEGIES if e[3] is not None]


@pytest.mark.parametrize("suite,prop,pair_of,relationless", LOSABLE, ids=[e[1].__name__ for e in LOSABLE])
def test_a_strategy_that_lost_its_relation_is_caught(monkeypatch, suite, prop, pair_of, relationless):
    # Planted: the neighbour property's strategy in its relation-less form (the default of
    # wa_examples / gwa_examples / pdp_examples before the common suite shape). Both checks above fail: the
    # strategy check sees no neighbour, and the reference run cannot pass (no usable example).
    tname = next(t for t, props in _tuples(suite).items() if prop in props)
    monkeypatch.setitem(suite.STRATEGIES, prop, relationless)
    assert _neighbour_problems(suite, prop, pair_of, n=5) == ["an example without a neighbour"]
    with pytest.raises(RuntimeError, match="no usable example"):
        _run(suite, tname, prop, max_examples=5)


def test_a_strategy_under_another_relation_is_caught(monkeypatch):
    # Planted: the sampled-neighbour strategy of Epasto §3 under add/remove-user (the reading
    # the paper excludes, §2.2): its pairs are not replace-user neighbours.
    prop = epasto2020.prop_sensitivity_bounds_sampled_neighbour
    monkeypatch.setitem(epasto2020.STRATEGIES, prop, epasto2020.wa_examples(relation=neighbours.ADD_REMOVE_USER))
    problems = _neighbour_problems(epasto2020, prop, _attr_pair, n=5)
    assert problems and all(p.startswith("not a replace-user neighbour") for p in problems), problems


# ------------------------------------------------------------------ the mechanism's call shape
def _rng():
    return np.random.default_rng(13)


def _mechanism_cases():
    from userdp.reference import acharya2024 as Ac, amin2019 as Am, amin2019_erm as AE, epasto2020 as Ep
    from userdp.reference import epasto2020_erm as EE, wilson2020 as Wi, zhao2024 as Z, zhao2024_wme as W
    from userdp.reference import desfontaines2022 as Ds

    D = UserDataset.from_user_lists([[0.5, 0.7], [0.2], [1.0]])
    wa = dict(B=1.0, epsilon=1.0, sigma=0.5)
    ach = acharya2024.uneven_profile_example()
    zh = zhao2024.HARD_EXAMPLES[1]
    heavy, _, ep, _ = epasto2020_erm.epasto_heavy_user_example()
    am = dict(tau=2, Lambda=0.5, n_min=4, loss="logistic", R=1.0, Y=1.0)
    wme = dict(epsilon=1.0, delta=1e-5, R=1.0)
    wd = UserDataset.from_arrays([0.5, 0.7, 0.2, 1.0], [0, 0, 1, 2], partition_ids=[0, 1, 1, 2])
    wi = dict(public_partitions=[0, 1, 2], metric="sum", L0=1, Linf=1, epsilon=1.0, lower=0.0, upper=1.0)
    sel = UserDataset.from_arrays(np.zeros(4), [0, 0, 1, 2], partition_ids=[0, 1, 1, 2])
    ps = dict(epsilon=3.0, delta=0.2, max_partitions_contributed=1, partitions=[0, 1, 2, 3])
    return [  # (suite reference, dataset, keyword params, the reference mechanism called directly or None)
        (amin2019.REFERENCE, D, dict(T=1.0, epsilon=1.0), lambda r: Am.mechanism(D, 1.0, 1.0, r, size=3)),
        (epasto2020.REFERENCE, D, wa, lambda r: Ep.optimal_wa_mechanism(D, r, 3, **wa)),
        (
            epasto2020_gwa.REFERENCE,
            epasto2020_gwa.sign_cancelling_example().dataset,
            epasto2020_gwa.sign_cancelling_example().params,
            None,
        ),
        (acharya2024.REFERENCE, ach.dataset, ach.params, lambda r: Ac.mechanism(ach.dataset, r, 3, **ach.params)),
        (krichene2023.REFERENCE, krichene2023.HARD_EXAMPLES[0].dataset, krichene2023.HARD_EXAMPLES[0].params, None),
        (zhao2024.REFERENCE, zh.dataset, zh.params, lambda r: Z.mechanism(zh.dataset, r, 3, **zh.params)),
        (amin2019_erm.REFERENCE, heavy, dict(am, epsilon=1.0), lambda r: AE.mechanism(heavy, r, 3, epsilon=1.0, **am)),
        (epasto2020_erm.REFERENCE, heavy, ep, lambda r: EE.mechanism(heavy, r, 3, **ep)),
        (zhao2024_wme.REFERENCE, D, wme, lambda r: W.wme_mechanism(D, rng=r, size=3, **wme)),
        (wilson2020.REFERENCE, wd, wi, lambda r: Wi.mechanism(wd, rng=r, size=3, **wi)),
        (desfontaines2022.REFERENCE, sel, ps, lambda r: Ds.mechanism(sel, rng=r, size=3, **ps)),
    ]


@pytest.mark.parametrize("i", range(11))
def test_reference_mechanism_takes_rng_and_size_by_keyword(i):
    ref, D, params, direct = _mechanism_cases()[i]
    out = ref.mechanism(D, rng=_rng(), size=3, **params)
    parts = out if isinstance(out, tuple) else (out,)
    assert all(np.shape(a)[0] == 3 for a in parts), [np.shape(a) for a in parts]
    again = ref.mechanism(D, rng=_rng(), size=3, **params)
    for a, b in zip(parts, again if isinstance(again, tuple) else (again,)):
        np.testing.assert_array_equal(a, b)  # the rng is the only randomness
    if direct is not None:
        np.testing.assert_array_equal(out, direct(_rng()))  # the reference mechanism itself


def test_every_suite_is_covered_by_the_mechanism_cases():
    assert {type(c[0]) for c in _mechanism_cases()} <= {s.ADAPTER for s in SUITES}
    assert {id(s.REFERENCE) for s in SUITES} <= {id(c[0]) for c in _mechanism_cases()}
