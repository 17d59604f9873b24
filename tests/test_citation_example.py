"""The citation example of CHANGELOG.md names a real version, commit and line range: the commit is
the one the documented command finds for that version, and the cited lines of the file at that
commit hold what the example says they hold (the label in parentheses). The stable link below it
names the same lines. Oracle: ``git`` on this repository's history.

Planted: a range shifted off the label's lines, and a commit that is not the version's, are refused.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = re.compile(
    r'"userdp (?P<version>[\d.]+) \(commit\s+`(?P<commit>[0-9a-f]+)`\), `(?P<path>[\w/.]+)` lines\s+'
    r"(?P<lo>\d+)-(?P<hi>\d+) \((?P<label>[^)]+)\)\""
)


def _history() -> bool:
    """A git checkout with its full history (not an unpacked archive, not a shallow clone)."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        return False
    r = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.strip() == "false"


if not _history():
    pytest.skip(
        "needs the repository's full git history (a clone, not an archive or a shallow clone)", allow_module_level=True
    )


def _git(*args) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def version_commit(version: str) -> str:
    """The commit that set ``version`` in pyproject.toml (the CHANGELOG's command)."""
    out = _git("log", f'-Sversion = "{version}"', "--format=%h", "--", "pyproject.toml").split()
    return out[-1]


def problems(example: dict) -> list[str]:
    out = []
    if not version_commit(example["version"]).startswith(example["commit"][:7]):
        out.append(f"commit {example['commit']} is not the commit of userdp {example['version']}")
        return out
    text = _git("show", f"{example['commit']}:{example['path']}").splitlines()
    lines = "\n".join(text[int(example["lo"]) - 1 : int(example["hi"])])
    if example["label"] not in lines:
        out.append(f"lines {example['lo']}-{example['hi']} of {example['path']} do not hold {example['label']!r}")
    return out


def _example() -> dict:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    m = EXAMPLE.search(text)
    assert m, "CHANGELOG.md has no citation example of the documented form"
    return m.groupdict() | {"text": text}


def test_the_changelog_citation_example_is_true():
    ex = _example()
    assert problems(ex) == []
    assert f"{ex['path']}#L{ex['lo']}-L{ex['hi']}" in ex["text"]  # the stable link names the same lines


def test_planted_wrong_range_and_commit_are_refused():
    ex = _example()
    shifted = dict(ex, lo=str(int(ex["lo"]) - 100), hi=str(int(ex["hi"]) - 100))
    assert problems(shifted) and "do not hold" in problems(shifted)[0]
    head = _git("rev-parse", "--short", "HEAD").strip()
    assert problems(dict(ex, commit=head)) and "is not the commit" in problems(dict(ex, commit=head))[0]
