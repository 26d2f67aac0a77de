"""Card-only tables (no console): hands start and end from the cards alone."""

from __future__ import annotations

from typing import Any

from stud_script import BURNS, STREETS, THIRD, Table

from table_controller.domain.engine.dealing import replay_events
from table_controller.domain.engine.report import replay_report
from table_controller.records.script import parse_script


def auto_table() -> Table:
    t = Table([1])
    t.lines = [{"op": "table", "auto_hands": True}]
    return t


def run(t: Table) -> list[dict[str, Any]]:
    script = parse_script(t.text().splitlines())
    hands = replay_events((e for _, e in script.events), script.settings)
    result: list[dict[str, Any]] = replay_report(hands)["hands"]
    return result


def deal_full(t: Table) -> Table:
    for face, cards in (("down", THIRD[1]), ("down", THIRD[2]), ("up", THIRD[3])):
        t.round(face, cards)
    for street in (4, 5, 6, 7):
        t.burn(BURNS[street]).round("down" if street == 7 else "up", STREETS[street])
    return t


def sweep(t: Table, to_muck: bool) -> Table:
    """The dealer gathers every seat's cards (the losers first)."""
    for seat in (5, 2, 4):
        for rnd in (1, 2, 7):
            card = (THIRD[rnd] if rnd < 3 else STREETS[7])[seat]
            t.remove(f"seat{seat}.down", card)
            if to_muck:
                t.place("muck", card)
        for rnd in (3, 4, 5, 6):
            card = (THIRD[3] if rnd == 3 else STREETS[rnd])[seat]
            t.remove(f"seat{seat}.up", card)
            if to_muck:
                t.place("muck", card)
    return t


def test_players_are_learnt_from_the_first_round() -> None:
    (hand,) = run(deal_full(auto_table()))
    assert sorted(hand["players"]) == ["2", "4", "5"]
    assert hand["alerts"] == []
    assert hand["bring_in"] == 4


def test_hand_ends_when_the_table_is_cleared_and_the_next_card_starts_a_new_one() -> None:
    t = sweep(deal_full(auto_table()), to_muck=False)
    t.down(1, "As").down(3, "Ks")
    first, second = run(t)
    assert first["winners"] == [4]
    assert first["players"]["4"]["status"] == "active"
    assert sorted(second["players"]) == ["1", "3"]
    assert second["alerts"] == []


def test_cards_gathered_into_the_muck_after_showdown_do_not_change_the_result() -> None:
    t = sweep(deal_full(auto_table()), to_muck=True)
    (hand,) = run(t)
    # Seats 5 and 2 mucked first: seat 4 is left standing, and also has the best hand.
    assert hand["winners"] == [4]
    assert hand["alerts"] == []


def test_second_round_closes_the_player_list() -> None:
    t = auto_table()
    t.round("down", THIRD[1]).round("down", THIRD[2])
    t.down(3, "2s")  # seat 3 was not dealt in the first round
    (hand,) = run(t)
    assert [a["code"] for a in hand["alerts"]] == ["card_to_inactive_seat"]
