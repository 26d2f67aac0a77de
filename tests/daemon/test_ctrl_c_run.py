"""Ctrl-C of ``stud-table run`` ends without a traceback (issue 24, item 3).

A terminal's Ctrl-C is SIGINT to the whole foreground process group. The equity child
used to be in it and died printing a ``KeyboardInterrupt`` traceback; it now runs in a
process group of its own and ends when the daemon closes its input.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from table_controller.testing.broker import WAIT, MosquittoBroker, wait_until
from table_controller.testing.daemon_rig import TableRig


def equity_children(parent: int) -> list[int]:
    """Pids of the equity child processes of ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"equity_child" in cmdline:
            found.append(int(entry.name))
    return found


def gone(pid: int) -> bool:
    """The process ended (no longer there, or a zombie not yet reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_ctrl_c_stops_the_daemon_and_its_equity_child_without_a_traceback(
        tmp_path: Path, mosquitto: MosquittoBroker) -> None:
    rig = TableRig(tmp_path, mosquitto)
    try:
        process = rig.start_process()  # its own session: the group Ctrl-C would reach
        wait_until(lambda: bool(equity_children(process.pid)), what="the equity child")
        (child,) = equity_children(process.pid)
        os.killpg(process.pid, signal.SIGINT)  # what the terminal sends on Ctrl-C
        assert process.wait(timeout=WAIT) == 0, rig.daemon_log()
        rig.process = None
        wait_until(lambda: gone(child), what="the equity child gone")
        log = rig.daemon_log()
        assert "Traceback" not in log, log
        assert "KeyboardInterrupt" not in log, log
    finally:
        rig.stop()
