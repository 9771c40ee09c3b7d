"""Output files: every file iogate writes for its user (results, journal, baseline, job file,
suite, report) is checked before any work starts and written whole, by this one module.

The rules, the same for every option that names an output:

- A path that exists must be a regular file. A directory, a device node (``/dev/null``
  included), a FIFO or a socket is refused as "not a regular file": iogate never replaces
  one, and never writes into one.
- A symbolic link is written through: the file it finally points to is replaced (in that
  file's own directory) and the link stays a link.
- The directory must exist and take a new file; it is not created. An output directory
  (a plugin's ``--artifacts DIR``) is made if missing, but not its parent.
- No two outputs of a run are one file, and no output is a file the run reads or writes
  otherwise (a case's target, a suite): every output checked within :func:`claiming` is
  listed as a :class:`Claim`, the core's and the plugins' alike, and :func:`check_apart`
  compares them all, by the file each resolves to and, where it exists, by device and
  inode (a hard link, a bind mount), before anything runs.
- A file is written to a temporary file in the same directory, flushed to the disk (fsync),
  then renamed over the target: a reader, or a run killed while writing, sees the old file
  or the new one, never a part. A new file's mode follows the umask; a replaced file keeps
  its mode (and, written by root, its owner). An output that adds to a file (the Markdown
  summary) writes its old content and the addition this way too (:func:`append_whole`).

Any problem is an :class:`OutputError` naming the path, the option it came from and why.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from iogate import interrupts
from iogate.errors import IogateError

# Kinds of file that are never written, by their stat type.
_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


class OutputError(IogateError):
    """An output path that cannot be written, or a write that failed.

    ``option`` is the command-line option the path came from: a flag as typed (``--json``),
    or the name of a plugin's option (``html``), which each front end spells its own way.
    """

    def __init__(self, path: str | os.PathLike[str], problem: str,
                 option: str | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        self.option = option
        super().__init__(self.path, problem, option)

    def flag(self, plugin_prefix: str = "--") -> str | None:
        """The option as the user typed it; plugin options get ``plugin_prefix``."""
        return _flag(self.option, plugin_prefix)

    def message(self, plugin_prefix: str = "--") -> str:
        flag = self.flag(plugin_prefix)
        return f"{flag} {self.path}: {self.problem}" if flag else f"{self.path}: {self.problem}"

    def __str__(self) -> str:
        return self.message()


def _flag(option: str | None, plugin_prefix: str) -> str | None:
    if option is None or option.startswith("-"):
        return option
    return plugin_prefix + option


@dataclass(frozen=True)
class Claim:
    """A file a run writes or reads: an output named by ``option`` (as in OutputError;
    ``role`` says what of it, e.g. "the journal of"), or, without an option, a file that
    ``role`` describes whole ("the target of s.suite.yaml::w (data.bin)")."""

    path: str
    option: str | None = None
    role: str | None = None

    def shown(self, plugin_prefix: str = "--") -> str:
        flag = _flag(self.option, plugin_prefix)
        if flag is None:
            return self.role or self.path
        return f"{self.role} {flag} ({self.path})" if self.role else f"{flag} {self.path}"


class ClashError(OutputError):
    """An output that is also another output, or a file the run reads or writes."""

    def __init__(self, output: Claim, other: Claim, *, both_outputs: bool) -> None:
        self.output, self.other, self.both_outputs = output, other, both_outputs
        super().__init__(output.path, "is also another file of the run", output.option)

    def message(self, plugin_prefix: str = "--") -> str:
        advice = ("give each output a file of its own" if self.both_outputs
                  else "it would be replaced: name another file")
        return (f"{self.output.shown(plugin_prefix)}: is also "
                f"{self.other.shown(plugin_prefix)}; {advice}")


_claims: ContextVar[list[Claim] | None] = ContextVar("iogate_claims", default=None)


@contextlib.contextmanager
def claiming() -> Iterator[list[Claim]]:
    """The outputs checked within the block (:func:`check_output`,
    :func:`check_output_directory`, :func:`claim`), by the core and by the plugins as they
    are configured, listed in order: the outputs of a run, for :func:`check_apart`."""
    claims: list[Claim] = []
    token = _claims.set(claims)
    try:
        yield claims
    finally:
        _claims.reset(token)


def claim(path: str | os.PathLike[str], option: str | None = None,
          role: str | None = None) -> None:
    """List ``path`` among the outputs of the run being checked (:func:`claiming`), for an
    output checked by other means (a history store)."""
    claims = _claims.get()
    if claims is not None:
        claims.append(Claim(str(path), option, role))


def _identity(path: str) -> tuple[str, tuple[int, int] | None]:
    """The file ``path`` resolves to, and its device and inode where it exists."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except (OSError, ValueError):
        return real, None
    return real, (st.st_dev, st.st_ino)


