"""Issue 9 item 25: property tests must not fail because the CI machine is loaded.

A hypothesis test failed at random with ``FailedHealthCheck: Input generation is
slow`` on a loaded 2-core machine. tests/conftest.py now loads a profile with no
deadline and the load-dependent health checks suppressed; these tests check that
it is in force, that no test narrows it again, and that a slow generator really
passes under it (and would fail without it).
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import FailedHealthCheck

TESTS = Path(__file__).resolve().parent

LOAD_DEPENDENT = {HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much}


def test_profile_is_loaded() -> None:
    """The default settings every @given inherits: no deadline, load checks suppressed."""
    assert settings.default.deadline is None
    assert set(settings.default.suppress_health_check) >= LOAD_DEPENDENT


def test_a_tests_own_settings_inherit_the_profile() -> None:
    """``@settings(max_examples=N)`` keeps the profile's deadline and suppressions."""
    own = settings(max_examples=7)
    assert own.deadline is None
    assert set(own.suppress_health_check) >= LOAD_DEPENDENT


def _settings_calls() -> list[tuple[Path, ast.Call]]:
    calls = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name in {"conftest.py", Path(__file__).name}:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "settings"):
                calls.append((path, node))
    return calls


def test_regression_no_test_narrows_the_profile() -> None:
    """Regression (item 25): a test that sets ``deadline`` or its own
    ``suppress_health_check`` replaces the profile's value, and one slow moment on
    a loaded machine fails it again. Every settings() call in tests/ leaves both alone."""
    calls = _settings_calls()
    assert calls, "expected property tests with their own settings in tests/"
    offenders = [
        f"{path.relative_to(TESTS)}:{call.lineno}: settings({keyword.arg}=...)"
        for path, call in calls
        for keyword in call.keywords
        if keyword.arg in {"deadline", "suppress_health_check"}
    ]
    assert offenders == []


_SLOW_DRAW = 0.15
"""Seconds each example takes to generate: ten of them exceed hypothesis's one
second budget for the first examples, which is what a loaded machine does."""


def _slowly(value: int) -> int:
    time.sleep(_SLOW_DRAW)
    return value


def test_regression_slow_generation_passes_under_the_profile() -> None:
    """Regression (item 25): generation slow enough to trip ``too_slow`` passes."""
    seen = []

    @settings(max_examples=10, database=None)
    @given(st.integers(0, 10).map(_slowly))
    def slow_property(value: int) -> None:
        seen.append(value)

    slow_property()
    assert len(seen) >= 10


def test_the_same_generation_fails_without_the_profile() -> None:
    """The check above means something: with hypothesis's own defaults it fails."""

    @settings(settings.get_profile("default"), max_examples=10, database=None)
    @given(st.integers(0, 10).map(_slowly))
    def slow_property(value: int) -> None:
        del value

    with pytest.raises(FailedHealthCheck):
        slow_property()
