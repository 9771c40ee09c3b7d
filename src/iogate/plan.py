"""What a run is made of before anything runs: the cases' ids, seeds and order, their
target files (a scratch file where the suite names none) and their job specs.

Everything here is decided from the suite alone, so that the fio exporter writes the very
jobs a run would run.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import shutil
import stat
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from iogate import interrupts
from iogate.errors import TargetError, UsageError
from iogate.ids import case_id
from iogate.job import JobSpec
from iogate.lower import lower
from iogate.spec import Case
from iogate.spec.fields import Share
from iogate.spec.models import JobFields
from iogate.spec.modes import directions_of
from iogate.spec.rules import block_table

# Test only: the engine crashes while running the cases whose id matches this glob, so that
# tests can prove a crash becomes a `crashed` case and the run goes on.
TEST_CRASH_ENV = "IOGATE_TEST_CRASH"

JobT = TypeVar("JobT", bound=JobFields)


def seed_for(case: Case) -> int:
    # Stable across runs for the same case, different between cases.
    return zlib.crc32(f"{case.suite_name}/{case.id}".encode()) or 1


def scratch_dir() -> str:
    """Where a workload without a filename gets its temporary file.

    ``IOGATE_TMPDIR`` when set, which must then be a directory iogate may create files in
    (else a UsageError naming it: the filesystem it names is the one measured, never
    another); otherwise /var/tmp, which is disk-backed on common systems (``/tmp`` is often
    tmpfs, where O_DIRECT is refused), then the platform default.
    """
    chosen = os.environ.get("IOGATE_TMPDIR")
    if chosen:
        if not os.path.isdir(chosen):
            what = "is not a directory" if os.path.exists(chosen) else "no such directory"
        elif not os.access(chosen, os.W_OK | os.X_OK):
            what = "iogate may not create files in it"
        else:
            return chosen
        raise UsageError("IOGATE_TMPDIR", f"IOGATE_TMPDIR={chosen}: {what}; set it to a "
                         "directory on the filesystem to measure, or unset it to use "
                         "/var/tmp")
    for candidate in ("/var/tmp", tempfile.gettempdir()):
        if os.path.isdir(candidate) and os.access(candidate, os.W_OK):
            return candidate
    return tempfile.gettempdir()


def plan(cases: Sequence[Case]) -> list[list[Case]]:
    """Cases in the order they run: each alone (fio's stonewall), except that cases sharing a
    ``group`` within a suite run together, at the place of the group's first case."""
    units: list[list[Case]] = []
    by_group: dict[tuple[Path, str], list[Case]] = {}
    for case in cases:
        if case.group is None:
            units.append([case])
            continue
        key = (case.path, case.group)
        if key not in by_group:
            by_group[key] = []
            units.append(by_group[key])
        by_group[key].append(case)
    return units


def expected_bytes(cases: Sequence[Case]) -> int | None:
    """Bytes a run that ends by size (or io_size) will move, for progress; None when one
    ends by time or by a count of requests (or its size is the target's, known once the run
    starts)."""
    total = 0
    for c in cases:
        w = c.workload
        per_thread = w.io_size if w.io_size is not None else w.size
        if w.time_based or w.number_ios is not None or not isinstance(per_thread, int):
            return None
        total += per_thread * w.numjobs
    return total


def sized(case: Case, files: Sequence[str]) -> Case:
    """The case with its region in bytes for its workload and each precondition step, by
    fio's rules where it depends on the target (which must exist): no size is from offset
    to the end of the file or device; a share size (``50%``) is that share of it, at most
    to the end and rounded down to the smallest block size; a share offset (``25%``) is
    rounded up to ``offset_align`` (default: the smallest block size). Over several files,
    the smallest one's, per file. TargetError when it cannot be."""
    end_of: dict[bool, tuple[int, str]] = {}  # the smallest file's end and path, once read

    def target(absent_ok: bool) -> tuple[int, str]:
        if absent_ok not in end_of:
            if not files:
                raise TargetError(f"{case_id(case)}: no size and no file to take it from: "
                                  "give size")
            ends = [_size_of(path, absent_ok) for path in files]
            end_of[absent_ok] = (min(ends), files[ends.index(min(ends))])
        return end_of[absent_ok]

    def resolve(job: JobT) -> JobT:
        if job.fill_device:
            _fillable(case, files)
        if isinstance(job.size, int) and isinstance(job.offset, int):
            return job
        if job.fill_device and job.size is None and isinstance(job.offset, int):
            return job.model_copy(update={"size": _fill_room(case, job, job.offset, files)})
        # With a size in bytes only a share offset needs the target: a share of what the
        # file holds when the run starts, none when it is yet to be made (fio's rule).
        end, path = target(absent_ok=isinstance(job.size, int))
        smallest = min(lo for d in directions_of(job.rw) for lo, _, _ in block_table(job, d))
        offset = job.offset
        if isinstance(offset, Share):
            align = job.offset_align or smallest
            offset = -(-offset.of(end) // align) * align
        if isinstance(job.size, int):
            return job.model_copy(update={"offset": offset})
        room = end - offset
        if room <= 0:
            raise TargetError(f"{case_id(case)}: '{path}' ({end} bytes) ends before offset "
                              f"{offset}: give a smaller offset or a size")
        size = job.size
        per_file = room if size is None else min(size.of(end), room)
        if size is not None:
            per_file -= per_file % smallest
            if per_file <= 0:
                raise TargetError(f"{case_id(case)}: size {size} of '{path}' ({end} "
                                  f"bytes) is less than one block ({smallest} bytes)")
        return job.model_copy(update={"size": per_file * len(files), "offset": offset})

    w = resolve(case.workload)
    steps = [resolve(s) for s in case.preconditions]
    if w is case.workload and all(a is b for a, b in zip(steps, case.preconditions, strict=True)):
        return case
    return replace(case, workload=w, preconditions=steps)


def _fillable(case: Case, files: Sequence[str]) -> None:
    """fill_device fills a filesystem: a block device has a known size and no ENOSPC."""
    for path in files:
        with contextlib.suppress(OSError):
            if stat.S_ISBLK(os.stat(path).st_mode):
                raise TargetError(f"{case_id(case)}: fill_device fills the filesystem holding "
                                  f"a file, but '{path}' is a block device, whose size is "
                                  "known: drop fill_device (without size the device is used "
                                  "whole)")


def _fill_room(case: Case, job: JobFields, offset: int, files: Sequence[str]) -> int:
    """The most a fill_device workload writes: per file, what it holds from the offset on
    plus the free space of its filesystem (what root may use, reserved blocks included,
    for root), rounded down to the block size; ENOSPC ends it sooner when files share a
    filesystem."""
    smallest = min(lo for lo, _, _ in block_table(job, "write"))
    per_file = []
    for path in files:
        try:
            vfs = os.statvfs(os.path.dirname(os.path.abspath(path)))
        except OSError as exc:
            raise TargetError(f"{case_id(case)}: fill_device: cannot look at the filesystem "
                              f"of '{path}' ({exc.strerror})") from None
        free = (vfs.f_bfree if os.geteuid() == 0 else vfs.f_bavail) * vfs.f_frsize
        try:
            held = max(0, os.stat(path).st_size - offset)
        except FileNotFoundError:
            held = 0
        per_file.append((held + free) // smallest * smallest)
    room = min(per_file)
    if room < smallest:
        raise TargetError(f"{case_id(case)}: fill_device: the filesystem of '{files[0]}' has "
                          f"no room for one {smallest}-byte block")
    return room * len(files)


def _size_of(path: str, absent_ok: bool = False) -> int:
    """The size of a file, or of a block device (its end), that must exist unless
    ``absent_ok`` (then a missing file has none)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        if absent_ok and exc.errno == errno.ENOENT:
            return 0
        raise TargetError(f"'{path}': no size given, so the workload uses the file whole, "
                          f"but it cannot be opened ({exc.strerror}); give size, or create "
                          "the file first") from None
    try:
        return os.lseek(fd, 0, os.SEEK_END)  # a regular file's length, a device's capacity
    finally:
        os.close(fd)


@contextlib.contextmanager
def targets_of(cases: Sequence[Case], override: str | None) -> Iterator[list[list[str]]]:
    """The files of each case: ``--filename`` if given, else the suite's, else a temporary
    file (removed afterwards). The null engine needs none."""
    scratch: str | None = None
    out: list[list[str]] = []
    try:
        for case in cases:
            w = case.workload
            if w.ioengine == "null":
                out.append([])
            elif override:
                out.append([override])
            elif w.filename:
                out.append([w.filename] if isinstance(w.filename, str) else list(w.filename))
            else:
                if scratch is None:
                    with interrupts.deferred():  # made and remembered, or neither
                        scratch = tempfile.mkdtemp(prefix="iogate-", dir=scratch_dir())
                out.append([os.path.join(scratch, f"{case.id}.data")])
        yield out
    finally:
        if scratch:
            with interrupts.deferred():  # an interrupt does not leave half of it behind
                shutil.rmtree(scratch, ignore_errors=True)


def target_text(files: list[str]) -> str | None:
    return ", ".join(files) if files else None


def spec_for(case: Case, files: list[str]) -> JobSpec:
    spec = lower(case.workload, filenames=files, seed=seed_for(case))
    # The series is cut at the interval the windowed expectations judge (the loader made
    # sure they agree on one).
    window = next((e.window for e in case.expectations if e.window is not None), None)
    if window is not None:
        spec = replace(spec, interval_ns=window.interval_ns)
    crash = os.environ.get(TEST_CRASH_ENV)
    if crash and fnmatch.fnmatchcase(case_id(case), crash):
        spec = replace(spec, test_crash=True)
    return spec
