"""The broadcast service against a real Mosquitto, as a real process (issue 12 steps 2-3).

Messages are published as a daemon would (envelope ``seq``/``ts``); the pages' SSE
streams are read over HTTP. The end-to-end run with the daemon, emulated readers and
a browser is in test_browser.py.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from table_controller.testing.broadcast_rig import PASSWORD, Service, SseReader, write_config
from table_controller.testing.broker import WAIT, MosquittoBroker, wait_until

ROOT = "stud/v1/t1"


class Table:
    """Publishes a fake table's messages (secure and public) like the daemon does."""

    def __init__(self, port: int) -> None:
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="fake-daemon")
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        self.seq = 0

    def publish(self, topic: str, payload: dict[str, Any], *, retain: bool = False,
                ts: float | None = None) -> dict[str, Any]:
        """Publish one message with the envelope (next seq, ts now unless given)."""
        self.seq += 1
        body = {"table": "t1", "hand": payload.pop("hand", 1), "seq": self.seq,
                "ts": time.time() if ts is None else ts, **payload}
        self.client.publish(f"{ROOT}/{topic}", json.dumps(body), qos=1,
                            retain=retain).wait_for_publish(WAIT)
        return body

    def state(self, down: dict[int, list[str]], secure: bool = True, **extra: Any
              ) -> dict[str, Any]:
        """Publish a (secure or public) state; ``down``: seat -> its down cards."""
        seats = []
        for no in range(1, 9):
            row: dict[str, Any] = {"seat": no, "status": "active" if no in down else "empty",
                                   "up": ["Kd"] if no in down else [],
                                   "down_count": len(down.get(no, [])), "stack": 100,
                                   "bet": None}
            if secure:
                row["down"] = down.get(no, [])
            seats.append(row)
        topic = "secure/state" if secure else "state"
        # The pot differs from state to state: a delayed output that hides a hand
        # leaves out a state that repeats the previous one (it could only be an
        # equity update, whose timing depends on the hidden cards).
        return self.publish(topic, {"seats": seats, "street": 3, "bring_in": None,
                                    "to_act": None, "community": None, "alerts": [],
                                    "pot": self.seq + 1, **extra}, retain=True)

    def close(self) -> None:
        """Disconnect."""
        self.client.loop_stop()
        self.client.disconnect()


@pytest.fixture
def table(mosquitto: MosquittoBroker) -> Iterator[Table]:
    """A fake daemon on the test's broker."""
    fake = Table(mosquitto.port)
    yield fake
    fake.close()


@pytest.fixture
def service(tmp_path: Path, mosquitto: MosquittoBroker) -> Iterator[Service]:
    """The broadcast service (overlay delayed 2 s, reveal showdown) as a process."""
    svc = Service(write_config(tmp_path, mosquitto.port, delay_s=2.0)).start()
    yield svc
    svc.stop()


def test_delayed_output_releases_nothing_younger_than_d(service: Service, table: Table) -> None:
    """Each message reaches the overlay stream no earlier than its own ts + D (2 s),
    keeps its original timestamp, and hole cards show per the reveal mode."""
    reader = SseReader(service.port, "/sse/overlay/t1").start()
    sent = [table.state({1: ["Ah", "2c"], 2: ["3d", "4h"]}) for _ in range(3)]
    wait_until(lambda: len(reader.msgs()) >= 3, WAIT, "three delayed states")
    for got, body in zip(reader.msgs(), sent, strict=False):
        assert got.at >= body["ts"] + 2.0, "released before ts + D"
        assert got.data["p"]["ts"] == body["ts"]  # the table's timestamp, untouched
        # mode showdown, result unknown: no down card, no equity
        assert all("down" not in row for row in got.data["p"]["seats"])
    reader.close()


