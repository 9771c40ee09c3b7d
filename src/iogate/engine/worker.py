"""The engine's side of a run in another process: serving sessions over a pipe.

A process forked for one session (:func:`serve_one`) or a worker of the fork server
(:func:`serve`, one session after another) runs each session with
:func:`iogate.engine.session.drive`, the loop every run shares, and sends the runner its
progress (with the intervals completed since the last message), then its result or its
fault. It ignores SIGINT, SIGTERM and SIGHUP (the runner decides what an interruption means
and sends ``cancel``) and dies with the process that forked it. What it takes on from the
runner (working directory, umask, resource limits) is :func:`process_state`.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import resource
import signal
import traceback
from multiprocessing.connection import Connection

from iogate.engine.session import Session, drive
from iogate.errors import EngineError
from iogate.interrupts import SIGNALS
from iogate.job import JobSpec
from iogate.results import Fault, Interval

# How often the engine's process looks for a cancel while the engine runs: the bound on how
# late an interruption reaches the workers (they then stop within one request each).
SLICE_S = 0.02
_DIRECTIONS = ("read", "write", "trim")  # the directions with a series
_LIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))

State = tuple[str, int, list[tuple[int, tuple[int, int]]]]


def die_with(parent: int) -> None:
    """Die with ``parent`` (``PR_SET_PDEATHSIG``); exit at once when it is already gone."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def process_state() -> State:
    """What a worker takes on from the runner: working directory, umask, resource limits."""
    umask = os.umask(0o022)
    os.umask(umask)
    limits = []
    for limit in _LIMITS:
        with contextlib.suppress(OSError, ValueError):
            limits.append((limit, resource.getrlimit(limit)))
    return os.getcwd(), umask, limits


def take_state(state: State) -> None:
    cwd, umask, limits = state
    os.chdir(cwd)
    os.umask(umask)
    for limit, value in limits:
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(limit, value)


def serve_one(conn: Connection, specs: list[JobSpec], poll_interval: float,
              parent: int | None) -> None:
    """Run the session and report. A child forked for it (``parent``: the pid of the process
    that forked it, which it dies with) never returns (os._exit) and never runs the parent's
    cleanup (atexit handlers, pytest's finalizers, buffered output); a worker (``parent``
    None, detached already) returns after the result, to serve the next session."""
    try:
        if parent is not None:
            _detach(parent)
        _session(conn, specs, poll_interval)
    except BaseException as exc:  # everything is reported to the parent
        with contextlib.suppress(BaseException):
            if isinstance(exc, EngineError):
                conn.send(("error", exc.errno, str(exc)))
            else:
                # not an engine error but a bug: the whole traceback, to be reported
                conn.send(("error", errno.EIO, "engine process failed:\n"
                           + "".join(traceback.format_exception(exc)).strip()))
        os._exit(1)
    if parent is not None:
        os._exit(0)


def serve(conn: Connection, state: State, parent: int) -> None:
    """A worker's life: sessions one after another, each asked for with ("run", specs,
    poll_interval), until its pipe reads end of file. A late cancel (of a session that ended
    meanwhile) is ignored. After an error it reports, it exits like a one-session child.
    Never returns (os._exit)."""
    try:
        _detach(parent)
        take_state(state)
    except BaseException:
        os._exit(1)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        except BaseException:  # an undecodable request: nothing to serve
            os._exit(1)
        if message[0] == "run":
            serve_one(conn, message[1], message[2], parent=None)


def _detach(parent: int) -> None:
    for signum in (*SIGNALS, signal.SIGXFSZ):
        signal.signal(signum, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    die_with(parent)


def _session(conn: Connection, specs: list[JobSpec], poll_interval: float) -> None:
    seen: dict[tuple[int, str], int] = {}
    with Session(specs) as session:
        session.start()

        def cancelled() -> bool:
            return conn.poll(0) and conn.recv()[0] == "cancel"

        def fault(found: Fault) -> None:
            conn.send(("fault", found, session.poll()))
            os._exit(0)  # the stuck worker would keep the session from ever ending

        drive(session, slice_s=SLICE_S, report_s=poll_interval, should_stop=cancelled,
              on_progress=lambda p: conn.send(("progress", p, _new_intervals(session, seen))),
              on_fault=fault)
        conn.send(("progress", session.poll(), _new_intervals(session, seen)))
        conn.send(("result", session.collect()))


def _new_intervals(session: Session, seen: dict[tuple[int, str], int]
                   ) -> dict[tuple[int, str], list[Interval]]:
    new: dict[tuple[int, str], list[Interval]] = {}
    for job in range(session.jobs):
        for direction in _DIRECTIONS:
            items = session.series(job, direction)
            start = seen.get((job, direction), 0)
            if len(items) > start:
                new[(job, direction)] = items[start:]
                seen[(job, direction)] = len(items)
    return new
