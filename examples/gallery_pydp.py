"""python-dp 1.1.5 (module ``pydp``: Python bindings of Google's differential-privacy
C++ library), audited: ``BoundedSum`` and ``Count``, and a planted bug.

Each target is one release per call, ``mechanism(dataset)``: a fresh algorithm object and
``quick_result(list(dataset))``, as the library's examples use it. Noise comes from the
C++ library's ``SecureURBG`` (OpenSSL ``RAND_bytes``), never from the audit's rng, so
``--seed`` does not reproduce these audits. userdp's worker processes start from a fork
server and import python-dp afresh, each with its own stream; a forked worker spends the
random buffer it inherited (``userdp.audits.engine.parallel.discard_inherited_pydp_buffer``: without
it, forked workers repeat each other's first releases).

The claim. ``BoundedSum(epsilon, delta=0, lower_bound, upper_bound, l0_sensitivity=1,
linf_sensitivity=1)`` and ``Count(epsilon, l0_sensitivity=1, linf_sensitivity=1)``
(``pydp/algorithms/laplacian/_bounded_algorithms.py`` and ``_count.py``) are Laplace
mechanisms of the C++ library (``cc/algorithms/bounded-sum.h``, ``count.h``): epsilon-DP
with delta = 0, where one privacy unit adds or removes up to l0 x linf records, here one:
add-remove-record. The sum's sensitivity is max(|lower|, |upper|) (one record at either
bound appears or vanishes).

Targets (relation add-remove-record):

- ``bounded_sum``: bounds [-1, 2], epsilon 1. Pairs: no record vs one at the upper bound
  2, the largest |change| (max(|lower|, |upper|) = 2, the sensitivity: loss epsilon);
  and vs one at -1 (a change of 1: loss epsilon / 2, which checks that the bounds are
  read as they are). Float outputs.
- ``count``: epsilon 1. Pairs: no record vs one; five records vs six (the count moves by
  1 either way). Integer outputs, audited as discrete (threshold and value sets).
- ``bounded_sum_planted_eps2``: planted bug: the wrapper passes epsilon = 2 to the library
  but claims 1 (a budget mix-up, the kind Google's ``BoundedSumWithInsufficientNoise``
  test plants). True loss 2 on the pair "no record vs one at 2".
"""

from __future__ import annotations

from pydp.algorithms.laplacian import BoundedSum, Count

from userdp.audits.engine.registry import AuditSetup
from userdp.reference.claims import PureDP

from ._gallery import NO_VIOLATION, VIOLATION, Entry, check_bounds, check_epsilon, check_records

VERSION = "1.1.5"
MODULE = "examples.gallery_pydp"


def _sum_setup(run_epsilon: float, claim_epsilon: float, lower: float, upper: float) -> AuditSetup:
    lo, hi = check_bounds(lower, upper)

    def mechanism(dataset):
        return BoundedSum(epsilon=run_epsilon, delta=0.0, lower_bound=lo, upper_bound=hi, dtype="float").quick_result(
            list(dataset)
        )

    pairs = [
        ([], [hi], f"no record vs one at the upper bound {hi:g}"),
        ([], [lo], f"no record vs one at the lower bound {lo:g}"),
    ]
    pairs = [(check_records(a, lo, hi, "first"), check_records(b, lo, hi, "second"), d) for a, b, d in pairs]
    return AuditSetup(mechanism, pairs, PureDP(claim_epsilon))


def bounded_sum(epsilon: float = 1.0, lower: float = -1.0, upper: float = 2.0) -> AuditSetup:
    eps = check_epsilon(epsilon)
    return _sum_setup(eps, eps, lower, upper)


def bounded_sum_planted_eps2(lower: float = -1.0, upper: float = 2.0) -> AuditSetup:
    """Planted bug: runs the library at epsilon 2, claims epsilon 1."""
    return _sum_setup(2.0, 1.0, lower, upper)


def count(epsilon: float = 1.0) -> AuditSetup:
    eps = check_epsilon(epsilon)

    def mechanism(dataset):
        return Count(epsilon=eps, dtype="int").quick_result(list(dataset))

    pairs = [([], [1], "no record vs one (count 0 vs 1)"), ([1] * 5, [1] * 6, "five records vs six")]
    return AuditSetup(mechanism, pairs, PureDP(eps), output="discrete")


def _entry(name, mechanism, expected, samples, figure_samples, why) -> Entry:
    return Entry(
        f"{MODULE}:{name}", "python-dp", VERSION, mechanism, "add-remove-record", expected, samples, figure_samples, why
    )


ENTRIES = [
    _entry(
        "bounded_sum",
        "BoundedSum(eps=1, bounds [-1, 2])",
        NO_VIOLATION,
        20_000,
        200_000,
        "a correct Laplace sum, sensitivity max(|lower|, |upper|)",
    ),
    _entry("count", "Count(eps=1), discrete", NO_VIOLATION, 20_000, 200_000, "a correct Laplace count"),
    _entry(
        "bounded_sum_planted_eps2",
        "BoundedSum run at eps=2, claimed 1 (planted)",
        VIOLATION,
        10_000,
        100_000,
        "true loss 2 vs claim 1. Measured over 10 runs at 10,000 per side: eps_lb 1.73-1.83 (mean 1.78, "
        "sd 0.033): the claim is 24 sd below the mean, so a miss is far below 1e-4",
    ),
]
