"""io_timeout: a request that stays outstanding past its job's io_timeout is the session's
fault, reported while the worker is still stuck in the kernel.

The stall comes from the fault-injection shim (tests/faults): one pread(2) of the psync
engine sleeps for seconds. The engine runs in a child process, which reads the fault
through Session.fault(), prints it and leaves with os._exit: the stuck worker would keep
the session from ever being destroyed, and ending the process is what a caller must do
after a fault.
"""

from __future__ import annotations

import json
import os

import pytest
from tests.faults import run_python, shim_env

BS = 4096
TIMEOUT_NS = 500_000_000
STALL_MS = 600_000  # outlasts the run_python limit (60 s): the request is outstanding throughout
STALLED_CALL = 20  # the 20th pread of the data file stalls

CHILD = """
import json, os, sys, time
from iogate.engine.session import Session
from iogate.job import JobSpec
path, timeout_ns = sys.argv[1], int(sys.argv[2])
spec = JobSpec(engine="psync", rw="read", bs_read=4096, bs_write=4096, iodepth=1, numjobs=1,
               size=1 << 20, offset=0, runtime_ns=0, ramp_ns=0, time_based=False,
               direct=False, rwmixread=100, filename=path, no_layout=True,
               io_timeout_ns=timeout_ns)
session = Session([spec]).__enter__()
session.start()
t0 = time.monotonic()
while (fault := session.fault()) is None and time.monotonic() - t0 < 30:
    time.sleep(0.005)
seen = time.monotonic() - t0
progress = session.poll()
print(json.dumps({"fault": fault.to_json() if fault else None,
                  "describe": fault.describe() if fault else None, "seen_s": seen,
                  "errors": progress.errors, "state": progress.state,
                  "finished": session.wait(0)}), flush=True)
os._exit(0)  # the worker is still inside the stalled pread
"""


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "stall-target.bin"
    path.write_bytes(os.urandom(1 << 20))  # laid out in advance: no layout writes
    return path


def test_a_stalled_read_is_reported_while_the_worker_is_stuck(data_file):
    env = {**os.environ, **shim_env("stall-target.bin", op="read", mode="stall",
                                    after=STALLED_CALL - 1, count=1, stall_ms=STALL_MS)}
    done = run_python(CHILD, str(data_file), str(TIMEOUT_NS), env=env, timeout=60)
    out = json.loads(done.stdout)
    fault = out["fault"]
    assert fault is not None, out
    assert fault["kind"] == "io_timeout"
    assert (fault["job"], fault["thread"], fault["file"]) == (0, 0, 0)
    assert fault["filename"] == str(data_file)
    assert fault["direction"] == "read"
    assert fault["offset"] == (STALLED_CALL - 1) * BS  # sequential: the 20th block
    assert fault["length"] == BS
    assert fault["timeout_ns"] == TIMEOUT_NS
    # seen after the timeout, while the stalled request was still outstanding (how soon after
    # the timeout is a measurement); the child looks for 30 s at most
    assert TIMEOUT_NS <= fault["outstanding_ns"] < STALL_MS * 1_000_000
    assert TIMEOUT_NS / 1e9 <= out["seen_s"] < 30
    # the session is cancelled but cannot finish: the worker is still in the kernel
    assert out["finished"] is False
    assert out["state"] != "done"
    assert out["errors"] == 1  # the timed-out request, as ETIMEDOUT
    assert out["describe"].startswith(f"read of {BS} bytes at offset {(STALLED_CALL - 1) * BS} "
                                      f"of {data_file} outstanding for ")
    assert "(io_timeout 0.5 s; job 0, thread 0)" in out["describe"]


def test_without_a_stall_there_is_no_fault(data_file):
    code = CHILD.replace("< 30:", "< 30 and not session.wait(0):")
    done = run_python(code, str(data_file), str(TIMEOUT_NS), timeout=60)
    out = json.loads(done.stdout)
    assert out["fault"] is None
    assert out["finished"] is True
    assert out["errors"] == 0
