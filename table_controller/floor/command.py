"""``stud-table floor``: argument parsing and the process edge (exit codes, signals)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from table_controller.floor.config import FloorConfig, load_floor_config
from table_controller.web.service_command import add_service_parser, run_web_service

if TYPE_CHECKING:  # the web stack is loaded when the service starts
    from table_controller.web.service import WebService


def add_floor_parser(commands: Any) -> None:
    """Add ``floor`` to the ``stud-table`` subcommands."""
    add_service_parser(
        commands, "floor",
        summary="serve the floor dashboard: every table, open alerts, search, shift report",
        description="Follow every table on the broker as the floor user and serve the"
        " supervisors' dashboard. See docs/floor.md.",
        config="floor.toml (docs/floor.md)",
        password=("supervisor", "[[supervisors]] password_hash"))


def run_floor(args: argparse.Namespace) -> int:
    """Run the dashboard, or print a password hash; exit 2 on a bad configuration."""

    def make(cfg: FloorConfig) -> WebService:
        from table_controller.floor.service import Floor  # noqa: PLC0415 - web stack

        return Floor(cfg)

    return run_web_service("floor", args, loader=load_floor_config, whose="supervisor",
                           make=make)
