"""The import layers of the package (docs/design.md §1), read from the source with ``ast``.

Every import of one of the package's own modules counts, at module level or inside a function:
a function-local import is still a dependency, so it cannot stand in for a layering fix.

- ``reference`` imports nothing of ``properties`` or ``audits``;
- ``properties`` imports only ``reference`` (and itself);
- inside ``audits``, the parts are ordered engine < registry < validation < bench < cli: a part
  imports only parts below it (``userdp.audits`` itself re-exports the engine's ``audit``);
- no module imports itself through others (no import cycle).

Oracle: the parse below, checked on planted graphs (a back edge and a cycle must be reported).
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
TOPS = {"reference": "userdp.reference", "properties": "userdp.properties", "audits": "userdp.audits"}
AUDIT_PARTS = ("engine", "registry", "validation", "bench", "cli")  # lowest first


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("").parts
    if rel[-1] == "__init__":
        rel = rel[:-1]
    return ".".join((TOPS[rel[0]],) + rel[1:])


def _modules() -> dict[str, pathlib.Path]:
    return {
        _module_name(p): p for top in TOPS for p in sorted((ROOT / top).rglob("*.py")) if "__pycache__" not in p.parts
    }


def _imports(name: str, path: pathlib.Path, known: set[str]) -> set[str]:
    """The package's own modules that ``name`` imports, anywhere in its source."""
    is_pkg = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:  # "userdp.audits.engine.harness.audit" -> the module
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    return {m: _imports(m, p, set(mods)) for m, p in mods.items()}


def _layer(module: str) -> tuple[str, int]:
    """(top, rank): the rank orders audits' parts; ``userdp.audits`` (the package) is the engine's face."""
    parts = module.split(".")
    top = parts[1]
    if top != "audits":
        return top, 0
    if len(parts) == 2:
        return top, 0
    return top, AUDIT_PARTS.index(parts[2]) if parts[2] in AUDIT_PARTS else -1


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for m, targets in graph.items():
        top, rank = _layer(m)
        if top == "audits" and rank < 0:
            bad.append(f"{m}: a module of audits outside its parts {AUDIT_PARTS}")
        for t in targets:
            ttop, trank = _layer(t)
            if top == "reference" and ttop != "reference":
                bad.append(f"{m} imports {t}: reference imports nothing above it")
            elif top == "properties" and ttop not in ("reference", "properties"):
                bad.append(f"{m} imports {t}: properties imports only reference")
            elif (
                top == "audits"
                and ttop == "audits"
                and len(t.split(".")) > 2
                and trank > rank
                and len(m.split(".")) > 2
            ):
                bad.append(f"{m} imports {t}: audits' parts are ordered {' < '.join(AUDIT_PARTS)}")
    return sorted(bad)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read():
    g = import_graph()
    assert len(g) >= 60
    assert "userdp.audits.engine.harness" in g["userdp.audits"]  # the re-export
    assert "userdp.reference.data" in g["userdp.reference.neighbours"]  # a relative import
    assert "userdp.audits.validation.run" in g["userdp.audits.cli.validate"]  # a function-local import


def test_layers_are_in_order():
    assert layer_violations(import_graph()) == []


def test_no_import_cycle():
    assert cycles(import_graph()) == []


@pytest.mark.parametrize(
    "edge,expected",
    [
        (("userdp.reference.data", "userdp.properties.adapter"), "reference imports nothing above it"),
        (("userdp.properties.adapter", "userdp.audits.engine.harness"), "properties imports only reference"),
        (("userdp.audits.engine.harness", "userdp.audits.registry.amin2019"), "audits' parts are ordered"),
        (("userdp.audits.registry.amin2019", "userdp.audits.cli.main"), "audits' parts are ordered"),
    ],
)
def test_planted_back_edge_is_reported(edge, expected):
    g = import_graph()
    g[edge[0]] = g[edge[0]] | {edge[1]}
    assert any(expected in v and v.startswith(edge[0]) for v in layer_violations(g))


def test_planted_cycle_is_reported():
    g = import_graph()
    g["userdp.audits.engine.bounds"] = g["userdp.audits.engine.bounds"] | {"userdp.audits.engine.harness"}
    assert any({"userdp.audits.engine.bounds", "userdp.audits.engine.harness"} <= set(c) for c in cycles(g))
