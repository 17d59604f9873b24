"""Every package of the source tree is installed: each folder of ``reference/``, ``properties/`` and
``audits/`` that holds an ``__init__.py`` is in ``pyproject.toml``'s ``[tool.setuptools] packages``
(an editable install finds a missing one, a wheel would not: a new paper's
``audits/papers/<paper>/`` would vanish from a regular install), and nothing listed is missing.

Oracle: the folders on disk against the TOML file (``tomllib``). Planted: a folder not listed is
reported.
"""

from __future__ import annotations

import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def packages_on_disk() -> set[str]:
    out = set()
    for top in ("reference", "properties", "audits"):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT).parts
            out.add(".".join(("userdp",) + rel))
    return out


def listed() -> set[str]:
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])


def unlisted(on_disk: set[str], packages: set[str]) -> list[str]:
    return sorted(on_disk - packages)


def test_every_package_folder_is_listed_and_every_listed_package_exists():
    assert unlisted(packages_on_disk(), listed()) == []
    assert sorted(listed() - packages_on_disk()) == []


def test_a_planted_unlisted_folder_is_reported():
    assert unlisted(packages_on_disk() | {"userdp.audits.papers.unlisted2099"}, listed()) == [
        "userdp.audits.papers.unlisted2099"
    ]
