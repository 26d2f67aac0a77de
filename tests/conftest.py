"""Shared pytest fixtures: a real Mosquitto broker per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
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
