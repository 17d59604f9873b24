"""Worst-case neighbour search: a cheap pilot ranks candidate pairs (docs/design.md §6).

Every candidate pair gets a pilot run of ``pilot_samples`` outputs per side on its own
seed stream. The pilot chooses its best rejection set exactly as the audit's selection
stage would and scores it with ``bounds.projected_bound`` at the final counting size;
pairs are ranked by score minus their claimed epsilon (so, for personalized claims, the
record closest to a violation comes first); with a Gaussian-DP claim, by the larger of that
and the trade-off score minus mu. Only the top few are confirmed on fresh samples; pilot
outputs never enter a bound, so ranking costs no confidence.
"""

from __future__ import annotations

import numpy as np

from userdp.audits.engine.rejection import choose_continuous, choose_vector
from userdp.audits.engine.value_sets import choose_discrete
from userdp.audits.engine.sampling import MechanismError, draw, encode, infer_kind

__all__ = ["best_candidates", "rank_pairs", "check_gdp_output", "check_noise_family_output"]


def check_gdp_output(kind: str) -> None:
    """The trade-off audit thresholds a scalar or a projection: refuse discrete outputs."""
    if kind in ("discrete", "categorical"):
        raise ValueError(
            "claim: a GaussianDP claim is audited through its trade-off curve with thresholds on "
            "continuous outputs (output='continuous' or 'vector'), and this mechanism's output is "
            "discrete; audit the (eps, delta) the claim implies instead, with the discrete "
            "(likelihood-ratio value-set) test: claim=ApproxDP(*GaussianDP(mu, delta).as_eps_delta())"
        )


def check_noise_family_output(kind: str, noise_family) -> None:
    """A declared noise family shapes a statistic of continuous outputs: refuse discrete ones."""
    if noise_family is not None and kind in ("discrete", "categorical"):
        raise ValueError(
            f"noise_family={noise_family!r} declares additive continuous noise, and this mechanism's "
            "output is discrete (the value-set test already uses the likelihood ratio of the "
            "observed frequencies); pass noise_family=None"
        )


def best_candidates(
    a,
    b,
    kind: str,
    values,
    n_count: int,
    alpha: float,
    delta: float,
    k: int,
    *,
    gdp: bool = False,
    noise_family: str | None = None,
):
    """The k best candidate sets on selection outputs a (first) and b (second); for the
    trade-off audit (mu_lb) when ``gdp``. ``noise_family`` adds that family's
    likelihood-ratio statistic for vector outputs; for a scalar output the likelihood ratio
    of every family is monotone in x, so the thresholds already are its sets, and the
    family only replaces the selection counts by the fitted family's (``choose_scalar``)."""
    if gdp:
        check_gdp_output(kind)
    check_noise_family_output(kind, noise_family)
    if kind == "continuous" and noise_family is not None and (np.isnan(a).any() or np.isnan(b).any()):
        raise ValueError(
            f"noise_family={noise_family!r} declares a release that is always made (a value plus "
            "noise), and this mechanism returned 'no release' (None); pass noise_family=None"
        )
    if kind == "continuous":
        return choose_continuous(a, b, n_count, alpha, delta, k, gdp=gdp, noise_family=noise_family)
    if kind == "vector":
        return choose_vector(a, b, n_count, alpha, delta, k, gdp=gdp, noise_family=noise_family)
    return choose_discrete(a, b, values, n_count, alpha, delta, k, ordered=kind == "discrete")


def rank_pairs(
    mechanism,
    pairs,
    claims,
    seeds,
    *,
    pilot_samples: int,
    n_count: int,
    alpha: float,
    output: str | None,
    progress=None,
    mu: float | None = None,
    noise_family: str | None = None,
    transform=None,
) -> tuple[list[int], list]:
    """(order, failures): the indices of the pairs whose pilot ran, from most to least
    promising (by pilot score - eps, or with a Gaussian-DP claim ``mu``, the larger of that
    and trade-off score - mu), and [(index, MechanismError)] for the pairs whose mechanism
    raised (they are left out of the order; the others go on). ``mechanism`` is a
    ``parallel.Sampler``; ``transform`` maps each drawn side (``rounding.round_outputs``)."""
    keys, failures = [], []
    for i, (pair, (eps, delta), ss) in enumerate(zip(pairs, claims, seeds)):
        rngs = [np.random.default_rng(s) for s in ss.spawn(2)]
        mechanism.pair = pair  # names the pair in the sampler's progress lines
        try:
            a, b = draw(mechanism, pair, rngs, pilot_samples)
        except MechanismError as exc:
            keys.append(-np.inf)
            failures.append((i, exc))
            if progress is not None:
                progress(f"pilot {i + 1}/{len(pairs)}: {pair.description}: FAILED: {exc}")
            continue
        if transform is not None:
            a, b = transform(a), transform(b)
        kind = infer_kind(a, output)
        ea, eb, values = encode(a, b, kind)
        best = best_candidates(ea, eb, kind, values, n_count, alpha, delta, 1, noise_family=noise_family)
        keys.append(best[0].score - eps if best else -np.inf)
        text = f"score {keys[-1] + eps:.4f}"
        if mu is not None:
            g = best_candidates(ea, eb, kind, values, n_count, alpha, delta, 1, gdp=True, noise_family=noise_family)
            g_key = g[0].score - mu if g else -np.inf
            keys[-1] = max(keys[-1], g_key)
            text += f", mu score {g_key + mu:.4f}"
        if progress is not None:
            progress(f"pilot {i + 1}/{len(pairs)}: {pair.description}: {text}")
    failed = {i for i, _ in failures}
    return sorted((i for i in range(len(pairs)) if i not in failed), key=lambda i: -keys[i]), failures
