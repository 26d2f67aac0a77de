"""The producer page's manual card entry, the pure part (issue 19): what the service
accepts to send, its limit, and the words the page shows. The whole path (page ->
service -> MQTT -> daemon -> feeds -> archive) is tests/broadcast/test_producer_manual_card.py."""

from __future__ import annotations

import pytest

from table_controller.broadcast.manual import (
    PER_MINUTE,
    WINDOW_S,
    ConfirmEntryError,
    Entry,
    EntryError,
    EntryLimiter,
    card_words,
    parse_entry,
    producer_words,
    zone_words,
)


def test_a_confirmed_entry_is_the_console_card_command() -> None:
    entry = parse_entry({"zone": "seat3.down", "card": "as", "confirm": True})
    assert entry == Entry("seat3.down", "As")
    assert entry.payload() == {"zone": "seat3.down", "card": "As"}
    assert parse_entry({"zone": "burn", "card": "10d", "confirm": True}).card == "Td"
    assert parse_entry({"zone": "board", "card": "Kd", "confirm": True}).zone == "board"


def test_without_confirmation_the_service_asks_the_question() -> None:
    with pytest.raises(ConfirmEntryError, match=r"^Enter the ace of spades at seat 3"
                       r" \(face down\) by hand\?$"):
        parse_entry({"zone": "seat3.down", "card": "As"})


@pytest.mark.parametrize(("body", "words"), [
    ([], "JSON object"),
    ({"zone": "seat3.down", "card": "As", "confirm": True, "x": 1}, "unexpected field"),
    ({"card": "As", "confirm": True}, "choose where"),
    ({"zone": "seat9.down", "card": "As", "confirm": True}, "not a place on the table"),
    ({"zone": "muck", "card": "As", "confirm": True}, "cannot be entered in the muck"),
    ({"zone": "burn", "confirm": True}, "rank and suit"),
    ({"zone": "burn", "card": "Zz", "confirm": True}, "not a card of the deck"),
    ({"zone": "burn", "card": "1s", "confirm": True}, "not a card of the deck"),
    ({"zone": "burn", "card": "As", "confirm": "yes"}, "true or false"),
])
def test_what_the_service_refuses_to_send(body: object, words: str) -> None:
    with pytest.raises(EntryError, match=words) as caught:
        parse_entry(body)
    assert not isinstance(caught.value, ConfirmEntryError)


def test_one_entry_at_a_time_and_a_few_a_minute() -> None:
    limit = EntryLimiter()
    assert limit.begin(0.0)
    assert not limit.begin(0.1)  # the first is still waiting for its answer
    assert limit.wait(0.1) > 0
    limit.end()
    for n in range(1, PER_MINUTE):
        assert limit.begin(float(n))
        limit.end()
    assert not limit.begin(30.0)  # PER_MINUTE sent in the last minute
    assert limit.wait(30.0) == pytest.approx(WINDOW_S - 30.0)
    assert limit.begin(WINDOW_S + 0.5)  # the first has left the window


def test_the_words_a_producer_reads() -> None:
    entry = Entry("seat4.up", "Qd")
    assert zone_words("seat4.up") == "seat 4 (face up)"
    assert zone_words("burn") == "the burn"
    assert card_words("Td") == "ten of diamonds"
    assert producer_words({"accepted": True}, entry).startswith(
        "Entered: the queen of diamonds at seat 4 (face up), marked manual.")
    refused = producer_words({"accepted": False, "code": "card_seen",
                              "reason": "the readers see that card at seat2.up: enter by"
                              " hand only a card no reader can read"}, entry)
    assert refused == ("Refused: it contradicts what the readers see."
                       " The table says: the readers see that card at seat 2 (face up):"
                       " enter by hand only a card no reader can read.")
    assert producer_words({"accepted": False, "code": "odd"}, entry) == "Refused (odd)."
