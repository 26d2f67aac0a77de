"""Shared pytest set-up: a real Mosquitto broker per test, the ``soak`` marker and
``--soak`` option, and the hypothesis profile every property test runs under."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from hypothesis import HealthCheck, settings
from mqtt_broker import MosquittoBroker

# CI runs on a loaded 2-core machine shared with other work: how long a test or its
# input generation takes says nothing about correctness there. Without this, a
# slow moment fails a property test at random (FailedHealthCheck "Input generation
# is slow", DeadlineExceeded, Flaky). Registered and loaded here, before any test
# module is imported, so every @given and every module-level settings() object
# inherits it; a test's own @settings(...) should only set max_examples (and the
# like), never narrow these (tests/test_hypothesis_profile.py checks).
LOADED_MACHINE_HEALTH_CHECKS = (
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
)
settings.register_profile(
    "ci", deadline=None, suppress_health_check=LOADED_MACHINE_HEALTH_CHECKS
)
settings.load_profile("ci")


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--soak``: also run the long reliability tests marked ``@pytest.mark.soak``."""
    parser.addoption(
        "--soak", action="store_true", default=False,
        help="run the long soak tests (marked soak); skipped without it",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every ``soak`` test unless ``--soak`` was given."""
    if config.getoption("--soak"):
        return
    skip = pytest.mark.skip(reason="soak test: run with --soak")
    for item in items:
        if "soak" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """A running Mosquitto on a free 127.0.0.1 port (anonymous access, no persistence)."""
    broker = MosquittoBroker(tmp_path / "mosquitto")
    (tmp_path / "mosquitto").mkdir()
    broker.start()
    try:
        yield broker
    finally:
        broker.close()


@pytest.fixture(autouse=True)
def _fresh_structlog() -> Iterator[None]:
    """Each test starts with structlog's defaults: a test that configures the
    daemon's logging (level, renderer) must not change what later tests capture."""
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()

