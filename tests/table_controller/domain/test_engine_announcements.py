"""Rule 12: the dealer announces the low card, the high hand and pairs, never
possible straights or flushes. The engine's announcement events say the same."""

from __future__ import annotations

from stud_script import THIRD, Table, deal_street, deal_third

from table_controller.domain.engine import DealingEngine, GameEvent, GameEventKind
from table_controller.records.script import parse_script


def announcements(t: Table) -> list[str]:
    script = parse_script(t.text().splitlines())
    engine = DealingEngine(script.settings)
    texts: list[str] = []
    for _, event in script.events:
        for out in engine.apply(event):
            if isinstance(out, GameEvent) and out.kind is GameEventKind.ANNOUNCEMENT:
                assert out.text is not None
                texts.append(out.text)
    return texts


def test_low_card_is_announced_with_the_seat() -> None:
    texts = announcements(deal_third(Table([2, 4, 5])))
    assert texts == ["Low card: seat 4, deuce of clubs, brings it in."]


def test_high_hand_and_pairs_are_announced() -> None:
    t = deal_third(Table([2, 4, 5]))
    deal_street(t, 4, {2: "3h", 4: "Ks", 5: "Js"})  # seat 2 pairs its threes
    texts = announcements(t)[1:]
    assert texts == ["Seat 2 is high with pair of threes."]
    deal_street(t, 5, {2: "5d", 4: "Kh", 5: "Jh"})
    texts = announcements(t)[2:]
    assert texts == [
        "Seat 4 is high with pair of kings.",
        "Seat 2 shows pair of threes.",
        "Seat 5 shows pair of jacks.",
    ]


def test_possible_straights_and_flushes_are_never_announced() -> None:
    third = {1: THIRD[1], 2: THIRD[2], 3: {2: "5h", 4: "2c", 5: "Qs"}}
    t = deal_third(Table([2, 4, 5]), third)
    deal_street(t, 4, {2: "6h", 4: "9c", 5: "Js"})
    deal_street(t, 5, {2: "7h", 4: "Tc", 5: "3d"})
    deal_street(t, 6, {2: "8h", 4: "Jc", 5: "4d"})  # seat 2 shows 5-6-7-8 of hearts
    texts = announcements(t)
    assert texts[-1] == "Seat 5 is high with queen-jack high."
    assert not any("straight" in text or "flush" in text for text in texts)
