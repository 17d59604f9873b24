"""Reproduction ``whitebox-sensitivity``: the realised sensitivity ratio of every reference
entry that declares its noise (method in ``audits/engine/whitebox.py``).

Each entry gets search spaces over the differing unit's data within the declared bounds,
on the entry's own dataset and, where it matters, other dataset shapes:

- amin2019.capped-sum: add a user of 1 or 3 records, values in [0, 2T]. Closed form: a
  user whose total reaches T moves g_T by T = Delta: ratio 1.
- epasto2020.wa / sample-limiting: replace all values of the heaviest or the lightest
  user, each record's value in [0, B] on both sides. Closed form (Lemma 1): values 0 vs B
  of a user with the largest weight sum: ratio 1 (a heavy user: Lemma 3 equalises them).
- epasto2020.gwa / sample-limited-ols: replace the labels of the heaviest user of each
  feature group, each in [0, B] on both sides. Closed form: on the orthogonal data every
  record moves one coordinate, so labels 0 vs B reach B sum_{j,i in S_l} |c_ji| = Delta_1: 1.
- amin2019.erm-output-perturbation-ridge (d = 1): add a user of tau records with features
  in [-1, 1] and labels in [-1, 1]. Closed form ``erm.ridge_realised_ratio`` (0.990 at
  Lambda = 10^4).
- amin2019.erm-output-perturbation (logistic, d = 2): features in the unit disc (polar
  parameters), labels +-1 enumerated: remove the heavy user (its kept records' features
  searched), add a user (all +1 or all -1), and a second shape where the light users'
  common feature is searched as well. The issue asks whether any pair approaches the
  bound. It cannot (derived here, not from the paper): the minimiser of
  sum_i w_i l_i + (Lambda/2)||theta||^2 satisfies Lambda theta = -sum_i w_i grad l_i with
  sum w_i <= 1 and ||grad l_i|| <= R, so ||theta*|| <= R / Lambda on every dataset; the
  logistic record gradient -y x sigma(-y theta.x) then has norm <= R sigma(R^2 / Lambda),
  and CMS11's argument (Lemma 7, ``reference/amin2019_erm.py``) run with this L instead of
  L = R bounds every pair's ratio by sigma(R^2 / Lambda) = 0.525 at Lambda = 10, R = 1.
  The search's best pair (the registry's) reaches 0.488: 93% of what is possible.

- epasto2020.weighted-erm (noisy GD, Gaussian noise): the noise-free statistic of one step
  is the weighted gradient sum at the current iterate theta, which the previous releases
  make public, so theta is searched too (||theta|| <= radius), with the heaviest user's
  records given one feature per side (identical records align their gradient changes,
  the sum's worst case) and labels +1 vs -1 or +1 vs +1. The ratio is to the declared
  Delta_2 = 2 L max_l sum_{i in S_l} c_i that the noise multiplier is applied to.

- zhao2024.hlm (d = 1): the ratio of ||Clip mu0(D) - Clip mu0(D')|| to the calibrated B, user 0's
  item searched on both sides in [-200, 200] R, on the registry's pair dataset (1,060 of 2,000
  one-item users in a cluster, the rest far on both sides) and on the imbalanced dataset
  (``zhao2024.audit_dataset``, its largest-w_k T_k user). Closed form on the first: the move
  2 w T / K over B, K the cluster's weight (0.943; registry/zhao2024.py). B bounds the move
  only where PTR passes (gamma >= 1), which holds on every pair of both spaces.

- acharya2024.pdp-op (d = 1), -pdp-op-d2 and -nonpersonalized: per record (the audited
  records: most stringent, middle, most lenient), record i's (x_i, y_i) and (x'_i, y'_i)
  searched over [0, 1]^d x [-1, 1] on both sides; the ratio is to that record's own
  Delta_i (Theorem A.4), since the claim is eps_i-DP for record i.

The best pair of the logistic entry is then audited (10^6 per side unless ``quick``).
"""

from __future__ import annotations

import math

import numpy as np

from userdp.reference import amin2019_erm as AE
from userdp.reference import epasto2020 as EW
from userdp.reference import epasto2020_erm as EE
from userdp.audits.engine.ceiling import NoiseModel

