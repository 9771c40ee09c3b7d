"""The posixaio engine through iogate.engine.session.run on real files: a queued engine
whose verified writes pass and whose reads keep several requests in flight."""

from __future__ import annotations

import hashlib

from iogate.engine import catalog
from iogate.engine.session import run
from iogate.job import JobSpec

BS = 4096
BLOCKS = 128


def spec(path, **overrides) -> JobSpec:
    base = dict(engine="posixaio", rw="randwrite", bs_read=BS, bs_write=BS, iodepth=8,
                numjobs=1, size=BLOCKS * BS, offset=0, filename=str(path), seed=11)
    base.update(overrides)
    return JobSpec(**base)


def test_posixaio_is_a_queued_engine_that_does_io():
    e = catalog.get("posixaio")
    assert e is not None
    assert e.does_io
    assert e.queued


def test_a_verified_write_job_passes(tmp_path):
    job = run([spec(tmp_path / "data", verify="crc32c")]).jobs[0]
    assert (job.write.ios, job.write.errors) == (BLOCKS, 0)
    assert job.verify is not None
    assert job.verify.failures == 0
    assert job.verify.blocks_written == BLOCKS


def test_reads_leave_the_file_alone_and_queue(tmp_path):
    path = tmp_path / "data"
    path.write_bytes(bytes(range(256)) * (BLOCKS * BS // 256))
    digest = hashlib.sha256(path.read_bytes()).digest()
    read = run([spec(path, rw="randread", iodepth=16, no_layout=True)]).jobs[0].read
    assert (read.ios, read.errors) == (BLOCKS, 0)
    assert hashlib.sha256(path.read_bytes()).digest() == digest
    assert read.qd_sum > read.qd_samples == BLOCKS  # more than one in flight
