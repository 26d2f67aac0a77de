"""The services' subcommand edge: password prompt, config load, logging, serving, exit codes.

``stud-table broadcast``, ``floor`` and ``archive`` (issue 20) end the same way: a
bad configuration is one ``stud-table <service>: file: key: problem`` line and exit
:data:`EXIT_BAD_CONFIG`; state a person must look at is :data:`EXIT_NEEDS_PERSON`;
Ctrl-C is a clean exit 0. The web services also print a password's hash
(``--hash-password``) and say where they serve.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from table_controller.table.config_file import ConfigError
from table_controller.web.passwords import hash_password

if TYPE_CHECKING:  # the web stack is loaded when a service starts, not for the parser
    from table_controller.web.service import WebService

EXIT_FAILURE: Final = 1
"""The service stopped on an error it reported (a socket error while serving)."""
EXIT_BAD_CONFIG: Final = 2
"""The configuration (or the command line) is wrong: fixed by editing, not by a restart."""
EXIT_NEEDS_PERSON: Final = 3
"""The service's own state (a damaged file, a newer schema) needs a person: not
restarted blindly."""
MIN_PASSWORD: Final = 8
"""Shortest password ``--hash-password`` accepts."""

ConfigT = TypeVar("ConfigT")


def add_service_parser(commands: Any, name: str, *, summary: str, description: str,
                       config: str, password: tuple[str, str] | None = None
                       ) -> argparse.ArgumentParser:
    """Add the ``stud-table <name>`` subcommand with ``--config`` (``config``: which
    file). ``password``, ``(whose, where its hash goes)``: also ``--hash-password``,
    and ``--config`` is then optional (hashing needs no configuration)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=summary, description=description)
    parser.add_argument("--config", type=Path, required=password is None, help=config)
    if password is not None:
        whose, key = password
        parser.add_argument("--hash-password", action="store_true",
                            help=f"read a {whose} password (twice, not echoed; or one line"
                            f" on stdin) and print its hash for {key}")
    return parser


def print_password_hash(service: str, who: str) -> int:
    """``--hash-password``: read ``who``'s password (twice, not echoed, on a terminal;
    else one line of stdin), print its scrypt hash; the exit code."""
    if sys.stdin.isatty():
        first = getpass.getpass(f"{who} password: ")
        if first != getpass.getpass("again: "):
            print(f"stud-table {service}: the passwords differ", file=sys.stderr)
            return EXIT_BAD_CONFIG
    else:
        first = sys.stdin.readline().rstrip("\n")
    if len(first) < MIN_PASSWORD:
        print(f"stud-table {service}: use at least {MIN_PASSWORD} characters", file=sys.stderr)
        return EXIT_BAD_CONFIG
    print(hash_password(first))
    return 0


def load_config(service: str, path: Path | None,
                loader: Callable[[Path], ConfigT]) -> ConfigT | int:
    """The configuration read by ``loader`` from ``path``, or the exit code after one
    line saying why not (no ``--config``; a :class:`ConfigError`)."""
    if path is None:
        print(f"stud-table {service}: --config is required", file=sys.stderr)
        return EXIT_BAD_CONFIG
    try:
        return loader(path)
    except ConfigError as exc:
        print(f"stud-table {service}: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG


def hash_or_config(service: str, args: argparse.Namespace, loader: Callable[[Path], ConfigT],
                   whose: str) -> ConfigT | int:
    """A web service's start: with ``--hash-password`` the hash of ``whose`` password
    is printed (the exit code returned), else the configuration is loaded
    (:func:`load_config`)."""
    if args.hash_password:
        return print_password_hash(service, whose)
    return load_config(service, args.config, loader)


def start_logging() -> None:
    """Log lines for a person on a terminal, JSON lines for a journal (systemd)."""
    # Imported here: building the ``stud-table`` parser must not load the log stack.
    from table_controller.daemon.logging import configure_logging  # noqa: PLC0415

    configure_logging("console" if sys.stderr.isatty() else "json")


def serving_line(service: str, host: str, configured_port: int, port: int) -> str:
    """The start line: where the pages are (and a hint when the port was picked)."""
    # http.port = 0 takes any free port: said, so nobody hunts for the page (issue 24).
    picked = (" (http.port = 0: a free port was picked; set one for production)"
              if configured_port == 0 else "")
    return f"stud-table {service}: serving on http://{host}:{port}/{picked}"


def serve_until_interrupted(service: str, serving: Coroutine[Any, Any, None]) -> int:
    """Run ``serving`` to its end; Ctrl-C is exit 0, a socket error one line and 1."""
    try:
        asyncio.run(serving)
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        print(f"stud-table {service}: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    return 0


def run_web_service(service: str, args: argparse.Namespace, *,
                    loader: Callable[[Path], ConfigT], whose: str,
                    make: Callable[[ConfigT], WebService | int],
                    start_lines: Callable[[WebService], list[str]] | None = None) -> int:
    """``stud-table broadcast|floor``: print a password hash, or load the config, make
    the service (``make``: it, or the exit code after a line saying why), bind its
    socket (a port in use: one line, exit 2), say where it serves (after
    ``start_lines``) and serve until Ctrl-C; the exit code."""
    cfg = hash_or_config(service, args, loader, whose)
    if isinstance(cfg, int):
        return cfg
    start_logging()
    made = make(cfg)
    if isinstance(made, int):
        return made
    web = made
    try:
        sock = web.bind()  # before the broker is joined: a port in use stops here
    except OSError as exc:
        web.unbound()
        print(f"{args.config}: http: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG

    def ready(port: int) -> None:
        for line in start_lines(web) if start_lines is not None else []:
            print(f"stud-table {service}: {line}", flush=True)
        print(serving_line(service, web.host, web.port, port), flush=True)

    return serve_until_interrupted(service, web.serve(ready, sock))


__all__ = ["EXIT_BAD_CONFIG", "EXIT_FAILURE", "EXIT_NEEDS_PERSON", "MIN_PASSWORD",
           "add_service_parser", "hash_or_config", "load_config", "print_password_hash",
           "run_web_service", "serve_until_interrupted", "serving_line", "start_logging"]
