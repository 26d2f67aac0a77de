"""``stud-table console``: send one console command over MQTT 5 and print the reply.

A thin edge for testing and for a dealer's terminal: build the command's JSON
from the arguments, publish it on ``stud/v1/<table>/cmd/<name>`` with a
*Response Topic* of our own (``stud/v1/<table>/reply/<client>``) and fresh
*Correlation Data*, wait for the daemon's answer, print it. The exit status
tells the outcome: 0 accepted, 1 rejected, 2 bad arguments (argparse), 3 no
answer (broker unreachable or timeout). See docs/console.md.

Without an answer after a third of the timeout the request is sent again, with
the same correlation data: the daemon treats that as the request's id, so a
request it already carried out is answered again, not applied twice, and one
it never got (the daemon was not yet subscribed, or the broker dropped it
under a flood) is carried out.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Final

from table_controller.domain.events import CONSOLE_ACTIONS
from table_controller.mqtt.request import DEFAULT_TIMEOUT, NoReplyError, send_request
from table_controller.mqtt.topics import TopicError, check_level

EXIT_ACCEPTED: Final = 0
EXIT_REJECTED: Final = 1
EXIT_BAD_ARGUMENTS: Final = 2
EXIT_NO_REPLY: Final = 3
"""The broker could not be reached or the daemon did not answer in time."""

PASSWORD_ENV: Final = "STUD_MQTT_PASSWORD"
"""Environment variable read for the broker password when ``--password`` is absent."""


def add_console_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``console`` subcommand (and its own subcommands) to ``stud-table``."""
    console = commands.add_parser(
        "console",
        help="send a dealer-console command to a running daemon over MQTT",
        description="Send one console command (MQTT 5 request/response) and print the reply."
        " Exit status: 0 accepted, 1 rejected, 2 bad arguments, 3 no reply.",
    )
    console.add_argument("--broker", type=_broker, default=("127.0.0.1", 1883),
                         metavar="HOST:PORT", help="MQTT broker (default 127.0.0.1:1883)")
    console.add_argument("--table", type=_table, required=True, help="table id")
    console.add_argument("--username", default=None, help="broker user name")
    console.add_argument("--password", default=None,
                         help=f"broker password (default: ${PASSWORD_ENV})")
    console.add_argument("--timeout", type=_positive_float, default=DEFAULT_TIMEOUT,
                         help=f"seconds to wait for the reply (default {DEFAULT_TIMEOUT:g})")
    console.add_argument("--json", action="store_true", help="print the reply as JSON")
    sub = console.add_subparsers(dest="console_command", required=True, metavar="COMMAND")

    hand = sub.add_parser("hand", help="start a hand: seats dealt in and their stacks")
    hand.add_argument("players", type=_seat, nargs="+", metavar="SEAT")
    hand.add_argument("--stacks", type=_stack, nargs="+", default=None, metavar="SEAT=CHIPS",
                      help="chips behind each player after the ante")
    hand.add_argument("--hand-id", type=_non_negative, default=None, help="hand number")

    act = sub.add_parser("act", help="a betting action of a seat")
    act.add_argument("seat", type=_seat)
    act.add_argument("action", choices=CONSOLE_ACTIONS)
    act.add_argument("amount", type=_non_negative, nargs="?", default=None,
                     help="the seat's total bet this round after the action")

    for ruling, text in (("kill", "kill a seat's hand"), ("live", "rule a short hand live")):
        parser = sub.add_parser(ruling, help=f"floor ruling: {text}")
        parser.add_argument("seat", type=_seat)
        parser.add_argument("--reason", default="", help="why (shown to the floor)")

    sub.add_parser("end", help="close the hand")
    seat = sub.add_parser("seat", help="name the player at a seat (shown on state and pages)")
    seat.add_argument("seat", type=_seat)
    seat.add_argument("name", help='the player\'s name; "" clears the seat')
    seat.add_argument("--country", default=None, help="ISO 3166 code, e.g. FR or USA")

    # The floor (issue 14): alert lifecycle and the dealer on duty.
    card = sub.add_parser("card", help="enter a card by hand whose tag no reader can read")
    card.add_argument("zone", help="where it lies: seat3.down, seat3.up, burn, board, muck")
    card.add_argument("card", help="the card, e.g. As")
    ack = sub.add_parser("ack", help="acknowledge an alert (seen, someone is on it)")
    ack.add_argument("alert", help="the alert's id, as on alerts/open (e.g. t1:1764...)")
    ack.add_argument("--by", required=True, help="who acknowledges it")
    resolve = sub.add_parser("resolve", help="resolve an alert, saying how it was handled")
    resolve.add_argument("alert", help="the alert's id")
    resolve.add_argument("--by", required=True, help="who resolves it")
    resolve.add_argument("--note", required=True,
                         help='how it was handled, e.g. "misdeal called" (at most 200 characters)')
    dealer = sub.add_parser("dealer", help="dealer sign-in (in ID NAME) or sign-out (out)")
    dealer_sub = dealer.add_subparsers(dest="dealer_action", required=True, metavar="in|out")
    sign_in = dealer_sub.add_parser("in", help="a dealer signs in at the table")
    sign_in.add_argument("id", help="the dealer's id (a badge number, e.g. D17)")
    sign_in.add_argument("name", help="the dealer's name")
    dealer_sub.add_parser("out", help="the dealer on duty signs out")

    raw = sub.add_parser("raw", help="send NAME with a raw PAYLOAD (testing bad input)")
    raw.add_argument("name", type=_command_name)
    raw.add_argument("payload", nargs="?", default="")