def test_both_showdown_modes(tmp_path: Path, mosquitto: MosquittoBroker,
                             table: Table) -> None:
    """``showdown`` (default, no spoiler): a shown seat's hole cards appear only once the
    delayed timeline reaches the result; ``showdown_early``: from the deal on, as soon
    as the service knows the result. A seat that is not shown stays hidden in both."""
    config = write_config(tmp_path, mosquitto.port, delay_s=2.0, extra_outputs="""
[[outputs]]
name = "early"
delay_s = 2.0
reveal = "showdown_early"
""")
    svc = Service(config).start()
    try:
        calm = SseReader(svc.port, "/sse/overlay/t1").start()
        early = SseReader(svc.port, "/sse/early/t1").start()
        table.state({1: ["Ah", "2c"], 2: ["3d", "4h"]}, hand=7)
        table.publish("secure/events", {"kind": "hand_result", "hand": 7, "winners": [2],
                                        "shown": [{"seat": 2, "cards": ["3d", "4h", "Kd"],
                                                   "description": "king high"}]})
        table.state({1: ["Ah", "2c"], 2: ["3d", "4h"]}, hand=7)  # the state after it
        for reader in (calm, early):
            wait_until(lambda r=reader: len(r.msgs()) >= 3, WAIT, "state, result, state")

        def rows(reader: SseReader, index: int) -> dict[int, dict[str, Any]]:
            states = [m.data["p"] for m in reader.msgs() if m.data["kind"] == "state"]
            return {row["seat"]: row for row in states[index]["seats"]}

        assert "down" not in rows(calm, 0)[2], "no-spoiler mode revealed before showdown"
        assert rows(calm, 1)[2]["down"] == ["3d", "4h"]
        assert rows(early, 0)[2]["down"] == ["3d", "4h"]
        for reader in (calm, early):
            assert all("down" not in rows(reader, i)[1] for i in (0, 1))
            assert [m.id for m in reader.msgs()] == [1, 2, 3]
            reader.close()
        assert "showdown" in (tmp_path / "broadcast.toml").read_text()
    finally:
        svc.stop()


def test_venue_is_public_only_and_producer_is_locked(service: Service, table: Table) -> None:
    """/venue streams the public topics only; /producer and its stream need the password."""
    venue = SseReader(service.port, "/sse/venue/t1").start()
    table.state({1: ["Ah", "2c"]})
    table.state({1: ["Ah", "2c"]}, secure=False)
    wait_until(lambda: bool(venue.msgs()), WAIT, "a venue message")
    # A sentinel, not a sleep: one connection follows both topics, so a secure state
    # wrongly routed to the venue would have come before this later public one.
    sentinel = table.state({1: ["Ah", "2c"]}, secure=False, hand=2)
    wait_until(lambda: any(m.data["p"].get("ts") == sentinel["ts"] for m in venue.msgs()),
               WAIT, "the sentinel state on the venue")
    for msg in venue.msgs():
        assert "Ah" not in json.dumps(msg.data)
    assert SseReader(service.port, "/sse/producer/t1").start().status == 401
    assert service.get("/producer/t1")[0] == 401
    assert service.get("/producer/t1", password="wrong-password")[0] == 401
    assert service.get("/producer/t1", password=PASSWORD)[0] == 200
    producer = SseReader(service.port, "/sse/producer/t1", password=PASSWORD).start()
    wait_until(lambda: any("Ah" in json.dumps(m.data) for m in producer.msgs()), WAIT,
               "the producer sees the down card live")
    assert PASSWORD not in service.text()
    venue.close()
    producer.close()


def test_regression_a_page_opened_later_gets_the_status_and_reader_health(
        service: Service, table: Table) -> None:
    """Status and reader health are published when they change, before the newest
    state a fresh page starts from: the page still gets the newest of each first (the
    producer page said "status unknown" when opened after the daemon's start)."""
    table.publish("status", {"status": "degraded", "reason": "old"}, retain=True)
    table.publish("status", {"status": "online", "reason": None}, retain=True)
    for reader in ("1", "2"):
        table.publish(f"readers/{reader}", {"reader": reader, "state": "online"}, retain=True)
    table.publish("readers/2", {"reader": "2", "state": "offline"}, retain=True)
    for _ in range(3):
        table.state({1: ["Ah", "2c"]})
    producer = SseReader(service.port, "/sse/producer/t1", password=PASSWORD).start()
    wait_until(lambda: sum(m.data["kind"] == "state" for m in producer.msgs()) >= 1, WAIT,
               "the producer's first state")
    kinds = [(m.data["kind"], m.data["p"].get("status") or m.data["p"].get("state"))
             for m in producer.msgs()]
    assert kinds[:3] == [("status", "online"), ("reader", "online"), ("reader", "offline")]
    assert sum(kind == "state" for kind, _ in kinds) == 1  # from the newest state on
    producer.close()


