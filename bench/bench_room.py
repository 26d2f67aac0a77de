"""The room at 10 to 100 tables (docs/scaling.md, issues 14 and 25): tables, broker,
archive and dashboard, one size per run or a sweep of sizes.

The load generator of bench_floor.py (imported, not copied: contract-shaped
``state``/``events``/``readers``/``hands``/``alerts`` of ``--tables`` busy tables, one
MQTT client and thread each; ``--generators`` processes share the tables so that the
generator is not the first thing to run out of CPU) publishes into a real Mosquitto.
The REAL services run as child processes on the same broker: ``--writers``
``stud-table archive`` instances (one MQTT 5 shared-subscription group when more than
one, as docs/scaling.md says to scale them) writing SQLite in a temp dir or, with
``--database postgres``, a real PostgreSQL server of its own (tests/archive/pg_server.py),
and ``--floors`` ``stud-table floor`` instances with ``--pages`` logged-in SSE page
clients spread over them in turn. The first page (with ``--pits``, each floor's first)
is timed, read by a thread of this process; the other pages are read by one process of their own
(``page_readers``), so that reading them takes no CPU or GIL from the timed reader
here (the figure is the floor's, not the benchmark's). ``--pits``: each floor follows
its share of the tables (``tables = [...]`` in its floor.toml: ``t001``-``t050`` and
``t051``-``t100`` with two floors), the way docs/scaling.md scales the floor.

``--bridge``: the tables publish into a table-side Mosquitto running the shipped
deploy/bridge.conf (tests/deploy/bridge_rig.py: loopback ports, TLS to the central
broker, the bridge's own login); archive and floor log in to the central broker.

Measured in one run (all clocks are this machine's ``time.time()``):

* alert latency: the alert's ``ts`` (stamped by the generator just before it publishes)
  to the first SSE view that lists its id: median, p99, max; alerts raised / delivered
  by the broker / seen on the page (after the run the benchmark waits, up to 120 s,
  until every delivered alert was seen and every delivered hand archived);
* archive: rows written per second over the run (hands, hand_players, alerts, notices,
  counted in the database) and the lag publication -> row (``archived_ts`` - the hand
  record's ``ts``): median, p99, max; hands delivered by the (central) broker vs archived;
* CPU (utime + stime while the tables publish, % of one core; also over the run and the
  drain after it) and RSS (VmRSS at the end, VmHWM peak)
  of each process: the broker(s), each archive writer, PostgreSQL (all its processes,
  summed), floor, the generators (their own rusage);
* the load average (1 min) at the start and the end of the run.

No assertions: it prints a table of figures and the JSON last, and stops by itself.
``--sweep 10,20,50,100`` runs every size for every ``--databases`` and ``--page-counts``
(one run each, JSON lines appended to ``--out``); bench/room_curve.py draws them.

    .venv/bin/python bench/bench_room.py [--tables 20 --seconds 60 --rate 10] [--bridge]
        [--database sqlite|postgres] [--writers 1] [--pages 1]
    .venv/bin/python bench/bench_room.py --sweep 10,20,50,100 --databases sqlite,postgres
        --page-counts 1,10 --seconds 30 --out room.jsonl
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
                str(ROOT / "tests" / "deploy"), str(ROOT / "tests" / "archive"), str(ROOT)]

from bench_floor import Load, proc_cpu, proc_mem, table_load  # noqa: E402

ARCHIVE_TABLES = ("hands", "hand_players", "alerts", "notices")


class _Box:
    """Stands in for the multiprocessing queue that bench_floor's generator fills."""

    def __init__(self) -> None:
        self.value: Any = None

    def put(self, value: Any) -> None:
        """Keep what the generator reports."""
        self.value = value


