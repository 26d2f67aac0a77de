"""The firmware tests import the firmware (hardware/firmware) as the board does, the
host-side runner (hardware/firmware/host), and the rigs of the neighbouring test
folders (protocol vectors, the daemon rig)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for folder in (
    REPO / "hardware" / "firmware",
    REPO / "hardware" / "firmware" / "host",
    REPO / "tests" / "firmware_bridge",
    REPO / "tests" / "daemon",
):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