def test_delay_control_needs_password_and_respects_the_rules(service: Service,
                                                             table: Table) -> None:
    """The delay control: locked; shortening releases only what is older than new D."""
    status, _ = service.get("/api/delay/overlay", method="POST", body={"delay_s": 1})
    assert status == 401
    status, text = service.get("/api/delay/overlay", method="POST", password=PASSWORD,
                               body={"delay_s": 3600})
    assert status == 200, text
    reader = SseReader(service.port, "/sse/overlay/t1").start()
    old = table.state({1: ["Ah", "2c"]}, ts=time.time() - 100)
    new = table.state({1: ["Ah", "2c"]})
    time.sleep(1.0)
    assert reader.msgs() == []  # an hour: nothing
    status, text = service.get("/api/delay/overlay", method="POST", password=PASSWORD,
                               body={"delay_s": 60})
    assert status == 409, text  # a cut of more than half: confirmation needed
    assert "confirm" in text
    time.sleep(0.5)
    assert reader.msgs() == []  # not cut
    status, text = service.get("/api/delay/overlay", method="POST", password=PASSWORD,
                               body={"delay_s": 60, "confirm": True})
    assert status == 200, text
    assert json.loads(text)["delay_source"] == "producer"
    wait_until(lambda: len(reader.msgs()) >= 1, WAIT, "the 100 s old message")
    time.sleep(1.0)
    assert [m.data["p"]["ts"] for m in reader.msgs()] == [old["ts"]]
    assert new["ts"] not in [m.data["p"]["ts"] for m in reader.msgs()]
    status, text = service.get("/api/delay/overlay", method="POST", password=PASSWORD,
                               body={"delay_s": -1})
    assert status == 400
    assert "delay" in text
    reader.close()


def test_kill9_loses_nothing_releases_nothing_early_repeats_nothing(
        tmp_path: Path, mosquitto: MosquittoBroker, table: Table) -> None:
    """kill -9 mid-backlog, restart: a page resuming from its last id gets every
    remaining message once, none before ts + D."""
    config = write_config(tmp_path, mosquitto.port, delay_s=1.5)
    svc = Service(config).start()
    reader = SseReader(svc.port, "/sse/overlay/t1").start()
    sent = []
    for i in range(30):
        sent.append(table.state({1: ["Ah", "2c"]}, hand=i))
        time.sleep(0.05)
    wait_until(lambda: len(reader.msgs()) >= 5, WAIT, "some released")
    svc.kill9()
    seen = reader.msgs()
    last = seen[-1].id
    svc.start()
    again = SseReader(svc.port, "/sse/overlay/t1", last_id=last).start()
    wait_until(lambda: len(seen) + len(again.msgs()) >= len(sent), WAIT, "the rest")
    # A sentinel, not a sleep: a repeat of any of the 30 would come before it.
    sent.append(table.state({1: ["Ah", "2c"]}, hand=len(sent)))
    wait_until(lambda: any(m.data["p"]["ts"] == sent[-1]["ts"] for m in again.msgs()), WAIT,
               "the sentinel")
    got = [m.data["p"]["ts"] for m in seen + again.msgs()]
    assert got == [b["ts"] for b in sent], "lost, repeated or reordered"
    assert [m.id for m in seen + again.msgs()] == list(range(1, len(sent) + 1)), "ids dense"
    for msg in seen + again.msgs():
        assert msg.at >= msg.data["p"]["ts"] + 1.5
    svc.stop()


def test_hostile_payloads_are_refused_and_the_service_goes_on(service: Service,
                                                             table: Table) -> None:
    """Not JSON, not an object, no envelope: logged, refused, nothing else changes."""
    for raw in (b"\xff\xfe", b"[1,2]", b'{"seq": "x"}', b"{" * 100_000):
        table.client.publish(f"{ROOT}/state", raw, qos=1).wait_for_publish(WAIT)
    venue = SseReader(service.port, "/sse/venue/t1").start()
    body = table.state({1: ["Ah"]}, secure=False)
    wait_until(lambda: any(m.data["p"]["ts"] == body["ts"] for m in venue.msgs()), WAIT,
               "the good message after the bad ones")
    assert "broadcast_message_refused" in service.text()
    venue.close()