def check_apart(outputs: Sequence[Claim], others: Sequence[Claim] = ()) -> None:
    """Refuse, before anything runs, two ``outputs`` on one file, or an output on one of
    ``others`` (files the run reads or writes otherwise: targets, suites): a ClashError
    naming both."""
    known = [(other, _identity(other.path), False) for other in others]
    for output in outputs:
        real, ids = _identity(output.path)
        for other, (other_real, other_ids), is_output in known:
            if real == other_real or (ids is not None and ids == other_ids):
                raise ClashError(output, other, both_outputs=is_output)
        known.append((output, (real, ids), True))


def _final(path: Path) -> Path:
    """The file ``path`` stands for: symbolic links followed to their end."""
    return Path(os.path.realpath(path))


def _refusal(st: os.stat_result) -> str | None:
    """Why an existing file cannot be an output, or None."""
    if stat.S_ISDIR(st.st_mode):
        return "is a directory; name a file"
    if stat.S_ISREG(st.st_mode):
        return None
    kind = next((name for test, name in _KINDS if test(st.st_mode)), "a special file")
    return f"not a regular file ({kind}); iogate writes only regular files, never into or " \
           f"over another kind"


def _existing(target: Path, shown: str | os.PathLike[str],
              option: str | None) -> os.stat_result | None:
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputError(shown, f"cannot be examined: {exc.strerror or exc}", option) from None
    problem = _refusal(st)
    if problem:
        raise OutputError(shown, problem, option)
    return st


def _create_temporary(directory: Path, name: str, mode: int) -> tuple[int, Path]:
    """A new file in ``directory`` (mode filtered by the umask), opened for writing."""
    while True:
        tmp = directory / f".{name[:200]}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        except FileExistsError:
            continue
        return fd, tmp


def _check_directory(directory: Path, shown: str | os.PathLike[str], option: str | None,
                     name: str) -> None:
    """``directory`` exists and takes a new file (tried: a file made and removed)."""
    if not directory.exists():
        raise OutputError(shown, f"the directory {directory} does not exist", option)
    if not directory.is_dir():
        raise OutputError(shown, f"{directory} is not a directory", option)
    # An interrupt waits for the file to be gone: the check leaves nothing behind.
    with interrupts.deferred():
        try:
            fd, tmp = _create_temporary(directory, name, 0o600)
        except OSError as exc:
            raise OutputError(shown, f"cannot write in {directory}: {exc.strerror or exc}",
                              option) from None
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def check_output(path: str | os.PathLike[str], option: str | None = None,
                 role: str | None = None) -> Path:
    """Refuse, before any work is done, an output file that could not be written by the
    rules above; the file that will be written (links followed). Claimed as an output of
    the run being checked (:func:`claiming`; ``role`` as in :class:`Claim`)."""
    if str(path).endswith(os.sep):
        raise OutputError(path, "names a directory; name a file", option)
    target = _final(Path(path))
    _existing(target, path, option)
    _check_directory(target.parent, path, option, target.name)
    claim(path, option, role)
    return target


