"""The ``stud-table`` command line."""

# ruff: noqa: PLC0415 - each command imports its modules when it runs: `stud-table
# replay` (the conformance door, started once per script) must not pay for the daemon,
# MQTT, simulator and PHH imports (issue 9).

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from table_controller.records.replay import replay_path
from table_controller.records.script import ScriptError

EXIT_OK = 0
EXIT_FAILURE = 1
"""The daemon could not run (e.g. a damaged journal it refuses to append to)."""
EXIT_BAD_INPUT = 2
"""Malformed script or invalid configuration: one line on stderr says what and where."""
EXIT_INTERRUPTED = 128 + signal.SIGINT
"""Ctrl-C: what a shell shows for a program SIGINT stopped (after a partial report)."""
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
"""Our stdout was closed by its reader: the status a shell shows for `cat` there."""


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``stud-table`` with all subcommands."""
    from table_controller.archive.command import add_archive_parser
    from table_controller.broadcast.command import add_broadcast_parser
    from table_controller.floor.command import add_floor_parser
    from table_controller.handhistory.commands import add_phh_parser
    from table_controller.simulation.kinds import CONSOLE_KINDS, KINDS
    from table_controller.tools.console_client import add_console_parser
    from table_controller.tools.deck_command import add_deck_parser
    from table_controller.tools.emulate import add_emulate_parser
    from table_controller.tools.equity_command import add_equity_parser
    from table_controller.tools.readers_view import add_readers_parser
    from table_controller.tools.republish import add_mqtt_arguments

    parser = argparse.ArgumentParser(
        prog="stud-table", description="RFID Seven Card Stud table controller"
    )
    parser.add_argument("--version", action="version", version=f"stud-table {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    replay = _add_replay_parser(commands)
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
    demo.add_argument("--keep", action="store_true",
                      help="keep the work directory (the daemon's journal and log) on exit")
    demo.add_argument("--broadcast", action="store_true",
                      help="also run the broadcast service and print its overlay, venue and"
                      " producer URLs with a one-time producer password (docs/broadcast.md)")
    _add_rf_arguments(demo)
    demo.add_argument("--delay", type=_non_negative_float, default=None,
                      help="seconds the --broadcast overlay runs behind the table (default 10)")
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
    simulate.add_argument("--game", choices=("stud", "razz", "stud8"), default="stud",
                          help="the game dealt (RULES.md \"Variants\"; default stud;"
                          " --mode fast only)")
    _add_rf_arguments(simulate)
    simulate.add_argument("--json", action="store_true", help="print the report as JSON")
    simulate.add_argument(
        "--hand-log", type=Path, default=None, metavar="FILE",
        help="also write every hand with each street's equities and hand readings to FILE"
        " (it shows every hole card: production room only)",
    )
    add_phh_parser(commands)
    add_console_parser(commands)
    add_equity_parser(commands)
    add_broadcast_parser(commands)
    add_deck_parser(commands)
    add_emulate_parser(commands)
    add_floor_parser(commands)
    add_archive_parser(commands)
    add_readers_parser(commands)
    return parser


def _add_rf_arguments(parser: argparse.ArgumentParser) -> None:
    """``--rf PROFILE`` and ``--rf-param NAME=VALUE`` (docs/presence.md, "The RF channel")."""
    from firmware_bridge.rf_channel import PROFILES

    parser.add_argument("--rf", choices=tuple(PROFILES), default=None, metavar="PROFILE",
                        help="read the table through a realistic RF channel: "
                        + ", ".join(PROFILES) + " (default: every tag read, always)")
    parser.add_argument("--rf-param", action="append", default=[], metavar="NAME=VALUE",
                        help="override one channel parameter, e.g. muck_depth=0,"
                        " stack_loss=0.15, cross_read=0.05 (repeatable; needs --rf)")


def rf_from_args(args: argparse.Namespace, command: str) -> tuple[Any, int | None]:
    """The channel parameters of ``--rf``/``--rf-param`` (None without ``--rf``), or an
    exit code after a one-line message on stderr."""
    from firmware_bridge.rf_channel import ChannelError, profile

    if args.rf is None:
        if args.rf_param:
            print(f"stud-table {command}: --rf-param needs --rf PROFILE", file=sys.stderr)
            return None, EXIT_BAD_INPUT
        return None, None
    try:
        return profile(args.rf, args.rf_param), None
    except ChannelError as exc:
        print(f"stud-table {command}: {exc}", file=sys.stderr)
        return None, EXIT_BAD_INPUT


def _version() -> str:
    """The installed package's version (pyproject.toml), or "unknown" when run from a
    source tree that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("stud-table")
    except PackageNotFoundError:
        return "unknown"


def _add_replay_parser(commands: Any) -> argparse.ArgumentParser:
    replay: argparse.ArgumentParser = commands.add_parser(
        "replay",
        help="replay a table script or journal through the rules engine",
        description="Replay a table script (CONFORMANCE.md) or a journal and report the hands.",
    )
    replay.add_argument("script", type=Path,
                        help="table script (JSON Lines) or journal; - for standard input")
    replay.add_argument(
        "--json", action="store_true", help="print the CONFORMANCE.md JSON report on stdout"
    )
    return replay


