"""Drawing outputs from a mechanism, checking them, and putting them in a common form.

A mechanism is any callable ``mechanism(dataset, rng, size) -> ndarray`` returning
``size`` independent outputs: shape (size,) for scalars, (size, k) for vectors; an
integer or boolean dtype (or ``output="discrete"``) means discrete outputs.

Output kinds (``OUTPUT_KINDS``, ``--output``):

- "continuous": scalar numbers; tested with thresholds {x >= t}, {x <= t}, and thresholds
  on a learned quadratic statistic where it is not monotone (``rejection.choose_continuous``);
- "vector": rows of numbers; thresholds on learned projections and statistics;
- "discrete": integers or booleans (the default for those dtypes); tested with value sets
  (the values ranked by likelihood ratio), and, for scalar outputs, whose values are
  ordered, also with thresholds {x >= t}, {x <= t}: the selection share picks the family;
- "categorical": discrete labels whose order means nothing (argmax indices, category
  codes): value sets only. str outputs ("yes" / "no", category names) are labels: they
  are categorical whatever their length, and no other kind may be declared for them.

An output that is not one of these (NaN, a complex number, bytes, a Python object, a
batched call returning the wrong number of outputs) is a ``BadOutputError`` naming its
kind and where it came from: an error of the mechanism, not of the command line.

"No release" (``NO_RELEASE``, i.e. ``None``). A release that publishes nothing, such as a
partition dropped by private partition selection, is an output like any other: its
probability differs between neighbours and the audit must see it. A one-release
mechanism returns ``None``; a batched mechanism returns a ``numpy.ma.MaskedArray`` whose
masked rows are "no release" (or an object array holding ``None``). Discrete and
categorical tests treat it as one more value; the continuous test codes it as NaN, outside
every threshold set, and adds each set's union with it ({x >= t or no release}, and
{released}, {no release} themselves). A NaN returned by the mechanism is still an error:
it is never read as "no release".

Multi-partition releases (vector outputs with "no release" CELLS). A release of k
partitions, each of which may be dropped (private partition selection), is a row of k
cells, each a number or "no release": a one-release mechanism returns a list or tuple
such as ``[3.2, None]``, a batched one a ``MaskedArray`` of shape (size, k) whose masked
cells are the partitions not released (a whole masked row, or ``None`` for the whole
release, is "nothing released"). The vector test codes each unreleased cell as NaN:
each partition is audited alone (its axis, with "no release" as in the scalar test), and
jointly, by projections and statistics of the rows (``rejection.choose_vector``): a set
on them also comes with "some cell it reads not released" added, and {every cell it reads
released} and its complement are sets too. The discrete tests read a row as a tuple with
``None`` in its unreleased cells.

Exceptions and warnings are outputs (``draw_outcomes``, EVENTS_ON). Everything observable is
an output: a call that raises on D and releases on D' tells them apart as surely as a number.
So a call of the mechanism's own code that raises an ``Exception`` (a program's "refused" or
"failed" answer included) is the outcome "raised", coded as "no release" in the outputs, and a
call that emits a warning (any category, numpy's divide, overflow and invalid set to "warn") is
flagged "warned" beside its release (``SideEvents``). A batched call that raises or warns cannot
say which of its releases did, so both sides of that pair are drawn again one release per call
(``size=1``), from the sides' generators continued. Not outcomes, and errors of the mechanism as
before: userdp's own ``UserCallError`` (a bad output, a changed dataset, ...), a ``MemoryError``,
any ``BaseException`` that is not an ``Exception`` (``SystemExit``, ``KeyboardInterrupt``, a
program's protocol breach), and a call that raised on every call of both sides (a failure that
does not depend on the data: a broken mechanism, or a refusal of public inputs). The harness
counts the indicators of "raised" and "warned" as sets of their own (``outcomes.py``).
"""

from __future__ import annotations

