"""Issue 9 items 1, 2, 4, 5, 7 and request ids: hostile console requests against the
real daemon on a real Mosquitto, with emulated readers dealing real cards.

Each test is the named regression test of one reported attack: the daemon must
stay up and connected, carry out nothing it cannot answer, reply only under its
own ``reply/`` tree, never run a retained command, and answer every ``cmd/``
name (docs/rules.md is not involved: these are edge rules, docs/console.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile import BROKER_LIMITS, REPLY, daemon_topics, replies, send

from table_controller.daemon.config import load_config
from table_controller.daemon.runner import Daemon
from table_controller.domain.cards import Card
from table_controller.domain.events import CardPlaced
from table_controller.domain.zones import Zone
from table_controller.mqtt.request import send_request
from table_controller.records.journal import read_journal
from table_controller.testing.broker import WAIT, MosquittoBroker, RecordingSubscriber, wait_until
from table_controller.testing.daemon_rig import ROOT, TABLE, TableRig, events_of, latest, wait_state

STATE = f"{ROOT}/state"
ALERTS = f"{ROOT}/alerts"
EVENTS = f"{ROOT}/events"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """The tests' broker with the deploy config's packet limit."""
    (tmp_path / "broker").mkdir()
    with MosquittoBroker(tmp_path / "broker", extra_config=BROKER_LIMITS) as running:
        yield running


@pytest.fixture
def table(tmp_path: Path, broker: MosquittoBroker) -> Iterator[TableRig]:
    """A table rig (its daemon started by the test) on that broker."""
    with TableRig(tmp_path, broker) as rig:
        yield rig


@pytest.fixture
def client(broker: MosquittoBroker) -> Iterator[RecordingSubscriber]:
    """An anonymous client that sees every topic (replies included) and sends requests."""
    sub = RecordingSubscriber(broker.port, ["#"])
    sub.wait_subscribed()
    yield sub
    sub.close()


def start(rig: TableRig, client: RecordingSubscriber) -> threading.Thread:
    """Start the daemon in a thread; wait for its first state; return its thread."""
    daemon = rig.start_thread()
    assert daemon.publisher.wait_online(WAIT)  # subscribed to its commands
    wait_state(client, lambda s: s["hand"] is None)
    assert rig._thread is not None
    return rig._thread


def answered(client: RecordingSubscriber, name: str, payload: bytes,
             correlation: bytes) -> dict[str, object]:
    """Send a well-formed request and return the daemon's reply."""
    send(client, name, payload, REPLY, correlation)
    reply = client.wait_for(lambda m: m.correlation_data == correlation
                            and "/cmd/" not in m.topic)[0]
    assert reply.topic == REPLY
    result: dict[str, object] = reply.json()
    return result


def deal_two_cards(rig: TableRig, client: RecordingSubscriber) -> None:
    """Deal a down card to seats 1 and 2 and wait for both events (a card-only hand)."""
    before = len(events_of(client, EVENTS, "card_dealt_down"))
    rig.deal([CardPlaced(Zone.down(1), Card.parse("As")),
              CardPlaced(Zone.down(2), Card.parse("Kd"))], pace=0.05)
    wait_until(lambda: len(events_of(client, EVENTS, "card_dealt_down")) == before + 2,
               what="both card events")


def published_by_daemon_outside_its_topics(client: RecordingSubscriber) -> list[str]:
    allowed = (*daemon_topics(), f"{ROOT}/cmd/")
    return [m.topic for m in client.snapshot() if not m.topic.startswith(allowed)]


