"""Validation specs for Krichene et al. 2023: Algorithm 1's released sufficient statistics
(``krichene2023.ssp``) and Algorithm 2, task-weighted noisy gradient descent (``krichene2023.noisy-gd``),
both with the §5 mu-family weights from PUBLIC task sizes ``n_counts`` and user count ``n_users``,
clipped per user by eq. (12).

SSP releases (A-hat_i, b-hat_i) for every task: A-bar_i + Gamma_x^2 Xi_i (Xi symmetric, upper
triangle i.i.d. N(0, 1)) and b-bar_i + Gamma_x^2 Gamma_* xi_i. The WHOLE release is compared:
``flatten_ssp`` keeps every entry of every A-hat_i, both triangles (so a target whose lower
triangle is not the upper one's mirror differs in the release's structure), then every b-hat_i.

The declared public counts are inputs, not the data's: the generated cases declare n_counts that
differ from the graph's own task sizes, so that a target computing the weights from the data's
counts (exact counts used for free, as in the authors' code) moves the statistic.

Case pairs: the registry's graph has users whose removal moves (A-hat, b-hat) by exactly one
sqrt(2 beta) noise unit (their budgets clipped to beta, their data at the clipping bounds); the
generated cases add a user of two tasks with x on an axis beyond Gamma_x and y beyond
Gamma_x Gamma_*, whose move is ``pair_share`` of sqrt(2 beta) (computed).

Noisy GD releases theta^(T): nonlinear in the noise (clipping, projection): compared as a
distribution on the registry's graph (where every gradient is clipped, so the release is one
Gaussian) and on generated graphs.
"""

from __future__ import annotations

import numpy as np

from userdp.reference import krichene2023 as K
from userdp.reference import krichene2023_weights as W
from userdp.reference.data import UserDataset
from userdp.reference.neighbours import NeighbourPair

from userdp.audits.papers.krichene2023 import audits as RK

from userdp.audits.validation import AuditDesign, Case, Param, Refusal, ValidationSpec, register
from userdp.audits.validation._data import seeded
from userdp.audits.validation.pair_search import Domain

__all__ = ["flatten_ssp"]

SSP_KEYS = ("m", "n_counts", "n_users", "beta", "mu", "Gamma_x", "Gamma_star")
WEIGHT_PARAMS = (
    Param("m", "the number of tasks (task_ids lie in [0, m))"),
    Param(
        "n_counts",
        "(m,) the PUBLIC task sizes n_i >= 1 used by the weights (declared, not read from "
        "the data: they may differ from the graph's own counts)",
    ),
    Param("n_users", "the PUBLIC number of users n used by the weights"),
    Param(
        "beta",
        "the per-user budget: sum over user j's tasks of w_ij^2 <= beta after eq. (12); the "
        "release is sqrt(2 beta)-GDP (beta_bar = beta)",
    ),
    Param("mu", "the exponent of the mu-family: omega_i prop. to n_i^-mu (0 = uniform), >= 0"),
)
READS = {
    "values": "(N, d) the features x_ij of each (task, user) record",
    "labels": "(N,) the labels y_ij",
    "task_ids": "(N,) the task i of each record, in [0, m)",
    "user_ids": "(N,) the user j of each record (one record per (task, user) pair: Omega is a set)",
}
RELATION = (
    "add/remove user (all of one user's records); (alpha, alpha beta)-RDP as (eps, delta) at delta = 1e-5, "
    "and sqrt(2 beta)-GDP"
)
DELTA = 1e-5


def ssp_adaptive_release(dataset, rng, size=None, *, m, n_counts, n_users, beta, mu, Gamma_x, Gamma_star):
    """``K.ssp_release`` with the §5 mu-family weights from the public n_counts and n_users and eq. (12)
    clipping at beta, computed inside from the dataset. Returns (A-hat (size, m, d, d), b-hat (size, m, d))."""
    w = W.adaptive_weights(dataset, m=m, beta=beta, mu=mu, n_counts=n_counts, n_users=n_users)
    return K.ssp_release(dataset, w, rng, size, m=m, Gamma_x=Gamma_x, Gamma_star=Gamma_star)


def ssp_adaptive_statistic(dataset, *, m, n_counts, n_users, beta, mu, Gamma_x, Gamma_star):
    """(A-bar, b-bar) under the same weights, flattened like the releases: their exact mean."""
    w = W.adaptive_weights(dataset, m=m, beta=beta, mu=mu, n_counts=n_counts, n_users=n_users)
    A, b = K.statistic(dataset, w, m=m, Gamma_x=Gamma_x, Gamma_star=Gamma_star)
    return flatten_ssp((A[None], b[None]), 1)[0]


