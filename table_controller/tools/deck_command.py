"""``stud-table deck register``, ``check`` and ``verify``: the I/O around the pure machines.

Each opens the live reader the layout names (through :class:`AntennaWatch`, the
daemon's own serial link: a real reader and the pty emulator are the same to it),
feeds what the chosen zone's antennas see to :class:`Registration`,
:class:`DeckCheck` or :class:`DeckVerify`, and prints their lines. Exit codes:
0 done (deck written / deck complete and clean / every face confirmed), 1 not done
(stopped early, reader never online, deck not clean, a face not confirmed), 2 bad
input (layout, reader, zone, deck files, output path).

The deck file is written once, at the end, atomically (a temporary file in the
same directory, fsynced, then linked into place) and owner-only (0600): whoever
has it reads hole cards through the card backs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

from firmware_bridge.link import ConnectionState
from table_controller.daemon.logging import configure_logging
from table_controller.domain.cards import Card
from table_controller.table.config_file import ConfigError, read_toml
from table_controller.table.deck import (
    Deck,
    DeckRegistry,
    deck_file_exposure,
    load_deck,
    load_decks,
    normalize_uid,
    valid_deck_name,
)
from table_controller.table.layout import load_layout
from table_controller.tools.antenna import (
    AntennaError,
    AntennaWatch,
    LinkChange,
    Seen,
    resolve_antennas,
)
from table_controller.tools.deck_check import DeckCheck, render_report
from table_controller.tools.deck_register import (
    DECK_SIZE,
    REGISTRATION_ORDER,
    Line,
    Registration,
)
from table_controller.tools.deck_verify import DeckVerify, render_verify_report

__all__ = [
    "add_deck_parser",
    "config_decks",
    "deck_file_text",
    "load_partial",
    "run_deck",
    "write_private_file",
]

EXIT_OK: Final = 0
EXIT_NOT_DONE: Final = 1
EXIT_BAD_INPUT: Final = 2

SETTLE: Final = 0.4
"""Seconds the antenna must stay unchanged before a read is decided: two cards
passed together reach the host in one or two scan cycles (100-250 ms each)."""

VERIFY_FACES: Final = 10
"""Faces ``deck verify`` asks by default: a quick check; --all for the whole deck."""

ONLINE_TIMEOUT: Final = 15.0
"""Seconds to wait for the reader to come online before giving up (exit 1)."""

_EOF: Final = object()


class _BadInputError(Exception):
    """One line for stderr, exit 2."""


def add_deck_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``deck register`` and ``deck check`` to the ``stud-table`` subcommands."""
    deck = commands.add_parser(
        "deck", help="register a new deck of RFID cards, or check a deck",
        description="Register a deck by passing its 52 cards over one antenna, or check"
        " a deck against its file.")
    actions = deck.add_subparsers(dest="deck_command", required=True)
    register = actions.add_parser(
        "register", help="pass the 52 cards over an antenna and write the deck file",
        description="Pass the cards over one antenna in the order shown (2c..Ac, 2d..Ad,"
        " 2h..Ah, 2s..As) or, with --any-order, in any order typing each face. Type"
        " 'help' for the commands (back, skip, goto CARD, done). Ctrl-C writes nothing"
        " (or the partial file with --partial).")
    _add_antenna_arguments(register)
    register.add_argument("--out", type=Path, required=True,
                          help="the deck file to write (owner-only, 0600)")
    register.add_argument("--deck-id", default=None, metavar="NAME",
                          help="the deck's name (default: the file name without .toml)")
    register.add_argument("--any-order", action="store_true",
                          help="pass the cards in any order and type each card's face")
    register.add_argument("--force", action="store_true", help="replace --out if it exists")
    register.add_argument("--partial", action="store_true",
                          help="if stopped before all 52, write the cards so far to"
                          " OUT-STEM.partial.toml (not loadable as a deck)")
    register.add_argument("--resume", type=Path, default=None, metavar="PARTIAL",
                          help="go on from a partial file written by --partial")
    check = actions.add_parser(
        "check", help="pass a deck over an antenna: missing, extra and foreign cards",
        description="Pass the deck's cards over one antenna; stops when all 52 were read"
        " and the antenna is quiet, after --timeout seconds without a read, or on Ctrl-C."
        " Exit 0 when complete and clean, 1 when not.")
    _add_antenna_arguments(check)
    check.add_argument("--deck", type=Path, required=True, help="the deck file to check")
    check.add_argument("--timeout", type=float, default=30.0, metavar="S",
                       help="stop after S seconds without a read (default 30)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    verify = actions.add_parser(
        "verify", help="put the faces asked on an antenna: each tag must be that card",
        description="Asks for faces (--faces N at random, or --all in a random order); put the"
        " card with that face printed on it on the antenna, and its tag is checked against"
        " the deck file: a face swap at registration shows as a mismatch. 'skip' leaves a face"
        " unverified, 'done' stops. Exit 0 when every face asked was confirmed, 1 when not.")
    _add_antenna_arguments(verify)
    verify.add_argument("--deck", type=Path, required=True, help="the deck file to verify")
    faces = verify.add_mutually_exclusive_group()
    faces.add_argument("--faces", type=int, default=VERIFY_FACES, metavar="N",
                       help=f"how many random faces to ask (default {VERIFY_FACES})")
    faces.add_argument("--all", action="store_true", help="ask all 52, in a random order")
    verify.add_argument("--seed", type=int, default=None,
                        help="the random choice of faces (default: new each run)")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")


