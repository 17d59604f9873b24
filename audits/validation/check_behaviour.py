"""validate's first check, **behaviour**: a refusal, an exception, a warning, a non-finite value or a
release of another type or shape that depends on the data is an output of its own, and a privacy
violation (docs/validate.md, "Data-dependent behaviour").

What is called. TARGET's release, one release per call (a batched target with ``size=1``), under
``warnings.catch_warnings(record=True)`` with every warning shown (numpy's divide, overflow and invalid
set to "warn", its defaults, so that a caller's ``errstate`` cannot hide them), on in-domain datasets
only (the reference releases on them), with the case's public parameters. Each call's **outcome** is
one of: a release of some structure (a number, an array of a shape, a tuple of them), a release holding
inf or NaN (where the algorithm may decline, an empty release is a release), "raised <type>" (a program's
"failed" or "refused" answer included) or "warned <categories>" (with a release).

Where, in this order, until a candidate is found: (1) every case's dataset, its sensitivity pair's other
side and both sides of every design pair, each pair compared; (2) up to ``FAILING_NEIGHBOURS``
neighbours of each dataset whose outcome was not a plain release; (3) a path of neighbours from such a
dataset to one that released (``_path``: under add/remove user, add the other's users, then remove its
own; under a replace relation, replace one user at a time), bisected: the outcomes differ at its two
ends, so two adjacent datasets on it differ, found in log2 of its length calls; (4) up to
``NEIGHBOURS`` neighbours of each case's dataset under the spec's relation (``_neighbours``: random users
removed, copied in under a new id, or given another user's values; a record-level relation's own
enumeration on the dataset's values), within ``SCREEN_SECONDS`` of CPU. Neighbours are kept only where
the reference releases (in the domain). A pair whose two outcomes differ at the first seed is a candidate.

How it is decided: without statistics, by replay. A candidate is replayed ``REPLAYS`` times on each
side with the same ``REPLAYS`` generator seeds. It is a witness when one side gives one outcome on
every call and the other side another outcome on every call. Why that is a finding and not chance:
- an outcome read from public inputs only (the parameters, which the two sides share) is the same on
  both sides, so it cannot split them;
- an outcome the generator decides (TARGET draws from the ``rng`` it is given) follows the seed, and
  the seeds are the same on both sides, so it cannot split them either;
- an outcome that happens at random at a rate p independent of the data (a target with a generator
  of its own) gives the pattern with probability p^R (1 - p)^R <= 4^-R, R = ``REPLAYS`` = 10: < 1e-6
  per candidate, < 1e-5 over the at most ``MAX_CANDIDATES`` candidates replayed;
- so the data decides it. Under the claim, a pure eps-DP release could still split the sides this way
  if the outcome were a post-processing of it with probability at most (e^eps / (1 + e^eps))^(2R)
  (the evidence prints it): the project's rule is stricter, a mechanism refuses (or warns) only on
  public inputs, checked before it reads a record (docs/design.md).

A witness is the finding, with the pair, what each side did, and how it was found. The cases whose
dataset raises are then left out of the release checks that follow (``run.py`` stops a later check
that raises, naming it); a target that raises on every dataset tried, and on their neighbours, has a
failure that does not depend on the data: it raises again in the differential (exit status 3).

Skipped only when TARGET has no mechanism stage (the release), and said so.
"""

from __future__ import annotations

import collections
import itertools
import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from userdp.reference.neighbours import RELATIONS, NeighbourPair, is_neighbour

from userdp.audits.engine.usercode import UserCodeError
from userdp.audits.validation import ValidationSpec
from userdp.audits.validation.context import Context
from userdp.audits.validation.findings import Finding
from userdp.audits.validation.releases import nested_flat
from userdp.audits.validation.report import impl_lines, jsonable, scale_parameter
from userdp.audits.validation.target import PythonTarget, SeedError

__all__ = ["NAME", "NEEDS", "applies", "check", "Outcome", "outcome", "dataset_literal", "REPLAYS"]

NAME = "behaviour"  # the check's name in the report
NEEDS = ()  # runs first: before any other check calls TARGET on a case
REPLAYS = 10  # calls per side, with the same seeds, to confirm a witness
NEIGHBOURS = 8  # neighbours screened per case
FAILING_NEIGHBOURS = 40  # neighbours screened per dataset whose outcome is not a plain release
MAX_CANDIDATES = 8  # candidates replayed at most
SCREEN_SECONDS = 4.0  # TARGET's CPU time for screening the cases' neighbours (the rest is not limited)
ENABLED = True  # planted proof (tests): with it off, a data-dependent refusal exits 3


