"""The equity door's input and output: a JSON spec in, a JSON document out (pure).

CONFORMANCE.md "Second door: equity" is the contract. :func:`parse_spec` turns the
spec's text into checked values or raises :class:`SpecError` with a one-line
message naming the problem; :func:`evaluate_spec` computes the document:
``equity``, ``exact``, ``runouts`` (the contract) plus win and tie shares, standard
errors, the rule-15 community card flag, outs and each seat's hand in words.
Reading the file and printing are the command's job (:mod:`.command`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from table_controller.domain.cards import Card, CardParseError
from table_controller.domain.equity.core import (
    MAX_SAMPLES,
    EquityError,
    EquityResult,
    compute_equity,
)
from table_controller.domain.equity.evaluate import Game
from table_controller.domain.equity.model import MAX_SEATS, prepare
from table_controller.domain.equity.outs import Outs, outs
from table_controller.domain.equity.readings import hand_reading

__all__ = ["MAX_SPEC_BYTES", "EquitySpec", "Evaluated", "SpecError", "evaluate_spec", "parse_spec"]

MAX_SPEC_BYTES: Final = 64 * 1024
"""A spec is a few hundred bytes; refusing more keeps a hostile file from eating memory."""
MAX_SEED: Final = 2**63 - 1
_KEYS: Final = ("game", "seats", "dead", "samples", "seed")


class SpecError(ValueError):
    """The spec is not a valid equity spec; the message names the problem."""


@dataclass(frozen=True, slots=True)
class EquitySpec:
    """A checked spec: seat number -> cards, dead cards, game, samples and seed."""

    seats: dict[int, list[Card]]
    dead: list[Card] = field(default_factory=list)
    game: Game = Game.STUD
    samples: int | None = None
    seed: int = 0


def _cards(value: Any, where: str) -> list[Card]:
    if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
        raise SpecError(f"{where}: expected a list of card codes like [\"As\", \"Td\"]")
    try:
        return [Card.parse(code) for code in value]
    except CardParseError as exc:
        raise SpecError(f"{where}: {exc}") from None


def _integer(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SpecError(f"{name} must be an integer from {low} to {high}, got {value!r:.40}")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose every key is written once (a seat given twice would
    otherwise silently be its last cards: issue 21, item 9)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise SpecError(f"spec has the key {key[:40]!r} twice")
        seen[key] = value
    return seen


def parse_spec(text: str | bytes) -> EquitySpec:
    """Parse and check a spec; raises :class:`SpecError` (one line) on any problem."""
    if len(text) > MAX_SPEC_BYTES:
        raise SpecError(f"spec is larger than {MAX_SPEC_BYTES} bytes")
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except SpecError:
        raise
    except json.JSONDecodeError as exc:
        raise SpecError(f"spec is not valid JSON: line {exc.lineno} column {exc.colno}:"
                        f" {exc.msg}") from None
    except UnicodeDecodeError:
        raise SpecError("spec is not UTF-8 text") from None
    except RecursionError:
        raise SpecError("spec is nested too deeply") from None
    except ValueError as exc:  # e.g. an integer with thousands of digits
        raise SpecError(f"spec is not valid JSON: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise SpecError(f"spec must be a JSON object, got {type(data).__name__}")
    unknown = [key for key in data if key not in _KEYS]
    if unknown:
        raise SpecError(f"unknown key {unknown[0]!r:.40} (expected: {', '.join(_KEYS)})")
    game_name = data.get("game", "stud")
    if not isinstance(game_name, str) or game_name not in set(Game):
        raise SpecError(f"unknown game {game_name!r:.40} (expected stud, razz or stud8)")
    seats_data = data.get("seats")
    if not isinstance(seats_data, dict):
        raise SpecError("seats: expected an object of seat number -> cards, like"
                        " {\"1\": [\"As\", \"Kd\", \"Qh\"]}")
    seats: dict[int, list[Card]] = {}
    for key, cards in seats_data.items():
        if not (key.isascii() and key.isdigit() and 1 <= int(key) <= MAX_SEATS):
            raise SpecError(f"seat {key!r:.40} is not a seat number 1..{MAX_SEATS}")
        if int(key) in seats:
            raise SpecError(f"seat {int(key)} is written twice")
        seats[int(key)] = _cards(cards, f"seat {key}")
    dead = _cards(data.get("dead", []), "dead")
    samples = data.get("samples")
    if samples is not None:
        samples = _integer(samples, "samples", 1, MAX_SAMPLES)
    seed = _integer(data.get("seed", 0), "seed", 0, MAX_SEED)
    return EquitySpec(seats, dead, Game(game_name), samples, seed)


@dataclass(frozen=True, slots=True)
class Evaluated:
    """The result of a spec: equity, the outs and each seat's hand in words."""

    result: EquityResult
    outs: Outs | None
    hands: dict[int, str]

    def as_json(self) -> dict[str, Any]:
        """The JSON document of the door (CONFORMANCE.md, plus extra fields)."""
        r = self.result

        def by_seat(values: dict[int, Any]) -> dict[str, Any]:
            return {str(seat): value for seat, value in values.items()}

        return {
            "equity": by_seat(r.equity),
            "exact": r.exact,
            "runouts": r.runouts,
            "game": r.game.value,
            "win": by_seat(r.win),
            "tie": by_seat(r.tie),
            "stderr": None if r.stderr is None else by_seat(r.stderr),
            "seed": r.seed,
            "possible_runouts": r.possible_runouts,
            "community": r.community,
            "outs": None if self.outs is None else {
                "seat": str(self.outs.seat),
                "against": str(self.outs.against),
                "cards": [card.code for card in self.outs.cards],
            },
            "hands": by_seat(self.hands),
        }


def evaluate_spec(spec: EquitySpec) -> Evaluated:
    """Compute a checked spec; raises :class:`SpecError` for an impossible spot."""
    try:
        deal = prepare(spec.seats, spec.dead, spec.game)
        result = compute_equity(
            spec.seats, spec.dead, spec.game, samples=spec.samples, seed=spec.seed
        )
    except EquityError as exc:
        raise SpecError(str(exc)) from None
    hands = {seat: hand_reading(spec.seats[seat], spec.game) for seat in sorted(spec.seats)}
    return Evaluated(result, outs(deal), hands)
