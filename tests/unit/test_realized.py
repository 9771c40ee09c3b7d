"""Realized versus requested on hand-made results: silence when they match, the right
warning when they do not."""

from __future__ import annotations

import math

import pytest

from iogate.job import BsEntry, JobSpec
from iogate.realized import realized_warnings, requested
from iogate.results import DataSample, DirectionResult, JobResult, RunResult

KiB = 1024
SECOND = 10**9


def spec(**overrides) -> JobSpec:
    base = dict(engine="null", rw="randrw", size=1 << 30, runtime_ns=SECOND, time_based=True,
                rwmixread=70)
    base.update(overrides)
    return JobSpec(**base)


def direction(sizes: dict[int, int], seconds: float = 1.0) -> DirectionResult:
    ios = sum(sizes.values())
    nbytes = sum(bs * n for bs, n in sizes.items())
    return DirectionResult(ios=ios, bytes=nbytes, runtime_ns=int(seconds * SECOND),
                           iops=ios / seconds, bw=nbytes / seconds, bs_counts=dict(sizes))


def run_of(job: JobResult, s: JobSpec) -> RunResult:
    return RunResult(jobs=[job], specs=[s])


def mixed(reads: int, writes: int) -> JobResult:
    return JobResult(read=direction({4 * KiB: reads}), write=direction({4 * KiB: writes}))


def test_a_matching_mix_is_silent_and_a_skewed_one_is_named():
    s = spec(rwmixread=70)
    # 10000 IOs at p = 0.7: sigma = 45.8 reads; 7100 is 2.2 sigma away, 7300 is 6.5.
    assert realized_warnings([s], run_of(mixed(7100, 2900), s)) == []
    [warning] = realized_warnings([s], run_of(mixed(7300, 2700), s))
    assert warning == ("mix.read_pct: 73% of 10000 IOs were reads, 70% were requested "
                       "(z = +6.5 over 10000 IOs)")


def test_the_threshold_is_four_sigma():
    s = spec(rwmixread=50)
    n = 10_000
    sigma = math.sqrt(n * 0.25)
    inside, outside = int(n / 2 + 3.9 * sigma), int(n / 2 + 4.1 * sigma) + 1
    assert realized_warnings([s], run_of(mixed(inside, n - inside), s)) == []
    assert realized_warnings([s], run_of(mixed(outside, n - outside), s))


def test_a_mix_of_100_allows_no_writes_at_all():
    s = spec(rwmixread=100)
    assert realized_warnings([s], run_of(mixed(1000, 0), s)) == []
    [warning] = realized_warnings([s], run_of(mixed(999, 1), s))
    assert warning.startswith("mix.read_pct: 99.9% of 1000 IOs were reads, 100% were "
                              "requested (exactly)")


def test_a_rate_limited_mix_is_not_judged_by_rwmixread():
    s = spec(rwmixread=70, rate_iops_read=500, rate_iops_write=500)
    assert realized_warnings([s], run_of(mixed(500, 500), s)) == []


BSSPLIT = [BsEntry(4 * KiB, 4 * KiB, 800_000), BsEntry(64 * KiB, 64 * KiB, 200_000)]


def test_bssplit_shares_within_noise_are_silent_and_a_skewed_entry_is_named():
    s = spec(rw="randread", bssplit_read=BSSPLIT)
    # 10000 reads at p = 0.8: sigma = 40.
    good = JobResult(read=direction({4 * KiB: 8050, 64 * KiB: 1950}))
    assert realized_warnings([s], run_of(good, s)) == []
    bad = JobResult(read=direction({4 * KiB: 7500, 64 * KiB: 2500}))
    assert realized_warnings([s], run_of(bad, s)) == [
        "read.bs_pct.4096: 75% of reads were 4096 bytes, 80% were requested "
        "(z = -12.5 over 10000 IOs)",
        "read.bs_pct.65536: 25% of reads were 65536 bytes, 20% were requested "
        "(z = +12.5 over 10000 IOs)",
    ]


