"""``stud-table broadcast``: argument parsing and the process edge (exit codes, signals)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sqlite3
import sys
from pathlib import Path
from typing import Any

from table_controller.broadcast.config import load_broadcast_config
from table_controller.table.config_file import ConfigError
from table_controller.web.passwords import hash_password

EXIT_BAD_CONFIG = 2
EXIT_NEEDS_PERSON = 3
"""The backlog file is damaged or not a SQLite file: not restarted blindly."""


def add_broadcast_parser(commands: Any) -> None:
    """Add ``broadcast`` to the ``stud-table`` subcommands."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "broadcast",
        help="serve delayed overlay, venue and producer pages from tables' feeds",
        description="Follow tables' secure feeds as the production user and serve the"
        " delayed overlay, the venue page (public) and the producer page (locked)."
        " See docs/broadcast.md.",
    )
    parser.add_argument("--config", type=Path, help="broadcast.toml (docs/broadcast.md)")
    parser.add_argument("--hash-password", action="store_true",
                        help="read a producer password (twice, not echoed; or one line on"
                        " stdin) and print its hash for [producer] password_hash")


def run_broadcast(args: argparse.Namespace) -> int:
    """Run the service, or print a password hash; exit 2 on a bad configuration."""
    if args.hash_password:
        if sys.stdin.isatty():
            first = getpass.getpass("producer password: ")
            if first != getpass.getpass("again: "):
                print("stud-table broadcast: the passwords differ", file=sys.stderr)
                return EXIT_BAD_CONFIG
        else:
            first = sys.stdin.readline().rstrip("\n")
        if len(first) < 8:
            print("stud-table broadcast: use at least 8 characters", file=sys.stderr)
            return EXIT_BAD_CONFIG
        print(hash_password(first))
        return 0
    if args.config is None:
        print("stud-table broadcast: --config is required", file=sys.stderr)
        return EXIT_BAD_CONFIG
    try:
        cfg = load_broadcast_config(args.config)
    except ConfigError as exc:
        print(f"stud-table broadcast: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    from table_controller.broadcast.service import Broadcast  # noqa: PLC0415 - web stack
    from table_controller.broadcast.store import StoreInUseError  # noqa: PLC0415
    from table_controller.daemon.logging import configure_logging  # noqa: PLC0415

    configure_logging("console" if sys.stderr.isatty() else "json")
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
        # http.port = 0 takes any free port: said, so nobody hunts for the page (issue 24).
        picked = " (http.port = 0: a free port was picked; set one for production)" if (
            cfg.http.port == 0) else ""
        print(f"stud-table broadcast: serving on http://{cfg.http.host}:{port}/{picked}",
              flush=True)

    try:
        asyncio.run(service.serve(ready, sock))
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        print(f"stud-table broadcast: {exc}", file=sys.stderr)
        return 1
    return 0
