"""The broadcast service's backlog on disk: every message it takes, before any output sees it.

One SQLite file (WAL, ``synchronous=FULL``) holds:

* ``messages``: every message taken from a table's feed, in the order taken, with a
  service sequence number ``seq`` (the SSE event id pages resume from), the feed
  (``secure``/``public``), the table, the kind (``state``, ``event``, ``alert``,
  ``notice``, ``reader``, ``status``), the hand, the table's own timestamp and the
  payload. ``(feed, table, src_seq)`` is unique: the daemon's per-table ``seq``
  never goes backwards, so a QoS 1 redelivery or the retained state seen again
  after a reconnect is stored once (``INSERT OR IGNORE``);
* ``outputs``: each output's delay, board-sync offset and release cursor.

A message is committed before :meth:`Store.add` returns, so an output can only
release what is on disk: after ``kill -9`` the restarted service rebuilds every
delay line from the rows past its cursor (nothing lost), releases by the table's
timestamps against the persisted delay (nothing early), and pages resume from
their last event id (nothing repeated). Payloads stay on disk; the delay lines
hold ``(seq, ts)`` only, which bounds RAM for a long delay.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    feed TEXT NOT NULL,
    tbl TEXT NOT NULL,
    kind TEXT NOT NULL,
    ekind TEXT,
    hand INTEGER,
    src_seq INTEGER NOT NULL,
    ts REAL NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (feed, tbl, kind, src_seq, ts)
);
CREATE INDEX IF NOT EXISTS messages_result ON messages (tbl, hand, ekind);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outputs (
    name TEXT PRIMARY KEY,
    delay_s REAL NOT NULL,
    offset_ms INTEGER NOT NULL,
    released INTEGER NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class Stored:
    """One message of the backlog."""

    seq: int
    feed: str
    table: str
    kind: str
    hand: int | None
    ts: float
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class OutputRow:
    """An output's persisted settings and cursor."""

    delay_s: float
    offset_ms: int
    released: int


PRIVATE_MODE: Final = 0o600
"""The backlog's mode when the service creates it."""


