"""The glue of a real install (issue 23): each problem found on a first install,
checked on an install into a temporary root (as in test_install.py) with real
parts: the deck command against a reader emulated on a pty, Mosquitto with the
generated configuration, openssl on the generated certificates, make-rules
against an emulated reader's HELLO.

* ``deck register --config /etc/stud-table/table.toml`` on a fresh install (the
  deck it makes is the one the config names and is missing);
* ``mosquitto-setup --new-passwords``: the services' configs follow, and the
  daemon is let in; a refused login is one line "not authorised: check ...";
* ``--renew-certs`` keeps the CA, names the LAN addresses and FQDN, and the
  expiry is reported from 30 days ahead;
* broker.key (and passwd) readable by Mosquitto after it drops privileges;
* make-rules takes the reader ids from each board's HELLO;
* floor.toml, archive.toml, the docs (the right README, the firmware README,
  protocol.md) installed;
* a deck file other users can read is warned about.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from firmware_bridge.emulator import ReaderEmulator
from table_controller.daemon.config import load_config
from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.local_broker import free_port
from table_controller.mqtt.publisher import MqttPublisher
from table_controller.mqtt.sequence import SequenceCounter
from table_controller.table.deck import load_deck
from table_controller.testing.broker import WAIT, MosquittoBroker, run_as_user_line, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from deck_rig import READER, ZONE, Command, Table, new_deck_tags

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_install import (
    DEPLOY,
    HOSTNAME,
    PREFIX,
    SERVICE_USERS,
    _fake_udevadm,
    _make_rules,
    add_system_targets,
    installed_root,
    systemd_verify,
)

CHECKOUT = Path(__file__).resolve().parents[2]
AS_ROOT = os.geteuid() == 0
CONFIGS = {"table.toml": "stud-daemon", "broadcast.toml": "stud-production",
           "floor.toml": "stud-floor", "archive.toml": "stud-archive"}
"""Each installed configuration and the broker user it logs in as."""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary root with stud-table installed in it."""
    return installed_root(tmp_path_factory)


def _setup(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(DEPLOY / "mosquitto-setup"), "--root", str(root), *args],
                          capture_output=True, text=True, timeout=WAIT * 4, check=False)


def _cert(path: Path, *what: str) -> str:
    return subprocess.run(["openssl", "x509", "-in", str(path), "-noout", *what],
                          capture_output=True, text=True, check=True).stdout


def _broker_password(path: Path) -> str | None:
    """The [broker] password of a config file, or None."""
    value = tomllib.loads(path.read_text())["broker"].get("password")
    return value if isinstance(value, str) else None


@pytest.fixture
def plain_broker(root: Path, tmp_path: Path) -> Iterator[MosquittoBroker]:
    """A real Mosquitto on the generated drop-in's plain listener (the one the
    services use), with the root's password file and ACL as they are now."""
    mq = root / "etc/mosquitto/stud-table"

    def config(port: int, _directory: Path) -> str:
        text = (root / "etc/mosquitto/conf.d/50-stud-table.conf").read_text()
        text = text.replace("/etc/mosquitto/stud-table/", f"{mq}/")
        text = text.split("\n# TLS for every other machine")[0]  # the plain listener only
        text, count = re.subn(r"(?m)^listener 1883 127\.0\.0\.1$", f"listener {port} 127.0.0.1",
                              text)
        assert count == 1
        return text + "\nlog_dest stderr\n" + "".join(f"{x}\n" for x in run_as_user_line())

    with MosquittoBroker(tmp_path / "broker", config_text=config) as broker:
        yield broker


def _daemon_config(root: Path, tmp_path: Path) -> BrokerConfig:
    """The [broker] of the installed table.toml, through the daemon's own loader."""
    conf = tmp_path / "etc"
    shutil.copytree(root / "etc/stud-table", conf)
    shutil.copy(CHECKOUT / "hardware/decks/example-deck.toml", conf / "decks/deck-1.toml")
    return load_config(conf / "table.toml").broker


def _online(config: BrokerConfig, port: int, tmp_path: Path) -> bool:
    """Whether the daemon's publisher with ``config`` (on ``port``) gets in."""
    publisher = MqttPublisher("table-1", config.model_copy(update={"port": port}),
                              SequenceCounter(tmp_path / "seq"))
    publisher.start()
    try:
        return publisher.wait_online(WAIT / 3)
    finally:
        publisher.stop(timeout=2)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


# ------------------------------------------------------------------ deck register


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    """The table-8 readers emulated on ptys."""
    with Table(tmp_path) as emulated:
        yield emulated


