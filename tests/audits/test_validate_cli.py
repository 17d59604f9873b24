"""``userdp validate`` from the command line and the pytest plugin: exit status, report, JSON, bad input.

The verdicts themselves are tested entry by entry on the corpus (tests/corpus/test_corpus.py);
here: what a user sees. Every statistical run below is at validate's own settings (false
alarm <= 1e-4 per run, audits/validate.py) with a fixed seed.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

from test_audit_cli import run, strict_json          # tests/audits is on sys.path (rootdir conftest)
from userdp.audits import validate as V

GOOD = "corpus.amin2019:loop_exponential_difference"
BAD = "corpus.amin2019:half_scale"
FAST = ("--samples", "10000", "--audit-samples", "20000")


def test_correct_target_exits_0_with_the_checks_named(capsys):
    code, out, err = run(capsys, "validate", "amin2019.capped-sum", GOOD, *FAST)
    assert code == 0, out + err
    assert "verdict: PASS" in out and "findings: none" in out
    for check in ("properties", "stages", "differential", "independence", "audit"):
        assert f"\n  {check} " in out
    assert "skipped: TARGET has no noise-free stage" in out          # a plain function: mechanism only
    assert "differential: case 1 of 4 drawn" in err and "s]" in err   # progress on stderr, with elapsed time


def test_bug_exits_1_with_witness_and_json_and_report(capsys, tmp_path):
    report = tmp_path / "r.json"
    code, out, _ = run(capsys, "validate", "amin2019.capped-sum", BAD, *FAST, "--json", "--report", str(report))
    assert code == 1
    doc = strict_json(out)
    assert doc["schema"] == "userdp.validate/1" and doc["verdict"] == "privacy violation"
    assert strict_json(report.read_text()) == doc
    audit = next(f for f in doc["findings"] if f["check"] == "audit")
    # the scale T/(2 eps) doubles the loss: eps_lb well above the claim of 1 (true loss 2)
    assert 1.5 < audit["evidence"]["epsilon_lower_bound"] <= 2.0
    assert audit["evidence"]["witness"]["rejection_set"]["description"].startswith("{x ")
    spread = next(f for f in doc["findings"] if f["title"].startswith("release distribution"))
    assert spread["verdict"] == "deviation from reference"
    assert spread["evidence"]["sd_ratio"] == pytest.approx(0.5, abs=0.05)      # half the reference's scale
    code, out, _ = run(capsys, "validate", "amin2019.capped-sum", BAD, *FAST)   # the text report
    assert code == 1 and "verdict: PRIVACY VIOLATION" in out and "witness: pair 'add user" in out


def _module(monkeypatch, **objects):
    mod = types.ModuleType("userdp_validate_fixture")
    for k, v in objects.items():
        setattr(mod, k, v)
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    return mod.__name__


def _raises(dataset, rng, size=None, *, T, epsilon):
    raise KeyError("totals")


def _scalar(dataset, rng, size=None, *, T, epsilon):
    return 1.0                                   # one release whatever size asks


def _positional(dataset, T, eps, rng, size):     # eps, not epsilon: the reference's keywords do not bind
    return np.zeros(size)


def _nan(dataset, rng, size=None, *, T, epsilon):
    return np.full((size, 2), "x")


@pytest.mark.parametrize("obj,code,words", [
    ("raises", 3, ["TARGET's mechanism", "raised KeyError", "totals"]),
    ("scalar", 3, ["returned shape ()", "size=", "expected"]),
    ("positional", 2, ["cannot be called as mechanism(dataset, *, rng, size, T, epsilon)", "eps"]),
    ("text", 3, ["returned ndarray", "numeric releases"]),
    ("number", 2, ["target", "is a int", "expected an Adapter"]),
    ("missing", 2, ["has no 'missing'"]),
])
def test_target_errors_exit_2_or_3_with_a_message_never_a_traceback(capsys, monkeypatch, obj, code, words):
    name = _module(monkeypatch, raises=_raises, scalar=_scalar, positional=_positional, text=_nan, number=3)
    got, out, err = run(capsys, "validate", "amin2019.capped-sum", f"{name}:{obj}", *FAST)
    assert got == code, err
    assert "Traceback" not in err and out == ""
    for w in words:
        assert w in err, (w, err)


@pytest.mark.parametrize("argv,words", [
    (["amin2019.nope", GOOD], ["not a registered algorithm", "amin2019.capped-sum"]),
    (["control.laplace", GOOD], ["no validation spec yet"]),
    (["amin2019.capped-sum", "no_such_module_zz:f"], ["cannot import 'no_such_module_zz'"]),
    (["amin2019.capped-sum", "nocolon"], ["module:object"]),
    (["amin2019.capped-sum", GOOD, "--samples", "10"], ["--samples"]),
    (["amin2019.capped-sum", GOOD, "--report", "/no/such/dir/r.json"], ["--report", "does not exist"]),
    (["amin2019.capped-sum", GOOD, "--seed", "-1"], ["seed"]),
])
def test_usage_errors_exit_2_naming_the_culprit(capsys, argv, words):
    code, out, err = run(capsys, "validate", *argv)
    assert code == 2 and "Traceback" not in err
    for w in words:
        assert w in err, (w, err)


def test_importing_a_target_that_raises_exits_3(capsys, tmp_path, monkeypatch):
    (tmp_path / "boom_target_mod.py").write_text("raise RuntimeError('at import')\n")
    monkeypatch.chdir(tmp_path)                       # the current directory is on the import path
    code, _, err = run(capsys, "validate", "amin2019.capped-sum", "boom_target_mod:f", *FAST)
    assert code == 3 and "importing your module 'boom_target_mod' raised RuntimeError: at import" in err


def test_register_validation_refuses_bad_specs():
    with pytest.raises(TypeError, match="spec"):
        V.register_validation("amin2019.capped-sum")
    spec = V.get_validation("amin2019.capped-sum")
    with pytest.raises(ValueError, match="registered twice"):
        V.register_validation(spec)


def test_ks_threshold_is_the_dkw_bound():
    # 4 exp(-2 n a^2) = alpha at a = threshold / 2: the closed form, checked at one point
    n, alpha = 20_000, 3e-5
    a = V._ks_threshold(n, alpha) / 2
    assert 4 * math.exp(-2 * n * a * a) == pytest.approx(alpha, rel=1e-12)
    # and the distance itself against scipy's two-sample KS statistic
    from scipy import stats
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=500), rng.normal(0.3, size=700)
    assert V._ks_distance(x, y)[0] == pytest.approx(stats.ks_2samp(x, y).statistic, abs=1e-12)


# ------------------------------------------------------------------ the pytest plugin
def _pytest(tmp_path, *args, env_extra=None):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.dirname(__file__)),
                                                        os.environ.get("PYTHONPATH", "")])}
    env.pop("HYPOTHESIS_PROFILE", None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "userdp.properties", "-p", "no:cacheprovider",
                           "-q", "-rfs", *args], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)


def test_plugin_fails_on_a_corpus_bug_and_passes_on_a_correct_implementation(tmp_path):
    bad = _pytest(tmp_path, "--userdp-target", f"amin2019.capped-sum={BAD}", "--userdp-samples", "10000")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "FAILED ::amin2019.capped-sum::audit" in bad.stdout and "[privacy violation]" in bad.stdout
    assert "SKIPPED" in bad.stdout and "not applicable" in bad.stdout          # properties: no stages
    good = _pytest(tmp_path, "--userdp-target", f"amin2019.capped-sum={GOOD}", "--userdp-samples", "10000")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "3 passed" in good.stdout          # differential, independence, audit (stages: none to compare)


def test_plugin_honours_the_hypothesis_profile(tmp_path):
    # A staged target counts its statistic calls in a file; a profile of 3 examples must make far
    # fewer calls than the default. (A plugin that ignored the profile would count the same twice and fail the assertion.)
    (tmp_path / "counting_target.py").write_text(textwrap.dedent("""
        import os
        from corpus.amin2019 import staged_inverse_cdf, _stat_bincount
        from userdp.properties.amin2019 import CapAdapter
        def stat(dataset, T):
            with open(os.environ["COUNT_FILE"], "a") as fh:
                fh.write("x")
            return _stat_bincount(dataset, T)
        target = CapAdapter("counting", statistic=stat)
    """))
    (tmp_path / "conftest.py").write_text("from hypothesis import settings\nsettings.register_profile('tiny', "
                                          "max_examples=3)\n")
    counts = {}
    for profile in ("default", "tiny"):
        f = tmp_path / f"count_{profile}"
        r = _pytest(tmp_path, "--userdp-target", "amin2019.capped-sum=counting_target:target",
                    "--hypothesis-profile", profile, "-k", "prop_capped_per_user", env_extra={"COUNT_FILE": str(f)})
        assert r.returncode == 0, r.stdout + r.stderr
        counts[profile] = len(f.read_text())
    assert counts["tiny"] <= 3 < 30 <= counts["default"], counts


def test_plugin_without_the_option_adds_nothing(tmp_path):
    r = _pytest(tmp_path)
    assert r.returncode == 5 and "no tests ran" in r.stdout           # pytest's "nothing collected"
    bad = _pytest(tmp_path, "--userdp-target", "nonsense")
    assert bad.returncode == 4 and "ALGORITHM=module:object" in bad.stderr


def test_independence_case_shows_what_the_first_case_hides():
    # Sample limiting's differential cases hold each user's values equal, so a random T drawn
    # once per call (corpus bug) changes nothing there; the spec's independence_case (values
    # varying within users) shows it. Planted: the check on the first case, as before the field.
    spec = V.get_validation("epasto2020.sample-limiting")
    target = V.load_target("corpus.epasto2020_sl:random_T_once_per_call")
    cases = list(spec.cases())
    hidden, _ = V.run_independence(spec, target, cases[0], 0)
    shown, _ = V.run_independence(spec, target, spec.independence_on(cases), 0)
    assert hidden is None or hidden.verdict == "pass"
    assert shown is not None and shown.verdict == "not independent"
    good = V.load_target("corpus.epasto2020_sl:random_per_release")       # a fresh T per release
    ok, _ = V.run_independence(spec, good, spec.independence_on(cases), 0)
    assert ok is None or ok.verdict == "pass"


def test_independence_case_must_build_a_case():
    spec = V.get_validation("epasto2020.sample-limiting")
    with pytest.raises(TypeError, match="independence_case"):
        V.ValidationSpec(**{**{f: getattr(spec, f) for f in spec.__dataclass_fields__}, "independence_case": 3})
    broken = V.ValidationSpec(**{**{f: getattr(spec, f) for f in spec.__dataclass_fields__},
                                 "independence_case": lambda: "not a case"})
    with pytest.raises(TypeError, match=r"independence_case\(\) must be a Case"):
        broken.independence_on(list(spec.cases()))
