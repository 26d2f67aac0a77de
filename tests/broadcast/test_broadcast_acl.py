"""The broadcast service under deploy/mosquitto.conf and deploy/acl on a real Mosquitto.

The service reads ``secure/#`` only as ``stud-production``: started with a public
user's login it still serves the venue, but its producer stream and delayed
overlay never carry a hole card (the broker does not give it the secure topics).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from table_controller.testing.broadcast_rig import PASSWORD, Service, SseReader, write_config
from table_controller.testing.broker import WAIT, MosquittoBroker, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "table_controller"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "table_controller" / "mqtt"))
# The ACL tests' deploy broker (deploy/mosquitto.conf + deploy/acl, three users).
from test_acl import USERS, _deploy_config

ROOT = "stud/v1/t1"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """Mosquitto running the deploy config and ACL (the users of
    tests/table_controller/mqtt/test_acl)."""
    directory = tmp_path / "broker"
    directory.mkdir()
    with MosquittoBroker(directory, users=USERS, config_text=_deploy_config) as running:
        yield running


def _publish_as_daemon(port: int) -> None:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="acl-daemon")
    client.username_pw_set("stud-daemon", "daemon-pw")
    client.connect("127.0.0.1", port)
    client.loop_start()
    now = time.time()
    seat = {"seat": 1, "status": "active", "up": ["Kd"], "down_count": 2, "stack": None,
            "bet": None}
    base = {"table": "t1", "hand": 1, "street": 3, "bring_in": None, "to_act": None,
            "community": None, "alerts": []}
    client.publish(f"{ROOT}/secure/state", json.dumps(
        {**base, "seq": 1, "ts": now, "seats": [{**seat, "down": ["Ah", "2c"]}]}),
        qos=1, retain=True).wait_for_publish(WAIT)
    client.publish(f"{ROOT}/state", json.dumps({**base, "seq": 2, "ts": now, "seats": [seat]}),
                   qos=1, retain=True).wait_for_publish(WAIT)
    client.loop_stop()
    client.disconnect()


def _service(tmp: Path, port: int, user: str, password: str) -> Service:
    config = write_config(tmp, port, delay_s=0.5)
    text = config.read_text().replace(
        'host = "127.0.0.1"\nport', f'host = "127.0.0.1"\nusername = "{user}"\n'
        f'password = "{password}"\nport', 1)
    config.write_text(text)
    return Service(config).start()


@pytest.mark.parametrize(("user", "password", "secure"), [
    ("stud-production", "prod-pw", True),
    ("overlay", "overlay-pw", False),
])
def test_only_the_production_user_feeds_hole_cards(tmp_path: Path, broker: MosquittoBroker,
                                                   user: str, password: str,
                                                   secure: bool) -> None:
    """As stud-production the producer stream has the down cards; as a public user the
    venue works and no stream of the service ever holds one."""
    _publish_as_daemon(broker.port)
    service = _service(tmp_path, broker.port, user, password)
    try:
        venue = SseReader(service.port, "/sse/venue/t1").start()
        producer = SseReader(service.port, "/sse/producer/t1", password=PASSWORD).start()
        overlay = SseReader(service.port, "/sse/overlay/t1").start()
        wait_until(lambda: bool(venue.msgs()), WAIT, "the public state on the venue")
        if secure:
            wait_until(lambda: any("Ah" in json.dumps(m.data) for m in producer.msgs()),
                       WAIT, "the down cards on the producer stream")
        else:
            time.sleep(2.0)  # a refused subscription delivers nothing: give it time to
            for reader in (producer, overlay, venue):
                assert all("Ah" not in json.dumps(m.data) for m in reader.msgs())
        for reader in (venue, producer, overlay):
            reader.close()
    finally:
        service.stop()
