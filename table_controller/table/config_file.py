"""Reading hardware configuration files (layouts, decks) and reporting their errors.

Every problem in a configuration file surfaces as one :class:`ConfigError` whose
message is a single line naming the file, the key and the problem, e.g.
``hardware/layouts/table-8.toml: readers[2].antennas.17: port 17 is outside 0..15``.
An operator fixing a table at the venue should never need a traceback.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, ValidationInfo


class ConfigError(ValueError):
    """A configuration file is missing, unreadable or invalid.

    ``path`` is the file, ``key`` the dotted key concerned ("" for the whole
    file) and ``problem`` what is wrong; ``str()`` joins the three on one line.
    """

    def __init__(self, path: Path | str, key: str, problem: str) -> None:
        self.path = str(path)
        self.file = self.path  # the daemon config's ConfigError calls it ``file``
        self.key = key
        self.problem = " ".join(problem.split())  # one line, whatever the parser said
        where = f"{self.path}: {key}" if key else self.path
        super().__init__(f"{where}: {problem}")


class KeyedValueError(ValueError):
    """Raised inside model validators for a problem at ``key`` (relative to the model).

    Cross-field checks run in pydantic ``model_validator``s, whose errors pydantic
    locates at the model itself; carrying the key lets :func:`error_from_validation`
    still name the exact key in the file.
    """

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(problem)
        self.key = key


def read_toml(path: Path | str) -> dict[str, Any]:
    """Parse the TOML file at ``path``; raises :class:`ConfigError` on any failure."""
    file = Path(path)
    try:
        with file.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(file, "", "file not found") from None
    except IsADirectoryError:
        raise ConfigError(file, "", "is a directory, not a file") from None
    except OSError as err:
        raise ConfigError(file, "", f"cannot read file: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise ConfigError(file, "", f"not UTF-8 text (byte {err.start})") from None
    except tomllib.TOMLDecodeError as err:
        # tomllib's message already carries "(at line N, column M)"; duplicate
        # keys (the same port or card twice in one table) are reported here.
        raise ConfigError(file, "", f"not valid TOML: {err}") from None
    except RecursionError:  # arrays nested thousands deep: tomllib recurses
        raise ConfigError(file, "", "not valid TOML: arrays nested too deeply") from None
    except ValueError as err:  # an int past Python's 4,300-digit limit
        raise ConfigError(file, "", f"not valid TOML: {str(err).split(';')[0]}") from None


def key_path(location: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as a key path: ``readers[2].antennas.17``."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part == "[key]":
            # pydantic marks "the dict key itself was invalid"; the key is
            # already the previous part of the path.
            continue
        else:
            text += f".{part}" if text else str(part)
    return text


def error_from_validation(path: Path | str, err: ValidationError) -> ConfigError:
    """Turn the first pydantic error into a one-line :class:`ConfigError`.

    Only the first error is kept: the operator fixes one line and reloads, and a
    single line stays readable in a log.
    """
    first = err.errors(include_url=False)[0]
    key = key_path(tuple(first["loc"]))
    message = str(first["msg"])
    # Our own validators raise ValueError; pydantic prefixes their text.
    message = message.removeprefix("Value error, ")
    cause = first.get("ctx", {}).get("error")
    if isinstance(cause, KeyedValueError):
        message = str(cause)
        if cause.key:
            key = f"{key}.{cause.key}" if key and not cause.key.startswith("[") else key + cause.key
    elif first["type"] == "extra_forbidden":
        message = "unknown key"
    elif first["type"] == "missing":
        message = "required key is missing"
    return ConfigError(path, key, message)


def resolve_path(value: Path, info: ValidationInfo) -> Path:
    """Resolve a relative path against the config file's directory (from the context)."""
    base = info.context.get("base_dir") if isinstance(info.context, dict) else None
    if not value.is_absolute() and base is not None:
        value = Path(base) / value
    # Normalise "deploy/../hardware" without resolving symlinks (a symlinked
    # /etc/stud-table should keep the names the operator wrote).
    return Path(os.path.normpath(value))


def _existing_file(value: Path, info: ValidationInfo) -> Path:
    value = resolve_path(value, info)
    if value.is_dir():  # "file not found" would send the user looking for a missing file
        raise ValueError(f"is a directory, not a file: {value}")
    if not value.is_file():
        raise ValueError(f"file not found: {value}" if not value.exists()
                         else f"not a regular file: {value}")
    return value


ExistingFile = Annotated[Path, AfterValidator(_existing_file)]
"""A path to a file that must exist; relative paths are resolved first."""

ResolvedPath = Annotated[Path, AfterValidator(resolve_path)]
"""A path resolved against the config file's directory (need not exist yet)."""


class ConfigSection(BaseModel):
    """A section of a configuration file: unknown keys are errors, values frozen."""

    # Unknown keys are errors: a misspelt "fsnyc" must not silently fall back
    # to a default in a production room.
    model_config = ConfigDict(extra="forbid", frozen=True)
