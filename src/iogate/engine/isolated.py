"""Running the engine in another process, so that nothing it does can take the runner down.

The engine is C code doing real I/O: a bug can crash it, a device can wedge one of its threads
inside a system call for good, and a request past its ``io_timeout`` may never complete. None of
that may end the run of a whole suite, so every engine session runs in another process and
talks to the runner over a pipe. That process is a worker forked by a small fork server
(:mod:`iogate.engine.forkserver`), so that starting it costs the same however much the runner
holds, and it serves one session after another for as long as each ends with its result: a
sweep of thousands of short cases pays for one fork, not one per case. Any other end (a
crash, a fault, an error, a kill, an exception in the runner) retires the worker and the next
session gets a new one. When no server can be started, the runner forks a child per session
itself. Per session:

- the engine's process sends progress (with the intervals of the series completed since the
  last message, so that the runner can judge a run as it goes), then the result;
- the runner sends ``cancel`` when it is interrupted or decides to stop;
- a process that dies without a result is a crash (:class:`EngineCrashed`, with the signal);
- one that reports a fault (an I/O past its timeout) is killed at once: its stuck thread
  would never let the session end (:class:`EngineFault`, naming the I/O).

The engine's process ignores SIGINT, SIGTERM and SIGHUP (the runner decides what an interruption
means and cancels it) and dies with its parent (``PR_SET_PDEATHSIG``; the fork server dies
with the runner in turn), so an aborted runner never leaves I/O running. SIGXFSZ is ignored
there so that a file size limit is an EFBIG error.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, Pipe
from typing import Any, Protocol

from iogate.backends import Backend
from iogate.engine import forkserver, worker
from iogate.engine.session import job_struct
from iogate.errors import EngineError
from iogate.hooks import hookimpl
from iogate.interrupts import read_whole
from iogate.job import JobSpec
from iogate.results import Fault, Interval, Progress, RunResult, SeriesSource

# How long a cancelled child may take to hand its result over before it counts as hung.
CANCEL_GRACE_S = 30.0


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
        out["trim.ios"] = float(p.trim_ios)
        out["trim.bytes"] = float(p.trim_bytes)
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
        job_struct(spec)  # invalid specs fail here, with the library's message, not the child
    served = _take_worker()
    if served is not None:
        return _run_on(served, specs, on_progress, poll_interval, should_stop, stop_when)
    parent_end, child_end = Pipe(duplex=True)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, which never returns
        parent_end.close()
        worker.serve_one(child_end, specs, poll_interval, parent=parent)
    child_end.close()
    with parent_end:
        return _supervise(_Forked(pid), parent_end, on_progress, should_stop, stop_when)


class _Child(Protocol):
    """The process running a session: its pid, and how to learn its end. A persistent one
    serves the next session too when this one ended with its result."""

    pid: int
    persistent: bool

    def reap(self) -> int:
        """Wait for its end; its status as subprocess reports it (exit code, or minus the
        signal that killed it)."""

    def kill(self) -> int:
        """Kill it (SIGKILL) and reap it."""


@dataclass
class _Forked:
    """A child this process forked itself, for one session."""

    pid: int
    persistent = False

    def reap(self) -> int:
        return _reap(self.pid)

    def kill(self) -> int:
        return _kill(self.pid)


@dataclass
class _Worker:
    """An engine process that serves sessions one after another (see the module's
    docstring), forked by the fork server, which reaps it and reports its status. ``state``
    is the runner's working directory, umask and limits it took on when it started."""

    pid: int
    server: Any  # iogate.engine.forkserver.ForkServer
    conn: Connection
    state: Any
    persistent = True

    def reap(self) -> int:
        status: int = self.server.wait(self.pid)
        return status

    def kill(self) -> int:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        return self.reap()

    def retire(self) -> None:
        """Let it go: it leaves when its pipe reads end of file."""
        self.conn.close()


_idle: _Worker | None = None  # the worker waiting for the next session


