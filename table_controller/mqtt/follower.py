"""The services' MQTT follower client: one paho set-up for broadcast, floor and archive.

Each service beside the daemon follows tables' topics with a paho client made the
same way (issue 20): MQTT 5, the broker settings of :func:`configure_client`
(credentials, TLS, reconnect delays, callbacks that cannot end paho's thread), a
broker outage said once per reason (:class:`BrokerOutage`), a refused connection
logged as ``<service>_mqtt_refused``, TCP_NODELAY on a TCP socket, and a session
(persistent with an expiry, or fresh) asked for at connect. What differs, the
client id, what is subscribed and what a message does, is the service's:
``on_connected`` and ``on_lost`` are called with the client's ``userdata``.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
import structlog
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.reasoncodes import ReasonCode

from table_controller.mqtt.broker_config import BrokerConfig, configure_client, connect_properties
from table_controller.mqtt.unreachable import BrokerOutage

log = structlog.get_logger(__name__)

Connected = Callable[[mqtt.Client, Any], None]
"""``on_connected(client, userdata)``: subscribe, set flags (a successful connection)."""
Lost = Callable[[Any, ReasonCode], None]
"""``on_lost(userdata, reason)``: the connection is gone (paho reconnects by itself)."""
MessageHandler = Callable[[mqtt.Client, Any, mqtt.MQTTMessage], None]
"""paho's ``on_message(client, userdata, message)``."""


def follower_client(broker: BrokerConfig, client_id: str, service: str, outage: BrokerOutage,
                    *, on_connected: Connected, on_lost: Lost, on_message: MessageHandler,
                    userdata: Any = None, manual_ack: bool = False,
                    client_class: type[mqtt.Client] = mqtt.Client) -> mqtt.Client:
    """A paho client (``client_class``) following tables for ``service`` (the log
    events' prefix): configured, its callbacks wired; not connected yet
    (:func:`connect_follower`)."""
    client = client_class(CallbackAPIVersion.VERSION2, client_id=client_id,
                          protocol=MQTTProtocolVersion.MQTTv5, userdata=userdata,
                          manual_ack=manual_ack)
    configure_client(client, broker)

    def connected(client: mqtt.Client, userdata: Any, _flags: object, reason: ReasonCode,
                  _props: object) -> None:
        if reason.is_failure:
            log.error(f"{service}_mqtt_refused", reason=str(reason))
            return
        outage.connected()
        sock = client.socket()
        if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
            # As the daemon does: small messages must not wait for Nagle + delayed ACK.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        on_connected(client, userdata)

    def lost(_client: mqtt.Client, userdata: Any, _flags: object, reason: ReasonCode,
             _props: object) -> None:
        on_lost(userdata, reason)

    client.on_connect = connected
    client.on_connect_fail = outage.on_connect_fail
    client.on_disconnect = lost
    client.on_message = on_message
    return client


def connect_follower(client: mqtt.Client, broker: BrokerConfig, *,
                     session_expiry_s: int | None = None,
                     receive_maximum: int | None = None) -> None:
    """Connect in the background and start paho's loop thread (returns at once).

    ``session_expiry_s``: a persistent session the broker keeps (and queues QoS 1
    messages in) that long while we are away; ``None``: a fresh session each time
    (the retained messages rebuild the view). ``receive_maximum``: the most
    unacknowledged messages the broker may send us (MQTT 5).
    """
    props = connect_properties(session_expiry_s=session_expiry_s,
                               receive_maximum=receive_maximum)
    client.connect_async(broker.host, broker.port, keepalive=broker.keepalive,
                         clean_start=session_expiry_s is None, properties=props)
    client.loop_start()


def stop_follower(client: mqtt.Client) -> None:
    """Disconnect, then stop the loop thread (in this order: the thread ends at once)."""
    client.disconnect()
    client.loop_stop()


__all__ = ["Connected", "Lost", "MessageHandler", "connect_follower", "follower_client",
           "stop_follower"]
