"""The native engine's I/O engines, as the library describes them: name, what each is,
how many requests it keeps in flight, whether it does I/O at all, whether it can
bypass the page cache (O_DIRECT) and whether it passes an I/O priority per request.

Everything above the engine that names or checks an ioengine (the suite model, the
schema, the fio importer and exporter) reads this catalog rather than a list of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from iogate import errors
from iogate.engine import native

__all__ = ["Engine", "engines", "get", "names", "spoken"]


@dataclass(frozen=True)
class Engine:
    """One I/O engine of the library."""

    name: str
    summary: str  # one line: what it issues
    max_depth: int  # requests one job keeps in flight at most; 1 for a synchronous engine
    does_io: bool  # False for an engine that completes requests without touching a file
    direct: bool = True  # whether ``direct`` (O_DIRECT) can apply to it
    cmdprio: bool = False  # whether it gives single requests an I/O priority (cmdprio_*)
    ring: bool = False  # whether it takes io_uring's fast paths (fixedbufs, sqthread_poll...)

    @property
    def queued(self) -> bool:
        return self.max_depth > 1


@cache
def engines() -> tuple[Engine, ...]:
    """Every engine, in the library's order (iog_engine_describe)."""
    return tuple(Engine(info.name.decode(), info.summary.decode(), int(info.max_depth),
                        bool(info.flags & native.ENGINE_DOES_IO),
                        not info.flags & native.ENGINE_NO_DIRECT,
                        bool(info.flags & native.ENGINE_CMDPRIO),
                        bool(info.flags & native.ENGINE_RING))
                 for info in native.engine_infos())


def names() -> tuple[str, ...]:
    return tuple(e.name for e in engines())


def get(name: str) -> Engine | None:
    return next((e for e in engines() if e.name == name), None)


def spoken_where(capability: str, conjunction: str = "and") -> str:
    """The names of the engines that have a capability (a boolean field of Engine)."""
    return errors.spoken([e.name for e in engines() if getattr(e, capability)], conjunction)


def spoken(conjunction: str = "or") -> str:
    """The names as a sentence lists them: 'io_uring, libaio, psync, sync or null'."""
    return errors.spoken(names(), conjunction)
