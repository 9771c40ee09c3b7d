"""What iogate may write, checked before the engine touches anything, and held so that what
was checked is what gets written.

- Once: every target is opened once, before anything runs, and checked on that descriptor
  (its type, device and inode, owner, signature). The engine then opens only the path that
  descriptor resolved to, without following a link in the last component, and must find the
  very same file there (device and inode, or device number): a link repointed, a file or a
  directory replaced after the check makes the run an error, never a write elsewhere. The
  descriptors are held for the whole run, so an inode number cannot be reused meanwhile.
- Files: iogate writes, extends or truncates only files that are its own by
  :mod:`iogate.ownership` (the ledger of the files it made, by identity). Any other existing
  file is refused for any workload that would write it, unless the suite says
  ``allow_overwrite: true`` or the command line names it with ``--allow-overwrite PATH``
  (matched by the path it resolves to: a fio job file has no way to say it); a file written
  so is iogate's own from then on. Reading such a file never changes it: it must be long
  enough when checked, and the engine is told never to create or extend it (a file cut short
  meanwhile is read to its end and fails, never laid out again).
- State files: a ``verify_state`` file is made anew over nothing, or over a file iogate
  made, and never over a target of the run.
- Trims (the trim rw modes) destroy data: here they are writes, with the same permissions.
- Block devices: reading is allowed. Writing needs ``--allow-destructive`` on the command line
  (a suite alone cannot wipe a disk), and even then is refused while the device, one of its
  partitions or a holder is mounted or in use (an exclusive open fails), or when it carries a
  filesystem or partition table signature. ``--allow-destructive=DEVICE`` (repeatable) names
  the only devices that may be written; a device named ``/dev/disk/by-id/...`` whose identity
  (serial or WWN) matches that name may be written even when it carries data. The exclusive
  open is held for the whole run.
- Paths: with ``target_root``, every target must resolve (symlinks followed, on the open
  descriptor) inside it. Anything else (a directory, a FIFO, a character device) is refused
  without being opened.
- Other iogate processes: every target is locked (``flock``) for the run; a second process
  (another run, a pytest-xdist worker) waits, saying so, until the first is done with it,
  holding nothing while it waits.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from iogate import ownership
from iogate.errors import TargetError
from iogate.job import file_identity
from iogate.spec import Case
from iogate.spec.modes import TRIM_MODES

# The modes that change the target: writes, and trims (a trim destroys data as a write does,
# so it needs the very same permission).
WRITE_MODES = ("write", "randwrite", "rw", "randrw", *TRIM_MODES)


@dataclass(frozen=True)
class Policy:
    """What the command line allows: ``--allow-destructive`` (``allow_destructive``), and the
    devices named by it (``devices``): when any is named, only those may be written; the
    existing files ``--allow-overwrite`` names (``overwrite``, resolved paths), written as if
    their workloads said ``allow_overwrite: true``."""

    allow_destructive: bool = False
    devices: tuple[str, ...] = ()
    overwrite: frozenset[str] = frozenset()

    @classmethod
    def from_option(cls, values: Sequence[str] | None,
                    overwrite: Sequence[str] | None = None) -> Policy:
        """From a repeatable ``--allow-destructive[=DEVICE]`` option (None when absent, an
        empty string for the bare flag) and a repeatable ``--allow-overwrite PATH``. A named
        device must exist and be a block device (TargetError otherwise: a usage error,
        before anything runs)."""
        files = frozenset(os.path.realpath(p) for p in overwrite or () if "\0" not in p)
        if not values:
            return cls(overwrite=files)
        devices = tuple(v for v in values if v)
        for name in devices:
            if _rdev(name) is None:
                why = "does not exist" if not os.path.lexists(name) else "is not a block device"
                raise TargetError(
                    f"--allow-destructive={name}: {why}; name the device to be written "
                    "(/dev/disk/by-id/... to also allow one that carries data), or give "
                    "--allow-destructive alone to allow any blank device")
        return cls(True, devices, files)


@dataclass(frozen=True)
class Pin:
    """A target as it was checked: the file it resolved to, and what identifies it (for a
    block device, its device number and inode 0; for a regular file, device and inode)."""

    path: str
    dev: int
    ino: int


@dataclass
class Guard:
    """Held for the whole run: one descriptor of every target, opened once and checked on
    that descriptor; exclusive for block devices being written; locked against other iogate
    processes. The engine reaches the targets through :meth:`pins` only."""

    held: dict[tuple[int, int], int] = field(default_factory=dict)  # identity -> descriptor
    # the block devices being written: identity -> an exclusive descriptor
    exclusive: dict[tuple[int, int], int] = field(default_factory=dict)
    names: dict[str, Pin] = field(default_factory=dict)  # path as named -> its pin
    # the regular files that are iogate's own after the run (made, found its own, or written
    # with leave): identity -> real path, recorded when the run ends
    claims: dict[tuple[int, int], str] = field(default_factory=dict)
    grows: set[tuple[int, int]] = field(default_factory=set)  # regular files it may extend

    def pins(self, files: Sequence[str]) -> tuple[list[str], list[tuple[int, int]]]:
        """The resolved paths and identities the engine must open for ``files``."""
        pins = [self.names[f] for f in files]
        return [p.path for p in pins], [(p.dev, p.ino) for p in pins]

    def fixed(self, files: Sequence[str]) -> bool:
        """Whether one of ``files`` is a regular file the engine must neither create nor
        extend (its job gets ``no_layout``): an existing file iogate may only read."""
        return any(p.ino and (p.dev, p.ino) not in self.grows
                   for p in (self.names[f] for f in files))

    def close(self, record: bool = False) -> None:
        """Close every descriptor; with ``record`` (the run is over), first record the files
        that are iogate's own (again: a change time moves with every write)."""
        if record:
            for key, path in self.claims.items():
                ownership.claim(self.held[key], path)
        for fd in [*self.exclusive.values(), *self.held.values()]:
            with contextlib.suppress(OSError):  # a filesystem gone meanwhile (ENOTCONN)
                os.close(fd)
        self.held.clear()
        self.exclusive.clear()
        self.names.clear()
        self.claims.clear()
        self.grows.clear()


