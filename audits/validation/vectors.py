"""Test vectors as data: the reference's noise-free stages, published for any language's CI.

Like Wycheproof's test vectors, one JSON file per algorithm (``userdp vectors export``), each
vector a dataset and public parameters with

- ``result`` "valid": the stages the reference computes there (``expected``: weights,
  statistic, sensitivity, noise scale and the algorithm's other noise-free stages), which an
  implementation must reproduce to the file's tolerance, and must not refuse (nor its release);
- ``result`` "invalid": an input outside the paper's domain, which the implementation must
  refuse in every stage the reference refuses it in (``refused_by``; "mechanism" is the release);
- ``flags``: the bug classes the vector is built to expose (``vector_cases.BUG_CLASSES``: each
  class lists the planted bugs and the corpus entries of tests/papers/<paper>/ it is drawn
  from); a failing vector names the likely bug.

The vectors are built from ``vector_cases.designs()`` (one design per validatable algorithm, the
datasets and why each vector exposes its flags) and the reference's own stages, so a new
reference release regenerates them. ``docs/vectors.md`` is their index (``index_markdown``).

Checking (``check``; ``userdp vectors check ALGO --command CMD``): an ``Adapter``'s stages and
mechanism against a document. A stage is "equal" when every entry satisfies
|got - expected| <= rtol * max(1, |expected|) with the document's ``rtol`` (validate's stage
tolerance, ``validate.STAGE_RTOL``; a file may tighten it, not loosen it: ``check_document``),
after both are put in the document's JSON form (numbers, arrays, objects of named values). A
difference is reported with its relative difference |got - expected| / max(|got|, |expected|),
which reads the same whatever the size of the numbers (a factor 2 is 0.5), beside the rule. A
refusal is a ``ValueError`` or ``TypeError`` (over the protocol: an error response of kind
"refused"); any other exception is reported as such. A failed vector's suspects are those of its
flags whose class can change the stages that failed (``vector_cases.suspects``, ``CLASS_STAGES``):
a noise scale wrong beside right weights points to the noise and sensitivity classes, not the weights'.

Format (schema "userdp.vectors/1"): {schema, algorithm, generator, reference, relation,
stages {stage: {params, dataset}}, tolerance {rtol, rule, source}, flags {flag: description}
(the flags used in the file), numberOfVectors, vectors [{id, comment, flags, result, dataset,
params, expected [, intermediate] | refused_by}]} (``intermediate``: the paper's values between the input
and the stages, e.g. Epasto's h* and n_h, written where a design defines them to locate a failing
stage; never checked); datasets and parameters are in the protocol's JSON form
(``protocol.encode_dataset``, ``protocol.encode_params``). Then either ``numberOfStatisticalVectors`` and
``statistical`` (``vector_stats``: a neighbouring pair, the law of a release coordinate on each side, and tests
with stated error rates, run by ``check`` on a target that releases unless ``statistical=False``), or
``statisticalNote``: why the release has none.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Mapping, Sequence

import numpy as np

from userdp.audits.validation.protocol import _param, _violation, decode_dataset, encode_dataset, encode_params
from userdp.audits.validation import vector_stats as VS
from userdp.audits.validation.vector_cases import BUG_CLASSES, CLASS_STAGES, designs, reach, suspects

__all__ = [
    "SCHEMA",
    "GENERATOR_COMMAND",
    "build",
    "export",
    "SCHEMA_FILE",
    "MAX_FILE_BYTES",
    "load",
    "load_schema",
    "check_document",
    "checkable",
    "check",
    "index_markdown",
    "format_check",
    "VectorResult",
    "CheckReport",
]

SCHEMA = "userdp.vectors/1"
# The command that writes the files (the repository's vectors/ is written with --out vectors); a file's
# "generator" is the reference's version (userdp's) and this command: its source.
GENERATOR_COMMAND = "userdp vectors export --out DIR (audits/validation/vectors.py)"


def _version() -> str:
    try:
        from importlib.metadata import version

        return f"userdp {version('userdp')}"
    except Exception:  # a source tree that is not installed
        return "userdp"


def _design(algorithm: str):
    if not isinstance(algorithm, str):
        raise TypeError(f"algorithm must be a registered algorithm's name (str), got {type(algorithm).__name__}")
    known = designs()
    if algorithm not in known:
        raise ValueError(
            f"algorithm: no test vectors for {algorithm!r}; algorithms with vectors: {', '.join(sorted(known))}"
        )
    return known[algorithm]


def _jsonable(value):
    """A stage's value in the documents' JSON form: numbers, (nested) arrays, objects."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()] if value.ndim else _jsonable(value.item())
    return _param(value, "value")


