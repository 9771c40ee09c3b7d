"""The random map through libiogate (IOG_JOB_RANDOM_MAP, fio's default without norandommap):
a size-based random pass visits every block of each file once, reads and writes of a mix
sharing the one map; without it, offsets are drawn on their own and one pass covers about
1 - 1/e of the blocks. Coverage is the engine's own (offsets.coverage_pct)."""

from __future__ import annotations

import math

import pytest

from iogate.engine.session import run
from iogate.job import JobSpec

BS, BLOCKS = 4096, 2048


def coverage(**kw) -> tuple[float, float]:
    base = dict(engine="null", rw="randread", size=BS * BLOCKS, bs_read=BS, bs_write=BS)
    base.update(kw)
    result = run([JobSpec(**base)])
    return result.metric("offsets.coverage_pct"), result.metric("total.ios")


@pytest.mark.parametrize("rw", ["randread", "randwrite", "randrw"])
def test_a_pass_visits_every_block_once(rw):
    pct, ios = coverage(rw=rw, random_map=True)
    assert (pct, ios) == (100, BLOCKS)


def test_each_thread_and_file_makes_its_own_pass(tmp_path):
    files = [str(tmp_path / f"f{i}") for i in range(2)]
    pct, ios = coverage(random_map=True, numjobs=2, filenames=files, engine="psync")
    assert (pct, ios) == (100, 2 * BLOCKS)


def test_several_passes_each_cover_the_region():
    # three passes: every block three times, so any three passes cover it all
    pct, ios = coverage(random_map=True, io_limit_bytes=3 * BS * BLOCKS)
    assert (pct, ios) == (100, 3 * BLOCKS)


def test_without_the_map_a_pass_covers_about_1_minus_1_over_e():
    pct, ios = coverage()
    n = BLOCKS
    expected = 1 - (1 - 1 / n) ** n
    sigma = math.sqrt(n * math.exp(-1) * (1 - 2 * math.exp(-1))) / n
    assert abs(pct / 100 - expected) <= 5 * sigma
    assert ios == BLOCKS


def test_several_block_sizes_draw_offsets_on_their_own():
    # the map needs one request size: with two, offsets are drawn as without it
    pct, _ = coverage(random_map=True, rw="randrw", bs_write=2 * BS)
    assert pct < 100  # 2^-1000 or so that independent draws cover every block