def _take_worker() -> _Worker | None:
    """The idle worker when it can serve this session (alive, of the current fork server,
    started in this process's present state), else a new one; None when there is no fork
    server (the caller then forks a child of its own)."""
    global _idle
    if not forkserver.enabled():
        return None
    state = worker.process_state()
    idle, _idle = _idle, None
    if idle is not None:
        server = forkserver.current()
        # An idle worker writes nothing: its pipe is readable only once it is gone.
        if server is not None and idle.server is server and server.alive() \
                and idle.state == state and not idle.conn.poll(0):
            return idle
        idle.kill()
        idle.retire()
    parent_end, child_end = Pipe(duplex=True)
    try:
        served = forkserver.spawn(child_end.fileno(), state)
    finally:
        child_end.close()
    if served is None:
        parent_end.close()
        return None
    return _Worker(served[1], served[0], parent_end, state)


def _run_on(worker: _Worker, specs: list[JobSpec],
            on_progress: Callable[[Progress], None] | None, poll_interval: float,
            should_stop: Callable[[], bool] | None,
            stop_when: Callable[[SeriesSource], str | None] | None) -> RunResult:
    """One session on a worker, which is kept for the next one only when this one ended
    with its result; on any other end it is gone (it died, was killed, or is killed here)."""
    global _idle
    try:
        worker.conn.send(("run", specs, poll_interval))
    except OSError:  # it died while idle: a death between sessions is no session's
        worker.kill()
        worker.retire()
        fresh = _take_worker()
        if fresh is None:
            raise
        worker = fresh
        worker.conn.send(("run", specs, poll_interval))
    try:
        result = _supervise(worker, worker.conn, on_progress, should_stop, stop_when)
    except BaseException:
        worker.retire()
        raise
    _idle = worker
    return result


@atexit.register
def _let_the_worker_go() -> None:
    global _idle
    if _idle is not None:
        _idle.retire()
        _idle = None


def _forget_the_worker() -> None:
    global _idle
    _idle = None  # a process forked from the runner does not own the runner's worker


os.register_at_fork(after_in_child=_forget_the_worker)


def _supervise(child: _Child, conn: Connection, on_progress: Callable[[Progress], None] | None,
               should_stop: Callable[[], bool] | None,
               stop_when: Callable[[SeriesSource], str | None] | None) -> RunResult:
    partial = Partial()
    series = _Series()
    pending: list[tuple[Any, ...] | None] = []  # read, not yet handled (see _receive)
    interrupted = False
    stopped: str | None = None
    cancelled = False
    reaped = False
    returned = False

    def cancel() -> None:
        nonlocal cancelled
        if not cancelled:
            cancelled = True
            with contextlib.suppress(OSError):
                conn.send(("cancel",))

    try:
        while True:
            try:
                if not pending and not conn.poll(CANCEL_GRACE_S if cancelled else None):
                    raise EngineCrashed(child.kill(), partial, "it did not stop when cancelled")
                message = _receive(conn, pending)
            except KeyboardInterrupt:
                try:
                    if interrupted:  # the second one: do not wait for anything
                        raise EngineAborted(partial) from None
                    interrupted = True
                    cancel()
                except KeyboardInterrupt:  # the second one, also while the first was taken
                    child.kill()
                    reaped = True
                    raise EngineAborted(partial) from None
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
                returned = True
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
            if not child.persistent:
                child.reap()  # it exits after its one session
            elif not returned:
                child.kill()  # a worker that did not end its session with a result goes


def _receive(conn: Connection, pending: list[tuple[Any, ...] | None]
             ) -> tuple[Any, ...] | None:
    """One message, or None at end of file: the first of ``pending`` if any, else read
    whole (an interrupt while it is read comes after it, kept in ``pending``)."""
    if pending:
        return pending.pop(0)

    def read() -> tuple[Any, ...] | None:
        try:
            return conn.recv()  # type: ignore[no-any-return]
        except (EOFError, ConnectionError):
            return None

    return read_whole(read, pending)


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


@hookimpl
def iogate_backends() -> list[Backend]:
    return [Backend("native", "iogate's own engine, in an engine process on this machine",
                    lambda hosts: run)]