import contextlib
import signal
import warnings
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "MechanismError",
    "UserCallError",
    "BadOutputError",
    "AuditPair",
    "normalize_pairs",
    "draw",
    "draw_outcomes",
    "EVENTS_ON",
    "OUTCOMES",
    "SideEvents",
    "PairEvents",
    "watch_warnings",
    "CallRecorder",
    "OneOfBatch",
    "side_outcomes",
    "encode",
    "OUTPUT_KINDS",
    "NO_RELEASE",
    "released_cells",
    "released_floats",
    "released_rows",
    "is_interrupt",
    "raised_text",
    "output_kind_text",
]

OUTPUT_KINDS = ("continuous", "vector", "discrete", "categorical")
NO_RELEASE = None  # what a one-release mechanism returns when it publishes nothing
NO_RELEASE_LABEL = "no release"  # how reports and JSON name it


class MechanismError(RuntimeError):
    """The audited mechanism raised; the message names the mechanism and the pair."""


class UserCallError(MechanismError):
    """The user's code failed at a known place: the message is complete (the function, the
    call and the dataset). Plain text only, so that it crosses process boundaries."""

    def __reduce__(self):
        return type(self), self.args


class BadOutputError(UserCallError, ValueError):
    """The mechanism returned something that is not an output: NaN, a complex number, a
    Python object, bytes, a wrong number of outputs, a partly "no release" output."""


def is_interrupt(exc: BaseException) -> bool:
    """A real Ctrl-C: a KeyboardInterrupt in a process that handles SIGINT. Where SIGINT is
    ignored (the command line's processes: its supervisor handles Ctrl-C, ``supervise.py``)
    a KeyboardInterrupt can only have been raised by the user's code."""
    if not isinstance(exc, KeyboardInterrupt):
        return False
    try:
        return signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    except (ValueError, OSError):
        return True


def raised_text(exc: BaseException) -> str:
    """What user code did, for a message: "called sys.exit(0) (SystemExit)", "raised ValueError: ..."."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r}) (SystemExit)"
    if isinstance(exc, MemoryError):
        return f"ran out of memory (MemoryError{': ' + str(exc) if str(exc) else ''})"
    kind = "" if isinstance(exc, Exception) else " (a BaseException: an exit status is never the mechanism's to set)"
    return f"raised {type(exc).__name__}{kind}: {exc}" if str(exc) else f"raised {type(exc).__name__}{kind}"


EVENTS_ON = True  # exceptions and warnings are outputs; tests/planted/auditor.py plants "exceptions-not-outputs"
OUTCOMES = "userdp_outcomes"  # a mechanism with this attribute False is drawn as before EVENTS_ON: validate's
# audits (audits/validation/check_audits.py), whose behaviour check has decided data-dependent refusals and
# warnings by replay before any audit (docs/validate.md, "Data-dependent behaviour")
MESSAGE_CHARS = 200  # characters of an exception's or warning's message kept for the report


@contextlib.contextmanager
def watch_warnings():
    """Record every warning (``simplefilter("always")``: a repeated one too), with numpy's
    divide, overflow and invalid set to "warn" so that a caller's ``errstate`` cannot hide them."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(divide="warn", over="warn", invalid="warn"):
        warnings.simplefilter("always")
        yield caught


