"""What a target answers is read for what it is: a refusal only when it is one, a program's output
only when it can be read, a crash named by its signal.

- **Refusals** (``check_inputs.py``): a refusal is a ``ValueError`` or ``TypeError``, or from a
  program an error of kind "refused". A "failed" error on epsilon = 0 (docs/protocol.md: "never a
  refusal"), another exception, or a release that cannot be decoded (an integer of 400 digits) was
  graded "refuses epsilon = 0" and the run ended in PASS; each is now exit 3 naming what it was.
- **Program output** (``protocol.py``, ``protocol_values.py``): a stage value of 1e400, a ragged
  array, empty releases and a string where a number is due are exit 3 naming what was malformed
  (1e400 and the ragged array were graded INVARIANT VIOLATION, the empty releases exit 2).
- **Text releases** (``releases.py``): a target returning a word is named as returning that text.
- **Signals** (``audits/cli/supervise.py``, ``parallel.py``): a segfault in a validated target or
  in an audit's worker process is named by its signal.

The programs are tests/audits/protocol_program.py's MODEs; each planted bug gives the old answer back.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

from test_audit_cli import run  # tests/audits is on sys.path (rootdir conftest)
from test_hostile_targets import USERDP, _finish
from userdp.audits.validation import check_inputs
from userdp.audits.validation import protocol as Pr

PROGRAM = pathlib.Path(__file__).with_name("protocol_program.py")


def program(mode: str) -> str:
    return f"{sys.executable} -S {PROGRAM} {mode}"


def validate(capsys, *args):
    return run(capsys, "validate", "amin2019.capped-sum", *args, "--quick")


# ------------------------------------------------------------------ refusals
TARGETS = '''
import numpy as np
from userdp.reference import amin2019 as A


def divides(dataset, rng, *, T, epsilon):
    """The capped sum, correct on valid inputs; epsilon = 0 raises ZeroDivisionError (no refusal)."""
    return A.statistic(dataset, T) + rng.laplace(scale=T / epsilon) if epsilon > 0 else T / epsilon


def word(dataset, rng, *, T, epsilon):
    return "yes"


def nan(dataset, rng, *, T, epsilon):
    if not (epsilon > 0 and T > 0):
        raise ValueError("epsilon and T must be > 0")
    return float("nan")
'''


@pytest.fixture
def targets(tmp_path, monkeypatch):
    (tmp_path / "honest_t.py").write_text(TARGETS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "honest_t", raising=False)
    yield
    sys.modules.pop("honest_t", None)


def test_a_failed_error_on_epsilon_0_is_not_a_refusal(capsys):
    code, out, err = validate(capsys, "--command", program("fail-refusal"))
    assert code == 3 and "PASS" not in out
    assert 'answered an error of kind "failed"' in err and "which is not a refusal" in err
    assert "epsilon = 0" in err


@pytest.mark.slow
def test_planted_any_exception_refuses(capsys, monkeypatch):
    monkeypatch.setattr(check_inputs, "REFUSALS", (Exception,))  # the planted bug: any exception refuses
    code, out, err = validate(capsys, "--command", program("fail-refusal"))
    assert code == 0 and "refuses epsilon = 0" in out


def test_another_exception_on_a_refused_input_is_not_a_refusal(capsys, targets):
    code, out, err = validate(capsys, "honest_t:divides")
    assert code == 3 and "answered ZeroDivisionError on case 'epsilon = 0" in err


@pytest.mark.slow
def test_planted_any_exception_refuses_a_python_target(capsys, monkeypatch, targets):
    monkeypatch.setattr(check_inputs, "REFUSALS", (Exception,))  # the planted bug
    code, out, err = validate(capsys, "honest_t:divides")
    assert code != 3 and "refuses epsilon = 0" in out


def test_a_release_that_cannot_be_decoded_is_not_a_refusal(capsys):
    code, out, err = validate(capsys, "--command", program("bigint"))
    assert code == 3 and "PASS" not in out
    assert "wrote a release that is not a binary64 number (OverflowError" in err and "epsilon=0.0" in err


@pytest.mark.slow
def test_planted_an_undecodable_release_as_a_value_error_refuses(capsys, monkeypatch):
    real = Pr.ProcessTarget._releases

    def old(self, resp, size, request):  # the planted bug: the decoding error leaves as a ValueError
        if any(isinstance(r, int) and abs(r) > 2**1100 for r in resp.get("releases", [])):
            raise ValueError("could not convert the release to float")
        return real(self, resp, size, request)

    monkeypatch.setattr(Pr.ProcessTarget, "_releases", old)
    code, out, err = validate(capsys, "--command", program("bigint"))
    assert code == 0 and "refuses epsilon = 0" in out


# ------------------------------------------------------------------ program output
@pytest.mark.parametrize(
    "mode, says",
    [
        ("stage-inf", "wrote a value of stage statistic that userdp cannot read: the number inf is not finite"),
        ("ragged", "wrote a value of stage statistic that userdp cannot read: a ragged array [[1, 2], [3]]"),
        ("empty-releases", "wrote empty releases ([])"),
        ("string-stage", '/stages/noise_scale: expected number, got {"b": "one"}'),
    ],
)
def test_malformed_program_output_is_exit_3_naming_it(capsys, mode, says):
    code, out, err = validate(capsys, "--command", program(mode))
    assert code == 3 and out == "", out
    assert f"target program `{program(mode)}`" in err and says in err


def _old_decode(value):
    """The decoder before: a ragged array read as a tuple of parts, 1e400 as inf."""
    if isinstance(value, dict):
        return {k: _old_decode(v) for k, v in value.items()}
    if isinstance(value, list):
        try:
            return np.array(value, dtype=float)
        except (ValueError, TypeError):
            return tuple(_old_decode(v) for v in value)
    return float(value)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["stage-inf", "ragged"])
def test_planted_the_old_decoder_grades_malformed_stages(capsys, monkeypatch, mode):
    monkeypatch.setattr(Pr, "decode_value", _old_decode)  # the planted bug
    code, out, err = validate(capsys, "--command", program(mode))
    assert code == 1 and "INVARIANT VIOLATION" in out, err


def test_malformed_releases_under_audit_are_the_programs_error_as_it_is(capsys):
    """Empty releases ended as exit 2 ("the audit cannot use the setup"); a program's TargetError
    then left the sampler wrapped as "raised TargetError (a BaseException ...)". Now it is exit 3
    with the protocol's own message."""
    code, out, err = run(
        capsys,
        "audit",
        "--command",
        program("empty-releases"),
        "--claim",
        "pure:epsilon=1",
        "--kwargs",
        '{"T": 1, "epsilon": 1}',
        "--pair",
        "[0.5, 1.0]",
        "[0.5]",
    )
    assert code == 3 and out == ""
    assert f"userdp: error: target program `{program('empty-releases')}` wrote empty releases ([])" in err
    assert "BaseException" not in err


