"""The broadcast service's backlog on disk: every message it takes, before any output sees it.

One SQLite file (WAL, ``synchronous=FULL``) holds:

* ``messages``: every message taken from a table's feed, in the order taken, with a
  service sequence number ``seq`` (the SSE event id pages resume from), the feed
  (``secure``/``public``), the table, the kind (``state``, ``event``, ``alert``,
  ``notice``, ``reader``, ``status``), the hand, the table's own timestamp and the
  payload. ``(feed, table, src_seq)`` is unique: the daemon's per-table ``seq``
  never goes backwards, so a QoS 1 redelivery or the retained state seen again
  after a reconnect is stored once (``INSERT OR IGNORE``);
* ``outputs``: each output's delay, board-sync offset, release cursor and where its
  delay came from (``config`` or ``producer``, docs/broadcast.md "Which delay is in
  force").

**Per-output event ids (issue 22).** ``seq`` counts every message of every feed, so
an id taken from it would show a public page that a secure-only message (a rule-19
call on ``secure/notices``, an equity update) happened between two of its own.
Each message therefore also gets dense numbers within its feed and table, one per
*id class*: ``n_all`` (every message: the producer page, and the venue, whose
public feed has only states and events), ``n_se`` (states and events: a delayed
output that shows every hole card) and ``n_vis`` (states and events, without a
secure state that only adds equity: a delayed output that hides any hand). A page's
SSE id is its class's number, so its ids are consecutive whatever else the table
published; a secure state that only adds equity is left out of ``n_vis`` because
whether and when it comes depends on the hidden cards.

A message is committed before :meth:`Store.add` returns, so an output can only
release what is on disk: after ``kill -9`` the restarted service rebuilds every
delay line from the rows past its cursor (nothing lost), releases by the table's
timestamps against the persisted delay (nothing early), and pages resume from
their last event id (nothing repeated). Payloads stay on disk; the delay lines
hold ``(seq, ts)`` only, which bounds RAM for a long delay.
"""

from __future__ import annotations

