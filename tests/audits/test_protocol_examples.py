"""The non-Python examples (examples/js): validated and vector-checked through ``--command``.

Each algorithm has a correct program and a buggy one whose bug class the corpus already holds
(the file's header names the corpus entry). ``userdp validate`` must pass the correct program
and give the buggy one its corpus verdict, with the finding on the stage the bug is in; ``userdp
vectors check`` must pass the correct one and fail the buggy one on a vector flagged with its
class. In the default run the settings are reduced for speed (10^4 releases per case, 2 x 10^4
per audit side, 2 Hypothesis examples per property besides the suites' known hard cases: a failing
property's shrinking, not the protocol, is what costs time); validate's false-alarm bound (1e-4
per run) holds at any setting, and the bugs' effects (eps_lb 3.8 against 1; 8.7 against 4 at the
default settings) are far above it. The slow run repeats validate at its default settings.

These tests need Node.js (v20 here); without it they are skipped with that reason, and CI, which
has it, runs them.
"""

from __future__ import annotations

import json
import pathlib
import re
import shutil

import pytest

from papers import paper_modules  # tests/ is on sys.path (rootdir conftest)
from test_audit_cli import run  # tests/audits is on sys.path (rootdir conftest)
from userdp.audits.validation.vector_cases import BUG_CLASSES

NODE = shutil.which("node")
JS = pathlib.Path(__file__).parents[2] / "examples" / "js"
FAST = ("--samples", "10000", "--audit-samples", "20000", "--examples", "2")

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed: the examples in examples/js need it")

EXAMPLES = [
    ("amin2019.capped-sum", "capped_sum.js", "pass", None),
    ("amin2019.capped-sum", "capped_sum_per_record_cap.js", "privacy violation", "statistic"),
    ("epasto2020.wa", "wa.js", "pass", None),
    ("epasto2020.wa", "wa_mean_user_weight_noise.js", "privacy violation", "sensitivity"),
]


def cmd(program: str) -> str:
    return f"{NODE} {JS / program}"


def _validate(capsys, algorithm, program, verdict, stage, settings):
    code, out, err = run(capsys, "validate", algorithm, "--command", cmd(program), *settings, "--json")
    doc = json.loads(out)
    assert doc["verdict"] == verdict, [f["title"] for f in doc["findings"]]
    assert code == (0 if verdict == "pass" else 1)
    assert doc["target"] == f'--command "{cmd(program)}"'
    assert doc["checks"]["properties"].startswith("ran:") and doc["checks"]["audit"].startswith("ran:")
    if stage is not None:  # the deviation is named on the stage the bug is in
        assert any(f["check"] == "stages" and f["evidence"].get("stage") == stage for f in doc["findings"])


@pytest.mark.parametrize("algorithm,program,verdict,stage", EXAMPLES, ids=[e[1] for e in EXAMPLES])
def test_validate_gives_the_example_its_verdict(capsys, algorithm, program, verdict, stage):
    _validate(capsys, algorithm, program, verdict, stage, FAST)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm,program,verdict,stage", EXAMPLES, ids=[e[1] for e in EXAMPLES])
def test_validate_at_its_default_settings_gives_the_example_its_verdict(capsys, algorithm, program, verdict, stage):
    _validate(capsys, algorithm, program, verdict, stage, ())


@pytest.mark.parametrize("algorithm,program,verdict,stage", EXAMPLES, ids=[e[1] for e in EXAMPLES])
def test_vectors_check_passes_the_correct_program_and_flags_the_bug(capsys, algorithm, program, verdict, stage):
    code, out, err = run(capsys, "vectors", "check", algorithm, "--command", cmd(program), "--json")
    doc = json.loads(out)
    if verdict == "pass":
        assert code == 0 and doc["failed"] == 0 and doc["passed"] == doc["vectors"], doc
        return
    assert code == 1
    header = (JS / program).read_text()
    corpus_id, flag = re.search(r"\((\S+/\S+),\s*\n?//\s*bug class (\S+)\)", header).groups()
    assert flag in doc["failed_by_flag"], doc["failed_by_flag"]


@pytest.mark.parametrize("program", [e[1] for e in EXAMPLES if e[3] is not None])
def test_a_buggy_example_names_a_corpus_bug_of_its_class(program):
    """The header's "(corpus id, bug class X)": the corpus holds that entry, and X lists it."""
    corpus_id, flag = re.search(r"\((\S+/\S+),\s*\n?//\s*bug class (\S+)\)", (JS / program).read_text()).groups()
    modules = paper_modules("corpus")
    ids = [e.id for e in modules[corpus_id.split("/")[0]].CORPUS] + [
        e.id for m in ("epasto2020_gwa", "epasto2020_sl") for e in modules[m].CORPUS
    ]
    assert corpus_id in ids
    assert corpus_id in BUG_CLASSES[flag].corpus


def test_the_worked_exchange_in_the_docs_is_what_the_program_answers():
    """docs/protocol.md's exchange: its request lines sent to the program as they are, its
    response lines compared with the program's, byte for byte (the releases are a function of
    the seed)."""
    import subprocess

    doc = (JS.parents[1] / "docs" / "protocol.md").read_text()
    block = doc.split("<!-- exchange: node examples/js/capped_sum.js -->")[1].split("```")[1]
    lines = [ln for ln in block.strip().splitlines()]
    sent = "".join(ln[2:] + "\n" for ln in lines if ln.startswith("> "))
    want = [ln[2:] for ln in lines if ln.startswith("< ")]
    got = subprocess.run([NODE, str(JS / "capped_sum.js")], input=sent, capture_output=True, text=True, timeout=30)
    assert got.returncode == 0 and got.stdout.splitlines() == want, got.stderr
