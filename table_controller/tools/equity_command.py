"""``stud-table equity SPEC [--json]``: the equity door (docs/conformance.md "Second door").

The only part of :mod:`table_controller.domain.equity` that does I/O: it reads the spec
(a file, or ``-`` for stdin, at most :data:`~.spec.MAX_SPEC_BYTES`), prints the
JSON document or a readable table, and exits 0; on a bad spec it prints one line
naming the problem on stderr and exits 2. Never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Final

__all__ = ["add_equity_parser", "run_equity"]

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
EXIT_BAD_INPUT: Final = 2


def add_equity_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``equity`` subcommand."""
    equity = commands.add_parser(
        "equity",
        help="pot equity, outs and hand readings of one moment of a hand",
        description="Compute each live seat's pot equity (exact or seeded Monte Carlo)"
        " from a JSON spec: {\"game\": \"stud\", \"seats\": {\"1\": [\"As\", \"Kd\", \"Qh\"],"
        " ...}, \"dead\": [...]} (docs/conformance.md, docs/equity.md).",
    )
    equity.add_argument("spec", help="the spec file (JSON), or - for stdin")
    equity.add_argument("--json", action="store_true", help="print the JSON document")


def _read(name: str) -> bytes:
    # Imported here, as below: numpy and the tables load only for this subcommand.
    from table_controller.domain.equity.spec import MAX_SPEC_BYTES  # noqa: PLC0415

    if name == "-":
        return sys.stdin.buffer.read(MAX_SPEC_BYTES + 1)
    with open(name, "rb") as file:
        return file.read(MAX_SPEC_BYTES + 1)


def run_equity(args: argparse.Namespace) -> int:
    """Run the ``equity`` subcommand; returns the exit status."""
    from table_controller.domain.equity.spec import (  # noqa: PLC0415
        SpecError,
        evaluate_spec,
        parse_spec,
    )

    try:
        text = _read(args.spec)
    except OSError as exc:
        print(f"stud-table equity: cannot read {args.spec}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        evaluated = evaluate_spec(parse_spec(text))
    except SpecError as exc:
        print(f"stud-table equity: {args.spec}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # the door promises one line, never a traceback
        print(f"stud-table equity: internal error: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return EXIT_FAILURE
    document = evaluated.as_json()
    if args.json:
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(_text(document))
    return EXIT_OK


def _text(doc: dict[str, object]) -> str:
    how = "exact" if doc["exact"] else "Monte Carlo"
    runouts = doc["runouts"]
    lines = [f"{doc['game']}: {how} over {runouts:,} run-out{'' if runouts == 1 else 's'}"
             + (" (last card a community card, rule 15)" if doc["community"] else "")]
    equity, win, tie, hands = doc["equity"], doc["win"], doc["tie"], doc["hands"]
    stderr = doc["stderr"]
    assert isinstance(equity, dict)
    assert isinstance(win, dict)
    assert isinstance(tie, dict)
    assert isinstance(hands, dict)
    for seat, value in equity.items():
        margin = f" +/-{stderr[seat] * 100:.2f}" if isinstance(stderr, dict) else ""
        lines.append(f"seat {seat:>2}  {value * 100:6.2f}%{margin}  win {win[seat] * 100:6.2f}%"
                     f"  tie {tie[seat] * 100:5.2f}%  {hands[seat]}")
    outs = doc["outs"]
    if isinstance(outs, dict):
        cards = " ".join(outs["cards"]) or "none"
        lines.append(f"outs for seat {outs['seat']} against seat {outs['against']}:"
                     f" {len(outs['cards'])} ({cards})")
    return "\n".join(lines)