def _create(path: str) -> int:
    """Create an empty file (never through a link in its last component) and record it as
    iogate's own; the engine lays it out. Returns a read-only descriptor of it."""
    fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o644)
    ownership.claim(fd, path)
    return fd


def check_state_file(path: str, held: Guard | None = None, own: Sequence[str] = ()) -> None:
    """Refuse (TargetError) a ``verify_state`` file that would replace a target of the run
    (``held``; ``own``: the workload's own targets, as named) or an existing regular file
    that is not iogate's own: a state file is made anew, renamed over whatever is there
    (anything but a regular file is refused by the output rules, :mod:`iogate.files`)."""
    real = os.path.realpath(path)
    try:
        st: os.stat_result | None = os.stat(real)
    except OSError:
        st = None
    for name, pin in (held.names.items() if held is not None else ()):
        if pin.path == real or (st is not None and (pin.dev, pin.ino) == file_identity(st)):
            whose = "the workload's own target" if name in own else \
                f"the target {name} of another workload of this run"
            raise TargetError(f"verify_state {path} is {whose}: the state file must be "
                              "another file, best on another filesystem")
    if st is not None and stat.S_ISREG(st.st_mode) and not _owned_at(real):
        raise TargetError(
            f"verify_state {path}: an existing file iogate did not create; a state file is "
            "made anew, and replaces only a file iogate made. Remove that file, or name a "
            "new one")


