"""``python -m table_controller`` runs the ``stud-table`` command line."""

import sys

from table_controller.tools.cli import main

sys.exit(main())
