"""The import layers of the package (docs/design.md §1), read from the source with ``ast``.

Every import of one of the package's own modules counts, at module level or inside a function:
a function-local import is still a dependency, so it cannot stand in for a layering fix.

- ``reference`` imports nothing of ``properties`` or ``audits``;
- ``properties`` imports only ``reference`` (and itself);
- inside ``audits``, the parts are ordered engine < validation < papers < bench < cli: a part
  imports only parts below it (``userdp.audits`` itself re-exports the engine's ``audit``);
- the engines (engine, validation, bench, cli) import no paper's module: only the catalogue
  ``userdp.audits.papers`` (bench and cli), whose ``PAPERS`` is the one list of papers;
- a module imported by name (``importlib.import_module`` of a constant) counts as an import too,
  and the one upward reference allowed is the stores' catalogue (``engine/registry.py:CATALOGUE``);
- at most two package files name all five papers (the list of papers and the vocabulary of bug
  classes, whose records name the planted bugs and corpus entries of every paper);
- no module imports itself through others (no import cycle).

Oracle: the parse below, checked on planted graphs (a back edge and a cycle must be reported).
"""

from __future__ import annotations

import ast
import functools
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
TOPS = {"reference": "userdp.reference", "properties": "userdp.properties", "audits": "userdp.audits"}
AUDIT_PARTS = ("engine", "validation", "papers", "bench", "cli")  # lowest first
PAPERS_PACKAGE = "userdp.audits.papers"
# (module, module it imports by name, above it): the one upward reference, by name (docs/design.md §1)
ALLOWED_BY_NAME = {("userdp.audits.engine.registry", PAPERS_PACKAGE)}


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


@functools.cache
def _graph() -> tuple:
    mods = _modules()
    return tuple((m, frozenset(_imports(m, p, set(mods)))) for m, p in mods.items())


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports (read once per run; a fresh dict each call, so
    that a test may plant an edge in it)."""
    return {m: set(ts) for m, ts in _graph()}


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


def named_imports() -> dict[str, set[str]]:
    """module -> the package's modules it imports by name: ``importlib.import_module(X)`` with X a
    string constant or a module-level name bound to one (read once per run; a fresh dict each call)."""
    return {m: set(ts) for m, ts in _named().items()}


@functools.cache
def _named() -> dict[str, frozenset]:
    out = {}
    for name, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        consts = {
            t.id: n.value.value
            for n in tree.body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                and node.args
            ):
                a = node.args[0]
                target = a.value if isinstance(a, ast.Constant) else consts.get(getattr(a, "id", None))
                if isinstance(target, str) and target.startswith("userdp."):
                    out.setdefault(name, set()).add(target)
    return {m: frozenset(ts) for m, ts in out.items()}


def by_name_violations(named: dict[str, set[str]]) -> list[str]:
    bad = []
    for m, targets in named.items():
        for t in targets:
            v = layer_violations({m: {t}})
            if v and (m, t) not in ALLOWED_BY_NAME:
                bad += [f"{x} (by name)" for x in v]
    return sorted(bad)


def paper_imports(graph: dict[str, set[str]]) -> list[str]:
    """Modules of the engines (engine, validation, bench, cli) that import a paper's module."""
    bad = []
    for m, targets in graph.items():
        if not m.startswith("userdp.audits.") or m.startswith(PAPERS_PACKAGE):
            continue
        for t in targets:
            if t.startswith(PAPERS_PACKAGE + "."):
                bad.append(f"{m} imports {t}: the engines name no paper (only {PAPERS_PACKAGE})")
    return sorted(bad)


def files_naming_all_papers() -> list[str]:
    from userdp.audits.papers import PAPERS

    return sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "audits").rglob("*.py")
        if all(paper in p.read_text(encoding="utf-8") for paper in PAPERS)
    )


PARTS = ("reference", "properties") + tuple(f"audits/{p}" for p in AUDIT_PARTS)  # lowest first
DESIGN = ROOT / "docs" / "design.md"
MARKERS = ("<!-- layer-graph:start -->", "<!-- layer-graph:end -->")