def check_output_directory(path: str | os.PathLike[str], option: str | None = None) -> Path:
    """Refuse, before any work is done, an output directory that is not one, or that cannot
    be made (its parent must be a directory that takes new entries: parents are not made).
    Claimed as an output of the run being checked (:func:`claiming`)."""
    target = _final(Path(path))
    if target.exists():
        if not target.is_dir():
            raise OutputError(path, "is not a directory", option)
        _check_directory(target, path, option, "iogate")
    else:
        _check_directory(target.parent, path, option, target.name)
    claim(path, option)
    return target


def write_whole(path: str | os.PathLike[str], data: str | bytes | Iterable[str],
                option: str | None = None) -> None:
    """Write ``data`` (text, bytes, or text in pieces, in order) to ``path`` by the rules
    above: to a temporary file beside the final target, synced, renamed over it. An
    OutputError if it cannot be (nothing at ``path`` is changed then)."""

    def fill(fd: int) -> None:
        with os.fdopen(fd, "wb", closefd=False) as f:
            if isinstance(data, bytes):
                f.write(data)
            elif isinstance(data, str):
                f.write(data.encode("utf-8"))
            else:
                for piece in data:
                    f.write(piece.encode("utf-8"))

    fd, _ = _made_anew(path, option, fill)
    os.close(fd)


def append_whole(path: str | os.PathLike[str], text: str, option: str | None = None,
                 separator: str = "") -> None:
    """Add ``text`` at the end of ``path`` (created if missing) by the rules above: the old
    content and the new are written to a temporary file renamed over the target, so a
    reader, or a run killed meanwhile, sees the file as it was or with the whole of
    ``text`` added, never a part. Old content gets a final newline if it lacks one, then
    ``separator``. An OutputError if it cannot be (``path`` is unchanged then)."""
    target = _final(Path(path))
    old = b""
    if _existing(target, path, option) is not None:
        try:
            old = target.read_bytes()
        except OSError as exc:
            raise OutputError(path, f"cannot be read: {exc.strerror or exc}",
                              option) from None
    if old:
        old += (b"" if old.endswith(b"\n") else b"\n") + separator.encode("utf-8")
    write_whole(path, old + text.encode("utf-8"), option)


def create_stream(path: str | os.PathLike[str], option: str | None = None) -> tuple[int, Path]:
    """A new, empty file at ``path``, for a file written while a run goes on (a verify state
    file), made by the rules above. Returns it open for writing, and the final path: the
    descriptor stays on the file iogate created whatever later happens at the path (the
    caller compares identities), and the caller closes it. An OutputError if it cannot be
    made."""
    return _made_anew(path, option, lambda fd: None)


def _made_anew(path: str | os.PathLike[str], option: str | None,
               fill: Callable[[int], None]) -> tuple[int, Path]:
    """A temporary file beside the final target of ``path``, filled by ``fill``, synced,
    renamed over the target, the directory synced; its descriptor (open) and the target."""
    target = _final(Path(path))
    st = _existing(target, path, option)
    fd, tmp = -1, None
    try:
        # Made and known together: an interrupt comes after both, and the file is removed.
        with interrupts.deferred():
            fd, tmp = _create_temporary(target.parent, target.name, 0o666)
        _keep_mode(fd, st)
        fill(fd)
        os.fsync(fd)
        os.replace(tmp, target)
    except BaseException as exc:
        if tmp is not None:  # made (fd with it)
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OutputError(path, f"cannot be written: {exc.strerror or exc}",
                              option) from None
        raise
    _sync_directory(target.parent)
    return fd, target


def _keep_mode(fd: int, st: os.stat_result | None) -> None:
    """A file that replaces ``st`` keeps its mode (and, written by root, its owner)."""
    if st is None:
        return
    os.fchmod(fd, stat.S_IMODE(st.st_mode))
    if os.geteuid() == 0:
        with contextlib.suppress(OSError):
            os.fchown(fd, st.st_uid, st.st_gid)


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable (where the filesystem allows)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
