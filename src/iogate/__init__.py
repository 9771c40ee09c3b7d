"""iogate: declarative storage test suites that gate builds on I/O service-level objectives."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("iogate")
except metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
