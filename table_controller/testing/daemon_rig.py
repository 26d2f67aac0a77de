"""A real table in a test: Mosquitto, emulated readers on ptys, the real daemon.

The daemon runs either in a thread of the test process (fast, inspectable) or
as a real ``stud-table run`` subprocess (for ``kill -9`` and exit codes).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from table_controller.daemon.config import load_config
from table_controller.daemon.runner import Daemon
from table_controller.domain.events import CardPlaced, CardRemoved, HandStarted, TableEvent
from table_controller.domain.zones import MUCK, Zone
from table_controller.records.journal import read_journal
from table_controller.simulation.emulated_table import EmulatedTable
from table_controller.simulation.physical import PhysicalDeal
from table_controller.simulation.session import table_config_toml
from table_controller.table.deck import load_decks
from table_controller.table.layout import load_layout
from table_controller.testing.broker import (
    WAIT,
    MosquittoBroker,
    Received,
    RecordingSubscriber,
    kill9,
    wait_until,
)

REPO = Path(__file__).resolve().parents[2]
LAYOUT = REPO / "hardware" / "layouts" / "table-8.toml"
DECK = REPO / "hardware" / "decks" / "example-deck.toml"
SECOND_DECK = REPO / "hardware" / "decks" / "example-deck-blue.toml"
TABLE = "t1"
ROOT = f"stud/v1/{TABLE}"
JOURNAL_WAIT = 10.0


class TableRig:
    """Broker + emulated table + config; start the daemon with one of the ``start_*``."""

    def __init__(self, tmp: Path, broker: MosquittoBroker, *, hold: float = 0.3) -> None:
        self.tmp = tmp
        self.broker = broker
        self.layout = load_layout(LAYOUT)
        self.registry = load_decks([DECK, SECOND_DECK])
        # A scan cycle well below the dealing pace: readers are independent, so
        # only cards further apart than a scan cycle reach the host in order.
        self.table = EmulatedTable(
            self.layout, self.registry, tmp / "dev", scan_period=0.02
        ).start()
        self.table.write_layout(LAYOUT, tmp / "layout.toml")
        self.config_path = tmp / "table.toml"
        self.config_path.write_text(
            table_config_toml(
                table_id=TABLE,
                layout="layout.toml",
                decks=[str(DECK), str(SECOND_DECK)],
                port=broker.port,
                presence_hold=hold,
                heartbeat_period=0.5,
                reconnect_max_delay=1,
                log_level="warning",
            )
        )
        self.daemon: Daemon | None = None
        self._thread: threading.Thread | None = None
        self.process: subprocess.Popen[bytes] | None = None

    # ------------------------------------------------------------ the daemon

    def start_thread(self) -> Daemon:
        """Run the daemon in a thread of this process."""
        self.daemon = Daemon(load_config(self.config_path))
        self._thread = threading.Thread(
            target=self.daemon.run, kwargs={"install_signals": False}, daemon=True
        )
        self._thread.start()
        return self.daemon

    def refused_start(self) -> str:
        """Run ``stud-table run`` on the rig's (edited) config and expect the start to be
        refused: exit 2 with one line on stderr, which is returned."""
        result = subprocess.run(
            [sys.executable, "-m", "table_controller", "run", "--config", str(self.config_path)],
            capture_output=True, text=True, timeout=60, check=False,
        )
        assert result.returncode == 2, result.stdout + result.stderr
        message = result.stderr.strip()
        assert "\n" not in message, message
        return message

    def start_process(self) -> subprocess.Popen[bytes]:
        """Run ``stud-table run --config`` as a child process."""
        log = (self.tmp / "daemon.log").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "table_controller", "run", "--config", str(self.config_path)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        log.close()
        return self.process

    def kill9(self) -> None:
        """``kill -9`` the daemon process."""
        assert self.process is not None
        kill9(self.process)
        self.process = None

    def __enter__(self) -> TableRig:
        """The rig, stopped (:meth:`stop`) when the ``with`` block ends."""
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop whatever daemon runs (cleanly), then the readers."""
        if self.daemon is not None and self._thread is not None:
            self.daemon.request_stop()
            self._thread.join(timeout=WAIT)
            self.daemon = None
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=WAIT)
            self.process = None
        self.table.stop()

    def daemon_log(self) -> str:
        """What the daemon process wrote (for failure messages)."""
        path = self.tmp / "daemon.log"
        return path.read_text(errors="replace") if path.exists() else ""

    # ---------------------------------------------------------------- dealing

    def deal(self, events: Iterable[TableEvent], pace: float = 0.08) -> None:
        """Put the cards of ``events`` on the emulated antennas, one at a time.

        Like a dealer who sees each card land, the next card waits (up to
        :data:`JOURNAL_WAIT` s, then goes on regardless: pacing, not a check)
        until the running daemon has journaled the last one. Readers are
        independent, so on a loaded machine two cards on different antennas
        a pace apart could otherwise reach the daemon in the other order
        (a false ``missing_burn`` seen once in CI-like load).
        """
        for event in events:
            if isinstance(event, HandStarted):
                continue  # a card-only table learns the players from the deal
            seen = self._journaled(event)
            self.table.apply(event)
            if seen is not None and self.running():
                deadline = time.monotonic() + JOURNAL_WAIT
                while (self._journaled(event) or 0) <= seen and time.monotonic() < deadline:
                    time.sleep(0.01)
            time.sleep(pace)

    def running(self) -> bool:
        """Whether a daemon (thread or process) is running now."""
        return (self.daemon is not None
                or (self.process is not None and self.process.poll() is None))

    def _journaled(self, event: TableEvent) -> int | None:
        """How many journal records put ``event``'s card in its zone (None:
        not a registered card being placed, nothing to wait for)."""
        if not isinstance(event, CardPlaced):
            return None
        path = self.tmp / "journal" / f"{TABLE}.journal.jsonl"
        if not path.exists():
            return 0
        card, zone = event.card.code, event.zone.name
        return sum(1 for record in read_journal(path).records
                   if record.get("op") == "place" and record.get("card") == card
                   and record.get("zone") == zone)


