"""The README's validation example runs as written and finds the bug it advertises."""
import contextlib
import io
import pathlib
import re
import sys

import numpy as np

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _run_block(needle: str) -> list[str]:
    """Run the README's one python block that contains ``needle``; its printed lines."""
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S) if needle in b]
    assert len(blocks) == 1, f"README should hold exactly one python example using {needle}"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], str(README), "exec"), {})
    return out.getvalue().splitlines()


def test_every_readme_python_block_is_run_by_a_test():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 3 and sum("def capped_sum" in b for b in blocks) == 1 \
        and sum("allow_large_epsilon" in b for b in blocks) == 1 and sum("check_property" in b for b in blocks) == 1


def test_readme_suite_example_runs_and_flags_the_planted_bug():
    lines = _run_block("check_property")
    assert any(l.startswith("invariant violation prop_noise_covers_user_weight") for l in lines), lines
    # the uniform weights themselves are fine: sum to 1 and non-negative
    assert any(l.startswith("pass prop_weights_nonnegative_sum_to_one") for l in lines), lines
    assert any(l.startswith("not applicable prop_statistic_is_weighted_average") for l in lines), lines


def test_readme_large_epsilon_example_refuses_then_releases():
    lines = _run_block("allow_large_epsilon")
    assert lines[0].startswith("refused: epsilon must be finite and > 0, in [1e-50, 50]") and \
        "allow_large_epsilon()" in lines[0], lines
    assert lines[1].startswith("released: ") and np.isfinite(float(lines[1].split(": ")[1])), lines


def test_readme_validate_example_gives_the_report_shown(tmp_path, monkeypatch, capsys):
    # The worked example of "Validate your implementation", run as written: the module from
    # the README's block, the command from its report; every figure the README quotes must
    # be what the command prints (same default settings, same seed).
    block = next(b for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S) if "def capped_sum" in b)
    (tmp_path / "my_capped_sum.py").write_text(block)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "my_capped_sum", raising=False)
    from userdp.audits.cli import main as cli
    text = README.read_text()
    shown = text[text.index("$ userdp validate amin2019.capped-sum my_capped_sum:capped_sum"):]
    shown = shown[:shown.index("```")]
    argv = shown.splitlines()[0].split()[2:]                 # the README's own command line
    assert argv[:3] == ["validate", "amin2019.capped-sum", "my_capped_sum:capped_sum"], argv
    code = cli.main(argv)
    out = capsys.readouterr().out
    assert code == 1
    for line in shown.splitlines()[1:]:
        if line.strip() and line.strip() != "...":
            assert line in out.splitlines(), f"README line not in the output: {line!r}"


def test_readme_signature_block_is_what_the_command_prints(capsys):
    from userdp.audits.cli import main as cli
    text = README.read_text()
    shown = text[text.index("$ userdp validate amin2019.capped-sum --signature"):]
    shown = shown[:shown.index("```")]
    code = cli.main(["validate", "amin2019.capped-sum", "--signature"])
    out = capsys.readouterr().out
    assert code == 0
    for line in shown.splitlines()[1:]:
        if line.strip() and line.strip() != "...":
            assert line in out.splitlines(), f"README line not in the output: {line!r}"


def test_readme_quickstart_commands_are_the_ci_commands():
    text = README.read_text()
    assert "python3 -m pip install -e . && userdp audit --all" in text
    ci = (README.parent / ".ci" / "run").read_text()
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest" in text
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest" in ci
