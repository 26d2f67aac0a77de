"""The 20-table room (docs/scaling.md, issue 14): tables, one broker, archive and dashboard.

The load generator of bench_floor.py (imported, not copied: contract-shaped
``state``/``events``/``readers``/``hands``/``alerts`` of ``--tables`` busy tables, one
MQTT client and thread each, in a process of its own) publishes into a real
Mosquitto. The REAL services run as child processes on the same broker:
``stud-table archive`` (SQLite in a temp dir) and ``stud-table floor`` with
``--pages`` logged-in SSE page clients reading its stream (the first one is timed).

``--bridge``: the tables publish into a table-side Mosquitto running the shipped
deploy/bridge.conf (tests/deploy/bridge_rig.py: loopback ports, TLS to the central
broker, the bridge's own login); archive and floor log in to the central broker.

Measured in one run (all clocks are this machine's ``time.time()``):

* alert latency: the alert's ``ts`` (stamped by the generator just before it publishes)
  to the first SSE view that lists its id: median, p99, max; alerts raised / seen;
* archive: rows written per second over the run (hands, hand_players, alerts, notices,
  counted in the SQLite file) and the lag publication -> row (``archived_ts`` - the hand
  record's ``ts``): median, p99, max; hands delivered by the (central) broker vs archived;
* CPU (utime + stime over the run, % of one core) and RSS (VmRSS at the end, VmHWM peak)
  of each process: the broker(s), archive, floor, the generator (its own rusage).

No assertions: it prints a table of figures and the JSON last, and stops by itself.

    .venv/bin/python bench/bench_room.py [--tables 20 --seconds 60 --rate 10] [--bridge]
"""

# ruff: noqa: PLC0415 - a benchmark: imports on the run-time path, prints its figures

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests"), str(ROOT / "tests" / "floor"),
                str(ROOT / "tests" / "deploy"), str(ROOT)]

from bench_floor import Load, generator, proc_cpu, proc_mem  # noqa: E402

ARCHIVE_TABLES = ("hands", "hand_players", "alerts", "notices")


class _Box:
    """Stands in for the multiprocessing queue that bench_floor's generator fills."""

    def __init__(self) -> None:
        self.value: Any = None

    def put(self, value: Any) -> None:
        """Keep what the generator reports."""
        self.value = value


def room_generator(load: Load, out: Any) -> None:
    """bench_floor's generator, plus its own CPU and peak RSS (it exits before the end)."""
    box = _Box()
    generator(load, box)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    rss, hwm = proc_mem(os.getpid())
    out.put({**box.value, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_kib": rss,
             "hwm_kib": hwm})