class Store:
    """The SQLite backlog (module docstring). One per service; not thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # The backlog holds every hole card: owner-only whatever the umask, made so
        # before SQLite opens it (its -wal and -shm files take the same mode). The
        # directory must exist (the config checks it): it is never created here.
        # An existing file keeps its group bits (0640 to the service group is fine)
        # but loses any for others.
        if not path.parent.is_dir():
            # Never created: a typo must not leave a new directory tree behind (issue 24).
            raise FileNotFoundError(errno.ENOENT, f"the directory {path.parent} does not"
                                    " exist", str(path))
        try:
            fd, created = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, PRIVATE_MODE), True
        except FileExistsError:
            fd, created = os.open(path, os.O_RDWR), False
        try:
            mode = os.fstat(fd).st_mode & 0o777
            wanted = PRIVATE_MODE if created else mode & ~0o007
            if mode != wanted:
                os.fchmod(fd, wanted)
        finally:
            os.close(fd)
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        """Close the file (everything is committed already)."""
        self._db.close()

    # ------------------------------------------------------------------ messages

    def add(self, feed: str, table: str, kind: str, payload: dict[str, Any]) -> Stored | None:
        """Store one message; ``None`` if it is a repeat of one already stored."""
        src_seq = int(payload.get("seq", 0))
        ts = float(payload.get("ts", 0.0))
        hand = payload.get("hand")
        ekind = payload.get("kind") if kind == "event" else None
        body = json.dumps(payload, separators=(",", ":"))
        cur = self._db.execute(
            "INSERT OR IGNORE INTO messages (feed, tbl, kind, ekind, hand, src_seq, ts, body)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (feed, table, kind, ekind, hand if isinstance(hand, int) else None, src_seq, ts,
             body),
        )
        if cur.rowcount == 0:
            return None
        seq = cur.lastrowid
        assert seq is not None
        return Stored(seq, feed, table, kind, hand if isinstance(hand, int) else None, ts,
                      payload)

    def pending(self, feed: str, after: int) -> Iterator[tuple[int, float]]:
        """``(seq, ts)`` of the messages of ``feed`` past ``after``, in order."""
        yield from self._db.execute(
            "SELECT seq, ts FROM messages WHERE feed = ? AND seq > ? ORDER BY seq",
            (feed, after),
        )

    def read(self, feed: str, table: str, after: int, upto: int,
             limit: int = 2000) -> list[Stored]:
        """Messages of ``feed`` and ``table`` with ``after < seq <= upto``, in order."""
        rows = self._db.execute(
            "SELECT seq, kind, hand, ts, body FROM messages WHERE feed = ? AND tbl = ?"
            " AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
            (feed, table, after, upto, limit),
        ).fetchall()
        return [Stored(seq, feed, table, kind, hand, ts, json.loads(body))
                for seq, kind, hand, ts, body in rows]

    def snapshot_start(self, feed: str, table: str, upto: int) -> int:
        """Where a page that has nothing starts: just before the newest ``state`` at or
        below ``upto`` (it carries the whole table), or 0 when there is none."""
        row = self._db.execute(
            "SELECT max(seq) FROM messages WHERE feed = ? AND tbl = ? AND kind = 'state'"
            " AND seq <= ?",
            (feed, table, upto),
        ).fetchone()
        return int(row[0]) - 1 if row and row[0] is not None else 0

    def context(self, feed: str, table: str, upto: int) -> list[Stored]:
        """The newest ``status`` and each reader's newest ``reader`` message at or below
        ``upto``, in order: a page starting from the newest state
        (:meth:`snapshot_start`) would never learn them otherwise, since the daemon
        publishes them (retained) only when they change."""
        rows = self._db.execute(
            "SELECT seq, kind, hand, ts, body FROM messages WHERE seq IN ("
            " SELECT max(seq) FROM messages WHERE feed = ? AND tbl = ? AND seq <= ?"
            " AND kind IN ('status', 'reader')"
            " GROUP BY kind, CASE kind WHEN 'reader' THEN json_extract(body, '$.reader') END)"
            " ORDER BY seq",
            (feed, table, upto),
        ).fetchall()
        return [Stored(seq, feed, table, kind, hand, ts, json.loads(body))
                for seq, kind, hand, ts, body in rows]

    def result(self, table: str, hand: int | None) -> dict[str, Any] | None:
        """The secure ``hand_result`` of ``hand`` at ``table`` if it was taken yet."""
        if hand is None:
            return None
        row = self._db.execute(
            "SELECT body FROM messages WHERE feed = 'secure' AND tbl = ? AND hand = ?"
            " AND ekind = 'hand_result' ORDER BY seq DESC LIMIT 1",
            (table, hand),
        ).fetchone()
        return json.loads(row[0]) if row else None

    def last_seq(self) -> int:
        """The newest service sequence number (0: empty)."""
        row = self._db.execute("SELECT max(seq) FROM messages").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def count(self) -> int:
        """Messages held on disk."""
        return int(self._db.execute("SELECT count(*) FROM messages").fetchone()[0])

    def prune(self, before_ts: float, below_seq: int) -> int:
        """Drop messages produced before ``before_ts`` and already released by every
        output (``seq < below_seq``); return how many. Keeps the file bounded."""
        cur = self._db.execute(
            "DELETE FROM messages WHERE ts < ? AND seq < ?", (before_ts, below_seq)
        )
        return cur.rowcount

    def meta(self, key: str, make: str) -> str:
        """A persisted setting: ``key``'s value, set to ``make`` the first time."""
        self._db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, make))
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0])

    # ------------------------------------------------------------------ outputs

    def output(self, name: str) -> OutputRow | None:
        """An output's persisted settings and cursor, if it ran before."""
        row = self._db.execute(
            "SELECT delay_s, offset_ms, released FROM outputs WHERE name = ?", (name,)
        ).fetchone()
        return OutputRow(float(row[0]), int(row[1]), int(row[2])) if row else None

    def save_output(self, name: str, delay_s: float, offset_ms: int, released: int) -> None:
        """Persist an output's settings and cursor (committed on return)."""
        self._db.execute(
            "INSERT INTO outputs (name, delay_s, offset_ms, released) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(name) DO UPDATE SET delay_s = excluded.delay_s,"
            " offset_ms = excluded.offset_ms, released = excluded.released",
            (name, delay_s, offset_ms, released),
        )