def _normal(value):
    """The JSON form decoded one way (as ``protocol.decode_value`` does, non-finite numbers
    included): what two values are compared in."""
    if isinstance(value, dict):
        if set(value) == {"nonfinite"}:
            return float(value["nonfinite"])
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list):
        parts = [_normal(v) for v in value]
        try:
            return np.array(parts, dtype=float)
        except (ValueError, TypeError):
            return tuple(parts)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a stage value: {type(value).__name__}")
    return float(value)


def _compare(got, want, rtol: float) -> str | None:
    """None if ``got`` equals ``want`` (both normal forms) to ``rtol``, else what differs."""
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return f"has keys {sorted(got) if isinstance(got, dict) else type(got).__name__}, expected {sorted(want)}"
        for k in sorted(want):
            why = _compare(got[k], want[k], rtol)
            if why is not None:
                return f"[{k!r}] {why}"
        return None
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return f"is not a tuple of {len(want)} parts"
        for j, (g, w) in enumerate(zip(got, want)):
            why = _compare(g, w, rtol)
            if why is not None:
                return f"part {j} {why}"
        return None
    if isinstance(got, (dict, tuple)):
        return f"is {type(got).__name__}, expected numbers"
    g, w = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if g.shape != w.shape:
        return f"has shape {g.shape}, expected {w.shape}"
    if w.size == 0:
        return None
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(same, 0.0, np.abs(g - w) / np.maximum(1.0, np.abs(w)))
    err = np.where(np.isnan(err), np.inf, err)
    worst = int(np.argmax(err))
    if err.flat[worst] <= rtol:
        return None
    where = "" if w.ndim == 0 else f" at {[int(i) for i in np.unravel_index(worst, w.shape)]}"
    gw, ww = float(g.flat[worst]), float(w.flat[worst])
    return (
        f"differs{where}: got {gw!r}, expected {ww!r} (relative difference {_relative(gw, ww):.3g}; the file's "
        f"rule |got - expected| <= rtol * max(1, |expected|) fails: {err.flat[worst]:.3g} > rtol {rtol:g})"
    )


def _relative(a: float, b: float) -> float:
    """|a - b| / max(|a|, |b|, tiny): the relative difference of two numbers (0 when equal, 1 or
    more when one is 0 or their signs differ, inf or nan propagating as inf)."""
    if a == b:
        return 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        r = abs(a - b) / max(abs(a), abs(b), np.finfo(float).tiny)
    return r if np.isfinite(r) else float("inf")


def _stage_call(design, stage: str, dataset, params: Mapping):
    kw = {k: params[k] for k in design.stages[stage] if k in params}
    args = (dataset,) if stage in design.takes_dataset else ()
    return args, kw


# ------------------------------------------------------------------ building
def build(algorithm: str) -> dict:
    """The vector document of ``algorithm`` (a validatable algorithm, ``userdp list``)."""
    from userdp.audits.validation.settings import STAGE_RTOL

    design = _design(algorithm)
    ref = design.reference()
    mechanism = design.mechanism()
    cases = list(design.cases())
    vectors, used = [], set()
    for j, case in enumerate(cases, 1):
        doc = {
            "id": j,
            "comment": case.comment,
            "flags": list(case.flags),
            "result": case.result,
            "dataset": encode_dataset(case.dataset),
            "params": encode_params(case.params),
        }
        if case.result == "valid":
            doc["expected"] = {}
            for s in design.stages:
                args, kw = _stage_call(design, s, case.dataset, case.params)
                doc["expected"][s] = _jsonable(getattr(ref, s)(*args, **kw))
            if design.intermediate is not None:  # the paper's values between input and stages: not checked
                doc["intermediate"] = _jsonable(design.intermediate(case.dataset, case.params))
            mechanism(case.dataset, rng=np.random.default_rng(0), size=2, **case.params)  # the reference releases
        else:
            doc["refused_by"] = _refused_by(design, ref, mechanism, case)
        vectors.append(doc)
        used.update(case.flags)
    statistical = VS.build_statistical(
        design, lambda stage, dataset, params: _stage_value(design, ref, stage, dataset, params)
    )
    used.update(f for v in statistical for f in v["flags"])
    doc = {
        "schema": SCHEMA,
        "algorithm": algorithm,
        "generator": f"{_version()}: {GENERATOR_COMMAND}",
        "reference": design.reference_text,
        "relation": design.relation,
        "notes": design.notes,
        "stages": {s: {"params": list(p), "dataset": s in design.takes_dataset} for s, p in design.stages.items()},
        "tolerance": {
            "rtol": STAGE_RTOL,
            "rule": "|got - expected| <= rtol * max(1, |expected|), entry by entry",
            "source": "userdp validate's stage tolerance (audits/validation/run.py, STAGE_RTOL): the rounding "
            "of sums of up to 10^4 terms is below 1e-12 of it",
        },
        "flags": {f: BUG_CLASSES[f].description for f in sorted(used)},
        "numberOfVectors": len(vectors),
        "vectors": vectors,
    }
    if bool(statistical) == bool(design.statistical_none):
        raise AssertionError(f"{algorithm}: a design has statistical vectors or says why not (statistical_none)")
    if statistical:
        doc["numberOfStatisticalVectors"] = len(statistical)
        doc["statistical"] = statistical
    else:
        doc["statisticalNote"] = design.statistical_none
    return doc