def _add_antenna_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--layout", type=Path, required=True, help="the table's layout file")
    parser.add_argument("--reader", type=int, required=True, help="the reader id")
    parser.add_argument("--zone", required=True, help="the zone whose antenna is used")
    parser.add_argument("--existing", type=Path, nargs="+", default=[], metavar="DECK",
                        help="other deck files: their tags are refused / named")
    parser.add_argument("--config", type=Path, default=None,
                        help="a table.toml: its decks count as --existing")
    parser.add_argument("--settle", type=float, default=SETTLE, metavar="S",
                        help="seconds the antenna must stay unchanged before a read counts"
                        f" (default {SETTLE})")


def run_deck(args: argparse.Namespace) -> int:
    """Run ``stud-table deck ...`` with parsed ``args``; the exit code."""
    name = f"stud-table deck {args.deck_command}"
    # The link's own log lines would repeat what the command prints (on stderr, errors only).
    configure_logging("console", "error")
    try:
        if not 0 < args.settle <= 10:
            raise _BadInputError(f"--settle {args.settle} is outside (0, 10] seconds")
        if args.deck_command == "register":
            return _register(args, sys.stdin, sys.stdout)
        if args.deck_command == "verify":
            return _verify(args, sys.stdin, sys.stdout)
        return _check(args, sys.stdout)
    except (_BadInputError, ConfigError, AntennaError) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


# -- shared set-up ----------------------------------------------------------------------


def _existing(args: argparse.Namespace, exclude: Path | None = None) -> DeckRegistry:
    paths = list(args.existing)
    if args.config is not None:
        paths += config_decks(args.config)
    if exclude is not None:
        paths = [path for path in paths if not _same_file(path, exclude)]
    # One file named twice (--existing and the config's decks) is one deck.
    unique: dict[Path, Path] = {}
    for path in paths:
        unique.setdefault(path.resolve(), path)
    registry = load_decks(unique.values())
    _warn_exposed(unique.values())  # after loading: a bad file is one line, its error
    return registry


def config_decks(config: Path) -> list[Path]:
    """The deck files a table.toml names that exist now (resolved against its directory).

    Not the daemon's whole loader: that one (rightly) refuses a config whose deck is
    missing, and on a fresh install the deck missing is the one being registered,
    or another not registered yet. Neither has tags to refuse.
    Raises :class:`ConfigError` for a config whose ``[table] decks`` is not a list
    of file names.
    """
    data = read_toml(config)
    table = data.get("table")
    decks = table.get("decks") if isinstance(table, dict) else None
    if not isinstance(decks, list) or not all(isinstance(item, str) for item in decks):
        raise ConfigError(config, "table.decks", "expected a list of deck file names")
    paths = [config.parent / item for item in decks]
    return [path for path in paths if path.exists()]


def _warn_exposed(paths: Iterable[Path]) -> None:
    """One warning line per deck file other users can read (not a refusal)."""
    for path in paths:
        exposure = deck_file_exposure(path)
        if exposure is not None:
            print(f"warning: {exposure}", file=sys.stderr, flush=True)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


