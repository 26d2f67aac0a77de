"""What the services' configuration files share: topic-level keys, parsing, paths.

``broadcast.toml``, ``floor.toml`` and ``archive.toml`` (issue 20) are read the same
way: pydantic sections (:class:`ConfigSection`: unknown keys are errors), one
:class:`ConfigError` line per problem, ``file: key: problem``, where a check across
keys (a table listed twice) names the key it is about, and relative paths taken
from the config file's directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

from pydantic import AfterValidator, BaseModel, ValidationError

from table_controller.mqtt.topics import TopicError, check_level
from table_controller.table.config_file import ConfigError, error_from_validation

ModelT = TypeVar("ModelT", bound=BaseModel)


def topic_level(what: str) -> AfterValidator:
    """A validator of a key that becomes one MQTT topic level (a table id, a name):
    the topic rules of :func:`check_level`, its words naming ``what``."""
    def check(value: str) -> str:
        try:
            return check_level(value, what)
        except TopicError as exc:
            raise ValueError(str(exc)) from None
    return AfterValidator(check)


def parse_config(model: type[ModelT], data: dict[str, Any], file: Path | str,
                 cross_keys: tuple[str, ...]) -> ModelT:
    """``data`` validated as ``model``; the first problem a :class:`ConfigError`.

    A model validator's message that starts with one of ``cross_keys`` and ``": "``
    (``"tables: a table is listed twice"``) becomes that key's error. The validation
    context carries ``base_dir``, the config file's directory.
    """
    try:
        return model.model_validate(data, context={"base_dir": config_dir(file)})
    except ValidationError as exc:
        err = error_from_validation(file, exc)
        head, sep, rest = err.problem.partition(": ")
        if sep and not err.key and head.startswith(cross_keys):
            raise ConfigError(file, head, rest) from None
        raise err from None


def config_dir(file: Path | str) -> Path:
    """The directory relative paths of ``file`` are taken from."""
    return Path(file).resolve().parent


def relative_to_config(value: Path, base: Path) -> Path:
    """``value`` taken from ``base`` when relative, normalised (symlinks kept)."""
    return value if value.is_absolute() else Path(os.path.normpath(base / value))


__all__ = ["config_dir", "parse_config", "relative_to_config", "topic_level"]