def pct(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (nearest rank) of sorted ``values``, rounded; None if empty."""
    if not values:
        return None
    return round(values[min(len(values) - 1, round(q * (len(values) - 1)))], 1)


def count_rows(database: Path) -> dict[str, int]:
    """Rows per archive table, read-only (the archive keeps writing)."""
    if not database.exists():
        return dict.fromkeys(ARCHIVE_TABLES, 0)
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ARCHIVE_TABLES}
    finally:
        conn.close()


def hand_lags(database: Path, since: float) -> list[float]:
    """archived_ts - record ts (ms) of the hands published from ``since``, sorted."""
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    try:
        lags = []
        for archived, record in conn.execute("SELECT archived_ts, record FROM hands"):
            ts = json.loads(record)["ts"]
            if ts >= since:
                lags.append((archived - ts) * 1000)
        return sorted(lags)
    finally:
        conn.close()


def archive_config(path: Path, port: int, database: Path,
                   creds: tuple[str, str] | None) -> None:
    """The archive's TOML: the (central) broker, SQLite at ``database``."""
    login = "" if creds is None else f'username = "{creds[0]}"\npassword = "{creds[1]}"\n'
    path.write_text(f"""instance = "bench-room"
status_interval_s = 5

[broker]
host = "127.0.0.1"
port = {port}
{login}
[database]
path = "{database}"
""")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """One run; returns the figures."""
    import paho.mqtt.client as mqtt
    from floor_rig import ArchiveProcess, FloorService, Page, SseView, mqtt_client, write_config

    from table_controller.testing.broker import MosquittoBroker, wait_until

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        pair: Any = None
        creds: tuple[str, str] | None = None
        if args.bridge:
            from bridge_rig import LINK_STATE, READER, BridgedPair

            pair = BridgedPair(tmp / "brokers").start()
            brokers = {"mosquitto_table": pair.table, "mosquitto_central": pair.central}
            table_port, central_port = pair.table.port, pair.central.port
            creds = (READER.name, READER.password)
            try:  # both brokers run: stop them if the link never comes up
                link_up = threading.Event()
                link = mqtt_client(table_port, "bench-room-link")
                link.on_message = lambda _c, _u, m: link_up.set() if m.payload == b"1" else None
                link.subscribe(LINK_STATE, qos=1)
                if not link_up.wait(120):
                    raise SystemExit("the bridge did not come up")
                link.disconnect()
                link.loop_stop()
            except BaseException:
                pair.close()
                raise
        else:
            broker = MosquittoBroker(tmp / "mosquitto")
            (tmp / "mosquitto").mkdir()
            broker.start()
            brokers = {"mosquitto": broker}
            table_port = central_port = broker.port
        database = tmp / "archive.sqlite"
        archive = ArchiveProcess(tmp, central_port, database)
        archive_config(archive.config, central_port, database, creds)
        floor = FloorService(write_config(tmp, central_port,
                                          username=creds[0] if creds else None,
                                          password=creds[1] if creds else None))
        pages: list[SseView] = []
        ref: mqtt.Client | None = None
        try:
            archive.start()
            floor.start()
            assert archive.process is not None
            assert floor.process is not None
            pids = {name: b.pid for name, b in brokers.items()}
            pids |= {"archive": archive.process.pid, "floor": floor.process.pid}

            lock = threading.Lock()
            first_seen: dict[str, float] = {}
            raised: dict[str, float] = {}

            def on_view(at: float, view: dict[str, Any]) -> None:
                with lock:
                    for alert in view["alerts"]:
                        if alert["id"] not in first_seen:
                            first_seen[alert["id"]] = at
                            raised[alert["id"]] = alert["raised_ts"]

            # What the (central) broker delivered: the reference for "nothing lost".
            delivered: dict[str, set[str]] = {"alerts": set(), "hands": set()}

            def on_message(_c: Any, _u: Any, msg: Any) -> None:
                body = json.loads(msg.payload)
                kind = msg.topic.rsplit("/", 1)[1]
                with lock:
                    delivered[kind].add(body.get("id") or body.get("hand_id"))

            ref = mqtt_client(central_port, "bench-room-reference", *(creds or (None, None)))
            ref.on_message = on_message
            ref.subscribe([("stud/v1/+/alerts", 1), ("stud/v1/+/hands", 1)])
            for i in range(args.pages):
                page = Page(floor.port)
                assert page.login("Maria Lopez") == 303
                pages.append(SseView(floor.port, page.cookie,
                                     on_view=on_view if i == 0 else lambda _a, _v: None).start())

            start = time.time() + 3.0
            queue: Any = multiprocessing.Queue()
            gen = multiprocessing.Process(target=room_generator, args=(Load(
                table_port, args.tables, args.seconds, args.rate, args.hand_every,
                args.alert_every, start), queue))
            gen.start()
            time.sleep(max(0.0, start - time.time()))
            cpu0 = {name: proc_cpu(pid) for name, pid in pids.items()}
            wall0 = time.monotonic()
            counts = queue.get(timeout=args.seconds + 300)
            gen.join(timeout=60)
            published_end = time.monotonic()

            # Drain: the last alerts reach the page, the last hands their rows.
            def settled() -> bool:
                with lock:
                    hands_in = len(delivered["hands"])
                return count_rows(database)["hands"] >= hands_in

            drained = True
            try:
                wait_until(settled, 120, "the archive to write the last hands")
            except AssertionError:
                drained = False
            time.sleep(2.0)
            cpu1 = {name: proc_cpu(pid) for name, pid in pids.items()}
            wall = time.monotonic() - wall0
            mem = {name: proc_mem(pid) for name, pid in pids.items()}
            rows = count_rows(database)
            lags = hand_lags(database, start)
            with lock:
                lat = sorted((first_seen[i] - raised[i]) * 1000 for i in first_seen
                             if raised[i] >= start)
                hands_delivered = len(delivered["hands"])
                alerts_delivered = len(delivered["alerts"])
        finally:
            for view in pages:
                view.close()
            if ref is not None:
                ref.disconnect()
                ref.loop_stop()
            floor.stop()
            archive.stop()
            if pair is not None:
                pair.close()
            else:
                broker.close()

    processes: dict[str, dict[str, float]] = {}
    for name in pids:
        processes[name] = {
            "cpu_percent": round(100 * (cpu1[name] - cpu0[name]) / wall, 1),
            "rss_mib_end": round(mem[name][0] / 1024, 1),
            "rss_mib_peak": round(mem[name][1] / 1024, 1)}
    processes["generator"] = {
        # Its whole life: connecting 20 clients, 3 s of waiting, the run.
        "cpu_percent": round(100 * counts["cpu_s"] / (published_end - wall0), 1),
        "rss_mib_end": round(counts["rss_kib"] / 1024, 1),
        "rss_mib_peak": round(counts["hwm_kib"] / 1024, 1)}
    total_rows = sum(rows.values())
    return {
        "mode": "bridge" if args.bridge else "one broker",
        "tables": args.tables, "seconds": args.seconds, "rate_per_table": args.rate,
        "pages": args.pages, "cores": os.cpu_count(),
        "messages_published": counts["sent"],
        "msg_per_s": round(counts["sent"] / args.seconds, 1),
        "alerts_raised": counts["alerts"], "alerts_delivered": alerts_delivered,
        "alerts_seen_on_page": len(lat),
        "alert_latency_ms_median": round(statistics.median(lat), 1) if lat else None,
        "alert_latency_ms_p99": pct(lat, 0.99), "alert_latency_ms_max": pct(lat, 1.0),
        "hands_delivered": hands_delivered, "hands_archived": rows["hands"],
        "archive_drained": drained,
        "archive_rows": rows, "archive_rows_per_s": round(total_rows / wall, 1),
        "archive_hands_per_s": round(rows["hands"] / wall, 1),
        "archive_lag_ms_median": round(statistics.median(lags), 1) if lags else None,
        "archive_lag_ms_p99": pct(lags, 0.99), "archive_lag_ms_max": pct(lags, 1.0),
        "measured_s": round(wall, 1),
        "processes": processes,
    }


def print_table(fig: dict[str, Any]) -> None:
    """The figures as a readable table."""
    print(f"{fig['mode']}: {fig['tables']} tables x {fig['rate_per_table']:g} states/s, "
          f"{fig['seconds']:g} s, {fig['pages']} SSE page(s), {fig['cores']} cores")
    print(f"  published          {fig['messages_published']} messages "
          f"({fig['msg_per_s']}/s)")
    print(f"  alerts             raised {fig['alerts_raised']}, delivered "
          f"{fig['alerts_delivered']}, seen on page {fig['alerts_seen_on_page']}")
    print(f"  alert -> page      median {fig['alert_latency_ms_median']} ms, p99 "
          f"{fig['alert_latency_ms_p99']} ms, max {fig['alert_latency_ms_max']} ms")
    print(f"  archive            {fig['archive_rows_per_s']} rows/s "
          f"({fig['archive_hands_per_s']} hands/s), hands delivered "
          f"{fig['hands_delivered']}, archived {fig['hands_archived']}")
    print(f"  publish -> row     median {fig['archive_lag_ms_median']} ms, p99 "
          f"{fig['archive_lag_ms_p99']} ms, max {fig['archive_lag_ms_max']} ms")
    print(f"  {'process':18} {'CPU % of 1 core':>16} {'RSS end MiB':>12} {'RSS peak MiB':>13}")
    for name, p in fig["processes"].items():
        print(f"  {name:18} {p['cpu_percent']:>16} {p['rss_mib_end']:>12} "
              f"{p['rss_mib_peak']:>13}")


def main() -> int:
    """Parse the options, run once, print the figures (JSON last)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=10.0, help="state updates/s per table")
    parser.add_argument("--hand-every", type=int, default=50, help="states per hand")
    parser.add_argument("--alert-every", type=float, default=2.0,
                        help="seconds between alerts per table")
    parser.add_argument("--pages", type=int, default=1, help="SSE page clients")
    parser.add_argument("--bridge", action="store_true",
                        help="tables -> table broker -> deploy/bridge.conf -> central broker")
    figures = run(parser.parse_args())
    print_table(figures)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
