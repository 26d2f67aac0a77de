"""A FEIG ISC multi-antenna HF reader emulated on a pseudo-terminal, speaking FEIG's bytes.

The counterpart of :class:`~firmware_bridge.emulator.ReaderEmulator` for the FEIG
reader kind (:mod:`firmware_bridge.feig.protocol`): a pty with a stable symlink, answering
[0xB0][0x01] inventory requests ([MR101] 6.1.1, with the ``ANT``/``ANT_SEL`` option of
[MU02] 10.1.1) for the tags placed on each antenna output; STATUS 0x01 "No Transponder"
when an antenna sees nothing, a response in the advanced frame past 255 bytes, and
STATUS 0x94 "more data" with MORE polls when more than ``sets_per_response`` tags lie on
one antenna. Tags can drop out of single polls (``dropout_probability``, stacked cards);
``send_raw`` writes any bytes (noise); ``com_adr`` is the reader's bus address.
The host side is driven by the real :class:`~firmware_bridge.feig.link.FeigReaderLink`.

    python -m firmware_bridge.feig.emulator --dir /tmp/table --reader 3 --antennas 4
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import select
import threading
import time
import tty
from pathlib import Path
from types import TracebackType
from typing import Final

from firmware_bridge.feig.protocol import (
    CONTROL_ISO_HOST,
    ISO_INVENTORY,
    MODE_ANT,
    MODE_MORE,
    STATUS_MORE_DATA,
    STATUS_NO_TRANSPONDER,
    STATUS_OK,
    FeigDecoder,
    FeigTag,
    Frame,
    InventoryResponse,
    Side,
    encode_frame,
    encode_inventory,
)

__all__ = ["FeigReaderEmulator"]

ANT_STATUS_OK: Final = 0x00
"""ANT_STATUS sent for every antenna record (the emulator has no RF to judge)."""

_READ_CHUNK: Final = 4096


class FeigReaderEmulator:
    """A FEIG reader on a pty at ``link_dir/reader-<com_adr>`` (module doc)."""

    def __init__(
        self,
        link_dir: str | os.PathLike[str],
        com_adr: int,
        *,
        antenna_count: int = 8,
        dropout_probability: float = 0.0,
        sets_per_response: int = 32,
        seed: int | None = None,
    ) -> None:
        if not 0 <= com_adr <= 254:
            raise ValueError("COM-ADR is 0..254")
        if not 1 <= antenna_count <= 8:
            raise ValueError("ANT_SEL addresses 1..8 antenna outputs")
        self.com_adr = com_adr
        self.antenna_count = antenna_count
        self.dropout_probability = dropout_probability
        self.sets_per_response = sets_per_response
        self.path = Path(link_dir) / f"reader-{com_adr}"
        self._rng = random.Random(seed)
        self._tags: dict[int, list[str]] = {a: [] for a in range(antenna_count)}
        self._pending: list[FeigTag] = []
        self._decoder = FeigDecoder(Side.HOST)
        self._lock = threading.RLock()
        self._master: int | None = None
        self._slave: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.requests: list[Frame] = []
        """Every request decoded, in order (tests check the host's polling)."""

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FeigReaderEmulator:
        """Open the pty (symlink at :attr:`path`) and start answering."""
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        temporary.unlink(missing_ok=True)
        os.symlink(os.ttyname(slave), temporary)
        os.replace(temporary, self.path)
        self._thread = threading.Thread(target=self._run, name=f"feig-emulator-{self.com_adr}",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering, close the pty, remove the symlink."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None
        with self._lock:
            for fd in (self._master, self._slave):
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self._master = self._slave = None
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> FeigReaderEmulator:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    # -- the table ---------------------------------------------------------------------------

    def place(self, antenna: int, uid: str) -> str:
        """Put an ISO 15693 tag (8-byte UID, hex) on antenna output ``antenna``."""
        upper = uid.upper()
        if len(bytes.fromhex(upper)) != 8:
            raise ValueError("an ISO 15693 UID has 8 bytes")
        with self._lock:
            if upper not in self._tags[antenna]:
                self._tags[antenna].append(upper)
        return upper

    def remove(self, antenna: int, uid: str) -> None:
        """Take a tag off ``antenna``."""
        with self._lock, contextlib.suppress(ValueError):
            self._tags[antenna].remove(uid.upper())

    def placed(self, antenna: int) -> tuple[str, ...]:
        """The tags lying on ``antenna``."""
        with self._lock:
            return tuple(self._tags[antenna])

    def send_raw(self, data: bytes) -> None:
        """Write ``data`` as is (noise, a torn frame)."""
        with self._lock:
            if self._master is not None:
                with contextlib.suppress(OSError):
                    os.write(self._master, data)

    # -- answering -------------------------------------------------------------------------

    def answer(self, request: Frame) -> Frame | None:
        """The response to ``request`` (pure apart from the dropout draw), or None for
        what this emulator does not speak (a real reader answers a status we skip)."""
        data = request.data
        if request.control != CONTROL_ISO_HOST or len(data) < 2 or data[0] != ISO_INVENTORY:
            return None
        mode = data[1]
        antennas = [0]
        if mode & MODE_ANT:
            if len(data) < 3:
                return None
            antennas = [a for a in range(self.antenna_count) if data[2] >> a & 1]
        with self._lock:
            if not mode & MODE_MORE:
                self._pending = []
                for antenna in antennas:
                    for uid in self._tags[antenna]:
                        if self._rng.random() >= self.dropout_probability:
                            self._pending.append(FeigTag(
                                uid, antennas=((antenna, ANT_STATUS_OK),) if mode & MODE_ANT
                                else ()))
            batch = self._pending[:self.sets_per_response]
            self._pending = self._pending[self.sets_per_response:]
            more = bool(self._pending)
        if not batch:
            return Frame(self.com_adr, CONTROL_ISO_HOST, b"", STATUS_NO_TRANSPONDER)
        status = STATUS_MORE_DATA if more else STATUS_OK
        return encode_inventory(self.com_adr, InventoryResponse(status, tuple(batch),
                                                                bool(mode & MODE_ANT)))

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                master = self._master
            if master is None:
                return
            try:
                readable, _, _ = select.select([master], [], [], 0.05)
            except (OSError, ValueError):
                return
            if not readable:
                continue
            try:
                data = os.read(master, _READ_CHUNK)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                # The slave side is not open (no host yet): EIO on Linux. Wait for one.
                time.sleep(0.05)
                continue
            for request in self._decoder.feed(data):
                self.requests.append(request)
                response = self.answer(request)
                if response is not None:
                    self.send_raw(encode_frame(response))


def main(argv: list[str] | None = None) -> int:
    """Run one emulated FEIG reader until Ctrl-C."""
    parser = argparse.ArgumentParser(description="An emulated FEIG ISC HF reader on a pty.")
    parser.add_argument("--dir", type=Path, required=True, help="where the symlink goes")
    parser.add_argument("--reader", type=int, required=True, help="COM-ADR (the reader id)")
    parser.add_argument("--antennas", type=int, default=8, help="antenna outputs (1..8)")
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    with FeigReaderEmulator(args.dir, args.reader, antenna_count=args.antennas) as reader:
        print(f"FEIG reader {args.reader} at {reader.path}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
