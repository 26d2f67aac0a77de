"""The publisher's window of messages in flight follows the broker's MQTT 5 Receive
Maximum (issue 20, console floods: with paho's default of 20, card events waited in
paho behind messages the flooded broker had not acknowledged yet). That the deploy
config gives the broker the window the daemon needs: tests/daemon/test_broker_limits.py."""

from __future__ import annotations

from pathlib import Path

import mqtt_samples as sample
import pytest

from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.publisher import OUT_WINDOW, MqttPublisher, out_window
from table_controller.mqtt.sequence import SequenceCounter
from table_controller.testing.broker import WAIT, MosquittoBroker


def test_the_window_is_ours_unless_the_broker_takes_fewer() -> None:
    assert out_window(None) == OUT_WINDOW  # no Receive Maximum: 65,535
    assert out_window(65535) == OUT_WINDOW
    assert out_window(20) == 20  # Mosquitto's default max_inflight_messages
    assert out_window(0) == 1  # not valid MQTT 5; never paho's "no limit"


@pytest.mark.parametrize(("broker_setting", "window"), [
    (None, 20),  # Mosquitto's default announces 20
    (1000, 1000),  # deploy/mosquitto.conf
    (5000, OUT_WINDOW),  # more than we ask for
])
def test_the_window_follows_the_brokers_receive_maximum(
    tmp_path: Path, broker_setting: int | None, window: int
) -> None:
    extra = "" if broker_setting is None else f"max_inflight_messages {broker_setting}"
    with MosquittoBroker(tmp_path / "broker", extra_config=extra) as broker:
        config = BrokerConfig(host="127.0.0.1", port=broker.port)
        pub = MqttPublisher(sample.TABLE, config, SequenceCounter(tmp_path / "seq"))
        try:
            pub.start()
            assert pub.wait_online(WAIT)
            assert pub.in_flight_window == window
            pub.publish_event(*sample.down_event())  # and the connection works with it
        finally:
            pub.stop(timeout=1)
