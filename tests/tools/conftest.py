"""Fixtures of the tools tests: the table-8 readers emulated on ptys, per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from deck_rig import Table


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    """The emulated readers and a layout copy pointing at them; unplugged afterwards."""
    with Table(tmp_path) as emulated:
        yield emulated