def test_wildcard_response_topic_does_not_kill_the_daemon(
    table: TableRig, client: RecordingSubscriber
) -> None:
    """Item 1: a Response Topic ``reply/#`` raised inside the engine thread; the
    daemon exited publishing ``offline``, and a retained copy killed every restart."""
    thread = start(table, client)
    for topic in (f"{ROOT}/reply/#", f"{ROOT}/reply/+", "#", f"{ROOT}/reply/+/x"):
        send(client, "act", b'{"seat": 1, "action": "call"}', topic, b"wild")
        send(client, "hand", b'{"players": [1, 2]}', topic, b"wild")
    # The retained variant, for the restart below.
    send(client, "end", b"{}", f"{ROOT}/reply/#", b"wild", retain=True)
    assert answered(client, "end", b"{}", b"after")["code"] == "hand_over"
    assert thread.is_alive()
    assert (latest(client, f"{ROOT}/status") or {})["status"] == "online"
    assert replies(client, b"wild") == []
    assert (latest(client, STATE) or {})["hand"] is None  # nothing was carried out
    assert table.daemon is not None
    table.daemon.request_stop()
    thread.join(WAIT)
    thread = start(table, client)
    assert answered(client, "end", b"{}", b"restarted")["code"] == "hand_over"
    assert thread.is_alive()


def test_empty_response_topic_does_not_get_the_daemon_disconnected(
    table: TableRig, client: RecordingSubscriber
) -> None:
    """Item 2: a reply to an empty topic made the broker drop the daemon; paho resent
    it at every reconnect (31 disconnects in 20 s, later cards never published)."""
    start(table, client)
    for _ in range(3):
        send(client, "act", b'{"seat": 1, "action": "call"}', "", b"empty")
    assert answered(client, "end", b"{}", b"sync")["accepted"] is False
    deal_two_cards(table, client)  # later cards are published
    assert table.daemon is not None
    counters = table.daemon.publisher.counters()
    assert counters.disconnects == 0
    assert counters.connects == 1
    assert replies(client, b"empty") == []


def test_replies_go_only_under_the_tables_reply_tree(
    table: TableRig, client: RecordingSubscriber
) -> None:
    """Item 5: replies went to any topic the requester named, the public ``state``
    included. Such a request is now refused (not carried out) with a reason in the
    log and a ``console_rejected`` alert; nothing is published outside reply/."""
    start(table, client)
    aimed = [f"{ROOT}/state", f"{ROOT}/secure/state", f"{ROOT}/alerts", f"{ROOT}/status",
             f"{ROOT}/events", "stud/v1/t2/reply/x", "$SYS/broker/x", "elsewhere",
             f"{ROOT}/reply/a/b", f"{ROOT}/reply/" + "x" * 300]
    for n, topic in enumerate(aimed):
        send(client, "hand", b'{"players": [1, 2]}', topic, f"aimed-{n}".encode())
    assert answered(client, "end", b"{}", b"sync")["code"] == "hand_over"
    for n in range(len(aimed)):
        assert replies(client, f"aimed-{n}".encode()) == []
    assert published_by_daemon_outside_its_topics(client) == []
    state = latest(client, STATE)
    assert state is not None
    assert "accepted" not in state  # the retained state is the daemon's, not a reply
    assert state["hand"] is None  # none of those hands was started
    alerts = client.wait_for(
        lambda m: m.topic == ALERTS and "bad_response_topic" in m.json()["message"],
        count=len(aimed),
    )
    assert all(a.json()["code"] == "console_rejected" for a in alerts)
    journal = read_journal(table.tmp / "journal" / f"{TABLE}.journal.jsonl").records
    assert [r for r in journal if r["op"] == "hand"] == []


def test_retained_commands_never_run(
    table: TableRig, client: RecordingSubscriber
) -> None:
    """Item 4: a retained ``cmd/hand`` started a new hand at every restart."""
    send(client, "hand", b'{"players": [1, 2]}', REPLY, b"retained", retain=True)
    start(table, client)
    assert answered(client, "end", b"{}", b"sync")["code"] == "hand_over"
    assert (latest(client, STATE) or {})["hand"] is None
    assert replies(client, b"retained") == []
    assert table.daemon is not None
    wait_until(lambda: table.daemon is not None
               and table.daemon.publisher.counters().retained_commands_ignored == 1,
               what="the retained command ignored")
    # Cleared on the broker: a new subscriber to cmd/# gets nothing retained.
    fresh = RecordingSubscriber(table.broker.port, [f"{ROOT}/cmd/#", f"{ROOT}/status"])
    try:
        fresh.wait_subscribed()
        fresh.wait_topic(f"{ROOT}/status")
        assert [m for m in fresh.snapshot() if "/cmd/" in m.topic] == []
    finally:
        fresh.close()
    journal = read_journal(table.tmp / "journal" / f"{TABLE}.journal.jsonl").records
    assert [r for r in journal if r["op"] == "hand"] == []


