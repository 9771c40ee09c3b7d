"""Submission batching through libiogate: batch_submit, batch_complete_min/max and
depth_low of an asynchronous engine, read from what the engine counted (its submit and reap
calls, the queue depth sampled at each submission). Reads of a small file, size-based, with
completions collected in fixed-size reaps, so every count is exact."""

from __future__ import annotations

import errno

import pytest

from iogate.engine.session import run
from iogate.errors import EngineError
from iogate.job import JobSpec

BS, BLOCKS = 4096, 256


@pytest.fixture(scope="module")
def data_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("batch") / "data"
    path.write_bytes(bytes(range(256)) * (BS * BLOCKS // 256))
    return str(path)


def read(engine: str, path: str, **batching):
    try:
        return run([JobSpec(engine=engine, rw="read", size=BS * BLOCKS, bs_read=BS,
                            iodepth=16, filename=path, **batching)])
    except EngineError as e:
        if e.errno in (errno.EPERM, errno.ENOSYS, errno.EACCES, errno.EOPNOTSUPP):
            pytest.skip(f"{engine} cannot run here: {e}")
        raise


ENGINES = ["io_uring", "libaio"]


@pytest.mark.parametrize("engine", ENGINES)
def test_by_default_each_request_is_its_own_submit(engine, data_file):
    result = read(engine, data_file)
    job = result.jobs[0]
    assert result.metric("read.ios") == BLOCKS
    assert job.submits == BLOCKS
    # fio's default too: each reap takes one completion, which is replaced before the next
    # is taken, so after the first fill (depths 1..16) every request goes in at depth 16
    assert job.reaps == BLOCKS
    assert job.read.qd_hist[:5] == [1, 2, 4, 8, 1 + BLOCKS - 16]
    assert result.metric("read.qd.mean") == pytest.approx((136 + (BLOCKS - 16) * 16) / BLOCKS)


@pytest.mark.parametrize("engine", ENGINES)
def test_batches_of_eight_are_submitted_and_reaped_together(engine, data_file):
    result = read(engine, data_file, batch_submit=8, batch_complete_min=8,
                  batch_complete_max=8)
    job = result.jobs[0]
    assert result.metric("read.ios") == BLOCKS
    assert (job.submits, job.reaps) == (BLOCKS // 8, BLOCKS // 8)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_full_queue_drains_to_its_low_water_mark(engine, data_file):
    # reaps of 4 from a queue of 16: with iodepth_low 4 every refill goes in at depths 5..16
    # (after the first fill at 1..16); without, at 13..16
    low = read(engine, data_file, batch_complete_min=4, batch_complete_max=4, depth_low=4)
    full = read(engine, data_file, batch_complete_min=4, batch_complete_max=4)
    first = [1, 2, 4, 8, 1]  # depths 1 | 2,3 | 4..7 | 8..15 | 16
    assert low.jobs[0].read.qd_hist[:5] == [
        f + 20 * r for f, r in zip(first, [0, 0, 3, 8, 1], strict=True)]
    assert full.jobs[0].read.qd_hist[:5] == [
        f + 60 * r for f, r in zip(first, [0, 0, 0, 3, 1], strict=True)]
    assert low.metric("read.qd.mean") == pytest.approx((136 + 20 * 126) / BLOCKS)
