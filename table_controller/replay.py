"""Replay a table script or a journal through the engine (``stud-table replay``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from table_controller.engine.dealing import HandState, replay_events
from table_controller.engine.report import replay_report
from table_controller.script import Script, ScriptError, parse_script


def load_script(path: Path) -> Script:
    """Read and parse a table script or journal file. Raises :class:`ScriptError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ScriptError(text_line(path, exc.start), "not UTF-8 text", str(path)) from None
    return parse_script(text.splitlines(), source=str(path))


def text_line(path: Path, offset: int) -> int:
    """The 1-based line number holding byte ``offset`` of ``path``."""
    return path.read_bytes()[:offset].count(b"\n") + 1


def replay_hands(script: Script) -> list[HandState]:
    """Every hand of ``script``, played through a fresh engine."""
    return replay_events((event for _, event in script.events), script.settings)


def replay_file(path: Path) -> dict[str, Any]:
    """The CONFORMANCE.md report for the script or journal at ``path``."""
    return replay_report(replay_hands(load_script(path)))