from userdp.audits.engine.verdicts import claim, decide, exact
from userdp.audits.engine.whitebox import Space, realised_ratio, search

from userdp.audits.registry import get, register_reproduction
from userdp.audits.registry import amin2019 as RA
from userdp.audits.registry import epasto2020_gwa as RG
from userdp.audits.registry import amin2019_erm as RE
from userdp.audits.registry import epasto2020_erm as REE
from userdp.audits.registry import zhao2024 as RZ

__all__ = [
    "ACHARYA_ENTRIES",
    "ENTRIES",
    "TOLERANCE",
    "hlm_spaces",
    "logistic_ratio_bound",
    "spaces_for",
    "weighted_erm_step",
    "whitebox_sensitivity",
]

TOLERANCE = 1e-9  # ratios above 1 + TOLERANCE are understated sensitivities


def _compact(x) -> str:
    """A user's values for the report: the list when short, else "k x v" runs by value."""
    x = np.round(np.asarray(x, dtype=float), 3)
    if x.size <= 6:
        return str(x.tolist())
    vals, counts = np.unique(x, return_counts=True)
    return "{" + ", ".join(f"{c} x {v:g}" for v, c in zip(vals, counts)) + "}"


def _capped_sum_spaces(params):
    T = params["T"]
    D = RA._default_dataset()
    spaces = []
    for k in (1, 3):

        def build(theta, k=k):
            return RA._add(D, theta, "").first, RA._add(D, theta, "").second

        spaces.append(
            Space(
                f"add a user of {k} record(s), values in [0, 2T]",
                ((0.0, 2.0 * T),) * k,
                build,
                starts=((T / k,) * k,),
                describe=lambda th, k=k: f"add a user of {k} record(s) with values {np.round(th, 4).tolist()}",
            )
        )
    return spaces


def _replace_user_spaces(D, users, field: str, B: float, start: tuple[float, float]) -> list[Space]:
    """For each user u: u's records' ``field`` ("values" or "labels") set from theta on both
    sides, each in [0, B]; theta = (the s values in D, the s values in D')."""
    spaces = []
    for u in users:
        idx = D.records_of(u)
        s = idx.size

        def build(theta, idx=idx, s=s):
            f1, f2 = getattr(D, field).copy(), getattr(D, field).copy()
            f1[idx], f2[idx] = theta[:s], theta[s:]
            return D.with_fields(**{field: f1}), D.with_fields(**{field: f2})

        spaces.append(
            Space(
                f"replace user {u}'s {s} {field}, each in [0, B]",
                ((0.0, B),) * (2 * s),
                build,
                starts=((start[0] * B,) * s + (start[1] * B,) * s,),
                describe=lambda th, u=u, s=s: (
                    f"user {u} ({s} records): {field} {_compact(th[:s])} vs {_compact(th[s:])}"
                ),
            )
        )
    return spaces


def _wa_spaces(setup, params):
    D = setup.pairs[0].first
    users = dict.fromkeys([int(D.users[np.argmax(D.counts)]), int(D.users[np.argmin(D.counts)])])
    return _replace_user_spaces(D, users, "values", params["B"], (0.25, 0.75))


def _gwa_spaces(setup, params):
    D = RG.orthogonal_dataset()
    n1 = len(RG.E1_SIZES)
    users = (int(np.argmax(D.counts[:n1])), n1 + int(np.argmax(D.counts[n1:])))  # heaviest of each group
    return _replace_user_spaces(D, users, "labels", params["B"], (0.4, 0.6))


def _ridge_spaces(params):
    tau = params["tau"]
    D = RE.ridge_default_dataset(params["n_min"])
    u = int(D.users.max()) + 1

    def build(theta):
        x, y = theta[:tau].reshape(tau, 1), theta[tau:]
        return D, AE.RELATION.neighbour(D, u, x, labels=y)

    return [
        Space(
            f"add a user of {tau} records, x in [-1, 1], y in [-1, 1]",
            ((-1.0, 1.0),) * (2 * tau),
            build,
            starts=((0.5,) * tau + (0.5,) * tau,),
            describe=lambda th: (
                f"add a user with x = {np.round(th[:tau], 3).tolist()}, "
                f"y = {np.round(th[tau:], 3).tolist()} to {D.n} records at x = 1, y = -1"
            ),
        )
    ]


