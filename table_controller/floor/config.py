"""``floor.toml``: the floor dashboard's configuration (pydantic, like broadcast's).

Every problem is one :class:`~table_controller.table.config_file.ConfigError` line,
``file: key: problem``; ``stud-table floor`` exits 2 with it. A commented example is
``deploy/floor.example.toml``; docs/floor.md explains every key.

Supervisors log in with a name and a password stored only as a salted scrypt hash
(the same scheme as the broadcast producer: ``stud-table floor --hash-password``).
The logged-in name is the ``by`` of every acknowledgement and resolution.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Final

from pydantic import AfterValidator, Field, model_validator

from table_controller.archive.config import DatabaseConfig
from table_controller.domain.engine.settings import StakesError, check_stakes
from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.topics import ARCHIVE_LEVEL, TopicError, check_level
from table_controller.table.config_file import ConfigSection, read_toml
from table_controller.web.passwords import checked_hash
from table_controller.web.service_config import config_dir, parse_config

MAX_NAME: Final = 40
"""Longest supervisor name (it is the ``by`` on the table's journal and topics)."""


def _table_id(value: str) -> str:
    try:
        check_level(value, "table id")
    except TopicError as exc:
        raise ValueError(str(exc)) from None
    if value == ARCHIVE_LEVEL:
        raise ValueError(f"{ARCHIVE_LEVEL} is the archive's own topic level, not a table")
    return value


def _name(value: str) -> str:
    if not value.strip() or len(value) > MAX_NAME or not value.isprintable():
        raise ValueError(f"a supervisor name is 1-{MAX_NAME} printable characters")
    return value


class HttpConfig(ConfigSection):
    """``[http]``: where the dashboard is served. Localhost unless said otherwise."""

    host: str = Field(default="127.0.0.1", description="Bind address; put TLS in front.")
    port: int = Field(default=8490, ge=0, le=65535, description="0: any free port.")


class StakesConfig(ConfigSection):
    """``[stakes.<table>]`` (or ``[stakes."*"]`` for every table): the table's fixed-limit
    amounts, as in its ``table.toml``. The hand records carry none; a PHH export writes
    these (else what the record's bets show, flagged when that is nothing)."""

    ante: int = Field(default=0, ge=0)
    bring_in: int = Field(ge=0)
    small_bet: int = Field(gt=0)
    big_bet: int = Field(gt=0)

    @model_validator(mode="after")
    def _fixed_limit(self) -> StakesConfig:
        try:
            check_stakes(self.ante, self.bring_in, self.small_bet, self.big_bet)
        except StakesError as exc:
            raise ValueError(str(exc)) from None
        return self


class SupervisorConfig(ConfigSection):
    """``[[supervisors]]``: one floor supervisor who may log in."""

    name: Annotated[str, AfterValidator(_name)]
    password_hash: Annotated[str, AfterValidator(checked_hash)] = Field(
        description="scrypt hash (stud-table floor --hash-password).")


class FloorConfig(ConfigSection):
    """The whole ``floor.toml``."""

    broker: BrokerConfig = BrokerConfig()
    http: HttpConfig = HttpConfig()
    supervisors: list[SupervisorConfig] = Field(min_length=1)
    archive: DatabaseConfig | None = Field(
        default=None,
        description="The archive's database (``stud-table archive`` writes it): search,"
        " shift report and export come from it. None: the hands and alerts this"
        " dashboard saw since it started only.")
    command_timeout_s: float = Field(default=10.0, gt=0, le=60,
                                     description="Wait for a table's reply to a command.")
    hands_kept: int = Field(default=20_000, ge=100, le=1_000_000,
                            description="Finished hands kept in memory without an archive.")
    tables: list[Annotated[str, AfterValidator(_table_id)]] | None = Field(
        default=None,
        description="The pit this instance follows: only these tables' topics are"
        " subscribed to. Unset: every table on the broker (+).")
    stakes: dict[str, StakesConfig] = Field(
        default_factory=dict,
        description="Per table id (or \"*\" for any table): the stakes a PHH export writes.")

    @model_validator(mode="after")
    def _unique(self) -> FloorConfig:
        names = [s.name for s in self.supervisors]
        if len(set(names)) != len(names):
            raise ValueError("supervisors: a name is listed twice")
        if self.tables is not None and not self.tables:
            raise ValueError("tables: an empty pit follows nothing; list its tables, or"
                             " leave tables out to follow every table")
        if self.tables is not None and len(set(self.tables)) != len(self.tables):
            twice = sorted({t for t in self.tables if self.tables.count(t) > 1})
            raise ValueError(f"tables: {', '.join(twice)} listed twice")
        return self

    @property
    def pit(self) -> tuple[str, ...]:
        """The tables followed, in the configured order; empty: every table."""
        return tuple(self.tables or ())

    def stakes_of(self, table: str) -> StakesConfig | None:
        """The configured stakes of ``table`` (its own, else ``"*"``), if any."""
        return self.stakes.get(table) or self.stakes.get("*")

    def supervisor(self, name: str) -> SupervisorConfig | None:
        """The supervisor called ``name``, if any."""
        return next((s for s in self.supervisors if s.name == name), None)


def parse_floor_config(data: dict[str, Any], file: Path | str) -> FloorConfig:
    """Validate parsed TOML ``data``; a problem is a :class:`ConfigError` naming ``file``."""
    cfg = parse_config(FloorConfig, data, file, ("supervisors", "tables"))
    if cfg.archive is None:
        return cfg
    return cfg.model_copy(update={"archive": cfg.archive.resolved(config_dir(file))})


def load_floor_config(path: Path | str) -> FloorConfig:
    """Read and validate ``floor.toml``; raise :class:`ConfigError` (one line)."""
    return parse_floor_config(read_toml(path), path)


__all__ = ["FloorConfig", "HttpConfig", "StakesConfig", "SupervisorConfig",
           "load_floor_config", "parse_floor_config"]
