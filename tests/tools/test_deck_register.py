"""``stud-table deck register``: the pure registration machine (hypothesis), then the
real command against an emulated reader on a pty with each fault injected.

No timing assertions: the end-to-end tests wait for the command's own lines.
"""

from __future__ import annotations

import random
import signal
import stat
from pathlib import Path

import pytest
from deck_rig import BLUE, READER, RED, ZONE, Command, Table, new_deck_tags
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.cards import Card
from table_controller.table.config_file import ConfigError
from table_controller.table.deck import load_deck, load_decks
from table_controller.tools.cli import main
from table_controller.tools.deck_command import (
    deck_file_text,
    load_partial,
    write_private_file,
)
from table_controller.tools.deck_register import REGISTRATION_ORDER, Line, Registration

TRUTH = new_deck_tags(7)
"""The tags glued into the new deck's cards."""

RED_DECK = load_decks([RED])
FOREIGN = [RED_DECK.uid_for(Card.parse(code), "red") for code in ("Kd", "2c", "As")]
SHORT_TAG = "0102030405"  # 5 bytes: a wire UID no deck file accepts


def passes(machine: Registration, uid: str) -> list[Line]:
    """One card passed over the antenna and taken away: its lines."""
    machine.arrived(uid)
    lines = machine.settle()
    machine.left(uid)
    return lines


def texts(lines: list[Line]) -> str:
    return "\n".join(line.text for line in lines)


# -- the pure machine: examples ------------------------------------------------------------


def test_passing_the_cards_in_order_registers_the_deck(tmp_path: Path) -> None:
    machine = Registration()
    assert machine.prompt().text == "pass 2c (deuce of clubs) [0/52]"
    for card in REGISTRATION_ORDER:
        assert machine.expected == card
        lines = passes(machine, TRUTH[card])
        assert lines[0] == Line("ok", f"{card.code} registered ({machine.registered}/52)")
    assert machine.finished
    assert machine.complete
    assert dict(machine.cards()) == TRUTH
    path = tmp_path / "new.toml"
    write_private_file(path, deck_file_text("new", machine.cards()), replace=False)
    deck = load_deck(path)
    assert all(deck.card_for(uid) == card for card, uid in TRUTH.items())


def test_a_card_read_twice_is_ignored_with_a_note() -> None:
    machine = Registration()
    passes(machine, TRUTH[Card.parse("2c")])
    lines = passes(machine, TRUTH[Card.parse("2c")])
    assert lines[0] == Line("note", "2c read again: ignored (already registered)")
    assert machine.expected == Card.parse("3c")
    assert machine.registered == 1


def test_a_tag_lying_still_is_decided_once() -> None:
    machine = Registration()
    machine.arrived(TRUTH[Card.parse("2c")])
    assert machine.settle()[0].kind == "ok"
    assert machine.settle() == []  # still there: not a second read
    machine.inventory([TRUTH[Card.parse("2c")]])  # a reconnect's inventory: same tag
    assert machine.settle() == []


def test_two_cards_at_once_are_both_refused() -> None:
    machine = Registration()
    machine.arrived(TRUTH[Card.parse("2c")])
    machine.arrived(TRUTH[Card.parse("3c")])
    lines = machine.settle()
    assert lines[0].kind == "refused"
    assert "2 cards read at once" in lines[0].text
    assert machine.registered == 0
    # Only after leaving and coming back alone does a card count.
    machine.left(TRUTH[Card.parse("3c")])
    assert machine.settle() == []
    machine.left(TRUTH[Card.parse("2c")])
    assert passes(machine, TRUTH[Card.parse("2c")])[0].kind == "ok"


def test_a_tag_of_another_deck_is_refused_naming_that_deck() -> None:
    machine = Registration(known=RED_DECK.lookup)
    lines = passes(machine, FOREIGN[0])
    assert lines[0] == Line("refused", "this tag is already Kd of deck 'red': set the card"
                            " aside (a tag can be in one deck only)")
    assert machine.registered == 0
    assert FOREIGN[0] not in texts(lines)


