"""Issue 9 item 23: a reader link that cannot deliver says why, once.

A missing reader used to flood the log with two lines every 2 s (``reader_state
connecting``/``disconnected``) without saying why, and the state flapped with
every retry. Now the link stays DISCONNECTED through its retries (debug lines
only), and the *problem* (port missing, permission denied, port busy, no HELLO,
wrong reader id, ...) is logged as one warning when it changes. Real ptys and
real files; the permission case is a unit test of the errno mapping because the
CI user is root (root opens any device).
"""

from __future__ import annotations

import errno
import os
import select
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import serial
from structlog.testing import capture_logs
from test_fb_link import HEARTBEAT, Recorder, make_emulator, transitions, wait_for

from firmware_bridge.link import (
    NO_HELLO_AFTER,
    ConnectionState,
    LinkProblem,
    ReaderLink,
    open_problem,
)
from firmware_bridge.messages import Identify


@pytest.fixture
def links() -> Iterator[list[Any]]:
    things: list[Any] = []
    yield things
    for thing in reversed(things):
        thing.stop()


def _warnings(logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in logs if e["log_level"] in ("warning", "error", "critical")]


def _problems(recorder: Recorder) -> list[LinkProblem | None]:
    """Each distinct problem the link reported, in order."""
    with recorder.lock:
        seen = [stats.problem for _, _, stats in recorder.states]
    return [p for i, p in enumerate(seen) if i == 0 or seen[i - 1] is not p]


def _start(url: str, reader_id: int, links: list[Any]) -> tuple[ReaderLink, Recorder]:
    recorder = Recorder()
    link = ReaderLink(url, reader_id, recorder.on_message, recorder.on_state,
                      heartbeat_period=HEARTBEAT)
    links.append(link)
    link.start()
    return link, recorder


@pytest.mark.parametrize(
    ("exc", "problem"),
    [
        (serial.SerialException(errno.ENOENT, "could not open port /dev/x: No such file"),
         LinkProblem.PORT_MISSING),
        (serial.SerialException(errno.EACCES, "could not open port /dev/x: Permission denied"),
         LinkProblem.PERMISSION_DENIED),
        (serial.SerialException(errno.EPERM, "Operation not permitted"),
         LinkProblem.PERMISSION_DENIED),
        (serial.SerialException(errno.EWOULDBLOCK, "Could not exclusively lock port /dev/x"),
         LinkProblem.PORT_BUSY),
        (serial.SerialException(errno.EBUSY, "Device or resource busy"), LinkProblem.PORT_BUSY),
        (OSError(errno.ENXIO, "No such device or address"), LinkProblem.PORT_MISSING),
        (serial.SerialException("Port must be configured"), LinkProblem.OPEN_FAILED),
        (ValueError("bad url"), LinkProblem.OPEN_FAILED),
    ],
)
def test_open_errors_map_to_a_problem(exc: BaseException, problem: LinkProblem) -> None:
    assert open_problem(exc) is problem


def test_regression_missing_reader_says_why_once(tmp_path: Path, links: list[Any]) -> None:
    """Regression (item 23): many retries, one warning naming the cause, one state
    change; the retries are debug lines."""
    with capture_logs() as logs:
        link, recorder = _start(str(tmp_path / "ttyREADER3"), 3, links)
        wait_for(lambda: sum(e["event"] == "reader_open_failed" for e in logs) >= 5,
                 "five open retries")
        link.stop()
    warnings = _warnings(logs)
    assert [(w["event"], w["reason"]) for w in warnings] == [
        ("reader_unavailable", "port_missing")]
    assert "ttyREADER3" in warnings[0]["detail"]
    assert "plugged in" in warnings[0]["hint"]
    info = [e for e in logs if e["log_level"] == "info"]
    assert info == [], "nothing at info level while the reader stays missing"
    assert link.stats.problem is LinkProblem.PORT_MISSING
    # One state change for all those retries (a change of problem repeats the state).
    assert transitions(recorder.state_list()) == [
        ConnectionState.CONNECTING, ConnectionState.DISCONNECTED, ConnectionState.STOPPED]


