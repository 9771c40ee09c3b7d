"""realized.no_io: a run that asked for I/O and did none is told apart, with the reason as
far as known, from runs that rightly did none (real engine runs where one can be had)."""

from __future__ import annotations

from dataclasses import replace

from iogate.engine.session import run
from iogate.job import JobSpec
from iogate.realized import no_io
from iogate.results import DirectionResult, JobResult, RunResult

MS = 1_000_000
HOUR = 3600 * 10**9


def spec(**overrides) -> JobSpec:
    base = dict(engine="null", rw="read", size=1 << 20, time_based=True, runtime_ns=2 * MS)
    base.update(overrides)
    return JobSpec(**base)


def idle_run(specs: list[JobSpec], counted_ns: int = 0, **job) -> RunResult:
    """A run whose jobs did nothing, each having counted `counted_ns`."""
    jobs = [JobResult(read=DirectionResult(runtime_ns=counted_ns),
                      write=DirectionResult(runtime_ns=counted_ns), **job) for _ in specs]
    return RunResult(jobs=jobs, specs=list(specs))


def test_a_short_time_based_run_does_io():
    s = spec()
    result = run([s])
    assert result.metric("read.ios") > 0
    assert no_io([s], result) is None


def test_a_job_ended_by_exitall_before_it_started_did_none_rightly():
    # job 0 ends every job after its one request; job 1 is still in its hour of delay
    specs = [spec(time_based=False, io_limit_ios=1, exit_mask=(1 << 64) - 1),
             spec(runtime_ns=HOUR, start_delay_ns=HOUR)]
    result = run(specs)
    assert result.jobs[1].read.ios == 0
    assert result.jobs[1].read.runtime_ns == 0
    assert no_io(specs, result) is None
    # without the exitall nothing excuses it: its thread never started
    plain = [replace(specs[0], exit_mask=0), specs[1]]
    assert no_io(plain, result) == (
        "job 1 asked for 1h of time-based reads and issued none: the engine counted no time "
        "for it: its thread never started issuing")


def test_an_interrupted_run_is_not_judged():
    specs = [spec(runtime_ns=HOUR, start_delay_ns=HOUR)]
    result = run(specs, should_stop=lambda: True, poll_interval=0.01)
    assert result.interrupted
    assert result.jobs[0].read.ios == 0
    assert no_io(specs, result) is None


def test_a_rate_with_nothing_due_in_the_runtime_did_none_rightly():
    # one read a second: the first is due at the start, in the ramp; the next after the end
    s = spec(runtime_ns=1 * MS, ramp_ns=100 * MS, rate_iops_read=1)
    result = run([s])
    assert result.jobs[0].read.ios == 0
    assert result.jobs[0].read.errors == 0
    assert no_io([s], result) is None
    unpaced = replace(s, rate_iops_read=0)
    assert no_io([unpaced], result).startswith(
        "job 0 asked for 1ms of time-based reads and issued none: its thread counted ")


def test_counted_time_without_a_request_is_the_late_thread():
    s = spec(numjobs=4)
    assert no_io([s], idle_run([s], counted_ns=2_100_000)) == (
        "job 0 asked for 2ms of time-based reads and issued none: its 4 threads counted "
        "2.1ms without a request or an error, as when a thread gets the CPU only after its "
        "runtime is over")


def test_what_was_asked_is_said_in_its_terms():
    cases = [(spec(rw="randwrite", time_based=False, runtime_ns=0), "1MiB of random writes"),
             (spec(time_based=False, io_limit_ios=8, runtime_ns=0), "8 reads"),
             (spec(rw="randrw", time_based=False, io_limit_bytes=4096, runtime_ns=5 * MS),
              "4KiB of random reads and writes within 5ms")]
    for s, asked in cases:
        assert no_io([s], idle_run([s])).startswith(f"job 0 asked for {asked} and issued none")


def test_the_first_idle_job_is_named_and_the_others_counted():
    specs = [spec(), spec(), spec()]
    result = idle_run(specs)
    result.jobs[0] = JobResult(read=DirectionResult(ios=5, runtime_ns=2 * MS))
    reason = no_io(specs, result)
    assert reason.startswith("job 1 asked for")
    assert reason.endswith("(and 1 other job too)")


def test_errors_a_fill_and_nothing_asked_are_not_no_io():
    s = spec()
    failed = idle_run([s])
    failed.jobs[0].read = DirectionResult(errors=1)
    assert no_io([s], failed) is None  # an error of its own, judged as such
    fill = spec(rw="write", time_based=False, fill=True)
    assert no_io([fill], idle_run([fill])) is None  # the filesystem may be full already
    nothing = spec(time_based=False, size=0, runtime_ns=0)
    assert no_io([nothing], idle_run([nothing])) is None
    stopped = idle_run([s])
    stopped.stopped = "fail_fast"
    assert no_io([s], stopped) is None


def test_a_fleet_names_the_host():
    s = spec()
    fleet = RunResult(jobs=[JobResult(read=DirectionResult(ios=3))], specs=[s],
                      hosts={"a:1": RunResult(jobs=[JobResult(read=DirectionResult(ios=3))]),
                             "b:1": idle_run([s])})
    assert no_io([s], fleet).startswith("b:1: job 0 asked for 2ms of time-based reads")