def test_deck_register_with_the_installed_config_needs_no_deck_yet(
        root: Path, table: Table, tmp_path: Path) -> None:
    """The installed table.toml names decks/deck-1.toml, the deck being registered:
    the registration must not need the file it makes (it used to stop with
    "table.decks: file not found"). Afterwards the daemon's loader takes the config."""
    etc = root / "etc/stud-table"
    target = etc / "decks/deck-1.toml"
    assert not target.exists()
    truth = new_deck_tags(23)
    command = Command(["deck", "register", "--config", str(etc / "table.toml"), "--layout",
                       str(table.layout_path), "--reader", str(READER), "--zone", ZONE,
                       "--out", str(target), "--settle", "0.05"], tmp_path)
    try:
        seen = command.wait_for("> pass 2c")
        for card, uid in truth.items():
            table.place(uid)
            seen = command.wait_for(f"+ {card.code} registered", after=seen)
            table.remove(uid)
        assert command.finish() == 0, command.stderr_now()
    finally:
        command.kill()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert all(load_deck(target).card_for(uid) == card for card, uid in truth.items())
    assert load_config(etc / "table.toml").table.decks == [target]
    target.unlink()  # the other tests see a fresh install


# ------------------------------------------------------------------ deck file mode


def test_a_deck_readable_by_others_is_warned_about(tmp_path: Path) -> None:
    """Loaded (the shipped examples are public on purpose) but never without a word:
    the daemon logs a warning, the deck tools print one line."""
    deck = tmp_path / "deck-1.toml"
    shutil.copy(CHECKOUT / "hardware/decks/example-deck.toml", deck)
    deck.chmod(0o644)
    with capture_logs() as logs:
        load_deck(deck)
    warnings = [e for e in logs if e["event"] == "deck_file_readable_by_others"]
    assert len(warnings) == 1
    assert warnings[0]["log_level"] == "warning"
    assert "mode 0644" in warnings[0]["message"]
    assert "chmod 0600" in warnings[0]["message"]
    deck.chmod(0o600)
    with capture_logs() as logs:
        load_deck(deck)
    assert [e for e in logs if e["event"] == "deck_file_readable_by_others"] == []
    deck.chmod(0o640)
    # The tool's one line, before it looks for the reader (none here).
    result = subprocess.run(
        [sys.executable, "-m", "table_controller", "deck", "check", "--deck", str(deck),
         "--layout", str(CHECKOUT / "hardware/layouts/table-8.toml"), "--reader", "10",
         "--zone", "burn"], capture_output=True, text=True, timeout=WAIT * 4, check=False)
    lines = result.stderr.strip().splitlines()
    assert lines[0] == (f"warning: {deck}: mode 0640: other users can read this deck (and"
                        " hole cards through the card backs): chmod 0600 it, owned by the"
                        " service user")
    assert result.returncode == 2  # then: the layout's device is not plugged in


# ------------------------------------------------------------------ passwords


def test_password_rotation_updates_the_services_configs(
        root: Path, plain_broker: MosquittoBroker, tmp_path: Path) -> None:
    """--new-passwords rewrites every user's password file and the broker's, and
    the password line of each installed config; the daemon as configured gets in
    with the new one (it was refused with the old one left in table.toml)."""
    etc = root / "etc/stud-table"
    before = {name: _broker_password(etc / name) for name in CONFIGS}
    assert all(before.values())  # the install put the generated passwords in
    modes = {name: stat.S_IMODE((etc / name).stat().st_mode) for name in CONFIGS}
    result = _setup(root, "--hostname", HOSTNAME, "--new-passwords")
    assert result.returncode == 0, result.stderr
    for name, user in CONFIGS.items():
        new = (etc / "mqtt" / f"{user}.password").read_text()
        assert new != before[name]
        assert _broker_password(etc / name) == new, name
        assert stat.S_IMODE((etc / name).stat().st_mode) == modes[name]
        assert f"{etc / name}: [broker] password of {user} updated" in result.stdout
    # The rest of each file is untouched.
    assert (etc / "table.toml").read_text().count("\n") == (
        DEPLOY / "table.example.toml").read_text().count("\n")
    # The broker (restarted on the rotated password file) lets the daemon in.
    plain_broker.stop()
    plain_broker.start()
    assert _online(_daemon_config(root, tmp_path), plain_broker.port, tmp_path)
    assert set(SERVICE_USERS) >= set(CONFIGS.values())


def test_a_refused_login_says_not_authorised_in_one_line(
        root: Path, plain_broker: MosquittoBroker, tmp_path: Path) -> None:
    config = _daemon_config(root, tmp_path).model_copy(update={"password": "stale"})
    with capture_logs() as logs:
        assert not _online(config, plain_broker.port, tmp_path)
    refused = [e for e in logs if e["event"] == "mqtt_not_authorised"]
    assert refused, logs
    message = refused[0]["message"]
    assert message.startswith("not authorised: check [broker] username 'stud-daemon'")
    assert "/etc/stud-table/mqtt/stud-daemon.password" in message
    assert "\n" not in message
    assert "stale" not in str(refused[0])  # never the password


