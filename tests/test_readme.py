"""The README's validation example runs as written and finds the bug it advertises."""
import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_validation_example_runs_and_flags_the_planted_bug():
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "README should hold exactly one python example"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], str(README), "exec"), {})
    lines = out.getvalue().splitlines()
    assert any(l.startswith("invariant violation prop_noise_covers_user_weight") for l in lines), lines
    # the uniform weights themselves are fine: sum to 1 and non-negative
    assert any(l.startswith("pass prop_weights_nonnegative_sum_to_one") for l in lines), lines


def test_readme_quickstart_commands_are_the_ci_commands():
    text = README.read_text()
    assert "python3 -m pip install -e . && userdp audit --all" in text
    ci = (README.parent / ".ci" / "run").read_text()
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest" in text
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest" in ci
