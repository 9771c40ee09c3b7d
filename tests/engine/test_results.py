"""The results model: metric aggregation over jobs and directions, and JSON."""

from __future__ import annotations

import json
import statistics

import pytest

from iogate.histogram import Histogram
from iogate.job import BsEntry, JobSpec
from iogate.metrics import parse_metric, standard_paths
from iogate.results import (
    Coverage,
    DataSample,
    DirectionResult,
    Interval,
    JobResult,
    LatencyStats,
    RunResult,
)


def lat_from(values: list[int]) -> LatencyStats:
    return LatencyStats(count=len(values), min=min(values), max=max(values),
                        mean=statistics.fmean(values),
                        stdev=statistics.stdev(values) if len(values) > 1 else 0.0,
                        histogram=Histogram.from_values(values))


def direction(ios: int, runtime_ns: int, clat: list[int], errors: int = 0) -> DirectionResult:
    bs = 4096
    return DirectionResult(ios=ios, bytes=ios * bs, runtime_ns=runtime_ns,
                           iops=ios / (runtime_ns / 1e9), bw=ios * bs / (runtime_ns / 1e9),
                           slat=lat_from(clat) if clat else LatencyStats(),
                           clat=lat_from(clat) if clat else LatencyStats(),
                           lat=lat_from(clat) if clat else LatencyStats(),
                           resp=lat_from(clat) if clat else LatencyStats(),
                           lag=lat_from([0] * len(clat)) if clat else LatencyStats(),
                           errors=errors,
                           series=[Interval(500_000_000, ios // 2, ios // 2 * bs, 0, 0, 0, 0, 0, 0),
                                   Interval(1_000_000_000, ios - ios // 2, (ios - ios // 2) * bs,
                                            0, 0, 0, 0, 0, 0)])


CLAT_A = [1000, 1200, 5000, 90_000, 250]
CLAT_B = [3000, 3100, 70, 2_000_000]


@pytest.fixture
def result() -> RunResult:
    # Job A reads and writes, job B only reads (its write side did nothing).
    a = JobResult(read=direction(5, 1_000_000_000, CLAT_A, errors=1),
                  write=direction(3, 1_000_000_000, [400, 500, 600]))
    b = JobResult(read=direction(4, 2_000_000_000, CLAT_B),
                  write=DirectionResult(runtime_ns=2_000_000_000, errors=2))
    return RunResult(jobs=[a, b], interrupted=False, elapsed_ns=2_100_000_000)


def test_counts_and_rates_sum_over_jobs_and_runtime_is_longest(result):
    assert result.metric("read.ios") == 9
    assert result.metric("read.bytes") == 9 * 4096
    assert result.metric("read.iops") == pytest.approx(5 / 1.0 + 4 / 2.0)
    assert result.metric("read.runtime") == 2_000_000_000
    assert result.metric("total.ios") == 12
    assert result.metric("total.bw") == pytest.approx((5 + 3) * 4096 + 4 / 2.0 * 4096)
    assert result.metric("errors") == 3


def test_latency_merges_exactly_across_jobs(result):
    both = CLAT_A + CLAT_B
    assert result.metric("read.clat.min") == 70
    assert result.metric("read.clat.max") == 2_000_000
    assert result.metric("read.clat.mean") == pytest.approx(statistics.fmean(both))
    assert result.metric("read.clat.stdev") == pytest.approx(statistics.stdev(both))
    expected = Histogram.from_values(both).percentile(50.0, min(both), max(both))
    assert result.metric("read.clat.p50") == expected
    # p100 is clamped to the exact maximum, not the bucket middle.
    assert result.metric("read.clat.p100") == 2_000_000


def test_unmeasured_metrics_are_none_but_counts_are_zero():
    only_reads = RunResult(jobs=[JobResult(read=direction(4, 10**9, CLAT_B))])
    assert only_reads.metric("write.ios") == 0
    assert only_reads.metric("write.iops") is None
    assert only_reads.metric("write.bw") is None
    assert only_reads.metric("write.clat.p99") is None
    assert only_reads.metric("write.lat.mean") is None
    metrics = only_reads.metrics(extra=["read.clat.p99.9"])
    assert "write.iops" not in metrics
    assert "write.clat.p99" not in metrics
    assert metrics["write.ios"] == 0
    assert metrics["read.clat.p99.9"] == only_reads.metric("read.clat.p99.9")


def test_metrics_cover_every_measured_standard_path(result):
    metrics = result.metrics()
    # Nothing in this result synced, trimmed, asked for a rate, sampled data, counted block
    # sizes or queue depths, had a region, verified, measured its CPU use, gave
    # command priorities or watched a block device.
    unmeasured = {p for p in standard_paths()
                  if p.startswith(("sync.lat", "data.", "offsets.", "verify.", "cpu.",
                                   "disk.")) or
                  ".prio_" in p or
                  p.endswith((".rate_pct", ".qd.mean")) or
                  (p.startswith("trim.") and p not in ("trim.ios", "trim.bytes",
                                                       "trim.runtime"))}
    assert set(metrics) == set(standard_paths()) - unmeasured
    for path, value in metrics.items():
        assert value == result.metric(path), path


def test_unknown_metric_is_rejected(result):
    with pytest.raises(ValueError, match="did you mean"):
        result.metric("read.iop")


def test_series_sums_jobs_by_interval(result):
    rows = result.series("read")
    assert [r["ios"] for r in rows] == [2 + 2, 3 + 2]
    assert sum(r["ios"] for r in result.series("total")) == result.metric("total.ios")


def test_json_round_trips_and_lists_nonempty_buckets(result):
    doc = json.loads(json.dumps(result.to_json()))
    assert doc["elapsed_ns"] == 2_100_000_000
    assert doc["interrupted"] is False
    read_a = doc["jobs"][0]["read"]
    assert read_a["ios"] == 5
    assert read_a["errors"] == 1
    assert sum(c for _, _, c in read_a["clat"]["histogram"]) == len(CLAT_A)
    buckets = read_a["clat"]["histogram"]
    assert all(lo <= v < hi for v, (lo, hi, _) in zip(sorted(CLAT_A), buckets, strict=True))
    assert read_a["series"][1]["end_ns"] == 1_000_000_000
    assert doc["metrics"]["read.ios"] == 9


KiB = 1024


def job_spec(**overrides) -> JobSpec:
    base = dict(engine="null", rw="randrw", bs_read=4 * KiB, bs_write=4 * KiB, iodepth=1,
                numjobs=1, size=1 << 20, offset=0, runtime_ns=10**9, ramp_ns=0,
                time_based=True, direct=False, rwmixread=70, filename="")
    base.update(overrides)
    return JobSpec(**base)


def realized_job() -> JobResult:
    read = DirectionResult(ios=800, bytes=800 * 4 * KiB + 200 * 12 * KiB, runtime_ns=10**9,
                           iops=1000.0, bw=800 * 4 * KiB + 200 * 12 * KiB,
                           qd_sum=3000, qd_samples=1000, bs_counts={4 * KiB: 800, 12 * KiB: 150},
                           bs_other_ios=50)
    read.ios = 1000
    write = DirectionResult(ios=250, bytes=250 * 4 * KiB, runtime_ns=10**9, iops=250.0,
                            bw=250 * 4 * KiB, qd_sum=250, qd_samples=250,
                            bs_counts={4 * KiB: 250})
    sync = DirectionResult(ios=10, lat=lat_from([5000] * 10), clat=lat_from([5000] * 10),
                           resp=lat_from([5000] * 10), errors=1)
    return JobResult(read=read, write=write, sync=sync,
                     coverage=Coverage(chunk=4096, total=256, touched=64),
                     data=DataSample(sampled_bytes=1000, compressed_bytes=503, blocks=200,
                                     duplicate_blocks=20))


def test_realized_shape_metrics():
    r = RunResult(jobs=[realized_job()])
    assert r.metric("mix.read_pct") == pytest.approx(80.0)
    assert r.metric("read.bs_pct.4096") == pytest.approx(80.0)
    assert r.metric("read.bs_pct.12288") == pytest.approx(15.0)
    assert r.metric("read.bs_pct.8192") == 0.0  # counted, never that size
    assert r.metric("write.bs_pct.4096") == 100.0
    assert r.metric("read.bs.mean") == pytest.approx((800 * 4 + 200 * 12) * KiB / 1000)
    assert r.metric("read.qd.mean") == 3.0
    assert r.metric("write.qd.mean") == 1.0
    assert r.metric("data.compress_ratio") == pytest.approx(0.503)
    assert r.metric("data.dedupe_pct") == pytest.approx(10.0)
    assert r.metric("offsets.coverage_pct") == pytest.approx(25.0)
    assert r.metric("sync.ios") == 10
    for name in ("lat", "clat", "resp"):
        assert r.metric(f"sync.{name}.p99") == pytest.approx(5000, rel=0.01)
    assert r.metric("errors") == 1  # sync errors are errors too
    assert r.metric("total.ios") == 1250  # syncs move no data


def test_shares_of_nothing_are_unmeasured():
    empty = RunResult(jobs=[JobResult()])
    for path in ("mix.read_pct", "read.bs_pct.4096", "read.bs.mean", "read.qd.mean",
                 "data.compress_ratio", "data.dedupe_pct", "offsets.coverage_pct",
                 "read.rate_pct", "sync.lat.mean"):
        assert empty.metric(path) is None, path
    assert empty.metric("sync.ios") == 0


def test_metrics_list_the_realized_block_sizes():
    metrics = RunResult(jobs=[realized_job()]).metrics()
    assert metrics["read.bs_pct.4096"] == pytest.approx(80.0)
    assert metrics["read.bs_pct.12288"] == pytest.approx(15.0)
    assert "read.bs_pct.8192" not in metrics
    assert "sync.clat.p99" not in metrics
    assert metrics["sync.lat.p99"] > 0


def test_rate_pct_compares_achieved_with_requested():
    job = realized_job()  # 1000 read IOPS, 250 write IOPS
    asked = job_spec(rate_iops_read=1250, rate_iops_write=250)
    r = RunResult(jobs=[job], specs=[asked])
    assert r.metric("read.rate_pct") == pytest.approx(80.0)
    assert r.metric("write.rate_pct") == pytest.approx(100.0)
    assert r.metric("total.rate_pct") == pytest.approx(100.0 * 1250 / 1500)
    assert RunResult(jobs=[job], specs=[job_spec()]).metric("read.rate_pct") is None
    assert RunResult(jobs=[job]).metric("total.rate_pct") is None  # specs unknown
    # A byte rate is judged by bandwidth; with both, the nearer ratio (the binding limit).
    by_bytes = job_spec(rate_bytes_read=int(job.read.bw), rate_bytes_write=10**9)
    assert RunResult(jobs=[job], specs=[by_bytes]).metric("read.rate_pct") == \
        pytest.approx(100.0)
    both = job_spec(rate_iops_read=2000, rate_bytes_read=int(job.read.bw) * 2,
                    rate_iops_write=250)
    assert RunResult(jobs=[job], specs=[both]).metric("read.rate_pct") == pytest.approx(50.0)
    split = job_spec(rw="randread", bssplit_read=[BsEntry(4 * KiB, 4 * KiB, 1_000_000)],
                     rate_iops_read=1000)
    assert RunResult(jobs=[job], specs=[split]).metric("total.rate_pct") == pytest.approx(100.0)


def test_rate_pct_divides_by_the_time_iops_divides_by():
    # a time-based job asked for 2 IOPS over 5 s whose direction ran 4.5 s: one time base
    job = JobResult(read=direction(10, 4_500_000_000, CLAT_B))
    asked = job_spec(rw="randread", rate_iops_read=2, time_based=True, runtime_ns=5 * 10**9)
    run = RunResult(jobs=[job], specs=[asked])
    assert run.metric("read.rate_pct") == pytest.approx(100.0 * run.metric("read.iops") / 2)


def test_json_has_the_new_statistics():
    doc = json.loads(json.dumps(RunResult(jobs=[realized_job()]).to_json()))
    job = doc["jobs"][0]
    assert job["read"]["bs_counts"] == [[4096, 800], [12288, 150]]
    assert job["read"]["bs_other_ios"] == 50
    assert job["read"]["qd"]["sum"] == 3000
    assert job["sync"]["ios"] == 10
    assert "resp" in job["read"]
    assert "lag" in job["read"]
    assert job["coverage"]["touched"] == 64
    assert job["data"]["compressed_bytes"] == 503
    assert doc["metrics"]["mix.read_pct"] == pytest.approx(80.0)


def test_every_standard_path_parses_back_to_itself():
    for path in standard_paths():
        assert parse_metric(path).text == path


def test_job_result_keeps_one_job_and_its_spec():
    a, b = realized_job(), JobResult(read=direction(4, 10**9, CLAT_B))
    specs = [job_spec(rate_iops_read=1000), job_spec(rw="randread")]
    run = RunResult(jobs=[a, b], interrupted=True, elapsed_ns=5, specs=specs)
    one = run.job_result(0)
    assert one.jobs == [a]
    assert one.specs == [specs[0]]
    assert one.interrupted
    assert one.metric("read.rate_pct") == pytest.approx(100.0)
    assert run.job_result(1).metric("read.ios") == 4
    assert RunResult(jobs=[a]).job_result(0).specs == []
