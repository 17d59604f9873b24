"""Every command shown in README.md and docs/**/*.md runs, with the status and output shown.

The convention, for every page (the manual, docs/validate.md, docs/audit.md,
docs/performance.md, docs/papers/*.md, ...):

- commands are shown in fenced blocks marked ```console, one per line after a `$ ` prompt
  (a line ending in `\\` continues on the next); the lines after a command, up to the next
  `$ `, are output lines it must print (stdout or stderr, each line whole, in any order);
  `...` marks lines cut;
- a command exits 0 unless its trailing shell comment says otherwise: `# exit 1`, or
  `# exit 0|1` where a timing target decides; `# slow` in that comment puts the command in
  the slow run (`-m slow`) instead of the default one. The comment is part of the shell line,
  so a reader who copies it runs the same command;
- a ```python block whose first line is `# NAME.py` is that file: it is written to a
  temporary folder on the import path (PYTHONPATH) of the page's commands, as if the reader
  had saved it; every ```python block is also run on its own and must not raise.

Commands run from the repository root (`examples.*` and `tests/...` resolve as in a clone),
through bash, with this venv's `bin` first on PATH. A command shown on several pages runs
once and is checked against every block that shows it.
"""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import re
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", flags=re.M | re.S)
COMMENT = re.compile(r"""\s#\s*([^'"#]*)$""")  # a trailing shell comment outside quotes
FILE_LINE = re.compile(r"# ([A-Za-z_]\w*\.py)\s*$")


def rel(page: pathlib.Path) -> str:
    return str(page.relative_to(REPO))


def blocks(page: pathlib.Path, lang: str) -> list[tuple[int, str]]:
    """(line number, body) of the page's fenced blocks marked ``lang``."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start()) + 1, m.group(2)) for m in FENCE.finditer(text) if m.group(1) == lang]


def page_files(page: pathlib.Path) -> dict[str, str]:
    """The page's python blocks that are files (first line `# NAME.py`): name -> source."""
    out = {}
    for _, body in blocks(page, "python"):
        m = FILE_LINE.match(body.splitlines()[0]) if body.strip() else None
        if m:
            assert out.get(m.group(1), body) == body, f"{rel(page)}: two different files {m.group(1)}"
            out[m.group(1)] = body
    return out


@dataclass
class Shown:
    """One command as shown on one page, with the output lines shown under it."""

    page: pathlib.Path
    line: int
    command: str
    statuses: tuple[int, ...]
    slow: bool
    output: list[str] = field(default_factory=list)


def parse_options(command: str) -> tuple[tuple[int, ...], bool]:
    m = COMMENT.search(command)
    note = m.group(1) if m else ""
    ex = re.search(r"\bexit\s+(\d+(?:\|\d+)*)", note)
    return (tuple(int(s) for s in ex.group(1).split("|")) if ex else (0,)), bool(re.search(r"\bslow\b", note))


def console_commands(page: pathlib.Path) -> list[Shown]:
    found: list[Shown] = []
    for start, body in blocks(page, "console"):
        lines = body.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("$ "):
                cmd, at = line[2:], start + 1 + i
                while cmd.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
                statuses, slow = parse_options(cmd)
                found.append(Shown(page, at, cmd.strip(), statuses, slow))
            else:
                assert found and found[-1].page == page, f"{rel(page)}:{start}: output before any `$ ` command"
                if line.strip() and line.strip() != "...":
                    found[-1].output.append(line.rstrip())
            i += 1
    return found


SHOWN = [s for p in PAGES for s in console_commands(p)]
BY_COMMAND: dict[str, list[Shown]] = {}
for _s in SHOWN:
    BY_COMMAND.setdefault(_s.command, []).append(_s)


def _param(cmd: str, shown: list[Shown]):
    marks = [pytest.mark.slow] if all(s.slow for s in shown) else []
    return pytest.param(cmd, shown, id=f"{rel(shown[0].page)}:{shown[0].line}", marks=marks)