def _disc(theta) -> np.ndarray:
    """(r_1, phi_1, r_2, phi_2, ...) -> points of the unit disc, shape (k, 2)."""
    r, phi = theta[0::2], theta[1::2]
    return np.c_[r * np.cos(phi), r * np.sin(phi)]


def _logistic_spaces(params):
    tau, n_min = params["tau"], params["n_min"]
    D = RE.amin_default_dataset(tau, n_min)
    heavy = D.records_of(0)
    kept = heavy[:tau]
    polar = ((0.0, 1.0), (0.0, 2 * math.pi))
    start = (1.0, math.pi / 4) * tau
    spaces = []

    def remove(theta):
        X = D.values.copy()
        X[kept] = _disc(theta)
        D1 = D.with_fields(values=X)
        return D1, AE.RELATION.neighbour(D1, 0, None)

    spaces.append(
        Space(
            f"remove the heavy user, its {tau} kept records' features in the unit disc",
            polar * tau,
            remove,
            starts=((1.0, 0.0) * tau, start),
            describe=lambda th: f"remove user 0 with kept features {np.round(_disc(th), 3).tolist()}, y = -1",
        )
    )
    for label in (1.0, -1.0):

        def add(theta, label=label):
            return D, AE.RELATION.neighbour(D, int(D.users.max()) + 1, _disc(theta), labels=np.full(tau, label))

        spaces.append(
            Space(
                f"add a user of {tau} records, y = {label:+.0f}, features in the unit disc",
                polar * tau,
                add,
                starts=((1.0, 0.0) * tau, start),
                describe=lambda th, label=label: (
                    f"add a user with features {np.round(_disc(th), 3).tolist()}, y = {label:+.0f}"
                ),
            )
        )
    light = np.setdiff1d(np.arange(D.n), heavy)

    def shape(theta):  # the light users' common feature searched too
        X = D.values.copy()
        X[light] = _disc(theta[:2])[0]
        X[kept] = _disc(theta[2:])
        D1 = D.with_fields(values=X)
        return D1, AE.RELATION.neighbour(D1, 0, None)

    spaces.append(
        Space(
            "remove the heavy user; light users' common feature searched",
            polar * (1 + tau),
            shape,
            starts=((1.0, 0.0) * (1 + tau),),
            describe=lambda th: (
                f"light users at {np.round(_disc(th[:2])[0], 3).tolist()}, remove user 0 "
                f"with kept features {np.round(_disc(th[2:]), 3).tolist()}"
            ),
        )
    )
    return spaces


def weighted_erm_step(params):
    """(noise model, Delta_2, spaces) of one noisy-GD step of epasto2020.weighted-erm; the
    statistic's input is (theta, dataset): theta, the public iterate, is searched too."""
    D = REE.epasto_default_dataset()
    eps, delta, T = params["epsilon"], params["delta"], params["T"]
    c, _ = EW.optimal_weights(D, eps, 1.0)
    noise = NoiseModel(
        "gaussian", lambda td: EE.statistic(td[1], td[0], c), EE.noise_scale(D, c, epsilon=eps, delta=delta, T=T)
    )
    u = int(D.users[np.argmax(D.counts)])
    idx = D.records_of(u)
    polar = ((0.0, 1.0), (0.0, 2 * math.pi))
    spaces = []
    for label2 in (-1.0, 1.0):

        def build(theta, label2=label2):
            t, v, v2 = _disc(theta)  # iterate, the user's feature in D, in D'
            X1, X2 = D.values.copy(), D.values.copy()
            y1, y2 = D.labels.copy(), D.labels.copy()
            X1[idx], X2[idx], y1[idx], y2[idx] = v, v2, 1.0, label2
            return (t, D.with_fields(values=X1, labels=y1)), (t, D.with_fields(values=X2, labels=y2))

        spaces.append(
            Space(
                f"iterate theta and user {u}'s {idx.size} records: y = +1 vs {label2:+.0f}",
                polar * 3,
                build,
                starts=((1.0, 0.0, 1.0, math.pi, 1.0, 0.0),),
                describe=lambda th, label2=label2: (
                    f"theta = {np.round(_disc(th)[0], 3).tolist()}, user {u}'s "
                    f"records at {np.round(_disc(th)[1], 3).tolist()} (y = +1) vs "
                    f"{np.round(_disc(th)[2], 3).tolist()} (y = {label2:+.0f})"
                ),
            )
        )
    return noise, EE.sensitivity(D, c), spaces


