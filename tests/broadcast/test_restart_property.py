"""The service's delay path with a clock the test controls, across restarts (issue 12).

``Broadcast`` is driven in-process (no broker, no HTTP): messages are taken, the
clock moves, delays change, and the service is dropped and rebuilt from its file
(what ``kill -9`` leaves: every committed row). A page is simulated as the SSE
stream serves it: it reads what its output released after its last event id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.broadcast.config import parse_broadcast_config
from table_controller.broadcast.service import Broadcast
from table_controller.web.passwords import hash_password

HASH = hash_password("restart-test-pw", salt=b"0123456789abcdef")

steps = st.lists(
    st.one_of(
        st.tuples(st.just("take"), st.floats(-2.0, 20.0)),
        st.tuples(st.just("tick"), st.floats(0.0, 120.0)),
        st.tuples(st.just("delay"), st.floats(0.0, 300.0)),
        st.tuples(st.just("restart"), st.just(0.0)),
    ),
    max_size=60,
)


class Clock:
    """The controlled clock."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _service(path: Path, clock: Clock) -> Broadcast:
    cfg = parse_broadcast_config({
        "tables": ["t1"], "state_file": str(path), "min_public_delay_s": 0,
        "producer": {"password_hash": HASH},
        "outputs": [{"name": "overlay", "delay_s": 60, "reveal": "showdown"}],
    }, path.parent / "broadcast.toml")
    return Broadcast(cfg, clock=clock)


@settings(max_examples=150)
@given(steps)
def test_pages_get_everything_once_in_order_never_early_across_restarts(
        tmp_path_factory: Any, run: list[tuple[str, float]]) -> None:
    """Over random takes, clock steps, delay changes and restarts: a page resuming
    from its last id gets every message once, in order, none before ts + D (the D
    in force when it was released)."""
    path = Path(tmp_path_factory.mktemp("restart")) / "bc.sqlite"
    clock = Clock()
    service = _service(path, clock)
    produced = clock.now
    sent: list[int] = []  # the table's seq of every message, in order
    ts_of: dict[int, float] = {}
    got: list[int] = []
    last_id = 0
    src = 0

    def page() -> None:
        nonlocal last_id
        out = service.outputs["overlay"]
        for msg in service.store.read(out.feed, "t1", last_id, out.line.released,
                                      out.id_class):
            assert msg.id == last_id + 1, "ids of an output are dense"
            last_id = msg.id
            seq = msg.payload["seq"]
            assert clock.now >= ts_of[seq] + out.line.delay_s - 1e-6, "released early"
            got.append(seq)

    for op, value in run:
        if op == "take":
            produced += value
            src += 1
            ts_of[src] = produced
            body = {"table": "t1", "hand": 1, "seq": src, "ts": produced,
                    "kind": "card_dealt_down", "seat": 1, "card": "Ah"}
            service.take("stud/v1/t1/secure/events", json.dumps(body).encode())
            service.take("stud/v1/t1/secure/events", json.dumps(body).encode())  # QoS 1 again
            sent.append(src)
        elif op == "tick":
            clock.now += value
        elif op == "delay":
            service.set_delay("overlay", value, None)
        else:
            service.store.close()  # kill -9: what is committed is all that is left
            service = _service(path, clock)
        service.release(clock.now)
        page()
    clock.now = max([clock.now, *ts_of.values()]) + 400
    service.release(clock.now)
    page()
    service.store.close()
    assert got == sent, "lost, repeated or reordered"
