"""A real PostgreSQL server for the archive tests (and bench/bench_archive.py).

``initdb`` into a fresh directory, ``pg_ctl start`` on a free port on 127.0.0.1 (no
Unix socket in a shared place), stopped and started again on the same port for the
"database down" tests. PostgreSQL refuses to run as root, so as root the server runs
as the ``postgres`` user (Debian's package creates it) through ``runuser``, in a
directory of its own. The binaries are found under /usr/lib/postgresql/<version>/bin
(Debian's ``postgresql`` package; scripts/setup installs it).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import psycopg

from table_controller.mqtt.local_broker import free_port


def find_bin_dir() -> Path | None:
    """The newest /usr/lib/postgresql/<version>/bin holding initdb, or ``None``."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return Path(found[-1]).parent if found else None


class PostgresServer:
    """One throw-away PostgreSQL cluster (trust auth on 127.0.0.1, fsync off: tests)."""

    def __init__(self) -> None:
        """Prepare (initdb); call :meth:`start`."""
        bin_dir = find_bin_dir()
        if bin_dir is None:
            raise RuntimeError("PostgreSQL is not installed (/usr/lib/postgresql/*/bin):"
                               " run scripts/setup")
        self.bin = bin_dir
        self.port = free_port()
        # Not under pytest's tmp_path: that is mode 0700 root's, closed to postgres.
        self.directory = Path(tempfile.mkdtemp(prefix="stud-archive-pg-"))
        self.data = self.directory / "data"
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.directory, user.pw_uid, user.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self._run("initdb", "-D", str(self.data), "-U", "archive", "--auth=trust",
                  "-E", "UTF8", "--no-locale", "--no-sync")

    def _run(self, tool: str, *args: str) -> None:
        result = subprocess.run([*self.prefix, str(self.bin / tool), *args],
                                capture_output=True, text=True, check=False, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"{tool} failed: {result.stdout}{result.stderr}")

    def start(self) -> None:
        """Start the server (again) on its port and wait until it accepts connections."""
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1"
                   f" -c unix_socket_directories={self.directory} -c fsync=off"
                   " -c synchronous_commit=off -c full_page_writes=off")
        self._run("pg_ctl", "start", "-D", str(self.data), "-w", "-t", "60",
                  "-l", str(self.directory / "log"), "-o", options)

    def stop(self) -> None:
        """Stop the server (fast: connections are cut, as in an outage)."""
        self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "fast", "-w", "-t", "60")

    def create_database(self) -> str:
        """A new empty database; its DSN (``postgresql://archive@127.0.0.1:port/name``)."""
        name = f"a_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def dsn(self, database: str) -> str:
        """The DSN of ``database`` on this server."""
        return f"postgresql://archive@127.0.0.1:{self.port}/{database}"

    def close(self) -> None:
        """Stop the server if it runs and remove its files."""
        subprocess.run([*self.prefix, str(self.bin / "pg_ctl"), "stop", "-D", str(self.data),
                        "-m", "immediate", "-w"], capture_output=True, check=False, timeout=60)
        shutil.rmtree(self.directory, ignore_errors=True)
