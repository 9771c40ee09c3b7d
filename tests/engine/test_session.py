"""Real jobs through libiogate: counts, latencies, time limits, cancellation, errors."""

from __future__ import annotations

import errno
import os

import pytest

from iogate.engine.session import Session, job_struct, run
from iogate.errors import EngineError
from iogate.job import JobSpec
from iogate.results import Progress

KiB, MiB, GiB = 1024, 1024 * 1024, 1024 * 1024 * 1024


def spec(**overrides) -> JobSpec:
    base = dict(engine="null", size=1 * MiB)
    base.update(overrides)
    return JobSpec(**base)


@pytest.fixture(scope="module")
def io_uring_usable(tmp_path_factory) -> None:
    """Skip io_uring tests where the kernel or sandbox refuses io_uring_setup."""
    path = tmp_path_factory.mktemp("probe") / "probe.dat"
    try:
        run([spec(engine="io_uring", iodepth=2, size=64 * KiB, filename=str(path))])
    except EngineError as e:
        if e.errno in (errno.EPERM, errno.ENOSYS, errno.EACCES):
            pytest.skip(f"io_uring not permitted here: {e}")
        raise


def test_null_engine_does_exactly_the_region():
    result = run([spec(size=1 * MiB, numjobs=2)])
    assert not result.interrupted
    assert result.metric("read.ios") == 2 * 256  # each thread runs the whole job
    assert result.metric("read.bytes") == 2 * MiB
    assert result.metric("write.ios") == 0
    assert result.metric("write.iops") is None
    assert result.metric("errors") == 0


def test_jobs_run_together_and_aggregate():
    result = run([spec(rw="read", size=256 * KiB),
                  spec(rw="write", size=512 * KiB, bs_write=8 * KiB)])
    assert len(result.jobs) == 2
    assert result.jobs[0].read.ios == 64
    assert result.jobs[0].write.ios == 0
    assert result.jobs[1].write.ios == 64
    assert result.jobs[1].read.ios == 0
    assert result.metric("total.ios") == 128
    assert result.metric("total.bytes") == 768 * KiB


def test_mixed_workload_splits_by_rwmixread():
    result = run([spec(rw="randrw", rwmixread=70, size=4 * MiB)])
    reads, writes = result.metric("read.ios"), result.metric("write.ios")
    assert reads + writes == 1024
    assert 0.6 < reads / 1024 < 0.8


def check_file_job(result, direction: str) -> None:
    assert result.metric(f"{direction}.ios") == 256
    assert result.metric(f"{direction}.bytes") == MiB
    assert result.metric(f"{direction}.iops") > 0
    assert result.metric(f"{direction}.bw") > 0
    p50, p99, top = (result.metric(f"{direction}.clat.{s}") for s in ("p50", "p99", "max"))
    low = result.metric(f"{direction}.clat.min")
    assert 0 <= low <= p50 <= p99 <= top
    clat = result.latency(direction, "clat")
    assert clat.count == 256
    assert clat.histogram.total == 256
    assert result.metric("errors") == 0


@pytest.mark.parametrize(("rw", "direction"), [("read", "read"), ("randwrite", "write")])
def test_psync_on_a_file(tmp_path, rw, direction):
    path = tmp_path / "data.bin"
    result = run([spec(engine="psync", rw=rw, filename=str(path))])
    check_file_job(result, direction)
    assert path.stat().st_size >= MiB


@pytest.mark.parametrize(("rw", "direction"), [("randread", "read"), ("write", "write")])
def test_io_uring_on_a_file(io_uring_usable, tmp_path, rw, direction):
    result = run([spec(engine="io_uring", rw=rw, iodepth=8, filename=str(tmp_path / "d.bin"))])
    check_file_job(result, direction)


def test_time_based_run_honours_runtime_and_series_adds_up():
    result = run([spec(time_based=True, runtime_ns=300_000_000, interval_ns=100_000_000)])
    runtime = result.metric("read.runtime")
    assert 0.3e9 <= runtime < 0.5e9
    series = result.jobs[0].read.series
    assert len(series) >= 3
    assert sum(i.ios for i in series) == result.metric("read.ios") > 0
    assert [i.end_ns for i in series] == sorted(i.end_ns for i in series)


def test_should_stop_cancels_the_run_with_partial_results():
    calls = []

    def stop() -> bool:
        calls.append(1)
        return True

    result = run([spec(time_based=True, runtime_ns=60 * 10**9)], poll_interval=0.05,
                 should_stop=stop)
    # the run asked for a minute and stopped before it (how soon is a measurement)
    assert calls
    assert result.interrupted
    assert result.metric("read.ios") > 0
    assert result.metric("read.runtime") < 60e9


def test_keyboard_interrupt_during_the_wait_returns_partial_result():
    seen: list[Progress] = []

    def progress(p: Progress) -> None:
        seen.append(p)
        if len(seen) == 1:
            raise KeyboardInterrupt  # what Ctrl-C raises between wait slices

    result = run([spec(time_based=True, runtime_ns=60 * 10**9)], on_progress=progress,
                 poll_interval=0.05)
    assert result.interrupted
    assert seen[-1].state == "done"
    assert seen[-1].jobs_done == seen[-1].jobs == 1


def test_progress_reports_state_and_fraction():
    seen: list[Progress] = []
    run([spec(time_based=True, runtime_ns=300_000_000, ramp_ns=200_000_000)],
        on_progress=seen.append, poll_interval=0.05)
    assert len(seen) >= 2
    assert seen[-1].state == "done"
    assert seen[-1].ios[0] > 0
    running = [p for p in seen if p.state == "running"]
    assert running
    assert all(p.fraction is not None and 0 <= p.fraction <= 1 for p in running)
    ramp = [p for p in seen if p.state == "ramp"]
    assert ramp
    assert all(p.counted_ns == 0 and p.ios == (0, 0) for p in ramp)
    assert all(p.counted_ns > 0 for p in running)
    order = ["created", "layout", "ramp", "running", "done"]
    assert [order.index(p.state) for p in seen] == sorted(order.index(p.state) for p in seen)