def _stage_value(design, ref, stage: str, dataset, params: Mapping):
    args, kw = _stage_call(design, stage, dataset, params)
    return getattr(ref, stage)(*args, **kw)


def _refused_by(design, ref, mechanism, case) -> list:
    out = []
    for s in design.stages:
        args, kw = _stage_call(design, s, case.dataset, case.params)
        try:
            getattr(ref, s)(*args, **kw)
        except (ValueError, TypeError):
            out.append(s)
    try:
        mechanism(case.dataset, rng=np.random.default_rng(0), size=2, **case.params)
    except (ValueError, TypeError):
        out.append("mechanism")
    if "mechanism" not in out:
        raise AssertionError(f"{design.algorithm}: invalid vector {case.comment!r} is released by the reference")
    return out


def export(algorithms: Sequence[str] | None, out_dir) -> list[str]:
    """Write ``<out_dir>/<algorithm>.json`` for each algorithm (None or empty: every one with a
    design); return the paths."""
    if algorithms is not None and (isinstance(algorithms, (str, bytes)) or not isinstance(algorithms, Sequence)):
        raise TypeError(f"algorithms must be None or a list of algorithm names, got {algorithms!r:.80}")
    names = sorted(designs()) if not algorithms else list(algorithms)
    for a in names:
        _design(a)
    if not isinstance(out_dir, (str, os.PathLike)) or not os.path.isdir(out_dir):
        raise ValueError(f"out_dir must be an existing directory, got {out_dir!r:.80}")
    out_dir = os.fspath(out_dir)
    paths = []
    for a in names:
        path = os.path.join(out_dir, f"{a}.json")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(_dump(build(a)))
        paths.append(path)
    return paths


def _dump(doc: Mapping) -> str:
    """The document as JSON: its header indented, one line per vector (diffs read vector by vector)."""
    head = {k: v for k, v in doc.items() if k not in ("vectors", "statistical")}
    text = json.dumps(head, indent=1, allow_nan=False, ensure_ascii=False)[:-2]
    parts = []
    for key in ("vectors", "statistical"):
        if key in doc:
            rows = ",\n".join("  " + json.dumps(v, allow_nan=False, ensure_ascii=False) for v in doc[key])
            parts.append(f' "{key}": [\n{rows}\n ]')
    return text + ",\n" + ",\n".join(parts) + "\n}\n"


SCHEMA_FILE = "schema/userdp-vectors-1.json"  # package data of userdp.audits.validation (JSON Schema 2020-12)
MAX_FILE_BYTES = 64 * 2**20  # a vector file larger than this is refused unread (the largest exported is < 1 MiB)


