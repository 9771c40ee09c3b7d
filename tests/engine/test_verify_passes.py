"""Passes of a verified job do not overlap in flight.

A job whose io_size is several passes over its region (fio's loops) writes each block once
per pass. Were the next pass issued while the last one is still in flight, a block written at
the end of one pass and at the start of the next could have both writes in flight at once,
and a large block land torn, half of each. A verified job therefore drains between passes,
as fio does between loops; an unverified one keeps its queue full.

Read from the queue depth the engine sampled at each submission: a file of 8 blocks written
in 3 passes at iodepth 32 submits at depths 1..8 three times with the drain, and at depths
1..24 without it. Buffered writes complete as soon as they are submitted, but they are
counted in flight until reaped, so the depths are exact.
"""

from __future__ import annotations

import errno

import pytest

from iogate.engine.session import run
from iogate.errors import EngineError
from iogate.job import JobSpec

BS, BLOCKS, PASSES = 65536, 8, 3

# qd_hist[i] counts submissions at depths [2^i, 2^(i+1))
DRAINED = [PASSES, 2 * PASSES, 4 * PASSES, PASSES, 0, 0]  # depths 1..8, three times
FULL = [1, 2, 4, 8, 9, 0]  # depths 1..24 once


def write(engine: str, path: str, rw: str, verify: str):
    try:
        return run([JobSpec(engine=engine, rw=rw, size=BS * BLOCKS, bs_write=BS,
                            io_limit_bytes=PASSES * BS * BLOCKS, iodepth=32, filename=path,
                            verify=verify)])
    except EngineError as e:
        if e.errno in (errno.EPERM, errno.ENOSYS, errno.EACCES, errno.EOPNOTSUPP):
            pytest.skip(f"{engine} cannot run here: {e}")
        raise


@pytest.mark.parametrize("engine", ["io_uring", "libaio"])
@pytest.mark.parametrize("rw", ["write", "randwrite"])
def test_a_verified_job_drains_between_its_passes(engine, rw, tmp_path):
    result = write(engine, str(tmp_path / "data"), rw, "crc32c")
    job = result.jobs[0]
    assert result.metric("write.ios") == PASSES * BLOCKS
    assert job.write.qd_hist[:6] == DRAINED
    assert job.verify is not None
    assert (job.verify.blocks_written, job.verify.failures) == (PASSES * BLOCKS, 0)


@pytest.mark.parametrize("engine", ["io_uring", "libaio"])
def test_an_unverified_job_keeps_its_queue_full_across_passes(engine, tmp_path):
    result = write(engine, str(tmp_path / "data"), "randwrite", "none")
    assert result.metric("write.ios") == PASSES * BLOCKS
    assert result.jobs[0].write.qd_hist[:6] == FULL