@dataclass(frozen=True)
class SideEvents:
    """What one side's calls did besides releasing: ``raised`` (n,) indices into ``classes``
    (-1: the call did not raise), ``warned`` (n,) bool, the warning ``categories``, and the first
    message of each kind (``messages["raised"]``, ``messages["warned"]``)."""

    raised: np.ndarray
    classes: tuple = ()
    warned: np.ndarray = None
    categories: tuple = ()
    messages: dict = field(default_factory=dict)

    @staticmethod
    def none(n: int) -> SideEvents:
        return SideEvents(np.full(n, -1, dtype=np.int32), (), np.zeros(n, dtype=bool))

    @staticmethod
    def of_calls(n: int, raised: list, warned: list) -> SideEvents:
        """From records [(call index, class or category name, message)] of n calls."""
        classes = tuple(dict.fromkeys(c for _, c, _ in raised))
        codes = np.full(n, -1, dtype=np.int32)
        for i, c, _ in raised:
            codes[i] = classes.index(c)
        flags = np.zeros(n, dtype=bool)
        flags[[i for i, _, _ in warned]] = True
        messages = {}
        if raised:
            messages["raised"] = f"{raised[0][1]}: {raised[0][2]}"[:MESSAGE_CHARS]
        if warned:
            messages["warned"] = f"{warned[0][1]}: {warned[0][2]}"[:MESSAGE_CHARS]
        return SideEvents(codes, classes, flags, tuple(dict.fromkeys(c for _, c, _ in warned)), messages)

    @property
    def any(self) -> bool:
        return bool((self.raised >= 0).any() or self.warned.any())

    @property
    def raised_all(self) -> bool:
        return bool(self.raised.size and (self.raised >= 0).all())

    def indicator(self, kind: str) -> np.ndarray:
        """(n,) bool: the calls that raised (kind "raised") or warned ("warned")."""
        return self.raised >= 0 if kind == "raised" else self.warned


@dataclass(frozen=True)
class PairEvents:
    """What the calls on each side of a pair did (``SideEvents``), and ``batch``: what a batched
    call did that made the pair be drawn again one release per call, or None."""

    first: SideEvents
    second: SideEvents
    batch: str | None = None


class CallRecorder:
    """The calls of a one-release mechanism with their exceptions and warnings recorded as outcomes:
    a call that raises an ``Exception`` of its own returns ``NO_RELEASE`` and is recorded in
    ``raised``, one that warns in ``warned`` ((call index, class or category, message); the index is
    ``start`` plus the releases in ``outputs`` so far). A context manager around a shard's calls
    (``watch_warnings`` costs ~20 us: once per shard); ``__enter__`` returns the recording call."""

    def __init__(self, mechanism, start: int, outputs: list):
        self.mechanism, self.start, self.outputs, self.raised, self.warned = mechanism, start, outputs, [], []
        self._watch = None

    def __enter__(self):
        self._watch = watch_warnings()
        caught = self._watch.__enter__()
        mechanism, start, outputs, raised, warned = self.mechanism, self.start, self.outputs, self.raised, self.warned

        def call(*args):
            try:
                out = mechanism(*args)
            except (UserCallError, MemoryError):
                raise  # userdp's own verdict on the call, or the machine's: errors, never outcomes
            except Exception as exc:
                raised.append((start + len(outputs), type(exc).__name__, str(exc)[:MESSAGE_CHARS]))
                out = NO_RELEASE
            if caught:
                w = caught[0]
                warned.append((start + len(outputs), w.category.__name__, str(w.message)[:MESSAGE_CHARS]))
                caught.clear()
            return out

        return call

    def __exit__(self, *exc):
        return self._watch.__exit__(*exc)


class OneOfBatch:
    """A batched mechanism called for one release, ``mechanism(dataset, rng, 1)``: its release,
    ``NO_RELEASE``, or a row with ``None`` in the cells not released."""

    def __init__(self, mechanism):
        self.mechanism = mechanism
        self.__qualname__ = getattr(mechanism, "__qualname__", None)
        self.__module__ = getattr(mechanism, "__module__", None)

    def __call__(self, dataset, rng):
        x = as_outputs(self.mechanism(dataset, rng, 1), f"mechanism {mechanism_name(self.mechanism)}")
        if x.ndim == 0 or x.shape[0] != 1:
            got = "a single value (shape ())" if x.ndim == 0 else f"{x.shape[0]} outputs (shape {x.shape})"
            raise BadOutputError(
                f"mechanism {mechanism_name(self.mechanism)} returned {got} for size=1; expected one output"
            )
        if not np.ma.isMaskedArray(x):
            return x[0]
        mask = np.ma.getmaskarray(x)[0]
        if mask.all():
            return NO_RELEASE
        return [None if m else v for v, m in zip(np.ravel(np.ma.getdata(x)[0]).tolist(), np.ravel(mask))]