@dataclass(frozen=True)
class Outcome:
    """What one call did: ``kind`` (compared between the two sides) and ``detail`` (for the report)."""

    kind: str  # "release <structure>", "release (none: declines)", "non-finite release", "raised X", "warned X"
    detail: str = ""

    @property
    def plain(self) -> bool:
        """A release with nothing else observable."""
        return self.kind.startswith("release")

    def differs(self, other: Outcome) -> bool:
        """The two outcomes tell the sides apart (an empty release where the algorithm declines is a release)."""
        declines = "release (none: declines)"
        if declines in (self.kind, other.kind):
            return not (self.plain and other.plain)
        return self.kind != other.kind


def applies(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> str | None:
    """None if the check applies, else why it is skipped."""
    if target.mechanism is None:
        return "TARGET has no mechanism stage (the release)"
    if not ENABLED:
        return "turned off (behaviour.ENABLED)"
    return None


def _structure(out) -> str:
    """The type and shape of a release, without its values."""
    if isinstance(out, (tuple, list)):
        return f"{type(out).__name__}({', '.join(_structure(p) for p in out)})"
    if isinstance(out, dict):
        return "dict(" + ", ".join(f"{k}: {_structure(out[k])}" for k in sorted(out, key=str)) + ")"
    if isinstance(out, np.ndarray) and out.ndim > 0:
        return f"array {out.shape}"
    if isinstance(out, (int, float, np.integer, np.floating, np.ndarray)):
        return "number"
    return type(out).__name__


def outcome(spec: ValidationSpec, target: PythonTarget, dataset, params, seed: int, where: str) -> Outcome:
    """One call of TARGET's release on ``dataset``, with a generator seeded by ``seed``: its Outcome."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 11]))
    with warnings.catch_warnings(record=True) as caught, np.errstate(divide="warn", over="warn", invalid="warn"):
        warnings.simplefilter("always")
        try:
            out = target.release(dataset, rng, 1, params, where)
        except SeedError:
            raise  # the seed contract broken: exit 3 before any verdict, never an outcome
        except UserCodeError as exc:
            cause = exc.__cause__ or exc
            return Outcome(f"raised {type(cause).__name__}", str(cause)[:200])
    if target.shape != "batched":
        out = out[0]
    try:
        flat = None if out is None else nested_flat(out)
    except Exception as exc:  # noqa: BLE001 - the release's own code (its __float__, __array__) raised: an outcome
        return Outcome(f"raised {type(exc).__name__} converting its release", str(exc)[:200])
    if out is None or (flat is not None and flat.size and bool(np.all(np.isnan(flat)))):
        base = Outcome("release (none: declines)") if spec.declines else Outcome("non-finite release", "no release")
    elif flat is not None and not bool(np.all(np.isfinite(flat))):
        base = Outcome("non-finite release", f"{int(np.sum(~np.isfinite(flat)))} of {flat.size} values")
    else:
        base = Outcome(f"release {_structure(out)}")
    if caught:
        cats = sorted({w.category.__name__ for w in caught})
        return Outcome(f"warned {', '.join(cats)}", f"{caught[0].category.__name__}: {caught[0].message}"[:200])
    return base


# ------------------------------------------------------------------ neighbours
def _relation(spec: ValidationSpec):
    """The relation object of the spec (its designs' pairs name it), or None."""
    for d in spec.designs():
        for p in d.pairs:
            if getattr(p, "relation", None) in RELATIONS:
                return RELATIONS[p.relation]
    name = spec.relation.split(" ")[0] if spec.relation else ""
    return RELATIONS.get(name)


def _grid(column) -> np.ndarray | None:
    if column is None:
        return None
    v = np.asarray(column, dtype=float).ravel()
    return np.unique(np.quantile(v, [0.0, 0.5, 1.0])) if v.size else None


def _neighbours(rel, D, limit: int, seed: int) -> list:
    """Up to ``limit`` neighbours of D under ``rel`` (NeighbourPairs with first D), with values from D's own:
    under a user-level relation, random users removed, copied in under a new id or given another user's
    records' values (built one by one: a large dataset's full enumeration costs seconds); otherwise the
    relation's enumeration (its first ``4 limit``, a random ``limit`` of them)."""
    if rel is None or limit <= 0:
        return []
    rng = np.random.default_rng([seed, 12])
    if rel.name == "add-remove-user" or hasattr(rel, "also"):
        out = []
        for _ in range(4 * limit):
            if len(out) >= limit:
                break
            try:
                nb = _user_move(rel, D, rng)
            except (TypeError, ValueError):  # a move this dataset does not allow (task ids, epsilons)
                continue
            if is_neighbour(rel, D, nb.second):  # not D itself (a user given values equal to its own)
                out.append(nb)
        return out
    try:
        grid = _grid(D.values)
        kw = {"label_grid": _grid(D.labels)} if D.labels is not None else {}
        pool = list(itertools.islice(rel.enumerate(D, grid, **kw), 4 * limit))
    except (TypeError, ValueError):  # a relation that cannot build neighbours of this dataset
        return []
    if len(pool) <= limit:
        return pool
    pick = rng.choice(len(pool), size=limit, replace=False)
    return [pool[i] for i in sorted(pick)]


def _user_move(rel, D, rng) -> NeighbourPair:
    """One random neighbour under a user-level relation: a user removed, another's records copied in under a
    new id, or a user given another user's values."""
    users = D.users
    u, v = (int(x) for x in rng.choice(users, size=2))
    move = int(rng.integers(3))
    if rel.name == "add-remove-user" and move == 0 and D.m >= 2:
        return _pair(rel, D, rel.neighbour(D, u), f"remove user {u}")
    if rel.name == "add-remove-user":
        idx, new = D.records_of(v), int(users.max()) + 1
        labels = None if D.labels is None else D.labels[idx]
        return _pair(
            rel, D, rel.neighbour(D, new, D.values[idx], labels=labels), f"add user {new} with user {v}'s records"
        )
    col, idx = getattr(D, rel.field), D.records_of(u)
    new = np.resize(col[D.records_of(v)], (idx.size,) + col.shape[1:])
    return _pair(rel, D, rel.neighbour(D, u, new), f"user {u} given the {rel.field} of user {v}")


def _pair(rel, a, b, what: str) -> NeighbourPair:
    return NeighbourPair(a, b, rel.name, -1, what)


def _in_domain(spec: ValidationSpec, D, params) -> bool:
    """The reference releases on D (a neighbour built from a dataset's values may leave the domain)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec.reference(D, rng=np.random.default_rng(0), size=1, **params)
    except Exception:
        return False
    return True


def _path(rel, A, B) -> list | None:
    """Datasets from A to (a copy of) B, each a neighbour of the next under ``rel``, or None where this
    relation cannot walk between them: add/remove user (add B's users under new ids, then remove A's),
    replace one user's fields (the same record layout: replace each user's records by B's in turn)."""
    try:
        if rel is not None and rel.name == "add-remove-user":
            if any(getattr(D, f) is not None for D in (A, B) for f in ("epsilons", "task_ids", "partition_ids")):
                return None
            out, D, new = [A], A, int(A.users.max()) + 1
            for u in B.users:
                idx = B.records_of(int(u))
                labels = None if B.labels is None else B.labels[idx]
                D = rel.neighbour(D, new, B.values[idx], labels=labels)
                out.append(D)
                new += 1
            for u in A.users:
                D = rel.neighbour(D, int(u))
                out.append(D)
            return out
        if rel is not None and hasattr(rel, "also") and np.array_equal(A.user_ids, B.user_ids):
            out, D = [A], A
            for u in A.users:
                idx = A.records_of(int(u))
                changes = {}
                for f in (rel.field, *rel.also):
                    if getattr(A, f) is not None and getattr(B, f) is not None:
                        col = getattr(D, f).copy()
                        col[idx] = getattr(B, f)[idx]
                        changes[f] = col
                D = D.with_fields(**changes)
                out.append(D)
            return out
    except (TypeError, ValueError):  # a dataset this relation cannot build neighbours of
        return None
    return None


# ------------------------------------------------------------------ the check
class _Screen:
    """The outcomes seen at the first seed (memoised per dataset and parameters) and the candidates."""

    def __init__(self, ctx: Context):
        self.ctx, self.seen, self.keep, self.candidates, self.calls = ctx, {}, [], [], 0

    def at(self, D, params, where: str) -> Outcome:
        key = (id(D), repr(sorted((k, repr(v)) for k, v in params.items())))
        if key not in self.seen:
            self.keep.append(D)  # ids stay unique while the run holds them
            self.calls += 1
            self.seen[key] = (D, params, outcome(self.ctx.spec, self.ctx.target, D, params, self.ctx.seed, where))
        return self.seen[key][2]

    def bisect(self, path: list, params, how: str) -> None:
        """Outcomes differ at the ends of ``path``: find two adjacent datasets whose outcomes differ."""
        first = self.at(path[0], params, how)
        lo, hi = 0, len(path) - 1
        if not first.differs(self.at(path[hi], params, how)):
            return
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if first.differs(self.at(path[mid], params, how)):
                hi = mid
            else:
                lo = mid
        self.candidates.append((path[lo], path[hi], params, f"{how}: step {hi} of {len(path) - 1}"))

    def pair(self, a, b, params, how: str) -> None:
        oa, ob = self.at(a, params, how + " (first side)"), self.at(b, params, how + " (second side)")
        if oa.differs(ob):
            self.candidates.append((a, b, params, how))


def check(spec: ValidationSpec, target: PythonTarget, ctx: Context) -> None:
    """Screen the spec's datasets and their neighbours; replay the candidates; report a witness."""
    S = _Screen(ctx)
    rel = _relation(spec)
    for case in ctx.cases:
        S.at(case.dataset, case.params, f"case {case.description!r}")
        if case.pair is not None:
            S.pair(case.pair.first, case.pair.second, case.params, f"case {case.description!r}: its pair")
    for d in spec.designs():
        for p in d.pairs:
            S.pair(p.first, p.second, d.params, f"design {d.description!r}: {p.description}")
    failing = [(D, p, o) for D, p, o in list(S.seen.values()) if not o.plain]
    for D, p, _ in failing[:4]:  # the neighbours of the datasets that did not plainly release
        if S.candidates:
            break
        for nb in _neighbours(rel, D, FAILING_NEIGHBOURS, ctx.seed + 1):
            if _in_domain(spec, nb.second, p):
                S.pair(D, nb.second, p, f"a dataset where TARGET did {S.at(D, p, '').kind!r}: {nb.description}")
    kinds = collections.Counter(o.kind for _, _, o in S.seen.values() if o.plain)
    usual = kinds.most_common(1)[0][0] if kinds else None
    odd = failing + [(D, p, o) for D, p, o in S.seen.values() if o.plain and o.kind != usual]
    for D, p, o in odd[:4]:  # a path of neighbours from a dataset that did something else to one that did not
        if S.candidates:
            break
        others = [(B, q) for B, q, ob in S.seen.values() if o.differs(ob)]
        for B, _ in sorted(others, key=lambda x: x[0].n)[:3]:
            path = _path(rel, D, B)
            if path is not None and _in_domain(spec, path[-1], p):
                S.bisect(
                    path, p, f"path of neighbours from a dataset where TARGET did {o.kind!r} to one where it did not"
                )
                if S.candidates:
                    break
    t0 = time.process_time()
    for case in ctx.cases:  # the neighbours of the cases
        if S.candidates or time.process_time() - t0 > SCREEN_SECONDS:
            break
        for nb in _neighbours(rel, case.dataset, NEIGHBOURS, ctx.seed):
            if _in_domain(spec, nb.second, case.params):
                S.pair(case.dataset, nb.second, case.params, f"case {case.description!r}, {nb.description}")
    witness = None
    for a, b, params, how in S.candidates[:MAX_CANDIDATES]:
        witness = _replay(ctx, a, b, params, how)
        if witness is not None:
            break
    failing = [(D, p, o) for D, p, o in S.seen.values() if not o.plain]
    raising = {id(c.dataset) for c in ctx.cases if S.at(c.dataset, c.params, "").kind.startswith("raised")}
    ctx.checks[NAME] = (
        f"ran: {S.calls} call(s) at one seed on {len(ctx.cases)} cases, their pairs, the designs' pairs and "
        f"neighbours ({rel.name if rel else 'no relation'}); {len(S.candidates)} candidate pair(s), replayed "
        f"{REPLAYS} times a side with the same seeds; "
        + (
            f"{len(failing)} dataset(s) with an outcome other than a plain release"
            if failing
            else "every call released"
        )
    )
    if witness is None:
        if failing:
            ctx.notes.append(
                f"behaviour: TARGET did not plainly release on {len(failing)} dataset(s) (e.g. "
                f"{failing[0][2].kind}: {failing[0][2].detail}), and no neighbour tried did otherwise: "
                "not shown to depend on the data"
            )
        return
    ctx.add(witness)
    kept = [c for c in ctx.cases if id(c.dataset) not in raising]
    if kept and len(kept) < len(ctx.cases):
        ctx.notes.append(
            f"behaviour: {len(ctx.cases) - len(kept)} case(s) on which TARGET raises are left out of the "
            "checks that follow"
        )
        ctx.cases[:] = kept


def _replay(ctx: Context, a, b, params, how: str) -> Finding | None:
    """The pair replayed REPLAYS times a side, same seeds: a finding if each side is constant and they differ."""
    spec, t = ctx.spec, ctx.target
    seeds = [ctx.seed * 1000 + 100 + r for r in range(REPLAYS)]
    A = [outcome(spec, t, a, params, s, f"behaviour replay of {how} (first side)") for s in seeds]
    B = [outcome(spec, t, b, params, s, f"behaviour replay of {how} (second side)") for s in seeds]
    if len({o.kind for o in A}) != 1 or len({o.kind for o in B}) != 1 or not A[0].differs(B[0]):
        return None
    first, second = A[0], B[0]
    odd = first if not first.plain else second
    ev = {
        "pair": how,
        "first_side": f"{first.kind} on {REPLAYS} of {REPLAYS} calls" + (f" ({first.detail})" if first.detail else ""),
        "second_side": f"{second.kind} on {REPLAYS} of {REPLAYS} calls"
        + (f" ({second.detail})" if second.detail else ""),
        "params": jsonable(dict(params)),
        "snippet": _snippet(ctx, a, b, params, seeds),
        "first_dataset": _describe(a),
        "second_dataset": _describe(b),
        "how_found": "screened at one seed: the spec's cases, their pairs, the designs' pairs, the neighbours "
        "of each dataset that did not plainly release and a path of neighbours from it to one that did (bisected), "
        "and the neighbours of the cases; then replayed",
        "witness": f"deterministic replay: {REPLAYS} calls a side with the same generator seeds "
        f"{seeds[0]}..{seeds[-1]}; each side did the same thing on every call, and not what the other did",
        "meaning": "an outcome read from public inputs, or decided by the generator, is the same on both sides "
        f"(they share the parameters and the seeds); one at a data-independent random rate splits them so with "
        f"probability <= 4^-{REPLAYS}: the data decides it, and it tells the neighbours apart as a release would",
    }
    claim = ctx.claim(next((c for c in ctx.cases), None)) if ctx.cases else None
    par = scale_parameter(claim, None) if claim is not None else None
    if par is not None and par[0] == "eps" and claim.kind == "pure":
        e = par[1]
        ev["chance_under_claim"] = (
            f"<= {(math.exp(e) / (1 + math.exp(e))) ** (2 * REPLAYS):.3g}: the largest probability of this "
            f"pattern for an outcome that is a post-processing of a pure {e:g}-DP release"
        )
    return Finding(
        "behaviour",
        "privacy violation",
        f"data-dependent behaviour: {odd.kind} on one side of a neighbouring pair and not on the other",
        ev,
    )


def _describe(D) -> str:
    """A short description of a dataset for the report."""
    try:
        return f"{D.n} records of {D.m} users; values {np.round(np.asarray(D.values), 4).tolist()}"[:300]
    except AttributeError:
        return type(D).__name__


def dataset_literal(D) -> str:
    """``UserDataset(...)``: Python that rebuilds D exactly (floats by repr)."""
    fields = [f"values=np.array({np.asarray(D.values).tolist()!r})", f"user_ids=np.array({D.user_ids.tolist()!r})"]
    for f in ("labels", "epsilons", "task_ids", "partition_ids"):
        if getattr(D, f, None) is not None:
            fields.append(f"{f}=np.array({np.asarray(getattr(D, f)).tolist()!r})")
    return f"UserDataset({', '.join(fields)})"


def _snippet(ctx: Context, a, b, params, seeds) -> str:
    """Runnable: the two datasets and the replay (``impl``: TARGET's function)."""
    call = "impl(D, rng=rng, size=1, **params)" if ctx.target.shape == "batched" else "impl(D, rng, **params)"
    return (
        impl_lines(ctx.spec, ctx.target) + "import warnings\n"
        "import numpy as np\n"
        "from userdp.reference.data import UserDataset\n"
        f"first = {dataset_literal(a)}\n"
        f"second = {dataset_literal(b)}\n"
        f"params = {jsonable(dict(params))!r}\n"
        f"for seed in range({seeds[0]}, {seeds[-1] + 1}):\n"
        "    for name, D in (('first', first), ('second', second)):\n"
        "        rng = np.random.default_rng(np.random.SeedSequence([seed, 11]))\n"
        "        with warnings.catch_warnings(record=True) as w:\n"
        "            warnings.simplefilter('always')\n"
        "            try:\n"
        f"                print(seed, name, {call}, [str(x.message) for x in w])\n"
        "            except Exception as exc:\n"
        "                print(seed, name, 'raised', type(exc).__name__, exc)"
    )
