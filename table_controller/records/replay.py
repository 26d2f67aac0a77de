"""Replay a table script or a journal through the engine (``stud-table replay``).

Theory of operation (issue 9, items 13-18):

* **Lines** are read from the file as bytes and split on ``\\n`` only, one at a
  time (:func:`read_lines`): a form feed, a vertical tab or U+2028 is a
  character of its line, never a line break, so line numbers match what an
  editor and ``grep -n`` show. A line longer than :data:`MAX_LINE_BYTES` is an
  error without being read whole.
* **Journal or script** is decided by the first non-blank line: a line with
  the journal's ``jseq``/``crc`` keys makes the file a journal
  (docs/journal.md). In a journal every record is verified with the journal's
  own :func:`~table_controller.records.journal.decode_line` (canonical form, CRC-32)
  and ``jseq`` must go up by exactly one. A bad record before the last line is
  damage: :class:`ScriptError` naming the line (exit 2). A bad *last* line
  without its newline is what ``kill -9`` or a power cut leaves (a torn tail):
  it is dropped, never replayed, and reported in the report's ``journal``
  object. A complete (newline-terminated) bad last line is damage like any
  other (issue 21 item 3): one ``os.write`` per line cannot leave it; so is a
  last line that is no prefix of a record (zeros, text no record begins with:
  :func:`~table_controller.records.journal.looks_like_a_cut_record`). A script line
  carrying ``jseq``/``crc`` is refused, so stripping line 1's envelope cannot
  make the rest of a journal replay unchecked.
* **Streaming**: events go to the engine as they are parsed, and each hand is
  turned into its report object as soon as the next hand starts, so memory
  holds the engine's current hand and the report, not the script
  (:func:`replay_path`).
* **Never a traceback**: whatever a line holds, the result is a report or one
  :class:`ScriptError` naming a line. An unexpected exception inside the
  engine is reported the same way, as an "internal error" on the line that
  caused it (the fuzz tests assert it never happens).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Final

from table_controller.domain.engine.dealing import DealingEngine, HandState, replay_events
from table_controller.domain.engine.report import hand_report
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import Game
from table_controller.domain.events import TableEvent
from table_controller.records.journal import decode_line, looks_like_a_cut_record, strip_envelope
from table_controller.records.script import Script, ScriptError, ScriptParser, load_json

MAX_LINE_BYTES: Final = 1024 * 1024
"""Longest script line read. A line is a few dozen bytes; a megabyte without a
newline is not a script (and reading it whole could exhaust memory)."""

MAX_SKIP_BYTES: Final = 64 * MAX_LINE_BYTES
"""How far past the limit an overlong line is skipped to learn whether it is the
last one (a journal's torn tail); a longer line is taken as not the last, so an
endless file such as /dev/zero ends with an error instead of a hang."""

_JOURNAL_MARKS: Final = (b'"jseq":', b'"crc":')


_KINDS: Final = (
    (stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
)


class NotRegularFileError(OSError):
    """The path names something other than a regular file (issue 21 item 8)."""


def open_regular(path: Path) -> BinaryIO:
    """Open ``path`` for reading, refusing anything that is not a regular file.

    Issue 21 item 8: a FIFO with no writer made ``replay`` wait for ever in
    ``open``. The file is opened without blocking (a FIFO's open then returns at
    once), checked with ``fstat`` on the descriptor itself (no race with a rename),
    and a FIFO, directory, device or socket raises :class:`NotRegularFileError`
    (an ``OSError`` whose ``strerror`` says what it is), so the door answers in
    one line. The descriptor is put back into blocking mode for reading.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a file")
            raise NotRegularFileError(
                errno.EINVAL, f"not a regular file ({kind}); replay reads a script or journal"
                " file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


@dataclass(slots=True)
class Line:
    """One line of the file: its number, its bytes without the ``\\n``, and whether
    it is the last line of the file. ``data`` is None for a line over the limit;
    ``ended`` is False for a last line without its ``\\n``."""

    number: int
    data: bytes | None
    last: bool
    ended: bool = True


def read_lines(file: BinaryIO, limit: int = MAX_LINE_BYTES) -> Iterator[Line]:
    """The lines of ``file``, split on ``\\n`` only, each knowing whether it is the last.

    A final line without a newline is a line too. Memory: two lines of at most
    ``limit`` bytes.
    """
    number = 0
    pending: Line | None = None
    chunk_ended = True
    while True:
        chunk = file.readline(limit + 1)
        if not chunk:
            break
        chunk_ended = chunk.endswith(b"\n")
        data: bytes | None = chunk.removesuffix(b"\n")
        number += 1
        if not chunk.endswith(b"\n") and len(chunk) > limit:
            data = None
            if pending is not None:  # an error on an earlier line comes first
                yield pending
                pending = None
            skipped = len(chunk)
            while chunk and not chunk.endswith(b"\n"):  # skip the rest of the line
                if skipped > MAX_SKIP_BYTES:  # e.g. /dev/zero: never ends, never last
                    yield Line(number, None, last=False)
                    return
                chunk = file.readline(limit)
                skipped += len(chunk)
            chunk_ended = chunk.endswith(b"\n")
        if pending is not None:
            yield pending
        pending = Line(number, data, last=False)
    if pending is not None:
        pending.last = True
        pending.ended = chunk_ended
        yield pending


@dataclass(slots=True)
class JournalInfo:
    """What the journal check found: records replayed, their ``jseq`` range, a torn tail."""

    records: int = 0
    first_jseq: int | None = None
    last_jseq: int | None = None
    torn_line: int | None = None
    torn_problem: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The report's ``journal`` object (docs/engine.md, "Replay")."""
        torn = None
        if self.torn_line is not None:
            torn = {"line": self.torn_line, "problem": self.torn_problem}
        return {
            "records": self.records,
            "first_jseq": self.first_jseq,
            "last_jseq": self.last_jseq,
            "torn_tail": torn,
        }


STDIN: Final = Path("-")
"""The path that means standard input (``stud-table replay -``, as ``equity -``)."""


def _open(path: Path) -> contextlib.AbstractContextManager[BinaryIO]:
    """``path`` opened for reading bytes; ``-`` is standard input (left open after)."""
    if path == STDIN:
        return contextlib.nullcontext(sys.stdin.buffer)
    return open_regular(path)  # issue 21 item 8: never wait on a FIFO


@dataclass(slots=True)
class ScriptSource:
    """A script or journal file read as a stream of events (see the module docstring).

    Iterate :meth:`events` once; ``parser.settings`` is final before the first
    event comes out, ``journal`` (None for a script) is complete after the last.
    """

    path: Path
    parser: ScriptParser = field(init=False)
    journal: JournalInfo | None = None
    last_line: int = 0

    def __post_init__(self) -> None:
        self.parser = ScriptParser(str(self.path))

    def events(self) -> Iterator[tuple[int, TableEvent]]:
        """Each event with its line number. Raises :class:`ScriptError` (or ``OSError``)."""
        with _open(self.path) as file:
            lines = read_lines(file)
            kind_known = False
            for line in lines:
                self.last_line = line.number
                if not kind_known and line.data is not None and line.data.strip(b" \t\r"):
                    kind_known = True
                    if _is_journal(line.data):
                        self.journal = JournalInfo()
                        self.parser.journal = True
                        yield from self._journal([line], lines)
                        return
                event = self._script_line(line)
                if event is not None:
                    yield line.number, event

    def _script_line(self, line: Line) -> TableEvent | None:
        if line.data is None:
            raise self._error(line.number, f"line longer than {MAX_LINE_BYTES} bytes")
        try:
            text = line.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._error(line.number, f"not UTF-8 text (byte {exc.start + 1} of the"
                              " line)") from None
        return self.parser.feed_line(line.number, text)

    def _journal(self, first: list[Line], rest: Iterator[Line]) -> Iterator[tuple[int, TableEvent]]:
        info = self.journal
        assert info is not None
        for line in _chain(first, rest):
            self.last_line = line.number
            try:
                if line.data is None:
                    raise ValueError(f"line longer than {MAX_LINE_BYTES} bytes")
                if not line.ended:
                    # Journal.append writes the line and its newline in one write: without
                    # it the record was never acknowledged (docs/journal.md).
                    raise ValueError("no newline at the end (an incomplete write)")
                record = decode_line(line.data)
                jseq = int(record["jseq"])
                if info.last_jseq is not None and jseq != info.last_jseq + 1:
                    # A crash never skips a number: a gap is a deleted or moved record.
                    if line.last:
                        raise _NotTornError(f"jseq {jseq} does not follow {info.last_jseq}")
                    raise ValueError(f"jseq {jseq} does not follow {info.last_jseq}")
            except _NotTornError as exc:
                raise self._error(line.number, f"damaged journal record: {exc}") from None
            except (ValueError, RecursionError) as exc:
                problem = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
                if line.last and not line.ended and (
                        line.data is None or looks_like_a_cut_record(line.data)):
                    # Only a line without its newline can be a write cut short: a
                    # complete bad line is damage, the last one too (issue 21 item 3).
                    # What kill -9 or a power cut leaves: never acknowledged, so dropped.
                    info.torn_line, info.torn_problem = line.number, problem
                    return
                raise self._error(line.number, f"damaged journal record: {problem}") from None
            if info.first_jseq is None:
                info.first_jseq = jseq
            info.last_jseq = jseq
            info.records += 1
            event = self.parser.feed_object(line.number, strip_envelope(record))
            if event is not None:
                yield line.number, event

    def _error(self, line: int, problem: str) -> ScriptError:
        return ScriptError(line, problem, str(self.path))


class _NotTornError(ValueError):
    """A record damaged in a way a crash cannot explain, even on the last line."""


def _chain(first: list[Line], rest: Iterator[Line]) -> Iterator[Line]:
    yield from first
    yield from rest


def _is_journal(first_line: bytes) -> bool:
    """Whether the first non-blank line is a journal record (has ``jseq`` or ``crc``).

    A torn or damaged first record still counts when its bytes show a journal key.
    """
    try:
        obj = load_json(first_line.decode("utf-8"))
    except ValueError:  # also UnicodeDecodeError
        return any(mark in first_line for mark in _JOURNAL_MARKS)
    return isinstance(obj, dict) and ("jseq" in obj or "crc" in obj)


@dataclass(slots=True)
class Replay:
    """The outcome of replaying one file: each hand's report and, for a journal, the check."""

    hands: list[dict[str, Any]]
    journal: JournalInfo | None
    notes: list[list[str]] = field(default_factory=list)
    """Per hand, the readable lines of ``replay_path``'s ``observe`` (the summary's
    equities and readings); not part of the JSON report."""
    game: Game = Game.STUD
    """The game of the table line (the readable summary names it; the JSON
    report does not, its keys are the contract's)."""

    def report(self) -> dict[str, Any]:
        """The CONFORMANCE.md report; a journal adds its ``journal`` object."""
        report: dict[str, Any] = {"hands": self.hands}
        if self.journal is not None:
            report["journal"] = self.journal.as_json()
        return report


Observer = Callable[[HandState | None, TableSettings], list[str]]
"""Shown the hand (and the table's settings) after every input; returns readable
lines for the summary (e.g. :meth:`table_controller.domain.equity.live.StreetLog.observe`)."""


def replay_path(path: Path, observe: Observer | None = None) -> Replay:
    """Replay the script or journal at ``path``, streaming (see the module docstring).

    ``observe``: lines for the readable summary, kept per hand in :attr:`Replay.notes`.
    Raises :class:`ScriptError` for a malformed line, ``OSError`` if unreadable.
    """
    source = ScriptSource(path)
    engine: DealingEngine | None = None
    hands: list[dict[str, Any]] = []
    notes: list[list[str]] = []
    lines: list[str] = []
    current: HandState | None = None
    number = 0
    try:
        for line_number, event in source.events():
            number = line_number  # for the internal-error message below
            if engine is None:
                engine = DealingEngine(source.parser.settings)
            engine.apply(event)
            if engine.hand is not None and engine.hand is not current:
                # A hand is final once the next one starts: report it and let it go.
                if current is not None:
                    hands.append(hand_report(current))
                    notes.append(lines)
                    lines = []
                current = engine.hand
            if observe is not None:
                lines += observe(engine.hand, engine.settings)
        number = source.last_line
        if engine is not None:
            engine.finish_hand()
        if current is not None:
            hands.append(hand_report(current))
            notes.append(lines)
    except (ScriptError, OSError):
        raise
    except Exception as exc:  # the door answers with a line, never a traceback
        raise ScriptError(
            number, f"internal error replaying this line ({type(exc).__name__}: {exc});"
            " please report it", str(path)) from None
    return Replay(hands, source.journal, notes, source.parser.settings.game)


def load_script(path: Path) -> Script:
    """Read and parse a table script or journal file, verifying a journal's records.

    Raises :class:`ScriptError`. Holds every event: for tools that need them all
    (``phh export``, ``replay --mqtt``); ``replay`` itself streams.
    """
    source = ScriptSource(path)
    events = list(source.events())
    return Script(source.parser.settings, events)


def replay_hands(script: Script) -> list[HandState]:
    """Every hand of ``script``, played through a fresh engine."""
    return replay_events((event for _, event in script.events), script.settings)


def replay_file(path: Path) -> dict[str, Any]:
    """The CONFORMANCE.md report for the script or journal at ``path``."""
    return replay_path(path).report()
