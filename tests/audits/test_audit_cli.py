"""The userdp command line, through main([...]).

Statistical tests here audit mechanisms whose verdict is far from the decision boundary;
each says why its false-failure probability is below 1e-4.
"""

import json
import sys
import types

import numpy as np
import pytest

from userdp.audits.cli import audit as audit_cmd
from userdp.audits.cli import main as cli
from userdp.audits.cli import reproduce as reproduce_cmd
from userdp.audits.engine.registry import Entry, get


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def strict_json(text: str):
    """json.loads that refuses NaN / Infinity tokens (not JSON, RFC 8259 section 6)."""

    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("userdp ")


# ------------------------------------------------------------------ list
def test_list_json_fields(capsys):
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    doc = strict_json(out)
    assert doc["schema"] == "userdp.list/1" and doc["userdp_version"]
    by_name = {r["name"]: r for r in doc["entries"]}
    lap = by_name["control.laplace"]
    for field in ("name", "kind", "paper", "algorithm", "relation", "claim", "function", "expected", "samples"):
        assert field in lap
    assert lap["kind"] == "control" and lap["expected"] == "no violation found"
    assert lap["claim"] == {"kind": "pure", "params": {"epsilon": 1.0}}
    assert by_name["control.isvt3"]["expected"] == "violation"
    assert by_name["amin2019.capped-sum"]["samples"] == 1_000_000  # per-entry default (registry)
    assert lap["noise"] == "laplace" and by_name["control.gaussian"]["noise"] == "gaussian"
    assert by_name["amin2019.erm-output-perturbation"]["noise"] == "l2laplace"
    assert by_name["control.noisy-max"]["noise"] is None
    # which entries `userdp validate` supports (audits/validation/run.py specs): the papers' main ones
    assert by_name["amin2019.capped-sum"]["validate"] is True and lap["validate"] is False


def test_list_json_encodes_infinity_as_null_listed_in_nonfinite(capsys):
    # control.svt-no-query-noise has true_epsilon = inf (controls.py); a reference entry
    # with an unknown true epsilon has None. Both are null; only the first is listed.
    _, out, _ = run(capsys, "list", "--json")
    doc = strict_json(out)
    names = [r["name"] for r in doc["entries"]]
    i, j = names.index("control.svt-no-query-noise"), names.index("amin2019.capped-sum-private-cap")
    assert doc["entries"][i]["true_epsilon"] is None and doc["entries"][j]["true_epsilon"] is None
    assert doc["nonfinite"][f"/entries/{i}/true_epsilon"] == "+inf"
    assert f"/entries/{j}/true_epsilon" not in doc["nonfinite"]


def test_list_table_columns_are_aligned_and_not_cut(capsys):
    code, out, _ = run(capsys, "list")
    lines = out.splitlines()
    header = lines[0]
    starts = [header.index(c) for c in ("kind", "claim", "expected", "function")]
    rows = [l for l in lines[1:] if l.strip() and not l.startswith("kind:")]
    assert len(rows) == len(audit_cmd.all_entries())
    for line in rows:
        for s in starts:  # every column starts where its header does
            assert line[s - 2 : s] == "  " and line[s] != " ", (line, s)
    assert any("amin2019.erm-output-perturbation-ridge  reference" in l for l in rows)
    assert any("approx epsilon=1,delta=1e-05" in l for l in rows)  # was cut to "delta=1e-"


# ------------------------------------------------------------------ single audits
def test_audit_correct_control_exits_0_and_is_as_expected(capsys):
    code, out, _ = run(capsys, "audit", "control.laplace", "--samples", "20000", "--confidence", "0.9999")
    assert code == 0 and "no violation found" in out  # flagged with probability <= 1e-4
    assert "expected         no violation found" in out and ": as expected" in out


def test_audit_planted_entry_shows_expected_verdict_text_and_json(capsys):
    # amin2019.data-chosen-cap: exact loss ln(33.1) = 3.5 vs claim 1 (tests/papers/amin2019/test_amin2019.py);
    # measured eps_lb 4.40 at 100000 per side, seed 0. A miss needs the 95% bound to fall
    # below 1, i.e. ~14 -> >2000 of the 2005 second-side counts in S: P < 1e-100.
    code, out, _ = run(capsys, "audit", "amin2019.data-chosen-cap")
    assert code == 1 and out.startswith("amin2019.data-chosen-cap: violation")
    assert "expected         violation (a planted bug must be flagged): as expected" in out
    code, out, _ = run(capsys, "audit", "amin2019.data-chosen-cap", "--json")
    d = strict_json(out)
    assert code == 1 and d["kind"] == "planted"
    assert d["expected"] == "violation" and d["as_expected"] is True


