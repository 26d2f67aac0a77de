"""What the two RF drivers share: one module per antenna port behind CD74HC4067
multiplexers, a power-up reset of them all, port selection, and a module that
failed taken back by the next scan of its port.

``mfrc522.MuxedFrontEnd`` and ``pn5180.PN5180FrontEnd`` are this with their chip's
inventory. No hardware is touched here: the pins, the chip object and the
``sleep_ms`` come from the driver (the host tests replace its ``time``).
"""


class FrontEndError(OSError):
    """The module on the selected port does not answer or misbehaves."""


class MuxedPorts:
    """The port half of a front end (the HAL's ``select_port`` and ``scan``); a driver
    subclasses it and gives :meth:`inventory_selected`."""

    def __init__(self, chip, cs, rst, select_pins, ports, *, settle_ms, sleep_ms):
        self.chip = chip
        self.rst = rst
        self.select_pins = select_pins
        self.ports = ports
        self._ready = [False] * ports
        self._port = 0
        cs(1)
        rst(0)  # hard power-down pulse: every module starts from reset
        sleep_ms(10)
        rst(1)
        sleep_ms(settle_ms)
        for port in range(ports):
            self.select_port(port)
            try:
                self.chip.init()
                self._ready[port] = True
            except FrontEndError:
                pass  # reported by the first scan of the port (READER_FAULT 0x03)

    def select_port(self, port):
        """Set the multiplexers' address: the module of ``port`` gets the chip select
        (and, on a PN5180 board, its BUSY line)."""
        if not 0 <= port < self.ports:
            raise ValueError("no such port")
        for bit in range(4):
            self.select_pins[bit]((port >> bit) & 1)
        self._port = port

    def scan(self):
        """UIDs on the selected port; a module that failed is re-initialised first
        (a module re-seated on its connector comes back without a reboot)."""
        port = self._port
        if not self._ready[port]:
            self.chip.init()  # raises FrontEndError while it still fails
            self._ready[port] = True
        try:
            return self.inventory_selected()
        except FrontEndError:
            self._ready[port] = False
            raise

    def inventory_selected(self):
        """The chip's inventory of the selected port (the driver's own)."""
        raise NotImplementedError
