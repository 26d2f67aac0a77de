"""The hostile tests' broker runs with deploy/mosquitto.conf's limits, and those give
the daemon the window of messages in flight it asks for (issue 20, console floods)."""

from __future__ import annotations

import re
from pathlib import Path

from hostile import MAX_INFLIGHT, MAX_PACKET, MAX_QUEUED

from table_controller.mqtt.publisher import OUT_WINDOW

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "mosquitto.conf"


def _setting(text: str, name: str) -> int:
    found = re.findall(rf"^{name}\s+(\d+)\s*$", text, flags=re.MULTILINE)
    assert len(found) == 1, name
    return int(found[0])


def test_the_hostile_tests_use_the_deploy_configs_broker_limits() -> None:
    deploy = DEPLOY.read_text()
    assert _setting(deploy, "max_inflight_messages") == MAX_INFLIGHT
    assert _setting(deploy, "max_queued_messages") == MAX_QUEUED
    assert _setting(deploy, "max_packet_size") == MAX_PACKET
    assert MAX_INFLIGHT >= OUT_WINDOW  # the daemon gets the window it asks for
