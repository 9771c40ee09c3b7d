"""Interrupts of the ``iogate`` command: SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal
closed) all raise KeyboardInterrupt, and short blocks that must not be cut (a case being
recorded, a results file being written, a temporary directory being removed) hold them off
until they end. SIGHUP itself is never held: it is taken at once, sends the standard output
and error that were on the terminal, gone now, where writing cannot fail, and becomes a
SIGINT, held as any.

A held signal is blocked, not lost: it is delivered, as KeyboardInterrupt, as soon as the
block ends. A long stretch that must end in a given way whatever comes (a run, which always
writes its results) holds them throughout and lets them in only for the steps that may be
cut, with :func:`interruptible`. Imports nothing beyond the standard library, so the command
can call :func:`handled` before it imports anything else.

Python runs a signal's handler between two steps of the program, so a signal that comes just
before a system call that blocks (reading a FIFO that no one writes yet) waits until the
call returns, which may be never: :func:`read_input` reads an input that can block in steps
that each end within :data:`STEP_S`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

_HELD = (signal.SIGINT, signal.SIGTERM)
SIGNALS = (*_HELD, signal.SIGHUP)  # every signal that interrupts the command
# An interrupt dropped in a finalizer comes back by a timer (see _again): its signal is
# handled and held with the other two.
_AGAIN = signal.SIGALRM
_HANDLED = (*_HELD, _AGAIN)
_AGAIN_AFTER_S = 0.001  # how soon the timer sends it again
# Blocking and unblocking them, as calls that run no Python code of their own: nothing can
# come between the call and the change of the mask (an interrupt that came before is raised
# by the call itself, once the mask has changed).
_hold = functools.partial(signal.pthread_sigmask, signal.SIG_BLOCK, _HANDLED)
_release = functools.partial(signal.pthread_sigmask, signal.SIG_UNBLOCK, _HANDLED)


def _raise(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _hang_up(signum: int, frame: FrameType | None) -> None:
    """SIGHUP: the standard output and error that were on a terminal, hung up now (a
    character device that no longer answers as a terminal), go to /dev/null, so that what
    is still said cannot fail; then the interrupt goes on as a SIGINT (held, if held)."""
    devnull = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            if stat.S_ISCHR(os.fstat(fd).st_mode) and not os.isatty(fd):
                os.dup2(devnull, fd)
    os.close(devnull)
    signal.raise_signal(signal.SIGINT)


def _again(hook: Callable[[Any], object], armed: list[bool]) -> Callable[[Any], object]:
    """An unraisable-exception hook that sends an interrupt again instead of dropping it:
    one raised inside a finalizer (``__del__``, a weakref callback), where Python can only
    print it and go on, comes back a moment later (by a timer: a signal handled in the
    hook itself would be dropped the same way), where it can end the command."""
    def unraisable(info: Any) -> object:
        if not (isinstance(info.exc_type, type) and issubclass(info.exc_type,
                                                                KeyboardInterrupt)):
            return hook(info)
        if _in_main_thread():
            armed[0] = True
            signal.signal(_AGAIN, _raise_again)
            _arm()
        return None
    return unraisable


_HOOK_CODE = _again(print, [False]).__code__  # every hook _again makes runs this code


def _arm() -> None:
    signal.setitimer(signal.ITIMER_REAL, _AGAIN_AFTER_S)


def _raise_again(signum: int, frame: FrameType | None) -> None:
    """The timer's interrupt; when it comes while the hook that set the timer still runs
    (its thread was held up for longer than the timer, on a busy machine), raising it there
    would drop it as the first one was dropped: the timer is set again instead."""
    while frame is not None:
        if frame.f_code is _HOOK_CODE:  # not _arm: a test may hold that one up
            signal.setitimer(signal.ITIMER_REAL, _AGAIN_AFTER_S)
            return
        frame = frame.f_back
    raise KeyboardInterrupt


def is_interrupt(exc: BaseException) -> bool:
    """``exc`` is an interrupt, or an error an interrupt caused (Python wraps an exception
    raised while a class is made, e.g. during an import, in a RuntimeError)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def handled(*, hold_after: bool = False) -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt, even if the parent
    process started this one with them blocked (a signal that arrived before the block
    is delivered on entry). The previous handlers come back afterwards, and the previous
    signal mask too, unless ``hold_after``: then the signals stay blocked for good (the
    process is about to exit with the code the block decided, which nothing may change)."""
    if not _in_main_thread():  # only the main thread may set handlers
        yield
        return
    previous = {signum: signal.signal(signum, _hang_up if signum == signal.SIGHUP else _raise)
                for signum in SIGNALS}
    previous[_AGAIN] = signal.getsignal(_AGAIN)
    previous_hook = sys.unraisablehook
    armed = [False]
    sys.unraisablehook = _again(previous_hook, armed)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, (*SIGNALS, _AGAIN))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_BLOCK, (*SIGNALS, _AGAIN))
        sys.unraisablehook = previous_hook
        if armed[0]:  # its timer stopped and its signal, if it came, taken: it is late
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.sigtimedwait([_AGAIN], 0)
        else:
            del previous[_AGAIN]
        for signum, handler in previous.items():
            if handler is not None:
                signal.signal(signum, handler)
        if not hold_after:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """SIGINT and SIGTERM (a SIGHUP, which becomes a SIGINT, and an interrupt sent again)
    wait, blocked, not lost, until the block ends."""
    old = _hold()
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def interruptible(step: Callable[[], object]) -> bool:
    """Run ``step()``, from within a :func:`deferred` block, with the signals let in: False
    when an interrupt ended it, True when it ran to its end. Either way they are held again
    once it ends, and the interrupt is taken here: whatever the block does next (write the
    results) it does, however late in ``step`` the interrupt came."""
    try:
        try:
            _release()  # an interrupt that came while they were held is raised here
            step()
        finally:
            _hold()  # one that comes as the step ends is raised here, once held again
    except BaseException as exc:
        if not is_interrupt(exc):
            raise
        return False
    return True


def read_whole(read: Callable[[], T], pending: list[T]) -> T:
    """``read()`` (one message from a process) with SIGINT and SIGTERM held, so that no
    interrupt cuts a message in two; when one came meanwhile, it is raised once the message
    is safe at the end of ``pending``, which the caller reads from before reading again."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        value = read()
    except BaseException:
        with contextlib.suppress(KeyboardInterrupt):  # the error comes first
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)  # a held signal is handled here
    except BaseException:
        pending.append(value)
        raise
    return value


STEP_S = 0.05  # the longest an input that blocks is waited for before signals are looked at


def read_input(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most ``limit`` bytes of the file at ``path``, to its end. A regular file is read
    at once; anything else (a FIFO, a character device, process substitution) is opened
    without blocking and read as its data comes, so that an interrupt is never held back
    by an input that does not come. OSError as ``open`` and ``read`` raise it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.set_blocking(fd, True)
            with os.fdopen(os.dup(fd), "rb") as f:
                return f.read(limit)
        chunks: list[bytes] = []
        size = 0
        while size < limit:
            # A FIFO without a writer yet is not readable; one whose writer left reads b"".
            ready, _, _ = select.select([fd], [], [], STEP_S)
            if not ready:
                continue  # back in Python: a signal that came is handled here
            try:
                chunk = os.read(fd, min(1 << 16, limit - size))
            except BlockingIOError:
                continue
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
