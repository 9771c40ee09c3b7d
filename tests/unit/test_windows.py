"""Windows never pass by absence: an interval without completions fails a latency or rate
window, unless the case's own schedule (rate limit, thinktime) asked for less than one
request in it; then it is skipped, and the verdict says so."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.expect import evaluate_window, parse_expectation, tally_window
from iogate.job import JobSpec
from iogate.judge import fail_fast
from iogate.metrics import parse_metric
from iogate.results import (
    DirectionResult,
    Interval,
    JobResult,
    RunResult,
    SeriesSource,
    interval_spans,
    interval_values,
    intervals_due,
    requests_due,
)
from iogate.runner import run_case
from iogate.spec import load_suite

MS = 1_000_000


# -- evaluate_window -------------------------------------------------------------------------

def test_an_empty_interval_fails_a_latency_window_and_is_named():
    exp = parse_expectation("read.clat.p99", "<= 10ms in all of 200ms")
    spans = ["0-0.2 s", "0.2-0.4 s", "0.4-0.6 s"]
    check = evaluate_window(exp, [1 * MS, None, 2 * MS], None, spans=spans)
    assert not check.passed
    assert (check.observed, check.intervals, check.skipped) == (pytest.approx(200 / 3), 3, 0)
    assert check.reason == ("66.7% of 3 intervals had read.clat.p99 <= 10ms, 100% needed; "
                            "1 with no completions (0.2-0.4 s)")


def test_a_window_of_only_empty_intervals_fails_instead_of_passing_at_100_pct():
    exp = parse_expectation("read.clat.mean", "<= 10ms in 50% of 200ms")
    check = evaluate_window(exp, [None, None, None], None)
    assert not check.passed
    assert check.observed == 0.0
    assert "3 with no completions (#1, #2, #3)" in check.reason


@pytest.mark.parametrize("text", ["<= 5000 in all of 200ms", ">= 0 in all of 200ms",
                                  "< 10M in all", ">= 0.5 * mean in all"])
def test_an_empty_interval_fails_a_rate_window_whatever_the_bound(text):
    # a rate of 0 would satisfy an upper bound (or >= 0): absence must not pass
    exp = parse_expectation("read.iops", text)
    check = evaluate_window(exp, [1000.0, None], 1000.0)
    assert not check.passed
    assert (check.observed, check.intervals) == (50.0, 2)
    assert "1 with no completions (#2)" in check.reason


def test_an_empty_interval_with_nothing_due_is_skipped_not_judged():
    exp = parse_expectation("read.clat.p99", "<= 10ms in all of 200ms")
    # a schedule of 2 requests a second: 0.4 due in each 200 ms interval
    check = evaluate_window(exp, [1 * MS, None, 2 * MS, None], None, due=[0.4] * 4)
    assert check.passed
    assert (check.observed, check.intervals, check.skipped) == (100.0, 2, 2)
    assert check.reason == ("100.0% of 2 intervals had read.clat.p99 <= 10ms, 100% needed, "
                            "2 skipped: nothing was due")


def test_an_empty_interval_with_a_request_due_fails():
    exp = parse_expectation("read.iops", "<= 5000 in all of 200ms")
    check = evaluate_window(exp, [10.0, None], None, due=[1.0, 1.0])
    assert not check.passed
    assert check.skipped == 0
    assert "1 with no completions" in check.reason


def test_a_window_with_every_interval_skipped_is_not_measured():
    exp = parse_expectation("write.clat.p99", "<= 10ms in all")
    check = evaluate_window(exp, [None, None], None, due=[0.0, 0.0])
    assert not check.passed
    assert check.observed is None
    assert check.skipped == 2
    assert check.reason == ("not measured: the workload did no writes (no interval had "
                            "completions, 2 skipped: nothing was due)")


def test_values_with_completions_are_judged_whatever_was_due():
    exp = parse_expectation("read.iops", "<= 5 in all")
    # more completed than the schedule asked for: judged on the value, not excused
    assert not evaluate_window(exp, [9.0], None, due=[0.5]).passed
    assert evaluate_window(exp, [4.0], None, due=[0.5]).passed


def test_tally_counts_failures_like_the_verdict():
    exp = parse_expectation("read.clat.p99", "<= 10ms in all")
    t = tally_window(exp, 10 * MS, [1 * MS, None, 20 * MS, None, math.nan],
                     [math.inf, 0.5, math.inf, 3.0, math.inf])
    assert (t.good, t.failed, t.skipped, t.empty, t.judged) == (1, 3, 1, (3,), 4)


# -- per-interval values and what a schedule asks for ------------------------------------------

def iv(end_ms: int, ios: int, p99_ns: int = 1000) -> Interval:
    empty = ios == 0
    return Interval(end_ms * MS, ios, ios * 4096, ios * 5.0, ios * 5.0 * 4096,
                    None if empty else 800.0, None if empty else p99_ns,
                    None if empty else 900.0, None if empty else p99_ns)


def test_interval_values_are_none_without_completions_for_every_metric():
    series = [iv(200, 10), iv(400, 0), iv(600, 3)]
    for path in ("read.clat.p99", "read.lat.mean", "read.iops", "read.bw"):
        values = interval_values(series, parse_metric(path))
        assert values[1] is None, path
        assert values[0] is not None, path
        assert values[2] is not None, path
    assert interval_values(series, parse_metric("read.iops")) == [50.0, None, 15.0]


def spec(**overrides) -> JobSpec:
    base = dict(engine="null", rw="randread", size=1 << 20, runtime_ns=10**9, time_based=True,
                rwmixread=100)
    base.update(overrides)
    return JobSpec(**base)


@pytest.mark.parametrize(("overrides", "direction", "per_s"), [
    ({}, "read", math.inf),                                           # unlimited
    ({}, "write", 0.0),                                               # never issued
    ({"rate_iops_read": 4}, "read", 4.0),
    ({"rate_bytes_read": 8192}, "read", 2.0),                         # 8 KiB/s of 4 KiB
    ({"rate_iops_read": 10, "rate_bytes_read": 8192}, "read", 2.0),   # the stricter
    ({"thinktime_ns": 500 * MS}, "read", 2.0),                        # 1 per 500 ms
    ({"thinktime_ns": 500 * MS, "thinktime_blocks": 3, "numjobs": 2}, "read", 12.0),
    ({"rw": "randrw", "rwmixread": 75, "thinktime_ns": 10**9, "numjobs": 4}, "read", 3.0),
    ({"rw": "randrw", "rwmixread": 75, "thinktime_ns": 10**9, "numjobs": 4}, "write", 1.0),
    ({"rw": "randrw", "rwmixread": 75, "rate_iops_write": 5}, "write", 5.0),
    ({"rw": "randrw", "rwmixread": 75, "rate_iops_write": 5}, "read", math.inf),
])
def test_requests_due_follow_the_schedule(overrides, direction, per_s):
    assert requests_due(spec(**overrides), direction, 0.5) == per_s * 0.5


def test_intervals_due_use_each_interval_s_own_span():
    series = [iv(200, 1), iv(400, 0), iv(450, 0)]  # the last one is short
    assert intervals_due(spec(rate_iops_read=10), "read", series) == pytest.approx(
        [2.0, 2.0, 0.5])
    assert intervals_due(None, "read", series) == [math.inf] * 3
    assert interval_spans([i.end_ns for i in series]) == ["0-0.2 s", "0.2-0.4 s", "0.4-0.45 s"]


# -- through the runner ------------------------------------------------------------------------

SUITE = """\
suite: w
workloads:
  - name: case
    ioengine: null
    rw: randread
    size: 1MiB
    runtime: 1s
    time_based: true
{extra}    expect:
      {expect}