# ------------------------------------------------------------------ certificates


def test_renew_certs_keeps_the_ca_and_names_the_lan(root: Path) -> None:
    """A renewal under the same CA (every client's ca.pem stays good), for the
    given LAN addresses; a second renewal without --address keeps them."""
    mq = root / "etc/mosquitto/stud-table"
    ca_before = (mq / "ca.pem").read_bytes()
    cert_before = (mq / "broker.pem").read_bytes()
    result = _setup(root, "--hostname", HOSTNAME, "--address", "192.0.2.10",
                    "--address", "fd00::10", "--renew-certs")
    assert result.returncode == 0, result.stderr
    assert (mq / "ca.pem").read_bytes() == ca_before
    assert (root / "etc/stud-table/ca.pem").read_bytes() == ca_before
    assert (mq / "broker.pem").read_bytes() != cert_before
    verify = subprocess.run(["openssl", "verify", "-CAfile", str(mq / "ca.pem"),
                             str(mq / "broker.pem")], capture_output=True, text=True,
                            check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    san = _cert(mq / "broker.pem", "-ext", "subjectAltName")
    for name in (f"DNS:{HOSTNAME}", "DNS:localhost", "IP Address:127.0.0.1",
                 "IP Address:192.0.2.10", "IP Address:FD00:0:0:0:0:0:0:10"):
        assert name in san, san
    again = _setup(root, "--hostname", HOSTNAME, "--renew-certs")
    assert again.returncode == 0, again.stderr
    assert "IP Address:192.0.2.10" in _cert(mq / "broker.pem", "-ext", "subjectAltName")
    assert (mq / "ca.pem").read_bytes() == ca_before
    # --new-ca is the one way to a new CA.
    new_ca = _setup(root, "--hostname", HOSTNAME, "--new-ca")
    assert new_ca.returncode == 0, new_ca.stderr
    assert (mq / "ca.pem").read_bytes() != ca_before
    assert (root / "etc/stud-table/ca.pem").read_bytes() == (mq / "ca.pem").read_bytes()


def test_certificate_expiry_is_reported_30_days_ahead(root: Path) -> None:
    ok = _setup(root, "--check-certs")
    assert ok.returncode == 0, ok.stderr
    assert re.fullmatch(r"mosquitto-setup: broker certificate \S+ expires in \d+ days \(.*\)\n",
                        ok.stdout)
    soon = _setup(root, "--hostname", HOSTNAME, "--renew-certs", "--days", "20")
    assert soon.returncode == 0, soon.stderr
    warn = _setup(root, "--check-certs")
    assert warn.returncode == 1
    assert warn.stdout == ""
    assert re.fullmatch(r"mosquitto-setup: broker certificate \S+ expires in (?:19|20) days \(.*\):"
                        r" renew it with deploy/mosquitto-setup --renew-certs\n", warn.stderr)
    back = _setup(root, "--hostname", HOSTNAME, "--renew-certs")
    assert back.returncode == 0, back.stderr
    assert _setup(root, "--check-certs").returncode == 0
    # The daily check is installed as a timer running the installed copy of the script.
    unit = (root / "etc/systemd/system/stud-table-cert-check.service").read_text()
    exec_start = re.search(r"(?m)^ExecStart=(\S+) --check-certs$", unit)
    assert exec_start is not None
    assert os.access(root / exec_start.group(1).lstrip("/"), os.X_OK)
    assert "OnCalendar=daily" in (root / "etc/systemd/system/stud-table-cert-check.timer"
                                  ).read_text()


def test_cert_check_units_pass_systemd_analyze_verify(root: Path) -> None:
    add_system_targets(root)
    for unit in ("stud-table-cert-check.service", "stud-table-cert-check.timer"):
        assert systemd_verify(root, unit) == (0, ""), unit


# ------------------------------------------------------------------ broker.key


def test_mosquitto_reads_its_key_after_dropping_privileges(root: Path) -> None:
    """Under --root the mosquitto group is not in the root's /etc/group, so the key is
    left root's own; the drop-in installed for mosquitto.service hands key and
    password file to the group before each start. A real Mosquitto started as root,
    dropping to user mosquitto, then loads them (it would not start before)."""
    if not AS_ROOT:
        pytest.skip("Mosquitto drops privileges only when started as root")
    try:
        pwd.getpwnam("mosquitto")
    except KeyError:
        pytest.skip("no mosquitto user on this machine")
    dropin = root / "etc/systemd/system/mosquitto.service.d/stud-table.conf"
    commands = re.findall(r"(?m)^ExecStartPre=(.+)$", dropin.read_text())
    assert len(commands) == 2
    # A copy the mosquitto user can reach (pytest's temporary root is 0700).
    place = Path(tempfile.mkdtemp(prefix="stud-mq-"))
    try:
        place.chmod(0o755)
        mq = place / "stud-table"
        shutil.copytree(root / "etc/mosquitto/stud-table", mq)
        for name in ("broker.key", "passwd"):
            assert stat.S_IMODE((mq / name).stat().st_mode) == 0o600  # as the install left it
        for command in commands:
            subprocess.run(command.replace("/etc/mosquitto/stud-table/", f"{mq}/").split(),
                           check=True)
        port, tls_port = free_port(), free_port()
        text = (root / "etc/mosquitto/conf.d/50-stud-table.conf").read_text()
        text = text.replace("/etc/mosquitto/stud-table/", f"{mq}/")
        text = text.replace("listener 1883 127.0.0.1", f"listener {port} 127.0.0.1")
        text = text.replace("listener 8883", f"listener {tls_port} 127.0.0.1")
        (place / "mosquitto.conf").write_text(text + "\nuser mosquitto\nlog_dest stderr\n")
        process = subprocess.Popen(["mosquitto", "-c", str(place / "mosquitto.conf")],
                                   stderr=subprocess.PIPE, text=True)
        try:
            # Listening on the TLS port = past loading key, certificate and passwords;
            # a key it cannot read ends the process instead.
            wait_until(lambda: process.poll() is not None or _listening(tls_port),
                       what="mosquitto to listen or exit")
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
        finally:
            process.terminate()
            process.wait(WAIT)
            if process.stderr is not None:
                process.stderr.close()
    finally:
        shutil.rmtree(place)


# ------------------------------------------------------------------ udev


def test_make_rules_takes_the_reader_ids_from_hello(tmp_path: Path) -> None:
    """Two emulated boards on ptys: --hello asks each (IDENTIFY) and writes the rule
    with the id it announces, ModemManager told to keep off."""
    with ReaderEmulator(tmp_path, 7) as seven, ReaderEmulator(tmp_path, 12) as twelve:
        tool = _fake_udevadm(tmp_path, {
            "reader-7": {"DEVNAME": str(seven.path), "ID_SERIAL_SHORT": "E6614C3100000007"},
            "reader-12": {"DEVNAME": str(twelve.path), "ID_SERIAL_SHORT": "E6614C3100000012"},
        })
        result = _make_rules(tool, "--hello", str(seven.path), str(twelve.path))
    assert result.returncode == 0, result.stderr
    for serial, reader in (("E6614C3100000007", 7), ("E6614C3100000012", 12)):
        assert (f'ENV{{ID_SERIAL_SHORT}}=="{serial}", SYMLINK+="stud-table/reader-{reader}",'
                ' GROUP="stud-table", MODE="0660", ENV{ID_MM_DEVICE_IGNORE}="1"'
                ) in result.stdout


def test_make_rules_hello_refuses_a_port_that_is_no_reader(tmp_path: Path) -> None:
    """A port that never answers with a HELLO: one line, exit 2."""
    master, slave = os.openpty()
    try:
        name = os.ttyname(slave)
        tool = _fake_udevadm(tmp_path, {})
        result = _make_rules(tool, "--hello", name)
    finally:
        os.close(master)
        os.close(slave)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"make-rules: {name}: no HELLO in 5 s (not a stud-table reader,"
                             " or its firmware is not running)\n")


# ------------------------------------------------------------------ installed files


def test_floor_and_archive_configs_and_the_docs_are_installed(root: Path) -> None:
    etc = root / "etc/stud-table"
    for name in ("floor.toml", "archive.toml"):
        assert stat.S_IMODE((etc / name).stat().st_mode) == 0o640, name
    archive = tomllib.loads((etc / "archive.toml").read_text())
    # Where the archive unit may write (ReadWritePaths=/var/lib/stud-table/archive).
    assert archive["database"]["path"] == "/var/lib/stud-table/archive/archive.sqlite"
    assert archive["broker"]["host"] == "127.0.0.1"
    floor = tomllib.loads((etc / "floor.toml").read_text())
    assert floor["broker"]["host"] == "127.0.0.1"
    doc = root / PREFIX.lstrip("/") / "share/doc"
    assert (doc / "README.md").read_text() == (CHECKOUT / "README.md").read_text()
    for name in ("hardware/README.md", "hardware/readers.md", "hardware/firmware/README.md",
                 "protocol.md", "install.md"):
        source = CHECKOUT / ("docs/" + name if "/" not in name else name)
        assert (doc / name).read_text() == source.read_text(), name
