"""``stud-table deck verify`` (issue 23): the faces printed on the cards against the deck
file. The pure machine (examples and hypothesis), then the real command against an
emulated reader on a pty with a deck file whose two faces were swapped at registration
(which ``deck check`` cannot see: every tag is there).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from deck_rig import BLUE, READER, RED, ZONE, Command, Table
from hypothesis import given
from hypothesis import strategies as st

from table_controller.domain.cards import Card
from table_controller.table.deck import load_deck, load_decks
from table_controller.tools.deck_register import REGISTRATION_ORDER, Line
from table_controller.tools.deck_verify import DeckVerify, render_verify_report

RED_DECK = load_decks([RED, BLUE])
TRUE = load_deck(RED)
KD, SEVEN = Card.parse("Kd"), Card.parse("7s")


def swapped_deck(tmp_path: Path, first: Card = KD, second: Card = SEVEN) -> Path:
    """The red deck file with the tags of ``first`` and ``second`` exchanged (the two
    cards passed in each other's place at registration)."""
    a, b = TRUE.uid_for(first), TRUE.uid_for(second)
    text = RED.read_text().replace(a, "@").replace(b, a).replace("@", b)
    path = tmp_path / "swapped.toml"
    path.write_text(text)
    path.chmod(0o600)
    return path


def put(machine: DeckVerify, face: Card) -> list[Line]:
    """The operator puts the card with ``face`` printed on it (its true tag) on the
    antenna, the antenna settles, and the card is taken off."""
    machine.inventory([TRUE.uid_for(face)])
    lines = machine.settle()
    machine.inventory([])
    machine.settle()
    return lines


def test_the_faces_of_a_good_deck_are_confirmed() -> None:
    faces = [KD, SEVEN, Card.parse("Ah")]
    machine = DeckVerify(TRUE, faces)
    assert machine.prompt() == Line("prompt", "put Kd (king of diamonds) on the antenna [0/3]")
    assert put(machine, KD) == [Line("ok", "Kd confirmed"), Line(
        "prompt", "put 7s (seven of spades) on the antenna [1/3]")]
    put(machine, SEVEN)
    assert put(machine, Card.parse("Ah"))[-1] == Line("done", "3/3 faces confirmed: all"
                                                      " confirmed")
    assert machine.finished
    assert machine.clean
    assert machine.report()["confirmed"] == ["Kd", "7s", "Ah"]


def test_a_face_swap_is_named_as_a_mismatch_then_a_swap(tmp_path: Path) -> None:
    """What ``deck check`` cannot see: both cards' tags are in the file, under each
    other's face."""
    deck = load_deck(swapped_deck(tmp_path))
    machine = DeckVerify(deck, [KD, Card.parse("2c"), SEVEN])
    first = put(machine, KD)
    assert first[0] == Line("refused", f"MISMATCH: asked Kd, but this card's tag is 7s in"
                            f" {deck.path}: the printed face and the deck file disagree")
    assert put(machine, Card.parse("2c"))[0] == Line("ok", "2c confirmed")
    last = put(machine, SEVEN)
    assert last[1] == Line("refused", "7s and Kd are swapped in the deck file: register the"
                           " deck again")
    assert last[-1] == Line("done", "1/3 faces confirmed: NOT clean")
    report = machine.report()
    assert report["mismatched"] == [{"asked": "Kd", "tag_is": "7s"},
                                    {"asked": "7s", "tag_is": "Kd"}]
    assert report["swapped"] == [["7s", "Kd"]]
    assert not report["clean"]
    assert render_verify_report(report) == [
        "deck red: 1/3 faces confirmed, NOT clean",
        "mismatched: Kd is 7s in the file, 7s is Kd in the file",
        "swapped: 7s <-> Kd: register the deck again",
    ]


def test_a_card_of_another_deck_is_refused_and_the_face_asked_again() -> None:
    machine = DeckVerify(TRUE, [KD], known=RED_DECK.lookup)
    machine.inventory([RED_DECK.uid_for(KD, "blue")])
    lines = machine.settle()
    assert lines == [Line("refused", "not a card of deck 'red': this tag is Kd of deck 'blue';"
                          " set it aside and find Kd of this deck"),
                     Line("prompt", "put Kd (king of diamonds) on the antenna [0/1]")]
    machine.inventory([])
    assert put(machine, KD)[0] == Line("ok", "Kd confirmed")
    assert machine.report()["foreign_reads"] == 1


def test_lifted_two_at_once_skip_and_done() -> None:
    machine = DeckVerify(TRUE, [KD, SEVEN, Card.parse("Ah")])
    machine.inventory([TRUE.uid_for(KD)])
    machine.inventory([])
    assert machine.settle()[0].text.startswith("a card was lifted before the antenna settled")
    machine.inventory([TRUE.uid_for(KD), TRUE.uid_for(SEVEN)])
    assert machine.settle()[0] == Line("refused", "2 cards read at once: one card at a time")
    machine.inventory([])
    assert machine.answer("skip")[0] == Line("note", "Kd skipped: not verified")
    assert machine.answer("frobnicate")[0].kind == "error"
    assert machine.answer("done") == [Line("done", "0/3 faces confirmed: NOT clean")]
    report = machine.report()
    assert (report["skipped"], report["not_asked"]) == (["Kd"], ["7s", "Ah"])
    assert machine.answer("skip") == [Line("error", "verification is finished")]


@given(st.randoms(use_true_random=False), st.integers(1, 52), st.integers(0, 3))
def test_verify_finds_exactly_the_faces_the_file_has_wrong(
        rng: random.Random, count: int, swaps: int) -> None:
    """A deck file with some pairs of faces swapped; an honest operator: a face is
    confirmed exactly when the file has it right, every mismatch names the card the
    file has instead, no line holds a UID."""
    cards = {card: TRUE.uid_for(card) for card in REGISTRATION_ORDER}
    wrong: set[Card] = set()
    for _ in range(swaps):
        a, b = rng.sample(REGISTRATION_ORDER, 2)
        cards[a], cards[b] = cards[b], cards[a]
    file_card = {uid: card for card, uid in cards.items()}
    wrong = {card for card in REGISTRATION_ORDER if file_card[TRUE.uid_for(card)] != card}

    class FileDeck:
        name, path = "red", "red.toml"

        @staticmethod
        def card_for(uid: str) -> Card | None:
            return file_card.get(uid.upper())

    faces = rng.sample(REGISTRATION_ORDER, count)
    machine = DeckVerify(FileDeck, faces)  # type: ignore[arg-type]
    lines: list[Line] = [machine.prompt()]
    for face in faces:
        lines += put(machine, face)
    report = machine.report()
    assert set(report["confirmed"]) == {c.code for c in faces if c not in wrong}
    assert {m["asked"]: m["tag_is"] for m in report["mismatched"]} == {
        c.code: file_card[TRUE.uid_for(c)].code for c in faces if c in wrong}
    assert report["clean"] == (not wrong & set(faces))
    text = json.dumps(report) + "\n".join(line.text for line in lines)
    assert not any(uid in text for uid in cards.values())


# -- end to end -------------------------------------------------------------------------------


def test_verify_all_end_to_end_finds_the_swap(table: Table, tmp_path: Path) -> None:
    """``deck verify --all`` on a reader on a pty: the operator puts each asked face's
    card down; the swapped pair is found, everything else confirmed, exit 1; the JSON
    report says the same."""
    deck = swapped_deck(tmp_path)
    command = Command(["deck", "verify", "--layout", str(table.layout_path), "--reader",
                       str(READER), "--zone", ZONE, "--deck", str(deck), "--all", "--seed",
                       "5", "--settle", "0.05"], tmp_path)
    try:
        seen = command.wait_for("verify deck red: 52 faces")
        for _ in range(52):
            seen = command.wait_for(lambda line: line.startswith("> put "), after=seen)
            face = Card.parse(command.output()[seen - 1].split()[2])
            uid = TRUE.uid_for(face)
            table.place(uid)
            seen = command.wait_for(lambda line: line.startswith(("+ ", "! MISMATCH")),
                                    after=seen)
            table.remove(uid)
        assert command.finish() == 1
    finally:
        command.kill()
    out = command.output()
    assert "deck red: 50/52 faces confirmed, NOT clean" in out
    assert "swapped: 7s <-> Kd: register the deck again" in out
    assert not any(uid in "\n".join(out) for uid in TRUE.uids())


def test_verify_json_and_bad_input(table: Table, tmp_path: Path) -> None:
    """--json: the report alone on stdout; --faces outside 1..52: one line, exit 2."""
    command = Command(["deck", "verify", "--layout", str(table.layout_path), "--reader",
                       str(READER), "--zone", ZONE, "--deck", str(RED), "--faces", "1",
                       "--seed", "1", "--settle", "0.05", "--json"], tmp_path)
    try:
        table.wait_inventory_requested()
        face = random.Random(1).sample(REGISTRATION_ORDER, 1)[0]
        table.place(TRUE.uid_for(face))
        assert command.finish() == 0, command.stderr_now()
    finally:
        command.kill()
    report = json.loads("\n".join(command.output()))
    assert report["confirmed"] == [face.code]
    assert report["clean"]
    bad = Command(["deck", "verify", "--layout", str(table.layout_path), "--reader",
                   str(READER), "--zone", ZONE, "--deck", str(RED), "--faces", "53"], tmp_path)
    try:
        assert bad.finish() == 2
    finally:
        bad.kill()
    assert bad.stderr_now().splitlines()[-1] == ("stud-table deck verify: --faces 53 is outside"
                                                 " 1..52")