ACHARYA_ENTRIES = ("acharya2024.pdp-op", "acharya2024.pdp-op-d2", "acharya2024.nonpersonalized")


def acharya_record_space(name: str, record: int):
    """(noise model, Delta_i, [Space]) for record i of an Acharya entry: record i's (x, y)
    on each side searched over [0, 1]^d x [-1, 1], the rest of the audit dataset fixed."""
    from userdp.reference import acharya2024 as AC
    from userdp.audits.registry import acharya2024 as RAC

    entry = get(name)
    setup, lam = entry.setup(), entry.params["Lambda"]
    d = setup.pairs[0].first.values.shape[1]
    D = RAC.audit_dataset(d)  # every record at x = 0.5 (the pairs move one)
    profile = D.epsilons if name != "acharya2024.nonpersonalized" else AC.nonpersonalized_epsilons(D)
    delta_i = float(AC.sensitivity(D.with_fields(epsilons=profile), lam)[record])

    def build(theta):
        x1, y1, x2, y2 = theta[:d], theta[d], theta[d + 1 : 2 * d + 1], theta[2 * d + 1]
        return AC.RELATION.neighbour(D, record, x1, y1), AC.RELATION.neighbour(D, record, x2, y2)

    box = ((0.0, 1.0),) * d + ((-1.0, 1.0),)
    space = Space(
        f"record {record}: (x, y) vs (x', y') in [0, 1]^{d} x [-1, 1]",
        box * 2,
        build,
        starts=((0.5,) * d + (-0.5,) + (0.5,) * d + (0.5,),),
        describe=lambda th: (
            f"record {record}: x = {np.round(th[:d], 3).tolist()}, y = {th[d]:.3f} vs "
            f"x' = {np.round(th[d + 1 : 2 * d + 1], 3).tolist()}, y' = {th[2 * d + 1]:.3f}"
        ),
    )
    return setup.noise, delta_i, [space]


def logistic_ratio_bound(Lambda: float, R: float = 1.0) -> float:
    """sigma(R^2 / Lambda): no pair of the logistic entry moves theta-hat by more than this
    share of Delta_2 (module docstring; derived here, not from the paper)."""
    return 1.0 / (1.0 + math.exp(-R * R / Lambda))


def _acharya_closed_forms() -> dict:
    """d = 1, lambda = 100, the other records at x = 0.5: record i moved at x = 1 from y = -1
    to +1 shifts theta_bar = sum w x y / (sum w x^2 + lambda) by 2 w_i / (S + lambda),
    S = sum_{j != i} w_j / 4 + w_i, against Delta_i = 2 w_i (B + 1) / lambda, B = 1 / lambda:
    ratio lambda / ((S + lambda)(1 + 1/lambda)). (That the corner is the worst case is what
    the search checks.)"""
    from userdp.audits.registry import acharya2024 as RAC

    lam = 100.0
    out = {}
    for name, w in (
        ("acharya2024.pdp-op", np.asarray(RAC.PROFILE) / sum(RAC.PROFILE)),
        ("acharya2024.nonpersonalized", np.full(len(RAC.PROFILE), 1 / len(RAC.PROFILE))),
    ):
        for i in (0, 4, 7):
            S = (w.sum() - w[i]) / 4 + w[i]
            out[f"{name} (record {i})"] = lam / ((S + lam) * (1 + 1 / lam))
    return out