def _watch(args: argparse.Namespace, inputs: queue.Queue[object]) -> AntennaWatch:
    layout = load_layout(args.layout)
    device, ports = resolve_antennas(layout, args.reader, args.zone)
    if device.startswith("/") and not os.path.exists(device):
        raise _BadInputError(f"{args.layout}: reader {args.reader}: device {device} not found"
                        " (is the reader plugged in?)")
    reader = layout.reader(args.reader)
    kind = reader.kind if reader is not None else "stud"
    return AntennaWatch(device, args.reader, ports, inputs.put, kind=kind)


class _Operator:
    """The operator's typed lines, read on a thread so the main loop never blocks."""

    def __init__(self, source: TextIO, sink: queue.Queue[object]) -> None:
        self._source = source
        self._sink = sink
        threading.Thread(target=self._run, name="operator-input", daemon=True).start()

    def _run(self) -> None:
        with contextlib.suppress(ValueError, OSError):  # stdin closed under us
            for line in self._source:
                self._sink.put(line.rstrip("\n"))
        self._sink.put(_EOF)


def _show(out: TextIO, lines: Sequence[Line]) -> None:
    for line in lines:
        marker = {"ok": "+", "note": "-", "refused": "!", "error": "?", "prompt": ">",
                  "done": "="}[line.kind]
        print(f"{marker} {line.text}", file=out, flush=True)


# -- register --------------------------------------------------------------------------


def _register(args: argparse.Namespace, stdin: TextIO, out: TextIO) -> int:
    target: Path = args.out
    if target.exists() and not args.force:
        raise _BadInputError(f"{target} exists: choose another --out or pass --force")
    if not target.parent.is_dir():
        raise _BadInputError(f"{target.parent} is not a directory")
    if args.deck_id is not None:
        _check_deck_name(args.deck_id)
    else:
        _check_deck_name(target.stem)
    others = _existing(args, exclude=target if args.force else None)
    inputs: queue.Queue[object] = queue.Queue()
    watch = _watch(args, inputs)
    machine = Registration(any_order=args.any_order, known=others.lookup)
    resumed = [] if args.resume is None else machine.preload(
        load_partial(args.resume, others))
    if not args.any_order:
        print("order: " + " ".join(card.code for card in REGISTRATION_ORDER), file=out)
    print("type 'help' for the commands; Ctrl-C stops (nothing is written)", file=out,
          flush=True)
    try:
        with watch:
            _Operator(stdin, inputs)
            if not _wait_online(inputs, out, machine):
                return EXIT_NOT_DONE
            _show(out, resumed or [machine.prompt()])
            _drive(machine, inputs, out, args.settle)
    except KeyboardInterrupt:
        print("\ninterrupted", file=out, flush=True)
    if machine.complete:
        text = deck_file_text(args.deck_id, machine.cards())
        try:
            write_private_file(target, text, replace=args.force)
        except OSError as exc:
            print(f"cannot write {target}: {exc.strerror or exc}: nothing written", file=out,
                  flush=True)
            return EXIT_NOT_DONE
        load_deck(target)  # what we wrote must load: the daemon will read it
        print(f"deck written: {target} ({DECK_SIZE} cards, mode 0600)", file=out, flush=True)
        if args.resume is not None and args.resume.name.endswith(".partial.toml"):
            args.resume.unlink(missing_ok=True)  # a secret too: not left lying about
            print(f"partial file removed: {args.resume}", file=out, flush=True)
        return EXIT_OK
    missing = machine.missing()
    print(f"nothing written to {target}: {machine.registered}/{DECK_SIZE} cards registered;"
          f" missing {len(missing)}: {' '.join(card.code for card in missing)}", file=out,
          flush=True)
    if args.partial and machine.registered:
        partial = target.with_name(f"{target.stem}.partial.toml")
        write_private_file(partial, deck_file_text(args.deck_id, machine.cards(), partial=True),
                           replace=True)
        print(f"partial deck written: {partial} (not loadable as a deck)", file=out, flush=True)
    return EXIT_NOT_DONE


def _check_deck_name(name: str) -> None:
    if not valid_deck_name(name):
        raise _BadInputError(f"deck name {name!r} must be 1-32 letters, digits, '_', '.' or '-',"
                        " starting with a letter or digit (use --deck-id)")


