"""The standing adversarial suite: one regression test per hole found, plus
property-based tests (hypothesis) over every input that comes from outside.

Invariants asserted throughout: no exception escapes as a traceback, no private row
or chunk of another identity is ever returned, nothing breaks out of the references
fence, every call returns within its time limit + 0.5 s.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# Bounded so the whole suite's property tests stay within a minute in `make test`;
# `HYPOTHESIS_PROFILE=deep` runs many more examples locally.
settings.register_profile(
    "ci",
    parent=settings.get_profile("suite"),
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile(
    "deep",
    parent=settings.get_profile("suite"),
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
