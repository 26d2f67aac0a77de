"""The archive service with a real Mosquitto and real databases: duplicates stored once,
bad messages refused, down cards only in a secure archive, two instances behind a shared
subscription, the database going away and coming back, the archive killed and
restarted: no record lost in any of them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from feed import Feed, alert_message, change_message, hand_record
from pg_server import PostgresServer

from table_controller.archive.config import ArchiveConfig, parse_archive_config
from table_controller.archive.service import ArchiveService
from table_controller.archive.store import ArchiveStore, sqlite_url
from table_controller.mqtt.topics import ArchiveTopics
from table_controller.testing.broker import WAIT, MosquittoBroker, RecordingSubscriber, wait_until

ROOT = Path(__file__).resolve().parents[2]


def config(port: int, database: dict[str, Any], **extra: Any) -> ArchiveConfig:
    """An archive.toml's content for the test broker and ``database``."""
    data = {"instance": "a1", "status_interval_s": 1.0,
            "broker": {"host": "127.0.0.1", "port": port, "reconnect_min_delay": 1,
                       "reconnect_max_delay": 2}, "database": database, **extra}
    return parse_archive_config(data, Path("/nonexistent/archive.toml"))


def database_of(db_url: str) -> dict[str, Any]:
    if db_url.startswith("sqlite"):
        return {"path": db_url.split("///", 1)[1]}
    return {"dsn": db_url}


class Running:
    """Services started by a test, stopped at its end whatever happens."""

    def __init__(self) -> None:
        self.services: list[ArchiveService] = []

    def start(self, cfg: ArchiveConfig) -> ArchiveService:
        service = ArchiveService(cfg)
        self.services.append(service)
        service.start()
        return service


@pytest.fixture
def running() -> Iterator[Running]:
    rig = Running()
    try:
        yield rig
    finally:
        for service in rig.services:
            service.stop()


@pytest.fixture
def feed(mosquitto: MosquittoBroker) -> Iterator[Feed]:
    publisher = Feed(mosquitto.port)
    try:
        yield publisher
    finally:
        publisher.close()


def status_of(sub: RecordingSubscriber, instance: str, predicate: Any) -> dict[str, Any]:
    topic = ArchiveTopics(instance).status
    return sub.wait_topic(topic, predicate, timeout=60).json()  # type: ignore[no-any-return]


def status_sub(port: int) -> RecordingSubscriber:
    sub = RecordingSubscriber(port, ["stud/v1/_archive/+/status"])
    sub.wait_subscribed()
    return sub


def test_archived_once_whatever_is_delivered_twice(
        mosquitto: MosquittoBroker, feed: Feed, running: Running, db_url: str) -> None:
    sub = status_sub(mosquitto.port)
    service = running.start(config(mosquitto.port, database_of(db_url)))
    status_of(sub, "a1", lambda s: s["status"] == "online")
    record = hand_record("t1", 4, alerts=[{"id": "t1:41", "code": "missing_burn",
                                            "severity": "error"}])
    feed.publish("t1", "alerts", alert_message("t1", 41, hand=4))
    feed.publish("t1", "hands", record)
    feed.publish("t1", "hands", record)  # a replay of the same hand
    feed.publish("t1", "changes", change_message("t1", "t1:41", "acknowledged", seq=50,
                                                 ts=1_800_000_200.0))
    feed.publish("t1", "changes", change_message("t1", "t1:41", "resolved", seq=51,
                                                 ts=1_800_000_300.0, note="burn found"))
    store = ArchiveStore(db_url)
    try:
        wait_until(lambda: store.counts()["hands"] == 1 and service.counters.duplicates == 1
                   and service.counters.alerts == 3, what="the hand and alert archived")
        wait_until(lambda: store.search_alerts()[0]["state"] == "resolved",
                   what="the alert resolved")
        assert store.hand(record["hand_id"]) == record
        [row] = store.search_alerts()
        assert (row["acknowledged_by"], row["resolved_note"]) == ("Sam", "burn found")
        assert store.counts()["hands"] == 1
    finally:
        store.close()
    sub.close()


