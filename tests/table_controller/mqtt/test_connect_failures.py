"""The daemon says a broker it cannot reach once, with the reason, then sums up (issue 24).

paho retries a failed connection every few seconds; the publisher used to log
``mqtt_connect_failed`` at every retry. :class:`ConnectFailures` decides (pure, unit
tests first); the publisher test points a real publisher at a stopped Mosquitto.
"""

from __future__ import annotations

from pathlib import Path

import mqtt_samples as sample
from structlog.testing import capture_logs

from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.publisher import MqttPublisher
from table_controller.mqtt.sequence import SequenceCounter
from table_controller.mqtt.unreachable import ConnectFailures
from table_controller.testing.broker import WAIT, MosquittoBroker, wait_until


def test_the_first_failure_is_said_at_once_with_its_reason() -> None:
    failures = ConnectFailures("mqtt_connect_failed", period=60.0)
    line = failures.failed("Connection refused", 0.0)
    assert line is not None
    assert (line.level, line.event, line.fields["reason"]) == (
        "warning", "mqtt_connect_failed", "Connection refused")


def test_retries_are_summed_up_at_most_once_per_period() -> None:
    failures = ConnectFailures("mqtt_connect_failed", period=60.0)
    lines = [failures.failed("Connection refused", float(t)) for t in range(0, 181, 2)]
    said = [line for line in lines if line is not None]
    assert [line.event for line in said] == [
        "mqtt_connect_failed", "mqtt_connect_failed_still", "mqtt_connect_failed_still",
        "mqtt_connect_failed_still"]
    assert said[-1].fields["attempts"] == 91
    assert said[-1].fields["seconds"] == 180.0


def test_a_new_reason_is_said_at_once() -> None:
    failures = ConnectFailures("mqtt_connect_failed", period=60.0)
    failures.failed("Connection refused", 0.0)
    assert failures.failed("Connection refused", 2.0) is None
    line = failures.failed("timed out", 4.0)
    assert line is not None
    assert (line.event, line.fields["reason"], line.fields["attempts"]) == (
        "mqtt_connect_failed", "timed out", 3)


def test_the_reconnect_ends_the_outage_with_its_figures() -> None:
    failures = ConnectFailures("mqtt_connect_failed")
    assert failures.connected(0.0) is None  # no outage: nothing to say
    failures.failed("Connection refused", 10.0)
    failures.failed("Connection refused", 12.0)
    line = failures.connected(15.0)
    assert line is not None
    assert (line.level, line.event, line.fields["attempts"], line.fields["seconds"]) == (
        "info", "mqtt_connect_failed_over", 2, 5.0)
    assert failures.attempts == 0
    again = failures.failed("Connection refused", 20.0)
    assert again is not None
    assert again.event == "mqtt_connect_failed"


def test_a_publisher_retrying_a_stopped_broker_logs_one_line(
    mosquitto: MosquittoBroker, tmp_path: Path
) -> None:
    mosquitto.stop()  # keeps its port for the later start
    broker = BrokerConfig(host="127.0.0.1", port=mosquitto.port, reconnect_min_delay=1,
                          reconnect_max_delay=1)
    pub = MqttPublisher(sample.TABLE, broker, SequenceCounter(tmp_path / "seq"))
    try:
        with capture_logs() as logs:
            pub.start()
            # Three attempts at least (paho retries every second here).
            wait_until(lambda: pub._link.trouble.connect_failures.attempts >= 3, WAIT, "3 attempts")
            failed = [e for e in logs if e["event"].startswith("mqtt_connect_failed")]
            assert [e["event"] for e in failed] == ["mqtt_connect_failed"]
            assert failed[0]["reason"] == "Connection refused"
            mosquitto.start()
            assert pub.wait_online(WAIT)
        over = [e for e in logs if e["event"] == "mqtt_connect_failed_over"]
        assert len(over) == 1
        assert over[0]["attempts"] >= 3
        assert len([e for e in logs if e["event"] == "mqtt_connect_failed"]) == 1
    finally:
        pub.stop(timeout=1)
