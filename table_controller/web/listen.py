"""The listening socket of a web service, bound before anything else starts."""

from __future__ import annotations

import socket


def bind_listener(host: str, port: int) -> socket.socket:
    """A non-blocking socket listening on ``host:port``; a port in use (or any bind
    error) is one ``OSError`` line naming the address, not a traceback from a
    half-started service (issue 22 item 8)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    sock.setblocking(False)
    return sock
