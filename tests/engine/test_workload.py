"""The workload language through libiogate: block size tables, rates, resp and lag, syncs,
data contents, offset coverage. Tolerances come from the number of IOs counted."""

from __future__ import annotations

import errno
import math

import pytest

from iogate.engine.session import run
from iogate.errors import EngineError
from iogate.job import BsEntry, JobSpec, Zone
from iogate.realized import realized_warnings

KiB, MiB = 1024, 1024 * 1024
MS = 1_000_000


def spec(**overrides) -> JobSpec:
    base = dict(engine="null", rw="randread", size=64 * MiB)
    base.update(overrides)
    return JobSpec(**base)


def within_binomial(count: float, n: float, p: float, z: float = 5.0) -> bool:
    return abs(count - n * p) <= z * math.sqrt(n * p * (1 - p)) + 1


def test_bssplit_shares_follow_the_weights():
    split = [BsEntry(4 * KiB, 4 * KiB, 600_000), BsEntry(16 * KiB, 16 * KiB, 300_000),
             BsEntry(64 * KiB, 64 * KiB, 100_000)]
    s = spec(bssplit_read=split, time_based=True, runtime_ns=300 * MS)
    result = run([s])
    d = result.jobs[0].read
    n = d.bs_ios
    assert n == d.ios > 1000
    assert d.bs_other_ios == 0
    assert set(d.bs_counts) == {4 * KiB, 16 * KiB, 64 * KiB}
    for e in split:
        assert within_binomial(d.bs_counts[e.lo], n, e.weight / 1e6), (e, d.bs_counts)
        assert result.metric(f"read.bs_pct.{e.lo}") == pytest.approx(100 * d.bs_counts[e.lo] / n)
    assert result.metric("read.bs.mean") == pytest.approx(d.bytes / d.ios)
    assert realized_warnings([s], result) == []


def test_bsrange_draws_multiples_of_the_minimum_evenly():
    s = spec(rw="randwrite", bssplit_write=[BsEntry(4 * KiB, 16 * KiB, 1_000_000)],
             time_based=True, runtime_ns=300 * MS)
    d = run([s]).jobs[0].write
    assert set(d.bs_counts) == {4 * KiB, 8 * KiB, 12 * KiB, 16 * KiB}
    for count in d.bs_counts.values():
        assert within_binomial(count, d.bs_ios, 0.25)


def test_per_direction_block_sizes_in_a_mix():
    s = spec(rw="randrw", bs_read=4 * KiB, bs_write=64 * KiB, rwmixread=70, size=16 * MiB)
    result = run([s])
    assert set(result.jobs[0].read.bs_counts) == {4 * KiB}
    assert set(result.jobs[0].write.bs_counts) == {64 * KiB}
    assert result.metric("read.bs_pct.4096") == 100
    n = result.metric("read.ios") + result.metric("write.ios")
    assert within_binomial(result.metric("read.ios"), n, 0.7)
    assert result.metric("mix.read_pct") == pytest.approx(100 * result.metric("read.ios") / n)


def test_rate_limit_holds_the_requested_iops():
    # 1000 reads at 2000 a second: the k-th is issued k / 2000 s after the start at the
    # earliest, so the run lasts at least 999 / 2000 s however loaded the machine is. (How
    # closely a loaded machine keeps to the rate is a measurement, not a test.)
    s = spec(rate_iops_read=2000, size=1000 * 4 * KiB)
    result = run([s])
    assert result.metric("read.ios") == 1000
    assert result.metric("read.runtime") >= 999 / 2000 * 1e9
    assert result.metric("read.iops") <= 2000 * 1000 / 999


def test_a_total_rate_split_by_the_mix_runs_each_direction_at_its_share():
    # 1000 requests at 1400 reads and 600 writes a second, Poisson arrivals: each request is
    # a read with probability 0.7, and the 1000 gaps (mean 0.5 ms) add up to 0.5 s within 5
    # standard deviations (0.5 s / sqrt(1000)) at the least.
    s = spec(rw="randrw", rate_iops_read=1400, rate_iops_write=600, size=1000 * 4 * KiB,
             rate_process="poisson")
    result = run([s])
    reads, writes = result.metric("read.ios"), result.metric("write.ios")
    assert reads + writes == 1000
    assert within_binomial(reads, 1000, 0.7)
    assert result.metric("total.runtime") >= 0.5e9 * (1 - 5 / math.sqrt(1000))


def test_without_a_rate_resp_is_lat_and_lag_is_zero():
    result = run([spec(size=4 * MiB)])
    lat, resp, lag = (result.latency("read", k) for k in ("lat", "resp", "lag"))
    assert resp.count == lat.count == lag.count == 1024
    assert lag.max == 0
    assert resp.mean == pytest.approx(lat.mean)
    assert result.metric("read.resp.p99") == result.metric("read.lat.p99")


