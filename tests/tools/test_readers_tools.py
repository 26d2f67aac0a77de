"""Issue 13: ``stud-table readers`` against emulated readers on real ptys, with the
faults an installer meets: swapped antenna cables, a dead antenna, a flapping tag,
a reader with the wrong id, a missing device, a device nobody speaks on, and a
device the user may not open."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from firmware_bridge.emulator import ReaderEmulator
from firmware_bridge.link import LinkProblem
from table_controller.mqtt.payloads import AntennaStats, ReaderStats, ReaderStatus, to_json
from table_controller.testing.broker import MosquittoBroker

REPO = Path(__file__).resolve().parents[2]
WAIT = 30.0
"""Generous: CI runs on a loaded 2-core machine."""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _layout(path: Path, readers: list[tuple[int, str, dict[int, str]]], seats: int = 2) -> Path:
    text = [f'name = "test table"\nseats = {seats}\n']
    for reader_id, device, antennas in readers:
        text.append(f'[[readers]]\nid = {reader_id}\ndevice = "{device}"\n[readers.antennas]\n')
        text.extend(f'{port} = "{zone}"\n' for port, zone in antennas.items())
    path.write_text("".join(text))
    return path


SEAT_READER = {0: "seat1.down", 1: "seat1.up", 2: "seat2.down", 3: "seat2.up"}
DEALER_READER = {0: "burn", 1: "muck", 2: "board"}


@pytest.fixture
def readers(tmp_path: Path) -> Iterator[tuple[ReaderEmulator, ReaderEmulator, Path]]:
    """A 2-seat table's two emulated readers (1: seats, 10: dealer) and its layout."""
    dev = tmp_path / "dev"
    dev.mkdir()
    kw = {"scan_period": 0.02, "heartbeat_period": 0.5, "inventory_period": 1.0}
    seats = ReaderEmulator(dev, 1, antenna_count=4, **kw).start()  # type: ignore[arg-type]
    dealer = ReaderEmulator(dev, 10, antenna_count=3, **kw).start()  # type: ignore[arg-type]
    layout = _layout(tmp_path / "layout.toml", [(1, str(seats.path), SEAT_READER),
                                                (10, str(dealer.path), DEALER_READER)])
    try:
        yield seats, dealer, layout
    finally:
        seats.stop()
        dealer.stop()


def _walk(layout: Path, physical: dict[str, tuple[ReaderEmulator, int] | None],
          *options: str) -> tuple[int, list[str]]:
    """Run ``stud-table readers --walk`` as a subprocess and play the installer:
    on each prompt put a new tag where the zone's antenna *really* is (``None``:
    its antenna is dead, nothing sees the card), take it off when asked."""
    with subprocess.Popen(
        [sys.executable, "-m", "table_controller", "readers", "--layout", str(layout),
         "--walk", "--settle", "0.5", "--zone-timeout", "3", "--heartbeat-period", "0.5",
         *options],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=_env(),
    ) as process:
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line.rstrip("\n"))
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        seen: list[str] = []
        card = 0
        placed: tuple[ReaderEmulator, int, str] | None = None
        try:
            while (line := lines.get(timeout=WAIT)) is not None:
                seen.append(line)
                if "Put a card on " in line:
                    where = physical[line.rsplit(" ", 1)[1]]
                    card += 1
                    if where is not None:
                        reader, port = where
                        placed = (reader, port, reader.place(port, f"{0x04E00000 + card:08X}"))
                elif line.startswith("Take the card off ") and placed is not None:
                    reader, port, uid = placed
                    reader.remove(port, uid)
                    placed = None
            code = process.wait(timeout=WAIT)
        finally:
            if process.poll() is None:
                process.kill()
    return code, seen


