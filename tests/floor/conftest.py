"""Fixtures of the floor tests: the headless-Chromium rig of tests/broadcast is shared."""

from __future__ import annotations

import sys
from pathlib import Path

# The broadcast tests' browser rig and the daemon tests' table rig are shared.
sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "broadcast"),
                str(Path(__file__).resolve().parents[1] / "daemon")]
