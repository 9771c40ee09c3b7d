"""A small process that forks the engine's processes, so that their cost does not grow with
the runner's memory.

Forking copies the page tables of the process that forks: a runner holding the results of
thousands of cases would make every engine process slower to start. The fork server is a
fresh interpreter (``python -m iogate.engine.forkserver``, started once, lazily, by
:func:`spawn`) that imports only the engine, so it stays small whatever the runner holds.
It forks the engine's worker processes (:func:`iogate.engine.worker.serve`), each of
which serves sessions one after another until it dies or is let go.

The runner and the server talk over a ``SOCK_SEQPACKET`` socket pair (one message a
datagram, pickled):

- runner -> server: ``("worker", state)`` with one file descriptor attached
  (``SCM_RIGHTS``): the worker's end of its pipe to the runner. ``state`` is the runner's
  working directory, umask and resource limits, which the worker takes on;
- server -> runner: ``("started", pid)`` once it forked, or ``("failed", errno, text)``;
- server -> runner: ``("exited", pid, status)`` when it reaped a worker, status as
  :mod:`subprocess` reports it (the exit code, or minus the signal that killed it).

The runner supervises the worker over its pipe (session messages, ``os.kill(pid,
SIGKILL)``) and learns its fate from the ``exited`` message instead of ``waitpid``. Deaths
are chained with ``PR_SET_PDEATHSIG``: the server dies with the runner, a worker with the
server. The server ignores SIGINT, SIGTERM and SIGHUP (the runner decides what an
interruption means) and leaves when the runner closes its end of the socket. A server that
is gone is started again when a worker is next needed; one that cannot start at all makes
:mod:`iogate.engine.isolated` fork a child per session directly. ``IOGATE_FORKSERVER=0``
asks for that too.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import gc
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading
from typing import Any

from iogate import interrupts
from iogate.engine import worker
from iogate.interrupts import read_whole

SWITCH_ENV = "IOGATE_FORKSERVER"
START_TIMEOUT_S = 30.0
_MESSAGE_MAX = 1 << 16  # requests and replies are small
# Environment variables that change what the server itself loaded (the interpreter, the
# library and anything preloaded into it): when one differs, a new server is started.
_KEY_PREFIXES = ("LD_", "IOGATE_", "PYTHON", "MALLOC_", "GLIBC_")
_HELD = set(interrupts.SIGNALS)


# -- the runner's side ------------------------------------------------------------------------


class ServerGone(Exception):
    """The fork server died or stopped answering."""


class ForkServer:
    """The runner's handle on one server process."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Started with SIGINT, SIGTERM and SIGHUP blocked (the mask is inherited through
        # exec), so that an interrupt of the whole process group (a closed terminal's
        # SIGHUP too) cannot kill it before it ignores them.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "iogate.engine.forkserver", str(theirs.fileno()),
                 str(os.getpid())],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, close_fds=True)
        except BaseException:
            ours.close()
            raise
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            theirs.close()
        self.sock = ours
        self.key = _server_key()
        self._exited: dict[int, int] = {}
        self._pending: list[tuple[Any, ...]] = []  # read, not yet returned (see _receive)
        self._lock = threading.Lock()
        try:
            reply = self._next(START_TIMEOUT_S)
        except BaseException:
            self.close()
            raise
        if reply[0] != "ready":
            self.close()
            raise ServerGone(f"unexpected first message {reply[0]!r}")

    def _next(self, timeout: float | None = None) -> tuple[Any, ...]:
        """The next message that is not an exit report (those are kept for wait())."""
        while True:
            message = self._receive(timeout)
            if message[0] == "exited":
                self._exited[message[1]] = message[2]
                continue
            return message

    def _receive(self, timeout: float | None) -> tuple[Any, ...]:
        if self._pending:
            return self._pending.pop(0)
        if self.sock.fileno() < 0:
            raise ServerGone("the fork server was let go")
        if not select.select([self.sock], [], [], timeout)[0]:
            raise ServerGone("the fork server did not answer")

        def read() -> tuple[Any, ...]:
            try:
                data = self.sock.recv(_MESSAGE_MAX)
            except OSError as exc:
                raise ServerGone(str(exc)) from exc
            if not data:
                raise ServerGone("the fork server is gone")
            message: tuple[Any, ...] = pickle.loads(data)
            return message

        # An interrupt while a message is read comes after it, the message kept for the
        # next call: no reply or exit report is ever lost to an interrupt.
        return read_whole(read, self._pending)

    def start(self, fd: int, state: Any) -> int:
        """Fork a worker that serves sessions over ``fd`` in the runner's ``state``
        (process_state()); its pid."""
        request = pickle.dumps(("worker", state))
        # The request and its reply are one exchange: an interrupt waits for its end (at most
        # START_TIMEOUT_S), so that no reply is left for the next request to take.
        with self._lock, interrupts.deferred():
            try:
                socket.send_fds(self.sock, [request], [fd])
            except OSError as exc:
                raise ServerGone(str(exc)) from exc
            reply = self._next(START_TIMEOUT_S)
        if reply[0] == "failed":
            raise OSError(reply[1], f"the fork server could not start the engine: {reply[2]}")
        pid: int = reply[1]
        return pid

    def wait(self, pid: int) -> int:
        """The status of child ``pid`` once it is gone (subprocess's convention). When the
        server dies first, so did the child (PDEATHSIG): reported as killed by SIGKILL."""
        while True:
            with self._lock:
                if pid in self._exited:
                    return self._exited.pop(pid)
                try:
                    message = self._receive(None)
                except ServerGone:
                    return -signal.SIGKILL
                if message[0] == "exited":
                    self._exited[message[1]] = message[2]

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        """Let the server go (it leaves when its end of the socket reads end of file)."""
        with contextlib.suppress(OSError):
            self.sock.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_server: ForkServer | None = None