def _replay_only_parser() -> argparse.ArgumentParser:
    """The parser of a plain ``replay SCRIPT [--json]`` (no --mqtt options, no help):
    parses exactly as :func:`build_parser` does, without importing the other commands."""
    parser = argparse.ArgumentParser(prog="stud-table")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_replay_parser(commands).set_defaults(mqtt=None)
    return parser


_FULL_PARSER_OPTIONS = ("-h", "--help", "--mqtt", "--table", "--speed", "--version")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:  # argparse would say "invalid _positive_int value"
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, not {text!r}") from None


def _positive_float(text: str) -> float:
    value = _number(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value


def _non_negative_float(text: str) -> float:
    value = _number(text)
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be zero or positive, not {text}")
    return value


def _replay(args: argparse.Namespace) -> int:
    if args.mqtt is not None:
        from table_controller.tools.republish import run_republish

        return run_republish(args)
    observe = None
    if not args.json:
        # The readable summary shows each street's equities and readings (numpy
        # and the equity tables load only for it: the JSON door stays light).
        from table_controller.domain.equity.live import StreetLog

        observe = StreetLog().observe
    try:
        result = replay_path(args.script, observe)
    except OSError as exc:
        print(f"stud-table replay: cannot read {args.script}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ScriptError as exc:
        print(f"stud-table replay: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        json.dump(result.report(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(text_report(result.report(), result.notes, result.game))
    sys.stdout.flush()  # a closed pipe shows here, inside main's handler
    return EXIT_OK


def text_report(report: dict[str, Any], notes: Sequence[Sequence[str]] = (),
                game: str | None = None) -> str:
    """The readable summary of a replay report (``stud-table replay`` without ``--json``).

    ``notes``: per hand, lines shown after its seats (each street's equities);
    ``game``: the table's game (RULES.md "Variants"), named on the first line.
    """
    lines: list[str] = []
    if game is not None:
        from table_controller.domain.engine.variants import variant

        lines.append(f"game: {variant(game).name}")
    hands = report["hands"]
    if not hands:
        lines.append("no hands")
    for number, hand in enumerate(hands, start=1):
        winners = " ".join(str(seat) for seat in hand["winners"]) or "-"
        bring_in = hand["bring_in"] if hand["bring_in"] is not None else "-"
        lines.append(f"hand {number}: winners {winners}, bring-in seat {bring_in}")
        if hand.get("winners_high"):  # stud8 showdown: who won which half
            high = " ".join(str(seat) for seat in hand["winners_high"]) or "-"
            low = " ".join(str(seat) for seat in hand["winners_low"]) or "no low"
            lines.append(f"  high {high}, low {low}")
        if hand["community"] is not None:
            lines.append(f"  community card {hand['community']}")
        for seat, info in hand["players"].items():
            lines.append(
                f"  seat {seat:>2} {info['status']:<7} down {' '.join(info['down']) or '-':<12}"
                f" up {' '.join(info['up']) or '-'}"
            )
        if number <= len(notes):
            lines.extend(notes[number - 1])
        for alert in hand["alerts"]:
            seat = f"seat {alert['seat']}" if alert["seat"] is not None else "table"
            street = f", street {alert['street']}" if alert["street"] is not None else ""
            lines.append(f"  ! {alert['code']} ({seat}{street}): {alert['message']}")
        for notice in hand.get("notices", []):  # no action needed (issue 9): not "!"
            seat = f"seat {notice['seat']}" if notice["seat"] is not None else "table"
            street = f", street {notice['street']}" if notice["street"] is not None else ""
            lines.append(f"  - {notice['code']} ({seat}{street}): {notice['message']}")
    journal = report.get("journal")
    if journal is not None:
        lines.append(f"journal: {journal['records']} records verified"
                     f" (jseq {journal['first_jseq'] or '-'} to {journal['last_jseq'] or '-'})")
        torn = journal["torn_tail"]
        if torn is not None:
            lines.append(f"journal: torn last line {torn['line']} dropped ({torn['problem']}),"
                         " as a crash leaves it")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    from table_controller.daemon.config import load_config
    from table_controller.daemon.logging import configure_logging
    from table_controller.daemon.runner import EXIT_NEEDS_PERSON, Daemon, StartRefusedError
    from table_controller.records.journal import JournalError
    from table_controller.table.config_file import ConfigError

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
    from table_controller.broadcast.delay import MAX_DELAY_S
    from table_controller.demo import run_demo

    if args.delay is not None and not args.broadcast:
        print("stud-table demo: --delay needs --broadcast", file=sys.stderr)
        return 2
    if args.delay is not None and args.delay > MAX_DELAY_S:
        print(f"stud-table demo: --delay: at most {MAX_DELAY_S:.0f} s", file=sys.stderr)
        return 2
    rf, failed = rf_from_args(args, "demo")
    if failed is not None:
        return failed
    return run_demo(hands=args.hands, speed=args.speed, seed=args.seed, keep=args.keep,
                    broadcast=args.broadcast, rf=rf,
                    **({"delay": args.delay} if args.delay is not None else {}))


def _simulate(args: argparse.Namespace) -> int:
    from table_controller.daemon.logging import configure_logging
    from table_controller.domain.hands import Game
    from table_controller.simulation.kinds import (
        CONSOLE_KINDS,
        DEAL_KINDS,
        READER_FLICKER,
        READER_KINDS,
    )
    from table_controller.simulation.live import LiveError
    from table_controller.simulation.plan import RateError, parse_rates
    from table_controller.simulation.progress import ProgressBar
    from table_controller.simulation.report import render as render_report
    from table_controller.simulation.runner import simulate

    rf, failed = rf_from_args(args, "simulate")
    if failed is not None:
        return failed
    if args.mode == "daemon":
        kinds = DEAL_KINDS + READER_KINDS
    elif rf is not None:
        kinds = (*DEAL_KINDS, READER_FLICKER)  # the channel flickers; wire noise needs wires
    else:
        kinds = DEAL_KINDS
    if args.betting:
        kinds += CONSOLE_KINDS
    try:
        if args.betting and args.mode != "fast":
            raise RateError("--betting runs in --mode fast only")
        if args.game != "stud" and args.mode != "fast":
            raise RateError("--game runs in --mode fast only (the daemon plays its config's"
                            " [table] game)")
        rates = parse_rates(args.rate or ["0.05"], kinds, betting=args.betting)
    except RateError as exc:
        print(f"stud-table simulate: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.hand_log is not None:
        from table_controller.records.files import output_problem

        problem = output_problem(args.hand_log)  # before the work, not after (issue 24)
        if problem is not None:
            print(f"stud-table simulate: --hand-log: {args.hand_log}: {problem}",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
    configure_logging("console", "warning")  # the report is the output, not info logs
    bar = ProgressBar(args.hands, sys.stderr)
    try:
        report = simulate(args.hands, args.seed, rates, args.mode, speed=args.speed,
                          progress=bar.update, betting=args.betting, game=Game(args.game),
                          rf=rf, rf_name=args.rf)
    except LiveError as exc:
        print(f"stud-table simulate: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:  # before the first hand (the table was starting)
        print("stud-table simulate: interrupted before any hand was dealt", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        bar.close()
    if args.json:
        json.dump(report.as_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(render_report(report))
    if report.interrupted_of is not None:
        if args.hand_log is not None:
            print(f"stud-table simulate: interrupted: {args.hand_log} not written",
                  file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.hand_log is not None:
        from table_controller.records.files import private_output
        from table_controller.simulation.hand_log import write_hand_log

        try:  # every hole card is in it: 0600, and whole or not at all
            with private_output(args.hand_log) as out:
                write_hand_log(out, args.hands, args.seed, rates, betting=args.betting)
        except OSError as exc:
            print(f"stud-table simulate: cannot write {args.hand_log}: {exc.strerror}",
                  file=sys.stderr)
            return EXIT_FAILURE
        except KeyboardInterrupt:
            print(f"stud-table simulate: interrupted: {args.hand_log} not written",
                  file=sys.stderr)
            return EXIT_INTERRUPTED
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``stud-table`` console script."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    fast = arguments[:1] == ["replay"] and not any(
        arg.split("=")[0] in _FULL_PARSER_OPTIONS for arg in arguments)
    parser = _replay_only_parser() if fast else build_parser()
    args = parser.parse_args(arguments)
    try:
        return _command(args)
    except BrokenPipeError:
        # The reader of our stdout went away (``replay --json | head``): nothing
        # more can be said there. Point stdout at /dev/null so that the interpreter's
        # final flush does not print a traceback, and exit as `cat` would (SIGPIPE).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE


def _command(args: argparse.Namespace) -> int:
    if args.command == "replay":
        return _replay(args)
    if args.command == "run":
        return _run(args)
    if args.command == "demo":
        return _demo(args)
    if args.command == "phh":
        from table_controller.handhistory.commands import run_phh

        return run_phh(args)
    if args.command == "simulate":
        return _simulate(args)
    if args.command == "console":
        from table_controller.tools.console_client import run_console

        return run_console(args)
    if args.command == "broadcast":
        from table_controller.broadcast.command import run_broadcast

        return run_broadcast(args)
    if args.command == "floor":
        from table_controller.floor.command import run_floor

        return run_floor(args)
    if args.command == "archive":
        from table_controller.archive.command import run_archive

        return run_archive(args)
    if args.command == "readers":
        from table_controller.tools.readers_view import run_readers

        return run_readers(args)
    if args.command == "equity":
        from table_controller.tools.equity_command import run_equity

        return run_equity(args)
    if args.command == "deck":
        from table_controller.tools.deck_command import run_deck

        return run_deck(args)
    if args.command == "emulate":
        from table_controller.tools.emulate import run_emulate

        return run_emulate(args)
    return EXIT_BAD_INPUT  # pragma: no cover - argparse rejects unknown commands
