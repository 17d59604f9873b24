"""The bad-input rows of Epasto et al. 2020 (``userdp.reference.epasto2020*``), in the format of
``tests/bad_values.py``; ``tests/bad_input_table.py`` collects them into its ``TABLE`` and
``tests/test_bad_input.py`` runs them."""

from __future__ import annotations

import numpy as np

from bad_values import (  # tests/ is on sys.path (rootdir conftest)
    DATASET,
    DELTA_POS,
    DS_ALIAS,
    EPS,
    ERM_BAD_DS,
    Entry,
    INT,
    LOSS,
    NONNEG,
    POS,
    RNG,
    SIZE,
    THETA,
    _X,
    _vec,
    _y,
    entry_adder,
    erm_ds,
    finite_bad,
    inf,
    nan,
    rng,
    scalar_ds,
    with_labels,
    with_values,
)
from userdp.audits.engine import bounds as Bd
from userdp.reference import claims as Cl
from userdp.reference import epasto2020 as E
from userdp.reference import epasto2020_erm as EE
from userdp.reference import epasto2020_gwa as G
from userdp.reference.data import UserDataset

__all__ = ["ROWS"]

ROWS: list[Entry] = []
entry = entry_adder(ROWS)


# --------------------------------------------------------------------------- tiny data
def gwa_ds():
    """Full-rank X (n = 8, d = 2), labels in [0, 1]; users of sizes 3, 2, 1, 1, 1."""
    X = np.array([[1.0, 0.2], [0.8, -0.5], [0.1, 1.0], [-0.3, 0.9], [1.0, 1.0], [0.5, -1.0], [-1.0, 0.3], [0.2, 0.4]])
    return UserDataset(X, np.array([0, 0, 0, 1, 1, 2, 3, 4]), labels=np.linspace(0.1, 0.9, 8))


def c_uniform(D):
    return np.full(D.n, 1.0 / D.n)


def ols(D):
    return G.ols_C(G.features(D))


def sl_T(D, h=1):
    return G.sample_limit_selection(D, h, rng())


