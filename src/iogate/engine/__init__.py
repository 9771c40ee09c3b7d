"""The I/O engine: bindings to libiogate (native) and the run loop (session)."""

from iogate.engine.session import JobSpec, Progress, Session, run

__all__ = ["JobSpec", "Progress", "Session", "run"]
