"""Which files are iogate's own: a ledger of the files it made, by identity, in a private
per-user state directory. Nothing found at or beside a file (a name, a note, an extended
attribute) proves anything: only an entry of the ledger that matches the file itself.

- Identity: device and inode, with what tells this file from a later one at the same inode:
  its birth time (statx ``STATX_BTIME``) and its inode generation (``FS_IOC_GETVERSION``),
  whichever the filesystem reports. Where it reports neither, the change time and size iogate
  last left the file with (:func:`claim` again after every run that used it): any change by
  another program voids the claim. A change time in whole seconds cannot tell two files
  apart: such a file is never recorded.
- Ledger: ``$IOGATE_STATE_DIR``, else ``$XDG_STATE_HOME/iogate``, else
  ``~/.local/state/iogate`` (made mode 0700). One small entry per file, named by its device
  and inode, holding the proof and the path; written under a temporary name and renamed, so
  concurrent iogate processes need no lock. An entry that no longer matches its file is
  removed when met, and one whose path no longer holds that device and inode when a new
  file is recorded on the same filesystem.
- Trust: a state directory that is not the user's own, is writable by group or others, or
  cannot be read makes nothing count as owned. A file made while the ledger cannot be
  written is iogate's for the rest of the process only. Both are said once on stderr.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import secrets
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

from iogate import interrupts

STATE_ENV = "IOGATE_STATE_DIR"
_AT_EMPTY_PATH = 0x1000
_STATX_BTIME = 0x800
_STATX_BTIME_AT = 80  # offset of stx_btime in struct statx
# _IOR('v', 1, long)
_FS_IOC_GETVERSION = (2 << 30) | (struct.calcsize("l") << 16) | (ord("v") << 8) | 1

_libc = ctypes.CDLL(None, use_errno=True)
_statx = getattr(_libc, "statx", None)  # glibc 2.28 and later
if _statx is not None:
    _statx.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint,
                       ctypes.c_void_p]

_claimed: dict[str, str] = {}  # files this process made while the ledger failed: entry -> proof
_said: set[str] = set()


def state_dir() -> Path:
    """Where the ledger is (it may not exist yet)."""
    given = os.environ.get(STATE_ENV)
    if given:
        return Path(given).absolute()
    xdg = os.environ.get("XDG_STATE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "state"
    return base / "iogate"


def owns(fd: int) -> bool:
    """Whether the regular file open as ``fd`` is one iogate made (or was allowed to take)."""
    try:
        name, proof = _entry_of(fd)
    except OSError:  # a filesystem gone (ENOTCONN)
        return False
    if proof is None:
        return False
    if _claimed.get(name) == proof:
        return True
    with _ledger() as ledger:
        if ledger is None:
            return False
        try:
            with open(os.open(name, os.O_RDONLY | os.O_CLOEXEC, dir_fd=ledger)) as f:
                entry = json.load(f)
        except (OSError, ValueError):
            return False
        if isinstance(entry, dict) and entry.get("proof") == proof:
            return True
        with contextlib.suppress(OSError):  # that inode holds another file now
            os.unlink(name, dir_fd=ledger)
        return False


def claim(fd: int, path: str) -> None:
    """Record the regular file open as ``fd`` (at ``path``, its real path) as iogate's own,
    or record it again after a run used it. Never raises: a ledger that cannot take it is
    said on stderr, and the file is iogate's for the rest of this process."""
    try:
        name, proof = _entry_of(fd)
    except OSError:  # a filesystem gone (ENOTCONN): nothing left to record
        return
    if proof is None:
        _say_once(f"{path}: its filesystem records no birth time, no inode generation and "
                  "no change time finer than a second, so iogate cannot tell the file it made "
                  "from one made later at the same inode: it is not recorded, and a later run "
                  "will take it for a file iogate did not create")
        return
    with _ledger() as ledger:
        if ledger is not None:
            try:
                new = not _exists(name, ledger)
                _write(ledger, name, json.dumps({"proof": proof, "path": path}))
            except OSError as exc:
                _say_once(f"cannot record the files iogate makes in {state_dir()}: "
                          f"{exc.strerror}; they count as iogate's for this run only")
            else:
                _claimed.pop(name, None)
                if new:
                    with contextlib.suppress(OSError):
                        _sweep(ledger, name.partition("-")[0])
                return
    _claimed[name] = proof


