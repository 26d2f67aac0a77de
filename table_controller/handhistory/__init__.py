"""Hand histories: PHH (the phh-std format PokerKit reads) in and out (docs/phh.md).

* :func:`read_phh` parses a PHH file (variant ``F7S``, ``FR`` or ``F7S/8``) into a
  :class:`StudHand`;
* :func:`import_hand` turns it into a physical deal and a table script;
* :func:`export_script` turns the hands of a table script or journal back into
  :class:`StudHand` records, and :func:`write_phh` / :func:`write_phhs` write them.
"""

from table_controller.handhistory.exporter import export_events, export_file, export_script
from table_controller.handhistory.importer import ImportedHand, import_hand, table_op
from table_controller.handhistory.model import Bet, Deal, PhhError, StudHand
from table_controller.handhistory.reader import read_phh
from table_controller.handhistory.writer import write_phh, write_phhs

__all__ = [
    "Bet",
    "Deal",
    "ImportedHand",
    "PhhError",
    "StudHand",
    "export_events",
    "export_file",
    "export_script",
    "import_hand",
    "read_phh",
    "table_op",
    "write_phh",
    "write_phhs",
]
