"""Deck files and the registry: lookups, validation errors, and the secret staying secret."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from table_controller.domain.cards import DECK, Card
from table_controller.table.config_file import ConfigError
from table_controller.table.deck import (
    DeckRegistry,
    RegisteredCard,
    load_deck,
    load_decks,
    normalize_uid,
)

ROOT = Path(__file__).resolve().parents[3]
DECKS = ROOT / "hardware" / "decks"
RED = DECKS / "example-deck.toml"
BLUE = DECKS / "example-deck-blue.toml"


def _uid(card: str, prefix: str = "04") -> str:
    """The UID ``_deck_text`` gives ``card``: the prefix byte, then the card index."""
    return f"{prefix}{Card.parse(card).index:012X}"


def _deck_text(
    name: str | None = "test", uid_of: dict[str, str] | None = None, prefix: str = "04"
) -> str:
    """A valid deck with UIDs ``prefix`` + card index, optionally overriding some."""
    lines = [f'name = "{name}"'] if name is not None else []
    lines.append("[cards]")
    for card in DECK:
        uid = _uid(card.code, prefix)
        if uid_of and card.code in uid_of:
            uid = uid_of[card.code]
        lines.append(f'{card.code} = "{uid}"')
    return "\n".join(lines) + "\n"


def _write(tmp_path: Path, text: str, file_name: str = "deck.toml") -> Path:
    path = tmp_path / file_name
    path.write_text(text)
    return path


def _error(tmp_path: Path, text: str) -> ConfigError:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_deck(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    return caught.value


# --------------------------------------------------------------- example decks


def test_example_decks_load() -> None:
    registry = load_decks([RED, BLUE])
    assert registry.decks == ("red", "blue")
    assert len(registry) == 104
    for card in DECK:
        for deck in ("red", "blue"):
            uid = registry.uid_for(card, deck)
            assert registry.lookup(uid) == RegisteredCard(card, deck)
            assert len(uid) == 14, "7-byte ISO14443A UIDs"
            assert uid.startswith("04"), "NXP manufacturer byte"
            assert uid[6:8] != "88", "byte 3 is never the cascade tag"


def test_example_decks_are_reproducible_from_their_seed() -> None:
    generator = runpy.run_path(str(DECKS / "make_example_decks.py"))
    for file_name, name, seed in generator["EXAMPLE_DECKS"]:
        assert (DECKS / file_name).read_text() == generator["deck_text"](name, seed)


def test_lookup_is_case_insensitive_and_none_for_strangers() -> None:
    registry = load_decks([RED])
    uid = registry.uid_for(Card.parse("Qh"), "red")
    assert registry.lookup(uid.lower()) == RegisteredCard(Card.parse("Qh"), "red")
    assert uid.lower() in registry
    assert registry.lookup("E0040150A1B2C3D4") is None
    assert "E0040150A1B2C3D4" not in registry
    assert 42 not in registry


def test_deck_name_defaults_to_file_stem(tmp_path: Path) -> None:
    deck = load_deck(_write(tmp_path, _deck_text(name=None), "green.toml"))
    assert deck.name == "green"
    assert len(deck) == 52
    assert deck.card_for(_uid("As")) == Card.parse("As")
    assert deck.card_for("04000000000099") is None


def test_normalize_uid() -> None:
    assert normalize_uid(" 04a1b2c3 ") == "04A1B2C3"
    for size in (4, 7, 8, 10):
        assert normalize_uid("AB" * size) == "AB" * size
    for bad in ("", "04A1B2", "04A1B2C3D4", "04:A1:B2:C3", "0xA1B2C3D4", "AB" * 11):
        with pytest.raises(ValueError, match="UID"):
            normalize_uid(bad)


# ------------------------------------------------------------------- secrecy


def test_repr_and_str_never_show_the_mapping() -> None:
    registry = load_decks([RED, BLUE])
    deck = registry.deck("red")
    uids = set(deck.uids()) | set(registry.deck("blue").uids())
    shown = [repr(registry), str(registry), repr(deck), str(deck)]
    for text in shown:
        assert not any(uid in text for uid in uids), text
        assert "As" not in text
    assert repr(registry) == "DeckRegistry(decks=('red', 'blue'), tags=104)"
    assert repr(deck) == f"Deck(name='red', path={str(RED)!r})"


def test_loading_logs_no_uid() -> None:
    with capture_logs() as logs:
        registry = load_decks([RED, BLUE])
    uids = set(registry.deck("red").uids()) | set(registry.deck("blue").uids())
    # The shipped examples are public (mode 0644 in a checkout): a warning each
    # (issue 23), which names the file, never a tag.
    loaded = [entry for entry in logs if entry["event"] != "deck_file_readable_by_others"]
    assert [entry["event"] for entry in loaded] == ["deck loaded", "deck loaded"]
    assert all(entry["log_level"] == "info" for entry in loaded)
    for entry in loaded:
        assert entry["cards"] == 52
    for entry in logs:
        assert not any(uid in str(value) for value in entry.values() for uid in uids)


def test_error_messages_never_echo_a_uid(tmp_path: Path) -> None:
    secret = "04DEADBEEF0042"
    for bad in (secret + "0", secret.replace("D", "Z"), secret):
        text = _deck_text(uid_of={"As": bad, "Kd": secret})
        path = _write(tmp_path, text)
        with pytest.raises(ConfigError) as caught:
            load_deck(path)
        assert secret not in str(caught.value)
        assert bad not in str(caught.value)


# -------------------------------------------------------------------- errors


def test_missing_cards(tmp_path: Path) -> None:
    text = "\n".join(
        line for line in _deck_text().splitlines() if not line.startswith(("7h", "Kd"))
    )
    err = _error(tmp_path, text)
    assert err.key == "cards"
    assert err.problem == "a deck needs all 52 cards; missing 2: 7h Kd"


def test_bad_card_code(tmp_path: Path) -> None:
    err = _error(tmp_path, _deck_text().replace("[cards]", '[cards]\n1s = "04FFFFFFFFFFFF"'))
    assert err.key == "cards.1s"
    assert "bad card code '1s'" in err.problem


def test_card_code_not_canonical(tmp_path: Path) -> None:
    err = _error(tmp_path, _deck_text().replace("\nAs =", "\nas ="))
    assert err.key == "cards.as"
    assert err.problem == "write card code 'as' as 'As'"


def test_same_card_twice_literally_is_a_toml_error(tmp_path: Path) -> None:
    err = _error(tmp_path, _deck_text() + 'As = "04FFFFFFFFFFFF"\n')
    assert err.key == ""
    assert "not valid TOML" in err.problem


def test_bad_uid_hex(tmp_path: Path) -> None:
    err = _error(tmp_path, _deck_text(uid_of={"Td": "04G0000000000A"}))
    assert err.key == "cards.Td"
    assert err.problem == "UID has a non-hex character at position 3"


@pytest.mark.parametrize("uid", ["04A1B2", "04A1B2C3D4", "04" * 11, ""])
def test_bad_uid_length(tmp_path: Path, uid: str) -> None:
    err = _error(tmp_path, _deck_text(uid_of={"2c": uid}))
    assert err.key == "cards.2c"
    assert err.problem.startswith("UID must be 4, 7, 8 or 10 bytes")


def test_uid_not_a_string(tmp_path: Path) -> None:
    err = _error(tmp_path, _deck_text().replace('2c = "04000000000000"', "2c = 4"))
    assert err.key == "cards.2c"


def test_same_uid_twice_in_one_deck(tmp_path: Path) -> None:
    # Different case, same tag: caught after normalising; reported at the later card.
    err = _error(tmp_path, _deck_text(uid_of={"As": _uid("Kd").lower()}))
    assert err.key == "cards.As"
    assert err.problem == "same UID as cards.Kd"


def test_same_uid_in_two_decks(tmp_path: Path) -> None:
    first = _write(tmp_path, _deck_text(name="one"), "one.toml")
    uid_of_as = _uid("As")
    second_text = _deck_text(name="two", prefix="05", uid_of={"Qs": uid_of_as})
    second = _write(tmp_path, second_text, "two.toml")
    with pytest.raises(ConfigError) as caught:
        load_decks([first, second])
    err = caught.value
    assert err.path == str(second)
    assert err.key == "cards.Qs"
    assert err.problem == (f"deck 'two' shares this card's tag with cards.As of deck 'one'"
                           f" ({first}): a tag can be in one deck only")
    assert uid_of_as not in str(err)


def test_same_deck_name_twice(tmp_path: Path) -> None:
    first = _write(tmp_path, _deck_text(name="red"), "a.toml")
    second = _write(tmp_path, _deck_text(name="red", prefix="05"), "b.toml")
    with pytest.raises(ConfigError, match=r"b\.toml: name: deck name 'red' is also used by"):
        DeckRegistry([load_deck(first), load_deck(second)])


@pytest.mark.parametrize("name", ["", "two words", "-dash", "x" * 33])
def test_bad_deck_name(tmp_path: Path, name: str) -> None:
    err = _error(tmp_path, _deck_text(name=name))
    assert err.key == "name"


def test_bad_file_stem_as_name(tmp_path: Path) -> None:
    path = _write(tmp_path, _deck_text(name=None), "my deck.toml")
    with pytest.raises(ConfigError, match="not a valid deck name"):
        load_deck(path)


def test_unknown_key(tmp_path: Path) -> None:
    err = _error(tmp_path, "colour = 'red'\n" + _deck_text())
    assert err.key == "colour"
    assert err.problem == "unknown key"


def test_missing_cards_table(tmp_path: Path) -> None:
    err = _error(tmp_path, 'name = "x"\n')
    assert err.key == "cards"
    assert err.problem == "required key is missing"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_deck(tmp_path / "absent.toml")


def test_uid_for_finds_a_card_built_anew_regression() -> None:
    """Regression (issue 13): ``uid_for`` compared cards by identity, so a card built
    as ``Card(rank, suit)`` (equal, not the parsed object) raised KeyError."""
    from table_controller.domain.cards import Suit

    deck = load_deck(RED)
    built = Card(14, Suit.SPADES)
    assert deck.uid_for(built) == deck.uid_for(Card.parse("As"))
    registry = DeckRegistry([deck])
    assert registry.uid_for(built, deck.name) == deck.uid_for(Card.parse("As"))