@lru_cache(maxsize=1)
def load_schema() -> dict:
    """The vector files' JSON Schema (``SCHEMA_FILE``, package data), parsed."""
    return json.loads(resources.files("userdp.audits.validation").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


def load(path) -> dict:
    """A vector document from a file, checked to be one (``check_document``). A file is read up
    to ``MAX_FILE_BYTES`` (an endless one, e.g. /dev/zero, is refused with bounded memory); every
    fault is a ``ValueError`` naming the file and the field."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path, got {type(path).__name__}")
    try:
        if os.path.isdir(path):
            raise ValueError(f"path {path}: is a directory, not a vector file")
        with open(os.fspath(path), "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"path {path}: cannot read it: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError(
            f"path {path}: longer than {MAX_FILE_BYTES} bytes (the limit of a vector file; the largest exported "
            "is under 1 MiB): not read further"
        )
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"path {path}: not JSON: {str(exc)[:200]}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ValueError(f'path {path}: not a userdp vector file (its "schema" must be {SCHEMA!r})')
    why = _fault(doc)
    if why is not None:
        raise ValueError(f"path {path}: {why}")
    return doc


def check_document(doc) -> None:
    """Raise ``ValueError`` naming the field (a JSON pointer) unless ``doc`` is a vector document:
    it satisfies the schema (``SCHEMA_FILE``: a "stages" object, a tolerance in [0, validate's
    ``STAGE_RTOL``], at least one vector, ...; checked by the protocol's own checker, which
    tests/test_vectors.py compares with ``jsonschema``) and holds together: ``numberOfVectors``
    counts the vectors, ids are distinct, every ``expected`` names a stage of ``stages``, every
    ``refused_by`` names one or "mechanism" (which the reference always refuses with), every flag
    is described in ``flags``, and every dataset is a valid ``UserDataset``."""
    if not isinstance(doc, Mapping):
        raise TypeError(
            f"doc must be a vector document (a dict: vectors.load, vectors.build), got {type(doc).__name__}"
        )
    why = _fault(doc)
    if why is not None:
        raise ValueError(f"doc: {why}")


def _fault(doc) -> str | None:
    """None if ``doc`` is a vector document, else what is wrong, naming the field (``check_document``)."""
    try:
        _check_fields(doc)
    except ValueError as exc:
        return str(exc)
    return None


def _check_fields(doc) -> None:
    root = load_schema()
    why = _violation(doc, root, root, "")
    if why is not None:
        vs = doc.get("vectors") if isinstance(doc, dict) else None
        for j, v in enumerate(vs if isinstance(vs, list) else []):  # the vector's own form names the field
            kind = v.get("result") if isinstance(v, dict) else None
            if kind in ("valid", "invalid"):
                w = _violation(v, root["$defs"][f"{kind}_vector"], root, f"/vectors/{j}")
                if w is not None:
                    why = w
                    break
        raise ValueError(f"breaks the vector schema ({SCHEMA_FILE}): {why}")
    vs, stages = doc["vectors"], doc["stages"]
    if doc["numberOfVectors"] != len(vs):
        raise ValueError(f"/numberOfVectors: is {doc['numberOfVectors']}, but the file holds {len(vs)} vector(s)")
    seen = set()
    for j, v in enumerate(vs):
        where = f"/vectors/{j}"
        if v["id"] in seen:
            raise ValueError(f"{where}/id: {v['id']} is the id of an earlier vector")
        seen.add(v["id"])
        names = v["expected"] if v["result"] == "valid" else [s for s in v["refused_by"] if s != "mechanism"]
        field_name = "expected" if v["result"] == "valid" else "refused_by"
        unknown = [s for s in names if s not in stages]
        if unknown:
            raise ValueError(f"{where}/{field_name}: stage(s) {unknown} not in /stages ({', '.join(stages)})")
        if v["result"] == "invalid" and "mechanism" not in v["refused_by"]:
            raise ValueError(
                f'{where}/refused_by: must include "mechanism" (the release refuses what the paper excludes)'
            )
        stray = [f for f in v["flags"] if f not in doc["flags"]]
        if stray:
            raise ValueError(f"{where}/flags: {stray} not described in /flags")
        try:
            decode_dataset(v["dataset"])
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{where}/dataset: not a dataset: {exc}") from None
    _check_statistical(doc)


def _check_statistical(doc) -> None:
    """The statistical vectors hold together: counted, distinct ids, described flags, datasets, a stated
    false-alarm rate of at most 1e-4 that is the sum of its tests' rates."""
    vs = doc.get("statistical", [])
    if ("statistical" in doc) == ("statisticalNote" in doc):
        raise ValueError(
            "/statisticalNote: a file has statistical vectors or a note saying why not, not both or neither"
        )
    if doc.get("numberOfStatisticalVectors", 0) != len(vs) or ("statistical" in doc) != (
        "numberOfStatisticalVectors" in doc
    ):
        raise ValueError(
            f"/numberOfStatisticalVectors: is {doc.get('numberOfStatisticalVectors')}, but the file holds "
            f"{len(vs)} statistical vector(s)"
        )
    seen = set()
    for j, v in enumerate(vs):
        where = f"/statistical/{j}"
        if v["id"] in seen:
            raise ValueError(f"{where}/id: {v['id']} is the id of an earlier statistical vector")
        seen.add(v["id"])
        stray = [f for f in v["flags"] if f not in doc["flags"]]
        if stray:
            raise ValueError(f"{where}/flags: {stray} not described in /flags")
        for side in ("D", "D_prime"):
            try:
                decode_dataset(v["pair"][side])
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{where}/pair/{side}: not a dataset: {exc}") from None
        t = v["tests"]
        for side, r in t["privacy"]["accept"].items():
            if len(r) != 2 or not 0 <= r[0] <= r[1] <= v["n"]:
                raise ValueError(f"{where}/tests/privacy/accept/{side}: {r} is not a range [lo, hi] within [0, n]")
        total = 2 * t["distribution"]["false_alarm_per_side"] + t["privacy"]["false_alarm"]
        if not total <= v["tests"]["false_alarm"] * (1 + 1e-12) or v["tests"]["false_alarm"] > 1e-4:
            raise ValueError(
                f"{where}/tests/false_alarm: {v['tests']['false_alarm']!r} is not the sum of its tests' rates "
                f"({total!r}) or exceeds 1e-4"
            )


# ------------------------------------------------------------------ checking
@dataclass
class VectorResult:
    id: int
    comment: str
    flags: list
    result: str  # "valid" | "invalid"
    verdict: str  # "pass" | "fail" | "skipped"
    reasons: list = field(default_factory=list)
    stages: list = field(default_factory=list)  # the stages that failed ("mechanism": the release)

    @property
    def suspects(self) -> list:
        """The flags the failing stages point to (``vector_cases.suspects``)."""
        return suspects(self.flags, self.stages, self.result) if self.verdict == "fail" else []

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "comment": self.comment,
            "flags": self.flags,
            "result": self.result,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "failed_stages": self.stages,
            "suspects": self.suspects,
        }