def flatten_ssp(out, size: int) -> np.ndarray:
    """(A-hat, b-hat) -> (size, m d^2 + m d): every entry of every A-hat_i (both triangles), then every b-hat_i."""
    try:
        A_hat, b_hat = out
        A_hat, b_hat = np.asarray(A_hat, dtype=float), np.asarray(b_hat, dtype=float)
        d = A_hat.shape[-1]
        if A_hat.ndim != 4 or A_hat.shape[0] != size or A_hat.shape[-2] != d or b_hat.shape != A_hat.shape[:-1]:
            raise ValueError(f"shapes {A_hat.shape} and {b_hat.shape}")
    except (TypeError, ValueError) as exc:
        from userdp.audits.engine.usercode import UserCodeError

        raise UserCodeError(
            f"the SSP release must be a pair (A-hat (size, m, d, d), b-hat (size, m, d)) with size = {size}: {exc}"
        ) from None
    return np.concatenate([A_hat.reshape(size, -1), b_hat.reshape(size, -1)], axis=1)


def _stage_flatten(out):
    return flatten_ssp((np.asarray(out[0])[None], np.asarray(out[1])[None]), 1)[0]


def _noise_units(D1, D2, p) -> float:
    """||(A-bar, b-bar)(D1) - (A-bar, b-bar)(D2)|| in noise units over the released entries (the upper
    triangle of each A with its diagonal, and b), divided by sqrt(2 beta): the pair's share of the
    sensitivity the noise is calibrated to."""
    q = {k: p[k] for k in SSP_KEYS}
    w1 = W.adaptive_weights(D1, m=p["m"], beta=p["beta"], mu=p["mu"], n_counts=p["n_counts"], n_users=p["n_users"])
    w2 = W.adaptive_weights(D2, m=p["m"], beta=p["beta"], mu=p["mu"], n_counts=p["n_counts"], n_users=p["n_users"])
    A1, b1 = K.statistic(D1, w1, m=q["m"], Gamma_x=q["Gamma_x"], Gamma_star=q["Gamma_star"])
    A2, b2 = K.statistic(D2, w2, m=q["m"], Gamma_x=q["Gamma_x"], Gamma_star=q["Gamma_star"])
    sA, sb = K.noise_scale(q["Gamma_x"], q["Gamma_star"])
    iu = np.triu_indices(A1.shape[-1])
    move = np.sqrt(np.sum(((A1 - A2)[:, iu[0], iu[1]] / sA) ** 2) + np.sum(((b1 - b2) / sb) ** 2))
    return float(min(1.0, move / np.sqrt(2 * p["beta"])))


def _with_user(D: UserDataset, tasks, x, y) -> UserDataset:
    u = int(D.users.max()) + 1
    k = len(tasks)
    return UserDataset(
        np.vstack([D.values, np.tile(x, (k, 1))]),
        np.r_[D.user_ids, np.full(k, u)],
        labels=np.r_[D.labels, np.full(k, y)],
        task_ids=np.r_[D.task_ids, tasks],
    )


def _ssp_case(D, p, what, pair=None, origin="fixed") -> Case:
    if pair is None:  # along the diagonal, so that every entry of A-hat moves (both triangles)
        d = D.values.shape[1]
        x = np.full(d, 3.0 * p["Gamma_x"] / np.sqrt(d))
        D2 = _with_user(D, list(range(min(2, p["m"]))), x, 3.0 * p["Gamma_x"] * p["Gamma_star"])
        pair = NeighbourPair(
            D,
            D2,
            K.RELATION.name,
            int(D2.users.max()),
            "add a user in tasks 0 and 1, x = 3 Gamma_x (1, ..., 1) / sqrt(d), y = 3 Gamma_x Gamma_* "
            "(beyond the bounds)",
        )
    return Case(pair.first, p, what, pair=pair, pair_share=_noise_units(pair.first, pair.second, p), origin=origin)


def _bounds2_dataset() -> UserDataset:
    """The audit graph with every bound at 2: user 0 at x = 3 (clipped to 2), y = 9 (clipped to 4);
    user 3 at x = 5, y = -7 (clipped to 2, -4)."""
    return RK.audit_dataset(labels=(9.0, 0.3, -0.4, -7.0), x0=3.0)


