"""Job options that change how long a job runs and where it goes next, through libiogate:
io_limit_bytes (fio's io_size), io_limit_ios (number_ios), end_fsync, seq_skip (fio's
``rw=read:N`` offset modifier) and start_delay_ns (startdelay). Counts are read from the
results: requests and bytes realized, syncs counted, offsets covered, where a read past a
short file failed."""

from __future__ import annotations

import errno
import time

import pytest

from iogate.engine.session import Session, run
from iogate.errors import EngineError
from iogate.job import JobSpec

KiB, MiB = 1024, 1024 * 1024
MS = 1_000_000


def spec(**overrides) -> JobSpec:
    base = dict(engine="null", rw="read", size=1 * MiB)
    base.update(overrides)
    return JobSpec(**base)


@pytest.fixture(scope="module")
def file_engines(tmp_path_factory) -> set[str]:
    """The file engines this kernel and sandbox allow."""
    usable = set()
    path = tmp_path_factory.mktemp("probe") / "probe.dat"
    for engine in ("psync", "sync", "io_uring", "libaio", "mmap"):
        try:
            run([spec(engine=engine, iodepth=2 if engine in ("io_uring", "libaio") else 1,
                      size=64 * KiB, filename=str(path))])
            usable.add(engine)
        except EngineError as e:
            if e.errno not in (errno.EPERM, errno.ENOSYS, errno.EACCES, errno.EOPNOTSUPP):
                raise
    return usable


# -- io_limit_ios (number_ios) -----------------------------------------------------------

def test_a_request_limit_ends_the_job_before_its_size():
    assert run([spec(io_limit_ios=100)]).metric("read.ios") == 100


def test_a_request_limit_is_per_thread():
    assert run([spec(io_limit_ios=100, numjobs=3)]).metric("read.ios") == 300


def test_a_request_limit_counts_both_directions_of_a_mix():
    result = run([spec(rw="randrw", size=64 * MiB, io_limit_ios=500)])
    assert result.metric("read.ios") + result.metric("write.ios") == 500


def test_a_request_limit_does_not_extend_the_size():
    # 256 requests make the region; a limit above that leaves the size as the end
    assert run([spec(io_limit_ios=10_000)]).metric("read.ios") == 256


def test_a_request_limit_ends_a_time_based_job_before_its_runtime():
    # the first of runtime and the limit: an hour's runtime ends after 100 requests
    result = run([spec(io_limit_ios=100, time_based=True, runtime_ns=3600 * 10**9)])
    assert result.metric("read.ios") == 100


# -- io_limit_bytes (io_size) ------------------------------------------------------------

def test_a_byte_limit_twice_the_size_reads_the_region_twice():
    result = run([spec(io_limit_bytes=2 * MiB)])
    assert result.metric("read.bytes") == 2 * MiB
    assert result.metric("offsets.coverage_pct") == 100


def test_a_byte_limit_below_the_size_stops_part_way(tmp_path):
    path = tmp_path / "f"
    result = run([spec(engine="psync", filename=str(path), size=4 * MiB,
                       io_limit_bytes=1 * MiB)])
    assert result.metric("read.bytes") == 1 * MiB
    assert result.metric("offsets.coverage_pct") == 25


def test_a_byte_limit_on_a_real_file_wraps_around_it(tmp_path, file_engines):
    for engine in file_engines:
        path = tmp_path / engine
        result = run([spec(engine=engine, rw="write", filename=str(path), size=256 * KiB,
                           iodepth=1 if engine in ("psync", "sync", "mmap") else 4,
                           io_limit_bytes=3 * 256 * KiB)])
        assert result.metric("write.bytes") == 3 * 256 * KiB, engine
        assert path.stat().st_size == 256 * KiB, engine


def test_a_byte_limit_is_per_thread():
    assert run([spec(io_limit_bytes=512 * KiB, numjobs=2)]).metric("read.bytes") == 1 * MiB


def test_a_byte_limit_ends_a_time_based_job_before_its_runtime():
    result = run([spec(io_limit_bytes=3 * MiB, time_based=True, runtime_ns=3600 * 10**9)])
    assert result.metric("read.bytes") == 3 * MiB


# -- end_fsync ---------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ["psync", "io_uring", "mmap"])
def test_end_fsync_syncs_each_file_once(tmp_path, engine, file_engines):
    if engine not in file_engines:
        pytest.skip(f"{engine} cannot run here")
    names = [str(tmp_path / n) for n in ("a", "b", "c")]
    result = run([spec(engine=engine, rw="write", size=3 * 256 * KiB, filenames=names,
                       end_fsync=True, iodepth=4 if engine == "io_uring" else 1)])
    assert result.metric("write.bytes") == 3 * 256 * KiB
    assert result.metric("sync.ios") == 3
    assert result.jobs[0].sync.errors == 0


def test_end_fsync_is_per_thread_and_counted_with_the_syncs_every_n(tmp_path):
    result = run([spec(engine="psync", rw="write", size=256 * KiB,
                       filename=str(tmp_path / "f"), numjobs=2, end_fsync=True,
                       sync_kind="fsync", sync_every=16)])
    # 64 writes per thread: 4 syncs every 16 writes, and one at the end, per thread
    assert result.metric("sync.ios") == 2 * (4 + 1)


