"""Fixtures of the broadcast tests: helpers of tests/daemon (the demo checks) are shared."""

from __future__ import annotations

import sys
from pathlib import Path

# test_demo_broadcast.py reuses test_demo.py's clean-up checks.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))
