"""Short transfers are continued, not counted as errors: when read(2)/pread(2) or
write(2)/pwrite(2) move only part of a request, the synchronous engines go on with the
rest, and only requests done in full count as ios and bytes.

The short calls come from the fault-injection shim (tests/faults), whose "short" mode moves
half of what was asked. The engine runs in a child process with the shim preloaded.
"""

from __future__ import annotations

import errno
import json
import os

import pytest
from tests.faults import run_python, shim_env

BS = 4096
BLOCKS = 64
TARGET = "short-target.bin"

CHILD = """
import json, sys
from iogate.engine.session import JobSpec, run
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
