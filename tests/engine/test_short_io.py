"""Short transfers are continued, not counted as errors: when read(2)/pread(2) or
write(2)/pwrite(2) move only part of a request, the synchronous engines go on with the
rest, and only requests done in full count as ios and bytes.

The short calls come from the fault-injection shim (tests/faults), whose "short" mode moves
half of what was asked. The engine runs in a child process with the shim preloaded.

A read that moves nothing because the file ends before the request (a file truncated behind
the run's back) is an end-of-file short read, ENODATA, never EIO.
"""

from __future__ import annotations

import errno
import json
import os
import time

import pytest
from tests.faults import run_python, shim_env

from iogate.engine.session import Session
from iogate.job import JobSpec
from iogate.results import DirectionResult

BS = 4096
BLOCKS = 64
TARGET = "short-target.bin"

CHILD = """
import json, sys
from iogate.engine.session import run
from iogate.job import JobSpec
path, engine, rw = sys.argv[1:4]
spec = JobSpec(engine=engine, rw=rw, bs_read=4096, bs_write=4096, iodepth=1, numjobs=1,
               size=int(sys.argv[4]), offset=0, runtime_ns=0, ramp_ns=0, time_based=False,
               direct=False, rwmixread=100, filename=path, no_layout=True)
d = getattr(run([spec]).jobs[0], rw)
print(json.dumps({"ios": d.ios, "bytes": d.bytes, "errors": d.errors,
                  "first_errno": d.first_errno, "first_error_offset": d.first_error_offset,
                  "lat_count": d.lat.count}))
"""


def run_shimmed(tmp_path, engine: str, rw: str, **fault) -> dict:
    path = tmp_path / TARGET
    content = os.urandom(BLOCKS * BS)
    path.write_bytes(content)  # laid out in advance: no layout writes
    env = {**os.environ, **shim_env(TARGET, op=rw, mode="short", **fault)}
    done = run_python(CHILD, str(path), engine, rw, str(BLOCKS * BS), env=env)
    if rw == "read":  # reads leave the file alone
        assert path.read_bytes() == content
    assert path.stat().st_size == BLOCKS * BS
    return json.loads(done.stdout)


@pytest.mark.parametrize("engine", ["psync", "sync"])
@pytest.mark.parametrize("rw", ["read", "write"])
def test_short_transfers_are_completed(tmp_path, engine, rw):
    # Calls 6 to 15 move half of what they ask: the request that meets them needs ten
    # more calls (2048, 1024, ... bytes) before the last one moves its remaining 4 bytes.
    out = run_shimmed(tmp_path, engine, rw, after=5, count=10)
    assert out["errors"] == 0
    assert out["ios"] == BLOCKS
    assert out["bytes"] == out["ios"] * BS
    assert out["lat_count"] == BLOCKS  # one latency per request, not per call


@pytest.mark.parametrize("engine", ["psync", "sync"])
def test_a_request_that_stops_short_is_one_error_and_no_bytes(tmp_path, engine):
    # Every call moves half: a request of 4096 bytes moves 4095 of them in twelve calls,
    # then a call for the last byte moves nothing, which ends it as an error.
    out = run_shimmed(tmp_path, engine, "read", after=0, count=0)
    assert out["ios"] == 0
    assert out["bytes"] == 0
    assert out["lat_count"] == 0
    assert out["errors"] == BLOCKS
    assert out["first_errno"] == errno.EIO
    assert out["first_error_offset"] == BS - 1  # where the transfer stopped


# -- a read that meets the end of the file --------------------------------------------------

def _read_spec(path, engine: str, size: int) -> JobSpec:
    return JobSpec(engine=engine, rw="read", bs_read=BS, bs_write=BS,
                   iodepth=1 if engine in ("psync", "sync") else 4, numjobs=1, size=size,
                   offset=0, runtime_ns=600 * 10**9, ramp_ns=0, time_based=True, direct=False,
                   rwmixread=100, filename=str(path), no_layout=True)


def _until(session: Session, done, what: str) -> None:
    while not done(progress := session.poll()):
        assert progress.state != "done", f"the run ended before it {what}"
        time.sleep(0.01)


@pytest.mark.parametrize("engine", ["psync", "sync", pytest.param("io_uring",
                                                                  marks=pytest.mark.needs_uring),
                                    "libaio"])
def test_a_file_truncated_under_a_running_read_is_an_end_of_file_error(tmp_path, engine):
    # The file is whole when the run starts; another process (here the test) cuts it to half
    # its size while the job reads it in a loop. Every read from then on that lies in the
    # cut half moves nothing: an end-of-file short read, not EIO from a device.
    path = tmp_path / TARGET
    path.write_bytes(os.urandom(BLOCKS * BS))
    half = BLOCKS * BS // 2
    with Session([_read_spec(path, engine, BLOCKS * BS)]) as session:
        session.start()
        _until(session, lambda p: p.ios[0] > 0, "read")
        os.truncate(path, half)
        _until(session, lambda p: p.errors > 0, "met the end of the file")
        session.cancel()
        assert session.wait(120)
        read = session.collect(interrupted=True).jobs[0].read
    assert read.ios > 0
    assert read.errors > 0
    assert read.first_errno == errno.ENODATA, os.strerror(read.first_errno)
    # A block at or past the new end, whole blocks of the region as the job reads them.
    assert half <= read.first_error_offset < BLOCKS * BS
    assert read.first_error_offset % BS == 0
    assert path.stat().st_size == half
    # Told as what it is, with the offset and the file's size, not as a device error.
    assert read.describe_first_error([str(path)]) == (
        f"short read at end of file: offset {read.first_error_offset} is at or past the end "
        f"of {path} ({half} bytes now)")


@pytest.mark.parametrize("engine", ["psync", "sync"])
def test_a_read_that_moves_nothing_before_the_end_is_still_eio(tmp_path, engine):
    # The shim's reads stop short inside the file (see the test above it): not an end of
    # file, so EIO, as a device or file system that returns nothing deserves.
    out = run_shimmed(tmp_path, engine, "read", after=0, count=0)
    assert out["first_errno"] == errno.EIO
    eio = DirectionResult(errors=1, first_errno=out["first_errno"],
                          first_error_offset=out["first_error_offset"])
    assert eio.describe_first_error([TARGET]) == "Input/output error (errno 5) at offset 4095"
