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
import socket
import sys
import threading
import time
import uuid
from typing import Any, Final

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from table_controller.events import CONSOLE_ACTIONS
from table_controller.topics import TableTopics, TopicError, check_level

EXIT_ACCEPTED: Final = 0
EXIT_REJECTED: Final = 1
EXIT_BAD_ARGUMENTS: Final = 2
EXIT_NO_REPLY: Final = 3
"""The broker could not be reached or the daemon did not answer in time."""

DEFAULT_TIMEOUT: Final = 10.0
"""Seconds to wait for the broker and the daemon's reply."""

RETRIES: Final = 2
"""Times a request is sent again (same correlation data) within the timeout."""

PASSWORD_ENV: Final = "STUD_MQTT_PASSWORD"
"""Environment variable read for the broker password when ``--password`` is absent."""


class NoReplyError(Exception):
    """No answer: the broker refused or was unreachable, or the daemon was silent."""


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


def send_request(
    host: str,
    port: int,
    table: str,
    name: str,
    payload: bytes,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    username: str | None = None,
    password: str | None = None,
) -> dict[str, Any]:
    """Publish ``payload`` on ``cmd/<name>`` and return the daemon's parsed reply.

    Raises :class:`NoReplyError` when the broker or the daemon does not answer in time.
    """
    topics = TableTopics(table)
    client_id = f"console-{uuid.uuid4().hex[:16]}"
    reply_topic = topics.reply(client_id)
    correlation = uuid.uuid4().bytes
    done = threading.Event()
    subscribed = threading.Event()
    outcome: dict[str, Any] = {}
    props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    props.ResponseTopic = reply_topic
    props.CorrelationData = correlation
    props.ContentType = "application/json"

    client = mqtt.Client(
        CallbackAPIVersion.VERSION2, client_id=client_id, protocol=MQTTProtocolVersion.MQTTv5
    )
    if username is not None:
        client.username_pw_set(username, password)

    def on_connect(c: mqtt.Client, _u: object, _f: object, reason: ReasonCode,
                   _p: object) -> None:
        if reason.is_failure:
            outcome["error"] = f"the broker refused the connection: {reason}"
            done.set()
            return
        _no_delay(c)
        # Subscribe first: a reply published before our SUBACK would be lost.
        c.subscribe(reply_topic, qos=1)

    def on_subscribe(c: mqtt.Client, _u: object, _mid: int, reasons: list[ReasonCode],
                     _p: object) -> None:
        if any(r.is_failure for r in reasons):
            outcome["error"] = f"the broker refused the reply subscription {reply_topic}"
            done.set()
            return
        c.publish(topics.cmd(name), payload, qos=1, properties=props)
        subscribed.set()

    def on_message(_c: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        if getattr(message.properties, "CorrelationData", None) != correlation:
            return  # someone else's answer (a reused topic): not ours
        try:
            outcome["reply"] = json.loads(message.payload)
        except ValueError:
            outcome["error"] = f"unreadable reply: {message.payload[:200]!r}"
        done.set()

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    try:
        rc = client.connect(host, port, keepalive=max(5, int(timeout) + 5))
    except OSError as exc:
        raise NoReplyError(f"cannot reach the broker at {host}:{port}: {exc}") from None
    if rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
        raise NoReplyError(f"cannot reach the broker at {host}:{port}: {mqtt.error_string(rc)}")
    client.loop_start()
    try:
        deadline = time.monotonic() + timeout
        answered = done.wait(timeout / (RETRIES + 1))
        for _ in range(RETRIES):
            if answered or not subscribed.is_set():
                break
            # Same correlation data: the daemon's request id (docs/console.md).
            client.publish(topics.cmd(name), payload, qos=1, properties=props)
            answered = done.wait(min(timeout / (RETRIES + 1),
                                     max(0.0, deadline - time.monotonic())))
        if not answered:
            answered = done.wait(max(0.0, deadline - time.monotonic()))
    finally:
        client.disconnect()
        client.loop_stop()
    if "error" in outcome:
        raise NoReplyError(str(outcome["error"]))
    if not answered:
        raise NoReplyError(
            f"no reply from table {table!r} within {timeout:g} s (is the daemon running?)"
        )
    reply: dict[str, Any] = outcome["reply"]
    return reply


def _no_delay(client: mqtt.Client) -> None:
    """Turn Nagle off: paho leaves it on, and a small request then waits for the
    peer's delayed ACK (about 40 ms per hop on Linux loopback)."""
    sock = client.socket()
    if isinstance(sock, socket.socket):  # an ssl.SSLSocket is one too
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


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
