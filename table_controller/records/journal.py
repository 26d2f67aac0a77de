"""Append-only journal of the table's input events (format: docs/journal.md).

One record per line, JSON, ASCII only. A record is the caller's op dict (the
same shape as a table-script line of CONFORMANCE.md, e.g.
``{"op":"place","zone":"seat4.up","card":"Kd"}``) plus three envelope keys:

* ``jseq``: journal sequence number, 1, 2, 3, ... (continues across rotation);
* ``at``: the time the caller gives (seconds; the caller decides the clock);
* ``crc``: CRC-32 as 8 lowercase hex digits over the canonical JSON of the
  record *without* ``crc``.

Canonical JSON = ``json.dumps(obj, sort_keys=True, separators=(",", ":"),
ensure_ascii=True)``, and each line must be exactly the canonical JSON of the
record it parses to. With that rule every single-bit flip in a line is caught:
either the line stops parsing, stops being canonical, or changes the text the
CRC covers by one bit (CRC-32 detects every burst of up to 32 bits).

Writes go straight to the file descriptor (``os.write`` of the whole line, no
user-space buffer), so once :meth:`Journal.append` returns the record survives
``kill -9`` of the process; the fsync policy decides whether it also survives a
power cut before returning. A crash can leave at most one partial last line;
:func:`read_journal` reports it as ``torn_tail`` and drops it, and
:meth:`Journal.open` truncates it away before appending. Anything else wrong
(a complete bad line, the last one included; records cut out, seen as ``jseq``
gaps) is damage: reported, never appended behind, and with ``recover=True``
moved aside for inspection while a fresh file takes every good record. A
failed append cuts its partial line off again. :class:`JournalLock` keeps a
second daemon off a table's journal.

Rotation: :meth:`Journal.append` of an ``{"op":"hand"}`` record when the file
is already ``max_bytes`` or larger renames the file to
``<stem>.<first jseq>-<last jseq><suffix>`` and starts a fresh file at the same
path with that hand record. The current hand is therefore always whole in the
live file, which is all the daemon replays at start.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

FsyncPolicy = Literal["always", "batch", "never"]
"""``always``: fsync before every append returns (default). ``batch``: fsync when
:data:`BATCH_RECORDS` records or :data:`BATCH_SECONDS` have passed since the last
fsync, at a hand boundary, and on close. ``never``: leave it to the kernel."""

ENVELOPE_KEYS: Final = frozenset({"jseq", "at", "crc"})
"""Keys the journal adds to each op; replay ignores them."""

BATCH_RECORDS: Final = 64
BATCH_SECONDS: Final = 0.2

DEFAULT_MAX_BYTES: Final = 64 * 1024 * 1024
"""Rotate at the next hand once the live file reaches this size."""

MAX_LINE_BYTES: Final = 64 * 1024
# A record is a few dozen bytes; a "line" this long is garbage (e.g. a file
# of zeros after a crash on some file systems) and is not worth parsing.

_CRC_RE: Final = re.compile(r"[0-9a-f]{8}")  # fullmatch: "$" would allow a final "\n"


class JournalError(RuntimeError):
    """The journal cannot be opened or written (I/O error, corrupt middle on open)."""


def canonical_json(obj: Mapping[str, Any]) -> str:
    """The one text form of a record: sorted keys, no spaces, ASCII only."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def record_crc(record_without_crc: Mapping[str, Any]) -> str:
    """CRC-32 (8 hex digits) of the canonical JSON of ``record_without_crc``."""
    return f"{zlib.crc32(canonical_json(record_without_crc).encode('ascii')):08x}"


def encode_record(op: Mapping[str, object], jseq: int, at: float) -> bytes:
    """Return the journal line (with its newline) for ``op`` at ``jseq``/``at``."""
    clash = ENVELOPE_KEYS.intersection(op)
    if clash:
        raise ValueError(f"op uses reserved journal keys: {sorted(clash)}")
    if "op" not in op:
        raise ValueError("a journal record needs an 'op' key")
    record: dict[str, Any] = {**op, "jseq": jseq, "at": at}
    record["crc"] = record_crc(record)
    return (canonical_json(record) + "\n").encode("ascii")


