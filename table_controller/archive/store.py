"""The archive's database: schema, idempotent writes and the query API.

Why SQLAlchemy 2 Core (not the ORM, not hand-written SQL): one schema and one set of
queries run on SQLite (the default, an embedded file) and PostgreSQL (a casino's central
archive); the dialects' own ``INSERT ... ON CONFLICT`` make every write idempotent; the
library is well kept, typed, and does the connection pooling, reconnection
(``pool_pre_ping``) and parameter quoting we would otherwise write by hand. psycopg 3 is
the PostgreSQL driver.

Why a ``schema_version`` table with explicit steps instead of Alembic: the schema is a
handful of tables owned by this one module; Alembic would add a migration directory, an
``env.py`` and its own configuration to every install for what is, today, one step.
:data:`MIGRATIONS` lists the steps; :meth:`ArchiveStore.migrate` applies the missing ones
in one transaction at start (under an advisory lock on PostgreSQL, so several archive
instances starting together do not race) and refuses a database newer than the code.

Writes (:meth:`ArchiveStore.write`) take validated items (:func:`parse_item`): a hand
record, an alert as raised, or an alert's lifecycle change. A hand delivered twice (QoS 1
redelivery, a replay, two instances) is stored once: ``hand_id`` is the primary key and
the insert does nothing on conflict. An alert's rows merge: whatever arrives first
(the alert, the hand listing it, or a change) creates the row, the others fill it in, and
its state only moves forward (open -> acknowledged -> resolved).

Down cards: a public archive (``secure=False``) stores every record with ``down_cards``
set to ``null`` whatever arrives; only a secure archive keeps them.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

SCHEMA_VERSION: Final = 1
"""The schema this code writes and reads; :data:`MIGRATIONS` leads up to it."""

MAX_TEXT: Final = 2000
"""Longest free text (a message, a note, a name) kept in a column; the record keeps all."""

metadata = sa.MetaData()

schema_version = sa.Table(
    "schema_version", metadata,
    sa.Column("id", sa.Integer, primary_key=True),  # always 1: one row
    sa.Column("version", sa.Integer, nullable=False),
)

meta = sa.Table(
    "archive_meta", metadata,
    sa.Column("key", sa.String(200), primary_key=True),
    sa.Column("value", sa.String(2000), nullable=False),
)

hands = sa.Table(
    "hands", metadata,
    sa.Column("hand_id", sa.String(200), primary_key=True),
    sa.Column("table_id", sa.String(64), nullable=False),
    sa.Column("hand_no", sa.Integer, nullable=True),
    sa.Column("dealer_id", sa.String(200), nullable=True),
    sa.Column("dealer_name", sa.String(200), nullable=True),
    sa.Column("game", sa.String(32), nullable=True),
    sa.Column("started_ts", sa.Float, nullable=True),
    sa.Column("ended_ts", sa.Float, nullable=False),
    sa.Column("ended", sa.String(32), nullable=True),
    sa.Column("pot", sa.BigInteger, nullable=True),
    sa.Column("winners", sa.JSON, nullable=True),
    sa.Column("n_alerts", sa.Integer, nullable=False),
    sa.Column("has_down_cards", sa.Boolean, nullable=False),
    sa.Column("record", sa.JSON, nullable=False),
    sa.Column("archived_ts", sa.Float, nullable=False),
    sa.Index("ix_hands_table_ended", "table_id", "ended_ts"),
    sa.Index("ix_hands_dealer_ended", "dealer_id", "ended_ts"),
    sa.Index("ix_hands_ended", "ended_ts"),
)

hand_players = sa.Table(
    "hand_players", metadata,
    sa.Column("hand_id", sa.String(200), sa.ForeignKey("hands.hand_id"), primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=True),
    sa.Column("stack_start", sa.BigInteger, nullable=True),
    sa.Column("stack_end", sa.BigInteger, nullable=True),
    sa.Index("ix_hand_players_name", "name"),
)

alerts = sa.Table(
    "alerts", metadata,
    sa.Column("id", sa.String(200), primary_key=True),
    sa.Column("table_id", sa.String(64), nullable=False),
    sa.Column("hand_no", sa.Integer, nullable=True),
    sa.Column("code", sa.String(64), nullable=True),  # null until the alert itself arrives
    sa.Column("severity", sa.String(16), nullable=True),
    sa.Column("message", sa.String(MAX_TEXT), nullable=True),
    sa.Column("seat", sa.Integer, nullable=True),
    sa.Column("street", sa.Integer, nullable=True),
    sa.Column("rule", sa.Integer, nullable=True),
    sa.Column("dealer_id", sa.String(200), nullable=True),
    sa.Column("dealer_name", sa.String(200), nullable=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("raised_ts", sa.Float, nullable=True),
    sa.Column("acknowledged_by", sa.String(200), nullable=True),
    sa.Column("acknowledged_ts", sa.Float, nullable=True),
    sa.Column("resolved_by", sa.String(200), nullable=True),
    sa.Column("resolved_ts", sa.Float, nullable=True),
    sa.Column("resolved_note", sa.String(MAX_TEXT), nullable=True),
    sa.Index("ix_alerts_raised", "raised_ts"),
    sa.Index("ix_alerts_table_raised", "table_id", "raised_ts"),
    sa.Index("ix_alerts_code_raised", "code", "raised_ts"),
)

notices = sa.Table(
    "notices", metadata,
    sa.Column("hand_id", sa.String(200), sa.ForeignKey("hands.hand_id"), primary_key=True),
    sa.Column("idx", sa.Integer, primary_key=True),
    sa.Column("table_id", sa.String(64), nullable=False),
    sa.Column("hand_no", sa.Integer, nullable=True),
    sa.Column("dealer_id", sa.String(200), nullable=True),
    sa.Column("code", sa.String(64), nullable=False),
    sa.Column("message", sa.String(MAX_TEXT), nullable=True),
    sa.Column("ts", sa.Float, nullable=False),
)

_V1_TABLES: Final = (meta, hands, hand_players, alerts, notices)


def _migrate_to_1(conn: Connection) -> None:
    """Version 1: the first schema (hands, hand_players, alerts, notices, archive_meta)."""
    metadata.create_all(conn, tables=list(_V1_TABLES))


MIGRATIONS: Final = ((1, _migrate_to_1),)
"""``(version, step)`` in order; a new schema appends a step (never edits an old one)."""

_STATE_RANK: Final = {"open": 0, "acknowledged": 1, "resolved": 2}
Kind = Literal["hand", "alert", "change"]


class RecordError(ValueError):
    """A message that cannot be archived (what and why); it changes nothing."""


class SchemaError(RuntimeError):
    """The database holds a schema this code does not know (newer, or not ours)."""


@dataclass(frozen=True, slots=True)
class Item:
    """One validated message to write: ``kind`` and its row values."""

    kind: Kind
    table: str
    key: str
    """``hand_id`` or the alert id: what a duplicate shares."""
    values: dict[str, Any]


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What one :meth:`ArchiveStore.write` did."""

    hands: int = 0
    """Hands stored now."""
    duplicates: int = 0
    """Hands already there (a redelivery or a replay): nothing written."""
    alerts: int = 0
    """Alert messages and lifecycle changes applied."""