# ============================================================================= epasto2020
_Dw = scalar_ds
_above = lambda: with_values(_Dw(), 0, 1.5)  # y outside [0, B = 1]  # noqa: E731
_below = lambda: with_values(_Dw(), 0, -0.1)  # noqa: E731
WA_BAD_DS = DATASET() + [_above(), _below(), _vec()]
C_BAD = [[0.25] * 3, [0.5, 0.5, 0.5, -0.5], [0.3, 0.3, 0.3, 0.3], [nan, 0.5, 0.25, 0.25], ["a"] * 4, None, [[0.25] * 4]]
COUNTS = np.array([2, 1, 1])
COUNTS_BAD = [
    np.array([2, 0, 1]),
    np.array([], dtype=int),
    np.array([2.0, 1.0]),
    np.array([10**12]),
    [[2, 1]],
    "abc",
    None,
    np.array([2**40, 1]),
]
entry("epasto2020.claim", E.claim, lambda: dict(epsilon=1.0), epsilon=EPS())
entry(
    "epasto2020.user_weights",
    E.user_weights,
    lambda: dict(dataset=_Dw(), c=c_uniform(_Dw())),
    dataset=DATASET(),
    c=C_BAD,
)
entry(
    "epasto2020.wa_statistic",
    E.wa_statistic,
    lambda: dict(dataset=_Dw(), c=c_uniform(_Dw()), B=1.0),
    dataset=WA_BAD_DS,
    c=C_BAD,
    B=POS(),
    alias={"B": ("B", "dataset.values")},
)
entry(
    "epasto2020.wa_sensitivity",
    E.wa_sensitivity,
    lambda: dict(dataset=_Dw(), c=c_uniform(_Dw()), B=1.0),
    dataset=DATASET(),
    c=C_BAD,
    B=POS(),
)
entry(
    "epasto2020.wa_noise_scale",
    E.wa_noise_scale,
    lambda: dict(dataset=_Dw(), c=c_uniform(_Dw()), B=1.0, epsilon=1.0),
    dataset=DATASET(),
    c=C_BAD,
    B=POS(),
    epsilon=EPS(),
)
entry(
    "epasto2020.wa_mechanism",
    E.wa_mechanism,
    lambda: dict(dataset=_Dw(), rng=rng(), size=None, c=c_uniform(_Dw()), B=1.0, epsilon=1.0),
    dataset=WA_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    c=C_BAD,
    B=POS(),
    epsilon=EPS(),
    alias={"B": ("B", "dataset.values")},
)
entry(
    "epasto2020.wa_variance",
    E.wa_variance,
    lambda: dict(dataset=_Dw(), c=c_uniform(_Dw()), sigma=0.5, B=1.0, epsilon=1.0),
    dataset=DATASET(),
    c=C_BAD,
    sigma=NONNEG(),
    B=POS(),
    epsilon=EPS(),
    ok={"sigma": [0.0, None]},
)
entry("epasto2020.n_h", E.n_h, lambda: dict(counts=COUNTS, h=1.5), counts=COUNTS_BAD, h=POS())
entry(
    "epasto2020.lemma3_weights",
    E.lemma3_weights,
    lambda: dict(dataset_or_counts=COUNTS, h=1.5),
    dataset_or_counts=COUNTS_BAD,
    h=[0.5, 3.0, nan, inf, "1", None, True],
    ok={"dataset_or_counts": [_Dw()]},
    alias={"dataset_or_counts": ("counts",)},
)
_PUB = dict(sigma=0.5, B=1.0, epsilon=1.0)
_PUBB = dict(sigma=NONNEG(), B=POS(), epsilon=EPS())
entry(
    "epasto2020.v",
    E.v,
    lambda: dict(counts=COUNTS, h=[1.0, 2.0], **_PUB),
    counts=COUNTS_BAD,
    h=[[nan], [0.0], [-1.0], ["a"], None, [1e60]],
    **_PUBB,
    ok={"sigma": [0.0, None]},
)
entry(
    "epasto2020.optimal_h",
    E.optimal_h,
    lambda: dict(counts=COUNTS, **_PUB),
    counts=COUNTS_BAD,
    **_PUBB,
    ok={"sigma": [0.0, None]},
)
entry(
    "epasto2020.optimal_weights",
    E.optimal_weights,
    lambda: dict(dataset_or_counts=COUNTS, epsilon=1.0, B=1.0, sigma=None),
    dataset_or_counts=COUNTS_BAD,
    epsilon=EPS(),
    B=POS(),
    sigma=NONNEG(),
    ok={"sigma": [0.0]},
    alias={"dataset_or_counts": ("counts",)},
)
entry(
    "epasto2020.optimal_wa_mechanism",
    E.optimal_wa_mechanism,
    lambda: dict(dataset=_Dw(), rng=rng(), size=None, epsilon=1.0, B=1.0, sigma=None),
    dataset=WA_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    epsilon=EPS(),
    B=POS(),
    sigma=NONNEG(),
    alias={"B": ("B", "dataset.values")},
)
entry(
    "epasto2020.sample_limiting_weights",
    E.sample_limiting_weights,
    lambda: dict(dataset_or_counts=COUNTS, h=1),
    dataset_or_counts=COUNTS_BAD,
    h=[0, 3, 1.5, 2.0, np.float64(1.0), nan, "1", None, True],  # §3.2: h is an integer (an int)
    alias={"dataset_or_counts": ("counts",)},
)
entry(
    "epasto2020.v_prime",
    E.v_prime,
    lambda: dict(counts=COUNTS, h=[1.0, 2.0], **_PUB),
    counts=COUNTS_BAD,
    h=[[nan], [0.0], ["a"], None],
    **_PUBB,
)
entry("epasto2020.best_integer_h", E.best_integer_h, lambda: dict(counts=COUNTS, **_PUB), counts=COUNTS_BAD, **_PUBB)
entry(
    "epasto2020.sample_limiting_mechanism",
    E.sample_limiting_mechanism,
    lambda: dict(dataset=_Dw(), rng=rng(), size=None, h=1, B=1.0, epsilon=1.0),
    dataset=WA_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    h=[0, 3, 1.5, 2.0, "1", None, True],
    B=POS(),
    epsilon=EPS(),
    alias={"B": ("B", "dataset.values")},
)
entry(
    "epasto2020.best_sample_limiting_mechanism",
    E.best_sample_limiting_mechanism,
    lambda: dict(dataset=_Dw(), rng=rng(), size=None, epsilon=1.0, B=1.0, sigma=None),
    dataset=WA_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    epsilon=EPS(),
    B=POS(),
    sigma=NONNEG(),
    alias={"B": ("B", "dataset.values")},
)
entry("epasto2020.theorem2_instance", E.theorem2_instance, lambda: dict(g=3), g=INT(1, hi=312))
entry("epasto2020.variance_ratio", E.variance_ratio, lambda: dict(counts=COUNTS, **_PUB), counts=COUNTS_BAD, **_PUBB)

