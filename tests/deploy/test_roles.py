"""The broker roles of deploy/acl on a real Mosquitto: every role x topic, read and write
(issue 14, "Roles on the broker"; docs/mqtt.md "Access control").

The broker runs deploy/mosquitto.conf and deploy/acl as shipped (paths and port
rewritten, as tests/table_controller/mqtt/test_acl.py does; that file keeps its own
checks of the daemon, replies and retained commands). Here the whole matrix:

* reads: one client per role subscribed to ``#``; the daemon publishes on every
  table topic (a ``secure/state`` with down cards among them) and on each
  client's reply topic, production on every ``cmd/``; a last ``status`` marker
  tells each client it has everything it will get. What arrived must be exactly
  the role's documented read set; the floor never gets a down card.
* writes: each role publishes on every topic; production (reads all) must see
  exactly the role's documented write set.

QoS 1 throughout: Mosquitto routes a publish before acknowledging it, so once the
marker (published after every acknowledged publish) arrives, nothing earlier is
still on its way.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from table_controller.testing.broker import BrokerUser, MosquittoBroker, RecordingSubscriber

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "table_controller"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "table_controller" / "mqtt"))
import mqtt_samples as sample  # the MQTT tests' sample hand (down cards in DOWN)
from test_acl import _deploy_config  # deploy/mosquitto.conf, paths rewritten

TABLE = "t1"
ROOT = f"stud/v1/{TABLE}"
ROLES = ("stud-daemon", "stud-production", "stud-floor", "stud-archive",
         "stud-archive-secure", "overlay", "public", "someone-else")
PASSWORD = "pw-"

PUBLIC = frozenset({
    "status", "state", "events", "alerts", "alerts/open", "alerts/changes", "notices",
    "readers/1", "readers/1/stats", "dealer", "hands",
})
SECURE = frozenset({"secure/state", "secure/events", "secure/notices", "secure/hands"})
COMMANDS = frozenset({f"cmd/{name}" for name in (
    "rebirth", "hand", "act", "kill", "live", "end", "seat", "card", "ack", "resolve",
    "dealer")})  # card: manual entry (issue 19), production's alone
DAEMON_WRITES = PUBLIC | SECURE
OWN_REPLY = "reply/<own>"  # reply/<this client's id>
PEER_REPLY = "reply/<peer>"  # reply/<another role's client id>
OTHER_REPLY = "reply/someone"
ALL = PUBLIC | SECURE | COMMANDS | {OWN_REPLY, OTHER_REPLY}

# docs/mqtt.md "Access control", one row per role: (reads, writes).
MATRIX: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "stud-daemon": (PUBLIC | COMMANDS | {OWN_REPLY},
                    DAEMON_WRITES | COMMANDS | {OWN_REPLY, OTHER_REPLY}),
    "stud-production": (ALL | {PEER_REPLY}, COMMANDS),
    "stud-floor": (PUBLIC | {OWN_REPLY},
                   frozenset({"cmd/rebirth", "cmd/ack", "cmd/resolve", "cmd/dealer"})),
    "stud-archive": (PUBLIC | {OWN_REPLY}, frozenset({"cmd/rebirth"})),
    "stud-archive-secure": (PUBLIC | {"secure/hands", OWN_REPLY}, frozenset({"cmd/rebirth"})),
    "overlay": (PUBLIC | {OWN_REPLY}, frozenset({"cmd/rebirth"})),
    "public": (PUBLIC | {OWN_REPLY}, frozenset({"cmd/rebirth"})),
    "someone-else": (PUBLIC | {OWN_REPLY}, frozenset({"cmd/rebirth"})),
}
MARKER = b'{"marker": true}'


def _client_id(role: str) -> str:
    return f"roles-{role}"


def _topic(suffix: str, role: str) -> str:
    if suffix == OWN_REPLY:
        return f"{ROOT}/reply/{_client_id(role)}"
    return f"{ROOT}/{suffix}"


def _suffix(topic: str, role: str) -> str:
    rest = topic.removeprefix(f"{ROOT}/")
    if rest == f"reply/{_client_id(role)}":
        return OWN_REPLY
    if rest.startswith(f"reply/{_client_id('')}"):
        return PEER_REPLY
    return rest


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """Mosquitto with the shipped config and ACL, one user per role."""
    users = [BrokerUser(role, PASSWORD + role) for role in ROLES]
    with MosquittoBroker(tmp_path, users=users, config_text=_deploy_config) as running:
        yield running


@pytest.fixture
def clients(broker: MosquittoBroker) -> Iterator[dict[str, RecordingSubscriber]]:
    """One client per role, logged in and subscribed to everything."""
    made: dict[str, RecordingSubscriber] = {}
    try:
        for role in ROLES:
            made[role] = RecordingSubscriber(broker.port, ["#"], username=role,
                                             password=PASSWORD + role,
                                             client_id=_client_id(role))
        for client in made.values():
            client.wait_subscribed()
        yield made
    finally:
        for client in made.values():
            client.close()


def _finish(clients: dict[str, RecordingSubscriber], marker_from: RecordingSubscriber) -> None:
    """Publish the marker on status and wait until every client has it."""
    marker_from.publish(f"{ROOT}/status", MARKER)
    for client in clients.values():
        client.wait_for(lambda m: m.payload == MARKER)


def test_each_role_reads_exactly_its_topics(clients: dict[str, RecordingSubscriber]) -> None:
    daemon, production = clients["stud-daemon"], clients["stud-production"]
    _public, secure = sample.states()
    for suffix in sorted(COMMANDS):
        production.publish(f"{ROOT}/{suffix}", b"{}")
    for suffix in sorted(DAEMON_WRITES):
        payload = secure.model_dump_json() if suffix == "secure/state" else b"{}"
        daemon.publish(f"{ROOT}/{suffix}", payload)
    for role in ROLES:  # one reply to every client's own reply topic
        daemon.publish(_topic(OWN_REPLY, role), json.dumps({"to": role}))
    daemon.publish(f"{ROOT}/{OTHER_REPLY}", b"{}")
    _finish(clients, daemon)
    got: dict[str, set[str]] = {}
    for role, client in clients.items():
        received = [m for m in client.snapshot() if m.payload != MARKER]
        got[role] = {_suffix(m.topic, role) for m in received}
        own = [m.json() for m in received if _suffix(m.topic, role) == OWN_REPLY]
        assert own == [{"to": role}]  # its own reply, not another client's
    assert {role: sorted(topics) for role, topics in got.items()} == {
        role: sorted(reads) for role, (reads, _writes) in MATRIX.items()}


def test_floor_never_receives_a_down_card(clients: dict[str, RecordingSubscriber]) -> None:
    """A secure/state carrying every seat's down cards: the floor, subscribed to #,
    gets nothing from secure/ and no down card anywhere; production gets them."""
    daemon = clients["stud-daemon"]
    public, secure = sample.states(hand=9)
    daemon.publish(f"{ROOT}/secure/state", secure.model_dump_json())
    daemon.publish(f"{ROOT}/state", public.model_dump_json())
    daemon.publish(f"{ROOT}/secure/hands", json.dumps({"down_cards": sample.DOWN}))
    _finish(clients, daemon)
    floor = clients["stud-floor"].snapshot()
    assert [m.topic for m in floor if "/secure/" in m.topic] == []
    assert f"{ROOT}/state" in {m.topic for m in floor}
    for message in floor:
        payload = message.json()
        for seat in payload.get("seats", []):
            assert "down" not in seat, message.topic
    down_cards = {card for cards in sample.DOWN.values() for card in cards}
    secure_seen = clients["stud-production"].on_topic(f"{ROOT}/secure/state")
    assert {c for s in secure_seen[-1].json()["seats"] for c in s["down"]} == down_cards


def test_each_role_writes_exactly_its_topics(clients: dict[str, RecordingSubscriber]) -> None:
    production = clients["stud-production"]  # reads every topic
    for role, client in clients.items():
        for suffix in sorted(ALL):
            client.publish(_topic(suffix, role), json.dumps({"by": role}))
    _finish(clients, clients["stud-daemon"])
    written: dict[str, set[str]] = {role: set() for role in ROLES}
    for message in production.snapshot():
        if message.payload != MARKER:
            role = message.json()["by"]
            written[role].add(_suffix(message.topic, role))
    assert {role: sorted(topics) for role, topics in written.items()} == {
        role: sorted(writes) for role, (_reads, writes) in MATRIX.items()}


def test_archive_shared_subscriptions_follow_the_same_roles(
    broker: MosquittoBroker, clients: dict[str, RecordingSubscriber]
) -> None:
    """Archive writers share the work through MQTT 5 shared subscriptions
    ($share/<group>/...): the ACL applies to them as to plain ones. Two public writers
    in group "archive" share the hands and never get secure/hands; the secure writer,
    in a group of its own, gets it. (One group mixing both roles loses secure/hands
    whenever Mosquitto hands it to a public member: docs/mqtt.md.)"""
    hands, secure_hands = f"{ROOT}/hands", f"{ROOT}/secure/hands"
    members = (("stud-archive", "archive"), ("stud-archive", "archive"),
               ("stud-archive-secure", "archive-secure"))
    writers = [
        RecordingSubscriber(broker.port, [f"$share/{group}/{hands}",
                                          f"$share/{group}/{secure_hands}"],
                            username=role, password=PASSWORD + role, client_id=f"writer-{n}")
        for n, (role, group) in enumerate(members)
    ]
    try:
        for writer in writers:
            writer.wait_subscribed()
        daemon = clients["stud-daemon"]
        for n in range(20):
            daemon.publish(hands, json.dumps({"hand": n}))
        daemon.publish(secure_hands, json.dumps({"down_cards": sample.DOWN}))
        _finish(clients, daemon)
        public_got = [m.json()["hand"] for w in writers[:2] for m in w.on_topic(hands)]
        assert sorted(public_got) == list(range(20))  # each hand to one of the two
        assert [m.topic for w in writers[:2] for m in w.snapshot() if "/secure/" in m.topic] == []
        assert [m.json()["hand"] for m in writers[2].on_topic(hands)] == list(range(20))
        assert [m.json() for m in writers[2].on_topic(secure_hands)] == [
            {"down_cards": {str(k): v for k, v in sample.DOWN.items()}}]
    finally:
        for writer in writers:
            writer.close()