def command_payload(args: argparse.Namespace) -> tuple[str, bytes]:
    """The command name and JSON payload the parsed ``console`` arguments ask for."""
    name: str = args.console_command
    body: dict[str, Any]
    if name == "raw":
        return args.name, args.payload.encode("utf-8")
    if name == "hand":
        body = {"players": args.players}
        if args.stacks is not None:
            body["stacks"] = {str(seat): chips for seat, chips in args.stacks}
        if args.hand_id is not None:
            body["hand_id"] = args.hand_id
    elif name == "act":
        body = {"seat": args.seat, "action": args.action, "amount": args.amount}
    elif name in ("kill", "live"):
        body = {"seat": args.seat, "reason": args.reason}
    elif name == "card":
        body = {"zone": args.zone, "card": args.card}
    elif name == "seat":
        body = {"seat": args.seat, "name": args.name}
        if args.country is not None:
            body["country"] = args.country
    elif name == "ack":
        body = {"alert": args.alert, "by": args.by}
    elif name == "resolve":
        body = {"alert": args.alert, "by": args.by, "note": args.note}
    elif name == "dealer":
        body = ({"action": "in", "id": args.id, "name": args.name}
                if args.dealer_action == "in" else {"action": "out"})
    else:
        body = {}
    return name, json.dumps(body).encode("utf-8")


def run_console(args: argparse.Namespace) -> int:
    """Run ``stud-table console``: send, wait, print; return the exit status."""
    name, payload = command_payload(args)
    host, port = args.broker
    password = args.password if args.password is not None else os.environ.get(PASSWORD_ENV)
    try:
        reply = send_request(host, port, args.table, name, payload, timeout=args.timeout,
                             username=args.username, password=password)
    except NoReplyError as exc:
        print(f"stud-table console: {exc}", file=sys.stderr)
        return EXIT_NO_REPLY
    print(json.dumps(reply) if args.json else describe_reply(reply))
    return EXIT_ACCEPTED if reply.get("accepted") is True else EXIT_REJECTED


def describe_reply(reply: dict[str, Any]) -> str:
    """One line for a dealer: accepted (with whose turn and the pot) or why not."""
    command = reply.get("command", "?")
    if reply.get("accepted") is not True:
        return f"{command}: rejected ({reply.get('code')}): {reply.get('reason')}"
    details = []
    if reply.get("hand") is not None:
        details.append(f"hand {reply['hand']}")
    if reply.get("to_act") is not None:
        details.append(f"seat {reply['to_act']} to act")
    if reply.get("pot") is not None:
        details.append(f"pot {reply['pot']}")
    return f"{command}: accepted" + (f" ({', '.join(details)})" if details else "")


# ------------------------------------------------------------------ argument types


def _broker(text: str) -> tuple[str, int]:
    host, sep, port_text = text.rpartition(":")
    if not sep:
        return text, 1883
    try:
        port = int(port_text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad port in {text!r}") from None
    if not host or not 0 < port < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, not {text!r}")
    return host, port


def _table(text: str) -> str:
    try:
        return check_level(text, "table id")
    except TopicError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _command_name(text: str) -> str:
    # Any valid topic level, known command or not: raw exists to show how the
    # daemon treats bad input.
    try:
        return check_level(text, "command name")
    except TopicError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seat(text: str) -> int:
    try:
        seat = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seat is a number, not {text!r}") from None
    if seat < 1:
        raise argparse.ArgumentTypeError(f"seats start at 1, not {seat}")
    return seat


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _stack(text: str) -> tuple[int, int]:
    seat, sep, chips = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected SEAT=CHIPS, not {text!r}")
    return _seat(seat), _non_negative(chips)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value
