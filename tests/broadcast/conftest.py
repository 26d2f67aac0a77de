"""Fixtures of the broadcast tests: the daemon rig of tests/daemon is shared."""

from __future__ import annotations

import sys
from pathlib import Path

# The end-to-end tests drive the real daemon with the rig the daemon tests use.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))
