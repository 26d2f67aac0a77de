"""The broker connection settings (``[broker]`` of every service's config), as pydantic models.

Shared by the daemon, the broadcast, archive and floor services and the tools that
talk to a broker; the MQTT layer's own model, so the publisher does not reach up
into the daemon's configuration.
"""

from __future__ import annotations

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from pydantic import Field, model_validator

from table_controller.table.config_file import ConfigSection, ResolvedPath


class TlsConfig(ConfigSection):
    """``[broker.tls]``: TLS to the broker (absent = plain TCP)."""

    ca_file: ResolvedPath | None = Field(default=None, description="CA bundle; system if unset.")
    cert_file: ResolvedPath | None = Field(default=None, description="Client certificate.")
    key_file: ResolvedPath | None = Field(default=None, description="Client private key.")
    insecure: bool = Field(default=False, description="Skip host name check (testing only).")


class BrokerConfig(ConfigSection):
    """``[broker]``: where and how to connect to the MQTT broker."""

    host: str = "localhost"
    port: int = Field(default=1883, ge=1, le=65535)
    username: str | None = None
    password: str | None = None
    tls: TlsConfig | None = None
    client_id: str | None = Field(
        default=None,
        description="MQTT client id; default (recommended) an unguessable"
        " stud-table-<table id>-<128 random bits>, new at each start (docs/mqtt.md).",
    )
    keepalive: int = Field(default=30, ge=5, le=3600)
    reconnect_min_delay: int = Field(default=1, ge=1, le=60)
    reconnect_max_delay: int = Field(default=30, ge=1, le=3600)
    alert_queue: int = Field(
        default=1000, ge=1, le=100_000, description="Alerts kept while the broker is away."
    )

    @model_validator(mode="after")
    def _credentials(self) -> BrokerConfig:
        if self.password is not None and self.username is None:
            raise ValueError("password given without username")
        if self.reconnect_max_delay < self.reconnect_min_delay:
            raise ValueError("reconnect_max_delay must be at least reconnect_min_delay")
        return self


def connect_properties(*, session_expiry_s: int | None = None,
                       receive_maximum: int | None = None) -> Properties | None:
    """MQTT 5 CONNECT properties (None when neither is given): ``session_expiry_s``, how
    long the broker keeps our session while we are away; ``receive_maximum``, the most
    unacknowledged messages the broker may send us at once."""
    if session_expiry_s is None and receive_maximum is None:
        return None
    props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
    if session_expiry_s is not None:
        props.SessionExpiryInterval = session_expiry_s
    if receive_maximum is not None:
        props.ReceiveMaximum = receive_maximum
    return props


def configure_client(client: mqtt.Client, broker: BrokerConfig) -> None:
    """Apply ``broker``'s settings to a new paho client: reconnect delays, credentials,
    TLS; and make paho log and swallow an exception in a callback rather than end its
    loop thread (the daemon, the broadcast, floor and archive services all connect so)."""
    client.suppress_exceptions = True
    client.reconnect_delay_set(broker.reconnect_min_delay, broker.reconnect_max_delay)
    if broker.username is not None:
        client.username_pw_set(broker.username, broker.password)
    if broker.tls is not None:
        tls = broker.tls
        client.tls_set(
            ca_certs=str(tls.ca_file) if tls.ca_file else None,
            certfile=str(tls.cert_file) if tls.cert_file else None,
            keyfile=str(tls.key_file) if tls.key_file else None,
        )
        client.tls_insecure_set(tls.insecure)
