"""Each derivation page in docs/papers/ names the functions it proves, and every function a page
cites exists.

(a) Every derivation of a page's "## Derivations" section has, on the line right after its
heading, a line ``Proves: `path.py:name`, ...`` naming at least one function. A derivation is a
``###`` subsection; on a page without subsections, it is a paragraph or bullet that opens with
a bold heading (``**...**`` or ``- **...**``), and on a page with neither, the section itself.

(b) Every citation ``path.py:name`` or ``path.py:Class.method`` anywhere on docs/papers/*.md,
docs/audit.md and docs/validate.md resolves: the repository-relative file exists and, read with
``ast`` (nothing is imported), defines ``name`` at module level (def, class or assignment, also
inside a module-level ``if``/``try``), or the class ``Class`` defines ``method`` in its body.

(c) Planted: a page text whose derivation lacks its Proves line, one whose Proves line names
nothing, and a citation of a function that does not exist are each reported by the same
checkers.

Oracle: the ``ast`` parse of the cited file. The test reads text only and does not import the
package, so it runs in well under a second.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAPER_PAGES = sorted((ROOT / "docs" / "papers").glob("*.md"))
MANUAL_PAGES = [ROOT / "docs" / "audit.md", ROOT / "docs" / "validate.md"]

# `reference/amin2019.py:sensitivity`, `audits/papers/amin2019/whitebox.py:Row.build`
CITATION = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.py):([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)")
PROVES = re.compile(r"^\s*Proves: (.+)$")
BOLD_OPENING = re.compile(r"^(?:- )?\*\*")

__all__ = ["citations", "defined_names", "derivations", "missing_proves", "unresolved"]


def _lines_outside_fences(text: str) -> list[tuple[str, bool]]:
    """Each line of ``text`` with whether it lies outside a fenced code block."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append((line, False))
        else:
            out.append((line, not fenced))
    return out


def derivations(text: str) -> list[tuple[str, list[str]]]:
    """The derivations of a page as (heading line, lines after it).

    The "## Derivations" section runs to the next ``## `` heading. Its ``###`` subsections are
    the derivations; without them, each paragraph or bullet that opens with a bold heading is
    one; without those, the section itself is one (heading "## Derivations"). A page without
    the section has none.
    """
    lines = _lines_outside_fences(text)
    start = next((i for i, (line, out) in enumerate(lines) if out and line.strip() == "## Derivations"), None)
    if start is None:
        return []
    end = next((i for i in range(start + 1, len(lines)) if lines[i][1] and lines[i][0].startswith("## ")), len(lines))
    section = lines[start + 1 : end]
    heads = [i for i, (line, out) in enumerate(section) if out and line.startswith("### ")]
    if not heads:
        heads = [i for i, (line, out) in enumerate(section) if out and BOLD_OPENING.match(line)]
    if not heads:
        return [(lines[start][0], [line for line, _ in section])]
    bounds = [*heads, len(section)]
    return [(section[a][0], [line for line, _ in section[a + 1 : b]]) for a, b in zip(bounds, bounds[1:])]


def missing_proves(text: str) -> list[str]:
    """The headings of the derivations of ``text`` whose next line is not a Proves line naming
    at least one ``path.py:name``."""
    bad = []
    for heading, body in derivations(text):
        nxt = next((line for line in body if line.strip()), "") if heading.startswith("#") else (body or [""])[0]
        m = PROVES.match(nxt)
        if not m or not CITATION.search(m.group(1)):
            bad.append(heading.strip())
    return bad


def citations(text: str) -> list[tuple[str, str]]:
    """Every (path, name) cited as ``path.py:name`` or ``path.py:Class.method`` in ``text``."""
    return [(m.group(1), m.group(2)) for m in CITATION.finditer(text)]


