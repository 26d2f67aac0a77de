"""``stud-table broadcast``: argument parsing and the process edge (exit codes, signals)."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from typing import TYPE_CHECKING, Any

from table_controller.broadcast.config import BroadcastConfig, load_broadcast_config
from table_controller.web.service_command import (
    EXIT_BAD_CONFIG,
    EXIT_NEEDS_PERSON,  # the backlog file is damaged or not a SQLite file
    add_service_parser,
    run_web_service,
)

if TYPE_CHECKING:  # the web stack is loaded when the service starts
    from table_controller.web.service import WebService


def add_broadcast_parser(commands: Any) -> None:
    """Add ``broadcast`` to the ``stud-table`` subcommands."""
    add_service_parser(
        commands, "broadcast",
        summary="serve delayed overlay, venue and producer pages from tables' feeds",
        description="Follow tables' secure feeds as the production user and serve the"
        " delayed overlay, the venue page (public) and the producer page (locked)."
        " See docs/broadcast.md.",
        config="broadcast.toml (docs/broadcast.md)",
        password=("producer", "[producer] password_hash"))


def run_broadcast(args: argparse.Namespace) -> int:
    """Run the service, or print a password hash; exit 2 on a bad configuration."""

    def make(cfg: BroadcastConfig) -> WebService | int:
        from table_controller.broadcast.service import Broadcast  # noqa: PLC0415 - web stack
        from table_controller.broadcast.store import StoreInUseError  # noqa: PLC0415

        try:
            return Broadcast(cfg)
        except StoreInUseError as exc:  # a second instance: it would knock the first off
            print(f"{args.config}: state_file: {exc}", file=sys.stderr)
            return EXIT_BAD_CONFIG
        except OSError as exc:
            print(f"stud-table broadcast: {args.config}: state_file: cannot open"
                  f" {cfg.state_file}: {exc.strerror}", file=sys.stderr)
            return EXIT_BAD_CONFIG
        except sqlite3.Error as exc:  # damaged or not ours: a person must look at it
            print(f"stud-table broadcast: {args.config}: state_file: {cfg.state_file} cannot"
                  f" be used: {exc}", file=sys.stderr)
            return EXIT_NEEDS_PERSON

    def delays(service: WebService) -> list[str]:
        from table_controller.broadcast.service import Broadcast  # noqa: PLC0415

        assert isinstance(service, Broadcast)
        return service.delay_lines()  # which delay is in force, and why

    return run_web_service("broadcast", args, loader=load_broadcast_config, whose="producer",
                           make=make, start_lines=delays)
