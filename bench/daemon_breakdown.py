"""The daemon with timers around its engine thread, for ``bench_daemon_latency.py --breakdown``.

Runs ``stud-table run --config FILE`` in this process, unchanged except for two
wrappers that only read the clock:

* ``TableCore.handle`` for each TAG_ARRIVED report: *queue* = from the link's
  receive stamp (right after the frame's last byte was read) to the start of
  handling on the engine thread; *handle* = presence, journal, engine,
  projection and every publish call for that report. With presence's settle
  window (docs/presence.md rule 1, 0.3 s in the daemon) a report only starts the
  window: the card is applied by a later ``TableCore.tick``;
* ``TableCore.tick``, for the ticks that applied cards;
* *per card*: the engine thread's time in both (every TAG_ARRIVED report and
  every tick that applied a card) divided by the cards applied, wall clock and
  the thread's CPU time (``time.thread_time``: what the engine thread itself
  spent, not the time it waited for the GIL or a core; the figure to compare
  with the in-process reference on a loaded machine);
* *tick late*: for those ticks, how long after presence's deadline (the settle
  window's end) the tick started; *tick -> event*: from the tick's start to the
  first event's hand-over to the publisher (``MqttPublisher.publish_event``
  returned: paho's thread woken for it);
* ``paho.mqtt.client.Client.publish``: the cost of one publish call on the
  engine thread (serialisation, queueing, waking paho's network thread);
* *event -> PUBACK*: from a ``secure/events`` message's ``publish()`` to the broker's
  acknowledgement of it (paho's ``on_publish``): the daemon's socket and the broker's
  intake, beside what the subscriber sees after it.

At exit (SIGTERM from the benchmark) it prints median and p99 of each to stderr,
which the benchmark finds in the daemon's log. With ``BREAKDOWN_PROFILE=FILE`` in
the environment the engine thread's handling of each TAG_ARRIVED also runs under
cProfile, its stats written to FILE at exit (``python -m pstats FILE``); with
``BREAKDOWN_PROFILE_CPU=1`` too the profiler's clock is the thread's CPU time
(``time.thread_time``), so the shares leave out the waits for the GIL. Not part
of the product.

    python bench/daemon_breakdown.py --config table.toml
"""

from __future__ import annotations

import atexit
import cProfile
import os
import statistics
import sys
import threading
import time
from typing import Any

import paho.mqtt.client as mqtt

from firmware_bridge.messages import TagArrived
from table_controller.daemon import core
from table_controller.mqtt.publisher import MqttPublisher
from table_controller.tools.cli import main

BREAKDOWN_MARK = "breakdown:"
"""Prefix of the lines this script prints (the benchmark greps for it)."""

_queue: list[float] = []
_handle: list[float] = []
_handle_cpu: list[float] = []
_card_wall = [0.0]
_card_cpu = [0.0]
_card_ticks: list[float] = []
_applied_at_start: list[int] = []
_publish: list[float] = []
_late: list[float] = []
"""Reader reports handled after one stamped later (by how much earlier they were
stamped): frames the link threads put on the queue in another order than they read them."""
_tick_late: list[float] = []
_tick_to_event: list[float] = []
_tick_started: list[float] = []
"""The running card tick's start (empty outside one): publish_event's wrapper reads it."""
_event_sent: dict[int, float] = {}
"""paho message id -> when ``publish()`` was called, for the secure event topic."""
_event_acked: list[float] = []
"""From an event's ``publish()`` to the broker's PUBACK for it (paho's on_publish)."""
_last_at = [0.0]
_cores: list[core.TableCore] = []
_engine_tid: list[int] = []
_ticks_at_start: list[tuple[int, int]] = []
_profile_path = os.environ.get("BREAKDOWN_PROFILE")
# The CPU clock leaves out the GIL handoffs to paho's thread, which dominate a wall
# profile without being the engine thread's own work.
_profile_timer = time.thread_time if os.environ.get("BREAKDOWN_PROFILE_CPU") else time.perf_counter
_profiler = cProfile.Profile(_profile_timer) if _profile_path else None

_original_handle = core.TableCore.handle
_original_tick = core.TableCore.tick
_original_publish = mqtt.Client.publish
_original_publish_event = MqttPublisher.publish_event
_original_handle_publish = MqttPublisher._handle_publish


def _timed_handle(self: core.TableCore, item: core.DaemonInput) -> bool:
    if not (isinstance(item, core.ReaderReport) and isinstance(item.message, TagArrived)):
        return _original_handle(self, item)
    if not _cores:
        _cores.append(self)
        _applied_at_start.append(self.events_applied)
        _engine_tid.append(threading.get_native_id())
        _ticks_at_start.append(_user_system_ticks(_engine_tid[0]))
    start, start_cpu = time.monotonic(), time.thread_time()
    _queue.append(start - item.at)
    if item.at < _last_at[0]:
        _late.append(_last_at[0] - item.at)
    _last_at[0] = max(_last_at[0], item.at)
    try:
        if _profiler is not None:
            return bool(_profiler.runcall(_original_handle, self, item))
        return _original_handle(self, item)
    finally:
        wall, cpu = time.monotonic() - start, time.thread_time() - start_cpu
        _handle.append(wall)
        _handle_cpu.append(cpu)
        _card_wall[0] += wall
        _card_cpu[0] += cpu