def room_generator(load: Load, first: int, count: int, out: Any, nice: int = 0) -> None:
    """bench_floor's per-table traffic for tables ``first+1 .. first+count`` (one thread
    each), plus this process's CPU and peak RSS (it exits before the end). ``nice``: run
    at that niceness, so that the services measured are served first (the tables stand
    for other machines)."""
    if nice:
        os.nice(nice)
    counts = {"alerts": 0, "sent": 0}
    lock = threading.Lock()
    threads = [threading.Thread(target=table_load, args=(load, f"t{first + i + 1:03d}",
                                                         counts, lock))
               for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    rss, hwm = proc_mem(os.getpid())
    out.put({**counts, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_kib": rss,
             "hwm_kib": hwm})


def page_readers(streams: list[tuple[int, str]], stop: Any, ready: Any) -> None:
    """Read the untimed pages' SSE streams ((floor port, login cookie) each, one thread
    each, nothing parsed) until ``stop`` is set: a process of its own, so that these
    readers cost the timed page's reader in the benchmark process nothing."""
    from floor_rig import SseView

    views = [SseView(port, cookie, on_event=lambda *_: None).start()
             for port, cookie in streams]
    ready.put(len(views))
    stop.wait()
    for view in views:
        view.close()


def pit_of(floor: int, floors: int, tables: int) -> list[str]:
    """The tables that floor ``floor`` (0-based) of ``floors`` follows with ``--pits``:
    its contiguous share of the generator's ``t001`` ... (the first floors one more
    when they do not divide evenly)."""
    share = [tables // floors + (1 if i < tables % floors else 0) for i in range(floors)]
    first = sum(share[:floor])
    return [f"t{first + n + 1:03d}" for n in range(share[floor])]


def pct(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (nearest rank) of sorted ``values``, rounded; None if empty."""
    if not values:
        return None
    return round(values[min(len(values) - 1, round(q * (len(values) - 1)))], 1)


class Database:
    """The archive's database, read by the benchmark: an SQLite file or a PostgreSQL DSN."""

    def __init__(self, path: Path | None = None, dsn: str | None = None) -> None:
        self.path, self.dsn = path, dsn

    def toml(self) -> str:
        """The ``[database]`` table of archive.toml."""
        return f'path = "{self.path}"' if self.dsn is None else f'dsn = "{self.dsn}"'

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows of a read-only query (the archive keeps writing)."""
        if self.dsn is not None:
            import psycopg

            with psycopg.connect(self.dsn) as conn:
                return list(conn.execute(sql).fetchall())
        assert self.path is not None
        if not self.path.exists():
            return []
        conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30)
        try:
            return conn.execute(sql).fetchall()
        finally:
            conn.close()


def count_rows(database: Database) -> dict[str, int]:
    """Rows per archive table (0 before the archive made them)."""
    try:
        return {t: database.rows(f"SELECT count(*) FROM {t}")[0][0] for t in ARCHIVE_TABLES}
    except Exception:  # no table yet (SQLite and PostgreSQL each say so their way)
        return dict.fromkeys(ARCHIVE_TABLES, 0)


def hand_lags(database: Database, since: float) -> list[float]:
    """archived_ts - record ts (ms) of the hands published from ``since``, sorted."""
    lags = []
    for archived, record in database.rows("SELECT archived_ts, record FROM hands"):
        ts = (record if isinstance(record, dict) else json.loads(record))["ts"]
        if ts >= since:
            lags.append((archived - ts) * 1000)
    return sorted(lags)


def archive_config(path: Path, port: int, database: Database,
                   creds: tuple[str, str] | None, *, instance: str = "bench-room",
                   share_group: str | None = None) -> None:
    """An archive writer's TOML: the (central) broker, the database, its share group."""
    login = "" if creds is None else f'username = "{creds[0]}"\npassword = "{creds[1]}"\n'
    group = "" if share_group is None else f'share_group = "{share_group}"\n'
    path.write_text(f"""instance = "{instance}"
status_interval_s = 5
{group}
[broker]
host = "127.0.0.1"
port = {port}
{login}
[database]
{database.toml()}
""")


def pids_of(root: int) -> list[int]:
    """``root`` and every descendant (PostgreSQL's server and its backends)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def group_cpu(pids: list[int]) -> float:
    """Summed utime + stime (s) of the processes still alive."""
    total = 0.0
    for pid in pids:
        try:
            total += proc_cpu(pid)
        except (OSError, IndexError):
            continue
    return total


def group_waited(pids: list[int]) -> float:
    """Summed time (s) the processes' threads were ready to run but waited for a CPU
    (/proc/PID/task/TID/schedstat, second field): on a shared machine, how much of a
    service's latency is the machine's, not its own work."""
    total = 0
    for pid in pids:
        for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
            try:
                total += int(stat.read_text().split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return total / 1e9


def group_mem(pids: list[int]) -> tuple[int, int]:
    """Summed (VmRSS, VmHWM) KiB of the processes still alive."""
    rss = hwm = 0
    for pid in pids:
        try:
            one = proc_mem(pid)
        except (OSError, KeyError):
            continue
        rss, hwm = rss + one[0], hwm + one[1]
    return rss, hwm


def run(args: argparse.Namespace) -> dict[str, Any]:
    """One run; returns the figures."""
    import paho.mqtt.client as mqtt
    from floor_rig import ArchiveProcess, FloorService, Page, SseView, mqtt_client, write_config

    from table_controller.testing.broker import MosquittoBroker, wait_until

    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        pair: Any = None
        postgres: Any = None
        broker: Any = None
        creds: tuple[str, str] | None = None
        writers: list[Any] = []
        floors: list[Any] = []
        pages: list[SseView] = []
        untimed: list[tuple[int, str]] = []  # the pages the reader process follows
        readers: Any = None
        ref: mqtt.Client | None = None
        try:
            if args.bridge:
                from bridge_rig import LINK_STATE, READER, BridgedPair

                pair = BridgedPair(tmp / "brokers").start()
                brokers = {"mosquitto_table": pair.table, "mosquitto_central": pair.central}
                table_port, central_port = pair.table.port, pair.central.port
                creds = (READER.name, READER.password)
                link_up = threading.Event()
                link = mqtt_client(table_port, "bench-room-link")
                link.on_message = lambda _c, _u, m: link_up.set() if m.payload == b"1" else None
                link.subscribe(LINK_STATE, qos=1)
                if not link_up.wait(120):
                    raise SystemExit("the bridge did not come up")
                link.disconnect()
                link.loop_stop()
            else:
                # The central broker as deploy/mosquitto.conf queues (the default,
                # 1,000, drops QoS 1 messages for a subscriber that falls behind).
                broker = MosquittoBroker(tmp / "mosquitto",
                                         extra_config="max_queued_messages 10000")
                (tmp / "mosquitto").mkdir()
                broker.start()
                brokers = {"mosquitto": broker}
                table_port = central_port = broker.port
            if args.database == "postgres":
                from pg_server import PostgresServer

                postgres = PostgresServer()
                postgres.start()
                database = Database(dsn=postgres.create_database())
            else:
                database = Database(path=tmp / "archive.sqlite")
            group = "archive" if args.writers > 1 else None
            for i in range(args.writers):
                home = tmp / f"writer{i + 1}"
                home.mkdir()
                writer = ArchiveProcess(home, central_port, tmp / "unused.sqlite")
                archive_config(writer.config, central_port, database, creds,
                               instance=f"bench-room-{i + 1}", share_group=group)
                writer.database = database.path  # the file the config now names, or None
                writers.append(writer)
            for i in range(args.floors):
                home = tmp / f"floor{i + 1}"
                home.mkdir()
                pit = "" if not args.pits else "tables = [{}]".format(", ".join(
                    f'"{t}"' for t in pit_of(i, args.floors, args.tables)))
                floors.append(FloorService(write_config(
                    home, central_port, username=creds[0] if creds else None,
                    password=creds[1] if creds else None, extra=pit)))
            for writer in writers:
                writer.start()
            for floor in floors:
                floor.start()
                assert floor.process is not None
            groups = {name: [b.pid] for name, b in brokers.items()}
            for i, writer in enumerate(writers):
                assert writer.process is not None
                groups[f"archive{i + 1}" if args.writers > 1 else "archive"] = [
                    writer.process.pid]
            for i, floor in enumerate(floors):
                groups[f"floor{i + 1}" if args.floors > 1 else "floor"] = [floor.process.pid]
            if postgres is not None:
                master = int((postgres.data / "postmaster.pid").read_text().split()[0])
                groups["postgres"] = pids_of(master)

            lock = threading.Lock()
            first_seen: dict[str, float] = {}
            raised: dict[str, float] = {}

            def on_event(at: float, event: str, data: str) -> None:
                # The whole view first, then each table's open alerts when they change:
                # an alert is seen when its id first appears (nothing merged or sorted,
                # so that the page reader here costs the room as little as it can).
                if event not in ("view", "alerts"):
                    return
                body = json.loads(data)
                alerts = body["alerts"] if event == "view" else [
                    a for table in body["open"].values() for a in table]
                with lock:
                    for alert in alerts:
                        if alert["id"] not in first_seen:
                            first_seen[alert["id"]] = at
                            raised[alert["id"]] = alert["raised_ts"]

            # What the (central) broker delivered: the reference for "nothing lost".
            delivered: dict[str, set[str]] = {"alerts": set(), "hands": set()}
            # When the reference got each alert: publish -> reference is the broker's
            # and the machine's share of the latency, reference -> page the floor's.
            got: dict[str, float] = {}

            def on_message(_c: Any, _u: Any, msg: Any) -> None:
                at = time.time()
                body = json.loads(msg.payload)
                kind = msg.topic.rsplit("/", 1)[1]
                with lock:
                    delivered[kind].add(body.get("id") or body.get("hand_id"))
                    if kind == "alerts":
                        got[body["id"]] = at

            ref = mqtt_client(central_port, "bench-room-reference", *(creds or (None, None)))
            ref.on_message = on_message
            ref.subscribe([("stud/v1/+/alerts", 1), ("stud/v1/+/hands", 1)])
            for i in range(args.pages):  # round robin over the floor instances
                port = floors[i % args.floors].port
                page = Page(port)
                assert page.login("Maria Lopez") == 303
                # Timed, here: the first page, and with --pits each floor's first (a
                # floor sees only its own tables' alerts).
                if i == 0 or (args.pits and i < args.floors):
                    pages.append(SseView(port, page.cookie, on_event=on_event).start())
                else:
                    untimed.append((port, page.cookie))
            spawn = multiprocessing.get_context("spawn")  # no fork of this threaded process
            readers_stop = spawn.Event()
            if untimed:
                readers_ready = spawn.Queue()
                readers = spawn.Process(target=page_readers,
                                        args=(untimed, readers_stop, readers_ready))
                readers.start()
                readers_ready.get(timeout=120)
                assert readers.pid is not None
                groups["page_readers"] = [readers.pid]

            start = time.time() + 3.0 + 0.1 * args.tables  # time to connect every client
            queue: Any = multiprocessing.Queue()
            load = Load(table_port, args.tables, args.seconds, args.rate, args.hand_every,
                        args.alert_every, start)
            generators = max(1, min(args.generators or -(-args.tables // 25), args.tables))
            share = [args.tables // generators + (1 if i < args.tables % generators else 0)
                     for i in range(generators)]
            gens = [multiprocessing.Process(target=room_generator, args=(
                load, sum(share[:i]), share[i], queue, args.generator_nice))
                for i in range(generators)]
            for gen in gens:
                gen.start()
            time.sleep(max(0.0, start - time.time()))
            cpu0 = {name: group_cpu(pids) for name, pids in groups.items()}
            waited0 = {name: group_waited(pids) for name, pids in groups.items()}
            wall0 = time.monotonic()
            reports = [queue.get(timeout=args.seconds + 300) for _ in gens]
            for gen in gens:
                gen.join(timeout=60)
            published_end = time.monotonic()
            cpu_published = {name: group_cpu(pids) for name, pids in groups.items()}
            waited = {name: group_waited(pids) - waited0[name] for name, pids in groups.items()}

            # Drain: the last alerts reach the page, the last hands their rows.
            def settled() -> bool:
                with lock:
                    hands_in = len(delivered["hands"])
                    alerts_in = delivered["alerts"] <= first_seen.keys()
                return alerts_in and count_rows(database)["hands"] >= hands_in

            drained = True
            try:
                wait_until(settled, 120, "the archive to write the last hands")
            except AssertionError:
                drained = False
            time.sleep(2.0)
            if postgres is not None:  # backends started during the run count too
                groups["postgres"] = pids_of(groups["postgres"][0])
            cpu1 = {name: group_cpu(pids) for name, pids in groups.items()}
            wall = time.monotonic() - wall0
            mem = {name: group_mem(pids) for name, pids in groups.items()}
            rows = count_rows(database)
            lags = hand_lags(database, start)
            # Mosquitto says so when it drops messages for a client that falls behind.
            dropped = sum(b.log_text().count("dropped") for b in brokers.values())
            with lock:
                lat = sorted((first_seen[i] - raised[i]) * 1000 for i in first_seen
                             if raised[i] >= start)
                ref_lat = sorted((got[i] - raised[i]) * 1000 for i in first_seen
                                 if raised[i] >= start and i in got)
                # The worst latency of the alerts raised in each 5 s of the run: a
                # stall shows as one bad window, falling behind as a rising line.
                windows: dict[int, float] = {}
                for ident, seen in first_seen.items():
                    if raised[ident] >= start:
                        w = int((raised[ident] - start) // 5)
                        windows[w] = max(windows.get(w, 0.0), (seen - raised[ident]) * 1000)
                hands_delivered = len(delivered["hands"])
                alerts_delivered = len(delivered["alerts"])
        finally:
            if readers is not None:
                readers_stop.set()
                readers.join(timeout=30)
            for view in pages:
                view.close()
            if ref is not None:
                ref.disconnect()
                ref.loop_stop()
            for floor in floors:
                floor.stop()
            for writer in writers:
                writer.stop()
            if postgres is not None:
                postgres.close()
            if pair is not None:
                pair.close()
            elif broker is not None:
                broker.close()

    processes: dict[str, dict[str, float]] = {}
    for name in groups:
        processes[name] = {
            # While the tables published (what the load costs), and over the whole
            # measurement with the drain (a backlog worked off after the run).
            "cpu_percent": round(100 * (cpu_published[name] - cpu0[name])
                                 / (published_end - wall0), 1),
            "cpu_percent_with_drain": round(100 * (cpu1[name] - cpu0[name]) / wall, 1),
            # Waiting for a CPU while ready to run, summed over the threads, in % of
            # the time the tables published (a thread waiting the whole time: 100).
            "waited_for_cpu_percent": round(100 * waited[name]
                                            / (published_end - wall0), 1),
            "rss_mib_end": round(mem[name][0] / 1024, 1),
            "rss_mib_peak": round(mem[name][1] / 1024, 1)}
    processes["generators"] = {
        # Their whole life: connecting the clients, the wait before the start, the run.
        "cpu_percent": round(100 * sum(r["cpu_s"] for r in reports)
                             / (published_end - wall0), 1),
        "rss_mib_end": round(sum(r["rss_kib"] for r in reports) / 1024, 1),
        "rss_mib_peak": round(sum(r["hwm_kib"] for r in reports) / 1024, 1)}
    total_rows = sum(rows.values())
    sent = sum(r["sent"] for r in reports)
    return {
        "mode": "bridge" if args.bridge else "one broker",
        "database": args.database, "writers": args.writers, "floors": args.floors,
        "pits": bool(args.pits),
        "generators": generators, "generator_nice": args.generator_nice,
        "tables": args.tables, "seconds": args.seconds, "rate_per_table": args.rate,
        "pages": args.pages, "cores": os.cpu_count(),
        "load_average_start": round(load_start, 2),
        "load_average_end": round(os.getloadavg()[0], 2),
        "messages_published": sent,
        "msg_per_s": round(sent / args.seconds, 1),
        "alerts_raised": sum(r["alerts"] for r in reports),
        "alerts_delivered": alerts_delivered,
        "alerts_seen_on_page": len(lat),
        "alert_latency_ms_median": round(statistics.median(lat), 1) if lat else None,
        "alert_latency_ms_p99": pct(lat, 0.99), "alert_latency_ms_max": pct(lat, 1.0),
        "alert_to_reference_ms_median": pct(ref_lat, 0.5),
        "alert_to_reference_ms_p99": pct(ref_lat, 0.99),
        "alert_latency_ms_max_per_5s": [round(windows[w], 1) for w in sorted(windows)],
        "hands_delivered": hands_delivered, "hands_archived": rows["hands"],
        "broker_drop_warnings": dropped,
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
    print(f"{fig['mode']}, {fig['database']} x{fig['writers']} writer(s),"
          f" {fig.get('floors', 1)} floor(s){' (pits)' if fig.get('pits') else ''}:"
          f" {fig['tables']} tables x {fig['rate_per_table']:g} states/s,"
          f" {fig['seconds']:g} s, {fig['pages']} SSE page(s), {fig['cores']} cores,"
          f" load average {fig['load_average_start']} -> {fig['load_average_end']}")
    print(f"  published          {fig['messages_published']} messages "
          f"({fig['msg_per_s']}/s) by {fig['generators']} generator process(es)")
    print(f"  alerts             raised {fig['alerts_raised']}, delivered "
          f"{fig['alerts_delivered']}, seen on page {fig['alerts_seen_on_page']}")
    print(f"  alert -> page      median {fig['alert_latency_ms_median']} ms, p99 "
          f"{fig['alert_latency_ms_p99']} ms, max {fig['alert_latency_ms_max']} ms")
    print(f"  alert -> reference median {fig.get('alert_to_reference_ms_median')} ms, p99 "
          f"{fig.get('alert_to_reference_ms_p99')} ms (a plain subscriber beside the floor);"
          f" worst per 5 s: {fig.get('alert_latency_ms_max_per_5s')}")
    print(f"  broker             {fig.get('broker_drop_warnings', 0)} 'dropped' warnings"
          " (messages dropped for a client that fell behind)")
    print(f"  archive            {fig['archive_rows_per_s']} rows/s "
          f"({fig['archive_hands_per_s']} hands/s), hands delivered "
          f"{fig['hands_delivered']}, archived {fig['hands_archived']}")
    print(f"  publish -> row     median {fig['archive_lag_ms_median']} ms, p99 "
          f"{fig['archive_lag_ms_p99']} ms, max {fig['archive_lag_ms_max']} ms")
    print(f"  {'process':18} {'CPU % of 1 core':>16} {'waited for CPU %':>17}"
          f" {'RSS end MiB':>12} {'RSS peak MiB':>13}")
    for name, p in fig["processes"].items():
        print(f"  {name:18} {p['cpu_percent']:>16} {p.get('waited_for_cpu_percent', '-'):>17}"
              f" {p['rss_mib_end']:>12} {p['rss_mib_peak']:>13}")


def _sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def main() -> int:
    """Parse the options, run once (or the sweep), print the figures (JSON last)."""
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
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--writers", type=int, default=1,
                        help="archive writers (more than one: one shared-subscription group)")
    parser.add_argument("--floors", type=int, default=1,
                        help="floor instances (the pages are spread over them in turn)")
    parser.add_argument("--pits", action="store_true",
                        help="each floor follows its share of the tables (tables = [...])")
    parser.add_argument("--generators", type=int, default=0,
                        help="generator processes (default: one per 25 tables)")
    parser.add_argument("--generator-nice", type=int, default=0, metavar="N",
                        help="run the generators at niceness N (the services first)")
    parser.add_argument("--sweep", type=_sizes, default=None, metavar="N,N,...",
                        help="run every size (with every --databases and --page-counts)")
    parser.add_argument("--databases", default="sqlite", help="sweep: e.g. sqlite,postgres")
    parser.add_argument("--page-counts", type=_sizes, default=[1], help="sweep: e.g. 1,10")
    parser.add_argument("--out", type=Path, default=None, help="append each run's JSON here")
    args = parser.parse_args()
    plans = [(args.tables, args.database, args.pages)] if args.sweep is None else [
        (size, database, pages) for size in args.sweep
        for database in args.databases.split(",") for pages in args.page_counts]
    for tables, database, pages in plans:
        figures = run(argparse.Namespace(**{**vars(args), "tables": tables,
                                            "database": database, "pages": pages}))
        print_table(figures)
        print(json.dumps(figures), flush=True)
        if args.out is not None:
            with args.out.open("a", encoding="utf-8") as out:
                out.write(json.dumps(figures) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