@dataclass
class CheckReport:
    algorithm: str
    target: str
    stages_checked: list
    stages_missing: list
    releases: bool
    results: list
    flags: dict  # flag -> description (the document's)
    statistical: list = field(default_factory=list)  # StatResult per statistical vector (none: not run)

    @property
    def failed(self) -> list:
        return [r for r in self.results if r.verdict == "fail"]

    @property
    def failed_statistical(self) -> list:  # the statistical vectors that failed
        return [r for r in self.statistical if r.verdict == "fail"]

    @property
    def checked(self) -> int:
        """The vectors on which something ran (passed or failed; not skipped), statistical ones included."""
        return sum(r.verdict != "skipped" for r in self.results + self.statistical)

    @property
    def verdict(self) -> str:
        """ "fail" if a vector failed, "pass" if at least one was checked and none failed, else
        "nothing checked" (every vector skipped: no stage of the file and no release): never a pass."""
        if self.failed or self.failed_statistical:
            return "fail"
        return "pass" if self.checked else "nothing checked"

    def to_dict(self) -> dict:
        by_flag: dict = {}
        for r in self.failed:
            for f in r.suspects:
                by_flag.setdefault(f, []).append(r.id)
        return {
            "algorithm": self.algorithm,
            "target": self.target,
            "verdict": self.verdict,
            "stages_checked": self.stages_checked,
            "stages_missing": self.stages_missing,
            "releases": self.releases,
            "vectors": len(self.results),
            "checked": self.checked,
            "passed": sum(r.verdict == "pass" for r in self.results),
            "failed": len(self.failed),
            "statistical_failed": len(self.failed_statistical),
            "skipped": sum(r.verdict == "skipped" for r in self.results),
            "failed_by_flag": {
                f: {"vectors": ids, "description": self.flags.get(f, "")} for f, ids in sorted(by_flag.items())
            },
            "results": [r.to_dict() for r in self.results],
            "statistical": [r.to_dict() for r in self.statistical],
        }


def _refusal(exc: BaseException) -> bool:
    return isinstance(exc, (ValueError, TypeError))


def _runs(v: Mapping, have, releases: bool) -> bool:
    """Whether vector ``v`` checks anything of a target with stages ``have`` and (or not) releases."""
    if v["result"] == "valid":
        return releases or any(s in v["expected"] for s in have)
    return any((releases if s == "mechanism" else s in have) for s in v["refused_by"])


