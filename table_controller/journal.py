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
:meth:`Journal.open` truncates it away before appending.

Rotation: :meth:`Journal.append` of an ``{"op":"hand"}`` record when the file
is already ``max_bytes`` or larger renames the file to
``<stem>.<first jseq>-<last jseq><suffix>`` and starts a fresh file at the same
path with that hand record. The current hand is therefore always whole in the
live file, which is all the daemon replays at start.
"""

from __future__ import annotations

import json
import os
import re
import time
import zlib
from collections.abc import Mapping, Sequence
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

_CRC_RE: Final = re.compile(r"^[0-9a-f]{8}$")


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
    if not isinstance(crc, str) or not _CRC_RE.match(crc):
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
    ``torn_tail``: the last line was incomplete or corrupt and was dropped.
    ``bad_records``: ``(line number, reason)`` of corrupt lines *before* the last.
    ``good_bytes``: length of the file prefix ending after the last good record
    (where an appender should continue).
    """

    records: list[dict[str, Any]]
    torn_tail: bool
    bad_records: list[tuple[int, str]] = field(default_factory=list)
    good_bytes: int = 0


def read_journal_bytes(data: bytes) -> JournalReadResult:
    """Parse a journal held in memory (see :func:`read_journal`)."""
    records: list[dict[str, Any]] = []
    bad: list[tuple[int, str]] = []
    torn = False
    good_bytes = 0
    offset = 0
    line_no = 0
    last_jseq = 0
    while offset < len(data):
        line_no += 1
        end = data.find(b"\n", offset)
        if end == -1:
            # No newline: the writer died mid-line. Never acknowledged, so dropped.
            torn = True
            break
        is_last = end + 1 == len(data)
        try:
            record = decode_line(data[offset:end])
            if record["jseq"] <= last_jseq:
                raise ValueError(f"jseq {record['jseq']} does not follow {last_jseq}")
        except ValueError as exc:
            if is_last:
                torn = True
            else:
                bad.append((line_no, str(exc)))
            offset = end + 1
            continue
        last_jseq = record["jseq"]
        records.append(record)
        offset = end + 1
        good_bytes = offset
    return JournalReadResult(records, torn, bad, good_bytes)


def read_journal(path: Path | str) -> JournalReadResult:
    """Read the journal at ``path``.

    A torn last record (partial line, bad JSON or bad CRC at the very end) is
    dropped and flagged in ``torn_tail``; a bad record in the middle is skipped
    and listed in ``bad_records`` with its line number and the reason.
    A missing file reads as an empty journal.
    """
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return JournalReadResult([], False, [], 0)
    return read_journal_bytes(data)


def current_hand_records(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records from the last ``{"op":"hand"}`` on (all of them if there is none).

    This is what the daemon replays at start: a ``table`` line before the
    first hand is kept too, so the replayed engine gets the table settings.
    """
    start = None
    for index in range(len(records) - 1, -1, -1):
        if records[index].get("op") == "hand":
            start = index
            break
    if start is None:
        return list(records)
    table = [r for r in records[:start] if r.get("op") == "table"][-1:]
    return [*table, *records[start:]]


def strip_envelope(record: Mapping[str, Any]) -> dict[str, Any]:
    """The op dict of a record, without ``jseq``/``at``/``crc``."""
    return {k: v for k, v in record.items() if k not in ENVELOPE_KEYS}


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _archived_last_jseq(path: Path) -> int:
    """Highest jseq recorded in the names of rotated files next to ``path`` (0 if none)."""
    pattern = re.compile(re.escape(path.stem) + r"\.(\d+)-(\d+)" + re.escape(path.suffix) + "$")
    best = 0
    if path.parent.is_dir():
        for entry in path.parent.iterdir():
            match = pattern.match(entry.name)
            if match:
                best = max(best, int(match.group(2)))
    return best


class Journal:
    """An open journal file, appended to by one thread (the engine's).

    Use :meth:`open`; :meth:`append` returns only once the record is written
    (and fsynced per policy), so the caller may publish its effects afterwards.
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

    @classmethod
    def open(
        cls,
        path: Path | str,
        fsync: FsyncPolicy = "always",
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> Journal:
        """Open (creating if needed) the journal at ``path`` for appending.

        A torn tail left by a crash is truncated away first. A corrupt record in
        the middle raises :class:`JournalError`: appending after it would hide
        damage the operator must look at.
        """
        if fsync not in ("always", "batch", "never"):
            raise ValueError(f"bad fsync policy {fsync!r}")
        file = Path(path)
        file.parent.mkdir(parents=True, exist_ok=True)
        existing = read_journal(file)
        if existing.bad_records:
            line, reason = existing.bad_records[0]
            raise JournalError(f"{file}: line {line}: {reason}; not appending to a damaged journal")
        created = not file.exists()
        try:
            fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
        except OSError as exc:
            raise JournalError(f"{file}: cannot open journal: {exc.strerror}") from exc
        size = os.fstat(fd).st_size
        if size != existing.good_bytes:
            os.ftruncate(fd, existing.good_bytes)
            os.fsync(fd)
            size = existing.good_bytes
        if created:
            _fsync_dir(file.parent)
        if existing.records:
            last = int(existing.records[-1]["jseq"])
            first = int(existing.records[0]["jseq"])
        else:
            last = _archived_last_jseq(file)
            first = last + 1
        return cls(
            file, fd, next_jseq=last + 1, first_jseq=first, fsync=fsync,
            max_bytes=max_bytes, size=size,
        )

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
        is_hand = op.get("op") == "hand"
        if is_hand and self._size >= self._max_bytes:
            self._rotate()
        jseq = self._next_jseq
        line = encode_record(op, jseq, at)
        fd = self._fd
        assert fd is not None  # _rotate reopens
        try:
            written = os.write(fd, line)
            while written < len(line):  # regular files write whole, but be exact
                written += os.write(fd, line[written:])
        except OSError as exc:
            raise JournalError(f"{self._path}: write failed: {exc.strerror}") from exc
        self._size += len(line)
        self._next_jseq += 1
        self._unsynced += 1
        batch_due = (
            is_hand
            or self._unsynced >= BATCH_RECORDS
            or time.monotonic() - self._last_sync >= BATCH_SECONDS
        )
        if self._fsync == "always" or (self._fsync == "batch" and batch_due):
            self._sync()
        return jseq

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
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = None
        archived = self._path.with_name(
            f"{self._path.stem}.{self._first_jseq}-{last}{self._path.suffix}"
        )
        os.replace(self._path, archived)
        self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
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
