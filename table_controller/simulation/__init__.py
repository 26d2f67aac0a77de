"""Simulated tables: physical deal sequences, seeded and pure.

The simulator builds on :mod:`table_controller.simulation.physical`, which turns a
hand (seats, cards, folds, rule profile) into the table events a dealer's hands
produce. Nothing here does I/O or reads a clock; randomness comes from a
caller-supplied :class:`random.Random`, so every sequence is reproducible.
"""

from table_controller.simulation.physical import (
    PhysicalDeal,
    deal_cards,
    deal_random,
    deal_streets,
    expected_face,
    random_folds,
    random_hands,
)

__all__ = [
    "PhysicalDeal",
    "deal_cards",
    "deal_random",
    "deal_streets",
    "expected_face",
    "random_folds",
    "random_hands",
]