def test_audit_broken_control_exits_1_with_json(capsys):
    code, out, _ = run(
        capsys, "audit", "control.laplace-half-scale", "--samples", "20000", "--json", "--param", "epsilon=0.5"
    )
    assert code == 1  # true eps 1.0 vs claim 0.5: >10 sd
    d = strict_json(out)
    assert d["schema"] == "userdp.audit/1" and d["userdp_version"] == cli.version()
    assert d["verdict"] == "violation" and d["claim"]["params"] == {"epsilon": 0.5}
    for field in (
        "epsilon_lower_bound",
        "confidence",
        "samples",
        "tightness",
        "witness",
        "termination_reason",
        "elapsed_seconds",
        "params",
        "nonfinite",
    ):
        assert field in d
    # --param changed a default: the entry's expected verdict is for its defaults, not stated
    assert d["expected"] is None and d["as_expected"] is None and d["params"]["epsilon"] == 0.5


def test_audit_progress_goes_to_stderr_with_elapsed_time(capsys):
    code, out, err = run(capsys, "audit", "control.noisy-max", "--samples", "2000", "--json")
    strict_json(out)  # stdout is the JSON document only
    assert "pilot 1/4" in err and "confirmed 3/3" in err and " s] " in err


@pytest.mark.parametrize(
    "argv, words",
    [
        (["audit", "control.laplace", "--samples", "0"], ["--samples", ">= 100", "got 0"]),
        (["audit", "control.laplace", "--samples", "99"], ["--samples", ">= 100"]),
        (["audit", "amin2019.capped-sum", "--param", "T=abc"], ["T=abc", "T must be a number", "1.0"]),
        (["audit", "control.svt1", "--param", "c=1.5"], ["c must be an integer"]),
        (["audit", "amin2019.capped-sum", "--param", "T=-1"], ["amin2019.capped-sum refused --param T=-1", "T must"]),
        (["audit", "control.laplace", "--param", "nope=1"], ["nope", "epsilon (default 1.0)"]),
        (["audit", "x:y", "--claim", "pure:eps=1"], ["pure:epsilon=1", "approx:epsilon=1,delta=1e-6"]),
        (["audit", "x:y", "--claim", "bogus:epsilon=1"], ["pure:epsilon=1", "personalized:epsilons=[1,2,0.5]"]),
        (["audit", "x:y", "--claim", "pure:epsilon=-1"], ["epsilon", "accepted forms"]),
        (["audit", "control.laplace", "--confidence", "1.5"], ["--confidence", "between 0 and 1"]),
    ],
)
def test_input_errors_exit_2_and_name_the_culprit(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and not out
    for w in words:
        assert w in err, (w, err)


@pytest.mark.parametrize(
    "argv",
    [
        ["audit"],
        ["audit", "control.nope"],
        ["audit", "control.laplace", "--param", "x"],
        ["audit", "--all", "control.laplace"],
        ["frobnicate"],
        ["audit", "no_such_module_xyz:f", "--claim", "pure:epsilon=1"],
        ["audit", "control.laplace", "--param", "epsilon=0"],
        ["reproduce", "nothing.here"],
        ["reproduce"],
        ["audit", "control.laplace", "--claim", "pure:epsilon=1"],
    ],
)
def test_usage_errors_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and err


def test_help_documents_every_option(capsys):
    parser = cli._parser()
    subparsers = next(a for a in parser._actions if a.choices and "audit" in a.choices).choices
    for name, sub in subparsers.items():
        for action in sub._actions:
            assert action.help, f"userdp {name} {action.option_strings or action.dest} has no help line"
    code, out, _ = run(capsys, "audit", "--help")
    text = " ".join(out.split())
    sizes = [e.samples or audit_cmd.DEFAULT_SAMPLES for e in audit_cmd.all_entries()]
    assert audit_cmd.SAMPLES_RANGE == f"{min(sizes)} to {max(sizes)}"  # the real per-entry defaults
    assert code == 0 and audit_cmd.SAMPLES_RANGE in text and "default 0.95" in text and "Exit status" in text


# ------------------------------------------------------------------ external mechanisms
def _tuple_factory(shift=1.0):
    return (lambda D, rng, size: D + rng.laplace(0.0, 1.0, size)), [(0.0, float(shift))]


CALLS = []


def _recording_factory():
    def mechanism(D, rng, size):
        CALLS.append(size)
        return D + rng.laplace(0.0, 1.0, size)

    return mechanism, [(0.0, 1.0)]


def _raising_factory(k=1):
    return 1 / 0


def _raising_mechanism_factory():
    def mechanism(D, rng, size):
        return D / 0.0 if size < 0 else 1 // 0

    return mechanism, [(0.0, 1.0)]


def _array_pairs_factory():
    def mechanism(D, rng, size):
        return np.asarray(D, float).sum() + rng.laplace(0.0, 1.0, size)

    ones = np.ones(10)
    return mechanism, [(ones, np.r_[2.0, ones[1:]]), (ones[:3], np.r_[2.0, 1.0, 1.0], "bump the first query")]


@pytest.fixture
def ext_module(monkeypatch):
    mod = types.ModuleType("userdp_ext_fixture")
    mod.factory, mod.recording = _tuple_factory, _recording_factory
    mod.raising, mod.raising_mechanism, mod.arrays = _raising_factory, _raising_mechanism_factory, _array_pairs_factory
    monkeypatch.setitem(sys.modules, "userdp_ext_fixture", mod)
    CALLS.clear()
    return mod


def test_external_mechanism(capsys, ext_module):
    code, out, _ = run(
        capsys,
        "audit",
        "userdp_ext_fixture:factory",
        "--claim",
        "pure:epsilon=1",
        "--relation",
        "replace-record",
        "--samples",
        "20000",
        "--json",
        "--confidence",
        "0.9999",
    )
    d = strict_json(out)
    assert code == 0 and d["relation"] == "replace-record" and d["kind"] == "external" and d["expected"] is None
    code, out, _ = run(
        capsys,
        "audit",
        "userdp_ext_fixture:factory",
        "--claim",
        "pure:epsilon=1",
        "--param",
        "shift=3",
        "--samples",
        "20000",
    )
    assert code == 1  # shift 3 => eps 3, far above 1
    code, _, err = run(capsys, "audit", "userdp_ext_fixture:factory")
    assert code == 2 and "--claim" in err


def test_external_param_checked_against_factory_signature(capsys, ext_module):
    code, _, err = run(
        capsys, "audit", "userdp_ext_fixture:factory", "--claim", "pure:epsilon=1", "--param", "shift=abc"
    )
    assert code == 2 and "shift must be a number" in err
    code, _, err = run(capsys, "audit", "userdp_ext_fixture:factory", "--claim", "pure:epsilon=1", "--param", "nope=1")
    assert code == 2 and "nope" in err


def test_factory_exception_exits_3_with_its_origin(capsys, ext_module):
    code, out, err = run(capsys, "audit", "userdp_ext_fixture:raising", "--claim", "pure:epsilon=1")
    assert code == 3 and not out
    assert "your factory userdp_ext_fixture:raising raised ZeroDivisionError" in err and "--debug" in err
    assert "Traceback" not in err
    code, _, err = run(capsys, "audit", "userdp_ext_fixture:raising", "--claim", "pure:epsilon=1", "--debug")
    assert code == 3 and "Traceback" in err and "_raising_factory" in err


def test_mechanism_exception_exits_3_not_1_and_not_2(capsys, ext_module):
    code, out, err = run(capsys, "audit", "userdp_ext_fixture:raising_mechanism", "--claim", "pure:epsilon=1")
    assert code == 3 and not out
    assert "your mechanism raised ZeroDivisionError" in err


def test_registry_failure_on_defaults_is_an_internal_error(capsys, monkeypatch):
    def broken_build(epsilon=1.0):
        raise ValueError("a bug in a registry builder")

    entry = Entry(
        name="fake.broken",
        kind="control",
        paper="-",
        algorithm="-",
        relation="-",
        function="-",
        expected="no violation found",
        build=broken_build,
        params={"epsilon": 1.0},
    )
    monkeypatch.setattr("userdp.audits.cli.targets.get", lambda name: entry)
    code, out, err = run(capsys, "audit", "fake.broken")
    assert code == 3 and "internal error" in err and "bug in userdp" in err


def test_one_pair_or_many():
    from userdp.audits.cli.targets import _external_pairs

    assert [p.description for p in _external_pairs((0.0, 1.0), "f")] == ["pair 0: 0 vs 1"]
    assert [p.description for p in _external_pairs((0.0, 1.0, "shift"), "f")] == ["shift"]
    three = _external_pairs(((0.0, 1.0), (0.0, 2.0), (0.0, 3.0)), "f")  # a tuple of three pairs
    assert [(p.first, p.second) for p in three] == [(0.0, 1.0), (0.0, 2.0), (0.0, 3.0)]


def test_external_pairs_are_described_not_truncated(capsys, ext_module):
    code, out, _ = run(
        capsys, "audit", "userdp_ext_fixture:arrays", "--claim", "pure:epsilon=1", "--samples", "2000", "--json"
    )
    d = strict_json(out)
    t = audit_cmd.external_target("userdp_ext_fixture:arrays", {}, claim="pure:epsilon=1")
    assert [p.description for p in t.pairs] == [
        "pair 0: arrays of shape (10,) differing at 1 position(s): [0]: 1 vs 2",
        "bump the first query",
    ]
    assert d["witness"]["pair_description"] in [p.description for p in t.pairs]


# ------------------------------------------------------------------ --plot checks come first
def test_plot_to_unwritable_path_fails_before_auditing(capsys, ext_module):
    pytest.importorskip("matplotlib", reason="plot extra not installed")
    code, out, err = run(
        capsys, "audit", "userdp_ext_fixture:recording", "--claim", "pure:epsilon=1", "--plot", "/nonexistent/dir/x.png"
    )
    assert code == 2 and "/nonexistent/dir" in err and not out
    assert CALLS == []  # the mechanism never ran


def test_plot_without_matplotlib_fails_before_auditing(capsys, ext_module, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    code, out, err = run(
        capsys, "audit", "userdp_ext_fixture:recording", "--claim", "pure:epsilon=1", "--plot", str(tmp_path / "x.png")
    )
    assert code == 2 and "matplotlib" in err and "userdp[plot]" in err
    assert CALLS == []
    code, _, err = run(capsys, "reproduce", "amin2019-sum", "--plot", str(tmp_path / "y.png"))
    assert code == 2 and "matplotlib" in err


def test_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib", reason="plot extra not installed")
    f = tmp_path / "a.png"
    code, _, err = run(capsys, "audit", "control.noisy-max", "--samples", "5000", "--plot", str(f))
    assert code in (0, 1) and f.stat().st_size > 0 and "plot written" in err
    g = tmp_path / "b.png"
    run(capsys, "audit", "control.histogram-eps-scale", "--samples", "5000", "--plot", str(g))
    assert g.stat().st_size > 0


# ------------------------------------------------------------------ --all
def _as_reference(entry, name):
    return entry.__class__(**{**entry.__dict__, "name": name, "kind": "reference", "expected": "no violation found"})


def test_audit_all_exit_codes_and_expected_column(capsys, monkeypatch):
    # A reduced registry: two quick controls, then a "reference" entry that is broken.
    entries = [get("control.laplace"), get("control.laplace-half-scale")]
    monkeypatch.setattr(audit_cmd, "all_entries", lambda: entries)
    code, out, err = run(capsys, "audit", "--all", "--samples", "20000", "--confidence", "0.9999")
    assert code == 0 and "control.laplace-half-scale" in out
    assert "[2/2," in err and "elapsed" in err and "[1/2," in err and "left]" in err
    header = out.splitlines()[0].split()
    assert header[-2:] == ["expected", "ok"]
    broken_ref = _as_reference(get("control.laplace-half-scale"), "fake.ref")
    monkeypatch.setattr(audit_cmd, "all_entries", lambda: entries + [broken_ref])
    code, out, _ = run(capsys, "audit", "--all", "--samples", "20000", "--json")
    doc = strict_json(out)
    rows = doc["entries"]
    assert code == 1 and [r["name"] for r in rows][-1] == "fake.ref" and rows[-1]["as_expected"] is False
    assert doc["schema"] == "userdp.audit-all/1" and doc["summary"]["not_as_expected"] == 1
    assert all({"name", "kind", "verdict", "expected", "as_expected"} <= set(r) for r in rows)


def test_audit_all_is_bonferroni_corrected(capsys, monkeypatch):
    entries = [get("control.laplace"), get("control.laplace-half-scale"), get("control.gaussian")]
    monkeypatch.setattr(audit_cmd, "all_entries", lambda: entries)
    code, out, _ = run(capsys, "audit", "--all", "--samples", "2000", "--json", "--confidence", "0.9")
    doc = strict_json(out)
    assert doc["confidence"] == 0.9 and doc["correction"] == "bonferroni"
    assert doc["per_entry_confidence"] == pytest.approx(1 - 0.1 / 3, abs=1e-15)
    assert all(r["confidence"] == pytest.approx(1 - 0.1 / 3, abs=1e-15) for r in doc["entries"])
    code, out, _ = run(capsys, "audit", "--all", "--samples", "2000")
    assert "family-wise" in out and "Bonferroni over 3 entries" in out


def test_audit_all_entry_that_raises_exits_3_and_the_run_goes_on(capsys, monkeypatch):
    def broken_build(epsilon=1.0):
        raise RuntimeError("boom")

    bad = Entry(
        name="fake.raises",
        kind="control",
        paper="-",
        algorithm="-",
        relation="-",
        function="-",
        expected="no violation found",
        build=broken_build,
        params={"epsilon": 1.0},
    )
    monkeypatch.setattr(audit_cmd, "all_entries", lambda: [bad, get("control.laplace")])
    code, out, err = run(capsys, "audit", "--all", "--samples", "20000", "--confidence", "0.9999")
    assert code == 3 and "RuntimeError: boom" in out and "control.laplace" in out
    assert "1 errors" in out


# ------------------------------------------------------------------ reproductions
def _demo(claims, table=None):
    from userdp.audits.engine import verdicts as V

    return lambda plot=None, quick=False, progress=None: {
        "table": table or [{"n": 1, "x": 0.123456}],
        "claims": V.decide(claims),
    }


def test_reproduce_exit_status_follows_the_three_valued_verdict(capsys, monkeypatch):
    # Planted reproductions: data that clearly contradicts its claim must exit 1 ("fails");
    # data whose interval straddles the claim's boundary must exit 0 ("undecided"), and
    # both must show the interval, in the text and in the JSON.
    from userdp.audits.engine import registry
    from userdp.audits.engine import verdicts as V

    # 12 replications each: at the run's alpha = 1e-4 / 2, t_11 = 6.0, so up's interval is ~1 +- 0.14
    up, tie = [1.0, 1.1, 0.9, 1.05] * 3, [-1.0, 1.0, -1.1, 1.2] * 3
    down = [-v for v in up]
    monkeypatch.setitem(
        registry._REPRODUCTIONS,
        "demo.ok",
        _demo([V.claim("1 < 2", V.exact("2 - 1", 1.0, above=0.0)), V.claim("up", V.mean("d", up, above=0.0))]),
    )
    monkeypatch.setitem(
        registry._REPRODUCTIONS,
        "demo.bad",
        _demo([V.claim("up", V.mean("d", up, above=0.0)), V.claim("down is up", V.mean("d", down, above=0.0))]),
    )
    monkeypatch.setitem(
        registry._REPRODUCTIONS,
        "demo.tie",
        _demo([V.claim("up", V.mean("d", up, above=0.0)), V.claim("tie is up", V.mean("d", tie, above=0.0))]),
    )
    code, out, _ = run(capsys, "reproduce", "demo.ok", "--json")
    doc = strict_json(out)
    assert (
        code == 0
        and doc["schema"] == "userdp.reproduction/2"
        and doc["summary"] == {"holds": 2, "fails": 0, "undecided": 0}
    )
    assert [c["verdict"] for c in doc["claims"]] == ["holds", "holds"] and doc["claims"][0]["holds"] is True
    code, out, _ = run(capsys, "reproduce", "demo.ok")
    assert code == 0 and "0.1235" in out and "0.123456" not in out  # 4 significant digits
    assert "2 of 2 claims hold, 0 undecided, 0 fail;" in out
    code, out, _ = run(capsys, "reproduce", "demo.bad")
    assert code == 1 and "[FAILS] down is up" in out and "claim > 0: fails" in out and "0 undecided, 1 fails;" in out
    code, out, _ = run(capsys, "reproduce", "demo.tie")
    assert code == 0 and "[undecided] tie is up" in out and "claim > 0: undecided" in out
    assert "1 of 2 claims hold, 1 undecided, 0 fail;" in out and "interval [" in out
    code, out, _ = run(capsys, "reproduce", "demo.tie", "--json")
    c = strict_json(out)["claims"][1]
    i = c["intervals"][0]
    assert code == 0 and (c["verdict"], c["holds"], i["verdict"]) == ("undecided", None, "undecided")
    assert i["low"] < 0 < i["high"] and i["region"] == {"above": 0.0, "below": None, "closed": False}
    assert c["alpha"] == pytest.approx(1e-4 / 2)
    assert strict_json(out)["nonfinite"]["/claims/1/intervals/0/region/below"] == "+inf"


def test_reproduce_refuses_claims_without_a_verdict(capsys, monkeypatch):
    # a reproduction still returning the old {"holds": bool} claims is a bug of userdp: exit 3, named
    from userdp.audits.engine import registry

    monkeypatch.setitem(
        registry._REPRODUCTIONS,
        "demo.old",
        lambda plot=None, quick=False, progress=None: {
            "table": "t",
            "claims": [{"statement": "2 < 1", "holds": False, "evidence": "arith"}],
        },
    )
    code, out, err = run(capsys, "reproduce", "demo.old")
    assert code == 3 and "demo.old" in err and "verdict" in err


def test_reproduce_text_shows_the_deciding_intervals_first(capsys, monkeypatch):
    # 6 intervals, one undecided: the text shows it first, then the holding ones nearest their boundary
    from userdp.audits.engine import registry
    from userdp.audits.engine import verdicts as V

    comps = [V.exact(f"v{k}", float(k), above=0.0) for k in (9, 8, 7, 6, 5)] + [V.mean("u", [-1.0, 1.0], above=0.0)]
    monkeypatch.setitem(registry._REPRODUCTIONS, "demo.many", _demo([V.claim("many", comps)]))
    code, out, _ = run(capsys, "reproduce", "demo.many")
    lines = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("- ")]
    assert code == 0 and lines[0].startswith("- u = 0") and lines[1].startswith("- v5 = 5")
    assert lines[-1] == "- ... 2 more (5 of 6 hold; --json has all)"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(reproduce_cmd.all_reproductions()))
