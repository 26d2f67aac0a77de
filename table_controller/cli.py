"""The ``stud-table`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from table_controller.config import load_config
from table_controller.config_file import ConfigError
from table_controller.console_client import add_console_parser, run_console
from table_controller.daemon.runner import EXIT_NEEDS_PERSON, Daemon, StartRefusedError
from table_controller.demo import run_demo
from table_controller.handhistory.commands import add_phh_parser, run_phh
from table_controller.journal import JournalError
from table_controller.logging import configure_logging
from table_controller.replay import replay_file
from table_controller.republish import add_mqtt_arguments, run_republish
from table_controller.script import ScriptError
from table_controller.simulation.kinds import CONSOLE_KINDS, DEAL_KINDS, KINDS, READER_KINDS
from table_controller.simulation.live import LiveError
from table_controller.simulation.plan import RateError, parse_rates
from table_controller.simulation.progress import ProgressBar
from table_controller.simulation.report import render as render_report
from table_controller.simulation.runner import simulate

EXIT_OK = 0
EXIT_FAILURE = 1
"""The daemon could not run (e.g. a damaged journal it refuses to append to)."""
EXIT_BAD_INPUT = 2
"""Malformed script or invalid configuration: one line on stderr says what and where."""


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``stud-table`` with all subcommands."""
    parser = argparse.ArgumentParser(
        prog="stud-table", description="RFID Seven Card Stud table controller"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser(
        "replay",
        help="replay a table script or journal through the rules engine",
        description="Replay a table script (CONFORMANCE.md) or a journal and report the hands.",
    )
    replay.add_argument("script", type=Path, help="table script (JSON Lines) or journal")
    replay.add_argument(
        "--json", action="store_true", help="print the CONFORMANCE.md JSON report on stdout"
    )
    add_mqtt_arguments(replay)
    run = commands.add_parser(
        "run",
        help="run the table controller daemon",
        description="Read the table's RFID readers, track the hand and publish it over MQTT.",
    )
    run.add_argument("--config", type=Path, required=True, help="table.toml (see README)")
    demo = commands.add_parser(
        "demo",
        help="a simulated 8-seat table dealt live through the daemon and a local broker",
        description="Start a private Mosquitto, emulated readers and the daemon, and deal"
        " random hands; show the table live. Ctrl-C stops.",
    )
    demo.add_argument("--hands", type=_positive_int, default=None,
                      help="stop after N hands (default: deal until Ctrl-C)")
    demo.add_argument("--speed", type=_positive_float, default=1.0,
                      help="deal N times faster than the 0.4-0.6 s per card of a dealer")
    demo.add_argument("--seed", type=int, default=None, help="seed of the random hands")
    simulate = commands.add_parser(
        "simulate",
        help="deal simulated hands with injected dealing errors and report what was caught",
        description="A virtual dealer deals random hands, injecting at most one error per"
        " hand at the given rates, and prints the detection report (recall, false alerts)."
        " Kinds: " + ", ".join(KINDS) + ".",
    )
    simulate.add_argument("--hands", type=_positive_int, default=1000, help="hands to deal")
    simulate.add_argument("--seed", type=int, default=1, help="seed of the hands (default 1)")
    simulate.add_argument(
        "--rate", action="append", default=None, metavar="[KIND=]RATE",
        help="chance per hand of an error: RATE for every kind of the mode, or KIND=RATE;"
        " repeatable (default 0.05 for every kind)",
    )
    simulate.add_argument("--mode", choices=("fast", "daemon"), default="fast",
                          help="fast: straight into the engine; daemon: emulated readers,"
                          " the real daemon and a private mosquitto")
    simulate.add_argument("--speed", type=_positive_float, default=1.0,
                          help="daemon mode: deal N times faster than a real dealer")
    simulate.add_argument("--betting", action="store_true",
                          help="fast mode: the players bet through the dealer's console"
                          " (adds the console kinds: " + ", ".join(CONSOLE_KINDS) + ")")
    simulate.add_argument("--json", action="store_true", help="print the report as JSON")
    add_phh_parser(commands)
    add_console_parser(commands)
    return parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value


def _replay(args: argparse.Namespace) -> int:
    if args.mqtt is not None:
        return run_republish(args)
    try:
        report = replay_file(args.script)
    except OSError as exc:
        print(f"stud-table replay: cannot read {args.script}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ScriptError as exc:
        print(f"stud-table replay: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(_text_report(report))
    return EXIT_OK


def _text_report(report: dict[str, object]) -> str:
    lines: list[str] = []
    hands = report["hands"]
    assert isinstance(hands, list)
    for number, hand in enumerate(hands, start=1):
        lines.append(f"hand {number}: winners {hand['winners'] or '-'}, "
                     f"bring-in seat {hand['bring_in']}")
        for seat, info in hand["players"].items():
            lines.append(
                f"  seat {seat:>2} {info['status']:<7} down {' '.join(info['down']) or '-':<12}"
                f" up {' '.join(info['up']) or '-'}"
            )
        for alert in hand["alerts"]:
            seat = f"seat {alert['seat']}" if alert["seat"] is not None else "table"
            lines.append(f"  ! {alert['code']} ({seat}, street {alert['street']}): "
                         f"{alert['message']}")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
        configure_logging(config.log.format, config.log.level)
        daemon = Daemon(config)
    except ConfigError as exc:
        print(f"stud-table run: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except JournalError as exc:
        print(f"stud-table run: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except StartRefusedError as exc:
        # Another daemon holds the table, or its files need a person (exit 3: the
        # service unit does not restart on it).
        print(f"stud-table run: {exc}", file=sys.stderr)
        return EXIT_NEEDS_PERSON
    return daemon.run()


def _demo(args: argparse.Namespace) -> int:
    return run_demo(hands=args.hands, speed=args.speed, seed=args.seed)


def _simulate(args: argparse.Namespace) -> int:
    kinds = DEAL_KINDS + READER_KINDS if args.mode == "daemon" else DEAL_KINDS
    if args.betting:
        kinds += CONSOLE_KINDS
    try:
        if args.betting and args.mode != "fast":
            raise RateError("--betting runs in --mode fast only")
        rates = parse_rates(args.rate or ["0.05"], kinds, betting=args.betting)
    except RateError as exc:
        print(f"stud-table simulate: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    configure_logging("console", "warning")  # the report is the output, not info logs
    bar = ProgressBar(args.hands, sys.stderr)
    try:
        report = simulate(args.hands, args.seed, rates, args.mode, speed=args.speed,
                          progress=bar.update, betting=args.betting)
    except LiveError as exc:
        print(f"stud-table simulate: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    finally:
        bar.close()
    if args.json:
        json.dump(report.as_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(render_report(report))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``stud-table`` console script."""
    args = build_parser().parse_args(argv)
    if args.command == "replay":
        return _replay(args)
    if args.command == "run":
        return _run(args)
    if args.command == "demo":
        return _demo(args)
    if args.command == "phh":
        return run_phh(args)
    if args.command == "simulate":
        return _simulate(args)
    if args.command == "console":
        return run_console(args)
    return EXIT_BAD_INPUT  # pragma: no cover - argparse rejects unknown commands
