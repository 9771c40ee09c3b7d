"""The results model: metric aggregation over jobs and directions, and JSON."""

from __future__ import annotations

import json
import statistics

import pytest

from iogate.histogram import Histogram
from iogate.metrics import standard_paths
from iogate.results import DirectionResult, Interval, JobResult, LatencyStats, RunResult


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
                           lat=lat_from(clat) if clat else LatencyStats(), errors=errors,
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
    assert "write.iops" not in metrics and "write.clat.p99" not in metrics
    assert metrics["write.ios"] == 0
    assert metrics["read.clat.p99.9"] == only_reads.metric("read.clat.p99.9")


def test_metrics_cover_every_measured_standard_path(result):
    metrics = result.metrics()
    assert set(metrics) == set(standard_paths())
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
    assert doc["elapsed_ns"] == 2_100_000_000 and doc["interrupted"] is False
    read_a = doc["jobs"][0]["read"]
    assert read_a["ios"] == 5 and read_a["errors"] == 1
    assert sum(c for _, _, c in read_a["clat"]["histogram"]) == len(CLAT_A)
    buckets = read_a["clat"]["histogram"]
    assert all(lo <= v < hi for v, (lo, hi, _) in zip(sorted(CLAT_A), buckets, strict=True))
    assert read_a["series"][1]["end_ns"] == 1_000_000_000
    assert doc["metrics"]["read.ios"] == 9