def test_bad_messages_refused_and_the_archive_goes_on(
        mosquitto: MosquittoBroker, feed: Feed, running: Running, tmp_path: Path) -> None:
    sub = status_sub(mosquitto.port)
    path = tmp_path / "a.sqlite"
    service = running.start(config(mosquitto.port, {"path": str(path)}))
    status_of(sub, "a1", lambda s: s["status"] == "online")
    feed.publish("t1", "hands", b"\xff not json")
    feed.publish("t1", "hands", b"[1, 2]")
    feed.publish("t1", "hands", hand_record("t2", 1))  # another table's record
    feed.publish("t1", "hands", {**hand_record("t1", 1), "hand_id": ""})
    feed.publish("t1", "hands", b"[" * 100_000)  # nested past the parser's recursion
    feed.publish("t1", "changes", {"table": "t1", "id": "t1:1", "state": "resolved",
                                   "by": "x", "at_ts": 1.0})  # no note
    feed.publish("t1", "hands", hand_record("t1", 2))
    store = ArchiveStore(sqlite_url(str(path)))
    try:
        wait_until(lambda: store.counts()["hands"] == 1, what="the good hand")
        wait_until(lambda: service.counters.refused == 6, what="six refusals counted")
        assert store.counts() == {"hands": 1, "hand_players": 3, "alerts": 0, "notices": 0}
        assert store.search_hands()[0]["hand"] == 2
        assert status_of(sub, "a1", lambda s: s["refused"] == 6)["status"] == "online"
    finally:
        store.close()
    sub.close()


def test_down_cards_only_in_a_secure_archive(
        mosquitto: MosquittoBroker, feed: Feed, running: Running, tmp_path: Path) -> None:
    sub = status_sub(mosquitto.port)
    public_path, secure_path = tmp_path / "public.sqlite", tmp_path / "secure.sqlite"
    running.start(config(mosquitto.port, {"path": str(public_path)}, instance="pub"))
    running.start(config(mosquitto.port, {"path": str(secure_path)}, instance="sec",
                         secure=True))
    status_of(sub, "pub", lambda s: s["status"] == "online")
    status_of(sub, "sec", lambda s: s["status"] == "online" and s["secure"])
    # One hand that did not reach showdown, published as the daemon does: public
    # (down_cards null) on hands, complete on secure/hands.
    feed.publish("t1", "hands", hand_record("t1", 1, ended="fold"))
    feed.publish("t1", "secure_hands", hand_record("t1", 1, ended="fold", secure=True))
    public, secure = (ArchiveStore(sqlite_url(str(public_path))),
                      ArchiveStore(sqlite_url(str(secure_path)), secure=True))
    try:
        wait_until(lambda: public.counts()["hands"] == 1 and secure.counts()["hands"] == 1,
                   what="both archives")
        hand_id = hand_record("t1", 1)["hand_id"]
        public_record, secure_record = public.hand(hand_id), secure.hand(hand_id)
        assert public_record is not None
        assert secure_record is not None
        assert public_record["down_cards"] is None
        assert secure_record["down_cards"] == {"1": ["9c", "9d"], "4": ["Ah", "Ad"],
                                               "6": ["3c", "4c"]}
        assert b"9c" not in public_path.read_bytes()  # nowhere in the public file
    finally:
        public.close()
        secure.close()
    sub.close()