BASE = {
    "m": RK.M,
    "n_counts": np.array(RK.N_COUNTS),
    "n_users": RK.N_USERS,
    "beta": 0.5,
    "mu": 0.5,
    "Gamma_x": 1.0,
    "Gamma_star": 1.0,
}
BOUNDS2 = {**BASE, "Gamma_x": 2.0, "Gamma_star": 2.0}


def generated_graph(g, n_users: int, m: int, d: int, skew: bool) -> UserDataset:
    """n_users users, each in 1 to 3 of m tasks (task 0 the most popular when skewed), x ~ N(0, I) x 1.2,
    y ~ N(0, 1) x 1.5 (some beyond the bounds)."""
    tasks, users = [], []
    for j in range(n_users):
        k = int(g.integers(1, min(3, m) + 1))
        p = np.arange(m, 0, -1.0) ** (2 if skew else 0)
        mine = np.sort(g.choice(m, size=k, replace=False, p=p / p.sum()))
        tasks += mine.tolist()
        users += [j] * k
    t = np.array(tasks)
    return UserDataset(
        np.round(1.2 * g.standard_normal((t.size, d)), 3),
        np.array(users),
        labels=np.round(1.5 * g.standard_normal(t.size), 3),
        task_ids=t,
    )


def _ssp_cases() -> list:
    """The registry's audit graph (d = 1, m = 3, bounds 1, beta = mu = 1/2: user 0 clipped by eq. (12),
    user 3's label -7 clipped to -1); the same graph with every bound at 2 (noise sd 4 on A, 8 on b:
    a swap of the two scales, or Gamma_x instead of Gamma_x^2, changes each spread 2 x); a d = 2, m = 2
    graph (the symmetric 2 x 2 noise: its off-diagonal entry drawn once)."""
    D = RK.audit_dataset()
    pair0 = RK.removal_pairs(D, (0,))[0]
    D2 = _bounds2_dataset()
    pair2 = RK.removal_pairs(D2, (0,))[0]
    g = np.random.default_rng(3)
    G = generated_graph(g, 12, 2, 2, skew=True)
    gp = {
        "m": 2,
        "n_counts": np.bincount(G.task_ids, minlength=2).astype(float),
        "n_users": 12,
        "beta": 1.0,
        "mu": 0.25,
        "Gamma_x": 1.5,
        "Gamma_star": 1.0,
    }
    return [
        _ssp_case(D, dict(BASE), "audit graph, d = 1, m = 3, bounds 1, beta = mu = 1/2", pair0),
        _ssp_case(D2, dict(BOUNDS2), "audit graph, d = 1, m = 3, Gamma_x = Gamma_* = 2", pair2),
        _ssp_case(G, gp, "generated graph, d = 2, m = 2, 12 users, beta = 1, mu = 1/4"),
    ]


def _ssp_generate(seed: int) -> list:
    """Three graphs per seed: d = 2 with DECLARED counts twice the graph's own and n_users above the
    users present; d = 3, many users (60), m = 4, skewed, declared counts from another graph; d = 2,
    few users (5), mu = 0 (uniform), beta = 2."""
    out = []
    for k, (n, m, d, skew, beta, mu, how) in enumerate(
        ((20, 3, 2, True, 0.5, 0.5, "double"), (60, 4, 3, True, 1.0, 0.75, "other"), (5, 2, 2, False, 2.0, 0.0, "own"))
    ):
        g = seeded("krichene2023.ssp", seed, k)
        D = generated_graph(g, n, m, d, skew)
        own = np.maximum(np.bincount(D.task_ids, minlength=m), 1).astype(float)
        declared = {"double": 2 * own, "other": np.round(g.uniform(1, 30, m)), "own": own}[how]
        p = {
            "m": m,
            "n_counts": declared,
            "n_users": n + (7 if how != "own" else 0),
            "beta": beta,
            "mu": mu,
            "Gamma_x": 1.0,
            "Gamma_star": 1.5,
        }
        what = {
            "double": "declared counts twice the graph's",
            "other": "declared counts unrelated to the graph's",
            "own": "declared counts the graph's own",
        }[how]
        out.append(
            _ssp_case(
                D,
                p,
                f"{n} users, m = {m}, d = {d}, {'skewed' if skew else 'balanced'} tasks, "
                f"beta = {beta:g}, mu = {mu:g}, {what}",
                origin="generated",
            )
        )
    return out