_server_lock = threading.Lock()
_disabled_reason: str | None = None


def _server_key() -> tuple[str, tuple[tuple[str, str], ...]]:
    return sys.executable, tuple(sorted((k, v) for k, v in os.environ.items()
                                        if k.startswith(_KEY_PREFIXES)))


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "1") not in ("0", "no", "false") and bool(sys.executable)


def current() -> ForkServer | None:
    """The running server, if any (for tests)."""
    return _server


def server() -> ForkServer | None:
    """The fork server to use, started when there is none, when the last one died, or when
    the environment it was started with changed; None when none can be started."""
    global _server, _disabled_reason
    with _server_lock:
        if _server is not None and (not _server.alive() or _server.key != _server_key()):
            _server.close()
            _server = None
        if _server is None:
            try:
                _server = ForkServer()
            except (OSError, ServerGone, subprocess.SubprocessError) as exc:
                _disabled_reason = str(exc)
                return None
        return _server


def discard(dead: ForkServer) -> None:
    """Forget a server that stopped answering, so that the next session starts another."""
    global _server
    with _server_lock:
        if _server is dead:
            _server = None
    dead.process.kill()
    dead.close()


def spawn(fd: int, state: Any) -> tuple[ForkServer, int] | None:
    """Start a worker through the server: (the server, the worker's pid), or None when no
    server can do it (the caller then forks directly)."""
    for _ in range(2):  # a server found dead is replaced once
        fs = server()
        if fs is None:
            return None
        try:
            return fs, fs.start(fd, state)
        except ServerGone:
            discard(fs)
    return None


@atexit.register
def _shutdown() -> None:
    global _server
    if _server is not None:
        _server.close()
        _server = None


def _after_fork_in_child() -> None:
    # A process forked from the runner (the direct fallback) does not own the server.
    global _server
    _server = None


os.register_at_fork(after_in_child=_after_fork_in_child)


# -- the server's side ------------------------------------------------------------------------


def _report(sock: socket.socket, message: tuple[Any, ...]) -> None:
    try:
        sock.send(pickle.dumps(message))
    except OSError:
        os._exit(0)  # the runner is gone


def _reap_all(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _report(sock, ("exited", pid, os.waitstatus_to_exitcode(status)))


def serve(fd: int, parent: int) -> None:
    """The server's loop: fork a child per request, report each child's exit."""
    for signum in (*interrupts.SIGNALS, signal.SIGXFSZ):
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)  # blocked by the runner until now
    worker.die_with(parent)
    sock = socket.socket(fileno=fd)
    from iogate.engine import native

    with contextlib.suppress(Exception):
        native.lib()  # loaded once here rather than in every child
    gc.collect()
    gc.freeze()  # what is here now is never collected: children do not copy it on a pass
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    me = os.getpid()
    _report(sock, ("ready", me))
    while True:
        ready = select.select([sock.fileno(), wake_r], [], [])[0]
        if wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                while os.read(wake_r, 512):
                    pass
        _reap_all(sock)
        if sock.fileno() not in ready:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(sock, _MESSAGE_MAX, 4)
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)  # the runner closed its end: nothing more to do
        try:
            _, state = pickle.loads(data)
            if len(fds) != 1:
                raise OSError(errno.EINVAL, f"a request carries one descriptor, got {len(fds)}")
            pid = os.fork()
        except Exception as exc:  # any failure: reported to the runner
            for extra in fds:
                os.close(extra)
            _report(sock, ("failed", getattr(exc, "errno", None) or errno.EIO, str(exc)))
            continue
        if pid == 0:  # pragma: no cover - the child never returns
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                sock.close()
                os.close(wake_r)
                os.close(wake_w)
                from multiprocessing.connection import Connection

                conn = Connection(fds[0])
            except BaseException:
                os._exit(1)
            worker.serve(conn, state, parent=me)
        os.close(fds[0])
        _report(sock, ("started", pid))


def main(argv: list[str]) -> None:
    serve(int(argv[0]), int(argv[1]))
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
