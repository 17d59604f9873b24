"""The bad-input rows of Krichene et al. 2023 (``userdp.reference.krichene2023*``), in the format of
``tests/bad_values.py``; ``tests/bad_input_table.py`` collects them into its ``TABLE`` and
``tests/test_bad_input.py`` runs them."""

from __future__ import annotations

import numpy as np

from bad_values import (  # tests/ is on sys.path (rootdir conftest)
    ARRAY,
    DATASET,
    DELTA_POS,
    DS_ALIAS,
    EPS,
    Entry,
    INT,
    NONNEG,
    POS,
    RNG,
    SIZE,
    entry_adder,
    finite_bad,
    inf,
    nan,
    rng,
)
from userdp.reference.data import UserDataset

__all__ = ["ROWS"]

ROWS: list[Entry] = []
entry = entry_adder(ROWS)

# ============================================================ Krichene et al. 2023
try:
    from userdp.reference import krichene2023 as Kr
    from userdp.reference import krichene2023_dpals as Kd
    from userdp.reference import krichene2023_weights as Kw
except ImportError:
    Kr = None
if Kr is not None:

    def _Dk(**kw):
        """Tasks 0, 1 (m = 2); user 0 in both, user 1 in task 0; d = 2, labels."""
        f = dict(
            values=np.array([[0.6, 0.0], [0.0, 0.5], [0.3, 0.4]]),
            user_ids=np.array([0, 0, 1]),
            labels=np.array([0.5, -0.2, 0.4]),
            task_ids=np.array([0, 1, 0]),
        )
        f.update(kw)
        return UserDataset(**f)

    def DATASET_MT(labels=True):
        """Multi-task datasets: task ids present, in [0, m) (m = 2), no repeated (task, user) pair."""
        bad = DATASET() + [_Dk(task_ids=None), _Dk(task_ids=np.array([0, 1, 2])), _Dk(task_ids=np.array([0, 0, 0]))]
        return bad + ([_Dk(labels=None)] if labels else [])

    MT_ALIAS = {
        "dataset": DS_ALIAS + ("task_ids", "m"),
        "train": DS_ALIAS + ("task_ids", "m"),
        "test": DS_ALIAS + ("task_ids", "m"),
    }
    W3 = lambda: np.array([0.5, 0.5, 0.5])  # noqa: E731
    BAD_W = ARRAY() + [[0.5, 0.5], [-0.1, 0.5, 0.5], [nan, 0.5, 0.5], [[0.5, 0.5, 0.5]]]
    BAD_COUNTS = [None, "ab", [2.0, 0.0], [2.0], [2.0, nan], [2.0, inf], [[2.0, 1.0]], [2.0, -1.0]]
    BAD_OMEGA = ARRAY() + [[0.5], [-0.5, 1.0], [nan, 1.0], [[0.5, 1.0]]]
    M_BAD = INT(1)
    KW_MU = [-0.5, nan, inf, 11.0, "1", None, True]
    CNT = dict(m=2, n_counts=[2.0, 1.0], n_users=2)

    entry(
        "krichene2023_weights.graph",
        Kw.graph,
        lambda: dict(dataset=_Dk(), m=2),
        dataset=DATASET_MT(False),
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.check_counts",
        Kw.check_counts,
        lambda: dict(n_counts=[2.0, 1.0], m=2, name="n_counts"),
        n_counts=BAD_COUNTS,
        m=M_BAD + [3],
    )
    entry(
        "krichene2023_weights.omega_mu",
        Kw.omega_mu,
        lambda: dict(n_counts=[2.0, 1.0], n_users=2, beta_bar=1.0, mu=0.5),
        n_counts=BAD_COUNTS[:2] + BAD_COUNTS[2:3] + BAD_COUNTS[4:],
        n_users=INT(1),
        beta_bar=POS(),
        mu=KW_MU,
        ok={"mu": [0, 0.0, 1.0]},
    )
    entry(
        "krichene2023_weights.omega_star",
        Kw.omega_star,
        lambda: dict(n_counts=[2.0, 1.0], n_users=2, beta_bar=1.0, gamma=1),
        n_counts=[None, [2.0, 0.0], [nan]],
        n_users=INT(1),
        beta_bar=POS(),
        gamma=[2, -1, 0.5, None, "1", True],
        ok={"gamma": [0]},
    )
    entry(
        "krichene2023_weights.uniform_omega",
        Kw.uniform_omega,
        lambda: dict(n_counts=[2.0, 1.0], n_users=2, beta_bar=1.0),
        n_counts=[None, [2.0, 0.0], [nan]],
        n_users=INT(1),
        beta_bar=POS(),
    )
    entry(
        "krichene2023_weights.user_budgets",
        Kw.user_budgets,
        lambda: dict(dataset=_Dk(), w=W3(), m=2),
        dataset=DATASET_MT(False),
        w=ARRAY() + [[0.5, 0.5], [nan, 0.5, 0.5]],
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.clip_weights",
        Kw.clip_weights,
        lambda: dict(dataset=_Dk(), omega=[0.5, 1.0], beta=1.0, m=2),
        dataset=DATASET_MT(False),
        omega=BAD_OMEGA,
        beta=POS(),
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.per_user_weights",
        Kw.per_user_weights,
        lambda: dict(dataset=_Dk(), omega=[0.5, 1.0], beta=1.0, m=2),
        dataset=DATASET_MT(False),
        omega=BAD_OMEGA + [[0.0, 1.0]],
        beta=POS(),
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.adaptive_weights",
        Kw.adaptive_weights,
        lambda: dict(dataset=_Dk(), beta=1.0, mu=0.5, beta_bar=None, normalise="clip", **CNT),
        dataset=DATASET_MT(False),
        beta=POS(),
        mu=KW_MU,
        n_counts=BAD_COUNTS,
        n_users=INT(1),
        m=M_BAD + [1],
        beta_bar=[0.0, -1.0, nan, inf, "1", True],
        normalise=["none", None, 1],
        alias=MT_ALIAS,
        ok={"normalise": ["per-user"], "beta_bar": [2.0]},
    )
    entry(
        "krichene2023_weights.uniform_sample_weights",
        Kw.uniform_sample_weights,
        lambda: dict(dataset=_Dk(), rng=rng(), m=2, k=1, beta=1.0),
        dataset=DATASET_MT(False),
        rng=RNG(),
        m=M_BAD + [1],
        k=INT(1),
        beta=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.tail_sample_weights",
        Kw.tail_sample_weights,
        lambda: dict(dataset=_Dk(), noisy_counts=[3.0, 1.0], m=2, k=1, beta=1.0),
        dataset=DATASET_MT(False),
        noisy_counts=ARRAY() + [[1.0], [nan, 1.0]],
        m=M_BAD + [1],
        k=INT(1),
        beta=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.private_counts",
        Kw.private_counts,
        lambda: dict(dataset=_Dk(), rng=rng(), m=2, k=1, sigma=1.0),
        dataset=DATASET_MT(False),
        rng=RNG(),
        m=M_BAD + [1],
        k=INT(1),
        sigma=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_weights.count_rdp",
        Kw.count_rdp,
        lambda: dict(orders=[2.0, 8.0], k=2, sigma=1.0),
        orders=[[1.0], [], None, [nan]],
        k=INT(1),
        sigma=POS(),
        alias={"orders": ("orders", "alpha")},
    )
    entry(
        "krichene2023_weights.accuracy_margin",
        Kw.accuracy_margin,
        lambda: dict(sigma=1.0, m=2, failure=0.05),
        sigma=POS(),
        m=M_BAD,
        failure=[0.0, 1.0, -0.1, nan, "x", None, True],
    )
    entry(
        "krichene2023_weights.estimated_omega",
        Kw.estimated_omega,
        lambda: dict(noisy_counts=[2.5, -0.3], s=1.0, n_users=2, beta_bar=1.0, mu=0.5),
        noisy_counts=[None, "ab", [nan, 1.0], [[1.0]]],
        s=NONNEG(),
        n_users=INT(1),
        beta_bar=POS(),
        mu=KW_MU,
        ok={"s": [0.0]},
    )
    entry(
        "krichene2023_weights.improvement_ratios",
        Kw.improvement_ratios,
        lambda: dict(n_counts=[2.0, 1.0]),
        n_counts=[None, "ab", [2.0, 0.0], [nan], [[1.0, 2.0]]],
    )
    entry(
        "krichene2023_weights.rdp",
        Kw.rdp,
        lambda: dict(orders=[2.0, 8.0], beta=0.5, runs=1),
        orders=[[1.0], [], None, [nan]],
        beta=POS(),
        runs=INT(1),
        alias={"orders": ("orders", "alpha")},
    )
    _CK = dict(count_k=None, count_sigma=None, count_releases=1)
    entry(
        "krichene2023_weights.total_rdp",
        Kw.total_rdp,
        lambda: dict(orders=[2.0, 8.0], beta=0.5, runs=1, count_k=2, count_sigma=3.0, count_releases=1),
        orders=[[1.0], None],
        beta=POS(),
        runs=INT(1),
        count_k=[0, 1.5, True, "2"],
        count_sigma=[0.0, nan, "1", True],
        count_releases=INT(1),
        alias={"orders": ("orders", "alpha"), "count_k": ("count_k", "k"), "count_sigma": ("count_sigma", "sigma")},
    )
    entry(
        "krichene2023_weights.epsilon",
        Kw.epsilon,
        lambda: dict(beta=0.5, delta=1e-5, runs=1, **_CK),
        beta=POS(),
        delta=DELTA_POS(),
        runs=INT(1),
        count_releases=INT(1) + [],
    )
    entry(
        "krichene2023_weights.beta_for_epsilon",
        Kw.beta_for_epsilon,
        lambda: dict(target_epsilon=1.0, delta=1e-5, runs=1, rtol=1e-6, **_CK),
        target_epsilon=EPS(),
        delta=DELTA_POS(),
        runs=INT(1),
        rtol=POS() + [0.5],
    )
    entry(
        "krichene2023_weights.gdp_mu",
        Kw.gdp_mu,
        lambda: dict(beta=0.5, runs=1, count_k=2, count_sigma=3.0, count_releases=1),
        beta=POS(),
        runs=INT(1),
        count_k=[0, 1.5, True, "2"],
        count_sigma=[0.0, nan, "1", True],
        count_releases=INT(1),
    )
    entry("krichene2023_weights.claim", Kw.claim, lambda: dict(beta=0.5, delta=1e-5), beta=POS(), delta=DELTA_POS())

    GX = dict(Gamma_x=1.0, Gamma_star=1.0)
    entry(
        "krichene2023.check_data",
        Kr.check_data,
        lambda: dict(dataset=_Dk(), m=2),
        dataset=DATASET_MT(),
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023.budget",
        Kr.budget,
        lambda: dict(dataset=_Dk(), w=W3(), m=2),
        dataset=DATASET_MT(),
        w=BAD_W,
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023.clip_data",
        Kr.clip_data,
        lambda: dict(x=[[3.0, 4.0]], y=[5.0], **GX),
        x=ARRAY() + finite_bad([[3.0, 4.0]]) + [[1.0, 2.0]],
        y=ARRAY()[:3] + [[nan], [[1.0]]],
        Gamma_x=POS(),
        Gamma_star=POS(),
    )
    entry(
        "krichene2023.statistic",
        Kr.statistic,
        lambda: dict(dataset=_Dk(), w=W3(), m=2, **GX),
        dataset=DATASET_MT(),
        w=BAD_W,
        m=M_BAD + [1],
        Gamma_x=POS(),
        Gamma_star=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023.sensitivity",
        Kr.sensitivity,
        lambda: dict(beta=0.5, **GX),
        beta=POS(),
        Gamma_x=POS(),
        Gamma_star=POS(),
    )
    entry("krichene2023.noise_scale", Kr.noise_scale, lambda: dict(**GX), Gamma_x=POS(), Gamma_star=POS())
    entry(
        "krichene2023.symmetric_noise",
        Kr.symmetric_noise,
        lambda: dict(rng=rng(), shape=(2,), d=3),
        rng=RNG(),
        d=INT(1),
        shape=[(-1,), "x", (1.5,), None, (0,)],
    )
    entry(
        "krichene2023.ssp_release",
        Kr.ssp_release,
        lambda: dict(dataset=_Dk(), w=W3(), rng=rng(), size=None, m=2, **GX),
        dataset=DATASET_MT(),
        w=BAD_W,
        rng=RNG(),
        size=SIZE(),
        m=M_BAD + [1],
        Gamma_x=POS(),
        Gamma_star=POS(),
        alias=MT_ALIAS,
        ok={"size": [1, 3]},
    )
    _A = lambda: np.eye(2)[None] * 2.0  # noqa: E731
    entry(
        "krichene2023.solve",
        Kr.solve,
        lambda: dict(A_hat=_A(), b_hat=np.ones((1, 2)), Lambda=1.0),
        A_hat=ARRAY() + [np.eye(2), np.ones((1, 2, 3)), np.full((1, 2, 2), nan)],
        b_hat=ARRAY() + [np.ones((1, 3)), np.full((1, 2), inf)],
        Lambda=[-1.0, nan, inf, "1", None, [1.0, 2.0], [[1.0]]],
        alias={"b_hat": ("b_hat", "A_hat")},
        ok={"Lambda": [0.0, [0.5]]},
    )
    entry(
        "krichene2023.ssp_mechanism",
        Kr.ssp_mechanism,
        lambda: dict(dataset=_Dk(), w=W3(), rng=rng(), size=None, m=2, Lambda=1.0, **GX),
        dataset=DATASET_MT(),
        w=BAD_W,
        rng=RNG(),
        size=SIZE(),
        m=M_BAD + [1],
        Gamma_x=POS(),
        Gamma_star=POS(),
        Lambda=[-1.0, nan, inf, "1", None],
        alias=MT_ALIAS,
        ok={"size": [2], "Lambda": [0.0, [1.0, 2.0]]},
    )
    entry("krichene2023.gd_noise_scale", Kr.gd_noise_scale, lambda: dict(Gamma=1.0, T=4), Gamma=POS(), T=INT(1))
    entry(
        "krichene2023.weighted_gradient",
        Kr.weighted_gradient,
        lambda: dict(dataset=_Dk(), w=W3(), theta=np.zeros((2, 2)), m=2, Gamma=1.0, Lambda=0.1),
        dataset=DATASET_MT(),
        w=BAD_W,
        theta=ARRAY() + [np.zeros((3, 2)), np.full((2, 2), nan), np.zeros(2)],
        m=M_BAD + [1],
        Gamma=POS(),
        Lambda=NONNEG(),
        alias=MT_ALIAS,
        ok={"Lambda": [0.0]},
    )
    entry(
        "krichene2023.theorem312_schedule",
        Kr.theorem312_schedule,
        lambda: dict(n_counts=[2.0, 1.0], omega=[0.5, 1.0], d=2, case="a", Gamma=1.0, radius=1.0, Lambda=None, T=None),
        n_counts=BAD_COUNTS,
        omega=BAD_OMEGA + [[0.0, 1.0]],
        d=INT(1),
        case=["c", None, 1],
        Gamma=POS(),
        radius=POS(),
        T=[0, -1, 1.5, True, "2"],
        ok={"T": [3]},
    )
    entry(
        "krichene2023.gd_mechanism",
        Kr.gd_mechanism,
        lambda: dict(
            dataset=_Dk(),
            w=W3(),
            rng=rng(),
            size=None,
            m=2,
            Gamma=1.0,
            Lambda=0.1,
            eta=np.full((2, 2), 0.1),
            radius=1.0,
            theta0=None,
        ),
        dataset=DATASET_MT(),
        w=BAD_W,
        rng=RNG(),
        size=SIZE(),
        m=M_BAD + [1],
        Gamma=POS(),
        Lambda=NONNEG(),
        eta=ARRAY() + [np.full((2, 3), 0.1), np.full((2, 2), -0.1), np.full(2, 0.1), np.full((2, 2), nan)],
        radius=POS(),
        theta0=ARRAY()[1:] + [np.zeros((3, 2)), np.full((2, 2), nan)],
        alias=MT_ALIAS,
        ok={"size": [2], "theta0": [np.zeros((2, 2))]},
    )

    entry(
        "krichene2023_dpals.power_law_graph",
        Kd.power_law_graph,
        lambda: dict(rng=rng(), m=5, n_users=10, a=1.0, tasks_per_user=2),
        rng=RNG(),
        m=INT(1, hi=10**5),
        n_users=INT(1, hi=10**7),
        a=POS(),
        tasks_per_user=POS(),
    )
    entry(
        "krichene2023_dpals.appendix_c_problem",
        Kd.appendix_c_problem,
        lambda: dict(rng=rng(), m=5, n_users=10, d=2, a=1.0, tasks_per_user=2, sigma_F=1e-3),
        rng=RNG(),
        m=INT(1, hi=10**5),
        n_users=INT(1, hi=10**7),
        d=INT(1, hi=10**4),
        a=POS(),
        tasks_per_user=POS(),
        sigma_F=NONNEG(),
        ok={"sigma_F": [0.0]},
    )
    entry(
        "krichene2023_dpals.low_rank_problem",
        Kd.low_rank_problem,
        lambda: dict(rng=rng(), m=5, n_users=10, rank=2, a=1.0, tasks_per_user=2, noise=0.1),
        rng=RNG(),
        m=INT(1, hi=10**5),
        n_users=INT(1, hi=10**7),
        rank=INT(1, hi=10**4),
        a=POS(),
        tasks_per_user=POS(),
        noise=NONNEG(),
    )
    entry(
        "krichene2023_dpals.split",
        Kd.split,
        lambda: dict(dataset=_Dk(), rng=rng(), test_fraction=0.2),
        dataset=DATASET(),
        rng=RNG(),
        test_fraction=[0.0, 1.0, -0.5, nan, "x", None],
    )
    entry(
        "krichene2023_dpals.task_rmse",
        Kd.task_rmse,
        lambda: dict(theta=np.zeros((2, 2)), dataset=_Dk(), m=2),
        theta=ARRAY() + [np.zeros((3, 2)), np.full((2, 2), nan)],
        dataset=DATASET_MT(),
        m=M_BAD + [1],
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_dpals.user_embeddings",
        Kd.user_embeddings,
        lambda: dict(dataset=_Dk(), U=np.ones((2, 2)), m=2, Lambda=1.0),
        dataset=DATASET_MT(),
        U=ARRAY() + [np.ones((3, 2)), np.full((2, 2), nan)],
        m=M_BAD + [1],
        Lambda=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_dpals.dpals",
        Kd.dpals,
        lambda: dict(train=_Dk(), w=W3(), rng=rng(), m=2, rank=2, steps=1, Lambda=1.0, item_Lambda=None, **GX),
        train=DATASET_MT(),
        w=BAD_W,
        rng=RNG(),
        m=M_BAD + [1],
        rank=INT(1, hi=1000),
        steps=INT(1, hi=1000),
        Gamma_x=POS(),
        Gamma_star=POS(),
        Lambda=POS(),
        item_Lambda=[-1.0, nan, "1"],
        alias=MT_ALIAS,
        ok={"item_Lambda": [0.0]},
    )
    entry(
        "krichene2023_dpals.factor_rmse",
        Kd.factor_rmse,
        lambda: dict(U=np.ones((2, 2)), train=_Dk(), test=_Dk(), m=2, Lambda=1.0),
        U=ARRAY() + [np.ones((3, 2))],
        train=DATASET_MT(),
        test=DATASET_MT(),
        m=M_BAD + [1],
        Lambda=POS(),
        alias=MT_ALIAS,
    )
    entry(
        "krichene2023_dpals.bucket_rmse",
        Kd.bucket_rmse,
        lambda: dict(sq_err=np.ones(3), test=_Dk(), n_counts=[2.0, 1.0], m=2, buckets=2),
        sq_err=ARRAY() + [np.ones(2), [nan, 1.0, 1.0], [-1.0, 1.0, 1.0]],
        test=DATASET_MT(),
        n_counts=BAD_COUNTS,
        m=M_BAD + [1],
        buckets=INT(1, hi=2),
        alias=MT_ALIAS,
    )
