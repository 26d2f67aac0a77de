"""Broadcast service figures (docs/broadcast.md, issue 12).

``buffer``: the delay backlog for a 60-minute delay at a busy 8-seat table dealing
continuously, with simulated time (the delay line is pure; the store is the real
SQLite file). Every 0.5 s of table time (a dealer's pace) the table produces one
secure event and one secure state of 8 seats with 7 cards, readings and equity
(~3 KB), plus the public event and state: 8 messages/s, 28,800 an hour. The
service takes them (``Broadcast.take``: checked, committed, pushed to every delay
line) and releases on a 100 ms tick, for ``--minutes`` of table time. Reported:
messages, CPU per message, Python heap peak (tracemalloc), RSS, the file's size,
the delay line's backlog.

``pages``: the real service as a process, a fake table publishing that stream over
Mosquitto in real time, ``--pages`` SSE clients on the delayed overlay; the
service's CPU share and RSS over ``--seconds``.

``latency``: card placed (the emulated reader's frame written to its pty) to the
card drawn in the DOM of a zero-delay locked output in headless Chromium: the demo
table (Mosquitto, emulated readers, the real daemon), the service, one browser;
a MutationObserver stamps each card's arrival with the page's epoch clock.

    .venv/bin/python bench/bench_broadcast.py buffer [--minutes 75]
    .venv/bin/python bench/bench_broadcast.py pages [--pages 20 --seconds 60]
    .venv/bin/python bench/bench_broadcast.py latency [--cards 120]
"""

# ruff: noqa: PLC0415 - each benchmark imports what it needs (the test helpers are on a
# path set at run time; the buffer benchmark must not pay for a browser or a broker).

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

from table_controller.broadcast.config import parse_broadcast_config
from table_controller.web.passwords import hash_password

ROOT = Path(__file__).resolve().parents[1]

RANKS = "23456789TJQKA"
DECK = [r + s for r in RANKS for s in "cdhs"]


def secure_state(seq: int, ts: float, rng: random.Random) -> dict[str, Any]:
    """A busy 8-seat secure state, shaped like the daemon's (with i11's equity fields)."""
    cards = rng.sample(DECK, 52) + rng.sample(DECK, 4)  # size only: 56 cards drawn
    seats = []
    for no in range(1, 9):
        mine = cards[(no - 1) * 7: no * 7]
        seats.append({"seat": no, "status": "active", "up": mine[2:6], "down_count": 3,
                      "down": mine[:2] + mine[6:], "stack": 1000 + no, "bet": 20,
                      "name": f"Player number {no}", "country": "FR",
                      "showing": "Pair of nines showing", "reading": "Two pair, kings and fives",
                      "equity": 0.125, "win": 0.1, "tie": 0.025, "stderr": None,
                      "outs": None})
    return {"table": "t1", "hand": seq // 200, "seq": seq, "ts": ts, "street": 6,
            "bring_in": 3, "to_act": 4, "community": None, "alerts": [], "pot": 640,
            "pots": [], "legal_actions": [], "seats": seats}


def config(tmp: Path, broker_port: int = 1883, delay: float = 3600.0) -> Any:
    return parse_broadcast_config({
        "tables": ["t1"], "state_file": str(tmp / "bc.sqlite"), "min_public_delay_s": 0,
        "broker": {"host": "127.0.0.1", "port": broker_port},
        "http": {"port": 0},
        "producer": {"password_hash": hash_password("bench-password")},
        "outputs": [{"name": "overlay", "delay_s": delay, "reveal": "showdown"}],
    }, tmp / "broadcast.toml")


