"""Environment facts from /proc and sysfs: the host, and the filesystem and block device
behind a target path, for the ``iogate_environment`` hook.

Keys (each present only when the system exposes it):

- host: ``host``, ``os``, ``machine``, ``kernel``, ``cpu_model``, ``cpu_count``,
  ``memory_bytes``;
- target: ``target.path``, ``target.kind`` (``file`` or ``block``), ``target.fs``,
  ``target.mount``, ``target.mount_source``, ``target.device`` (the whole disk, e.g.
  ``nvme0n1``), ``target.partition``, ``target.device_model``, ``target.serial``,
  ``target.firmware``, ``target.vendor``, ``target.size_bytes``, ``target.rotational``,
  ``target.logical_block_size``, ``target.physical_block_size``, ``target.scheduler``,
  ``target.nr_requests``, ``target.max_sectors_kb``, ``target.max_hw_sectors_kb``,
  ``target.queue_depth``, ``target.write_cache``, ``target.backing_file`` (loop devices),
  ``target.slaves`` (device-mapper and md devices);
- ``device_model`` and ``firmware``: the target's, under the short names baselines key on.

Everything is best effort: an unreadable or missing file leaves its key out, never raises.
The /proc and /sys roots are parameters so tests can point them at a fake tree.
"""

from __future__ import annotations

import os
import platform
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from iogate.hooks import hookimpl

PROC = Path("/proc")
SYSFS = Path("/sys")

Facts = dict[str, object]


def _read(path: Path) -> str | None:
    """A sysfs or procfs attribute, stripped; None when absent, unreadable or empty."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except (OSError, ValueError):
        return None
    return text or None


def _read_int(path: Path) -> int | None:
    text = _read(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _put(facts: Facts, key: str, value: object | None) -> None:
    if value is not None:
        facts[key] = value


# -- host --------------------------------------------------------------------------------------

def host_facts(proc: Path = PROC) -> Facts:
    uname = platform.uname()
    facts: Facts = {"host": socket.gethostname(), "os": uname.system,
                    "machine": uname.machine, "kernel": uname.release}
    cpu_model, memory_bytes = _proc_facts(proc)
    _put(facts, "cpu_model", cpu_model)
    _put(facts, "cpu_count", os.cpu_count())
    _put(facts, "memory_bytes", memory_bytes)
    return facts


# What the files of a /proc tree said, keyed by the tree and each file's identity and times:
# every case of a run asks, and reading (on large machines, generating) cpuinfo is costly.
# procfs keeps a file's times whatever it says, so the real /proc is read once per process
# (the CPU model and installed memory do not change under a run); a tree of plain files, as
# tests make, is read again when a file is rewritten.
_PROC_FILES = ("cpuinfo", "meminfo")
_proc_cache: dict[tuple[object, ...], tuple[str | None, int | None]] = {}


def _signature(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _proc_facts(proc: Path) -> tuple[str | None, int | None]:
    """The CPU model and the memory size from ``proc``, read again only when one of its
    files is another or was changed."""
    root = str(proc)
    key = (root, *(_signature(os.path.join(root, name)) for name in _PROC_FILES))
    found = _proc_cache.get(key)
    if found is None:
        found = _cpu_model(proc), _mem_total_bytes(proc)
        if len(_proc_cache) >= 16:
            _proc_cache.clear()
        _proc_cache[key] = found
    return found


def _cpu_model(proc: Path) -> str | None:
    text = _read(proc / "cpuinfo")
    if text is None:
        return None
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    # x86 says "model name"; several other architectures only say "Hardware" or "cpu".
    for key in ("model name", "Hardware", "cpu", "Processor"):
        if fields.get(key):
            return fields[key]
    return None


def _mem_total_bytes(proc: Path) -> int | None:
    text = _read(proc / "meminfo")
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "MemTotal:" and parts[1].isdigit():
            return int(parts[1]) * 1024
    return None


# -- mounts ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mount:
    """One line of /proc/self/mountinfo."""

    major: int
    minor: int
    mount_point: str
    fs_type: str
    source: str


def _unescape(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash as \ooo octal escapes.
    out, i = [], 0
    while i < len(field):
        code = field[i + 1:i + 4]
        if field[i] == "\\" and len(code) == 3 and code.isdigit():
            out.append(chr(int(code, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mountinfo(text: str) -> list[Mount]:
    mounts = []
    for line in text.split("\n"):
        fields = line.split(" ")  # single spaces; Unicode-aware split() would cut names
        try:
            sep = fields.index("-", 6)  # optional fields end with a lone "-"
            major, minor = (int(x) for x in fields[2].split(":"))
            mounts.append(Mount(major, minor, _unescape(fields[4]), fields[sep + 1],
                                _unescape(fields[sep + 2])))
        except (ValueError, IndexError):
            continue
    return mounts


def _within(path: str, mount_point: str) -> bool:
    return mount_point == "/" or path == mount_point or path.startswith(mount_point + "/")


def find_mount(path: str, dev: tuple[int, int], mounts: list[Mount]) -> Mount | None:
    """The mount holding ``path`` (absolute, symlinks resolved) on device ``dev``.

    The deepest mount point containing the path wins, a later line on ties (it is mounted
    over the earlier). When no line has the file's device number (btrfs subvolumes report
    anonymous ones), the deepest mount point containing the path is taken.
    """
    containing = [m for m in mounts if _within(path, m.mount_point)]
    same_dev = [m for m in containing if (m.major, m.minor) == dev]
    candidates = same_dev or containing
    best: Mount | None = None
    for m in candidates:
        if best is None or len(m.mount_point) >= len(best.mount_point):
            best = m
    return best


# -- block devices -----------------------------------------------------------------------------

def whole_disk(major: int, minor: int, sysfs: Path = SYSFS) -> tuple[Path, str | None] | None:
    """The sysfs directory of the whole disk behind device MAJ:MIN, and the partition name
    when MAJ:MIN is a partition of it; None when sysfs does not know the device."""
    try:
        node = (sysfs / "dev" / "block" / f"{major}:{minor}").resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if (node / "partition").exists():
        return node.parent, node.name  # a partition's directory sits in its disk's
    return node, None


def block_device_facts(major: int, minor: int, sysfs: Path = SYSFS) -> Facts:
    """``target.*`` facts of the block device MAJ:MIN (resolved to its whole disk)."""
    found = whole_disk(major, minor, sysfs)
    if found is None:
        return {}
    disk, partition = found
    facts: Facts = {"target.device": disk.name}
    _put(facts, "target.partition", partition)
    # For NVMe, a namespace's `device` is its controller (or subsystem), which carries the
    # identity; for SCSI/ATA it is the SCSI device; for virtio the serial sits on the disk.
    device = disk / "device"
    _put(facts, "target.device_model", _read(device / "model"))
    _put(facts, "target.serial", _read(device / "serial") or _read(disk / "serial"))
    _put(facts, "target.firmware", _read(device / "firmware_rev") or _read(device / "rev"))
    _put(facts, "target.vendor", _read(device / "vendor"))
    _put(facts, "target.queue_depth", _read_int(device / "queue_depth"))
    sectors = _read_int(disk / "size")
    _put(facts, "target.size_bytes", sectors * 512 if sectors is not None else None)
    queue = disk / "queue"
    rotational = _read_int(queue / "rotational")
    _put(facts, "target.rotational", bool(rotational) if rotational is not None else None)
    for name in ("logical_block_size", "physical_block_size", "nr_requests",
                 "max_sectors_kb", "max_hw_sectors_kb"):
        _put(facts, f"target.{name}", _read_int(queue / name))
    _put(facts, "target.scheduler", _active_scheduler(_read(queue / "scheduler")))
    _put(facts, "target.write_cache", _read(queue / "write_cache"))
    _put(facts, "target.backing_file", _read(disk / "loop" / "backing_file"))
    try:
        slaves = sorted(p.name for p in (disk / "slaves").iterdir())
    except OSError:
        slaves = []
    if slaves:
        facts["target.slaves"] = ",".join(slaves)
    return facts


def _active_scheduler(text: str | None) -> str | None:
    """The [bracketed] entry of queue/scheduler ("none [mq-deadline] kyber"), or the only
    one listed (some devices show just "none")."""
    if text is None:
        return None
    words = text.split()
    for word in words:
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return words[0] if len(words) == 1 else None


# -- the target --------------------------------------------------------------------------------

def _existing(path: Path) -> Path | None:
    """``path`` or its nearest existing ancestor: a target file may be created later."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return None