@pytest.mark.parametrize("command, shown", [_param(c, s) for c, s in BY_COMMAND.items()])
def test_command_runs_as_shown(command, shown, tmp_path):
    if os.environ.get("USERDP_DOCS_NESTED") and command.startswith("python3 -m pytest"):
        pytest.skip("a pytest run shown in the docs, inside the pytest run of that command: run once, not recursively")
    files: dict[str, str] = {}
    for s in shown:
        for name, src in page_files(s.page).items():
            assert files.get(name, src) == src, f"{name} differs between pages"
            files[name] = src
    for name, src in files.items():
        (tmp_path / name).write_text(src)
    env = dict(
        os.environ,
        USERDP_DOCS_NESTED="1",
        PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        PATH=os.pathsep.join([str(pathlib.Path(sys.executable).parent), os.environ["PATH"]]),
    )
    proc = subprocess.run(["bash", "-c", command], cwd=REPO, env=env, capture_output=True, text=True, timeout=3600)
    printed = {l.rstrip() for l in (proc.stdout + "\n" + proc.stderr).splitlines()}
    for s in shown:
        where = f"{rel(s.page)}:{s.line}"
        assert proc.returncode in s.statuses, (
            f"{where}: `{command}` exited {proc.returncode}, the page says "
            f"{s.statuses}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
        missing = [l for l in s.output if l not in printed]
        assert not missing, f"{where}: lines shown but not printed by `{command}`: {missing}\n{proc.stdout[-3000:]}"


def test_the_parser_reads_status_slowness_and_continuations(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "x\n```console\n$ userdp a \\\n  --b 1  # exit 1, slow\nout 1\n...\n$ userdp c  # exit 0|1\n"
        "```\n```\n$ not a console block\n```\n"
    )
    a, c = console_commands(page)
    assert (a.command, a.statuses, a.slow, a.output, a.line) == (
        "userdp a --b 1  # exit 1, slow",
        (1,),
        True,
        ["out 1"],
        3,
    )
    assert (c.command, c.statuses, c.slow, c.output) == ("userdp c  # exit 0|1", (0, 1), False, [])
    assert parse_options("""userdp audit --kwargs '{"a": "#x"}'""") == ((0,), False)


def test_the_pages_show_commands():
    """A page that stops being parsed (a changed fence) must not pass by running nothing."""
    pages = {rel(s.page) for s in SHOWN}
    assert {"README.md", "docs/validate.md", "docs/audit.md", "docs/performance.md"} <= pages, pages


# ------------------------------------------------------------------ python blocks
OWN_TESTS = ("from_user_lists", "check_property", "allow_large_epsilon")  # run by the tests below, with their output
PY_BLOCKS = [
    pytest.param(p, n, b, id=f"{rel(p)}:{n}")
    for p in PAGES
    for n, b in blocks(p, "python")
    if not any(k in b for k in OWN_TESTS)
]


def run_python(body: str, where: str) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(body, where, "exec"), {"__name__": "__docs__"})
    return out.getvalue().splitlines()


@pytest.mark.parametrize("page, line, body", PY_BLOCKS)
def test_python_block_runs(page, line, body, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_python(body, f"{page}:{line}")


def _block(page: str, needle: str) -> str:
    found = [b for _, b in blocks(REPO / page, "python") if needle in b]
    assert len(found) == 1, f"{page} should hold exactly one python example using {needle}"
    return found[0]


def test_userdataset_example_prints_what_its_comments_say():
    body = _block("docs/validate.md", "from_user_lists")
    printed = run_python(body, "docs/validate.md")
    said = [l.split("#")[1].split(":")[0].strip() for l in body.splitlines() if l.startswith("print(")]
    assert printed == said, (printed, said)


def test_suite_example_flags_the_planted_bug():
    lines = run_python(_block("docs/validate.md", "check_property"), "docs/validate.md")
    assert any(l.startswith("invariant violation prop_noise_covers_user_weight") for l in lines), lines
    # the uniform weights themselves are fine: sum to 1 and non-negative
    assert any(l.startswith("pass prop_weights_nonnegative_sum_to_one") for l in lines), lines
    assert any(l.startswith("not applicable prop_statistic_is_weighted_average") for l in lines), lines


def test_large_epsilon_example_refuses_then_releases():
    import numpy as np

    lines = run_python(_block("docs/validate.md", "allow_large_epsilon"), "docs/validate.md")
    assert (
        lines[0].startswith("refused: epsilon must be finite and > 0, in [1e-50, 50]")
        and "allow_large_epsilon()" in lines[0]
    ), lines
    assert lines[1].startswith("released: ") and np.isfinite(float(lines[1].split(": ")[1])), lines


# ------------------------------------------------------------------ the call-shape table of docs/validate.md
def _shape_rows():
    text = (REPO / "docs" / "validate.md").read_text()
    table = text[text.index("| algorithm | keyword parameters |") :].split("\n\n", 1)[0]  # that table alone
    rows = [l for l in table.splitlines()[2:] if l.startswith("| `")]
    return [tuple(c.strip().strip("`") for c in r.strip("|").split("|")) for r in rows]


def test_call_shape_table_is_what_signature_prints(capsys):
    from userdp.audits.cli import main as cli
    from userdp.audits.validation import all_specs

    rows = _shape_rows()
    validated = sorted(all_specs())  # the algorithms validate supports (an audit entry may have no spec)
    assert sorted(r[0] for r in rows) == validated, "one row per algorithm validate supports"
    for algorithm, params, fields, relation, release in rows:
        assert cli.main(["validate", algorithm, "--signature"]) == 0
        out = capsys.readouterr().out
        assert f"one release per call:  f(dataset, rng, *, {params})" in out, algorithm
        reads = out[out.index("this algorithm reads:") : out.index("neighbouring relation and claim:")]
        assert [l.split()[0] for l in reads.splitlines()[1:] if l.startswith("  ") and not l.startswith("   ")] == [
            f.strip() for f in fields.split(",")
        ], algorithm
        assert f"neighbouring relation and claim: {relation}" in out, algorithm
        assert f"returns one release: {release}" in out, algorithm


# ------------------------------------------------------------------ links
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", [pytest.param(p, id=rel(p)) for p in PAGES])
def test_links_point_to_files_that_exist(page):
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        assert (page.parent / target).exists(), f"{rel(page)} links to {target}, which does not exist"


def test_readme_is_at_most_300_lines():
    n = len((REPO / "README.md").read_text().splitlines())
    assert n <= 300, f"README.md has {n} lines; move detail to docs/"