# ========================================================================= epasto2020_erm
_ce = lambda: c_uniform(erm_ds())  # noqa: E731
C5_BAD = [[0.25] * 4, [0.4, 0.4, 0.4, -0.2, 0.0], [0.4] * 5, [nan, 0.25, 0.25, 0.25, 0.25], ["a"] * 5, None]
EP = dict(loss="logistic", R=1.0, Y=1.0)
EPB = dict(loss=LOSS, R=POS(), Y=POS())
entry("epasto2020_erm.claim", EE.claim, lambda: dict(epsilon=1.0, delta=1e-5), epsilon=EPS(), delta=DELTA_POS())
entry("epasto2020_erm.weights", EE.weights, lambda: dict(dataset=erm_ds(), c=_ce()), dataset=DATASET(), c=C5_BAD)
entry(
    "epasto2020_erm.user_weight_sums",
    EE.user_weight_sums,
    lambda: dict(dataset=erm_ds(), c=_ce()),
    dataset=DATASET(),
    c=C5_BAD,
)
for _n in ("user_losses", "user_gradients", "statistic"):
    entry(
        f"epasto2020_erm.{_n}",
        getattr(EE, _n),
        lambda: dict(dataset=erm_ds(), theta=[0.1, 0.2], c=_ce(), **EP),
        dataset=ERM_BAD_DS,
        theta=THETA,
        c=C5_BAD,
        **EPB,
        alias={"R": ("R", "||x_")},
    )
entry(
    "epasto2020_erm.lipschitz",
    EE.lipschitz,
    lambda: dict(loss="ridge", R=1.0, Y=1.0, radius=1.0),
    loss=LOSS,
    R=POS(),
    Y=POS(),
    radius=POS(),
)
entry(
    "epasto2020_erm.sensitivity",
    EE.sensitivity,
    lambda: dict(dataset=erm_ds(), c=_ce(), radius=1.0, **EP),
    dataset=DATASET(),
    c=C5_BAD,
    radius=POS(),
    **EPB,
)
entry(
    "epasto2020_erm.epsilon_spent",
    EE.epsilon_spent,
    lambda: dict(noise_multiplier=2.0, T=4, delta=1e-5),
    noise_multiplier=POS(),
    T=INT(1, hi=10**6),
    delta=DELTA_POS(),
)
_EN = dict(epsilon=1.0, delta=1e-5, T=4, radius=1.0, **EP)
_ENB = dict(epsilon=EPS(), delta=DELTA_POS(), T=INT(1, hi=10**6), radius=POS(), **EPB)
entry(
    "epasto2020_erm.noise_scale",
    EE.noise_scale,
    lambda: dict(dataset=erm_ds(), c=_ce(), **_EN),
    dataset=DATASET(),
    c=C5_BAD,
    **_ENB,
)
entry(
    "epasto2020_erm.step_size",
    EE.step_size,
    lambda: dict(sigma=1.0, d=2, T=4, radius=1.0, **EP),
    sigma=POS(),
    d=INT(1),
    T=INT(1, hi=10**6),
    radius=POS(),
    **EPB,
)
entry(
    "epasto2020_erm.mechanism",
    EE.mechanism,
    lambda: dict(dataset=erm_ds(), rng=rng(), size=None, c=_ce(), **_EN),
    dataset=ERM_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    c=C5_BAD,
    **_ENB,
    alias={"R": ("R", "||x_")},
)
entry(
    "epasto2020_erm.noisy_gradient_descent",
    lambda **kw: EE.noisy_gradient_descent(**kw),
    lambda: dict(X=_X, y=_y, c=np.full(5, 0.2), rng=rng(), size=None, sigma=1.0, T=4),
    sigma=[0.0, 5e-324, -1.0, nan],
    X=[np.array([[3.0, 0.0]] * 5)],
    y=[np.full(5, 0.5)],
    c=[np.full(5, 0.4), np.r_[-0.2, np.full(4, 0.3)]],
    rng=RNG(),
    legacy=True,
    alias={"X": ("X", "||x"), "y": ("y", "labels"), "c": ("c",)},
)

