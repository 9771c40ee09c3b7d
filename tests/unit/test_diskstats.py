"""Device statistics in Python: which stat file a target's disk has, the disk.* values
of two readings, and the warnings that hold them against what the jobs did."""

from __future__ import annotations

import os
from pathlib import Path

from iogate.diskstats import FIELDS, DiskStats, Sample, delta, stat_path
from iogate.job import JobSpec
from iogate.realized import device_warnings
from iogate.results import DirectionResult, JobResult, RunResult

MS = 1_000_000


def counters(**values: int) -> tuple[int, ...]:
    return tuple(values.get(name, 0) for name in FIELDS)


def test_a_file_not_yet_created_is_on_its_directory_disk(disk_dir: Path) -> None:
    assert stat_path(str(disk_dir / "later" / "x.dat")) == stat_path(str(disk_dir))


def test_virtual_filesystems_have_no_disk() -> None:
    assert stat_path("/proc/self/status") is None
    if os.path.isdir("/dev/shm"):
        assert stat_path("/dev/shm/x") is None


def test_values_of_two_readings() -> None:
    a = Sample(0, counters(read_ios=10, read_sectors=80, read_ticks=5, io_ticks=100,
                           time_in_queue=50))
    b = Sample(1_000_000_000, counters(read_ios=110, read_merges=3, read_sectors=880,
                                       read_ticks=205, io_ticks=600, time_in_queue=2050))
    d = delta(a, b)
    assert d.value("read.ios") == 100
    assert d.value("read.merges") == 3
    assert d.value("read.bytes") == 800 * 512
    assert d.value("read.await") == 2 * MS  # 200 ms over 100 requests
    assert d.value("write.await") is None  # no writes
    assert d.value("util_pct") == 50.0
    assert d.value("aqu_sz") == 2.0
    # a 32-bit counter that wrapped
    wrapped = delta(Sample(0, counters(write_ios=(1 << 32) - 2)),
                    Sample(1, counters(write_ios=3)))
    assert wrapped.value("write.ios") == 5


def _run(job_ios: int, job_bytes: int, dev_ios: int, dev_bytes: int) -> RunResult:
    disk = DiskStats("loop9", [Sample(0, counters()),
                               Sample(10**9, counters(read_ios=dev_ios,
                                                      read_sectors=dev_bytes // 512))], [0])
    job = JobResult(read=DirectionResult(ios=job_ios, bytes=job_bytes))
    spec = JobSpec(engine="psync", rw="randread", size=64 << 20)
    return RunResult(jobs=[job], specs=[spec], disks=[disk])


def test_the_device_reading_what_the_job_read_is_no_warning() -> None:
    r = _run(4096, 16 << 20, 4000, 16 << 20)  # a few merges
    assert device_warnings(r.specs, r) == []
    assert r.metric("disk.read.ios") == 4000


def test_a_device_that_read_far_less_warns_of_the_page_cache() -> None:
    r = _run(4096, 16 << 20, 10, 1 << 20)
    (w,) = device_warnings(r.specs, r)
    assert w.startswith("disk.read.bytes:")
    assert "page cache" in w
    assert "50%" in w


def test_a_device_that_did_far_more_requests_warns_of_other_io() -> None:
    r = _run(100, 400 << 10, 1000, 400 << 10)
    (w,) = device_warnings(r.specs, r)
    assert w.startswith("disk.read.ios:")
    assert "polluted" in w
    # large requests split at the device are not other I/O: 100 x 1 MiB, 800 pieces
    split = _run(100, 100 << 20, 800, 100 << 20)
    assert device_warnings(split.specs, split) == []


def test_a_direction_the_jobs_did_not_do_is_not_judged() -> None:
    r = _run(0, 0, 5000, 20 << 20)  # reads of others while the job did none
    assert device_warnings(r.specs, r) == []