# --------------------------------------------------------------------------- validation


def _text(value: Any, what: str, *, required: bool = False, limit: int = 200) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise RecordError(f"{what} must be a{' non-empty' if required else ''} string")
    return value[:limit]


def _int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"{what} must be a whole number or null")
    if not -(2**62) < value < 2**62:
        raise RecordError(f"{what} is out of range")
    return value


def _ts(value: Any, what: str, *, required: bool = False) -> float | None:
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RecordError(f"{what} must be a finite number (epoch seconds)")
    return float(value)


def _dealer(value: Any) -> tuple[str | None, str | None]:
    if value is None:
        return None, None
    if not isinstance(value, dict):
        raise RecordError("dealer must be an object {id, name} or null")
    return _text(value.get("id"), "dealer.id"), _text(value.get("name"), "dealer.name")


def _seats(value: Any, what: str) -> list[int]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in value):
        raise RecordError(f"{what} must be a list of seat numbers")
    return list(value)


def _hand_item(record: dict[str, Any], table: str, secure: bool, now: float) -> Item:
    hand_id = _text(record.get("hand_id"), "hand_id", required=True)
    assert hand_id is not None
    if not hand_id.startswith(f"{table}:"):
        raise RecordError(f"hand_id {hand_id[:80]!r} is not of table {table!r}")
    dealer_id, dealer_name = _dealer(record.get("dealer"))
    ended_ts = _ts(record.get("ended_ts"), "ended_ts", required=True)
    players = record.get("players") or []
    if not isinstance(players, list):
        raise RecordError("players must be a list")
    rows: list[dict[str, Any]] = []
    for i, player in enumerate(players):
        if not isinstance(player, dict):
            raise RecordError(f"players[{i}] must be an object")
        seat = _int(player.get("seat"), f"players[{i}].seat")
        if seat is None:
            raise RecordError(f"players[{i}].seat is missing")
        rows.append({"hand_id": hand_id, "seat": seat,
                     "name": _text(player.get("name"), f"players[{i}].name"),
                     "stack_start": _int(player.get("stack_start"), f"players[{i}].stack_start"),
                     "stack_end": _int(player.get("stack_end"), f"players[{i}].stack_end")})
    if len({r["seat"] for r in rows}) != len(rows):
        raise RecordError("players: a seat is listed twice")
    hand_alerts = []
    for i, alert in enumerate(record.get("alerts") or []):
        if not isinstance(alert, dict):
            raise RecordError(f"alerts[{i}] must be an object")
        hand_alerts.append({"id": _text(alert.get("id"), f"alerts[{i}].id", required=True),
                            "code": _text(alert.get("code"), f"alerts[{i}].code", limit=64),
                            "severity": _text(alert.get("severity"), f"alerts[{i}].severity",
                                              limit=16)})
    hand_notices = []
    for i, notice in enumerate(record.get("notices") or []):
        if not isinstance(notice, dict):
            raise RecordError(f"notices[{i}] must be an object")
        hand_notices.append({"idx": i,
                             "code": _text(notice.get("code"), f"notices[{i}].code",
                                           required=True, limit=64),
                             "message": _text(notice.get("message"), f"notices[{i}].message",
                                              limit=MAX_TEXT)})
    pot = record.get("pot")
    stored = dict(record)
    if not secure:
        # A public archive never keeps a down card, whatever a publisher sent.
        stored["down_cards"] = None
    has_down = bool(stored.get("down_cards"))
    hand_no = _int(record.get("hand"), "hand")
    values = {
        "hand": {
            "hand_id": hand_id, "table_id": table, "hand_no": hand_no,
            "dealer_id": dealer_id, "dealer_name": dealer_name,
            "game": _text(record.get("game"), "game", limit=32),
            "started_ts": _ts(record.get("started_ts"), "started_ts"), "ended_ts": ended_ts,
            "ended": _text(record.get("ended"), "ended", limit=32),
            "pot": pot if isinstance(pot, int) and not isinstance(pot, bool) else None,
            "winners": _seats(record.get("winners"), "winners"),
            "n_alerts": len(hand_alerts), "has_down_cards": has_down,
            "record": stored, "archived_ts": now,
        },
        "players": rows,
        "alerts": [{**a, "table_id": table, "hand_no": hand_no, "dealer_id": dealer_id,
                    "dealer_name": dealer_name, "state": "open", "raised_ts": ended_ts}
                   for a in hand_alerts],
        "notices": [{**n, "hand_id": hand_id, "table_id": table, "hand_no": hand_no,
                     "dealer_id": dealer_id, "ts": ended_ts} for n in hand_notices],
    }
    return Item("hand", table, hand_id, values)


