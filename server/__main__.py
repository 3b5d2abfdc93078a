"""``python -m server`` is ``castell-server``."""

import sys

from server.cli import main

sys.exit(main())
