"""The daemon's configuration file (``table.toml``) as pydantic models.

:func:`load_config` is the only entry point: it reads TOML, validates every
key, resolves relative paths against the config file's own directory (so a
config can sit next to its layout and decks), and turns every problem into one
:class:`ConfigError` whose message is a single line naming the file, the key
and the problem (``stud-table run`` prints it and exits 2).

See ``deploy/table.example.toml`` for every key with its default.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from table_controller.domain.engine.settings import RuleProfile, StakesError, check_stakes
from table_controller.domain.engine.variants import Game
from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.topics import TopicError, check_level
from table_controller.table.config_file import (
    ConfigError,
    ConfigSection,
    ExistingFile,
    ResolvedPath,
)


def _table_id(value: str) -> str:
    try:
        return check_level(value, "table id")
    except TopicError as exc:
        raise ValueError(str(exc)) from None


class TableConfig(ConfigSection):
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
        description="The game dealt (docs/rules.md \"Variants\"): stud, razz or stud8.",
    )
    unread_stacks: bool = Field(
        default=False,
        description="Antennas may miss a stacked card, an up card in a row or a dead tag"
        " altogether (ISO 14443 boards): infer an unread card instead of alerting"
        " out_of_order (docs/engine.md \"Reads that fail\").",
    )


class StakesConfig(ConfigSection):
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


class JournalConfig(ConfigSection):
    """``[journal]``: where input events are journaled, and how durably."""

    directory: ResolvedPath = Field(description="Directory of the journal and sequence files.")
    fsync: Literal["always", "batch", "never"] = "always"
    max_bytes: int = Field(
        default=64 * 1024 * 1024, ge=4096, description="Rotate at a hand boundary past this."
    )


class LogConfig(ConfigSection):
    """``[log]``: structlog output."""

    format: Literal["json", "console"] = "json"
    level: Literal["debug", "info", "warning", "error"] = "info"

    @field_validator("level", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value


class DaemonConfig(ConfigSection):
    """The whole ``table.toml``."""

    table: TableConfig
    rules: RuleProfile = Field(
        default_factory=RuleProfile,
        description="``[rules]``: the engine's own rule profile (docs/rules.md settings).",
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