def _owned_at(path: str) -> bool:
    """Whether the regular file at ``path`` is iogate's own (False for anything else)."""
    try:
        probe = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(probe).st_mode):
            return False
        fd = os.open(f"/proc/self/fd/{probe}", os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return False
    finally:
        os.close(probe)
    try:
        return ownership.owns(fd)
    finally:
        os.close(fd)


def _writes(case: Case) -> bool:
    return case.workload.rw in WRITE_MODES or any(
        step.rw in WRITE_MODES for step in case.preconditions)


def _region_end(case: Case, nfiles: int) -> int:
    w = case.workload
    if not isinstance(w.offset, int):  # a share of the target (plan.sized): within it
        return 0
    if not isinstance(w.size, int):  # the target's size or a share (plan.sized): within it
        return w.offset
    return w.offset + w.size // max(1, nfiles)


def unpermitted(cases: Sequence[Case], targets: Sequence[Sequence[str]], policy: Policy,
                prefix: str = "--") -> list[str]:
    """Before anything runs: every case that would write a block device the command line
    does not let it write (no ``--allow-destructive``, or the device not among those it
    names), one line each, the option spelt with ``prefix``. Whether a permitted device is
    blank and unused is checked when its case starts (:func:`guard`), on the device it holds."""
    lines = []
    for case, files in zip(cases, targets, strict=True):
        if not _writes(case):
            continue
        for path in files:
            rdev = _rdev(path) if "\0" not in path else None
            if rdev is None:
                continue
            where = f"{case.path.name}::{case.id}: {path}"
            if not policy.allow_destructive:
                lines.append(f"{where} ({case.workload.rw}): a block device")
            elif policy.devices and all(_rdev(name) != rdev for name in policy.devices):
                lines.append(f"{where} ({case.workload.rw}): not among the devices named "
                             f"with {prefix}allow-destructive= ({', '.join(policy.devices)})")
    if not lines:
        return []
    return [f"nothing ran: these cases would write a block device, which needs "
            f"{prefix}allow-destructive\n  on the command line (a suite alone cannot wipe a "
            f"disk; {prefix}allow-destructive=DEVICE allows\n  only the devices it names):\n  "
            + "\n  ".join(lines)]


@contextlib.contextmanager
def guard(cases: Sequence[Case], targets: Sequence[Sequence[str]], policy: Policy,
          on_wait: Callable[[str], None] | None = None) -> Iterator[Guard]:
    """Open and check every case's targets, create (and record) the files that do not exist
    yet, hold exclusive opens of block devices to be written, lock every target against
    other iogate processes (waiting for them, told through ``on_wait``), check every
    ``verify_state`` file; raise TargetError naming the refusal. When the run ends, the
    files that are iogate's own are recorded (again)."""
    while True:
        held = Guard()
        try:
            for case, files in zip(cases, targets, strict=True):
                for path in files:
                    _check(case, path, len(files), policy, held)
            for case, files in zip(cases, targets, strict=True):
                if case.workload.verify_state:
                    check_state_file(case.workload.verify_state, held, files)
            break
        except _Busy as busy:
            # Nothing is held while waiting (two processes taking two targets in opposite
            # orders never wait for each other); everything is checked again afterwards.
            held.close()
            busy.wait(on_wait)
        except BaseException:
            held.close()
            raise
    try:
        yield held
    finally:
        held.close(record=True)


class _Busy(Exception):
    """A target another iogate process holds: its descriptor, to wait on."""

    def __init__(self, where: str, fd: int) -> None:
        super().__init__(where)
        self.where, self.fd = where, fd

    def wait(self, on_wait: Callable[[str], None] | None) -> None:
        holder = lock_holder(self.fd)
        if on_wait is not None:
            on_wait(f"{self.where}: waiting: another iogate process"
                    + (f" (pid {holder})" if holder else "") + " is running on this target")
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)  # Ctrl-C ends the wait
        finally:
            os.close(self.fd)


def _check(case: Case, path: str, nfiles: int, policy: Policy, held: Guard) -> None:
    where = f"{case.path.name}::{case.id}: {path}"
    if "\0" in path:
        raise TargetError(f"{where}: the path contains a NUL byte")
    root = None if case.workload.target_root is None \
        else os.path.realpath(case.workload.target_root)
    if root is not None and not _beneath(root, os.path.realpath(path)):
        # refused before anything is opened or created; checked again on the descriptor
        raise TargetError(f"{where}: resolves to {os.path.realpath(path)}, outside "
                          f"target_root {root}")
    writes = _writes(case)
    fd, st, created = _open(where, path, writes, case.workload.allow_file_create)
    key = file_identity(st)
    if key in held.held:  # named again (another case of the group, another name)
        os.close(fd)
        fd = held.held[key]
    else:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _Busy(where, fd) from None
        except BaseException:
            os.close(fd)
            raise
        held.held[key] = fd
    if stat.S_ISBLK(st.st_mode) and writes and key not in held.exclusive:
        held.exclusive[key] = _exclusive(where, fd, st, policy)
    real = os.readlink(f"/proc/self/fd/{fd}")
    if root is not None and not _beneath(root, real):  # a directory swapped meanwhile
        if created:
            _unlink_same(real, st)
        raise TargetError(f"{where}: resolves to {real}, outside target_root {root}")
    held.names[path] = Pin(real, *key)
    if not stat.S_ISREG(st.st_mode):
        return
    if created or key in held.claims or ownership.owns(fd):
        held.claims[key] = real
        held.grows.add(key)
    else:
        _check_file(case, where, real, st, nfiles, policy, held)


