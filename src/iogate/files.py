"""Output files: every file iogate writes for its user (results, journal, baseline, job file,
suite, report) is checked before any work starts and written whole, by this one module.

The rules, the same for every option that names an output:

- A path that exists must be a regular file. A directory, a device node (``/dev/null``
  included), a FIFO or a socket is refused as "not a regular file": iogate never replaces
  one, and never writes into one.
- A symbolic link is written through: the file it finally points to is replaced (in that
  file's own directory) and the link stays a link.
- The directory must exist and take a new file; it is not created.
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
from collections.abc import Callable, Iterable
from pathlib import Path

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
        if self.option is None or self.option.startswith("-"):
            return self.option
        return plugin_prefix + self.option

    def message(self, plugin_prefix: str = "--") -> str:
        flag = self.flag(plugin_prefix)
        return f"{flag} {self.path}: {self.problem}" if flag else f"{self.path}: {self.problem}"

    def __str__(self) -> str:
        return self.message()


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
    try:
        fd, tmp = _create_temporary(directory, name, 0o600)
    except OSError as exc:
        raise OutputError(shown, f"cannot write in {directory}: {exc.strerror or exc}",
                          option) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def check_output(path: str | os.PathLike[str], option: str | None = None) -> Path:
    """Refuse, before any work is done, an output file that could not be written by the
    rules above; the file that will be written (links followed)."""
    if str(path).endswith(os.sep):
        raise OutputError(path, "names a directory; name a file", option)
    target = _final(Path(path))
    _existing(target, path, option)
    _check_directory(target.parent, path, option, target.name)
    return target


def check_output_directory(path: str | os.PathLike[str], option: str | None = None) -> Path:
    """Refuse, before any work is done, an output directory that is not one (or cannot be
    made: its nearest existing ancestor must be a directory that takes new entries)."""
    target = _final(Path(path))
    existing = target
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing == target and not target.is_dir():
        raise OutputError(path, "is not a directory", option)
    _check_directory(existing, path, option, "iogate")
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
    try:
        fd, tmp = _create_temporary(target.parent, target.name, 0o666)
    except OSError as exc:
        raise OutputError(path, f"cannot be written: {exc.strerror or exc}", option) from None
    try:
        _keep_mode(fd, st)
        fill(fd)
        os.fsync(fd)
        os.replace(tmp, target)
    except BaseException as exc:
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
