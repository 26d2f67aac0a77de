"""``stud-table floor``: argument parsing and the process edge (exit codes, signals)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from pathlib import Path
from typing import Any

from table_controller.floor.config import load_floor_config
from table_controller.table.config_file import ConfigError
from table_controller.web.passwords import hash_password

EXIT_BAD_CONFIG = 2


def add_floor_parser(commands: Any) -> None:
    """Add ``floor`` to the ``stud-table`` subcommands."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "floor",
        help="serve the floor dashboard: every table, open alerts, search, shift report",
        description="Follow every table on the broker as the floor user and serve the"
        " supervisors' dashboard. See docs/floor.md.",
    )
    parser.add_argument("--config", type=Path, help="floor.toml (docs/floor.md)")
    parser.add_argument("--hash-password", action="store_true",
                        help="read a supervisor password (twice, not echoed; or one line on"
                        " stdin) and print its hash for [[supervisors]] password_hash")


def run_floor(args: argparse.Namespace) -> int:
    """Run the dashboard, or print a password hash; exit 2 on a bad configuration."""
    if args.hash_password:
        if sys.stdin.isatty():
            first = getpass.getpass("supervisor password: ")
            if first != getpass.getpass("again: "):
                print("stud-table floor: the passwords differ", file=sys.stderr)
                return EXIT_BAD_CONFIG
        else:
            first = sys.stdin.readline().rstrip("\n")
        if len(first) < 8:
            print("stud-table floor: use at least 8 characters", file=sys.stderr)
            return EXIT_BAD_CONFIG
        print(hash_password(first))
        return 0
    if args.config is None:
        print("stud-table floor: --config is required", file=sys.stderr)
        return EXIT_BAD_CONFIG
    try:
        cfg = load_floor_config(args.config)
    except ConfigError as exc:
        print(f"stud-table floor: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    from table_controller.daemon.logging import configure_logging  # noqa: PLC0415
    from table_controller.floor.service import Floor  # noqa: PLC0415 - web stack

    configure_logging("console" if sys.stderr.isatty() else "json")
    service = Floor(cfg)
    try:
        sock = service.bind()  # before the broker: a port in use stops here, in one line
    except OSError as exc:
        print(f"{args.config}: http: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG

    def ready(port: int) -> None:
        # http.port = 0 takes any free port: said, so nobody hunts for the page (issue 24).
        picked = " (http.port = 0: a free port was picked; set one for production)" if (
            cfg.http.port == 0) else ""
        print(f"stud-table floor: serving on http://{cfg.http.host}:{port}/{picked}",
              flush=True)

    try:
        asyncio.run(service.serve(ready, sock))
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        print(f"stud-table floor: {exc}", file=sys.stderr)
        return 1
    return 0
