"""Hypothesis profiles (DESIGN §7), chosen by HYPOTHESIS_PROFILE (default: ci).

- dev: quick local iteration;
- ci: derandomized, no example database, so a run is reproducible on a fresh clone;
- thorough: many examples, for a periodic deep run.
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=30, deadline=None)
settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("thorough", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