@pytest.mark.parametrize(
    "name", ["a/b/c", "hand/x", "", "n" * 5000, "hand/", "rebirth/x"],
    ids=["levels", "hand-below", "empty", "long", "trailing-slash", "rebirth-below"],
)
def test_every_cmd_name_is_answered_unknown_command(
    table: TableRig, client: RecordingSubscriber, name: str
) -> None:
    """Item 7: names with several levels, empty or very long got no reply, though the
    docs promise ``unknown_command``."""
    start(table, client)
    send(client, name, b"{}", REPLY, b"odd")
    reply = client.wait_for(lambda m: m.topic == REPLY and m.correlation_data == b"odd")[0]
    reply = reply.json()
    assert reply["accepted"] is False
    assert reply["code"] == "unknown_command"
    assert len(reply["command"]) < 100  # a 5000-character name is not echoed whole
    assert len(reply["reason"]) < 300


def test_a_repeated_request_id_is_carried_out_once(
    table: TableRig, client: RecordingSubscriber
) -> None:
    """Commands are idempotent where a request id allows: the same correlation data
    with the same command (a QoS 1 redelivery, a console's retry) is answered
    with the first reply and applied once."""
    start(table, client)
    body = b'{"players": [1, 2], "stacks": {"1": 50, "2": 50}}'
    first = answered(client, "hand", body, b"req-1")
    assert first["accepted"] is True
    send(client, "hand", body, REPLY, b"req-1")
    again = client.wait_for(lambda m: m.topic == REPLY and m.correlation_data == b"req-1",
                            count=2)[1].json()
    assert again == first
    # Another request id is another request: carried out (journaled) again.
    answered(client, "hand", body, b"req-2")
    journal = read_journal(table.tmp / "journal" / f"{TABLE}.journal.jsonl").records
    assert len([r for r in journal if r["op"] == "hand"]) == 2  # req-1 once, req-2
    assert table.daemon is not None
    assert table.daemon.core.console_repeats == 1