"""


def load_case(tmp_path: Path, expect: str, extra: str = ""):
    path = tmp_path / "w.suite.yaml"
    path.write_text(SUITE.format(expect=expect, extra=textwrap.indent(extra, "    ")))
    return load_suite(path, env={}).cases[0]


def engine_with(read: list[Interval]) -> Callable[..., RunResult]:
    """An engine that reports `read` as the read series of every job it runs and, like the
    native engine, a write series of as many intervals without completions."""
    def run(specs: list[JobSpec], **_: object) -> RunResult:
        ios = sum(i.ios for i in read)
        job = JobResult(read=DirectionResult(ios=ios, bytes=ios * 4096, runtime_ns=10**9,
                                             iops=float(ios), bw=ios * 4096.0,
                                             series=list(read)),
                        write=DirectionResult(series=[iv(i.end_ns // MS, 0) for i in read]))
        return RunResult(jobs=[job for _ in specs], specs=list(specs), elapsed_ns=10**9)
    return run


STALLED = [iv(200, 40), iv(400, 0), iv(600, 0), iv(800, 0), iv(1000, 40)]


def test_runner_fails_a_stall_of_an_unlimited_job(tmp_path):
    case = load_case(tmp_path, 'read.clat.p99: "<= 10ms in all of 200ms"')
    result = run_case(case, engine=engine_with(STALLED))
    [check] = result.checks
    assert result.outcome == "failed"
    assert (check.intervals, check.skipped) == (5, 0)
    assert "3 with no completions (0.2-0.4 s, 0.4-0.6 s, 0.6-0.8 s)" in check.reason


def test_runner_skips_the_empty_intervals_of_a_slow_schedule(tmp_path):
    # 2 reads a second: 0.4 due per 200 ms interval, so an empty one asked for nothing
    case = load_case(tmp_path, 'read.clat.p99: "<= 10ms in all of 200ms"',
                     extra="rate_iops: 2\n")
    sparse = [iv(200, 1), iv(400, 0), iv(600, 0), iv(800, 1), iv(1000, 0)]
    result = run_case(case, engine=engine_with(sparse))
    [check] = result.checks
    assert result.outcome == "passed", check.reason
    assert (check.intervals, check.skipped) == (2, 3)
    assert "3 skipped: nothing was due" in check.reason


def test_runner_fails_a_stall_of_a_schedule_that_asked_for_requests(tmp_path):
    # 20 reads a second: 4 due per interval; the stall is not excused
    case = load_case(tmp_path, 'read.iops: "<= 5000 in all of 200ms"', extra="rate_iops: 20\n")
    result = run_case(case, engine=engine_with(STALLED))
    [check] = result.checks
    assert result.outcome == "failed"
    assert check.skipped == 0
    assert "3 with no completions" in check.reason


def test_a_write_window_on_a_read_job_is_refused_when_loaded(tmp_path):
    # A read job never measures writes: the window could only ever be unmeasured (as
    # test_a_window_with_every_interval_skipped_is_not_measured judges it), so it is an
    # error where it is written rather than a failure after the run.
    with pytest.raises(SuiteError, match=r"write.clat.p99: randread never writes"):
        load_case(tmp_path, 'write.clat.p99: "<= 10ms in all of 200ms"')


class Source(SeriesSource):
    def __init__(self, read: list[Interval]) -> None:
        self.read = read

    def series(self, job: int, direction: str) -> list[Interval]:
        return list(self.read) if direction == "read" else []


def test_fail_fast_counts_empty_intervals_as_failures(tmp_path):
    case = load_case(tmp_path, 'read.clat.p99: "<= 10ms in 50% of 200ms"',
                     extra="fail_fast: true\n")
    judge = fail_fast([case], [spec(interval_ns=200 * MS)])
    assert judge is not None
    # 5 planned intervals, 3 must pass: 2 may fail, and the stall already emptied 3
    reason = judge(Source(STALLED[:4]))
    assert reason is not None
    assert "3 of 5 planned intervals failed, at most 2 may" in reason
    assert judge(Source(STALLED[:2])) is None


def test_fail_fast_skips_empty_intervals_with_nothing_due(tmp_path):
    case = load_case(tmp_path, 'read.clat.p99: "<= 10ms in 50% of 200ms"',
                     extra="fail_fast: true\nrate_iops: 2\n")
    judge = fail_fast([case], [spec(interval_ns=200 * MS, rate_iops_read=2)])
    assert judge is not None
    assert judge(Source(STALLED[:4])) is None
