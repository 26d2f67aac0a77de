"""Helpers of the fault tests: a physical table mirror, hands dealt and cleared,
the journal read back, and a small file system to fill or make read-only.

The journal tests run the real daemon as a subprocess (``TableRig.start_process``)
against real Mosquitto and emulated readers on ptys.
"""

from __future__ import annotations

import contextlib
import json
import resource
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import HandState, replay_events
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import CardPlaced, CardRemoved, HandStarted, TableEvent
from table_controller.domain.zones import Zone
from table_controller.records.journal import read_journal
from table_controller.simulation.physical import PhysicalDeal
from table_controller.testing.broker import WAIT, RecordingSubscriber, wait_until
from table_controller.testing.daemon_rig import ROOT, TABLE, TableRig

JOURNAL_NAME = f"{TABLE}.journal.jsonl"

LEAVE_PAUSE = 0.45
"""Seconds a dealer waits after taking cards off the table (presence hold 0.3 s)."""


@dataclass
class Mirror:
    """The emulated table plus a record of where every card lies (what the
    readers show), so a test knows the table without asking the daemon."""

    rig: TableRig
    where: dict[Card, Zone] = field(default_factory=dict)
    history: list[CardPlaced | CardRemoved] = field(default_factory=list)

    def apply(self, event: TableEvent) -> None:
        """Put one event on the table."""
        if isinstance(event, CardPlaced):
            self.where[event.card] = event.zone
        elif isinstance(event, CardRemoved):
            self.where.pop(event.card, None)
        else:
            return
        self.rig.table.apply(event)
        self.history.append(event)

    def run(self, events: Iterable[TableEvent], pace: float = 0.06) -> None:
        """Apply ``events`` one at a time, ``pace`` seconds apart.

        Like the demo's dealer, a card taken off the table is followed by a
        pause longer than the presence hold before another card is put down
        (unless it is the same card moving, e.g. a fold into the muck): the
        daemon learns of a departure only after the hold, so without the pause
        the next card would reach it first.
        """
        for event in events:
            if not isinstance(event, CardPlaced | CardRemoved):
                continue
            last = self.history[-1] if self.history else None
            if (isinstance(last, CardRemoved) and isinstance(event, CardPlaced)
                    and event.card != last.card):
                time.sleep(LEAVE_PAUSE)
            self.apply(event)
            time.sleep(pace)

    def positions(self) -> set[tuple[str, str]]:
        """(card, zone) of every card on the table."""
        return {(card.code, zone.name) for card, zone in self.where.items()}


def hand_events(deal: PhysicalDeal) -> list[CardPlaced | CardRemoved]:
    """One hand as a dealer makes it: the deal, the live hands picked up
    together (a showdown), then the muck, burn pile and board gathered."""
    events: list[CardPlaced | CardRemoved] = [
        e for e in deal.events if isinstance(e, CardPlaced | CardRemoved)
    ]
    where: dict[Card, Zone] = {}
    for event in events:
        if isinstance(event, CardPlaced):
            where[event.card] = event.zone
        else:
            where.pop(event.card, None)
    seats = [(c, z) for c, z in where.items() if z.seat is not None]
    piles = [(c, z) for c, z in where.items() if z.seat is None]
    events += [CardRemoved(z, c) for c, z in sorted(seats, key=lambda cz: cz[1].name)]
    events += [CardRemoved(z, c) for c, z in piles]
    return events


def reference_hands(events: Iterable[TableEvent]) -> list[HandState]:
    """The hands a daemon that never stopped finds in the same physical events
    (the engine in card-only mode, as the daemon runs it)."""
    settings = TableSettings(seats=8, ante=1, bring_in=2, small_bet=5, big_bet=10,
                             auto_hands=True)
    return replay_events([e for e in events if not isinstance(e, HandStarted)], settings)


def journal_file(rig: TableRig) -> Path:
    """The daemon's live journal."""
    return rig.tmp / "journal" / JOURNAL_NAME


