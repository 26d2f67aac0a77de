"""A simulated RF front end: the tags lying on each antenna port, set by a script.

It stands where ``mfrc522.MultiFrontEnd`` stands on the board (``select_port`` and
``scan``), so that the reader's scan loop runs unchanged on the host in tests (and
on a board with no antennas fitted, for a bench check of the USB link).

``place`` / ``remove`` may be called from another thread than the scan loop: each
port's tag list is replaced whole, never edited in place, so a scan sees the list
before or after a change, never half of one. Optional faults: a per-tag
``dropout`` probability (stacked cards missing a scan) and failing ports.
"""


class SimulatedFrontEnd:
    """Tags per antenna port; ``scan`` returns the UIDs on the selected port."""

    def __init__(self, ports=16, dropout=0.0, rng=None):
        self.ports = ports
        self.dropout = dropout
        self.rng = rng
        self._tags = [() for _ in range(ports)]
        self._failing = [False] * ports
        self.selected = None
        self.scans = 0

    def place(self, port, uid):
        """Lay a tag (``bytes`` UID) on ``port``; the next scan of the port sees it."""
        uid = bytes(uid)
        if uid not in self._tags[port]:
            self._tags[port] = self._tags[port] + (uid,)

    def remove(self, port, uid):
        """Take a tag off ``port`` (no error if it was not there)."""
        uid = bytes(uid)
        self._tags[port] = tuple(t for t in self._tags[port] if t != uid)

    def tags(self, port):
        """The tags lying on ``port``."""
        return self._tags[port]

    def fail(self, port, failing=True):
        """Make ``scan`` of ``port`` raise (a front end that stops answering)."""
        self._failing[port] = failing

    def select_port(self, port):
        """Route the front end to ``port``."""
        if not 0 <= port < self.ports:
            raise ValueError("no such port")
        self.selected = port

    def scan(self):
        """The UIDs that answer on the selected port in this scan."""
        port = self.selected
        if port is None:
            raise RuntimeError("no port selected")
        self.scans += 1
        if self._failing[port]:
            raise OSError("front end does not answer")
        tags = self._tags[port]
        if self.dropout > 0.0 and self.rng is not None:
            return [uid for uid in tags if self.rng.random() >= self.dropout]
        return list(tags)
