"""Output helpers of the command line: strict JSON, tables, plot labels, BLAS threads."""

import json
import math

import numpy as np
import pytest

from userdp.audits.engine import report
from userdp.audits.engine.blas import openblas_thread_setters, single_threaded_blas


def test_to_json_nonfinite_numbers_become_null_with_their_json_pointer():
    body = {
        "a": math.inf,
        "b": [1, -math.inf, math.nan],
        "c/d": {"e~f": np.float64(np.inf)},
        "n": np.int64(3),
        "ok": np.bool_(True),
        "none": None,
    }
    text = report.to_json("userdp.test/1", body)
    assert "Infinity" not in text and "NaN" not in text
    doc = json.loads(text)
    assert doc["schema"] == "userdp.test/1" and doc["userdp_version"] == report.version()
    assert doc["a"] is None and doc["b"] == [1, None, None] and doc["c/d"] == {"e~f": None}
    assert doc["n"] == 3 and doc["ok"] is True and doc["none"] is None
    # RFC 6901: "/" in a key is written "~1" and "~" is written "~0"
    assert doc["nonfinite"] == {"/a": "+inf", "/b/1": "-inf", "/b/2": "nan", "/c~1d/e~0f": "+inf"}


def test_to_json_refuses_what_it_cannot_encode():
    with pytest.raises(TypeError, match="/x"):
        report.to_json("userdp.test/1", {"x": object()})


@pytest.mark.parametrize(
    "value, text",
    [
        (0.123456, "0.1235"),
        (49659.0, "49659"),
        (1e-4, "0.0001"),
        (7.62006816e8, "762006816"),
        (762006816.8, "7.62e+08"),
        (math.inf, "inf"),
        (None, "-"),
        (3, "3"),
        (True, "yes"),
        (2.0, "2"),
    ],
)
def test_fmt_significant_digits(value, text):
    assert report.fmt(value) == text


def test_table_aligns_numbers_right_and_text_left():
    t = report.table([{"name": "a", "x": 1.5}, {"name": "longer", "x": 10.25}])
    assert t.splitlines() == ["name        x", "a         1.5", "longer  10.25"]


def test_pct():
    assert [report.pct(c) for c in (0.95, 0.9975, 1 - 5e-6)] == ["95%", "99.75%", "99.9995%"]


def test_progress_line(capsys):
    import sys

    p = report.Progress("job", stream=sys.stderr)
    p.step(1, 4, "first")
    p.step(4, 4, "last")
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("job [1/4, ") and "elapsed, ~" in err[0] and err[0].endswith("left] first")
    assert err[1].startswith("job [4/4, ") and "left" not in err[1]


@pytest.mark.parametrize(
    "desc, first, second",
    [
        ("q = 0 vs q = 1.0", "D: q = 0", "D': q = 1.0"),
        ("user 0 (s=50): values all 0.0 vs all 1.0", "D: user 0 (s=50): values all 0.0", "D': user 0 (s=50): all 1.0"),
        (
            "10 records at the midpoint vs + one record at upper",
            "D: 10 records at the midpoint",
            "D': D + one record at upper",
        ),
        ("add a record to bin 0", "D: the first dataset", 'D\': D after "add a record to bin 0"'),
    ],
)
def test_plot_side_labels(desc, first, second):
    from userdp.audits.engine.plot import side_labels

    assert side_labels(desc) == (first, second)


