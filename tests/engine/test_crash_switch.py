"""The test_crash switch makes the engine die of a real invalid memory access (SIGSEGV)
after its first completed request, so that callers can prove they survive an engine crash.
It runs in a child process here, which must die of the signal rather than exit."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys

import pytest

CHILD = """
import sys
from iogate.engine.session import run
from iogate.job import JobSpec
engine, path, crash = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
spec = JobSpec(engine=engine, rw="write", bs_read=4096, bs_write=4096, iodepth=4 if engine in
               ("io_uring", "libaio") else 1, numjobs=2, size=1 << 20, offset=0, runtime_ns=0,
               ramp_ns=0, time_based=False, direct=False, rwmixread=0, filename=path,
               test_crash=crash)
r = run([spec])
print("survived", r.jobs[0].write.ios, flush=True)
"""


def no_core_dump() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_child(engine: str, path: str, crash: bool) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CHILD, engine, path, "1" if crash else "0"],
                          capture_output=True, text=True, timeout=60, preexec_fn=no_core_dump)


@pytest.mark.parametrize("engine", ["null", "psync", "io_uring"])
def test_crash_switch_kills_the_process_with_sigsegv(tmp_path, engine):
    done = run_child(engine, str(tmp_path / "data.bin"), crash=True)
    assert done.returncode == -signal.SIGSEGV, done.stderr
    assert "survived" not in done.stdout


def test_without_the_switch_the_same_job_completes(tmp_path):
    done = run_child("psync", str(tmp_path / "data.bin"), crash=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["survived", str(2 * (1 << 20) // 4096)]
