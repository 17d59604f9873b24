"""Exceptions and warnings as outputs: the event sets of an audit (docs/audit.md, "Exceptions and
warnings are outputs").

Everything observable is an output. A call of the mechanism that raises (a program's "refused" or
"failed" answer included) or warns is an outcome of the extended output space, recorded per call by
``sampling.draw_outcomes`` (which says what is an outcome and what stays an error of the mechanism):
a release that raised is coded as "no release" among the values, and ``SideEvents`` keeps, for each
call, whether it raised (and what) and whether it warned.

The sets. For each confirmed pair and each event kind ("raised": the call raised any exception;
"warned": it emitted any warning), the indicator of the event is a rejection set of its own
(``EventSet``). It is planned on the selection share: a kind is tested when its selection counts
differ between the two sides, with the side that has more of them on top (the ordering), so a
mechanism that raises or warns at the same rate on both sides, or never, spends nothing on it.

Their share of alpha. A pair's sets share the level its ``sets_per_pair`` (x 2 with a GDP claim)
value sets had, alpha / m each (or (1 - MODEL_SHARE) alpha / m with a declared noise model:
``model_sets.py``): when some event set is planned for the pair, its value sets keep 1 - EVENT_SHARE
of that budget and its event sets share EVENT_SHARE of it equally (``split``). The budget of a pair
is the same whatever its selection share shows, so the levels of all the hypotheses counted still
add up to at most alpha: given the selection shares (and the pilot, and the batched calls that were
drawn again), every counted set is a fixed event and its counts on the counting share are binomial,
so the union bound and the weighted Holm procedure of ``harness.py`` hold as before. A mechanism
that raises on every call of D and on none of D' reaches eps_lb = ln(p_lo / q_hi) with p_lo =
(level / 2)^(1/n) and q_hi = 1 - (level / 2)^(1/n), about ln(n / ln(2 / level)) for n outputs per
side in the counting share: far above any claim.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from userdp.audits.engine.bounds import epsilon_lower_bound, p_value
from userdp.audits.engine.plan import CountedSet
from userdp.audits.engine.sampling import PairEvents, SideEvents
from userdp.audits.engine.thresholds import Candidate

__all__ = ["EVENT_KINDS", "EVENT_SHARE", "EventSet", "planned", "split", "event_rows", "summary", "witness_text"]

EVENT_KINDS = ("raised", "warned")
EVENT_SHARE = 0.5  # of a pair's budget, for its event sets when some are planned (module docstring)
_WHAT = {"raised": "an exception is an output", "warned": "a warning is an output"}


@dataclass(frozen=True)
class EventSet:
    """The indicator of an event of the call: ``event`` "raised" (any exception) or "warned"."""

    event: str

    def describe(self) -> str:
        return f"{{the call {self.event}}}"

    def to_dict(self) -> dict:
        return {"type": "event", "event": self.event, "description": self.describe()}

    def mask(self, events: SideEvents) -> np.ndarray:
        return events.indicator(self.event)


def planned(events: PairEvents | None, n_sel: int) -> list[Candidate]:
    """The pair's event sets, chosen on the selection share (module docstring)."""
    out = []
    for kind in EVENT_KINDS if events is not None else ():
        ka = int(events.first.indicator(kind)[:n_sel].sum())
        kb = int(events.second.indicator(kind)[:n_sel].sum())
        if ka != kb:
            out.append(Candidate(EventSet(kind), ka > kb, float(abs(ka - kb)), (max(ka, kb), min(ka, kb))))
    return out


def split(level: float, sets: int, events: int) -> tuple[float, float]:
    """(level of each value set, level of each event set) for a pair of ``sets`` value sets at
    ``level`` each and ``events`` > 0 planned event sets: the budget sets x level, shared."""
    return level * (1.0 - EVENT_SHARE), level * sets * EVENT_SHARE / events


def event_rows(pair, events: PairEvents, cands: list, n_sel: int, level: float, eps: float, delta: float) -> list:
    """The ``CountedSet`` of each planned event set, counted on the counting share at ``level``."""
    rows = []
    for c in cands:
        sa, sb = (c.rejection_set.mask(e)[n_sel:] for e in (events.first, events.second))
        n = sa.size
        k1, k2 = (int(sa.sum()), int(sb.sum())) if c.first_over_second else (int(sb.sum()), int(sa.sum()))
        lb = epsilon_lower_bound(k1, k2, n, level, delta)
        rows.append(CountedSet(pair, c, k1, k2, max(lb, 0.0), p_value(k1, k2, n, eps, delta), eps, n, level))
    return rows


def _side(e: SideEvents) -> dict:
    n = e.raised.size
    by_class = {c: int(np.count_nonzero(e.raised == j)) / n for j, c in enumerate(e.classes)}
    return {
        "calls": n,
        "raised": float(np.count_nonzero(e.raised >= 0)) / n,
        "raised_by_class": by_class,
        "warned": float(np.count_nonzero(e.warned)) / n,
        "warning_categories": list(e.categories),
        "messages": dict(e.messages),
    }


def summary(pair, events: PairEvents, tested: list) -> dict:
    """What the calls on each side of ``pair`` did (rates over all its calls), how they were drawn,
    and the event sets counted for it (``tested``: its ``CountedSet`` rows)."""
    counted = [
        {
            "event": t.candidate.rejection_set.event,
            "ordering": "first over second" if t.candidate.first_over_second else "second over first",
            "k1": t.k1,
            "k2": t.k2,
            "n_per_side": t.n,
            "epsilon_lower_bound": t.eps_lb,
        }
        for t in tested
        if t.pair is pair and isinstance(t.candidate.rejection_set, EventSet)
    ]
    drawn = "one release per call" + ("" if events.batch is None else f" ({events.batch}; drawn again)")
    return {
        "pair_description": pair.description,
        "pair_index": pair.index,
        "drawn": drawn,
        "first": _side(events.first),
        "second": _side(events.second),
        "counted": counted,
    }


def _pct(x: float) -> str:
    return f"{100 * x:.3g}%"


def witness_text(result) -> str | None:
    """ "the mechanism raised ValueError on 100% of the first dataset's calls and 0% of the
    second's: an exception is an output" when ``result``'s witness is an event set, else None."""
    s = result.witness.rejection_set
    if not isinstance(s, EventSet):
        return None
    ev = next((e for e in result.events if e["pair_index"] == result.witness.pair_index), None)
    if ev is None:
        return None
    top, other = ("first", "second") if result.witness.ordering == "first over second" else ("second", "first")
    if s.event == "raised":
        names = sorted(ev[top]["raised_by_class"], key=lambda c: -ev[top]["raised_by_class"][c])
        what = f"raised {' or '.join(names) or 'an exception'}"
    else:
        what = f"warned ({', '.join(ev[top]['warning_categories']) or 'a warning'})"
    return (
        f"the mechanism {what} on {_pct(ev[top][s.event])} of the {top} dataset's calls and "
        f"{_pct(ev[other][s.event])} of the {other}'s: {_WHAT[s.event]}"
    )