def test_walk_confirms_a_correctly_wired_table(
    readers: tuple[ReaderEmulator, ReaderEmulator, Path],
) -> None:
    """Every zone's card is seen where the layout says: one OK line per zone, the
    summary, exit 0."""
    seats, dealer, layout = readers
    physical: dict[str, tuple[ReaderEmulator, int] | None] = {
        **{zone: (seats, port) for port, zone in SEAT_READER.items()},
        **{zone: (dealer, port) for port, zone in DEALER_READER.items()},
    }
    code, out = _walk(layout, physical)
    assert code == 0, out
    assert "  seat1.up: seen by reader 1 port 1 — OK" in out
    assert "  board: seen by reader 10 port 2 — OK" in out
    assert out[-1] == "7 of 7 zones OK: the layout matches the wiring"


def test_walk_finds_swapped_cables_a_dead_antenna_and_a_missing_reader(
    readers: tuple[ReaderEmulator, ReaderEmulator, Path], tmp_path: Path,
) -> None:
    """seat1.up's and seat2.down's cables swapped on reader 1 (ports 1 and 2),
    seat2.up's antenna dead, and the dealer reader's device missing: the walk says
    why reader 10 is offline before it starts, names the reader and port that saw
    each misplaced card (or none), and exits 1."""
    seats, _, _ = readers
    layout = _layout(tmp_path / "missing.toml", [
        (1, str(seats.path), SEAT_READER),
        (10, str(tmp_path / "dev" / "no-such-reader"), DEALER_READER)])
    physical: dict[str, tuple[ReaderEmulator, int] | None] = {
        "seat1.down": (seats, 0), "seat1.up": (seats, 2), "seat2.down": (seats, 1),
        "seat2.up": None, "burn": None, "muck": None, "board": None,
    }
    code, out = _walk(layout, physical, "--zone-timeout", "2", "--online-wait", "3")
    assert code == 1, out
    first_prompt = next(i for i, line in enumerate(out) if "Put a card on" in line)
    assert any(line.startswith("reader 10: offline — port missing:")
               for line in out[:first_prompt]), out
    assert ("  seat1.up: card seen on reader 1 port 2 (seat2.down) — check the antenna wiring"
            in out)
    # The second of the pair names the swap (issue 23), and so does the summary.
    swap = ("seat1.up and seat2.down are swapped: seat1.up's card was read on reader 1 port 2"
            " and seat2.down's on reader 1 port 1 — exchange those two cables, or the two"
            " ports' zones in the layout")
    assert f"  seat2.down: card seen on reader 1 port 1 (seat1.up) — a swap: {swap}" in out
    assert out[-1] == f"  swap: {swap}"
    assert any(line.startswith("  seat2.up: no card seen in 2 s on any antenna"
                               " (reader 1 port 3 expected)") for line in out), out
    assert any(line.startswith("  muck: no card seen in 2 s on any antenna"
                               " (reader 10 port 1 expected)") for line in out), out
    assert "  seat1.down: seen by reader 1 port 0 — OK" in out
    assert "1 of 7 zones OK; 6 to fix:" in out