import errno
import fcntl
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
CREATE TABLE IF NOT EXISTS counters (
    feed TEXT NOT NULL,
    tbl TEXT NOT NULL,
    cls TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (feed, tbl, cls)
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outputs (
    name TEXT PRIMARY KEY,
    delay_s REAL NOT NULL,
    offset_ms INTEGER NOT NULL,
    released INTEGER NOT NULL,
    source TEXT NOT NULL DEFAULT 'producer'
);
"""

ID_CLASSES: Final = ("n_all", "n_se", "n_vis")
"""The per-output id classes (module docstring)."""

_CLASS_INDEXES: Final = "".join(
    f"CREATE INDEX IF NOT EXISTS messages_{c} ON messages (feed, tbl, {c});"
    for c in ID_CLASSES)

EQUITY_SEAT_FIELDS: Final = ("equity", "win", "tie", "stderr", "outs")
EQUITY_STATE_FIELDS: Final = ("equity_info",)
ENVELOPE: Final = ("seq", "ts")


def state_key(payload: dict[str, Any]) -> str:
    """A secure state without its envelope and equity: two states with the same key
    differ only in equity (the second is an equity update)."""
    seats = [{k: v for k, v in row.items() if k not in EQUITY_SEAT_FIELDS}
             for row in payload.get("seats", []) or [] if isinstance(row, dict)]
    rest = {k: v for k, v in payload.items()
            if k not in ENVELOPE and k not in EQUITY_STATE_FIELDS and k != "seats"}
    return json.dumps([rest, seats], sort_keys=True, separators=(",", ":"))


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
    id: int | None = None
    """The message's number in the id class it was read in (its SSE id)."""


@dataclass(frozen=True, slots=True)
class OutputRow:
    """An output's persisted settings and cursor."""

    delay_s: float
    offset_ms: int
    released: int
    source: str = "producer"


class StoreInUseError(RuntimeError):
    """Another process holds the backlog file (a second service on the same file)."""


PRIVATE_MODE: Final = 0o600
"""The backlog's mode when the service creates it."""


class Store:
    """The SQLite backlog (module docstring). One per service; not thread-safe.

    The file is held with an exclusive lock (``<state_file>.lock``) while open: a
    second service on the same file would share its stored MQTT client id and knock
    the running one off the broker (issue 22), so it stops with
    :class:`StoreInUseError` before it connects to anything.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.parent.is_dir():
            # Never created: a typo must not leave a new directory tree behind (issue 24).
            raise FileNotFoundError(errno.ENOENT, f"the directory {path.parent} does not"
                                    " exist", str(path))
        self._lock_fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self._lock_fd, 32, 0).decode(errors="replace").strip()
            os.close(self._lock_fd)
            raise StoreInUseError(
                f"{path} is in use by another stud-table broadcast"
                f"{f' (pid {holder})' if holder.isdigit() else ''}") from None
        os.ftruncate(self._lock_fd, 0)
        os.pwrite(self._lock_fd, str(os.getpid()).encode(), 0)
        try:
            self._open(path)
        except BaseException:
            os.close(self._lock_fd)
            raise

    def _open(self, path: Path) -> None:
        # The backlog holds every hole card: owner-only whatever the umask, made so
        # before SQLite opens it (its -wal and -shm files take the same mode). The
        # directory must exist (checked above): it is never created here.
        # An existing file keeps its group bits (0640 to the service group is fine)
        # but loses any for others.
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
        self._migrate()
        self._db.executescript(_CLASS_INDEXES)
        self._last_state: dict[str, str] = {}
        for tbl, body in self._db.execute(
                "SELECT tbl, body FROM messages WHERE seq IN (SELECT max(seq) FROM messages"
                " WHERE feed = 'secure' AND kind = 'state' GROUP BY tbl)"):
            self._last_state[tbl] = state_key(json.loads(body))

    def _migrate(self) -> None:
        """Add the id classes and the delay source to a file of an older version, and
        number its rows as :meth:`add` would have."""
        cols = {row[1] for row in self._db.execute("PRAGMA table_info(messages)")}
        if "n_all" not in cols:
            self._db.execute("BEGIN IMMEDIATE")
            for c in ID_CLASSES:
                self._db.execute(f"ALTER TABLE messages ADD COLUMN {c} INTEGER")
            last: dict[str, str] = {}
            rows = self._db.execute(
                "SELECT seq, feed, tbl, kind, body FROM messages ORDER BY seq").fetchall()
            for seq, feed, tbl, kind, body in rows:
                numbers = self._numbers(feed, tbl, kind, json.loads(body), last)
                self._db.execute(
                    "UPDATE messages SET n_all = ?, n_se = ?, n_vis = ? WHERE seq = ?",
                    (*numbers, seq))
            self._db.execute("COMMIT")
        out_cols = {row[1] for row in self._db.execute("PRAGMA table_info(outputs)")}
        if "source" not in out_cols:
            # A stored delay of an older version may have been set on the producer
            # page: it is kept unless the configuration asks for a longer one.
            self._db.execute("ALTER TABLE outputs ADD COLUMN source TEXT NOT NULL"
                             " DEFAULT 'producer'")

    def _numbers(self, feed: str, table: str, kind: str, payload: dict[str, Any],
                 last_state: dict[str, str]) -> tuple[int | None, int | None, int | None]:
        """The message's number in each id class (``None``: not in it); counts it."""
        classes = ["n_all"]
        if kind in ("state", "event"):
            classes.append("n_se")
            if kind == "state" and feed == "secure":
                key = state_key(payload)
                if last_state.get(table) != key:
                    classes.append("n_vis")
                last_state[table] = key
            else:
                classes.append("n_vis")
        got: dict[str, int] = {}
        for cls in classes:
            row = self._db.execute(
                "INSERT INTO counters (feed, tbl, cls, n) VALUES (?, ?, ?, 1)"
                " ON CONFLICT(feed, tbl, cls) DO UPDATE SET n = n + 1 RETURNING n",
                (feed, table, cls)).fetchone()
            got[cls] = int(row[0])
        return got.get("n_all"), got.get("n_se"), got.get("n_vis")

    def close(self) -> None:
        """Close the file (everything is committed already) and let go of its lock."""
        self._db.close()
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = -1

    # ------------------------------------------------------------------ messages

    def add(self, feed: str, table: str, kind: str, payload: dict[str, Any]) -> Stored | None:
        """Store one message; ``None`` if it is a repeat of one already stored."""
        src_seq = int(payload.get("seq", 0))
        ts = float(payload.get("ts", 0.0))
        hand = payload.get("hand")
        ekind = payload.get("kind") if kind == "event" else None
        body = json.dumps(payload, separators=(",", ":"))
        self._db.execute("BEGIN IMMEDIATE")
        try:
            cur = self._db.execute(
                "INSERT OR IGNORE INTO messages (feed, tbl, kind, ekind, hand, src_seq, ts,"
                " body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (feed, table, kind, ekind, hand if isinstance(hand, int) else None, src_seq,
                 ts, body),
            )
            if cur.rowcount == 0:
                self._db.execute("ROLLBACK")
                return None
            seq = cur.lastrowid
            assert seq is not None
            last = dict(self._last_state)
            numbers = self._numbers(feed, table, kind, payload, last)
            self._db.execute("UPDATE messages SET n_all = ?, n_se = ?, n_vis = ? WHERE seq = ?",
                             (*numbers, seq))
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._last_state = last  # only once it is on disk
        return Stored(seq, feed, table, kind, hand if isinstance(hand, int) else None, ts,
                      payload)

    def pending(self, feed: str, after: int) -> Iterator[tuple[int, float]]:
        """``(seq, ts)`` of the messages of ``feed`` past ``after``, in order."""
        yield from self._db.execute(
            "SELECT seq, ts FROM messages WHERE feed = ? AND seq > ? ORDER BY seq",
            (feed, after),
        )

    def read(self, feed: str, table: str, after: int, upto: int, cls: str = "n_all", *,
             limit: int = 2000) -> list[Stored]:
        """Messages of ``feed`` and ``table`` in id class ``cls`` with a number above
        ``after`` and ``seq <= upto`` (released), in order, numbered (``Stored.id``)."""
        col = _cls(cls)
        rows = self._db.execute(
            f"SELECT seq, kind, hand, ts, body, {col} FROM messages WHERE feed = ?"
            f" AND tbl = ? AND {col} > ? AND seq <= ? ORDER BY seq LIMIT ?",
            (feed, table, after, upto, limit),
        ).fetchall()
        return [Stored(seq, feed, table, kind, hand, ts, json.loads(body), n)
                for seq, kind, hand, ts, body, n in rows]

    def released_id(self, feed: str, table: str, upto: int, cls: str = "n_all") -> int:
        """The newest number of class ``cls`` at or below ``seq`` ``upto`` (0: none): the
        newest id an output that released up to ``upto`` has given for ``table``."""
        col = _cls(cls)
        row = self._db.execute(
            f"SELECT max({col}) FROM messages WHERE feed = ? AND tbl = ? AND seq <= ?",
            (feed, table, upto)).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def snapshot_start(self, feed: str, table: str, upto: int, cls: str = "n_all") -> int:
        """Where a page that has nothing starts (a number of class ``cls``): just before
        the newest ``state`` at or below ``upto`` (it carries the whole table), or 0."""
        col = _cls(cls)
        row = self._db.execute(
            f"SELECT max({col}) FROM messages WHERE feed = ? AND tbl = ? AND kind = 'state'"
            " AND seq <= ?",
            (feed, table, upto),
        ).fetchone()
        return int(row[0]) - 1 if row and row[0] is not None else 0

    def context(self, feed: str, table: str, upto: int) -> list[Stored]:
        """The newest ``status`` and each reader's newest ``reader`` message with
        ``n_all`` at or below ``upto``, in order: a page starting from the newest state
        (:meth:`snapshot_start`) would never learn them otherwise, since the daemon
        publishes them (retained) only when they change."""
        rows = self._db.execute(
            "SELECT seq, kind, hand, ts, body, n_all FROM messages WHERE seq IN ("
            " SELECT max(seq) FROM messages WHERE feed = ? AND tbl = ? AND n_all <= ?"
            " AND kind IN ('status', 'reader')"
            " GROUP BY kind, CASE kind WHEN 'reader' THEN json_extract(body, '$.reader') END)"
            " ORDER BY seq",
            (feed, table, upto),
        ).fetchall()
        return [Stored(seq, feed, table, kind, hand, ts, json.loads(body), n)
                for seq, kind, hand, ts, body, n in rows]

    def result(self, table: str, hand: int | None,
               before: int | None = None) -> dict[str, Any] | None:
        """The secure ``hand_result`` of ``hand`` at ``table`` if it was taken yet
        (``before``: only one taken before the message of ``seq`` ``before``)."""
        if hand is None:
            return None
        row = self._db.execute(
            "SELECT body FROM messages WHERE feed = 'secure' AND tbl = ? AND hand = ?"
            " AND ekind = 'hand_result' AND seq < ? ORDER BY seq DESC LIMIT 1",
            (table, hand, before if before is not None else 2**62),
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
            "SELECT delay_s, offset_ms, released, source FROM outputs WHERE name = ?", (name,)
        ).fetchone()
        return OutputRow(float(row[0]), int(row[1]), int(row[2]), str(row[3])) if row else None

    def save_output(self, name: str, delay_s: float, offset_ms: int, released: int,
                    source: str = "config") -> None:
        """Persist an output's settings, cursor and delay source (committed on return)."""
        self._db.execute(
            "INSERT INTO outputs (name, delay_s, offset_ms, released, source)"
            " VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(name) DO UPDATE SET delay_s = excluded.delay_s,"
            " offset_ms = excluded.offset_ms, released = excluded.released,"
            " source = excluded.source",
            (name, delay_s, offset_ms, released, source),
        )


def _cls(cls: str) -> str:
    if cls not in ID_CLASSES:
        raise ValueError(f"unknown id class {cls!r}")
    return cls