def test_decoding_refuses_what_is_not_a_value():
    """Planted: the decoder before (a ragged array read as a tuple, 1e400 as inf) accepts each."""
    for bad, why in [
        ([[1, 2], [3]], "ragged array"),
        (float("inf"), "not finite"),
        (10**400, "not a binary64"),
        ([], "empty array"),
        ([[1e308, 10**400]], "not a binary64"),
        ([[]], "without numbers"),
    ]:
        with pytest.raises(ValueError, match=why):
            Pr.decode_value(bad)
    A, b = Pr.decode_value([[[1, 2], [3, 4]], [5, 6]])  # a tuple: parts of different ranks
    assert A.shape == (2, 2) and b.shape == (2,)


def test_a_nan_release_is_named_as_nan(capsys, targets):
    """A NaN release was "releases non-finite values (inf or NaN)", not saying which."""
    code, out, err = validate(capsys, "honest_t:nan")
    assert code == 1 and "releases non-finite values (inf or NaN): NaN in " in out, err


def test_a_text_release_is_named_as_text(capsys, targets):
    code, out, err = validate(capsys, "honest_t:word")
    assert code == 3 and "returned text (str 'yes'), expected 1 numeric releases" in err


# ------------------------------------------------------------------ signals
CRASH = """
import ctypes
import multiprocessing

import numpy as np

CALLS = [0]


def validated(dataset, rng, *, T, epsilon):
    CALLS[0] += 1
    if CALLS[0] == 100:
        ctypes.string_at(0)
    return rng.laplace()


def in_a_worker(d):
    CALLS[0] += 1
    if CALLS[0] == 100 and multiprocessing.current_process().name != "MainProcess":
        ctypes.string_at(0)
    return 10.0 * len(d) + np.random.default_rng().laplace()
"""


@pytest.mark.parametrize(
    "argv, says",
    [
        (
            ["validate", "amin2019.capped-sum", "crash:validated", "--quick"],
            "userdp: error: your code ended the userdp process during your mechanism crash:validated",
        ),
        pytest.param(
            ["audit", "--mechanism", "crash:in_a_worker", "--pair", "[1,1,1]", "[1,1]", "--claim", "pure:epsilon=1"]
            + ["--samples", "20000", "--workers", "2"],
            "ended its worker process",
            marks=pytest.mark.slow,  # a pool of workers: about 14 s on the loaded machine
        ),
    ],
)
def test_a_segfault_is_named_by_its_signal(tmp_path, argv, says):
    (tmp_path / "crash.py").write_text(CRASH)
    p = subprocess.Popen(
        [*USERDP, *argv], cwd=tmp_path, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    code, out, err = _finish(p, timeout=180)
    assert code == 3, err
    assert says in err and "it was killed by SIGSEGV (a crash in native code)" in err, err