def _under_dev(path: str) -> bool:
    """Whether ``path`` names something in /dev, where only the kernel makes devices."""
    real = os.path.realpath(path)
    return real == "/dev" or real.startswith("/dev/")


def _beneath(root: str, path: str) -> bool:
    return os.path.commonpath([root, path]) == root


def _unlink_same(path: str, st: os.stat_result) -> None:
    """Remove the file iogate just created at ``path`` if it is still that file."""
    with contextlib.suppress(OSError):
        if os.lstat(path).st_ino == st.st_ino and os.lstat(path).st_dev == st.st_dev:
            os.unlink(path)


def _open(where: str, path: str, writes: bool,
          create: bool) -> tuple[int, os.stat_result, bool]:
    """A read-only descriptor of the target (created and recorded if missing and ``create``),
    its status, and whether it was created now. Only regular files and block devices are
    opened at all (a FIFO, a character device are refused without opening them)."""
    try:
        probe = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        if not create:
            raise TargetError(f"{where}: does not exist, and allow_file_create is false: "
                              "iogate creates no target here") from None
        if _under_dev(path):
            raise TargetError(f"{where}: no such device; iogate never creates a regular file "
                              "under /dev (a mistyped device name would fill memory): name "
                              "an existing device, or a file elsewhere") from None
        try:
            fd = _create(os.path.realpath(path))
        except FileExistsError:  # appeared meanwhile: judge it like any existing file
            return _open(where, path, writes, create)
        except OSError as exc:
            raise TargetError(f"{where}: cannot create it: {exc.strerror}") from None
        return fd, os.fstat(fd), True
    except OSError as exc:
        raise TargetError(f"{where}: cannot open it: {exc.strerror}") from None
    try:
        st = os.fstat(probe)
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISBLK(st.st_mode)):
            raise TargetError(f"{where}: not a regular file or block device")
        try:
            fd = os.open(f"/proc/self/fd/{probe}", os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY)
        except OSError as exc:
            raise TargetError(f"{where}: cannot open it: {exc.strerror}") from None
    finally:
        os.close(probe)
    return fd, st, False


def lock_holder(fd: int) -> int | None:
    """The process holding the lock of the file open as ``fd``, from /proc/locks."""
    st = os.fstat(fd)
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == want \
                and fields[4].isascii() and fields[4].isdigit():
            return int(fields[4])
    return None


def _check_file(case: Case, where: str, path: str, st: os.stat_result, nfiles: int,
                policy: Policy, held: Guard) -> None:
    """An existing regular file that is not iogate's own, resolved to ``path``: written only
    with leave (and iogate's own from then on), else read as it is."""
    key = file_identity(st)
    if case.workload.allow_overwrite or path in policy.overwrite:
        held.grows.add(key)
        if _writes(case):
            held.claims[key] = path
        return
    if _writes(case):
        raise TargetError(
            f"{where}: an existing file iogate did not create (iogate knows its own files by "
            f"their identity, recorded in {ownership.state_dir()}; no mark or note on a file "
            "counts); the workload writes, so it is refused. To let iogate take it, pass "
            f"--allow-overwrite {path} once (pytest: --iogate-allow-overwrite {path}) or set "
            "'allow_overwrite: true' for this workload; or remove the file, so that iogate "
            "creates it anew; or point filename at a new file")
    if st.st_size < _region_end(case, nfiles):
        raise TargetError(
            f"{where}: an existing file iogate did not create is {st.st_size} bytes, shorter "
            f"than the region read ({_region_end(case, nfiles)} bytes); iogate will not extend "
            "it. Lower size, or set 'allow_overwrite: true' (or pass --allow-overwrite "
            f"{path}; pytest: --iogate-allow-overwrite {path})")


