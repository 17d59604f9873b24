"""Every module of the package says what it exports (``__all__``), and every exported name is
documented: a function or class by its own docstring, any other name (a constant, a table, a
registered instance) where the module's docstring or the line that defines it says what it is.

Oracle: the modules' own text (``ast``), independent of the code under test; planted: a module
without ``__all__`` and an exported function without a docstring must be reported.
"""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
TOPS = {"reference": "userdp.reference", "properties": "userdp.properties", "audits": "userdp.audits"}
NOT_IMPORTED = {"userdp.audits.cli.__main__"}  # running it is the command


def modules() -> dict[str, pathlib.Path]:
    out = {}
    for top, pkg in TOPS.items():
        for p in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" in p.parts:
                continue
            rel = p.relative_to(ROOT / top).with_suffix("").parts
            name = ".".join((pkg,) + (rel[:-1] if rel[-1] == "__init__" else rel))
            if name not in NOT_IMPORTED:
                out[name] = p
    return out


def _comment_of(path: pathlib.Path, name: str) -> bool:
    """The line that assigns ``name`` at module level carries a comment, or the line above it does."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            here = lines[node.lineno - 1]
            above = lines[node.lineno - 2].strip() if node.lineno >= 2 else ""
            return "#" in here or above.startswith("#")
    return False


def undocumented(module, path: pathlib.Path) -> list[str]:
    if not hasattr(module, "__all__"):
        return ["(no __all__)"]
    doc = module.__doc__ or ""
    bad = []
    for name in module.__all__:
        obj = getattr(module, name)
        if callable(obj) and hasattr(obj, "__doc__") and (isinstance(obj, type) or hasattr(obj, "__code__")):
            if not (obj.__doc__ or "").strip():
                bad.append(name)
        elif name not in doc and not _comment_of(path, name) and not (getattr(obj, "__doc__", None) or "").strip():
            bad.append(name)
    return bad


@pytest.mark.parametrize("name", sorted(modules()))
def test_module_exports_documented_names(name):
    module = importlib.import_module(name)
    assert (module.__doc__ or "").strip(), f"{name} has no module docstring"
    assert undocumented(module, modules()[name]) == [], f"{name}: exported but not documented"


def test_planted_module_without_all_or_docstring_is_reported(tmp_path):
    import types

    m = types.ModuleType("planted", "A planted module.")
    assert undocumented(m, tmp_path / "x.py") == ["(no __all__)"]

    def f():
        return 1

    m.__all__ = ["f"]
    m.f = f
    assert undocumented(m, tmp_path / "x.py") == ["f"]
    f.__doc__ = "Now documented."
    assert undocumented(m, tmp_path / "x.py") == []
