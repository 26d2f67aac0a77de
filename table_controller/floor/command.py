"""``stud-table floor``: argument parsing and the process edge (exit codes, signals)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from table_controller.floor.config import load_floor_config
from table_controller.web.service_command import (
    EXIT_BAD_CONFIG,
    add_service_parser,
    hash_or_config,
    serve_until_interrupted,
    serving_line,
    start_logging,
)


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
    cfg = hash_or_config("floor", args, load_floor_config, "supervisor")
    if isinstance(cfg, int):
        return cfg
    from table_controller.floor.service import Floor  # noqa: PLC0415 - web stack

    start_logging()
    service = Floor(cfg)
    try:
        sock = service.bind()  # before the broker: a port in use stops here, in one line
    except OSError as exc:
        print(f"{args.config}: http: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG

    def ready(port: int) -> None:
        print(serving_line("floor", cfg.http.host, cfg.http.port, port), flush=True)

    return serve_until_interrupted("floor", service.serve(ready, sock))