def _assigned(node: ast.stmt) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _body_names(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """The names a statement list defines (def, class, assignment), looking into if/try blocks."""
    names: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            names.update(dict.fromkeys(_assigned(node), node))
        elif isinstance(node, (ast.If, ast.Try)):
            for block in (node.body, node.orelse, getattr(node, "finalbody", []), *getattr(node, "handlers", [])):
                names.update(_body_names(block if isinstance(block, list) else block.body))
    return names


@functools.lru_cache(maxsize=None)
def defined_names(path: str, root: pathlib.Path = ROOT) -> frozenset[str]:
    """The names the file ``path`` defines at module level, and ``Class.method`` for the
    names each module-level class defines in its body; empty when the file does not exist."""
    file = root / path
    if not file.is_file():
        return frozenset()
    top = _body_names(ast.parse(file.read_text(), filename=str(file)).body)
    methods = {
        f"{cls}.{name}"
        for cls, node in top.items()
        if isinstance(node, ast.ClassDef)
        for name in _body_names(node.body)
    }
    return frozenset(top) | frozenset(methods)


def unresolved(text: str, root: pathlib.Path = ROOT) -> list[str]:
    """The citations of ``text`` that do not resolve, each with the reason."""
    bad = []
    for path, name in citations(text):
        if not (root / path).is_file():
            bad.append(f"{path}:{name}: no file {path}")
        elif name not in defined_names(path, root):
            bad.append(f"{path}:{name}: {path} defines no {name}")
    return bad


def _rel(p: pathlib.Path) -> str:
    return p.relative_to(ROOT).as_posix()


def test_the_pages_exist():
    assert {p.stem for p in PAPER_PAGES} == {
        "acharya2024",
        "amin2019",
        "epasto2020",
        "krichene2023",
        "wilson2020",
        "zhao2024",
        "desfontaines2022",
    }


@pytest.mark.parametrize("page", [pytest.param(p, id=_rel(p)) for p in PAPER_PAGES])
def test_every_derivation_names_what_it_proves(page):
    text = page.read_text()
    assert derivations(text), f"{_rel(page)} has no derivations"
    assert missing_proves(text) == [], f"{_rel(page)}: derivations without a Proves line"


@pytest.mark.parametrize("page", [pytest.param(p, id=_rel(p)) for p in PAPER_PAGES + MANUAL_PAGES])
def test_every_cited_function_exists(page):
    text = page.read_text()
    assert unresolved(text) == [], f"{_rel(page)} cites code that does not exist"


def test_the_citation_pattern_reads_paths_names_and_methods():
    text = "see `reference/a.py:f`, `audits/papers/b/c.py:Row.build`. Also reference/d.py:g, and x.py:1."
    assert citations(text) == [("reference/a.py", "f"), ("audits/papers/b/c.py", "Row.build"), ("reference/d.py", "g")]


PLANTED_PAGE = """# A paper

## Derivations

### Named

Proves: `reference/x.py:f`.

Text.

### Not named

Text that cites `reference/x.py:f` but has no Proves line.

### Named nothing

Proves: the sum.

## Findings
"""

PLANTED_PARAGRAPHS = """## Derivations

Intro.

- **Bound** (`f`).
  Proves: `reference/x.py:f`.
  Text.
- **Unnamed** (`g`). Text.

**1. Chain** (`h`).
Proves: `reference/x.py:h`.

## Next
"""


def test_planted_missing_proves_lines_are_reported():
    assert missing_proves(PLANTED_PAGE) == ["### Not named", "### Named nothing"]
    assert missing_proves(PLANTED_PARAGRAPHS) == ["- **Unnamed** (`g`). Text."]
    assert missing_proves("## Derivations\n\nA paragraph.\n\n## Next\n") == ["## Derivations"]
    assert missing_proves("## Derivations\nProves: `reference/x.py:f`.\n\nA paragraph.\n") == []


def test_planted_missing_functions_are_reported(tmp_path):
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "x.py").write_text(
        "A = 1\nB: int = 2\nif True:\n    C = 3\n\n\ndef f():\n    def inner():\n        pass\n\n\n"
        "class K:\n    z = 1\n\n    def m(self):\n        pass\n"
    )
    good = "`reference/x.py:A`, `reference/x.py:B`, `reference/x.py:C`, `reference/x.py:f`, `reference/x.py:K.m`"
    assert unresolved(good, tmp_path) == []
    assert unresolved("`reference/x.py:K.z`", tmp_path) == []
    bad = "`reference/x.py:gone`, `reference/x.py:inner`, `reference/x.py:K.gone`, `reference/y.py:f`"
    assert unresolved(bad, tmp_path) == [
        "reference/x.py:gone: reference/x.py defines no gone",
        "reference/x.py:inner: reference/x.py defines no inner",
        "reference/x.py:K.gone: reference/x.py defines no K.gone",
        "reference/y.py:f: no file reference/y.py",
    ]
