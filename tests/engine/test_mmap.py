"""The mmap engine through iogate.engine.session.run on real files: writes land where they
should (hashed before and after), a verified job passes, reads of a file shorter than the
region are counted errors, and direct I/O is refused by the library."""

from __future__ import annotations

import errno
import hashlib
from pathlib import Path

import pytest

from iogate.engine import catalog
from iogate.engine.session import run
from iogate.errors import EngineError
from iogate.job import JobSpec

BS = 4096
BLOCKS = 64


def spec(path: Path, **overrides) -> JobSpec:
    base = dict(engine="mmap", rw="write", bs_read=BS, bs_write=BS, iodepth=1, numjobs=1,
                size=BLOCKS * BS, offset=0, filename=str(path), seed=7)
    base.update(overrides)
    return JobSpec(**base)


def test_mmap_is_a_synchronous_engine_that_does_io():
    e = catalog.get("mmap")
    assert e is not None
    assert e.does_io
    assert e.max_depth == 1
    assert not e.queued


def test_a_write_job_changes_only_its_region(tmp_path):
    path = tmp_path / "data"
    before = bytes(range(256)) * (BLOCKS * 2 * BS // 256)  # twice the region
    path.write_bytes(before)
    result = run([spec(path, rw="randwrite", offset=BLOCKS * BS // 2, sync_kind="fsync",
                       sync_every=8)]).jobs[0]
    after = path.read_bytes()
    assert (result.write.ios, result.write.errors) == (BLOCKS, 0)
    assert (result.sync.ios, result.sync.errors) == (BLOCKS // 8, 0)
    start, end = BLOCKS * BS // 2, BLOCKS * BS // 2 + BLOCKS * BS
    assert hashlib.sha256(after[:start]).digest() == hashlib.sha256(before[:start]).digest()
    assert hashlib.sha256(after[end:]).digest() == hashlib.sha256(before[end:]).digest()
    assert len(after) == len(before)
    assert after[start:end] != before[start:end]


def test_a_verified_write_job_passes(tmp_path):
    job = run([spec(tmp_path / "data", verify="crc32c", verify_backlog=16)]).jobs[0]
    assert job.verify is not None
    assert job.verify.failures == 0
    assert job.verify.blocks_written == job.verify.blocks_checked == BLOCKS


def test_reads_past_the_end_of_a_short_file_are_errors(tmp_path):
    path = tmp_path / "data"
    path.write_bytes(b"\x01" * (BLOCKS // 4 * BS))
    read = run([spec(path, rw="read", no_layout=True)]).jobs[0].read
    assert (read.ios, read.errors) == (BLOCKS // 4, BLOCKS - BLOCKS // 4)
    assert read.first_errno == errno.ENODATA
    assert read.first_error_offset == BLOCKS // 4 * BS


def test_direct_is_refused(tmp_path):
    with pytest.raises(EngineError) as exc:
        run([spec(tmp_path / "data", direct=True)])
    assert exc.value.errno == errno.EINVAL
    assert "flags DIRECT" in str(exc.value)
    assert "mmap" in str(exc.value)