def test_a_tag_no_deck_file_can_hold_is_refused() -> None:
    machine = Registration()
    lines = passes(machine, SHORT_TAG)
    assert lines[0].kind == "refused"
    assert "cannot be in a deck file" in lines[0].text
    assert SHORT_TAG not in texts(lines)


def test_back_unregisters_the_last_card_and_asks_for_it_again() -> None:
    machine = Registration()
    passes(machine, TRUTH[Card.parse("2c")])
    passes(machine, TRUTH[Card.parse("3c")])
    lines = machine.answer("back")
    assert lines[0] == Line("note", "3c unregistered: pass it again")
    assert machine.expected == Card.parse("3c")
    assert passes(machine, TRUTH[Card.parse("3c")])[0].kind == "ok"
    assert machine.cards()[Card.parse("3c")] == TRUTH[Card.parse("3c")]


def test_skip_leaves_a_card_missing_and_the_order_comes_back_to_it() -> None:
    machine = Registration()
    passes(machine, TRUTH[Card.parse("2c")])
    assert "3c skipped" in machine.answer("skip")[0].text
    for card in REGISTRATION_ORDER[2:]:
        passes(machine, TRUTH[card])
    assert machine.expected == Card.parse("3c")  # the skipped card, at the end
    assert machine.missing() == [Card.parse("3c")]
    passes(machine, TRUTH[Card.parse("3c")])
    assert machine.complete


def test_goto_re_registers_a_card_passed_by_mistake() -> None:
    machine = Registration()
    passes(machine, TRUTH[Card.parse("3c")])  # the operator passed 3c for 2c
    lines = machine.answer("goto 2c")
    assert lines[0] == Line("note", "2c unregistered: pass it again")
    passes(machine, TRUTH[Card.parse("2c")])
    assert machine.cards() == {Card.parse("2c"): TRUTH[Card.parse("2c")]}
    assert machine.expected == Card.parse("3c")


def test_done_names_the_missing_faces() -> None:
    machine = Registration()
    for card in REGISTRATION_ORDER[:50]:
        passes(machine, TRUTH[card])
    lines = machine.answer("done")
    assert lines == [Line("done", "stopped with 50/52 cards; missing 2: Ks As")]
    assert machine.finished
    assert not machine.complete


def test_any_order_reads_the_face_from_the_operator() -> None:
    machine = Registration(any_order=True)
    assert machine.prompt().text == "pass any card not registered yet [0/52]"
    passes(machine, TRUTH[Card.parse("Th")])
    assert machine.waiting_for_face
    assert machine.answer("Tx")[0].kind == "error"  # not a card: asked again
    assert machine.answer("10h")[0] == Line("ok", "Th registered (1/52)")
    passes(machine, TRUTH[Card.parse("Ah")])
    lines = machine.answer("Th")  # a typo: Th is taken
    assert lines[0].kind == "error"
    assert "Th is already registered to another tag" in lines[0].text
    assert machine.answer("ah")[0] == Line("ok", "Ah registered (2/52)")


def test_any_order_refuses_a_second_card_before_the_face() -> None:
    machine = Registration(any_order=True)
    passes(machine, TRUTH[Card.parse("2c")])
    lines = passes(machine, TRUTH[Card.parse("3c")])
    assert lines[0].kind == "refused"
    assert machine.answer("2c")[0] == Line("ok", "2c registered (1/52)")
    machine.answer("skip")  # nothing waits: an error, nothing changes
    assert machine.registered == 1


def test_answers_that_are_not_commands_are_errors_that_change_nothing() -> None:
    machine = Registration()
    for text in ("As", "goto", "goto Zz", "skip now", "frobnicate"):
        assert machine.answer(text)[0].kind == "error"
    assert machine.expected == Card.parse("2c")
    assert machine.registered == 0


