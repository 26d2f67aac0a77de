"""Bring-up check of one reader board: who it is, and what each antenna sees.

    .venv/bin/python hardware/firmware/host/probe.py /dev/serial/by-id/usb-MicroPython_...-if00

Opens the port, sends IDENTIFY and REQUEST_INVENTORY, prints the HELLO, then for
``--seconds`` every change and fault, and at the end per antenna: tags now, arrivals,
departures (a departure of a card that never moved is a dropped scan) and the frame
counters. Tag UIDs are shown only with ``--show-uids``: once a deck is registered they
tell a card through its back. Exit status: 0 if a HELLO came, 2 if not (bad port,
not a reader).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field

import serial

from firmware_bridge.decoder import FrameDecoder
from firmware_bridge.encoder import FrameEncoder
from firmware_bridge.messages import (
    Hello,
    Identify,
    Inventory,
    ReaderFault,
    RequestInventory,
    TagArrived,
    TagLeft,
)


@dataclass
class AntennaFigures:
    """What one antenna reported during the probe."""

    tags: set[str] = field(default_factory=set)
    arrivals: int = 0
    departures: int = 0


def probe(device: str, seconds: float, *, show_uids: bool = False,
          out: object = sys.stdout) -> int:
    """Probe ``device``; print to ``out``; return the exit status."""
    def say(line: str) -> None:
        print(line, file=out, flush=True)  # type: ignore[call-overload]

    try:
        port = serial.serial_for_url(device, baudrate=115200, timeout=0.05)
    except (serial.SerialException, OSError) as exc:
        say(f"{device}: cannot open: {exc}")
        return 2
    decoder = FrameDecoder()
    encoder = FrameEncoder()
    antennas: dict[int, AntennaFigures] = {}
    hello: Hello | None = None
    start = time.monotonic()
    next_identify = start
    try:
        while time.monotonic() - start < seconds or hello is None:
            now = time.monotonic()
            if hello is None:
                if now - start > 3.0:
                    say(f"{device}: no HELLO in 3 s: not a reader, or it is not running")
                    return 2
                if now >= next_identify:
                    port.write(encoder.encode(Identify()))
                    next_identify = now + 0.5
            for item in decoder.feed(port.read(4096)):
                message = item.message
                if isinstance(message, Hello) and hello is None:
                    hello = message
                    major, minor, patch = message.firmware_version
                    say(f"reader {message.reader_id}: firmware {major}.{minor}.{patch},"
                        f" protocol {message.protocol_version},"
                        f" {message.antenna_count} antennas")
                    port.write(encoder.encode(RequestInventory(None)))
                elif isinstance(message, Inventory):
                    antennas.setdefault(message.antenna, AntennaFigures()).tags = set(
                        message.uids)
                elif isinstance(message, TagArrived | TagLeft):
                    figures = antennas.setdefault(message.antenna, AntennaFigures())
                    arrived = isinstance(message, TagArrived)
                    if arrived:
                        figures.arrivals += 1
                        figures.tags.add(message.uid)
                    else:
                        figures.departures += 1
                        figures.tags.discard(message.uid)
                    shown = f" {message.uid}" if show_uids else ""
                    say(f"  antenna {message.antenna}: tag {'on' if arrived else 'off'}{shown},"
                        f" {len(figures.tags)} now")
                elif isinstance(message, ReaderFault):
                    where = "reader" if message.antenna is None else f"antenna {message.antenna}"
                    say(f"  fault 0x{message.code:02X} on {where}: {message.text}")
    finally:
        port.close()
    assert hello is not None
    for antenna in range(hello.antenna_count):
        figures = antennas.get(antenna, AntennaFigures())
        uids = f" {sorted(figures.tags)}" if show_uids else ""
        say(f"antenna {antenna}: {len(figures.tags)} tags{uids}, {figures.arrivals} arrivals,"
            f" {figures.departures} departures")
    stats = decoder.stats
    say(f"frames: {stats.frames_ok} good, {stats.errors} bad, {stats.frames_missed} missed")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: ``probe.py DEVICE [--seconds S] [--show-uids]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("device", help="serial port of the reader (/dev/serial/by-id/...)")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to listen")
    parser.add_argument("--show-uids", action="store_true",
                        help="print tag UIDs (secret once a deck is registered)")
    args = parser.parse_args(argv)
    return probe(args.device, args.seconds, show_uids=args.show_uids)


if __name__ == "__main__":
    raise SystemExit(main())
