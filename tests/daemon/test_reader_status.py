"""Issue 9 item 23: a missing reader, as the floor and a consumer see it.

Before: the log got two lines every 2 s without a reason, and the retained
``readers/<id>`` topic flapped between ``connecting`` and ``offline`` (190
messages in 30 s). Now: one warning naming the cause, one ``reader_offline``
alert saying why, and the retained topic only changes when what it shows does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from firmware_bridge.emulator import ReaderEmulator
from firmware_bridge.link import ConnectionState, LinkProblem, LinkStats
from firmware_bridge.messages import Heartbeat, Hello, Identify, TagArrived, TagLeft
from table_controller.daemon.core import ReaderReport, ReaderStateChange
from table_controller.daemon.reader_board import READER_REFRESH_PERIOD
from table_controller.mqtt.payloads import ReaderStats, ReaderStatus, to_json
from table_controller.testing.broker import WAIT, wait_until
from table_controller.testing.core_rig import CoreTable
from table_controller.testing.daemon_rig import ROOT, TableRig, subscribe


class ReaderRecorder:
    """Wraps a :class:`CoreTable`'s publisher to keep every reader status."""

    def __init__(self, table: CoreTable) -> None:
        self.statuses: list[ReaderStatus] = []
        self.alerts: list[Any] = []
        publisher = table.publisher
        publisher.publish_reader = self.statuses.append  # type: ignore[method-assign]
        publisher.publish_alert = self.alerts.append  # type: ignore[method-assign]

    def of(self, reader: int) -> list[str]:
        return [s.state for s in self.statuses if s.reader == str(reader)]


def test_regression_offline_reader_topic_does_not_flap(tmp_path: Path) -> None:
    """The link's notifications for a missing reader (first attempt, the problem, then
    DISCONNECTED) and a minute of refreshes give the topic one ``offline`` message
    and the floor one alert that says why."""
    table = CoreTable(tmp_path)
    try:
        seen = ReaderRecorder(table)
        core = table.core
        core.publish_snapshot()
        missing = LinkStats(problem=LinkProblem.PORT_MISSING,
                            problem_detail="could not open port /dev/reader3: no such file")
        core.handle(ReaderStateChange(3, ConnectionState.CONNECTING, LinkStats()))
        core.handle(ReaderStateChange(3, ConnectionState.CONNECTING, missing))
        core.handle(ReaderStateChange(3, ConnectionState.DISCONNECTED, missing))
        table.advance(12 * READER_REFRESH_PERIOD)
        assert seen.of(3) == ["online", "connecting", "offline"]
        [alert] = seen.alerts
        assert alert.code == "reader_offline"
        assert "its port does not exist" in alert.message
        # The readers that stay online and unchanged are not republished either.
        assert seen.of(1) == ["online"]
        # Back: one more message, and a later outage alerts again.
        core.handle(ReaderStateChange(3, ConnectionState.ONLINE, LinkStats(last_heartbeat=5.0)))
        core.handle(ReaderStateChange(3, ConnectionState.STALE, LinkStats(last_heartbeat=5.0)))
        assert seen.of(3)[-2:] == ["online", "stale"]
        assert [a.code for a in seen.alerts] == ["reader_offline", "reader_offline"]
        assert "stopped sending heartbeats" in seen.alerts[-1].message
    finally:
        table.close()


def test_port_that_never_answers_is_alerted(tmp_path: Path) -> None:
    """A port that opens but never says HELLO stays in HANDSHAKE: once the link
    names the problem, the floor hears that the reader is not being read."""
    table = CoreTable(tmp_path)
    try:
        seen = ReaderRecorder(table)
        core = table.core
        core.handle(ReaderStateChange(2, ConnectionState.HANDSHAKE, LinkStats()))
        assert seen.alerts == []
        core.handle(ReaderStateChange(2, ConnectionState.HANDSHAKE, LinkStats(
            problem=LinkProblem.NO_HELLO, problem_detail="port open, no HELLO in 3 s")))
        [alert] = seen.alerts
        assert alert.code == "reader_offline"
        assert "no reader answers" in alert.message
    finally:
        table.close()


def _point_reader_at(rig: TableRig, reader: int, device: Path) -> None:
    layout = rig.tmp / "layout.toml"
    text = layout.read_text()
    old = f'device = "{rig.table.device_of(reader)}"'
    assert old in text
    layout.write_text(text.replace(old, f'device = "{device}"'))


