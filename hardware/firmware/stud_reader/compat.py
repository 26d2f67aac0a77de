"""What differs between MicroPython and CPython, in one place.

The firmware is written in the subset of Python both run: no dataclasses, no
annotations, no f-string ``=``. ``const()`` is MicroPython's compile-time
constant; on CPython it is the identity.
"""

try:
    from micropython import const
except ImportError:  # CPython (host tests)

    def const(value):
        """CPython stand-in for MicroPython's ``const``: the value itself."""
        return value


try:
    from time import ticks_diff
except ImportError:  # CPython: the host HAL's ticks never wrap

    def ticks_diff(new, old):
        """Milliseconds from ``old`` to ``new`` (MicroPython's wraps; the host's do not)."""
        return new - old


__all__ = ["const", "ticks_diff"]
