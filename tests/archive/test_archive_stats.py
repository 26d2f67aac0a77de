"""Player statistics in SQL, on SQLite and on a real PostgreSQL (the same test, both),
against hands whose statistics are counted here by hand (issue 22, "Player statistics").
"""

from __future__ import annotations

from typing import Any

from feed import hand_record

from table_controller.archive.stats import player_stats
from table_controller.archive.store import ArchiveStore, parse_item

NOW = 1_800_000_000.0
PLAYERS = [{"seat": 1, "name": "Ada", "stack_start": 1000, "stack_end": 1000},
           {"seat": 2, "name": "Bo", "stack_start": 1000, "stack_end": 1000},
           {"seat": 3, "name": "Chen", "stack_start": 1000, "stack_end": 1000}]


def act(street: int, seat: int, action: str, amount: int | None = None) -> dict[str, Any]:
    """One action of a record."""
    return {"street": street, "seat": seat, "action": action, "amount": amount}


def hands() -> list[dict[str, Any]]:
    """Four hands; their statistics are counted by hand in the test below."""
    one = {**hand_record("t1", 1), "players": PLAYERS, "winners": [1], "ended": "showdown",
           "actions": [act(3, 2, "bring_in", 2), act(3, 3, "complete", 5), act(3, 1, "call", 5),
                       act(3, 2, "fold"), act(4, 1, "bet", 5), act(4, 3, "raise", 10),
                       act(4, 1, "call", 10), act(5, 1, "check"), act(5, 3, "bet", 10),
                       act(5, 1, "call", 10), act(6, 1, "check"), act(6, 3, "check"),
                       act(7, 1, "bet", 10), act(7, 3, "call", 10)],
           "shown": {"1": ["Ah", "Ad", "Kc", "Kd", "7c", "2h", "8s"],
                     "3": ["Qh", "Qd", "Jc", "Jd", "5c", "4h", "3s"]}}
    two = {**hand_record("t1", 2), "players": PLAYERS, "winners": [3], "ended": "fold",
           "actions": [act(3, 1, "bring_in", 2), act(3, 2, "complete", 5),
                       act(3, 3, "raise", 10), act(3, 1, "fold"), act(3, 2, "call", 10),
                       act(4, 2, "check"), act(4, 3, "bet", 5), act(4, 2, "fold")],
           "shown": {}}
    card_only = {**hand_record("t1", 3), "players": PLAYERS, "winners": [2], "ended": "fold",
                 "actions": [act(4, 1, "fold"), act(5, 3, "fold")], "shown": {}}
    razz = {**hand_record("t2", 4), "game": "razz", "players": PLAYERS[:2], "winners": [2],
            "ended": "showdown",
            "actions": [act(3, 2, "bring_in", 2), act(3, 1, "complete", 5),
                        act(3, 2, "call", 5), act(4, 1, "check"), act(4, 2, "check")],
            "shown": {"1": ["8h", "7d", "6c", "5d", "4c", "Kh", "Ks"],
                      "2": ["Ah", "2d", "3c", "4d", "5c", "Qh", "Qs"]}}
    return [one, two, card_only, razz]


def archived(store: ArchiveStore) -> list[dict[str, Any]]:
    """The hands written to ``store``; returned as written."""
    records = hands()
    store.write([parse_item("hand", r["table"], r, secure=False, now=NOW) for r in records])
    return records


def by(rows: list[dict[str, Any]], game: str) -> dict[str, dict[str, Any]]:
    """name -> row of one game."""
    return {r["name"]: r for r in rows if r["game"] == game}


def test_stats_match_the_hands_counted_by_hand(store: ArchiveStore) -> None:
    """Hand 1: Ada calls (3rd, 4th, 5th) and bets twice, shows down and wins; Chen
    completes, raises, bets, calls once, shows down and loses; Bo brings in and folds.
    Hand 2: Bo completes and calls, Chen raises and bets, Ada brings in and folds. Hand 3
    is card-only (folds only): left out. Hand 4 is razz: counted apart."""
    archived(store)
    stud = by(player_stats(store), "stud")
    assert set(stud) == {"Ada", "Bo", "Chen"}
    ada, bo, chen = stud["Ada"], stud["Bo"], stud["Chen"]
    assert (ada["hands"], ada["vpip"], ada["third_aggr"], ada["aggressive_actions"],
            ada["calls"], ada["showdowns"], ada["won_at_showdown"]) == (2, 1, 0, 2, 3, 1, 1)
    assert (ada["vpip_pct"], ada["third_aggr_pct"], ada["aggression"], ada["showdown_pct"],
            ada["won_at_showdown_pct"]) == (50.0, 0.0, 0.67, 50.0, 100.0)
    assert (bo["hands"], bo["vpip"], bo["third_aggr"], bo["aggressive_actions"], bo["calls"],
            bo["showdowns"], bo["won_at_showdown"]) == (2, 1, 1, 1, 1, 0, 0)
    assert (bo["aggression"], bo["won_at_showdown_pct"]) == (1.0, None)
    assert (chen["hands"], chen["vpip"], chen["third_aggr"], chen["aggressive_actions"],
            chen["calls"], chen["showdowns"], chen["won_at_showdown"]) == (2, 2, 2, 5, 1, 1, 0)
    assert (chen["vpip_pct"], chen["aggression"], chen["won_at_showdown_pct"]) == (
        100.0, 5.0, 0.0)
    razz = by(player_stats(store), "razz")
    assert set(razz) == {"Ada", "Bo"}
    assert (razz["Ada"]["vpip"], razz["Ada"]["third_aggr"], razz["Ada"]["showdowns"],
            razz["Ada"]["won_at_showdown"]) == (1, 1, 1, 0)
    assert (razz["Bo"]["vpip"], razz["Bo"]["calls"], razz["Bo"]["aggression"],
            razz["Bo"]["won_at_showdown_pct"]) == (1, 1, 0.0, 100.0)
    assert player_stats(store, game="razz") == [r for r in player_stats(store)
                                                if r["game"] == "razz"]


def test_a_session_window_counts_only_its_hands(store: ArchiveStore) -> None:
    """A session (ended_ts window) holding hand 2 only: Ada brought in and folded."""
    records = archived(store)
    second = records[1]
    rows = by(player_stats(store, since=second["ended_ts"] - 1, until=second["ended_ts"] + 1),
              "stud")
    assert {n: (r["hands"], r["vpip"], r["third_aggr"]) for n, r in rows.items()} == {
        "Ada": (1, 0, 0), "Bo": (1, 1, 1), "Chen": (1, 1, 1)}
    assert player_stats(store, since=NOW + 10**7) == []
