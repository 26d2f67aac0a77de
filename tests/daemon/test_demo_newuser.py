"""Issue 9, what a new user following the demo's printed lines ran into.

* Item 22: the watch line subscribed to the table's ``#``, so a newcomer pasting
  it saw every hole card live. The public line must receive no secure topic; the
  secure line is there, marked as such.
* Item 24: the demo deleted its journal on exit. ``--keep`` keeps it (and says
  where); without it the last line says it is gone and how to keep it.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from table_controller.demo.app import public_filters, watch_lines
from table_controller.mqtt.topics import TableTopics, is_secure
from table_controller.simulation.session import TABLE_ID
from table_controller.testing.broker import WAIT, MosquittoBroker

TOPICS = TableTopics(TABLE_ID)
DEMO = [sys.executable, "-m", "table_controller", "demo"]
RUN_TIMEOUT = 300.0
"""One hand at speed 10 takes a few seconds; a loaded CI machine gets a wide margin."""

KEPT_LINE = re.compile(r"^demo: kept (\S+): journal (\S+), daemon log (\S+) ", re.MULTILINE)


def _commands(lines: list[str]) -> list[list[str]]:
    return [shlex.split(line) for line in lines if line.strip().startswith("mosquitto_sub")]


def test_public_filters_are_public_and_cover_what_a_consumer_needs() -> None:
    filters = public_filters(TOPICS)
    assert not any(is_secure(f.replace("+", "x")) for f in filters)
    assert not any("#" in f for f in filters)
    assert set(filters) == {TOPICS.status, TOPICS.state, TOPICS.events, TOPICS.alerts,
                            TOPICS.readers_filter}


def test_secure_line_is_marked_and_only_secure() -> None:
    lines = watch_lines(1883)
    public, secure = _commands(lines)
    assert "-v" in public
    assert "-v" in secure
    marker = next(line for line in lines if "SECURE" in line)
    assert lines.index(marker) < lines.index(next(x for x in lines if "secure/#" in x))
    assert "hole card" in marker
    assert secure[secure.index("-t") + 1] == f"{TOPICS.base}/secure/#"


@pytest.mark.skipif(shutil.which("mosquitto_sub") is None, reason="mosquitto_sub not installed")
def test_regression_public_watch_line_shows_no_hole_card(mosquitto: MosquittoBroker) -> None:
    """Regression (item 22): the public line, run as printed, receives the public
    topics and nothing under ``secure/``, retained or live."""
    port = mosquitto.port
    [public, _secure] = _commands(watch_lines(port))
    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=MQTTProtocolVersion.MQTTv5)
    client.connect("127.0.0.1", port)
    client.loop_start()

    def send(topic: str, payload: bytes, retain: bool = False) -> None:
        client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(WAIT)

    try:
        # Retained before the watcher starts, as the daemon's states would be.
        send(TOPICS.secure_state, b'{"down": "As Kd"}', retain=True)
        send(TOPICS.state, b'{"public": 1}', retain=True)
        # -C 3: exit after three messages. Each round publishes the secure event
        # first, so a watcher subscribed to it would get one among its three.
        with subprocess.Popen([*public, "-C", "3", "-W", "120"], stdout=subprocess.PIPE,
                              text=True) as watcher:
            try:
                deadline = time.monotonic() + WAIT
                while watcher.poll() is None and time.monotonic() < deadline:
                    send(TOPICS.secure_events, b'{"card": "As"}')
                    send(TOPICS.events, b'{"event": "dealt"}')
                    time.sleep(0.2)  # pacing only: the watcher needs time to subscribe
                out, _ = watcher.communicate(timeout=WAIT)
            finally:
                if watcher.poll() is None:
                    watcher.kill()
                    watcher.wait()
    finally:
        client.loop_stop()
        client.disconnect()
    received = [line.split(" ", 1)[0] for line in out.splitlines()]
    assert received[0] == TOPICS.state
    assert TOPICS.events in received
    assert not any(is_secure(topic) for topic in received), out


def _run_demo(*extra: str) -> str:
    result = subprocess.run(
        [*DEMO, "--hands", "1", "--speed", "10", "--seed", "4", *extra],
        capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_regression_demo_keep_keeps_the_journal_and_says_where() -> None:
    """Regression (item 24): ``--keep`` leaves the journal and log, names them, and
    the journal is a whole one: ``phh export`` reads its hand."""
    output = _run_demo("--keep")
    match = KEPT_LINE.search(output)
    assert match, output
    workdir, journal, log = (Path(group) for group in match.groups())
    try:
        assert journal.is_file()
        assert log.is_file()
        assert f"journal {journal}" in output.splitlines()[2]  # said at the start too
        export = subprocess.run(
            [sys.executable, "-m", "table_controller", "phh", "export", str(journal)],
            capture_output=True, text=True, timeout=120, check=False,
        )
        assert export.returncode == 0, export.stderr
        assert "actions = [" in export.stdout
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
