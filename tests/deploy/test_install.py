"""deploy/install into a temporary root, checked for real (issue 13, "Install as a service").

One install per module (about 20-40 s, most of it pip building the wheel from
the checkout): ``deploy/install --root TMP --deps-from <this venv>`` gives the
new venv this venv's dependencies through a ``.pth`` file instead of a download,
and no pip of its own (docs/install.md "Testing the install"). Then:

* files, modes and (when the test runs as root, so ``systemd-sysusers --root``
  and ``systemd-tmpfiles --root`` ran) owners;
* the installed program runs from its own venv, and the generated table.toml,
  broadcast.toml and layout load with the product's own loaders;
* every unit passes ``systemd-analyze verify`` inside the root, and its
  ``systemd-analyze security`` exposure stays low;
* the udev rules through real udev (``udevadm verify`` where the systemd is new
  enough, else ``udevadm test`` in a private mount namespace that sees the rules
  and the root's groups, with a device given a reader's serial);
* deploy/mosquitto-setup's files on a real Mosquitto: TLS with the generated CA,
  the generated passwords, the shipped ACL;
* a second install keeps the operator's files and the passwords.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from table_controller.broadcast.config import load_broadcast_config
from table_controller.daemon.config import load_config
from table_controller.mqtt.broker_config import BrokerConfig, TlsConfig
from table_controller.mqtt.local_broker import free_port
from table_controller.mqtt.publisher import MqttPublisher
from table_controller.mqtt.sequence import SequenceCounter
from table_controller.mqtt.topics import TableTopics
from table_controller.table.layout import load_layout
from table_controller.testing.broker import WAIT, MosquittoBroker, run_as_user_line
from table_controller.web.passwords import hash_password

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "table_controller"))
import mqtt_samples as sample  # the MQTT tests' sample hand

CHECKOUT = Path(__file__).resolve().parents[2]
DEPLOY = CHECKOUT / "deploy"
PREFIX = "/opt/stud-table"
HOSTNAME = "table1.example"
UNITS = ("stud-table.service", "stud-table@.service", "stud-table-broadcast.service",
         "stud-table-floor.service", "stud-table-archive.service")
SERVICE_USERS = ("stud-daemon", "stud-production", "stud-floor", "stud-archive",
                 "stud-archive-secure")
PEOPLE_USERS = ("overlay", "public")
AS_ROOT = os.geteuid() == 0
INSTALL_TIMEOUT = 600  # s: pip on a loaded 2-core machine


def _install(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run deploy/install into ``root`` reusing this venv's dependencies."""
    return subprocess.run(
        [str(DEPLOY / "install"), "--root", str(root), "--deps-from", sys.prefix,
         "--python", sys._base_executable, "--hostname", HOSTNAME, *extra],
        capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False,
    )


def installed_root(factory: pytest.TempPathFactory) -> Path:
    """A temporary root with stud-table installed in it (this file's and
    test_install_glue.py's ``root``)."""
    target = factory.mktemp("root")
    result = _install(target)
    assert result.returncode == 0, result.stderr + result.stdout
    return target


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary root with stud-table installed in it."""
    return installed_root(tmp_path_factory)


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o7777


def _ids(root: Path, database: str, name: str) -> int:
    """uid or gid of ``name`` in the root's /etc/passwd or /etc/group."""
    for line in (root / "etc" / database).read_text().splitlines():
        fields = line.split(":")
        if fields[0] == name:
            return int(fields[2])
    raise AssertionError(f"{name} not in {database}")