def test_every_reproduction_decides_its_claims_three_ways(capsys, name):
    # Every registered reproduction (--quick, ~4 min for all): each claim carries a verdict
    # in holds / fails / undecided with its intervals, and the exit status is 1 exactly when
    # one claim fails (a decided failure), else 0; never 3 (a claim without a verdict).
    code, out, err = run(capsys, "reproduce", name, "--quick", "--json")
    doc = strict_json(out)
    verdicts = [c["verdict"] for c in doc["claims"]]
    assert verdicts and set(verdicts) <= {"holds", "fails", "undecided"}, err
    assert all(c["intervals"] for c in doc["claims"])
    assert code == (1 if "fails" in verdicts else 0)


def test_reproduce_list(capsys):
    code, out, _ = run(capsys, "reproduce", "--list")
    names = {l.split()[0] for l in out.splitlines()[1:]}
    assert code == 0 and names == set(reproduce_cmd.all_reproductions())
    assert {"amin2019-sum", "epasto2020-theorem2", "epasto2020-claim3", "epasto2020-synthetic"} <= names


@pytest.mark.parametrize("name", ["amin2019-sum", "epasto2020-theorem2", "epasto2020-claim3"])
def test_quick_reproductions_check_every_claim_with_progress(capsys, name):
    # These three are exact or seeded computations of a few seconds: --quick is the full run.
    code, out, err = run(capsys, "reproduce", name, "--quick", "--json")
    quick = strict_json(out)
    assert code == 0 and quick["quick"] is True and all(c["verdict"] == "holds" for c in quick["claims"])
    full = reproduce_cmd.get_reproduction(name)()
    assert [c["statement"] for c in quick["claims"]] == [c["statement"] for c in full["claims"]]
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"{name} [") and "elapsed" in last