def checkable(document: Mapping, impl) -> int:
    """How many vectors of ``document`` check something of ``impl`` (an ``Adapter``): 0 means
    that every vector would be skipped (``check``'s verdict "nothing checked")."""
    from userdp.properties.adapter import Adapter

    if not isinstance(document, Mapping):
        raise TypeError(f"document must be a vector document (vectors.build or vectors.load), got {document!r:.80}")
    why = _fault(document)
    if why is not None:
        raise ValueError(f"document: {why}")
    if not isinstance(impl, Adapter):
        raise TypeError(f"impl must be an Adapter (userdp.properties.adapter), got {type(impl).__name__}")
    have = [s for s in document["stages"] if getattr(impl, s, None) is not None]
    releases = impl.mechanism is not None
    return sum(_runs(v, have, releases) for v in document["vectors"]) + releases * len(document.get("statistical", []))


def check(document: Mapping, impl, name: str | None = None, statistical: bool = True) -> CheckReport:
    """Run every vector of ``document`` (``build`` or ``load``) on ``impl``, an ``Adapter``
    (``ProcessTarget.adapter()`` for a program); the stages it lacks are reported, not failed. With
    ``statistical`` (and a release), also its statistical vectors (``check_statistical``)."""
    from userdp.properties.adapter import Adapter

    if not isinstance(document, Mapping) or document.get("schema") != SCHEMA:
        raise TypeError(f"document must be a vector document (schema {SCHEMA!r}; vectors.build or vectors.load)")
    if not isinstance(impl, Adapter):
        raise TypeError(f"impl must be an Adapter (userdp.properties.adapter), got {type(impl).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be None or a str (the target's name in the report), got {type(name).__name__}")
    if not isinstance(statistical, bool):
        raise TypeError(f"statistical must be a bool (run the statistical vectors), got {type(statistical).__name__}")
    why = _fault(document)
    if why is not None:
        raise ValueError(f"document: {why}")
    stages = document["stages"]
    rtol = float(document["tolerance"]["rtol"])
    have = [s for s in stages if getattr(impl, s, None) is not None]
    missing = [s for s in stages if s not in have]
    releases = impl.mechanism is not None
    results = []
    for v in document["vectors"]:
        dataset = decode_dataset(v["dataset"])
        params = _decode_params(v["params"])
        reasons, ran, failed = [], 0, []
        if v["result"] == "valid":
            for s in have:
                if s not in v["expected"]:
                    continue
                ran += 1
                try:
                    got = _normal(_jsonable(_call(impl, s, stages[s], dataset, params)))
                except Exception as exc:
                    reasons.append(
                        f"{s}: {'refused' if _refusal(exc) else 'raised'} a valid input: {type(exc).__name__}: {exc}"[
                            :400
                        ]
                    )
                    failed.append(s)
                    continue
                why = _compare(got, _normal(v["expected"][s]), rtol)
                if why is not None:
                    reasons.append(f"{s} {why}")
                    failed.append(s)
            if releases:
                ran += 1
                try:
                    impl.mechanism(dataset, rng=np.random.default_rng([v["id"], 29]), size=2, **params)
                except Exception as exc:
                    reasons.append(
                        f"mechanism: {'refused' if _refusal(exc) else 'raised'} a valid input: "
                        f"{type(exc).__name__}: {exc}"[:400]
                    )
                    failed.append("mechanism")
        else:
            for s in v["refused_by"]:
                if not (releases if s == "mechanism" else s in have):
                    continue
                ran += 1
                try:
                    if s == "mechanism":
                        impl.mechanism(dataset, rng=np.random.default_rng([v["id"], 29]), size=2, **params)
                    else:
                        _call(impl, s, stages[s], dataset, params)
                except Exception as exc:
                    if not _refusal(exc):
                        reasons.append(
                            f"{s}: raised {type(exc).__name__} instead of refusing (ValueError or "
                            f'TypeError; over the protocol an error of kind "refused"): {exc}'[:400]
                        )
                        failed.append(s)
                    continue
                reasons.append(f"{s}: accepted an input the paper excludes")
                failed.append(s)
        verdict = "fail" if reasons else ("pass" if ran else "skipped")
        results.append(VectorResult(v["id"], v["comment"], list(v["flags"]), v["result"], verdict, reasons, failed))
    stat = [
        VS.check_vector(v, impl.mechanism, _decode_params(v["params"]))
        for v in (document.get("statistical", []) if statistical and releases else [])
    ]
    return CheckReport(
        document["algorithm"],
        name or impl.name,
        have,
        missing,
        releases,
        results,
        dict(document.get("flags", {})),
        stat,
    )


def _call(impl, stage: str, spec: Mapping, dataset, params: Mapping):
    kw = {k: params[k] for k in spec["params"] if k in params}
    return getattr(impl, stage)(*((dataset,) if spec["dataset"] else ()), **kw)


