"""Fixtures of the daemon tests: a whole table (broker, emulated readers) per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from table_controller.testing.broker import MosquittoBroker
from table_controller.testing.daemon_rig import TableRig


@pytest.fixture
def rig(tmp_path: Path, mosquitto: MosquittoBroker) -> Iterator[TableRig]:
    """A table rig on the test's broker; its daemon and readers stop afterwards."""
    table = TableRig(tmp_path, mosquitto)
    try:
        yield table
    finally:
        table.stop()