def test_bad_config_exits_2_with_file_key_problem(tmp_path: Path) -> None:
    """A bad broadcast.toml: exit 2, one line ``file: key: problem``."""
    cases = {
        'tables = ["t1"]\nstate_file = "s"\n[producer]\npassword_hash = "hunter2"\n':
            "producer.password_hash",
        'tables = ["t/1"]\nstate_file = "s"\n':
            "tables[0]",
        (f'tables = ["t1"]\nstate_file = "s"\n[producer]\npassword_hash = "{_hash()}"\n'
         '[[outputs]]\nname = "overlay"\ndelay_s = 5\nreveal = "all"\n'):
            "outputs[0].delay_s",
        (f'tables = ["t1"]\nstate_file = "s"\n[producer]\npassword_hash = "{_hash()}"\n'
         '[http]\nportt = 1\n'):
            "http.portt: unknown key",
    }
    from table_controller.broadcast.command import run_broadcast

    for i, (text, key) in enumerate(cases.items()):
        path = tmp_path / "b.toml"
        path.write_text(text)
        if i == 0:  # one as a real process: the exit code and stderr of the command
            run = subprocess.run(
                [sys.executable, "-m", "table_controller", "broadcast", "--config", str(path)],
                capture_output=True, text=True, timeout=WAIT, check=False)
            code, line = run.returncode, run.stderr.strip()
        else:  # the same function in-process (a Python start-up each is slow on CI)
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                code = run_broadcast(argparse.Namespace(hash_password=False, config=path))
            line = err.getvalue().strip()
        assert code == 2, line
        assert line.startswith(f"stud-table broadcast: {path}: {key}"), line
        assert "\n" not in line
        assert "hunter2" not in line


def _hash() -> str:
    from table_controller.testing.broadcast_rig import PASSWORD_HASH

    return PASSWORD_HASH


def test_deploy_example_parses_once_its_hash_is_filled_in(tmp_path: Path) -> None:
    """deploy/broadcast.example.toml is a valid config apart from the placeholder hash,
    which is refused (nobody runs with it by mistake)."""
    from table_controller.broadcast.config import ConfigError, parse_broadcast_config
    from table_controller.table.config_file import read_toml

    example = Path(__file__).resolve().parents[2] / "deploy" / "broadcast.example.toml"
    data = read_toml(example)
    with pytest.raises(ConfigError, match=r"producer\.password_hash"):
        parse_broadcast_config(data, example)
    data["producer"]["password_hash"] = _hash()
    cfg = parse_broadcast_config(data, example)
    assert cfg.http.host == "127.0.0.1"
    assert cfg.outputs[0].delay_s == 1800


def test_damaged_backlog_file_exits_3_naming_it(tmp_path: Path) -> None:
    """A state_file that is not SQLite (damaged, or another file) stops the service
    with exit 3 and one line naming it: it is not overwritten or restarted blindly."""
    from table_controller.broadcast.command import run_broadcast

    path = write_config(tmp_path, 1883)
    (tmp_path / "bc").mkdir(exist_ok=True)
    (tmp_path / "bc" / "state.sqlite").write_bytes(b"not a database" * 100)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = run_broadcast(argparse.Namespace(hash_password=False, config=path))
    assert code == 3
    assert f"{path}: state_file:" in err.getvalue()
    assert (tmp_path / "bc" / "state.sqlite").read_bytes() == b"not a database" * 100


def test_an_id_the_store_never_gave_starts_the_page_afresh(service: Service,
                                                           table: Table) -> None:
    """A page whose last id is from a replaced store is told to reset and gets the
    current table, instead of waiting for ids to catch up with its old one."""
    table.state({1: ["Ah", "2c"]}, ts=time.time() - 100)
    reader = SseReader(service.port, "/sse/overlay/t1", last_id=10**9).start()
    wait_until(lambda: bool(reader.msgs()), WAIT, "the current state")
    assert any(e.event == "reset" for e in reader.events)
    reader.close()
