"""What iogate may write, checked before the engine touches anything.

- Files: iogate writes, extends or truncates only files it created itself, which it marks
  (an extended attribute, or a ``.iogate`` note beside the file where the filesystem has no
  extended attributes). An existing file without the mark is refused for any workload that
  would write or extend it, unless the suite says ``allow_overwrite: true``. Reading such a
  file never changes it: it must already be long enough, since iogate will not extend it.
- Block devices: reading is allowed. Writing needs ``--allow-destructive`` on the command line
  (a suite alone cannot wipe a disk), and even then is refused while the device, one of its
  partitions or a holder is mounted or in use (an exclusive open fails), or when it carries a
  filesystem or partition table signature, unless the device is named with
  ``--allow-destructive=/dev/disk/by-id/...`` and its identity (serial or WWN) matches that
  name. The exclusive open is held for the whole run.
- Paths: with ``target_root``, every target must resolve (symlinks followed) inside it.
  Anything else (a directory, a FIFO, a character device) is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from iogate.errors import TargetError
from iogate.spec import Case

MARK_XATTR = "user.iogate"
MARK_VALUE = b"target created by iogate"
MARK_SUFFIX = ".iogate"  # the note beside a file, where extended attributes are not supported
WRITE_MODES = ("write", "randwrite", "rw", "randrw")


@dataclass(frozen=True)
class Policy:
    """What the command line allows: ``--allow-destructive`` (``allow_destructive``), and the
    by-id device names given to it, which also allow devices that carry data."""

    allow_destructive: bool = False
    devices: tuple[str, ...] = ()

    @classmethod
    def from_option(cls, values: Sequence[str] | None) -> Policy:
        """From a repeatable ``--allow-destructive[=/dev/disk/by-id/NAME]`` option: None when
        absent, an empty string for the bare flag."""
        if not values:
            return cls()
        return cls(True, tuple(v for v in values if v))


@dataclass
class Guard:
    """Held for the whole run: exclusive opens of the block devices being written."""

    exclusive: list[int] = field(default_factory=list)

    def close(self) -> None:
        for fd in self.exclusive:
            os.close(fd)
        self.exclusive.clear()


def is_marked(path: str) -> bool:
    try:
        if os.getxattr(path, MARK_XATTR) == MARK_VALUE:
            return True
    except OSError:
        pass
    try:
        return Path(path + MARK_SUFFIX).read_bytes() == MARK_VALUE
    except OSError:
        return False


def _create_marked(path: str) -> None:
    """Create an empty file and mark it as iogate's own; the engine lays it out."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.close(fd)
    try:
        os.setxattr(path, MARK_XATTR, MARK_VALUE)
    except OSError as exc:
        if exc.errno not in (errno.ENOTSUP, errno.EPERM, errno.EACCES):
            raise
        Path(path + MARK_SUFFIX).write_bytes(MARK_VALUE)


def _writes(case: Case) -> bool:
    return case.workload.rw in WRITE_MODES or any(
        step.rw in WRITE_MODES for step in case.preconditions)


def _region_end(case: Case, nfiles: int) -> int:
    w = case.workload
    return w.offset + w.size // max(1, nfiles)


@contextlib.contextmanager
def guard(cases: Sequence[Case], targets: Sequence[Sequence[str]],
          policy: Policy) -> Iterator[Guard]:
    """Check every case's targets, create (and mark) the files that do not exist yet, hold
    exclusive opens of block devices to be written; raise TargetError naming the refusal."""
    held = Guard()
    try:
        for case, files in zip(cases, targets, strict=True):
            for path in files:
                _check(case, path, len(files), policy, held)
        yield held
    finally:
        held.close()