def decode_line(line: bytes) -> dict[str, Any]:
    """Parse one line (without its newline); raise ``ValueError`` saying why it is bad."""
    if len(line) > MAX_LINE_BYTES:
        raise ValueError(f"line longer than {MAX_LINE_BYTES} bytes")
    try:
        text = line.decode("ascii")
    except UnicodeDecodeError:
        raise ValueError("not ASCII") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"bad JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    if canonical_json(record) != text:
        raise ValueError("not in canonical form")
    crc = record.pop("crc", None)
    if not isinstance(crc, str) or not _CRC_RE.fullmatch(crc):
        raise ValueError("missing or malformed crc")
    if record_crc(record) != crc:
        raise ValueError("crc mismatch")
    record["crc"] = crc
    jseq = record.get("jseq")
    if not isinstance(jseq, int) or isinstance(jseq, bool) or jseq < 1:
        raise ValueError("missing or bad jseq")
    at = record.get("at")
    if not isinstance(at, int | float) or isinstance(at, bool):
        raise ValueError("missing or bad at")
    if not isinstance(record.get("op"), str):
        raise ValueError("missing or bad op")
    return record


@dataclass(frozen=True, slots=True)
class JournalReadResult:
    """What :func:`read_journal` found.

    ``records``: the good records in file order (envelope keys included).
    ``torn_tail``: the file ends in a partial line (no newline) that is not a
    whole record: the write a crash interrupted. Never acknowledged, so nothing
    published depended on it; dropped, but still reported.
    ``bad_records``: ``(line number, reason)`` of every complete line that is
    not a good record, *including the last one*: a complete line cannot be torn
    by a crash (one ``os.write`` per line), so a bad one is damage to a record
    that may already have been published.
    ``gaps``: ``(line number, expected jseq, found jseq)`` where good records do
    not follow each other by more than the bad lines between them explain
    (records cut out of the file): ``found - expected`` records are missing.
    ``good_bytes``: length of the file prefix ending after the last good record
    (where an appender should continue).
    ``repaired_tail``: the last line lacked only its newline (a damaged
    terminator): its record is kept in ``records`` and this damage is reported.
    """

    records: list[dict[str, Any]]
    torn_tail: bool
    bad_records: list[tuple[int, str]] = field(default_factory=list)
    good_bytes: int = 0
    gaps: list[tuple[int, int, int]] = field(default_factory=list)
    repaired_tail: bool = False
    hidden: list[tuple[int, int, int]] = field(default_factory=list)
    """``(line, jseq named, records)``: damaged lines with no good record after them
    that still show a ``jseq`` (the end of a record behind zeros): ``records`` more
    were lost than there are bad lines (issue 21 item 3: sequence numbers tell)."""
    unreadable_bytes: int = 0
    """Bytes of damaged lines that name no jseq after the last good record: records
    were lost there that cannot be counted (at least one per line is)."""

    @property
    def damaged(self) -> bool:
        """Whether anything beyond a torn tail is wrong (records lost or altered)."""
        return bool(self.bad_records or self.gaps or self.repaired_tail)

    @property
    def records_lost(self) -> int:
        """How many records are known to be lost: bad lines plus jseq gaps."""
        return (len(self.bad_records) + sum(found - expected for _, expected, found in self.gaps)
                + sum(count for _, _, count in self.hidden))

    def damage_summary(self) -> str:
        """One line saying what is wrong and where (empty when nothing is)."""
        parts = [f"line {line}: {reason}" for line, reason in self.bad_records[:3]]
        if len(self.bad_records) > 3:
            parts.append(f"{len(self.bad_records) - 3} more bad lines")
        parts += [
            f"line {line}: jseq {found} where {expected} was due ({found - expected} records"
            " missing)"
            for line, expected, found in self.gaps[:3]
        ]
        parts += [f"line {line}: damaged lines ending with jseq {jseq} ({count} more records"
                  " lost)" for line, jseq, count in self.hidden]
        if self.unreadable_bytes:
            parts.append(f"{self.unreadable_bytes} bytes unreadable at the end (no jseq left"
                         " to count the records in them)")
        if self.repaired_tail:
            parts.append("last record lacked its newline (kept)")
        if self.torn_tail:
            parts.append("partial last line (a write cut by a crash) dropped")
        return "; ".join(parts)