def target_facts(target: str, proc: Path = PROC, sysfs: Path = SYSFS) -> Facts:
    path = Path(os.path.abspath(target))
    facts: Facts = {"target.path": str(path)}
    try:
        existing = _existing(path)
        st = os.stat(existing) if existing is not None else None
        real = str(existing.resolve()) if existing is not None else ""
    except (OSError, ValueError):  # ValueError: a NUL in the path; OSError: a dead mount
        return facts
    if existing is None or st is None:
        return facts
    if stat.S_ISBLK(st.st_mode):
        facts["target.kind"] = "block"
        facts.update(block_device_facts(os.major(st.st_rdev), os.minor(st.st_rdev), sysfs))
        return facts
    facts["target.kind"] = "file"
    dev = (os.major(st.st_dev), os.minor(st.st_dev))
    mount = find_mount(real, dev,
                       parse_mountinfo(_read(proc / "self" / "mountinfo") or ""))
    if mount is not None:
        facts["target.fs"] = mount.fs_type
        facts["target.mount"] = mount.mount_point
        facts["target.mount_source"] = mount.source
    block = block_device_facts(*dev, sysfs)
    if not block and mount is not None and mount.source.startswith("/dev/"):
        # The file's st_dev is anonymous (btrfs, overlay): try the mounted device instead.
        try:
            src = os.stat(mount.source)
        except OSError:
            src = None
        if src is not None and stat.S_ISBLK(src.st_mode):
            block = block_device_facts(os.major(src.st_rdev), os.minor(src.st_rdev), sysfs)
    facts.update(block)
    return facts


def environment(target: str | None, proc: Path = PROC, sysfs: Path = SYSFS) -> Facts:
    facts = host_facts(proc)
    if target:
        facts.update(target_facts(target, proc, sysfs))
        for alias in ("device_model", "firmware"):
            if f"target.{alias}" in facts:
                facts[alias] = facts[f"target.{alias}"]
    return facts


@hookimpl
def iogate_environment(target: str | None) -> dict[str, object]:
    try:
        return environment(target)
    except Exception:  # facts are best effort: a run never fails for want of them
        return {}
