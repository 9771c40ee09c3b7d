"""iogate: declarative storage test suites that gate builds on I/O service-level objectives."""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # The version is looked up when first asked for: importing the package stays cheap, so
    # the ``iogate`` command handles interrupts from its first moments.
    if name != "__version__":
        raise AttributeError(f"module 'iogate' has no attribute {name!r}")
    from importlib import metadata

    try:
        version = metadata.version("iogate")
    except metadata.PackageNotFoundError:  # running from a source tree
        version = "0.0.0+source"
    globals()["__version__"] = version
    return version
