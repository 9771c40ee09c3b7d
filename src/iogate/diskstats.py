"""Device statistics: what the block device under a target itself saw during a run.

The kernel counts, per whole disk, the requests it sent to the device in
``/sys/block/DEV/stat`` (Documentation/block/stat.rst). The engine reads that file when
counting starts, at every interval boundary and when the run ends (never during layout
or ramp); this module finds the file for a target, holds the readings
(:class:`DiskStats`) and turns two readings into the ``disk.*`` metrics
(:class:`DiskDelta`):

- ``disk.{read,write,discard}.{ios,merges,bytes}``: the deltas (bytes are 512-byte
  sectors, whatever the device's block size);
- ``disk.util_pct``: time the device had a request in flight (io_ticks), in percent of
  the elapsed time; ``disk.aqu_sz``: time_in_queue over the elapsed time, the mean number
  of requests in flight;
- ``disk.{read,write}.await``: the ticks of a direction per request, in ns. The kernel
  counts ticks in milliseconds, so an await below a few ms over few requests is coarse.

A target not on a block device (tmpfs, a network filesystem, btrfs's anonymous device
numbers, the null engine) has no statistics: the metrics are then not measured.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

SYSFS = Path("/sys")
SECTOR = 512  # the stat file counts sectors of 512 bytes
NS_PER_TICK = 1_000_000  # its times are milliseconds

# The counters of a stat line, in its order (older kernels have the first 11 or 15).
FIELDS = ("read_ios", "read_merges", "read_sectors", "read_ticks",
          "write_ios", "write_merges", "write_sectors", "write_ticks",
          "in_flight", "io_ticks", "time_in_queue",
          "discard_ios", "discard_merges", "discard_sectors", "discard_ticks",
          "flush_ios", "flush_ticks")
MIN_FIELDS = 11
DIRECTIONS = ("read", "write", "discard")
# The metrics a DiskDelta answers, after ``disk.``.
NAMES = (*(f"{d}.{n}" for d in DIRECTIONS for n in ("ios", "merges", "bytes")),
         "util_pct", "aqu_sz", "read.await", "write.await")


def stat_path(target: str, sysfs: Path = SYSFS) -> str | None:
    """The stat file of the whole disk a target is on: a block device (a partition counts
    as its disk), or a file (its filesystem's device; a file not yet created, its nearest
    existing directory's). None when the target is not on a block device sysfs knows."""
    path = Path(target)
    for candidate in (path, *path.parents):
        try:
            st = os.stat(candidate)
            break
        except OSError:
            continue
    else:
        return None
    dev = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    try:
        node = (sysfs / "dev" / "block" / f"{os.major(dev)}:{os.minor(dev)}").resolve(
            strict=True)
    except (OSError, RuntimeError):
        return None  # a virtual filesystem (tmpfs, proc) or an anonymous device
    if (node / "partition").exists():
        node = node.parent  # a partition's directory sits in its disk's
    found = node / "stat"
    return str(found) if found.is_file() else None


def watched(targets: Iterable[tuple[int, str]], sysfs: Path = SYSFS) -> dict[str, list[int]]:
    """The distinct stat files of some (job index, target) pairs, in order of first
    appearance, each with the jobs whose targets are on that device."""
    out: dict[str, list[int]] = {}
    for job, target in targets:
        found = stat_path(target, sysfs)
        if found is not None and job not in out.setdefault(found, []):
            out[found].append(job)
    return out


@dataclass(frozen=True)
class Sample:
    """One reading: when (ns from the start of counting, on the series' time base) and the
    counters of :data:`FIELDS` (0 for those the kernel does not have)."""

    end_ns: int
    counters: tuple[int, ...]


def read_sample(stat_file: str, end_ns: int) -> Sample | None:
    """One reading of a stat file, taken at ``end_ns``, as the engine takes its own (for a
    backend that runs another program); None when the file cannot be read or is not a
    stat line."""
    try:
        fields = Path(stat_file).read_text().split()
    except OSError:
        return None
    if len(fields) < MIN_FIELDS or not all(f.isdigit() for f in fields):
        return None
    counters = [int(f) for f in fields[:len(FIELDS)]]
    return Sample(end_ns, tuple(counters + [0] * (len(FIELDS) - len(counters))))


@dataclass(frozen=True)
class DiskDelta:
    """What a device did between two readings."""

    elapsed_ns: int
    counts: tuple[int, ...]  # the differences of every counter of FIELDS

    def count(self, name: str) -> int:
        """The difference of one counter of :data:`FIELDS`."""
        return self.counts[FIELDS.index(name)]

    def value(self, name: str) -> float | None:
        """One of :data:`NAMES`; None when it cannot be had (no time, no requests)."""
        head, _, tail = name.partition(".")
        if head in DIRECTIONS:
            if tail == "bytes":
                return float(self.count(f"{head}_sectors") * SECTOR)
            if tail == "await":
                ios = self.count(f"{head}_ios")
                return self.count(f"{head}_ticks") * NS_PER_TICK / ios if ios else None
            return float(self.count(f"{head}_{tail}"))
        if not self.elapsed_ns:
            return None
        if name == "util_pct":
            return min(100.0, 100.0 * self.count("io_ticks") * NS_PER_TICK / self.elapsed_ns)
        return self.count("time_in_queue") * NS_PER_TICK / self.elapsed_ns  # aqu_sz

    def to_json(self) -> dict[str, float | None]:
        return {name: self.value(name) for name in NAMES}


def delta(a: Sample, b: Sample) -> DiskDelta:
    """From reading a to the later reading b. A counter that went backwards (a 32-bit
    kernel's counter wrapped) is taken modulo 2^32."""
    return DiskDelta(max(0, b.end_ns - a.end_ns),
                     tuple(y - x if y >= x else y - x + (1 << 32)
                           for x, y in zip(a.counters, b.counters, strict=True)))


@dataclass
class DiskStats:
    """The readings of one device over a run."""

    device: str  # the disk's name (sda, nvme0n1, loop3)
    samples: list[Sample] = field(default_factory=list)
    jobs: list[int] = field(default_factory=list)  # the jobs whose targets are on it

    def total(self) -> DiskDelta | None:
        """Over the counted run: from count start to the end; None without two readings."""
        if len(self.samples) < 2:
            return None
        return delta(self.samples[0], self.samples[-1])

    def intervals(self) -> list[tuple[int, DiskDelta]]:
        """(end_ns, what happened since the previous reading) per interval."""
        return [(b.end_ns, delta(a, b)) for a, b in pairwise(self.samples)]

    def to_json(self) -> dict[str, Any]:
        total = self.total()
        return {"device": self.device, "jobs": self.jobs,
                "total": total.to_json() if total else None}


def device_name(stat_file: str) -> str:
    """``/sys/block/sda/stat`` -> ``sda`` (the directory that holds the file)."""
    return os.path.basename(os.path.dirname(stat_file)) or stat_file


def combined(disks: Sequence[DiskStats], name: str) -> float | None:
    """A metric over every watched device, over the counted run: counts add up, await is
    the ticks of all over the requests of all, util_pct and aqu_sz are the busiest
    device's."""
    return _combine([t for t in (d.total() for d in disks) if t is not None], name)


def combined_intervals(disks: Sequence[DiskStats], name: str) -> list[tuple[int, float | None]]:
    """(end_ns, the metric over every watched device) per interval, combined as
    :func:`combined` does; the devices are read at the same moments."""
    per_disk = [d.intervals() for d in disks]
    n = min((len(iv) for iv in per_disk), default=0)
    return [(per_disk[0][i][0], _combine([iv[i][1] for iv in per_disk], name))
            for i in range(n)]


def _combine(deltas: Sequence[DiskDelta], name: str) -> float | None:
    if not deltas:
        return None
    head, _, tail = name.partition(".")
    if tail == "await":
        ios = sum(t.count(f"{head}_ios") for t in deltas)
        ticks = sum(t.count(f"{head}_ticks") for t in deltas)
        return ticks * NS_PER_TICK / ios if ios else None
    values = [v for v in (t.value(name) for t in deltas) if v is not None]
    if not values:
        return None
    return max(values) if name in ("util_pct", "aqu_sz") else float(sum(values))
