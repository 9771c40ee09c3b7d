"""Running the engine in a child process, so that nothing it does can take the runner down.

The engine is C code doing real I/O: a bug can crash it, a device can wedge one of its threads
inside a system call for good, and a request past its ``io_timeout`` may never complete. None of
that may end the run of a whole suite, so every engine session runs in a child process of its
own and talks to the runner over a pipe. The child is forked by a small fork server
(:mod:`iogate.engine.forkserver`), so that starting it costs the same however much the runner
holds; when no server can be started, the runner forks the child itself.

- the child sends progress (with the intervals of the series completed since the last
  message, so that the runner can judge a run as it goes), then the result, then exits;
- the runner sends ``cancel`` when it is interrupted or decides to stop;
- a child that dies without a result is a crash (:class:`EngineCrashed`, with the signal);
- a child that reports a fault (an I/O past its timeout) is killed at once: its stuck thread
  would never let the session end (:class:`EngineFault`, naming the I/O).

The child ignores SIGINT and SIGTERM (the runner decides what an interruption means and
cancels it) and dies with its parent (``PR_SET_PDEATHSIG``; the fork server dies with the
runner in turn), so an aborted runner never leaves I/O running. SIGXFSZ is ignored in the
child so that a file size limit is an EFBIG error.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import math
import os
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, Pipe
from typing import Any, Protocol

from iogate.engine.session import JobSpec, Progress, Session
from iogate.errors import EngineError
from iogate.results import Fault, Interval, RunResult

# How often the child looks for a cancel while the engine runs: the bound on how late an
# interruption reaches the workers (they then stop within one request each).
CHILD_SLICE_S = 0.02
# How long a cancelled child may take to hand its result over before it counts as hung.
CANCEL_GRACE_S = 30.0
_DIRECTIONS = ("read", "write")  # the directions with a series


class SeriesSource(Protocol):
    """What a judge of a running session reads: the intervals completed so far."""

    def series(self, job: int, direction: str) -> list[Interval]: ...


@dataclass
class Partial:
    """What is known of a run that ended without a result: the last progress seen."""

    progress: Progress | None = None

    def metrics(self) -> dict[str, float]:
        """Counts so far (counted I/O only), under their metric paths; empty before any
        progress."""
        p = self.progress
        if p is None:
            return {}
        out: dict[str, float] = {}
        for i, direction in enumerate(("read", "write")):
            out[f"{direction}.ios"] = float(p.ios[i])
            out[f"{direction}.bytes"] = float(p.bytes[i])
        out["errors"] = float(p.errors)
        return out


class EngineCrashed(EngineError):
    """The engine's process died without handing over a result."""

    def __init__(self, status: int, partial: Partial, detail: str = "") -> None:
        self.signal = -status if status < 0 else 0  # 0: it exited (with `status`)
        self.partial = partial
        if self.signal:
            what = f"killed by {_signal_name(self.signal)} (signal {self.signal})"
        else:
            what = f"exited with status {status} without a result"
        elapsed = (f" after {partial.progress.elapsed_ns / 1e9:.2f} s"
                   if partial.progress is not None else "")
        super().__init__(errno.EIO, f"the engine crashed: {what}{elapsed}"
                                    + (f": {detail}" if detail else ""))


class EngineFault(EngineError):
    """The engine reported a fault (an I/O past its timeout); the session was abandoned."""

    def __init__(self, fault: Fault, partial: Partial) -> None:
        self.fault = fault
        self.partial = partial
        super().__init__(errno.ETIMEDOUT, fault.describe())


class EngineAborted(KeyboardInterrupt):
    """A second interrupt: the engine was killed without waiting for its result."""

    def __init__(self, partial: Partial) -> None:
        super().__init__("aborted by a second interrupt")
        self.partial = partial


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


@dataclass
class _Series:
    """The parent's copy of the series, grown by the intervals each progress message carries."""

    intervals: dict[tuple[int, str], list[Interval]] = field(default_factory=dict)

    def series(self, job: int, direction: str) -> list[Interval]:
        return list(self.intervals.get((job, direction), []))

    def extend(self, new: dict[tuple[int, str], list[Interval]]) -> None:
        for key, items in new.items():
            self.intervals.setdefault(key, []).extend(items)


def run(specs: list[JobSpec], on_progress: Callable[[Progress], None] | None = None,
        poll_interval: float = 0.2, should_stop: Callable[[], bool] | None = None,
        stop_when: Callable[[SeriesSource], str | None] | None = None) -> RunResult:
    """Run the jobs like :func:`iogate.engine.session.run`, in a child process.

    Same contract (interruptions give a partial result with ``interrupted``; ``stop_when``
    judges the series as it grows), plus: a crash of the child raises :class:`EngineCrashed`,
    a fault :class:`EngineFault`, and a second KeyboardInterrupt while the child winds down
    kills it and raises :class:`EngineAborted`.
    """
    if not specs:
        raise EngineError(errno.EINVAL, "a run needs at least one job")
    for spec in specs:
        spec.to_native()  # invalid specs fail here, with the library's message, not in the child
    parent_end, child_end = Pipe(duplex=True)
    try:
        child = _start(parent_end, child_end, specs, poll_interval)
    finally:
        child_end.close()
    with parent_end:
        return _supervise(child, parent_end, on_progress, should_stop, stop_when)