def test_install_lays_out_files_modes_and_owners(root: Path) -> None:
    etc = root / "etc/stud-table"
    # As root the stud-table group exists in the root (systemd-sysusers --root) and
    # the services' passwords are given to it; otherwise mosquitto-setup leaves them
    # root's own (refusing rather than granting) and says so.
    group_read, group_dir = (0o640, 0o750) if AS_ROOT else (0o600, 0o700)
    expected_modes = {
        etc: 0o750, etc / "table.toml": 0o640, etc / "broadcast.toml": 0o640,
        etc / "layout.toml": 0o640, etc / "decks": 0o750, etc / "mqtt": group_dir,
        root / "var/lib/stud-table/journal": 0o750,
        root / "var/lib/stud-table/broadcast": 0o750,
        root / "var/lib/stud-table/archive": 0o750,
        root / "usr/lib/sysusers.d/stud-table.conf": 0o644,
        root / "usr/lib/tmpfiles.d/stud-table.conf": 0o644,
        root / "etc/udev/rules.d/99-stud-table-readers.rules": 0o644,
        root / "etc/mosquitto/conf.d/50-stud-table.conf": 0o644,
        root / "etc/mosquitto/stud-table/ca.key": 0o600,
        root / "etc/mosquitto/stud-table/ca.pem": 0o644,
        **{etc / "mqtt" / f"{u}.password": group_read for u in SERVICE_USERS},
        **{etc / "mqtt" / f"{u}.password": 0o600 for u in PEOPLE_USERS},
        **{root / "etc/systemd/system" / unit: 0o644 for unit in UNITS},
    }
    wrong = {str(p.relative_to(root)): oct(_mode(p)) for p, m in expected_modes.items()
             if _mode(p) != m}
    assert wrong == {}
    assert [p.name for p in (root / f"{PREFIX.lstrip('/')}/share/wheel").iterdir()] == [
        "stud_table-0.1.0-py3-none-any.whl"]
    sysusers = (root / "usr/lib/sysusers.d/stud-table.conf").read_text()
    assert re.search(r"(?m)^u stud-table - .* /var/lib/stud-table /usr/sbin/nologin$", sysusers)
    if not AS_ROOT:
        pytest.skip("owners: systemd-sysusers/-tmpfiles --root need root (modes checked)")
    uid = _ids(root, "passwd", "stud-table")
    gid = _ids(root, "group", "stud-table")
    assert uid < 1000  # a system user
    assert gid < 1000
    owners = {
        etc: (0, gid), etc / "table.toml": (0, gid), etc / "decks": (0, gid),
        etc / "mqtt/stud-daemon.password": (0, gid), etc / "mqtt/overlay.password": (0, 0),
        root / "var/lib/stud-table": (uid, gid), root / "var/lib/stud-table/journal": (uid, gid),
        root / "etc/mosquitto/stud-table/ca.key": (0, 0),
    }
    wrong_owner = {str(p.relative_to(root)): (p.stat().st_uid, p.stat().st_gid)
                   for p, ids in owners.items() if (p.stat().st_uid, p.stat().st_gid) != ids}
    assert wrong_owner == {}