def test_synthetic_quick_checks_the_same_claims_as_the_full_run():
    # Structure only (tiny sizes): the claims do not depend on --quick; only the evidence says so.
    from userdp.audits.engine.blas import single_threaded_blas
    from userdp.audits.papers.epasto2020.audits_gwa import synthetic

    steps = []
    with single_threaded_blas():
        q = synthetic(quick=True, ns=(300,), epsilons=(1.0,), progress=lambda *a: steps.append(a))
        f = synthetic(ns=(300,), epsilons=(1.0,), reps=1)
    assert [c["statement"] for c in q["claims"]] == [c["statement"] for c in f["claims"]]
    assert all("--quick" in c["evidence"] for c in q["claims"])
    assert [s[:2] for s in steps] == [(1, 2), (2, 2)]


@pytest.mark.slow
def test_synthetic_quick_fails_no_claim(capsys):
    # Measured 31-35 s on the shared 2-core machine (README); the time is reported, not
    # asserted: on a shared machine it is not a property of the code. With 2 instances per
    # cell a t interval decides nothing at the run's error level: undecided, never "fails".
    code, out, _ = run(capsys, "reproduce", "epasto2020-synthetic", "--quick", "--json")
    doc = strict_json(out)
    print(f"\nepasto2020-synthetic --quick: {doc['elapsed_seconds']:.1f} s")
    assert code == 0 and all(c["verdict"] != "fails" for c in doc["claims"])


