"""Settings of ONE reader board: edit before copying to the board (see README.md).

Every board of a table needs its own READER_ID (the layout file's ``[[readers]] id``)
and the number of antenna ports actually fitted.
"""

READER_ID = 1
"""This board's reader id, 0..65535: the ``id`` of its ``[[readers]]`` block in the
table's layout file (hardware/layouts/table-8.toml: 1-4 for the seats, 10 dealer)."""

ANTENNA_COUNT = 4
"""Front-end modules fitted, on multiplexer channels 0..ANTENNA_COUNT-1 (1..16)."""

FRONT_END = "mfrc522"
"""Which modules this board carries (README.md "Which front end for which zone"):
"mfrc522" (ISO 14443 A, one card per zone: up cards, board) or "pn5180" (ISO 15693,
16-slot anticollision: down cards, burn, muck, where cards stack)."""

PN5180_SLOTS = 16
"""PN5180 inventory: 16 slots (stacks) or 1 (one card a zone; collisions fall back
to 16-slot rounds)."""

ARRIVE_SCANS = 1
"""Consecutive scans that must see a tag before it is reported (TAG_ARRIVED)."""

LEAVE_SCANS = 2
"""Consecutive scans that must miss a reported tag before TAG_LEFT: stacked cards
drop out of a scan now and then (hardware/readers.md). The host debounces too."""

HEARTBEAT_MS = 1000
"""HEARTBEAT period; at most the daemon's ``heartbeat_period`` (default 2 s): the
daemon calls a reader stale after 1.5 periods without a frame."""

INVENTORY_MS = 2000
"""Period of the unasked INVENTORY of every antenna."""

WATCHDOG_MS = 5000
"""Watchdog timeout (the RP2040 allows at most 8388 ms); a hung loop reboots."""

# Raspberry Pi Pico pins (GP numbers), README.md "Wiring".
SPI_ID = 0
SPI_BAUD = 4_000_000
PIN_SCK = 18
PIN_MOSI = 19
PIN_MISO = 16
PIN_CS = 17
"""Chip select: to the CD74HC4067's common pin (SIG)."""
PIN_RST = 20
"""RST of every module (shared)."""
PIN_BUSY = 21
"""PN5180 only: BUSY of the selected module, from the second CD74HC4067's common pin."""
PIN_MUX = (10, 11, 12, 13)
"""CD74HC4067 address S0, S1, S2, S3."""
PIN_SAFE_BOOT = 22
"""Tie to GND at power-up to keep the USB REPL (for mpremote) instead of running."""