def _ssp_designs() -> list:
    """The bounds-2 graph (Gamma_x = Gamma_* = 2, beta = mu = 1/2, claim sqrt(2 beta) = 1-GDP audited on
    its trade-off curve), removing user 0 (2 tasks, beyond the bounds) or user 3 (alone in task 2,
    y = -7): each moves the release by exactly one noise unit. Labels unclipped give mu = 1.74, no
    eq. (12) clipping 1.33, the two noise scales swapped 1.46, noise sd Gamma_x and Gamma_x Gamma_*
    2; per-user normalisation to beta exactly is private at mu = 1 (no finding)."""
    D = _bounds2_dataset()
    return [
        AuditDesign(
            RK.removal_pairs(D, (0, 3)),
            dict(BOUNDS2),
            W.claim(0.5, DELTA),
            "bounds 2, beta = mu = 1/2: remove user 0 (2 tasks, beyond the bounds) or user 3 (alone in task 2, y = -7)",
            output="vector",
        )
    ]


def _ssp_add(base: UserDataset, user_id: int, values, labels) -> UserDataset:
    """``base`` with a user of k records added, record r in task r (one record per (task, user) pair)."""
    k = len(values)
    return UserDataset(
        np.vstack([base.values, values]),
        np.append(base.user_ids, np.full(k, user_id)),
        labels=np.append(base.labels, labels),
        task_ids=np.append(base.task_ids, np.arange(k)),
    )


def _ssp_domain(seed: int) -> Domain:
    """The pair search's space on the d = 2, m = 2 case: a user of one or two records (one per task) with
    x anywhere in the Gamma_x ball (every axis, diagonal and off-diagonal direction: the off-diagonal
    entry of A moves only off the axes) and y at +-Gamma_x Gamma_* or 0, added; or any user removed."""
    c = _ssp_cases()[2]
    gx, gs = float(c.params["Gamma_x"]), float(c.params["Gamma_star"])
    return Domain(
        "add-remove-user",
        dict(c.params),
        (c.dataset,),
        (-gx, gx),
        norm=gx,
        labels=(-gx * gs, 0.0, gx * gs),
        records=(1, 2),
        add=_ssp_add,
    )


def _ssp_refusals() -> list:
    D = RK.audit_dataset()
    twice = UserDataset(
        np.vstack([D.values, [[0.5]]]),
        np.append(D.user_ids, 1),
        labels=np.append(D.labels, 0.5),
        task_ids=np.append(D.task_ids, 0),
    )
    return [
        Refusal(Case(D, {**BASE, "beta": 0.0}, "beta = 0 (no budget: every weight 0)"), "parameter", "beta > 0"),
        Refusal(
            Case(
                D,
                {**BASE, "Gamma_x": 0.0},
                "Gamma_x = 0 (every feature clipped to 0, the noise scale Gamma_x^2 is 0: a constant release)",
            ),
            "parameter",
            "Gamma_x > 0",
        ),
        Refusal(
            Case(D, {**BASE, "n_counts": np.array([3.0, 0.0, 1.0])}, "a declared task size 0"),
            "parameter",
            "every declared n_i >= 1",
        ),
        Refusal(
            Case(
                twice,
                dict(BASE),
                "user 1 with two records in task 0 (Omega is a set: one (x_ij, y_ij) "
                "per pair; a second record doubles its weight, which the budget "
                "sum_i w_ij^2 does not count)",
            ),
            "parameter",
            "one record per (task, user) pair",
        ),
    ]