def test_regression_missing_reader_through_the_daemon(rig: TableRig) -> None:
    """The real daemon with reader 2's device missing: many retries, one warning
    with the reason, one alert, and its retained topic settles on ``offline``
    without flapping, also across a status refresh."""
    _point_reader_at(rig, 2, rig.tmp / "dev" / "no-such-reader")
    sub = subscribe(rig.broker.port, f"{ROOT}/readers/+", f"{ROOT}/alerts")
    with capture_logs() as logs:
        rig.start_thread()

        def retries() -> int:
            return sum(e["event"] == "reader_open_failed" and e.get("reader_id") == 2
                       for e in list(logs))

        # Eight retries (backoff 0.1 s doubling to 2 s) outlast a status refresh.
        wait_until(lambda: retries() >= 8, WAIT * 2, "eight open retries of reader 2")
        wait_until(lambda: any(m.topic == f"{ROOT}/readers/1" for m in sub.snapshot()),
                   WAIT, "the reader statuses")
        mine = [e for e in list(logs) if e.get("reader_id") == 2
                and e["log_level"] in ("info", "warning", "error")]
    states = [json.loads(m.payload)["state"] for m in sub.snapshot()
              if m.topic == f"{ROOT}/readers/2"]
    assert states[-1] == "offline"
    assert len(states) <= 2, states  # the start-up snapshot, then offline
    alerts = [json.loads(m.payload) for m in sub.snapshot() if m.topic == f"{ROOT}/alerts"]
    assert [a["code"] for a in alerts] == ["reader_offline"]
    assert alerts[0]["severity"] == "critical"  # the daemon's own code, in the vocabulary
    assert "its port does not exist" in alerts[0]["message"]
    assert [(e["event"], e.get("reason")) for e in mine] == [
        ("reader_unavailable", "port_missing")]


def test_docs_reader_examples_show_the_real_counters(tmp_path: Path) -> None:
    """docs/mqtt.md's reader examples (item 23: they named counters the daemon does
    not publish) have exactly the ``frame_errors`` keys the daemon publishes."""
    table = CoreTable(tmp_path)
    try:
        seen = ReaderRecorder(table)
        table.core.publish_snapshot()
        published = set(seen.statuses[0].frame_errors)
    finally:
        table.close()
    doc = (Path(__file__).resolve().parents[2] / "docs" / "mqtt.md").read_text()
    examples = re.findall(r"<!-- schema: reader -->\n```json\n(.*?)```", doc, flags=re.S)
    assert examples
    for example in examples:
        assert set(json.loads(example)["frame_errors"]) == published


# ------------------------------------------------------------------ issue 13


class StatsRecorder(ReaderRecorder):
    """Also keeps every ``readers/<id>/stats`` payload."""

    def __init__(self, table: CoreTable) -> None:
        super().__init__(table)
        self.stats: list[ReaderStats] = []
        table.publisher.publish_reader_stats = self.stats.append  # type: ignore[method-assign]


def test_reader_stats_carry_counts_per_antenna_never_a_uid(tmp_path: Path) -> None:
    """Issue 13: a reader's periodic figures name its firmware, heartbeat age and,
    per port, the zone, how many tags, reads per second and dropouts (a tag that
    flickers off and back), and no UID of any card anywhere in the payload."""
    table = CoreTable(tmp_path)
    try:
        seen = StatsRecorder(table)
        reader = table.layout.readers[0]
        port, zone = sorted(reader.antennas.items())[0]
        deck = table.registry.deck(table.registry.decks[0])
        uids = list(deck.uids())[:2]
        core = table.core
        core.handle(ReaderReport(reader.id, Hello(reader.id, (2, 1, 0), 8), table.now))
        core.handle(ReaderReport(reader.id, Heartbeat(1000, 5), table.now))
        for uid in uids:
            core.handle(ReaderReport(reader.id, TagArrived(port, uid), table.now))
        table.advance(0.2)
        core.handle(ReaderReport(reader.id, TagLeft(port, uids[0]), table.now))
        table.advance(0.1)  # back within the dropout window: a flicker, not a move
        core.handle(ReaderReport(reader.id, TagArrived(port, uids[0]), table.now))
        table.advance(READER_REFRESH_PERIOD + 0.1)
        mine = [s for s in seen.stats if s.reader == str(reader.id)]
        assert mine, "no stats published"
        last = mine[-1]
        assert last.state == "online"
        assert last.firmware == "2.1.0"
        assert last.heartbeat_age is not None
        assert 0 < last.heartbeat_age <= 5.5
        [antenna] = [a for a in last.antennas if a.port == port]
        assert (antenna.zone, antenna.tags, antenna.dropouts) == (zone.name, 2, 1)
        assert 0 <= antenna.reads_per_s <= 3 / 5  # three reads, averaged over 5 s
        assert {a.port for a in last.antennas} >= set(reader.antennas)
        # Every reader gets its figures each period, and no UID is in any of them.
        assert {s.reader for s in seen.stats} == {str(r.id) for r in table.layout.readers}
        text = " ".join(to_json(s).decode() for s in seen.stats).upper()
        assert not any(uid.upper() in text for uid in deck.uids())
    finally:
        table.close()


