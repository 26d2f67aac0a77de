"""The daemon's ``[table] game`` (docs/rules.md "Variants") reaches the engine, end to end.

Emulated readers on ptys -> the daemon -> real Mosquitto: a razz table's published
state names the razz bring-in (the highest upcard) and the razz first to act (the
lowest hand showing), where a stud table would name other seats; the journal's
``table`` line records the game, so ``stud-table replay`` of the journal plays razz
too. A bad game is refused at start with ``file: table.game: problem``.
"""

from __future__ import annotations

import json
import random

from table_controller.daemon.config import load_config
from table_controller.daemon.runner import table_settings
from table_controller.domain.engine.dealing import replay_events
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import Game
from table_controller.mqtt.request import send_request
from table_controller.records.journal import read_journal, strip_envelope
from table_controller.records.replay import replay_file, replay_path
from table_controller.simulation import deal_random
from table_controller.testing.daemon_rig import TABLE, TableRig, clear_table, subscribe, wait_state

SEATS = [2, 3, 5, 7]
SEED = 0
"""A deal whose razz bring-in and 4th-street opener differ from stud's."""


def _razz(rig: TableRig) -> None:
    text = rig.config_path.read_text()
    rig.config_path.write_text(text.replace("[stakes]", 'game = "razz"\n[stakes]', 1))


def test_razz_table_publishes_razz_bring_in_and_first_to_act(rig: TableRig) -> None:
    deal = deal_random(SEATS, random.Random(SEED), fold_chance=0.0)
    [stud] = replay_events(deal.events, TableSettings(auto_hands=True))
    [razz] = replay_events(deal.events, TableSettings(auto_hands=True, game="razz"))
    assert razz.bring_in != stud.bring_in
    assert razz.first_to_act[4] != stud.first_to_act[4]
    _razz(rig)
    sub = subscribe(rig.broker.port)
    rig.start_thread()
    wait_state(sub, lambda s: s["hand"] is None)
    # A dealer's pace well above the readers' scan cycle even on a loaded CI box:
    # this test is about the game, not about cards racing each other.
    rig.deal(deal.events, pace=0.2)
    state = wait_state(sub, lambda s: s["street"] == 7 and s["bring_in"] is not None)
    assert state["bring_in"] == razz.bring_in, state
    rig.stop()
    journal = next((rig.tmp / "journal").glob("*.journal.jsonl"))
    assert '"game":"razz"' in journal.read_text().splitlines()[0]
    report = replay_file(journal)
    [hand] = report["hands"]
    assert hand["bring_in"] == razz.bring_in, hand
    assert hand["first_to_act"] == {str(k): v for k, v in razz.first_to_act.items()}, hand


def test_bad_game_is_refused_at_start_in_one_line(rig: TableRig) -> None:
    text = rig.config_path.read_text()
    rig.config_path.write_text(text.replace("[stakes]", 'game = "omaha"\n[stakes]', 1))
    message = rig.refused_start()
    assert f"{rig.config_path}: table.game: Input should be 'stud', 'razz' or 'stud8'" in message


def test_game_key_defaults_to_stud_and_reaches_the_engine_settings(rig: TableRig) -> None:
    assert table_settings(load_config(rig.config_path), rig.layout).game is Game.STUD
    text = rig.config_path.read_text()
    rig.config_path.write_text(text.replace("[stakes]", 'game = "stud8"\n[stakes]', 1))
    config = load_config(rig.config_path)
    assert config.table.game is Game.STUD8
    assert table_settings(config, rig.layout).game is Game.STUD8


def test_rotated_journal_replays_as_the_tables_game_with_its_names(rig: TableRig) -> None:
    """Past ``max_bytes`` the journal rotates at a hand boundary; the new file is
    headed by the ``table`` line (razz) and the players' names, so it replays on
    its own as razz and a restart on it keeps the names (issues 10 and 12)."""
    _razz(rig)
    text = rig.config_path.read_text()
    rig.config_path.write_text(text.replace('directory = "journal"',
                                            'directory = "journal"\nmax_bytes = 4096', 1))
    sub = subscribe(rig.broker.port)
    rig.start_thread()
    wait_state(sub, lambda s: s["hand"] is None)
    reply = send_request("127.0.0.1", rig.broker.port, TABLE, "seat",
                         json.dumps({"seat": 3, "name": "Ann Lee", "country": "FR"}).encode())
    assert reply["accepted"], reply
    journal_dir = rig.tmp / "journal"
    seed = 1
    while not list(journal_dir.glob(f"{TABLE}.journal.*-*.jsonl")):
        deal = deal_random(SEATS, random.Random(seed), fold_chance=0.0)
        rig.deal(deal.events, pace=0.1)
        rig.deal(clear_table(deal), pace=0.1)
        # Like a real dealer, shuffle only once the hand is over.
        sub.wait_for(lambda m: m.topic.endswith("/events")
                     and json.loads(m.payload).get("kind") == "hand_result", count=seed)
        seed += 1
        assert seed < 8, "no rotation after several hands"
    # One more hand starts the new file.
    deal = deal_random(SEATS, random.Random(seed), fold_chance=0.0)
    rig.deal(deal.events[:12], pace=0.1)
    live = rig.tmp / "journal" / f"{TABLE}.journal.jsonl"
    wait_state(sub, lambda s: s["street"] is not None and s["hand"] == seed)
    rig.stop()
    records = read_journal(live).records
    assert records[0]["op"] == "table", records[:3]
    assert records[0]["game"] == "razz", records[:3]
    assert {"op": "seat", "seat": 3, "name": "Ann Lee", "country": "FR"} in [
        strip_envelope(r) for r in records]
    assert replay_path(live).game == Game.RAZZ