def test_preload_resumes_at_the_first_missing_card() -> None:
    machine = Registration()
    lines = machine.preload({card: TRUTH[card] for card in REGISTRATION_ORDER
                             if card.code not in ("3c", "Ks")})
    assert lines == [Line("note", "resumed with 50/52 cards"),
                     Line("prompt", "pass 3c (three of clubs) [50/52]")]
    passes(machine, TRUTH[Card.parse("3c")])
    assert machine.expected == Card.parse("Ks")
    with pytest.raises(ValueError, match="the same tag for two cards"):
        Registration().preload({Card.parse("2c"): "04A1B2C3", Card.parse("3c"): "04a1b2c3"})


def test_a_partial_file_with_a_bad_entry_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "new.partial.toml"
    kd = RED_DECK.uid_for(Card.parse("Kd"), "red")
    for text, problem in [
        ('[cards]\n2c = "04A1"\n', "cards.2c: UID must be 4, 7, 8 or 10 bytes"),
        ('[cards]\nzz = "04A1B2C3"\n', "cards.zz: bad card code 'zz'"),
        ('[cards]\n2c = "04A1B2C3"\n3c = "04a1b2c3"\n', "cards.3c: same UID as cards.2c"),
        (f'[cards]\n2c = "{kd}"\n', "cards.2c: this tag is already Kd of deck 'red'"),
        ('name = "new"\n', "cards: a partial deck needs a [cards] table"),
    ]:
        path.write_text(text)
        with pytest.raises(ConfigError) as caught:
            load_partial(path, RED_DECK)
        assert str(caught.value).startswith(f"{path}: {problem}")
        assert kd not in str(caught.value)


# -- the pure machine: properties ----------------------------------------------------------

POOL = [*TRUTH.values(), *FOREIGN, SHORT_TAG]

_action = st.one_of(
    st.tuples(st.just("arrive"), st.sampled_from(POOL)),
    st.tuples(st.just("leave"), st.sampled_from(POOL)),
    st.tuples(st.just("settle"), st.just("")),
    st.tuples(st.just("answer"), st.sampled_from(
        ["back", "skip", "done", "help", "", "goto Kd", "goto 2c", "Ah", "10c", "x", "goto"])),
    st.tuples(st.just("inventory"), st.sampled_from(POOL)),
)


@settings(max_examples=120)
@given(any_order=st.booleans(), actions=st.lists(_action, max_size=120))
def test_whatever_happens_the_deck_stays_a_valid_secret_map(
        any_order: bool, actions: list[tuple[str, str]]) -> None:
    """Any mix of reads, removals, inventories and answers: no line shows a UID, no
    tag is registered twice, no foreign or unusable tag is ever registered, and the
    progress shown is the count registered."""
    machine = Registration(any_order=any_order, known=RED_DECK.lookup)
    for kind, value in actions:
        if kind == "arrive":
            machine.arrived(value)
            lines: list[Line] = []
        elif kind == "leave":
            machine.left(value)
            lines = []
        elif kind == "settle":
            lines = machine.settle()
        elif kind == "inventory":
            machine.inventory([value])
            lines = []
        else:
            lines = machine.answer(value)
        shown = texts([*lines, machine.prompt()])
        assert not any(uid in shown for uid in POOL)
        cards = machine.cards()
        assert len(set(cards.values())) == len(cards)
        assert not set(cards.values()) & {*FOREIGN, SHORT_TAG}
        assert f"[{machine.registered}/52]" in machine.prompt().text
        assert machine.registered + len(machine.missing()) == 52