class BatchEvent(str):
    """What a batched call did instead of releasing, as the report says it; ``exc``: the exception it
    raised (the cause of a failure on every call of both sides), or None (it warned)."""

    exc = None


def side_outcomes(sampler, dataset, rng, size: int, per_call: bool = False):
    """``parallel.Sampler.outcomes``: (releases, events) of one side. A batched mechanism is called
    once (``per_call`` False) under ``watch_warnings``: events is None, or, when the call raised an
    ``Exception`` of its own or warned, a str saying what it did (and no releases: the caller draws
    the pair again with ``per_call``). Otherwise one release per call: events is a ``SideEvents``."""
    if sampler.calling == "batched" and not per_call:
        where = sampler.describe(dataset)
        with watch_warnings() as caught:
            try:
                out = sampler(dataset, rng, size)
            except UserCallError:
                raise
            except Exception as exc:
                event = BatchEvent(
                    f"the batched call on {where} raised {type(exc).__name__}: {str(exc)[:MESSAGE_CHARS]}"
                )
                event.exc = exc
                return None, event
        if caught:
            w = caught[0]
            return None, BatchEvent(
                f"the batched call on {where} warned {w.category.__name__}: {str(w.message)[:MESSAGE_CHARS]}"
            )
        return out, None
    return sampler(dataset, rng, size, record=True)


@dataclass(frozen=True)
class AuditPair:
    first: object
    second: object
    description: str
    unit: int | None
    index: int


def mechanism_name(mechanism) -> str:
    name = getattr(mechanism, "__qualname__", None) or getattr(mechanism, "__name__", None)
    mod = getattr(mechanism, "__module__", None)
    return f"{mod}.{name}" if name and mod else repr(mechanism)


def _short(x, limit: int = 60) -> str:
    r = repr(x).replace("\n", " ")
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _is_pair(obj) -> bool:
    """One pair: an object with .first/.second, a 2-tuple of non-pairs (D, D'), or a 3-tuple
    (D, D', description) whose description is a str (the forms the CLI's factories accept)."""
    if hasattr(obj, "first") and hasattr(obj, "second"):
        return True
    if isinstance(obj, tuple) and len(obj) == 3 and isinstance(obj[2], str):
        return not any(hasattr(x, "first") and hasattr(x, "second") for x in obj[:2])
    return (
        isinstance(obj, tuple) and len(obj) == 2 and not any(hasattr(x, "first") and hasattr(x, "second") for x in obj)
    )


def _one(obj, index: int) -> AuditPair:
    if hasattr(obj, "first") and hasattr(obj, "second"):
        first, second = obj.first, obj.second
        desc = getattr(obj, "description", None)
        unit = getattr(obj, "unit", None)
    elif isinstance(obj, tuple) and len(obj) == 2:
        (first, second), desc, unit = obj, None, None
    elif isinstance(obj, tuple) and len(obj) == 3 and isinstance(obj[2], str):
        first, second, desc, unit = obj[0], obj[1], obj[2], None
    else:
        raise TypeError(
            f"pair {index} must be a 2-tuple (D, D'), a 3-tuple (D, D', description) or have "
            f".first/.second, got {type(obj).__name__}"
        )
    desc = desc or f"pair {index}: {_short(first)} vs {_short(second)}"
    return AuditPair(first, second, str(desc), None if unit is None else int(unit), index)


def normalize_pairs(pairs, max_pairs: int) -> list[AuditPair]:
    """One pair (a 2-tuple, a 3-tuple (D, D', description) or an object with .first/.second)
    or an iterable of them.

    A *tuple* of length 2 whose items are not pairs is one pair (D, D'), and so is a tuple
    (D, D', "description"); lists, generators and other iterables are several pairs. At
    most ``max_pairs`` are taken.
    """
    if _is_pair(pairs):
        return [_one(pairs, 0)]
    try:
        it = iter(pairs)
    except TypeError:
        raise TypeError(f"pairs must be a pair or an iterable of pairs, got {type(pairs).__name__}") from None
    out = []
    for i, obj in enumerate(it):
        if i >= max_pairs:
            break
        out.append(_one(obj, i))
    if not out:
        raise ValueError("pairs is empty: the audit needs at least one neighbouring pair")
    return out