def test_end_fsync_of_a_job_that_never_writes_syncs_nothing(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"\1" * 256 * KiB)
    result = run([spec(engine="psync", size=256 * KiB, filename=str(path), end_fsync=True)])
    assert result.metric("read.bytes") == 256 * KiB
    assert result.metric("sync.ios") == 0


def test_end_fsync_time_is_inside_the_job_runtime(tmp_path):
    result = run([spec(engine="psync", rw="write", size=256 * KiB,
                       filename=str(tmp_path / "f"), end_fsync=True)])
    assert result.metric("sync.ios") == 1
    assert result.metric("write.runtime") >= result.metric("sync.lat.max") > 0


# -- seq_skip (rw=read:N) ----------------------------------------------------------------

def test_a_positive_skip_leaves_holes_and_wraps_to_the_start():
    # 4 KiB reads skipping 4 KiB: every other block, twice over for the size
    result = run([spec(size=64 * KiB, bs_read=4 * KiB, seq_skip=4 * KiB)])
    assert result.metric("read.ios") == 16
    assert result.metric("offsets.coverage_pct") == 50


def test_a_negative_skip_reads_the_region_backwards():
    # fio's backwards-read: bs=4k, rw=read:-8k. From the start, each next offset is the
    # last one's end minus 8 KiB: 0, then (before the start) the region end - 8 KiB, and on
    # down by 4 KiB: 56k, 52k, ..., 4k, 0. The last block is never read.
    result = run([spec(size=64 * KiB, bs_read=4 * KiB, seq_skip=-8 * KiB)])
    assert result.metric("read.ios") == 16
    assert result.metric("offsets.coverage_pct") == 15 / 16 * 100


def test_a_negative_skip_goes_from_the_start_to_the_region_end(tmp_path):
    # The file ends 8 KiB before the region does: a read there fails at end of file. The
    # second request of a backwards read is the one at region end - 8 KiB: it fails, at
    # that very offset.
    path = tmp_path / "f"
    path.write_bytes(b"\1" * 56 * KiB)
    result = run([spec(engine="psync", size=64 * KiB, bs_read=4 * KiB, seq_skip=-8 * KiB,
                       filename=str(path), no_layout=True, io_limit_ios=2)])
    read = result.jobs[0].read
    assert read.ios == 1
    assert read.errors == 1
    assert read.first_errno == errno.ENODATA
    assert read.first_error_offset == 56 * KiB


def test_a_skip_of_minus_the_block_size_rereads_the_first_block():
    # fio's rule, next = end of the last request + skip: with bs=8k, rw=read:-8k every
    # request is at the region start
    result = run([spec(size=64 * KiB, bs_read=8 * KiB, seq_skip=-8 * KiB)])
    assert result.metric("read.ios") == 8
    assert result.metric("offsets.coverage_pct") == 100 / 8


def test_a_skip_of_a_random_job_is_refused():
    with pytest.raises(EngineError, match="seq_skip applies to sequential jobs"):
        run([spec(rw="randread", seq_skip=4 * KiB)])


# -- start_delay_ns (startdelay) ---------------------------------------------------------

def test_a_delayed_job_runs_after_its_delay_which_its_runtime_excludes():
    # The session waits for the delayed job (it ran: its requests are counted), and the job's
    # counted time is its own runtime: had the delay been counted, it would be >= the delay.
    delay = 2 * 10**9
    result = run([spec(time_based=True, runtime_ns=100 * MS, start_delay_ns=delay),
                  spec(io_limit_ios=10)])
    delayed = result.jobs[0].read
    assert delayed.ios > 0
    assert 100 * MS <= delayed.runtime_ns < delay
    assert result.jobs[1].read.ios == 10


def test_a_delayed_job_counts_nothing_until_it_starts_and_cancels_during_its_delay():
    # progress expects the delay and the runtime; a cancel ends the wait at once
    with Session([spec(start_delay_ns=3600 * 10**9, time_based=True, runtime_ns=10**9)]) as s:
        s.start()
        for _ in range(100):  # let the run clock start
            if s.poll().state != "layout":
                break
            time.sleep(0.01)
        p = s.poll()
        assert p.state in ("ramp", "running")
        assert p.ios == (0, 0)
        assert p.expected_ns >= 3601 * 10**9  # the delay, then the runtime
        s.cancel()
        assert s.wait(60)
        result = s.collect()
    assert result.metric("read.ios") == 0


def test_the_series_of_a_delayed_job_starts_when_it_does():
    # intervals are measured from the job's own count start: they hold every request it
    # counted, and none ends past its counted time
    delay = 300 * MS
    result = run([spec(time_based=True, runtime_ns=250 * MS, start_delay_ns=delay,
                       interval_ns=50 * MS),
                  spec(time_based=True, runtime_ns=100 * MS, interval_ns=50 * MS)])
    delayed = result.jobs[0].read
    assert delayed.series
    assert sum(i.ios for i in delayed.series) == delayed.ios > 0
    assert all(i.end_ns <= delayed.runtime_ns for i in delayed.series)
    assert [i.end_ns for i in delayed.series] == sorted(i.end_ns for i in delayed.series)