def _check(case: Case, path: str, nfiles: int, policy: Policy, held: Guard) -> None:
    w = case.workload
    where = f"{case.path.name}::{case.id}: {path}"
    if "\0" in path:
        raise TargetError(f"{where}: the path contains a NUL byte")
    real = os.path.realpath(path)
    if w.target_root is not None:
        root = os.path.realpath(w.target_root)
        if os.path.commonpath([root, real]) != root:
            raise TargetError(f"{where}: resolves to {real}, outside target_root {root}")
    try:
        st = os.stat(real)
    except FileNotFoundError:
        try:
            _create_marked(real)
        except FileExistsError:  # appeared meanwhile: judge it like any existing file
            st = os.stat(real)
        except OSError as exc:
            raise TargetError(f"{where}: cannot create it: {exc.strerror}") from None
        else:
            return
    if stat.S_ISREG(st.st_mode):
        _check_file(case, where, real, st, nfiles)
    elif stat.S_ISBLK(st.st_mode):
        if _writes(case):
            _check_device(where, real, policy, held)
    else:
        raise TargetError(f"{where}: not a regular file or block device")


def _check_file(case: Case, where: str, path: str, st: os.stat_result, nfiles: int) -> None:
    if case.workload.allow_overwrite or is_marked(path):
        return
    if _writes(case):
        raise TargetError(
            f"{where}: an existing file iogate did not create; the workload writes, so it is "
            "refused. Set 'allow_overwrite: true' for this workload to write it anyway, or "
            "point filename at a new file")
    if st.st_size < _region_end(case, nfiles):
        raise TargetError(
            f"{where}: an existing file iogate did not create is {st.st_size} bytes, shorter "
            f"than the region read ({_region_end(case, nfiles)} bytes); iogate will not extend "
            "it. Lower size, or set 'allow_overwrite: true'")


def _check_device(where: str, device: str, policy: Policy, held: Guard) -> None:
    if not policy.allow_destructive:
        raise TargetError(
            f"{where}: a block device, and the workload writes: that needs "
            "--allow-destructive on the command line (a suite alone cannot wipe a disk)")
    try:
        fd = os.open(device, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            raise TargetError(f"{where}: the device, a partition of it or a holder is mounted "
                              "or in use; refusing to write it") from None
        raise TargetError(f"{where}: cannot open it exclusively: {exc.strerror}") from None
    held.exclusive.append(fd)
    signature = _signature(device)
    if signature and not _named_by_identity(device, policy.devices):
        raise TargetError(
            f"{where}: carries data ({signature}); refusing to write it. To wipe it anyway, "
            "name it with --allow-destructive=/dev/disk/by-id/... (its serial or WWN is "
            "checked against the device)")


def _signature(device: str) -> str | None:
    """A filesystem or partition table signature found by blkid, None on a blank device.
    Without blkid the device is treated as carrying data: refusing is the safe answer."""
    blkid = shutil.which("blkid") or next(
        (p for p in ("/usr/sbin/blkid", "/sbin/blkid") if os.path.exists(p)), None)
    if blkid is None:
        return "unknown contents: blkid is not installed"
    proc = subprocess.run([blkid, "-p", "-o", "export", device], capture_output=True,
                          text=True, timeout=30)
    if proc.returncode == 2:  # nothing found
        return None
    if proc.returncode != 0:
        return f"unknown contents: blkid failed ({proc.stderr.strip() or proc.returncode})"
    facts = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    kind = facts.get("TYPE") or facts.get("PTTYPE") or "a signature"
    return f"{kind} signature" if kind != "a signature" else kind


def device_identity(device: str) -> set[str]:
    """Serial and WWN of a whole-disk block device, from sysfs (empty when not exposed)."""
    name = os.path.basename(os.path.realpath(device))
    base = Path("/sys/class/block") / name
    found: set[str] = set()
    for rel in ("device/serial", "serial", "device/wwid", "wwid", "device/wwn"):
        try:
            value = (base / rel).read_text().strip()
        except OSError:
            continue
        if value:
            found.add(value)
    return found


def _named_by_identity(device: str, names: Sequence[str]) -> bool:
    real = os.path.realpath(device)
    identity = device_identity(real)
    for name in names:
        if not name.startswith("/dev/disk/by-id/") or os.path.realpath(name) != real:
            continue
        link = os.path.basename(name)
        if any(part and part.replace(" ", "_") in link for part in identity):
            return True
    return False
