"""An unreachable broker is said in one line, with the reason (issue 24, item 4).

``broadcast`` and ``archive`` pointed at a port nobody listens on log one
``*_mqtt_unreachable`` error with the reason at the first attempt (they used to print
only "serving on ..."); ``console`` tells a broker that never answered MQTT from a
daemon that did not reply.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from table_controller.mqtt.request import NoReplyError, send_request
from table_controller.mqtt.unreachable import connect_failure_reason
from table_controller.testing.broadcast_rig import write_config

STUD_TABLE = Path(sys.executable).parent / "stud-table"


def dead_port() -> int:
    """A local port with nothing listening (bound then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A TCP port that accepts connections and never says a word (not a broker: what a
    proxy or a firewall that completes the handshake looks like)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def first_line_with(args: list[str], *needles: str, also: str = "") -> str:
    """Run ``stud-table ARGS`` until a line holds every needle (and one holds ``also``,
    if given); return the needles' line."""
    process = subprocess.Popen([str(STUD_TABLE), *args], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    found, seen_also = "", not also
    try:
        for line in process.stdout:
            if not found and all(needle in line for needle in needles):
                found = line
            seen_also = seen_also or also in line
            if found and seen_also:
                return found
        pytest.fail(f"stud-table {args[0]} ended (exit {process.wait()}) without saying it")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
    return ""  # pragma: no cover


def test_broadcast_says_the_broker_is_unreachable_and_why(tmp_path: Path) -> None:
    port = dead_port()
    config = write_config(tmp_path, port)
    line = first_line_with(["broadcast", "--config", str(config)],
                           "broadcast_mqtt_unreachable", "Connection refused",
                           also="(http.port = 0: a free port was picked")  # the rig's port 0
    assert str(port) in line


def test_archive_says_the_broker_is_unreachable_and_why(tmp_path: Path) -> None:
    port = dead_port()
    config = tmp_path / "archive.toml"
    config.write_text(f'instance = "a1"\n[broker]\nhost = "127.0.0.1"\nport = {port}\n'
                      f'[database]\npath = "{tmp_path / "archive.sqlite"}"\n')
    line = first_line_with(["archive", "--config", str(config)],
                           "archive_mqtt_unreachable", "Connection refused")
    assert str(port) in line


def test_console_to_a_dead_port_names_the_reason() -> None:
    port = dead_port()
    with pytest.raises(NoReplyError, match=f"cannot reach the broker at 127.0.0.1:{port}:"
                       ".*Connection refused"):
        send_request("127.0.0.1", port, "t1", "end", b"{}", timeout=10)


def test_console_to_something_that_is_not_a_broker_is_not_the_daemons_fault() -> None:
    with silent_server() as port, pytest.raises(NoReplyError) as caught:
        send_request("127.0.0.1", port, "t1", "end", b"{}", timeout=10)
    message = str(caught.value)
    assert message.startswith(f"cannot reach the broker at 127.0.0.1:{port}: no MQTT answer")
    assert "daemon" not in message


def test_the_reason_is_the_error_being_handled() -> None:
    assert connect_failure_reason() == "no reason given"
    try:
        raise ConnectionRefusedError(111, "Connection refused")
    except OSError:
        assert connect_failure_reason() == "Connection refused"
    try:
        raise TimeoutError("timed out")
    except OSError:
        assert connect_failure_reason() == "timed out"
    try:
        socket.getaddrinfo("no-such-host.invalid", 1883)
    except OSError:
        assert connect_failure_reason().startswith("cannot resolve the host name")
