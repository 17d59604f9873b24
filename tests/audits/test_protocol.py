"""The process protocol (audits/validation/protocol.py): a program in any language seen as Python callables.

The programs here are Python scripts (tests/audits/protocol_program.py, one MODE per behaviour),
so these tests need no other toolchain; the Node.js examples are tested in
test_protocol_examples.py. Hostile programs (crash, hang, garbage, early exit, wrong size, wrong
id, schema breach, a child left running, a line that never ends, a closed stdout): each must give
a ``TargetError`` naming the command, the request and the reason, within its deadline, with no
process left behind; never a verdict. The schema checker is compared with the ``jsonschema``
library (an independent implementation of JSON Schema 2020-12) on every message kind.
"""

from __future__ import annotations

import json
import os
import pathlib
import pickle
import re
import sys
import time

import jsonschema
import numpy as np
import pytest

from test_audit_cli import run  # tests/audits is on sys.path (rootdir conftest)
from userdp.audits.validation import protocol as Pr
from userdp.reference.data import EMPTY, UserDataset

PROGRAM = pathlib.Path(__file__).with_name("protocol_program.py")
D = UserDataset.from_user_lists([[0.9, 0.8, 0.5, 0.4], [0.7, 0.6], [0.3]])  # g_1 = 1 + 1 + 0.3
P = {"T": 1.0, "epsilon": 1.0}


def command(mode: str) -> list[str]:
    return [sys.executable, "-S", str(PROGRAM), mode]  # -S: no site import, a faster start


def text(mode: str) -> str:
    return " ".join(command(mode))


