"""Verification of a rewrite: the same job run again over its own earlier blocks.

A torn write shows only where the bytes left behind differ from the bytes meant. When a job
rewrites a file it wrote before (the same suite run twice, a repeated case), every block it
finds there was written by the same job, with the same buffer contents, the same offsets and
the same sequence numbers; only its verification header differs. So every 512-byte sector of
a verified write must differ from every earlier write to that block, or a tear that leaves
one sector stale goes unseen.

Through faultfs (tests/faults), whose mode ``stale`` writes a request but for one 512-byte
sector, which keeps its old bytes: a first verified run writes the file, then the same job
runs again, once per sector position of a 4 KiB block, with that sector of one write left
stale. Every tear must be reported as a torn block, and only that one.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.faults import FaultFS

from iogate.engine.session import run
from iogate.job import JobSpec

BS = 4096
SECTOR = 512
BLOCKS = 16


def spec(path: Path, engine: str, refill: bool) -> JobSpec:
    # One write in flight: the fault filesystem counts writes in the order they arrive,
    # which is then the order of the blocks (with several in flight it is not).
    return JobSpec(engine=engine, rw="write", bs_read=BS, bs_write=BS,
                   iodepth=1, numjobs=1, size=BLOCKS * BS,
                   offset=0, runtime_ns=0, ramp_ns=0, time_based=False, direct=False,
                   rwmixread=0, filename=str(path), refill=refill, verify="crc32c")


@pytest.mark.parametrize(("engine", "refill"), [("psync", False), ("psync", True),
                                                ("libaio", False)])
def test_a_stale_sector_anywhere_in_a_rewritten_block_is_torn(engine, refill):
    with FaultFS() as fs:
        (fs.backing / "data.bin").write_bytes(os.urandom(BLOCKS * BS))  # no layout writes
        path = fs.path / "data.bin"
        job = spec(path, engine, refill)
        first = run([job]).jobs[0].verify
        assert first is not None
        assert first.failures == 0
        previous = first.generation
        found: dict[int, str] = {}  # per stale sector: what the read-back reported
        for sector in range(BS // SECTOR):
            block = 3 + sector  # a different write each time; sequential: write k is block k
            before = (fs.backing / "data.bin").read_bytes()
            fs.control(mode="stale", op="write", after=block, count=1, sector=sector)
            v = run([job]).jobs[0].verify
            assert fs.state()["faulted"] == 1
            assert v is not None
            assert v.generation != previous
            # the tear happened: that sector still holds the earlier run's bytes
            kept = slice(block * BS + sector * SECTOR, block * BS + (sector + 1) * SECTOR)
            assert (fs.backing / "data.bin").read_bytes()[kept] == before[kept]
            found[sector] = ", ".join(r.kind for r in v.records) or "passed"
            if v.records:
                f = v.records[0]
                assert (f.offset, f.expected_seq, f.found_seq) == (block * BS, block + 1,
                                                                   block + 1)
                assert f.expected_generation == v.generation
                # sector 0 holds the header: the earlier run's header is what was found
                assert f.found_generation == (previous if sector == 0 else v.generation)
            previous = v.generation
        assert found == dict.fromkeys(range(BS // SECTOR), "torn")
