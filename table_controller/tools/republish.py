"""Republish a recorded table over MQTT, paced by its timestamps (``stud-table replay --mqtt``).

Theory of operation
-------------------
A journal records every input event with the wall time it happened (``at``).
Republishing runs those events, in order, through a fresh dealing engine and
the daemon's own projection (:mod:`table_controller.daemon.projection`) into a
:class:`~table_controller.mqtt.publisher.Publisher`, so overlays see exactly the
topics and payloads of a live table: after each event its alerts and game
events, then the retained public and secure state.

Pacing is a pure schedule (:func:`schedule`): event ``i`` is due
``(at_i - at_0) / speed`` seconds after the start, so ``speed=1`` is real time
and ``speed=50`` fifty times faster; a timestamp that goes backwards (or a
script without ``at``) is due at once. The loop sleeps on an injected clock,
never drifting: each wait is measured from the start, not from the last event.

A journal (its lines carry ``jseq``) is republished as the table was: the
last hand is left as it stood, exactly what consumers of the live table last
saw. A table script has no "later": its last hand is finished at the end (the
showdown result is published), as ``stud-table replay --json`` reports it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO, cast

from table_controller.daemon.logging import configure_logging
from table_controller.daemon.projection import (
    alert_payload,
    event_payloads,
    notice_payloads,
    public_state,
    secure_state,
)
from table_controller.domain.engine.alerts import Alert, Notice
from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.outputs import EngineOutput, GameEvent
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import TableEvent
from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.payloads import PublicState, SecureState
from table_controller.mqtt.publisher import MqttPublisher, Publisher
from table_controller.mqtt.sequence import SequenceCounter
from table_controller.mqtt.topics import check_level
from table_controller.records.replay import load_script, replay_file
from table_controller.records.script import ScriptError


@dataclass(frozen=True, slots=True)
class Recording:
    """What to republish: the table settings, the timed events, and whether it is a journal."""

    settings: TableSettings
    events: tuple[TableEvent, ...]
    journal: bool


@dataclass(frozen=True, slots=True)
class RepublishStats:
    """What a republish sent: events applied, hands seen, alerts and game events published."""

    events: int
    hands: int
    alerts: int
    game_events: int


def load_recording(path: Path) -> Recording:
    """Read a journal or table script (``ScriptError`` if malformed)."""
    script = load_script(path)
    with path.open("rb") as file:
        head = file.read(4096)
    # Every journal record carries "jseq" (docs/journal.md); scripts never do.
    journal = b'"jseq"' in head
    return Recording(script.settings, tuple(e for _, e in script.events), journal)


def schedule(ats: Sequence[float], speed: float) -> list[float]:
    """Seconds after the start at which each event is due (see the module docstring)."""
    if speed <= 0:
        raise ValueError("speed must be positive")
    if not ats:
        return []
    first = ats[0]
    due: list[float] = []
    latest = 0.0
    for at in ats:
        # Never earlier than an event before it: order is kept even if clocks stepped back.
        latest = max(latest, (at - first) / speed)
        due.append(latest)
    return due


def republish(
    recording: Recording,
    publisher: Publisher,
    table: str,
    *,
    speed: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> RepublishStats:
    """Publish ``recording`` as table ``table`` through ``publisher`` (already started)."""
    settings = recording.settings
    engine = DealingEngine(settings)
    seats = settings.seats
    game = settings.game

    def states() -> tuple[PublicState, SecureState]:
        # The table's game for the public readings, and the names set by cmd/seat.
        hand, names = engine.hand, engine.names
        return (public_state(table, seats, hand, game, names),
                secure_state(table, seats, hand, game, names=names))

    publisher.publish_state(*states())
    due = schedule([event.at for event in recording.events], speed)
    start = clock()
    alerts = game_events = 0
    for event, offset in zip(recording.events, due, strict=True):
        wait = start + offset - clock()
        if wait > 0:
            sleep(wait)
        a, g = _publish(publisher, table, engine, engine.apply(event))
        alerts, game_events = alerts + a, game_events + g
        publisher.publish_state(*states())
    if not recording.journal and engine.hand is not None and not engine.hand.finished:
        a, g = _publish(publisher, table, engine, engine.finish_hand())
        alerts, game_events = alerts + a, game_events + g
        publisher.publish_state(*states())
    return RepublishStats(len(recording.events), engine.hands_played, alerts, game_events)


def _publish(
    publisher: Publisher, table: str, engine: DealingEngine, outputs: Sequence[EngineOutput]
) -> tuple[int, int]:
    """Publish ``outputs`` as the daemon does; return (alerts, game events) published."""
    hand = engine.hand
    alerts = events = 0
    for output in outputs:
        if isinstance(output, Alert):
            publisher.publish_alert(alert_payload(table, hand, output))
            alerts += 1
        elif isinstance(output, Notice):
            # As live: a notice computed from down cards goes to secure/notices only.
            publisher.publish_notice(*notice_payloads(table, hand, output))
        elif isinstance(output, GameEvent):
            payloads = event_payloads(table, hand, output)
            if payloads is not None:
                publisher.publish_event(*payloads)
                events += 1
    return alerts, events


ONLINE_TIMEOUT = 15.0
"""Seconds to wait for the broker before giving up (events sent offline would be lost)."""


class BrokerUnreachableError(RuntimeError):
    """The broker did not accept the connection in time."""


def parse_host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``HOST``, port 1883) -> (host, port); ``ValueError`` if malformed."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = text, "1883"
    if not host or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"expected HOST:PORT, not {text!r}")
    return host, int(port_text)


def republish_to_broker(
    path: Path,
    host: str,
    port: int,
    table: str,
    *,
    speed: float = 1.0,
    sequence_file: Path | None = None,
) -> RepublishStats:
    """Republish the journal or script at ``path`` to the broker as table ``table``.

    The payloads' ``seq`` comes from ``sequence_file`` (default: a throwaway
    counter in a temporary directory, so a rehearsal never touches a live
    table's counter). Raises :class:`BrokerUnreachableError`, ``ScriptError``,
    ``TopicError`` (bad table id) or ``OSError``.
    """
    recording = load_recording(path)
    with tempfile.TemporaryDirectory(prefix="stud-table-replay-") as scratch:
        counter = SequenceCounter(sequence_file or Path(scratch) / f"{table}.seq")
        publisher = MqttPublisher(
            table,
            BrokerConfig(host=host, port=port),
            counter,
            client_id=f"stud-table-replay-{table}-{time.monotonic_ns()}",
        )
        publisher.start()
        try:
            if not publisher.wait_online(ONLINE_TIMEOUT):
                raise BrokerUnreachableError(
                    f"no MQTT broker answered at {host}:{port} within {ONLINE_TIMEOUT:.0f} s"
                )
            return republish(recording, publisher, table, speed=speed)
        finally:
            publisher.stop()


# ----------------------------------------------------------------------- CLI


def add_mqtt_arguments(replay: argparse.ArgumentParser) -> None:
    """Add ``--mqtt``, ``--table``, ``--speed`` to the ``stud-table replay`` parser."""
    replay.add_argument("--mqtt", metavar="HOST:PORT", default=None,
                        help="republish the recorded table to this MQTT broker, paced by its"
                        " timestamps (for rehearsing overlays)")
    replay.add_argument("--table", metavar="ID", default=None,
                        help="with --mqtt: the table id to publish as (stud/v1/<ID>/...)")
    replay.add_argument("--speed", type=float, default=1.0, metavar="N",
                        help="with --mqtt: N times faster than real time (default 1)")


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is at the time (it may be swapped, e.g. by tests)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return False


def run_republish(args: argparse.Namespace) -> int:
    """``stud-table replay FILE --mqtt HOST:PORT --table ID``: republish, then report.

    Exit codes as the rest of the CLI: 2 for bad input (arguments, a malformed
    script), 1 when the broker cannot be reached. With ``--json`` the report is
    printed exactly as without ``--mqtt``; otherwise one summary line.
    """
    name = "stud-table replay"
    # Logs go to stderr: stdout carries the --json report and nothing else.
    configure_logging("console", "warning", cast(TextIO, _CurrentStderr()))
    try:
        host, port = parse_host_port(args.mqtt)
        if args.table is None:
            raise ValueError("--mqtt needs --table ID (the table to publish as)")
        check_level(args.table, "table id")
        if not args.speed > 0:
            raise ValueError(f"--speed must be positive, not {args.speed}")
        stats = republish_to_broker(args.script, host, port, args.table, speed=args.speed)
    except (ValueError, ScriptError) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{name}: cannot read {args.script}: {exc.strerror}", file=sys.stderr)
        return 2
    except BrokerUnreachableError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(replay_file(args.script), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        # The recording's inputs (cards, console) and what the engine published from
        # them are different counts: say which is which (issue 24).
        print(f"replayed {_count(stats.events, 'recorded input')} ({_count(stats.hands, 'hand')})"
              f" and published {_count(stats.game_events, 'game event')} and"
              f" {_count(stats.alerts, 'alert')} to {host}:{port} as table {args.table}")
    return 0


def _count(number: int, noun: str) -> str:
    """``1 hand``, ``2 hands``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
