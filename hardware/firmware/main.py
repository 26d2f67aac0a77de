"""Boot file of the reader board (MicroPython on a Raspberry Pi Pico).

Runs the reader loop of stud_reader.reader forever on USB CDC, with a watchdog.
Nothing may print: the USB serial port carries the binary protocol.

Safe boot: with PIN_SAFE_BOOT tied to GND at power-up, main.py returns at once and
the REPL stays usable (mpremote, Thonny): the running firmware disables Ctrl-C,
because the host's frames contain 0x03 bytes.
"""

import time

import config
import machine
from stud_reader.hal import PicoHal
from stud_reader.mfrc522 import MuxedFrontEnd
from stud_reader.pn5180 import PN5180FrontEnd
from stud_reader.protocol import FAULT_WATCHDOG_RESET
from stud_reader.reader import Reader


def safe_boot_requested():
    """True if the safe-boot pin is pulled to GND."""
    pin = machine.Pin(config.PIN_SAFE_BOOT, machine.Pin.IN, machine.Pin.PULL_UP)
    time.sleep_ms(5)
    return pin.value() == 0


def build_reader():
    """The reader on this board's pins, as config.py says."""
    out = machine.Pin.OUT
    spi = machine.SPI(
        config.SPI_ID, baudrate=config.SPI_BAUD, polarity=0, phase=0,
        sck=machine.Pin(config.PIN_SCK), mosi=machine.Pin(config.PIN_MOSI),
        miso=machine.Pin(config.PIN_MISO),
    )
    cs = machine.Pin(config.PIN_CS, out, value=1)
    rst = machine.Pin(config.PIN_RST, out, value=1)
    mux = [machine.Pin(pin, out, value=0) for pin in config.PIN_MUX]
    if getattr(config, "FRONT_END", "mfrc522") == "pn5180":
        busy = machine.Pin(config.PIN_BUSY, machine.Pin.IN, machine.Pin.PULL_DOWN)
        front_end = PN5180FrontEnd(spi, cs, rst, mux, config.ANTENNA_COUNT, busy=busy.value,
                                   slots=getattr(config, "PN5180_SLOTS", 16))
    else:
        front_end = MuxedFrontEnd(spi, cs, rst, mux, config.ANTENNA_COUNT)
    return Reader(
        PicoHal(front_end), config.READER_ID, config.ANTENNA_COUNT,
        arrive_scans=config.ARRIVE_SCANS, leave_scans=config.LEAVE_SCANS,
        heartbeat_ms=config.HEARTBEAT_MS, inventory_ms=config.INVENTORY_MS,
    )


def run():
    """Boot (HELLO, a watchdog-reset fault if that is why we boot) and loop."""
    wdt = machine.WDT(timeout=config.WATCHDOG_MS)
    reader = build_reader()
    wdt.feed()
    reset_fault = None
    if machine.reset_cause() == machine.WDT_RESET:
        reset_fault = (FAULT_WATCHDOG_RESET, "watchdog reset")
    reader.boot(reset_fault)
    try:
        while True:
            reader.step()
            wdt.feed()
    except Exception:  # a bug: reboot clean (the host sees HELLO at seq 0 and reconciles)
        # An uncaught exception would print its traceback onto the wire.
        time.sleep_ms(100)
        machine.reset()


if not safe_boot_requested():
    run()
