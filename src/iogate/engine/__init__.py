"""The I/O engine: bindings to libiogate (native) and the run loop (session)."""

from iogate.engine.session import BsEntry, JobSpec, Progress, Session, Zone, run

__all__ = ["BsEntry", "JobSpec", "Progress", "Session", "Zone", "run"]
