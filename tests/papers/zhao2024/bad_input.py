"""The bad-input rows of Zhao et al. 2024 (``userdp.reference.zhao2024*``), in the format of
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
    POS,
    RNG,
    SIZE,
    entry_adder,
    finite_bad,
    inf,
    nan,
    rng,
    scalar_ds,
)
from userdp.reference.data import UserDataset

__all__ = ["ROWS"]

ROWS: list[Entry] = []
entry = entry_adder(ROWS)

# ======================================================= Zhao et al. 2024, HLM
try:
    from userdp.reference import zhao2024 as Zh
except ImportError:
    Zh = None
if Zh is not None:

    def _Dz():
        """Four users (2, 1, 3, 1 items), scalar items."""
        return UserDataset(np.array([0.1, 0.3, -0.2, 0.5, 0.4, 0.45, 0.0]), np.array([0, 0, 1, 2, 2, 2, 3]))

    M_BAD = [[], [0, 1], [1.5], [-1], [nan], "a", None, [[1]]]
    Y, W4, T4 = np.array([[0.1], [0.2], [0.4]]), np.full(3, 1 / 3), np.full(3, 0.5)
    Y_BAD = [None, "a", [[nan]], np.zeros((0, 1)), [0.1, 0.2, 0.4], np.zeros((2, 1))]
    W_BAD = [None, "a", [nan, 0.5, 0.5], [-0.5, 1.0, 0.5], [0.0, 0.0, 0.0], [0.5, 0.5]]
    T_BAD = [None, "a", [0.5, 0.0, 0.5], [0.5, -1.0, 0.5], [0.5, nan, 0.5], [0.5]]
    HLM = dict(
        epsilon=EPS(),
        delta=DELTA_POS(),
        R=POS(),
        tau=POS(),
        kappa0=POS() + [1.0, 2.0],
        test_share=POS() + [1.0, 1.5],
        support=[v for v in POS() if v is not None] + [0.2],
    )  # 0.2: items of _Dz reach 0.5
    HLM_OK = dict(epsilon=1.0, delta=1e-5, R=1.0, tau=2.0, kappa0=0.5, test_share=0.25, support=None)

    entry("zhao2024.local_averages", Zh.local_averages, lambda: dict(dataset=_Dz()), dataset=DATASET())
    entry("zhao2024.thresholds", Zh.thresholds, lambda: dict(m=[1, 4], R=1.0, tau=2.0), m=M_BAD, R=POS(), tau=POS())
    entry("zhao2024.weights", Zh.weights, lambda: dict(m=[1, 4], cap=2.0), m=M_BAD, cap=POS() + [0.5])
    entry(
        "zhao2024.choose_cap",
        Zh.choose_cap,
        lambda: dict(
            m=[1, 4, 9],
            R=1.0,
            epsilon=1.0,
            delta=1e-5,
            d=1,
            tau=2.0,
            kappa0=0.5,
            test_share=0.25,
            candidates=8,
            support=None,
        ),
        m=M_BAD,
        R=POS(),
        epsilon=EPS(),
        delta=DELTA_POS(),
        d=INT(1),
        tau=POS(),
        kappa0=HLM["kappa0"],
        test_share=HLM["test_share"],
        candidates=INT(2, hi=10_000),
        support=HLM["support"][:-1],
    )
    entry(
        "zhao2024.huber_loss",
        Zh.huber_loss,
        lambda: dict(s=[0.2], y=Y, w=W4, T=T4),
        s=[None, "a", [nan], [0.1, 0.2], [[0.1]]],
        y=Y_BAD,
        w=W_BAD,
        T=T_BAD,
    )
    entry(
        "zhao2024.huber_gradient",
        Zh.huber_gradient,
        lambda: dict(s=[0.2], y=Y, w=W4, T=T4),
        s=[None, "a", [inf], [0.1, 0.2]],
        y=Y_BAD,
        w=W_BAD,
        T=T_BAD,
    )
    entry(
        "zhao2024.solve",
        Zh.solve,
        lambda: dict(y=Y, w=W4, T=T4, e=1e-9, kappa0=0.5, rho=1e-3),
        y=Y_BAD,
        w=W_BAD,
        T=T_BAD,
        e=POS(),
        kappa0=HLM["kappa0"],
        rho=POS(),
    )
    entry(
        "zhao2024.clip",
        Zh.clip,
        lambda: dict(v=[3.0, 4.0], R_c=1.0),
        v=[None, "a", [nan], [inf, 0.0], [[1.0]]],
        R_c=POS(),
    )
    entry(
        "zhao2024.statistic",
        Zh.statistic,
        lambda: dict(dataset=_Dz(), **HLM_OK, cap=None),
        dataset=DATASET(),
        cap=[v for v in POS() if v is not None] + [0.5],
        ok={"cap": [2.0]},
        **HLM,
    )
    entry(
        "zhao2024.proposed_sensitivity",
        Zh.proposed_sensitivity,
        lambda: dict(w=W4, T=T4, kappa0=0.5, support=None),
        w=W_BAD,
        T=T_BAD,
        kappa0=HLM["kappa0"],
        support=HLM["support"][:-1],
        ok={"support": [0.2]},
    )
    entry(
        "zhao2024.ptr_distance",
        Zh.ptr_distance,
        lambda: dict(margins=[0.3, 0.2, -inf], w=W4, B=0.05, shift=0.0, kappa0=0.5, J=10),
        margins=[None, "a", [nan, 0.1, 0.1], [inf, 0.1, 0.1], [], [0.1, 0.1]],
        w=W_BAD[:4],
        B=POS(),
        shift=[-1.0, nan, inf, "a", None],
        kappa0=HLM["kappa0"],
        J=INT(1),
    )
    entry(
        "zhao2024.budget",
        Zh.budget,
        lambda: dict(epsilon=1.0, delta=1e-5, test_share=0.25),
        epsilon=EPS(),
        delta=DELTA_POS(),
        test_share=HLM["test_share"],
    )
    entry(
        "zhao2024.release_plan",
        Zh.release_plan,
        lambda: dict(dataset=_Dz(), **HLM_OK, R_c=1.0, cap=None),
        dataset=DATASET(),
        R_c=POS(),
        cap=[v for v in POS() if v is not None] + [0.5],
        **HLM,
    )
    entry(
        "zhao2024.mechanism",
        Zh.mechanism,
        lambda: dict(dataset=_Dz(), rng=rng(), size=None, **HLM_OK, R_c=1.0, cap=None),
        dataset=DATASET(),
        rng=RNG(),
        size=SIZE(),
        R_c=POS(),
        cap=[v for v in POS() if v is not None] + [0.5],
        ok={"size": [1, 3]},
        **HLM,
    )
    entry("zhao2024.claim", Zh.claim, lambda: dict(epsilon=1.0, delta=1e-5), epsilon=EPS(), delta=DELTA_POS())

    from userdp.reference import zhao2024_solver as Zs

    WT_BAD = dict(w=W_BAD, T=T_BAD)
    entry("zhao2024_solver.rounding_bound", Zs.rounding_bound, lambda: dict(w=W4, T=T4, d=1), d=INT(1), **WT_BAD)
    entry("zhao2024_solver.margin_gap", Zs.margin_gap, lambda: dict(T=T4, d=1), T=T_BAD[:-1] + [[]], d=INT(1))
    entry(
        "zhao2024_solver.feasible",
        Zs.feasible,
        lambda: dict(w=W4, T=T4, d=1, e=1e-6, kappa0=0.5),
        d=INT(1),
        e=POS(),
        kappa0=POS(),
        **WT_BAD,
    )
    entry(
        "zhao2024_solver.guarantee_steps",
        Zs.guarantee_steps,
        lambda: dict(w=W4, T=T4, d=2, e=1e-6, kappa0=0.5, rho=1e-3),
        d=INT(1),
        e=POS(),
        kappa0=POS(),
        rho=POS(),
        **WT_BAD,
    )

# ======================================================= Zhao et al. 2024, HLM calibrations
try:
    from userdp.reference import zhao2024_calibration as Zc
except ImportError:
    Zc = None
if Zc is not None and Zh is not None:

    def _Dzo():
        """_Dz with an item at 2: outside the support 1 (refused by the domain check)."""
        return UserDataset(np.array([0.1, 0.3, -0.2, 0.5, 0.4, 0.45, 2.0]), np.array([0, 0, 1, 2, 2, 2, 3]))

    _SUP = [v for v in POS() if v is not None]
    _GP = dict(epsilon=1.0, delta=1e-5, R=1.0, R_c=1.0, support=1.0, tau=2.0)
    _GPB = dict(epsilon=EPS(), delta=DELTA_POS(), R=POS(), R_c=POS(), support=POS(), tau=POS())
    _THETA = [v for v in POS() if v is not None]
    entry(
        "zhao2024_calibration.equalised_weights",
        Zc.equalised_weights,
        lambda: dict(m=[1, 4, 16], R=1.0, theta=2.0, tau=2.0, support=1.0),
        m=M_BAD,
        R=POS(),
        theta=POS(),
        tau=POS(),
        support=POS(),
    )
    entry(
        "zhao2024_calibration.global_constants",
        Zc.global_constants,
        lambda: dict(m=[1, 4, 16], R=1.0, theta=2.0, d=1, tau=2.0, support=1.0),
        m=M_BAD + [[2, 3]],
        R=POS(),
        theta=POS(),
        d=INT(1, hi=2**20),
        tau=POS(),
        support=POS(),
        alias={"m": ("m", "T_i", "threshold"), "R": ("R", "threshold", "T_i"), "tau": ("tau", "threshold", "T_i")},
        ok={"support": [0.5]},
    )
    entry(
        "zhao2024_calibration.global_plan",
        Zc.global_plan,
        lambda: dict(dataset=_Dz(), **_GP, theta=None),
        dataset=DATASET() + [_Dzo()],
        theta=_THETA,
        ok={"theta": [2.0]},
        **_GPB,
    )
    entry(
        "zhao2024_calibration.global_mechanism",
        Zc.global_mechanism,
        lambda: dict(dataset=_Dz(), rng=rng(), size=None, **_GP, theta=None),
        dataset=DATASET() + [_Dzo()],
        rng=RNG(),
        size=SIZE(),
        theta=_THETA,
        ok={"size": [1, 3]},
        **_GPB,
    )
    entry(
        "zhao2024_calibration.choose_theta",
        Zc.choose_theta,
        lambda: dict(m=[1, 4, 16], R=1.0, epsilon=1.0, delta=1e-5, d=1, tau=2.0, support=1.0, R_c=1.0, candidates=8),
        m=M_BAD + [[2, 3]],
        d=INT(1, hi=2**20),
        candidates=INT(2, hi=10_000),
        alias={"m": ("m", "theta"), "R": ("R", "theta"), "tau": ("tau", "theta")},
        **_GPB,
    )
    entry(
        "zhao2024_calibration.tune_ptr",
        Zc.tune_ptr,
        lambda: dict(m=[1, 4, 16], R=1.0, epsilon=1.0, delta=1e-5, d=1, tau=2.0, support=None, R_c=1.0, candidates=4),
        m=M_BAD,
        d=INT(1, hi=2**20),
        candidates=INT(2, hi=10_000),
        **{**_GPB, "support": _SUP},
        ok={"support": [1.0]},
    )
    entry(
        "zhao2024_calibration.calibrate",
        Zc.calibrate,
        lambda: dict(m=[1, 4, 16], R=1.0, epsilon=1.0, delta=1e-5, R_c=1.0, d=1, tau=2.0, support=None),
        m=M_BAD,
        d=INT(1, hi=2**20),
        **{**_GPB, "support": _SUP},
        ok={"support": [1.0]},
    )
    entry(
        "zhao2024_calibration.calibrated_mechanism",
        Zc.calibrated_mechanism,
        lambda: dict(
            dataset=_Dz(),
            rng=rng(),
            size=None,
            epsilon=1.0,
            delta=1e-5,
            R=1.0,
            R_c=1.0,
            tau=2.0,
            support=None,
            calibration=None,
        ),
        dataset=DATASET(),
        rng=RNG(),
        size=SIZE(),
        calibration=["ptr", 3, Zc.Calibration("nope")],
        ok={"size": [1, 3], "support": [1.0]},
        **{**_GPB, "support": _SUP},
    )
    entry(
        "zhao2024_calibration.claim", Zc.claim, lambda: dict(epsilon=1.0, delta=1e-5), epsilon=EPS(), delta=DELTA_POS()
    )


# =================================================== Zhao et al. 2024, WME baseline
try:
    from userdp.reference import zhao2024_wme as Wm
except ImportError:
    Wm = None
if Wm is not None:

    def _users(avgs, m=8):
        """One user per entry of ``avgs``, each holding m copies of it (local average = the entry)."""
        a = np.asarray(avgs, dtype=float)
        return UserDataset.from_arrays(np.repeat(a, m, axis=0), np.repeat(np.arange(a.shape[0]), m))

    def _D1():
        return scalar_ds()  # values in [0, 1], 3 users

    def _D3():
        return _users(np.array([[0.2, 0.1, -0.3], [0.0, 0.5, 0.1]]), m=2)

    _SIGNS4 = np.array([1.0, -1.0, 1.0, 1.0])
    _DS_BAD = DATASET() + [_users([0.5, 1.5])]  # out of the support |x| <= 1
    _BETA_BAD = [0, 0.0, 1.0, 1.5, -0.1, nan, inf, "x", None, True]
    _SPLIT_BAD = _BETA_BAD
    _SIGNS_BAD = [None, [1.0, 1.0], [1.0, 0.5, 1.0, 1.0], "x", [[1.0, 1.0, 1.0, 1.0]] * 2, [nan, 1, 1, 1]]
    _M_BAD = [0, -1, 1.5, True, None, "2", np.array([3, 0]), np.array([], dtype=int), np.array([1.5]), 2**31]
    _LOHI_BAD = ARRAY() + [[nan], [0.5, 0.6], [[[0.1]]]]
    _DS = {"dataset": DS_ALIAS}

    ROWS.extend(
        [
            Entry("zhao2024_wme.padded_dimension", Wm.padded_dimension, lambda: dict(d=3), {"d": INT(1, hi=Wm.MAX_D)}),
            Entry(
                "zhao2024_wme.fwht",
                Wm.fwht,
                lambda: dict(x=[1.0, 2.0]),
                {"x": ARRAY() + finite_bad(np.ones(2)) + [[1.0, 2.0, 3.0], 5.0, [1e60, 0.0], np.zeros((2, 0))]},
            ),
            Entry(
                "zhao2024_wme.random_signs",
                Wm.random_signs,
                lambda: dict(d=3, rng=rng(), size=None),
                {"d": INT(1, hi=Wm.MAX_D), "rng": RNG(), "size": SIZE()},
                ok={"size": [2]},
            ),
            Entry(
                "zhao2024_wme.rotate",
                Wm.rotate,
                lambda: dict(x=[0.1, 0.2, 0.3], signs=_SIGNS4),
                {"x": ARRAY() + [[0.5], [nan, 0, 0]], "signs": _SIGNS_BAD},
            ),
            Entry(
                "zhao2024_wme.unrotate",
                Wm.unrotate,
                lambda: dict(z=[0.1, 0.2, 0.3, 0.4], signs=_SIGNS4, d=3),
                {"z": ARRAY() + [[0.1, 0.2, 0.3], [inf, 0, 0, 0]], "signs": _SIGNS_BAD, "d": INT(2, hi=Wm.MAX_D)},
            ),
            Entry(
                "zhao2024_wme.wme_radius",
                Wm.wme_radius,
                lambda: dict(m=np.array([2, 3]), R=1.0, beta=0.05),
                {"m": _M_BAD, "R": POS(), "beta": _BETA_BAD},
                ok={"m": [4, [2, 3]]},
            ),
            Entry(
                "zhao2024_wme.wme_histogram",
                Wm.wme_histogram,
                lambda: dict(dataset=_D1(), R=1.0, beta=0.05, signs=None),
                {"dataset": _DS_BAD, "R": POS() + [0.5], "beta": _BETA_BAD, "signs": [np.ones(1), "x"]},
                alias=_DS,
            ),
            Entry(
                "zhao2024_wme.wme_localise",
                Wm.wme_localise,
                lambda: dict(
                    dataset=_D3(), epsilon=0.5, delta=5e-6, R=1.0, rng=rng(), size=None, beta=0.05, signs=_SIGNS4
                ),
                {
                    "dataset": _DS_BAD,
                    "epsilon": EPS(),
                    "delta": DELTA_POS(),
                    "R": POS(),
                    "rng": RNG(),
                    "size": SIZE(),
                    "beta": _BETA_BAD,
                    "signs": _SIGNS_BAD,
                },
                alias=_DS,
                ok={"size": [1, 3]},
            ),
            Entry(
                "zhao2024_wme.wme_statistic",
                Wm.wme_statistic,
                lambda: dict(dataset=_D1(), lo=[0.0], hi=[0.5], R=1.0, signs=None),
                {
                    "dataset": _DS_BAD,
                    "lo": _LOHI_BAD + [[0.6]],
                    "hi": _LOHI_BAD + [[-0.1]],
                    "R": POS(),
                    "signs": [np.ones(1), "x"],
                },
                alias={**_DS, "lo": ("lo",), "hi": ("hi",)},
            ),
            Entry(
                "zhao2024_wme.wme_budgets",
                Wm.wme_budgets,
                lambda: dict(epsilon=1.0, delta=1e-5, split=0.5),
                {"epsilon": EPS(), "delta": DELTA_POS(), "split": _SPLIT_BAD},
            ),
            Entry(
                "zhao2024_wme.wme_sensitivities",
                Wm.wme_sensitivities,
                lambda: dict(dataset=_D1(), R=1.0, beta=0.05),
                {"dataset": _DS_BAD, "R": POS(), "beta": _BETA_BAD},
                alias=_DS,
            ),
            Entry(
                "zhao2024_wme.wme_noise_scales",
                Wm.wme_noise_scales,
                lambda: dict(dataset=_D1(), epsilon=1.0, delta=1e-5, R=1.0, beta=0.05, split=0.5),
                {
                    "dataset": _DS_BAD,
                    "epsilon": EPS(),
                    "delta": DELTA_POS(),
                    "R": POS(),
                    "beta": _BETA_BAD,
                    "split": _SPLIT_BAD,
                },
                alias=_DS,
            ),
            Entry(
                "zhao2024_wme.wme_gdp_mu",
                Wm.wme_gdp_mu,
                lambda: dict(epsilon=1.0, delta=1e-5, split=0.5),
                {"epsilon": EPS(), "delta": DELTA_POS(), "split": _SPLIT_BAD},
            ),
            Entry(
                "zhao2024_wme.wme_claim",
                Wm.wme_claim,
                lambda: dict(epsilon=1.0, delta=1e-5, split=0.5),
                {"epsilon": EPS(), "delta": DELTA_POS(), "split": _SPLIT_BAD},
            ),
            Entry(
                "zhao2024_wme.wme_mechanism",
                Wm.wme_mechanism,
                lambda: dict(dataset=_D3(), epsilon=1.0, delta=1e-5, R=1.0, rng=rng(), size=None, beta=0.05, split=0.5),
                {
                    "dataset": _DS_BAD,
                    "epsilon": EPS(),
                    "delta": DELTA_POS(),
                    "R": POS(),
                    "rng": RNG(),
                    "size": SIZE(),
                    "beta": _BETA_BAD,
                    "split": _SPLIT_BAD,
                },
                alias=_DS,
                ok={"size": [1, 3]},
            ),
        ]
    )
