"""The repository's vector files (vectors/, docs/vectors.md): current, well-formed, usable without Python.

- **Current**: the files are regenerated from the installed reference into a temporary folder
  and compared with the committed ones (``stale``); a stale folder fails with the command that
  regenerates it. Numbers are compared to 1e-12 relative (``SAME_RTOL``), not bit for bit: a
  solver's last bits may differ between machines (BLAS, CPU), and 1e-12 is a thousandth of the
  files' own stage tolerance (1e-9), so a file within it passes and fails the same
  implementations. Strings, integers, keys, the vector order and the file set must be equal.
- **Well-formed** (the linter a CI runs): every committed file satisfies the JSON Schema
  ``audits/validation/schema/userdp-vectors-1.json`` by ``jsonschema`` (an independent
  validator, test-only), and ``vectors.load``'s consistency checks (ids, counts, flags, datasets).
- **Sourced**: every file names the reference's version and the command that wrote it.

Each check has a planted fault that it catches: a stale number, a missing and an extra file, a
malformed file of each kind.
"""

from __future__ import annotations

import json
import pathlib
import shutil

import jsonschema
import pytest

from userdp.audits.validation import vectors as Vec
from userdp.audits.validation.vector_cases import designs

ROOT = pathlib.Path(__file__).parents[1]
VECTORS = ROOT / "vectors"
REGENERATE = "userdp vectors export --out vectors"
SAME_RTOL = 1e-12  # a thousandth of the files' stage tolerance (1e-9): see the module docstring


# ------------------------------------------------------------------ staleness
def _same(a, b, where: str) -> str | None:
    """None if the two parsed JSON values are the same (numbers to ``SAME_RTOL``), else where they differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return f"{where}: keys {list(a)} != {list(b)}"
        for k in a:
            why = _same(a[k], b[k], f"{where}/{k}")
            if why:
                return why
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items != {len(b)}"
        for j, (x, y) in enumerate(zip(a, b)):
            why = _same(x, y, f"{where}/{j}")
            if why:
                return why
        return None
    if isinstance(a, float) and isinstance(b, float):
        if a == b or abs(a - b) <= SAME_RTOL * max(1.0, abs(a), abs(b)):
            return None
        return f"{where}: {a!r} != {b!r}"
    if type(a) is not type(b) or a != b:
        return f"{where}: {a!r:.80} != {b!r:.80}"
    return None


def stale(committed: pathlib.Path, fresh: pathlib.Path) -> list[str]:
    """What differs between a committed vector folder and a freshly exported one (empty: current)."""
    have = {p.name for p in committed.glob("*.json")}
    want = {p.name for p in fresh.glob("*.json")}
    out = [f"missing: {n}" for n in sorted(want - have)] + [f"not generated: {n}" for n in sorted(have - want)]
    for name in sorted(have & want):
        a, b = (committed / name).read_bytes(), (fresh / name).read_bytes()
        if a != b:
            why = _same(json.loads(a), json.loads(b), name)
            if why:
                out.append(why)
    return out


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("fresh-vectors")
    Vec.export(None, out)
    return out


def test_the_committed_vector_files_are_current(fresh):
    problems = stale(VECTORS, fresh)
    assert not problems, f"vectors/ is stale; regenerate it with: {REGENERATE}\n" + "\n".join(problems[:20])


def test_a_stale_folder_is_caught(fresh, tmp_path):
    """Planted: a number moved by 1e-9 relative (the files' tolerance), a file removed, a file added."""
    shutil.copytree(fresh, tmp_path / "v")
    assert stale(tmp_path / "v", fresh) == []
    path = tmp_path / "v" / "epasto2020.wa.json"
    doc = json.loads(path.read_text())
    valid = next(v for v in doc["vectors"] if v["result"] == "valid")
    valid["expected"]["noise_scale"] *= 1 + 1e-9
    path.write_text(json.dumps(doc))
    (tmp_path / "v" / "amin2019.capped-sum.json").unlink()
    (tmp_path / "v" / "retired.algorithm.json").write_text("{}")
    problems = stale(tmp_path / "v", fresh)
    assert "missing: amin2019.capped-sum.json" in problems
    assert "not generated: retired.algorithm.json" in problems
    assert any(p.startswith(f"epasto2020.wa.json/vectors/{valid['id'] - 1}/expected/noise_scale") for p in problems)


def test_a_shift_below_the_comparison_rtol_is_not_stale(fresh, tmp_path):
    """Bits a solver may move between machines (1e-14 relative) do not make a folder stale."""
    shutil.copytree(fresh, tmp_path / "v")
    path = tmp_path / "v" / "epasto2020.wa.json"
    doc = json.loads(path.read_text())
    next(v for v in doc["vectors"] if v["result"] == "valid")["expected"]["noise_scale"] *= 1 + 1e-14
    path.write_text(json.dumps(doc))
    assert stale(tmp_path / "v", fresh) == []


def test_every_file_carries_its_source():
    from importlib.metadata import version

    files = sorted(VECTORS.glob("*.json"))
    assert sorted(p.stem for p in files) == sorted(designs())
    for p in files:
        doc = json.loads(p.read_text())
        assert doc["generator"] == f"userdp {version('userdp')}: {Vec.GENERATOR_COMMAND}", p.name
        assert doc["reference"].startswith("userdp.reference."), p.name


# ------------------------------------------------------------------ the linter
SCHEMA = jsonschema.Draft202012Validator(Vec.load_schema())


def lint(doc) -> list[str]:
    """Every fault of a parsed vector file: the JSON Schema's (jsonschema) and ``vectors``' own checks."""
    out = [f"/{'/'.join(map(str, e.absolute_path))}: {e.message:.200}" for e in SCHEMA.iter_errors(doc)]
    try:
        Vec.check_document(doc)
    except (TypeError, ValueError) as exc:
        out.append(str(exc))
    return out


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(Vec.load_schema())


@pytest.mark.parametrize("path", sorted(VECTORS.glob("*.json")), ids=lambda p: p.stem)
def test_every_committed_file_passes_the_linter(path):
    assert lint(json.loads(path.read_text(encoding="utf-8"))) == []


MALFORMED = {
    "no tolerance": lambda d: d.pop("tolerance"),
    "a loosened tolerance": lambda d: d["tolerance"].update(rtol=1e-6),
    "an unknown field": lambda d: d.update(source="elsewhere"),
    "a count that is a string": lambda d: d.update(numberOfVectors=str(d["numberOfVectors"])),
    "a valid vector without expected": lambda d: next(v for v in d["vectors"] if v["result"] == "valid").pop(
        "expected"
    ),
    "a negative user id": lambda d: d["vectors"][0]["dataset"]["user_ids"].__setitem__(0, -1),
    "a non-finite spelled wrongly": lambda d: d["vectors"][0]["params"].update(epsilon={"nonfinite": "infinity"}),
    "an empty vector list": lambda d: d.update(vectors=[]),
}


@pytest.mark.parametrize("fault", sorted(MALFORMED))
def test_the_linter_catches_a_planted_malformed_file(fault):
    bad = json.loads((VECTORS / "wilson2020.count.json").read_text())  # a small file: the linter is fast on it
    assert lint(bad) == []
    MALFORMED[fault](bad)
    assert next(SCHEMA.iter_errors(bad), None) is not None, f"{fault}: the JSON Schema alone must reject it"
