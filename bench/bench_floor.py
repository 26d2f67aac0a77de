"""Floor dashboard figures (docs/floor.md, issue 14): 20 tables into one broker.

A load generator process publishes what 20 busy tables publish (contract-shaped,
directly, not 20 daemons): per table, ``--rate`` public ``state`` updates (retained)
and as many ``events`` per second, ``readers/<r>`` heartbeats every 5 s, a finished
``hands`` record every ``--hand-every`` states, and an alert (``alerts`` then the
retained ``alerts/open``) every ``--alert-every`` seconds per table, the oldest open
alert resolved (``alerts/changes`` + ``alerts/open``) once a table has 4 open. Each
table has its own MQTT client and thread. The real ``stud-table floor`` runs as a
process with ``--pages`` logged-in SSE streams reading it.

Reported: alert latency broker -> dashboard SSE (from the alert's ``ts``, stamped just
before it is published, to the first SSE view that lists its id, read by an SSE client
in this process: the same clock), median / p99 / max; the dashboard process's CPU
(utime + stime over the run, /proc) and RSS (VmRSS at the end, VmHWM peak); messages
published.

    .venv/bin/python bench/bench_floor.py [--tables 20 --seconds 60 --rate 10 --pages 3]
"""

# ruff: noqa: PLC0415 - a benchmark: imports on the run-time path, prints its figures

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "floor"), str(ROOT)]

CODES = [("missing_burn", "error"), ("out_of_order", "error"), ("too_many_cards", "critical"),
         ("illegal_bet", "warning"), ("premature_deal", "error"), ("reader_offline", "critical")]


@dataclass(frozen=True)
class Load:
    """What the generator publishes."""

    port: int
    tables: int
    seconds: float
    rate: float
    hand_every: int
    alert_every: float
    start: float


def table_load(load: Load, table: str, counts: dict[str, int], lock: threading.Lock) -> None:
    """One table's traffic for ``seconds`` (runs in a thread of the generator process)."""
    from floor_rig import FakeTable, mqtt_client

    port, seconds, rate, start = load.port, load.seconds, load.rate, load.start
    hand_every, alert_every = load.hand_every, load.alert_every

    rng = random.Random(table)
    client = mqtt_client(port, f"bench-{table}")
    fake = FakeTable(client, table)
    fake.online(readers=("r1", "r2", "r3"))
    fake.sign_in(f"D{rng.randint(10, 99)}", f"Dealer {table}")
    tick = 1.0 / rate
    next_alert = start + rng.uniform(0, alert_every)
    next_reader = start + 5.0
    n = 0
    sent = 0
    time.sleep(max(0.0, start - time.time()))
    while time.time() < start + seconds:
        n += 1
        fake.state(street=3 + n % 5, pot=10 * (n % 30))
        client.publish(f"{fake.topics.base}/events", json.dumps(
            {"table": table, "hand": fake.hand, "seq": n, "ts": time.time(),
             "type": "card_placed", "zone": "seat1.up", "card": "As"}), qos=1)
        sent += 2
        if n % hand_every == 0:
            fake.finish_hand()
            sent += 1
        now = time.time()
        if now >= next_reader:
            for reader in ("r1", "r2", "r3"):
                fake.reader(reader, "online")
            sent += 3
            next_reader = now + 5.0
        if now >= next_alert:
            code, severity = rng.choice(CODES)
            fake.raise_alert(code, severity)
            sent += 2
            with lock:
                counts["alerts"] += 1
            if len(fake.open) > 4:
                fake.change(next(iter(fake.open)), "resolved", "bench", "handled")
                sent += 2
            next_alert = now + alert_every
        time.sleep(max(0.0, tick - (time.time() - now)))
    with lock:
        counts["sent"] += sent
    client.disconnect()
    client.loop_stop()


