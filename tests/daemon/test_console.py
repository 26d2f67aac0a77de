"""The dealer's console end to end: MQTT 5 commands to the real daemon over Mosquitto.

A hand is started by command, its cards dealt through the emulated readers,
the betting entered by command; every command gets a reply on its response
topic. Rejections (out of turn, illegal amount, malformed JSON, unknown
command or seat) change nothing and reach the floor as alerts. The CLI is run
as a subprocess; ``kill -9`` mid-betting and a restart replay the journal to
the same pot and stacks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from table_controller.domain.cards import Card
from table_controller.domain.events import CardPlaced, CardRemoved
from table_controller.domain.zones import Zone, ZoneKind
from table_controller.mqtt.request import send_request
from table_controller.records.journal import read_journal
from table_controller.testing.broker import WAIT, RecordingSubscriber, wait_until
from table_controller.testing.daemon_rig import (
    ROOT,
    TABLE,
    TableRig,
    events_of,
    latest,
    subscribe,
    wait_state,
)

STATE = f"{ROOT}/state"
ALERTS = f"{ROOT}/alerts"
EVENTS = f"{ROOT}/events"

# Stakes of the rig: ante 1, bring-in 2, small bet 5, big bet 10.
PLAYERS = [1, 2, 4]
STACKS = {"1": 100, "2": 100, "4": 80}
# Seat 2 shows the low card (3c): it brings it in. On 4th street seat 1 shows
# the high hand (As Kh) and opens; nobody shows a pair (no open-pair option).
THIRD = {1: ("Jc", "Td", "Kh"), 2: ("8h", "5s", "3c"), 4: ("6d", "4s", "Qd")}
FOURTH = {1: "As", 2: "7d", 4: "9s"}
BURNS = ("2h", "2d")


def place(zone: str, code: str) -> CardPlaced:
    return CardPlaced(Zone.parse(zone), Card.parse(code))


def third_street() -> list[CardPlaced]:
    cards = []
    for number in range(3):
        face = "up" if number == 2 else "down"
        cards += [place(f"seat{seat}.{face}", THIRD[seat][number]) for seat in PLAYERS]
    return cards


def fourth_street() -> list[CardPlaced]:
    return [CardPlaced(Zone(ZoneKind.BURN), Card.parse(BURNS[0]))] + [
        place(f"seat{seat}.up", FOURTH[seat]) for seat in PLAYERS
    ]


def command(rig: TableRig, name: str, body: Any) -> dict[str, Any]:
    """Send one console command (JSON-encoded unless bytes) and return the reply."""
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    return send_request("127.0.0.1", rig.broker.port, TABLE, name, payload, timeout=WAIT)


def accepted(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["accepted"] is True, reply
    assert reply["code"] is None
    assert reply["reason"] == ""
    return reply


def rejected(reply: dict[str, Any], code: str) -> dict[str, Any]:
    assert reply["accepted"] is False, reply
    assert reply["code"] == code, reply
    assert reply["reason"], reply
    return reply


def content(state: dict[str, Any]) -> dict[str, Any]:
    """A state without what changes on every publication."""
    return {k: v for k, v in state.items() if k not in ("seq", "ts")}


def game(state: dict[str, Any]) -> dict[str, Any]:
    """A state's cards, chips and turn: not the open alerts a rejection may add."""
    return {k: v for k, v in content(state).items() if k != "alerts"}


def chips(state: dict[str, Any]) -> dict[int, tuple[int | None, int | None]]:
    """seat -> (stack, bet) of the seats in the hand."""
    return {s["seat"]: (s["stack"], s["bet"]) for s in state["seats"] if s["status"] != "empty"}


