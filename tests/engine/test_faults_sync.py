"""Device faults on the synchronous engines (psync, sync), made by the LD_PRELOAD shim:
failed calls are errors with their errno and offset, and a failed write leaves its block
alone. The run happens in a child so that the shim is loaded first. (Short transfers on
these engines: test_short_io.py.)
"""

from __future__ import annotations

import errno
import json
import os

import pytest
from tests.faults import run_python, shim_env

BS = 4096
NBLOCKS = 256

CHILD = """
import json, sys
from iogate.engine.session import run
from iogate.job import JobSpec
spec = JobSpec(engine=sys.argv[2], rw=sys.argv[3], bs_read=4096, bs_write=4096, iodepth=1,
               numjobs=1, size=int(sys.argv[4]), offset=0, runtime_ns=0, ramp_ns=0,
               time_based=False, direct=False, rwmixread=100, filename=sys.argv[1])
job = run([spec]).jobs[0]
d = job.read if sys.argv[3] == "read" else job.write
print(json.dumps({"ios": d.ios, "bytes": d.bytes, "errors": d.errors,
                  "first_errno": d.first_errno, "first_error_offset": d.first_error_offset}))
"""


def run_shimmed(tmp_path, engine: str, rw: str, **fault) -> tuple[dict, bytes, bytes]:
    """Runs one job over a laid-out file with the shim; (stats, content before, after)."""
    path = tmp_path / "data.bin"
    before = os.urandom(NBLOCKS * BS)
    path.write_bytes(before)  # laid out in advance: the engine writes nothing else
    env = {**os.environ, **shim_env(str(path), op=rw, **fault)}
    done = run_python(CHILD, str(path), engine, rw, str(NBLOCKS * BS), env=env)
    return json.loads(done.stdout), before, path.read_bytes()


@pytest.mark.parametrize("rw", ["read", "write"])
@pytest.mark.parametrize("engine", ["psync", "sync"])
def test_failed_calls_are_errors(tmp_path, engine, rw):
    d, before, after = run_shimmed(tmp_path, engine, rw, mode="eio", after=10, count=3)
    assert (d["errors"], d["first_errno"], d["first_error_offset"]) == (3, errno.EIO, 10 * BS)
    assert d["ios"] == NBLOCKS - 3
    assert d["bytes"] == d["ios"] * BS
    if rw == "write":
        assert after[10 * BS:13 * BS] == before[10 * BS:13 * BS]  # the failed blocks
        assert after[9 * BS:10 * BS] != before[9 * BS:10 * BS]
