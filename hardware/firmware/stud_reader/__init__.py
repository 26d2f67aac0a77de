"""Reference reader firmware of the stud table (MicroPython; imports under CPython too).

Modules: ``protocol`` (frames of docs/protocol.md), ``scan`` (per-antenna debounce),
``reader`` (the main loop: HELLO, scans, heartbeat, inventory, host commands),
``hal`` (the hardware interface and the Raspberry Pi Pico implementation),
``mfrc522`` (the RF front-end driver), ``sim`` (a simulated front end for the host).
"""

FIRMWARE_VERSION = (1, 0, 0)
"""Major, minor, patch: announced in HELLO."""