@pytest.mark.slow
def test_audit_all_full_registry(capsys):
    # The README's main job. Bonferroni over the entries: a correct entry is flagged with
    # probability <= 1e-4 in total at this confidence; every broken control was caught at
    # 1 - 5e-6 per entry on seeds 0-19 (audits/cli/main.py docstring).
    code, out, err = run(capsys, "audit", "--all", "--confidence", "0.9999")
    assert code == 0, out + err


# ------------------------------------------------------------------ ceiling and efficiency
def test_audit_reports_ceiling_and_efficiency_text_and_json(capsys):
    code, out, _ = run(capsys, "audit", "control.laplace", "--samples", "100000")
    assert code == 0
    assert "  ceiling          0.98" in out and "efficiency eps_lb / ceiling = " in out  # docs/design.md §6: 0.981
    code, out, _ = run(capsys, "audit", "control.laplace", "--samples", "100000", "--json")
    d = strict_json(out)
    c = d["ceiling"]
    assert c["method"] == "closed form" and abs(c["epsilon"] - 0.981) < 6e-4 and c["mu"] is None
    assert d["efficiency"] == d["epsilon_lower_bound"] / c["epsilon"] and d["mu_efficiency"] is None


def test_audit_of_a_gdp_entry_reports_the_mu_ceiling(capsys):
    code, out, _ = run(capsys, "audit", "control.gaussian", "--samples", "20000", "--json")
    d = strict_json(out)
    assert code == 0 and 0 < d["ceiling"]["mu"] < d["gdp"]["mu"]
    assert d["mu_efficiency"] == d["gdp"]["mu_lower_bound"] / d["ceiling"]["mu"]


