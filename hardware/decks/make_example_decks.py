"""Write the example deck files with plausible, reproducible tag UIDs.

Run from the repository root: ``python hardware/decks/make_example_decks.py``.
The UIDs are *made up* from a fixed seed, shaped like NXP NTAG 7-byte
ISO14443A UIDs: byte 0 is the manufacturer code 0x04 (NXP), and byte 3 is never
0x88, the cascade tag a reader would mistake for a longer UID. A real table
registers its own decks by scanning each card; never reuse these.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from table_controller.domain.cards import DECK

NXP_MANUFACTURER = 0x04
CASCADE_TAG = 0x88

EXAMPLE_DECKS = (
    ("example-deck.toml", "red", 20261129),
    ("example-deck-blue.toml", "blue", 20261130),
)
"""(file name, deck name, seed) of each example deck."""


def make_uids(seed: int, count: int) -> list[str]:
    """``count`` distinct 7-byte UIDs from ``seed``, as uppercase hex."""
    rng = random.Random(seed)
    uids: list[str] = []
    while len(uids) < count:
        body = [rng.randrange(256) for _ in range(6)]
        if body[2] == CASCADE_TAG:
            continue
        uid = bytes([NXP_MANUFACTURER, *body]).hex().upper()
        if uid not in uids:
            uids.append(uid)
    return uids


def deck_text(name: str, seed: int) -> str:
    """The TOML text of the example deck ``name`` generated from ``seed``."""
    lines = [
        f"# Example deck {name!r}: MADE-UP UIDs for the simulator and tests (seed {seed},",
        "# written by hardware/decks/make_example_decks.py). A real deck file is secret:",
        "# whoever has it can read hole cards through the card backs.",
        "",
        f'name = "{name}"',
        "",
        "[cards]",
    ]
    lines += [f'{card.code} = "{uid}"' for card, uid in zip(DECK, make_uids(seed, 52), strict=True)]
    return "\n".join(lines) + "\n"


def main() -> int:
    """Write every example deck next to this script."""
    here = Path(__file__).resolve().parent
    for file_name, name, seed in EXAMPLE_DECKS:
        (here / file_name).write_text(deck_text(name, seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