def _decode_params(obj: Mapping) -> dict:
    def one(v):
        if isinstance(v, dict) and set(v) == {"nonfinite"}:
            return float(v["nonfinite"])
        if isinstance(v, list):
            parts = [one(x) for x in v]
            try:
                a = np.array(parts)
            except ValueError:
                return parts
            return a if a.dtype.kind in "iuf" else parts
        return v

    return {k: one(v) for k, v in obj.items()}


def format_check(r: CheckReport) -> str:
    """The text report of ``check``."""
    if not isinstance(r, CheckReport):
        raise TypeError(f"r must be a CheckReport (what vectors.check returns), got {type(r).__name__}")
    d = r.to_dict()
    lines = [
        f"userdp vectors check {r.algorithm} {r.target}",
        f"verdict: {r.verdict.upper()}",
        f"vectors: {d['vectors']}: {d['passed']} passed, {d['failed']} failed, {d['skipped']} skipped (nothing "
        "to check)",
    ]
    if not r.checked:
        lines.append(
            "nothing was checked: the target has none of the file's stages and no release, so every vector "
            "was skipped; this is not a pass"
        )
    lines += [
        f"stages checked: {', '.join(r.stages_checked) or 'none'}"
        + (f"; not implemented (not checked): {', '.join(r.stages_missing)}" if r.stages_missing else "")
        + ("; releases checked for refusals" if r.releases else "; no releases"),
    ]
    lines += VS.format_results(r.statistical)
    if r.failed:
        lines += ["", "failed:"]
        for v in r.failed:
            lines.append(f"  #{v.id} [{', '.join(v.flags) or 'no flag'}] ({v.result}) {v.comment}")
            lines += [f"      {why}" for why in v.reasons]
            lines.append(
                f"      suspects (flags that can change {', '.join(dict.fromkeys(v.stages))}): "
                + (", ".join(v.suspects) or "none of its flags")
            )
        lines += ["", "bug classes the failing stages point to (flags; docs/vectors.md):"]
        for f, info in d["failed_by_flag"].items():
            lines.append(f"  {f} (vectors {', '.join(map(str, info['vectors']))}): {info['description']}")
    return "\n".join(lines)


_CHECKER = "node examples/js/check_vectors.js vectors/epasto2020.wa.json examples/js/wa_mean_user_weight_noise.js"
_ANY_LANGUAGE = [
    "## The files, and a CI in any language",
    "",
    "The files are in the repository, in `vectors/` (one `ALGORITHM.json` per algorithm). Each names its source in "
    '`"generator"`: the version of userdp whose reference computed it, and the command that wrote it. '
    "tests/test_vector_files.py regenerates them and fails, with the command to run, when a committed file is stale; "
    "it also lints every file against the JSON Schema with `jsonschema`, as a CI in another language can with its "
    "own validator. Besides the noise-free stages and the refusals, a file may carry statistical vectors that "
    "test the release's noise law with stated error rates (below). Where the paper defines values between "
    "the input and the stages, a valid vector also carries them in `intermediate`, never checked, to locate a "
    "failing stage: Epasto's h* (Claim 1's minimiser) and n_h in `epasto2020.wa` (a wrong h* moves every weight; "
    "a right h* with wrong weights puts the bug after it).",
    "",
    "A CI needs only the files. `examples/js/check_vectors.js` is such a checker in Node.js, with no Python: it "
    "reads a vector file and a JavaScript module exporting `{name, stages, release}` (as `examples/js/wa.js` "
    "does), calls each stage the module has with the dataset (if the file's `stages` says the stage takes one) "
    'and the parameters the file lists for it (`{"nonfinite": "inf"}` decoded), and applies the rules above: '
    "exit 0 pass, 1 a vector fails, 2 nothing to check; it runs the statistical vectors too, with the file's seeds "
    "and the generator of examples/js/userdp_protocol.js. On the buggy WA of examples/js, whose noise covers the "
    "mean user's weight instead of the heaviest user's:",
    "",
    "```sh",
    f"{_CHECKER}",
    "```",
    "",
    "prints the two failing vectors, each with its flags, stage by stage the value it got, the one expected "
    "and their relative difference (sensitivity 0.02 against 0.0253 on the first), and the file's h* and n_h; it "
    "ends with:",
    "",
    "```text",
    "epasto2020.wa: wa_mean_user_weight_noise.js: FAIL (7 passed, 2 failed, 0 skipped of 9; statistical: 1 passed, "
    "0 failed)",
    "```",
    "",
    "(its statistical vector passes: there every user weighs the same, so the mean user's weight is the heaviest's).",
    "",
    "tests/test_vector_files.py runs it on the JavaScript examples, correct and buggy, and checks that its verdict "
    "on every vector is `userdp vectors check`'s; it skips without Node.js, and fails instead when the environment "
    "variable `CI` is set.",
    "",
]