def test_a_size_never_asked_for_is_named():
    s = spec(rw="randread")
    job = JobResult(read=direction({4 * KiB: 1000, 8 * KiB: 1}))
    warnings = realized_warnings([s], run_of(job, s))
    assert warnings[0] == ("read.bs_pct.8192: 1 reads were 8192 bytes, a size the request "
                           "never asks for")


def test_a_range_entry_is_judged_as_a_whole():
    s = spec(rw="randwrite", bssplit_write=[BsEntry(4 * KiB, 4 * KiB, 500_000),
                                            BsEntry(8 * KiB, 32 * KiB, 500_000)])
    # The range's 4 sizes share its half, unevenly here, but the whole range holds half.
    sizes = {4 * KiB: 5000, 8 * KiB: 2000, 16 * KiB: 1000, 24 * KiB: 1000, 32 * KiB: 1000}
    assert realized_warnings([s], run_of(JobResult(write=direction(sizes)), s)) == []
    skewed = {4 * KiB: 6000, 8 * KiB: 1000, 16 * KiB: 1000, 24 * KiB: 1000, 32 * KiB: 1000}
    warnings = realized_warnings([s], run_of(JobResult(write=direction(skewed)), s))
    assert any(w.startswith("write.bs_pct.<8192..32768>: 40% of writes were sizes in "
                            "8192..32768 bytes, 50% were requested") for w in warnings)


def test_a_device_that_cannot_keep_up_is_named_with_its_rate():
    s = spec(rw="randread", rate_iops_read=1000, runtime_ns=10 * SECOND)
    slow = JobResult(read=direction({4 * KiB: 8120}, seconds=10.0))
    assert realized_warnings([s], run_of(slow, s)) == [
        "read.rate_pct: the device could not keep up: 812 of 1000 read IOPS (81%)"]
    # 10000 expected requests: 4 Poisson sigmas are 4%, more than the 2% floor.
    assert realized_warnings([s], run_of(JobResult(read=direction({4 * KiB: 9650}, 10.0)),
                                         s)) == []
    assert realized_warnings([s], run_of(JobResult(read=direction({4 * KiB: 9550}, 10.0)),
                                         s))


def test_the_rate_floor_is_two_percent_for_long_runs():
    s = spec(rw="randread", rate_iops_read=100_000, runtime_ns=100 * SECOND)
    # 10 million expected requests: noise is 0.13%, so the 2% floor decides.
    assert realized_warnings([s], run_of(JobResult(read=direction({4 * KiB: 9_810_000}, 100.0)),
                                         s)) == []
    assert realized_warnings([s], run_of(JobResult(read=direction({4 * KiB: 9_790_000}, 100.0)),
                                         s))


def test_a_byte_rate_is_judged_by_bandwidth():
    s = spec(rw="write", rate_bytes_write=4 * KiB * 1000, runtime_ns=10 * SECOND)
    [warning] = realized_warnings([s], run_of(JobResult(write=direction({4 * KiB: 5000}, 10.0)),
                                              s))
    assert warning == ("write.rate_pct: the device could not keep up: 1.953MiB/s of "
                       "3.906MiB/s write bandwidth (50%)")


def test_running_faster_than_requested_is_named():
    s = spec(rw="randread", rate_iops_read=1000, runtime_ns=10 * SECOND)
    [warning] = realized_warnings([s], run_of(JobResult(read=direction({4 * KiB: 15000}, 10.0)),
                                              s))
    assert warning.startswith("read.rate_pct: ran faster than requested: 1500 of 1000")


def test_a_short_drain_after_a_time_based_run_is_within_the_rates_tolerance():
    # 10 s of schedule, then 0.4 s for the last requests to complete: every figure divides
    # by the measured 10.4 s, and 96 % is within what the schedule lets a run miss.
    s = spec(rw="randread", rate_iops_read=1000, runtime_ns=10 * SECOND)
    result = run_of(JobResult(read=direction({4 * KiB: 10_000}, seconds=10.4)), s)
    assert realized_warnings([s], result) == []
    assert result.metric("read.rate_pct") == pytest.approx(100 * 10_000 / 10.4 / 1000)
    assert result.metric("read.rate_pct") == pytest.approx(result.metric("read.iops") / 10)


