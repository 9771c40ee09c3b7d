"""``python -m iogate`` is the ``iogate`` command."""

from iogate.cli import entry

entry()