def test_bad_layout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A layout with a zone beyond the table: one line naming it, exit 2."""
    bad = tmp_path / "bad.toml"
    bad.write_text('seats = 2\n[[readers]]\nid = 1\ndevice = "x"\n'
                   '[readers.antennas]\n0 = "seat9.up"\n')
    result = subprocess.run(
        [sys.executable, "-m", "table_controller", "readers", "--layout", str(bad), "--walk"],
        capture_output=True, text=True, env=_env(), timeout=WAIT, check=False,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "seat9.up" in result.stderr


def _tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True,
                          check=True, timeout=WAIT).stdout


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_live_view_in_tmux_shows_every_reader_and_why(tmp_path: Path) -> None:
    """The live view in a real terminal (tmux), with four readers: one online with a
    flapping tag (dropouts counted), one answered by a reader with another id, one
    whose device is missing, one whose device nobody speaks on. Each says so, once,
    in its own line; Ctrl-C quits."""
    dev = tmp_path / "dev"
    dev.mkdir()
    kw = {"scan_period": 0.02, "heartbeat_period": 0.5, "inventory_period": 1.0}
    good = ReaderEmulator(dev, 1, antenna_count=2, dropout_probability=0.3, seed=7,
                          **kw).start()  # type: ignore[arg-type]
    impostor = ReaderEmulator(dev, 9, antenna_count=2, **kw).start()  # type: ignore[arg-type]
    master, slave = os.openpty()  # a silent device: nobody answers on it
    silent = dev / "silent"
    silent.symlink_to(os.ttyname(slave))
    socket = f"stud-readers-{os.getpid()}"
    try:
        good.place(0, "04A1B2C3")
        layout = _layout(tmp_path / "layout.toml", [
            (1, str(good.path), {0: "seat1.down", 1: "seat1.up"}),
            (2, str(impostor.path), {0: "seat2.down", 1: "seat2.up"}),
            (3, str(dev / "no-such-reader"), {0: "burn"}),
            (4, str(silent), {0: "muck", 1: "board"}),
        ])
        command = (f"cd {REPO} && PYTHONPATH={REPO} {sys.executable} -m table_controller"
                   f" readers --layout {layout} --heartbeat-period 0.5")
        _tmux(socket, "new-session", "-d", "-s", "view", "-x", "200", "-y", "50", command)

        def screen() -> str:
            return _tmux(socket, "capture-pane", "-p", "-t", "view")

        expected = [
            "reader 1: online",
            "firmware 1.0.0",
            "reader 2: wrong_reader — wrong reader: reader 9 answered, 2 expected",
            "reader 3: offline — port missing:",
            "reader 4: handshake — no hello: port open, no HELLO",
        ]
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            shown = screen()
            rows = [line.split() for line in shown.splitlines()]
            port0 = next((r for r in rows if r[:2] == ["0", "seat1.down"]), None)
            # A flapping tag is sometimes away: wait for a frame showing it, with
            # dropouts counted.
            if all(e in shown for e in expected) and port0 and port0[2] == "1" \
                    and int(port0[4]) > 0:
                break
            time.sleep(0.3)
        else:
            pytest.fail(f"the view never showed everything:\n{screen()}")
        assert port0 is not None
        assert port0[5] == "04A1B2C3"  # its UID: the installer's own screen only
        for line in expected[2:]:
            assert sum(line in row for row in shown.splitlines()) == 1
        _tmux(socket, "send-keys", "-t", "view", "C-c")
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if subprocess.run(["tmux", "-L", socket, "has-session", "-t", "view"],
                              capture_output=True, check=False).returncode != 0:
                break  # the command ended, so did its session
            time.sleep(0.2)
        else:
            pytest.fail("Ctrl-C did not end the view")
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
        good.stop()
        impostor.stop()
        os.close(master)
        os.close(slave)


_AS_NOBODY = """
import os, sys, time
from firmware_bridge.link import ConnectionState, ReaderLink
from table_controller.daemon.logging import configure_logging
from table_controller.tools.readers_view import state_line
configure_logging("console", "warning")  # on stderr
os.setgid(65534)
os.setuid(65534)  # after the imports: the interpreter lives where nobody may read
problems = []
link = ReaderLink(sys.argv[1], 5, lambda *a: None,
                  lambda r, s, st: problems.append(st.problem))
link.start()
deadline = time.monotonic() + 20
while time.monotonic() < deadline and link.stats.problem is None:
    time.sleep(0.05)