@settings(max_examples=40)
@given(data=st.data())
def test_an_honest_pass_with_noise_between_cards_registers_the_true_deck(
        data: st.DataObject) -> None:
    """The operator passes every expected card, with double reads, foreign tags and
    pairs of cards (refused) in between: the deck is exactly the cards' own tags."""
    machine = Registration(known=RED_DECK.lookup)
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    while not machine.finished:
        noise = data.draw(st.sampled_from(["none", "again", "foreign", "pair", "stay"]))
        registered = list(machine.cards().values())
        if noise == "again" and registered:
            passes(machine, rng.choice(registered))
        elif noise == "foreign":
            passes(machine, rng.choice(FOREIGN))
        elif noise == "pair":
            pair = rng.sample(list(TRUTH.values()), 2)
            for uid in pair:
                machine.arrived(uid)
            assert machine.settle()[0].kind == "refused"
            for uid in pair:
                machine.left(uid)
        expected = machine.expected
        assert expected is not None
        uid = TRUTH[expected]
        if noise == "stay":  # the card stays on the antenna (a stack) and is re-settled
            machine.arrived(uid)
            machine.settle()
            machine.settle()
            machine.left(uid)
        else:
            passes(machine, uid)
    assert dict(machine.cards()) == TRUTH


# -- the deck file -------------------------------------------------------------------------


def test_the_file_is_owner_only_and_never_clobbers(tmp_path: Path) -> None:
    path = tmp_path / "new.toml"
    write_private_file(path, deck_file_text(None, TRUTH), replace=False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        write_private_file(path, "x", replace=False)
    assert load_deck(path).name == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["new.toml"]  # no temporary left


def test_a_partial_file_does_not_load_as_a_deck(tmp_path: Path) -> None:
    path = tmp_path / "new.partial.toml"
    partial = {card: TRUTH[card] for card in REGISTRATION_ORDER[:3]}
    write_private_file(path, deck_file_text("new", partial, partial=True), replace=False)
    assert "# PARTIAL: 3/52 cards; missing 49: 5c" in path.read_text()
    with pytest.raises(ConfigError, match="a deck needs all 52 cards"):
        load_deck(path)


# -- end to end: the command, a reader emulated on a pty -------------------------------------


def register(table: Table, tmp_path: Path, *extra: str) -> Command:
    return Command(["deck", "register", "--layout", str(table.layout_path), "--reader",
                    str(READER), "--zone", ZONE, "--out", str(tmp_path / "new.toml"),
                    "--settle", "0.05", *extra], tmp_path)


def pass_card(table: Table, command: Command, uid: str, expect: str, after: int) -> int:
    table.place(uid)
    after = command.wait_for(expect, after=after)
    table.remove(uid)
    return after


def test_register_end_to_end_with_every_fault(table: Table, tmp_path: Path) -> None:
    """Double read, a skipped card, two cards at once, the reader unplugged and back,
    and a tag of a deck the table's config names, all in one session against a
    reader on a pty; the deck written is the true one, 0600."""
    config = tmp_path / "table.toml"  # the table's config names the red deck
    config.write_text("\n".join([
        "[table]", 'id = "t1"', f'layout = "{table.layout_path}"', f'decks = ["{RED}"]',
        "[stakes]", "ante = 1", "bring_in = 2", "small_bet = 5", "big_bet = 10",
        "[journal]", 'directory = "journal"']) + "\n")
    # red named twice (the config and --existing): one deck, not a name clash
    command = register(table, tmp_path, "--config", str(config), "--existing", str(BLUE),
                       str(RED))
    try:
        seen = command.wait_for("> pass 2c")
        for number, card in enumerate(REGISTRATION_ORDER):
            if card.code == "5c":
                command.send("skip")
                seen = command.wait_for("5c skipped", after=seen)
                continue
            seen = pass_card(table, command, TRUTH[card], f"+ {card.code} registered", seen)
            if number == 3:  # 4c again: a double read
                seen = pass_card(table, command, TRUTH[card], "4c read again: ignored", seen)
            if number == 10:  # two new cards together: both refused
                table.place_together(TRUTH[REGISTRATION_ORDER[11]],
                                     TRUTH[REGISTRATION_ORDER[12]])
                seen = command.wait_for("2 cards read at once", after=seen)
                table.remove(TRUTH[REGISTRATION_ORDER[11]])
                table.remove(TRUTH[REGISTRATION_ORDER[12]])
            if number == 15:  # the reader's cable is pulled and plugged back
                table.reader.unplug()
                seen = command.wait_for("- reader 10 disconnected: port_lost", after=seen)
                table.reader.replug()
                seen = command.wait_for("- reader 10 online", after=seen)
            if number == 20:  # a card of the red deck slipped into the box
                seen = pass_card(table, command, FOREIGN[0],
                                 "this tag is already Kd of deck 'red'", seen)
        seen = command.wait_for("> pass 5c", after=seen)  # the skipped card, at the end
        pass_card(table, command, TRUTH[Card.parse("5c")], "all 52 cards registered", seen)
        assert command.finish() == 0
    finally:
        command.kill()
    out = "\n".join(command.output())
    assert "deck written" in out
    assert not any(uid in out for uid in POOL)
    path = tmp_path / "new.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    deck = load_deck(path)
    assert deck.name == "new"
    assert all(deck.card_for(uid) == card for card, uid in TRUTH.items())


def test_register_any_order_end_to_end(table: Table, tmp_path: Path) -> None:
    command = register(table, tmp_path, "--any-order", "--deck-id", "green")
    order = list(REGISTRATION_ORDER)
    random.Random(3).shuffle(order)
    try:
        seen = command.wait_for("> pass any card")
        for card in order:
            seen = pass_card(table, command, TRUTH[card], "type the face", seen)
            face = "10" + card.code[1] if card.code[0] == "T" else card.code.lower()
            command.send(face)
            seen = command.wait_for(f"+ {card.code} registered", after=seen)
        assert command.finish() == 0
    finally:
        command.kill()
    deck = load_deck(tmp_path / "new.toml")
    assert deck.name == "green"
    assert all(deck.card_for(uid) == card for card, uid in TRUTH.items())


def register_some(table: Table, tmp_path: Path, cards: int, *extra: str) -> Command:
    """The command started and the first ``cards`` cards registered."""
    command = register(table, tmp_path, *extra)
    try:
        seen = command.wait_for("> pass 2c")
        for card in REGISTRATION_ORDER[:cards]:
            seen = pass_card(table, command, TRUTH[card], f"+ {card.code} registered", seen)
    except BaseException:
        command.kill()
        raise
    return command


def test_end_of_input_writes_nothing(table: Table, tmp_path: Path) -> None:
    command = register_some(table, tmp_path, 3)
    try:
        command.close_input()  # Ctrl-D
        assert command.finish() == 1
    finally:
        command.kill()
    out = "\n".join(command.output())
    assert "input closed: stopping" in out
    assert "nothing written" in out
    assert "missing 49: 5c 6c" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev", "layout.toml"]


def test_ctrl_c_writes_nothing_but_the_partial_file_if_asked(
        table: Table, tmp_path: Path) -> None:
    command = register_some(table, tmp_path, 2, "--partial")
    try:
        command.process.send_signal(signal.SIGINT)
        assert command.finish() == 1
    finally:
        command.kill()
    out = "\n".join(command.output())
    assert "interrupted" in out
    assert "nothing written" in out
    assert not (tmp_path / "new.toml").exists()
    partial = tmp_path / "new.partial.toml"
    assert stat.S_IMODE(partial.stat().st_mode) == 0o600
    assert "# PARTIAL: 2/52 cards" in partial.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev", "layout.toml",
                                                          "new.partial.toml"]