def _alert_item(payload: dict[str, Any], table: str) -> Item:
    seq = _int(payload.get("seq"), "seq")
    alert_id = _text(payload.get("id"), "id")
    if not alert_id:  # none, or the model's empty default
        if seq is None:
            raise RecordError("an alert needs an id (or an envelope seq)")
        alert_id = f"{table}:{seq}"  # the contract's id: "<table>:<seq>" of its publication
    dealer_id, dealer_name = _dealer(payload.get("dealer"))
    values = {
        "id": alert_id, "table_id": table, "hand_no": _int(payload.get("hand"), "hand"),
        "code": _text(payload.get("code"), "code", required=True, limit=64),
        "severity": _text(payload.get("severity"), "severity", limit=16),
        "message": _text(payload.get("message"), "message", limit=MAX_TEXT),
        "seat": _int(payload.get("seat"), "seat"), "street": _int(payload.get("street"), "street"),
        "rule": _int(payload.get("rule"), "rule"),
        "dealer_id": dealer_id, "dealer_name": dealer_name, "state": "open",
        "raised_ts": _ts(payload.get("ts"), "ts", required=True),
    }
    return Item("alert", table, alert_id, values)


def _change_item(payload: dict[str, Any], table: str) -> Item:
    alert_id = _text(payload.get("id"), "id", required=True)
    assert alert_id is not None
    state = payload.get("state")
    if state not in ("acknowledged", "resolved"):
        raise RecordError("state must be 'acknowledged' or 'resolved'")
    by = _text(payload.get("by"), "by", required=True)
    at = _ts(payload.get("at_ts", payload.get("ts")), "at_ts", required=True)
    values: dict[str, Any] = {"id": alert_id, "table_id": table, "state": state,
                              "hand_no": _int(payload.get("hand"), "hand")}
    if state == "acknowledged":
        values |= {"acknowledged_by": by, "acknowledged_ts": at}
    else:
        note = _text(payload.get("note"), "note", required=True, limit=MAX_TEXT)
        values |= {"resolved_by": by, "resolved_ts": at, "resolved_note": note}
    return Item("change", table, alert_id, values)


