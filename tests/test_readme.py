"""The README is the manual: short, its quickstart the CI's commands, its example a file.

Its console commands (the tour's library audit and validate run, with the output lines shown)
and its python block are run by tests/test_docs.py, which runs every command of README.md and
docs/**/*.md; its length and links are checked there too.
"""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_every_readme_python_block_is_the_validate_example_file():
    # The one python block is my_capped_sum.py, the file the tour's validate command imports
    # (tests/test_docs.py writes it to the command's import path and runs the command).
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 1 and blocks[0].startswith("# my_capped_sum.py\n") and "def capped_sum" in blocks[0]
    text = README.read_text()
    assert "$ userdp validate amin2019.capped-sum my_capped_sum:capped_sum " in text


def test_readme_quickstart_commands_are_the_ci_commands():
    text = README.read_text()
    assert "python3 -m pip install -e . && userdp audit --all" in text
    ci = (README.parent / ".ci" / "run").read_text()
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest" in text
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest" in ci


def test_readme_tour_shows_the_library_audit_under_both_relations():
    # tests/gallery/test_gallery.py runs these two calls and asserts their verdicts; the
    # README's console block shows the same calls (run by tests/test_docs.py).
    text = README.read_text()
    for relation, pair in (("replace-record", "'[1,1,1]' '[1,1,0]'"), ("add-remove-record", "'[1,1,1]' '[1,1]'")):
        assert (
            '$ userdp audit --mechanism diffprivlib.tools:sum --kwargs \'{"epsilon": 1, "bounds": [0, 1]}\' '
            f"--claim pure:epsilon=1 --relation {relation} --pair {pair}"
        ) in text