def test_resume_from_a_partial_file_end_to_end(table: Table, tmp_path: Path) -> None:
    partial = tmp_path / "new.partial.toml"
    write_private_file(partial, deck_file_text(None, {
        card: TRUTH[card] for card in REGISTRATION_ORDER[:-2]}, partial=True), replace=False)
    command = register(table, tmp_path, "--resume", str(partial))
    try:
        seen = command.wait_for("- resumed with 50/52 cards")
        seen = pass_card(table, command, TRUTH[Card.parse("Ks")], "+ Ks registered", seen)
        pass_card(table, command, TRUTH[Card.parse("As")], "all 52 cards registered", seen)
        assert command.finish() == 0
    finally:
        command.kill()
    assert all(load_deck(tmp_path / "new.toml").card_for(uid) == card
               for card, uid in TRUTH.items())
    assert not partial.exists()  # the secret partial file is not left behind


def run_and_fail(capsys: pytest.CaptureFixture[str], layout: Path, tmp_path: Path,
                 *args: str, out: str = "new.toml") -> str:
    """``stud-table deck register`` (in this process: bad input never opens a reader)."""
    code = main(["deck", "register", "--layout", str(layout), "--out", str(tmp_path / out),
                 *args])
    message = capsys.readouterr().err
    assert code == 2, message
    assert len(message.strip().splitlines()) == 1, message
    assert message.startswith("stud-table deck register: ")
    return message