def generator(load: Load, out: Any) -> None:
    """The load generator process: one thread per table."""
    counts = {"alerts": 0, "sent": 0}
    lock = threading.Lock()
    threads = [threading.Thread(target=table_load, args=(load, f"t{i + 1:02d}", counts, lock))
               for i in range(load.tables)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put(counts)


def proc_cpu(pid: int) -> float:
    """utime + stime of ``pid`` in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_mem(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of ``pid`` in KiB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    return values["VmRSS"], values["VmHWM"]


def main() -> int:
    """Run the benchmark and print its figures (JSON last)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=10.0, help="state updates/s per table")
    parser.add_argument("--hand-every", type=int, default=50, help="states per hand")
    parser.add_argument("--alert-every", type=float, default=2.0,
                        help="seconds between alerts per table")
    parser.add_argument("--pages", type=int, default=3, help="SSE streams (dashboards open)")
    args = parser.parse_args()

    from floor_rig import FloorService, Page, SseView, write_config

    from table_controller.testing.broker import MosquittoBroker

    with tempfile.TemporaryDirectory() as tmp:
        broker = MosquittoBroker(Path(tmp) / "mosquitto")
        (Path(tmp) / "mosquitto").mkdir()
        broker.start()
        service = FloorService(write_config(Path(tmp), broker.port)).start()
        assert service.process is not None
        pid = service.process.pid
        try:
            first_seen: dict[str, float] = {}
            raised: dict[str, float] = {}
            lock = threading.Lock()

            def on_view(at: float, view: dict[str, Any]) -> None:
                with lock:
                    for alert in view["alerts"]:
                        if alert["id"] not in first_seen:
                            first_seen[alert["id"]] = at
                            raised[alert["id"]] = alert["raised_ts"]

            # A plain subscriber beside the pages: when the broker delivered each alert
            # (the reference for broker -> dashboard, without the generator's own delay).
            import paho.mqtt.client as mqtt
            from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

            delivered: dict[str, float] = {}

            def on_message(_c: Any, _u: Any, msg: Any) -> None:
                at = time.time()
                ident = json.loads(msg.payload).get("id")
                with lock:
                    delivered.setdefault(ident, at)

            ref = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-reference",
                              protocol=MQTTProtocolVersion.MQTTv5)
            ref.on_message = on_message
            ref.connect("127.0.0.1", broker.port)
            ref.subscribe("stud/v1/+/alerts", qos=1)
            ref.loop_start()
            pages = []
            for i in range(args.pages):
                page = Page(service.port)
                assert page.login("Maria Lopez") == 303
                pages.append(SseView(service.port, page.cookie,
                                     on_view=on_view if i == 0 else lambda _a, _v: None).start())
            start = time.time() + 3.0
            queue: Any = multiprocessing.Queue()
            gen = multiprocessing.Process(target=generator, args=(Load(
                broker.port, args.tables, args.seconds, args.rate, args.hand_every,
                args.alert_every, start), queue))
            gen.start()
            time.sleep(max(0.0, start - time.time()))
            cpu0, wall0 = proc_cpu(pid), time.monotonic()
            counts = queue.get(timeout=args.seconds + 120)
            gen.join(timeout=60)
            time.sleep(2.0)  # the last alerts reach the pages
            cpu1, wall1 = proc_cpu(pid), time.monotonic()
            rss, hwm = proc_mem(pid)
            with lock:
                lat = sorted((first_seen[i] - raised[i]) * 1000 for i in first_seen
                             if raised[i] >= start)
                hop = sorted((first_seen[i] - delivered[i]) * 1000 for i in first_seen
                             if raised[i] >= start and i in delivered)
            ref.disconnect()
            ref.loop_stop()
            for page in pages:
                page.close()
        finally:
            service.stop()
            broker.close()
    def pct(values: list[float], q: float) -> float | None:
        return round(values[min(len(values) - 1, round(q * (len(values) - 1)))], 1) \
            if values else None

    p99 = pct(lat, 0.99)
    figures = {
        "tables": args.tables, "seconds": args.seconds, "pages": args.pages,
        "messages_published": counts["sent"], "alerts_raised": counts["alerts"],
        "alerts_seen": len(lat),
        "msg_per_s": round(counts["sent"] / args.seconds, 1),
        "latency_ms_median": round(statistics.median(lat), 1) if lat else None,
        "latency_ms_p99": p99,
        "latency_ms_max": round(lat[-1], 1) if lat else None,
        "broker_to_sse_ms_median": pct(hop, 0.5), "broker_to_sse_ms_p99": pct(hop, 0.99),
        "broker_to_sse_ms_max": pct(hop, 1.0),
        "cpu_percent_of_one_core": round(100 * (cpu1 - cpu0) / (wall1 - wall0), 1),
        "rss_mib_end": round(rss / 1024, 1), "rss_mib_peak": round(hwm / 1024, 1),
        "cores": os.cpu_count(),
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