def _wait_online(inputs: queue.Queue[object], out: TextIO,
                 machine: Registration | DeckCheck | DeckVerify) -> bool:
    """Print link changes until the reader is online; False if it never comes."""
    deadline = time.monotonic() + ONLINE_TIMEOUT
    last = ""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            print(f"the reader did not come online in {ONLINE_TIMEOUT:.0f} s"
                  f" ({last or 'no answer'}): nothing written", file=out, flush=True)
            return False
        try:
            item = inputs.get(timeout=remaining)
        except queue.Empty:
            continue
        if isinstance(item, LinkChange):
            if item.text != last:
                print(f"- {item.text}", file=out, flush=True)
                last = item.text
            if item.state is ConnectionState.ONLINE:
                return True
        elif isinstance(item, Seen):
            _feed(machine, item)
        elif item is _EOF:
            print("input closed before the reader came online: nothing written", file=out,
                  flush=True)
            return False


def _feed(machine: Registration | DeckCheck | DeckVerify, seen: Seen) -> list[Line]:
    if isinstance(machine, Registration | DeckVerify):
        machine.inventory(seen.uids)
        return []
    return machine.snapshot(seen.uids)


def _drive(machine: Registration | DeckVerify, inputs: queue.Queue[object], out: TextIO,
           settle: float) -> None:
    # A first settle at once: tags laid down while the reader came online count.
    changed_at: float | None = time.monotonic()
    while not machine.finished:
        timeout = None if changed_at is None else max(0.0, changed_at + settle - time.monotonic())
        try:
            item = inputs.get(timeout=timeout)
        except queue.Empty:
            changed_at = None
            _show(out, machine.settle())
            continue
        if isinstance(item, Seen):
            machine.inventory(item.uids)
            changed_at = time.monotonic()
        elif isinstance(item, LinkChange):
            print(f"- {item.text}", file=out, flush=True)
        elif item is _EOF:
            print("input closed: stopping", file=out, flush=True)
            return
        elif isinstance(item, str):
            _show(out, machine.answer(item))


# -- check and verify: one deck file, read over the antenna ------------------------------


def _deck_and_others(args: argparse.Namespace) -> tuple[Deck, DeckRegistry]:
    """The deck ``--deck`` names (warned about if others can read it) and every other
    deck known, whose tags are foreign to it."""
    deck = load_deck(args.deck)
    _warn_exposed([args.deck])
    return deck, _existing(args, exclude=args.deck)


def _report(machine: DeckCheck | DeckVerify, render: Callable[[dict[str, Any]], list[str]],
            *, as_json: bool, out: TextIO) -> int:
    """Print the session's report (``--json``: as JSON, else the lines ``render`` makes);
    the exit code, ok only if the deck came out clean."""
    report = machine.report()
    if as_json:
        json.dump(report, out, indent=2)
        out.write("\n")
    else:
        for line in render(report):
            print(line, file=out)
    out.flush()
    return EXIT_OK if machine.clean else EXIT_NOT_DONE


# -- check ----------------------------------------------------------------------------


def _check(args: argparse.Namespace, out: TextIO) -> int:
    deck, others = _deck_and_others(args)
    if deck.name in others.decks:
        raise _BadInputError(f"{args.deck}: deck name {deck.name!r} is also used by"
                        f" {others.deck(deck.name).path}")
    inputs: queue.Queue[object] = queue.Queue()
    watch = _watch(args, inputs)
    machine = DeckCheck(deck, known=others.lookup)
    say: Callable[[Sequence[Line]], None] = (
        (lambda _lines: None) if args.json else (lambda lines: _show(out, lines)))
    try:
        with watch:
            _check_loop(machine, inputs, args.timeout, say, out, quiet=args.json,
                        settle=args.settle)
    except KeyboardInterrupt:
        if not args.json:
            print("\ninterrupted", file=out, flush=True)
    return _report(machine, render_report, as_json=args.json, out=out)


def _check_loop(machine: DeckCheck, inputs: queue.Queue[object], idle_timeout: float,
                say: Callable[[Sequence[Line]], None], out: TextIO, *, quiet: bool,
                settle: float) -> None:
    last_read = time.monotonic()
    if not quiet:
        print(f"pass the {DECK_SIZE} cards of deck {machine.deck.name} over the antenna",
              file=out, flush=True)
    while True:
        now = time.monotonic()
        # All 52 read: wait one quiet moment more for stragglers (extra, foreign).
        limit = last_read + (settle * 5 if machine.complete else idle_timeout)
        try:
            item = inputs.get(timeout=max(0.0, limit - now))
        except queue.Empty:
            return
        if isinstance(item, Seen):
            lines = machine.snapshot(item.uids)
            if lines:
                last_read = time.monotonic()
                say(lines)
        elif isinstance(item, LinkChange) and not quiet:
            print(f"- {item.text}", file=out, flush=True)


