"""The test-vector designs of wilson2020 ("spec §N": docs/papers/wilson2020.md, "The specification, by
section"), one per validate spec of ``specs.py``: datasets and public
parameters, each flagged with the bug classes it exposes; ``audits/validation/vectors.py`` computes
the expected values from the reference's noise-free stages (``statistic`` on the dataset as given,
``sensitivity``, ``noise_scale``). The bounding stage is random (a uniform sample drawn from the
caller's generator) and no vector pins it: the property suite checks it (properties/wilson2020.py)."""

from __future__ import annotations

from userdp.properties.wilson2020 import REFERENCE, BoundAdapter
from userdp.audits.papers._vectors import spec_reference
from userdp.audits.papers.wilson2020 import audits as RA
from userdp.audits.papers.wilson2020.specs import SPECS, STAGES, wide_dataset, params_of
from userdp.audits.validation.vector_cases import Design, StatCase, VectorCase, register_design
from userdp.reference.data import UserDataset

__all__: list[str] = []


# Why an algorithm of this paper has no statistical vector (yet): the files' statisticalNote, printed in
# docs/vectors.md ("Statistical vectors").
_NO_STATISTICAL = {
    "wilson2020.mean": (
        "the release is a noisy sum over max(1, a noisy count): a ratio of two noisy values, with no "
        "closed-form law in the files' families"
    ),
    "wilson2020.mean-gaussian": ("as wilson2020.mean: a ratio of two noisy values"),
}


def _flags(algorithm: str) -> dict:
    """The flags of the three valid vectors (base, wide, eps = 0.5) of ``algorithm``."""
    metric, noise, bounding = SPECS[algorithm]
    if metric == "count":
        return {"base": (), "wide": (), "half": ("noise-formula",) if noise == "gaussian" else ()}
    if metric == "mean":
        return {"base": ("noise-formula",), "wide": ("noise-formula",), "half": ()}
    base = ("per-record-bound",) if bounding == "sum" else ("missing-clipping",)
    wide = ("understated-sensitivity", "noise-formula") if noise == "laplace" else ("understated-sensitivity",)
    return {"base": base, "wide": wide, "half": ()}


_WHY = {
    "missing-clipping": "partition 2 holds 0.25 + 0.75 + 1.5 = 2.5 clamped per record to [-1, 2]; clamping the "
    "partition's total instead gives 2",
    "per-record-bound": "user 2's partition-2 sum 0.75 + 1.5 = 2.25 is clamped once to 2 (p2 = 2.25); clamping each "
    "record instead gives 2.5",
    "understated-sensitivity": "bounds [-5, 1]: the per-partition sensitivity is max(|-5|, |1|) = 5, "
    "not max(-5, 1) = 1",
    "noise-formula": "the scale is the formula of docs/papers/wilson2020.md, spec §4: L0 Linf max(|lower|, |upper|) "
    "/ eps (not Linf (upper - lower)), "
    "the analytic Gaussian sigma (not the classical one, larger at eps < 1), MEAN's normalised sum Linf (upper - "
    "lower) / 2 (not the plain sum's Linf max|v|)",
}


def _comment(what: str, flags: tuple) -> str:
    return what + "".join(f"; {_WHY[f]}" for f in flags)


def _cases(algorithm: str):
    def cases() -> list:
        f = _flags(algorithm)
        D, W6 = RA.base_dataset(), wide_dataset()
        sum_bounds = (-5.0, 1.0) if SPECS[algorithm][0] == "sum" else None
        p = params_of(algorithm, 2, 2, 1.0)
        V = VectorCase
        return [
            V(D, p, f["base"], _comment("three users over [0, 1, 2], L0 = Linf = 2, eps = 1", f["base"])),
            V(
                W6,
                params_of(algorithm, 1, 1, 4.0, public=[0, 1, 2, 3], bounds=sum_bounds),
                f["wide"],
                _comment("six users over 5 partitions (4 not public), L0 = Linf = 1, eps = 4", f["wide"]),
            ),
            V(D, params_of(algorithm, 3, 1, 0.5), f["half"], _comment("L0 = 3, Linf = 1, eps = 0.5", f["half"])),
            V(D, {**p, "epsilon": 0.0}, ("input-not-refused",), "epsilon = 0: noise of scale L1 / 0", "invalid"),
            V(D, {**p, "L0": 0}, ("input-not-refused",), "L0 = 0: no partition per user", "invalid"),
        ]

    return cases


def _statistical(algorithm: str):
    """Partition 2 of the base dataset with and without user 2 (two records there): every user is within L0 =
    Linf = 2, so the bounding keeps every record and partition 2's release is its statistic plus one noise draw.
    MEAN has no such vector: its release, a ratio of two noisy sums, has no closed-form law here."""
    metric, noise, _ = SPECS[algorithm]
    if metric == "mean":
        return None

    def cases() -> list:
        D = RA.base_dataset()
        keep = D.user_ids != 2
        D2 = UserDataset.from_arrays(D.values[keep], D.user_ids[keep], partition_ids=D.partition_ids[keep])
        p = params_of(algorithm, 2, 2, 1.0)
        return [
            StatCase(
                D,
                D2,
                p,
                {"epsilon": p["epsilon"], "delta": p["delta"]},
                "the three users of vector 1 and the same without user 2 (records 0.75 and 1.5 in partition 2), "
                f"L0 = Linf = 2, eps = 1: partition 2's release is {noise} around its statistic on each side, at "
                "the vector's noise scale",
                family=noise,
                index=2,
            )
        ]

    return cases


for _name in SPECS:
    register_design(
        Design(
            _name,
            lambda: REFERENCE,
            spec_reference(_name),
            lambda: BoundAdapter,
            STAGES,
            ("statistic",),
            _cases(_name),
            "add/remove user",
            "userdp.reference.wilson2020: statistic (COUNT / SUM / MEAN per public partition of the records as "
            "given, clamped), sensitivity (L1 = L0 Linf_value), noise_scale (L1 / eps, or the analytic Gaussian "
            "sigma for sqrt(L0) Linf_value; MEAN: a pair at eps / 2 each)",
            statistical=_statistical(_name),
            statistical_none=_NO_STATISTICAL.get(_name, ""),
        )
    )
