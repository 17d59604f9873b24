"""Test vectors (audits/validation/vectors.py, audits/validation/vector_cases.py): the reference passes every vector,
and every planted stage bug fails a vector flagged with its bug class.

The bug-class vocabulary lives in the package (``vector_cases.BUG_CLASSES``) because tests/ is
not installed; here it is checked against the records it is drawn from: every planted bug
(tests/papers/<paper>/planted*.py; not the auditor's own bugs, tests/planted/auditor.py) and every
corpus bug (tests/papers/<paper>/corpus*.py) belongs to exactly one class, and every id a class lists exists.

A planted bug is a STAGE bug of a validatable algorithm when its adapter's noise-free stages, in
that algorithm's call shape, differ from the reference's (``STAGE_BUGS``). The others are listed
in ``NOT_STAGE_BUGS`` with the reason, and the table is complete: a new planted bug must be put
in one of them. Those whose stages ARE the reference's (the bug is in the release) must pass
every vector: the vectors do not flag correct stages.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib

import pytest

from papers import paper_modules
from planted import PlantedBug
from userdp.audits.cli import main as cli
from userdp.audits.validation import protocol as Pr
from userdp.audits.validation import vectors as Vec
from userdp.audits.validation import all_specs
from userdp.audits.validation.vector_cases import (
    BUG_CLASSES,
    CLASS_STAGES,
    DOWNSTREAM,
    STAGE_NAMES,
    VectorCase,
    designs,
    reach,
)

DESIGNS = designs()  # every algorithm's test-vector design (the catalogue loaded)

ROOT = pathlib.Path(__file__).parents[1]


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _planted() -> dict:
    out = {}
    # the papers' planted bugs (tests/papers/<paper>/planted*.py), by algorithm; tests/planted/auditor.py
    # holds bugs of the auditor itself (its bounds and sets), not of a DP implementation
    for algo, mod in paper_modules("planted").items():
        for v in vars(mod).values():
            if isinstance(v, (list, tuple)) and v and all(isinstance(b, PlantedBug) for b in v):
                for b in v:
                    out[f"{algo}/{b.name}"] = b
    return out


def _corpus() -> dict:
    return {e.id: e for m in paper_modules("corpus").values() for e in m.CORPUS}


PLANTED, CORPUS = _planted(), _corpus()

# planted bug -> the validatable algorithm whose vectors must catch it
_DESFONTAINES = (
    "delta-not-split",
    "crossover-off-by-one",
    "recurrence-index-shift",
    "pi0-positive",
    "drop-term-missing",
    "count-rows",
)
STAGE_BUGS = {
    **{f"desfontaines2022/{n}": "desfontaines2022.optimal" for n in _DESFONTAINES},
    "amin2019/cap-per-record": "amin2019.capped-sum",
    "amin2019/half-sensitivity": "amin2019.capped-sum",
    "amin2019/optimal-cap-interpolated-quantile": "amin2019.capped-sum",
    "amin2019/optimal-cap-off-by-one": "amin2019.capped-sum",
    **{
        f"epasto2020/{n}": "epasto2020.wa"
        for n in (
            "mean-user-weight-sensitivity",
            "weights-not-normalised",
            "laplace-scale-uses-n",
            "cap-per-record",
            "sigma-from-data",
            "laplace-scale-times-eps",
            "statistic-ignores-weights",
            "lemma3-weight-not-split",
            "equal-user-weights",
        )
    },
    "epasto2020/sample-limiting-record-sensitivity": "epasto2020.sample-limiting",
    **{
        f"epasto2020_gwa/{n}": "epasto2020.gwa"
        for n in ("gwac-b-single-row", "gwac-labels-in-minus-B-B", "gwac-no-CX-check", "gwac-statistic-ignores-C")
    },
    **{
        f"acharya2024/{n}": "acharya2024.pdp-op"
        for n in (
            "weights-eps-over-n",
            "eta-d-for-sqrt-d",
            "lambda-zero-no-noise",
            "average-record-sensitivity",
            "theorem34-violated-B",
        )
    },
    **{
        f"krichene2023/{n}": "krichene2023.ssp"
        for n in (
            "eq12-clipping-skipped",
            "budget-w-not-w-squared",
            "exact-counts-no-charge",
            "unclipped-labels-unit-bound",
        )
    },
    **{
        f"zhao2024/{n}": "zhao2024.hlm"
        for n in (
            "capped-solver-refuses",
            "weights-not-normalised",
            "threshold-not-scaled-with-m",
            "ptr-delta-not-composed",
            "ptr-distance-without-movement",
            "ptr-kappa0-from-data",
        )
    },
    "zhao2024_wme/localisation-delta-not-composed": "zhao2024.wme",
    **{
        f"amin2019_erm/{n}": "amin2019.erm-output-perturbation"
        for n in ("tau-per-record", "record-level-sensitivity", "data-dependent-n-tau")
    },
    **{f"epasto2020_erm/{n}": "epasto2020.weighted-erm" for n in ("no-composition", "mean-user-weight")},
    "acharya2024/nonpersonalized-mean-eps": "acharya2024.nonpersonalized",
    "acharya2024/jorgensen-linear-probability": "acharya2024.jorgensen-max",
    "krichene2023/gd-sigma-gamma": "krichene2023.noisy-gd",
    **{
        f"zhao2024/{n}": "zhao2024.hlm-global"
        for n in ("global-curvature-from-radius", "global-no-sign-flip", "global-one-solver-step")
    },
    **{
        f"wilson2020/{n}": a
        for n, a in (
            ("clamp-after-aggregate", "wilson2020.sum"),
            ("sum-clamp-per-record", "wilson2020.sum-per-user"),
            ("sensitivity-max-without-abs", "wilson2020.sum"),
            ("replace-one-sensitivity", "wilson2020.sum"),
            ("classical-gaussian-sigma", "wilson2020.count-gaussian"),
            ("mean-sum-over-count", "wilson2020.mean"),
        )
    },
}

_RELEASE = "its noise-free stages are the reference's; the bug is in the release (the audit catches it)"
_OPTIMAL_GWA = (
    "GWA with C chosen inside (Theorem 6's optimum, or a rival), a call shape (B, epsilon, sigma) "
    "that epasto2020.gwa does not validate: it validates GWA_C for a GIVEN C"
)
NOT_STAGE_BUGS = {
    **{
        f"desfontaines2022/{n}": "a bounding bug: the sampling is random; the property suite checks it"
        for n in (
            "first-k-partitions",
            "sampling-by-values",
            "bound-rows-not-partitions",
            "no-cross-partition-bounding",
        )
    },
    # the release is wrong, the stages right: these must pass every vector
    "acharya2024/gamma-scale-eta": _RELEASE,
    "krichene2023/b-noise-without-gamma-star": _RELEASE,
    # release-only records (no adapter)
    **{k: "a release-only record: no stages to check" for k, b in PLANTED.items() if b.adapter is None},
    # stages outside a validatable algorithm's call shape
    **{
        f"epasto2020_gwa/{n}": _OPTIMAL_GWA
        for n in (
            "gwa-b-single-row",
            "gwa-b-per-record-max",
            "gwa-b-signed-sum",
            "gwa-labels-in-minus-B-B",
            "gwa-C-reads-labels",
            "gwa-ols-C",
            "gwa-ridge-C",
            "gwa-statistic-uses-ols",
        )
    },
    "epasto2020_gwa/sl-ols-one-dimensional-scale": "sample-limited OLS at Claim 2's best h (B, epsilon, sigma), a "
    "call shape that epasto2020.sample-limited-ols (a given h) does "
    "not validate",
    "krichene2023/lambda-inside-the-sum": "its statistic takes the regulariser lambda (Algorithm 1 line 5 with "
    "lambda inside the sum); krichene2023.ssp releases A-hat, b-hat without it",
    "krichene2023/gd-sum-clip-only": "its stage is the gradient at an iterate theta, which the vectors (stages of "
    "the inputs alone) do not pin",
    "krichene2023/rdp-half-for-the-pair": "its stage is the RDP curve at given orders, an accounting function of "
    "no vector's call shape",
    "epasto2020_erm/per-user-renormalised-weights": "its stage is the gradient at an iterate theta, which the "
    "vectors (stages of the inputs alone) do not pin",
    **{
        f"wilson2020/{n}": "its stage is bound, a uniform sample from the caller's generator, which no vector pins "
        "(the property suite checks it)"
        for n in ("l0-off-by-one", "no-linf-sampling", "largest-partitions-kept", "bound-before-public-filter")
    },
    "wilson2020/l2-without-sqrt-l0": "its stage is the L2 sensitivity (norm='l2'), which the vectors' call shape "
    "(sensitivity in L1) does not pass; its noise_scale is the reference's",
}


@pytest.fixture(scope="module")
def documents() -> dict:
    return {a: Vec.build(a) for a in DESIGNS}


# ------------------------------------------------------------------ the vocabulary
def test_every_planted_and_corpus_bug_has_exactly_one_class():
    listed_planted = [p for c in BUG_CLASSES.values() for p in c.planted]
    listed_corpus = [p for c in BUG_CLASSES.values() for p in c.corpus]
    bugs = {k for k, e in CORPUS.items() if e.bug_type != "none"}
    assert sorted(listed_planted) == sorted(PLANTED), set(listed_planted) ^ set(PLANTED)
    assert sorted(listed_corpus) == sorted(bugs), set(listed_corpus) ^ bugs
    assert len(PLANTED) >= 60 and len(bugs) >= 45  # the records exist (not an empty match)


def test_the_stage_bug_table_is_complete():
    assert not set(STAGE_BUGS) & set(NOT_STAGE_BUGS)
    assert set(STAGE_BUGS) | set(NOT_STAGE_BUGS) == set(PLANTED), set(PLANTED) - set(STAGE_BUGS) - set(NOT_STAGE_BUGS)


def test_every_validatable_algorithm_has_vectors(documents):
    assert set(DESIGNS) == set(all_specs())
    for a, doc in documents.items():
        valid = [v for v in doc["vectors"] if v["result"] == "valid"]
        invalid = [v for v in doc["vectors"] if v["result"] == "invalid"]
        assert valid and invalid, a
        assert set(doc["flags"]) == {f for v in doc["vectors"] for f in v["flags"]} <= set(BUG_CLASSES)
        for v in doc["vectors"]:  # the datasets are the protocol's
            Pr.check_message(v["dataset"], "dataset")
            Pr.check_message(v["params"], "params")
            assert v["result"] == "valid" or "mechanism" in v["refused_by"]


# ------------------------------------------------------------------ the two directions
@pytest.mark.parametrize("algorithm", sorted(DESIGNS))
def test_the_reference_passes_every_vector(documents, algorithm):
    report = Vec.check(documents[algorithm], DESIGNS[algorithm].reference())
    assert report.verdict == "pass", [(r.id, r.reasons) for r in report.failed]
    assert not report.stages_missing and all(r.verdict == "pass" for r in report.results)


@pytest.mark.parametrize("bug_id", sorted(STAGE_BUGS))
def test_a_planted_stage_bug_fails_a_vector_flagged_with_its_class(documents, bug_id):
    flag = next(k for k, c in BUG_CLASSES.items() if bug_id in c.planted)
    design = DESIGNS[STAGE_BUGS[bug_id]]
    adapter = PLANTED[bug_id].adapter if design.bind is None else design.bind(PLANTED[bug_id].adapter)
    report = Vec.check(documents[STAGE_BUGS[bug_id]], adapter)
    hits = [r for r in report.failed if flag in r.flags]
    assert hits, f"{bug_id} ({flag}) fails vectors {[(r.id, r.flags) for r in report.failed]} but none flagged {flag}"
    # the stage table (vector_cases.CLASS_STAGES): on the valid vectors flagged with its class, the
    # stages the bug fails are ones its class can change, one of them a start; so it stays a suspect
    for r in hits:
        if r.result == "valid" and set(r.stages) - {"mechanism"}:
            noise_free = set(r.stages) - {"mechanism"}
            assert noise_free <= reach(flag), (bug_id, r.id, sorted(noise_free - reach(flag)))
            assert noise_free & set(CLASS_STAGES[flag]), (bug_id, r.id, r.stages, CLASS_STAGES[flag])
    assert flag in report.to_dict()["failed_by_flag"], (bug_id, report.to_dict()["failed_by_flag"].keys())


def test_the_stage_table_covers_every_class_and_every_stage_of_the_files():
    assert set(CLASS_STAGES) == set(BUG_CLASSES)
    assert set(DOWNSTREAM) == set(STAGE_NAMES) >= {s for c in CLASS_STAGES.values() for s in c}
    assert {s for d in DESIGNS.values() for s in d.stages} <= set(STAGE_NAMES)


def test_a_half_noise_bug_suspects_the_noise_classes_not_the_weights(documents):
    """A noise scale half the reference's, every other stage right (the C program of a newcomer's
    tour): only noise_scale fails, so the weight classes, flagged on the same vectors, are not suspected."""
    ref = DESIGNS["epasto2020.wa"].reference()
    half = dataclasses.replace(ref, name="half-noise", noise_scale=lambda *a, **k: ref.noise_scale(*a, **k) / 2)
    report = Vec.check(documents["epasto2020.wa"], half)
    assert report.failed and all(r.stages == ["noise_scale"] for r in report.failed)
    assert any({"unnormalised-weights", "weight-formula"} & set(r.flags) for r in report.failed)  # were offered
    suspected = set(report.to_dict()["failed_by_flag"])
    assert suspected and not suspected & {"unnormalised-weights", "weight-formula", "per-record-bound"}, suspected
    assert suspected <= {c for c, st in CLASS_STAGES.items() if "noise_scale" in reach(c)}
    assert "suspects (flags that can change noise_scale)" in Vec.format_check(report)


@pytest.mark.parametrize("bug_id", [k for k, why in NOT_STAGE_BUGS.items() if why == _RELEASE])
def test_a_bug_in_the_release_only_passes_every_vector(documents, bug_id):
    algorithm = {"acharya2024": "acharya2024.pdp-op", "krichene2023": "krichene2023.ssp"}[bug_id.split("/")[0]]
    report = Vec.check(documents[algorithm], PLANTED[bug_id].adapter)
    assert report.verdict == "pass", [(r.id, r.reasons) for r in report.failed]


def test_a_vector_case_refuses_an_unknown_flag_or_result():
    with pytest.raises(ValueError, match="not bug classes"):
        VectorCase(None, {}, ("off-by-two",), "c")
    with pytest.raises(ValueError, match="result must be"):
        VectorCase(None, {}, (), "c", "acceptable")


# ------------------------------------------------------------------ files, index, command line
def test_export_writes_one_file_per_algorithm_and_the_index_is_current(tmp_path, capsys, documents):
    code, out, err = run(capsys, "vectors", "export", "--out", str(tmp_path), "--index", str(tmp_path / "index.md"))
    assert code == 0, err
    files = sorted(p.name for p in tmp_path.glob("*.json"))
    assert files == sorted(f"{a}.json" for a in DESIGNS)
    for a in DESIGNS:
        doc = Vec.load(tmp_path / f"{a}.json")
        assert {k: v for k, v in doc.items() if k != "generator"} == json.loads(
            json.dumps({k: v for k, v in documents[a].items() if k != "generator"})
        )
        assert Vec.check(doc, DESIGNS[a].reference()).verdict == "pass"
    index = (tmp_path / "index.md").read_text()
    assert index == (ROOT / "docs" / "vectors.md").read_text(), (
        "docs/vectors.md is stale: userdp vectors export --out DIR --index docs/vectors.md"
    )


def test_vectors_command_line_refuses_bad_input(capsys, tmp_path):
    code, _, err = run(capsys, "vectors", "export", "nope.algo", "--out", str(tmp_path))
    assert code == 2 and "no vectors for nope.algo" in err
    (tmp_path / "a-file").write_text("")
    code, _, err = run(capsys, "vectors", "export", "--out", str(tmp_path / "a-file"))
    assert code == 2 and "not a directory" in err
    Vec.export(["epasto2020.wa"], tmp_path)
    code, _, err = run(
        capsys,
        "vectors",
        "check",
        "amin2019.capped-sum",
        "--command",
        "true",
        "--file",
        str(tmp_path / "epasto2020.wa.json"),
    )
    assert code == 2 and "holds the vectors of epasto2020.wa" in err
    (tmp_path / "bad.json").write_text('{"schema": "other"}')
    code, _, err = run(
        capsys, "vectors", "check", "amin2019.capped-sum", "--command", "true", "--file", str(tmp_path / "bad.json")
    )
    assert code == 2 and "not a userdp vector file" in err
