"""``python -m iogate`` is the ``iogate`` command."""

import sys

from iogate.cli import main

sys.exit(main())