# ========================================================================= epasto2020_gwa
_Dg = gwa_ds
_ylab = lambda: with_labels(_Dg(), 0, 1.5)  # a label above B = 1  # noqa: E731
_nolabg = lambda: _Dg().with_fields(labels=None)  # noqa: E731
_rankdef = lambda: _Dg().with_fields(values=np.tile([1.0, 1.0], (8, 1)))  # noqa: E731
GWA_BAD_DS = DATASET() + [_ylab(), _nolabg()]
C_GWA_BAD = lambda: [ols(_Dg())[:, :5], ols(_Dg()) * 2, finite_bad(ols(_Dg()))[0], None, "C", ols(_Dg()).ravel()]  # noqa: E731
entry("epasto2020_gwa.claim", G.claim, lambda: dict(epsilon=1.0), epsilon=EPS())
entry("epasto2020_gwa.features", G.features, lambda: dict(dataset=_Dg()), dataset=DATASET())
entry(
    "epasto2020_gwa.check_labels",
    G.check_labels,
    lambda: dict(dataset=_Dg(), B=1.0),
    dataset=GWA_BAD_DS,
    B=POS() + [0.5],
    alias={"B": ("B", "labels")},
)
entry(
    "epasto2020_gwa.check_C",
    G.check_C,
    lambda: dict(C=ols(_Dg()), dataset=_Dg(), atol=1e-8),
    C=C_GWA_BAD(),
    dataset=DATASET(),
    atol=POS(),
)
entry(
    "epasto2020_gwa.user_l1",
    G.user_l1,
    lambda: dict(dataset=_Dg(), C=ols(_Dg())),
    dataset=DATASET(),
    C=[ols(_Dg())[:, :5], None, "C", finite_bad(ols(_Dg()))[0]],
)
for _n in ("sensitivity", "statistic"):
    entry(
        f"epasto2020_gwa.{_n}",
        getattr(G, _n),
        lambda: dict(dataset=_Dg(), C=ols(_Dg()), B=1.0),
        dataset=DATASET() + ([_ylab(), _nolabg()] if _n == "statistic" else []),
        C=[ols(_Dg())[:, :5], None, finite_bad(ols(_Dg()))[0]] + ([ols(_Dg()) * 2] if _n == "statistic" else []),
        B=POS(),
        alias={"B": ("B", "labels")},
    )
