"""A device that stalls fails a windowed expectation: the intervals of the stall had no
completions, and an interval without completions never passes by absence.

The stall is real: the fault-injection shim (tests/faults) makes one pread(2) of the data
file sleep for most of a second. The psync engine has one request in flight per thread, so
nothing completes while it sleeps and several 200 ms intervals stay empty.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.test_faults import run_suite
from tests.faults import shim_env

INTERVAL_S = 0.2
STALL_MS = 900  # covers at least three whole intervals after the first


def stalled_case(directory: Path, expect: str) -> tuple[int, dict[str, Any]]:
    target = directory / "stall.data"
    target.write_bytes(os.urandom(1 << 20))  # laid out in advance: layout does no preads
    # The 2001st read sleeps, once. The reads before it take a few intervals at most, many
    # enough that one slow read of the start does not make its p99. The run lasts well past
    # the stall even when a busy machine makes those reads slow: the intervals are counted
    # within the runtime, and one cut by its end would merge the stall's last ones.
    env = shim_env("stall.data", op="read", mode="stall", after=2000, count=1,
                   stall_ms=STALL_MS)
    proc, cases = run_suite(directory, f"""\
suite: stall
workloads:
  - name: stalled
    ioengine: psync
    filename: {target}
    rw: randread
    bs: 4k
    size: 1MiB
    runtime: 3s
    time_based: true
    expect:
      {expect}
""", env=env)
    return proc.returncode, cases["stalled"]


def empty_spans(case: dict[str, Any]) -> list[str]:
    """The read intervals of the run that had no completions, as their spans in seconds."""
    series = case["series"][0]["jobs"][0]["read"]  # the only run, the only job
    spans, start = [], 0.0
    for iv in series:
        end = iv["end_ns"] / 1e9
        if iv["ios"] == 0:
            spans.append(f"{start:g}-{end:g} s")
        start = end
    return spans


@pytest.mark.parametrize("expect", ['read.clat.p99: "<= 10ms in all of 200ms"',
                                    'read.iops: "<= 10M in all of 200ms"'],
                         ids=["latency", "iops"])
def test_a_stall_fails_the_window_naming_its_empty_intervals(disk_dir: Path,
                                                             expect: str) -> None:
    returncode, case = stalled_case(disk_dir, expect)
    empty = empty_spans(case)
    assert len(empty) >= 3, f"the stall left too few empty intervals: {case['series']}"
    [check] = case["checks"]
    assert case["outcome"] == "failed", check
    assert returncode == 1
    assert not check["passed"]
    reason = check["reason"]
    assert f"{len(empty)} with no completions" in reason, reason
    for span in empty:
        assert span in reason, (span, reason)
    # the empty intervals are judged (as failures), none is excused: nothing limits the rate
    assert check["intervals"] == len(case["series"][0]["jobs"][0]["read"])
    assert check["skipped_intervals"] == 0
    # the JSON series says the empty intervals have no latency, not a latency of 0
    empty_iv = [iv for iv in case["series"][0]["jobs"][0]["read"] if iv["ios"] == 0]
    assert all(iv["clat_p99_ns"] is None for iv in empty_iv)
