"""OpenDP 0.16.0, audited: the chain clamp >> sum >> laplace under the symmetric distance,
and a planted bug.

The measurement, built with the library's own combinators::

    space = vector_domain(atom_domain(T=float, nan=False)), symmetric_distance()
    meas = space >> then_clamp((lower, upper)) >> then_sum() >> then_laplace(scale)

``meas(list_of_floats)`` is one release per call; OpenDP samples its noise inside the
Rust library from its own secure generator, never from the audit's rng (two calls with
generators from one seed differ), so ``--seed`` does not reproduce these audits.

The claim is the library's own: ``meas.map(d_in=1)``, the privacy map at symmetric
distance 1 (one record added or removed), checked to be a ``MaxDivergence`` (pure eps-DP).
For bounds [0, 1] and scale 1 it is 1.000000009313226, not 1: the float sum's stability
map adds a bound on floating-point rounding error (the Rust source
``src/transformations/sum/float/mod.rs``, ``SumRelaxation``; Casacuberta et al. 2022,
"Widespread underestimation of sensitivity", cited by ``make_sum``). The relation is
``add-remove-record``: OpenDP's ``SymmetricDistance`` counts records added or removed in a
multiset.

Targets:

- ``clamp_sum_laplace``: bounds [0, 1], scale 1. Pairs: no record vs one at the upper
  bound (the clamped sum moves by 1, its sensitivity), and three records at 1 vs two (the
  same change on a non-empty dataset). Float outputs.
- ``clamp_sum_laplace_planted_scale``: planted bug: the release runs with scale 0.5
  (eps = 2) while the claim is the map of the scale-1 measurement (a wrapper that halves
  the noise after the privacy map was computed). True loss 2 vs a claim of 1.
- ``polars_sum``: the same sum through OpenDP's polars front end, as its documentation
  writes it: a ``dp.Context`` over a ``polars.LazyFrame`` (one record per row, each
  contributing once: ``unit_of(contributions=1)``, so the relation is add-remove-record),
  the whole budget on one query ``pl.col("x").fill_null(0.0).dp.sum((lower, upper))``.
  Resolving the query's measurement takes about a second (its float sum's rounding
  bound), so the factory resolves it once and each call applies it to the dataset's
  LazyFrame. The claim is again the measurement's own map at distance 1 (here exactly
  eps = 1: the context calibrates the scale to its budget). One pair, three records at
  the upper bound vs two (a call costs about a millisecond, 20 times the other targets'). Polars runs a thread pool, so
  a process forked from one that used it can hang in a copied lock (userdp's workers did,
  2 tries of 2, before they were started by a fork server: ``audits/engine/parallel.py``); the
  gallery audits it with ``--workers 2``.
"""

from __future__ import annotations

import opendp.prelude as dp
import polars as pl

from userdp.audits.engine.registry import AuditSetup
from userdp.reference.claims import PureDP

from ._gallery import NO_VIOLATION, VIOLATION, Entry, check_bounds, check_epsilon, check_records

VERSION = "0.16.0"
MODULE = "examples.gallery_opendp"
dp.enable_features("contrib")  # then_laplace on floats is a "contrib" component in OpenDP 0.16


def measurement(lower: float, upper: float, scale: float):
    """clamp >> sum >> laplace on vectors of non-NaN floats under the symmetric distance."""
    lower, upper = check_bounds(lower, upper)
    scale = check_epsilon(scale, "scale")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    return space >> dp.t.then_clamp((lower, upper)) >> dp.t.then_sum() >> dp.m.then_laplace(scale=scale)


def claim_of(meas) -> PureDP:
    """The library's claim: meas.map(1) under a MaxDivergence (pure DP)."""
    if str(meas.output_measure) != "MaxDivergence":
        raise ValueError(f"expected a pure-DP measurement (MaxDivergence), got {meas.output_measure}")
    return PureDP(float(meas.map(d_in=1)))


def _setup(run, claimed, lo: float, hi: float) -> AuditSetup:
    def mechanism(dataset):
        return run(list(dataset))

    pairs = [
        ([], [hi], f"no record vs one at the upper bound {hi:g}"),
        ([hi] * 3, [hi] * 2, f"three records at {hi:g} vs two"),
    ]
    pairs = [(check_records(a, lo, hi, "first"), check_records(b, lo, hi, "second"), d) for a, b, d in pairs]
    return AuditSetup(mechanism, pairs, claim_of(claimed))


def clamp_sum_laplace(scale: float = 1.0, lower: float = 0.0, upper: float = 1.0) -> AuditSetup:
    lo, hi = check_bounds(lower, upper)
    meas = measurement(lo, hi, check_epsilon(scale, "scale"))
    return _setup(meas, meas, lo, hi)


def clamp_sum_laplace_planted_scale(lower: float = 0.0, upper: float = 1.0) -> AuditSetup:
    """Planted bug: releases with scale 0.5, claims the map of the scale-1 measurement."""
    lo, hi = check_bounds(lower, upper)
    return _setup(measurement(lo, hi, 0.5), measurement(lo, hi, 1.0), lo, hi)


def polars_sum(epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0) -> AuditSetup:
    """The clipped sum of one column by OpenDP's polars front end (module docstring)."""
    eps = check_epsilon(epsilon)
    lo, hi = check_bounds(lower, upper)
    schema = {"x": pl.Float64}
    context = dp.Context.compositor(
        data=pl.LazyFrame({"x": [lo]}, schema=schema),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=eps),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=10)],
    )
    meas = context.query().select(pl.col("x").fill_null(0.0).dp.sum((lo, hi))).resolve()

    def mechanism(dataset):
        frame = pl.LazyFrame({"x": [float(v) for v in dataset]}, schema=schema)
        return meas(frame).collect().item()

    pair = (
        check_records([hi] * 3, lo, hi, "first"),
        check_records([hi] * 2, lo, hi, "second"),
        f"three records at {hi:g} vs two",
    )
    return AuditSetup(mechanism, [pair], claim_of(meas))


ENTRIES = [
    Entry(
        f"{MODULE}:clamp_sum_laplace",
        "opendp",
        VERSION,
        "clamp >> sum >> laplace(scale=1), bounds [0, 1]",
        "add-remove-record",
        NO_VIOLATION,
        20_000,
        200_000,
        "a correct Laplace sum, claim meas.map(1)",
    ),
    Entry(
        f"{MODULE}:clamp_sum_laplace_planted_scale",
        "opendp",
        VERSION,
        "the same run at scale 0.5, claimed map(1) of scale 1 (planted)",
        "add-remove-record",
        VIOLATION,
        5_000,
        50_000,
        "true loss 2 vs claim 1.0000000093. Measured over 10 runs at 5,000 per side: eps_lb 1.61-1.85 "
        "(mean 1.73, sd 0.061): the claim is 12 sd below the mean, so a miss is far below 1e-4",
    ),
    Entry(
        f"{MODULE}:polars_sum",
        "opendp",
        VERSION,
        "polars front end: Context query, sum of a column in [0, 1] (eps=1)",
        "add-remove-record",
        NO_VIOLATION,
        6_000,
        100_000,
        "a correct Laplace sum, claim meas.map(1); with --workers 2 it hung before worker processes came "
        "from a fork server",
    ),
]
