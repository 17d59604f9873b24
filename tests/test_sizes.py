"""Small files, small functions (docs/design.md §8.10), measured on the package's source with ``ast``:

- no package file (``reference/``, ``properties/``, ``audits/``) over ``MAX_FILE`` = 1,000 lines;
- no function or method over ``MAX_FUNCTION`` = 100 lines, except the declarative tables of
  ``TABLES`` (each with its reason).

Planted: a source with a function of 101 lines and a file of 1,001 lines must each be reported.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
MAX_FILE = 1000
MAX_FUNCTION = 100
# "path:function" -> why it may be longer: a declarative table, read top to bottom
TABLES: dict[str, str] = {}


def _sources():
    for top in ("reference", "properties", "audits"):
        for p in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" not in p.parts:
                yield str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")


def long_files(sources) -> list[str]:
    return [f"{name}: {n} lines" for name, text in sources if (n := len(text.splitlines())) > MAX_FILE]


def long_functions(sources) -> list[str]:
    out = []
    for name, text in sources:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION and f"{name}:{node.name}" not in TABLES:
                    out.append(f"{name}:{node.name}: {n} lines")
    return out


def test_no_package_file_over_the_limit():
    assert long_files(_sources()) == []


def test_no_function_over_the_limit():
    assert long_functions(_sources()) == []


def test_every_table_exemption_still_exists():
    names = {
        f"{name}:{node.name}"
        for name, text in _sources()
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef)
    }
    assert sorted(set(TABLES) - names) == []


def test_planted_long_function_and_file_are_reported():
    body = "".join(f"    x{i} = {i}\n" for i in range(100))
    assert long_functions([("planted.py", "def f():\n" + body)]) == ["planted.py:f: 101 lines"]
    assert long_functions([("planted.py", "def f():\n" + body[: -len("    x99 = 99\n")])]) == []
    assert long_files([("planted.py", "x = 1\n" * 1001)]) == ["planted.py: 1001 lines"]
    assert long_files([("planted.py", "x = 1\n" * 1000)]) == []