# -- verify ---------------------------------------------------------------------------


def _verify(args: argparse.Namespace, stdin: TextIO, out: TextIO) -> int:
    deck, others = _deck_and_others(args)
    if not args.all and not 1 <= args.faces <= DECK_SIZE:
        raise _BadInputError(f"--faces {args.faces} is outside 1..{DECK_SIZE}")
    rng = random.Random(args.seed)
    faces = (rng.sample(REGISTRATION_ORDER, DECK_SIZE) if args.all
             else rng.sample(REGISTRATION_ORDER, args.faces))
    inputs: queue.Queue[object] = queue.Queue()
    watch = _watch(args, inputs)
    machine = DeckVerify(deck, faces, known=others.lookup)
    if not args.json:
        print(f"verify deck {deck.name}: {len(faces)} faces; type 'help' for the commands",
              file=out, flush=True)
    shown = out if not args.json else open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    try:
        with watch:
            _Operator(stdin, inputs)
            if _wait_online(inputs, shown, machine):
                _show(shown, [machine.prompt()])
                _drive(machine, inputs, shown, args.settle)
    except KeyboardInterrupt:
        print("\ninterrupted", file=shown, flush=True)
    finally:
        if shown is not out:
            shown.close()
    return _report(machine, render_verify_report, as_json=args.json, out=out)


# -- the deck file -----------------------------------------------------------------------


def load_partial(path: Path, others: DeckRegistry) -> dict[Card, str]:
    """The cards of a partial deck file (``--partial``) to resume from.

    Raises :class:`ConfigError` (file, key, problem; never the UID) for a bad
    card code or UID, a tag given twice, or a tag another known deck has.
    """
    data = read_toml(path)
    raw = data.get("cards")
    if not isinstance(raw, dict):
        raise ConfigError(path, "cards", "a partial deck needs a [cards] table")
    cards: dict[Card, str] = {}
    owner: dict[str, str] = {}
    for code, value in raw.items():
        key = f"cards.{code}"
        try:
            card = Card.parse(code)
            uid = normalize_uid(value) if isinstance(value, str) else None
        except ValueError as err:
            raise ConfigError(path, key, str(err)) from None
        if uid is None:
            raise ConfigError(path, key, "a UID is a string of hex digits")
        if card.code != code:
            raise ConfigError(path, key, f"write card code {code!r} as {card.code!r}")
        if uid in owner:
            raise ConfigError(path, key, f"same UID as cards.{owner[uid]}")
        other = others.lookup(uid)
        if other is not None:
            raise ConfigError(path, key, f"this tag is already {other.card.code} of deck"
                              f" {other.deck!r}")
        owner[uid] = code
        cards[card] = uid
    return cards



def deck_file_text(name: str | None, cards: Mapping[Card, str], *, partial: bool = False) -> str:
    """The deck file (``hardware/README.md`` "Deck files") for ``cards``, in 2c..As order.

    ``partial``: a registration stopped early; the header says so and names the
    missing cards (the file then fails to load as a deck, on purpose).
    """
    lines = ["# SECRET: whoever has this file can read hole cards through the card backs.",
             "# Keep it owner-only and out of version control. Written by stud-table deck"
             " register."]
    if partial:
        missing = [card.code for card in REGISTRATION_ORDER if card not in cards]
        lines.append(f"# PARTIAL: {len(cards)}/{DECK_SIZE} cards; missing {len(missing)}:"
                     f" {' '.join(missing)}")
    if name is not None:
        lines.append(f'name = "{name}"')
    lines += ["", "[cards]"]
    lines += [f'{card.code} = "{cards[card]}"' for card in REGISTRATION_ORDER if card in cards]
    return "\n".join(lines) + "\n"


def write_private_file(path: Path, text: str, *, replace: bool) -> None:
    """Write ``text`` to ``path`` atomically with mode 0600.

    A temporary file in the same directory is written and fsynced, then put in
    place (``os.replace`` with ``replace``, else ``os.link``, which fails if
    ``path`` appeared meanwhile) and the directory is fsynced: a crash leaves
    either no file or the whole file, never half a deck.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)