def test_a_crash_of_the_engine_thread_is_not_reported_as_a_clean_stop(
    table: TableRig, client: RecordingSubscriber, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 1's other half: the engine thread died and the daemon published
    ``offline``, as if stopped on purpose. Whatever makes the loop fail (a fault
    injected here: no console input can, see the tests above), the daemon now
    publishes ``lost`` and the exception propagates (exit 1: systemd restarts it)."""
    daemon = Daemon(load_config(table.config_path))
    errors: list[BaseException] = []

    def run() -> None:
        try:
            daemon.run(install_signals=False)
        except RuntimeError as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert daemon.publisher.wait_online(WAIT)

    def broken(_item: object) -> bool:
        raise RuntimeError("injected fault")

    monkeypatch.setattr(daemon.core, "handle", broken)
    send(client, "end", b"{}", REPLY, b"boom")
    thread.join(WAIT)
    assert not thread.is_alive()
    assert [str(e) for e in errors] == ["injected fault"]
    status = client.wait_topic(f"{ROOT}/status", lambda s: s["status"] != "online")
    assert status.json()["status"] == "lost"


def test_the_console_client_retries_with_the_same_request_id(
    table: TableRig, client: RecordingSubscriber
) -> None:
    """A request the daemon never got (here: sent before the daemon subscribed; in a
    flood: dropped by the broker or its reply shed) is sent again by
    ``stud-table console`` with the same correlation data, so it is carried out
    exactly once and answered."""
    result: list[dict[str, object]] = []
    sender = threading.Thread(target=lambda: result.append(send_request(
        "127.0.0.1", table.broker.port, TABLE, "hand", b'{"players": [1, 2]}', timeout=15.0,
    )))
    sender.start()
    first = client.wait_for(lambda m: m.topic == f"{ROOT}/cmd/hand")[0]
    start(table, client)  # the first copy found no daemon
    sender.join(WAIT)
    assert result
    assert result[0]["accepted"] is True
    copies = [m for m in client.on_topic(f"{ROOT}/cmd/hand")
              if m.correlation_data == first.correlation_data]
    assert len(copies) >= 2  # sent again, same request id
    journal = read_journal(table.tmp / "journal" / f"{TABLE}.journal.jsonl").records
    assert len([r for r in journal if r["op"] == "hand"]) == 1


# ------------------------------------------------------------------ issue 21 item 6


def test_issue21_item6_a_second_daemon_with_the_same_table_id_is_refused(
    tmp_path: Path, broker: MosquittoBroker, client: RecordingSubscriber
) -> None:
    """Two daemons with the same table id on one broker (other machines or directories)
    both stayed online with no alert: a cmd/hand answered twice and journaled by both,
    seq backwards, the retained state flip-flopping. The second now probes the table's
    claim topic before it publishes anything and is refused (exit 3, one line); the
    first alerts."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = TableRig(tmp_path / "a", broker), TableRig(tmp_path / "b", broker)
    try:
        process = first.start_process()
        wait_until(lambda: (latest(client, f"{ROOT}/status") or {}).get("status") == "online",
                   WAIT, "the first daemon online")
        readers = {f"{ROOT}/readers/{reader.id}" for reader in first.layout.readers}
        wait_until(lambda: {m.topic for m in client.snapshot() if m.topic in readers
                            and m.json().get("state") == "online"} == readers, WAIT * 2,
                   "the first daemon's readers online")
        time.sleep(2.0)  # its start-up settled: an idle table publishes no state
        mark = len(client.snapshot())
        refused = second.start_process()
        assert refused.wait(timeout=WAIT * 2) == 3
        second.process = None
        (line,) = [text for text in second.daemon_log().splitlines()
                   if text.startswith("stud-table run: ")]
        assert "another daemon publishes as table 't1'" in line
        assert f"pid {process.pid}" in line
        # The second one published nothing on the table's topics.
        later = client.snapshot()[mark:]
        statuses = [m.json()["status"] for m in later if m.topic == f"{ROOT}/status"]
        assert statuses == []
        assert not [m for m in later if m.topic == STATE]
        # The first one is up, online, and tells the floor who tried.
        alerts = [m.json() for m in client.wait_for(
            lambda m: m.topic == ALERTS and m.json()["code"] == "table_claimed_twice")]
        assert "refused" in alerts[0]["message"]
        assert process.poll() is None
        assert latest(client, f"{ROOT}/status")["status"] == "online"
    finally:
        second.stop()
        first.stop()


def test_issue21_item6_another_live_publisher_of_the_table_degrades_and_alerts(
    table: TableRig, client: RecordingSubscriber
) -> None:
    """A publisher of the same table that does not probe (an older daemon, or one that
    went online while this one was cut off) is found by the claim every daemon
    publishes with each status: alert and status degraded, naming it."""
    table.start_process()
    wait_until(lambda: (latest(client, f"{ROOT}/status") or {}).get("status") == "online",
               WAIT, "the daemon online")
    claim = f"{ROOT}/secure/claim"
    other = ('{"table":"t1","seq":1,"ts":1.0,"instance":"0123456789abcdef","pid":4242,'
             '"host":"other-pi","since":1.0,"probe":false}')
    client._client.publish(claim, other.encode(), qos=1, retain=True).wait_for_publish(WAIT)
    status = wait_until_status(client, "degraded")
    assert "another daemon publishes as table 't1'" in status["reason"]
    assert "other-pi" in status["reason"]
    (alert,) = client.wait_for(lambda m: m.topic == ALERTS
                               and m.json()["code"] == "table_claimed_twice")
    assert "pid 4242" in alert.json()["message"]
    # The daemon's own claim answered it (so the other one learns of it too).
    wait_until(lambda: any(m.topic == claim and b"0123456789abcdef" not in m.payload
                           for m in client.snapshot()), WAIT, "the daemon's own claim")


def wait_until_status(client: RecordingSubscriber, status: str) -> dict[str, object]:
    """Wait for ``status`` on the table's status topic; return that payload."""
    wait_until(lambda: (latest(client, f"{ROOT}/status") or {}).get("status") == status,
               WAIT * 2, f"status {status}")
    found = latest(client, f"{ROOT}/status")
    assert found is not None
    return found