def test_plot_discrete_categories_in_natural_order(tmp_path):
    pytest.importorskip("matplotlib", reason="plot extra not installed")
    import matplotlib.figure
    from userdp.audits import audit
    from userdp.audits.engine import plot
    from userdp.reference.claims import PureDP

    def mech(q, rng, size):  # values 0..5, most frequent is 5
        return np.minimum(rng.geometric(0.4, size) - 1 + q, 5)[::-1]

    r = audit(mech, (0, 1), PureDP(1.0), samples=2000, seed=0, output="discrete")
    seen = {}
    real_savefig = matplotlib.figure.Figure.savefig

    def spy(fig, *a, **k):
        seen["ticks"] = [t.get_text() for t in fig.axes[0].get_xticklabels()]
        seen["title"] = fig.axes[0].get_title(loc="left")
        seen["ylabel"] = fig.axes[0].get_ylabel()
        return real_savefig(fig, *a, **k)

    matplotlib.figure.Figure.savefig = spy
    try:
        plot.plot_audit(mech, r, str(tmp_path / "d.png"), samples=2000, name="demo")
    finally:
        matplotlib.figure.Figure.savefig = real_savefig
    assert seen["ticks"] == sorted(seen["ticks"], key=float) and len(seen["ticks"]) == 6
    assert "claimed: pure epsilon = 1" in seen["title"] and "eps_lb = " in seen["title"]
    assert seen["ylabel"].startswith("fraction of")


def test_single_threaded_blas_sets_and_restores(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    setters = openblas_thread_setters()
    if not setters:
        pytest.skip("no OpenBLAS library found in this process (numpy built against another BLAS)")
    saved = [get() for _, get in setters]
    for set_, _ in setters:  # a known count above 1 (the session runs with one: conftest.py)
        set_(2)
    before = [get() for _, get in setters]
    assert before == [2] * len(setters)
    with single_threaded_blas():
        assert [get() for _, get in setters] == [1] * len(setters)
    assert [get() for _, get in setters] == before
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")  # the user chose: leave it alone
    with single_threaded_blas():
        assert [get() for _, get in setters] == before
    for (set_, _), n in zip(setters, saved):
        set_(n)


def test_synthetic_expected_error_closed_form_against_monte_carlo():
    # Oracle: 20000 releases of GWA_C (OLS C) on one n = 300 instance of §6. The closed form
    # must sit within 5 standard errors of their mean (normal tail 5.7e-7; the squared error
    # of Laplace noise has finite variance, and 20000 draws make the mean near-normal).
    from userdp.audits.papers.epasto2020 import audits_gwa as M
    from userdp.reference import epasto2020_gwa as G

    rng = np.random.default_rng(11)
    D, beta, B, sigma = M.synthetic_instance(300, rng)
    X = G.features(D)
    C = G.ols_C(X)
    releases = G.mechanism(D, C, B, 2.0, rng, size=20_000)  # (size, d)
    errors = np.mean((X @ (releases - beta).T) ** 2, axis=0)  # (size,)
    se = errors.std(ddof=1) / np.sqrt(errors.size)
    want = M._expected_pred_error(D, X, C, B, 2.0, beta)
    assert abs(errors.mean() - want) < 5 * se, (errors.mean(), want, se)
    assert M._pred_error(X, releases[0], beta) == pytest.approx(errors[0], rel=1e-12)


def test_witness_values_are_capped_with_count_and_digest():
    import hashlib

    from userdp.audits.engine.value_sets import AtomSet, ValueSet
    from userdp.audits.engine.report import WITNESS_VALUES_MAX, capped_values

    small = list(range(10))
    assert capped_values(small) == {"values": small}
    big = [float(i) / 7 for i in range(5000)]
    d = capped_values(big)
    assert d["values"] == big[:WITNESS_VALUES_MAX] and d["values_count"] == 5000 and d["values_truncated"] is True
    canonical = json.dumps(big, separators=(",", ":"))  # the digest of the whole list
    assert d["values_sha256"] == hashlib.sha256(canonical.encode()).hexdigest()
    assert capped_values(big[:-1])["values_sha256"] != d["values_sha256"]
    # A witness set of 99,901 values (the report that once took 6.1 MB) stays small in JSON
    vs = ValueSet(tuple(range(99_901)), tuple(range(99_901)))
    text = report.to_json("userdp.audit/1", {"witness": {"rejection_set": vs.to_dict()}})
    assert len(text) < 50_000 and json.loads(text)["witness"]["rejection_set"]["values_count"] == 99_901
    atoms = AtomSet(tuple(float(v) for v in range(3000))).to_dict()
    assert atoms["type"] == "atoms" and len(atoms["values"]) == WITNESS_VALUES_MAX and atoms["values_count"] == 3000
