"""A live reader for the deck tools: the layout's readers emulated on ptys, and the
``stud-table`` command run as a real subprocess fed through its stdin.

No timing assertions: every wait polls with a generous timeout (a hang guard).
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from firmware_bridge.emulator import random_uid
from firmware_bridge.messages import RequestInventory
from table_controller.domain.cards import Card
from table_controller.simulation.emulated_table import EmulatedTable
from table_controller.table.deck import load_decks
from table_controller.table.layout import load_layout
from table_controller.tools.deck_register import REGISTRATION_ORDER

REPO = Path(__file__).resolve().parents[2]
LAYOUT = REPO / "hardware" / "layouts" / "table-8.toml"
RED = REPO / "hardware" / "decks" / "example-deck.toml"
BLUE = REPO / "hardware" / "decks" / "example-deck-blue.toml"
WAIT = 30.0
"""Seconds before a wait gives up (a hang guard, not a performance bound)."""

READER = 10
"""The dealer's reader of table-8.toml; port 0 watches ``burn``."""
ZONE = "burn"


def new_deck_tags(seed: int) -> dict[Card, str]:
    """The tags of a new, unregistered deck (7-byte UIDs, distinct)."""
    rng = random.Random(seed)
    tags: dict[Card, str] = {}
    while len(tags) < len(REGISTRATION_ORDER):
        uid = random_uid(rng)
        if uid not in tags.values():
            tags[REGISTRATION_ORDER[len(tags)]] = uid
    return tags


class Table:
    """The table-8 readers emulated on ptys, and a copy of the layout pointing at them."""

    def __init__(self, tmp: Path) -> None:
        layout = load_layout(LAYOUT)
        self.emulated = EmulatedTable(layout, load_decks([RED]), tmp / "dev",
                                      scan_period=0.01, heartbeat_period=0.5).start()
        self.layout_path = self.emulated.write_layout(LAYOUT, tmp / "layout.toml")
        self.reader = self.emulated.readers[READER]
        self.port = 0

    def place(self, uid: str) -> None:
        """Put a tag on the antenna of ``burn``, and wait until the reader has seen it."""
        self.reader.place(self.port, uid)
        deadline = time.monotonic() + WAIT
        while uid.upper() not in self.reader.model.reported(self.port):
            assert time.monotonic() < deadline, "the emulated reader never scanned again"
            time.sleep(0.005)

    def place_together(self, *uids: str) -> None:
        """Put several tags on the antenna in one scan cycle (the reader is frozen while
        they are laid down), and wait until it has seen them all."""
        self.reader.set_silent(True)
        try:
            for uid in uids:
                self.reader.place(self.port, uid)
        finally:
            self.reader.set_silent(False)
        deadline = time.monotonic() + WAIT
        while not {uid.upper() for uid in uids} <= set(self.reader.model.reported(self.port)):
            assert time.monotonic() < deadline, "the emulated reader never scanned again"
            time.sleep(0.005)

    def remove(self, uid: str) -> None:
        """Take a tag off that antenna, and wait until the reader has reported it gone
        (a hand takes longer than a scan cycle; a test putting it back at once must
        not beat the cycle, or the reader never sees the card leave)."""
        self.reader.remove(self.port, uid)
        deadline = time.monotonic() + WAIT
        while uid.upper() in self.reader.model.reported(self.port):
            assert time.monotonic() < deadline, "the emulated reader never scanned again"
            time.sleep(0.005)

    def wait_inventory_requested(self) -> None:
        """Wait until a host link came online on the reader (it asks for an inventory)."""
        deadline = time.monotonic() + WAIT
        while not any(isinstance(command, RequestInventory)
                      for command in list(self.reader.commands_received)):
            assert time.monotonic() < deadline, "no host came online on the reader"
            time.sleep(0.01)

    def stop(self) -> None:
        """Unplug every reader."""
        self.emulated.stop()

    def __enter__(self) -> Table:
        """The table, its readers plugged in (they are from the start)."""
        return self

    def __exit__(self, *_exc: object) -> None:
        """Unplug every reader, whatever happened in the block."""
        self.stop()


class Command:
    """``python -m table_controller ARGS`` with piped stdin and stdout (read on a thread)."""

    def __init__(self, args: Sequence[str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "table_controller", *args], cwd=cwd,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.lines: list[str] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._readers = [threading.Thread(target=self._read, args=(self.process.stdout, target),
                                          daemon=True)
                         for target in (self.lines, self.errors)]
        self._readers[1] = threading.Thread(target=self._read,
                                            args=(self.process.stderr, self.errors), daemon=True)
        for reader in self._readers:
            reader.start()

    def _read(self, stream: TextIO | None, into: list[str]) -> None:
        assert stream is not None
        for line in stream:
            with self._lock:
                into.append(line.rstrip("\n"))

    def output(self) -> list[str]:
        """Every stdout line so far."""
        with self._lock:
            return list(self.lines)

    def wait_for(self, predicate: Callable[[str], bool] | str, *, after: int = 0,
                 timeout: float = WAIT) -> int:
        """Wait for a stdout line (index >= ``after``) matching; return the index after it."""
        check = predicate if callable(predicate) else (lambda line: predicate in line)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = self.output()
            for index in range(after, len(lines)):
                if check(lines[index]):
                    return index + 1
            if self.process.poll() is not None and len(self.output()) == len(lines):
                break
            time.sleep(0.01)
        raise AssertionError(f"no line matching {predicate!r}; output:\n"
                             + "\n".join(self.output()) + "\nstderr:\n" + self.stderr_now())

    def stderr_now(self) -> str:
        """stderr so far."""
        with self._lock:
            return "\n".join(self.errors)

    def send(self, line: str) -> None:
        """Type ``line`` on the command's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def close_input(self) -> None:
        """End of input (Ctrl-D)."""
        assert self.process.stdin is not None
        self.process.stdin.close()

    def finish(self, timeout: float = WAIT) -> int:
        """Wait for the exit code."""
        code = self.process.wait(timeout)
        for reader in self._readers:
            reader.join(timeout)
        return code

    def kill(self) -> None:
        """Stop it if still running, and close the pipes (test cleanup)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(WAIT)
        for reader in self._readers:
            reader.join(WAIT)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
