"""``stud-table replay JOURNAL --mqtt``: a recorded table republished over a real Mosquitto.

The live run is the real daemon (emulated readers on ptys, presence, journal,
MQTT). Its journal is then republished at ``--speed 50`` under another table
id, and a subscriber must see the same final retained state and the same
events and alerts, in the same order, as the live run's subscriber did
(``seq``, ``ts`` and the table id aside). The daemon's journal also exports to
a PHH file PokerKit loads.
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest

from table_controller.domain.engine.settings import TableSettings
from table_controller.handhistory import export_file, write_phh
from table_controller.mqtt.payloads import PublicEvent, PublicState, SecureEvent, SecureState
from table_controller.records.replay import replay_file
from table_controller.records.script import event_to_op
from table_controller.simulation import deal_random
from table_controller.testing.broker import MosquittoBroker, RecordingSubscriber, wait_until
from table_controller.testing.daemon_rig import ROOT, TableRig, clear_table, subscribe, wait_state
from table_controller.tools.cli import main
from table_controller.tools.republish import Recording, republish, schedule

REPLAY_TABLE = "rehearsal"
REPLAY_ROOT = f"stud/v1/{REPLAY_TABLE}"


def stream(sub: RecordingSubscriber, root: str) -> dict[str, list[dict[str, Any]]]:
    """Per topic below ``root`` (events, alerts, state...): payloads without seq/ts/table."""
    out: dict[str, list[dict[str, Any]]] = {}
    for message in sub.snapshot():
        if message.topic.startswith(root + "/") and "/readers/" not in message.topic:
            payload = json.loads(message.payload)
            for key in ("seq", "ts", "table"):
                payload.pop(key, None)
            out.setdefault(message.topic[len(root) + 1:], []).append(payload)
    return out


def last_seq(sub: RecordingSubscriber, topic: str) -> int:
    found = [m for m in sub.snapshot() if m.topic == topic]
    return int(json.loads(found[-1].payload)["seq"]) if found else -1


def test_republished_journal_matches_the_live_run(rig: TableRig, tmp_path: Path) -> None:
    live = subscribe(rig.broker.port)
    rig.start_thread()
    wait_state(live, lambda s: s["hand"] is None)
    deal = deal_random([2, 3, 5, 8], random.Random(7), fold_chance=0.25)
    rig.deal(deal.events)
    rig.deal(clear_table(deal))
    wait_until(lambda: any(
        json.loads(m.payload).get("kind") == "hand_result"
        for m in live.on_topic(f"{ROOT}/events")), what="the live hand result")
    journal = tmp_path / "journal" / "t1.journal.jsonl"
    rig.stop()  # the journal is complete; the live subscriber has everything
    live_view = stream(live, ROOT)
    live.close()

    replayed = subscribe(rig.broker.port, f"{REPLAY_ROOT}/#")
    assert main(["replay", str(journal), "--mqtt", f"127.0.0.1:{rig.broker.port}",
                 "--table", REPLAY_TABLE, "--speed", "50"]) == 0
    wait_until(lambda: stream(replayed, REPLAY_ROOT).get("status", [{}])[-1].get("status")
               == "offline", what="the replay publisher's offline status")
    replay_view = stream(replayed, REPLAY_ROOT)
    replayed.close()

    # Events, secure events and alerts: the same payloads in the same order.
    for topic in ("events", "secure/events", "alerts"):
        assert replay_view.get(topic, []) == live_view.get(topic, []), topic
    assert any(e["kind"] == "hand_result" for e in replay_view["events"])
    # The final retained state (public and secure) is the live table's.
    for topic in ("state", "secure/state"):
        assert replay_view[topic][-1] == live_view[topic][-1], topic

    # A late subscriber gets that state retained.
    late = subscribe(rig.broker.port, f"{REPLAY_ROOT}/state")
    try:
        got = late.wait_for(lambda m: m.retain and m.topic == f"{REPLAY_ROOT}/state")[-1]
        payload = json.loads(got.payload)
        assert {k: v for k, v in payload.items() if k not in ("seq", "ts", "table")} == (
            live_view["state"][-1])
    finally:
        late.close()

    # The daemon's journal exports to PHH that PokerKit reads and replays.
    from pokerkit import HandHistory

    [hand] = export_file(journal)
    assert set(hand.seats) == set(deal.seats)
    assert {s for s, _ in hand.folds().items()} == set(deal.folds)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        states = list(HandHistory.loads(write_phh(hand)))
    assert not states[-1].status  # PokerKit played the hand to its end


def test_json_report_is_unchanged_by_mqtt(
    tmp_path: Path, mosquitto: MosquittoBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "h.jsonl"
    deal = deal_random([1, 4, 6], random.Random(3), fold_chance=0.0)
    lines = [{**event_to_op(event), "at": event.at} for event in deal.events]
    script.write_text("".join(json.dumps(line) + "\n" for line in lines))
    sub = subscribe(mosquitto.port, f"{REPLAY_ROOT}/#")
    try:
        assert main(["replay", str(script), "--mqtt", f"127.0.0.1:{mosquitto.port}",
                     "--table", REPLAY_TABLE, "--speed", "100", "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == replay_file(script)
        # A script's last hand is finished at the end, as --json reports it.
        sub.wait_topic(f"{REPLAY_ROOT}/events", lambda p: p["kind"] == "hand_result")
    finally:
        sub.close()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--mqtt", "nohost"], "needs --table"),
        (["--mqtt", "127.0.0.1:notaport", "--table", "x"], "expected HOST:PORT"),
        (["--mqtt", "127.0.0.1:1883", "--table", "a/b"], "bad table id"),
        (["--mqtt", "127.0.0.1:1883", "--table", "x", "--speed", "0"], "--speed must be"),
    ],
)
def test_bad_mqtt_arguments_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text('{"op":"hand","players":[1,2]}\n')
    assert main(["replay", str(script), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err


# --------------------------------------------------------- pacing, no broker


def test_schedule_is_real_time_divided_by_speed_and_never_goes_back() -> None:
    assert schedule([100.0, 101.0, 103.5], 1.0) == [0.0, 1.0, 3.5]
    assert schedule([100.0, 101.0, 103.5], 50.0) == [0.0, 0.02, 0.07]
    assert schedule([5.0, 4.0, 6.0], 1.0) == [0.0, 0.0, 1.0]
    assert schedule([], 2.0) == []
    with pytest.raises(ValueError, match="positive"):
        schedule([1.0], 0.0)


class RecordingPublisher:
    """A :class:`Publisher` that keeps what it is given (pacing tests only)."""

    def __init__(self, clock: list[float]) -> None:
        self.clock = clock
        self.sent: list[tuple[float, str, Any]] = []

    def start(self) -> None:
        """Nothing to start."""

    def republish_retained(self) -> None:
        """Nothing retained to resend."""

    def publish_state(self, public: PublicState, secure: SecureState) -> None:
        self.sent.append((self.clock[0], "state", public))

    def publish_event(self, public: PublicEvent, secure: SecureEvent) -> None:
        self.sent.append((self.clock[0], "event", public))

    def publish_alert(self, alert: Any) -> None:
        self.sent.append((self.clock[0], "alert", alert))

    def publish_notice(self, public: Any, secure: Any) -> None:
        self.sent.append((self.clock[0], "notice", secure))

    def publish_reader(self, status: Any) -> None:
        """Replays have no readers."""

    def publish_reader_stats(self, stats: Any) -> None:
        """Replays have no readers."""

    def stop(self, timeout: float = 0.0) -> None:
        """Nothing to stop."""


def test_republish_waits_for_each_event_on_the_given_clock() -> None:
    deal = deal_random([1, 2], random.Random(1), fold_chance=0.0, start=1000.0, step=2.0)
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    publisher = RecordingPublisher(now)
    stats = republish(Recording(TableSettings(), deal.events, journal=True), publisher, "t",
                      speed=4.0, clock=lambda: now[0], sleep=sleep)
    assert stats.events == len(deal.events)
    assert stats.hands == 1
    # Event i is published at (at_i - at_0) / speed on the injected clock.
    states = [at for at, kind, _ in publisher.sent if kind == "state"][1:]
    assert states == [(e.at - 1000.0) / 4.0 for e in deal.events]
    # A journal's last hand is left as it stood: no result published.
    assert not any(kind == "event" and p.kind == "hand_result"
                   for _, kind, p in publisher.sent)


def test_regression_republish_sends_notices_as_live() -> None:
    """Was: ``replay --mqtt`` published alerts only, so the notices a live table sends
    (here rule 15's community card, once an alert) were missing from a rehearsal."""
    rng = random.Random(3)
    deal = None
    while deal is None or deal.community is None:  # eight players reaching 7th street
        deal = deal_random(list(range(1, 9)), rng, fold_chance=0.0)
    now = [0.0]
    publisher = RecordingPublisher(now)
    republish(Recording(TableSettings(), deal.events, journal=True), publisher, "t",
              speed=1000.0, clock=lambda: now[0], sleep=lambda s: None)
    notices = [payload for _, kind, payload in publisher.sent if kind == "notice"]
    assert [n.code for n in notices] == ["community_card"]
    assert [p for _, kind, p in publisher.sent if kind == "alert"] == []
