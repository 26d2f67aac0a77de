"""Shared pytest fixtures: a real Mosquitto broker per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from mqtt_broker import MosquittoBroker


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


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--soak``: also run the long reliability runs (marked ``soak``)."""
    parser.addoption("--soak", action="store_true", default=False,
                     help="run the long reliability (soak) tests too")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``soak`` tests unless ``--soak`` was given."""
    if config.getoption("--soak"):
        return
    skip = pytest.mark.skip(reason="soak run: only with --soak")
    for item in items:
        if "soak" in item.keywords:
            item.add_marker(skip)
