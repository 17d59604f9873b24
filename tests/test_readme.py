"""The README's validation example runs as written and finds the bug it advertises."""
import contextlib
import io
import pathlib
import re

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
    assert len(blocks) == 2 and sum("check_property" in b for b in blocks) == 1 \
        and sum("allow_large_epsilon" in b for b in blocks) == 1


def test_readme_large_epsilon_example_refuses_then_releases():
    lines = _run_block("allow_large_epsilon")
    assert lines[0].startswith("refused: epsilon must be finite and > 0, in [1e-50, 50]") and \
        "allow_large_epsilon()" in lines[0], lines
    assert lines[1].startswith("released: ") and np.isfinite(float(lines[1].split(": ")[1])), lines


def test_readme_validation_example_runs_and_flags_the_planted_bug():
    lines = _run_block("check_property")
    assert any(l.startswith("invariant violation prop_noise_covers_user_weight") for l in lines), lines
    # the uniform weights themselves are fine: sum to 1 and non-negative
    assert any(l.startswith("pass prop_weights_nonnegative_sum_to_one") for l in lines), lines


def test_readme_quickstart_commands_are_the_ci_commands():
    text = README.read_text()
    assert "python3 -m pip install -e . && userdp audit --all" in text
    ci = (README.parent / ".ci" / "run").read_text()
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest" in text
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest" in ci
