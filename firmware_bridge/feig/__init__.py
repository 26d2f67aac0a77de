"""The FEIG ISC reader kind (docs/readers-feig.md): ``protocol`` (frames, CRC, the
inventory, the sans-I/O decoder; pure), ``link`` (the poller, pure, and the serial
link), ``emulator`` (an emulated reader on a pty)."""