def hlm_spaces():
    """(noise, 1, spaces) of the HLM row (module docstring): the statistic is Clip(mu0) / B, so the
    ratio to sensitivity 1 is the ratio to each dataset's own B."""
    from userdp.reference import zhao2024 as Z

    p = RZ._params()

    def scaled(D):  # in units of the dataset's own B (public: it reads the counts)
        q = Z.release_plan(D, **p)
        return q.clipped / q.B

    noise = NoiseModel("gaussian", scaled, lambda D: (lambda q: q.sigma_pass / q.B)(Z.release_plan(D, **p)))
    spaces = []
    for label, D, k in (
        ("the registry's cluster dataset", RZ.worst_case_pair(1).first, 0),
        ("the imbalanced dataset", RZ.audit_dataset(1), None),
    ):
        plan = Z.release_plan(D, **p)
        k = int(np.argmax(plan.w * plan.T)) if k is None else k
        rows = D.user_ids == D.users[k]

        def build(theta, D=D, rows=rows):
            a, b = np.array(D.values), np.array(D.values)
            a[rows], b[rows] = theta[0], theta[1]
            return D.with_fields(values=a), D.with_fields(values=b)

        spaces.append(
            Space(
                f"{label}: user {k}'s items at a vs b, in [-200, 200] R",
                ((-200.0, 200.0),) * 2,
                build,
                starts=((-100.0, 100.0),),
                describe=lambda th, k=k, label=label: f"{label}: user {k}'s items at {th[0]:.3g} vs {th[1]:.3g}",
            )
        )
    return noise, 1.0, spaces


def _params_text(params) -> str:
    return ", ".join(f"{k} = {v:g}" for k, v in params.items())


def _closed_forms(params_of) -> dict:
    ridge = params_of["amin2019.erm-output-perturbation-ridge"]
    out = _acharya_closed_forms()
    return out | {
        "amin2019.capped-sum": 1.0,
        "epasto2020.wa": 1.0,
        "epasto2020.sample-limiting": 1.0,
        "epasto2020.gwa": 1.0,
        "epasto2020.sample-limited-ols": 1.0,
        "amin2019.erm-output-perturbation-ridge": RE.ridge_realised_ratio(ridge["Lambda"]),
    }


ENTRIES = (
    "amin2019.capped-sum",
    "epasto2020.wa",
    "epasto2020.sample-limiting",
    "epasto2020.gwa",
    "epasto2020.sample-limited-ols",
    "amin2019.erm-output-perturbation-ridge",
    "amin2019.erm-output-perturbation",
)


def spaces_for(name: str, setup, params) -> list[Space]:
    """The white-box search spaces of the registry entry ``name`` (its parameters ``params``)."""
    if name == "amin2019.capped-sum":
        return _capped_sum_spaces(params)
    if name in ("epasto2020.wa", "epasto2020.sample-limiting"):
        return _wa_spaces(setup, params)
    if name in ("epasto2020.gwa", "epasto2020.sample-limited-ols"):
        return _gwa_spaces(setup, params)
    if name == "amin2019.erm-output-perturbation-ridge":
        return _ridge_spaces(params)
    if name == "amin2019.erm-output-perturbation":
        return _logistic_spaces(params)
    raise KeyError(f"no white-box search space for {name!r}; known: {ENTRIES}")


