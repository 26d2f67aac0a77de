"""The daemon's configuration file (``table.toml``) as pydantic models.

:func:`load_config` is the only entry point: it reads TOML, validates every
key, resolves relative paths against the config file's own directory (so a
config can sit next to its layout and decks), and turns every problem into one
:class:`ConfigError` whose message is a single line naming the file, the key
and the problem (``stud-table run`` prints it and exits 2).

See ``deploy/table.example.toml`` for every key with its default.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from table_controller.domain.engine.settings import RuleProfile, StakesError, check_stakes
from table_controller.domain.engine.variants import Game
from table_controller.mqtt.topics import TopicError, check_level
from table_controller.table.config_file import ConfigError


def _table_id(value: str) -> str:
    try:
        return check_level(value, "table id")
    except TopicError as exc:
        raise ValueError(str(exc)) from None


def _resolve(value: Path, info: ValidationInfo) -> Path:
    """Resolve a relative path against the config file's directory (from the context)."""
    base = info.context.get("base_dir") if isinstance(info.context, dict) else None
    if not value.is_absolute() and base is not None:
        value = Path(base) / value
    # Normalise "deploy/../hardware" without resolving symlinks (a symlinked
    # /etc/stud-table should keep the names the operator wrote).
    return Path(os.path.normpath(value))


def _existing_file(value: Path, info: ValidationInfo) -> Path:
    value = _resolve(value, info)
    if not value.is_file():
        raise ValueError(f"file not found: {value}")
    return value


ExistingFile = Annotated[Path, AfterValidator(_existing_file)]
"""A path to a file that must exist; relative paths are resolved first."""

ResolvedPath = Annotated[Path, AfterValidator(_resolve)]
"""A path resolved against the config file's directory (need not exist yet)."""


class _Section(BaseModel):
    # Unknown keys are errors: a misspelt "fsnyc" must not silently fall back
    # to a default in a production room.
    model_config = ConfigDict(extra="forbid", frozen=True)


class TableConfig(_Section):
    """``[table]``: which table this is and what hardware it has."""

    id: Annotated[str, AfterValidator(_table_id)] = Field(
        description="Table id; the MQTT topic level stud/v1/<id>/."
    )
    layout: ExistingFile = Field(description="Layout file: readers, antennas, zones.")
    decks: list[ExistingFile] = Field(min_length=1, description="Deck files (tag UID -> card).")
    presence_hold: float = Field(
        default=1.5, gt=0, le=30, description="Seconds a tag must stay away before removal."
    )
    heartbeat_period: float = Field(
        default=2.0, gt=0, le=300, description="Seconds between reader heartbeats expected."
    )
    game: Game = Field(
        default=Game.STUD,
        description="The game dealt (RULES.md \"Variants\"): stud, razz or stud8.",
    )


class StakesConfig(_Section):
    """``[stakes]``: fixed-limit amounts."""

    ante: int = Field(ge=0)
    bring_in: int = Field(ge=0)
    small_bet: int = Field(gt=0)
    big_bet: int = Field(gt=0)

    @model_validator(mode="after")
    def _playable(self) -> StakesConfig:
        # The engine's own check (one place, engine/settings.py): bring_in = small_bet
        # used to pass here and then fail every cmd/hand with internal_error.
        check_stakes(self.ante, self.bring_in, self.small_bet, self.big_bet)
        return self


class TlsConfig(_Section):
    """``[broker.tls]``: TLS to the broker (absent = plain TCP)."""

    ca_file: ResolvedPath | None = Field(default=None, description="CA bundle; system if unset.")
    cert_file: ResolvedPath | None = Field(default=None, description="Client certificate.")
    key_file: ResolvedPath | None = Field(default=None, description="Client private key.")
    insecure: bool = Field(default=False, description="Skip host name check (testing only).")


class BrokerConfig(_Section):
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


class JournalConfig(_Section):
    """``[journal]``: where input events are journaled, and how durably."""

    directory: ResolvedPath = Field(description="Directory of the journal and sequence files.")
    fsync: Literal["always", "batch", "never"] = "always"
    max_bytes: int = Field(
        default=64 * 1024 * 1024, ge=4096, description="Rotate at a hand boundary past this."
    )


class LogConfig(_Section):
    """``[log]``: structlog output."""

    format: Literal["json", "console"] = "json"
    level: Literal["debug", "info", "warning", "error"] = "info"

    @field_validator("level", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value


class DaemonConfig(_Section):
    """The whole ``table.toml``."""

    table: TableConfig
    rules: RuleProfile = Field(
        default_factory=RuleProfile,
        description="``[rules]``: the engine's own rule profile (RULES.md settings).",
    )
    stakes: StakesConfig
    broker: BrokerConfig = BrokerConfig()
    journal: JournalConfig
    log: LogConfig = LogConfig()


def _key(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + item)
    return "".join(parts) or "(top level)"


def _problem(error: Any) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown key"
    if error["type"] == "missing":
        return "missing required key"
    message = str(error["msg"])
    return message.removeprefix("Value error, ")


def parse_config(
    data: dict[str, Any], file: Path | str, base_dir: Path | None = None
) -> DaemonConfig:
    """Validate already-parsed TOML ``data``; errors name ``file`` (see :func:`load_config`)."""
    base = base_dir if base_dir is not None else Path(file).resolve().parent
    try:
        return DaemonConfig.model_validate(data, context={"base_dir": base})
    except ValidationError as exc:
        first = exc.errors()[0]
        key = _key(first["loc"])
        cause = first.get("ctx", {}).get("error")
        if isinstance(cause, StakesError) and first["loc"][-1:] != (cause.key,):
            key = f"{key}.{cause.key}"  # a cross-field check: name the amount
        raise ConfigError(file, key, _problem(first)) from None


def load_config(path: Path | str) -> DaemonConfig:
    """Read and validate ``path``; raise :class:`ConfigError` (one line) on any problem."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise ConfigError(file, "", f"cannot read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(file, "", "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(file, "", f"TOML syntax error: {exc}") from None
    except RecursionError:  # arrays nested thousands deep: tomllib recurses
        raise ConfigError(file, "", "TOML syntax error: arrays nested too deeply") from None
    except ValueError as exc:  # an int past Python's 4,300-digit limit
        raise ConfigError(file, "", f"TOML syntax error: {str(exc).split(';')[0]}") from None
    return parse_config(data, file, file.resolve().parent)