def data_job(sampled: int, compressed: int, blocks: int = 0, dups: int = 0) -> JobResult:
    return JobResult(write=direction({4 * KiB: 100}),
                     data=DataSample(sampled_bytes=sampled, compressed_bytes=compressed,
                                     blocks=blocks, duplicate_blocks=dups))


@pytest.mark.parametrize(("compressed", "warned"), [(520, False), (449, True), (560, True)])
def test_compression_ratio_within_five_hundredths(compressed, warned):
    s = spec(rw="write", compress_pct=50)
    warnings = realized_warnings([s], run_of(data_job(1000, compressed), s))
    assert bool(warnings) is warned
    if warned:
        assert warnings[0].startswith("data.compress_ratio: sampled writes compressed to")
        assert "0.50 was requested (buffer_compress_percentage 50" in warnings[0]


def test_dedupe_share_allows_binomial_noise_plus_two_points():
    s = spec(rw="write", dedupe_pct=20)
    # 10000 blocks at p = 0.2: sigma = 0.4 points, tolerance 1.6 + 2 = 3.6 points.
    assert realized_warnings([s], run_of(data_job(1, 1, 10_000, 2_350), s)) == []
    [warning] = realized_warnings([s], run_of(data_job(1, 1, 10_000, 2_400), s))
    assert warning == ("data.dedupe_pct: 24% of 10000 sampled written blocks were duplicates, "
                       "20% was requested")


def test_dedupe_under_verify_says_why_it_is_not_realized():
    s = spec(rw="write", dedupe_pct=20, verify="crc32c")
    [warning] = realized_warnings([s], run_of(data_job(1, 1, 10_000, 0), s))
    assert warning == ("data.dedupe_pct: 0% of 10000 sampled written blocks were duplicates, "
                       "20% was requested (verify makes every written block unique: its header "
                       "and sector stamps differ per write)")


def test_nothing_asked_nothing_warned():
    s = spec(rw="write")  # no compression or dedupe asked: whatever was measured is fine
    assert realized_warnings([s], run_of(data_job(1000, 3, 100, 99), s)) == []


def test_several_jobs_are_named():
    a, b = spec(rwmixread=70), spec(rwmixread=30)
    result = RunResult(jobs=[mixed(7000, 3000), mixed(7000, 3000)], specs=[a, b])
    [warning] = realized_warnings([a, b], result)
    assert warning.startswith("mix.read_pct (job 1): 70% of 10000 IOs were reads, 30% were")


def test_requested_values_use_metric_paths():
    s = spec(rwmixread=70, bssplit_read=[BsEntry(4 * KiB, 4 * KiB, 750_000),
                                         BsEntry(4 * KiB, 16 * KiB, 250_000)],
             compress_pct=40, dedupe_pct=10)
    asked = requested([s])
    assert asked["requested.mix.read_pct"] == 70
    # The range spreads its quarter over 4, 8, 12 and 16 KiB.
    assert asked["requested.read.bs_pct.4096"] == pytest.approx(75 + 25 / 4)
    assert asked["requested.read.bs_pct.16384"] == pytest.approx(25 / 4)
    assert asked["requested.read.bs.mean"] == pytest.approx(0.75 * 4096 + 0.25 * 10240)
    assert asked["requested.write.bs_pct.4096"] == 100
    assert asked["requested.data.compress_ratio"] == pytest.approx(0.6)
    assert asked["requested.data.dedupe_pct"] == 10
    assert not any(k.endswith((".iops", ".bw")) for k in asked)


def test_requested_rates_and_rate_mix():
    s = spec(rwmixread=50, rate_iops_read=700, rate_iops_write=300)
    asked = requested([s, spec(rw="randread", rate_iops_read=100)])
    assert asked["requested.read.iops"] == 800
    assert asked["requested.write.iops"] == 300
    assert asked["requested.total.iops"] == 1100
    assert "requested.mix.read_pct" not in asked  # the two jobs ask for different mixes
    assert requested([s])["requested.mix.read_pct"] == pytest.approx(70)
