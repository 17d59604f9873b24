"""``userdp validate`` from the command line and the pytest plugin: exit status, report, JSON, bad input,
call shapes, input policies, the checks added for code as it is written at work.

The verdicts themselves are tested entry by entry on the corpus (tests/corpus/test_corpus.py);
here: what a user sees, and each new check against a planted miss. Every statistical run is at
validate's own settings (false alarm <= 1e-4 per run, audits/validation/run.py) with a fixed seed;
most use --quick or small explicit sample counts to stay fast.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import time
import types

import numpy as np
import pytest

from test_audit_cli import run, strict_json  # tests/audits is on sys.path (rootdir conftest)
from userdp.audits.engine.harness import holm
from userdp.audits.validation import Case, ValidationSpec, check_independence, get, report, settings
from userdp.audits import validation as VS
from userdp.audits.validation import run as V
from userdp.audits.validation import stats as S
from userdp.audits.validation.target import load_target, signature_text, template_text
from userdp.audits.validation import pytest_plugin

GOOD = "papers.amin2019.corpus:loop_exponential_difference"
BAD = "papers.amin2019.corpus:half_scale"
FAST = ("--samples", "10000", "--audit-samples", "20000")
QUICK = ("--quick",)


def _run_until(name, spec, target, **kw):
    """Run validate's checks (``run.checks``) on ``spec`` and ``target``: check ``name`` and what it needs
    first, or all of them (``name`` None); every finding so far."""
    todo = {c.name: c for c in V.checks(spec, target, **kw)}
    for c in todo.values() if name is None else [todo[name]]:
        c.run()
    return next(iter(todo.values())).ctx.findings


def _module(monkeypatch, **objects):
    mod = types.ModuleType("userdp_validate_fixture")
    for k, v in objects.items():
        setattr(mod, k, v)
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    return mod.__name__


def _totals(dataset):
    out: dict = {}
    for u, x in zip(dataset.user_ids.tolist(), dataset.values.tolist()):
        out[u] = out.get(u, 0.0) + x
    return out


# ------------------------------------------------------------------ the basics
def test_correct_target_exits_0_with_the_checks_named(capsys):
    code, out, err = run(capsys, "validate", "amin2019.capped-sum", GOOD, *FAST)
    assert code == 0, out + err
    assert "verdict: PASS\n" in out and "findings: none" in out and "call shape: batched" in out
    for check in ("properties", "stages", "independence", "differential", "inputs", "audit"):
        assert f"\n  {check} " in out
    assert "skipped: TARGET has no noise-free stage" in out  # a plain function: mechanism only
    assert "generated for seed 0" in out and "resolves a change of the noise scale by" in out
    assert "differential: case 1 of 8 drawn" in err and "s]" in err  # progress on stderr, with elapsed time


def test_bug_exits_1_with_witness_and_json_and_report(capsys, tmp_path):
    report = tmp_path / "r.json"
    code, out, _ = run(capsys, "validate", "amin2019.capped-sum", BAD, *FAST, "--json", "--report", str(report))
    assert code == 1
    doc = strict_json(out)
    assert doc["schema"] == "userdp.validate/1" and doc["verdict"] == "privacy violation" and doc["complete"]
    assert strict_json(report.read_text()) == doc
    audit = next(f for f in doc["findings"] if f["check"] == "audit" and "design" in f["evidence"])
    assert 1.5 < audit["evidence"]["epsilon_lower_bound"] <= 2.0  # T/(2 eps): true loss 2
    under = next(f for f in doc["findings"] if f["title"].startswith("under-noised"))
    assert under["evidence"]["spread_ratio"] == pytest.approx(0.5, abs=0.02)
    assert 1.8 < under["evidence"]["lower_bound"] <= 2.0  # the move in noise units: 2 x the reference's
    code, out, _ = run(capsys, "validate", "amin2019.capped-sum", BAD, *FAST)  # the text report
    assert code == 1 and "verdict: PRIVACY VIOLATION" in out and "witness: pair" in out


# ------------------------------------------------------------------ call shapes, names, --signature, --template
def test_one_release_per_call_with_renamed_parameters_passes(capsys):
    code, out, err = run(
        capsys,
        "validate",
        "amin2019.capped-sum",
        "papers.amin2019.corpus:one_release_clipping",
        "--param-map",
        "T=cap",
        "--param-map",
        "epsilon=eps",
        *QUICK,
    )
    assert code == 0, out + err
    assert "call shape: one release per call; parameters renamed {'T': 'cap', 'epsilon': 'eps'}" in out
    assert "independence  skipped: one release per call" in out


def test_unbound_names_exit_2_with_the_param_map_that_fixes_them(capsys):
    code, out, err = run(
        capsys, "validate", "amin2019.capped-sum", "papers.amin2019.corpus:one_release_clipping", *QUICK
    )
    assert code == 2 and out == ""
    assert "--param-map T=cap" in err and "--param-map epsilon=eps" in err and "--signature" in err


def test_signature_lists_shapes_parameters_units_and_fields(capsys):
    code, out, _ = run(capsys, "validate", "krichene2023.ssp", "--signature")
    assert code == 0
    for words in (
        "one release per call:  f(dataset, rng, *, m, n_counts",
        "batched:               f(dataset, rng, size, *",
        "an Adapter",
        "statistic(dataset, *, m, n_counts",
        "n_counts    (m,) the PUBLIC task sizes",
        "a standard deviation, not a variance",
        "task_ids  (N,)",
        "add/remove user",
    ):
        assert words in out, words
    assert signature_text(get("amin2019.capped-sum")).count("SCALE T / epsilon") == 1
    for name, spec in VS.all_specs().items():  # every spec documents every parameter it takes
        text = signature_text(spec)
        assert spec.parameters and spec.reads, name
        for p in spec.cases()[0].params:
            assert f"\n  {p} " in text, (name, p)


def test_template_is_a_runnable_module_that_passes(capsys, tmp_path, monkeypatch):
    code, out, _ = run(capsys, "validate", "epasto2020.wa", "--template")
    assert code == 0
    (tmp_path / "my_wa.py").write_text(out)
    r = subprocess.run([sys.executable, "my_wa.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and math.isfinite(float(r.stdout.strip())), r.stderr
    monkeypatch.chdir(tmp_path)
    code, out, err = run(
        capsys, "validate", "epasto2020.wa", "my_wa:release", "--samples", "2000", "--audit-samples", "1000"
    )  # the skeleton calls the reference once per release
    assert code == 0, out + err
    assert "def release(dataset: UserDataset, rng: np.random.Generator, *, B, epsilon, sigma):" in template_text(
        get("epasto2020.wa")
    )


def test_signature_without_target_and_target_missing(capsys):
    code, _, err = run(capsys, "validate", "amin2019.capped-sum")
    assert code == 2 and "needs a TARGET" in err
    code, _, err = run(capsys, "validate", "amin2019.capped-sum", "--signature", "--template")
    assert code == 2 and "give one" in err


# ------------------------------------------------------------------ input policies
def test_clipping_target_is_inferred_clip_and_its_out_of_domain_pair_audited(capsys):
    code, out, err = run(capsys, "validate", "epasto2020.wa", "papers.epasto2020.corpus:clips_values", *QUICK)
    assert code == 0, out + err
    assert "clips" in out and "1 out of domain" in out


def test_declared_refuse_makes_a_release_on_refused_input_a_finding(capsys):
    code, out, _ = run(
        capsys, "validate", "epasto2020.wa", "papers.epasto2020.corpus:clips_values", *QUICK, "--inputs", "refuse"
    )
    assert code == 1 and "verdict: INVARIANT VIOLATION" in out and "--inputs refuse" in out


def test_trust_lists_unenforced_inputs_without_failing(capsys):
    code, out, err = run(
        capsys,
        "validate",
        "amin2019.capped-sum",
        "papers.amin2019.corpus:one_release_trusting",
        *QUICK,
        "--inputs",
        "trust",
    )
    assert code == 0, out + err
    assert "inputs not enforced (not a finding; the caller must guarantee them):\n  every value >= 0" in out


def test_declared_clip_that_clips_wrong_is_a_finding(capsys):
    code, out, _ = run(
        capsys,
        "validate",
        "amin2019.capped-sum",
        "papers.amin2019.corpus:clips_to_absolute_value",
        *QUICK,
        "--inputs",
        "clip",
    )
    assert code == 1 and "--inputs clip, but the release on" in out
    code, _, err = run(
        capsys, "validate", "krichene2023.ssp", "papers.krichene2023.corpus:loop_box_muller", "--inputs", "clip"
    )
    assert code == 2 and "no projection onto its domain" in err


def test_a_release_at_eps_zero_is_a_finding_under_every_policy(capsys):
    for policy in ("trust", "clip"):
        code, out, _ = run(
            capsys,
            "validate",
            "amin2019.capped-sum",
            "papers.amin2019.corpus:no_noise_at_eps_zero",
            *QUICK,
            "--inputs",
            policy,
        )
        assert code == 1 and "releases on an input the paper excludes: epsilon = 0" in out, policy


def test_a_non_finite_release_is_always_a_finding(monkeypatch, capsys):
    def inf_above_cap(dataset, rng, size=None, *, T, epsilon):
        if not epsilon > 0:  # a refusal is a ValueError (anything else on epsilon = 0: exit 3)
            raise ValueError("epsilon must be > 0")
        g = sum(min(t, T) for t in _totals(dataset).values())
        out = g + rng.laplace(0.0, T / epsilon, size)
        return np.where(out > 4.5, np.inf, out)  # inf in the upper tail only

    name = _module(monkeypatch, f=inf_above_cap)
    code, out, err = run(capsys, "validate", "amin2019.capped-sum", f"{name}:f", *QUICK, "--debug")
    assert code == 1 and "releases non-finite values (inf or NaN)" in out, err


def test_krichene_release_on_a_refused_input_is_reported_not_an_internal_error(capsys):
    # a pair (A-hat, b-hat) released on an input the reference refuses once could not be formatted
    # (exit 3, "internal error"); it is a finding (declared refuse) with the output shown
    code, out, err = run(
        capsys,
        "validate",
        "krichene2023.ssp",
        "papers.krichene2023.corpus:loop_box_muller",
        *QUICK,
        "--inputs",
        "refuse",
    )
    assert code == 1, out + err
    assert "internal error" not in err and "releases on an input the paper excludes" in out
    assert "output: [" in out  # the (A-hat, b-hat) pair, flattened for the report


def test_short_never_raises():
    class Hostile:
        def __repr__(self):
            raise RuntimeError("no repr")

    for obj in (None, (np.ones((2, 1, 1, 1)), np.ones((2, 1, 1))), "text", {"a": np.ones(3)}, Hostile(), [1, [2, 3]]):
        assert isinstance(report.short(obj), str)


# ------------------------------------------------------------------ under-noised, generated cases, aiming
def test_noise_read_from_the_largest_record_is_under_noised_on_a_generated_case():
    # where every case holds a record at T (the first two fixed cases), the noise
    # is right and nothing shows (planted miss); generated cases with every user below the cap show it
    r = V.validate("amin2019.capped-sum", "papers.amin2019.corpus:noise_from_largest_record", quick=True)
    under = next(f for f in r.findings if f.title.startswith("under-noised"))
    assert r.verdict == "privacy violation" and "unbounded" in under.evidence["implied"]
    assert any(f.check == "audit" and f.title.startswith("aimed") for f in r.findings)
    spec = get("amin2019.capped-sum")
    fields = {f: getattr(spec, f) for f in spec.__dataclass_fields__}
    at_T = lambda: spec.cases()[:2]  # noqa: E731 (six users, one record at T = 1)
    for generate, flagged in ((None, False), (spec.generate, True)):
        found = _run_until(
            "differential",
            ValidationSpec(**{**fields, "cases": at_T, "generate": generate}),
            load_target("papers.amin2019.corpus:noise_from_largest_record"),
            quick=True,
        )
        assert any(f.title.startswith("under-noised") for f in found) is flagged, generate


def test_five_percent_less_noise_is_a_privacy_finding_with_its_implied_bound():
    r = V.validate("amin2019.capped-sum", "papers.amin2019.corpus:five_percent_less_noise")
    under = next(f for f in r.findings if f.title.startswith("under-noised"))
    assert under.evidence["confidence_interval"][1] < 1  # significantly less noise
    assert 1 < under.evidence["lower_bound"] * under.evidence["pair_share"] <= 1 / 0.95  # at most the truth
    # planted miss: 4% MORE noise (private) is a deviation, never a privacy finding
    r = V.validate("amin2019.capped-sum", "papers.amin2019.corpus:variance_eight_percent_high")
    assert r.verdict == "deviation from reference"
    assert any(f.title.startswith("noise scale differs") and "more noise" in f.title for f in r.findings)


def test_white_box_search_of_the_target_stages_aims_an_audit():
    # a staged per-record cap: its own stages say a user of 3 records at T moves the sum by 3 T, and
    # the audit of that pair flags it; planted miss: correct stages put the best pair at exactly 1
    r = V.validate("amin2019.capped-sum", "papers.amin2019.corpus:staged_per_record_cap", quick=True, examples=2)
    wb = next(f for f in r.findings if f.title.startswith("white-box aimed"))
    assert wb.verdict == "privacy violation" and "at 3 of its claim" in wb.title
    r = V.validate("amin2019.capped-sum", "papers.amin2019.corpus:staged_inverse_cdf", quick=True, examples=2)
    wb = next(f for f in r.findings if f.title.startswith("white-box aimed"))
    assert wb.verdict == "pass" and "at 1 of its claim" in wb.title


def test_parameter_regime_bug_seen_only_on_generated_cases():
    # noise calibrated as if B = 1: every fixed case has B = 1; a generated case has B = 3
    r = V.validate("epasto2020.wa", "papers.epasto2020.corpus:noise_for_B_one", quick=True)
    assert r.verdict == "privacy violation"
    spec = get("epasto2020.wa")
    fixed_only = ValidationSpec(**{**{f: getattr(spec, f) for f in spec.__dataclass_fields__}, "generate": None})
    found = _run_until(None, fixed_only, load_target("papers.epasto2020.corpus:noise_for_B_one"), quick=True)
    assert not any(f.verdict == "privacy violation" for f in found if f.check == "differential")


def test_generated_cases_depend_on_the_seed_and_cover_the_range():
    spec = get("acharya2024.pdp-op")
    a, b = spec.generate(0), spec.generate(1)
    assert [c.description for c in a] == [c.description for c in b]
    assert not np.array_equal(a[0].dataset.values, b[0].dataset.values)
    lams = {c.params["Lambda"] for c in a}
    assert min(lams) < 1 < max(lams) and {c.dataset.values.shape[1] for c in a} >= {1, 2, 3}
    g = get("krichene2023.ssp").generate(0)
    assert any(
        not np.array_equal(c.params["n_counts"], np.bincount(c.dataset.task_ids, minlength=c.params["m"])) for c in g
    ), "declared public counts that differ from the data's"


# ------------------------------------------------------------------ the whole release
@pytest.mark.slow  # 17.5 s idle; the default corpus slice keeps krichene2023/upper-triangle-noise-only
def test_both_triangles_are_compared():
    # noise on the upper triangle of A-hat only: a reading of one triangle passes it (planted miss:
    # the old flatten, upper triangle + b), the whole release does not
    r = V.validate("krichene2023.ssp", "papers.krichene2023.corpus:upper_triangle_noise_only", quick=True)
    assert r.verdict == "privacy violation"
    r = V.validate("krichene2023.ssp", "papers.krichene2023.corpus:independent_triangles", quick=True)
    assert any(f.title == "release structure differs from the reference's" for f in r.findings)
    X = np.random.default_rng(0).normal(size=(50, 3))
    X[:, 2] = X[:, 0]
    assert S.equal_pairs(X) == [(0, 2)]
    # planted miss: the flatten of one triangle (A-hat's upper triangle and diagonal, then b-hat) hides it
    from userdp.audits.papers.krichene2023 import specs as VK

    def upper_only(out, size):
        A, b = (np.asarray(x, dtype=float) for x in out)
        k, l = np.triu_indices(A.shape[-1])
        return np.concatenate([A[:, :, k, l].reshape(size, -1), b.reshape(size, -1)], axis=1)

    spec = get("krichene2023.ssp")
    one_triangle = ValidationSpec(
        **{
            **{f: getattr(spec, f) for f in spec.__dataclass_fields__},
            "flatten": upper_only,
            "audit_flatten": upper_only,
            "stage_flatten": lambda out: upper_only((np.asarray(out[0])[None], np.asarray(out[1])[None]), 1)[0],
        }
    )
    assert VK.flatten_ssp is spec.flatten
    found = _run_until(
        "differential", one_triangle, load_target("papers.krichene2023.corpus:upper_triangle_noise_only"), quick=True
    )
    assert all(f.verdict == "pass" for f in found), [f.title for f in found if f.verdict != "pass"]


def test_ks_p_value_is_the_dkw_bound_and_holm_matches_statsmodels():
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    n, m, d = 20_000, 40_000, 0.02
    a = d * (math.sqrt(n) * math.sqrt(m)) / (math.sqrt(n) + math.sqrt(m)) / math.sqrt(n * m)
    # DKW per side at the split that equalises the two terms: 2 exp(-2 n a_n^2) + 2 exp(-2 m a_m^2)
    a_n, a_m = d * math.sqrt(m) / (math.sqrt(n) + math.sqrt(m)), d * math.sqrt(n) / (math.sqrt(n) + math.sqrt(m))
    assert S.ks_pvalue(d, n, m) == pytest.approx(2 * math.exp(-2 * n * a_n**2) + 2 * math.exp(-2 * m * a_m**2))
    assert a > 0 and S.ks_pvalue(S.ks_threshold(n, 3e-5), n, n) == pytest.approx(3e-5)
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=500), rng.normal(0.3, size=700)
    assert S.ks_distance(x, y)[0] == pytest.approx(stats.ks_2samp(x, y).statistic, abs=1e-12)
    p = list(rng.uniform(0, 1e-4, 30)) + [0.5, 1e-9]
    assert list(holm(p, 1e-3)[0]) == list(multipletests(p, alpha=1e-3, method="holm")[0])  # the one Holm


def test_alpha_budget_adds_up_and_quantised_sample_counts():
    assert sum(settings.ALPHAS.values()) == pytest.approx(settings.ALPHA)
    assert [S.quantised(n, 2000, 100_000) for n in (0, 1999, 2000, 3999, 4000, 70_000, 10**6)] == [
        2000,
        2000,
        2000,
        2000,
        4000,
        64_000,
        100_000,
    ]


# ------------------------------------------------------------------ partial coverage, rng, speed
def test_no_stage_exits_2_and_stages_only_is_a_partial_pass(monkeypatch, capsys):
    from userdp.properties.adapter import Adapter
    from userdp.properties.amin2019 import CapAdapter
    import papers.amin2019.corpus as C

    stages = CapAdapter(
        "stages", statistic=C._stat_bincount, sensitivity=lambda T: T, noise_scale=lambda T, epsilon: T / epsilon
    )
    name = _module(monkeypatch, empty=Adapter("nothing"), stages=stages)
    code, _, err = run(capsys, "validate", "amin2019.capped-sum", f"{name}:empty")
    assert code == 2 and "no stage, so there is nothing to validate" in err
    code, out, _ = run(capsys, "validate", "amin2019.capped-sum", f"{name}:stages", "--examples", "5")
    assert code == 4 and "verdict: PASS (stages only: the release was not tested; privacy not checked)" in out
    code, out, _ = run(
        capsys, "validate", "amin2019.capped-sum", f"{name}:stages", "--examples", "5", "--allow-partial", "--json"
    )
    assert code == 0 and strict_json(out)["complete"] is False


def test_a_target_that_ignores_the_rng_is_warned_about(monkeypatch, capsys):
    own = np.random.default_rng(123)

    def f(dataset, rng, *, T, epsilon):
        if not epsilon > 0:  # a refusal is a ValueError (anything else on epsilon = 0: exit 3)
            raise ValueError("epsilon must be > 0")
        return sum(min(t, T) for t in _totals(dataset).values()) + own.laplace(0.0, T / epsilon)

    name = _module(monkeypatch, f=f)
    code, out, err = run(capsys, "validate", "amin2019.capped-sum", f"{name}:f", *QUICK, "--json")
    assert code == 0
    assert strict_json(out)["reproducible"] is False and "ignores the rng" in err


def test_no_search_turns_the_pair_search_off(monkeypatch, capsys):
    # The flag reaches validate as search=False (and its absence as True); planted: a CLI that
    # dropped the flag would pass True both times. What the search changes in a verdict is tested
    # on the corpus (tests/audits/test_pair_search.py).
    seen = []

    class Stop(Exception):
        pass

    def spy(*args, **kw):
        seen.append(kw.get("search"))
        raise Stop  # the run itself is not what is tested here

    monkeypatch.setattr(V, "validate", spy)
    for extra in ((), ("--no-search",)):
        run(capsys, "validate", "amin2019.capped-sum", GOOD, *QUICK, *extra)  # exit 3: Stop is an internal error
    assert seen == [True, False]


def test_quick_run_of_a_fast_target_takes_seconds():
    c0 = time.process_time()
    r = V.validate("epasto2020.wa", "papers.epasto2020.corpus:loop_brent_inverse_cdf", quick=True)
    assert r.verdict == "pass" and time.process_time() - c0 < 10


# reference entries audited but not validated, each with its reason (every other one must be validatable)
AUDIT_ONLY = {
    "desfontaines2022.optimal-l0": "kappa > 1, validated through desfontaines2022.optimal's kappa = 3 designs",
    "desfontaines2022.laplace-thresholding": "a baseline of the paper, audited for the optimality comparison",
    "desfontaines2022.gaussian-thresholding": "a baseline of the paper, audited for the optimality comparison",
}


def test_list_marks_every_reference_entry_validatable(capsys):
    code, out, _ = run(capsys, "list", "--json")
    rows = strict_json(out)["entries"]
    reference = {r["name"]: r for r in rows if r["kind"] == "reference"}
    assert code == 0 and set(AUDIT_ONLY) <= set(reference)
    assert all(r["validate"] == (name not in AUDIT_ONLY) for name, r in reference.items())
    # 32 reference entries: the 19 the validate rework covered, zhao2024.hlm-global (HLM's global calibration),
    # the 8 of wilson2020 (COUNT, SUM, SUM per user, MEAN; Laplace and Gaussian), desfontaines2022.optimal
    # and its three audit-only entries
    assert len(reference) == 32


# ------------------------------------------------------------------ errors
def _raises(dataset, rng, size=None, *, T, epsilon):
    raise KeyError("totals")


def _scalar(dataset, rng, size=None, *, T, epsilon):
    return 1.0  # one release whatever size asks


def _positional(dataset, T, eps, rng, size):  # eps, not epsilon: the reference's keywords do not bind
    return np.zeros(size)


def _text(dataset, rng, size=None, *, T, epsilon):
    return np.full((size, 2), "x")


def _exits(dataset, rng, *, T, epsilon):
    sys.exit(0)


@pytest.mark.parametrize(
    "obj,code,words",
    [
        ("raises", 3, ["TARGET", "(_raises)", "raised KeyError", "totals"]),
        ("scalar", 3, ["returned shape ()", "size=", "expected"]),
        ("positional", 2, ["cannot be called as mechanism(dataset, rng, *, T, epsilon)", "--param-map epsilon=eps"]),
        ("text", 3, ["returned text (str 'x'", "numeric releases"]),
        ("exits", 3, ["called sys.exit(0)", "call 1"]),
        ("number", 2, ["target", "is a int", "expected an Adapter"]),
        ("missing", 2, ["has no 'missing'"]),
    ],
)
def test_target_errors_exit_2_or_3_with_a_message_never_a_traceback(capsys, monkeypatch, obj, code, words):
    name = _module(
        monkeypatch, raises=_raises, scalar=_scalar, positional=_positional, text=_text, exits=_exits, number=3
    )
    got, out, err = run(capsys, "validate", "amin2019.capped-sum", f"{name}:{obj}", *FAST)
    assert got == code, err
    assert "Traceback" not in err and out == ""
    for w in words:
        assert w in err, (w, err)


@pytest.mark.parametrize(
    "argv,words",
    [
        (["amin2019.nope", GOOD], ["not a registered algorithm", "amin2019.capped-sum"]),
        (["control.laplace", GOOD], ["not a paper's algorithm"]),
        (["amin2019.capped-sum", "no_such_module_zz:f"], ["cannot import 'no_such_module_zz'"]),
        (["amin2019.capped-sum", "nocolon"], ["module:object"]),
        (["amin2019.capped-sum", GOOD, "--samples", "10"], ["--samples"]),
        (["amin2019.capped-sum", GOOD, "--report", "/no/such/dir/r.json"], ["--report", "does not exist"]),
        (["amin2019.capped-sum", GOOD, "--seed", "-1"], ["seed"]),
        (["amin2019.capped-sum", GOOD, "--param-map", "T"], ["REFERENCE=YOURS"]),
        (["amin2019.capped-sum", GOOD, "--inputs", "ignore"], ["--inputs"]),
    ],
)
def test_usage_errors_exit_2_naming_the_culprit(capsys, argv, words):
    code, out, err = run(capsys, "validate", *argv)
    assert code == 2 and "Traceback" not in err
    for w in words:
        assert w in err, (w, err)


def test_importing_a_target_that_raises_exits_3(capsys, tmp_path, monkeypatch):
    (tmp_path / "boom_target_mod.py").write_text("raise RuntimeError('at import')\n")
    monkeypatch.chdir(tmp_path)  # the current directory is on the import path
    code, _, err = run(capsys, "validate", "amin2019.capped-sum", "boom_target_mod:f", *FAST)
    assert code == 3 and "importing your module 'boom_target_mod' raised RuntimeError: at import" in err


def test_register_refuses_bad_specs():
    with pytest.raises(TypeError, match="spec"):
        VS.register("amin2019.capped-sum")
    spec = VS.get("amin2019.capped-sum")
    with pytest.raises(ValueError, match="registered twice"):
        VS.register(ValidationSpec(**{f: getattr(spec, f) for f in spec.__dataclass_fields__}))
    assert VS.register(spec) is spec  # the same spec again: a no-op


# ------------------------------------------------------------------ the pytest plugin
def _pytest(tmp_path, *args, env_extra=None):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.dirname(__file__)), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("HYPOTHESIS_PROFILE", None)
    env.update(env_extra or {})
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--pyargs",
            "userdp.properties",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rfs",
            *args,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def test_plugin_fails_on_a_corpus_bug_and_passes_on_a_correct_implementation(tmp_path):
    bad = _pytest(tmp_path, "--userdp-target", f"amin2019.capped-sum={BAD}", "--userdp-samples", "4000")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "FAILED ::amin2019.capped-sum::audit" in bad.stdout and "[privacy violation]" in bad.stdout
    assert "SKIPPED" in bad.stdout and "not applicable" in bad.stdout  # properties: no stages
    good = _pytest(tmp_path, "--userdp-target", f"amin2019.capped-sum={GOOD}", "--userdp-samples", "4000")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "4 passed" in good.stdout  # independence, differential, inputs, audit (stages: none to compare)


def test_plugin_validates_a_program_over_the_protocol(tmp_path):
    """--userdp-command: the program of tests/audits/protocol_program.py, one item per check and
    property as for a Python target. A subset of the items keeps the run cheap (every item: the
    slow test below): the stages and a property on the correct mode, the differential and the
    calibration property on the half-noise mode, whose snippets start the program (its command), not a Python ``impl``.
    The differential's under-noising finding is validate's own (its false alarm <= 2e-5 per
    test, Holm over the tests; the run is seeded)."""
    program = f"{sys.executable} {os.path.join(os.path.dirname(__file__), 'protocol_program.py')}"
    good = _pytest(
        tmp_path,
        "--userdp-command",
        f"amin2019.capped-sum={program} good",
        "--userdp-samples",
        "2000",
        "-k",
        "stages or prop_noise_scale_calibrated",
    )
    assert good.returncode == 0, good.stdout + good.stderr
    assert "2 passed" in good.stdout, good.stdout
    bad = _pytest(
        tmp_path,
        "--userdp-command",
        f"amin2019.capped-sum={program} half-noise",
        "--userdp-samples",
        "2000",
        "-k",
        "prop_noise_scale_calibrated or differential",
    )
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "FAILED ::amin2019.capped-sum::differential" in bad.stdout and "[privacy violation]" in bad.stdout
    assert "FAILED ::amin2019.capped-sum::prop_noise_scale_calibrated" in bad.stdout
    assert f"program = ProcessTarget({program + ' half-noise'!r}, algorithm='amin2019.capped-sum')" in bad.stdout
    assert "impl = program.mechanism" in bad.stdout and "impl = program.adapter(" in bad.stdout
    assert "impl: your function" not in bad.stdout and "impl: your Adapter" not in bad.stdout
    with pytest.raises(pytest.UsageError, match="must be ALGORITHM=CMD"):
        pytest_plugin._parse("amin2019.capped-sum=", "--userdp-command")


@pytest.mark.slow
def test_plugin_validates_a_program_with_every_item_and_names_a_broken_protocol(tmp_path):
    """Every item of the correct program passes (or is not applicable); a program that breaks the
    protocol fails the item that called it with the breach, not the chain of exceptions behind it."""
    program = f"{sys.executable} {os.path.join(os.path.dirname(__file__), 'protocol_program.py')}"
    good = _pytest(tmp_path, "--userdp-command", f"amin2019.capped-sum={program} good", "--userdp-samples", "4000")
    assert good.returncode == 0 and "failed" not in good.stdout, good.stdout + good.stderr
    broken = _pytest(tmp_path, "--userdp-command", f"amin2019.capped-sum={program} stage-inf", "-k", "stages")
    assert broken.returncode == 1 and "the program broke the protocol inside validate's stages" in broken.stdout
    assert "During handling" not in broken.stdout, broken.stdout


def test_plugin_a_target_that_calls_pytest_skip_fails_its_checks(tmp_path):
    # Planted: a target with no noise at all that calls pytest.skip() when it is run; before the
    # guard, every check that calls it read "skipped" and pytest exited 0.
    (tmp_path / "skipping_target.py").write_text(
        textwrap.dedent("""
        import numpy as np
        import pytest
        def mechanism(dataset, rng, size, *, T, epsilon):
            pytest.skip("not today")
    """)
    )
    r = _pytest(
        tmp_path, "--userdp-target", "amin2019.capped-sum=skipping_target:mechanism", "--userdp-samples", "4000"
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "cannot skip, expect-fail or end its own validation" in r.stdout, r.stdout
    assert "passed" not in r.stdout.splitlines()[-1], r.stdout


PLUGIN_HOSTILE = {
    # name: (the target module, TARGET, what fails). Before the guard (pytest_plugin._target_region):
    # "xfail-stages": the four property items read XFAIL; "skip-stages": SKIPPED; "custom": a traceback
    # of the target's own exception class, not a failure naming it.
    "xfail-stages": (
        """
        import pytest
        from userdp.properties.amin2019 import CapAdapter

        def _xfail(*args, **kwargs):
            pytest.xfail("known to be off")

        TARGET = CapAdapter("xfails", statistic=_xfail, sensitivity=_xfail, noise_scale=_xfail)
        """,
        "TARGET",
        "::prop_",
    ),
    "exit-mechanism": (
        """
        import pytest

        def TARGET(dataset, rng, size, *, T, epsilon):
            pytest.exit("enough", returncode=0)
        """,
        "TARGET",
        "::audit",
    ),
    "skip-stages": (
        """
        import pytest
        from userdp.properties.amin2019 import CapAdapter

        def _skip(*args, **kwargs):
            pytest.skip("not today")

        TARGET = CapAdapter("skips", statistic=_skip, sensitivity=_skip, noise_scale=_skip)
        """,
        "TARGET",
        "::prop_",
    ),
    "custom-base-exception": (
        """
        class NotAnException(BaseException):
            pass

        def TARGET(dataset, rng, size, *, T, epsilon):
            raise NotAnException("graded by myself")
        """,
        "TARGET",
        "::audit",
    ),
}


@pytest.mark.parametrize(
    "name",
    [
        "xfail-stages",
        pytest.param("exit-mechanism", marks=pytest.mark.slow),  # failed before the guard too (an Exception)
        pytest.param("skip-stages", marks=pytest.mark.slow),
        pytest.param("custom-base-exception", marks=pytest.mark.slow),
    ],
)
def test_plugin_a_target_that_raises_a_pytest_outcome_or_base_exception_fails(tmp_path, name):
    # Planted targets with no noise at all (or no stage that computes anything): each must fail
    # its items, and pytest exit 1, never 0 with "skipped", "xfailed" or an early exit.
    source, obj, item = PLUGIN_HOSTILE[name]
    module = f"hostile_{name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
    r = _pytest(tmp_path, "--userdp-target", f"amin2019.capped-sum={module}:{obj}", "--userdp-samples", "4000")
    assert r.returncode == 1, r.stdout + r.stderr
    failed = [line for line in r.stdout.splitlines() if line.startswith("FAILED") and item in line]
    assert failed, r.stdout
    assert "xfailed" not in r.stdout.splitlines()[-1] and "passed" not in r.stdout.splitlines()[-1], r.stdout


def test_plugin_honours_the_hypothesis_profile(tmp_path):
    # A staged target counts its statistic calls in a file; a profile of 3 examples must make far
    # fewer calls than the default.
    (tmp_path / "counting_target.py").write_text(
        textwrap.dedent("""
        import os
        from papers.amin2019.corpus import _stat_bincount
        from userdp.properties.amin2019 import CapAdapter
        def stat(dataset, T):
            with open(os.environ["COUNT_FILE"], "a") as fh:
                fh.write("x")
            return _stat_bincount(dataset, T)
        target = CapAdapter("counting", statistic=stat)
    """)
    )
    (tmp_path / "conftest.py").write_text(
        "from hypothesis import settings\nsettings.register_profile('tiny', max_examples=3)\n"
    )
    counts = {}
    for profile in ("default", "tiny"):
        f = tmp_path / f"count_{profile}"
        r = _pytest(
            tmp_path,
            "--userdp-target",
            "amin2019.capped-sum=counting_target:target",
            "--hypothesis-profile",
            profile,
            "-k",
            "prop_capped_per_user",
            env_extra={"COUNT_FILE": str(f)},
        )
        assert r.returncode == 0, r.stdout + r.stderr
        counts[profile] = len(f.read_text())
    assert counts["tiny"] <= 3 < 30 <= counts["default"], counts


def test_plugin_without_the_option_adds_nothing(tmp_path):
    r = _pytest(tmp_path)
    assert r.returncode == 5 and "no tests ran" in r.stdout  # pytest's "nothing collected"
    bad = _pytest(tmp_path, "--userdp-target", "nonsense")
    assert bad.returncode == 4 and "ALGORITHM=module:object" in bad.stderr


def test_independence_case_shows_what_the_first_case_hides():
    # Sample limiting's differential cases hold each user's values equal, so a random T drawn
    # once per call changes nothing there; the spec's independence_case (values varying within
    # users) shows it. Planted: the check on the first case.
    spec = VS.get("epasto2020.sample-limiting")
    cases = list(spec.cases())

    def independence(target, case):
        ctx = next(V.checks(spec, load_target(target))).ctx
        return check_independence.check(spec, ctx.target, ctx, case)

    hidden = independence("papers.epasto2020.corpus_sl:random_T_once_per_call", cases[0])
    shown = independence("papers.epasto2020.corpus_sl:random_T_once_per_call", spec.independence_on(cases))
    assert hidden is None or hidden.verdict == "pass"
    assert shown is not None and shown.verdict == "not independent"
    ok = independence("papers.epasto2020.corpus_sl:random_per_release", spec.independence_on(cases))
    assert ok is None or ok.verdict == "pass"


def test_independence_case_must_build_a_case():
    spec = VS.get("epasto2020.sample-limiting")
    with pytest.raises(TypeError, match="independence_case"):
        ValidationSpec(**{**{f: getattr(spec, f) for f in spec.__dataclass_fields__}, "independence_case": 3})
    broken = ValidationSpec(
        **{**{f: getattr(spec, f) for f in spec.__dataclass_fields__}, "independence_case": lambda: "not a case"}
    )
    with pytest.raises(TypeError, match=r"independence_case\(\) must be a Case"):
        broken.independence_on(list(spec.cases()))
    assert isinstance(spec.independence_on([Case(None, {}, "c")]), Case)


# ------------------------------------------------------------------ release shapes
SHAPED = """
import numpy as np
from userdp.reference import amin2019

