"""Building the daemon (``Daemon.__init__``): whatever fails, the lock and journal go back."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from table_controller.daemon.config import load_config
from table_controller.daemon.runner import Daemon
from table_controller.records.journal import JournalLock
from table_controller.testing.broker import MosquittoBroker
from table_controller.testing.daemon_rig import TABLE, TableRig


def test_a_part_failing_after_the_journal_opened_gives_the_lock_back(
    tmp_path: Path, mosquitto: MosquittoBroker
) -> None:
    """Issue 20: ``Daemon.__init__`` released the lock on one error path only; a
    failure further on (here the broker's TLS CA file is no certificate, found
    when the MQTT client is built, after the journal is open) left the journal
    locked for the life of the process. Built with an ExitStack now: released."""
    rig = TableRig(tmp_path, mosquitto)
    try:
        not_a_cert = tmp_path / "not-a-cert.pem"
        not_a_cert.write_text("this is no certificate\n")
        with rig.config_path.open("a") as config:
            config.write(f'[broker.tls]\nca_file = "{not_a_cert}"\n')
        with pytest.raises(ssl.SSLError):
            Daemon(load_config(rig.config_path))
        # The lock is free again: this process can take it (another daemon could).
        JournalLock.acquire(tmp_path / "journal", TABLE).release()
    finally:
        rig.stop()