def draw(mechanism, pair: AuditPair, rngs, size: int) -> tuple[np.ndarray, np.ndarray]:
    """size outputs on each side of ``pair``; checks count, kind, NaN and matching shapes.
    Outputs with "no release" come back as masked arrays (``as_outputs``). An output that is
    not one (NaN, complex, an object, bytes, a wrong count) is a ``BadOutputError`` naming
    its kind; str outputs are labels, tested as categories. A call that raised is coded as
    "no release" (``draw_outcomes``, which also says what each call did)."""
    a, b, _ = draw_outcomes(mechanism, pair, rngs, size)
    return a, b


def draw_outcomes(mechanism, pair: AuditPair, rngs, size: int):
    """(a, b, events): ``draw``'s outputs and, where the mechanism raised or warned, a
    ``PairEvents`` saying what each call did (module docstring, "Exceptions and warnings are
    outputs"), else None. ``mechanism`` is a ``parallel.Sampler`` (its ``outcomes``); any other
    callable, or EVENTS_ON False, is drawn as before: an exception is an error of the mechanism."""
    name = mechanism_name(mechanism)
    if hasattr(mechanism, "pair"):
        mechanism.pair = pair  # a parallel.Sampler names the pair in its messages
    inner = getattr(mechanism, "mechanism", mechanism)  # a parallel.Sampler's mechanism
    outcomes = getattr(mechanism, "outcomes", None) if EVENTS_ON and getattr(inner, OUTCOMES, True) else None
    sides = (("first", pair.first, rngs[0]), ("second", pair.second, rngs[1]))
    if outcomes is None:
        raw = [
            _plain_call(mechanism, name, d, r, size, f"on the {s} dataset of {pair.description!r}") for s, d, r in sides
        ]
        return (*_checked(name, pair, raw, size), None)
    drawn, batch = [], None
    for s, d, r in sides:
        drawn.append(_plain_call(outcomes, name, d, r, size, f"on the {s} dataset of {pair.description!r}"))
        if isinstance(drawn[-1][1], str):
            batch = drawn[-1][1]  # a batched call raised or warned: both sides again, one release per call
            drawn = [
                _plain_call(outcomes, name, d, r, size, f"on the {s} dataset of {pair.description!r}", per_call=True)
                for s, d, r in sides
            ]
            break
    events = [SideEvents.none(size) if ev is None else ev for _, ev in drawn]
    if all(e.raised_all for e in events):
        e1, e2 = events
        raise MechanismError(
            f"mechanism {name} raised on every call of both sides of {pair.description!r} ({size} per side; "
            f"first {e1.messages['raised']!r}, second {e2.messages['raised']!r}): a failure that does not depend "
            "on the data (a broken mechanism, or a refusal of public inputs) is an error, not an outcome"
        ) from getattr(batch, "exc", None)
    a, b = _checked(name, pair, [out for out, _ in drawn], size)
    if batch is None and not any(e.any for e in events):
        return a, b, None
    return a, b, PairEvents(events[0], events[1], batch)


def _plain_call(mechanism, name: str, dataset, rng, size: int, where: str, **kw):
    try:
        return mechanism(dataset, rng, size, **kw)
    except UserCallError:
        raise  # complete already: the call, the dataset
    except Exception as exc:
        raise MechanismError(f"mechanism {name} raised {type(exc).__name__} {where}: {exc}") from exc


