"""Data verification through the real engine: every written block carries a header (offset,
generation, sequence, checksum) and is read back, after the run or every verify_backlog
writes.

Clean runs (psync and io_uring, every checksum, both read-back modes) report no failure and
check what they wrote. Then a device that misbehaves: the fault-injection shim (tests/faults)
drops, tears or misdirects chosen pwrite(2) calls of the psync engine, or fails a read-back,
in a child process; each failure is found with its kind, offset and the expected and found
header values. A block left by an earlier run is told apart by its generation.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from tests.faults import run_python, shim_env

from iogate.engine.session import run
from iogate.errors import EngineError
from iogate.job import JobSpec
from iogate.results import VerifyFailure, VerifyResult

BS = 4096
BLOCKS = 16
TARGET = "verify-target.bin"  # the shim faults only files whose path contains this


def spec(path: Path | str, **overrides) -> JobSpec:
    base = dict(engine="psync", rw="write", bs_read=BS, bs_write=BS, size=BLOCKS * BS,
                rwmixread=0, filename=str(path), verify="crc32c")
    base.update(overrides)
    return JobSpec(**base)


@pytest.fixture(scope="module")
def io_uring_usable(tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("probe") / "probe.dat"
    try:
        run([spec(path, engine="io_uring", iodepth=2, verify="none")])
    except EngineError as e:
        if e.errno in (errno.EPERM, errno.ENOSYS, errno.EACCES):
            pytest.skip(f"io_uring not permitted here: {e}")
        raise


# -- clean runs --------------------------------------------------------------------------

@pytest.mark.parametrize("checksum", ["crc32c", "xxhash", "crc32"])
@pytest.mark.parametrize("backlog", [0, 5])
@pytest.mark.parametrize("engine", ["psync", "io_uring"])
def test_a_clean_run_checks_every_write(disk_dir, engine, backlog, checksum, request):
    if engine == "io_uring":
        request.getfixturevalue("io_uring_usable")
    iodepth = 8 if engine == "io_uring" else 1
    result = run([spec(disk_dir / "data.bin", engine=engine, iodepth=iodepth, size=64 * BS,
                       verify=checksum, verify_backlog=backlog)])
    job = result.jobs[0]
    v = job.verify
    assert v is not None
    assert v.failures == 0
    assert v.records == []
    assert v.by_kind == {"torn": 0, "lost": 0, "misdirected": 0, "read_error": 0}
    assert job.write.ios == 64
    assert job.write.errors == 0
    assert v.blocks_written == 64
    assert v.blocks_checked == 64  # one pass: every block written once, read back once
    assert v.generation != 0
    assert v.elapsed_ns > 0
    doc = json.loads(json.dumps(result.to_json()))["jobs"][0]["verify"]
    assert doc["blocks_checked"] == 64
    assert doc["by_kind"]["lost"] == 0
    assert doc["generation"] == v.generation


def test_random_writes_with_direct_io_are_clean(disk_dir, io_uring_usable):
    # Random writes at depth 16 over 32 blocks hit the same block while an earlier write to
    # it is still in flight: any write of the run then passes. After the run each block is
    # read back once, through an aligned buffer (O_DIRECT).
    result = run([spec(disk_dir / "data.bin", engine="io_uring", rw="randwrite", iodepth=16,
                       size=32 * BS, direct=True, time_based=True, runtime_ns=300_000_000,
                       verify="xxhash")])
    job = result.jobs[0]
    v = job.verify
    assert v is not None
    assert v.failures == 0, [r.describe() for r in v.records]
    assert job.write.errors == 0
    assert v.blocks_written == job.write.ios > 32
    assert v.blocks_checked == 32


def test_jobs_without_verify_have_no_verify_result(disk_dir):
    result = run([spec(disk_dir / "a.bin", verify="none"),
                  spec(disk_dir / "b.bin", verify="crc32")])
    assert result.jobs[0].verify is None
    assert "verify" not in result.to_json()["jobs"][0]
    assert result.jobs[1].verify is not None
    assert result.jobs[1].verify.blocks_checked == BLOCKS


def test_sessions_have_different_generations(disk_dir):
    first = run([spec(disk_dir / "data.bin")]).jobs[0].verify
    second = run([spec(disk_dir / "data.bin")]).jobs[0].verify
    assert first is not None
    assert second is not None
    assert first.failures == second.failures == 0  # the earlier run's blocks are overwritten
    assert first.generation != second.generation


def test_a_random_mix_verifies_the_blocks_it_wrote(disk_dir, io_uring_usable):
    # The reads of the mix are not checked (as in fio); every write is, read back after the
    # run: at depth 16 over 32 blocks, reads and writes of one block are in flight together.
    result = run([spec(disk_dir / "data.bin", engine="io_uring", rw="randrw", rwmixread=50,
                       iodepth=16, size=32 * BS, direct=True, time_based=True,
                       runtime_ns=300_000_000, verify="crc32c")])
    job = result.jobs[0]
    v = job.verify
    assert v is not None
    assert v.failures == 0, [r.describe() for r in v.records]
    assert job.read.ios > 0
    assert job.write.errors == 0
    assert v.blocks_written == job.write.ios > 32
    assert v.blocks_checked == 32


def test_verify_is_refused_where_it_cannot_work(disk_dir):
    with pytest.raises(EngineError, match="job 0: verify needs rw write, randwrite, rw or "
                                          "randrw"):
        run([spec(disk_dir / "data.bin", rw="randread", rwmixread=100)])
    with pytest.raises(EngineError, match="job 0: verify of a sequential mix needs reads of "
                                          "the write block size"):
        run([spec(disk_dir / "data.bin", rw="rw", rwmixread=50, bs_read=BS // 2)])
    with pytest.raises(EngineError, match="job 0: numjobs must be 1 with verify"):
        run([spec(disk_dir / "data.bin", numjobs=2)])


# -- a misbehaving device, through the shim, in a child process -------------------------

CHILD = """
import json, sys
from iogate.engine.session import Session
from iogate.job import JobSpec
with Session([JobSpec(**json.loads(sys.argv[1]))]) as session:
    session.start()
    states = []
    while True:
        finished = session.wait(0.002)
        state = session.poll().state
        if not states or states[-1] != state:
            states.append(state)
        if finished:
            break
    job = session.collect().jobs[0]