def column(dataset, rng, size, *, T, epsilon):  # (size, 1) where the reference gives (size,)
    return amin2019.mechanism(dataset, rng=rng, size=size, T=T, epsilon=epsilon).reshape(size, 1)

def listed(dataset, rng, *, T, epsilon):  # [x] where the reference gives a number
    return [float(amin2019.mechanism(dataset, rng=rng, size=1, T=T, epsilon=epsilon)[0])]

def vector(dataset, rng, size, **params):  # Epasto's GWA: (size, d) as the reference, then (size, d, 1)
    from userdp.audits.validation import get
    return get("epasto2020.gwa").reference(dataset, rng=rng, size=size, **params)[..., None]
"""


@pytest.mark.parametrize(
    "algorithm,name,why",
    [
        ("amin2019.capped-sum", "column", "return shape (size,), not (size, 1)"),
        ("amin2019.capped-sum", "listed", "a one-element list or array: return the number itself"),
        ("epasto2020.gwa", "vector", "an extra axis of length 1: return shape (size, 2), not (size, 2, 1)"),
    ],
)
def test_a_release_of_the_right_values_in_another_shape_is_named(capsys, tmp_path, monkeypatch, algorithm, name, why):
    """Planted: before the shape check these passed silently (the values were flattened to the
    reference's count); now the target's error names both shapes and the fix."""
    (tmp_path / "shaped_target.py").write_text(SHAPED)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, _, err = run(capsys, "validate", algorithm, f"shaped_target:{name}", "--quick")
    assert code == 3 and "the same values in another shape" in err and why in err, err
