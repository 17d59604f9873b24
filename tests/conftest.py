"""Hypothesis profiles (docs/design.md §7), chosen by HYPOTHESIS_PROFILE (default: ci).

- dev: quick local iteration;
- ci: derandomized, no example database, so a run is reproducible on a fresh clone;
- thorough: many examples, for a periodic deep run.

Every test runs with one OpenBLAS thread (``audits/engine/blas.py``, as the command line does). The
reference's solvers make thousands of small dense solves, and with pytest-xdist's two workers
on two cores a multi-threaded OpenBLAS waits for busy cores at each call: measured in one
default run at a load average of about 3, ``test_working_set_falls_back_to_all_records``
took 191.7 s against 1.9 s alone. Results never depend on the thread count, only the time.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

from userdp.audits.engine.blas import single_threaded_blas

settings.register_profile("dev", max_examples=30, deadline=None)
settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread():
    with single_threaded_blas():
        yield
