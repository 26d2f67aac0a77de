"""Issue 14 inside the daemon's core, fast: a real journal on disk and a recording
publisher (no broker): alerts raised by the MQTT side join the open set, the open set
stays bounded by closing the oldest visibly, an alert raised while the journal cannot
be written still goes out, and a restart rebuilds the open set, the dealer and the
record of a hand that had ended (same ``hand_id``)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from table_controller.daemon.core import PublishedAlert, TableCore
from table_controller.daemon.floor import MAX_OPEN_ALERTS, TABLE_ACTOR
from table_controller.domain.engine.alerts import AlertCode, alert_severity
from table_controller.domain.engine.settings import TableSettings
from table_controller.mqtt.payloads import (
    AlertPayload,
)
from table_controller.mqtt.publisher import CommandRequest
from table_controller.records.journal import Journal, current_hand_records, read_journal
from table_controller.table.deck import load_decks
from table_controller.table.layout import load_layout
from table_controller.table.presence import PresenceTracker
from table_controller.testing.core_rig import RecordingPublisher
from table_controller.testing.daemon_rig import DECK, LAYOUT


def make_core(tmp: Path) -> tuple[TableCore, RecordingPublisher, Journal]:
    layout = load_layout(LAYOUT)
    registry = load_decks([DECK])
    journal = Journal.open(tmp / "t.journal.jsonl", fsync="never")
    recorder = RecordingPublisher()
    wall = itertools.count(1_800_000_000)  # every reading later than the last
    ids = itertools.count(1)
    core = TableCore(
        table_id="t1", settings=TableSettings(seats=layout.seats), layout=layout,
        presence=PresenceTracker(layout, registry, 0.3), journal=journal,
        publisher=recorder, registry=registry,
        wall_clock=lambda: float(next(wall)), mono_clock=lambda: 100.0,
        alert_ids=lambda: f"t1:{next(ids)}",
    )
    return core, recorder, journal


def console(core: TableCore, name: str, body: Any) -> Any:
    return core.console_command(CommandRequest(name, json.dumps(body).encode(), None, None))


def restart(tmp: Path, journal: Journal) -> tuple[TableCore, RecordingPublisher]:
    journal.close()
    records = read_journal(tmp / "t.journal.jsonl").records
    (tmp / "t.journal.jsonl").rename(tmp / "old.jsonl")  # the new core journals anew
    core, recorder, _ = make_core(tmp)
    core.restore(current_hand_records(records))
    core.publish_snapshot()
    return core, recorder


def test_alert_raised_by_the_mqtt_side_joins_the_open_set(tmp_path: Path) -> None:
    core, recorder, journal = make_core(tmp_path)
    code = AlertCode.MQTT_BACKLOG
    core.handle(PublishedAlert(AlertPayload(
        table="t1", hand=None, seq=7, ts=1.5, code=code, severity=alert_severity(code),
        message="backlog", id="t1:99")))
    assert [a["id"] for a in recorder.last("alerts/open")["alerts"]] == ["t1:99"]
    assert recorder.on("alerts") == []  # it went out already, from the MQTT side
    journal.sync()
    assert [r["id"] for r in read_journal(journal.path).records if r["op"] == "alert"] == [
        "t1:99"]


def test_open_set_is_bounded_the_oldest_closed_visibly(tmp_path: Path) -> None:
    core, recorder, journal = make_core(tmp_path)
    for number in range(MAX_OPEN_ALERTS + 1):
        core.alert(AlertCode.READER_FAULT, f"fault {number}")
    open_now = recorder.last("alerts/open")["alerts"]
    assert len(open_now) == MAX_OPEN_ALERTS
    assert open_now[0]["message"] == "fault 1"
    [change] = recorder.on("alerts/changes")
    assert (change["id"], change["state"], change["by"]) == ("t1:1", "resolved", TABLE_ACTOR)
    assert "more than 200 alerts were open" in change["note"]
    journal.sync()
    resolves = [r for r in read_journal(journal.path).records if r["op"] == "resolve"]
    assert [(r["alert"], r["by"]) for r in resolves] == [("t1:1", TABLE_ACTOR)]


def test_alert_is_published_even_when_the_journal_cannot_take_it(tmp_path: Path) -> None:
    core, recorder, journal = make_core(tmp_path)
    journal.close()  # every append now fails
    core.alert(AlertCode.READER_FAULT, "antenna 3 fault")
    # The alert, and the journal's own failure (said while the first was journaled),
    # both out and both open, oldest first.
    assert sorted(a["code"] for a in recorder.on("alerts")) == [
        "journal_write_failed", "reader_fault"]
    assert [a["code"] for a in recorder.last("alerts/open")["alerts"]] == [
        "reader_fault", "journal_write_failed"]


def test_restart_restores_open_set_dealer_and_republishes_the_ended_hand(
    tmp_path: Path,
) -> None:
    core, recorder, journal = make_core(tmp_path)
    assert console(core, "dealer", {"action": "in", "id": "D17", "name": "Ann"}).accepted
    assert console(core, "hand", {"players": [1, 2], "stacks": {"1": 50, "2": 50}}).accepted
    core.alert(AlertCode.READER_FAULT, "first")
    core.alert(AlertCode.READER_FAULT, "second")
    assert console(core, "ack", {"alert": "t1:1", "by": "Bob"}).accepted
    refused = console(core, "ack", {"alert": "t1:1", "by": "Bob"})
    assert (refused.accepted, refused.code) == (False, "alert_acknowledged")
    assert console(core, "end", {}).accepted
    [record] = recorder.on("hands")
    assert record["ended"] == "killed"
    assert record["dealer"] == {"id": "D17", "name": "Ann"}
    assert [a["id"] for a in record["alerts"]] == ["t1:1", "t1:2"]
    before_open = recorder.last("alerts/open")["alerts"]
    before_dealer = recorder.last("dealer")

    core2, recorder2 = restart(tmp_path, journal)
    assert recorder2.last("alerts/open")["alerts"] == before_open
    after_dealer = recorder2.last("dealer")
    assert (after_dealer["dealer"], after_dealer["since"]) == (before_dealer["dealer"],
                                                               before_dealer["since"])
    [again] = recorder2.on("hands")
    assert again["hand_id"] == record["hand_id"]  # the archive keeps it once
    assert {k: v for k, v in again.items() if k not in ("seq", "ts", "ended_ts")} == {
        k: v for k, v in record.items() if k not in ("seq", "ts", "ended_ts")}
    # The lifecycle goes on: the refusals and acceptances are those of before.
    assert console(core2, "resolve", {"alert": "t1:1", "by": "Bob", "note": "ok"}).accepted
    assert [a["id"] for a in recorder2.last("alerts/open")["alerts"]] == ["t1:2"]


def test_a_rotated_file_alone_restores_the_open_set_and_dealer(tmp_path: Path) -> None:
    """Rotation heads the new file with the dealer and the open alerts (as the
    daemon's runner sets :attr:`Journal.header`), so the live file alone restores them."""
    core, recorder, journal = make_core(tmp_path)
    journal.close()
    journal = Journal.open(tmp_path / "t.journal.jsonl", fsync="never", max_bytes=1)
    core.journal = journal
    journal.header = core.book.header_ops  # what Daemon._journal_header adds
    assert console(core, "dealer", {"action": "in", "id": "D17", "name": "Ann"}).accepted
    assert console(core, "hand", {"players": [1, 2]}).accepted
    core.alert(AlertCode.READER_FAULT, "first")
    core.alert(AlertCode.READER_FAULT, "second")
    assert console(core, "ack", {"alert": "t1:2", "by": "Bob"}).accepted
    assert console(core, "resolve", {"alert": "t1:1", "by": "Bob", "note": "fixed"}).accepted
    assert console(core, "hand", {"players": [1, 2]}).accepted  # rotates: a new file
    assert any(p.name.startswith("t.journal.1-") for p in tmp_path.iterdir())
    live = read_journal(tmp_path / "t.journal.jsonl").records
    assert live[-1]["op"] == "hand"  # header, then the hand
    before_open = recorder.last("alerts/open")["alerts"]
    before_dealer = recorder.last("dealer")
    _, recorder2 = restart(tmp_path, journal)
    assert recorder2.last("alerts/open")["alerts"] == before_open
    assert [a["id"] for a in before_open] == ["t1:2"]
    assert recorder2.last("dealer")["dealer"] == before_dealer["dealer"]
    assert recorder2.last("dealer")["since"] == before_dealer["since"]