def _part(module: str) -> str:
    parts = module.split(".")
    if parts[1] != "audits":
        return parts[1]
    return f"audits/{parts[2]}" if len(parts) > 2 else "audits/engine"  # the package re-exports the engine


def render_graph(graph: dict[str, set[str]], named: dict[str, set[str]]) -> str:
    """The part-level graph of docs/design.md §1: each part and the parts it imports."""
    lines = ["```"]
    for p in reversed(PARTS):
        below = {_part(t) for m, ts in graph.items() if _part(m) == p for t in ts} - {p}
        lines.append(f"{p:<18} -> {', '.join(q for q in reversed(PARTS) if q in below) or '(nothing of ours)'}")
    for m, ts in sorted(named.items()):
        for t in sorted(ts):
            if (m, t) in ALLOWED_BY_NAME:
                lines.append(f"{m.replace('userdp.', '').replace('.', '/')}.py -> {t} (by name: the catalogue)")
    return "\n".join(lines + ["```"])


def _block(text: str) -> str:
    a, b = text.index(MARKERS[0]) + len(MARKERS[0]), text.index(MARKERS[1])
    return text[a:b].strip("\n")


def test_the_design_shows_the_current_layer_graph():
    assert _block(DESIGN.read_text(encoding="utf-8")) == render_graph(import_graph(), named_imports()), (
        "docs/design.md's layer graph is stale: python3 tests/test_layers.py --write"
    )


def test_a_stale_layer_graph_is_caught():
    g = import_graph()
    g["userdp.audits.engine.bounds"] = g["userdp.audits.engine.bounds"] | {"userdp.properties.adapter"}
    assert _block(DESIGN.read_text(encoding="utf-8")) != render_graph(g, named_imports())


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


def test_imports_by_name_keep_the_layers():
    named = named_imports()
    assert PAPERS_PACKAGE in named["userdp.audits.engine.registry"]  # the catalogue is read
    assert by_name_violations(named) == []


def test_a_planted_import_by_name_is_reported():
    named = named_imports()
    named["userdp.audits.validation.run"] = {"userdp.audits.papers"}
    assert any("userdp.audits.validation.run" in v for v in by_name_violations(named))


def test_the_engines_name_no_paper():
    assert paper_imports(import_graph()) == []
    g = import_graph()
    g["userdp.audits.bench.run"] = g["userdp.audits.bench.run"] | {"userdp.audits.papers.zhao2024.bench"}
    assert paper_imports(g) == [
        "userdp.audits.bench.run imports userdp.audits.papers.zhao2024.bench: the engines name no paper "
        "(only userdp.audits.papers)"
    ]


def test_at_most_two_files_name_all_five_papers():
    assert files_naming_all_papers() == ["audits/papers/__init__.py", "audits/validation/vector_cases.py"]


@pytest.mark.parametrize(
    "edge,expected",
    [
        (("userdp.reference.data", "userdp.properties.adapter"), "reference imports nothing above it"),
        (("userdp.properties.adapter", "userdp.audits.engine.harness"), "properties imports only reference"),
        (("userdp.audits.engine.harness", "userdp.audits.papers.amin2019.audits"), "audits' parts are ordered"),
        (("userdp.audits.papers.amin2019.audits", "userdp.audits.cli.main"), "audits' parts are ordered"),
        (("userdp.audits.validation.run", "userdp.audits.papers.amin2019.specs"), "audits' parts are ordered"),
        (("userdp.audits.papers.zhao2024.bench", "userdp.audits.bench.run"), "audits' parts are ordered"),
        (("userdp.audits.engine.registry", "userdp.audits.validation.run"), "audits' parts are ordered"),
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


if __name__ == "__main__":  # python3 tests/test_layers.py --write: regenerate docs/design.md's graph
    import sys

    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python3 tests/test_layers.py --write")
    text = DESIGN.read_text(encoding="utf-8")
    a, b = text.index(MARKERS[0]) + len(MARKERS[0]), text.index(MARKERS[1])
    DESIGN.write_text(
        text[:a] + "\n" + render_graph(import_graph(), named_imports()) + "\n" + text[b:], encoding="utf-8"
    )