def test_missing_then_plugged_in_comes_online_and_says_so_once(
    tmp_path: Path, links: list[Any]
) -> None:
    emulator = make_emulator(tmp_path, 4)  # not started: its device does not exist yet
    links.append(emulator)
    with capture_logs() as logs:
        link, recorder = _start(str(emulator.path), 4, links)
        wait_for(lambda: sum(e["event"] == "reader_open_failed" for e in logs) >= 3, "retries")
        emulator.start()  # plugged in
        wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE after plugging in")
    assert [e["event"] for e in logs if e["log_level"] != "debug"] == [
        "reader_unavailable", "reader_online"]
    online = next(e for e in logs if e["event"] == "reader_online")
    assert online["after"] == "port_missing"
    assert link.stats.problem is None
    assert _problems(recorder)[-1] is None


def test_port_held_by_another_process_is_port_busy(tmp_path: Path, links: list[Any]) -> None:
    """Two links on one reader's port: the second cannot lock it (a stray terminal
    program or a second daemon) and says so once."""
    emulator = make_emulator(tmp_path, 5)
    links.append(emulator)
    emulator.start()
    first, _ = _start(str(emulator.path), 5, links)
    wait_for(lambda: first.state is ConnectionState.ONLINE, "first link ONLINE")
    with capture_logs() as logs:
        second, _ = _start(str(emulator.path), 5, links)
        wait_for(lambda: sum(e["event"] == "reader_open_failed" for e in logs) >= 3, "retries")
        second.stop()
    assert [(w["event"], w["reason"]) for w in _warnings(logs)] == [
        ("reader_unavailable", "port_busy")]
    assert first.state is ConnectionState.ONLINE


def test_port_that_never_answers_is_no_hello(tmp_path: Path, links: list[Any]) -> None:
    """A device on the port that is not a reader (nothing answers IDENTIFY): after
    :data:`NO_HELLO_AFTER` the link says so, once, and stays in HANDSHAKE probing."""
    controller, device = os.openpty()
    try:
        path = tmp_path / "not-a-reader"
        path.symlink_to(os.ttyname(device))
        with capture_logs() as logs:
            link, recorder = _start(str(path), 6, links)
            wait_for(lambda: link.stats.problem is LinkProblem.NO_HELLO, "NO_HELLO",
                     timeout=NO_HELLO_AFTER + 30)
            # The link keeps probing (IDENTIFY frames keep coming), without a new warning.
            sent = b""
            deadline = time.monotonic() + 30
            while len(sent) < 32 and time.monotonic() < deadline:
                ready, _, _ = select.select([controller], [], [], 1.0)
                if ready:
                    sent += os.read(controller, 1024)
            link.stop()
        assert link.state is ConnectionState.STOPPED
        assert [(w["event"], w["reason"]) for w in _warnings(logs)] == [
            ("reader_unavailable", "no_hello")]
        assert ConnectionState.ONLINE not in recorder.state_list()
        assert len(sent) >= 32, "the link keeps probing with IDENTIFY"
    finally:
        os.close(controller)
        os.close(device)


def test_regression_wrong_reader_warns_once_not_per_retry(
    tmp_path: Path, links: list[Any]
) -> None:
    """The link re-sends IDENTIFY to a wrong reader every few seconds; each HELLO
    used to log a warning. One warning now, with the id that answered."""
    emulator = make_emulator(tmp_path, 7)
    links.append(emulator)
    emulator.start()
    with capture_logs() as logs:
        link, _ = _start(str(emulator.path), 5, links)
        wait_for(lambda: emulator.commands_received.count(Identify()) >= 3, "IDENTIFY retried",
                 timeout=60)
        link.stop()
    warnings = _warnings(logs)
    assert [(w["event"], w["reason"]) for w in warnings] == [
        ("reader_unavailable", "wrong_reader")]
    assert warnings[0]["detail"] == "reader 7 answered, 5 expected"