def _timed_tick(self: core.TableCore) -> None:
    if not _cores:
        _original_tick(self)
        return
    before = self.events_applied
    due = self.presence.next_deadline()
    start, start_cpu = time.monotonic(), time.thread_time()
    _tick_started[:] = [start]
    try:
        if _profiler is not None:
            _profiler.runcall(_original_tick, self)
        else:
            _original_tick(self)
    finally:
        _tick_started.clear()
        if self.events_applied > before:
            wall = time.monotonic() - start
            _card_ticks.append(wall)
            if due is not None and due <= start:
                _tick_late.append(start - due)
            _card_wall[0] += wall
            _card_cpu[0] += time.thread_time() - start_cpu


def _timed_publish(self: mqtt.Client, *args: Any, **kwargs: Any) -> mqtt.MQTTMessageInfo:
    start = time.perf_counter()
    info = _original_publish(self, *args, **kwargs)
    _publish.append(time.perf_counter() - start)
    topic = args[0] if args else kwargs.get("topic", "")
    if isinstance(topic, str) and topic.endswith("/secure/events"):
        _event_sent[info.mid] = start
    return info


def _timed_handle_publish(self: MqttPublisher, client: mqtt.Client, userdata: object,
                          mid: int, *args: Any) -> None:
    sent = _event_sent.pop(mid, None)
    if sent is not None:
        _event_acked.append(time.perf_counter() - sent)
    _original_handle_publish(self, client, userdata, mid, *args)


def _timed_publish_event(self: MqttPublisher, *args: Any, **kwargs: Any) -> None:
    _original_publish_event(self, *args, **kwargs)
    if _tick_started:
        _tick_to_event.append(time.monotonic() - _tick_started.pop())


def _user_system_ticks(tid: int) -> tuple[int, int]:
    """The kernel's (utime, stime) of thread ``tid`` in clock ticks (Linux; (0, 0)
    elsewhere): how much of its CPU went to system calls (wake-ups, writes, stats,
    the GIL's futex), which ``time.thread_time`` does not separate."""
    try:
        with open(f"/proc/self/task/{tid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return (0, 0)
    return int(fields[11]), int(fields[12])


def _report() -> None:
    if _profiler is not None and _profile_path:
        _profiler.dump_stats(_profile_path)
    for table in _cores:
        print(f"{BREAKDOWN_MARK} arrival order: {table.arrivals.reordered} cards put back in"
              f" the dealer's order, {table.arrivals.expired} held past the window",
              file=sys.stderr, flush=True)
    if _engine_tid:
        user, system = _user_system_ticks(_engine_tid[0])
        user -= _ticks_at_start[0][0]
        system -= _ticks_at_start[0][1]
        hz = os.sysconf("SC_CLK_TCK")
        print(f"{BREAKDOWN_MARK} engine thread since the first TAG_ARRIVED, all its work"
              f" (kernel's ticks of 1/{hz} s): user {user / hz:.2f} s, system"
              f" {system / hz:.2f} s", file=sys.stderr, flush=True)
    print(f"{BREAKDOWN_MARK} TAG_ARRIVED handled after a later-stamped one: {len(_late)}"
          f" (by at most {max(_late, default=0.0) * 1000:.1f} ms)", file=sys.stderr, flush=True)
    for table in _cores:
        # Zone events applied (journaled and given to the engine) since the first
        # TAG_ARRIVED, hand starts of a card-only table included.
        cards = table.events_applied - _applied_at_start[0]
        if cards > 0:
            print(f"{BREAKDOWN_MARK} engine thread per card applied (every TAG_ARRIVED report"
                  f" and every tick that applied one): n={cards}"
                  f" wall {_card_wall[0] / cards * 1000:.3f} ms"
                  f" cpu {_card_cpu[0] / cards * 1000:.3f} ms", file=sys.stderr, flush=True)
    for name, values in (("link read -> engine thread", _queue),
                         ("engine thread, one TAG_ARRIVED", _handle),
                         ("engine thread cpu, one TAG_ARRIVED", _handle_cpu),
                         ("engine thread, one tick that applied cards", _card_ticks),
                         ("tick late after presence's deadline", _tick_late),
                         ("tick start -> first event handed to paho", _tick_to_event),
                         ("one paho publish() call", _publish),
                         ("event publish() -> the broker's PUBACK", _event_acked)):
        if values:
            ordered = sorted(values)
            p99 = ordered[min(len(ordered) - 1, round(0.99 * len(ordered)) - 1)]
            print(f"{BREAKDOWN_MARK} {name}: n={len(values)} median"
                  f" {statistics.median(values) * 1000:.3f} ms p99 {p99 * 1000:.3f} ms",
                  file=sys.stderr, flush=True)


if __name__ == "__main__":
    core.TableCore.handle = _timed_handle  # type: ignore[method-assign]
    core.TableCore.tick = _timed_tick  # type: ignore[method-assign]
    mqtt.Client.publish = _timed_publish  # type: ignore[method-assign]
    MqttPublisher.publish_event = _timed_publish_event  # type: ignore[method-assign]
    MqttPublisher._handle_publish = _timed_handle_publish  # type: ignore[method-assign]
    atexit.register(_report)
    sys.exit(main(["run", *sys.argv[1:]]))