def test_bad_input_is_one_line_and_exit_2(
        table: Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    layout = table.layout_path
    reader = ["--reader", str(READER), "--zone", ZONE]
    assert "no reader 77" in run_and_fail(capsys, layout, tmp_path, "--reader", "77",
                                          "--zone", ZONE)
    assert "reader 10 has no antenna on zone seat1.up" in run_and_fail(
        capsys, layout, tmp_path, "--reader", "10", "--zone", "seat1.up")
    assert "unknown zone 'seat9.up'" in run_and_fail(capsys, layout, tmp_path, "--reader", "10",
                                      "--zone", "seat9.up")
    (tmp_path / "taken.toml").write_text("x")
    assert "taken.toml exists" in run_and_fail(capsys, layout, tmp_path, *reader,
                                               out="taken.toml")
    assert "'.bad' must be 1-32" in run_and_fail(capsys, layout, tmp_path, *reader,
                                                 "--deck-id", ".bad")
    bad = tmp_path / "bad.toml"
    kd = RED_DECK.uid_for(Card.parse("Kd"), "red")
    bad.write_text(RED.read_text().replace(RED_DECK.uid_for(Card.parse("Qd"), "red"), kd))
    message = run_and_fail(capsys, layout, tmp_path, *reader, "--existing", str(bad))
    assert "bad.toml: cards.Kd: same UID as cards.Qd" in message
    assert kd not in message
    bad.write_text(RED.read_text().replace(kd, kd[:-1] + "G"))
    message = run_and_fail(capsys, layout, tmp_path, *reader, "--existing", str(bad))
    assert "bad.toml: cards.Kd: UID has a non-hex character at position 14" in message
    assert kd[:-1] not in message


def test_a_layout_naming_a_missing_device_is_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    layout = tmp_path / "layout.toml"
    layout.write_text((RED.parents[1] / "layouts" / "table-2.toml").read_text())
    message = run_and_fail(capsys, layout, tmp_path, "--reader", str(READER), "--zone", ZONE)
    assert "reader 10: device /dev/stud-table/reader-10 not found"\
        " (is the reader plugged in?)" in message


def test_a_card_lifted_before_it_settles_is_warned_about() -> None:
    """Issue 23: a card taken away before the antenna settled is not registered, and
    the operator is told so (it used to vanish without a word)."""
    machine = Registration()
    machine.arrived(TRUTH[Card.parse("2c")])
    machine.left(TRUTH[Card.parse("2c")])
    lines = machine.settle()
    assert lines[0] == Line("refused", "a card was lifted before the antenna settled: nothing"
                            " registered for it; hold each card still until its line appears,"
                            " and pass it again")
    assert lines[-1] == machine.prompt()
    assert machine.registered == 0
    assert machine.settle() == []  # said once
    # The same through inventories (what the command feeds), two cards at once.
    machine.inventory([TRUTH[Card.parse("2c")], TRUTH[Card.parse("3c")]])
    machine.inventory([])
    assert machine.settle()[0].text.startswith("2 cards were lifted before the antenna settled")
    # A reader dropout (the tag gone for a scan and back) is not a lifted card.
    machine.inventory([TRUTH[Card.parse("2c")]])
    machine.inventory([])
    machine.inventory([TRUTH[Card.parse("2c")]])
    assert machine.settle()[0] == Line("ok", "2c registered (1/52)")
