"""The realized read/write mix matches rwmixread within a binomial tolerance."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from iogate.engine.session import run
from iogate.job import JobSpec

KiB = 1024


@settings(max_examples=40)
@given(mix=st.integers(0, 100), seed=st.integers(1, 2**63 - 1),
       nios=st.sampled_from([2_000, 20_000, 100_000]), rw=st.sampled_from(["rw", "randrw"]))
def test_realized_mix_matches_rwmixread(mix: int, seed: int, nios: int, rw: str) -> None:
    spec = JobSpec(engine="null", rw=rw, bs_read=4 * KiB, bs_write=4 * KiB, iodepth=1,
                   numjobs=1, size=nios * 4 * KiB, offset=0, runtime_ns=0, ramp_ns=0,
                   time_based=False, direct=False, rwmixread=mix, filename="", seed=seed)
    result = run([spec])
    reads, writes = result.metric("read.ios"), result.metric("write.ios")
    assert reads + writes == nios
    p = mix / 100
    if mix in (0, 100):
        assert reads == nios * p  # the extremes are exact, never "almost"
        return
    # Each IO is a read with probability p: a binomial count. Six standard deviations keep
    # the false-alarm rate below 1e-8 per example while catching a mix that is off by a few
    # percent at these sample sizes.
    sigma = math.sqrt(p * (1 - p) / nios)
    assert abs(reads / nios - p) <= 6 * sigma + 1 / nios
