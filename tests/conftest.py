"""Shared pytest set-up: a real Mosquitto broker per test, the table rig and the
headless browser several folders' tests use (daemon, archive, broadcast, floor), the
``soak`` marker and ``--soak`` option, and the hypothesis profile every property test
runs under."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from hypothesis import HealthCheck, settings

from table_controller.testing.broker import MosquittoBroker, RecordingSubscriber
from table_controller.testing.browser import Browser
from table_controller.testing.daemon_rig import TableRig

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


LIVE_GROUP = "live"
"""The pytest-xdist group of the tests that run real processes against the clock."""

PURE_DIRS = ("table_controller",)
"""Test folders (under tests/, with their layers' subfolders) whose tests are pure
computation, unless they use a broker."""

LIVE_MODULES = frozenset({"test_publisher", "test_publisher_window", "test_acl",
                          "test_deck_several"})
"""Modules of those folders that start brokers or daemons all the same."""


def is_live(item: pytest.Item) -> bool:
    """Whether ``item`` drives real processes, ptys or a broker (timing-sensitive)."""
    path = Path(str(item.fspath))
    parts = path.relative_to(Path(__file__).parent).parts
    if len(parts) == 1:  # tests/test_*.py: static checks and the like
        return False
    return (parts[0] not in PURE_DIRS or path.stem in LIVE_MODULES
            or "mosquitto" in getattr(item, "fixturenames", ()))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every ``soak`` test unless ``--soak`` was given; put the live tests in one
    xdist group.

    ``scripts/test`` runs the suite on two workers (``-n 2 --dist loadgroup``): the
    tests that run daemons, brokers, ptys and browsers go to ONE worker, in file order,
    while the other takes the CPU-bound property and differential tests. The live tests
    then see one busy core beside them, as on any loaded CI machine, never a second
    set of daemons racing theirs; the suite takes the longer of the two halves instead
    of their sum."""
    live = pytest.mark.xdist_group(LIVE_GROUP)
    for item in items:
        if is_live(item):
            item.add_marker(live)
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


@pytest.fixture
def rig(tmp_path: Path, mosquitto: MosquittoBroker) -> Iterator[TableRig]:
    """A table rig on the test's broker (its daemon started by the test); its daemon
    and readers stop afterwards."""
    with TableRig(tmp_path, mosquitto) as table:
        yield table


@pytest.fixture
def table(tmp_path: Path, mosquitto: MosquittoBroker) -> Iterator[TableRig]:
    """Emulated readers and the real daemon (in a thread) on the test's broker."""
    with TableRig(tmp_path, mosquitto) as dealing:
        dealing.start_thread()
        yield dealing


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    """A headless Chromium, closed afterwards."""
    chrome = Browser(tmp_path / "profile")
    try:
        yield chrome
    finally:
        chrome.close()


@pytest.fixture
def subscribers() -> Iterator[list[RecordingSubscriber]]:
    """Subscribers created by a test (append them), closed at its end."""
    made: list[RecordingSubscriber] = []
    yield made
    for sub in made:
        sub.close()


@pytest.fixture(autouse=True)
def _fresh_structlog() -> Iterator[None]:
    """Each test starts with structlog's defaults: a test that configures the
    daemon's logging (level, renderer) must not change what later tests capture."""
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()

