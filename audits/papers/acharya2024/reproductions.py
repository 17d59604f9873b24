"""Reproductions of Acharya et al. 2024, "Personalized Differential Privacy for Ridge
Regression" (arXiv:2401.17127v1), §4: Tables 1 and 3 (synthetic, d = 30, n = 100) and
Tables 2 and 4 (Medical Cost).

- ``acharya2024-table1``: PDP-OP against the non-personalized baseline (§4.1, Table 1);
- ``acharya2024-table3``: PDP-OP against Jorgensen et al. 2015 at t = max eps and t = mean
  eps (§4.2, Table 3), same data;
- ``acharya2024-medical``: Tables 2 and 4 on the Medical Cost data (shipped in
  ``data/insurance.csv``, provenance in ``data/PROVENANCE.md``).

Metrics (§4 "Metrics"): (1) unregularised test loss (1/N_test) sum (y_i - x_i.theta_hat)^2;
(2) regularised test loss, (1) + lambda ||theta_hat||^2, with the training lambda. Each cell
is the mean over independent releases (10,000, as the paper; ``quick``: 1,000), drawn in one
vectorised call of the reference mechanism. Columns: ``M`` our Monte Carlo mean, ``M se`` its
standard error, ``M E`` the exact expectation over the noise where it has a closed form
(``expected_losses``), ``M paper`` the paper's table entry.

The protocol is the authors' (their public code, github krishnacharya/pp-ridge, read for
facts; docs/papers/acharya2024.md): privacy profile on the TRAINING records (``privacy_profile``),
scikit-learn's ``train_test_split(test_size=0.2, random_state=21)`` (reproduced in numpy by
``paper_split``), 10,000 noise draws per cell.

Why our numbers differ from the paper's:
- the authors' code is unseeded, so their X, theta*, privacy profile and noise are one
  unrecorded draw; ours are seeded (``SEED``). The non-personalized column moves most: its
  noise scales with 1/min eps (its expected loss is ~ (sum eps / (n min eps))^2 times
  PDP-OP's noise term), and the smallest of 27 (synthetic) draws from U(0.01, 0.2) varies;
- Medical Cost: we use the paper's split (verified: the OLS test loss on it, rescaled,
  equals Table 4's 9.43e-3 to all printed digits; ``medical`` checks it) but scale
  age, bmi, children and charges with PUBLIC bounds (``PUBLIC_BOUNDS``), not the data's
  min and max: min-max scaling reads every record and is not covered by the privacy claim.
  Labels are charges / 65000 instead of (charges - 1121.87) / 62648.55, so label errors
  shrink by (62648.55 / 65000)^2 = 0.929, and the features' scales change the ridge fit;
- Table 3 prints 1.81e-2 for Jorgensen max, unregularised, lambda = 25; the authors' CSV
  (pp/csv_outputs/forplots_specific_30_100_plevel_34_43_23_result.csv) has 0.1811, which fits
  the neighbouring rows: a typo in the paper. We print the paper's value as printed.
- The data's provenance (``data/PROVENANCE.md`` beside this module) gives a 90/10 split and the
  grid [0.01, 0.05, 1, 2, 5, 10, ..., 50]: those come from another script of the authors (insurance_premium_34_43_23.py,
  fixed profile 0.1/0.5/1.0). Tables 2 and 4 come from impact_lambda/forplots_insurance_data_
  impact_lambda_plevel_34_43_23.py (test_size = 0.2, the grid of the tables), whose CSV matches
  the tables digit for digit. We follow the tables.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from importlib import resources
from typing import NamedTuple

import numpy as np
from scipy.stats import chi2, norm

from userdp.audits.engine.verdicts import ERROR, claim, decide, exact, max_normal, median, median_replications, normal
from userdp.reference import acharya2024 as A
from userdp.reference.data import UserDataset
from userdp.audits.engine.plot import pyplot

from userdp.audits.engine.registry import register_reproduction

__all__ = [
    "GRID_MEDICAL",
    "GRID_TABLE1",
    "GRID_TABLE3",
    "INSTANCES",
    "INSTANCE_P_BELOW",
    "MEDICAL_SHA256",
    "PAPER_MIN_RATIO",
    "PILOT_LOG_SD",
    "PROFILE",
    "QUICK_INSTANCES",
    "TABLE1",
    "TABLE2",
    "TABLE3",
    "TABLE4",
    "expected_losses",
    "instance_claims",
    "instance_min_ratios",
    "load_medical_cost",
    "paper_split",
    "prepare_medical",
    "privacy_profile",
    "release_losses",
    "synthetic_setup",
    "table1",
]

SEED = 2024  # data, profile and noise (fixed before the first run)
SPLIT_SEED = 21  # the authors' random_state
TEST_FRACTION = 0.2  # the authors' test_size (Tables 1-4)
DRAWS, QUICK_DRAWS = 10_000, 1_000

# §4 "Choice of privacy budgets": default profile
PROFILE = dict(f_c=0.34, f_m=0.43, eps_c=0.01, eps_m=0.2, eps_l=1.0)

# Grids: Table 1 and Table 3 rows; Tables 2 and 4 rows.
GRID_TABLE1 = (1, 3, 5, 7, 10, 15, 20, 25, 50, 75, 100, 125, 150, 175, 200)
GRID_TABLE3 = (1, 3, 5, 7, 10, 15, 20, 25, 50, 75, 100, 200, 300, 400, 500)
GRID_MEDICAL = (0.01, 0.05, 0.1, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 2, 3, 5)

# The paper's tables, lambda -> (unregularised losses..., regularised losses...), in the
# column order of each table (arXiv:2401.17127v1, §4).
# Table 1: PDP-OP, non-personalized.
TABLE1 = {
    1: (854, 4.60e5, 3.32e3, 1.77e6),
    3: (38.8, 2.08e4, 382, 2.03e5),
    5: (9.78, 5.20e3, 150, 8.08e4),
    7: (3.81, 2.06e3, 83.6, 4.46e4),
    10: (1.49, 818, 45.8, 2.45e4),
    15: (0.530, 275, 23.4, 1.26e4),
    20: (0.254, 129, 14.9, 8.01e3),
    25: (0.144, 74.5, 10.7, 5.63e3),
    50: (0.0228, 11.1, 3.06, 1.64e3),
    75: (0.00935, 3.78, 1.56, 829),
    100: (0.00582, 1.80, 1.01, 536),
    125: (0.00439, 1.06, 0.737, 391),
    150: (0.00368, 0.679, 0.573, 305),
    175: (0.00333, 0.476, 0.467, 249),
    200: (0.00309, 0.364, 0.397, 210),
}
# Table 2: PDP-OP, non-personalized.
TABLE2 = {
    0.01: (1.19e5, 2.18e8, 1.22e5, 2.31e8),
    0.05: (1.03e3, 1.89e6, 1.16e3, 2.12e6),
    0.1: (134, 2.49e5, 170, 3.08e5),
    0.5: (1.30, 2.40e3, 3.03, 5.52e3),
    0.6: (0.810, 1.47e3, 2.02, 3.65e3),
    0.7: (0.529, 926, 1.47, 2.61e3),
    0.8: (0.378, 636, 1.11, 1.98e3),
    0.9: (0.278, 459, 0.879, 1.54e3),
    1: (0.215, 345, 0.712, 1.24e3),
    2: (0.0680, 51.8, 0.226, 319),
    3: (0.0552, 17.3, 0.139, 152),
    5: (0.0554, 4.49, 0.0965, 62.5),
}
# Table 3: PDP-OP, Jorgensen max, Jorgensen mean, non-private (lambda = 25, J max: sic, see docstring).
TABLE3 = {
    1: (854, 1.09e3, 1.89e3, 5.73e-32, 3.32e3, 4.16e3, 7.55e3, 2.01e-3),
    3: (38.8, 48.2, 86.4, 5.73e-32, 382, 479, 864, 2.11e-3),
    5: (9.78, 12.1, 21.5, 5.73e-32, 150, 189, 340, 2.17e-3),
    7: (3.81, 4.81, 8.85, 5.73e-32, 83.6, 105, 189, 2.20e-3),
    10: (1.49, 1.88, 3.44, 5.73e-32, 45.8, 57.5, 103, 2.24e-3),
    15: (0.530, 0.661, 1.16, 5.73e-32, 23.4, 29.7, 53.3, 2.28e-3),
    20: (0.254, 0.312, 0.564, 5.73e-32, 14.9, 18.7, 33.9, 2.31e-3),
    25: (0.144, 0.0181, 0.327, 5.73e-32, 10.7, 13.1, 23.9, 2.33e-3),
    50: (0.0228, 0.0282, 0.0492, 5.73e-32, 3.06, 3.83, 6.95, 2.37e-3),
    75: (0.00935, 0.0112, 0.0181, 5.73e-32, 1.56, 1.95, 3.56, 2.39e-3),
    100: (0.00582, 0.00661, 0.0101, 5.73e-32, 1.01, 1.26, 2.28, 2.40e-3),
    200: (0.00309, 0.00325, 0.00392, 5.73e-32, 0.397, 0.497, 0.902, 2.42e-3),
    300: (0.00268, 0.00276, 0.00304, 5.73e-32, 0.242, 0.302, 0.546, 2.42e-3),
    400: (0.00256, 0.00260, 0.00276, 5.73e-32, 0.175, 0.216, 0.392, 2.42e-3),
    500: (0.00251, 0.00254, 0.00262, 5.73e-32, 0.136, 0.170, 0.306, 2.43e-3),
}
TABLE3_TYPO = (25, "unreg")  # Table 3 prints J max = 1.81e-2; the authors' CSV: 0.1811
# Table 4: PDP-OP, Jorgensen max, Jorgensen mean, non-private.
TABLE4 = {
    0.01: (1.19e5, 1.50e5, 2.87e5, 9.43e-3, 1.22e5, 1.52e5, 2.93e5, 1.08e-2),
    0.05: (1.03e3, 1.26e3, 2.43e3, 9.43e-3, 1.16e3, 1.42e3, 2.75e3, 1.51e-2),
    0.1: (134, 166, 314, 9.43e-3, 170, 211, 400, 1.90e-2),
    0.5: (1.30, 1.67, 3.10, 9.43e-3, 3.03, 3.80, 7.19, 3.46e-2),
    0.6: (0.810, 0.989, 1.85, 9.43e-3, 2.02, 2.50, 4.76, 3.67e-2),
    0.7: (0.529, 0.655, 1.23, 9.43e-3, 1.47, 1.80, 3.43, 3.86e-2),
    0.8: (0.378, 0.465, 0.871, 9.43e-3, 1.11, 1.39, 2.63, 4.02e-2),
    0.9: (0.278, 0.342, 0.630, 9.43e-3, 0.879, 1.08, 2.03, 4.17e-2),
    1: (0.215, 0.261, 0.476, 9.43e-3, 0.712, 0.870, 1.62, 4.30e-2),
    2: (0.0680, 0.0753, 0.106, 9.43e-3, 0.226, 0.265, 0.459, 5.19e-2),
    3: (0.0552, 0.0572, 0.0687, 9.43e-3, 0.139, 0.159, 0.252, 5.69e-2),
    5: (0.0554, 0.0561, 0.0589, 9.43e-3, 0.0965, 0.105, 0.143, 6.27e-2),
}


# ----------------------------------------------------------------------------- setup
class Setup(NamedTuple):
    D: UserDataset  # training records with their profile eps_i
    X_test: np.ndarray  # (N_test, d)
    y_test: np.ndarray  # (N_test,)


def privacy_profile(n: int, rng, f_c, f_m, eps_c, eps_m, eps_l) -> np.ndarray:
    """§4: the first floor(f_c n) records eps ~ U(eps_c, eps_m), the next floor(f_m n)
    eps ~ U(eps_m, eps_l), the rest eps_l (the authors' ``set_epsilons``), shape (n,)."""
    n_c, n_m = math.floor(f_c * n), math.floor(f_m * n)
    return np.concatenate(
        [rng.uniform(eps_c, eps_m, n_c), rng.uniform(eps_m, eps_l, n_m), np.full(n - n_c - n_m, float(eps_l))]
    )


def paper_split(n: int, test_fraction: float = TEST_FRACTION, seed: int = SPLIT_SEED):
    """(train, test) indices of scikit-learn's ``train_test_split(test_size=test_fraction,
    random_state=seed)``: ShuffleSplit takes ``RandomState(seed).permutation(n)``, the first
    ceil(test_fraction n) as the test set and the rest, in that order, as the training set.
    NumPy's legacy RandomState stream is frozen (NEP 19), so this is the authors' split: on
    the Medical Cost data its OLS test loss equals Table 4's non-private column."""
    n_test = math.ceil(test_fraction * n)
    perm = np.random.RandomState(seed).permutation(n)
    return perm[n_test:], perm[:n_test]


def _setup(X, y, seed) -> Setup:
    train, test = paper_split(len(y))
    eps = privacy_profile(train.size, np.random.default_rng([seed, 1]), **PROFILE)
    D = UserDataset(X[train], np.arange(train.size), labels=y[train], epsilons=eps)
    return Setup(D, X[test], y[test])


def synthetic_setup(seed: int = SEED, n: int = 100, d: int = 30) -> Setup:
    """§4 synthetic data: x ~ U[0, 1]^d, theta* uniform on S^{d-1}, y = x.theta* / sqrt(d)
    (|y| <= 1, no label noise), split 80/20, profile on the training records."""
    rng = np.random.default_rng([seed, 0])
    X = rng.random((n, d))  # (n, d)
    theta = rng.standard_normal(d)
    theta /= np.linalg.norm(theta)  # N(0, I) / norm: uniform on the sphere
    return _setup(X, X @ theta / math.sqrt(d), seed)


# ------------------------------------------------------------------- Medical Cost data
MEDICAL_CSV = "data/insurance.csv"
MEDICAL_SHA256 = "388eff679557d08ac19f463d025de5e0b4adc482537c8456d19934d78621fd47"  # data/PROVENANCE.md
MEDICAL_COLUMNS = ("age", "sex", "bmi", "children", "smoker", "region", "charges")
# Public bounds, fixed without reading any record's value at run time (a record outside is
# refused, never clipped). age: the data set covers insured US adults below Medicare age
# (18-64); bmi: [15, 55] spans severe thinness (< 16) to class III obesity well beyond 40
# (WHO classes); children: 0-5 dependants covered by the plan; charges: [0, 65000] US
# dollars a year. Caveat: these round numbers were chosen knowing the data's range
# (18-64, 15.96-53.13, 0-5, 1121.87-63770.43); a deployment fixes them from domain knowledge.
PUBLIC_BOUNDS = {"age": (18.0, 64.0), "bmi": (15.0, 55.0), "children": (0.0, 5.0), "charges": (0.0, 65000.0)}
# One-hot levels, every level kept (the authors' get_dummies(drop_first=False), sorted).
LEVELS = {
    "sex": ("female", "male"),
    "smoker": ("no", "yes"),
    "region": ("northeast", "northwest", "southeast", "southwest"),
}


def load_medical_cost() -> dict[str, np.ndarray]:
    """The shipped insurance.csv as columns (numeric as float, categorical as str), after
    checking its sha256 against ``MEDICAL_SHA256``."""
    raw = resources.files(__package__).joinpath(MEDICAL_CSV).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != MEDICAL_SHA256:
        raise ValueError(f"{MEDICAL_CSV}: sha256 {digest} != {MEDICAL_SHA256} (data/PROVENANCE.md)")
    header, *rows = list(csv.reader(io.StringIO(raw.decode("utf-8"))))
    if tuple(header) != MEDICAL_COLUMNS:
        raise ValueError(f"{MEDICAL_CSV}: columns {header}, expected {list(MEDICAL_COLUMNS)}")
    cols = dict(zip(header, map(list, zip(*rows))))
    return {c: np.array(v, dtype=float if c in PUBLIC_BOUNDS else str) for c, v in cols.items()}


def prepare_medical(table: dict) -> tuple[np.ndarray, np.ndarray]:
    """(X (n, 12), y (n,)): age, bmi, children scaled by ``PUBLIC_BOUNDS`` into [0, 1], one-hot
    sex, smoker, region (every level), an intercept column; y = charges scaled into [0, 1].
    A value outside its public bounds, or an unknown level, is refused (ValueError)."""

    def scaled(c):
        v, (lo, hi) = np.asarray(table[c], dtype=float), PUBLIC_BOUNDS[c]
        bad = np.flatnonzero(~((v >= lo) & (v <= hi)))
        if bad.size:
            raise ValueError(
                f"{c}[{bad[0]}] = {v[bad[0]]!r} is outside the public bounds [{lo:g}, {hi:g}]: refused (never clipped)"
            )
        return (v - lo) / (hi - lo)

    def one_hot(c):
        v = np.asarray(table[c], dtype=str)
        bad = np.flatnonzero(~np.isin(v, LEVELS[c]))
        if bad.size:
            raise ValueError(f"{c}[{bad[0]}] = {v[bad[0]]!r} is not one of the public levels {LEVELS[c]}: refused")
        return (v[:, None] == np.array(LEVELS[c])).astype(float)

    X = np.column_stack(
        [
            scaled("age"),
            scaled("bmi"),
            scaled("children"),
            one_hot("sex"),
            one_hot("smoker"),
            one_hot("region"),
            np.ones(len(table["age"])),
        ]
    )
    return X, scaled("charges")


def medical_setup(seed: int = SEED) -> Setup:
    X, y = prepare_medical(load_medical_cost())
    return _setup(X, y, seed)


# ---------------------------------------------------------------------- losses
def release_losses(releases: np.ndarray, X_test, y_test, Lambda) -> tuple[np.ndarray, np.ndarray]:
    """§4 Metrics, per release: (1) mean (y - x.theta)^2 over the test set; (2) (1) + lambda
    ||theta||^2. releases (m, d) -> two arrays (m,)."""
    r = releases @ X_test.T - y_test  # (m, N_test)
    mse = np.mean(r * r, axis=1)
    return mse, mse + Lambda * np.einsum("ij,ij->i", releases, releases)


def expected_losses(D: UserDataset, Lambda, X_test, y_test) -> tuple[float, float]:
    """Both losses of PDP-OP on D, in expectation over its noise (exact). Remark 3.1:
    Z = R U with R ~ Gamma(d, rate eta), U uniform on S^{d-1} independent, so
    E R^2 = d (d + 1) / eta^2 and E[U U^T] = I / d, hence E[Z Z^T] = (d + 1) / eta^2 I and
    E (1) = (1)(theta_bar) + (d + 1) / eta^2 mean_i ||x_i||^2,
    E (2) = E (1) + lambda (||theta_bar||^2 + d (d + 1) / eta^2)."""
    theta, eta = A.statistic(D, Lambda), A.eta(D, Lambda)
    d = theta.size
    mse = float(np.mean((X_test @ theta - y_test) ** 2)) + (d + 1) / eta**2 * float(np.mean(np.sum(X_test**2, 1)))
    return mse, mse + Lambda * (float(theta @ theta) + d * (d + 1) / eta**2)


def nonprivate_losses(D: UserDataset, Lambda, X_test, y_test) -> tuple[float, float]:
    """The paper's 'non-private' columns as the authors' code computes them (``nonpriv_solution``):
    (1) of ordinary least squares (lambda = 0; minimum-norm solution, the one-hot columns and
    the intercept are collinear) and (2) of the uniform-weight ridge solution at lambda."""
    ols = np.linalg.lstsq(D.values, D.labels, rcond=None)[0]
    ridge = A.statistic(_flat(D), Lambda)  # weights 1/n
    return (
        float(np.mean((X_test @ ols - y_test) ** 2)),
        float(release_losses(ridge[None], X_test, y_test, Lambda)[1][0]),
    )


def _flat(D: UserDataset) -> UserDataset:
    return D.with_fields(epsilons=A.nonpersonalized_epsilons(D))


# Every method: (dataset, rng, size, lambda) -> (size, d) releases; its index seeds its noise.
METHODS = {
    "PDP-OP": lambda D, rng, m, lam: A.mechanism(D, rng, m, Lambda=lam),
    "non-pers": lambda D, rng, m, lam: A.nonpersonalized_mechanism(D, rng, m, Lambda=lam),
    "J max": lambda D, rng, m, lam: A.jorgensen_mechanism(D, rng, m, Lambda=lam, threshold="max"),
    "J mean": lambda D, rng, m, lam: A.jorgensen_mechanism(D, rng, m, Lambda=lam, threshold="mean"),
}
CLOSED_FORM = {"PDP-OP": lambda D: D, "non-pers": _flat}  # methods whose expectation is exact


def run(setup: Setup, grid, methods, draws: int, seed: int = SEED, progress=None, paper=None) -> list[dict]:
    """Rows (lambda, loss) with, per method, the mean over ``draws`` releases, its standard
    error, the exact expectation (PDP-OP, non-pers) and the paper's value; then the
    non-private losses. The noise of (method, lambda) comes from its own seeded stream, so a
    cell does not depend on the grid (Tables 1 and 3 share their PDP-OP cells)."""
    rows, total = [], len(grid) * len(methods)
    for i, lam in enumerate(grid):
        cells = [{"lambda": lam, "loss": loss} for loss in ("unreg", "reg")]
        for j, name in enumerate(methods):
            rng = np.random.default_rng([seed, 2, list(METHODS).index(name), round(lam * 1000)])
            losses = release_losses(METHODS[name](setup.D, rng, draws, lam), setup.X_test, setup.y_test, lam)
            exact = (
                expected_losses(CLOSED_FORM[name](setup.D), lam, setup.X_test, setup.y_test)
                if name in CLOSED_FORM
                else (None, None)
            )
            for k, row in enumerate(cells):
                row[name] = float(losses[k].mean())
                row[f"{name} se"] = float(losses[k].std(ddof=1) / math.sqrt(draws))
                if exact[k] is not None:
                    row[f"{name} E"] = exact[k]
                if paper is not None and name in paper[lam]:
                    row[f"{name} paper"] = paper[lam][name][k]
            if progress is not None:
                progress(i * len(methods) + j + 1, total, f"lambda = {lam:g}, {name}")
        for k, v in enumerate(nonprivate_losses(setup.D, lam, setup.X_test, setup.y_test)):
            cells[k]["non-private"] = v
            if paper is not None and "non-private" in paper[lam]:
                cells[k]["non-private paper"] = paper[lam]["non-private"][k]
        rows += cells
    return rows


def _paper(table: dict, names) -> dict:
    """lambda -> {method: (unreg, reg)} from a table row (unregularised values, then regularised)."""
    k = len(names)
    return {lam: {n: (v[i], v[k + i]) for i, n in enumerate(names)} for lam, v in table.items()}


# ---------------------------------------------------------------------- claims
def _ratio_claim(rows, at_least: float, statement: str, paper_min: float):
    """E non-pers / E PDP-OP >= at_least in every row, on the exact expectations of a FIXED
    data set (``expected_losses``: no Monte Carlo error; the Monte Carlo means as evidence)."""
    mc = [r["non-pers"] / r["PDP-OP"] for r in rows]
    exact_ratio = [r["non-pers E"] / r["PDP-OP E"] for r in rows]
    worst = rows[int(np.argmin(exact_ratio))]
    return claim(
        statement,
        exact(
            f"smallest E non-pers / E PDP-OP over lambda and both losses (lambda = "
            f"{worst['lambda']:g}, {worst['loss']})",
            min(exact_ratio),
            above=at_least,
        ),
        evidence=f"Monte Carlo ratio: min {min(mc):.3g}, median {np.median(mc):.3g}, max {max(mc):.3g}; "
        f"paper's table: min {paper_min:.3g}",
    )


def _e(r, m: str) -> tuple[float, float]:
    """(the expected loss of method m in row r, its standard error): the exact expectation
    where there is one (se 0), else the Monte Carlo mean and its se."""
    return (r[f"{m} E"], 0.0) if f"{m} E" in r else (r[m], r[f"{m} se"])


def _le(rows, a: str, b: str, what: str):
    """E a - E b <= 0 in each row (normal intervals: the Monte Carlo means' se; exact where known)."""
    out = []
    for r in rows:
        (ea, sa), (eb, sb) = _e(r, a), _e(r, b)
        out.append(normal(f"lambda = {r['lambda']:g}, {r['loss']}: {what}", ea - eb, math.hypot(sa, sb), below=0.0))
    return out


def _mc_le(rows, a: str, b: str, statement: str):
    """'a <= b in every row': fails where an interval for E a - E b lies above 0, undecided
    where it straddles 0 (the two are close at large lambda, where the noise-free bias
    dominates both), holds where every interval lies below 0."""
    rel = [(r[b] - r[a]) / r[b] for r in rows]
    return claim(
        statement,
        _le(rows, a, b, f"E {a} - E {b}"),
        evidence=f"relative gain (b - a) / b from {min(rel):.1%} to {max(rel):.1%} (Monte Carlo means)",
    )


def _gain_claim(rows, lo: float, hi: float, statement: str):
    """The largest relative gain 1 - E PDP-OP / E J max over the rows lies in (lo, hi): the
    max of the rows' intervals (delta method: se = E_P se_J / J^2 with E_P exact)."""
    g, se = [], []
    for r in rows:
        (ep, sp), (ej, sj) = _e(r, "PDP-OP"), _e(r, "J max")
        g.append(1.0 - ep / ej)
        se.append(math.hypot(sp / ej, ep * sj / ej**2))
    i = int(np.argmax(g))
    return claim(
        statement,
        max_normal("largest gain 1 - E PDP-OP / E J max over lambda and both losses", g, se, above=lo, below=hi),
        evidence=f"largest at lambda = {rows[i]['lambda']:g} ({rows[i]['loss']}); paper: {_paper_gain(rows):.1%}",
    )


def _paper_gain(rows) -> float:
    return max(
        (r["J max paper"] - r["PDP-OP paper"]) / r["J max paper"]
        for r in rows
        if (r["lambda"], r["loss"]) != TABLE3_TYPO
    )


def _worst_claim(rows, statement: str):
    """E J mean >= E PDP-OP and >= E J max in every row (as _mc_le, the other way)."""
    ratio = [r["J mean"] / r["J max"] for r in rows]
    comps = [
        c
        for r in rows
        for c in (
            normal(
                f"lambda = {r['lambda']:g}, {r['loss']}: E J mean - E PDP-OP",
                _e(r, "J mean")[0] - _e(r, "PDP-OP")[0],
                math.hypot(_e(r, "J mean")[1], _e(r, "PDP-OP")[1]),
                above=0.0,
            ),
            normal(
                f"lambda = {r['lambda']:g}, {r['loss']}: E J mean - E J max",
                r["J mean"] - r["J max"],
                math.hypot(r["J mean se"], r["J max se"]),
                above=0.0,
            ),
        )
    ]
    return claim(statement, comps, evidence=f"J mean / J max from {min(ratio):.3g} to {max(ratio):.3g}")


def _setup_text(setup: Setup, draws: int, quick: bool, what: str) -> str:
    eps = setup.D.epsilons
    return (
        f"{what}: {setup.D.n} training / {setup.y_test.size} test records, d = {setup.D.values.shape[1]}; "
        f"profile sum eps = {eps.sum():.4g}, min eps = {eps.min():.4g}; {draws} releases per cell"
        f"{' (--quick)' if quick else ''}; seed {SEED}, split seed {SPLIT_SEED}"
    )


# ---------------------------------------------------------------------- reproductions
# The instance study (Table 1's claims). The paper's instance was one unrecorded draw of
# §4's synthetic setup, and its minimum ratio is set by the instance (module docstring of
# ``table1``), so the claims are read on a TYPICAL instance: the median over independent
# instances (seeds 0, 1, ...) of M = the smallest exact ratio E non-pers / E PDP-OP over
# lambda and both losses. Design (power computation): the paper's effect is its own M,
# PAPER_MIN_RATIO = 117.8 (Table 1, lambda = 200, unregularised); the spread of log M is
# PILOT_LOG_SD, measured on 1,000 pilot instances (seeds 10^6 .. 10^6 + 999:
# ``instance_min_ratios(range(10**6, 10**6 + 1000))``), raised to its 80% upper confidence
# bound (Browne 1995). If the median of M were the paper's 117.8 (log M normal, that sd), a
# fraction INSTANCE_P_BELOW of instances would fall below 100; INSTANCES is the fewest
# instances for which the order-statistic interval of the median then lies above 100 with
# probability >= 0.9 at the run's alpha = 1e-4 / 2 (two claims).
PAPER_MIN_RATIO = min(min(v[1] / v[0], v[3] / v[2]) for v in TABLE1.values())  # 117.8
PILOT_LOG_SD, PILOT_INSTANCES = 0.9922, 1000
_SD_UCL = PILOT_LOG_SD * math.sqrt((PILOT_INSTANCES - 1) / chi2.ppf(0.2, PILOT_INSTANCES - 1))
INSTANCE_P_BELOW = float(norm.cdf(-math.log(PAPER_MIN_RATIO / 100.0) / _SD_UCL))
INSTANCES = median_replications(INSTANCE_P_BELOW, ERROR / 2)
QUICK_INSTANCES = 200


def instance_min_ratios(seeds=range(QUICK_INSTANCES), grid=GRID_TABLE1) -> np.ndarray:
    """For the synthetic instances of ``seeds``: the minimum over lambda in ``grid`` and both
    losses of the exact ratio E non-pers / E PDP-OP (``expected_losses``; no Monte Carlo)."""
    out = []
    for seed in seeds:
        s = synthetic_setup(seed)
        out.append(
            min(
                q / p
                for lam in grid
                for p, q in zip(
                    expected_losses(s.D, lam, s.X_test, s.y_test), expected_losses(_flat(s.D), lam, s.X_test, s.y_test)
                )
            )
        )
    return np.array(out)


def instance_claims(mins, note: str, study: str) -> list[dict]:
    """Table 1's two claims on the instances' minimum ratios ``mins`` (one per instance): the
    median of M above 10 and above 100 (order-statistic intervals, ``verdicts.median``)."""
    what = "median over instances of M = min over lambda, losses of E non-pers / E PDP-OP"
    mins = np.asarray(mins, dtype=float)
    return decide(
        [
            claim(
                "§4.1 Table 1: PDP-OP's test loss is >= 10x below non-personalized at every lambda, unregularised and "
                "regularised, on a typical instance",
                median(what, mins, above=10.0),
                evidence=f"{np.mean(mins >= 10):.0%} of {mins.size} instances reach 10x at every lambda; {note}",
            ),
            claim(
                "§4.1: 'several orders of magnitude ... roughly 100': >= 100x at every lambda, both losses, on a "
                "typical instance",
                median(what, mins, above=100.0),
                evidence=study,
            ),
        ]
    )


def table1(plot=None, quick: bool = False, progress=None) -> dict:
    """Acharya et al. 2024 Table 1: PDP-OP vs the non-personalized baseline, synthetic d = 30, n = 100.

    The table: our seeded instance, Monte Carlo means and exact expectations beside the
    paper's. Claims (§4.1), on a typical instance of the setup (the median over ``INSTANCES``
    independent instances, ``quick``: 200, of M = the smallest exact ratio over lambda and
    both losses; the design is in the comment above ``PAPER_MIN_RATIO``): PDP-OP's losses are
    >= 10x below the baseline's at every lambda; and 'several orders of magnitude ... roughly
    100' read as >= 100x at every lambda (the paper's own table has >= 118x). Why an instance
    decides nothing here: at large lambda PDP-OP's loss is its noise-free bias (column
    ``PDP-OP bias share`` = loss of theta_bar / expected loss), about the test mean of y^2,
    which is 0.031 for our theta* and about 0.0024 for the authors' (their non-private
    regularised column at lambda = 500): M is set by the instance (ours: 19x), and over
    instances it spreads from about 10x to 600x with its median near 100."""
    draws = QUICK_DRAWS if quick else DRAWS
    setup = synthetic_setup()
    n_inst = QUICK_INSTANCES if quick else INSTANCES
    total = len(GRID_TABLE1) * 2 + 1
    rows = run(
        setup,
        GRID_TABLE1,
        ("PDP-OP", "non-pers"),
        draws,
        progress=None if progress is None else (lambda i, _, msg: progress(i, total, msg)),
        paper=_paper(TABLE1, ("PDP-OP", "non-pers")),
    )
    for r in rows:
        bias = release_losses(A.statistic(setup.D, r["lambda"])[None], setup.X_test, setup.y_test, r["lambda"])
        r["PDP-OP bias share"] = float(bias[("unreg", "reg").index(r["loss"])][0]) / r["PDP-OP E"]
    mins = instance_min_ratios(range(n_inst))
    if progress is not None:
        progress(total, total, f"{n_inst} instances: median M {np.median(mins):.3g}")
    ours = min(r["non-pers E"] / r["PDP-OP E"] for r in rows)
    below = [r for r in rows if r["non-pers E"] / r["PDP-OP E"] < 100]
    study = (
        f"{n_inst} instances (seeds 0..{n_inst - 1}, exact): >= 100x at every lambda in "
        f"{np.mean(mins >= 100):.0%}, >= 10x in {np.mean(mins >= 10):.0%}; M 5-95% "
        f"{np.percentile(mins, 5):.3g}-{np.percentile(mins, 95):.3g}; "
        f"our seeded instance: M = {ours:.3g}"
        + (
            f" ({len(below)} rows below 100x, all with PDP-OP bias share >= "
            f"{min(r['PDP-OP bias share'] for r in below):.2f})"
            if below
            else ""
        )
        + f"; the paper's: {PAPER_MIN_RATIO:.3g}; design: {INSTANCES} instances for power 0.9 at the paper's M"
    )
    if plot:
        _plot(plot, rows, ("PDP-OP", "non-pers"), "Acharya et al. 2024 Table 1 (synthetic d = 30, n = 100)")
    claims = instance_claims(mins, f"our seeded instance: M = {ours:.3g}; the paper's: {PAPER_MIN_RATIO:.3g}", study)
    return {
        "setup": _setup_text(setup, draws, quick, "synthetic") + f"; claims on {n_inst} instances",
        "table": rows,
        "claims": claims,
    }


def table3(plot=None, quick: bool = False, progress=None) -> dict:
    """Acharya et al. 2024 Table 3: PDP-OP vs Jorgensen et al. (t = max eps, mean eps), synthetic d = 30, n = 100.

    Claims (§4.2), on our seeded instance, each cell's expectation against its Monte Carlo
    interval (PDP-OP's exact, the Jorgensen columns' Monte Carlo; ``audits/engine/verdicts.py``):
    PDP-OP is at or below Jorgensen max in every cell (a cell whose interval straddles 0 is
    undecided: the two are close at large lambda, where the noise-free bias dominates both);
    the largest gain is 'roughly 20 percent', in (10%, 30%); Jorgensen mean is the worst of
    the three. Same data and PDP-OP noise streams as ``acharya2024-table1``."""
    draws = QUICK_DRAWS if quick else DRAWS
    setup = synthetic_setup()
    rows = run(
        setup,
        GRID_TABLE3,
        ("PDP-OP", "J max", "J mean"),
        draws,
        progress=progress,
        paper=_paper(TABLE3, ("PDP-OP", "J max", "J mean", "non-private")),
    )
    if plot:
        _plot(plot, rows, ("PDP-OP", "J max", "J mean"), "Acharya et al. 2024 Table 3 (synthetic d = 30, n = 100)")
    return {
        "setup": _setup_text(setup, draws, quick, "synthetic"),
        "table": rows,
        "claims": decide(
            [
                _mc_le(rows, "PDP-OP", "J max", "§4.2 Table 3: PDP-OP <= Jorgensen max at every lambda, both losses"),
                _gain_claim(
                    rows,
                    0.10,
                    0.30,
                    "§4.2: 'improvements in loss of up to roughly 20 percent under the max "
                    "threshold': the largest gain is in (10%, 30%)",
                ),
                _worst_claim(
                    rows,
                    "§4.2: Jorgensen mean is consistently worse: the worst of the three at every lambda, both losses",
                ),
            ]
        ),
    }


def medical(plot=None, quick: bool = False, progress=None) -> dict:
    """Acharya et al. 2024 Tables 2 and 4: PDP-OP vs non-personalized and Jorgensen et al. on the Medical Cost data.

    Data: the shipped insurance.csv (sha256-checked), one-hot with every level, intercept,
    the paper's 80/20 split (``paper_split``, = scikit-learn's seed-21 split); numeric
    columns scaled with PUBLIC bounds (``PUBLIC_BOUNDS``), not the data's min and max, so
    our losses are on a slightly different scale from the paper's (module docstring).
    Claims: (data check) OLS's test loss on our split, rescaled to the paper's min-max
    label scale, is Table 4's 9.43e-3; (Table 2) PDP-OP >= 10x below non-personalized at
    every lambda (the paper's minimum is 81x, lambda = 5), on exact expectations; (Table 4)
    PDP-OP <= Jorgensen max and Jorgensen mean the worst, each cell decided as in
    ``acharya2024-table3``. The data is fixed (real), so the population is the noise."""
    draws = QUICK_DRAWS if quick else DRAWS
    setup = medical_setup()
    paper = _paper(TABLE4, ("PDP-OP", "J max", "J mean", "non-private"))
    for lam, v in _paper(TABLE2, ("PDP-OP", "non-pers")).items():
        paper[lam].update(v)
    rows = run(setup, GRID_MEDICAL, ("PDP-OP", "non-pers", "J max", "J mean"), draws, progress=progress, paper=paper)
    paper_min = min(min(v[1] / v[0], v[3] / v[2]) for v in TABLE2.values())
    ols = rows[0]["non-private"] / _label_rescale(load_medical_cost()["charges"])
    if plot:
        _plot(plot, rows, ("PDP-OP", "non-pers", "J max", "J mean"), "Acharya et al. 2024 Tables 2, 4 (Medical Cost)")
    return {
        "setup": _setup_text(setup, draws, quick, "Medical Cost"),
        "table": rows,
        "claims": decide(
            [
                claim(
                    "data check: OLS test loss on our split, on the paper's min-max label scale, rounds to Table 4's "
                    "non-private 9.43e-3 (the split is the paper's)",
                    exact("OLS test loss, rescaled", ols, above=9.425e-3, below=9.435e-3),
                    evidence=f"ours {rows[0]['non-private']:.6g} on the public-bounds scale; / ((max - min) / 65000)^2",
                ),
                _ratio_claim(
                    rows,
                    10.0,
                    "§4.1 Table 2: PDP-OP's test loss is >= 10x below non-personalized at every lambda, both losses",
                    paper_min,
                ),
                _mc_le(rows, "PDP-OP", "J max", "§4.2 Table 4: PDP-OP <= Jorgensen max at every lambda, both losses"),
                _worst_claim(
                    rows, "§4.2 Table 4: Jorgensen mean is the worst of the three at every lambda, both losses"
                ),
            ]
        ),
    }


def _label_rescale(charges) -> float:
    """Squared ratio of our label scale to the paper's: our y = charges / 65000, theirs
    (charges - min) / (max - min); OLS with an intercept fits the same predictions in dollars
    under any affine rescaling of the columns, so its test loss scales by this factor."""
    lo, hi = PUBLIC_BOUNDS["charges"]
    return ((charges.max() - charges.min()) / (hi - lo)) ** 2


def _plot(path, rows, methods, title: str) -> None:
    plt = pyplot()  # the plot extra; a clear ImportError without it
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    unreg = [r for r in rows if r["loss"] == "unreg"]
    lam = [r["lambda"] for r in unreg]
    for m in methods:
        (line,) = ax.plot(lam, [r[m] for r in unreg], marker="o", label=m)
        if f"{m} paper" in unreg[0]:
            ax.plot(lam, [r[f"{m} paper"] for r in unreg], ls="--", color=line.get_color(), label=f"{m} (paper)")
    ax.set(xscale="log", yscale="log", xlabel="lambda", ylabel="unregularised test loss")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)


register_reproduction("acharya2024-table1", table1)
register_reproduction("acharya2024-table3", table3)
register_reproduction("acharya2024-medical", medical)
