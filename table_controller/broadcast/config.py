"""``broadcast.toml``: the broadcast service's configuration (pydantic, like the daemon's).

Every problem is one :class:`~table_controller.table.config_file.ConfigError` line,
``file: key: problem``; ``stud-table broadcast`` exits 2 with it. A commented example
is ``deploy/broadcast.example.toml``; docs/broadcast.md explains every key.

The producer password is stored only as a salted scrypt hash (:func:`hash_password`,
``stud-table broadcast --hash-password``); the service never sees, logs or stores
the password itself except to check a login against the hash.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, Field, model_validator

from table_controller.archive.config import DatabaseConfig
from table_controller.broadcast.delay import MAX_DELAY_S, MAX_OFFSET_MS, Reveal
from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.table.config_file import ConfigError, ConfigSection, read_toml
from table_controller.web.passwords import checked_hash
from table_controller.web.service_config import (
    config_dir,
    parse_config,
    relative_to_config,
    topic_level,
)

RESERVED: Final = frozenset({"venue", "producer", "static", "api", "login"})
"""Output names taken by the service's own pages."""

_ORIGIN: Final = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?")


def _origins(value: list[str]) -> list[str]:
    for origin in value:
        if not _ORIGIN.fullmatch(origin):
            raise ValueError(f"{origin[:80]!r} is not an origin (http[s]://host[:port])")
    return value


class HttpConfig(ConfigSection):
    """``[http]``: where the pages are served. Localhost unless said otherwise."""

    host: str = Field(default="127.0.0.1", description="Bind address; put TLS in front.")
    port: int = Field(default=8480, ge=0, le=65535, description="0: any free port.")
    overlay_frame_ancestors: Annotated[list[str], AfterValidator(_origins)] = Field(
        default_factory=list,
        description="Origins whose pages may frame the overlay pages (a web-based"
        " switcher). OBS's browser source does not frame a page: leave it empty."
        " Every other page can never be framed.")


class ProducerConfig(ConfigSection):
    """``[producer]``: the lock of the producer page, the delay control and locked outputs."""

    password_hash: Annotated[str, AfterValidator(checked_hash)] = Field(
        description="scrypt hash (stud-table broadcast --hash-password).")
    confirm_cut: float = Field(
        default=0.5, gt=0.0, le=1.0,
        description="A delay cut by more than this fraction of the delay in force needs"
        " a confirmation on the producer page.")


class OutputConfig(ConfigSection):
    """``[[outputs]]``: one delayed output, served at ``/overlay/<table>[/<name>]``."""

    name: Annotated[str, topic_level("output name")] = "overlay"
    delay_s: float = Field(default=1800.0, ge=0.0, le=MAX_DELAY_S)
    offset_ms: int = Field(default=0, ge=0, le=MAX_OFFSET_MS,
                           description="Board-sync: extra milliseconds on top of the delay.")
    reveal: Reveal = Reveal.SHOWDOWN
    locked: bool = Field(default=False,
                         description="Needs the producer password (a live program overlay).")
    stats: Literal["off", "session", "all"] = Field(
        default="off", description="Player statistics on the name plates (needs [archive]):"
        " this session's (the last stats_session_hours) or all time.")


class BroadcastConfig(ConfigSection):
    """The whole ``broadcast.toml``."""

    tables: list[Annotated[str, topic_level("table id")]] = Field(min_length=1)
    state_file: Path = Field(description="SQLite backlog (relative: to the config file).")
    retention_hours: float = Field(default=12.0, gt=0, le=24 * 30)
    min_public_delay_s: float = Field(
        default=30.0, ge=0.0, le=MAX_DELAY_S,
        description="Shortest delay of an unlocked output that shows hole cards.")
    broker: BrokerConfig = BrokerConfig()
    http: HttpConfig = HttpConfig()
    producer: ProducerConfig
    archive: DatabaseConfig | None = Field(
        default=None, description="The archive database (stud-table archive writes it):"
        " player statistics for the producer page and the outputs that show them.")
    stats_session_hours: float = Field(default=8.0, gt=0, le=168,
                                       description="A session's statistics: the last hours.")
    outputs: list[OutputConfig] = Field(default_factory=lambda: [OutputConfig()])

    @model_validator(mode="after")
    def _outputs(self) -> BroadcastConfig:
        names = [out.name for out in self.outputs]
        for i, out in enumerate(self.outputs):
            if out.name in RESERVED:
                raise ValueError(f"outputs[{i}].name: {out.name!r} is reserved")
            if names.count(out.name) > 1:
                raise ValueError(f"outputs[{i}].name: {out.name!r} is used twice")
            if out.stats != "off" and self.archive is None:
                raise ValueError(f"outputs[{i}].stats: player statistics need an [archive]")
            if self.public_floor(out) > out.delay_s:
                raise ValueError(
                    f"outputs[{i}].delay_s: an unlocked output that shows hole cards needs"
                    f" a delay of at least min_public_delay_s ({self.min_public_delay_s:g} s)")
        if len(set(self.tables)) != len(self.tables):
            raise ValueError("tables: a table is listed twice")
        return self

    def public_floor(self, out: OutputConfig) -> float:
        """The shortest delay ``out`` may run at (also for the producer's control)."""
        if out.locked or out.reveal is Reveal.NEVER:
            return 0.0
        return self.min_public_delay_s


def parse_broadcast_config(data: dict[str, Any], file: Path | str) -> BroadcastConfig:
    """Validate parsed TOML ``data``; a problem is a :class:`ConfigError` naming ``file``."""
    cfg = parse_config(BroadcastConfig, data, file, ("outputs", "tables"))
    base = config_dir(file)
    update: dict[str, Any] = {"state_file": relative_to_config(cfg.state_file, base)}
    if cfg.archive is not None:
        update["archive"] = cfg.archive.resolved(base)
    return cfg.model_copy(update=update)


def load_broadcast_config(path: Path | str) -> BroadcastConfig:
    """Read and validate ``broadcast.toml``; raise :class:`ConfigError` (one line)."""
    return parse_broadcast_config(read_toml(path), path)


__all__ = [
    "BroadcastConfig",
    "ConfigError",
    "HttpConfig",
    "OutputConfig",
    "ProducerConfig",
    "load_broadcast_config",
    "parse_broadcast_config",
]