def test_retained_topic_says_why_once_and_again_only_when_the_reason_changes(
    tmp_path: Path,
) -> None:
    """Issue 13: ``reason`` and ``detail`` ride on the retained topic. Twenty retries
    with the same cause publish nothing; a new cause (the port appears but a reader
    with another id answers) publishes once, and coming back clears the reason."""
    table = CoreTable(tmp_path)
    try:
        seen = ReaderRecorder(table)
        core = table.core
        missing = LinkStats(problem=LinkProblem.PORT_MISSING, problem_detail="no such file")
        core.handle(ReaderStateChange(4, ConnectionState.DISCONNECTED, missing))
        for _ in range(20):
            core.handle(ReaderStateChange(4, ConnectionState.DISCONNECTED, missing))
            table.advance(2.0)
        wrong = LinkStats(problem=LinkProblem.WRONG_READER,
                          problem_detail="reader 9 answered, 4 expected")
        core.handle(ReaderStateChange(4, ConnectionState.HANDSHAKE, wrong))
        core.handle(ReaderStateChange(4, ConnectionState.WRONG_READER, wrong))
        core.handle(ReaderStateChange(4, ConnectionState.WRONG_READER, wrong))
        core.handle(ReaderStateChange(4, ConnectionState.ONLINE, LinkStats(last_heartbeat=1.0)))
        mine = [(s.state, s.reason, s.detail) for s in seen.statuses if s.reader == "4"]
        assert mine == [
            ("offline", "port_missing", "no such file"),
            ("wrong_reader", "wrong_reader", "reader 9 answered, 4 expected"),
            ("online", None, ""),
        ]
    finally:
        table.close()


def test_wrong_reader_through_the_daemon_says_so_on_the_topic_without_flapping(
    rig: TableRig,
) -> None:
    """The real daemon with reader 2's device answered by an emulated reader whose
    id is 9: the retained topic says ``wrong_reader`` with the id that answered and
    does not change over the link's retries (IDENTIFY every 2 s); reader 1's
    periodic figures arrive meanwhile."""
    (rig.tmp / "dev-impostor").mkdir()
    impostor = ReaderEmulator(rig.tmp / "dev-impostor", 9, heartbeat_period=0.5).start()
    try:
        _point_reader_at(rig, 2, impostor.path)
        sub = subscribe(rig.broker.port, f"{ROOT}/readers/+", f"{ROOT}/readers/+/stats")
        rig.start_thread()
        sub.wait_topic(f"{ROOT}/readers/2", lambda p: p["state"] == "wrong_reader")
        probes = lambda: sum(isinstance(c, Identify) for c in impostor.commands_received)  # noqa: E731
        before = probes()
        wait_until(lambda: probes() >= before + 2, WAIT, "two more IDENTIFY retries")
        stats = sub.wait_topic(f"{ROOT}/readers/1/stats", lambda p: p["state"] == "online").json()
    finally:
        impostor.stop()
    states = [json.loads(m.payload) for m in sub.snapshot() if m.topic == f"{ROOT}/readers/2"]
    assert [s["state"] for s in states][-1] == "wrong_reader"
    assert states[-1]["reason"] == "wrong_reader"
    assert "reader 9 answered" in states[-1]["detail"]
    assert len(states) <= 3, [(s["state"], s["reason"], s["last_heartbeat"]) for s in states]
    # (the start-up snapshot, at most one handshake step, then this)
    assert stats["firmware"] == "1.0.0"
    # Beside the sequenced stream: a consumer not following the figures sees no seq gap.
    assert "seq" not in stats
    assert [a["port"] for a in stats["antennas"]] == sorted(a["port"] for a in stats["antennas"])
