"""A whole table of emulated readers on ptys, driven by zone events.

The demo, the simulator and the end-to-end tests deal cards *physically*:
a card placed in a zone becomes its tag placed on the first antenna covering
that zone, on the emulated reader that owns the antenna. The daemon on the other
side sees nothing but real serial frames, exactly as from a real table.

With ``rf`` (an :class:`~firmware_bridge.rf_channel.RFParams`, ``--rf PROFILE``) the
tags are not simply seen: one :class:`~firmware_bridge.rf_channel.RFChannel` for the
whole table decides, per scan of each antenna, what it reads (stack loss, pile depth,
dead tags, flicker, cross-reads into neighbouring zones, the dealer's hand passing
over the antennas as a card is dealt), and every emulated reader reports that.
"""

from __future__ import annotations

import random
import threading
import time
import tomllib
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from firmware_bridge.emulator import ChannelReads, ReaderEmulator
from firmware_bridge.rf_channel import RFChannel, RFParams
from table_controller.domain.events import CardPlaced, CardRemoved, TableEvent, UnknownTag
from table_controller.domain.zones import Zone
from table_controller.simulation.rf import channel_map, same_seat_antennas
from table_controller.table.deck import DeckRegistry
from table_controller.table.layout import TableLayout


class EmulatedTable:
    """One :class:`ReaderEmulator` per reader of ``layout``, symlinked in ``link_dir``."""

    def __init__(
        self,
        layout: TableLayout,
        registry: DeckRegistry,
        link_dir: Path,
        *,
        deck: str | None = None,
        scan_period: float = 0.05,
        heartbeat_period: float = 0.5,
        inventory_period: float = 2.0,
        rf: RFParams | None = None,
        seed: int = 0,
    ) -> None:
        self.layout = layout
        self.registry = registry
        self.deck = deck or registry.decks[0]
        self.link_dir = link_dir
        link_dir.mkdir(parents=True, exist_ok=True)
        self.readers = {
            reader.id: ReaderEmulator(
                link_dir,
                reader.id,
                antenna_count=max(reader.antennas) + 1,
                scan_period=scan_period,
                heartbeat_period=heartbeat_period,
                inventory_period=inventory_period,
                seed=reader.id,
            )
            for reader in layout.readers
        }
        self.channel: RFChannel | None = None
        self._lock = threading.Lock()
        self._rng = random.Random(f"{seed}:hands")
        self._base_params = rf
        self._same_seat = same_seat_antennas(layout)
        if rf is not None:
            kinds, neighbours = channel_map(layout)
            self.channel = RFChannel(rf, kinds, neighbours, seed=seed)
            for reader_id, reader in self.readers.items():
                reader.model.reads = self._reads_of(reader_id)

    def _reads_of(self, reader_id: int) -> ChannelReads:
        channel = self.channel
        assert channel is not None

        def reads(port: int, now: float) -> list[str | tuple[str, float]]:
            # With the strength: the emulated readers report it, as a front end that
            # measures RSSI does (docs/protocol.md), and presence decides by it.
            with self._lock:
                if not channel.params.strength_reported:
                    return [read.uid for read in channel.reads((reader_id, port), now)]
                return [(read.uid, read.strength)
                        for read in channel.reads((reader_id, port), now)]
        return reads

    def set_flicker(self, flicker: float | None) -> None:
        """Set the channel's per-scan flicker (None: back to the profile's)."""
        if self.channel is None:
            return
        with self._lock:
            base = self._base_params or self.channel.params
            self.channel.params = base if flicker is None else replace(base, flicker=flicker)

    def start(self) -> EmulatedTable:
        """Plug every reader in."""
        for reader in self.readers.values():
            reader.start()
        return self

    def stop(self) -> None:
        """Unplug and stop every reader."""
        for reader in self.readers.values():
            reader.stop()

    def __enter__(self) -> EmulatedTable:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def device_of(self, reader_id: int) -> str:
        """The stable device path (symlink) of reader ``reader_id``."""
        return str(self.readers[reader_id].path)

    def write_layout(self, source: Path, target: Path) -> Path:
        """Copy the layout file ``source`` to ``target`` with each reader's device
        pointing at its emulator, and return ``target``."""
        data: dict[str, Any] = tomllib.loads(source.read_text(encoding="utf-8"))
        lines = [f"name = {_toml_str(str(data.get('name', 'emulated table')))}",
                 f"seats = {int(data['seats'])}"]
        for reader in self.layout.readers:
            lines += [
                "",
                "[[readers]]",
                f"id = {reader.id}",
                f"device = {_toml_str(self.device_of(reader.id))}",
                "[readers.antennas]",
                *(f"{port} = {_toml_str(zone.name)}" for port, zone in
                  sorted(reader.antennas.items())),
            ]
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return target

    def _antenna(self, zone: Zone) -> tuple[ReaderEmulator, int]:
        reader_id, port = self.layout.antennas_of(zone)[0]
        return self.readers[reader_id], port

    def apply(self, event: TableEvent) -> None:
        """Make the table show ``event``: a tag placed on or removed from an antenna."""
        if isinstance(event, CardPlaced | CardRemoved):
            reader, port = self._antenna(event.zone)
            uid = self.registry.uid_for(event.card, event.deck or self.deck)
            if isinstance(event, CardPlaced):
                reader.place(port, uid)
                self._channel_place(reader.reader_id, port, uid)
            else:
                reader.remove(port, uid)
                self._channel_remove(uid)
        elif isinstance(event, UnknownTag):
            reader, port = self._antenna(event.zone)
            reader.place(port, event.uid)
            self._channel_place(reader.reader_id, port, event.uid)

    def remove_tag(self, zone: Zone, uid: str) -> None:
        """Take the tag ``uid`` off ``zone``'s antenna (unknown tags too)."""
        reader, port = self._antenna(zone)
        reader.remove(port, uid)
        self._channel_remove(uid)

    def _channel_place(self, reader_id: int, port: int, uid: str) -> None:
        if self.channel is None:
            return
        now = time.monotonic()
        with self._lock:
            # The dealer's hand passed over the antennas just before the card landed.
            self.channel.forget_shadows(now - 10.0)
            self.channel.hand_pass((reader_id, port), now, self._rng,
                                   self._same_seat.get((reader_id, port), ()))
            self.channel.place(uid, (reader_id, port), now)

    def _channel_remove(self, uid: str) -> None:
        if self.channel is None:
            return
        with self._lock:
            self.channel.remove(uid, time.monotonic())

    def apply_all(self, events: Iterable[TableEvent]) -> None:
        """Apply several events in order."""
        for event in events:
            self.apply(event)


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
