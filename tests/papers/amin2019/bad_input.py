"""The bad-input rows of Amin et al. 2019 (``userdp.reference.amin2019*``), in the format of
``tests/bad_values.py``; ``tests/bad_input_table.py`` collects them into its ``TABLE`` and
``tests/test_bad_input.py`` runs them."""

from __future__ import annotations


from bad_values import (  # tests/ is on sys.path (rootdir conftest)
    DATASET,
    EPS,
    ERM_BAD_DS,
    Entry,
    INT,
    LOSS,
    POS,
    RNG,
    SIZE,
    _vec,
    entry_adder,
    erm_ds,
    inf,
    nan,
    rng,
    scalar_ds,
)
from userdp.reference import amin2019 as A
from userdp.reference import amin2019_erm as AE
from userdp.reference.data import UserDataset

__all__ = ["ROWS"]

ROWS: list[Entry] = []
entry = entry_adder(ROWS)
_D = scalar_ds  # as in tests/bad_input_table.py

# ============================================================================== amin2019
entry("amin2019.claim", A.claim, lambda: dict(epsilon=1.0), epsilon=EPS())
_neg = lambda: UserDataset.from_user_lists([[0.5], [-0.1, 0.2]])  # noqa: E731
AMIN_BAD_DS = DATASET() + [_neg(), _vec()]  # §3: nonnegative scalar values
entry("amin2019.user_totals", A.user_totals, lambda: dict(dataset=_D()), dataset=DATASET() + [_neg(), _vec()])
entry("amin2019.statistic", A.statistic, lambda: dict(dataset=_D(), T=1.0), dataset=AMIN_BAD_DS, T=POS())
entry("amin2019.sensitivity", A.sensitivity, lambda: dict(T=1.0), T=POS())
entry("amin2019.noise_scale", A.noise_scale, lambda: dict(T=1.0, epsilon=1.0), T=POS(), epsilon=EPS())
entry(
    "amin2019.mechanism",
    A.mechanism,
    lambda: dict(dataset=_D(), T=1.0, epsilon=1.0, rng=rng(), size=None),
    dataset=AMIN_BAD_DS,
    T=POS(),
    epsilon=EPS(),
    rng=RNG(),
    size=SIZE(),
)
entry(
    "amin2019.error_bound",
    A.error_bound,
    lambda: dict(x=[0.5, 2.0], T=1.0, epsilon=1.0),
    x=[[], [-1.0], [nan], ["a"], None, [[1.0]]],
    T=[-1.0, nan, inf, 1e60, "1", None],
    epsilon=EPS(),
    ok={"T": [0.0]},
)  # T = 0: optimal_cap_nonprivate's answer when ceil(1/eps) > m
entry("amin2019.optimal_rank", A.optimal_rank, lambda: dict(epsilon=0.3), epsilon=EPS())
entry(
    "amin2019.optimal_cap_nonprivate",
    A.optimal_cap_nonprivate,
    lambda: dict(dataset=_D(), epsilon=1.0),
    dataset=AMIN_BAD_DS,
    epsilon=EPS(),
)
entry(
    "amin2019.capped_sums",
    A.capped_sums,
    lambda: dict(dataset=_D(), T=[0.5, 1.0]),
    dataset=AMIN_BAD_DS,
    T=[[-1.0], [nan], [inf], [1e60], [1e-200], ["a"], None, [[1.0]]],
    ok={"T": [0.0, [0.0, 2.0]]},
)
entry(
    "amin2019.private_cap",
    A.private_cap,
    lambda: dict(dataset=_D(), epsilon_cap=1.0, epsilon_sum=1.0, U=1.0, rng=rng(), size=None),
    dataset=AMIN_BAD_DS,
    epsilon_cap=EPS(),
    epsilon_sum=EPS(),
    U=POS(),
    rng=RNG(),
    size=SIZE(),
)
entry(
    "amin2019.private_cap_claim",
    A.private_cap_claim,
    lambda: dict(epsilon_cap=1.0, epsilon_sum=1.0),
    epsilon_cap=EPS(),
    epsilon_sum=EPS(),
)
entry(
    "amin2019.private_cap_mechanism",
    A.private_cap_mechanism,
    lambda: dict(dataset=_D(), epsilon_cap=1.0, epsilon_sum=1.0, U=1.0, rng=rng(), size=None),
    dataset=AMIN_BAD_DS,
    epsilon_cap=EPS(),
    epsilon_sum=EPS(),
    U=POS(),
    rng=RNG(),
    size=SIZE(),
)

# ========================================================================== amin2019_erm
AP = dict(tau=2, Lambda=1.0, n_min=3, loss="logistic", R=1.0, Y=1.0)
APB = dict(tau=INT(1), Lambda=POS(), n_min=INT(1), loss=LOSS, R=POS(), Y=POS())
entry("amin2019_erm.claim", AE.claim, lambda: dict(epsilon=1.0), epsilon=EPS())
entry(
    "amin2019_erm.kept_records", AE.kept_records, lambda: dict(dataset=erm_ds(), tau=2), dataset=DATASET(), tau=INT(1)
)
entry(
    "amin2019_erm.effective_sample_size",
    AE.effective_sample_size,
    lambda: dict(dataset=erm_ds(), tau=2),
    dataset=DATASET(),
    tau=INT(1),
)
entry(
    "amin2019_erm.weights",
    AE.weights,
    lambda: dict(dataset=erm_ds(), tau=2, n_min=3),
    dataset=DATASET(),
    tau=INT(1),
    n_min=INT(1),
)
entry(
    "amin2019_erm.fit",
    AE.fit,
    lambda: dict(dataset=erm_ds(), **AP),
    dataset=ERM_BAD_DS,
    **APB,
    alias={"R": ("R", "||x_")},
)
entry(
    "amin2019_erm.statistic",
    AE.statistic,
    lambda: dict(dataset=erm_ds(), **AP),
    dataset=ERM_BAD_DS,
    **APB,
    alias={"R": ("R", "||x_")},
)
entry("amin2019_erm.sensitivity", AE.sensitivity, lambda: dict(AP), **APB)
entry("amin2019_erm.noise_scale", AE.noise_scale, lambda: dict(epsilon=1.0, **AP), epsilon=EPS(), **APB)
entry(
    "amin2019_erm.mechanism",
    AE.mechanism,
    lambda: dict(dataset=erm_ds(), rng=rng(), size=None, epsilon=1.0, **AP),
    dataset=ERM_BAD_DS,
    rng=RNG(),
    size=SIZE(),
    epsilon=EPS(),
    **APB,
    alias={"R": ("R", "||x_")},
)
entry(
    "amin2019_erm.bias_bound",
    AE.bias_bound,
    lambda: dict(dataset=erm_ds(), tau=2, var_H=None),
    dataset=DATASET(),
    tau=INT(1),
    var_H=[-0.1, 0.3, nan, inf, "0.1"],
    ok={"var_H": [0.0, 0.25]},
)
entry(
    "amin2019_erm.bias_bound_tau0",
    AE.bias_bound_tau0,
    lambda: dict(tau0=0.5, var_H=None),
    tau0=POS() + [1.5],
    var_H=[-0.1, 0.3, nan, "0.1"],
    ok={"tau0": [1.0]},
)