print(json.dumps({"verify": job.verify.to_json() if job.verify else None,
                  "write_ios": job.write.ios, "write_errors": job.write.errors,
                  "states": states}))
"""


def target(tmp_path: Path) -> Path:
    """A data file laid out in advance with random bytes: the run does no layout writes,
    so the shim's numbering of write calls starts with the job's first write, and no block
    holds a header before the run."""
    path = tmp_path / TARGET
    path.write_bytes(os.urandom(BLOCKS * BS))
    return path


def run_child(path: Path, fault: dict | None = None, **overrides) -> dict:
    env = {**os.environ, **(shim_env(TARGET, **fault) if fault else {})}
    job = {"engine": "psync", "rw": "write", "bs_read": BS, "bs_write": BS, "iodepth": 1,
           "numjobs": 1, "size": BLOCKS * BS, "offset": 0, "runtime_ns": 0, "ramp_ns": 0,
           "time_based": False, "direct": False, "rwmixread": 0, "filename": str(path),
           "verify": "crc32c", **overrides}
    out = json.loads(run_python(CHILD, json.dumps(job), env=env, timeout=120).stdout)
    v = out["verify"]
    out["verify"] = VerifyResult(**{**v, "records": [VerifyFailure(**r) for r in v["records"]]})
    return out


def only_failure(v: VerifyResult) -> VerifyFailure:
    assert v.failures == 1, [r.describe() for r in v.records]
    assert len(v.records) == 1, [r.describe() for r in v.records]
    return v.records[0]


@pytest.mark.parametrize("backlog", [0, 4])
def test_a_dropped_write_is_lost(tmp_path, backlog):
    path = target(tmp_path)
    out = run_child(path, dict(op="write", mode="drop", after=5, count=1), verify_backlog=backlog)
    v = out["verify"]
    assert out["write_ios"] == BLOCKS
    assert out["write_errors"] == 0  # acknowledged
    assert v.blocks_written == v.blocks_checked == BLOCKS
    f = only_failure(v)
    assert v.by_kind["lost"] == 1
    assert f.kind == "lost"
    assert (f.file, f.offset, f.length) == (0, 5 * BS, BS)
    assert f.filename == str(path)
    assert f.expected_generation == v.generation
    assert f.expected_seq == 6  # the sixth write of the thread
    assert f.found_generation == 0
    assert f.found_seq == 0  # random bytes: no header
    assert f.describe() == (f"lost write at offset {5 * BS} ({BS} bytes) of {path}: no block "
                            f"header found, expected generation {v.generation:#x} seq 6")


def test_a_dropped_write_in_a_sequential_mix_is_lost(tmp_path):
    # rw: reads and writes take turns over one pass of the file; the second write is dropped.
    out = run_child(target(tmp_path), dict(op="write", mode="drop", after=1, count=1),
                    rw="rw", rwmixread=50)
    v = out["verify"]
    assert 0 < out["write_ios"] < BLOCKS  # the rest were reads, none of them checked
    assert v.blocks_written == v.blocks_checked == out["write_ios"]
    f = only_failure(v)
    assert f.kind == "lost"
    assert f.expected_seq == 2


def test_a_torn_write_fails_its_checksum(tmp_path):
    out = run_child(target(tmp_path), dict(op="write", mode="torn", after=3, count=1),
                    verify="xxhash")
    v = out["verify"]
    f = only_failure(v)
    assert f.kind == "torn"
    assert v.by_kind["torn"] == 1
    assert f.offset == 3 * BS
    # the first half, header included, is the new block; the second half is old data
    assert f.found_generation == f.expected_generation == v.generation
    assert f.found_seq == f.expected_seq == 4
    assert f.found_offset == 3 * BS
    assert f.stored_checksum != f.computed_checksum
    assert f.describe().startswith(f"torn write at offset {3 * BS} ({BS} bytes) of ")


def test_a_misdirected_write_is_found_where_it_landed(tmp_path):
    # The seventh write (block 6) lands one block earlier, over block 5 written just before.
    out = run_child(target(tmp_path), dict(op="write", mode="misdirect", after=6, count=1,
                                           shift=-BS))
    v = out["verify"]
    assert v.failures == 2
    assert v.by_kind["misdirected"] == 1
    assert v.by_kind["lost"] == 1
    misdirected, lost = v.records  # in the order read back
    assert misdirected.kind == "misdirected"
    assert misdirected.offset == 5 * BS
    assert misdirected.expected_seq == 6
    assert misdirected.found_offset == 6 * BS
    assert misdirected.found_seq == 7
    assert misdirected.found_file == 0
    assert misdirected.found_generation == v.generation
    assert "found the block written for offset 24576 of file 0" in misdirected.describe()
    assert lost.kind == "lost"
    assert lost.offset == 6 * BS
    assert lost.expected_seq == 7
    assert lost.found_generation == 0


def test_a_write_lost_over_an_earlier_run_shows_that_runs_generation(tmp_path):
    path = target(tmp_path)
    first = run_child(path)["verify"]
    assert first.failures == 0
    second = run_child(path, dict(op="write", mode="drop", after=2, count=3))["verify"]
    assert second.generation != first.generation
    assert second.failures == 3
    assert second.by_kind["lost"] == 3
    for k, f in enumerate(second.records, start=2):
        assert f.kind == "lost"
        assert f.offset == k * BS
        # the block the first run wrote there: same place in its sequence, older generation
        assert f.found_generation == first.generation
        assert f.expected_generation == second.generation
        assert f.found_seq == f.expected_seq == k + 1
        assert f.found_offset == k * BS
        assert f.stored_checksum == f.computed_checksum  # a valid, stale block
    assert second.records[0].describe() == (
        f"lost write at offset {2 * BS} ({BS} bytes) of {path}: found generation "
        f"{first.generation:#x} seq 3, expected generation {second.generation:#x} seq 3")


def test_a_failed_read_back_is_a_read_error(tmp_path):
    out = run_child(target(tmp_path), dict(op="read", mode="eio", after=3, count=1))
    v = out["verify"]
    f = only_failure(v)
    assert f.kind == "read_error"
    assert f.offset == 3 * BS
    assert f.error == errno.EIO
    assert v.blocks_checked == BLOCKS
    assert f.describe().endswith(os.strerror(errno.EIO))


def test_verify_fatal_stops_at_the_first_failure(tmp_path):
    # Every write from the third on is dropped: after the run the read-back stops at block 2.
    out = run_child(target(tmp_path), dict(op="write", mode="drop", after=2),
                    verify_fatal=True)
    v = out["verify"]
    assert out["write_ios"] == BLOCKS
    assert v.failures == 1
    assert v.records[0].offset == 2 * BS
    assert v.blocks_checked == 3
    # With a backlog the job itself stops: nothing more is written after the failed batch.
    out = run_child(target(tmp_path), dict(op="write", mode="drop", after=2),
                    verify_fatal=True, verify_backlog=4)
    v = out["verify"]
    assert v.failures == 1
    assert v.records[0].offset == 2 * BS
    assert out["write_ios"] == 4
    assert v.blocks_written == 4
    assert v.blocks_checked == 3


def test_the_read_back_after_the_run_is_state_verify(tmp_path):
    # The first read-back stalls: the session shows state verify meanwhile, after running
    # (the writes are paced to last 160 ms, so that running is seen too).
    stall = dict(op="read", mode="stall", after=0, count=1, stall_ms=500)
    states = run_child(target(tmp_path), stall, rate_iops_write=100)["states"]
    assert "verify" in states, states
    assert states.index("running") < states.index("verify") < states.index("done")
    # Read-backs during the run (a backlog) are part of running.
    out = run_child(target(tmp_path), stall, verify_backlog=4)
    assert "verify" not in out["states"], out["states"]
    assert out["verify"].failures == 0
    assert out["verify"].blocks_checked == BLOCKS


# -- behind the kernel: faultfs, for the asynchronous engines ----------------------------

@pytest.mark.parametrize("engine", ["io_uring", "libaio"])
def test_lost_and_torn_writes_behind_the_kernel(engine, request):
    # The shim cannot see io_uring or libaio requests; the FUSE filesystem sees them all.
    from tests.faults import FaultFS

    if engine == "io_uring":
        request.getfixturevalue("io_uring_usable")
    with FaultFS() as fs:
        (fs.backing / "data.bin").write_bytes(os.urandom(BLOCKS * BS))  # no layout writes
        path = fs.path / "data.bin"
        fs.control(mode="drop", op="write", after=4, count=1)
        v = run([spec(path, engine=engine, verify="crc32")]).jobs[0].verify
        assert v is not None
        f = only_failure(v)
        assert (f.kind, f.offset, f.expected_seq) == ("lost", 4 * BS, 5)
        # Over the first run's blocks, whose buffer contents are the same: the sector
        # stamps of the second half still tell the old write from the new.
        fs.control(mode="torn", op="write", after=9, count=1)
        v = run([spec(path, engine=engine, verify="crc32")]).jobs[0].verify
        assert v is not None
        f = only_failure(v)
        assert (f.kind, f.offset, f.found_seq) == ("torn", 9 * BS, 10)
