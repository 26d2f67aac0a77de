"""Set-up does what each job needs (issue 24, item 6): the demo gets Mosquitto and the
venv only, the tests everything; apt waits for its lock; `source scripts/env` puts
`stud-table` on the PATH, as the README says."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def would_install(*args: str) -> list[str]:
    env = {**os.environ, "STUD_TABLE_SETUP_DRY_RUN": "1", "STUD_TABLE_SETUP_ASSUME_MISSING": "1"}
    run = subprocess.run([str(ROOT / "scripts" / "setup"), *args], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    return run.stdout.split("would install:", 1)[1].split()


def test_the_demo_set_up_is_mosquitto_and_the_venv() -> None:
    assert would_install("--demo") == ["mosquitto", "mosquitto-clients", "python3-venv"]


def test_the_test_set_up_is_everything() -> None:
    assert would_install() == ["mosquitto", "mosquitto-clients", "python3-venv", "chromium",
                               "systemd", "udev", "openssl", "valgrind", "postgresql"]


def test_scripts_use_the_set_up_they_need() -> None:
    assert "scripts/setup --demo\n" in (ROOT / "scripts" / "demo").read_text()
    assert "scripts/setup\n" in (ROOT / "scripts" / "test").read_text()
    setup = (ROOT / "scripts" / "setup").read_text()
    assert setup.count('apt-get "${wait_lock[@]}"') == 2  # update and install wait
    assert "DPkg::Lock::Timeout" in setup
    assert "create_main_cluster = false" in setup  # no system database for the tests


def test_an_unknown_option_is_refused() -> None:
    run = subprocess.run([str(ROOT / "scripts" / "setup"), "--fast"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2
    assert "unknown option --fast" in run.stderr


def test_sourcing_scripts_env_puts_stud_table_on_the_path() -> None:
    run = subprocess.run(["bash", "-c", "source scripts/env && command -v stud-table"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
                         env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(ROOT / ".venv" / "bin" / "stud-table")
