"""The web services' serve loop: uvicorn on a bound socket, then the service starts.

Broadcast and floor (issue 20) serve the same way: the listening socket is bound
first (:func:`~table_controller.web.listen.bind_listener`: a port in use is one line),
uvicorn serves on it, and only once it accepts connections does the service join the
broker and say where it serves; whatever happens, the service's ``stop`` runs.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any, Final

import structlog
import uvicorn

log = structlog.get_logger(__name__)

GRACEFUL_S: Final = 1
"""Seconds uvicorn waits for open requests at shutdown: an SSE stream never ends by itself."""
STARTED_POLL_S: Final = 0.05
"""How often the start-up checks whether uvicorn accepts connections yet."""


async def serve_app(app: Any, sock: socket.socket, service: str, host: str, port: int, *,
                    start: Callable[[], None], stop: Callable[[], Awaitable[None]],
                    ready: Callable[[int], None] | None = None) -> None:
    """Serve the ASGI ``app`` on ``sock`` until cancelled or uvicorn ends.

    Once uvicorn has started: ``start()`` (join the broker, start timers), the log
    event ``<service>_serving`` with ``host`` and the port bound, then ``ready(port)``.
    ``stop()`` is awaited on every way out, a failed start included. A uvicorn that
    ends before it started raises :class:`OSError` naming ``host:port`` as configured.
    """
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=GRACEFUL_S)
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    bound = sock.getsockname()[1]  # the port picked when the configured one is 0
    try:
        while not server.started:
            if serving.done():
                await serving
                raise OSError(f"cannot serve on {host}:{port}")
            await asyncio.sleep(STARTED_POLL_S)
        start()
        log.info(f"{service}_serving", host=host, port=bound)
        if ready is not None:
            ready(bound)
        await serving
    finally:
        await stop()


__all__ = ["serve_app"]