def gone(pid: int) -> bool:
    """The process no longer exists (reaped), or is a zombie waiting for a parent that is not us."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


# ------------------------------------------------------------------ a program that follows it
def test_a_program_is_a_batched_mechanism_with_stages():
    with Pr.ProcessTarget(command("good"), algorithm="amin2019.capped-sum", batch=300) as t:
        assert t.hello["stages"] == ["statistic", "sensitivity", "noise_scale"] and t.releases
        x = t.mechanism(D, np.random.default_rng(5), 1000, **P)  # 4 requests of <= 300
        assert x.shape == (1000,) and x.dtype == float
        # the program's releases: 2.3 + Laplace(1); mean within 5 sd / sqrt(1000) of 2.3 (P(fail) < 1e-6)
        assert abs(x.mean() - 2.3) < 5 * np.sqrt(2) / np.sqrt(1000)
        y = t.mechanism(D, np.random.default_rng(5), 1000, **P)
        assert np.array_equal(x, y)  # seeds drawn from rng: reproducible
        assert np.ndim(t.mechanism(D, np.random.default_rng(1), None, **P)) == 0
        assert t.stage("statistic")(D, T=1.0) == pytest.approx(2.3)
        assert t.stage("noise_scale")(T=2.0, epsilon=4.0) == 0.5  # a stage without a dataset
        assert t.stage_values(D, P, ["sensitivity", "statistic"]) == {
            "sensitivity": 1.0,
            "statistic": pytest.approx(2.3),
        }


def test_error_responses_are_the_exceptions_python_code_would_raise():
    with Pr.ProcessTarget(command("good")) as t:
        with pytest.raises(ValueError, match="epsilon and T must be > 0") as exc:
            t.mechanism(D, np.random.default_rng(0), 10, T=1.0, epsilon=0.0)
        assert isinstance(exc.value, Pr.ProgramRefused)
        with pytest.raises(Pr.ProgramRefused):
            t.stage("noise_scale")(T=-1.0, epsilon=1.0)
        with pytest.raises(Pr.ProgramFailed, match="out of memory"):
            t.stage("statistic")(D, T=1.0, fail=True)
        assert t.mechanism(D, np.random.default_rng(0), 3, **P).shape == (3,)  # the program still serves


def test_null_releases_are_masked_rows_and_tuples_stack_by_part():
    with Pr.ProcessTarget(command("good"), batch=3) as t:
        m = t.mechanism(D, np.random.default_rng(0), 7, nulls=True, **P)
        assert isinstance(m, np.ma.MaskedArray) and m.mask.tolist() == [False, True, False] * 2 + [False]  # per request
        a, b = t.mechanism(D, np.random.default_rng(0), 5, pairs=True, **P)
        assert a.shape == (5, 2) and b.shape == (5, 1, 1) and np.array_equal(a[:, 0], b[:, 0, 0])


@pytest.mark.parametrize("form", ["compact", "spaced"])
def test_packed_releases_are_the_same_numbers_as_the_json_array(form):
    """releases_hex: the same binary64 values; the compact form takes the fast path, the spaced
    one the general parser, and both give what the JSON array gives."""
    with Pr.ProcessTarget(command("good"), batch=40) as t:
        plain = t.mechanism(D, np.random.default_rng(3), 100, **P)
        packed = t.mechanism(D, np.random.default_rng(3), 100, pack=form, **P)
    assert packed.dtype == float and np.array_equal(plain, packed)
    line = (
        b'{"id":7,"releases_hex":{"shape":[2],"data":"' + np.array([1.5, -2.0], "<f8").tobytes().hex().encode() + b'"}}'
    )
    ident, shape, raw = Pr._fast_packed(line)
    assert (ident, shape) == (7, [2]) and np.frombuffer(raw, "<f8").tolist() == [1.5, -2.0]
    for other in (
        line.replace(b'"id":7', b'"id": 7'),
        line.replace(b'"}}', b'"} }'),
        line.replace(b"f", b"x"),
        line.replace(b'"shape":[2]', b'"shape":[02]'),
    ):
        assert Pr._fast_packed(other) is None  # the general path decides these


@pytest.mark.parametrize(
    "pack,reason",
    [
        ("short", "releases_hex of 72 bytes for shape [10] (80 bytes of binary64)"),
        ("nonhex", "data that is not hexadecimal"),
        ("inf", "a release that is not finite (inf)"),
    ],
)
def test_broken_packed_releases_are_target_errors(pack, reason):
    t = Pr.ProcessTarget(command("good"), timeout=5)
    with pytest.raises(Pr.TargetError, match=re.escape(reason)):
        t.mechanism(D, np.random.default_rng(0), 10, pack=pack, **P)
    assert t.pid is None
    t.close()


def test_the_adapter_has_the_declared_stages_in_the_papers_adapter_type():
    from userdp.properties.adapter import Adapter
    from userdp.properties.amin2019 import CapAdapter

    with Pr.ProcessTarget(command("good")) as t:
        a = t.adapter(CapAdapter)
        assert isinstance(a, CapAdapter) and a.stages() == ("statistic", "sensitivity", "noise_scale", "mechanism")
        assert a.optimal_cap is None
        assert float(a.statistic(D, T=0.5)) == pytest.approx(1.3)
        tiny = type("WeightsOnly", (Adapter,), {"STAGES": ("weights", "mechanism")})
        with pytest.raises(ValueError, match="declares stage.*statistic.*which WeightsOnly does not have"):
            t.adapter(tiny)


def test_a_copy_in_another_process_starts_its_own_program():
    t = Pr.ProcessTarget(command("good"))
    try:
        t.mechanism(D, np.random.default_rng(0), 2, **P)
        first = t.pid
        u = pickle.loads(pickle.dumps(t))
        assert u.pid is None  # not started: lazily, in whichever process calls it
        u.mechanism(D, np.random.default_rng(0), 2, **P)
        assert u.pid not in (None, first) and t.pid == first
        u.close()
    finally:
        t.close()
    assert gone(first)


def test_requests_and_responses_follow_the_schema_by_jsonschema(tmp_path):
    log = tmp_path / "transcript.txt"
    with Pr.ProcessTarget(command("good"), algorithm="amin2019.capped-sum", transcript=log, batch=2) as t:
        t.mechanism(D, np.random.default_rng(0), 3, **P)
        t.mechanism(EMPTY, np.random.default_rng(0), 1, T=1.0, epsilon=float("inf"), nulls=True)
        t.stage_values(
            D.with_fields(labels=np.zeros(D.n)), {"C": np.eye(2), "sigma": None, "kind": "x", "T": 2}, ["sensitivity"]
        )
        with pytest.raises(Pr.ProgramRefused):
            t.stage("noise_scale")(T=0.0, epsilon=1.0)
    lines = log.read_text().splitlines()
    validator = jsonschema.Draft202012Validator(Pr.load_schema())
    kinds = {">": "request", "<": "response"}
    assert {ln[0] for ln in lines} == {">", "<"} and len(lines) == 2 * 6
    for ln in lines:
        msg = json.loads(ln[2:])
        errors = list(validator.iter_errors(msg))
        assert not errors, (ln, errors[0].message)
        sub = {"$ref": f"#/$defs/{kinds[ln[0]]}", "$defs": Pr.load_schema()["$defs"]}
        jsonschema.Draft202012Validator(sub).validate(msg)
    assert '{"nonfinite":"inf"}' in log.read_text()


# messages, and the definition each is checked against; True if valid
MESSAGES = [
    ({"id": 0, "hello": {"protocol": 1, "stages": [], "releases": True}}, "hello_response", True),
    ({"id": 0, "hello": {"protocol": 2, "stages": [], "releases": True}}, "hello_response", False),
    ({"id": 0, "hello": {"protocol": 1, "stages": ["a", "a"], "releases": True}}, "hello_response", False),
    ({"id": 0, "hello": {"protocol": 1, "stages": [""], "releases": True}}, "hello_response", False),
    ({"id": 0, "hello": {"protocol": 1, "stages": [], "releases": 1}}, "hello_response", False),
    ({"id": 0, "hello": {"protocol": 1, "stages": [], "releases": True, "extra": 1}}, "hello_response", False),
    ({"id": 3, "releases": [1, 2.5, None, [1, [2]]]}, "release_response", True),
    ({"id": 3, "releases_hex": {"shape": [2, 1], "data": "00"}}, "release_response", True),
    ({"id": 3, "releases_hex": {"shape": [0], "data": ""}}, "release_response", False),
    ({"id": 3, "releases_hex": {"shape": [1], "data": "00", "dtype": "<f8"}}, "release_response", False),
    ({"id": 3, "releases": [], "releases_hex": {"shape": [1], "data": ""}}, "release_response", False),
    ({"id": 3, "releases": [True]}, "release_response", False),
    ({"id": 3, "releases": ["1"]}, "release_response", False),
    ({"id": -1, "releases": []}, "release_response", False),
    ({"id": 2.0, "releases": []}, "release_response", True),
    ({"id": 2.5, "releases": []}, "release_response", False),
    ({"id": 3, "stages": {"noise_scale": {"sigma": 1.0, "parts": [1, 2]}}}, "stages_response", True),
    ({"id": 3, "stages": {"statistic": None}}, "stages_response", False),
    ({"id": 3, "error": {"kind": "refused", "message": "eps"}}, "error_response", True),
    ({"id": 3, "error": {"kind": "crashed", "message": "eps"}}, "error_response", False),
    ({"id": 3, "error": {"kind": "failed"}}, "error_response", False),
    ({"values": [0.5, 1.0], "user_ids": [0, 0], "epsilons": [1.0, 0.5]}, "dataset", True),
    ({"values": [[0.5, 1.0]], "user_ids": [0]}, "dataset", True),
    ({"values": [[]], "user_ids": [0]}, "dataset", False),
    ({"values": [0.5], "user_ids": [-1]}, "dataset", False),
    ({"values": [0.5], "user_ids": [0], "epsilons": [0.0]}, "dataset", False),
    ({"values": [0.5], "user_ids": [0], "weights": [1.0]}, "dataset", False),
    (
        {
            "protocol": 1,
            "id": 4,
            "dataset": {"values": [], "user_ids": []},
            "params": {"a": [1, {"nonfinite": "nan"}]},
            "seed": 2**53 - 1,
            "size": 1,
        },
        "release_request",
        True,
    ),
    (
        {"protocol": 1, "id": 4, "dataset": {"values": [], "user_ids": []}, "params": {}, "seed": 2**53, "size": 1},
        "release_request",
        False,
    ),
    ({"protocol": 1, "id": 4, "dataset": None, "params": {"a": {"b": 1}}, "stages": ["x"]}, "stages_request", False),
    ({"protocol": 1, "id": 4, "dataset": None, "params": {}, "stages": []}, "stages_request", False),
]


@pytest.mark.parametrize("message,definition,valid", MESSAGES)
def test_the_schema_checker_agrees_with_jsonschema(message, definition, valid):
    root = Pr.load_schema()
    oracle = jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": root["$defs"]})
    assert oracle.is_valid(message) is valid
    if valid:
        Pr.check_message(message, definition)
    else:
        with pytest.raises(Pr.SchemaViolation, match="breaks the protocol schema"):
            Pr.check_message(message, definition)


def test_the_schema_is_valid_json_schema_2020_12_and_ships_with_the_package():
    jsonschema.Draft202012Validator.check_schema(Pr.load_schema())
    assert Pr.load_schema()["$id"] == "urn:userdp:protocol:1" and Pr.PROTOCOL == 1
    import tomllib

    conf = tomllib.loads((pathlib.Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert "schema/*.json" in conf["tool"]["setuptools"]["package-data"]["userdp.audits.validation"]


def test_encoding_keeps_every_bit_and_refuses_what_json_cannot_carry():
    x = np.array([0.1, 1 / 3, 2.0**-1074, 1e308])
    E = UserDataset(x, np.arange(4), labels=-x, epsilons=np.full(4, 0.5), task_ids=np.array([0, 1, 0, 1]))
    back = Pr.decode_dataset(json.loads(json.dumps(Pr.encode_dataset(E))))
    for f in ("values", "labels", "epsilons", "user_ids", "task_ids"):
        assert np.array_equal(getattr(back, f), getattr(E, f))
    assert Pr.decode_dataset({"values": [], "user_ids": []}) is EMPTY
    assert Pr.encode_params({"a": np.float64("-inf"), "b": np.int64(3), "c": (1, np.nan)}) == {
        "a": {"nonfinite": "-inf"},
        "b": 3,
        "c": [1, {"nonfinite": "nan"}],
    }
    with pytest.raises(TypeError, match="params: f is a builtin_function_or_method; a program takes numbers"):
        Pr.encode_params({"f": len})
    with pytest.raises(TypeError, match="UserDataset"):
        Pr.encode_dataset([0.5, 1.0])
    A, b = Pr.decode_value([[[1, 2]], [3]])  # a tuple: parts of ranks 2 and 1 (Krichene's (A, b))
    assert A.tolist() == [[1.0, 2.0]] and b.tolist() == [3.0]


# ------------------------------------------------------------------ hostile programs
HOSTILE = [
    ("crash", "exited with status 3 before answering", "ZeroDivisionError: the program's own bug"),
    ("hang", "did not answer within 1.5 s", None),
    ("garbage", "wrote a line that is not JSON: b'releases: 1.5 2.5 3.5'", None),
    ("exit-early", "exited with status 0 before answering", None),
    ("wrong-size", "answered 9 release(s) for size 10", None),
    ("wrong-id", "answered id 8 where the response to request 1 was due", None),
    ("schema", "wrote release 0 that breaks the protocol schema (release): /: matches none of the allowed forms", None),
    ("silent-close", "closed its stdout while still running", None),
    ("stdout-noise", "wrote a line that is not JSON: b'debug: computing'", None),
]


@pytest.mark.parametrize("mode,reason,stderr", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_program_is_a_target_error_within_its_deadline_and_leaves_nothing(mode, reason, stderr):
    t = Pr.ProcessTarget(command(mode), timeout=1.5)
    pid = t.hello and t.pid
    t0 = time.monotonic()
    with pytest.raises(Pr.TargetError) as exc:
        t.mechanism(D, np.random.default_rng(0), 10, **P)
    assert time.monotonic() - t0 < 1.5 + 3.0
    msg = str(exc.value)
    assert text(mode) in msg and reason in msg, msg
    assert "(request: release id 1, size 10, seed" in msg and "7 records; T=1.0, epsilon=1.0" in msg
    if stderr:
        assert stderr in msg
    assert not isinstance(exc.value, Exception)  # never graded as a finding by `except Exception`
    assert t.pid is None and gone(pid)
    t.close()


def test_a_hostile_stage_answer_is_a_target_error_too():
    with Pr.ProcessTarget(command("schema"), timeout=5) as t:
        with pytest.raises(Pr.TargetError, match=r"/stages/statistic: matches none of the allowed forms"):
            t.stage("statistic")(D, T=1.0)


def test_the_whole_process_group_is_killed(tmp_path):
    t = Pr.ProcessTarget(command("spawn-hang"), timeout=1.0)
    pid = t.hello and t.pid
    with pytest.raises(Pr.TargetError, match="did not answer within 1 s") as exc:
        t.mechanism(D, np.random.default_rng(0), 1, **P)
    child = int(str(exc.value).split("child ")[1].split()[0])  # the child the program started, from its stderr
    deadline = time.monotonic() + 5
    while not (gone(pid) and gone(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(pid) and gone(child)


def test_a_line_that_never_ends_is_cut_off(monkeypatch):
    monkeypatch.setattr(Pr, "MAX_LINE", 1 << 20)
    with Pr.ProcessTarget(command("no-newline"), timeout=10) as t:
        with pytest.raises(Pr.TargetError, match="wrote a line longer than 1048576 bytes"):
            t.mechanism(D, np.random.default_rng(0), 1, **P)


def test_a_command_that_cannot_start_is_a_command_error():
    with pytest.raises(Pr.CommandError, match="could not be started: .*No such file"):
        Pr.ProcessTarget("no-such-program-userdp --flag").hello
    with pytest.raises(ValueError, match="empty command"):
        Pr.ProcessTarget("   ")


# ------------------------------------------------------------------ the command line
def test_validate_through_a_program_that_crashes_exits_3_never_a_verdict(capsys):
    code, out, err = run(capsys, "validate", "amin2019.capped-sum", "--command", text("crash"), "--timeout", "5")
    assert code == 3 and out == ""
    assert f"target program `{text('crash')}` exited with status 3 before answering" in err
    assert "ZeroDivisionError" in err and "Traceback" not in err.split("stderr ended with")[0]


def test_validate_and_audit_refuse_bad_command_lines(capsys):
    code, _, err = run(capsys, "validate", "amin2019.capped-sum", "--command", "no-such-program-userdp")
    assert code == 2 and "could not be started" in err
    code, _, err = run(
        capsys, "validate", "amin2019.capped-sum", "papers.amin2019.corpus:half_scale", "--command", text("good")
    )
    assert code == 2 and "not both" in err
    code, _, err = run(capsys, "validate", "amin2019.capped-sum", "papers.amin2019.corpus:half_scale", "--batch", "3")
    assert code == 2 and "--batch go(es) with --command" in err
    code, _, err = run(capsys, "validate", "amin2019.capped-sum")
    assert code == 2 and "needs a TARGET" in err
    code, _, err = run(capsys, "audit", "--command", text("good"), "--pair", "[1]", "[]")
    assert code == 2 and "give the claim with --claim" in err
    code, _, err = run(
        capsys,
        "audit",
        "--command",
        text("good"),
        "--claim",
        "pure:epsilon=1",
        "--relation",
        "add-remove-user",
        "--pair",
        "[1, 2]",
        "[3]",
    )
    assert code == 2 and "is not a pair of neighbours" in err


@pytest.mark.parametrize(
    "side,why",
    [
        ("[[1, 2], [3]]", "inner arrays have different lengths (1, 2)"),  # a list of each user's records
        ("[1, [2, 3]]", "mixes numbers and arrays"),
        ('{"values": [[1, 2], [3]], "user_ids": [0, 1]}', "its values: its inner arrays have different lengths"),
        ('"x"', "is not a JSON array or a dataset object"),
    ],
)
def test_a_malformed_pair_side_is_told_what_a_side_looks_like(capsys, side, why):
    """Not numpy's "inhomogeneous shape": the message names the fault and shows the valid forms
    (a per-user list of records is the dataset object's job)."""
    code, _, err = run(
        capsys, "audit", "--command", text("good"), "--claim", "pure:epsilon=1", "--pair", side, "[[1, 2]]"
    )
    assert code == 2 and why in err, err
    assert '{"values": [1, 2, 3], "user_ids": [0, 0, 1]}' in err and "inhomogeneous" not in err


def test_audit_a_program_with_the_options_of_mechanism(capsys):
    """The capped sum at T = 1, eps = 1 on "one user at 1 vs none": the true loss is 1, so a
    correct program is not flagged (false alarm <= 5% at the default confidence 0.95: the run is
    seeded, and this seed's eps_lb is 0.9+ below the claim)."""
    code, out, err = run(
        capsys,
        "audit",
        "--command",
        text("good"),
        "--claim",
        "pure:epsilon=1",
        "--relation",
        "add-remove-user",
        "--kwargs",
        '{"T": 1, "epsilon": 1}',
        "--pair",
        '{"values": [0.5, 1.0], "user_ids": [0, 1]}',
        '{"values": [0.5], "user_ids": [0]}',
        "--samples",
        "20000",
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verdict"] == "no violation found" and doc["calling"] == "batched" and doc["reproducible"] is True
    assert 0.8 < doc["epsilon_lower_bound"] <= 1.0
    assert "1 pair(s) checked to be neighbours" in err
    code, out, err = run(
        capsys,
        "audit",
        "--command",
        text("good"),
        "--claim",
        "pure:epsilon=0.5",
        "--kwargs",
        '{"T": 1, "epsilon": 1}',
        "--pair",
        "[1.0]",
        "[]",
        "--samples",
        "20000",
    )
    assert code == 1 and "violation" in out  # the same program claimed at eps/2