def bench_buffer(minutes: float) -> dict[str, Any]:
    from table_controller.broadcast.service import Broadcast

    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        service = Broadcast(config(tmp))
        tracemalloc.start()
        t0 = 1_800_000_000.0
        seq = 0
        cpu0 = time.process_time()
        wall0 = time.perf_counter()
        released = 0
        steps = int(minutes * 60 / 0.5)
        for step in range(steps):
            now = t0 + step * 0.5
            for topic, body in (
                ("secure/events", {"kind": "card_dealt_down", "seat": step % 8 + 1,
                                   "card": DECK[step % 52]}),
                ("secure/state", None),
                ("events", {"kind": "card_dealt_down", "seat": step % 8 + 1}),
                ("state", None),
            ):
                seq += 1
                if body is None:
                    payload = secure_state(seq, now, rng)
                    if topic == "state":
                        for row in payload["seats"]:
                            for key in ("down", "reading", "equity", "win", "tie", "stderr",
                                        "outs"):
                                row.pop(key)
                else:
                    payload = {"table": "t1", "hand": seq // 200, "seq": seq, "ts": now,
                               **body}
                service.take(f"stud/v1/t1/{topic}", json.dumps(payload).encode())
            for tick in range(5):
                before = service.outputs["overlay"].line.released
                service.release(now + tick * 0.1)
                released += service.outputs["overlay"].line.released - before
        cpu = time.process_time() - cpu0
        wall = time.perf_counter() - wall0
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        size = sum(p.stat().st_size for p in tmp.glob("bc.sqlite*"))
        line = service.outputs["overlay"].line
        result = {
            "table_minutes": minutes, "messages": seq, "delay_s": 3600,
            "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
            "cpu_us_per_message": round(cpu / seq * 1e6, 1),
            "python_heap_peak_mib": round(peak / 2**20, 2),
            "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "sqlite_mib": round(size / 2**20, 1),
            "overlay_backlog_messages": line.backlog,
            "overlay_released_messages": line.released,
        }
        service.store.close()
        return result


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def bench_pages(pages: int, seconds: float) -> dict[str, Any]:
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from table_controller.testing.broadcast_rig import Service, SseReader
    from table_controller.testing.broker import MosquittoBroker

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        broker = MosquittoBroker(tmp / "broker")
        (tmp / "broker").mkdir()
        broker.start()
        cfg_path = tmp / "broadcast.toml"
        cfg_path.write_text(f"""tables = ["t1"]
state_file = "bc.sqlite"
min_public_delay_s = 0
[broker]
host = "127.0.0.1"
port = {broker.port}
[http]
port = 0
[producer]
password_hash = "{hash_password('bench-password')}"
[[outputs]]
name = "overlay"
delay_s = 5
reveal = "showdown"
""")
        service = Service(cfg_path).start()
        assert service.process is not None
        readers = [SseReader(service.port, "/sse/overlay/t1").start() for _ in range(pages)]
        client = mqtt.Client(CallbackAPIVersion.VERSION2)
        client.connect("127.0.0.1", broker.port)
        client.loop_start()
        rng = random.Random(2)
        stop = time.monotonic() + seconds
        seq = 0
        cpu0 = _proc_cpu(service.process.pid)
        t0 = time.monotonic()
        rss_max = 0.0
        while time.monotonic() < stop:
            now = time.time()
            seq += 1
            client.publish("stud/v1/t1/secure/events", json.dumps(
                {"table": "t1", "hand": 1, "seq": seq, "ts": now, "kind": "card_dealt_down",
                 "seat": 1, "card": "Ah"}), qos=1)
            seq += 1
            client.publish("stud/v1/t1/secure/state",
                           json.dumps(secure_state(seq, now, rng)), qos=1)
            rss_max = max(rss_max, _proc_rss_mib(service.process.pid))
            time.sleep(0.5)
        time.sleep(6)  # the last ones fall due
        cpu = _proc_cpu(service.process.pid) - cpu0
        elapsed = time.monotonic() - t0
        got = [len(r.msgs()) for r in readers]
        for reader in readers:
            reader.close()
        client.loop_stop()
        service.stop()
        broker.stop()
        return {"pages": pages, "seconds": round(elapsed, 1), "messages_published": seq,
                "messages_per_page_min": min(got), "messages_per_page_max": max(got),
                "service_cpu_share": round(cpu / elapsed, 3),
                "service_rss_mib_max": round(rss_max, 1)}


