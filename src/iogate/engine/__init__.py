"""The I/O engine: bindings to libiogate (native) and the run loop (session).

The names below are loaded on first use, so that the low-level bindings
(``iogate.engine.native``) can be imported on their own, by the histogram among others,
without the run loop that depends on them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iogate.engine.session import BsEntry, JobSpec, Progress, Session, Zone, run

__all__ = ["BsEntry", "JobSpec", "Progress", "Session", "Zone", "run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("iogate.engine.session"), name)
    raise AttributeError(f"module 'iogate.engine' has no attribute {name!r}")