def test_the_installed_program_runs_from_its_own_venv(root: Path) -> None:
    venv = root / PREFIX.lstrip("/") / "venv"
    result = subprocess.run([str(venv / "bin/stud-table"), "--help"], capture_output=True,
                            text=True, timeout=WAIT * 3, check=False)
    assert result.returncode == 0, result.stderr
    assert "broadcast" in result.stdout
    where = subprocess.run(
        [str(venv / "bin/python"), "-c",
         "import table_controller; print(table_controller.__file__)"],
        capture_output=True, text=True, timeout=WAIT * 3, check=True, cwd="/",
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    # The wheel's copy in the venv, not the checkout.
    assert where.stdout.strip().startswith(str(venv)), where.stdout


def test_generated_configuration_loads(root: Path, tmp_path: Path) -> None:
    """table.toml, layout.toml and broadcast.toml as installed pass the product's loaders
    (with a deck registered, which the install leaves to the operator)."""
    etc = root / "etc/stud-table"
    run = subprocess.run(
        [str(root / PREFIX.lstrip("/") / "venv/bin/stud-table"), "run", "--config",
         str(etc / "table.toml")], capture_output=True, text=True, timeout=WAIT * 3, check=False)
    # No deck yet: exit 2 with one line naming it, as for any bad configuration.
    assert run.returncode == 2
    assert "decks" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    conf_dir = tmp_path / "etc"
    shutil.copytree(etc, conf_dir)
    shutil.copy(CHECKOUT / "hardware/decks/example-deck.toml", conf_dir / "decks/deck-1.toml")
    config = load_config(conf_dir / "table.toml")
    daemon_pw = (etc / "mqtt/stud-daemon.password").read_text()
    assert (config.broker.username, config.broker.password) == ("stud-daemon", daemon_pw)
    assert config.journal.directory == Path("/var/lib/stud-table/journal")
    layout = load_layout(config.table.layout)
    assert {r.device for r in layout.readers} == {
        f"/dev/stud-table/reader-{r.id}" for r in layout.readers}
    broadcast = (conf_dir / "broadcast.toml").read_text()
    broadcast = re.sub(r'(?m)^password_hash = .*$',
                       f'password_hash = "{hash_password("x")}"', broadcast)
    (conf_dir / "broadcast.toml").write_text(broadcast)
    bc = load_broadcast_config(conf_dir / "broadcast.toml")
    production_pw = (etc / "mqtt/stud-production.password").read_text()
    assert (bc.broker.username, bc.broker.password) == ("stud-production", production_pw)
    assert bc.state_file == Path("/var/lib/stud-table/broadcast/broadcast.sqlite")


# ------------------------------------------------------------------ systemd units


@pytest.fixture(scope="module")
def analysis_root(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The install root plus the system's targets (systemd-analyze --root loads the
    units' default dependencies, sysinit.target and the like, from inside the root)."""
    add_system_targets(root)
    return root


def add_system_targets(root: Path) -> None:
    """Copy the system's targets into ``root`` (skip the test without systemd-analyze)."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is absent (Debian package systemd; scripts/setup installs it)")
    system = root / "usr/lib/systemd/system"
    system.mkdir(parents=True, exist_ok=True)
    for source in ("/usr/lib/systemd/system", "/lib/systemd/system"):
        for unit in Path(source).glob("*.target"):
            if unit.is_file() and not unit.is_symlink() and not (system / unit.name).exists():
                shutil.copy(unit, system / unit.name)


def systemd_verify(root: Path, unit: str) -> tuple[int, str]:
    """``systemd-analyze verify`` of ``unit`` installed in ``root``: (exit code, output).
    It exits 0 on a mere warning (an unknown key is "ignoring"), so a clean unit is
    ``(0, "")``."""
    result = subprocess.run(
        ["systemd-analyze", "verify", f"--root={root}", "--man=no", unit],
        capture_output=True, text=True, timeout=WAIT * 3, check=False)
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize("unit", [
    "stud-table.service", "stud-table@table-2.service", "stud-table-broadcast.service",
    "stud-table-floor.service", "stud-table-archive.service",
])
def test_unit_passes_systemd_analyze_verify(analysis_root: Path, unit: str) -> None:
    # verify exits 0 on a mere warning (an unknown key is "ignoring"): no output at all.
    assert systemd_verify(analysis_root, unit) == (0, "")
    text = (analysis_root / "etc/systemd/system" / unit.replace("table-2", "")).read_text()
    exec_start = re.search(r"(?m)^ExecStart=(\S+)", text)
    assert exec_start is not None
    assert (analysis_root / exec_start.group(1).lstrip("/")).is_file()
    for line in ("User=stud-table", "NoNewPrivileges=true", "ProtectSystem=strict",
                 "ProtectHome=true", "PrivateTmp=true", "Restart=on-failure",
                 "RestartPreventExitStatus=2 3", "StartLimitBurst=5"):
        assert re.search(f"(?m)^{re.escape(line)}$", text), line
    assert re.search(r"(?m)^RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6$", text)
    assert re.search(r"(?m)^ReadWritePaths=-?/var/lib/stud-table/", text)


@pytest.mark.parametrize("unit", ["stud-table.service", "stud-table-broadcast.service"])
def test_unit_exposure_stays_low(analysis_root: Path, unit: str) -> None:
    """systemd-analyze security's score (0 = locked down, 10 = exposed): 8.5 for the
    unit before issue 13, 1.6-1.7 now; 2.5 leaves room for a systemd that scores
    differently, not for dropping a protection."""
    result = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", f"--root={analysis_root}", unit],
        capture_output=True, text=True, timeout=WAIT * 3, check=False,
    )
    score = re.search(r"Overall exposure level for \S+: ([0-9.]+)", result.stdout)
    if score is None:
        pytest.skip(f"this systemd-analyze has no offline security check: {result.stderr[:200]}")
    assert float(score.group(1)) <= 2.5, result.stdout


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    """--dry-run prints the plan (here with another --prefix) and writes nothing."""
    result = _install(tmp_path, "--dry-run", "--prefix", "/srv/stud", "--no-mosquitto")
    assert result.returncode == 0, result.stderr
    assert "would run: install -D -m 0644" in result.stdout
    assert f"{tmp_path}/srv/stud/venv" in result.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "message"), [
    (["--layout", "table-9"], "install: --layout: no {checkout}/hardware/layouts/table-9.toml"),
    (["--prefix", "opt/x"], "install: --prefix must be an absolute path: opt/x"),
    (["--wheel", "/nonexistent.whl"], "install: --wheel: no file /nonexistent.whl"),
    (["--python", "/bin/false"], "install: /bin/false is not Python 3.11 or newer (--python)"),
    (["--frobnicate"], "install: unknown option --frobnicate (see --help)"),
])
def test_install_refuses_bad_options(tmp_path: Path, args: list[str], message: str) -> None:
    """One line naming the problem, exit 2, nothing written."""
    result = subprocess.run([str(DEPLOY / "install"), "--root", str(tmp_path), *args],
                            capture_output=True, text=True, timeout=WAIT, check=False)
    assert (result.returncode, result.stderr) == (2, message.format(checkout=CHECKOUT) + "\n")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ udev


def _udevadm_has_verify() -> bool:
    udevadm = shutil.which("udevadm")
    if udevadm is None:
        return False
    return "verify" in subprocess.run([udevadm, "--help"], capture_output=True, text=True,
                                      check=False).stdout


def _udev_test(root: Path, rules: Path, tmp: Path, serial: str) -> str:
    """``udevadm test`` of a tty whose ID_SERIAL_SHORT is ``serial``, with ``rules`` as
    the only local rules file and the root's /etc/group, in a private mount
    namespace (/dev and /run there are empty tmpfs: nothing on the host changes)."""
    rules_dir = tmp / "rules.d"
    rules_dir.mkdir()
    shutil.copy(rules, rules_dir / "99-stud-table-readers.rules")
    # Stands in for a plugged reader: the system rules give a real board its serial.
    (rules_dir / "10-fake-reader.rules").write_text(
        f'KERNEL=="tty0", ENV{{ID_SERIAL_SHORT}}="{serial}"\n')
    script = (f"mount --bind {rules_dir} /etc/udev/rules.d && "
              f"mount --bind {root / 'etc/group'} /etc/group && "
              "mount -t tmpfs none /run && mount -t tmpfs none /dev && "
              "exec udevadm test --action=add /sys/class/tty/tty0")
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                            text=True, timeout=WAIT * 3, check=False)
    return result.stdout + result.stderr


def _udev_checkable() -> str | None:
    """Why udev rules cannot be run here, or None."""
    if _udevadm_has_verify():
        return None
    if shutil.which("udevadm") is None or shutil.which("unshare") is None:
        return "neither udevadm verify nor udevadm test + unshare"
    if not AS_ROOT or not Path("/sys/class/tty/tty0").exists():
        return "udevadm test in a mount namespace needs root and /sys/class/tty/tty0"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    return None if probe.returncode == 0 else "no mount namespaces here"


UDEV_TOKEN = re.compile(r'^\s*([A-Z_]+)(\{[A-Za-z0-9_]+\})?\s*(==|!=|\+=|:=|=)\s*"([^"]*)"\s*$')
UDEV_MATCH = {"ACTION", "SUBSYSTEM", "KERNEL", "ENV"}
UDEV_ASSIGN = {"ENV", "SYMLINK", "GROUP", "MODE", "GOTO", "LABEL"}


def _syntax_problems(rules: Path) -> list[str]:
    """A plain check of the rule syntax our files use (where udev cannot run):
    ``KEY{attr}OP"value"`` tokens, match operators on match keys, assignments on
    assignment keys, and every GOTO with its LABEL."""
    problems, gotos, labels = [], set(), set()
    for number, line in enumerate(rules.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        for token in line.split(","):
            match = UDEV_TOKEN.match(token)
            if match is None:
                problems.append(f"{number}: cannot read {token!r}")
                continue
            key, _attr, op, value = match.groups()
            keys = UDEV_MATCH if op in ("==", "!=") else UDEV_ASSIGN
            if key not in keys:
                problems.append(f"{number}: {key}{op} is not a valid key and operator")
            (gotos if key == "GOTO" else labels if key == "LABEL" else set()).add(value)
    return problems + [f"GOTO {g} has no LABEL" for g in sorted(gotos - labels)]


def _check_rules(root: Path, rules: Path, tmp: Path, serial: str, reader: int) -> None:
    if _udev_checkable() is not None:
        assert _syntax_problems(rules) == []
        assert f'SYMLINK+="stud-table/reader-{reader}"' in rules.read_text()
        return
    if _udevadm_has_verify():
        result = subprocess.run(["udevadm", "verify", "--resolve-names=never", str(rules)],
                                capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        return
    output = _udev_test(root, rules, tmp, serial)
    ours = [line for line in output.splitlines() if "99-stud-table-readers.rules:" in line]
    gid = _ids(root, "group", "stud-table")
    # Parsed without a complaint (udev names the file and line of any problem), matched
    # the reader, and applied group, mode and name.
    assert [line.split(" ", 2)[2] for line in ours if line.startswith("tty0: ")] == [
        f"GROUP {gid}", "MODE 0660", f"LINK 'stud-table/reader-{reader}'"], output
    assert all(line.startswith("tty0: ") for line in ours), ours
    assert f"DEVLINKS=/dev/stud-table/reader-{reader}" in output
    assert "ID_MM_DEVICE_IGNORE=1" in output  # ModemManager leaves the reader alone


def test_the_syntax_fallback_knows_good_rules_from_bad(tmp_path: Path) -> None:
    """The check used where udev cannot run: clean on the shipped file, a problem
    per bad token otherwise."""
    assert _syntax_problems(DEPLOY / "udev/99-stud-table-readers.rules") == []
    bad = tmp_path / "bad.rules"
    bad.write_text('SUBSYSTEM="tty", BOGUS=="1", MODE="0660\nGOTO="nowhere"\n')
    assert _syntax_problems(bad) == [
        "1: SUBSYSTEM= is not a valid key and operator",
        "1: BOGUS== is not a valid key and operator",
        "1: cannot read ' MODE=\"0660'",
        "GOTO nowhere has no LABEL",
    ]


def test_shipped_udev_rules_parse_cleanly(root: Path, tmp_path: Path) -> None:
    """The shipped file (examples commented out) with one example line enabled."""
    text = (root / "etc/udev/rules.d/99-stud-table-readers.rules").read_text()
    line = next(x for x in text.splitlines() if x.startswith("# ENV{ID_SERIAL_SHORT}"))
    enabled = tmp_path / "enabled.rules"
    enabled.write_text(text.replace(line, line.removeprefix("# ")))
    serial = re.search(r'=="([^"]+)"', line)
    assert serial is not None
    _check_rules(root, enabled, tmp_path, serial.group(1), reader=1)


FAKE_UDEVADM = """#!/bin/sh
# Stands in for `udevadm info --query=property --name=DEV` (no USB reader here):
# prints the saved properties of DEV, fails like udevadm for an unknown one.
name=${3#--name=}
file="$(dirname "$0")/$(basename "$name").props"
[ -f "$file" ] || { echo "Unknown device \\"$name\\": No such device" >&2; exit 1; }
cat "$file"
"""


def _fake_udevadm(tmp: Path, devices: dict[str, dict[str, str]]) -> Path:
    tool = tmp / "udevadm"
    tool.write_text(FAKE_UDEVADM)
    tool.chmod(0o755)
    for name, props in devices.items():
        (tmp / f"{name}.props").write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return tool


def _make_rules(tool: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(DEPLOY / "udev/make-rules"), "--udevadm", str(tool), *args],
                          capture_output=True, text=True, timeout=WAIT, check=False)


PICO = {"DEVNAME": "/dev/ttyACM0", "ID_SERIAL_SHORT": "E6614C311B4F7A2B",
        "ID_PATH": "platform-xhci-hcd.0-usb-0:1.3:1.0", "ID_VENDOR": "Raspberry_Pi",
        "ID_MODEL": "Pico"}
CH340 = {"DEVNAME": "/dev/ttyUSB0", "ID_PATH": "platform-xhci-hcd.0-usb-0:1.4:1.0",
         "ID_VENDOR": "1a86", "ID_MODEL": "USB_Serial"}  # a board with no serial number


def test_make_rules_writes_working_rules(root: Path, tmp_path: Path) -> None:
    tool = _fake_udevadm(tmp_path, {"ttyACM0": PICO, "ttyUSB0": CH340})
    by_serial = _make_rules(tool, "/dev/ttyACM0=3")
    assert by_serial.returncode == 0, by_serial.stderr
    assert ('ENV{ID_SERIAL_SHORT}=="E6614C311B4F7A2B", SYMLINK+="stud-table/reader-3",'
            ' GROUP="stud-table", MODE="0660", ENV{ID_MM_DEVICE_IGNORE}="1"') in by_serial.stdout
    by_path = _make_rules(tool, "--by-path", "/dev/ttyUSB0=10", "-o", str(tmp_path / "p.rules"))
    assert by_path.returncode == 0, by_path.stderr
    assert 'ENV{ID_PATH}=="platform-xhci-hcd.0-usb-0:1.4:1.0"' in (
        tmp_path / "p.rules").read_text()
    rules = tmp_path / "serial.rules"
    rules.write_text(by_serial.stdout)
    udev_tmp = tmp_path / "udev"
    udev_tmp.mkdir()
    _check_rules(root, rules, udev_tmp, PICO["ID_SERIAL_SHORT"], reader=3)


@pytest.mark.parametrize(("args", "message"), [
    (["/dev/ttyUSB0=2"], "/dev/ttyUSB0: udev gives it no ID_SERIAL_SHORT (a board without"
                         " a serial number: use --by-path)"),
    (["/dev/ttyACM0=1", "/dev/ttyACM1=1"], "/dev/ttyACM1=1: reader id 1 is also given to"
                                           " /dev/ttyACM0"),
    (["/dev/ttyACM0=1", "/dev/ttyACM1=2"],
     "/dev/ttyACM1: same serial as /dev/ttyACM0: the two boards cannot be told apart by"
     " serial (use --by-path)"),
    (["/dev/ttyACM9=1"], '/dev/ttyACM9: udevadm info failed: Unknown device "/dev/ttyACM9":'
                         " No such device"),
    (["/dev/ttyACM0=70000"], "/dev/ttyACM0=70000: the reader id must be 0..65535"),
    (["/dev/ttyACM2=4"], "/dev/ttyACM2: ID_SERIAL_SHORT 'ab\"c*' has characters a udev rule"
                         " cannot match literally; use --by-path"),
    ([], "give DEVICE=READER_ID for each reader, --hello, or --list"),
])
def test_make_rules_refuses_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    tool = _fake_udevadm(tmp_path, {
        "ttyACM0": PICO, "ttyACM1": PICO, "ttyUSB0": CH340,
        "ttyACM2": {**PICO, "ID_SERIAL_SHORT": 'ab"c*'},
    })
    result = _make_rules(tool, *args)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"make-rules: {message}\n")


# ------------------------------------------------------------------ the broker


@pytest.fixture
def tls_broker(root: Path, tmp_path: Path) -> Iterator[tuple[MosquittoBroker, int]]:
    """A real Mosquitto running the generated drop-in (its paths moved into the root,
    its two listeners on free loopback ports): (broker, TLS port)."""
    tls_port = free_port()
    mq = root / "etc/mosquitto/stud-table"

    def config(port: int, _directory: Path) -> str:
        text = (root / "etc/mosquitto/conf.d/50-stud-table.conf").read_text()
        text = text.replace("/etc/mosquitto/stud-table/", f"{mq}/")
        for pattern, value in (
            (r"(?m)^listener 1883 127\.0\.0\.1$", f"listener {port} 127.0.0.1"),
            (r"(?m)^listener 8883$", f"listener {tls_port} 127.0.0.1"),
        ):
            text, count = re.subn(pattern, value, text)
            assert count == 1, pattern
        return text + "log_dest stderr\n" + "".join(f"{x}\n" for x in run_as_user_line())

    with MosquittoBroker(tmp_path / "broker", config_text=config) as broker:
        yield broker, tls_port


def _tls_client(root: Path, port: int, user: str, password: str,
                topics: list[str]) -> tuple[mqtt.Client, queue.Queue[mqtt.MQTTMessage]]:
    got: queue.Queue[mqtt.MQTTMessage] = queue.Queue()
    subscribed: queue.Queue[bool] = queue.Queue()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=MQTTProtocolVersion.MQTTv5)
    client.tls_set(ca_certs=str(root / "etc/stud-table/ca.pem"))
    client.username_pw_set(user, password)
    client.on_connect = lambda c, *_: c.subscribe([(t, 1) for t in topics])
    client.on_subscribe = lambda *_: subscribed.put(True)
    client.on_message = lambda _c, _u, message: got.put(message)
    client.connect("localhost", port)  # the certificate names localhost and 127.0.0.1
    client.loop_start()
    assert subscribed.get(timeout=WAIT)
    return client, got


def test_generated_broker_config_serves_tls_with_the_generated_passwords(
    root: Path, tls_broker: tuple[MosquittoBroker, int], tmp_path: Path
) -> None:
    _broker, tls_port = tls_broker
    secrets = root / "etc/stud-table/mqtt"
    topics = TableTopics(sample.TABLE)
    production, got = _tls_client(root, tls_port, "stud-production",
                                  (secrets / "stud-production.password").read_text(),
                                  [topics.all_filter])
    # The daemon as configured by the install (user, generated password), over TLS.
    config = BrokerConfig(
        host="127.0.0.1", port=tls_port, username="stud-daemon",
        password=(secrets / "stud-daemon.password").read_text(),
        tls=TlsConfig(ca_file=root / "etc/stud-table/ca.pem"),
    )
    daemon = MqttPublisher(sample.TABLE, config, SequenceCounter(tmp_path / "seq"))
    daemon.start()
    try:
        assert daemon.wait_online(WAIT)
        daemon.publish_state(*sample.states(hand=5))
        seen: set[str] = set()
        while not {topics.state, topics.secure_state} <= seen:
            message = got.get(timeout=WAIT)
            seen.add(message.topic)
            if message.topic == topics.secure_state:
                assert b'"hand":5' in message.payload.replace(b" ", b"")
    finally:
        daemon.stop(timeout=2)
        production.disconnect()
        production.loop_stop()


def _refused(port: int, user: str | None, password: str | None, ca: Path | None) -> bool:
    """Whether the broker on ``port`` refuses this login (TLS with ``ca`` if given)."""
    answer: queue.Queue[bool] = queue.Queue()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=MQTTProtocolVersion.MQTTv5)
    if ca is not None:
        client.tls_set(ca_certs=str(ca))
    if user is not None:
        client.username_pw_set(user, password)
    client.on_connect = lambda _c, _u, _f, reason, _p: answer.put(reason.is_failure)
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        return answer.get(timeout=WAIT)
    finally:
        client.disconnect()
        client.loop_stop()


def test_generated_broker_refuses_wrong_password_and_unverified_tls(
    root: Path, tls_broker: tuple[MosquittoBroker, int]
) -> None:
    broker, tls_port = tls_broker
    ca = root / "etc/stud-table/ca.pem"
    assert _refused(tls_port, "stud-production", "not-the-password", ca)
    # The plain listener (the services on the host) needs a password too.
    assert _refused(broker.port, None, None, None)
    # A client that trusts only the system's CAs does not accept the broker: the
    # certificate really is checked (and signed by the generated CA alone).
    with socket.create_connection(("127.0.0.1", tls_port), timeout=WAIT) as raw, \
            pytest.raises(ssl.SSLCertVerificationError):
        ssl.create_default_context().wrap_socket(raw, server_hostname="localhost")


# ------------------------------------------------------------------ idempotence


def test_second_install_keeps_operator_files_and_secrets(root: Path) -> None:
    """Run last in this module (it edits the root): an upgrade changes the program, not
    the operator's configuration, certificates or passwords."""
    etc = root / "etc/stud-table"
    table = etc / "table.toml"
    table.write_text(table.read_text().replace('id = "table-1"', 'id = "table-7"'))
    rules = root / "etc/udev/rules.d/99-stud-table-readers.rules"
    rules.write_text(rules.read_text() + "# the builder's lines\n")
    kept = {p: p.read_bytes() for p in (
        table, rules, etc / "broadcast.toml", etc / "layout.toml", etc / "ca.pem",
        root / "etc/mosquitto/stud-table/ca.key", root / "etc/mosquitto/stud-table/broker.pem",
        *(etc / "mqtt" / f"{u}.password" for u in (*SERVICE_USERS, *PEOPLE_USERS)),
    )}
    wheel = next((root / PREFIX.lstrip("/") / "share/wheel").iterdir())
    result = _install(root, "--wheel", str(wheel))
    assert result.returncode == 0, result.stderr + result.stdout
    assert "kept /" in result.stdout
    assert "program unchanged (stud_table-0.1.0-py3-none-any.whl is installed)" in result.stdout
    assert [p for p, data in kept.items() if p.read_bytes() != data] == []
    assert (root / PREFIX.lstrip("/") / "share/wheel" / wheel.name).is_file()