def legal(state: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {a["action"]: (a["min_total"], a["max_total"]) for a in state["legal_actions"]}


def start_and_deal_third(rig: TableRig, sub: RecordingSubscriber) -> dict[str, Any]:
    """Start the hand by command, deal 3rd street; return the state once dealt."""
    reply = accepted(command(rig, "hand", {"players": PLAYERS, "stacks": STACKS}))
    assert reply["hand"] is not None
    rig.deal(third_street(), pace=0.05)
    return wait_state(
        sub,
        lambda s: s["bring_in"] == 2
        and all(len(x["up"]) == 1 for x in s["seats"] if x["seat"] in PLAYERS),
    )


def test_hand_betting_rejections_and_kill_over_mqtt(rig: TableRig) -> None:
    sub = subscribe(rig.broker.port)
    rig.start_thread()
    wait_state(sub, lambda s: s["hand"] is None)
    dealt = start_and_deal_third(rig, sub)
    # The console started the hand: chips and turn show from the first card on.
    assert chips(dealt) == {1: (100, 0), 2: (100, 0), 4: (80, 0)}
    assert dealt["pot"] == 3  # the antes
    assert dealt["to_act"] == 2
    assert legal(dealt) == {"bring_in": (2, 2), "complete": (5, 5)}

    reply = accepted(command(rig, "act", {"seat": 2, "action": "bring_in", "amount": None}))
    assert reply["to_act"] == 4
    assert reply["pot"] == 5
    state = wait_state(sub, lambda s: s["to_act"] == 4)
    assert state["pot"] == 5  # three antes and the bring-in
    assert chips(state) == {1: (100, 0), 2: (98, 2), 4: (80, 0)}
    assert legal(state) == {"fold": (0, 0), "call": (2, 2), "complete": (5, 5)}
    assert state["pots"] == [{"amount": 3, "eligible": [1, 2, 4]}]
    action = sub.wait_topic(EVENTS, lambda e: e.get("kind") == "action")
    assert action.json()["seat"] == 2
    assert action.json()["action"] == "bring_in"
    assert action.json()["amount"] == 2

    # Out of turn: rejected with the reason, the floor alerted, nothing changed.
    before = game(latest(sub, STATE) or {})
    reply = rejected(command(rig, "act", {"seat": 1, "action": "call"}), "out_of_turn")
    assert reply["to_act"] == 4
    assert reply["pot"] == 5
    alert = sub.wait_topic(ALERTS, lambda a: a["code"] == "out_of_turn").json()
    assert alert["seat"] == 1
    assert alert["severity"] == "warning"  # refused, nothing changed (docs/alerts.md)
    # Wrong amount: a completion is exactly the small bet.
    rejected(command(rig, "act", {"seat": 4, "action": "complete", "amount": 7}),
             "illegal_bet")
    sub.wait_topic(ALERTS, lambda a: a["code"] == "illegal_bet")
    # A seat of the table that is not in the hand (the engine's call).
    rejected(command(rig, "act", {"seat": 3, "action": "call"}), "unknown_seat")
    state = wait_state(sub, lambda s: {"out_of_turn", "illegal_bet"}
                       <= {a["code"] for a in s["alerts"]})
    assert game(state) == before

    # Malformed input never reaches the engine: a reply, an alert, no change.
    before_alerts = len(sub.on_topic(ALERTS))
    for name, body, code in [
        ("act", b"{\"seat\": 4, \"action\": ", "bad_json"),
        ("shuffle", {"seat": 4}, "unknown_command"),
        ("act", {"seat": 9, "action": "call"}, "unknown_seat"),
        ("act", {"seat": 4}, "invalid_command"),
        ("act", {"seat": 4, "action": "call", "chips": 2}, "invalid_command"),
        ("act", {"seat": "4", "action": "call"}, "invalid_command"),
        # (partial stacks are accepted since issue 10: a stack for a non-player is not)
        ("hand", {"players": [1, 2], "stacks": {"3": 10}}, "invalid_command"),
    ]:
        reply = rejected(command(rig, name, body), code)
        assert reply["to_act"] == 4, reply
    sub.wait_for(lambda m: m.topic == ALERTS and m.json()["code"] == "console_rejected",
                 count=7)
    assert len(sub.on_topic(ALERTS)) == before_alerts + 7
    assert game(latest(sub, STATE) or {}) == before

    # The betting goes on: complete, call, call closes 3rd street.
    accepted(command(rig, "act", {"seat": 4, "action": "complete"}))
    accepted(command(rig, "act", {"seat": 1, "action": "call"}))
    reply = accepted(command(rig, "act", {"seat": 2, "action": "call", "amount": 5}))
    assert reply["to_act"] is None
    assert reply["pot"] == 18
    state = wait_state(sub, lambda s: s["pot"] == 18 and s["to_act"] is None)
    assert chips(state) == {1: (95, 0), 2: (95, 0), 4: (75, 0)}
    assert state["pots"] == [{"amount": 18, "eligible": [1, 2, 4]}]
    assert state["legal_actions"] == []

    # 4th street: the high hand (seat 1) opens.
    rig.deal(fourth_street(), pace=0.05)
    state = wait_state(sub, lambda s: s["street"] == 4 and s["to_act"] == 1)
    assert legal(state) == {"fold": (0, 0), "check": (0, 0), "bet": (5, 5)}

    # The floor kills seat 4's hand (absent, rule 6): it is out of the pots.
    reply = accepted(command(rig, "kill", {"seat": 4, "reason": "absent (rule 6)"}))
    state = wait_state(
        sub, lambda s: next(x for x in s["seats"] if x["seat"] == 4)["status"] == "dead"
    )
    assert state["pots"] == [{"amount": 18, "eligible": [1, 2]}]
    accepted(command(rig, "act", {"seat": 1, "action": "bet"}))
    state = wait_state(sub, lambda s: s["to_act"] == 2 and s["pot"] == 23)
    assert legal(state) == {"fold": (0, 0), "call": (5, 5), "raise": (10, 10)}
    actions = [(e["seat"], e["action"], e["amount"]) for e in events_of(sub, EVENTS, "action")]
    assert actions == [(2, "bring_in", 2), (4, "complete", 5), (1, "call", 5),
                       (2, "call", 5), (1, "bet", 5)]

    # The journal holds every well-formed command, rejected ones included, and
    # none of the malformed ones.
    records = read_journal(rig.tmp / "journal" / f"{TABLE}.journal.jsonl").records
    ops = [(r["op"], r.get("seat"), r.get("action")) for r in records
           if r["op"] in ("act", "kill", "hand")]
    assert ops == [
        ("hand", None, None), ("act", 2, "bring_in"), ("act", 1, "call"),
        ("act", 4, "complete"), ("act", 3, "call"), ("act", 4, "complete"),
        ("act", 1, "call"), ("act", 2, "call"), ("kill", 4, None), ("act", 1, "bet"),
    ]

    # End refused while seat 2 still faces the bet; seat 2 folds, seat 1 wins,
    # then the end is accepted and a later action is refused (hand over).
    rejected(command(rig, "end", b""), "illegal_action")
    accepted(command(rig, "act", {"seat": 2, "action": "fold"}))
    accepted(command(rig, "end", b""))
    rejected(command(rig, "act", {"seat": 2, "action": "call"}), "hand_over")


def run_cli(rig: TableRig, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "table_controller", "console",
         "--broker", f"127.0.0.1:{rig.broker.port}", "--table", TABLE, "--timeout", str(WAIT),
         *args],
        capture_output=True, text=True, timeout=WAIT * 3, check=False,
    )


