"""Format and lint: ``ruff format --check`` and ``ruff check`` on the repository, with the
configuration of ``pyproject.toml`` (line length 120; docs/design.md §8.10). Running them here
puts them in ``.ci/run``, which runs the README's test command verbatim.

Planted: a file with an unused import and one formatted otherwise must make each command fail.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _ruff(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    exe = shutil.which("ruff") or str(pathlib.Path(sys.executable).with_name("ruff"))
    return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_ruff_check_passes():
    r = _ruff("check", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format_check_passes():
    r = _ruff("format", "--check", ".")
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize(
    "command,source",
    [
        (("check", "."), "import os\n"),  # F401: unused import
        (("format", "--check", "."), "x = {  'a':1 }\n"),  # not in ruff's format
    ],
)
def test_planted_style_error_is_caught(tmp_path, command, source):
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "bad.py").write_text(source)
    assert _ruff(*command, cwd=tmp_path).returncode != 0
