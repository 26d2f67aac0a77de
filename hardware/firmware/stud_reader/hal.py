"""The hardware interface the reader loop uses, and its Raspberry Pi Pico implementation.

The interface (any object with these five methods; no base class needed)::

    select_port(n)    route the RF front end to antenna port n (0..15)
    scan()            inventory the selected port: a list of tag UIDs (bytes)
    write(data)       send bytes to the host; returns how many were taken
                      (fewer than len(data): the frame is lost, and reported)
    read()            bytes the host sent since the last call (b"" if none); never blocks
    ticks_ms()        a millisecond counter (may wrap as MicroPython's does)

:class:`PicoHal` is the board: USB CDC for the host link (the same virtual serial
port as the REPL, so keyboard interrupt is turned off: the host's frames contain
0x03 bytes), and a front end object for ``select_port`` / ``scan`` (see
``stud_reader.mfrc522``). The host tests use ``host/pty_hal.py`` instead, with
``stud_reader.sim.SimulatedFrontEnd``. Only the Pico half needs MicroPython; it can
only be checked by hand on a board.
"""


class PicoHal:
    """USB CDC serial + a front end, on a Raspberry Pi Pico under MicroPython."""

    def __init__(self, front_end):
        import select  # noqa: PLC0415
        import sys  # noqa: PLC0415
        import time  # noqa: PLC0415

        import micropython  # noqa: PLC0415 - MicroPython only: imported on the board

        # Ctrl-C (0x03) on the CDC port would raise KeyboardInterrupt: the host's
        # frames carry 0x03 bytes. Connect to the REPL with mpremote (it sends its
        # own raw-REPL sequence after a soft reset) or hold the BOOTSEL button.
        micropython.kbd_intr(-1)
        self._front_end = front_end
        self._stdin = sys.stdin.buffer
        self._stdout = sys.stdout.buffer
        self._poll = select.poll()
        self._poll.register(sys.stdin, select.POLLIN)
        self._ticks = time.ticks_ms

    def select_port(self, port):
        """Route the front end to antenna ``port``."""
        self._front_end.select_port(port)

    def scan(self):
        """Tag UIDs on the selected port."""
        return self._front_end.scan()

    def write(self, data):
        """Send ``data`` on USB CDC; returns the bytes taken (None counts as all)."""
        return self._stdout.write(data)

    def read(self):
        """Bytes waiting on USB CDC (at most 256 per call), without blocking."""
        out = bytearray()
        while len(out) < 256 and self._poll.poll(0):
            chunk = self._stdin.read(1)
            if not chunk:
                break
            out.extend(chunk)
        return bytes(out)

    def ticks_ms(self):
        """``time.ticks_ms()`` (wraps; the reader uses ``ticks_diff``)."""
        return self._ticks()
