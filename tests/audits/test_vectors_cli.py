"""``userdp vectors`` at the command line, and the usage errors shared with ``validate`` and ``audit``.

- a vector file is checked against its JSON Schema (audits/validation/schema/userdp-vectors-1.json)
  by the package's own checker, compared here with ``jsonschema``: a malformed file is exit 2,
  naming the field (a "stages" that is a string, a tolerance of 1e300, no vectors, ...);
- nothing checked is never a pass: a program with none of the file's stages and no release is
  exit 2, and ``vectors.check`` grades such a run "nothing checked";
- ``vectors check`` runs under the supervisor (audits/cli/supervise.py): a program's ``setsid()``
  child does not outlive the command, and after SIGTERM a program in the middle of a request is
  gone (tests/audits/setsid_program.py);
- usage errors name the option (exit 2): an empty or unsplittable ``--command``, a ``--transcript``
  that is a folder or a full device, a missing ``--index`` folder, an endless ``--file``;
- output paths are made absolute before the target runs: a target that calls ``os.chdir("/")``
  does not move ``--report``;
- a release whose ``__float__`` raises is an error of the target (exit 3), not of userdp.

Each test failed before its fix (the exit status or message it asserts against is in its comment).
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import jsonschema
import pytest

from userdp.audits.cli import main as cli
from userdp.audits.validation import protocol as Pr
from userdp.audits.validation import vectors as Vec
from userdp.audits.validation.settings import STAGE_RTOL
from userdp.properties.amin2019 import CapAdapter

HERE = Path(__file__).parent
GOOD = f"{sys.executable} {HERE / 'protocol_program.py'} good"
USERDP = (
    [str(Path(sys.executable).with_name("userdp"))]
    if Path(sys.executable).with_name("userdp").exists()
    else [sys.executable, "-m", "userdp.audits.cli"]
)
NOTHING = """
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if "hello" in req:
        resp = {"id": req["id"], "hello": {"protocol": 1, "stages": [], "releases": False}}
    else:
        resp = {"id": req["id"], "error": {"kind": "failed", "message": "nothing here"}}
    print(json.dumps(resp), flush=True)
