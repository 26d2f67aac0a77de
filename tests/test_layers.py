"""The package tree's layers (issue 10): each layer imports only itself and the layers below.

The order, lowest first: ``firmware_bridge`` (reader wire protocol) and ``domain``
(cards, zones, events, hands, variants, the rules engine, equity: pure) < ``table``
(layout, decks, presence) < ``records`` (scripts, journal, replay) < ``mqtt``
(topics, payloads, publisher) < ``daemon`` < ``simulation`` < ``web`` (the services'
kit: serve loop, sessions, subcommand edge, passwords) < what the services share
(``archive``, ``handhistory``) < the services beside the daemon (``demo``,
``broadcast``, ``floor``) < ``tools`` (the command line) < ``testing`` (rigs for tests
and benches). An import upwards, or between two programs, is a cycle
waiting to happen; this test names it. The pure layer also imports no I/O library.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

RANK: dict[str, int] = {
    "firmware_bridge": 0,
    "domain": 0,
    "table": 1,
    "records": 2,
    "mqtt": 3,
    "daemon": 4,
    "simulation": 5,
    "web": 6,
    "archive": 7,
    "handhistory": 7,
    "demo": 8,
    "broadcast": 8,
    "floor": 8,
    "tools": 9,
    "testing": 10,
}
"""Layer of each top-level package. What services share sits below them: ``web``, the
kit all three services use (the archive its subcommand edge; broadcast and floor the
serve loop, sessions, passwords and the inbound message gate), then ``archive`` the
floor searches and ``handhistory`` it exports with; ``tools`` (the CLI) may start
every program."""

PURE_FORBIDDEN = ("paho", "serial", "structlog", "socket", "subprocess", "threading", "sqlite3",
                  "sqlalchemy", "starlette", "uvicorn", "time", "os", "pathlib", "shutil")
"""Modules the pure domain must not import: I/O, threads and clocks live at the edges."""


def layer_of(module: str) -> str | None:
    """The layer package of a dotted module name of ours, or None for a third-party one."""
    parts = module.split(".")
    if parts[0] == "firmware_bridge":
        return "firmware_bridge"
    if parts[0] == "table_controller" and len(parts) > 1:
        return parts[1] if parts[1] in RANK else None
    return None


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every absolute import in ``path``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
            if node.module == "table_controller":
                found += [(node.lineno, f"table_controller.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return found


def sources() -> list[Path]:
    """Every module of the two packages, but the package roots' own files."""
    return sorted(p for pkg in ("firmware_bridge", "table_controller")
                  for p in (ROOT / pkg).rglob("*.py"))


def test_every_table_controller_module_is_in_a_layer() -> None:
    """No module is left beside the layers (only the package's own __init__/__main__)."""
    loose = [p.name for p in (ROOT / "table_controller").glob("*.py")
             if p.name not in ("__init__.py", "__main__.py")]
    assert loose == []
    packages = {p.name for p in (ROOT / "table_controller").iterdir()
                if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(RANK), packages - set(RANK)


def test_no_import_goes_up_a_layer() -> None:
    """Each import stays in its layer or goes down; programs don't import each other."""
    wrong: list[str] = []
    for path in sources():
        here = layer_of(".".join(path.relative_to(ROOT).with_suffix("").parts))
        if here is None:
            continue
        for line, module in imports(path):
            there = layer_of(module)
            if there is None or there == here:
                continue
            if RANK[there] >= RANK[here]:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {here} imports {module} ({there})")
    assert wrong == [], "\n".join(wrong)


@pytest.mark.parametrize("package", ["table_controller/domain", "firmware_bridge"])
def test_pure_layer_does_no_io(package: str) -> None:
    """The pure core imports no I/O, thread or clock module (the link edge excepted)."""
    wrong: list[str] = []
    for path in sorted((ROOT / package).rglob("*.py")):
        if path.name in ("link.py", "emulator.py"):  # the serial edge and the pty emulator
            continue
        for line, module in imports(path):
            if module.split(".")[0] in PURE_FORBIDDEN:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: imports {module}")
    assert wrong == [], "\n".join(wrong)
