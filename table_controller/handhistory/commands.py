"""The ``stud-table phh import|export`` commands (wired in :mod:`table_controller.tools.cli`)."""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

from table_controller.domain.engine.settings import RuleProfile
from table_controller.handhistory.exporter import export_file
from table_controller.handhistory.importer import import_hand
from table_controller.handhistory.model import PhhError, StudHand
from table_controller.handhistory.reader import read_phh
from table_controller.handhistory.writer import write_phh, write_phhs
from table_controller.records.files import output_problem, write_private
from table_controller.records.script import ScriptError

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
"""Same meanings as :mod:`table_controller.tools.cli`."""


def add_phh_parser(commands: Any) -> None:
    """Add ``phh import`` / ``phh export`` to the ``stud-table`` subcommands (``commands``
    is the object ``ArgumentParser.add_subparsers`` returned)."""
    phh = commands.add_parser(
        "phh",
        help="import PHH hand histories as table scripts, export recorded hands to PHH",
        description="PHH (the phh-std hand history format, read by PokerKit), variants F7S"
        " (Seven Card Stud), FR (Razz) and F7S/8 (Stud Hi-Lo).",
    )
    actions = phh.add_subparsers(dest="phh_command", required=True)
    imp = actions.add_parser(
        "import",
        help="turn a PHH hand into a physical table script (JSON Lines)",
        description="Deal a PHH hand physically (round by round, burns from unused cards,"
        " folded hands to the muck) and write it as a table script with act lines.",
    )
    imp.add_argument("file", type=Path, help="PHH file (variant F7S, FR or F7S/8)")
    imp.add_argument("-o", "--output", type=Path, default=None,
                     help="write the script here (default: stdout)")
    imp.add_argument("--seed", type=int, default=0,
                     help="seed choosing the burn cards among the unused ones (default 0)")
    imp.add_argument("--fill-unknown", action="store_true",
                     help="deal unknown (??) cards as unused cards instead of refusing the hand")
    imp.add_argument("--burn-before-third", action="store_true",
                     help="the table burns a card before 3rd street too (rule profile)")
    exp = actions.add_parser(
        "export",
        help="write the hands of a table script or journal as PHH",
        description="Replay a table script or daemon journal through the engine and write"
        " its hands as PHH (several hands: one [n] table each).",
    )
    exp.add_argument("script", type=Path, help="table script or journal")
    exp.add_argument("-o", "--output", type=Path, default=None,
                     help="write the PHH here (default: stdout)")
    exp.add_argument("--hand", type=int, default=None, metavar="N",
                     help="only hand number N (as the replay report and journal number them)")


def run_phh(args: argparse.Namespace) -> int:
    """Run ``stud-table phh import|export``; return the exit code."""
    name = f"stud-table phh {args.phh_command}"
    if args.output is not None:
        # Checked before the work: a bad -o is one line and exit 2, not a traceback
        # after the hands were read (issue 24).
        problem = output_problem(args.output)
        if problem is not None:
            print(f"{name}: {args.output}: {problem}", file=sys.stderr)
            return EXIT_BAD_INPUT
    try:
        text = _import(args) if args.phh_command == "import" else _export(args, name)
    except OSError as exc:
        print(f"{name}: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (PhhError, ScriptError) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        write_private(args.output, text)  # atomic, 0600: the hands' hole cards are in it
    except OSError as exc:
        print(f"{name}: {args.output}: cannot write: {exc.strerror}", file=sys.stderr)
        return EXIT_FAILURE
    return EXIT_OK


def _import(args: argparse.Namespace) -> str:
    path: Path = args.file
    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PhhError(f"{path}: not UTF-8 text") from None
    fill = random.Random(args.seed) if args.fill_unknown else None
    try:
        hand = read_phh(source, fill_unknown=fill)
    except PhhError as exc:
        raise PhhError(f"{path}: {exc}") from None
    if hand.filled:
        codes = " ".join(card.code for card in hand.filled)
        print(f"note: {len(hand.filled)} unknown cards dealt as {codes}", file=sys.stderr)
    rules = RuleProfile(burn_before_third=args.burn_before_third)
    return import_hand(hand, rules=rules, rng=random.Random(args.seed)).script_text()


def _export(args: argparse.Namespace, name: str) -> str:
    hands = export_file(args.script)
    if args.hand is not None:
        hands = [hand for hand in hands if hand.hand == args.hand]
        if not hands:
            raise PhhError(f"{args.script}: no hand number {args.hand}")
    if not hands:
        raise PhhError(f"{args.script}: no hand with cards dealt to two seats")
    for hand in hands:
        _notes(hand, name)
    return write_phh(hands[0]) if len(hands) == 1 else write_phhs(hands)


def _notes(hand: StudHand, name: str) -> None:
    """Tell the user (stderr) what the file had to make up, as the file itself says."""
    if not hand.betting_known:
        print(f"{name}: hand {hand.hand}: no console actions; the betting is a passive"
              " placeholder (_betting = \"unknown\")", file=sys.stderr)
    if hand.unfinished:
        streets = [deal.street for deal in hand.deals]
        where = f" after {_ordinal(max(streets))} street" if streets else ""
        print(f"{name}: hand {hand.hand}: unfinished: the recording ends{where} with"
              " cards still to come; its actions stop there (_unfinished = true)",
              file=sys.stderr)
    if not hand.stacks_known:
        print(f"{name}: hand {hand.hand}: no stacks recorded; placeholder stacks"
              " (_stacks = \"unknown\")", file=sys.stderr)


def _ordinal(street: int) -> str:
    return {3: "3rd"}.get(street, f"{street}th")