def parse_item(kind: Kind, table: str, payload: Any, *, secure: bool, now: float) -> Item:
    """Check one message of ``table`` (a JSON value) and turn it into an :class:`Item`.

    ``kind``: ``hand`` (``hands`` / ``secure/hands``), ``alert`` (``alerts``) or
    ``change`` (``alerts/changes``). Raises :class:`RecordError` saying what is wrong;
    a message from another table's topic (its ``table`` field) is refused too.
    """
    if not isinstance(payload, dict):
        raise RecordError("not a JSON object")
    if payload.get("table") != table:
        raise RecordError(f"table field {str(payload.get('table'))[:70]!r} is not the"
                          f" topic's table {table!r}")
    if kind == "hand":
        return _hand_item(payload, table, secure, now)
    if kind == "alert":
        return _alert_item(payload, table)
    return _change_item(payload, table)


# --------------------------------------------------------------------------- the store


def database_url(dsn: str) -> sa.URL:
    """The SQLAlchemy URL of a config ``dsn``: ``postgresql://`` uses psycopg 3."""
    url = sa.make_url(dsn)
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return url


def sqlite_url(path: str) -> sa.URL:
    """The URL of an SQLite file at ``path``."""
    return sa.URL.create("sqlite+pysqlite", database=path)


def _when(value: float | datetime | None) -> float | None:
    if isinstance(value, datetime):
        return value.timestamp()
    return value


def _is_unavailable(exc: BaseException) -> bool:
    """True if ``exc`` says the database cannot be reached or written now (retry later),
    not that a record is bad."""
    if isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError |
                  sa_exc.DisconnectionError | sa_exc.TimeoutError):
        return True
    return isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated


