"""Player statistics from the archive, computed in SQL (SQLite and PostgreSQL).

From the console-driven hands only (a hand with at least one betting action other than
a fold: a card-only table's betting is unknown), per player name and game (``stud``,
``razz`` and ``stud8`` never mix), over a window of ``ended_ts`` (a session) or all
time:

* ``hands``: hands dealt in;
* ``vpip``: hands in which the player put chips in voluntarily (a call, complete, bet or
  raise on any street; the bring-in is forced and does not count);
* ``third_aggr``: hands with a completion or a raise on 3rd street;
* ``aggression``: (completions + bets + raises) / calls over all the player's actions
  (``None`` without a call);
* ``showdowns``: hands in which the player's cards were shown down (the record's
  ``shown``); ``won_at_showdown``: those among them the player won (or split);
* the percentages ``vpip_pct``, ``third_aggr_pct``, ``showdown_pct`` (of hands) and
  ``won_at_showdown_pct`` (of showdowns), rounded to 0.1 (``None`` when the divisor is 0).

The actions live in each hand's JSON record; the two dialects walk it with their own
JSON functions (``json_each`` / ``json_array_elements``), the rest is the same GROUP BY.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

import sqlalchemy as sa

from table_controller.archive.store import ArchiveStore

_SQLITE: Final = """
WITH hp AS (
  SELECT h.hand_id, h.game, p.seat, p.name, h.record
  FROM hands h JOIN hand_players p ON p.hand_id = h.hand_id
  WHERE p.name IS NOT NULL AND h.ended_ts >= :since AND h.ended_ts < :until
    AND (:game IS NULL OR h.game = :game)
),
console AS (
  SELECT DISTINCT hp.hand_id FROM hp, json_each(hp.record, '$.actions') a
  WHERE json_extract(a.value, '$.action') <> 'fold'
),
acts AS (
  SELECT hp.hand_id, hp.seat, json_extract(a.value, '$.street') AS street,
         json_extract(a.value, '$.action') AS action
  FROM hp, json_each(hp.record, '$.actions') a
  WHERE json_extract(a.value, '$.seat') = hp.seat
),
per_hand AS (
  SELECT hp.name, hp.game, hp.hand_id,
    MAX(CASE WHEN acts.action IN ('call', 'complete', 'bet', 'raise') THEN 1 ELSE 0 END) AS vpip,
    MAX(CASE WHEN acts.street = 3 AND acts.action IN ('complete', 'raise') THEN 1 ELSE 0 END)
      AS third_aggr,
    SUM(CASE WHEN acts.action IN ('complete', 'bet', 'raise') THEN 1 ELSE 0 END) AS aggr,
    SUM(CASE WHEN acts.action = 'call' THEN 1 ELSE 0 END) AS calls,
    MAX(CASE WHEN json_type(hp.record, '$.shown."' || hp.seat || '"') IS NOT NULL
        THEN 1 ELSE 0 END) AS shown,
    MAX(CASE WHEN EXISTS (SELECT 1 FROM json_each(hp.record, '$.winners') w
                          WHERE w.value = hp.seat) THEN 1 ELSE 0 END) AS won
  FROM hp JOIN console ON console.hand_id = hp.hand_id
  LEFT JOIN acts ON acts.hand_id = hp.hand_id AND acts.seat = hp.seat
  GROUP BY hp.name, hp.game, hp.hand_id, hp.seat
)
SELECT name, game, COUNT(*), SUM(vpip), SUM(third_aggr), SUM(aggr), SUM(calls),
       SUM(shown), SUM(shown * won)
FROM per_hand GROUP BY name, game ORDER BY game, name
"""

_POSTGRES: Final = """
WITH hp AS (
  SELECT h.hand_id, h.game, p.seat, p.name, h.record::jsonb AS record
  FROM hands h JOIN hand_players p ON p.hand_id = h.hand_id
  WHERE p.name IS NOT NULL AND h.ended_ts >= :since AND h.ended_ts < :until
    AND (CAST(:game AS TEXT) IS NULL OR h.game = CAST(:game AS TEXT))
),
console AS (
  SELECT DISTINCT hp.hand_id FROM hp, jsonb_array_elements(hp.record -> 'actions') a
  WHERE a ->> 'action' <> 'fold'
),
acts AS (
  SELECT hp.hand_id, hp.seat, (a ->> 'street')::int AS street, a ->> 'action' AS action
  FROM hp, jsonb_array_elements(hp.record -> 'actions') a
  WHERE (a ->> 'seat')::int = hp.seat
),
per_hand AS (
  SELECT hp.name, hp.game, hp.hand_id,
    MAX(CASE WHEN acts.action IN ('call', 'complete', 'bet', 'raise') THEN 1 ELSE 0 END) AS vpip,
    MAX(CASE WHEN acts.street = 3 AND acts.action IN ('complete', 'raise') THEN 1 ELSE 0 END)
      AS third_aggr,
    SUM(CASE WHEN acts.action IN ('complete', 'bet', 'raise') THEN 1 ELSE 0 END) AS aggr,
    SUM(CASE WHEN acts.action = 'call' THEN 1 ELSE 0 END) AS calls,
    MAX(CASE WHEN jsonb_exists(hp.record -> 'shown', hp.seat::text) THEN 1 ELSE 0 END) AS shown,
    MAX(CASE WHEN (hp.record -> 'winners') @> to_jsonb(hp.seat) THEN 1 ELSE 0 END) AS won
  FROM hp JOIN console ON console.hand_id = hp.hand_id
  LEFT JOIN acts ON acts.hand_id = hp.hand_id AND acts.seat = hp.seat
  GROUP BY hp.name, hp.game, hp.hand_id, hp.seat
)
SELECT name, game, COUNT(*), SUM(vpip), SUM(third_aggr), SUM(aggr), SUM(calls),
       SUM(shown), SUM(shown * won)
FROM per_hand GROUP BY name, game ORDER BY game, name
"""


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def player_stats(store: ArchiveStore, *, game: str | None = None,
                 since: float | datetime | None = None,
                 until: float | datetime | None = None) -> list[dict[str, Any]]:
    """Every player's statistics (module docstring), one row per (name, game), ordered
    by game then name. ``since``/``until``: a session's window (default: all time)."""
    start = -1e18 if since is None else (since.timestamp() if isinstance(since, datetime)
                                          else float(since))
    end = 1e18 if until is None else (until.timestamp() if isinstance(until, datetime)
                                      else float(until))
    sql = _POSTGRES if store.dialect == "postgresql" else _SQLITE
    with store.engine.connect() as conn:
        rows = conn.execute(sa.text(sql), {"since": start, "until": end, "game": game}).all()
    out = []
    for name, game_, *counts in rows:
        n, vpip, third, aggr, calls, shown, won = (int(v or 0) for v in counts)
        out.append({
            "name": name, "game": game_, "hands": n, "vpip": vpip, "third_aggr": third,
            "aggressive_actions": aggr, "calls": calls, "showdowns": shown,
            "won_at_showdown": won, "vpip_pct": _pct(vpip, n),
            "third_aggr_pct": _pct(third, n),
            "aggression": round(aggr / calls, 2) if calls else None,
            "showdown_pct": _pct(shown, n), "won_at_showdown_pct": _pct(won, shown),
        })
    return out