def test_cli_round_trip(rig: TableRig) -> None:
    sub = subscribe(rig.broker.port)
    rig.start_thread()
    wait_state(sub, lambda s: s["hand"] is None)
    done = run_cli(rig, "hand", "1", "2", "4", "--stacks", "1=100", "2=100", "4=80")
    assert done.returncode == 0, done.stderr
    assert "hand: accepted" in done.stdout
    rig.deal(third_street(), pace=0.05)
    wait_state(sub, lambda s: s["bring_in"] == 2
               and all(len(x["up"]) == 1 for x in s["seats"] if x["seat"] in PLAYERS))
    done = run_cli(rig, "act", "2", "bring_in")
    assert done.returncode == 0, done.stderr
    assert "seat 4 to act" in done.stdout
    assert "pot 5" in done.stdout
    done = run_cli(rig, "--json", "act", "1", "call")  # out of turn
    assert done.returncode == 1, done.stderr
    reply = json.loads(done.stdout)
    assert reply["code"] == "out_of_turn"
    assert reply["accepted"] is False
    done = run_cli(rig, "raw", "act", "{oops")
    assert done.returncode == 1
    assert "rejected (bad_json)" in done.stdout
    done = run_cli(rig, "act", "4", "complete", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    done = run_cli(rig, "kill", "1", "--reason", "absent")
    assert done.returncode == 0, done.stdout + done.stderr
    for bad in (["act", "x", "call"], ["act", "4", "shove"], ["hand", "1", "--stacks", "1"]):
        done = run_cli(rig, *bad)
        assert done.returncode == 2, (bad, done.stderr)
    state = wait_state(sub, lambda s: s["to_act"] == 2)
    assert chips(state)[4] == (75, 5)
    assert next(x for x in state["seats"] if x["seat"] == 1)["status"] == "dead"
    # Issue 12: the seat command names a player on the state (and the pages).
    done = run_cli(rig, "seat", "4", "Ann Lee", "--country", "FR")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "seat: accepted" in done.stdout
    state = wait_state(sub, lambda s: next(x for x in s["seats"] if x["seat"] == 4)["name"]
                       == "Ann Lee")
    done = run_cli(rig, "seat", "4", "x" * 300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "rejected" in done.stdout
    assert "longer than" in done.stdout


def test_kill9_mid_betting_replays_to_the_same_pot_and_stacks(rig: TableRig) -> None:
    sub = subscribe(rig.broker.port)
    rig.start_process()
    wait_until(lambda: (latest(sub, f"{ROOT}/status") or {}).get("status") == "online",
               what="daemon online")
    start_and_deal_third(rig, sub)
    for seat, action in ((2, "bring_in"), (4, "complete"), (1, "call")):
        accepted(command(rig, "act", {"seat": seat, "action": action}))
    rejected(command(rig, "act", {"seat": 4, "action": "call"}), "out_of_turn")
    # Wait for the state the rejection published (with its out_of_turn alert): the
    # one before it matches to_act and pot too, and the reply can arrive first.
    before = wait_state(sub, lambda s: s["to_act"] == 2 and s["pot"] == 15
                        and [a["code"] for a in s["alerts"]] == ["out_of_turn"])
    rig.kill9()
    sub.close()

    after_sub = subscribe(rig.broker.port)
    rig.start_process()
    # Only what the restarted daemon publishes counts (seq never goes back), not
    # the retained copies of the killed one.
    wait_until(
        lambda: any(m.json()["status"] == "online" and m.json()["seq"] > before["seq"]
                    for m in after_sub.on_topic(f"{ROOT}/status")),
        what="the restarted daemon online",
    )
    after = wait_state(after_sub, lambda s: s["seq"] > before["seq"])
    assert content(after) == content(before)
    # The replayed hand goes on where it stopped.
    reply = accepted(command(rig, "act", {"seat": 2, "action": "call"}))
    assert reply["pot"] == 18
    assert reply["to_act"] is None
    after_sub.close()


# ------------------------------------------------ issue 9: notices and hand/end

NOTICES = f"{ROOT}/notices"
SECURE_NOTICES = f"{ROOT}/secure/notices"
FIFTH = {1: "Ah", 2: "9c", 4: "Jh"}  # seat 1 shows a pair of aces on 5th street


def fifth_street() -> list[CardPlaced]:
    return [CardPlaced(Zone(ZoneKind.BURN), Card.parse(BURNS[1]))] + [
        place(f"seat{seat}.up", FIFTH[seat]) for seat in PLAYERS
    ]


def test_notices_reach_their_topics_and_never_the_alerts(rig: TableRig) -> None:
    """Rule 19 (a call into a hand beaten on board) and rule 10 (up cards picked up
    facing a bet) on a correctly played hand: notices, no alert; the rule-19 one is
    computed from hole cards, so only on secure/notices."""
    sub = subscribe(rig.broker.port)
    rig.start_thread()
    wait_state(sub, lambda s: s["hand"] is None)
    start_and_deal_third(rig, sub)
    for seat, action in ((2, "bring_in"), (4, "call"), (1, "call")):
        accepted(command(rig, "act", {"seat": seat, "action": action}))
    rig.deal(fourth_street(), pace=0.05)
    wait_state(sub, lambda s: s["street"] == 4 and s["to_act"] == 1)
    for seat in (1, 2, 4):
        accepted(command(rig, "act", {"seat": seat, "action": "check"}))
    rig.deal(fifth_street(), pace=0.05)
    wait_state(sub, lambda s: s["street"] == 5 and s["to_act"] == 1)
    accepted(command(rig, "act", {"seat": 1, "action": "bet"}))
    # Seat 2's 8-5-3-7-9 cannot beat the aces showing: a legal call (rule 19).
    accepted(command(rig, "act", {"seat": 2, "action": "call"}))
    secret = sub.wait_topic(SECURE_NOTICES, lambda n: n["code"] == "beaten_on_board").json()
    assert (secret["seat"], secret["street"], secret["rule"]) == (2, 5, 19)
    # Seat 4 picks its up cards up facing the bet: a fold (rule 10), then the
    # operator keys the fold, which is accepted as a confirmation.
    for code in ("Qd", "9s", "Jh"):
        rig.table.apply(CardRemoved(Zone.up(4), Card.parse(code)))
    lifted = sub.wait_topic(NOTICES, lambda n: n["code"] == "upcards_lifted").json()
    assert (lifted["seat"], lifted["rule"]) == (4, 10)
    twin = sub.wait_topic(SECURE_NOTICES, lambda n: n["code"] == "upcards_lifted").json()
    assert twin == lifted  # the same notice, the same seq
    state = wait_state(sub, lambda s: next(x for x in s["seats"] if x["seat"] == 4)["status"]
                       == "folded")
    reply = accepted(command(rig, "act", {"seat": 4, "action": "fold"}))
    assert reply["to_act"] is None  # 5th street's round is complete
    assert state["alerts"] == []  # notices are not open alerts
    assert sub.on_topic(ALERTS) == []
    public = [m for m in sub.snapshot() if "/secure/" not in m.topic]
    assert not any(b"beaten_on_board" in m.payload for m in public)
    assert [m.json()["code"] for m in sub.on_topic(NOTICES)] == ["upcards_lifted"]


def test_console_hand_during_a_card_only_hand_is_refused_and_end_is_visible(
    rig: TableRig,
) -> None:
    """Issue 9 item 21: a console ``hand`` never drops a card-only hand in progress;
    ``end`` closes it (and an empty console hand) visibly."""
    sub = subscribe(rig.broker.port)
    rig.start_thread()
    wait_state(sub, lambda s: s["hand"] is None)
    rig.deal(third_street(), pace=0.05)  # no console: a card-only hand from the cards
    dealt = wait_state(sub, lambda s: s["bring_in"] == 2)
    number = dealt["hand"]
    reply = rejected(command(rig, "hand", {"players": PLAYERS, "stacks": STACKS}),
                     "hand_in_progress")
    assert f"card-only hand {number} is in progress" in reply["reason"]
    assert reply["hand"] == number
    # Nothing changed: no new hand, no alert, not journaled (a journal's current
    # hand starts at its last hand record).
    rig.deal(fourth_street(), pace=0.05)
    state = wait_state(sub, lambda s: s["street"] == 4)
    assert state["hand"] == number
    assert state["alerts"] == []
    assert sub.on_topic(ALERTS) == []
    records = read_journal(rig.tmp / "journal" / f"{TABLE}.journal.jsonl").records
    assert [r.get("players") for r in records if r["op"] == "hand"] == [[]]

    # end: the hand closes without a result, and everyone sees it.
    accepted(command(rig, "end", b""))
    closed = sub.wait_topic(EVENTS, lambda e: e.get("kind") == "hand_result").json()
    assert (closed["hand"], closed["winners"]) == (number, [])
    notes = [e["text"] for e in events_of(sub, EVENTS, "announcement")]
    assert f"Hand {number} was closed at the console on 4th street, before its showdown:" \
        " it has no result." in notes

    # Now the console starts the next hand; an end before any card is visible too.
    reply = accepted(command(rig, "hand", {"players": PLAYERS, "stacks": STACKS}))
    assert reply["hand"] == number + 1
    accepted(command(rig, "end", b""))
    wait_until(lambda: any(e["hand"] == number + 1 for e in events_of(sub, EVENTS,
                                                                     "hand_result")),
               what="the empty hand's result")
    notes = [e["text"] for e in events_of(sub, EVENTS, "announcement")]
    assert f"Hand {number + 1} was closed at the console before any card was dealt: it" \
        " has no result." in notes

    # A hand that has no card yet is replaced by the next hand command, visibly, and
    # what closes it is published under its own number, before the new hand starts.
    accepted(command(rig, "hand", {"players": PLAYERS, "stacks": STACKS}))
    reply = accepted(command(rig, "hand", {"players": [1, 2], "stacks": {"1": 9, "2": 9}}))
    assert reply["hand"] == number + 3
    wait_until(lambda: any(e["hand"] == number + 3 for e in events_of(sub, EVENTS,
                                                                     "hand_started")),
               what="the next hand started")
    tail = [(e["kind"], e["hand"]) for e in (m.json() for m in sub.on_topic(EVENTS))
            if e["hand"] in (number + 2, number + 3)]
    assert tail == [("hand_started", number + 2), ("announcement", number + 2),
                    ("hand_result", number + 2), ("hand_started", number + 3)]
    assert sub.on_topic(ALERTS) == []