register(
    ValidationSpec(
        algorithm="krichene2023.ssp",
        reference=ssp_adaptive_release,
        statistic=ssp_adaptive_statistic,
        noise="gaussian",
        claim=lambda D, p: W.claim(p["beta"], DELTA),
        cases=_ssp_cases,
        generate=_ssp_generate,
        designs=_ssp_designs,
        refusals=_ssp_refusals,
        domain=_ssp_domain,
        suite="userdp.properties.krichene2023",
        parameters=WEIGHT_PARAMS
        + (
            Param("Gamma_x", "the clipping bound on ||x_ij||_2 (features are clipped, not refused); > 0"),
            Param("Gamma_star", "the label bound: |y_ij| is clipped to Gamma_x Gamma_star; > 0"),
        ),
        reads=READS,
        relation=RELATION,
        release="a pair (A-hat (m, d, d), b-hat (m, d)): A-bar_i + Gamma_x^2 Xi_i with Xi_i SYMMETRIC (upper triangle "
        "i.i.d. N(0, 1), mirrored: a standard deviation, not a variance), b-bar_i + Gamma_x^2 Gamma_star N(0, I_d); "
        "A-bar_i = sum_j w_ij x x^T and b-bar_i = sum_j w_ij y x on the clipped data",
        stage_params={
            "weights": ("m", "n_counts", "n_users", "beta", "mu"),
            "statistic": SSP_KEYS,
            "sensitivity": ("beta", "Gamma_x", "Gamma_star"),
            "noise_scale": ("Gamma_x", "Gamma_star"),
        },
        takes_dataset=("weights", "statistic"),
        flatten=flatten_ssp,
        audit_flatten=flatten_ssp,
        stage_flatten=_stage_flatten,
        why="Algorithm 1's released (A-hat_i, b-hat_i) with the §5 weights and eq. (12); the whole release is "
        "compared (every entry of A-hat, both triangles)",
    )
)


# ------------------------------------------------------------------ noisy GD (Algorithm 2)
GD_KEYS = ("m", "n_counts", "n_users", "beta", "mu", "Gamma", "Lambda", "eta", "T", "radius")


def gd_release(dataset, rng, size=None, *, m, n_counts, n_users, beta, mu, Gamma, Lambda, eta, T, radius):
    """``K.gd_mechanism`` with the §5 weights and a constant public step eta for T steps: theta^(T),
    (size, m, d)."""
    w = W.adaptive_weights(dataset, m=m, beta=beta, mu=mu, n_counts=n_counts, n_users=n_users)
    steps = np.full((T, m), float(eta))
    return K.gd_mechanism(dataset, w, rng, size, m=m, Gamma=Gamma, Lambda=Lambda, eta=steps, radius=radius)


def _gd_flatten(out, size: int):
    a = np.asarray(out, dtype=float)
    return a.reshape(size, -1) if a.ndim >= 2 and a.shape[0] == size else a


GD_BASE = {
    "m": RK.M,
    "n_counts": np.array(RK.N_COUNTS),
    "n_users": RK.N_USERS,
    "beta": 0.5,
    "mu": 0.5,
    "Gamma": 1.0,
    "Lambda": 0.0,
    "eta": 0.01,
    "T": 4,
    "radius": 1e3,
}


def _gd_dataset() -> UserDataset:
    return RK.audit_dataset(labels=(10.0, 10.0, 10.0, 10.0), x0=1.0).with_fields(values=np.ones((5, 1)))


def _gd_cases() -> list:
    """The registry's graph (every gradient clipped: one Gaussian, shift eta T w Gamma per task), the audit
    graph with its own labels at lambda = 0.1 and a step 0.2 (gradients below the clip: nonlinear), and
    a d = 2 graph with a radius 0.5 that the iterates reach (the projection acts)."""
    g = np.random.default_rng(13)
    G = generated_graph(g, 10, 2, 2, skew=True)
    gp = {
        **GD_BASE,
        "m": 2,
        "n_counts": np.bincount(G.task_ids, minlength=2).astype(float),
        "n_users": 10,
        "beta": 1.0,
        "Gamma": 2.0,
        "Lambda": 0.5,
        "eta": 0.3,
        "T": 6,
        "radius": 0.5,
    }
    return [
        Case(_gd_dataset(), dict(GD_BASE), "registry graph, y = 10 (every gradient clipped), T = 4"),
        Case(
            RK.audit_dataset(),
            {**GD_BASE, "Lambda": 0.1, "eta": 0.2, "T": 3, "Gamma": 5.0},
            "audit graph, gradients below the clip, lambda = 0.1, T = 3",
        ),
        Case(G, gp, "generated graph, d = 2, m = 2, radius 0.5 reached, T = 6"),
    ]


def _gd_generate(seed: int) -> list:
    out = []
    for k, (n, m, d, T, eta, lam) in enumerate(((15, 3, 2, 5, 0.1, 0.0), (40, 2, 1, 3, 0.5, 2.0))):
        g = seeded("krichene2023.noisy-gd", seed, k)
        D = generated_graph(g, n, m, d, skew=True)
        own = np.maximum(np.bincount(D.task_ids, minlength=m), 1).astype(float)
        p = {
            **GD_BASE,
            "m": m,
            "n_counts": 1.5 * own,
            "n_users": n + 3,
            "beta": 0.8,
            "Gamma": 1.0,
            "Lambda": lam,
            "eta": eta,
            "T": T,
            "radius": 2.0,
        }
        out.append(
            Case(
                D,
                p,
                f"{n} users, m = {m}, d = {d}, T = {T}, eta = {eta:g}, lambda = {lam:g}, declared "
                "counts 1.5 x the graph's",
                origin="generated",
            )
        )
    return out