time.sleep(1.0)  # a few retries
print(state_line(5, link.state, link.stats))
link.stop()
print(len({p for p in problems if p is not None}))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_permission_denied_on_a_real_device(tmp_path: Path) -> None:
    """A real pty the user may not open (chmod 000, opened as ``nobody``): the
    link says permission denied, once, through its retries."""
    master, slave = os.openpty()
    device = os.ttyname(slave)
    try:
        os.chmod(device, 0)
        result = subprocess.run([sys.executable, "-c", _AS_NOBODY, device], capture_output=True,
                                text=True, env=_env(), timeout=WAIT * 2, check=False)
    finally:
        os.close(master)
        os.close(slave)
    assert result.returncode == 0, result.stderr
    line, distinct = result.stdout.splitlines()
    assert line.startswith(f"reader 5: offline — permission denied: [Errno {13}]"), line
    assert "give the daemon's user access to the port" in line
    assert distinct == "1"
    assert result.stderr.count("reader_unavailable") == 1, result.stderr  # logged once
    assert LinkProblem.PERMISSION_DENIED.value == "permission_denied"


def test_broker_view_shows_what_the_daemon_publishes(mosquitto: MosquittoBroker,
                                                     tmp_path: Path) -> None:
    """``--broker`` (the daemon holds the ports): the view follows the table's
    retained reader statuses and their periodic figures on a real Mosquitto, says
    why a reader is offline, counts and ignores a junk message on a reader topic,
    and quits on Ctrl-C (SIGINT) with 0."""
    frame_errors = {"crc": 0, "framing": 3, "oversized": 0, "truncated": 0, "unknown_type": 0,
                    "unsupported_version": 0, "malformed": 0, "missed": 0}
    now = time.time()
    messages = [
        ("readers/1", ReaderStatus(table="t1", hand=None, seq=5, ts=now, reader="1",
                                   state="online", firmware="1.2.0", last_heartbeat=now,
                                   frame_errors=frame_errors, zones=["seat1.down"])),
        ("readers/3", ReaderStatus(table="t1", hand=None, seq=6, ts=now, reader="3",
                                   state="offline", reason="port_missing",
                                   detail="no such file /dev/r3", last_heartbeat=None,
                                   frame_errors=frame_errors, zones=["burn"])),
        ("readers/1/stats", ReaderStats(
            table="t1", ts=now, reader="1", state="online", firmware="1.2.0",
            heartbeat_age=0.3, frame_errors=frame_errors,
            antennas=[AntennaStats(port=0, zone="seat1.down", tags=2, reads_per_s=1.0,
                                   dropouts=4)])),
    ]
    publisher = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=MQTTProtocolVersion.MQTTv5)
    publisher.connect("127.0.0.1", mosquitto.port)
    publisher.loop_start()
    screen = tmp_path / "screen.txt"
    try:
        for topic, payload in messages:
            publisher.publish(f"stud/v1/t1/{topic}", to_json(payload), qos=1,
                              retain=True).wait_for_publish(WAIT)
        publisher.publish("stud/v1/t1/readers/7", b"{not json", qos=1,
                          retain=True).wait_for_publish(WAIT)
        with screen.open("w") as out, subprocess.Popen(
            [sys.executable, "-m", "table_controller", "readers", "--broker",
             f"127.0.0.1:{mosquitto.port}", "--table", "t1"],
            stdout=out, stderr=subprocess.DEVNULL, env=_env(),
        ) as process:
            expected = ["reader 1: online", "firmware 1.2.0", "frame errors: framing 3",
                        "reader 3: offline — port missing: no such file /dev/r3",
                        "1 invalid messages ignored"]
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:
                last = screen.read_text().split("\x1b[H\x1b[2J")[-1].replace("\x1b[K", "")
                rows = [line.split() for line in last.splitlines()]
                if all(e in last for e in expected) and ["0", "seat1.down", "2", "1.0", "4"] in [
                        r[:5] for r in rows]:
                    break
                time.sleep(0.3)
            else:
                process.kill()
                pytest.fail(f"the view never showed everything:\n{screen.read_text()[-3000:]}")
            process.send_signal(signal.SIGINT)
            try:
                assert process.wait(timeout=WAIT) == 0
            finally:
                process.kill()  # (no-op once it has ended)
    finally:
        publisher.disconnect()
        publisher.loop_stop()
