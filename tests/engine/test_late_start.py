"""A job's runtime counts from its own start (issue 26): 2 ms time-based null runs beside
busy processes on every CPU each do I/O, through the real engine.

Before, the run clock and every job's stop time were set before the worker threads
existed, so a thread that got the CPU late found its runtime over and issued nothing. The
assertions are on counts only, never on time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from iogate.engine.session import run
from iogate.job import JobSpec
from iogate.realized import no_io

MS = 1_000_000
CASES = 300


def spec(**overrides) -> JobSpec:
    base = dict(engine="null", rw="read", bs_read=4096, size=1 << 20, time_based=True,
                runtime_ns=2 * MS)
    base.update(overrides)
    return JobSpec(**base)


@pytest.fixture
def busy_cpus() -> Iterator[int]:
    """A busy loop in its own process on every CPU, for the test's duration."""
    n = os.cpu_count() or 1
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(0.2)  # let them get going
        yield n
    finally:
        for p in hogs:
            p.kill()
        for p in hogs:
            p.wait()


def test_every_short_time_based_case_does_io_on_a_busy_machine(busy_cpus):
    idle = []
    for case in range(CASES):
        s = spec()
        result = run([s])
        assert not result.interrupted
        if result.metric("read.ios") == 0:
            idle.append((case, no_io([s], result)))
        else:
            assert result.metric("read.runtime") >= s.runtime_ns
            assert no_io([s], result) is None
    assert idle == [], f"{len(idle)} of {CASES} cases did no reads, the first: {idle[0]}"


def test_every_thread_of_a_short_job_issues(busy_cpus):
    # one request a thread: the job's count is its thread count, however late each ran
    for _ in range(20):
        result = run([spec(numjobs=16, io_limit_ios=1)])
        assert result.metric("read.ios") == 16
        assert result.metric("errors") == 0


def test_jobs_of_a_group_with_delay_and_ramp_all_issue(busy_cpus):
    # two start delays (the jobs of one delay start together), each job with a ramp; each
    # thread issues at least one counted request, however late it gets the CPU
    specs = [spec(runtime_ns=1 * MS, ramp_ns=1 * MS, start_delay_ns=(j % 2) * 2 * MS,
                  numjobs=2, time_based=True) for j in range(40)]
    result = run(specs)
    assert all(j.read.ios >= 2 for j in result.jobs)
    assert no_io(specs, result) is None