def _whole_record(tail: bytes) -> dict[str, Any] | None:
    """The record of a last line without newline, if it is one whose newline alone
    is missing (cut just before it) or damaged (a flipped bit); else ``None``."""
    for candidate in (tail, tail[:-1]):
        try:
            return decode_line(candidate)
        except ValueError:
            continue
    return None


_JSEQ_SEEN: Final = re.compile(rb'"jseq":([1-9][0-9]{0,17})[,}]')
_CUT_RECORD: Final = re.compile(rb'\{("[ -~]*)?')
# A record line is printable ASCII from its "{" on; a write cut short leaves a
# prefix of one, so a last line that is not such a prefix is damage, not a torn tail.


_RECORD_TAIL_BYTES: Final = 1024
# What one record may hold after its jseq (an alert's message); damage longer
# than that behind the last jseq seen held records no number counts.


def looks_like_a_cut_record(tail: bytes) -> bool:
    """Whether ``tail`` (a last line without newline) can be a write cut short: a
    prefix of one record line, no longer than a line. Zeros (a block a power cut or
    a disk left unwritten) or text no record begins with are damage instead."""
    return len(tail) <= MAX_LINE_BYTES and _CUT_RECORD.fullmatch(tail) is not None


def _named_jseq(line: bytes) -> int:
    """The highest jseq a damaged line still shows (0 if none)."""
    return max((int(m.group(1)) for m in _JSEQ_SEEN.finditer(line[-MAX_LINE_BYTES:])),
               default=0)


def read_journal_bytes(data: bytes) -> JournalReadResult:
    """Parse a journal held in memory (see :func:`read_journal`)."""
    records: list[dict[str, Any]] = []
    bad: list[tuple[int, str]] = []
    gaps: list[tuple[int, int, int]] = []
    torn = False
    repaired = False
    good_bytes = 0
    offset = 0
    line_no = 0
    last_jseq = 0
    bad_since = 0  # bad lines since the last good record: they account for jseqs
    trailing: list[tuple[int, bytes]] = []  # those bad lines (no good record after yet)
    while offset < len(data):
        line_no += 1
        end = data.find(b"\n", offset)
        if end == -1:
            # No newline: the writer died mid-line (never acknowledged, dropped),
            # unless the line is a whole record whose newline alone was damaged.
            record = _whole_record(data[offset:])
            if record is None:
                tail = data[offset:]
                if looks_like_a_cut_record(tail):
                    torn = True
                    break
                bad.append((line_no, "not a record (and no write cut short leaves this)"))
                bad_since += 1
                trailing.append((line_no, tail))
                break
            if record["jseq"] > last_jseq:
                if last_jseq and record["jseq"] > last_jseq + 1 + bad_since:
                    gaps.append((line_no, last_jseq + 1 + bad_since, record["jseq"]))
                records.append(record)
                repaired = True
            else:
                torn = True
            break
        try:
            record = decode_line(data[offset:end])
            if record["jseq"] <= last_jseq:
                raise ValueError(f"jseq {record['jseq']} does not follow {last_jseq}")
        except ValueError as exc:
            bad.append((line_no, str(exc)))
            bad_since += 1
            trailing.append((line_no, data[offset:end]))
            offset = end + 1
            continue
        if last_jseq and record["jseq"] > last_jseq + 1 + bad_since:
            gaps.append((line_no, last_jseq + 1 + bad_since, record["jseq"]))
        last_jseq = record["jseq"]
        bad_since = 0
        trailing = []
        records.append(record)
        offset = end + 1
        good_bytes = offset
    hidden: list[tuple[int, int, int]] = []
    unreadable = 0
    if trailing:
        # No good record after these bad lines tells how many they held; the
        # end of a record behind the damage may still name its jseq.
        named = max(_named_jseq(line) for _, line in trailing)
        more = named - last_jseq - len(trailing)
        if named and more > 0:
            hidden.append((trailing[-1][0], named, more))
        last_line = trailing[-1][1]
        seen = list(_JSEQ_SEEN.finditer(last_line))
        after = len(last_line) - (seen[-1].end() if seen else 0)
        if after > _RECORD_TAIL_BYTES:
            unreadable = after  # more than the rest of one record: uncounted records
    return JournalReadResult(records, torn, bad, good_bytes, gaps, repaired, hidden, unreadable)