class ArchiveStore:
    """The archive database: created or migrated on opening, then written and queried.

    Thread-safe: the service's writer thread and a dashboard's request threads may use
    one store (SQLAlchemy's engine pools connections; SQLite writes are serialised).

    ``url``: a SQLAlchemy URL (:func:`sqlite_url`, :func:`database_url`). ``secure``:
    keep down cards (a secure archive); otherwise every record's ``down_cards`` is null.
    ``migrate``: create / migrate the schema now (needs the database); the service
    passes False and calls :meth:`migrate` itself, so it can start with the database down.
    """

    def __init__(self, url: sa.URL | str, *, secure: bool = False,
                 connect_timeout_s: float = 5.0, migrate: bool = True) -> None:
        self.url = sa.make_url(url)
        self.secure = secure
        self.dialect = self.url.get_dialect().name
        args: dict[str, Any] = {}
        if self.dialect == "postgresql":
            args["connect_timeout"] = max(1, round(connect_timeout_s))
        elif self.dialect == "sqlite":
            args["timeout"] = 30.0  # another instance writing: wait, do not fail
            args["check_same_thread"] = False
        else:
            raise ValueError(f"unsupported database {self.dialect!r}: use sqlite or postgresql")
        self.engine: Engine = sa.create_engine(self.url, pool_pre_ping=True, connect_args=args)
        if self.dialect == "sqlite":
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
        self._lock = threading.Lock() if self.dialect == "sqlite" else None
        self._statements()
        if migrate:
            try:
                self.migrate()
            except BaseException:
                self.engine.dispose()  # no pooled connection left to the garbage collector
                raise

    @property
    def shown_url(self) -> str:
        """The database URL without its password (for logs and status)."""
        return self.url.render_as_string(hide_password=True)

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    @contextmanager
    def _begin(self) -> Iterator[Connection]:
        if self._lock is None:
            with self.engine.begin() as conn:
                yield conn
            return
        with self._lock, self.engine.begin() as conn:
            yield conn

    # ------------------------------------------------------------------ schema

    def migrate(self) -> int:
        """Create or bring the schema up to :data:`SCHEMA_VERSION`; return the version
        found before. Raises :class:`SchemaError` for a newer or foreign database."""
        with self._begin() as conn:
            if self.dialect == "postgresql":
                # Two instances starting at once: one migrates, the other waits.
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(1402202614)"))
            schema_version.create(conn, checkfirst=True)
            found = conn.execute(sa.select(schema_version.c.version)).scalar()
            if found is None:
                if sa.inspect(conn).has_table("hands"):
                    raise SchemaError("the database has a 'hands' table but no schema_version:"
                                      " not an archive of this program")
                found = 0
                conn.execute(schema_version.insert().values(id=1, version=0))
            if found > SCHEMA_VERSION:
                raise SchemaError(f"the archive schema is version {found}, newer than this"
                                  f" program's {SCHEMA_VERSION}: upgrade stud-table")
            for version, step in MIGRATIONS:
                if version > found:
                    step(conn)
                    conn.execute(schema_version.update().values(version=version))
            return int(found)

    def schema_version(self) -> int:
        """The schema version stored in the database."""
        with self.engine.connect() as conn:
            return int(conn.execute(sa.select(schema_version.c.version)).scalar_one())

    def meta_value(self, key: str, default: str) -> str:
        """A stored setting (e.g. an instance's MQTT client id); ``default`` stored if new."""
        with self._begin() as conn:
            conn.execute(self._insert(meta).values(key=key, value=default)
                         .on_conflict_do_nothing(index_elements=["key"]))
            return str(conn.execute(sa.select(meta.c.value).where(meta.c.key == key))
                       .scalar_one())

    # ------------------------------------------------------------------ writes

    def _insert(self, table: sa.Table) -> Any:
        # The dialect's own INSERT, which has on_conflict_do_nothing/do_update.
        if self.dialect == "postgresql":
            return postgresql.insert(table)
        return sqlite.insert(table)

    def write(self, items: Sequence[Item]) -> WriteResult:
        """Write ``items`` in one transaction: all of them or, on an error, none.

        Raises SQLAlchemy's errors; :func:`unavailable` tells "database down, retry"
        from "this data is refused".
        """
        hand_items = [item for item in items if item.kind == "hand"]
        changed = 0
        with self._begin() as conn:
            stored = self._write_hands(conn, hand_items)
            # Alerts and changes after the hands: their rows merge to the same result
            # in any order (tests/archive/test_store.py), so grouping changes nothing.
            for item in items:
                if item.kind == "alert":
                    self._write_alert(conn, item.values)
                    changed += 1
                elif item.kind == "change":
                    self._write_change(conn, item.values)
                    changed += 1
        return WriteResult(stored, len(hand_items) - stored, changed)

    def _statements(self) -> None:
        """Build the write statements once: constructing a SQLAlchemy statement per row
        (``.values(**row)``) cost more than the database itself (profiled: 60% of a
        write). Rows are passed as execution parameters instead."""
        ins = self._insert
        self._ins_hand = (ins(hands).on_conflict_do_nothing(index_elements=["hand_id"])
                          # RETURNING, not rowcount: psycopg 3 through SQLAlchemy reported a
                          # rowcount of 1 for a conflicting INSERT ... ON CONFLICT DO NOTHING.
                          .returning(hands.c.hand_id))
        self._ins_players = ins(hand_players).on_conflict_do_nothing()
        self._ins_notices = ins(notices).on_conflict_do_nothing()
        stmt = ins(alerts)
        ex = stmt.excluded
        # From a hand's list: the alert's own message (or a change) may have come first,
        # so only fill in what is missing.
        self._ins_hand_alert = stmt.on_conflict_do_update(index_elements=["id"], set_={
            name: sa.func.coalesce(alerts.c[name], ex[name])
            for name in ("code", "severity", "hand_no", "dealer_id", "dealer_name",
                         "raised_ts")})
        # The alert as raised is the authority on what it is; its state stays as the
        # changes made it (a change may have been archived first).
        self._ins_alert = stmt.on_conflict_do_update(index_elements=["id"], set_={
            name: ex[name] for name in ("code", "severity", "message", "seat", "street",
                                        "rule", "hand_no", "raised_ts")} | {
            name: sa.func.coalesce(ex[name], alerts.c[name])
            for name in ("dealer_id", "dealer_name")})
        # A change: the first acknowledgement / resolution wins (a redelivery changes
        # nothing); the state only moves forward (open -> acknowledged -> resolved).
        keep_hand = {"hand_no": sa.func.coalesce(alerts.c.hand_no, ex.hand_no)}
        self._ins_ack = stmt.on_conflict_do_update(index_elements=["id"], set_={
            "acknowledged_by": sa.func.coalesce(alerts.c.acknowledged_by, ex.acknowledged_by),
            "acknowledged_ts": sa.func.coalesce(alerts.c.acknowledged_ts, ex.acknowledged_ts),
            "state": sa.case((alerts.c.state == "resolved", alerts.c.state),
                             else_=sa.literal("acknowledged")), **keep_hand})
        self._ins_resolve = stmt.on_conflict_do_update(index_elements=["id"], set_={
            name: sa.func.coalesce(alerts.c[name], ex[name])
            for name in ("resolved_by", "resolved_ts", "resolved_note")} | {
            "state": sa.literal("resolved"), **keep_hand})

    def _write_hands(self, conn: Connection, items: Sequence[Item]) -> int:
        """Insert the new hands of ``items`` and their rows; return how many were new.

        One multi-row statement per table for the whole batch (a round trip per hand
        made PostgreSQL 5x slower than SQLite); RETURNING says which hands were new
        (already stored: nothing more is written for them)."""
        unique: dict[str, Item] = {}
        for item in items:
            unique.setdefault(item.key, item)  # the same hand twice in one batch
        if not unique:
            return 0
        # archived_ts: when the row is written (the benchmark's lag is measured to it).
        now = time.time()
        rows = [{**item.values["hand"], "archived_ts": now} for item in unique.values()]
        new = {str(r[0]) for r in conn.execute(self._ins_hand, rows)}
        fresh = [unique[key].values for key in unique if key in new]
        children = ((self._ins_players, "players"), (self._ins_notices, "notices"),
                    (self._ins_hand_alert, "alerts"))
        for statement, name in children:
            params = [row for values in fresh for row in values[name]]
            if name == "alerts":  # an upsert may not touch one row twice in a statement
                params = list({row["id"]: row for row in reversed(params)}.values())
            if params:
                conn.execute(statement, params)
        return len(new)

    def _write_alert(self, conn: Connection, values: dict[str, Any]) -> None:
        conn.execute(self._ins_alert, values)

    def _write_change(self, conn: Connection, values: dict[str, Any]) -> None:
        conn.execute(self._ins_resolve if values["state"] == "resolved" else self._ins_ack,
                     values)

    # ------------------------------------------------------------------ queries

    def hand(self, hand_id: str) -> dict[str, Any] | None:
        """The full stored record of ``hand_id`` (the hand as published, for export to
        JSON or PHH), or ``None``. A public archive's record has ``down_cards: null``."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(hands.c.record).where(hands.c.hand_id == hand_id)
                               ).scalar()
        if row is None:
            return None
        return dict(row) if isinstance(row, dict) else dict(json.loads(row))

    def search_hands(self, table: str | None = None, dealer: str | None = None,
                     since: float | datetime | None = None,
                     until: float | datetime | None = None,
                     limit: int = 100) -> list[dict[str, Any]]:
        """Finished hands, newest first, as summaries (no actions, no cards).

        Filters (all optional, combined with AND): ``table`` id; ``dealer`` id or name
        (exact); ``since`` <= ended_ts < ``until`` (epoch seconds or aware datetimes).
        ``limit``: at most this many (1..10,000). Each summary:
        ``{hand_id, table, hand, dealer: {id, name} | None, game, started_ts, ended_ts,
        ended, pot, winners, alerts (count), manual_cards (count), players: [{seat,
        name}]}``; ``manual_cards``: the hand's cards entered by hand at the console or
        the producer page (its ``manual_card`` notices, issue 19: dead tags). The full
        record is :meth:`hand`.
        """
        query = sa.select(hands.c.hand_id, hands.c.table_id, hands.c.hand_no,
                          hands.c.dealer_id, hands.c.dealer_name, hands.c.game,
                          hands.c.started_ts, hands.c.ended_ts, hands.c.ended, hands.c.pot,
                          hands.c.winners, hands.c.n_alerts)
        if table is not None:
            query = query.where(hands.c.table_id == table)
        if dealer is not None:
            query = query.where(sa.or_(hands.c.dealer_id == dealer,
                                       hands.c.dealer_name == dealer))
        query = _window(query, hands.c.ended_ts, since, until)
        query = query.order_by(hands.c.ended_ts.desc(), hands.c.hand_id).limit(_limit(limit))
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
            ids = [r.hand_id for r in rows]
            seats: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
            manual: dict[str, int] = {}
            if ids:
                for p in conn.execute(sa.select(hand_players.c.hand_id, hand_players.c.seat,
                                                hand_players.c.name)
                                      .where(hand_players.c.hand_id.in_(ids))
                                      .order_by(hand_players.c.seat)):
                    seats[p.hand_id].append({"seat": p.seat, "name": p.name})
                for hand_id, n in conn.execute(
                        sa.select(notices.c.hand_id, sa.func.count())
                        .where(notices.c.hand_id.in_(ids), notices.c.code == "manual_card")
                        .group_by(notices.c.hand_id)):
                    manual[hand_id] = int(n)
        return [{"hand_id": r.hand_id, "table": r.table_id, "hand": r.hand_no,
                 "dealer": _dealer_out(r.dealer_id, r.dealer_name), "game": r.game,
                 "started_ts": r.started_ts, "ended_ts": r.ended_ts, "ended": r.ended,
                 "pot": r.pot, "winners": r.winners or [], "alerts": r.n_alerts,
                 "manual_cards": manual.get(r.hand_id, 0),
                 "players": seats[r.hand_id]} for r in rows]

    def search_alerts(  # noqa: PLR0917 - the order agreed with the floor dashboard
            self, table: str | None = None, code: str | None = None,
                      dealer: str | None = None, severity: str | None = None,
                      since: float | datetime | None = None,
                      until: float | datetime | None = None,
                      limit: int = 100) -> list[dict[str, Any]]:
        """Archived alerts, newest first: ``since`` <= raised_ts < ``until``.

        Filters (optional, AND): ``table``, ``code``, ``dealer`` (id or name),
        ``severity`` (critical / error / warning). Each alert: ``{id, table, hand, code,
        severity, message, seat, street, rule, dealer, state, raised_ts, acknowledged_by,
        acknowledged_ts, resolved_by, resolved_ts, resolved_note}``.
        """
        query = sa.select(alerts)
        for column, value in ((alerts.c.table_id, table), (alerts.c.code, code),
                              (alerts.c.severity, severity)):
            if value is not None:
                query = query.where(column == value)
        if dealer is not None:
            query = query.where(sa.or_(alerts.c.dealer_id == dealer,
                                       alerts.c.dealer_name == dealer))
        query = _window(query, alerts.c.raised_ts, since, until)
        query = query.order_by(alerts.c.raised_ts.desc(), alerts.c.id).limit(_limit(limit))
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [{"id": r["id"], "table": r["table_id"], "hand": r["hand_no"],
                 "code": r["code"], "severity": r["severity"], "message": r["message"],
                 "seat": r["seat"], "street": r["street"], "rule": r["rule"],
                 "dealer": _dealer_out(r["dealer_id"], r["dealer_name"]), "state": r["state"],
                 "raised_ts": r["raised_ts"], "acknowledged_by": r["acknowledged_by"],
                 "acknowledged_ts": r["acknowledged_ts"], "resolved_by": r["resolved_by"],
                 "resolved_ts": r["resolved_ts"], "resolved_note": r["resolved_note"]}
                for r in rows]

    def shift_report(self, since: float | datetime,
                     until: float | datetime) -> dict[str, Any]:
        """The shift report of ``since`` <= t < ``until`` (hands by ended_ts, alerts by
        raised_ts), computed in the database (GROUP BY), so a long shift costs no memory::

            {"since", "until", "hours", "hands", "alerts", "hands_per_hour",
             "errors_per_100_hands": {code: rate},
             "per_dealer": {key: {...}}, "per_table": {table: {...}}}

        Each per-dealer / per-table entry is ``{"hands", "alerts", "hands_per_hour",
        "errors_per_100_hands": {code: rate}, "by_code": {code: count}}`` (a dealer entry
        also has ``id`` and ``name``; its key is the id, ``"-"`` for hands without a dealer
        signed in), and ``manual_cards``: the cards entered by hand at the console in
        those hands (``manual_card`` notices, issue 19: dead tags to replace; counted per
        table, 0 for dealers). ``hands_per_hour`` is over the whole window for the room and a table,
        and over the dealer's own span (first hand started to last hand ended) for a
        dealer, who does not deal the whole shift. An error is an alert (any severity);
        notices are not errors. A rate with no hands is ``None``.
        """
        start, end = _when(since), _when(until)
        if start is None or end is None:
            raise ValueError("since and until are both needed")
        if not end > start:
            raise ValueError("until must be after since")
        hours = (end - start) / 3600.0
        in_hands = sa.and_(hands.c.ended_ts >= start, hands.c.ended_ts < end)
        in_alerts = sa.and_(alerts.c.raised_ts >= start, alerts.c.raised_ts < end)
        dealer_key = sa.func.coalesce(hands.c.dealer_id, "-")
        # One expression object each, used in SELECT and GROUP BY: PostgreSQL must see
        # the same bound parameter in both.
        alert_dealer = sa.func.coalesce(alerts.c.dealer_id, "-")
        alert_code = sa.func.coalesce(alerts.c.code, "unknown")
        with self.engine.connect() as conn:
            total = conn.execute(sa.select(sa.func.count()).where(in_hands)).scalar_one()
            by_table = conn.execute(sa.select(hands.c.table_id, sa.func.count())
                                    .where(in_hands).group_by(hands.c.table_id)).all()
            by_dealer = conn.execute(
                sa.select(dealer_key, sa.func.max(hands.c.dealer_name), sa.func.count(),
                          sa.func.min(sa.func.coalesce(hands.c.started_ts, hands.c.ended_ts)),
                          sa.func.max(hands.c.ended_ts))
                .where(in_hands).group_by(dealer_key)).all()
            codes = conn.execute(
                sa.select(alerts.c.table_id, alert_dealer, sa.func.max(alerts.c.dealer_name),
                          alert_code, sa.func.count())
                .where(in_alerts).group_by(alerts.c.table_id, alert_dealer, alert_code)).all()
            # Issue 19: cards the dealer entered by hand (dead tags) are tags to replace.
            manual = conn.execute(
                sa.select(hands.c.table_id, sa.func.count())
                .select_from(notices.join(hands, notices.c.hand_id == hands.c.hand_id))
                .where(in_hands, notices.c.code == "manual_card")
                .group_by(hands.c.table_id)).all()

        def entry(n_hands: int, per_hour: float | None) -> dict[str, Any]:
            return {"hands": n_hands, "alerts": 0, "hands_per_hour": per_hour,
                    "errors_per_100_hands": {}, "by_code": {}, "manual_cards": 0}

        room_codes: dict[str, int] = {}
        per_table = {t: entry(n, n / hours) for t, n in by_table}
        per_dealer: dict[str, dict[str, Any]] = {}
        for key, name, n, first, last in by_dealer:
            span_h = (last - first) / 3600.0 if last > first else None
            per_dealer[key] = {"id": None if key == "-" else key, "name": name,
                               **entry(n, n / span_h if span_h else None)}
        for table, dkey, dname, code, n in codes:
            room_codes[code] = room_codes.get(code, 0) + n
            for group, key, fresh in ((per_table, table, entry(0, 0.0)),
                                      (per_dealer, dkey, {"id": None if dkey == "-" else dkey,
                                                          "name": dname, **entry(0, None)})):
                slot = group.setdefault(key, fresh)
                slot["alerts"] += n
                slot["by_code"][code] = slot["by_code"].get(code, 0) + n
        for table, n in manual:
            per_table.setdefault(table, entry(0, 0.0))["manual_cards"] = int(n)
        for slot in (*per_table.values(), *per_dealer.values()):
            slot["errors_per_100_hands"] = _rates(slot["by_code"], slot["hands"])
        return {"since": start, "until": end, "hours": hours, "hands": int(total),
                "alerts": sum(room_codes.values()), "hands_per_hour": total / hours,
                "errors_per_100_hands": _rates(room_codes, int(total)),
                "per_dealer": per_dealer, "per_table": per_table}

    def counts(self) -> dict[str, int]:
        """Rows per table (hands, hand_players, alerts, notices): for status and tests."""
        with self.engine.connect() as conn:
            return {t.name: int(conn.execute(sa.select(sa.func.count()).select_from(t))
                                .scalar_one()) for t in (hands, hand_players, alerts, notices)}

    def tables(self) -> list[str]:
        """Every table id with an archived hand or alert, sorted."""
        with self.engine.connect() as conn:
            query = sa.union(sa.select(hands.c.table_id), sa.select(alerts.c.table_id))
            return sorted(str(r[0]) for r in conn.execute(query))


def unavailable(exc: BaseException) -> bool:
    """True if a write failed because the database is unreachable or cannot write now
    (down, restarting, disk full, locked): keep the items and retry. False: the data
    itself was refused."""
    return _is_unavailable(exc)


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    # WAL: the dashboard reads while the writer writes; NORMAL sync is durable across a
    # process crash in WAL mode (a power loss may lose the last commit, which the broker
    # then redelivers: we ack only after the commit).
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _window(query: Any, column: Any, since: float | datetime | None,
            until: float | datetime | None) -> Any:
    start, end = _when(since), _when(until)
    if start is not None:
        query = query.where(column >= start)
    if end is not None:
        query = query.where(column < end)
    return query


def _limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
        raise ValueError("limit must be a whole number from 1 to 10000")
    return limit


def _rates(by_code: Mapping[str, int], n_hands: int) -> dict[str, float | None]:
    return {code: (100.0 * n / n_hands if n_hands else None)
            for code, n in sorted(by_code.items())}


def _dealer_out(dealer_id: str | None, name: str | None) -> dict[str, Any] | None:
    if dealer_id is None and name is None:
        return None
    return {"id": dealer_id, "name": name}


__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "ArchiveStore",
    "Item",
    "RecordError",
    "SchemaError",
    "WriteResult",
    "database_url",
    "parse_item",
    "sqlite_url",
    "unavailable",
]
