"""Helpers of the papers' test-vector designs (``audits/papers/<paper>/vectors.py``): the validated
reference release of an algorithm, a dataset from per-user lists, the plain adapter class."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from userdp.properties.adapter import Adapter
from userdp.reference.data import UserDataset
from userdp.audits import validation

__all__ = ["plain_adapter", "released_by", "spec_reference", "users"]


def spec_reference(algorithm: str) -> Callable[[], Callable]:
    """The validated reference release of ``algorithm`` (its validate spec's), looked up when called."""

    def get():
        return validation.get(algorithm).reference

    return get


def users(*per_user) -> Any:
    """A dataset from per-user lists of values (users 0, 1, ... in order)."""
    return UserDataset.from_user_lists([list(u) for u in per_user])


def plain_adapter():
    """The adapter class of an algorithm with no extra stages."""
    return Adapter


def released_by(algorithm: str, adapter):
    """``adapter`` with the validated reference release as its mechanism (the vectors' invalid inputs
    must be refused by it, the valid ones released)."""
    return dataclasses.replace(adapter, mechanism=spec_reference(algorithm)())
