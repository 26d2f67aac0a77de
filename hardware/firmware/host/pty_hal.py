"""Run the reader firmware on the host (CPython): a pty for USB, a simulated front end.

Host-only (never copied to a board). The firmware-in-the-loop test uses it, and so can
anyone without hardware::

    python hardware/firmware/host/pty_hal.py --reader-id 7 --ports 7 --link /tmp/dev/reader-7

:class:`PtyPort` is the USB cable: a pseudo-terminal in raw mode, reachable through a
stable symlink (like ``/dev/serial/by-id``); ``unplug`` closes it (the host's reads
fail with EIO, the link dangles) and ``replug`` makes a new one. :class:`PtyHal` is
the firmware's HAL on it. :class:`FirmwareRunner` runs ``Reader.step`` in a thread,
as ``main.py`` does on the board; ``restart`` is a reset (fresh RAM, HELLO with
sequence 0) on the same port, ``power_cycle`` a reset with the cable re-plugged.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import threading
import time
import tty
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FIRMWARE_DIR = Path(__file__).resolve().parents[1]
if str(FIRMWARE_DIR) not in sys.path:
    sys.path.insert(0, str(FIRMWARE_DIR))

from stud_reader.reader import Reader  # noqa: E402
from stud_reader.sim import SimulatedFrontEnd  # noqa: E402

_READ_CHUNK = 4096


class PtyPort:
    """A pseudo-terminal standing for the reader's USB CDC port."""

    def __init__(self, link: Path) -> None:
        self.link = link
        self.master: int | None = None
        self._slave: int | None = None
        self.drop_writes = 0
        """Frames to lose on the wire from now on (a USB hiccup; tests set it)."""
        self.loss = 0.0
        """Probability that any frame is lost on the wire (soak tests)."""
        self.rng = random.Random(0)
        self.dropped = 0

    def plug(self) -> None:
        """Make a new pty and point the symlink at it (atomically)."""
        master, slave = os.openpty()
        # Raw before the host opens it: cooked mode would echo and mangle bytes.
        tty.setraw(slave)
        os.set_blocking(master, False)
        self.master, self._slave = master, slave
        temporary = self.link.with_name(f".{self.link.name}.tmp")
        temporary.unlink(missing_ok=True)
        os.symlink(os.ttyname(slave), temporary)
        os.replace(temporary, self.link)

    def unplug(self) -> None:
        """Close the pty: the host's reads fail, the symlink dangles."""
        for fd in (self.master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.master = self._slave = None

    def close(self) -> None:
        """Unplug and remove the symlink."""
        self.unplug()
        self.link.unlink(missing_ok=True)


class PtyHal:
    """The firmware's HAL on a :class:`PtyPort` and a front end."""

    def __init__(self, port: PtyPort, front_end: Any) -> None:
        self.port = port
        self.front_end = front_end

    def select_port(self, port: int) -> None:
        """Route the (simulated) front end to ``port``."""
        self.front_end.select_port(port)

    def scan(self) -> list[bytes]:
        """Tags on the selected port."""
        return list(self.front_end.scan())

    def write(self, data: bytes) -> int:
        """Write to the pty; 0 when nobody reads and its buffer is full (like USB)."""
        port = self.port
        if port.drop_writes > 0 or (port.loss > 0.0 and port.rng.random() < port.loss):
            port.drop_writes = max(0, port.drop_writes - 1)
            port.dropped += 1
            return len(data)  # lost on the wire: the firmware cannot know
        master = self.port.master
        if master is None:
            return 0
        try:
            return os.write(master, data)
        except OSError:  # BlockingIOError: buffer full; EIO: closing
            return 0

    def read(self) -> bytes:
        """What the host wrote, without blocking."""
        master = self.port.master
        if master is None:
            return b""
        try:
            return os.read(master, _READ_CHUNK)
        except OSError:
            return b""

    def ticks_ms(self) -> int:
        """Monotonic milliseconds (no wrap on the host)."""
        return int(time.monotonic() * 1000)


class FirmwareRunner:
    """The firmware's main loop in a thread, on a pty, with a simulated front end."""

    def __init__(
        self,
        link: Path,
        reader_id: int,
        ports: int,
        *,
        front_end: SimulatedFrontEnd | None = None,
        cycle_ms: int = 20,
        **reader_options: Any,
    ) -> None:
        self.port = PtyPort(link)
        self.front_end = front_end or SimulatedFrontEnd(ports)
        self.hal = PtyHal(self.port, self.front_end)
        self.reader_id = reader_id
        self.ports = ports
        self.cycle_ms = cycle_ms
        self.reader_options = reader_options
        self.reader: Reader | None = None
        self.boots = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> FirmwareRunner:
        """Plug in, boot, and run the loop."""
        self.port.plug()
        self._boot()
        return self

    def _boot(self) -> None:
        # A fresh Reader is a fresh RAM: nothing survives a reset but the tags on
        # the table (the front end) and the port.
        self.reader = Reader(self.hal, self.reader_id, self.ports, **self.reader_options)
        self.reader.boot()
        self.boots += 1
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, args=(self.reader,), name=f"firmware-{self.reader_id}",
            daemon=True,
        )
        self._thread.start()

    def _run(self, reader: Reader) -> None:
        while not self._stop.is_set():
            with self._lock:
                reader.step()
            # The board's scan takes ~10-20 ms per port; here a pause per cycle.
            self._stop.wait(self.cycle_ms / 1000)

    @contextlib.contextmanager
    def between_steps(self) -> Iterator[Reader]:
        """Hold the loop between two steps (the body runs while no step does): what
        the body changes is seen by the next step as a whole."""
        with self._lock:
            assert self.reader is not None
            yield self.reader

    def _halt(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def restart(self) -> None:
        """A reset (watchdog, brown-out) with the USB link kept: HELLO at sequence 0."""
        self._halt()
        self._boot()

    def power_cycle(self, off_seconds: float = 0.3) -> None:
        """Unplug, wait, plug in again (a new pty) and boot."""
        self._halt()
        self.port.unplug()
        time.sleep(off_seconds)  # the reader away: pacing, not a check
        self.port.plug()
        self._boot()

    def stop(self) -> None:
        """Stop the loop and remove the port."""
        self._halt()
        self.port.close()

    def __enter__(self) -> FirmwareRunner:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """Run one simulated reader until interrupted (tags from ``--tag port:UIDHEX``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader-id", type=int, required=True)
    parser.add_argument("--ports", type=int, default=8)
    parser.add_argument("--link", type=Path, required=True, help="symlink to create")
    parser.add_argument("--tag", action="append", default=[], help="PORT:UIDHEX, repeatable")
    args = parser.parse_args(argv)
    runner = FirmwareRunner(args.link, args.reader_id, args.ports)
    for spec in args.tag:
        port, _, uid = spec.partition(":")
        runner.front_end.place(int(port), bytes.fromhex(uid))
    with runner:
        print(f"reader {args.reader_id} on {args.link}; Ctrl-C to stop", file=sys.stderr)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