def test_two_instances_behind_a_shared_subscription_store_each_hand_once(
        mosquitto: MosquittoBroker, feed: Feed, running: Running,
        postgres: PostgresServer) -> None:
    dsn = postgres.create_database()
    sub = status_sub(mosquitto.port)
    first = running.start(config(mosquitto.port, {"dsn": dsn}, instance="a1",
                                 share_group="archive"))
    second = running.start(config(mosquitto.port, {"dsn": dsn}, instance="a2",
                                  share_group="archive"))
    status_of(sub, "a1", lambda s: s["status"] == "online")
    status_of(sub, "a2", lambda s: s["status"] == "online")
    hands = 40
    for table in ("t1", "t2"):
        for n in range(1, hands // 2 + 1):
            feed.publish(table, "hands", hand_record(table, n), wait=False)
            feed.publish(table, "hands", hand_record(table, n), wait=False)  # a replay
    store = ArchiveStore(dsn.replace("postgresql://", "postgresql+psycopg://"))
    try:
        wait_until(lambda: first.counters.hands + second.counters.hands
                   + first.counters.duplicates + second.counters.duplicates == 2 * hands,
                   timeout=60, what="every delivery written")
        assert store.counts()["hands"] == hands
        assert first.counters.hands + second.counters.hands == hands
        # The broker split the messages: both instances wrote.
        assert first.counters.hands + first.counters.duplicates > 0
        assert second.counters.hands + second.counters.duplicates > 0
    finally:
        store.close()
    sub.close()


def test_database_down_hands_queued_reported_then_all_written(
        mosquitto: MosquittoBroker, feed: Feed, running: Running,
        postgres: PostgresServer) -> None:
    dsn = postgres.create_database()
    sub = status_sub(mosquitto.port)
    service = running.start(config(mosquitto.port, {"dsn": dsn}, queue=5, batch=2))
    status_of(sub, "a1", lambda s: s["status"] == "online")
    hands = 25
    postgres.stop()
    try:
        for n in range(1, hands + 1):
            feed.publish("t1", "hands", hand_record("t1", n), wait=False)
        feed.publish("t1", "alerts", alert_message("t1", 999))
        down = status_of(sub, "a1", lambda s: s["status"] == "degraded"
                         and "queue full" in (s["reason"] or ""))
        assert "database unreachable" in down["reason"]
        # The queue (5) plus the batch being retried (2); the rest waits with the
        # broker, unacknowledged.
        assert 5 <= down["queued"] <= 5 + 2
        assert service.counters.hands == 0
    finally:
        postgres.start()
    status_of(sub, "a1", lambda s: s["status"] == "online" and s["hands"] == hands)
    store = ArchiveStore(dsn.replace("postgresql://", "postgresql+psycopg://"))
    try:
        wait_until(lambda: store.counts()["alerts"] == 1, what="the alert after the hands")
        assert store.counts()["hands"] == hands
        assert sorted(h["hand"] for h in store.search_hands()) == list(range(1, hands + 1))
        # Mosquitto 2.0.11 sends past our Receive Maximum in a burst after the first
        # acknowledgements: those were left with it and fetched again, none lost.
        assert service.counters.hands == hands
    finally:
        store.close()
    sub.close()


def _start_cli(cfg_path: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("ab") as out:  # a file, not a pipe: nobody must read it to keep it going
        return subprocess.Popen([sys.executable, "-m", "table_controller", "archive",
                                 "--config", str(cfg_path)], env=env, stdout=out, stderr=out)


def test_archive_process_stopped_or_killed_loses_nothing(
        mosquitto: MosquittoBroker, feed: Feed, tmp_path: Path) -> None:
    """``stud-table archive`` as a process: hands published while it is stopped
    (SIGTERM) or killed (SIGKILL, mid-burst) are all archived after its restart."""
    cfg_path = tmp_path / "archive.toml"
    cfg_path.write_text(
        'instance = "cli"\nstatus_interval_s = 1.0\n'
        f'[broker]\nhost = "127.0.0.1"\nport = {mosquitto.port}\n'
        'reconnect_min_delay = 1\nreconnect_max_delay = 2\n'
        '[database]\npath = "archive.sqlite"\n')
    log = tmp_path / "archive.log"
    sub = status_sub(mosquitto.port)
    store = ArchiveStore(sqlite_url(str(tmp_path / "archive.sqlite")))
    proc = _start_cli(cfg_path, log)
    try:
        status_of(sub, "cli", lambda s: s["status"] == "online")
        for n in range(1, 6):
            feed.publish("t1", "hands", hand_record("t1", n))
        wait_until(lambda: store.counts()["hands"] == 5, timeout=60, what="five hands")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(WAIT) == 0
        status_of(sub, "cli", lambda s: s["status"] == "offline")
        for n in range(6, 16):  # published while the archive is stopped
            feed.publish("t1", "hands", hand_record("t1", n))
        proc = _start_cli(cfg_path, log)
        wait_until(lambda: store.counts()["hands"] == 15, timeout=60,
                   what="the hands of the downtime")
        for n in range(16, 66):  # a burst, and the archive killed in the middle of it
            feed.publish("t1", "hands", hand_record("t1", n), wait=False)
        proc.kill()
        proc.wait(WAIT)
        proc = _start_cli(cfg_path, log)
        wait_until(lambda: store.counts()["hands"] == 65, timeout=60,
                   what="every hand after the kill")
        assert sorted(h["hand"] for h in store.search_hands(limit=1000)) == list(range(1, 66))
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(WAIT)
        store.close()
        sub.close()
    text = log.read_text()
    assert code == 0, text
    lines = log_records(text)
    assert lines  # JSON logs (stderr is not a terminal)
    assert not [line for line in lines if line.get("level") in ("error", "critical")]


def log_records(text: str) -> list[dict[str, Any]]:
    """The JSON log records of a log several archive processes wrote in turn.

    A process killed with SIGKILL can leave half a line; the next process's first record
    then follows it on the same line (seen in a CI run): the torn half is dropped and
    the whole record after it kept; every other line must parse."""
    records: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            # The whole record that ends the line starts at the first '{"' from which
            # it parses to the end (a nested object inside a record does not).
            decoder = json.JSONDecoder()
            for start in [m.start() for m in re.finditer(r'\{"', line)][1:]:
                try:
                    record, end = decoder.raw_decode(line, start)
                except ValueError:
                    continue
                if end == len(line):
                    records.append(record)
                    break
            else:
                raise AssertionError(f"a log line that is neither JSON nor torn: {line!r}")
    return records


def test_a_shared_instance_down_keeps_its_share_until_it_returns(
        mosquitto: MosquittoBroker, feed: Feed, running: Running,
        postgres: PostgresServer) -> None:
    """Mosquitto (2.0.11) keeps dealing a stopped instance its share of the group's
    messages into its persistent session: they are not lost, they wait until it comes
    back (docs/archive.md "Several instances")."""
    dsn = postgres.create_database()
    sub = status_sub(mosquitto.port)
    first = running.start(config(mosquitto.port, {"dsn": dsn}, instance="a1",
                                 share_group="archive"))
    second_cfg = config(mosquitto.port, {"dsn": dsn}, instance="a2", share_group="archive")
    second = ArchiveService(second_cfg)
    second.start()
    status_of(sub, "a1", lambda s: s["status"] == "online")
    status_of(sub, "a2", lambda s: s["status"] == "online")
    second.stop()
    status_of(sub, "a2", lambda s: s["status"] == "offline")
    for n in range(1, 21):
        feed.publish("t1", "hands", hand_record("t1", n))
    store = ArchiveStore(dsn.replace("postgresql://", "postgresql+psycopg://"))
    try:
        wait_until(lambda: first.counters.hands > 0, what="the running instance's share")
        running.start(second_cfg)  # the same instance again: same session
        wait_until(lambda: store.counts()["hands"] == 20, timeout=60,
                   what="every hand once both are back")
        assert sorted(h["hand"] for h in store.search_hands()) == list(range(1, 21))
    finally:
        store.close()
    sub.close()
