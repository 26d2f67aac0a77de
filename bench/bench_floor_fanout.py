"""What a floor's open pages cost it, without the network (issue 25): the CPU of the
floor's view and page streams with 0, 1 and ``--pages`` pages, per message and per page.

The real :class:`table_controller.floor.service.Floor` (its MQTT clients made, never
connected) is fed, on its own event loop, the messages of ``--tables`` busy tables at
bench_floor's rates (per table 10 ``state`` a second, the readers' status every 5 s, an
alert every 2 s as ``alerts`` then the retained ``alerts/open``, the oldest of more than
four resolved as ``alerts/changes`` then ``alerts/open``, a hand every 5 s), in batches
every 10 ms as the MQTT threads hand them over; each page is a task reading the real SSE
stream (:meth:`Floor.stream`) to its end, as Starlette does, minus the socket. So the
figures are the floor's own Python work for its pages: the events and bytes each page
is sent, the JSON encodings the service made for them (each table's card and open
alerts, counted), and the process CPU time (``time.process_time``: one thread, no other process
in it, so the load of the machine changes it little) per message, with the CPU of the
same run without pages subtracted for the pages' share. The socket writes (one system
call per event per page) are not in it: their number is the events per page.

    .venv/bin/python bench/bench_floor_fanout.py [--tables 100 --seconds 20 --pages 10]
"""

# ruff: noqa: PLC0415 - a benchmark: imports on the run-time path, prints its figures

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _floor() -> Any:
    from table_controller.floor.config import parse_floor_config
    from table_controller.floor.service import Floor
    from table_controller.web.passwords import hash_password

    cfg = parse_floor_config({"supervisors": [{"name": "A", "password_hash": hash_password(
        "bench-fanout-1", salt=b"0123456789abcdef")}]}, Path("floor.toml"))
    return Floor(cfg)


class Tables:
    """The messages of ``count`` busy tables, as (topic, payload bytes), by the tick."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.seq = 0
        self.open: dict[int, list[dict[str, Any]]] = {t: [] for t in range(count)}

    def _bytes(self, table: int, **body: Any) -> bytes:
        self.seq += 1
        return json.dumps({"table": f"t{table + 1:03d}", "hand": 1, "seq": self.seq,
                           "ts": time.time(), **body}).encode()

    def at(self, tick: int) -> list[tuple[str, bytes]]:
        """The messages of 10 ms tick ``tick`` (each table's at its own phase)."""
        out: list[tuple[str, bytes]] = []
        for t in range(self.count):
            base = f"stud/v1/t{t + 1:03d}"
            phase = (tick + 7 * t) % 200  # 2 s in ticks of 10 ms
            if phase % 10 == 0:  # 10 states a second
                seats = [{"seat": s, "status": "active", "up": ["As", "Kd", "7c"][:phase % 4],
                          "down_count": 2} for s in range(1, 8)]
                out.append((f"{base}/state", self._bytes(t, street=3, pot=tick % 500,
                                                         seats=seats)))
            if phase % 100 == 50:  # readers every ~5 s (three readers, spread)
                out.append((f"{base}/readers/r{phase % 3 + 1}", self._bytes(
                    t, reader=f"r{phase % 3 + 1}", state="online",
                    last_heartbeat=time.time())))
            if phase == 0:  # an alert every 2 s, then the retained open set
                ident = f"t{t + 1:03d}:{self.seq}"
                alert = {"id": ident, "code": "missing_burn", "severity": "error",
                         "message": "missing burn", "seat": None, "dealer": None}
                out.append((f"{base}/alerts", self._bytes(t, **alert)))
                self.open[t].append({**alert, "raised_ts": time.time(), "state": "open",
                                     "hand": 1, "acknowledged_by": None,
                                     "acknowledged_ts": None})
                out.append((f"{base}/alerts/open", self._bytes(t, alerts=self.open[t])))
            if phase == 100 and len(self.open[t]) > 4:  # the oldest resolved
                old = self.open[t].pop(0)
                out.append((f"{base}/alerts/changes", self._bytes(
                    t, id=old["id"], state="resolved", by="A", note="ok",
                    at_ts=time.time())))
                out.append((f"{base}/alerts/open", self._bytes(t, alerts=self.open[t])))
        return out


class _Counting:
    """``json.dumps`` of the floor's service module, counted: how many encodings the
    pages cost (a count, whatever the machine's load)."""

    def __init__(self) -> None:
        self.calls = 0
        self._dumps = json.dumps

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        self.calls += 1
        return self._dumps(*args, **kwargs)


async def _run(tables: int, seconds: float, pages: int) -> dict[str, Any]:
    from table_controller.floor import service

    floor = _floor()
    encodings = _Counting()
    service.json = argparse.Namespace(dumps=encodings, loads=json.loads)  # type: ignore[assignment]
    floor._loop = asyncio.get_running_loop()
    feed = Tables(tables)
    sent = [{"events": 0, "bytes": 0} for _ in range(pages)]

    async def page(i: int) -> None:
        async for chunk in floor.stream():
            sent[i]["events"] += 1
            sent[i]["bytes"] += len(chunk.encode())

    readers = [asyncio.create_task(page(i)) for i in range(pages)]
    await asyncio.sleep(0.1)
    messages = 0
    cpu0, wall0 = time.process_time(), time.monotonic()
    tick = 0
    while (now := time.monotonic()) - wall0 < seconds:
        batch = feed.at(tick)
        messages += len(batch)
        floor.take_batch(batch)  # as _drain does, one batch per MQTT hand-over
        tick += 1
        await asyncio.sleep(max(0.0, wall0 + tick * 0.01 - now))
    await asyncio.sleep(0.3)  # the last cards go out
    cpu = time.process_time() - cpu0
    service.json = json  # type: ignore[assignment]
    for task in readers:
        task.cancel()
    await asyncio.gather(*readers, return_exceptions=True)
    return {"pages": pages, "messages": messages, "cpu_s": round(cpu, 3),
            "cpu_us_per_message": round(1e6 * cpu / messages, 1),
            "encodings_per_s": round(encodings.calls / seconds, 1),
            "events_per_page_per_s": round(sum(s["events"] for s in sent)
                                           / max(1, pages) / seconds, 1),
            "kib_per_page_per_s": round(sum(s["bytes"] for s in sent)
                                        / max(1, pages) / seconds / 1024, 1)}


def main() -> int:
    """Run with 0, 1 and ``--pages`` pages; print each and the pages' share, JSON last."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--pages", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(_run(args.tables, min(1.0, args.seconds), 1))  # warm-up, not counted
    runs = [asyncio.run(_run(args.tables, args.seconds, n))
            for n in sorted({0, 1, args.pages})]
    base = runs[0]["cpu_us_per_message"]
    print(f"{args.tables} tables, {args.seconds:g} s per run, load average"
          f" {os.getloadavg()[0]:.2f}")
    for run in runs:
        per_page = (None if not run["pages"] else
                    round((run["cpu_us_per_message"] - base) / run["pages"], 1))
        run["pages_cpu_us_per_message_per_page"] = per_page
        print(f"  {run['pages']:>3} page(s): {run['messages']} messages,"
              f" {run['cpu_us_per_message']} µs CPU per message"
              f" (per page: {per_page} µs), each page {run['events_per_page_per_s']}"
              f" events/s, {run['kib_per_page_per_s']} KiB/s;"
              f" {run['encodings_per_s']} JSON encodings/s")
    print(json.dumps({"tables": args.tables, "seconds": args.seconds, "runs": runs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