def journal_positions(rig: TableRig) -> set[tuple[str, str]]:
    """Where the journal says the cards lie (its place/remove records folded)."""
    where: dict[str, str] = {}
    for record in read_journal(journal_file(rig)).records:
        if record.get("op") == "place" and "card" in record:
            where[record["card"]] = record["zone"]
        elif record.get("op") == "remove" and where.get(record.get("card", "")) == record.get(
            "zone"
        ):
            del where[record["card"]]
    return set(where.items())


def wait_caught_up(rig: TableRig, mirror: Mirror, timeout: float = WAIT * 2) -> None:
    """Wait until the journal accounts for every card where the table has it."""
    wait_until(lambda: journal_positions(rig) == mirror.positions(), timeout,
               "the journal to catch up with the table\n" + rig.daemon_log()[-3000:])


def payloads(sub: RecordingSubscriber, topic: str) -> list[dict[str, Any]]:
    """Every payload received on ``ROOT/topic``, parsed."""
    return [json.loads(m.payload) for m in sub.snapshot() if m.topic == f"{ROOT}/{topic}"]


def alert_codes(sub: RecordingSubscriber) -> list[str]:
    """Codes of every alert received."""
    return [a["code"] for a in payloads(sub, "alerts")]


def status_of(sub: RecordingSubscriber) -> dict[str, Any]:
    """The latest status payload."""
    found = payloads(sub, "status")
    return found[-1] if found else {}


def wait_status(sub: RecordingSubscriber, status: str, timeout: float = WAIT * 2) -> dict[str, Any]:
    """Wait for ``status`` on the status topic; return that payload."""
    wait_until(lambda: status_of(sub).get("status") == status, timeout, f"status {status}")
    return status_of(sub)


# ------------------------------------------------------------------ file systems


@contextlib.contextmanager
def small_tmpfs(directory: Path, size: str = "256k") -> Iterator[bool]:
    """Mount a small tmpfs on ``directory``; yields False if mounting is not
    possible here (the caller then injects write failures instead)."""
    directory.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                           str(directory)], capture_output=True, check=False)
    try:
        yield done.returncode == 0
    finally:
        if done.returncode == 0:
            subprocess.run(["umount", "-l", str(directory)], capture_output=True, check=False)


def remount(directory: Path, mode: str) -> None:
    """Remount the tmpfs on ``directory`` ``ro`` or ``rw``."""
    subprocess.run(["mount", "-o", f"remount,{mode}", str(directory)], check=True,
                   capture_output=True)


def fill(directory: Path) -> Path:
    """Fill the file system of ``directory`` to the last byte; return the filler."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as out:  # unbuffered: nothing left to flush
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    out.write(b"\0" * size)
    return filler


def limit_file_size(pid: int, limit: int) -> None:
    """Injection when no tmpfs can be mounted: writes past ``limit`` bytes fail
    (EFBIG; Python ignores SIGXFSZ) in the daemon process ``pid``."""
    # Only the soft limit: raising it back needs no privilege (the hard one would).
    _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, hard))


def unlimit_file_size(pid: int) -> None:
    """Undo :func:`limit_file_size`."""
    _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard, hard))


def restart_and_wait_ready(rig: TableRig, sub: RecordingSubscriber) -> subprocess.Popen[bytes]:
    """Start the daemon process and wait until every reader reports online to it,
    plus a margin for the start-up reconciliation (first inventories, presence
    holds of 0.3 s): a dealer who goes on before that deals into the downtime."""
    mark = len(sub.snapshot())
    process = rig.start_process()
    readers = {f"{ROOT}/readers/{reader.id}" for reader in rig.layout.readers}

    def ready() -> bool:
        online = {m.topic for m in sub.snapshot()[mark:]
                  if m.topic in readers and json.loads(m.payload).get("state") == "online"}
        return online == readers

    wait_until(ready, WAIT * 2, "every reader online after the restart\n"
               + rig.daemon_log()[-2000:])
    time.sleep(1.0)
    return process
