"""Validation specs for Epasto et al. 2020 §3: ``epasto2020.wa`` (Algorithm 1 with Lemma 3's weights at
Claim 1's h*) and ``epasto2020.sample-limiting`` (§3.2 at Claim 2's best integer h).

Both release beta_hat + Lap(b) with b = B max_l W_l / eps (Lemma 1). The sensitivity B max_l W_l
is attained by the user of the largest weight W_l with its values all 0 on one side and all B on
the other: every case carries that pair (``weight_pair``).

Sample limiting: §3.2 "arbitrarily selects" the min(h, s_l) records of each user, so ANY rule that
ignores the values (first h, last h, a fresh random choice per release) is the paper's algorithm,
and each gives another statistic when a user's values differ. Its cases therefore hold each user's
values equal (``per_user_constant``), where every such rule gives the same release; the
independence check runs on values that vary, where a random choice shared by the releases of one
call shows. A rule that reads the values (each user's h largest) is private but biased, and no
release-level test can tell it from an admissible rule without knowing the rule.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import epasto2020 as E
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import NeighbourPair

from userdp.audits.papers.epasto2020 import audits as RE
from userdp.audits.papers.epasto2020 import whitebox as RW

from userdp.audits.validation import AuditDesign, Case, Param, Refusal, ValidationSpec, register
from userdp.audits.validation._data import seeded, sizes, user_ids
from userdp.audits.validation.pair_search import Domain

__all__: list[str] = []  # registers its entries at import; nothing else is imported from it

PARAMS = (
    Param("B", "the public bound on the values: every y_i in [0, B]; > 0 (same unit as the values)"),
    Param("epsilon", "the privacy level: pure epsilon-DP under replace-user; > 0"),
    Param(
        "sigma",
        "the public standard deviation of one value (NOT a variance), >= 0; the paper's default is "
        "B/2; it chooses h (Claim 1 / Claim 2), never the noise directly",
    ),
)
READS = {
    "values": "(n,) each record's value y_i in [0, B]",
    "user_ids": "(n,) the user owning each record; the sets S_l (which records belong to whom) are public",
}
RELATION = (
    "replace-user, S_l public (§2.2: one user's values change, which records are whose does not); pure epsilon-DP"
)


def skewed_dataset(big: int = 20, n_big: int = 3, n_small: int = 40, seed: int = 7) -> UserDataset:
    """3 users of 20 records and 40 of one record, values on a 1/1000 grid in [0, 1]: at eps = 4 and
    sigma = 1/2, h* = 4.615 > s_1 = 1 (Claim 1), so the heavy users get the largest total weight,
    m max_l W_l = 3.686 times the mean user weight 1/m."""
    s = np.array([big] * n_big + [1] * n_small)
    values = np.round(np.random.default_rng(seed).uniform(0.0, 1.0, int(s.sum())), 3)
    return UserDataset(values=values, user_ids=user_ids(s))


def per_user_constant(D: UserDataset) -> UserDataset:
    """D with each user's values replaced by its first record's value, repeated."""
    order, offsets = D.record_order
    first = D.values[order[offsets[:-1]]]
    return D.with_fields(values=first[D.user_index])


def _weights(kind: str, D: UserDataset, p) -> np.ndarray:
    if kind == "wa":
        return E.optimal_weights(D, p["epsilon"], p["B"], sigma=p["sigma"])[0]
    return E.sample_limiting_weights(D, E.best_integer_h(D.counts, p["sigma"], p["B"], p["epsilon"]))


def weight_pair(kind: str, D: UserDataset, p) -> NeighbourPair:
    """The user of the largest W_l with its values all 0 vs all B (Lemma 1: a move of B max W_l)."""
    W = D.user_sums(_weights(kind, D, p))
    u = int(D.users[int(np.argmax(W))])
    idx = D.records_of(u)
    a, b = np.array(D.values), np.array(D.values)
    a[idx], b[idx] = 0.0, p["B"]
    return NeighbourPair(
        D.with_fields(values=a),
        D.with_fields(values=b),
        E.RELATION.name,
        u,
        f"user {u} (s = {idx.size}, the largest W_l = {W.max():.4g}): values all 0 vs all B",
    )


def _case(kind, D, p, what, origin="fixed") -> Case:
    pair = weight_pair(kind, D, p)
    return Case(pair.first, p, what, pair=pair, origin=origin)


def _p(eps, B=1.0, sigma=None):
    return {"B": B, "epsilon": eps, "sigma": B / 2 if sigma is None else sigma}


def _cases(kind: str) -> list:
    """The audit dataset (Zipf sizes, 50 users) at eps = 1 (h* = 1.91: nearly one vote per user) and at
    eps = 50 (h* = 43.1; noise ~2e-4, small against what a sub-optimal h or unnormalised weights change),
    and the skewed dataset at eps = 4 (h* = 4.6: heavy users weighted above the others)."""
    f = (lambda D: D) if kind == "wa" else per_user_constant
    D, S = f(RE.default_dataset()), f(skewed_dataset())
    eq = "" if kind == "wa" else ", values equal within a user"
    return [
        _case(kind, D, _p(1.0), f"Zipf sizes (50 users){eq}, eps = 1"),
        _case(kind, D, _p(50.0), f"Zipf sizes (50 users){eq}, eps = 50"),
        _case(kind, S, _p(4.0), f"3 users of 20 records, 40 of 1{eq}, eps = 4"),
    ]


def _generate(kind: str, algorithm: str):
    """Four cases per seed: few users balanced (6 users of equal size), many users skewed (300, Zipf up to
    40 records), single-record users (h = 1 for every rule), and a B other than 1 with a sigma other
    than B/2; eps from 0.5 to 20."""

    def generate(seed: int) -> list:
        out = []
        for k, (m, shape, eps, B, sigma) in enumerate(
            (
                (6, "balanced", 2.0, 1.0, None),
                (300, "skewed", 0.5, 1.0, None),
                (25, "single", 20.0, 1.0, None),
                (40, "skewed", 5.0, 3.0, 0.4),
            )
        ):
            g = seeded(algorithm, seed, k)
            s = sizes(g, m, shape, top=40 if m > 100 else 12)
            D = UserDataset(np.round(g.uniform(0.0, B, int(s.sum())), 4), user_ids(s))
            if kind != "wa":
                D = per_user_constant(D)
            what = f"{m} users, {shape} sizes, eps = {eps:g}, B = {B:g}, sigma = {B / 2 if sigma is None else sigma:g}"
            out.append(_case(kind, D, _p(eps, B, sigma), what, "generated"))
        return out

    return generate


def _designs(kind: str):
    """REPLACE_USER's worst-case pairs (the heaviest users and the lightest, values 0 vs B) on the audit
    data at eps = 1 and the skewed data at eps = 4. On the skewed data a noise scale calibrated to the
    MEAN user weight B/m (m max W_l = 3.686 there) costs 3.686 x 4 = 14.7 against the claim of 4; a
    noise scale for one record, B / (eps n_h), costs h eps in sample limiting."""

    def designs() -> list:
        out = []
        for D, eps, what in (
            (RE.default_dataset(), 1.0, "Zipf sizes (50 users), eps = 1"),
            (skewed_dataset(), 4.0, "3 users of 20 records, 40 of 1, eps = 4"),
        ):
            out.append(
                AuditDesign(
                    E.RELATION.worst_case_pairs(D, 0.0, 1.0),
                    _p(eps),
                    E.claim(eps),
                    f"{what}: heaviest users and the lightest, values 0 vs B",
                )
            )
        return out

    return designs


def _refusals(kind: str):
    def refusals() -> list:
        D = RE.default_dataset() if kind == "wa" else per_user_constant(RE.default_dataset())
        big = D.with_fields(values=np.where(D.user_ids == D.user_ids[0], 2.0, D.values))
        return [
            Refusal(Case(D, _p(0.0), "epsilon = 0"), "budget", "epsilon > 0"),
            Refusal(Case(D, {**_p(1.0), "B": -1.0}, "B = -1"), "parameter", "B > 0"),
            Refusal(
                Case(big, _p(1.0), "user 0's values at 2B, outside [0, B] (the noise covers B)"),
                "data",
                "every value in [0, B]",
            ),
        ]

    return refusals


def project(dataset: UserDataset, params) -> UserDataset:
    """every value clipped to [0, B] (as diffprivlib's bounded tools do)"""
    return dataset.with_fields(values=np.clip(dataset.values, 0.0, params["B"]))


def _clip_designs(kind: str):
    """The heaviest user's values at -B vs 2B: clipped, 0 vs B (Lemma 1's move exactly); unclipped, a
    move of 3 B max W_l: loss 3 eps."""

    def designs() -> list:
        D = RE.default_dataset() if kind == "wa" else per_user_constant(RE.default_dataset())
        u = int(D.users[np.argmax(D.counts)])
        a = D.with_fields(values=np.where(D.user_ids == u, -1.0, D.values))
        b = D.with_fields(values=np.where(D.user_ids == u, 2.0, D.values))
        pair = NeighbourPair(a, b, E.RELATION.name, u, f"user {u} (the heaviest): values all -B vs all 2B")
        return [AuditDesign([pair], _p(1.0), E.claim(1.0), "out of domain: the heaviest user at -B vs 2B")]

    return designs


def ladder_dataset() -> UserDataset:
    """The pair search's base: 30 users of one record and one user each of 4, 8 and 16 records (at eps = 4,
    sigma = 1/2: h* = 3.2 for WA, h = 4 for sample limiting, so 1, h, 2h and 4h records), values on a
    1/1000 grid in the interior [0.25, 0.75] of [0, 1]: no value at a bound, so that a replaced user moves
    the data's own range (a bound read from the data shows)."""
    s = np.array([1] * 30 + [4, 8, 16])
    values = np.round(np.random.default_rng(17).uniform(0.25, 0.75, int(s.sum())), 3)
    return UserDataset(values=values, user_ids=user_ids(s))


def _domain(seed: int) -> Domain:
    """The pair search's space (replace-user, S_l public) at eps = 4 on ``ladder_dataset``: one user of each
    size (1, 4, 8, 16 records) with all its values moved between two of 0, B, interior points and seeded
    uniforms, or split record by record between 0 and B (every split of the user of 4, 3 seeded ones
    above): 125 pairs. A user's weight depends only on its
    size, so the other users of a size add nothing for a mechanism that reads S_l as the paper does."""
    return Domain("replace-user", _p(4.0), (ladder_dataset(),), (0.0, 1.0))


def _statistic(kind: str):
    def statistic(D, *, B, epsilon, sigma):
        return E.wa_statistic(D, _weights(kind, D, {"B": B, "epsilon": epsilon, "sigma": sigma}), B)

    return statistic


_COMMON = dict(
    noise="laplace",
    suite="userdp.properties.epasto2020",
    parameters=PARAMS,
    reads=READS,
    relation=RELATION,
    project=project,
    claim=lambda D, p: E.claim(p["epsilon"]),
    release="a float: beta_hat = sum_i c_i y_i plus Laplace noise of SCALE B max_l W_l / epsilon "
    "(W_l = the sum of user l's weights c_i)",
)

register(
    ValidationSpec(
        algorithm="epasto2020.wa",
        reference=E.optimal_wa_mechanism,
        statistic=_statistic("wa"),
        cases=lambda: _cases("wa"),
        generate=_generate("wa", "epasto2020.wa"),
        designs=_designs("wa"),
        refusals=_refusals("wa"),
        clip_designs=_clip_designs("wa"),
        spaces=lambda p: RW.wa_spaces(RE._setup("wa", p["B"], p["epsilon"], p["sigma"]), p),
        whitebox_params=_p(1.0),
        domain=_domain,
        stage_params={s: ("B", "epsilon", "sigma") for s in ("weights", "statistic", "sensitivity", "noise_scale")},
        why="Algorithm 1 with Lemma 3's weights at Claim 1's h*; release beta_hat + Lap(B max_l W_l / eps)",
        **_COMMON,
    )
)

register(
    ValidationSpec(
        algorithm="epasto2020.sample-limiting",
        reference=E.best_sample_limiting_mechanism,
        statistic=_statistic("sl"),
        cases=lambda: _cases("sl"),
        generate=_generate("sl", "epasto2020.sample-limiting"),
        designs=_designs("sl"),
        refusals=_refusals("sl"),
        clip_designs=_clip_designs("sl"),
        domain=_domain,
        suite_properties="SL_PROPERTIES",
        suite_reference="REFERENCE_SL",
        # not "weights": the rule choosing T is the implementation's (module docstring), so c_i is too
        independence_case=lambda: Case(
            RE.default_dataset(), _p(1.0), "Zipf sizes, values varying within users, eps = 1"
        ),
        stage_params={s: ("B", "epsilon", "sigma") for s in ("statistic", "sensitivity", "noise_scale")},
        why="§3.2 at Claim 2's best integer h: the mean of min(h, s_l) value-independently chosen records of each "
        "user + Lap(B h / (eps n_h)); the rule choosing the records is the implementation's",
        **_COMMON,
    )
)
