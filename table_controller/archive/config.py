"""``archive.toml``: the archive service's configuration (pydantic, like the others).

Every problem is one :class:`~table_controller.table.config_file.ConfigError` line,
``file: key: problem``; ``stud-table archive`` exits 2 with it. A commented example
is ``deploy/archive.example.toml``; docs/archive.md explains every key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Final

from pydantic import Field, model_validator

from table_controller.archive.store import database_url, sqlite_url
from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.table.config_file import ConfigError, ConfigSection, read_toml
from table_controller.web.service_config import (
    config_dir,
    parse_config,
    relative_to_config,
    topic_level,
)

MAX_QUEUE: Final = 65_535
"""The largest queue: the MQTT 5 *Receive Maximum* it is announced as (a 16-bit value)."""


class DatabaseConfig(ConfigSection):
    """``[database]``: an SQLite file (``path``, the default) or PostgreSQL (``dsn``)."""

    path: Path | None = Field(default=None, description="SQLite file (relative: to the config).")
    dsn: str | None = Field(default=None, description="postgresql://user:pw@host:port/db")
    connect_timeout_s: float = Field(default=5.0, ge=1.0, le=120.0)

    @model_validator(mode="after")
    def _one(self) -> DatabaseConfig:
        if (self.path is None) == (self.dsn is None):
            raise ValueError("give exactly one of path (SQLite) and dsn (PostgreSQL)")
        if self.dsn is not None:
            try:
                url = database_url(self.dsn)
            except Exception:  # SQLAlchemy's ArgumentError: never echo a DSN (password)
                raise ValueError("dsn is not a database URL"
                                 " (postgresql://user:password@host:port/database)") from None
            if url.get_backend_name() != "postgresql":
                raise ValueError("dsn must be a postgresql:// URL (SQLite: use path)")
        return self

    def resolved(self, base: Path) -> DatabaseConfig:
        """This database with a relative ``path`` taken from ``base`` (the config's dir)."""
        if self.path is None or self.path.is_absolute():
            return self
        return self.model_copy(update={"path": relative_to_config(self.path, base)})


class ArchiveConfig(ConfigSection):
    """The whole ``archive.toml``."""

    instance: Annotated[str, topic_level("instance")] = Field(
        default="archive-1",
        description="This instance's name: its status topic and its MQTT session.")
    tables: list[Annotated[str, topic_level("table id")]] = Field(
        default_factory=list, description="Tables archived; empty: every table (+).")
    secure: bool = Field(
        default=False,
        description="Follow secure/hands (production credentials) and keep down cards.")
    share_group: Annotated[str, topic_level("share group")] | None = Field(
        default=None,
        description="MQTT 5 shared subscription group: instances of one group split the"
        " messages.")
    queue: int = Field(default=1000, ge=1, le=MAX_QUEUE,
                       description="Messages held in memory, unacknowledged, while the"
                       " database is away; the broker keeps the rest.")
    batch: int = Field(default=200, ge=1, le=10_000,
                       description="Messages written per transaction at most.")
    session_expiry_s: int = Field(
        default=7 * 24 * 3600, ge=60, le=2**32 - 1,
        description="How long the broker keeps our session (and queues) while we are down.")
    status_interval_s: float = Field(default=10.0, ge=0.5, le=3600.0)
    broker: BrokerConfig = BrokerConfig()
    database: DatabaseConfig = DatabaseConfig(path=Path("archive.sqlite"))

    @model_validator(mode="after")
    def _tables(self) -> ArchiveConfig:
        if len(set(self.tables)) != len(self.tables):
            raise ValueError("tables: a table is listed twice")
        if "_archive" in self.tables:
            raise ValueError("tables: _archive is the archive's own topic level")
        return self

    def url(self) -> Any:
        """The database's SQLAlchemy URL."""
        if self.database.dsn is not None:
            return database_url(self.database.dsn)
        assert self.database.path is not None
        return sqlite_url(str(self.database.path))


def parse_archive_config(data: dict[str, Any], file: Path | str) -> ArchiveConfig:
    """Validate parsed TOML ``data``; a problem is a :class:`ConfigError` naming ``file``."""
    cfg = parse_config(ArchiveConfig, data, file, ("tables",))
    return cfg.model_copy(update={"database": cfg.database.resolved(config_dir(file))})


def load_archive_config(path: Path | str) -> ArchiveConfig:
    """Read and validate ``archive.toml``; raise :class:`ConfigError` (one line)."""
    return parse_archive_config(read_toml(path), path)


__all__ = ["ArchiveConfig", "ConfigError", "DatabaseConfig", "load_archive_config",
           "parse_archive_config"]
