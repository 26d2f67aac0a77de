"""A whole table of emulated readers on ptys, driven by zone events.

The demo, the simulator and the end-to-end tests deal cards *physically*:
a card placed in a zone becomes its tag placed on the first antenna covering
that zone, on the emulated reader that owns the antenna. The daemon on the other
side sees nothing but real serial frames, exactly as from a real table.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from firmware_bridge.emulator import ReaderEmulator
from table_controller.domain.events import CardPlaced, CardRemoved, TableEvent, UnknownTag
from table_controller.domain.zones import Zone
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
            else:
                reader.remove(port, uid)
        elif isinstance(event, UnknownTag):
            reader, port = self._antenna(event.zone)
            reader.place(port, event.uid)

    def apply_all(self, events: Iterable[TableEvent]) -> None:
        """Apply several events in order."""
        for event in events:
            self.apply(event)


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