def test_under_a_rate_resp_covers_lag_and_lat():
    result = run([spec(rate_iops_read=5000, time_based=True, runtime_ns=300 * MS)])
    lat, resp, lag = (result.latency("read", k) for k in ("lat", "resp", "lag"))
    assert resp.count == lat.count == lag.count > 0
    # resp = lag + lat for every request, so the means add up exactly.
    assert resp.mean == pytest.approx(lag.mean + lat.mean, rel=1e-6)
    assert resp.max >= lat.max
    series = result.jobs[0].read.series
    assert series
    assert all(iv.resp_mean_ns >= iv.lat_mean_ns * 0.999 for iv in series if iv.ios)


@pytest.mark.parametrize("time_based", [True, False])
def test_rate_limited_job_runs_for_its_runtime(time_based):
    # Due at 0, 0.25, 0.5 and 0.75 s; the next request would be due at the end of the
    # runtime, and the job runs until then: 4 requests over (at least) 1 s, 4 IOPS.
    # Without time_based the size is far from done, so the runtime ends the job too.
    s = spec(rw="randwrite", rate_iops_write=4, runtime_ns=1000 * MS, time_based=time_based)
    result = run([s])
    write = result.jobs[0].write
    assert write.ios == 4
    assert write.runtime_ns >= 1000 * MS
    assert write.iops <= 4


def test_sync_every_n_writes_counts_syncs_with_their_latency(tmp_path):
    s = spec(engine="psync", rw="write", size=1 * MiB, sync_kind="fdatasync", sync_every=16,
             filename=str(tmp_path / "f.bin"))
    result = run([s])
    assert result.metric("write.ios") == 256
    assert result.metric("sync.ios") == 256 // 16
    assert result.metric("sync.lat.max") >= result.metric("sync.lat.min") > 0
    assert result.metric("sync.clat.p50") == result.metric("sync.lat.p50")
    assert result.metric("errors") == 0


@pytest.mark.parametrize("pct", [0, 25, 50, 75, 90])
def test_compression_ratio_matches_the_requested_percentage(pct):
    s = spec(rw="write", bs_write=64 * KiB, size=1024 * MiB, compress_pct=pct, refill=True,
             pattern=b"\xde\xad\xbe\xef")
    result = run([s])
    ratio = result.metric("data.compress_ratio")
    assert ratio is not None
    assert abs(ratio - (100 - pct) / 100) <= 0.05, ratio
    assert realized_warnings([s], result) == []


def test_zero_buffers_compress_to_almost_nothing():
    result = run([spec(rw="write", bs_write=64 * KiB, size=256 * MiB, zero_buffers=True)])
    assert result.metric("data.compress_ratio") < 0.01


def test_dedupe_share_matches_the_request():
    # 512 MiB of 4 KiB writes, one in 64 due for a sample: exactly 2048 due. Each is captured
    # (and then hashed) or, when the analysis is behind and the capture ring (256 slots) is
    # full, skipped: how many is up to the machine's load, but a full ring is always measured.
    s = spec(rw="write", bs_write=4 * KiB, size=512 * MiB, dedupe_pct=30, refill=True)
    result = run([s])
    data = result.jobs[0].data
    assert data.blocks + data.samples_skipped == 2048
    assert data.blocks >= 256
    # Each measured block repeats an earlier measured one with probability 30% (the first
    # cannot: the pool of repeatable buffers starts empty), whichever were skipped: the share
    # is a binomial estimate over the blocks measured, within 5 standard errors plus the first.
    n = data.blocks
    got = result.metric("data.dedupe_pct")
    assert got == 100 * data.duplicate_blocks / n
    assert abs(got - 30) <= 100 * (5 * math.sqrt(0.3 * 0.7 / n) + 1 / n)
    assert realized_warnings([s], result) == []


def test_reads_sample_no_data():
    result = run([spec(size=4 * MiB)])
    assert result.metric("data.compress_ratio") is None
    assert result.metric("data.dedupe_pct") is None


def test_sequential_pass_covers_the_whole_region():
    result = run([spec(rw="read", size=8 * MiB)])
    assert result.metric("offsets.coverage_pct") == 100


def test_uniform_random_coverage_is_one_minus_one_over_e():
    # n draws over n blocks leave a share (1 - 1/n)^n ~ 1/e untouched; the untouched count
    # has variance about n e^-1 (1 - 2 e^-1) for large n.
    blocks = 8192
    result = run([spec(size=blocks * 4 * KiB, blockalign_read=4 * KiB)])
    expected = 1 - (1 - 1 / blocks) ** blocks
    sigma = math.sqrt(math.exp(-1) * (1 - 2 * math.exp(-1)) / blocks)
    assert abs(result.metric("offsets.coverage_pct") / 100 - expected) <= 5 * sigma