"""


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def doc() -> dict:
    return Vec.build("amin2019.capped-sum")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rindex(b")") + 2 : data.rindex(b")") + 3] != b"Z"


def _wait_for(path: Path, p: subprocess.Popen, timeout: float = 120.0) -> None:
    t = time.monotonic()
    while not path.exists():
        assert p.poll() is None, p.communicate()[1].decode()
        assert time.monotonic() - t < timeout, f"{path} never appeared"
        time.sleep(0.05)


# ------------------------------------------------------------------ nothing checked is not a pass
def test_a_program_with_nothing_to_check_is_exit_2_not_pass(capsys, tmp_path):
    # Before: "verdict: PASS", exit 0, with all 9 vectors skipped.
    (tmp_path / "nothing.py").write_text(NOTHING)
    code, out, err = run(
        capsys, "vectors", "check", "amin2019.capped-sum", "--command", f"{sys.executable} {tmp_path / 'nothing.py'}"
    )
    assert code == 2, (out, err)
    assert "PASS" not in out and "nothing to check" in err and "no stage and no release" in err, err


def test_a_check_with_every_vector_skipped_is_graded_nothing_checked(doc):
    # Planted: an Adapter with no stage and no release; before, CheckReport.verdict was "pass".
    assert Vec.checkable(doc, CapAdapter("none")) == 0
    r = Vec.check(doc, CapAdapter("none"))
    assert r.verdict == "nothing checked" and r.checked == 0 and r.to_dict()["checked"] == 0
    assert "NOTHING CHECKED" in Vec.format_check(r) and "not a pass" in Vec.format_check(r)
    from userdp.audits.papers.amin2019 import vectors  # noqa: F401  (the design is registered)
    from userdp.audits.validation.vector_cases import designs

    ref = designs()["amin2019.capped-sum"].reference()
    assert Vec.check(doc, ref).verdict == "pass"
    assert Vec.checkable(doc, ref) == len(doc["vectors"]) + len(doc["statistical"])  # it releases: all of them


# ------------------------------------------------------------------ malformed files: exit 2, naming the field
def _set(path: tuple, value):
    def change(d):
        target = d
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value

    return change


def _no_vectors(d):
    d["vectors"], d["numberOfVectors"] = [], 0


MALFORMED = {
    # name: (change, words in the error, a schema fault (jsonschema agrees) or a fault of consistency)
    "stages-a-string": (_set(("stages",), "statistic"), "/stages: expected object", True),
    "tolerance-1e300": (_set(("tolerance", "rtol"), 1e300), "/tolerance/rtol: must be <= 1e-09", True),
    "tolerance-negative": (_set(("tolerance", "rtol"), -1.0), "/tolerance/rtol: must be >= 0", True),
    "no-vectors": (_no_vectors, "/numberOfVectors: must be >= 1", True),
    "flags-a-string": (_set(("vectors", 0, "flags"), "per-record-bound"), "/vectors/0/flags: expected array", True),
    "result-unknown": (_set(("vectors", 0, "result"), "maybe"), "/vectors/0", True),
    "expected-a-list": (_set(("vectors", 0, "expected"), [1.0]), "/vectors/0/expected: expected object", True),
    "stage-not-the-algorithms": (
        _set(("stages", "weights"), {"params": [], "dataset": True}),
        "/stages names ['weights'], which amin2019.capped-sum does not have",
        False,
    ),
    "count-wrong": (_set(("numberOfVectors",), 99), "/numberOfVectors: is 99", False),
    "stage-unknown": (
        _set(("vectors", 0, "expected", "weights"), 1.0),
        "/vectors/0/expected: stage(s) ['weights']",
        False,
    ),
    "dataset-ragged": (
        _set(("vectors", 0, "dataset"), {"values": [1.0, 2.0], "user_ids": [0]}),
        "/vectors/0/dataset: not a dataset",
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_vector_file_is_exit_2_naming_the_field(capsys, tmp_path, doc, name):
    # Before: "stages" as a string or a tolerance of 1e300 gave PASS (nothing compared, or
    # everything equal); no vectors gave PASS; the others an internal error (exit 3).
    change, words, schema_fault = MALFORMED[name]
    bad = copy.deepcopy(doc)
    change(bad)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    code, out, err = run(capsys, "vectors", "check", "amin2019.capped-sum", "--command", GOOD, "--file", str(path))
    assert code == 2, (out, err)
    assert "--file" in err and words in err, err
    assert "internal error" not in err and "PASS" not in out
    oracle = jsonschema.Draft202012Validator(Vec.load_schema())
    assert oracle.is_valid(bad) is not schema_fault, name  # the package's checker agrees with jsonschema


def test_the_vector_schema_holds_every_exported_file_and_shares_the_protocol_definitions(doc):
    schema = Vec.load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(json.loads(json.dumps(doc)))
    assert schema["properties"]["tolerance"]["properties"]["rtol"]["maximum"] == STAGE_RTOL
    protocol = Pr.load_schema()["$defs"]
    for name in ("dataset", "ids", "params", "param", "nonfinite"):
        assert schema["$defs"][name] == protocol[name], name


def test_an_endless_file_is_refused_unread(capsys):
    # Before: /dev/zero was read whole (memory without bound) and ended in an internal error.
    t = time.monotonic()
    code, _, err = run(capsys, "vectors", "check", "amin2019.capped-sum", "--command", GOOD, "--file", "/dev/zero")
    assert code == 2 and "--file /dev/zero" in err and f"longer than {Vec.MAX_FILE_BYTES} bytes" in err, err
    assert time.monotonic() - t < 30


# ------------------------------------------------------------------ supervision
def _userdp(folder: Path, mode: str, *extra) -> subprocess.Popen:
    cmd = f"{sys.executable} {HERE / 'setsid_program.py'} {mode} {folder}"
    return subprocess.Popen(
        [*USERDP, "vectors", "check", "amin2019.capped-sum", "--command", cmd, *extra],
        cwd=folder,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_a_programs_setsid_child_does_not_outlive_vectors_check(tmp_path):
    # Before (unsupervised): the grandchild, in its own session, slept on after userdp exited.
    p = _userdp(tmp_path, "leave")
    try:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 1, err.decode()  # its sensitivity of 1.0 is wrong on some vectors
        grandchild = int((tmp_path / "grandchild").read_text())
        t = time.monotonic()
        while _alive(grandchild) and time.monotonic() - t < 5:
            time.sleep(0.05)
        assert not _alive(grandchild), "the program's setsid() child outlived userdp vectors check"
    finally:
        for name in ("grandchild", "program"):
            if (tmp_path / name).exists() and _alive(int((tmp_path / name).read_text())):
                os.kill(int((tmp_path / name).read_text()), signal.SIGKILL)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)


def test_sigterm_ends_a_program_in_the_middle_of_a_request(tmp_path):
    # Before: after SIGTERM, userdp died and the program (sleeping in its request) and its
    # setsid() child ran on.
    p = _userdp(tmp_path, "hang", "--timeout", "600")
    try:
        _wait_for(tmp_path / "hanging", p)
        pids = [int((tmp_path / n).read_text()) for n in ("program", "grandchild")]
        os.kill(p.pid, signal.SIGTERM)
        assert p.wait(timeout=10) == 143
        t = time.monotonic()
        while any(_alive(q) for q in pids) and time.monotonic() - t < 2.0:
            time.sleep(0.02)
        assert not any(_alive(q) for q in pids), [q for q in pids if _alive(q)]
    finally:
        for name in ("grandchild", "program"):
            if (tmp_path / name).exists() and _alive(int((tmp_path / name).read_text())):
                os.kill(int((tmp_path / name).read_text()), signal.SIGKILL)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.communicate()


# ------------------------------------------------------------------ usage errors: exit 2, naming the option
USAGE = [
    # (argv, the option named, words). Before: "internal error ... a bug in userdp", exit 3, for the
    # empty and unsplittable commands and the full device; a directory --transcript or a missing
    # --index folder failed after the work, with an OSError
    (["validate", "amin2019.capped-sum", "--command", ""], "--command", "--command: empty"),
    (["vectors", "check", "amin2019.capped-sum", "--command", "  "], "--command", "--command: empty"),
    (["validate", "amin2019.capped-sum", "--command", "python3 'x"], "--command", "cannot be split like a shell"),
    (
        ["audit", "--command", 'node "x', "--claim", "pure:epsilon=1", "--pair", "[1]", "[]"],
        "--command",
        "cannot be split like a shell",
    ),
    (
        ["vectors", "check", "amin2019.capped-sum", "--command", GOOD, "--transcript", "{tmp}"],
        "--transcript",
        "is a directory",
    ),
    (
        ["vectors", "check", "amin2019.capped-sum", "--command", GOOD, "--transcript", "/dev/full"],
        "--transcript /dev/full",
        "cannot write it",
    ),
    (
        ["vectors", "export", "amin2019.capped-sum", "--out", "{tmp}", "--index", "{tmp}/no/index.md"],
        "--index",
        "does not exist",
    ),
    (["validate", "amin2019.capped-sum", "x:y", "--report", ""], "--report", "an empty path"),
    (
        ["audit", "--command", GOOD, "--claim", "pure:epsilon=1", "--pair", "[1]", "[]", "--transcript", "/dev/full"],
        "--transcript /dev/full",
        "cannot write it",
    ),
    (
        ["vectors", "export", "amin2019.capped-sum", "--out", "{tmp}", "--index", "/dev/full"],
        "--index /dev/full",
        "cannot write it",
    ),
]


@pytest.mark.parametrize("argv, option, words", USAGE, ids=[f"{a[0]}-{w[:20]}" for a, _, w in USAGE])
def test_usage_errors_exit_2_naming_the_option(capsys, tmp_path, argv, option, words):
    code, out, err = run(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2, (out, err)
    assert option in err and words in err and "internal error" not in err, err


def test_export_creates_its_out_folder(capsys, tmp_path):
    # Before: exit 2, "--out DIR: not a directory".
    out_dir = tmp_path / "new" / "vectors"
    code, out, err = run(capsys, "vectors", "export", "amin2019.capped-sum", "--out", str(out_dir))
    assert code == 0, err
    assert (out_dir / "amin2019.capped-sum.json").is_file() and str(out_dir / "amin2019.capped-sum.json") in out
    assert Vec.load(out_dir / "amin2019.capped-sum.json")["algorithm"] == "amin2019.capped-sum"


# ------------------------------------------------------------------ a target's errors and its working directory
def test_a_release_whose_float_raises_is_the_targets_error(capsys, tmp_path, monkeypatch):
    # Before: "internal error: RuntimeError: no float for you ... a bug in userdp", exit 3.
    (tmp_path / "float_raises_target.py").write_text(
        textwrap.dedent("""
        class Release:
            def __float__(self):
                raise RuntimeError("no float for you")

        def mechanism(dataset, rng, *, T, epsilon):
            return Release()
    """)
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "validate", "amin2019.capped-sum", "float_raises_target:mechanism", "--quick")
    assert code == 3, (out, err)
    assert "internal error" not in err and "bug in userdp" not in err, err
    assert "TARGET float_raises_target:mechanism" in err and "__float__" in err and "no float for you" in err, err


def test_every_path_option_is_made_absolute_at_start(tmp_path, monkeypatch):
    # The cheap half of the test below: start_checks (run by main before any command) resolves
    # each path option against the working directory of the start.
    import argparse

    from userdp.audits.cli.common import PATH_OPTIONS, start_checks

    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(**{name: f"rel-{name}" for name in PATH_OPTIONS}, program=None)
    start_checks(args)
    assert {name: getattr(args, name) for name in PATH_OPTIONS} == {
        name: str(tmp_path / f"rel-{name}") for name in PATH_OPTIONS
    }


@pytest.mark.slow  # a whole validate run in a new process (about 5 s idle, 14 s at a load of 8)
def test_output_paths_are_resolved_before_the_target_runs(tmp_path):
    # Before: the target's os.chdir("/") sent --report rel.json to /rel.json.
    (tmp_path / "chdir_target.py").write_text(
        textwrap.dedent("""
        import os
        import numpy as np
        from userdp.reference import amin2019

        def mechanism(dataset, rng, size, *, T, epsilon):
            os.chdir("/")
            return amin2019.mechanism(dataset, T, epsilon, rng, size=size)
    """)
    )
    assert not os.path.exists("/chdir-rel.json")
    r = subprocess.run(
        [*USERDP, "validate", "amin2019.capped-sum", "chdir_target:mechanism", "--quick", "--report", "chdir-rel.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    try:
        assert r.returncode == 0, r.stderr
        assert json.loads((tmp_path / "chdir-rel.json").read_text())["verdict"] == "pass"
        assert not os.path.exists("/chdir-rel.json")
    finally:
        if os.path.exists("/chdir-rel.json"):
            os.remove("/chdir-rel.json")


# ------------------------------------------------------------------ the verdict is the supervisor's
LIAR = """
import numpy as np
from userdp.audits.validation import findings, report
from userdp.audits.cli import validate as cli_validate