def _entry_of(fd: int) -> tuple[str, str | None]:
    """The ledger entry's name for the file open as ``fd``, and its proof (None: none that
    could tell it from a later file at its inode)."""
    st = os.fstat(fd)
    name = f"{st.st_dev:x}-{st.st_ino:x}"
    facts = [f"born {b}" for b in (_birth(fd),) if b] \
        + [f"generation {g}" for g in (_generation(fd),) if g]
    if facts:
        return name, " ".join(facts)
    if st.st_ctime_ns % 10**9 == 0:
        return name, None
    return name, f"changed {st.st_ctime_ns} size {st.st_size}"


def _birth(fd: int) -> int | None:
    if _statx is None:
        return None
    buf = ctypes.create_string_buffer(256)
    if _statx(fd, b"", _AT_EMPTY_PATH, _STATX_BTIME, buf) != 0:
        return None
    mask, = struct.unpack_from("=I", buf.raw, 0)
    sec, nsec = struct.unpack_from("=qI", buf.raw, _STATX_BTIME_AT)
    return sec * 10**9 + nsec if mask & _STATX_BTIME else None


def _generation(fd: int) -> int | None:
    try:
        got = fcntl.ioctl(fd, _FS_IOC_GETVERSION, bytes(8))
    except OSError:
        return None
    return int.from_bytes(got, sys.byteorder)


@contextlib.contextmanager
def _ledger() -> Iterator[int | None]:
    """The state directory, open, when it can be trusted; else None (said once)."""
    where = state_dir()
    fd = None
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        st = os.fstat(fd)
    except OSError as exc:
        _say_once(f"the state directory {where} cannot be used ({exc.strerror}): no file "
                  f"counts as iogate's own, and the files it makes now are its own for this "
                  f"run only; set {STATE_ENV} to a private directory")
        if fd is not None:
            os.close(fd)
        yield None
        return
    try:
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            why = "is not yours" if st.st_uid != os.geteuid() else \
                "can be written by others"
            _say_once(f"the state directory {where} {why}, so it is not trusted: no file "
                      "counts as iogate's own, and the files it makes now are its own for "
                      f"this run only; run 'chmod 700 {where}' (as its owner) or set "
                      f"{STATE_ENV} to a private directory")
            yield None
        else:
            yield fd
    finally:
        os.close(fd)


def _exists(name: str, ledger: int) -> bool:
    try:
        os.stat(name, dir_fd=ledger, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _write(ledger: int, name: str, text: str) -> None:
    """``text`` as the entry ``name``, whole: a temporary entry renamed over it."""
    tmp = f".{name}.{secrets.token_hex(4)}.tmp"
    fd = -1
    try:
        # Made and known together: an interrupt comes after both, and the entry is removed.
        with interrupts.deferred():
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600,
                         dir_fd=ledger)
        with open(fd, "w", closefd=False) as f:
            f.write(text)
        os.rename(tmp, name, src_dir_fd=ledger, dst_dir_fd=ledger)
    except BaseException:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=ledger)
        raise
    finally:
        if fd >= 0:
            os.close(fd)


def _sweep(ledger: int, device: str) -> None:
    """Remove the entries of files on ``device`` (the filesystem just written to: another
    may hang, as a dead network mount does) whose path no longer holds that file."""
    for name in os.listdir(ledger):
        if name.partition("-")[0] != device:
            continue
        try:
            with open(os.open(name, os.O_RDONLY | os.O_CLOEXEC, dir_fd=ledger)) as f:
                path = json.load(f)["path"]
            st = os.lstat(path)
            if f"{st.st_dev:x}-{st.st_ino:x}" == name:
                continue
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written, or unreadable: left alone
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=ledger)


def _say_once(message: str) -> None:
    if message not in _said:
        _said.add(message)
        print(f"iogate: {message}", file=sys.stderr, flush=True)
