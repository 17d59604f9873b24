"""The userdp command line, through main([...])."""
import json
import sys
import types

import pytest

from userdp.audits import cli
from userdp.audits.registry import get


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("userdp ")


def test_list_json_fields(capsys):
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    rows = json.loads(out)
    by_name = {r["name"]: r for r in rows}
    lap = by_name["control.laplace"]
    for field in ("name", "kind", "paper", "algorithm", "relation", "claim", "function", "expected"):
        assert field in lap
    assert lap["kind"] == "control" and lap["expected"] == "no violation found"
    assert lap["claim"] == {"kind": "pure", "params": {"epsilon": 1.0}}
    assert by_name["control.isvt3"]["expected"] == "violation"


def test_list_table(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0 and "control.svt1" in out


def test_audit_correct_control_exits_0(capsys):
    code, out, _ = run(capsys, "audit", "control.laplace", "--samples", "20000", "--confidence", "0.9999")
    assert code == 0 and "no violation found" in out     # flagged with probability <= 1e-4


def test_audit_broken_control_exits_1_with_json(capsys):
    code, out, _ = run(capsys, "audit", "control.laplace-half-scale", "--samples", "20000", "--json",
                       "--param", "epsilon=0.5")
    assert code == 1                                       # true eps 1.0 vs claim 0.5: >10 sd
    d = json.loads(out)
    assert d["verdict"] == "violation" and d["claim"]["params"] == {"epsilon": 0.5}
    for field in ("epsilon_lower_bound", "confidence", "samples", "tightness", "witness",
                  "termination_reason", "elapsed_seconds"):
        assert field in d


@pytest.mark.parametrize("argv", [
    ["audit"], ["audit", "control.nope"], ["audit", "control.laplace", "--samples", "10"],
    ["audit", "control.laplace", "--confidence", "1.5"], ["audit", "control.laplace", "--param", "x"],
    ["audit", "control.laplace", "--param", "nope=1"], ["audit", "--all", "control.laplace"],
    ["frobnicate"], ["audit", "no_such_module_xyz:f", "--claim", "pure:epsilon=1"],
    ["audit", "control.laplace", "--param", "epsilon=0"], ["reproduce", "nothing.here"],
])
def test_usage_errors_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and err


def _tuple_factory(shift=1.0):
    return (lambda D, rng, size: D + rng.laplace(0.0, 1.0, size)), [(0.0, float(shift))]


@pytest.fixture
def ext_module(monkeypatch):
    mod = types.ModuleType("userdp_ext_fixture")
    mod.factory = _tuple_factory
    monkeypatch.setitem(sys.modules, "userdp_ext_fixture", mod)
    return mod


def test_external_mechanism(capsys, ext_module):
    code, out, _ = run(capsys, "audit", "userdp_ext_fixture:factory", "--claim", "pure:epsilon=1",
                       "--relation", "shift", "--samples", "20000", "--json", "--confidence", "0.9999")
    assert code == 0 and json.loads(out)["relation"] == "shift"
    code, out, _ = run(capsys, "audit", "userdp_ext_fixture:factory", "--claim", "pure:epsilon=1",
                       "--param", "shift=3", "--samples", "20000")
    assert code == 1                                       # shift 3 => eps 3, far above 1
    code, _, err = run(capsys, "audit", "userdp_ext_fixture:factory")
    assert code == 2 and "--claim" in err


def test_external_audit_setup_factory(capsys):
    code, out, _ = run(capsys, "audit", "userdp.audits.registry.controls:laplace_setup",
                       "--param", "scale_factor=0.5", "--samples", "20000")
    assert code == 1 and "violation" in out


def test_parse_claim():
    assert cli.parse_claim("approx:epsilon=1,delta=1e-6").params() == {"epsilon": 1.0, "delta": 1e-6}
    assert cli.parse_claim("personalized:epsilons=[1,2,0.5]").epsilons == (1.0, 2.0, 0.5)
    with pytest.raises(cli.UsageError):
        cli.parse_claim("bogus:epsilon=1")


def test_audit_all_exit_codes(capsys, monkeypatch):
    # A reduced registry: two quick controls plus a "reference" entry that is broken.
    entries = [get("control.laplace"), get("control.laplace-half-scale")]
    monkeypatch.setattr(cli, "all_entries", lambda: entries)
    code, out, err = run(capsys, "audit", "--all", "--samples", "20000", "--confidence", "0.9999")
    assert code == 0 and "control.laplace-half-scale" in out and "[2/2]" in err
    broken_ref = get("control.laplace-half-scale").__class__(
        **{**get("control.laplace-half-scale").__dict__, "name": "fake.ref", "kind": "reference",
           "expected": "no violation found"})
    monkeypatch.setattr(cli, "all_entries", lambda: entries + [broken_ref])
    code, out, _ = run(capsys, "audit", "--all", "--samples", "20000", "--json")
    rows = json.loads(out)
    assert code == 1 and [r["name"] for r in rows][-1] == "fake.ref"
    assert all({"name", "kind", "verdict"} <= set(r) for r in rows)


def test_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib", reason="plot extra not installed")
    f = tmp_path / "a.png"
    code, _, _ = run(capsys, "audit", "control.noisy-max", "--samples", "5000", "--plot", str(f))
    assert code in (0, 1) and f.stat().st_size > 0
    g = tmp_path / "b.png"
    run(capsys, "audit", "control.histogram-eps-scale", "--samples", "5000", "--plot", str(g))
    assert g.stat().st_size > 0


def test_reproduce(capsys, monkeypatch):
    from userdp.audits import registry
    monkeypatch.setitem(registry._REPRODUCTIONS, "demo.ok", lambda plot=None: {
        "table": [{"n": 1}], "claims": [{"statement": "1 < 2", "holds": True, "evidence": "arith"}]})
    monkeypatch.setitem(registry._REPRODUCTIONS, "demo.bad", lambda plot=None: {
        "table": "t", "claims": [{"statement": "2 < 1", "holds": False, "evidence": "arith"}]})
    code, out, _ = run(capsys, "reproduce", "demo.ok", "--json")
    assert code == 0 and json.loads(out)["claims"][0]["holds"] is True
    code, out, _ = run(capsys, "reproduce", "demo.bad")
    assert code == 1 and "FAILS" in out


@pytest.mark.slow
def test_audit_all_full_registry(capsys):
    # The README's main job. Correct entries are flagged with prob <= 1e-4 at this confidence.
    code, out, err = run(capsys, "audit", "--all", "--confidence", "0.9999")
    assert code == 0, out + err
