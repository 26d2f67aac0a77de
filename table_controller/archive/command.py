"""``stud-table archive``: argument parsing and the process edge (exit codes, signals)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType
from typing import Any

from table_controller.web.service_command import (
    EXIT_BAD_CONFIG,
    EXIT_NEEDS_PERSON,  # the database holds a schema this program does not know
    add_service_parser,
    load_config,
    start_logging,
)


def add_archive_parser(commands: Any) -> None:
    """Add ``archive`` to the ``stud-table`` subcommands."""
    add_service_parser(
        commands, "archive",
        summary="store every finished hand and alert of many tables (SQLite or PostgreSQL)",
        description="Follow tables' hands, alerts and alert changes over MQTT and store"
        " them in the hand archive: an SQLite file, or PostgreSQL by DSN. Several"
        " instances can share the load (MQTT 5 shared subscriptions). See docs/archive.md.",
        config="archive.toml (deploy/archive.example.toml)")


def run_archive(args: argparse.Namespace) -> int:
    """Run the service until SIGTERM / SIGINT; exit 2 on a bad configuration."""
    # Imported here: building the ``stud-table`` parser must not load SQLAlchemy.
    from table_controller.archive.config import load_archive_config  # noqa: PLC0415

    cfg = load_config("archive", args.config, load_archive_config)
    if isinstance(cfg, int):
        return cfg
    path = cfg.database.path
    if path is not None and not path.parent.is_dir():
        # Not an outage to wait out: the service would retry for ever.
        print(f"stud-table archive: {args.config}: database.path: directory {path.parent}"
              " does not exist", file=sys.stderr)
        return EXIT_BAD_CONFIG
    from table_controller.archive.service import ArchiveService  # noqa: PLC0415 - MQTT, DB

    start_logging()
    try:
        service = ArchiveService(cfg)
    except (ValueError, ImportError) as exc:  # a URL SQLAlchemy cannot use
        print(f"stud-table archive: {args.config}: database: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    service.start()
    print(f"stud-table archive: {cfg.instance} archiving into {service.store.shown_url}",
          flush=True)
    while not stop.wait(0.5):
        if service.fatal is not None:
            break
    service.stop()
    if service.fatal is not None:
        print(f"stud-table archive: {service.fatal}", file=sys.stderr)
        return EXIT_NEEDS_PERSON
    return 0
