"""Hypothesis profiles, registered when tests/conftest.py imports this module.

`ci` (the default) keeps every property test to seconds and derandomizes it, so a run is
deterministic: the same examples every time, no example database written. `long` is for deeper
runs by hand: `pytest --hypothesis-profile=long tests/test_fuzz.py`. Tests that pin their own
`max_examples` with `@settings` keep it under either profile."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# Generating whole programs is slow; that is the generator's cost, not a failing test.
_SLOW_GENERATION = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=_SLOW_GENERATION,
)
settings.register_profile(
    "long",
    max_examples=2000,
    deadline=None,
    print_blob=True,
    suppress_health_check=_SLOW_GENERATION,
)
settings.load_profile("ci")