def test_should_stop_during_layout_ends_the_session_before_the_workers(tmp_path):
    # Layout of a 2 GiB file runs in the background; stopping while it runs
    # ends the session at once, before any worker started.
    path = tmp_path / "big.dat"
    seen: list[Progress] = []
    try:
        result = run([spec(engine="psync", rw="write", size=2 * GiB, time_based=True,
                           runtime_ns=60 * 10**9, filename=str(path), write_layout="data")],
                     on_progress=seen.append, poll_interval=0.02,
                     should_stop=lambda: any(p.state == "layout" for p in seen))
    finally:
        path.unlink(missing_ok=True)
    assert result.interrupted
    layout = [p for p in seen if p.state == "layout"]
    assert layout
    assert all(p.layout_total == 2 * GiB for p in layout)
    assert all(p.fraction == p.layout_bytes / p.layout_total for p in layout)
    assert all(p.counted_ns == 0 and p.ios == (0, 0) for p in layout)
    assert seen[-1].state == "done"
    assert seen[-1].layout_bytes < 2 * GiB
    assert result.metric("write.ios") == 0
    assert result.metric("errors") == 0


def test_layout_progress_reaches_total_and_is_skipped_once_done(tmp_path):
    path = tmp_path / "data.bin"
    job = spec(engine="psync", rw="randread", size=8 * MiB, filename=str(path))
    first: list[Progress] = []
    run([job], on_progress=first.append)
    assert first[-1].layout_total == first[-1].layout_bytes == 8 * MiB
    again: list[Progress] = []
    result = run([job], on_progress=again.append)
    assert again[-1].layout_total == again[-1].layout_bytes == 0
    assert result.metric("read.ios") == 2048


def test_fraction_follows_layout_then_run_time():
    base = dict(elapsed_ns=3, counted_ns=0, expected_ns=12, ios=(0, 0), bytes=(0, 0), errors=0,
                jobs_done=0, jobs=1)
    assert Progress(state="layout", layout_bytes=1, layout_total=4, **base).fraction == 0.25
    assert Progress(state="layout", **base).fraction is None  # nothing to write
    assert Progress(state="running", layout_bytes=4, layout_total=4, **base).fraction == 0.25
    assert Progress(state="ramp", **{**base, "expected_ns": 0}).fraction is None


@pytest.mark.parametrize(("overrides", "word"), [
    (dict(iodepth=0), "iodepth"),
    (dict(bs_read=0), "bs"),
    (dict(numjobs=0), "numjobs"),
    (dict(engine="psync", iodepth=4, filename="/tmp/x"), "iodepth"),
    (dict(rwmixread=101), "rwmixread"),
])
def test_invalid_spec_is_an_engine_error_naming_the_field(overrides, word):
    with pytest.raises(EngineError) as exc:
        run([spec(**overrides)])
    assert exc.value.errno == errno.EINVAL
    assert word in str(exc.value)


def test_unknown_names_and_negative_numbers_are_rejected_before_the_library():
    for bad in (dict(engine="spdk"), dict(rw="readwrite"), dict(size=-1)):
        with pytest.raises(EngineError) as exc:
            job_struct(spec(**bad))
        assert exc.value.errno == errno.EINVAL


def test_unopenable_file_fails_at_start_naming_it(tmp_path):
    missing = tmp_path / "no" / "such" / "dir" / "f.bin"
    with pytest.raises(EngineError) as exc:
        run([spec(engine="psync", filename=str(missing), no_layout=True)])
    assert exc.value.errno > 0
    assert str(missing) in str(exc.value)


def test_session_context_manager_step_by_step():
    with Session([spec(size=64 * KiB)]) as s:
        assert s.poll().state == "created"
        s.start()
        while not s.wait(0.05):
            pass
        result = s.collect()
    assert result.metric("read.ios") == 16
    with pytest.raises(EngineError):
        s.poll()  # closed


def test_series_and_whole_run_percentiles_follow_one_rule(tmp_path):
    # one interval longer than the run: its p99 is computed by the engine from the same
    # counts as the whole run's histogram, and must be the rule's answer for them
    result = run([spec(engine="psync", rw="randread", size=2 * MiB, interval_ns=3_600 * 10**9,
                       filename=str(tmp_path / "p.bin"))])
    read = result.jobs[0].read
    assert len(read.series) == 1
    assert read.series[0].ios == read.ios == 512
    for kind in ("clat", "lat"):
        hist = getattr(read, kind).histogram
        assert getattr(read.series[0], f"{kind}_p99_ns") == hist.percentile(99.0)


def test_run_reports_the_engines_own_cpu_use():
    result = run([spec(time_based=True, runtime_ns=200_000_000, iodepth=4, engine="null")])
    cpu = result.cpu
    assert cpu is not None
    assert cpu.user_ns + cpu.system_ns > 0
    assert cpu.wall_ns > 0
    ios = result.metric("total.ios")
    assert ios
    assert result.metric("cpu.per_io") == (cpu.user_ns + cpu.system_ns) / ios
    assert result.metric("cpu.user") == cpu.user_ns
    assert 0 < result.metric("cpu.util_pct") <= 100 * (os.cpu_count() or 1) * 1.05
    assert result.to_json()["cpu"] == {"user_ns": cpu.user_ns, "system_ns": cpu.system_ns,
                                       "wall_ns": cpu.wall_ns}
    assert result.job_result(0).cpu == cpu  # one job: the run's cost is its cost