def _gd_designs() -> list:
    """The registry's design: every gradient clipped, so theta^(T) is one Gaussian with shift eta T w Gamma
    per task of the removed user and sd eta Gamma sqrt(T/2) sqrt(T): the composition's worst case."""
    s = RK.build_noisy_gd()
    return [
        AuditDesign(s.pairs, dict(GD_BASE), s.claim, "registry graph, y = 10: remove user 0 or user 3", output="vector")
    ]


def _gd_search_dataset() -> UserDataset:
    """The registry's graph in d = 2: every x = (1, 1) / sqrt(2) (norm 1, as there), every y = 10, so every
    record's gradient is clipped and each user's move is a fixed direction times its weight."""
    return _gd_dataset().with_fields(values=np.full((5, 2), 1.0 / np.sqrt(2.0)))


def _gd_domain(seed: int) -> Domain:
    """The pair search's space at the registry's parameters (``GD_BASE``) on ``_gd_search_dataset``: any of
    its 4 users removed, or a user of one to three records (one per task) added with x anywhere in the
    box [-1, 1]^2 (every axis, diagonal and off-diagonal direction: a gradient clipped coordinate by
    coordinate rather than in L2 norm is longer along a diagonal) and y at -10, 0 or 10 (gradients beyond
    the clip, and the ridge-free gradient 0 of theta = 0): 202 pairs."""
    return Domain(
        "add-remove-user",
        dict(GD_BASE),
        (_gd_search_dataset(),),
        (-1.0, 1.0),
        labels=(-10.0, 0.0, 10.0),
        records=(1, 2, 3),
        add=_ssp_add,
    )


def _gd_refusals() -> list:
    D = _gd_dataset()
    return [
        Refusal(
            Case(D, {**GD_BASE, "beta": 0.0}, "beta = 0 (every weight 0: gradient steps of pure noise)"),
            "parameter",
            "beta > 0",
        ),
        Refusal(
            Case(D, {**GD_BASE, "Gamma": 0.0}, "Gamma = 0 (every gradient clipped to 0, no noise: theta stays 0)"),
            "parameter",
            "Gamma > 0",
        ),
        Refusal(Case(D, {**GD_BASE, "eta": -0.1}, "a negative step"), "parameter", "eta > 0"),
        Refusal(Case(D, {**GD_BASE, "T": 0}, "T = 0 steps"), "parameter", "T an integer >= 1"),
    ]


register(
    ValidationSpec(
        algorithm="krichene2023.noisy-gd",
        reference=gd_release,
        statistic=None,
        claim=lambda D, p: W.claim(p["beta"], DELTA),
        cases=_gd_cases,
        generate=_gd_generate,
        designs=_gd_designs,
        refusals=_gd_refusals,
        domain=_gd_domain,
        flatten=_gd_flatten,
        audit_flatten=_gd_flatten,
        suite="userdp.properties.krichene2023",
        suite_properties="",
        suite_reference="",
        max_samples=100_000,
        parameters=WEIGHT_PARAMS
        + (
            Param(
                "Gamma",
                "the clipping bound on each record's gradient (theta.x - y) x + "
                "lambda theta; the noise sd per step is Gamma sqrt(T / 2)",
            ),
            Param("Lambda", "the ridge term lambda >= 0 inside each record's gradient"),
            Param("eta", "the constant public step size, > 0"),
            Param("T", "the number of steps, an integer >= 1"),
            Param("radius", "the radius of the ball the iterates are projected on, > 0"),
        ),
        reads=READS,
        relation=RELATION,
        release="an (m, d) array theta^(T): T steps theta <- Pi_ball(theta - eta (g + Gamma sqrt(T/2) N(0, I))), "
        "g_i = sum_j w_ij clip(grad l(theta_i; x_ij, y_ij), Gamma), theta^(0) = 0",
        why="Algorithm 2 (task-weighted noisy GD) with the §5 weights; compared as a distribution",
    )
)
