"""What a web service is (issue 20): a bound socket, sessions, password checks, the serve loop.

:class:`WebService` is the part broadcast and floor share: it binds the listening
socket before anything else starts (a port in use is one line), keeps the login
sessions (:mod:`.sessions`) and the password checks (:mod:`.login`), and serves with
:func:`~.serve.serve_app`: the subclass says what its app is (:meth:`app`), what starts
once uvicorn accepts connections (:meth:`started`: join the broker, start timers) and
what ends on every way out (:meth:`stopped`).
"""

from __future__ import annotations

import asyncio
import socket
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from table_controller.web.listen import bind_listener
from table_controller.web.login import PasswordCheck
from table_controller.web.serve import serve_app
from table_controller.web.sessions import Sessions


class WebService(ABC):
    """The shared half of a web service; subclasses provide the app and the start/stop."""

    def __init__(self, service: str, host: str, port: int, cookie: str,
                 clock: Callable[[], float]) -> None:
        self.service = service
        """The service's name: its log events' prefix (``broadcast``, ``floor``)."""
        self.host = host
        self.port = port
        """Where to serve, as configured (port 0: any free port)."""
        self.sessions = Sessions(cookie, clock)
        """Who is logged in: each login lasts a shift (:mod:`.sessions`)."""
        self.passwords = PasswordCheck(service, clock)
        """Password checks, throttled per client (:mod:`.login`)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        """The serving loop while serving (MQTT threads hand messages to it), else None."""

    @abstractmethod
    def app(self) -> Any:
        """The ASGI app served."""

    @abstractmethod
    def started(self) -> None:
        """Called once uvicorn accepts connections (on the serving loop)."""

    @abstractmethod
    async def stopped(self) -> None:
        """Called on every way out of :meth:`serve`, a failed start included."""

    def unbound(self) -> None:  # noqa: B027 - a hook: by default nothing to release
        """Release what the constructor opened when the socket cannot be bound (the
        service never served); nothing unless a subclass opened something."""

    def bind(self) -> socket.socket:
        """The listening socket, bound before anything else starts (a port in use is
        one ``OSError`` line, not a traceback from a half-started service)."""
        return bind_listener(self.host, self.port)

    async def serve(self, ready: Callable[[int], None] | None = None,
                    sock: socket.socket | None = None) -> None:
        """Serve HTTP on ``sock`` (bound by :meth:`bind` if not given), then
        :meth:`started`; ``ready(port)`` once serving; run until cancelled."""
        sock = sock if sock is not None else self.bind()
        self._loop = asyncio.get_running_loop()

        async def stop() -> None:
            await self.stopped()
            self._loop = None  # a late message from an MQTT thread is dropped, not handled

        await serve_app(self.app(), sock, self.service, self.host, self.port,
                        start=self.started, stop=stop, ready=ready)


__all__ = ["WebService"]