def read_journal(path: Path | str) -> JournalReadResult:
    """Read the journal at ``path``.

    A partial last line is dropped and flagged in ``torn_tail``; a bad complete
    line anywhere is skipped and listed in ``bad_records`` with its line number
    and the reason; records cut out show as ``gaps``. A missing file reads as
    an empty journal; any other read error raises ``OSError``.
    """
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return JournalReadResult([], False, [], 0)
    return read_journal_bytes(data)


_OUTLIVE_HANDS: Final = frozenset({"seat", "alert", "ack", "resolve", "dealer"})
"""Ops whose effect outlives the hand they were written in."""


def current_hand_records(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records from the last ``{"op":"hand"}`` on (all of them if there is none).

    This is what the daemon replays at start: a ``table`` line before the
    first hand is kept too, so the replayed engine gets the table settings, and
    so are the ``seat`` lines (players' names, issue 12), which outlive a hand,
    and the floor's records (issue 14: ``alert`` as raised, ``ack``, ``resolve``,
    ``dealer``): an alert stays open and a dealer on duty across hands.
    """
    start = None
    for index in range(len(records) - 1, -1, -1):
        if records[index].get("op") == "hand":
            start = index
            break
    if start is None:
        return list(records)
    table = [r for r in records[:start] if r.get("op") == "table"][-1:]
    names = [r for r in records[:start] if r.get("op") in _OUTLIVE_HANDS]
    return [*table, *names, *records[start:]]


def strip_envelope(record: Mapping[str, Any]) -> dict[str, Any]:
    """The op dict of a record, without ``jseq``/``at``/``crc``."""
    return {k: v for k, v in record.items() if k not in ENVELOPE_KEYS}


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def archived_last_jseq(path: Path) -> int:
    """Highest jseq recorded in the names of rotated files next to ``path`` (0 if none)."""
    newest = newest_archive(path)
    return newest[1] if newest is not None else 0


def newest_archive(path: Path) -> tuple[Path, int] | None:
    """The rotated file next to ``path`` with the highest last jseq, and that jseq."""
    pattern = re.compile(re.escape(path.stem) + r"\.(\d+)-(\d+)" + re.escape(path.suffix))
    best: tuple[Path, int] | None = None
    if path.parent.is_dir():
        for entry in path.parent.iterdir():
            match = pattern.fullmatch(entry.name)
            if match and (best is None or int(match.group(2)) > best[1]):
                best = (entry, int(match.group(2)))
    return best


@dataclass(frozen=True, slots=True)
class FileCheck:
    """What :meth:`Journal.check_file` saw: ``linked``: the file the journal holds
    still has a name (``st_nlink`` > 0); ``at_path``: its path names that same file;
    ``directory``: the journal directory exists."""

    linked: bool
    at_path: bool
    directory: bool


def running_finding(check: FileCheck) -> str | None:
    """What is wrong with the journal file being written (None: nothing); pure."""
    if not check.directory:
        return "the journal directory was removed"
    if not check.linked:
        return "the journal file was deleted"
    if not check.at_path:
        return "the journal file was moved or replaced"
    return None


class JournalLockedError(JournalError):
    """Another process holds the journal's lock (a second daemon on one table)."""


@dataclass(frozen=True, slots=True)
class Recovery:
    """What :meth:`Journal.open` did with a damaged journal (``recover=True``).

    The damaged file was renamed to ``moved_to`` and kept as it was; the live
    file now holds ``kept`` good records, records after the first damage
    renumbered to follow on. ``lost`` records are known to be missing.
    """

    moved_to: Path
    kept: int
    lost: int
    summary: str


def damaged_name(path: Path, when: float) -> Path:
    """Where a damaged journal is moved aside: ``<stem>.damaged-<UTC time><suffix>``."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when))
    candidate = path.with_name(f"{path.stem}.damaged-{stamp}{path.suffix}")
    n = 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}.damaged-{stamp}-{n}{path.suffix}")
    return candidate


def _renumbered(records: Sequence[Mapping[str, Any]]) -> bytes:
    """The good records as one journal text, jseq made consecutive again."""
    out = []
    next_jseq = int(records[0]["jseq"]) if records else 1
    for record in records:
        out.append(encode_record(strip_envelope(record), next_jseq, float(record["at"])))
        next_jseq += 1
    return b"".join(out)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _open_locked(path: Path, *, exclusive: bool = False) -> int:
    """Open ``path`` for appending (creating it; ``exclusive``: it must be new) and take
    its ``flock``, or raise :class:`JournalLockedError`: another process holds it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_EXCL if exclusive else 0)
    fd = os.open(path, flags, 0o640)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise JournalLockedError(
            f"{path}: the journal is in use by another daemon (it holds the journal file's"
            " lock); stop that one first") from None
    except OSError:
        os.close(fd)
        raise
    return fd


