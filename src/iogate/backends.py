"""What runs the job specs of a case: the native engine, or fio (on this machine or a fleet).

The runner calls an engine with the signature of :func:`iogate.engine.isolated.run`; this
module turns the command line's choice (``--backend``, ``--hosts``) into one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from iogate.engine import isolated
from iogate.errors import IogateError
from iogate.results import RunResult

if TYPE_CHECKING:
    from iogate.fio.hosts import Host

BACKENDS = ("native", "fio")

Engine = Callable[..., RunResult]


class BackendError(IogateError):
    """A backend choice that cannot work (an unknown name, hosts without fio)."""


def engine_for(name: str, hosts: Sequence[Host] = ()) -> Engine:
    """The engine for ``--backend NAME`` (and ``--hosts``, which needs fio)."""
    if name not in BACKENDS:
        raise BackendError(f"unknown backend '{name}': use {' or '.join(BACKENDS)}")
    if name == "native":
        if hosts:
            raise BackendError("running on hosts goes through fio's client and server: add "
                               "--backend fio (pytest: --iogate-backend fio)")
        return isolated.run
    return _fio_engine(list(hosts))


def _fio_engine(hosts: list[Host]) -> Engine:
    from iogate.fio import backend

    def run(specs: list[Any], on_progress: Callable[..., None] | None = None,
            should_stop: Callable[[], bool] | None = None,
            stop_when: Callable[..., str | None] | None = None,
            **_: Any) -> RunResult:
        # fio's results arrive when it ends: fail_fast (stop_when) judges the whole run.
        fio_run = backend.run(specs, hosts=hosts, on_progress=on_progress,
                              should_stop=should_stop)
        fio_run.result.hosts = dict(fio_run.hosts)
        return fio_run.result

    return run
