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
- **Any language**: a Node.js checker (examples/js/check_vectors.js) that reads a vector file
  alone passes the JS implementations of examples/js and fails their buggy variants on vectors
  flagged with the bug's class, agreeing vector by vector with ``userdp vectors check``.

Each check has a planted fault that it catches: a stale number, a missing and an extra file, a
malformed file of each kind, a tampered expected value, a buggy implementation.

Node.js: without ``node`` the JS tests skip with that reason on a developer's machine, and FAIL
when the environment variable ``CI`` is set (a CI must not pass them by not running them).
"""

from __future__ import annotations

import copy
import json
import math
import os
import pathlib
import shutil
import subprocess

import jsonschema
import numpy as np
import pytest

from userdp.audits.cli import main as cli
from userdp.audits.validation import vectors as Vec
from userdp.audits.validation.vector_cases import designs

ROOT = pathlib.Path(__file__).parents[1]
VECTORS = ROOT / "vectors"
REGENERATE = "userdp vectors export --out vectors"
SAME_RTOL = 1e-12  # a thousandth of the files' stage tolerance (1e-9): see the module docstring

NODE = shutil.which("node")
JS = ROOT / "examples" / "js"
CHECKER = JS / "check_vectors.js"


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
    "a statistical false alarm above 1e-4": lambda d: d["statistical"][0]["tests"].update(false_alarm=2e-4),
    "a statistical vector without its seeds": lambda d: d["statistical"][0].pop("seeds"),
    "a noise family the files do not define": lambda d: d["statistical"][0]["law"].update(family="cauchy"),
    "a statistical vector with a non-positive scale": lambda d: d["statistical"][0]["law"]["D"].update(scale=0.0),
    "an empty statistical list": lambda d: d.update(statistical=[]),
    "statistical vectors that are not a list": lambda d: d.update(statistical=None),
}

# faults the JSON Schema cannot see, which ``vectors.load`` (``check_document``) refuses, naming the field
INCONSISTENT = {
    "a statistical count that is not the number of statistical vectors": (
        lambda d: d.update(numberOfStatisticalVectors=2),
        "/numberOfStatisticalVectors",
    ),
    "a false alarm below the sum of its tests' rates": (
        lambda d: d["statistical"][0]["tests"].update(false_alarm=1e-5),
        "/statistical/0/tests/false_alarm",
    ),
    "an accept range upside down": (
        lambda d: d["statistical"][0]["tests"]["privacy"]["accept"].update(D=[300, 200]),
        "/statistical/0/tests/privacy/accept/D",
    ),
    "a statistical note beside statistical vectors": (
        lambda d: d.update(statisticalNote="none here"),
        "/statisticalNote",
    ),
    "a statistical flag not described": (
        lambda d: d["statistical"][0]["flags"].append("weight-formula"),
        "/statistical/0/flags",
    ),
}


@pytest.mark.parametrize("fault", sorted(INCONSISTENT))
def test_the_loader_catches_an_inconsistent_statistical_vector(fault):
    bad = json.loads((VECTORS / "wilson2020.count.json").read_text())
    assert "statistical" in bad and lint(bad) == []
    change, field = INCONSISTENT[fault]
    change(bad)
    with pytest.raises(ValueError, match=field):
        Vec.check_document(bad)


@pytest.mark.parametrize("fault", sorted(MALFORMED))
def test_the_linter_catches_a_planted_malformed_file(fault):
    bad = json.loads((VECTORS / "wilson2020.count.json").read_text())  # a small file: the linter is fast on it
    assert lint(bad) == []
    MALFORMED[fault](bad)
    assert next(SCHEMA.iter_errors(bad), None) is not None, f"{fault}: the JSON Schema alone must reject it"


# ------------------------------------------------------------------ a CI in another language
def _need_node():
    if NODE is None:
        if os.environ.get("CI"):
            pytest.fail("Node.js is not installed, and CI is set: the any-language vector checks must run in CI")
        pytest.skip("Node.js is not installed: examples/js/check_vectors.js needs it")


def node_check(vector_file: pathlib.Path, implementation: str) -> tuple[int, dict]:
    _need_node()
    got = subprocess.run(
        [NODE, str(CHECKER), str(vector_file), str(JS / implementation), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return got.returncode, (json.loads(got.stdout) if got.stdout.strip() else {"stderr": got.stderr})


JS_EXAMPLES = [
    ("amin2019.capped-sum", "capped_sum.js", None),
    ("amin2019.capped-sum", "capped_sum_per_record_cap.js", "per-record-bound"),
    ("epasto2020.wa", "wa.js", None),
    ("epasto2020.wa", "wa_mean_user_weight_noise.js", "understated-sensitivity"),
]
# samplers with every noise-free stage right: only the statistical vectors can fail them
JS_SAMPLERS = [
    ("amin2019.capped-sum", "capped_sum_half_scale.js"),
    ("amin2019.capped-sum", "capped_sum_uniform_noise.js"),
]


@pytest.mark.parametrize("algorithm,program,flag", JS_EXAMPLES, ids=[e[1] for e in JS_EXAMPLES])
def test_the_node_checker_passes_the_correct_program_and_catches_the_bug(algorithm, program, flag):
    code, doc = node_check(VECTORS / f"{algorithm}.json", program)
    assert doc.get("algorithm") == algorithm, doc
    assert doc["checked"] >= 1 and doc["checked"] == doc["passed"] + doc["failed"] + len(doc["statistical"])
    assert (
        len(doc["statistical"]) == json.loads((VECTORS / f"{algorithm}.json").read_text())["numberOfStatisticalVectors"]
    )  # the program releases: every statistical vector ran
    if flag is None:
        assert code == 0 and doc["verdict"] == "pass" and doc["failed"] == 0, doc
        assert all(r["verdict"] == "pass" for r in doc["statistical"]), doc["statistical"]
        return
    assert code == 1 and doc["verdict"] == "fail", doc
    assert any(flag in v["flags"] for v in doc["results"] if v["verdict"] == "fail"), doc


@pytest.mark.parametrize(
    "algorithm,program",
    [pytest.param(*JS_SAMPLERS[0], marks=pytest.mark.slow), JS_SAMPLERS[1]],
    ids=[e[1] for e in JS_SAMPLERS],
)
def test_a_wrong_sampler_passes_every_deterministic_vector_and_fails_the_statistical_ones(algorithm, program):
    """Planted: capped_sum.js with half the Laplace scale (by default through the docs' example, below), and
    with uniform noise of the right variance. The stages are right, so every deterministic vector passes; each
    statistical vector fails, on both tests."""
    code, doc = node_check(VECTORS / f"{algorithm}.json", program)
    assert code == 1 and doc["verdict"] == "fail", doc
    assert doc["failed"] == 0 and doc["passed"] == doc["vectors"], doc["results"]
    assert doc["statistical"] and all(r["verdict"] == "fail" for r in doc["statistical"]), doc["statistical"]
    for r in doc["statistical"]:
        assert any("distribution: D_n" in why for why in r["reasons"]) and any(
            "privacy:" in why for why in r["reasons"]
        )
        assert r["false_alarm"] <= 1e-4


@pytest.mark.parametrize(
    "algorithm,program,flag",
    JS_EXAMPLES + [pytest.param(*JS_SAMPLERS[0], "noise-distribution", marks=pytest.mark.slow)],
    ids=[e[1] for e in JS_EXAMPLES] + [JS_SAMPLERS[0][1]],
)
def test_the_node_checker_agrees_with_userdp_vectors_check(capsys, algorithm, program, flag):
    """Vector by vector, the Node.js checker's outcome is ``userdp vectors check``'s on the same program."""
    code, doc = node_check(VECTORS / f"{algorithm}.json", program)
    argv = [
        "vectors",
        "check",
        algorithm,
        "--command",
        f"{NODE} {JS / program}",
        "--file",
        str(VECTORS / f"{algorithm}.json"),
    ]
    cli.main([*argv, "--json"])
    ref = json.loads(capsys.readouterr().out)
    theirs = {r["id"]: r["verdict"] for r in ref["results"]}
    ours = {r["id"]: r["verdict"] for r in doc["results"]}
    assert ours == theirs
    # the statistical vectors too (both draw with their own seeds: each errs with probability <= 1e-4)
    assert {r["id"]: r["verdict"] for r in doc["statistical"]} == {r["id"]: r["verdict"] for r in ref["statistical"]}


def test_the_node_checker_applies_the_files_tolerance(tmp_path):
    """Planted in the file: an expected value moved by 1e-8 relative (10 x rtol) fails the correct
    program; moved by 1e-11 (a hundredth of rtol) it still passes."""
    doc = json.loads((VECTORS / "epasto2020.wa.json").read_text())
    v = next(v for v in doc["vectors"] if v["result"] == "valid")
    for shift, want in ((1e-8, 1), (1e-11, 0)):
        bad = copy.deepcopy(doc)
        w = next(x for x in bad["vectors"] if x["id"] == v["id"])
        w["expected"]["statistic"] += shift * max(1.0, abs(w["expected"]["statistic"]))  # the rule's own scale
        (tmp_path / "wa.json").write_text(json.dumps(bad))
        code, out = node_check(tmp_path / "wa.json", "wa.js")
        assert code == want, (shift, out)
        if want:
            (fail,) = [r for r in out["results"] if r["verdict"] == "fail"]
            assert fail["id"] == v["id"] and "statistic" in " ".join(fail["reasons"]) and math.isfinite(out["failed"])


def test_the_node_checker_refuses_a_file_with_nothing_to_check(tmp_path):
    """A program with none of the file's stages and no release: nothing checked is not a pass (exit 2)."""
    doc = json.loads((VECTORS / "epasto2020.wa.json").read_text())
    code, out = node_check(VECTORS / "epasto2020.wa.json", "capped_sum.js")
    assert code == 1  # capped_sum.js answers WA's vectors with its own statistic: wrong, and caught
    (tmp_path / "none.js").write_text("module.exports = { name: 'none', stages: {} };\n")
    _need_node()
    got = subprocess.run(
        [NODE, str(CHECKER), str(VECTORS / "epasto2020.wa.json"), str(tmp_path / "none.js")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert got.returncode == 2 and "nothing to check" in got.stderr, got
    assert doc["numberOfVectors"] >= 1


def test_the_docs_show_what_the_node_checker_prints():
    """docs/vectors.md's "CI in any language" example: its command, run, ends with the line the page
    shows, and its first failing stage is the sensitivity the page quotes (0.02 against 0.0253)."""
    _need_node()
    page = (ROOT / "docs" / "vectors.md").read_text()
    section = page.split("## The files, and a CI in any language")[1].split("\n## ")[0]
    command = section.split("```sh\n")[1].split("\n```")[0]
    shown = section.split("```text\n")[1].split("\n```")[0]
    assert command.startswith("node examples/js/check_vectors.js ")
    got = subprocess.run([NODE, *command.split()[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert got.returncode == 1, got.stderr
    lines = got.stdout.splitlines()
    assert lines[-1] == shown
    first = next(ln for ln in lines if ln.strip().startswith("sensitivity got"))
    assert first.strip().startswith("sensitivity got 0.02, expected 0.02526") and "0.0253" in section


def test_the_docs_show_what_the_node_checker_prints_on_a_wrong_sampler():
    """docs/vectors.md's statistical example: its command, run, ends with the line the page shows, which says
    that the half-scale sampler passes every deterministic vector and fails every statistical one."""
    _need_node()
    section = (ROOT / "docs" / "vectors.md").read_text().split("## Statistical vectors")[1].split("\n## ")[0]
    command = section.split("```sh\n")[1].split("\n```")[0]
    shown = section.split("```text\n")[1].split("\n```")[0]
    assert command.startswith("node examples/js/check_vectors.js ") and "half_scale" in command
    got = subprocess.run([NODE, *command.split()[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert got.returncode == 1, got.stderr
    assert got.stdout.splitlines()[-1] == shown
    assert shown.endswith("FAIL (9 passed, 0 failed, 0 skipped of 9; statistical: 0 passed, 2 failed)")


def test_the_node_checkers_law_and_statistic_are_the_files():
    """The JS CDFs and KS statistic against an independent evaluation (scipy's ``kstest`` on the same
    sample): equal to 1e-6 (the JS erfc's 1.2e-7 relative error, far below any critical value)."""
    from scipy import stats

    _need_node()
    x = np.random.default_rng(3).laplace(0.3, 2.0, 500).tolist()
    script = (
        f"const C = require({json.dumps(str(CHECKER))}); const x = {json.dumps(x)};"
        "process.stdout.write(JSON.stringify([C.ksStatistic(x, 'laplace', {location: 0.3, scale: 2}),"
        " C.ksStatistic(x, 'gaussian', {location: 0.3, scale: 2}), C.erfc(-1.5), C.erfc(0.2), C.erfc(3)]));"
    )
    got = json.loads(subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=60).stdout)
    want = [
        stats.kstest(x, stats.laplace(0.3, 2.0).cdf).statistic,
        stats.kstest(x, stats.norm(0.3, 2.0).cdf).statistic,
        *(math.erfc(z) for z in (-1.5, 0.2, 3.0)),
    ]
    assert np.allclose(got, want, rtol=1e-6, atol=1e-7), (got, want)


# ------------------------------------------------------------------ intermediate values (Epasto's h* and n_h)
def _v(h, s, sigma, B, eps, noise_factor=2.0):
    """Claim 1's v(h) from its definition, for an array of h (this file's own evaluation: the oracle)."""
    mins = np.minimum(h[:, None], s[None, :])
    nh = mins.sum(axis=1)
    return sigma**2 * (mins**2 / s).sum(axis=1) / nh**2 + noise_factor * (B * h / (eps * nh)) ** 2


def h_star_is_the_minimiser(h, s, sigma, B, eps, noise_factor=2.0) -> bool:
    """Brute force: h lies in [min s, max s] and v(h) is at most v's minimum over a grid of 20,001 points
    of that range and the sizes themselves. The true minimiser passes whatever the grid (no point is
    below the minimum; 1e-9 relative covers rounding); a wrong h fails once v(h) exceeds the grid's
    minimum, within about (40 / 20,000)^2 of the true one on these sizes (at most 40)."""
    grid = np.r_[np.linspace(s.min(), s.max(), 20_001), np.unique(s).astype(float)]
    best = _v(grid, s, sigma, B, eps, noise_factor).min()
    here = _v(np.array([h]), s, sigma, B, eps, noise_factor)[0]
    return bool(s.min() <= h <= s.max() and here <= best * (1 + 1e-9))


def _wa_valid_vectors():
    doc = json.loads((VECTORS / "epasto2020.wa.json").read_text())
    for v in doc["vectors"]:
        if v["result"] == "valid":
            s = np.bincount(np.asarray(v["dataset"]["user_ids"]))
            s = s[s > 0].astype(float)
            p = v["params"]
            sigma = p["B"] / 2 if p.get("sigma") is None else p["sigma"]
            yield v, s, sigma, p["B"], p["epsilon"]


def test_epasto_intermediates_are_claim_1s_minimiser_and_lemma_3s_normaliser():
    """Every valid WA vector carries h* (checked by brute force on Claim 1's v) and n_h = sum_l min(h*, s_l),
    and its expected weights are Lemma 3's min(h*, s_q) / (s_q n_h) at them: the values locate a mismatch."""
    seen = 0
    for v, s, sigma, B, eps in _wa_valid_vectors():
        h, nh = v["intermediate"]["h_star"], v["intermediate"]["n_h"]
        assert h_star_is_the_minimiser(h, s, sigma, B, eps), v["id"]
        assert nh == pytest.approx(np.minimum(h, s).sum(), rel=1e-12)
        ids = np.asarray(v["dataset"]["user_ids"])
        sizes = np.bincount(ids)[ids]
        np.testing.assert_allclose(v["expected"]["weights"], np.minimum(h, sizes) / (sizes * nh), rtol=1e-12)
        seen += 1
    assert seen >= 3


def test_a_planted_wrong_h_star_is_caught():
    """Planted: h* minimising v without the noise term's factor 2 (eps-DP Laplace variance 2 b^2 read as
    b^2): on the two vectors whose h* lies strictly between sizes, the brute-force check rejects it."""
    caught = 0
    for v, s, sigma, B, eps in _wa_valid_vectors():
        grid = np.linspace(s.min(), s.max(), 20_001)
        wrong = float(grid[np.argmin(_v(grid, s, sigma, B, eps, noise_factor=1.0))])
        caught += not h_star_is_the_minimiser(wrong, s, sigma, B, eps)
    assert caught == 2