# at import, before any check runs: the grade, the exit status and the message rewritten
findings.ValidationReport.verdict = property(lambda self: "pass")
findings.ValidationReport.verdict_line = lambda self: "PASS"
cli_validate.EXIT_FINDING = 0
_format = report.format_report
report.format_report = lambda r: _format(r).replace("PRIVACY VIOLATION", "PASS")


def mechanism(dataset, rng, size, *, T, epsilon):
    if not (T > 0 and epsilon > 0):
        raise ValueError("T and epsilon must be > 0")
    totals = {}
    for u, x in zip(dataset.user_ids.tolist(), dataset.values.tolist()):
        totals[u] = totals.get(u, 0.0) + x
    return np.full(size, sum(min(t, T) for t in totals.values()))  # no noise at all
"""


def test_a_target_that_rewrites_the_verdict_does_not_get_pass(tmp_path):
    # Before: "verdict: PASS", exit 0, above (and in --report, beside) its own privacy finding.
    (tmp_path / "verdict_liar.py").write_text(LIAR)
    r = subprocess.run(
        [*USERDP, "validate", "amin2019.capped-sum", "verdict_liar:mechanism", "--quick", "--report", "liar.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[1] == "verdict: PRIVACY VIOLATION", r.stdout
    assert "PASS" not in r.stdout
    saved = json.loads((tmp_path / "liar.json").read_text())
    assert saved["verdict"] == "privacy violation" and saved["findings"], saved["verdict"]


def test_the_verdict_is_recomputed_from_the_findings_after_the_json_round_trip(tmp_path, monkeypatch):
    # The supervisor renders what the child sent as JSON (report_from_dict), and validate called from
    # Python takes the same round trip, so both print the same report. A "verdict" field that says
    # "pass" beside a finding (planted: what the liar's child sends) is not read.
    from userdp.audits.validation import run as V
    from userdp.audits.validation.report import format_report, report_from_dict

    (tmp_path / "per_record_cap.py").write_text(
        textwrap.dedent("""
        def capped_sum(dataset, rng, *, T, epsilon):
            if not (T > 0 and epsilon > 0):
                raise ValueError("T and epsilon must be > 0")
            return sum(min(v, T) for v in dataset.values) + rng.laplace(0.0, T / epsilon)
    """)
    )
    monkeypatch.chdir(tmp_path)
    r = V.validate("amin2019.capped-sum", "per_record_cap:capped_sum", quick=True, samples=4000, audit_samples=4000)
    data = json.loads(json.dumps(r.to_dict(), default=lambda o: o.tolist(), allow_nan=True))
    assert format_report(report_from_dict(data, r.elapsed_seconds)) == format_report(r)
    assert r.verdict != "pass"
    forged = {**data, "verdict": "pass", "complete": True}
    assert report_from_dict(forged).verdict == r.verdict
    with pytest.raises(ValueError, match="verdict must be one of"):
        report_from_dict({**data, "findings": [{**data["findings"][0], "verdict": "fine"}]})


def test_a_factor_of_two_reads_as_a_relative_difference_of_one_half(doc):
    # Planted: a noise scale half the reference's. Before, a difference below 1 was printed as the
    # "relative difference" itself (0.0126 for 0.0126 against 0.0252), which reads like rounding.
    from userdp.audits.validation.vector_cases import designs

    ref = designs()["amin2019.capped-sum"].reference()
    half = copy.copy(ref)
    object.__setattr__(half, "noise_scale", lambda *a, **k: ref.noise_scale(*a, **k) / 2)
    r = Vec.check(doc, half)
    reasons = [why for v in r.failed for why in v.reasons if why.startswith("noise_scale")]
    assert r.verdict == "fail" and reasons
    assert all("(relative difference 0.5;" in why for why in reasons), reasons


def test_validate_reports_the_relative_difference_of_a_stage_beside_the_rules_measure(tmp_path, monkeypatch):
    # Planted: the noise scale halved. Before, validate's "largest_relative_difference" was
    # |target - reference| / max(1, |reference|), a plain difference below 1.
    from userdp.audits.validation import run as V

    (tmp_path / "half_noise_scale.py").write_text(
        textwrap.dedent("""
        from userdp.properties.amin2019 import REFERENCE as R, CapAdapter

        def noise_scale(*args, **kwargs):
            return R.noise_scale(*args, **kwargs) / 2

        HALF = CapAdapter("half", statistic=R.statistic, sensitivity=R.sensitivity, noise_scale=noise_scale)
    """)
    )
    monkeypatch.chdir(tmp_path)
    stages = next(c for c in V.checks("amin2019.capped-sum", "half_noise_scale:HALF", quick=True) if c.name == "stages")
    by_stage = {f.evidence["stage"]: f for f in stages.run()}
    bad = by_stage["noise_scale"]
    assert bad.verdict == "deviation from reference"
    assert bad.evidence["relative_difference"] == pytest.approx(0.5, rel=1e-12)
    assert bad.evidence["largest_scaled_difference"] > bad.evidence["tolerance"]
    assert "max(1, |reference|)" in bad.evidence["rule"]
    assert by_stage["statistic"].verdict == "pass" and by_stage["statistic"].evidence["relative_difference"] <= 1e-9


def test_a_report_path_that_is_not_a_regular_file_is_written_in_place(tmp_path):
    # Before: --report on a device or a pipe wrote a temporary file beside it and renamed it over
    # it (measured: --report /dev/full replaced the device with a regular file). Here a FIFO.
    import stat
    import threading

    from userdp.audits.cli.validate import _write_report

    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    _write_report(str(fifo), '{"verdict": "pass"}\n')
    reader.join(timeout=10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert got == ['{"verdict": "pass"}\n']
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.fifo"]  # no temporary file left
    regular = tmp_path / "report.json"
    _write_report(str(regular), "{}\n")
    assert regular.read_text() == "{}\n" and sorted(p.name for p in tmp_path.iterdir()) == [
        "report.fifo",
        "report.json",
    ]


# ------------------------------------------------------------------ statistical vectors
def test_vectors_check_runs_the_statistical_vectors_on_a_program(capsys):
    """The capped sum in Python over the protocol: its releases, drawn with the seeds the adapter sends, pass
    the statistical vectors (each fails a correct release with probability <= 1e-4, stated in the report)."""
    code, out, err = run(capsys, "vectors", "check", "amin2019.capped-sum", "--command", GOOD, "--json")
    rep = json.loads(out)
    # the program does not refuse a negative record (vector 9, its one deterministic failure): exit 1
    assert code == 1 and [r["id"] for r in rep["results"] if r["verdict"] == "fail"] == [9], err
    assert rep["statistical_failed"] == 0 and len(rep["statistical"]) == 2, rep["statistical"]
    assert all(r["verdict"] == "pass" and 0 < r["false_alarm"] <= 1e-4 for r in rep["statistical"])
    assert all(set(r["measured"]) == {"D", "D_prime"} for r in rep["statistical"])


def test_no_statistical_skips_them(capsys):
    """Planted: examples/js/capped_sum_half_scale.js, right stages and half the Laplace scale in its release.
    With --no-statistical it passes (exit 0: the deterministic vectors cannot see a sampler); without, it
    fails the statistical vectors (exit 1: tests/test_vector_files.py runs it through the Node checker and,
    marked slow, through this command)."""
    import shutil

    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("Node.js is not installed, and CI is set")
        pytest.skip("Node.js is not installed: examples/js needs it")
    program = f"{node} {HERE.parents[1] / 'examples' / 'js' / 'capped_sum_half_scale.js'}"
    argv = ["vectors", "check", "amin2019.capped-sum", "--command", program]
    code, out, err = run(capsys, *argv, "--no-statistical")
    assert code == 0 and "vectors: 9: 9 passed, 0 failed" in out and "statistical" not in out, (out, err)