entry(
    "epasto2020_gwa.noise_scale",
    G.noise_scale,
    lambda: dict(dataset=_Dg(), C=ols(_Dg()), B=1.0, epsilon=1.0),
    dataset=DATASET(),
    C=[None, ols(_Dg())[:, :5]],
    B=POS(),
    epsilon=EPS(),
)
entry(
    "epasto2020_gwa.mechanism",
    G.mechanism,
    lambda: dict(dataset=_Dg(), C=ols(_Dg()), B=1.0, epsilon=1.0, rng=rng(), size=None),
    dataset=GWA_BAD_DS,
    C=C_GWA_BAD(),
    B=POS(),
    epsilon=EPS(),
    rng=RNG(),
    size=SIZE(),
    alias={"B": ("B", "labels")},
)
entry(
    "epasto2020_gwa.total_variance",
    G.total_variance,
    lambda: dict(dataset=_Dg(), C=ols(_Dg()), B=1.0, epsilon=1.0, sigma=0.5),
    dataset=DATASET(),
    C=C_GWA_BAD(),
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    ok={"sigma": [0.0]},
)
entry(
    "epasto2020_gwa.ols_C",
    G.ols_C,
    lambda: dict(X=_Dg().values),
    X=[None, np.ones((8, 2)), np.zeros((1, 2)), np.zeros((3, 0)), finite_bad(_Dg().values)[0], [1.0, 2.0], "X"],
)
entry(
    "epasto2020_gwa.dual_bound",
    G.dual_bound,
    lambda: dict(dataset=_Dg(), B=1.0, epsilon=1.0, sigma=0.5, Lambda=np.eye(2), mu=np.zeros(5)),
    dataset=DATASET(),
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    Lambda=[None, np.eye(3), [[nan, 0], [0, 1]], "L"],
    mu=[None, np.zeros(4), -np.ones(5), np.full(5, nan), "mu"],
    ok={"sigma": [0.0]},
)
_OC = dict(B=1.0, epsilon=1.0, sigma=0.5)
entry(
    "epasto2020_gwa.optimal_C",
    G.optimal_C,
    lambda: dict(dataset=_Dg(), rtol=1e-6, max_iter=500, **_OC),
    dataset=DATASET() + [_rankdef()],
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    rtol=POS() + [0.5, 1e-14],
    max_iter=INT(1, hi=10**5),
    ok={"sigma": [0.0]},
    alias={"dataset": DS_ALIAS + ("X",)},
)
entry(
    "epasto2020_gwa.optimal_C_all_records",
    G.optimal_C_all_records,
    lambda: dict(dataset=_Dg(), rtol=1e-6, max_iter=500, **_OC),
    dataset=DATASET() + [_rankdef()],
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    rtol=POS() + [0.5, 1e-14],
    max_iter=INT(1, hi=10**5),
    ok={"sigma": [0.0]},
    alias={"dataset": DS_ALIAS + ("X",)},
)
entry(
    "epasto2020_gwa.weights",
    G.weights,
    lambda: dict(dataset=_Dg(), **_OC),
    dataset=DATASET() + [_rankdef()],
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    alias={"dataset": DS_ALIAS + ("X",)},
)
H_BAD = [0, 4, 1.0, "1", None, True, 2**63]
entry(
    "epasto2020_gwa.sample_limit_selection",
    G.sample_limit_selection,
    lambda: dict(dataset=_Dg(), h=1, rng=rng()),
    dataset=DATASET(),
    h=H_BAD,
    rng=RNG(),
)
T_BAD = lambda: [  # noqa: E731
    [0.0, 3.0, 5.0, 6.0, 7.0],
    [0, 3, 5, 6, 99],
    [0, 0, 5, 6, 7],
    [0, 1, 3, 5, 6, 7],
    [0, 3, 5, 6],  # noqa: E731
    [-1, 3, 5, 6, 7],
    None,
    "T",
    [[0, 3, 5, 6, 7]],
]
entry(
    "epasto2020_gwa.sample_limited_C",
    G.sample_limited_C,
    lambda: dict(dataset=_Dg(), h=1, T=[0, 3, 5, 6, 7]),
    dataset=DATASET(),
    h=H_BAD,
    T=T_BAD(),
)
entry(
    "epasto2020_gwa.best_sample_limit_h",
    G.best_sample_limit_h,
    lambda: dict(dataset=_Dg(), rng=rng(), **_OC),
    dataset=DATASET(),
    B=POS(),
    epsilon=EPS(),
    sigma=NONNEG() + [None],
    rng=RNG(),
    ok={"sigma": [0.0]},
)
entry(
    "epasto2020_gwa.best_sample_limit_hs",
    G.best_sample_limit_hs,
    lambda: dict(dataset=_Dg(), B=1.0, epsilons=[1.0, 2.0], sigma=0.5, rng=rng()),
    dataset=DATASET(),
    B=POS(),
    sigma=NONNEG() + [None],
    epsilons=[[], [0.0], [1.0, nan], [51.0], "1", None, 1.0, {1.0, 2.0}, [[1.0, 2.0]]],  # a set: no order
    rng=RNG(),
)
entry(
    "epasto2020_gwa.sample_limited_ols_mechanism",
    G.sample_limited_ols_mechanism,
    lambda: dict(dataset=_Dg(), h=1, B=1.0, epsilon=1.0, rng=rng(), size=None, T=None),
    dataset=GWA_BAD_DS,
    h=H_BAD,
    B=POS(),
    epsilon=EPS(),
    rng=RNG(),
    size=SIZE() + [3],
    T=[t for t in T_BAD() if t is not None],
    ok={"size": [1]},
    alias={"B": ("B", "labels"), "size": ("size",)},
)
entry(
    "epasto2020_gwa.worst_case_pairs",
    G.worst_case_pairs,
    lambda: dict(dataset=_Dg(), C=ols(_Dg()), B=1.0, max_brute=14),
    dataset=DATASET(),
    C=[None, ols(_Dg())[:, :5], finite_bad(ols(_Dg()))[0]],
    B=POS(),
    max_brute=INT(0, hi=20),
)

# ========================================================== Gaussian DP
# (guarded: the probe imports this table on checkouts that predate Gaussian DP)
if hasattr(Cl, "GaussianDP") and hasattr(Bd, "mu_lower_bound"):
    entry(
        "epasto2020_erm.gdp_mu",
        EE.gdp_mu,
        lambda: dict(epsilon=1.0, delta=1e-5, T=4),
        epsilon=EPS(),
        delta=DELTA_POS(),
        T=INT(1, hi=10**6),
    )
    entry(
        "epasto2020_erm.gdp_claim",
        EE.gdp_claim,
        lambda: dict(epsilon=1.0, delta=1e-5, T=4),
        epsilon=EPS(),
        delta=DELTA_POS(),
        T=INT(1, hi=10**6),
    )