def write_file_synced(path: Path, data: bytes, mode: int = 0o640) -> None:
    """Write ``data`` to a new ``path`` (created with ``mode``) and fsync it, removing
    it again on failure: the journal's rewritten file and the sequence counter's
    temporary file are written this one way."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except OSError:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)


class Journal:
    """An open journal file, appended to by one thread (the engine's).

    Use :meth:`open`; :meth:`append` returns only once the record is written
    (and fsynced per policy), so the caller may publish its effects afterwards.
    A failed append (disk full, I/O error) leaves the file as it was before it:
    the partial line is cut off again, so a later append after the failure has
    passed does not land behind garbage.
    """

    def __init__(
        self,
        path: Path,
        fd: int,
        *,
        next_jseq: int,
        first_jseq: int,
        fsync: FsyncPolicy,
        max_bytes: int,
        size: int,
        found: JournalReadResult | None = None,
        recovery: Recovery | None = None,
    ) -> None:
        """Internal: use :meth:`Journal.open`."""
        self._path = path
        self._fd: int | None = fd
        self._next_jseq = next_jseq
        self._first_jseq = first_jseq  # first jseq in the live file (for the rotated name)
        self._fsync = fsync
        self._max_bytes = max_bytes
        self._size = size
        self._unsynced = 0
        self._last_sync = time.monotonic()
        self._dirty = False  # a failed write may have left bytes past _size
        self.found = found if found is not None else JournalReadResult([], False)
        """What the file held when it was opened (torn tail, damage, records)."""
        self.recovery = recovery
        """Set when the file was damaged and :meth:`open` recovered it."""
        self.header: Callable[[], Sequence[Mapping[str, object]]] | None = None
        """The ops that head every new file begun by rotation (the ``table`` line
        and the players' names), so each file replays on its own with the
        table's settings: a razz journal must not replay as stud."""
        self._new_file_due = False
        self._hand_ops: list[tuple[dict[str, Any], float]] = []
        """The current hand's ops since its ``hand`` op (not those the header carries):
        what a file begun because the live one vanished starts with (issue 21 item 1)."""
        self._incidents: list[str] = []
        self.on_incident: Callable[[str], None] | None = None
        """Told (after the append that found it) what happened to the live file when it
        was deleted, moved or its directory removed and a new one was begun."""

    @classmethod
    def open(
        cls,
        path: Path | str,
        fsync: FsyncPolicy = "always",
        max_bytes: int = DEFAULT_MAX_BYTES,
        *,
        recover: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> Journal:
        """Open (creating if needed) the journal at ``path`` for appending.

        A torn tail left by a crash is truncated away first (``found.torn_tail``
        tells the caller, who reports it). A damaged journal (bad lines, records
        missing) raises :class:`JournalError` unless ``recover``: then the good
        records are written to a fresh file, fsynced, the damaged file is moved
        aside (:func:`damaged_name`, kept for inspection) and the fresh file
        takes its place (``recovery`` says what was done). Appending behind
        damage would hide it, and refusing to start would stop the table.
        """
        if fsync not in ("always", "batch", "never"):
            raise ValueError(f"bad fsync policy {fsync!r}")
        file = Path(path)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            created = not file.exists()
            # Issue 21 item 5: the lock is the live file's own flock, taken before
            # the file is read or repaired: a lock file anyone can delete is no lock.
            fd = _open_locked(file)
        except OSError as exc:
            raise JournalError(f"{file}: cannot open journal: {exc.strerror or exc}") from exc
        try:
            existing = read_journal(file)
        except OSError as exc:
            os.close(fd)
            raise JournalError(f"{file}: cannot read journal: {exc.strerror or exc}") from exc
        recovery = None
        try:
            if existing.damaged:
                if not recover:
                    raise JournalError(
                        f"{file}: {existing.damage_summary()}; not appending to a damaged"
                        " journal")
                fd, recovery = cls._recover(file, fd, existing, clock())
            size = os.fstat(fd).st_size
            good = existing.good_bytes if recovery is None else size
            if size != good:
                os.ftruncate(fd, good)
                os.fsync(fd)
                size = good
            if created:
                _fsync_dir(file.parent)
        except OSError as exc:
            os.close(fd)
            raise JournalError(f"{file}: cannot open journal: {exc.strerror}") from exc
        except JournalError:
            os.close(fd)
            raise
        records = existing.records
        if records:
            first = int(records[0]["jseq"])
            # Recovered records were renumbered to follow on from the first.
            last = first + len(records) - 1 if recovery else int(records[-1]["jseq"])
        else:
            last = archived_last_jseq(file)
            first = last + 1
        journal = cls(
            file, fd, next_jseq=last + 1, first_jseq=first, fsync=fsync,
            max_bytes=max_bytes, size=size, found=existing, recovery=recovery,
        )
        for record in current_hand_records(records):
            journal._remember(strip_envelope(record), float(record["at"]))
        return journal

    @staticmethod
    def _recover(file: Path, damaged_fd: int, existing: JournalReadResult, now: float
                 ) -> tuple[int, Recovery]:
        """Write the good records to a fresh file (locked before it takes the name),
        move the damaged one aside; return the fresh file's descriptor."""
        fresh = file.with_name(file.name + ".recovering")
        try:
            fresh.unlink(missing_ok=True)
            fd = _open_locked(fresh, exclusive=True)
        except OSError as exc:
            raise JournalError(f"{file}: damaged ({existing.damage_summary()}) and cannot be"
                               f" recovered: {exc.strerror or exc}") from exc
        try:
            _write_all(fd, _renumbered(existing.records))
            os.fsync(fd)
            moved = damaged_name(file, now)
            os.replace(file, moved)
            os.replace(fresh, file)
            _fsync_dir(file.parent)
        except OSError as exc:
            os.close(fd)
            fresh.unlink(missing_ok=True)
            raise JournalError(
                f"{file}: damaged ({existing.damage_summary()}) and cannot be recovered:"
                f" {exc.strerror or exc}"
            ) from exc
        os.close(damaged_fd)  # its lock goes with it: the name is the fresh file's now
        return fd, Recovery(moved, len(existing.records), existing.records_lost,
                            existing.damage_summary())

    @property
    def path(self) -> Path:
        """The live journal file."""
        return self._path

    @property
    def next_jseq(self) -> int:
        """The ``jseq`` the next :meth:`append` will use."""
        return self._next_jseq

    def append(self, op: Mapping[str, object], at: float) -> int:
        """Write ``op`` with envelope keys; return its ``jseq`` once durable per policy.

        Raises ``ValueError`` for an op without ``op`` or using an envelope key,
        :class:`JournalError` if the journal is closed or the write fails.
        """
        if self._fd is None:
            raise JournalError(f"{self._path}: journal is closed")
        self._verify_file(at)
        is_hand = op.get("op") == "hand"
        if is_hand and self._size > 0 and (self._size >= self._max_bytes or self._new_file_due):
            self._rotate()
            self._new_file_due = False
            for head in self.header() if self.header is not None else ():
                self._write(head, at)
        jseq = self._write(op, at)
        self._tell_incidents()
        return jseq

    def verify(self, at: float) -> str | None:
        """Check the live file is still at its path (issue 21 item 1); if it was
        deleted, moved or its directory removed, begin a new one headed by
        :attr:`header` and the current hand's ops. Returns what happened (None:
        nothing); raises :class:`JournalError` if the new file cannot be written
        (:class:`JournalLockedError`: another process holds a file at the path)."""
        if self._fd is None:
            return None
        problem = self._verify_file(at)
        self._tell_incidents()
        return problem

    def check_file(self) -> FileCheck:
        """Whether the file this journal writes is still the one at its path."""
        assert self._fd is not None
        mine = os.fstat(self._fd)
        try:
            there = os.stat(self._path)
        except FileNotFoundError:
            return FileCheck(mine.st_nlink > 0, False, self._path.parent.is_dir())
        except OSError:
            return FileCheck(mine.st_nlink > 0, True, True)  # cannot tell: assume so
        same = (there.st_ino, there.st_dev) == (mine.st_ino, mine.st_dev)
        return FileCheck(mine.st_nlink > 0, same, True)

    def _verify_file(self, at: float) -> str | None:
        try:
            problem = running_finding(self.check_file())
        except OSError:
            return None  # fstat of an open descriptor does not fail; nothing to judge
        if problem is None:
            return None
        self._begin_again(at)
        self._incidents.append(problem)
        return problem

    def _begin_again(self, at: float) -> None:
        """A new live file at the path: the header, then the current hand's ops, with
        new jseqs (never backwards). Something else at the path that nobody locks is
        moved aside (kept) first."""
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            if self._path.exists():
                stray = _open_locked(self._path)  # JournalLockedError: another daemon's
                os.close(stray)
                os.replace(self._path, damaged_name(self._path, at))
            fd = _open_locked(self._path, exclusive=True)
        except OSError as exc:
            raise JournalError(f"{self._path}: the live file is gone and a new one cannot"
                               f" be begun: {exc.strerror or exc}") from exc
        assert self._fd is not None
        os.close(self._fd)
        self._fd = fd
        self._size = 0
        self._dirty = False
        self._first_jseq = self._next_jseq
        hand_ops, self._hand_ops = self._hand_ops, []
        for head in self.header() if self.header is not None else ():
            self._write(head, at)
        for op, when in hand_ops:
            self._write(op, when)
        try:
            os.fsync(fd)
            _fsync_dir(self._path.parent)
        except OSError as exc:
            raise JournalError(f"{self._path}: fsync failed: {exc.strerror}") from exc

    def _tell_incidents(self) -> None:
        while self._incidents and self.on_incident is not None:
            self.on_incident(self._incidents.pop(0))

    def _remember(self, op: Mapping[str, object], at: float) -> None:
        """Keep ``op`` if it belongs to the current hand (see :attr:`_hand_ops`)."""
        name = op.get("op")
        if name == "hand":
            self._hand_ops = [(dict(op), at)]
        elif name != "table" and name not in _OUTLIVE_HANDS:
            self._hand_ops.append((dict(op), at))

    def begin_new_file_at_next_hand(self) -> None:
        """Rotate at the next ``hand`` op whatever the size, so the new file is headed
        by :attr:`header` (the daemon's settings changed since this file began)."""
        self._new_file_due = True

    def _write(self, op: Mapping[str, object], at: float) -> int:
        """Append one record (no rotation); return its ``jseq``."""
        is_hand = op.get("op") == "hand"
        jseq = self._next_jseq
        line = encode_record(op, jseq, at)
        fd = self._fd
        assert fd is not None  # _rotate reopens
        try:
            if self._dirty:
                # An earlier failed write may have left part of a line.
                os.ftruncate(fd, self._size)
                self._dirty = False
            written = os.write(fd, line)
            while written < len(line):  # regular files write whole, but be exact
                written += os.write(fd, line[written:])
            if self._fsync == "always":
                os.fsync(fd)
        except OSError as exc:
            self._undo_partial(fd)
            raise JournalError(f"{self._path}: write failed: {exc.strerror}") from exc
        self._size += len(line)
        self._next_jseq += 1
        self._remember(op, at)
        if self._fsync == "always":
            self._unsynced = 0
            self._last_sync = time.monotonic()
            return jseq
        self._unsynced += 1
        batch_due = (
            is_hand
            or self._unsynced >= BATCH_RECORDS
            or time.monotonic() - self._last_sync >= BATCH_SECONDS
        )
        if self._fsync == "batch" and batch_due:
            self._sync()
        return jseq

    def _undo_partial(self, fd: int) -> None:
        """Cut a failed write's partial line off (shrinking needs no free space)."""
        try:
            os.ftruncate(fd, self._size)
        except OSError:
            self._dirty = True  # try again before the next write

    def sync(self) -> None:
        """fsync now, whatever the policy (e.g. before a clean shutdown)."""
        if self._fd is not None and self._unsynced:
            self._sync()

    def _sync(self) -> None:
        assert self._fd is not None
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise JournalError(f"{self._path}: fsync failed: {exc.strerror}") from exc
        self._unsynced = 0
        self._last_sync = time.monotonic()

    def _rotate(self) -> None:
        assert self._fd is not None
        last = self._next_jseq - 1
        archived = self._path.with_name(
            f"{self._path.stem}.{self._first_jseq}-{last}{self._path.suffix}"
        )
        fresh = archived.with_name(archived.name + ".new")
        try:
            os.fsync(self._fd)
            # Locked before it takes the live name (issue 21 item 5), and kept open
            # as the live descriptor: the lock stays on the live file.
            fd = _open_locked(fresh, exclusive=True)
        except OSError as exc:
            raise JournalError(f"{self._path}: rotation failed: {exc.strerror}") from exc
        # Swap names only once the new file exists, so a failure leaves the live
        # file in place and appendable.
        old = self._fd
        os.replace(self._path, archived)
        os.replace(fresh, self._path)
        self._fd = fd
        os.close(old)
        _fsync_dir(self._path.parent)
        self._size = 0
        self._first_jseq = self._next_jseq
        self._unsynced = 0

    def close(self) -> None:
        """fsync (unless policy ``never``) and close; further appends raise."""
        if self._fd is None:
            return
        try:
            if self._fsync != "never":
                self.sync()
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def last_hand_number(records: Sequence[Mapping[str, Any]]) -> int:
    """The highest hand number the records name (``hand_id`` of ``hand`` ops).

    Journals written before hands carried their number count their ``hand``
    ops instead, so the number never goes backwards on such a journal either.
    """
    best = 0
    count = 0
    for record in records:
        if record.get("op") == "hand":
            count += 1
            hand_id = record.get("hand_id")
            if isinstance(hand_id, int) and not isinstance(hand_id, bool):
                best = max(best, hand_id)
    return max(best, count)


def _name_holder(fd: int) -> None:
    info = (f"pid {os.getpid()} on {socket.gethostname()} since"
            f" {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n").encode("ascii")
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, info, 0)
    except OSError:
        pass  # naming the holder is a courtesy; the lock itself holds


class JournalLock:
    """An exclusive lock on one table's journal, held for the daemon's lifetime.

    ``flock`` on ``<directory>/<table>.lock``: the kernel drops it when the
    process dies, however it dies, so a ``kill -9`` never leaves a stale lock.
    A lock file can be deleted, so the live journal file holds its own ``flock``
    too (taken by :meth:`Journal.open`, issue 21 item 5), and :meth:`check` takes
    a deleted or replaced lock file again.
    The file names the holder (pid, host, start time) so a refused second
    daemon can say who has the table. If the file cannot be created (read-only
    directory) the directory itself is locked instead.
    """

    def __init__(self, fd: int, path: Path) -> None:
        """Internal: use :meth:`acquire`."""
        self._fd: int | None = fd
        self.path = path

    @classmethod
    def acquire(cls, directory: Path, table: str) -> JournalLock:
        """Take the lock or raise :class:`JournalLockedError` naming the holder."""
        path = directory / f"{table}.lock"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o640)
            is_file = True
        except OSError:
            try:
                fd = os.open(directory, os.O_RDONLY)
            except OSError as exc:
                raise JournalError(f"{directory}: cannot open journal directory:"
                                   f" {exc.strerror}") from exc
            is_file = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = ""
            if is_file:
                try:
                    holder = os.pread(fd, 512, 0).decode("ascii", "replace").strip()
                except OSError:
                    holder = ""
            os.close(fd)
            raise JournalLockedError(
                f"{path}: the journal of table {table!r} is in use by another daemon"
                f" ({holder or 'holder unknown'}); stop that one first"
            ) from None
        if is_file:
            _name_holder(fd)
        return cls(fd, path)

    def check(self) -> bool:
        """Whether the lock file had to be taken again (issue 21 item 5): deleted or
        replaced, it is created again, locked and names this process. (The journal
        file's own lock keeps a second daemon out meanwhile.) False if it is ours,
        or cannot be taken now (its directory is gone: tried again later)."""
        if self._fd is None:
            return False
        try:
            there = os.stat(self.path)
            mine = os.fstat(self._fd)
            if (there.st_ino, there.st_dev) == (mine.st_ino, mine.st_dev):
                return False
        except FileNotFoundError:
            pass
        except OSError:
            return False
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o640)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)  # held by a process that the journal's own lock refuses
            return False
        _name_holder(fd)
        os.close(self._fd)
        self._fd = fd
        return True

    def release(self) -> None:
        """Drop the lock (also dropped by the kernel when the process exits)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
