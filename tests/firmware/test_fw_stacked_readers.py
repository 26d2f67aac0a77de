"""The ISO 15693 readers through the real daemon and Mosquitto (issue 23): a hand
dealt on an ISO 15693 deck (8-byte UIDs) through

* the reference firmware with PN5180 modules (the driver over the register model of
  the chip, fake_pn5180.py) on a real pty, and
* the FEIG ISC reader kind: the emulated FEIG reader on a pty polled by the daemon's
  FeigReaderLink (the layout names `kind = "feig-isc"`),

each ending as dealt with no alert. As test_fw_in_the_loop.py, whose rig and helpers
this reuses."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_fw_in_the_loop as loop
from pn5180_rig import PN5180Board, real_time

from firmware_bridge.feig.emulator import FeigReaderEmulator
from table_controller.daemon.config import load_config
from table_controller.daemon.runner import EQUITY_WORKER_ENV, Daemon
from table_controller.domain.events import CardPlaced, CardRemoved, HandStarted, TableEvent
from table_controller.simulation import deal_random
from table_controller.table.deck import load_decks
from table_controller.table.layout import load_layout
from table_controller.testing.broker import WAIT, MosquittoBroker, wait_until
from table_controller.testing.daemon_rig import ROOT, clear_table, subscribe, wait_state
from table_controller.tools.deck_command import deck_file_text
from table_controller.tools.deck_register import REGISTRATION_ORDER


def iso15693_deck(path: Path, seed: int) -> Path:
    """A deck of ICODE SLIX-style tags (E0 04 + 6 random bytes), mode 0600."""
    rng = random.Random(seed)
    uids: list[str] = []
    while len(uids) < len(REGISTRATION_ORDER):
        uid = (b"\xe0\x04" + rng.randbytes(6)).hex().upper()
        if uid not in uids:
            uids.append(uid)
    path.write_text(deck_file_text("slix", dict(zip(REGISTRATION_ORDER, uids, strict=True))))
    path.chmod(0o600)
    return path


def play_a_hand(port: int, apply_all: loop.FirmwareTable | FeigTable, seed: int) -> None:
    sub = subscribe(port)
    wait_state(sub, lambda s: s["state"] == "online", topic=f"{ROOT}/readers/{loop.READER_ID}")
    wait_state(sub, lambda s: s["hand"] is None)
    deal = deal_random([1, 2], random.Random(seed), fold_chance=0.0)
    apply_all.deal([e for street in range(3, 8) for e in loop.street_events(deal, street)])
    state = wait_state(sub, lambda s: loop.shown(s) == loop.view(deal, 7))
    assert state["street"] == 7
    assert state["alerts"] == []
    apply_all.deal(clear_table(deal))
    sub.wait_for(lambda m: m.topic == f"{ROOT}/events" and m.json().get("kind") == "hand_result")
    assert [m for m in sub.snapshot() if m.topic == f"{ROOT}/alerts"] == []
    loop.no_uid_on_public_topics(sub)


def test_pn5180_firmware_deals_a_hand_through_the_daemon(
        tmp_path: Path, mosquitto: MosquittoBroker, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EQUITY_WORKER_ENV, "off")
    monkeypatch.setattr(loop, "DECK", iso15693_deck(tmp_path / "slix.toml", 15693))
    with real_time():
        board = PN5180Board(len(loop.ZONES), slot_ms=1)
        table = loop.FirmwareTable(tmp_path, mosquitto, front_end=board)  # type: ignore[arg-type]
        try:
            play_a_hand(load_config(table.config).broker.port, table, 41)
            assert all(chip.protocol_errors == [] for chip in board.chips)
            assert board.scans > 0
        finally:
            table.stop()


class FeigTable:
    """The emulated FEIG reader (COM-ADR 7, outputs 0..6 = the zones) and the daemon."""

    def __init__(self, tmp: Path, broker: MosquittoBroker, deck: Path) -> None:
        self.tmp = tmp
        (tmp / "dev").mkdir()
        self.reader = FeigReaderEmulator(tmp / "dev", loop.READER_ID,
                                         antenna_count=len(loop.ZONES)).start()
        layout = tmp / "layout.toml"
        layout.write_text("\n".join([
            'name = "FEIG table"', "seats = 2", "", "[[readers]]", f"id = {loop.READER_ID}",
            'kind = "feig-isc"', f'device = "{self.reader.path}"', "[readers.antennas]",
            *(f'{port} = "{zone}"' for port, zone in enumerate(loop.ZONES)),
        ]) + "\n")
        self.layout = load_layout(layout)
        self.registry = load_decks([deck])
        self.deck = self.registry.decks[0]
        self.config = tmp / "table.toml"
        self.config.write_text("\n".join([
            "[table]", f'id = "{loop.TABLE}"', 'layout = "layout.toml"', f'decks = ["{deck}"]',
            "presence_hold = 0.3", "heartbeat_period = 1.0",
            "[stakes]", "ante = 1", "bring_in = 2", "small_bet = 5", "big_bet = 10",
            "[broker]", 'host = "127.0.0.1"', f"port = {broker.port}", "reconnect_max_delay = 1",
            "[journal]", 'directory = "journal"',
            "[log]", 'format = "console"', 'level = "warning"',
        ]) + "\n")
        self.daemon = Daemon(load_config(self.config))
        self._thread = threading.Thread(target=self.daemon.run,
                                        kwargs={"install_signals": False}, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.daemon.request_stop()
        self._thread.join(timeout=WAIT)
        self.reader.stop()

    def apply(self, event: TableEvent) -> None:
        if isinstance(event, CardPlaced | CardRemoved):
            [(_reader, port)] = self.layout.antennas_of(event.zone)
            uid = self.registry.uid_for(event.card, event.deck or self.deck)
            if isinstance(event, CardPlaced):
                self.reader.place(port, uid)
            else:
                self.reader.remove(port, uid)

    def deal(self, events: list[TableEvent], pace: float = 0.05) -> None:
        """As FirmwareTable.deal: the next card once the daemon journaled the last."""
        for event in events:
            if isinstance(event, HandStarted):
                continue
            seen = loop.FirmwareTable.journaled(self, event)  # type: ignore[arg-type]
            self.apply(event)
            if seen is not None:
                wait_until(lambda e=event, n=seen: (loop.FirmwareTable.journaled(
                    self, e) or 0) > n, 10.0, "the card journaled")  # type: ignore[arg-type]


@pytest.fixture
def feig_table(tmp_path: Path, mosquitto: MosquittoBroker,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[FeigTable]:
    monkeypatch.setenv(EQUITY_WORKER_ENV, "off")
    rig = FeigTable(tmp_path, mosquitto, iso15693_deck(tmp_path / "slix.toml", 1569))
    try:
        yield rig
    finally:
        rig.stop()


def test_feig_reader_deals_a_hand_through_the_daemon(feig_table: FeigTable) -> None:
    play_a_hand(load_config(feig_table.config).broker.port, feig_table, 43)
    link = feig_table.daemon.links[loop.READER_ID]
    assert type(link).__name__ == "FeigReaderLink"
    assert link.stats.errors == 0