def _stages_line(name: str) -> str:
    """A class's line of the index: where it starts and what else it can change (``CLASS_STAGES``)."""
    start = CLASS_STAGES[name]
    if not start:
        return "none (the release only); never a suspect of a failing stage"
    rest = sorted(reach(name) - set(start))
    return f"starts in {', '.join(start)}" + (f"; can also change {', '.join(rest)}" if rest else "")


def index_markdown(documents: Sequence[Mapping]) -> str:
    """``docs/vectors.md``: every algorithm's vectors, the bug classes and where they come from."""
    if (
        isinstance(documents, (str, bytes, Mapping))
        or not isinstance(documents, Sequence)
        or not all(isinstance(d, Mapping) and d.get("schema") == SCHEMA for d in documents)
    ):
        raise TypeError(f"documents must be a list of vector documents (schema {SCHEMA!r}), got {documents!r:.80}")
    docs = sorted(documents, key=lambda d: d["algorithm"])
    lines = [
        "# Test vectors: index",
        "",
        "Generated by `userdp vectors export --out vectors --index docs/vectors.md` (audits/validation/vectors.py); "
        "do not edit by hand. A test regenerates it and fails if it is stale.",
        "",
        "One JSON file per algorithm, the reference's noise-free stages on each vector, with the inputs "
        "that must be refused, and statistical vectors that test the release's noise law where it has a closed form "
        '("Statistical vectors" below). Check a program with `userdp vectors check ALGORITHM --command "CMD"` '
        "(docs/protocol.md), or read the files from any language's CI: a vector passes when every stage "
        "your implementation has equals `expected` to the file's `tolerance` (valid vectors), or when "
        "your implementation refuses the input in every stage of `refused_by` it has (invalid vectors). The files "
        "follow the JSON Schema `audits/validation/schema/userdp-vectors-1.json` (a tolerance may be tightened, "
        "never loosened beyond 1e-9); a check passes only when at least one vector was checked.",
        "",
        "| algorithm | vectors | valid | invalid | statistical | stages | flags |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in docs:
        vs = d["vectors"]
        valid = sum(v["result"] == "valid" for v in vs)
        lines.append(
            f"| {d['algorithm']} | {len(vs)} | {valid} | {len(vs) - valid} | {len(d.get('statistical', []))} | "
            f"{', '.join(d['stages'])} | "
            f"{', '.join(sorted(d['flags']))} |"
        )
    lines += [
        "",
        *_ANY_LANGUAGE,
        *VS.index_lines(docs),
        "## Bug classes (flags)",
        "",
        "Each class is drawn from the planted bugs (tests/papers/<paper>/planted*.py) and the known-bug corpus "
        "(tests/papers/<paper>/corpus*.py) it lists; a vector carries the flags of the classes it is built to expose. "
        "`vectors check` suspects a failed vector's flag only when the stages that failed are ones its class can "
        "change and include one where it starts (a noise scale wrong beside right weights is not a weight bug).",
        "",
    ]
    for name in sorted(BUG_CLASSES):
        c = BUG_CLASSES[name]
        where = [f"`{a}`" for d in docs for a in [d["algorithm"]] if any(name in v["flags"] for v in d["vectors"])]
        lines += [
            f"### {name}",
            "",
            c.description,
            "",
            f"- vectors in: {', '.join(where) or 'none (no stage shows it: the release-level checks of validate do)'}",
            f"- stages: {_stages_line(name)}",
            f"- planted: {', '.join(f'`{p}`' for p in c.planted) or 'none'}",
            f"- corpus: {', '.join(f'`{p}`' for p in c.corpus) or 'none'}",
            "",
        ]
    for d in docs:
        lines += [f"## {d['algorithm']}", "", d["reference"] + ".", ""]
        if d.get("notes"):
            lines += [d["notes"], ""]
        lines += ["| id | result | flags | comment |", "|---|---|---|---|"]
        for v in d["vectors"]:
            lines.append(f"| {v['id']} | {v['result']} | {', '.join(v['flags'])} | {v['comment']} |")
        lines += ["", *VS.algorithm_lines(d)]
    return "\n".join(lines).rstrip() + "\n"
