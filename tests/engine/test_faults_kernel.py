"""Device faults on the kernel path: io_uring and libaio, O_DIRECT or buffered, against
files on faultfs (a FUSE filesystem that fails, shortens or loses requests on command).

Failed requests are counted as errors with their errno and the offset of the first, never
as I/O; short reads are completed, not counted as errors; a device that vanishes mid run
(its daemon killed) turns every later request into an error and the run still ends on time.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.faults import FaultFS

from iogate.engine.session import run
from iogate.job import JobSpec

BS = 4096
NBLOCKS = 256

ENGINES = [pytest.param("io_uring", marks=pytest.mark.needs_uring), "libaio"]
MODES = [pytest.param(True, id="direct"), pytest.param(False, id="buffered")]


def spec(path: Path, engine: str, rw: str, direct: bool, iodepth: int = 1,
         **extra: Any) -> JobSpec:
    return JobSpec(engine=engine, rw=rw, bs_read=BS, bs_write=BS, iodepth=iodepth, numjobs=1,
                   size=NBLOCKS * BS, offset=0, runtime_ns=0, ramp_ns=0, time_based=False,
                   direct=direct, rwmixread=100, filename=str(path), **extra)


@pytest.fixture
def fs():
    with FaultFS() as mounted:
        yield mounted


@pytest.fixture
def original(fs) -> bytes:
    """The data file, laid out in advance through the backing directory (no faults, and
    the engine has nothing to lay out)."""
    content = os.urandom(NBLOCKS * BS)
    (fs.backing / "data").write_bytes(content)
    return content


@pytest.mark.parametrize("direct", MODES)
@pytest.mark.parametrize("engine", ENGINES)
def test_failed_reads_are_errors_not_ios(fs, original, engine, direct):
    fs.control(mode="eio", op="read", after=10, count=3)
    read = run([spec(fs.path / "data", engine, "read", direct)]).jobs[0].read
    assert (read.errors, read.first_errno, read.first_error_offset) == (3, errno.EIO, 10 * BS)
    assert read.ios == NBLOCKS - 3
    assert read.bytes == read.ios * BS
    state = fs.state()
    assert (state["seen"], state["faulted"]) == (NBLOCKS, 3)  # each failed once, no retry


@pytest.mark.parametrize("direct", MODES)
@pytest.mark.parametrize("engine", ENGINES)
def test_failed_writes_are_errors_and_leave_their_blocks_alone(fs, original, engine, direct):
    fs.control(mode="eio", op="write", after=10, count=3)
    write = run([spec(fs.path / "data", engine, "write", direct)]).jobs[0].write
    assert (write.errors, write.first_errno, write.first_error_offset) == (3, errno.EIO, 10 * BS)
    assert write.ios == NBLOCKS - 3
    assert write.bytes == write.ios * BS
    after = (fs.backing / "data").read_bytes()
    blocks = [slice(i * BS, (i + 1) * BS) for i in range(NBLOCKS)]
    assert [after[b] == original[b] for b in blocks[9:14]] == [False, True, True, True, False]


@pytest.mark.parametrize("engine", ENGINES)
def test_errors_at_depth_are_each_counted_once(fs, original, engine):
    fs.control(mode="eio", op="read", after=20, count=5)
    read = run([spec(fs.path / "data", engine, "randread", True, iodepth=8)]).jobs[0].read
    assert read.errors == 5 == fs.state()["faulted"]
    assert read.ios == NBLOCKS - 5
    assert read.first_errno == errno.EIO
    assert read.first_error_offset % BS == 0
    assert read.first_error_offset < NBLOCKS * BS


@pytest.mark.parametrize("direct", MODES)
@pytest.mark.parametrize("engine", ENGINES)
def test_short_reads_are_completed(fs, original, engine, direct):
    fs.control(mode="short", op="read", after=10, count=3)
    read = run([spec(fs.path / "data", engine, "read", direct, iodepth=4)]).jobs[0].read
    assert read.errors == 0
    assert read.ios == NBLOCKS
    assert read.bytes == read.ios * BS
    state = fs.state()
    # every shortened request left a remainder that was asked for again
    assert state["faulted"] == 3
    assert state["seen"] == NBLOCKS + 3


@pytest.mark.parametrize("direct", MODES)
@pytest.mark.parametrize("engine", ENGINES)
def test_short_writes_are_completed_or_failed_never_taken_for_whole(fs, original, engine,
                                                                    direct):
    # The kernel's FUSE client turns a short reply to an asynchronous write into EIO (as
    # of Linux 6.x); were it to report the short count, the engine must write the rest.
    fs.control(mode="short", op="write", after=10, count=3)
    write = run([spec(fs.path / "data", engine, "write", direct, iodepth=4)]).jobs[0].write
    state = fs.state()
    assert state["faulted"] == 3
    assert write.bytes == write.ios * BS
    assert write.ios + write.errors == NBLOCKS
    if write.errors:
        assert (write.errors, write.first_errno) == (3, errno.EIO)
        assert state["seen"] == NBLOCKS
    else:
        assert state["seen"] == NBLOCKS + 3
        after = (fs.backing / "data").read_bytes()
        halves = [slice(i, i + BS // 2) for i in range(0, NBLOCKS * BS, BS // 2)]
        assert not [h for h in halves if after[h] == original[h]]  # every remainder landed


# The run happens in a child: a vanished device must not be able to wedge the test run.
VANISH_CHILD = """
import json, sys
from iogate.engine.session import run
from iogate.job import JobSpec
spec = JobSpec(engine=sys.argv[2], rw="randread", bs_read=4096, bs_write=4096, iodepth=8,
               numjobs=1, size=int(sys.argv[3]), offset=0, runtime_ns=3_000_000_000, ramp_ns=0,
               time_based=True, direct=True, rwmixread=100, filename=sys.argv[1])
def progress(p):
    print(json.dumps({"counted_ns": p.counted_ns, "ios": p.ios[0]}), flush=True)
result = run([spec], on_progress=progress, poll_interval=0.05)
read = result.jobs[0].read
print(json.dumps({"final": True, "ios": read.ios, "errors": read.errors,
                  "first_errno": read.first_errno, "first_error_offset": read.first_error_offset,
                  "series_ios": [i.ios for i in read.series], "elapsed_ns": result.elapsed_ns}),
      flush=True)
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_a_vanishing_device_ends_in_errors_not_a_hang(fs, original, engine):
    child = subprocess.Popen([sys.executable, "-c", VANISH_CHILD, str(fs.path / "data"), engine,
                              str(NBLOCKS * BS)], stdout=subprocess.PIPE, text=True)
    watchdog = threading.Timer(60, child.kill)  # a hung child fails the test, not the run
    watchdog.start()
    try:
        killed_at = None
        final = None
        assert child.stdout is not None
        for line in child.stdout:
            msg = json.loads(line)
            if msg.get("final"):
                final = msg
            elif killed_at is None and msg["counted_ns"] >= 500_000_000:
                assert msg["ios"] > 0  # the device worked until now
                fs.kill()
                killed_at = msg
        assert child.wait() == 0
    finally:
        watchdog.cancel()
        child.kill()
    assert killed_at is not None
    assert final is not None
    assert final["ios"] >= killed_at["ios"]
    assert final["errors"] > 0
    # requests in flight when the daemon died are aborted, later ones find no connection
    assert final["first_errno"] in (errno.ENOTCONN, errno.ECONNABORTED)
    assert final["first_error_offset"] % BS == 0
    # the run kept its length and nothing succeeded in its last second
    assert 3_000_000_000 <= final["elapsed_ns"] < 10_000_000_000
    assert final["series_ios"][-1] == 0
