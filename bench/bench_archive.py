"""Hand archive figures (docs/archive.md, issue 14).

``write``: records per second the store writes (``ArchiveStore.write``), on an SQLite
file and on a real PostgreSQL server (started here as the tests do), in transactions
of ``--batch`` hand records (3 players, 3 actions, one alert and one notice each, like
tests/archive/feed.py) and one record per transaction.

``lag``: the real service (``ArchiveService``) behind a real Mosquitto; ``--tables``
simulated tables publish a burst of ``--hands`` hand records each, as fast as QoS 1
allows (or at ``--rate`` records/s in all); each record's ``ts`` is its publication
time and the row's ``archived_ts`` the time of its write: lag = archived_ts - ts,
median and p99, on both databases.

    .venv/bin/python bench/bench_archive.py write [--records 5000 --batch 200]
    .venv/bin/python bench/bench_archive.py lag [--tables 20 --hands 100 --rate 0]
"""

# ruff: noqa: PLC0415 - the test helpers are on a path set at run time

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "archive"), str(ROOT)]

import sqlalchemy as sa  # noqa: E402

from table_controller.archive.store import (  # noqa: E402
    ArchiveStore,
    database_url,
    hands,
    parse_item,
    sqlite_url,
)


def _record(table: str, n: int, ts: float | None = None) -> dict[str, Any]:
    from feed import hand_record

    record = hand_record(table, n, alerts=[{"id": f"{table}:{n * 10 + 1}",
                                            "code": "missing_burn", "severity": "error"}],
                         notices=[{"code": "community_card", "message": "rule 15"}])
    if ts is not None:
        record["ts"] = ts
    return record


def _databases(tmp: Path) -> tuple[list[tuple[str, str]], Any]:
    from pg_server import PostgresServer

    server = PostgresServer()
    server.start()
    urls = [("sqlite", str(sqlite_url(str(tmp / "bench.sqlite")))),
            ("postgresql", database_url(server.create_database()).render_as_string(
                hide_password=False))]
    return urls, server


def bench_write(records: int, batch: int) -> dict[str, Any]:
    """Records/s in batches and one by one, per database."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        urls, server = _databases(Path(tmp))
        try:
            for name, url in urls:
                store = ArchiveStore(url)
                items = [parse_item("hand", "t1", _record("t1", n), secure=False, now=0.0)
                         for n in range(1, records + 1)]
                start = time.perf_counter()
                for i in range(0, records, batch):
                    store.write(items[i:i + batch])
                batched = records / (time.perf_counter() - start)
                single_n = min(records, 1000)
                singles = [parse_item("hand", "t2", _record("t2", n), secure=False, now=0.0)
                           for n in range(1, single_n + 1)]
                start = time.perf_counter()
                for item in singles:
                    store.write([item])
                single = single_n / (time.perf_counter() - start)
                again = time.perf_counter()
                store.write(items[:batch])  # duplicates: nothing written
                dup = batch / (time.perf_counter() - again)
                out[name] = {"batched_per_s": round(batched), "batch": batch,
                             "single_per_s": round(single), "duplicates_per_s": round(dup),
                             "rows": store.counts()}
                store.close()
        finally:
            server.close()
    return out


def bench_lag(tables: int, per_table: int, rate: float) -> dict[str, Any]:
    """Publication-to-row lag of a burst through Mosquitto and the service."""
    from feed import Feed

    from table_controller.archive.config import parse_archive_config
    from table_controller.archive.service import ArchiveService
    from table_controller.testing.broker import MosquittoBroker, wait_until

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        urls, server = _databases(Path(tmp))
        broker = MosquittoBroker(Path(tmp) / "mosquitto")
        (Path(tmp) / "mosquitto").mkdir()
        broker.start()
        try:
            for name, url in urls:
                database = ({"path": url.split("///", 1)[1]} if name == "sqlite"
                            else {"dsn": url})
                cfg = parse_archive_config({
                    "instance": f"bench-{name}", "broker": {"host": "127.0.0.1",
                                                            "port": broker.port},
                    "database": database}, Path(tmp) / "archive.toml")
                service = ArchiveService(cfg)
                service.start()
                wait_until(lambda s=service: s.connected.is_set() and s.db_ok, 60)
                feed = Feed(broker.port)
                total = tables * per_table
                start = time.perf_counter()
                sent = 0
                for n in range(1, per_table + 1):
                    for t in range(tables):
                        if rate > 0:  # steady: the i-th record leaves at start + i / rate
                            time.sleep(max(0.0, start + sent / rate - time.perf_counter()))
                        feed.publish(f"t{t}", "hands", _record(f"t{t}", n, time.time()),
                                     wait=False)
                        sent += 1
                published = time.perf_counter() - start
                wait_until(lambda s=service, total=total: s.counters.hands == total, 300)
                elapsed = time.perf_counter() - start
                store = ArchiveStore(url)
                with store.engine.connect() as conn:
                    lags = sorted(r.archived_ts - json.loads(r.record)["ts"]
                                  if isinstance(r.record, str) else r.archived_ts - r.record["ts"]
                                  for r in conn.execute(sa.select(hands.c.archived_ts,
                                                                  hands.c.record)))
                store.close()
                feed.close()
                service.stop()
                out[name] = {
                    "hands": total, "tables": tables, "rate": rate or "burst",
                    "publish_s": round(published, 2),
                    "all_written_s": round(elapsed, 2),
                    "throughput_per_s": round(total / elapsed),
                    "lag_median_ms": round(1000 * statistics.median(lags), 1),
                    "lag_p99_ms": round(1000 * lags[int(0.99 * (len(lags) - 1))], 1),
                    "lag_max_ms": round(1000 * lags[-1], 1),
                    "held": service.counters.held,
                    # The benchmark process: the service, the feed and the test helpers
                    # (PostgreSQL and Mosquitto are other processes).
                    "process_max_rss_mb": round(
                        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                }
        finally:
            broker.close()
            server.close()
    return out


def main() -> None:
    """Run one benchmark and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    write = sub.add_parser("write")
    write.add_argument("--records", type=int, default=5000)
    write.add_argument("--batch", type=int, default=200)
    lag = sub.add_parser("lag")
    lag.add_argument("--tables", type=int, default=20)
    lag.add_argument("--hands", type=int, default=100)
    lag.add_argument("--rate", type=float, default=0.0,
                     help="records per second in all (default 0: one burst)")
    args = parser.parse_args()
    if args.what == "write":
        result = bench_write(args.records, args.batch)
    else:
        result = bench_lag(args.tables, args.hands, args.rate)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