OBSERVER_JS = """(() => { window.__seen = {};
  new MutationObserver(() => {
    for (const el of document.querySelectorAll('.card[data-card]')) {
      const c = el.dataset.card;
      if (c !== 'back' && !(c in window.__seen))
        window.__seen[c] = performance.timeOrigin + performance.now();
    }
  }).observe(document.body, {subtree: true, childList: true});
  return true; })()"""


def bench_latency(cards: int) -> dict[str, Any]:
    import base64

    from table_controller.domain.events import CardPlaced, CardRemoved
    from table_controller.domain.zones import MUCK, Zone, ZoneKind
    from table_controller.simulation import deal_random
    from table_controller.simulation.session import DemoTable
    from table_controller.testing.broadcast_rig import PASSWORD, Service, write_config
    from table_controller.testing.browser import Browser

    samples: list[float] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        demo = DemoTable(tmp / "demo", scan_period=0.02).start()
        cfg = write_config(tmp, demo.port, delay_s=0, reveal="all",
                           extra_outputs="locked = true\n", tables='["demo"]')
        service = Service(cfg).start()
        browser = Browser(tmp / "profile")
        try:
            browser.headers({"Authorization": "Basic " + base64.b64encode(
                f"producer:{PASSWORD}".encode()).decode()})
            browser.open(f"http://127.0.0.1:{service.port}/overlay/demo")
            rng = random.Random(7)
            assert demo.table is not None
            while len(samples) < cards:
                browser.js(OBSERVER_JS)
                deal = deal_random([1, 2, 3, 4, 5, 6], rng, fold_chance=0.0)
                placed: dict[str, float] = {}
                for event in deal.events:
                    if isinstance(event, CardPlaced | CardRemoved):
                        if isinstance(event, CardPlaced) and event.zone.kind in (
                                ZoneKind.UP, ZoneKind.DOWN):
                            placed[event.card.code] = time.time()
                        demo.table.apply(event)
                        time.sleep(0.3)
                time.sleep(1.0)
                seen = browser.js("window.__seen")
                samples += [seen[c] / 1000 - t for c, t in placed.items() if c in seen]
                gathered = []
                for seat in deal.seats:  # the dealer gathers the cards into the muck
                    for zone, held in ((Zone.down(seat), deal.down(seat)),
                                       (Zone.up(seat), deal.up(seat))):
                        for card in held:
                            demo.table.apply(CardRemoved(zone, card))
                            demo.table.apply(CardPlaced(MUCK, card))
                            gathered.append(card)
                time.sleep(2.5)
                for card in gathered + [c for b in deal.burns.values() for c in b]:
                    demo.table.apply(CardRemoved(MUCK, card))  # ...and shuffles
                time.sleep(2.5)
        finally:
            browser.close()
            service.stop()
            demo.close()
    samples.sort()
    ms = [s * 1000 for s in samples]
    return {"cards": len(ms), "median_ms": round(statistics.median(ms), 1),
            "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 1),
            "max_ms": round(ms[-1], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("buffer").add_argument("--minutes", type=float, default=75.0)
    pages = sub.add_parser("pages")
    pages.add_argument("--pages", type=int, default=20)
    pages.add_argument("--seconds", type=float, default=60.0)
    sub.add_parser("latency").add_argument("--cards", type=int, default=120)
    args = parser.parse_args()
    if args.what == "buffer":
        print(json.dumps(bench_buffer(args.minutes)))
    elif args.what == "pages":
        print(json.dumps(bench_pages(args.pages, args.seconds)))
    else:
        print(json.dumps(bench_latency(args.cards)))


if __name__ == "__main__":
    threading.excepthook = lambda info: None  # SSE readers closed under their threads
    main()