def clear_table(deal: PhysicalDeal) -> list[CardPlaced | CardRemoved]:
    """The dealer gathers what is left at the seats still in into the muck (the hand
    then ends; on a card-only table the last seat left is its winner)."""
    out: list[CardPlaced | CardRemoved] = []
    for seat in deal.live_seats:
        for zone, cards in ((Zone.down(seat), deal.down(seat)), (Zone.up(seat), deal.up(seat))):
            for card in cards:
                out += [CardRemoved(zone, card), CardPlaced(MUCK, card)]
    return out


def subscribe(port: int, *topics: str, persistent: bool = False) -> RecordingSubscriber:
    """A recording subscriber on ``topics`` (default: everything of the table)."""
    sub = RecordingSubscriber(port, topics or [f"{ROOT}/#"], persistent=persistent,
                              client_id=f"rig-{time.monotonic_ns()}" if persistent else "")
    sub.wait_subscribed()
    return sub


def latest(sub: RecordingSubscriber, topic: str) -> dict[str, Any] | None:
    """The last payload received on ``topic``, parsed."""
    found = [m for m in sub.snapshot() if m.topic == topic]
    return json.loads(found[-1].payload) if found else None


def events_of(sub: RecordingSubscriber, topic: str, kind: str) -> list[dict[str, Any]]:
    """Every event of ``kind`` received on ``topic``."""
    out = []
    for message in sub.snapshot():
        if message.topic == topic:
            payload = json.loads(message.payload)
            if payload.get("kind") == kind:
                out.append(payload)
    return out


def wait_state(sub: RecordingSubscriber, check: Any, topic: str = f"{ROOT}/state",
               timeout: float = WAIT) -> dict[str, Any]:
    """Wait until the latest state on ``topic`` satisfies ``check``; return it."""
    def ok() -> bool:
        state = latest(sub, topic)
        return state is not None and bool(check(state))

    wait_until(ok, timeout, f"a state on {topic} matching {check}")
    state = latest(sub, topic)
    assert state is not None
    return state


def seats_view(state: dict[str, Any]) -> dict[int, tuple[str, tuple[str, ...], int]]:
    """seat -> (status, up cards, down count) of a published state."""
    return {
        s["seat"]: (s["status"], tuple(s["up"]), s["down_count"]) for s in state["seats"]
    }


def is_public(message: Received) -> bool:
    """Whether a message is on a topic the public may read."""
    return "/secure/" not in message.topic