def _checked(name: str, pair: AuditPair, raw: list, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The two sides' outputs, checked (``draw``)."""
    outs = []
    for side, out in zip(("first", "second"), raw):
        where = f"on the {side} dataset of {pair.description!r}"
        out = as_outputs(out, f"mechanism {name} {where}")
        if out.ndim == 0 or out.shape[0] != size:
            got = "a single value (shape ())" if out.ndim == 0 else f"{out.shape[0]} outputs (shape {out.shape})"
            raise BadOutputError(
                f"mechanism {name} returned {got} {where}; expected {size} outputs "
                f"(shape ({size},) or ({size}, k)), one per row"
            )
        if out.dtype.kind not in "biufU":
            raise BadOutputError(
                f"mechanism {name} returned {output_kind_text(out)} {where}; expected numbers, "
                "str labels, or None for no release"
            )
        data = np.ma.getdata(out)
        masked = np.ma.isMaskedArray(out)
        if data.dtype.kind == "f" and np.isnan(data[~np.ma.getmaskarray(out)] if masked else data).any():
            bad = (np.isnan(data) & ~np.ma.getmaskarray(out)).reshape(size, -1).any(1)
            raise BadOutputError(
                f"mechanism {name} returned NaN {where} (first at output {int(np.argmax(bad))}, "
                "the call of that number for a one-release mechanism); return None for no release"
            )
        outs.append(out)
    outs = _shape_unreleased(outs)
    if outs[0].shape != outs[1].shape:
        raise BadOutputError(
            f"mechanism {name} returned different shapes on the two sides of "
            f"{pair.description!r}: {outs[0].shape} vs {outs[1].shape}"
        )
    return outs[0], outs[1]


def output_kind_text(out) -> str:
    """What a mechanism returned, by kind, for a message: "complex numbers (complex128)", ..."""
    a = np.ma.getdata(out) if np.ma.isMaskedArray(out) else np.asarray(out)
    k = a.dtype.kind
    if k == "c":
        return f"complex numbers ({a.dtype})"
    if k == "S":
        return f"bytes ({a.dtype}; return str labels instead)"
    if k == "O":
        types = sorted({type(v).__name__ for v in a.ravel()[:1000] if v is not None})
        return f"Python objects of type {', '.join(types) or 'None'}"
    if k in "mM":
        return f"dates or times ({a.dtype})"
    return f"values of dtype {a.dtype}"


def as_outputs(out, where: str = "mechanism"):
    """A mechanism's outputs as an ndarray, or, when some are "no release", a masked array
    whose mask is whole rows (``NO_RELEASE`` in an object array, or a ``MaskedArray``)."""
    if isinstance(out, np.ma.MaskedArray):
        data, mask = np.asarray(out.data), np.ma.getmaskarray(out)
    else:
        try:
            arr = np.asarray(out)
        except ValueError:  # rows and None mixed: numpy cannot stack them
            arr = np.empty(len(out), dtype=object)
            arr[:] = list(out)
        if arr.dtype != object or arr.ndim == 0:
            return arr
        rows = list(arr)
        kept = [r for r in rows if r is not NO_RELEASE]
        if any(any(v is None for v in np.ravel(np.asarray(r, dtype=object))) for r in kept):
            return _cell_masked(rows, where)
        if len(kept) == len(rows):
            return np.asarray(rows)
        filled = np.asarray(kept) if kept else np.zeros(0)
        released = np.array([r is not NO_RELEASE for r in rows])
        data = np.zeros((len(rows),) + filled.shape[1:], dtype=filled.dtype)
        data[released] = filled
        mask = np.broadcast_to(~released.reshape((-1,) + (1,) * (data.ndim - 1)), data.shape)
    if data.ndim == 0:
        raise BadOutputError(f"{where}: returned a 0-d masked array; expected one output per row")
    rows_mask = mask.reshape(mask.shape[0], -1)
    partial = rows_mask.any(1) != rows_mask.all(1)
    if partial.any() and data.ndim != 2:
        raise BadOutputError(
            f"{where}: output {int(np.argmax(partial))} is partly masked; 'no release' masks a whole "
            "output, or the cells of a row (a multi-partition release, shape (size, k))"
        )
    if not mask.any():
        return data
    return np.ma.MaskedArray(data, mask=np.array(mask))


def _cell_masked(rows: list, where: str) -> np.ma.MaskedArray:
    """Rows of a multi-partition release, each None (nothing released) or a sequence of k
    numbers and Nones (cells not released), as a (n, k) masked array."""
    k = None
    for r in rows:
        if r is not NO_RELEASE:
            cells = np.ravel(np.asarray(r, dtype=object))
            if k is not None and cells.size != k:
                raise ValueError(
                    f"{where}: multi-partition outputs of {k} and {cells.size} cells; every "
                    "output must have the same number of cells"
                )
            k = cells.size
    cells = [np.ravel(np.asarray(r, dtype=object)) if r is not NO_RELEASE else None for r in rows]
    given = [None if c is None else np.array([v is not None for v in c]) for c in cells]
    values = [c[g] for c, g in zip(cells, given) if c is not None]
    try:
        kind = np.asarray(np.concatenate(values).tolist() if values else []).dtype
        if kind.kind not in "biuf":
            raise TypeError
    except (TypeError, ValueError):
        raise ValueError(f"{where}: a multi-partition output has a cell that is neither a number nor None") from None
    data, mask = np.zeros((len(rows), k), dtype=kind), np.ones((len(rows), k), dtype=bool)
    for i, (c, g) in enumerate(zip(cells, given)):
        if c is not None:
            data[i, g] = c[g].tolist()
            mask[i] = ~g
    return np.ma.MaskedArray(data, mask=mask)


def _missing_rows(x) -> np.ndarray:
    """(n,) True where output i is "no release" (every cell of it masked)."""
    m = np.ma.getmaskarray(x)
    return m.reshape(m.shape[0], -1).all(1) if m.ndim else np.zeros(0, bool)


def _shape_unreleased(outs: list) -> list:
    """A side that released nothing at all (an empty partition, say) has no dtype or shape of
    its own: it takes the other side's."""
    for i in (0, 1):
        o, other = outs[i], outs[1 - i]
        if (
            np.ma.isMaskedArray(o)
            and _missing_rows(o).all()
            and not (np.ma.isMaskedArray(other) and _missing_rows(other).all())
        ):
            n = o.shape[0]
            outs[i] = np.ma.MaskedArray(np.zeros((n,) + other.shape[1:], other.dtype), mask=True)
    return outs


def released_rows(outputs) -> tuple[np.ndarray, np.ndarray]:
    """(rows (n, k) of the data, (n,) True where released) of raw outputs."""
    x = as_outputs(outputs)
    n = x.shape[0]
    return np.asarray(np.ma.getdata(x)).reshape(n, -1), ~_missing_rows(x) if np.ma.isMaskedArray(x) else np.ones(
        n, bool
    )


def released_cells(outputs) -> np.ndarray:
    """Outputs as floats (n, k), NaN in every cell not released (a whole row for "no release")."""
    x = as_outputs(outputs)
    n = x.shape[0]
    if np.ma.isMaskedArray(x):
        return np.ma.filled(x.astype(float), np.nan).reshape(n, -1)
    return np.asarray(x, dtype=float).reshape(n, -1)


def released_floats(outputs) -> np.ndarray:
    """Scalar outputs as floats (n,), NaN where "no release"."""
    rows, released = released_rows(outputs)
    if rows.shape[1] != 1:
        raise ValueError(f"expected scalar outputs, got rows of {rows.shape[1]}")
    x = rows[:, 0].astype(float)
    x[~released] = np.nan
    return x


def infer_kind(out: np.ndarray, declared: str | None) -> str:
    """The declared kind, or: str labels -> "categorical" (the only kind for them); integer or
    bool dtype -> "discrete"; rows -> "vector"; else "continuous"."""
    if out.dtype.kind == "U":  # str outputs: labels, whose order means nothing
        if declared not in (None, "categorical"):
            raise ValueError(
                f"output={declared!r} cannot test str outputs: labels are tested as categories "
                "(output='categorical', the default for str outputs)"
            )
        return "categorical"
    if declared is not None:
        if declared not in OUTPUT_KINDS:
            raise ValueError(f"output must be one of {OUTPUT_KINDS}, got {declared!r}")
        if declared == "vector" and out.reshape(out.shape[0], -1).shape[1] == 1:
            return "continuous"
        return declared
    if out.dtype.kind in "biu":
        return "discrete"
    return "vector" if out.reshape(out.shape[0], -1).shape[1] > 1 else "continuous"


def encode(a: np.ndarray, b: np.ndarray, kind: str):
    """Common form of both sides: floats (n,) (NaN: no release), floats (n, d), or int codes
    (n,) + values (``None``: no release)."""
    n = a.shape[0]
    a, b = _shape_unreleased([a, b])
    missing = np.ma.isMaskedArray(a) or np.ma.isMaskedArray(b)
    if kind == "continuous":
        if a.reshape(n, -1).shape[1] != 1:
            raise ValueError(f"output='continuous' needs scalar outputs, got shape {a.shape}")
        if missing:
            return released_floats(a), released_floats(b), None
        return a.reshape(n).astype(float, copy=False), b.reshape(n).astype(float, copy=False), None
    if kind == "vector":
        a2, b2 = released_cells(a), released_cells(b)  # NaN: a cell not released
        if np.isinf(a2).any() or np.isinf(b2).any():
            raise ValueError("vector outputs must be finite to be projected")
        return a2, b2, None
    if missing and (_partial_rows(a) or _partial_rows(b)):
        return _encode_cells(a, b)
    (ra, ka), (rb, kb) = released_rows(a), released_rows(b)
    both, kept = np.concatenate([ra, rb]), np.concatenate([ka, kb])
    codes = np.zeros(2 * n, dtype=np.int64)
    if both.shape[1] == 1:
        uniq, inv = np.unique(both[kept, 0], return_inverse=True)
        values = [v.item() for v in uniq]
    else:
        uniq, inv = _unique_rows(both[kept])
        values = [tuple(v.item() for v in row) for row in uniq]
    codes[kept] = inv.reshape(-1)
    if not kept.all():
        codes[~kept] = len(values)  # "no release": one more value, None
        values.append(NO_RELEASE)
    return codes[:n], codes[n:], values


def _partial_rows(x) -> bool:
    """Whether some output of x has released and unreleased cells (a multi-partition release)."""
    m = np.ma.getmaskarray(x)
    m = m.reshape(m.shape[0], -1)
    return bool((m.any(1) != m.all(1)).any())


def _encode_cells(a, b):
    """Discrete codes of multi-partition rows: each distinct row, with None in its unreleased
    cells, is one value; a row with no cell released is "no release"."""
    n = a.shape[0]
    both = np.concatenate([released_cells(a), released_cells(b)])  # (2n, k), NaN: not released
    gaps = np.isnan(both)
    key = np.hstack([np.where(gaps, 0.0, both), gaps.astype(float)])  # the gaps are part of the value
    uniq, inv = _unique_rows(key)
    k = both.shape[1]
    values = [
        None if row[k:].all() else tuple(None if g else _number(v) for v, g in zip(row[:k], row[k:])) for row in uniq
    ]
    return inv[:n].reshape(-1), inv[n:].reshape(-1), values


def _number(v: float):
    return int(v) if float(v).is_integer() else float(v)


def _unique_rows(x: np.ndarray):
    """np.unique(x, axis=0, return_inverse=True), via one int64 key per row when the
    columns' distinct values fit a mixed radix below 2**62 (much faster than axis=0)."""
    cols = [np.unique(x[:, j], return_inverse=True) for j in range(x.shape[1])]
    radices = [u.size for u, _ in cols]
    if float(np.prod(np.asarray(radices, dtype=float))) >= 2.0**62:
        return np.unique(x, axis=0, return_inverse=True)
    key = np.zeros(x.shape[0], dtype=np.int64)
    for (u, inv), r in zip(cols, radices):  # lexicographic: first column most significant
        key = key * r + inv.reshape(-1)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return x[first], inv
