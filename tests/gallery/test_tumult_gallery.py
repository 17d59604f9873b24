"""Tumult Analytics in the validate gallery, in an environment of its own (``examples/tumult/``;
docs/validate.md, "Tumult Analytics, in an environment of its own").

Tumult cannot share the test environment (tmlt.core 0.19.1 needs numpy < 2 and pyarrow < 19; the
gallery extra pins pyarrow 26.0.1 on numpy 2), so it is not imported here. The default run checks,
without Tumult, that ``examples/tumult/requirements.txt`` pins every package and pins what the docs
say. The validate runs need the Tumult venv (``examples/tumult/run.sh`` builds it, ~1.1 GB, Java on
PATH) and are slow (Spark): they skip, saying why, when the venv or Java is absent. The venv is
``$USERDP_TUMULT_VENV``, else ``.venv-tumult`` at the repository's root (run.sh's default).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REQUIREMENTS = REPO / "examples" / "tumult" / "requirements.txt"
DOC = REPO / "docs" / "validate.md"
SECTION = "### Tumult Analytics, in an environment of its own"
# the pins the docs name and the reason for the separate environment (tmlt.core's bounds)
KEY = ("tmlt.analytics", "tmlt.core", "pyspark", "numpy", "pandas", "pyarrow")
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([0-9][A-Za-z0-9.]*)$")


def pins(lines) -> dict[str, str]:
    """{name: version} of a requirements file's lines; every non-comment line must be ``name==version``."""
    out = {}
    for i, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _PIN.match(line)
        if m is None:
            raise ValueError(f"line {i}: {raw.strip()!r} is not pinned as name==version")
        out[m.group(1).lower()] = m.group(2)
    return out


def doc_pins() -> dict[str, str]:
    text = DOC.read_text()
    assert SECTION in text, f"docs/validate.md has no section {SECTION!r}"
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    return {n.lower(): v for n, v in re.findall(r"`([A-Za-z0-9_.\-]+)==([0-9][A-Za-z0-9.]*)`", body)}


def test_requirements_pin_every_package_and_what_the_docs_say():
    req = pins(REQUIREMENTS.read_text().splitlines())
    docs = doc_pins()
    assert set(KEY) <= set(docs), f"the docs' Tumult section names no pin for {sorted(set(KEY) - set(docs))}"
    assert {n: req.get(n) for n in docs} == docs
    # the reason for the separate environment: the gallery extra's pins clash with Tumult's
    gallery = pins(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["gallery"])
    assert gallery["pyarrow"] != req["pyarrow"] and int(req["numpy"].split(".")[0]) < 2
    # the wrapper's VERSION is the pinned one (read from its source: tmlt is not importable here)
    src = (REPO / "examples" / "tumult" / "gallery_tumult.py").read_text()
    assert re.search(r'^VERSION = "([^"]+)"', src, re.M).group(1) == req["tmlt.analytics"]
    # planted: an unpinned line is refused, naming it
    with pytest.raises(ValueError, match="numpy<2"):
        pins(["tmlt.analytics==0.21.0", "numpy<2"])


def _venv() -> Path:
    venv = Path(os.environ.get("USERDP_TUMULT_VENV", REPO / ".venv-tumult"))
    if not (venv / "bin" / "python").exists():
        pytest.skip(f"no Tumult venv at {venv} (build it with examples/tumult/run.sh, or set USERDP_TUMULT_VENV)")
    if shutil.which("java") is None:
        pytest.skip("no java on PATH (pyspark needs it)")
    return venv


def _validate(venv: Path, target: str, *extra: str) -> tuple[int, str]:
    python = str(venv / "bin" / "python")
    env = {**os.environ, "PYSPARK_PYTHON": python, "PYSPARK_DRIVER_PYTHON": python}
    cmd = [python, "-m", "userdp.audits.cli.main", "validate", "wilson2020.sum", target, *extra]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=7200)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow
def test_tumult_noise_scale_stage_passes():
    """Tumult's ``_noise_info`` scale equals L0 Linf max|v| / eps on every case: exit 4 (pass on the
    stages only). Measured 134 s on the loaded machine (docs/validate.md)."""
    code, out = _validate(_venv(), "examples.tumult.gallery_tumult:TUMULT_NOISE")
    assert code == 4 and "verdict: PASS (stages only" in out, out[-3000:]
