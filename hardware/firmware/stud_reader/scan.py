"""Per-antenna debounce: which tags the reader *reports*, from what each scan saw.

Semantics (the same as ``firmware_bridge.emulator.FirmwareModel`` and
hardware/readers.md "Stacked cards drop out"):

* a tag becomes reported (TAG_ARRIVED) once it was seen in ``arrive_scans``
  consecutive scans of its antenna (1: at the first scan that sees it, as the
  emulator does; arrivals are the reliable direction);
* a reported tag is dropped (TAG_LEFT) once it was missed in ``leave_scans``
  consecutive scans (the emulator's ``leave_after_misses``): stacked cards miss a
  scan or two without moving;
* at most 64 tags are reported per antenna (an INVENTORY holds no more); a tag
  beyond that is *withheld*, and the caller reports that as a fault, never silently.

Pure: no I/O, no clock. UIDs are ``bytes``. Lists, not dicts, keep the reported
order stable on MicroPython (whose dicts do not promise insertion order).
"""

from stud_reader.protocol import MAX_INVENTORY_TAGS


class AntennaTags:
    """The debounce state of one antenna."""

    def __init__(self, arrive_scans=1, leave_scans=1):
        if arrive_scans < 1 or leave_scans < 1:
            raise ValueError("arrive_scans and leave_scans must be at least 1")
        self.arrive_scans = arrive_scans
        self.leave_scans = leave_scans
        self.reported = []
        """Tags reported now, in the order they arrived."""
        self._misses = {}  # reported uid -> consecutive scans without it
        self._sightings = {}  # not yet reported uid -> consecutive scans with it
        self.withheld = 0
        """Tags seen in the last scan but not reported because 64 already are."""

    def clear(self):
        """Forget everything (boot): the next scans report the tags anew."""
        self.reported = []
        self._misses = {}
        self._sightings = {}
        self.withheld = 0

    def update(self, seen):
        """Apply one scan's UIDs; return ``(arrived, left)``, lists of UIDs in order."""
        seen_now = []
        for raw in seen:
            uid = bytes(raw)
            if uid not in seen_now:  # a front end may list a tag twice
                seen_now.append(uid)
        arrived = []
        left = []
        self.withheld = 0
        sightings = {}
        for uid in seen_now:
            if uid in self.reported:
                self._misses.pop(uid, None)
                continue
            count = self._sightings.get(uid, 0) + 1
            if count < self.arrive_scans:
                sightings[uid] = count
            elif len(self.reported) < MAX_INVENTORY_TAGS:
                self.reported.append(uid)
                arrived.append(uid)
            else:
                self.withheld += 1
                sightings[uid] = count
        # A tag missed before reaching arrive_scans starts again from zero.
        self._sightings = sightings
        for uid in list(self.reported):
            if uid in seen_now:
                continue
            misses = self._misses.get(uid, 0) + 1
            if misses >= self.leave_scans:
                self.reported.remove(uid)
                self._misses.pop(uid, None)
                left.append(uid)
            else:
                self._misses[uid] = misses
        return arrived, left
