"""What runs the job specs of a case: the registry of backends.

A backend is found by name (``--backend NAME``; pytest ``--iogate-backend NAME``) among
those plugins declare through the ``iogate_backends`` hook. The native engine
(:mod:`iogate.engine.isolated`) and fio (:mod:`iogate.fio.backend`) register there as any
plugin would. Every engine has the signature of :func:`iogate.engine.isolated.run`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pluggy

from iogate.errors import IogateError
from iogate.results import RunResult

if TYPE_CHECKING:
    from iogate.fio.hosts import Host

Engine = Callable[..., RunResult]
DEFAULT = "native"


class BackendError(IogateError):
    """A backend choice that cannot work (an unknown name, hosts it cannot run on)."""


@dataclass(frozen=True)
class Backend:
    """One way of running job specs: its name, a line for ``--help``, and how to make its
    engine for a fleet of hosts (empty: this machine), when it can run on one."""

    name: str
    help: str
    make: Callable[[Sequence[Host]], Engine]
    fleets: bool = False


def available(pm: pluggy.PluginManager) -> dict[str, Backend]:
    """Every backend the plugins of ``pm`` declare, by name; a name declared twice is
    refused."""
    out: dict[str, Backend] = {}
    for answer in reversed(pm.hook.iogate_backends()):
        for backend in answer or ():
            if backend.name in out:
                raise BackendError(f"backend '{backend.name}' is declared twice")
            out[backend.name] = backend
    return out


def engine_for(pm: pluggy.PluginManager, name: str, hosts: Sequence[Host] = ()) -> Engine:
    """The engine for ``--backend NAME`` (and ``--hosts``, for a backend that runs fleets)."""
    known = available(pm)
    if name not in known:
        raise BackendError(f"unknown backend '{name}': use {' or '.join(sorted(known))}")
    backend = known[name]
    if hosts and not backend.fleets:
        fleets = [b.name for b in known.values() if b.fleets]
        raise BackendError(f"the {name} backend runs on this machine only; running on hosts "
                           f"needs {' or '.join(fleets) or 'a backend that runs fleets'}: add "
                           f"--backend {fleets[0] if fleets else 'NAME'} (pytest: "
                           f"--iogate-backend {fleets[0] if fleets else 'NAME'})")
    return backend.make(list(hosts))
