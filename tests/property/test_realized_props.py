"""The realized workload matches the request within sampling noise, on the null engine:
generated block size splits, read/write mixes and rates."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from iogate.engine.session import run
from iogate.job import BsEntry, JobSpec
from iogate.realized import size_shares

KiB = 1024
MS = 1_000_000
Z = 5.0  # standard deviations allowed: about 6e-7 false alarms per share checked


def spec(**overrides) -> JobSpec:
    base = dict(engine="null", rw="randread", size=256 * 1024 * KiB)
    base.update(overrides)
    return JobSpec(**base)


@st.composite
def bssplits(draw) -> list[BsEntry]:
    """2-6 distinct sizes (multiples of 512 up to 64 KiB) with percentages summing to 100."""
    sizes = draw(st.lists(st.integers(1, 128).map(lambda k: 512 * k), min_size=2, max_size=6,
                          unique=True))
    cuts = sorted(draw(st.lists(st.integers(1, 99), min_size=len(sizes) - 1,
                                max_size=len(sizes) - 1, unique=True)))
    pcts = [b - a for a, b in zip([0, *cuts], [*cuts, 100], strict=True)]
    return [BsEntry(s, s, p * 10_000) for s, p in zip(sizes, pcts, strict=True)]


def binomial_ok(count: int, n: int, p: float) -> bool:
    if p in (0.0, 1.0):
        return count == n * p
    return abs(count - n * p) <= Z * math.sqrt(n * p * (1 - p))


@settings(max_examples=25, deadline=None)
@given(split=bssplits(), seed=st.integers(1, 2**63 - 1))
def test_realized_bssplit_matches_the_request(split: list[BsEntry], seed: int) -> None:
    result = run([spec(rw="randwrite", bssplit_write=split, seed=seed, size=20_000 * 64 * KiB,
                       time_based=True, runtime_ns=100 * MS)])
    d = result.jobs[0].write
    n = d.bs_ios
    assert n == d.ios
    assert n >= 1000
    assert d.bs_other_ios == 0
    shares = size_shares(split)
    assert set(d.bs_counts) <= set(shares)
    for size, p in shares.items():
        assert binomial_ok(d.bs_counts.get(size, 0), n, p), (size, p, d.bs_counts)


@settings(max_examples=25, deadline=None)
@given(mix=st.integers(1, 99), seed=st.integers(1, 2**63 - 1), rw=st.sampled_from(["rw", "randrw"]))
def test_realized_mix_matches_rwmixread(mix: int, seed: int, rw: str) -> None:
    nios = 20_000
    result = run([spec(rw=rw, rwmixread=mix, seed=seed, size=nios * 4 * KiB)])
    reads, writes = result.jobs[0].read.ios, result.jobs[0].write.ios
    assert reads + writes == nios
    assert binomial_ok(reads, nios, mix / 100)
    assert result.metric("mix.read_pct") == 100 * reads / nios


@settings(max_examples=25, deadline=None)
@given(iops=st.integers(1_000, 50_000), seconds=st.sampled_from([0.2, 0.3, 0.5]),
       process=st.sampled_from(["linear", "poisson"]), mixed=st.booleans(),
       read_share=st.integers(10, 90))
def test_achieved_rate_matches_the_request(iops: int, seconds: float, process: str,
                                           mixed: bool, read_share: int) -> None:
    """Every request of a size-based run is issued, each at its due time or later: the n-th
    request of a direction is due about n / rate after the start (exactly, linear; a Gamma
    with standard deviation sqrt(n) / rate, Poisson), so the run's time is that, plus at
    most how late a request was issued (``lag``), which a thread the scheduler keeps waiting
    on a busy machine shows and a pacing too slow does not. A pacing too fast fails either
    way: no lateness makes a run shorter than its schedule."""
    n = int(iops * seconds)
    if mixed:
        read_iops = iops * read_share // 100
        rates = {"read": read_iops, "write": iops - read_iops}
        s = spec(rw="randrw", rate_iops_read=rates["read"], rate_iops_write=rates["write"])
    else:
        rates = {"read": iops, "write": 0}
        s = spec(rw="randread", rate_iops_read=iops)
    s.size, s.rate_process = n * 4 * KiB, process
    result = run([s])
    job = result.jobs[0]
    assert job.read.ios + job.write.ios == n  # one pass over the region, every block once
    for name, rate in rates.items():
        if not rate:
            continue
        d = job.direction(name)
        due = d.ios / rate  # s: when this direction's last request was due
        took = d.runtime_ns / 1e9
        late = d.lag.max / 1e9
        # linear: the clock's and the count's rounding; Poisson: the arrival time's spread
        spread = 0.01 * due if process == "linear" else Z * math.sqrt(d.ios) / rate
        tol = spread + 2 / rate
        assert due <= took + tol, ("faster than the rate", name, rate, d.ios, took)
        assert due >= took - late - tol, ("slower than the rate and its lateness", name, rate,
                                          d.ios, took, late)
