"""The floor's view of the archive database (``stud-table archive`` writes it).

A thin adapter from :class:`table_controller.archive.store.ArchiveStore`'s query API
to the floor's :class:`~table_controller.floor.report.Archive`: the same rows and the
same shift report as :class:`~table_controller.floor.report.MemoryArchive`, so the
page draws either. The dashboard only reads: it opens the store without migrating
(the archive service owns the schema), and a database that cannot be reached is
:class:`ArchiveUnavailableError` (the page shows it; the live view goes on).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from sqlalchemy.exc import SQLAlchemyError

from table_controller.archive.config import DatabaseConfig
from table_controller.archive.store import ArchiveStore, database_url, sqlite_url
from table_controller.domain.engine.alerts import VOCABULARY
from table_controller.floor.report import (
    ERROR_SEVERITIES,
    HOUR,
    MAX_RESULTS,
    Query,
    SearchError,
)

SCAN_LIMIT: Final = 10_000
"""Rows read at most for a filter the store cannot apply itself (a hand's alert code,
part of a dealer's name) and for the hourly histogram; the page says when it was hit."""


class ArchiveUnavailableError(RuntimeError):
    """The archive database cannot be read now; ``str()`` says why (no password)."""


def severity(code: str) -> str:
    """A code's severity from the one table (docs/alerts.md); ``?`` if unknown."""
    for known, info in VOCABULARY.items():
        if known.value == code:
            return str(info.severity) if info.severity is not None else "notice"
    return "?"


def _dealer_label(key: str, entry: Mapping[str, Any]) -> str:
    if key == "-" or not entry.get("id"):
        return "(no dealer signed in)"
    return f"{entry.get('name') or ''} ({entry['id']})"


def _group(entry: Mapping[str, Any]) -> dict[str, Any]:
    by_code: Mapping[str, int] = entry.get("by_code") or {}
    errors = sum(n for c, n in by_code.items() if severity(c) in ERROR_SEVERITIES)
    hands = int(entry.get("hands") or 0)
    return {"hands": hands, "errors": errors, "warnings": sum(by_code.values()) - errors,
            "errors_per_100": round(100.0 * errors / hands, 2) if hands else None,
            "manual_cards": int(entry.get("manual_cards") or 0)}


class StoreArchive:
    """:class:`~table_controller.floor.report.Archive` over the archive database."""

    source = "archive"

    def __init__(self, db: DatabaseConfig) -> None:
        self.path = db.path
        url = sqlite_url(str(db.path)) if db.path is not None else database_url(str(db.dsn))
        self.store = ArchiveStore(url, connect_timeout_s=db.connect_timeout_s, migrate=False)

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if self.path is not None and not self.path.exists():
            # SQLite would create an empty file here: a mistyped path would then look
            # like an archive with no hand in it. The archive service creates the file.
            raise ArchiveUnavailableError(
                f"no archive at {self.path} (is stud-table archive running, and is"
                " [archive] path the file it writes?)")
        try:
            return getattr(self.store, method)(*args, **kwargs)
        except SQLAlchemyError as exc:
            raise ArchiveUnavailableError(
                f"the archive database ({self.store.shown_url}) cannot be read:"
                f" {type(exc).__name__}: {str(exc).splitlines()[0][:200]}") from None
        except ValueError as exc:
            raise SearchError(str(exc)) from None

    def search_hands(self, q: Query) -> list[dict[str, Any]]:
        """Hands fitting ``q`` as :func:`~table_controller.floor.report.hand_row` rows."""
        exact = q.dealer if q.dealer is not None else None
        limit = SCAN_LIMIT if q.code is not None else MAX_RESULTS
        rows = self._call("search_hands", table=q.table, dealer=exact, since=q.since,
                          until=q.until, limit=limit)
        if q.code is not None:
            alerts = self._call("search_alerts", table=q.table, code=q.code, since=None,
                                until=None, limit=SCAN_LIMIT)
            wanted = {(a["table"], a["hand"]) for a in alerts}
            rows = [r for r in rows if (r["table"], r["hand"]) in wanted]
        return [{"hand_id": r["hand_id"], "table": r["table"], "game": r["game"],
                 "dealer": r["dealer"], "started_ts": r["started_ts"],
                 "ended_ts": r["ended_ts"], "players": len(r["players"]), "pot": r["pot"],
                 "ended": r["ended"], "alerts": r["alerts"]} for r in rows[:MAX_RESULTS]]

    def search_alerts(self, q: Query) -> list[dict[str, Any]]:
        """Alerts fitting ``q`` (the live view's fields, plus ``note``)."""
        rows = self._call("search_alerts", table=q.table, code=q.code, dealer=q.dealer,
                          since=q.since, until=q.until, limit=MAX_RESULTS)
        return [{**r, "raised_ts": r["raised_ts"], "note": r.get("resolved_note")}
                for r in rows]

    def hand(self, hand_id: str) -> dict[str, Any] | None:
        """The stored record."""
        record: dict[str, Any] | None = self._call("hand", hand_id)
        return record

    def report(self, since: float, until: float) -> dict[str, Any]:
        """The archive's shift report (computed in the database) in the page's form."""
        if not until > since:
            raise SearchError("the report's end must be after its start")
        if until - since > 31 * 24 * HOUR:
            raise SearchError("a report covers at most 31 days")
        raw = self._call("shift_report", since, until)
        room: dict[str, int] = {}
        for entry in raw["per_table"].values():
            for code, n in (entry.get("by_code") or {}).items():
                room[code] = room.get(code, 0) + n
        total = int(raw["hands"])
        first = math.floor(since / HOUR) * HOUR
        hours = {first + i * HOUR: 0 for i in range(math.ceil((until - first) / HOUR))}
        ended = self._call("search_hands", since=since, until=until, limit=SCAN_LIMIT)
        for row in ended:
            hours[math.floor(row["ended_ts"] / HOUR) * HOUR] += 1
        return {
            "since": since, "until": until, "hands": total,
            "errors": sum(n for c, n in room.items() if severity(c) in ERROR_SEVERITIES),
            "hours": [{"hour": h, "hands": n} for h, n in sorted(hours.items())],
            "hours_truncated": len(ended) >= SCAN_LIMIT,
            "codes": sorted(({"code": c, "severity": severity(c), "count": n,
                              "per_100": round(100.0 * n / total, 2) if total else None}
                             for c, n in room.items()), key=lambda r: (-r["count"], r["code"])),
            "dealers": sorted(({**_group(e), "dealer": _dealer_label(k, e)}
                               for k, e in raw["per_dealer"].items()),
                              key=lambda r: r["dealer"]),
            "tables": sorted(({**_group(e), "table": t} for t, e in raw["per_table"].items()),
                             key=lambda r: r["table"]),
        }
