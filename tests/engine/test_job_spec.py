"""JobSpec to the C struct: every field lands where the library reads it, nothing wraps."""

from __future__ import annotations

import ctypes
import errno

import pytest

from iogate.engine import limits, native
from iogate.engine.session import job_struct
from iogate.errors import EngineError
from iogate.job import BsEntry, JobSpec, Zone

KiB, MiB = 1024, 1024 * 1024


def spec(**overrides) -> JobSpec:
    base = dict(engine="null", rw="randrw", bs_write=8 * KiB, iodepth=4, size=1 * MiB,
                rwmixread=70)
    base.update(overrides)
    return JobSpec(**base)


def filename_field(c: ctypes.Structure) -> bytes:
    start = native.job_spec_type().filename.offset
    return bytes(c)[start:start + limits.PATH_MAX]


def test_single_bs_becomes_a_one_entry_table_per_direction():
    c = job_struct(spec())
    assert c.struct_size == ctypes.sizeof(native.job_spec_type())
    assert list(c.nbs) == [1, 1]
    read, write = c.bs[native.DIR_READ][0], c.bs[native.DIR_WRITE][0]
    assert (read.lo, read.hi, read.weight) == (4 * KiB, 4 * KiB, native.WEIGHT_TOTAL)
    assert (write.lo, write.hi, write.weight) == (8 * KiB, 8 * KiB, native.WEIGHT_TOTAL)


def test_bssplit_tables_rates_and_distribution_are_copied():
    s = spec(bssplit_read=[BsEntry(4 * KiB, 4 * KiB, 600_000), BsEntry(KiB, 16 * KiB, 400_000)],
             blockalign_read=KiB, rate_iops_read=700, rate_iops_write=300,
             rate_bytes_write=10 * MiB, rate_process="poisson", dist="zoned",
             zones=[Zone(900_000, 100_000), Zone(100_000, 900_000)], dist_param=1.5)
    c = job_struct(s)
    assert c.nbs[native.DIR_READ] == 2
    second = c.bs[native.DIR_READ][1]
    assert (second.lo, second.hi, second.weight) == (KiB, 16 * KiB, 400_000)
    assert c.blockalign[native.DIR_READ] == KiB
    assert c.blockalign[native.DIR_WRITE] == 0
    assert list(c.rate_iops) == [700, 300]
    assert list(c.rate_bytes) == [0, 10 * MiB]
    assert c.rate_process == native.RATE_POISSON
    assert (c.dist, c.dist_param, c.nzones) == (native.DIST_ZONED, 1.5, 2)
    assert (c.zones[0].access, c.zones[0].size) == (900_000, 100_000)


def test_pacing_data_and_flags_are_copied():
    c = job_struct(spec(thinktime_ns=5000, thinktime_blocks=4, sync_kind="fdatasync", sync_every=16,
             compress_pct=50, compress_chunk=4096, dedupe_pct=10, pattern=b"\xde\xad\x00\xef",
             refill=True, zero_buffers=True, invalidate=True, time_based=True))
    assert (c.thinktime_ns, c.thinktime_blocks) == (5000, 4)
    assert (c.sync_kind, c.sync_every) == (native.SYNC_FDATASYNC, 16)
    assert (c.compress_pct, c.compress_chunk, c.dedupe_pct) == (50, 4096, 10)
    assert c.pattern_len == 4
    assert bytes(c.pattern[:4]) == b"\xde\xad\x00\xef"
    want = (native.JOB_TIME_BASED | native.JOB_REFILL | native.JOB_ZERO_BUFS
            | native.JOB_INVALIDATE)
    assert c.flags == want


def test_file_list_is_nul_separated_and_ends_with_an_empty_name():
    c = job_struct(spec(filenames=["/a", "/bb"], filename="/ignored"))
    assert filename_field(c)[:8] == b"/a\0/bb\0\0"
    assert filename_field(job_struct(spec(filename="/one")))[:6] == b"/one\0\0"
    assert filename_field(job_struct(spec()))[:1] == b"\0"  # no file at all (null engine)


