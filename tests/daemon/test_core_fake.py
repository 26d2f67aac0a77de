"""The daemon core with a fake publisher, no broker (issue 10): fast checks of its decisions.

:class:`~table_controller.testing.core_rig.CoreTable` runs the real
:class:`~table_controller.daemon.core.TableCore` (presence, journal, engine,
projection) in process on a clock the test advances; only the MQTT side is the
recording fake. The same paths run end to end against a real Mosquitto in
test_daemon_e2e.py and test_console.py; these catch a wrong decision in
milliseconds and without a broker to blame.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from firmware_bridge.messages import TagArrived
from table_controller.daemon.core import ConsoleCommand, ReaderReport
from table_controller.domain.cards import Card
from table_controller.mqtt.publisher import CommandRequest
from table_controller.testing.core_rig import CoreTable

CLEAN_ALERTS = {"community_card"}
"""Rule 15: with eight players to 7th street the deck runs short; the only code a
clean demo hand may publish (documented in docs/alerts.md)."""


def journal_lines(table: CoreTable) -> list[dict[str, Any]]:
    """The journal's records so far."""
    path = table.journal.path
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def command(name: str, payload: object, client: str = "pit") -> CommandRequest:
    """A console request with a response topic under the table's reply tree."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return CommandRequest(name, body, f"stud/v1/soak/reply/{client}", b"corr-" + name.encode())


def test_clean_demo_hands_raise_no_alert_and_hide_the_down_cards(tmp_path: Path) -> None:
    """Ten planned demo hands: state and events are published, no alert but rule 15's,
    and no public payload names a down card (only counts)."""
    table = CoreTable(tmp_path)
    try:
        rng = random.Random(7)
        for _ in range(10):
            table.hand(rng)
        published = table.publisher
        assert published.on("state"), "no state published"
        assert set(published.alerts) <= CLEAN_ALERTS, published.alerts
        for topic, payload in published.public():
            for seat in payload.get("seats") or []:
                down = seat.get("down")
                assert down is None or isinstance(down, int), (topic, seat)
        secure = published.on("secure/state")[-1]
        assert secure["table"] == "soak"
    finally:
        table.close()


def test_a_foreign_tag_is_an_alert_that_names_no_uid(tmp_path: Path) -> None:
    """A tag that is in no deck, dealt in a hand: the floor hears of it (someone must
    remove the card), and the alert carries no tag UID (a foreign card's UID can be
    a marked card's)."""
    table = CoreTable(tmp_path)
    try:
        table.core.publish_snapshot()
        first, second = table.layout.zones[0], table.layout.zones[2]  # seat 1 and 2 down
        deck = table.registry.decks[0]
        reader, port = table.layout.antennas_of(first)[0]
        own = table.registry.uid_for(Card.parse("2c"), deck)
        table.core.handle(ReaderReport(reader, TagArrived(port, own), table.now))
        table.advance(table.hold + 0.2)
        reader, port = table.layout.antennas_of(second)[0]
        uid = "DEADBEEF00112233"
        table.core.handle(ReaderReport(reader, TagArrived(port, uid), table.now))
        table.advance(table.hold + 0.2)
        alerts = table.publisher.on("alerts")
        assert [a["code"] for a in alerts] == ["unknown_card"]
        text = json.dumps(alerts)
        assert uid not in text.upper()
    finally:
        table.close()


def test_a_good_console_command_is_journaled_applied_and_answered(tmp_path: Path) -> None:
    """``cmd/seat``: journaled before its effect, then the reply says ok."""
    table = CoreTable(tmp_path)
    try:
        before = len(journal_lines(table))
        table.core.handle(ConsoleCommand(command("seat", {"seat": 3, "name": "Ann"})))
        [(request, reply)] = table.publisher.replies
        assert reply["accepted"] is True, reply
        assert request.correlation_data == b"corr-seat"
        records = journal_lines(table)[before:]
        assert any(r.get("op") == "seat" and r.get("name") == "Ann" for r in records), records
    finally:
        table.close()


def test_bad_console_commands_change_nothing_and_say_why(tmp_path: Path) -> None:
    """Malformed JSON, an unknown command, a bad field, a reply topic outside the
    table's tree: each refused with a code and a reason, nothing journaled, and the
    floor told once per command (console_rejected)."""
    table = CoreTable(tmp_path)
    try:
        before = journal_lines(table)
        bad = [
            command("seat", b"{not json"),
            command("dance", {}),
            command("seat", {"seat": 99, "name": "X"}),
        ]
        for request in bad:
            table.core.handle(ConsoleCommand(request))
        outside = CommandRequest("seat", b'{"seat": 1, "name": "Bo"}', "elsewhere/x", b"c")
        table.core.handle(ConsoleCommand(outside))
        replies = [reply for _request, reply in table.publisher.replies]
        assert [r["accepted"] for r in replies] == [False, False, False]
        assert [r["code"] for r in replies] == ["bad_json", "unknown_command", "unknown_seat"]
        assert all(r["reason"] for r in replies)
        # Nothing of the commands is journaled; only the four alerts they raised are
        # (issue 14: every alert is journaled before it is published).
        added = journal_lines(table)[len(before):]
        assert [r.get("op") for r in added] == ["alert"] * 4
        assert {r.get("code") for r in added} == {"console_rejected"}
        assert table.publisher.alerts.count("console_rejected") == 4
    finally:
        table.close()


def test_a_card_the_journal_cannot_take_is_held_and_reported(tmp_path: Path) -> None:
    """The journal refuses writes: the card waits in memory, nothing new is published
    for it, and the table reports the problem (health + alert) at once."""
    table = CoreTable(tmp_path)
    try:
        table.core.publish_snapshot()
        states = len(table.publisher.on("state"))
        table.journal.close()  # every append now fails as a write error would
        zone = table.layout.zones[0]
        reader, port = table.layout.antennas_of(zone)[0]
        deck = table.registry.decks[0]
        uid = table.registry.uid_for(Card.parse("As"), deck)
        table.core.handle(ReaderReport(reader, TagArrived(port, uid), table.now))
        table.advance(table.hold + 0.2)
        assert "journal_write_failed" in table.publisher.alerts
        assert any(problem for problem in table.publisher.health)
        assert len(table.publisher.on("state")) == states
    finally:
        table.journal.close()


def test_issue21_item7_an_unpublishable_kill_reason_is_refused_before_the_journal(
    tmp_path: Path,
) -> None:
    """A ``kill`` reason "\\ud800" was journaled and applied; the state then failed to
    serialise (engine_error, no reply) and the published seat stayed ``active``.
    ESC, NUL and U+202E went out in the public announcement."""
    table = CoreTable(tmp_path)
    try:
        before = journal_lines(table)
        for number, reason in enumerate(["\ud800", "\x1b[31mred", "a\x00b", "\u202eevil"]):
            request = CommandRequest("kill", json.dumps({"seat": 3, "reason": reason}).encode(),
                                     "stud/v1/soak/reply/pit", b"corr-%d" % number)
            table.core.handle(ConsoleCommand(request))
        replies = [reply for _request, reply in table.publisher.replies]
        assert [(r["accepted"], r["code"]) for r in replies] == [(False, "invalid_command")] * 4
        added = journal_lines(table)[len(before):]
        assert [r.get("op") for r in added] == ["alert"] * 4  # the refusals' alerts only
        assert "engine_error" not in table.publisher.alerts
    finally:
        table.close()