def whitebox_sensitivity(plot=None, quick: bool = False, progress=None) -> dict:
    """Realised sensitivity ratio per entry; the best logistic pair audited."""
    from userdp.audits import audit
    from userdp.reference.neighbours import NeighbourPair

    rows, results, params_of = [], {}, {}
    starts = 2 if quick else 6
    for i, name in enumerate(ENTRIES):
        entry = get(name)
        params_of[name] = dict(entry.params)
        setup = entry.setup()
        eps = setup.claim.as_eps_delta()[0]
        res = search(setup.noise, spaces_for(name, setup, entry.params), eps, random_starts=starts, seed=i)
        results[name] = res
        rows.append(
            {"entry": name, "realised_ratio": res.ratio, "best_pair": res.description, "evaluations": res.evaluations}
        )
        if progress is not None:
            progress(i + 1, len(ENTRIES) + 2, f"{name}: ratio {res.ratio:.6f}")
    noise, delta2, spaces = weighted_erm_step(dict(get("epasto2020.weighted-erm").params))
    res = search(noise, spaces, 1.0, sensitivity=delta2, random_starts=starts, seed=len(ENTRIES))
    rows.append(
        {
            "entry": "epasto2020.weighted-erm (one GD step)",
            "realised_ratio": res.ratio,
            "best_pair": res.description,
            "evaluations": res.evaluations,
        }
    )
    for name in ACHARYA_ENTRIES:
        for record in (0, 4, 7):  # the audited records (registry/acharya2024.py)
            noise, delta_i, spaces = acharya_record_space(name, record)
            res = search(noise, spaces, 1.0, sensitivity=delta_i, random_starts=starts, seed=record)
            rows.append(
                {
                    "entry": f"{name} (record {record})",
                    "realised_ratio": res.ratio,
                    "best_pair": res.description,
                    "evaluations": res.evaluations,
                }
            )
    noise, B, spaces = hlm_spaces()
    res = search(noise, spaces, 1.0, sensitivity=B, random_starts=starts - 2, seed=len(ENTRIES) + 1)
    rows.append(
        {
            "entry": "zhao2024.hlm (ratio to B)",
            "realised_ratio": res.ratio,
            "best_pair": res.description,
            "evaluations": res.evaluations,
        }
    )
    closed = _closed_forms(params_of)
    closed["zhao2024.hlm (ratio to B)"] = RZ.realised_share(RZ.worst_case_pair(1))
    for r in rows:
        r["closed_form"] = closed.get(r["entry"])
    worst = max(r["realised_ratio"] for r in rows)

    name = "amin2019.erm-output-perturbation"
    entry, best = get(name), results[name]
    setup = entry.setup()
    D, D2 = best.pair
    samples = 100_000 if quick else 1_000_000
    pair = NeighbourPair(D, D2, AE.RELATION.name, 0, best.description)
    a = audit(
        setup.mechanism,
        [pair, setup.pairs[0]],
        setup.claim,
        samples=samples,
        seed=0,
        output="vector",
        noise_family="l2laplace",
        confirm_pairs=2,
    )
    eps = setup.claim.as_eps_delta()[0]
    cap = logistic_ratio_bound(entry.params["Lambda"])
    registry_ratio = max(realised_ratio(setup.noise, p.first, p.second, eps) for p in setup.pairs)
    if progress is not None:
        progress(
            len(ENTRIES) + 2, len(ENTRIES) + 2, f"audited the best logistic pair: eps_lb {a.epsilon_lower_bound:.4f}"
        )
    setup_text = (
        f"logistic output perturbation ({_params_text(entry.params)}): the best pair found, "
        f"{best.description}, moves theta-hat by {best.ratio:.4f} Delta_2 (the registry's pairs: "
        f"{registry_ratio:.4f}); audited at {samples} outputs per side with the registry's pairs: "
        f"eps_lb {a.epsilon_lower_bound:.4f} on {a.witness.pair_description!r}"
    )
    return {
        "setup": setup_text,
        "table": rows,
        "logistic": {
            "best_ratio": best.ratio,
            "registry_pairs_ratio": registry_ratio,
            "best_pair": best.description,
            "audit_eps_lb": a.epsilon_lower_bound,
            "audit_witness": a.witness.pair_description,
            "samples": samples,
        },
        "claims": decide(
            [
                claim(
                    f"no realised ratio exceeds 1 + {TOLERANCE:g} (no understated sensitivity)",
                    exact(
                        "largest realised ratio over the entries (a seeded search: exact)", worst, below=1 + TOLERANCE
                    ),
                ),
                claim(
                    "the search reaches the closed-form worst case where one is known (to 1e-6)",
                    [
                        exact(
                            f"{r['entry']}: realised - closed form",
                            r["realised_ratio"] - r["closed_form"],
                            above=-1e-6,
                            below=1e-6,
                        )
                        for r in rows
                        if r["closed_form"] is not None
                    ],
                ),
                claim(
                    "logistic: no pair beats the derived bound sigma(R^2 / Lambda) on the ratio "
                    "(the declared Delta_2 cannot be approached), and the search comes within 10% of it",
                    exact(f"best logistic ratio / bound {cap:.4f}", best.ratio / cap, above=0.9, below=1.0),
                    evidence="module docstring",
                ),
            ]
        ),
    }


register_reproduction("whitebox-sensitivity", whitebox_sensitivity)
