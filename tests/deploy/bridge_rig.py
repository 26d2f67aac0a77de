"""Two real Mosquitto brokers joined by the shipped deploy/bridge.conf: a table's own
broker bridging out, over TLS, to a "central" broker (test_bridge.py, bench_bridge.py).

The central broker gets certificates from deploy/mosquitto-setup (host name
``localhost``) and a password file with the bridge's user and a reader; it keeps
sessions across a restart (persistence), as a casino's central broker does. The
table broker runs deploy/bridge.conf with only its CHANGE lines filled in (address,
password, CA) and, for the tests, anonymous clients on loopback.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from table_controller.mqtt.local_broker import base_config_lines, free_port
from table_controller.testing.broker import WAIT, BrokerUser, MosquittoBroker

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
BRIDGE_USER = "stud-bridge-table-1"
READER = BrokerUser("central-reader", "reader-pw")
LINK_STATE = "$SYS/broker/connection/stud-table-bridge-table-1/state"
"""Where the table broker says whether the bridge is up ("1") or down ("0")."""
BRIDGED = ("status", "state", "events", "alerts", "alerts/open", "alerts/changes", "notices",
           "readers/1", "readers/1/stats", "dealer", "hands")
"""Topics under stud/v1/<table>/ that must cross the bridge."""
NOT_BRIDGED = ("secure/state", "secure/events", "secure/notices", "secure/hands",
               "cmd/hand", "cmd/ack", "reply/console-1")
"""Topics that must stay on the table's broker."""


def _lines(*lines: str) -> str:
    return "".join(f"{line}\n" for line in lines)


@dataclass
class BridgedPair:
    """A central broker and a table broker bridged to it; start with :meth:`start`."""

    directory: Path
    bridge_password: str = "bridge-pw"
    tls_port: int = field(default_factory=free_port)
    central: MosquittoBroker = field(init=False)
    table: MosquittoBroker = field(init=False)

    def __post_init__(self) -> None:
        """Generate the central broker's certificates and prepare both configs."""
        certs = self.directory / "central-root"
        certs.mkdir(parents=True)
        subprocess.run([str(DEPLOY / "mosquitto-setup"), "--root", str(certs),
                        "--hostname", "localhost"], check=True, capture_output=True,
                       timeout=WAIT * 3)
        self.ca = certs / "etc/stud-table/ca.pem"
        self._mq = certs / "etc/mosquitto/stud-table"
        self.central = MosquittoBroker(
            self.directory / "central",
            users=[BrokerUser(BRIDGE_USER, self.bridge_password), READER],
            config_text=self._central_config,
        )
        self.table = MosquittoBroker(self.directory / "table", config_text=self._table_config)

    def _central_config(self, port: int, directory: Path) -> str:
        return _lines(
            "per_listener_settings false",
            *base_config_lines(port),
            "allow_anonymous false",
            f"password_file {directory / 'passwd'}",
            "persistence true",
            f"persistence_location {directory}/",
            f"listener {self.tls_port} 127.0.0.1",
            f"cafile {self._mq / 'ca.pem'}",
            f"certfile {self._mq / 'broker.pem'}",
            f"keyfile {self._mq / 'broker.key'}",
        )

    def _table_config(self, port: int, _directory: Path) -> str:
        text = (DEPLOY / "bridge.conf").read_text()
        for pattern, value in (
            (r"(?m)^address central\.casino\.lan:8883$", f"address localhost:{self.tls_port}"),
            (r"(?m)^remote_password CHANGE-ME$", f"remote_password {self.bridge_password}"),
            (r"(?m)^bridge_cafile /etc/mosquitto/stud-table/central-ca\.pem$",
             f"bridge_cafile {self.ca}"),
        ):
            text, count = re.subn(pattern, value, text)
            assert count == 1, pattern
        return _lines(*base_config_lines(port), "allow_anonymous true", "persistence false") + text

    def start(self) -> BridgedPair:
        """Start the central broker, then the table's."""
        self.central.directory.mkdir(parents=True, exist_ok=True)
        self.table.directory.mkdir(parents=True, exist_ok=True)
        self.central.start()
        self.table.start()
        return self

    def close(self) -> None:
        """Stop both brokers."""
        self.table.close()
        self.central.close()