def _exclusive(where: str, fd: int, st: os.stat_result, policy: Policy) -> int:
    """The device open as ``fd``, checked for writing and opened exclusively: the hold
    lasts as long as the returned descriptor."""
    if not policy.allow_destructive:
        raise TargetError(
            f"{where}: a block device, and the workload writes: that needs "
            "--allow-destructive on the command line (a suite alone cannot wipe a disk)")
    pinned = [name for name in policy.devices if _rdev(name) == st.st_rdev]
    if policy.devices and not pinned:
        raise TargetError(
            f"{where}: not among the devices named with --allow-destructive= "
            f"({', '.join(policy.devices)}); refusing to write it")
    exclusive, busy = _exclusive_open(fd)
    if exclusive is None:
        raise TargetError(f"{where}: {busy}; refusing to write it")
    signature = _signature(exclusive)
    if signature and not any(_named_by_identity(st.st_rdev, name) for name in pinned):
        os.close(exclusive)
        raise TargetError(
            f"{where}: carries data ({signature}); refusing to write it. To wipe it anyway, "
            "name it with --allow-destructive=/dev/disk/by-id/... (its serial or WWN is "
            "checked against the device)")
    return exclusive


def _exclusive_open(fd: int) -> tuple[int | None, str]:
    """An exclusive descriptor of the block device open as ``fd``, or None and why not."""
    try:
        return os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC), ""
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return None, "the device, a partition of it or a holder is mounted or in use"
        return None, f"cannot open it exclusively: {exc.strerror}"


def write_refusal(path: str) -> str | None:
    """Why a run given ``--allow-destructive`` would still refuse to write the block device
    ``path`` now, or None: mounted or in use, or carrying a signature (the checks of
    :func:`guard`, made the same way and released at once), or read-only (where the
    writes would fail)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        return f"cannot open it: {exc.strerror}"
    try:
        exclusive, busy = _exclusive_open(fd)
        if exclusive is None:
            return busy
        try:
            signature = _signature(exclusive)
        finally:
            os.close(exclusive)
        if signature:
            return f"carries data ({signature})"
        rdev = os.fstat(fd).st_rdev
        try:
            if Path(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}/ro").read_text() \
                    .strip() == "1":
                return "read-only"
        except OSError:
            pass
        return None
    finally:
        os.close(fd)


def _rdev(name: str) -> int | None:
    try:
        st = os.stat(name)
    except OSError:
        return None
    return st.st_rdev if stat.S_ISBLK(st.st_mode) else None


def _signature(fd: int) -> str | None:
    """A filesystem or partition table signature found by blkid on the device open as
    ``fd`` (handed to it, so that it probes this very device), None on a blank device.
    Without blkid the device is treated as carrying data: refusing is the safe answer."""
    blkid = shutil.which("blkid") or next(
        (p for p in ("/usr/sbin/blkid", "/sbin/blkid") if os.path.exists(p)), None)
    if blkid is None:
        return "unknown contents: blkid is not installed"
    proc = subprocess.run([blkid, "-p", "-o", "export", f"/proc/self/fd/{fd}"],
                          capture_output=True, text=True, timeout=30, pass_fds=(fd,))
    if proc.returncode == 2:  # nothing found
        return None
    if proc.returncode != 0:
        return f"unknown contents: blkid failed ({proc.stderr.strip() or proc.returncode})"
    facts = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    kind = facts.get("TYPE") or facts.get("PTTYPE") or "a signature"
    return f"{kind} signature" if kind != "a signature" else kind


def device_identity(rdev: int) -> set[str]:
    """Serial and WWN of the whole-disk block device numbered ``rdev``, from sysfs (empty
    when not exposed)."""
    base = Path(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}")
    found: set[str] = set()
    for rel in ("device/serial", "serial", "device/wwid", "wwid", "device/wwn"):
        try:
            value = (base / rel).read_text().strip()
        except OSError:
            continue
        if value:
            found.add(value)
    return found


def _named_by_identity(rdev: int, name: str) -> bool:
    """Whether ``name`` is a /dev/disk/by-id link to the device numbered ``rdev`` whose
    name carries the device's own serial or WWN."""
    if not name.startswith("/dev/disk/by-id/") or _rdev(name) != rdev:
        return False
    link = os.path.basename(name)
    return any(part and part.replace(" ", "_") in link for part in device_identity(rdev))
