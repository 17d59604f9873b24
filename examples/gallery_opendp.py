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
"""
from __future__ import annotations

import opendp.prelude as dp

from userdp.audits.registry import AuditSetup
from userdp.reference.claims import PureDP

from ._gallery import NO_VIOLATION, VIOLATION, Entry, check_bounds, check_epsilon, check_records

VERSION = "0.16.0"
MODULE = "examples.gallery_opendp"
dp.enable_features("contrib")     # then_laplace on floats is a "contrib" component in OpenDP 0.16


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
    pairs = [([], [hi], f"no record vs one at the upper bound {hi:g}"),
             ([hi] * 3, [hi] * 2, f"three records at {hi:g} vs two")]
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


ENTRIES = [
    Entry(f"{MODULE}:clamp_sum_laplace", "opendp", VERSION, "clamp >> sum >> laplace(scale=1), bounds [0, 1]",
          "add-remove-record", NO_VIOLATION, 20_000, 200_000, "a correct Laplace sum, claim meas.map(1)"),
    Entry(f"{MODULE}:clamp_sum_laplace_planted_scale", "opendp", VERSION,
          "the same run at scale 0.5, claimed map(1) of scale 1 (planted)", "add-remove-record", VIOLATION, 5_000,
          50_000, "true loss 2 vs claim 1.0000000093. Measured over 10 runs at 5,000 per side: eps_lb 1.61-1.85 "
          "(mean 1.73, sd 0.061): the claim is 12 sd below the mean, so a miss is far below 1e-4"),
]
