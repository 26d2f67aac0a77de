"""structlog set-up: JSON lines in production, a readable console view in a terminal.

Card secrecy applies to logs too: a log line at info level or above ends up in
journald, log shippers and screenshots. :func:`redact_secrets` replaces the
value of any key that can hold a tag UID or a live down card (``uid``,
``uids``, ``deck_map``, ``down_cards``, ...) with ``"[redacted]"`` at info and
above, in nested dicts too; debug logs (off in production) keep them for
bench work. Redacting instead of raising keeps a careless log call from
taking the daemon down.
"""

from __future__ import annotations

import logging as stdlib_logging
import sys
from collections.abc import MutableMapping
from typing import Any, Final, Literal, TextIO

import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

SECRET_KEYS: Final = frozenset({"uid", "uids", "deck_map", "down_cards", "down", "secure_state"})
"""Keys whose values must not appear in logs at info level and above."""

REDACTED: Final = "[redacted]"

_LEVELS: Final = {
    "debug": stdlib_logging.DEBUG,
    "info": stdlib_logging.INFO,
    "warning": stdlib_logging.WARNING,
    "warn": stdlib_logging.WARNING,
    "error": stdlib_logging.ERROR,
    "critical": stdlib_logging.CRITICAL,
    "exception": stdlib_logging.ERROR,
}


def _redact(value: Any) -> Any:
    if isinstance(value, MutableMapping):
        return {
            k: (REDACTED if k in SECRET_KEYS else _redact(v)) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redact(item) for item in value]
    return value


def redact_secrets(_logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """structlog processor: blank secret keys (:data:`SECRET_KEYS`) at info and above."""
    if _LEVELS.get(method_name, stdlib_logging.INFO) < stdlib_logging.INFO:
        return event_dict
    for key, value in list(event_dict.items()):
        if key in SECRET_KEYS:
            event_dict[key] = REDACTED
        elif isinstance(value, MutableMapping | list | tuple):
            event_dict[key] = _redact(value)
    return event_dict


def shared_processors() -> list[Processor]:
    """Processors common to both output formats (redaction comes before rendering)."""
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        redact_secrets,
        structlog.processors.StackInfoRenderer(),
    ]


def configure_logging(
    format: Literal["json", "console"] = "json",  # mirrors the config key
    level: str = "info",
    stream: TextIO | None = None,
) -> None:
    """Configure structlog globally for the daemon (call once at start)."""
    out = stream if stream is not None else sys.stderr
    renderer: Processor
    if format == "json":
        renderer = structlog.processors.JSONRenderer()
        tail: list[Processor] = [structlog.processors.format_exc_info, renderer]
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=out.isatty())
        tail = [renderer]
    structlog.configure(
        processors=[*shared_processors(), *tail],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level.lower()]),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )
