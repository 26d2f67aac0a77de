"""``stud-table broadcast``: argument parsing and the process edge (exit codes, signals)."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from typing import Any

from table_controller.broadcast.config import load_broadcast_config
from table_controller.web.service_command import (
    EXIT_BAD_CONFIG,
    EXIT_NEEDS_PERSON,  # the backlog file is damaged or not a SQLite file
    add_service_parser,
    hash_or_config,
    serve_until_interrupted,
    serving_line,
    start_logging,
)


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
    cfg = hash_or_config("broadcast", args, load_broadcast_config, "producer")
    if isinstance(cfg, int):
        return cfg
    from table_controller.broadcast.service import Broadcast  # noqa: PLC0415 - web stack
    from table_controller.broadcast.store import StoreInUseError  # noqa: PLC0415

    start_logging()
    try:
        service = Broadcast(cfg)
    except StoreInUseError as exc:  # a second instance: it would knock the first off
        print(f"{args.config}: state_file: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    except OSError as exc:
        print(f"stud-table broadcast: {args.config}: state_file: cannot open {cfg.state_file}:"
              f" {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    except sqlite3.Error as exc:  # damaged or not ours: a person must look at it
        print(f"stud-table broadcast: {args.config}: state_file: {cfg.state_file} cannot be"
              f" used: {exc}", file=sys.stderr)
        return EXIT_NEEDS_PERSON
    try:
        # Bound before the broker is joined: a port in use stops here, in one line.
        sock = service.bind()
    except OSError as exc:
        service.store.close()
        print(f"{args.config}: http: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG

    def ready(port: int) -> None:
        for line in service.delay_lines():  # which delay is in force, and why
            print(f"stud-table broadcast: {line}", flush=True)
        print(serving_line("broadcast", cfg.http.host, cfg.http.port, port), flush=True)

    return serve_until_interrupted("broadcast", service.serve(ready, sock))
