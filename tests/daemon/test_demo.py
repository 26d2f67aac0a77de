"""``stud-table demo`` as a user runs it: a real subprocess, a real broker, real ptys.

The demo starts mosquitto and the daemon as its own children; these tests check
that it deals and reports whole hands, stops cleanly on its own and on Ctrl-C
(SIGINT), and leaves no process or temp directory behind.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from table_controller.testing.broker import wait_until
from table_controller.testing.process import collecting_output

DEMO = [sys.executable, "-m", "table_controller", "demo"]
RUN_TIMEOUT = 300.0
"""Two hands take about 10 s; a loaded 2-core CI machine gets a wide margin."""

SUB_LINE = re.compile(r"mosquitto_sub -h 127\.0\.0\.1 -p (\d+) -t 'stud/v1/demo/status'"
                      r" -t 'stud/v1/demo/state' .*-v")
SECURE_LINE = re.compile(r"^SECURE - every hole card live.*\n"
                         r"  mosquitto_sub -h 127\.0\.0\.1 -p \d+ -t 'stud/v1/demo/secure/#' -v",
                         re.MULTILINE)
ALL_TOPICS = re.compile(r"-t 'stud/v1/demo/#'")
PIDS_LINE = re.compile(r"\(pid (\d+)\), daemon pid (\d+), log (\S+)/daemon\.log")
RESULT_LINE = re.compile(r"^hand (\d+) result: seat", re.MULTILINE)


def _gone(pid: int) -> bool:
    """True if no live process has ``pid`` (a zombie is not alive)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return "\nState:\tZ" in status


def _processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that mention ``text`` (our work directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and not _gone(int(entry.name)):
            found.append(cmdline)
    return found


def _assert_cleaned_up(output: str) -> None:
    match = PIDS_LINE.search(output)
    assert match, output
    broker_pid, daemon_pid, workdir = int(match[1]), int(match[2]), match[3]
    wait_until(lambda: _gone(broker_pid) and _gone(daemon_pid), 20,
               "the broker and daemon processes to be gone")
    assert _processes_mentioning(workdir) == []
    assert not Path(workdir).exists(), "the demo removes its temp directory"


def test_demo_deals_two_hands_and_exits_clean() -> None:
    result = subprocess.run(
        [*DEMO, "--hands", "2", "--speed", "10", "--seed", "1"],
        capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False,
    )
    output = result.stdout
    assert result.returncode == 0, output + result.stderr
    assert SUB_LINE.search(output), output
    assert SECURE_LINE.search(output), output
    assert not ALL_TOPICS.search(output), "item 22: no watch line subscribes to every topic"
    assert "--keep keeps them" in output, "item 24: says the journal goes, and how to keep it"
    assert [int(n) for n in RESULT_LINE.findall(output)] == [1, 2], output
    assert "\x1b[" not in output, "no ANSI redraw when stdout is not a terminal"
    assert "[##]" in output, "down cards are shown hidden"
    _assert_cleaned_up(output)


def test_demo_stops_on_sigint_with_exit_0() -> None:
    with collecting_output([*DEMO, "--speed", "10", "--seed", "7"]) as (proc, lines):
        # Stop it in the middle of dealing, as a user pressing Ctrl-C would.
        wait_until(
            lambda: proc.poll() is not None
            or any("hand 1: 3rd street" in line for line in lines),
            RUN_TIMEOUT, "the first hand to be dealt",
        )
        assert proc.poll() is None, "".join(lines)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    output = "".join(lines)
    assert "demo: stopped" in output, output
    _assert_cleaned_up(output)


def test_demo_without_mosquitto_says_run_setup(tmp_path: Path) -> None:
    # A PATH without mosquitto, and the sbin fallback pointed at an empty directory.
    script = (
        "import sys; import table_controller.mqtt.local_broker as b;"
        f" b._SEARCH_PATH = {str(tmp_path)!r};"
        " from table_controller.tools.cli import main; sys.exit(main(['demo', '--hands', '1']))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PATH": str(tmp_path)},
    )
    assert result.returncode == 1
    message = result.stderr.strip()
    assert "\n" not in message
    assert "mosquitto" in message
    assert "scripts/setup" in message