class _Child(Protocol):
    """The process running a session: its pid, and how to learn its end."""

    pid: int

    def reap(self) -> int:
        """Wait for its end; its status as subprocess reports it (exit code, or minus the
        signal that killed it)."""

    def kill(self) -> int:
        """Kill it (SIGKILL) and reap it."""


@dataclass
class _Forked:
    """A child this process forked itself."""

    pid: int

    def reap(self) -> int:
        return _reap(self.pid)

    def kill(self) -> int:
        return _kill(self.pid)


@dataclass
class _Served:
    """A child the fork server forked: the server reaps it and reports its status."""

    pid: int
    server: Any  # iogate.engine.forkserver.ForkServer

    def reap(self) -> int:
        status: int = self.server.wait(self.pid)
        return status

    def kill(self) -> int:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        return self.reap()


def _start(parent_end: Connection, child_end: Connection, specs: list[JobSpec],
           poll_interval: float) -> _Child:
    """Start the process that runs the session: through the fork server when there is one,
    else forked from here."""
    from iogate.engine import forkserver

    if forkserver.enabled():
        served = forkserver.spawn(child_end.fileno(), specs, poll_interval)
        if served is not None:
            return _Served(served[1], served[0])
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, which never returns
        parent_end.close()
        _child(child_end, specs, poll_interval, parent=parent)
    return _Forked(pid)


def _supervise(child: _Child, conn: Connection, on_progress: Callable[[Progress], None] | None,
               should_stop: Callable[[], bool] | None,
               stop_when: Callable[[SeriesSource], str | None] | None) -> RunResult:
    partial = Partial()
    series = _Series()
    interrupted = False
    stopped: str | None = None
    cancelled = False
    reaped = False

    def cancel() -> None:
        nonlocal cancelled
        if not cancelled:
            cancelled = True
            with contextlib.suppress(OSError):
                conn.send(("cancel",))

    try:
        while True:
            try:
                if not conn.poll(CANCEL_GRACE_S if cancelled else None):
                    raise EngineCrashed(child.kill(), partial, "it did not stop when cancelled")
                message = _receive(conn)
            except KeyboardInterrupt:
                if interrupted:  # the second one: do not wait for anything
                    child.kill()
                    reaped = True
                    raise EngineAborted(partial) from None
                interrupted = True
                cancel()
                continue
            if message is None:  # the child is gone without a result
                reaped = True
                raise EngineCrashed(child.reap(), partial)
            kind = message[0]
            if kind == "progress":
                partial.progress = message[1]
                series.extend(message[2])
                if on_progress is not None:
                    on_progress(message[1])
                if not cancelled:
                    if should_stop is not None and should_stop():
                        interrupted = True
                        cancel()
                    elif stop_when is not None and (reason := stop_when(series)):
                        stopped = reason
                        cancel()
            elif kind == "result":
                result: RunResult = message[1]
                result.interrupted = interrupted
                result.stopped = stopped
                return result
            elif kind == "fault":
                partial.progress = message[2]
                child.kill()
                reaped = True
                raise EngineFault(message[1], partial)
            elif kind == "error":
                raise EngineError(message[1], message[2])
    finally:
        if not reaped:
            child.reap()


def _receive(conn: Connection) -> tuple[Any, ...] | None:
    """One message, or None at end of file. SIGINT is held off while a message is read,
    so an interrupt cannot leave half a message in the pipe."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return conn.recv()  # type: ignore[no-any-return]
    except (EOFError, ConnectionError):
        return None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _kill(pid: int) -> int:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return _reap(pid)


def _reap(pid: int) -> int:
    """The child's status as subprocess reports it: the exit code, or minus the signal."""
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0
        return os.waitstatus_to_exitcode(status)


# -- the child ----------------------------------------------------------------------------


def _child(conn: Connection, specs: list[JobSpec], poll_interval: float, parent: int) -> None:
    """Run the session and report; never returns (os._exit), never runs the parent's
    cleanup (atexit handlers, pytest's finalizers, buffered output). ``parent`` is the pid
    of the process that forked it, which it dies with."""
    status = 0
    try:
        _detach(parent)
        _serve(conn, specs, poll_interval)
    except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
        status = 1
        with contextlib.suppress(BaseException):
            if isinstance(exc, EngineError):
                conn.send(("error", exc.errno, str(exc)))
            else:
                # not an engine error but a bug: the whole traceback, to be reported
                conn.send(("error", errno.EIO, "engine process failed:\n"
                           + "".join(traceback.format_exception(exc)).strip()))
    finally:
        os._exit(status)


def _detach(parent: int) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGXFSZ):
        signal.signal(signum, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _serve(conn: Connection, specs: list[JobSpec], poll_interval: float) -> None:
    seen: dict[tuple[int, str], int] = {}
    with Session(specs) as session:
        session.start()
        cancelled = False
        last_report = -math.inf  # the first progress goes out at once
        while True:
            done = session.wait(CHILD_SLICE_S)
            clock = time.monotonic()
            if not cancelled and conn.poll(0):
                if conn.recv()[0] == "cancel":
                    cancelled = True
                    session.cancel()
            fault = session.fault()
            if fault is not None:
                conn.send(("fault", fault, session.poll()))
                os._exit(0)  # the stuck worker would keep the session from ever ending
            if done:
                break
            if clock - last_report >= poll_interval:
                last_report = clock
                conn.send(("progress", session.poll(), _new_intervals(session, seen)))
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