def test_file_list_that_does_not_fit_is_an_error():
    names = [f"/{'x' * 98}" for _ in range(41)]  # 41 * 100 + 1 bytes > 4096
    with pytest.raises(EngineError) as exc:
        job_struct(spec(filenames=names))
    assert exc.value.errno == errno.ENAMETOOLONG
    exact = ["/" + "x" * (limits.PATH_MAX - 3)]  # name + NUL + final NUL == 4096
    assert filename_field(job_struct(spec(filenames=exact)))[-2:] == b"\0\0"
    with pytest.raises(EngineError, match="files, the limit"):
        job_struct(spec(filenames=[f"/f{i}" for i in range(limits.FILES_MAX + 1)]))
    with pytest.raises(EngineError, match="NUL"):
        job_struct(spec(filenames=["/a\0b"]))


@pytest.mark.parametrize(("overrides", "word"), [
    (dict(engine="spdk"), "engine"),
    (dict(rate_process="bursty"), "rate_process"),
    (dict(dist="gauss"), "distribution"),
    (dict(sync_kind="msync"), "sync kind"),
    (dict(sync_every=1 << 32), "sync_every"),
    (dict(rate_iops_read=-1), "rate_iops_read"),
    (dict(rate_bytes_write=1 << 64), "rate_bytes_write"),
    (dict(thinktime_ns=-5), "thinktime_ns"),
    (dict(compress_pct=-1), "compress_pct"),
    (dict(bssplit_read=[BsEntry(4096, 4096, 1 << 32)]), "bs_weight"),
    (dict(bssplit_write=[BsEntry(-1, 4096, 1)]), "bs_lo"),
    (dict(bssplit_read=[BsEntry(512, 512, 1)] * 65), "block size entries"),
    (dict(zones=[Zone(1 << 32, 0)]), "zone_access"),
    (dict(zones=[Zone(62_500, 62_500)] * 17), "zones"),
    (dict(pattern=b"x" * 257), "pattern"),
    (dict(dist_param=float("nan")), "dist_param"),
])
def test_out_of_range_values_are_refused_before_the_library(overrides, word):
    with pytest.raises(EngineError) as exc:
        job_struct(spec(**overrides))
    assert exc.value.errno == errno.EINVAL
    assert word in str(exc.value)


@pytest.mark.parametrize("engine", ["null", "psync", "io_uring", "libaio", "sync"])
def test_every_engine_name_is_known(engine):
    assert job_struct(spec(engine=engine)).engine == engine.encode()


def test_what_a_spec_asks_for():
    s = spec(rw="randread", bssplit_read=[BsEntry(KiB, 4 * KiB, 1_000_000)], rate_iops_read=10)
    assert s.does("read")
    assert not s.does("write")
    assert s.bs_table("read") == [BsEntry(KiB, 4 * KiB, 1_000_000)]
    assert list(s.bs_table("read")[0].sizes()) == [KiB, 2 * KiB, 3 * KiB, 4 * KiB]
    assert s.rate("read") == (10, 0)
    assert s.rate_limited
    assert not spec().rate_limited


def test_a_plain_value_is_checked_against_its_member_s_c_type() -> None:
    """The range of a plain key's member is its C type's, as the library describes it."""
    with pytest.raises(EngineError, match=r"flow_id must be in \[0, 4294967296\), got "
                                          r"4294967296"):
        job_struct(spec(plain={"flow_id": 1 << 32}))
    with pytest.raises(EngineError, match=r"flow_sleep_ns must be in \[0, "):
        job_struct(spec(plain={"flow_sleep_ns": -1}))
    assert job_struct(spec(plain={"flow_id": (1 << 32) - 1})).flow_id == (1 << 32) - 1
    with pytest.raises(EngineError, match="the library's job struct has no integer "
                                          "no_such_member"):
        job_struct(spec(plain={"no_such_member": 1}))
    with pytest.raises(EngineError, match="no integer filename"):  # a char array
        job_struct(spec(plain={"filename": 1}))
