"""The ``stud-table`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``stud-table`` with all subcommands."""
    parser = argparse.ArgumentParser(
        prog="stud-table", description="RFID Seven Card Stud table controller"
    )
    parser.add_subparsers(dest="command", required=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``stud-table`` console script."""
    args = build_parser().parse_args(argv)
    print(f"unknown command {args.command}", file=sys.stderr)
    return 2
