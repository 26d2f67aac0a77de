"""Helpers of the hostile-client tests (issue 9): raw MQTT 5 requests, RSS, seq gaps."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from table_controller.testing.broker import Received, RecordingSubscriber
from table_controller.testing.daemon_rig import ROOT

REPLY = f"{ROOT}/reply/hostile-console"
"""A well-formed response topic of the rig's table."""

MAX_PACKET = 262_144
"""deploy/mosquitto.conf's ``max_packet_size``, also set on the tests' brokers."""

MAX_QUEUED = 10_000
"""deploy/mosquitto.conf's ``max_queued_messages``: past that many messages
waiting for one client (the daemon too), Mosquitto drops them."""

MAX_INFLIGHT = 1000
"""deploy/mosquitto.conf's ``max_inflight_messages`` (the broker's Receive Maximum)."""

BROKER_LIMITS = (f"max_packet_size {MAX_PACKET}\nmax_queued_messages {MAX_QUEUED}\n"
                 f"max_inflight_messages {MAX_INFLIGHT}")
"""Extra broker config of these tests: the deploy config's limits."""


def request_props(response_topic: str | None, correlation: bytes | None) -> Properties | None:
    """MQTT 5 PUBLISH properties with a response topic and correlation data (either may
    be absent; ``None`` when both are)."""
    if response_topic is None and correlation is None:
        return None
    props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    if response_topic is not None:
        props.ResponseTopic = response_topic
    if correlation is not None:
        props.CorrelationData = correlation
    return props


def send(
    client: RecordingSubscriber,
    name: str,
    payload: bytes,
    response_topic: str | None = REPLY,
    correlation: bytes | None = None,
    *,
    retain: bool = False,
    wait: bool = True,
) -> None:
    """Publish a console request on ``cmd/<name>`` (QoS 1) from ``client``."""
    info = client._client.publish(
        f"{ROOT}/cmd/{name}", payload, qos=1, retain=retain,
        properties=request_props(response_topic, correlation),
    )
    if wait:
        info.wait_for_publish(30)


def replies(client: RecordingSubscriber, correlation: bytes) -> list[Received]:
    """Messages received by ``client`` carrying ``correlation``, wherever they went,
    except the requests themselves (on ``cmd/``)."""
    return [m for m in client.snapshot()
            if m.correlation_data == correlation and f"{ROOT}/cmd/" not in m.topic]


def rss_kb(pid: int) -> int:
    """Resident set size of process ``pid`` in KiB (``VmRSS`` of /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def daemon_topics() -> tuple[str, ...]:
    """Prefixes of every topic the daemon may publish on."""
    return tuple(
        f"{ROOT}/{level}"
        for level in ("status", "state", "events", "secure/", "alerts", "readers/", "reply/",
                      "dealer", "hands")  # issue 14: alerts/open, alerts/changes too
    )


def seq_gaps(messages: Iterable[Received], since: int) -> list[int]:
    """The sequence numbers missing after ``since`` among ``messages``' envelopes,
    up to the highest seen (the will consumes one per connection: no disconnect
    may happen while this is used)."""
    seen: set[int] = set()
    for message in messages:
        if "/reply/" in message.topic or "/cmd/" in message.topic or not message.payload:
            continue
        seq = json.loads(message.payload).get("seq")
        if isinstance(seq, int) and seq > since:
            seen.add(seq)
    if not seen:
        return []
    return sorted(set(range(since + 1, max(seen) + 1)) - seen)