def test_entry_without_noise_model_says_so(capsys):
    code, out, _ = run(capsys, "audit", "control.noisy-max", "--samples", "2000")
    assert "ceiling          not computed: the setup declares no noise model" in out
    code, out, _ = run(capsys, "audit", "control.noisy-max", "--samples", "2000", "--json")
    d = strict_json(out)
    assert d["ceiling"] is None and d["efficiency"] is None and d["mu_efficiency"] is None


def test_external_setup_with_a_mismatched_noise_model_exits_2(capsys, tmp_path, monkeypatch):
    (tmp_path / "wrongnoise.py").write_text(
        "import numpy as np\n"
        "from userdp.audits.engine.registry import AuditSetup\n"
        "from userdp.audits.engine.ceiling import NoiseModel\n"
        "from userdp.reference.claims import PureDP\n"
        "def make():\n"
        "    mech = lambda q, rng, size: q + rng.laplace(0.0, 1.0, size)\n"
        "    return AuditSetup(mech, [(0.0, 1.0)], PureDP(1.0),\n"
        "                      noise=NoiseModel('laplace', lambda q: np.array([q, q]), 1.0))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, _, err = run(capsys, "audit", "wrongnoise:make", "--samples", "1000")
    assert code == 2 and "noise" in err and "shape" in err
