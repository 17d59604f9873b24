"""Hygiene of the manual (README.md, CHANGELOG.md and docs/**/*.md), read as text:

- no paragraph of more than ``MIN_CHARS`` characters stands twice on one page (a copy left by an
  edit reads as two rules, and the two drift apart);
- a Markdown table is not broken by a stray line: a non-blank line that is not a table row
  between two table rows ends the table for a renderer, and the rows after it print as text.

Planted: a page with a repeated paragraph and one with a stray line inside a table are reported.
"""

from __future__ import annotations

import collections
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
MIN_CHARS = 120
PAGES = sorted([ROOT / "README.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").rglob("*.md")])
# generated pages whose sections repeat a note on purpose: docs/vectors.md gives each algorithm's
# notes under its own heading, and two algorithms of one design (logistic and ridge ERM, the two
# Jorgensen thresholds) share theirs
REPEATS_BY_DESIGN = {ROOT / "docs" / "vectors.md"}


def _prose(text: str) -> str:
    """The text without fenced code blocks (console output may repeat on purpose)."""
    return re.sub(r"```.*?```", "", text, flags=re.S)


def repeated_paragraphs(text: str) -> list[str]:
    paras = [p.strip() for p in re.split(r"\n\s*\n", _prose(text)) if len(p.strip()) > MIN_CHARS]
    return [p[:80] for p, n in collections.Counter(paras).items() if n > 1]


def broken_tables(text: str) -> list[str]:
    """Lines that stand between two table rows without being a row (or blank)."""
    lines = _prose(text).splitlines()
    rows = [i for i, line in enumerate(lines) if line.startswith("|")]
    out = []
    for a, b in zip(rows, rows[1:]):
        between = lines[a + 1 : b]
        if between and all(x.strip() for x in between) and len(between) <= 2:
            out += [x for x in between]
    return out


def test_no_page_repeats_a_paragraph():
    found = {
        str(p.relative_to(ROOT)): repeated_paragraphs(p.read_text(encoding="utf-8"))
        for p in PAGES
        if p not in REPEATS_BY_DESIGN
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_no_table_is_broken_by_a_stray_line():
    found = {str(p.relative_to(ROOT)): broken_tables(p.read_text(encoding="utf-8")) for p in PAGES}
    assert {k: v for k, v in found.items() if v} == {}


def test_planted_repeat_and_stray_line_are_reported():
    para = "A paragraph long enough to count, " * 5
    assert repeated_paragraphs(f"{para}\n\nother\n\n{para}\n") == [para.strip()[:80]]
    assert repeated_paragraphs(f"{para}\n\n```\n{para}\n```\n") == []  # code blocks may repeat
    table = "| a | b |\n|---|---|\n| 1 | 2 |\nFAIL kind:\n| 3 | 4 |\n"
    assert broken_tables(table) == ["FAIL kind:"]
    assert broken_tables(table.replace("FAIL kind:\n", "")) == []
