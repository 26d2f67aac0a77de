"""Fixtures of the floor tests: the dashboard on the test's broker; the headless-Chromium
rig of tests/broadcast is shared."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from table_controller.testing.broker import MosquittoBroker

# The broadcast tests' browser rig and the daemon tests' table rig are shared.
sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "broadcast"),
                str(Path(__file__).resolve().parents[1] / "daemon")]

from floor_rig import FloorService, write_config  # noqa: E402 - pytest puts this folder on sys.path


@pytest.fixture
def floor(tmp_path: Path, mosquitto: MosquittoBroker) -> Iterator[FloorService]:
    """The dashboard on the test's broker, stopped afterwards."""
    with FloorService(write_config(tmp_path, mosquitto.port)).start() as service:
        yield service
