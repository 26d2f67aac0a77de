"""A table's message as a web service takes it from the broker: bounded, JSON, with its envelope.

The broadcast service and the floor dashboard follow tables they do not control: a
hostile or broken client on the broker can publish anything on a table's topics.
:func:`parse_payload` is the one gate: a message too large, not JSON, not an object
or without the envelope's ``seq``/``ts`` is refused with a reason (and counted by
the caller), never passed on. The archive reads its records with the same first
step, :func:`load_message` (its own size limit; it checks more fields after).
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

MAX_PAYLOAD: Final = 256 * 1024
"""Largest message taken from the broker; a state of 8 seats is a few KiB."""


def load_message(raw: bytes, limit: int) -> Any:
    """A message's JSON, or ``ValueError`` saying why it is refused (larger than
    ``limit`` bytes, not JSON, nested too deep): the services' words (issue 20)."""
    if len(raw) > limit:
        raise ValueError(f"{len(raw)} bytes, more than {limit}")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not JSON ({str(exc)[:60]})") from None


def parse_payload(raw: bytes) -> dict[str, Any]:
    """A message's JSON object, or ``ValueError`` saying why it is refused."""
    data = load_message(raw, MAX_PAYLOAD)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    seq, ts = data.get("seq"), data.get("ts")
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        raise ValueError("no envelope seq")
    if isinstance(ts, bool) or not isinstance(ts, int | float) or not math.isfinite(ts):
        raise ValueError("no envelope ts")
    return data