def test_zoned_distribution_keeps_to_its_hot_zone():
    s = spec(dist="zoned", zones=[Zone(1_000_000, 100_000), Zone(0, 900_000)], size=64 * MiB)
    result = run([s])
    assert 0 < result.metric("offsets.coverage_pct") <= 10.0 + 1e-9


@pytest.mark.parametrize(("dist", "param"), [("zipf", 1.2), ("pareto", 0.3), ("normal", 5.0)])
def test_skewed_distributions_cover_less_than_uniform(dist, param):
    blocks = 8192
    uniform = run([spec(size=blocks * 4 * KiB)]).metric("offsets.coverage_pct")
    skewed = run([spec(size=blocks * 4 * KiB, dist=dist, dist_param=param)])
    assert skewed.metric("offsets.coverage_pct") < uniform - 10


@pytest.mark.parametrize(("stride", "touched"), [(False, 3), (True, 48)])
def test_a_sequence_touches_its_blocks_only(stride, touched):
    # 48 requests over 48 blocks: the absolute sequence 2,0,1 touches 3 blocks, the strided
    # one moves on by 3 after each pass, 16 passes covering blocks 0-47 (its order: test_dist.c)
    blocks = 48
    result = run([spec(size=blocks * 4 * KiB, io_limit_ios=blocks, dist="sequence",
                       sequence=[2, 0, 1], sequence_stride=stride)])
    assert result.metric("read.ios") == blocks
    assert result.metric("offsets.coverage_pct") == pytest.approx(100 * touched / blocks)


def test_thinktime_paces_the_job():
    result = run([spec(size=64 * 4 * KiB, thinktime_ns=2 * MS, thinktime_blocks=8)])
    # 64 requests in groups of 8: at least 7 pauses (the last may or may not wait).
    assert result.metric("read.runtime") >= 7 * 2 * MS


def test_queue_depth_is_reported():
    result = run([spec(engine="null", iodepth=1, size=1 * MiB)])
    assert result.metric("read.qd.mean") == 1


def test_several_files_share_the_region(tmp_path):
    names = [str(tmp_path / f"f{i}.bin") for i in range(3)]
    result = run([spec(engine="psync", rw="write", size=3 * MiB, filenames=names)])
    assert result.metric("write.ios") == 3 * 256
    assert result.jobs[0].nfiles == 3
    assert all((tmp_path / f"f{i}.bin").stat().st_size >= MiB for i in range(3))
    assert result.metric("offsets.coverage_pct") == 100
    assert result.specs[0].filenames == names


@pytest.fixture(scope="module")
def file_engines(tmp_path_factory) -> set[str]:
    """The file engines this kernel and sandbox allow."""
    usable = set()
    path = tmp_path_factory.mktemp("probe") / "probe.dat"
    for engine in ("psync", "sync", "io_uring", "libaio"):
        try:
            run([spec(engine=engine, rw="randread", iodepth=2 if engine in ("io_uring", "libaio")
                      else 1, size=64 * KiB, filename=str(path))])
            usable.add(engine)
        except EngineError as e:
            if e.errno not in (errno.EPERM, errno.ENOSYS, errno.EACCES, errno.EOPNOTSUPP):
                raise
    return usable


@pytest.mark.parametrize("engine", ["psync", "sync", "io_uring", "libaio"])
def test_realized_split_and_mix_on_a_real_file(file_engines, tmp_path, engine):
    if engine not in file_engines:
        pytest.skip(f"{engine} is not usable here")
    split = [BsEntry(4 * KiB, 4 * KiB, 700_000), BsEntry(16 * KiB, 16 * KiB, 300_000)]
    s = spec(engine=engine, rw="randrw", rwmixread=60, bssplit_read=split, bssplit_write=split,
             iodepth=1 if engine in ("psync", "sync") else 8, size=8 * MiB,
             filename=str(tmp_path / "data.bin"))
    result = run([s])
    job = result.jobs[0]
    n = job.read.ios + job.write.ios
    assert n >= 600
    assert result.metric("errors") == 0
    assert within_binomial(job.read.ios, n, 0.6)
    for d in (job.read, job.write):
        assert set(d.bs_counts) == {4 * KiB, 16 * KiB}
        assert within_binomial(d.bs_counts[4 * KiB], d.bs_ios, 0.7)
    assert realized_warnings([s], result) == []


def test_queue_depth_of_an_async_engine_is_between_one_and_iodepth(file_engines, tmp_path):
    if "io_uring" not in file_engines:
        pytest.skip("io_uring is not usable here")
    result = run([spec(engine="io_uring", iodepth=8, size=8 * MiB,
                       filename=str(tmp_path / "d.bin"))])
    assert 1 < result.metric("read.qd.mean") <= 8
    hist = result.jobs[0].read.qd_hist
    assert sum(hist) == result.jobs[0].read.qd_samples
    assert sum(hist[4:]) == 0
