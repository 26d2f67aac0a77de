"""Console fuzzing over a real broker (issue 9 reliability suite).

The daemon runs as a real ``stud-table run`` process on a real Mosquitto (with
the deploy config's ``max_packet_size``). Hypothesis builds batches of console
requests: random names (several levels, empty, long, any Unicode), random
payloads (JSON-ish, random bytes, sizes up to the broker's packet limit), every
kind of *Response Topic* (none, empty, wildcard, ``$SYS``, another table's, the
public state, very long, several levels, the good one), random and non-UTF-8
correlation data, some retained. After each batch one good request is the sync
point (the daemon answers in queue order). Checked after every batch:

* the daemon process is alive and never published ``offline``/``lost``;
* every request that can be answered (not retained, a good response topic, not
  ``rebirth``) got exactly one reply, on the good topic, with its correlation data;
* nothing else got a reply, and the daemon published nothing outside its topics.

Memory: RSS of the daemon process before and after (printed; bound generous).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hostile import BROKER_LIMITS, MAX_PACKET, REPLY, daemon_topics, rss_kb, send
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.testing.broker import WAIT, MosquittoBroker, RecordingSubscriber, wait_until
from table_controller.testing.daemon_rig import ROOT, TableRig, latest

NAMES = ["hand", "act", "kill", "live", "end", "rebirth"]
GOOD_BODIES = [
    b'{"players": [1, 2]}', b'{"players": [1, 2], "stacks": {"1": 10, "2": 10}}',
    b'{"seat": 1, "action": "call"}', b'{"seat": 9, "action": "fold"}',
    b'{"seat": 2, "reason": "absent"}', b"{}", b"", b'{"seat": "1"}', b"[]", b"null",
]
RESPONSE_TOPICS: list[str | None] = [
    None, "", REPLY, f"{ROOT}/reply/#", f"{ROOT}/reply/+", "#", "$SYS/broker/uptime",
    "stud/v1/t2/reply/console", f"{ROOT}/state", f"{ROOT}/secure/state", f"{ROOT}/reply/a/b",
    f"{ROOT}/reply/" + "x" * 2000, "x" * 5000,
]
SIZES = [0, 1, 100, 4096, 65_536, MAX_PACKET - 16_384]  # the rest: topic and properties


@dataclass(frozen=True)
class Request:
    """One fuzzed console request."""

    name: str
    payload: bytes
    response_topic: str | None
    correlation: bytes | None
    retain: bool

    @property
    def answerable(self) -> bool:
        """Whether the daemon must answer it (on REPLY)."""
        return not self.retain and self.name != "rebirth" and self.response_topic == REPLY


def _payload(size: int) -> bytes:
    return random.Random(size).randbytes(size)


# Topic names: any Unicode a client may publish to. Not the wildcards (paho
# refuses them), nor control characters or noncharacters: Mosquitto disconnects
# a client that uses those, so they never reach the daemon.
NAME_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Cn"),
                           blacklist_characters="+#"),
    max_size=120,
)
REQUESTS = st.builds(
    Request,
    name=st.one_of(st.sampled_from(NAMES), NAME_TEXT, st.just("n" * 3000)),
    payload=st.one_of(st.sampled_from(GOOD_BODIES), st.binary(max_size=512),
                      st.sampled_from(SIZES).map(_payload),
                      st.dictionaries(st.text(max_size=8),
                                      st.one_of(st.integers(), st.text(max_size=8)),
                                      max_size=4).map(lambda d: json.dumps(d).encode())),
    response_topic=st.one_of(st.just(REPLY), st.sampled_from(RESPONSE_TOPICS)),
    correlation=st.one_of(st.none(), st.binary(min_size=1, max_size=64),
                          st.just(b"\xff\xfe\x00not-utf8")),
    retain=st.sampled_from([False, False, False, True]),
)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """The tests' broker (anonymous, no ACL: a misdirected reply would be seen)
    with the deploy config's packet limit."""
    (tmp_path / "broker").mkdir()
    with MosquittoBroker(tmp_path / "broker", extra_config=BROKER_LIMITS) as running:
        yield running


def _fuzz(tmp_path: Path, broker: MosquittoBroker, batches: int) -> dict[str, int]:
    rig = TableRig(tmp_path, broker)
    observer = RecordingSubscriber(broker.port, ["#"])
    observer.wait_subscribed()
    process = rig.start_process()
    counts = {"requests": 0, "answerable": 0, "batches": 0}
    try:
        wait_until(lambda: (latest(observer, f"{ROOT}/status") or {}).get("status") == "online",
                   what="daemon online")
        sync = [0]

        def sync_point() -> None:
            sync[0] += 1
            tag = f"sync-{sync[0]}".encode()
            send(observer, "end", b"{}", REPLY, tag)
            observer.wait_for(lambda m: m.topic == REPLY and m.correlation_data == tag,
                              timeout=WAIT * 3)

        sync_point()
        rss_before = rss_kb(process.pid)
        serial = [0]

        @settings(max_examples=batches, database=None)
        @given(st.lists(REQUESTS, min_size=1, max_size=12))
        def batch(requests: list[Request]) -> None:
            sent: list[tuple[Request, bytes | None]] = []
            for request in requests:
                serial[0] += 1
                correlation = request.correlation
                if request.answerable or correlation is not None:
                    # Unique, so each reply is matched to its request.
                    correlation = (correlation or b"") + b"#" + str(serial[0]).encode()
                send(observer, request.name, request.payload, request.response_topic,
                     correlation, retain=request.retain, wait=False)
                sent.append((request, correlation))
            sync_point()
            assert process.poll() is None, rig.daemon_log()[-3000:]
            seen = observer.snapshot()
            for request, correlation in sent:
                got = [m for m in seen if m.correlation_data == correlation
                       and f"{ROOT}/cmd/" not in m.topic] if correlation else []
                if request.answerable:
                    assert [m.topic for m in got] == [REPLY], request
                else:
                    assert got == [], request
            counts["requests"] += len(sent)
            counts["answerable"] += sum(1 for r, _ in sent if r.answerable)
            counts["batches"] += 1

        batch()
        allowed = (*daemon_topics(), f"{ROOT}/cmd/")
        messages = observer.snapshot()
        assert [m.topic for m in messages if not m.topic.startswith(allowed)] == []
        assert {m.topic for m in messages if "/reply/" in m.topic} == {REPLY}
        statuses = [json.loads(m.payload)["status"] for m in messages
                    if m.topic == f"{ROOT}/status" and m.payload]
        assert set(statuses) == {"online"}, statuses  # never offline or lost: no restart
        counts["rss_before_kb"] = rss_before
        counts["rss_after_kb"] = rss_kb(process.pid)
        assert counts["rss_after_kb"] - rss_before < 50 * 1024
        print(f"console fuzz: {counts}")
        return counts
    finally:
        observer.close()
        rig.stop()


def test_console_fuzz_keeps_the_daemon_up_and_replies_only_where_allowed(
    tmp_path: Path, broker: MosquittoBroker
) -> None:
    _fuzz(tmp_path, broker, batches=80)


@pytest.mark.soak
def test_console_fuzz_soak(tmp_path: Path, broker: MosquittoBroker) -> None:
    _fuzz(tmp_path, broker, batches=1500)
